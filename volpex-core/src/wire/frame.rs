//! Pull-protocol frames as the engine sees them, and their mapping to headers.

use bytes::Bytes;

use super::header::{Header, Kind, WireError};
use crate::message::Key;

/// A pull-protocol frame between two replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// Receiver asks for `key`; `consumed` is its watermark for (comm, src).
    Pull {
        /// Message wanted.
        key: Key,
        /// Receiver-chosen id, echoed in the answer.
        req: u64,
        /// Receiver's consumption watermark for (key.comm, key.src).
        consumed: u64,
    },
    /// The message.
    Data {
        /// Message key.
        key: Key,
        /// Echoed request id.
        req: u64,
        /// Order number among sends from src to dst on comm.
        order: u64,
        /// Message bytes.
        payload: Bytes,
    },
    /// Parked: the sender has not made that send yet.
    Ack {
        /// Message key.
        key: Key,
        /// Echoed request id.
        req: u64,
        /// Sends this sender replica has made to the destination on comm so far.
        progress: u64,
    },
    /// The message was evicted from this sender replica's log.
    Gone {
        /// Message key.
        key: Key,
        /// Echoed request id.
        req: u64,
    },
    /// Receiver withdraws a parked pull.
    Cancel {
        /// Message key.
        key: Key,
        /// Request id of the pull.
        req: u64,
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
}

/// The header of a DATA frame, for writers that send the payload from elsewhere.
pub fn data_header(key: &Key, req: u64, order: u64, len: usize) -> Header {
    keyed(Kind::Data, key, req, order, len)
}

fn keyed(kind: Kind, key: &Key, req: u64, aux: u64, len: usize) -> Header {
    Header {
        comm: key.comm,
        tag: key.tag,
        src: key.src,
        dst: key.dst,
        seq: key.seq,
        req,
        aux,
        ..Header::new(kind, len)
    }
}

impl Frame {
    /// The header for this frame, and the payload that follows it (empty for all but DATA).
    pub fn to_parts(&self) -> (Header, Bytes) {
        match self {
            Frame::Pull { key, req, consumed } => {
                (keyed(Kind::Pull, key, *req, *consumed, 0), Bytes::new())
            }
            Frame::Data {
                key,
                req,
                order,
                payload,
            } => (
                data_header(key, *req, *order, payload.len()),
                payload.clone(),
            ),
            Frame::Ack { key, req, progress } => {
                (keyed(Kind::Ack, key, *req, *progress, 0), Bytes::new())
            }
            Frame::Gone { key, req } => (keyed(Kind::Gone, key, *req, 0, 0), Bytes::new()),
            Frame::Cancel { key, req } => (keyed(Kind::Cancel, key, *req, 0, 0), Bytes::new()),
            Frame::Consumed {
                comm,
                src,
                dst,
                watermark,
            } => (
                Header {
                    comm: *comm,
                    src: *src,
                    dst: *dst,
                    aux: *watermark,
                    ..Header::new(Kind::Consumed, 0)
                },
                Bytes::new(),
            ),
        }
    }

    /// Builds a protocol frame from a validated header and its payload. Handshake and
    /// control kinds are not protocol frames and are rejected.
    pub fn from_parts(h: &Header, payload: Bytes) -> Result<Frame, WireError> {
        let key = Key {
            comm: h.comm,
            tag: h.tag,
            src: h.src,
            dst: h.dst,
            seq: h.seq,
        };
        Ok(match h.kind {
            Kind::Pull => Frame::Pull {
                key,
                req: h.req,
                consumed: h.aux,
            },
            Kind::Data => Frame::Data {
                key,
                req: h.req,
                order: h.aux,
                payload,
            },
            Kind::Ack => Frame::Ack {
                key,
                req: h.req,
                progress: h.aux,
            },
            Kind::Gone => Frame::Gone { key, req: h.req },
            Kind::Cancel => Frame::Cancel { key, req: h.req },
            Kind::Consumed => Frame::Consumed {
                comm: h.comm,
                src: h.src,
                dst: h.dst,
                watermark: h.aux,
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
        let frames = [
            Frame::Pull {
                key,
                req: 9,
                consumed: 3,
            },
            Frame::Data {
                key,
                req: 9,
                order: 11,
                payload: Bytes::from_static(b"hello"),
            },
            Frame::Ack {
                key,
                req: 9,
                progress: 2,
            },
            Frame::Gone { key, req: 9 },
            Frame::Cancel { key, req: 9 },
            Frame::Consumed {
                comm: 1,
                src: 3,
                dst: 4,
                watermark: 8,
            },
        ];
        for f in frames {
            let (h, p) = f.to_parts();
            let h2 = Header::decode(&h.encode()).unwrap();
            assert_eq!(Frame::from_parts(&h2, p).unwrap(), f);
        }
    }
}
