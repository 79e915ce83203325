//! Pull-protocol frames as the engine sees them, and their mapping to headers.

use bytes::Bytes;

use super::header::{Header, Kind, WireError, FLAG_BY_ORDER, FLAG_CONFIRM, FLAG_LATE, FLAG_SYNC};
use crate::message::{Key, ReqId, Want};

/// A pull-protocol frame between two replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Receiver asks for a message; `consumed` is its watermark for (comm, src).
    Pull {
        /// Message wanted.
        want: Want,
        /// Receiver-chosen id, echoed in the answer.
        req: ReqId,
        /// Receiver's consumption watermark for (comm, src).
        consumed: u64,
    },
    /// The message.
    Data {
        /// Message key.
        key: Key,
        /// Echoed request id.
        req: ReqId,
        /// Order number among sends from src to dst on comm.
        order: u64,
        /// Message bytes.
        payload: Bytes,
        /// The sender did not log it and waits for a CONSUMED covering it.
        confirm: bool,
        /// It waited in the sender's log before this pull came (`FLAG_LATE`).
        late: bool,
        /// It was sent synchronously: tell the sender's replicas when a receive claims
        /// it (`FLAG_SYNC`, MATCHED).
        sync: bool,
    },
    /// Parked: the sender has not made that send yet.
    Ack {
        /// What the pull asked for.
        want: Want,
        /// Echoed request id.
        req: ReqId,
        /// Sends this sender replica has made to the destination on comm so far.
        progress: u64,
    },
    /// The message was evicted from this sender replica's log.
    Gone {
        /// What the pull asked for.
        want: Want,
        /// Echoed request id.
        req: ReqId,
    },
    /// The sender replica's program ended without making this send: it never will.
    Ended {
        /// What the pull asked for.
        want: Want,
        /// Echoed request id.
        req: ReqId,
    },
    /// Receiver withdraws a parked pull.
    Cancel {
        /// What the pull asked for.
        want: Want,
        /// Request id of the pull.
        req: ReqId,
    },
    /// Receiver `dst` has every message from `src` on `comm` below `watermark`.
    Consumed {
        /// Communicator.
        comm: u32,
        /// Sender rank.
        src: u32,
        /// Receiver rank.
        dst: u32,
        /// First order number not yet received.
        watermark: u64,
    },
    /// Receiver `dst` took a checkpoint when it had every message from `src` on `comm`
    /// below `watermark`: a regenerated replica restored from it never asks for those.
    Checkpointed {
        /// Communicator.
        comm: u32,
        /// Sender rank.
        src: u32,
        /// Receiver rank.
        dst: u32,
        /// First order number not received at the checkpoint.
        watermark: u64,
    },
    /// A receive of the receiver claimed synchronous message `key` (MPI-3.1 section 3.4:
    /// the matching receive has started), sent to every replica of its sender.
    Matched {
        /// The message.
        key: Key,
    },
    /// A regenerated replica asks its sibling for its latest snapshot.
    SnapshotAsk {
        /// Asker-chosen id, echoed in the answer.
        req: ReqId,
    },
    /// The latest snapshot (see `checkpoint`); an empty payload means none was taken.
    Snapshot {
        /// Echoed request id.
        req: ReqId,
        /// Which checkpoint of the program it is (1 for the first).
        number: u64,
        /// Messages the sibling has received so far (the asker has caught up once it
        /// received as many).
        receives: u64,
        /// The encoded snapshot.
        payload: Bytes,
        /// The sibling's sender-log entries sent before that checkpoint and still held
        /// (`SendLog::export_sent_before`); empty when none. The asker serves them should
        /// the sibling die before their destinations received them.
        log: Bytes,
    },
    /// The sender becomes the leader of `rank`'s choices: the receiver (a sibling, or a
    /// replica of another rank) must answer with every choice of `rank` it holds from slot
    /// `base` on, and ignore choices from replicas below the sender from now on.
    Takeover {
        /// The rank both replicas run.
        rank: u32,
        /// First slot asked for.
        base: u64,
    },
    /// Answer to TAKEOVER: encoded (slot, choice) entries (see `pull::decision`).
    Decided {
        /// The rank taken over.
        rank: u32,
        /// The entries.
        entries: Bytes,
    },
    /// Choices of `rank` the next DATA frame on this connection may depend on, sent just
    /// before it (see `pull::foreign`).
    Choices {
        /// The rank that made them.
        rank: u32,
        /// The replica of `rank` that vouches for them (see `pull::foreign`).
        term: u32,
        /// Every live replica of `rank` held every slot below this, as the sender knows.
        stable: u64,
        /// Encoded (slot, choice) entries, as in DECIDED.
        entries: Bytes,
    },
}

/// The header of a DATA frame, for writers that send the payload from elsewhere.
#[inline]
pub fn data_header(
    key: &Key,
    req: ReqId,
    order: u64,
    len: usize,
    confirm: bool,
    sync: bool,
) -> Header {
    let h = keyed(Kind::Data, &Want::Key(*key), req, order, len);
    let confirm = if confirm { FLAG_CONFIRM } else { 0 };
    let sync = if sync { FLAG_SYNC } else { 0 };
    Header {
        flags: confirm | sync,
        ..h
    }
}

fn keyed(kind: Kind, want: &Want, req: ReqId, aux: u64, len: usize) -> Header {
    let base = Header {
        req: req.0,
        aux,
        ..Header::new(kind, len)
    };
    match *want {
        Want::Key(key) => Header {
            comm: key.comm,
            tag: key.tag,
            src: key.src,
            dst: key.dst,
            seq: key.seq,
            ..base
        },
        Want::Order {
            comm,
            src,
            dst,
            order,
        } => Header {
            flags: FLAG_BY_ORDER,
            comm,
            src,
            dst,
            seq: order,
            ..base
        },
    }
}

/// The header of a CONSUMED or CHECKPOINTED frame: `dst`'s watermark for (comm, src).
fn watermark_header(kind: Kind, comm: u32, (src, dst): (u32, u32), watermark: u64) -> Header {
    Header {
        comm,
        src,
        dst,
        aux: watermark,
        ..Header::new(kind, 0)
    }
}

fn want_of(h: &Header) -> Result<Want, WireError> {
    if h.flags & FLAG_BY_ORDER == 0 {
        return Ok(Want::Key(key_of(h)));
    }
    if h.tag != 0 {
        return Err(WireError::Reserved {
            field: "tag (by-order)",
            value: h.tag as u32 as u64,
        });
    }
    Ok(Want::Order {
        comm: h.comm,
        src: h.src,
        dst: h.dst,
        order: h.seq,
    })
}

fn key_of(h: &Header) -> Key {
    Key {
        comm: h.comm,
        tag: h.tag,
        src: h.src,
        dst: h.dst,
        seq: h.seq,
    }
}

impl Frame {
    /// The header for this frame, and the payload that follows it (empty for all but DATA
    /// and DECIDED).
    #[inline]
    pub fn to_parts(&self) -> (Header, Bytes) {
        match self {
            Frame::Pull {
                want,
                req,
                consumed,
            } => (keyed(Kind::Pull, want, *req, *consumed, 0), Bytes::new()),
            Frame::Data {
                key,
                req,
                order,
                payload,
                confirm,
                late,
                sync,
            } => {
                let h = data_header(key, *req, *order, payload.len(), *confirm, *sync);
                let flags = if *late { h.flags | FLAG_LATE } else { h.flags };
                (Header { flags, ..h }, payload.clone())
            }
            Frame::Ack {
                want,
                req,
                progress,
            } => (keyed(Kind::Ack, want, *req, *progress, 0), Bytes::new()),
            Frame::Gone { want, req } => (keyed(Kind::Gone, want, *req, 0, 0), Bytes::new()),
            Frame::Ended { want, req } => (keyed(Kind::Ended, want, *req, 0, 0), Bytes::new()),
            Frame::Cancel { want, req } => (keyed(Kind::Cancel, want, *req, 0, 0), Bytes::new()),
            Frame::Consumed {
                comm,
                src,
                dst,
                watermark,
            } => (
                watermark_header(Kind::Consumed, *comm, (*src, *dst), *watermark),
                Bytes::new(),
            ),
            Frame::Checkpointed {
                comm,
                src,
                dst,
                watermark,
            } => (
                watermark_header(Kind::Checkpointed, *comm, (*src, *dst), *watermark),
                Bytes::new(),
            ),
            Frame::Matched { key } => (
                keyed(Kind::Matched, &Want::Key(*key), ReqId(0), 0, 0),
                Bytes::new(),
            ),
            Frame::SnapshotAsk { req } => (
                Header {
                    req: req.0,
                    ..Header::new(Kind::SnapshotAsk, 0)
                },
                Bytes::new(),
            ),
            Frame::Snapshot {
                req,
                number,
                receives,
                payload,
                log,
            } => {
                // Both parts in one payload, the snapshot's length in `src`.
                let both = if log.is_empty() {
                    payload.clone()
                } else {
                    let mut both = Vec::with_capacity(payload.len() + log.len());
                    both.extend_from_slice(payload);
                    both.extend_from_slice(log);
                    Bytes::from(both)
                };
                (
                    Header {
                        req: req.0,
                        aux: *number,
                        seq: *receives,
                        src: u32::try_from(payload.len()).unwrap_or(u32::MAX),
                        ..Header::new(Kind::Snapshot, both.len())
                    },
                    both,
                )
            }
            Frame::Takeover { rank, base } => (
                Header {
                    src: *rank,
                    dst: *rank,
                    seq: *base,
                    ..Header::new(Kind::Takeover, 0)
                },
                Bytes::new(),
            ),
            Frame::Decided { rank, entries } => (
                Header {
                    src: *rank,
                    dst: *rank,
                    ..Header::new(Kind::Decided, entries.len())
                },
                entries.clone(),
            ),
            Frame::Choices {
                rank,
                term,
                stable,
                entries,
            } => (
                Header {
                    src: *rank,
                    dst: *rank,
                    seq: u64::from(*term),
                    aux: *stable,
                    ..Header::new(Kind::Choices, entries.len())
                },
                entries.clone(),
            ),
        }
    }

    /// Builds a protocol frame from a validated header and its payload. Handshake and
    /// control kinds are not protocol frames and are rejected.
    #[inline]
    pub fn from_parts(h: &Header, payload: Bytes) -> Result<Frame, WireError> {
        Ok(match h.kind {
            Kind::Pull => Frame::Pull {
                want: want_of(h)?,
                req: ReqId(h.req),
                consumed: h.aux,
            },
            Kind::Data => Frame::Data {
                key: key_of(h),
                req: ReqId(h.req),
                order: h.aux,
                payload,
                confirm: h.flags & FLAG_CONFIRM != 0,
                late: h.flags & FLAG_LATE != 0,
                sync: h.flags & FLAG_SYNC != 0,
            },
            Kind::Ack => Frame::Ack {
                want: want_of(h)?,
                req: ReqId(h.req),
                progress: h.aux,
            },
            Kind::Gone => Frame::Gone {
                want: want_of(h)?,
                req: ReqId(h.req),
            },
            Kind::Ended => Frame::Ended {
                want: want_of(h)?,
                req: ReqId(h.req),
            },
            Kind::Cancel => Frame::Cancel {
                want: want_of(h)?,
                req: ReqId(h.req),
            },
            Kind::Consumed => Frame::Consumed {
                comm: h.comm,
                src: h.src,
                dst: h.dst,
                watermark: h.aux,
            },
            Kind::Checkpointed => Frame::Checkpointed {
                comm: h.comm,
                src: h.src,
                dst: h.dst,
                watermark: h.aux,
            },
            Kind::Matched => Frame::Matched { key: key_of(h) },
            Kind::SnapshotAsk => Frame::SnapshotAsk { req: ReqId(h.req) },
            Kind::Snapshot => {
                let split = usize::try_from(h.src)
                    .ok()
                    .filter(|&n| n <= payload.len())
                    .ok_or_else(|| WireError::BadLength {
                        kind: h.kind,
                        len: payload.len() as u64,
                        rule: format!("at least the snapshot's {} bytes", h.src),
                    })?;
                Frame::Snapshot {
                    req: ReqId(h.req),
                    number: h.aux,
                    receives: h.seq,
                    log: payload.slice(split..),
                    payload: payload.slice(..split),
                }
            }
            Kind::Takeover => Frame::Takeover {
                rank: h.src,
                base: h.seq,
            },
            Kind::Decided => Frame::Decided {
                rank: h.src,
                entries: payload,
            },
            Kind::Choices => Frame::Choices {
                rank: h.src,
                term: u32::try_from(h.seq).map_err(|_| WireError::Reserved {
                    field: "seq (term)",
                    value: h.seq,
                })?,
                stable: h.aux,
                entries: payload,
            },
            Kind::Hello | Kind::Challenge | Kind::Auth | Kind::Control => {
                return Err(WireError::Unexpected {
                    kind: h.kind,
                    context: "between replicas after the handshake",
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_through_headers() {
        let key = Key {
            comm: 1,
            tag: 2,
            src: 3,
            dst: 4,
            seq: 5,
        };
        let by_order = Want::Order {
            comm: 1,
            src: 3,
            dst: 4,
            order: 7,
        };
        let frames = [
            Frame::Pull {
                want: Want::Key(key),
                req: ReqId(9),
                consumed: 3,
            },
            Frame::Pull {
                want: by_order,
                req: ReqId(9),
                consumed: 3,
            },
            Frame::Data {
                key,
                req: ReqId(9),
                order: 11,
                payload: Bytes::from_static(b"hello"),
                confirm: false,
                late: false,
                sync: false,
            },
            Frame::Data {
                key,
                req: ReqId(9),
                order: 11,
                payload: Bytes::from_static(b"hello"),
                confirm: true,
                late: false,
                sync: true,
            },
            Frame::Data {
                key,
                req: ReqId(9),
                order: 11,
                payload: Bytes::from_static(b"hello"),
                confirm: false,
                late: true,
                sync: false,
            },
            Frame::Matched { key },
            Frame::Ack {
                want: by_order,
                req: ReqId(9),
                progress: 2,
            },
            Frame::Gone {
                want: Want::Key(key),
                req: ReqId(9),
            },
            Frame::Ended {
                want: by_order,
                req: ReqId(9),
            },
            Frame::Cancel {
                want: by_order,
                req: ReqId(9),
            },
            Frame::Consumed {
                comm: 1,
                src: 3,
                dst: 4,
                watermark: 8,
            },
            Frame::Checkpointed {
                comm: 1,
                src: 3,
                dst: 4,
                watermark: 6,
            },
            Frame::SnapshotAsk { req: ReqId(11) },
            Frame::Snapshot {
                req: ReqId(11),
                number: 2,
                receives: 40,
                payload: Bytes::from_static(b"state"),
                log: Bytes::from_static(b"sent"),
            },
            Frame::Snapshot {
                req: ReqId(12),
                number: 0,
                receives: 3,
                payload: Bytes::new(),
                log: Bytes::new(),
            },
            Frame::Takeover { rank: 3, base: 17 },
            Frame::Decided {
                rank: 3,
                entries: Bytes::from_static(b"xyz"),
            },
            Frame::Choices {
                rank: 2,
                term: 1,
                stable: 5,
                entries: Bytes::from_static(b"abc"),
            },
        ];
        for f in frames {
            let (h, p) = f.to_parts();
            let h2 = Header::decode(&h.encode()).unwrap();
            assert_eq!(Frame::from_parts(&h2, p).unwrap(), f);
        }
    }
}
