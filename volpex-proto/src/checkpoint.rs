//! Checkpoints: what a replica hands a regenerated sibling so it need not replay the
//! program from its start (DESIGN, "Regeneration").
//!
//! A snapshot is taken where the program has no request outstanding. It holds the
//! application's state (serialized by the application) and the runtime's: every counter
//! that gives this replica's messages their keys (next send sequence and order numbers
//! per destination, receive progress per source, messages arrived and not yet received,
//! coordinated choices used) and the results of communicator splits made before it, so
//! the restored program re-creates the same communicators without communicating.
//!
//! A draining replica hands its next incarnation a `Handover`: the snapshot it stopped
//! at and its whole sender log.
//!
//! Owns the snapshot and handover formats and their encoding: the runtime's part in
//! postcard, then the application's bytes as they are (a byte-wise serde encoding of tens
//! of megabytes cost as much as an NPB iteration). Must never open a connection nor
//! decide when a snapshot is taken or which sibling serves it.

use std::io::{Read, Write};

use bytes::Bytes;
use serde::{Deserialize, Serialize};

pub use crate::message::matching::Unreceived;
pub use crate::message::watermark::Received;
use crate::wire::control::ReplicaStats;

/// The runtime's part of a snapshot: what the pull engine needs to go on from it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeState {
    /// Next sequence number per (comm, tag, dst).
    pub next_seq: Vec<((u32, i32, u32), u64)>,
    /// Next order number per (comm, dst).
    pub next_order: Vec<((u32, u32), u64)>,
    /// Next sequence number to receive per (comm, tag, src).
    pub claimed: Vec<((u32, i32, u32), u64)>,
    /// Messages arrived and not yet received.
    pub unreceived: Vec<Unreceived>,
    /// Receive progress per stream.
    pub received: Vec<Received>,
    /// Slot of the next coordinated choice.
    pub next_choice: u64,
    /// Choices used: every slot below this, and those listed.
    pub choices_used_below: u64,
    /// Choices used above `choices_used_below`.
    pub choices_used_above: Vec<u64>,
    /// Counters.
    pub stats: ReplicaStats,
}

/// A whole snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Which checkpoint of the program (1 for the first).
    pub number: u64,
    /// The runtime's state.
    pub runtime: RuntimeState,
    /// Splits made before it: (parent context id, nth creation from it, what every member
    /// contributed), answered from here when the restored program splits again.
    pub splits: Vec<(u32, u32, Vec<i64>)>,
    /// Sends the program had made (fault-injection counter).
    pub sends: u64,
    /// The file layer's state (`volpex_files::snapshot`): its operations' numbers, the
    /// files' sizes and names, the operations the writer had not applied.
    pub files: Vec<u8>,
    /// The application's state, as it serialized it (encoded after the rest, as is).
    #[serde(skip)]
    pub app: Vec<u8>,
}

impl Snapshot {
    /// Encodes it for the wire: the length of the postcard part (u64, little-endian),
    /// the postcard part, the application's bytes.
    pub fn encode(&self) -> Result<Bytes, String> {
        let head =
            postcard::to_stdvec(self).map_err(|e| format!("cannot encode the snapshot: {e}"))?;
        let mut out = Vec::with_capacity(8 + head.len() + self.app.len());
        out.extend_from_slice(&(head.len() as u64).to_le_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(&self.app);
        Ok(Bytes::from(out))
    }

    /// Encodes it as `encode` does, with `state` (the application's state, serialized
    /// here in postcard; `app` is ignored) written straight after the runtime's part, into
    /// `buf`'s allocation (cleared first): one pass over the state's bytes, and no page
    /// faults when `buf` is the allocation of an earlier snapshot of the same size.
    pub fn encode_with<T: Serialize>(&self, state: &T, buf: Vec<u8>) -> Result<Bytes, String> {
        let head =
            postcard::to_stdvec(self).map_err(|e| format!("cannot encode the snapshot: {e}"))?;
        let mut out = buf;
        out.clear();
        out.extend_from_slice(&(head.len() as u64).to_le_bytes());
        out.extend_from_slice(&head);
        let out = postcard::to_extend(state, out)
            .map_err(|e| format!("cannot encode the application's state: {e}"))?;
        Ok(Bytes::from(out))
    }

    /// Decodes what `encode` made.
    pub fn decode(b: &[u8]) -> Result<Snapshot, String> {
        let bad = |why: &str| format!("malformed snapshot: {why}");
        let (len, rest) = b.split_first_chunk::<8>().ok_or_else(|| bad("truncated"))?;
        let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| bad("length"))?;
        if len > rest.len() {
            return Err(bad("truncated"));
        }
        let (head, app) = rest.split_at(len);
        let mut s: Snapshot = postcard::from_bytes(head).map_err(|e| bad(&e.to_string()))?;
        s.app = app.to_vec();
        Ok(s)
    }
}

/// Largest handover accepted (a bound on a length read from the network).
const MAX_HANDOVER_BYTES: u64 = 1 << 40;

/// What a draining replica hands its next incarnation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handover {
    /// The checkpoint it stopped at.
    pub number: u64,
    /// Messages it had received (all of them before that checkpoint).
    pub receives: u64,
    /// The encoded snapshot (`checkpoint::Snapshot`).
    pub snapshot: Bytes,
    /// The encoded sender log (`SendLog::export`).
    pub log: Bytes,
}

impl Handover {
    /// Writes it: four little-endian u64 (number, receives, snapshot length, log length), then the
    /// snapshot and the log.
    pub fn write_to(&self, w: &mut impl Write) -> std::io::Result<()> {
        for v in [
            self.number,
            self.receives,
            self.snapshot.len() as u64,
            self.log.len() as u64,
        ] {
            w.write_all(&v.to_le_bytes())?;
        }
        w.write_all(&self.snapshot)?;
        w.write_all(&self.log)?;
        w.flush()
    }

    /// Reads what `write_to` wrote; a length beyond the bound is an error, not an
    /// allocation.
    pub fn read_from(r: &mut impl Read) -> Result<Handover, String> {
        let mut head = [0u8; 32];
        r.read_exact(&mut head).map_err(|e| e.to_string())?;
        let field = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&head[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        let (number, receives, snap_len, log_len) = (field(0), field(1), field(2), field(3));
        if snap_len.saturating_add(log_len) > MAX_HANDOVER_BYTES {
            return Err(format!(
                "a handover of {} bytes is beyond the bound",
                snap_len.saturating_add(log_len)
            ));
        }
        let mut read = |len: u64| -> Result<Bytes, String> {
            let len = usize::try_from(len).map_err(|_| "handover too large".to_string())?;
            let mut buf = vec![0u8; len];
            r.read_exact(&mut buf).map_err(|e| e.to_string())?;
            Ok(Bytes::from(buf))
        };
        let snapshot = read(snap_len)?;
        let log = read(log_len)?;
        Ok(Handover {
            number,
            receives,
            snapshot,
            log,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_round_trips_and_garbage_is_an_error() {
        let s = Snapshot {
            number: 3,
            runtime: RuntimeState {
                next_seq: vec![((1, 2, 3), 4)],
                unreceived: vec![Unreceived {
                    key: (1, 2, 3, 4, 5),
                    order: 6,
                    payload: vec![7, 8],
                }],
                received: vec![Received {
                    comm: 1,
                    src: 2,
                    watermark: 3,
                    above: vec![5],
                }],
                ..Default::default()
            },
            splits: vec![(0, 1, vec![1, 2, 3])],
            sends: 9,
            files: vec![4, 2],
            app: b"state".to_vec(),
        };
        let b = s.encode().unwrap();
        assert_eq!(Snapshot::decode(&b), Ok(s));
        assert!(Snapshot::decode(&[0xff; 3]).is_err());
        assert!(
            Snapshot::decode(&[0xff; 12]).is_err(),
            "length past the end"
        );
        let mut bad = b.to_vec();
        bad[8] = 0xff;
        bad.truncate(12);
        assert!(Snapshot::decode(&bad).is_err());
    }

    /// `encode_with` writes the state's postcard bytes where `encode` writes `app`, over
    /// whatever the reused buffer held.
    #[test]
    fn encoding_with_the_state_is_encoding_its_bytes() {
        let state = ("state", vec![1.5f64, -0.0]);
        let s = Snapshot {
            number: 2,
            splits: vec![(0, 1, vec![4])],
            sends: 5,
            ..Default::default()
        };
        let direct = s.encode_with(&state, vec![0xff; 64]).unwrap();
        let with_app = Snapshot {
            app: postcard::to_stdvec(&state).unwrap(),
            ..s
        };
        assert_eq!(direct, with_app.encode().unwrap());
        assert_eq!(Snapshot::decode(&direct), Ok(with_app));
    }

    #[test]
    fn a_handover_reads_back_as_written_and_truncation_is_an_error() {
        let h = Handover {
            number: 3,
            receives: 41,
            snapshot: Bytes::from_static(b"snapshot"),
            log: Bytes::from_static(b"the log"),
        };
        let mut buf = Vec::new();
        h.write_to(&mut buf).expect("write");
        assert_eq!(Handover::read_from(&mut buf.as_slice()), Ok(h));
        assert!(Handover::read_from(&mut &buf[..buf.len() - 1]).is_err());
        let mut huge = vec![0u8; 32];
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Handover::read_from(&mut huge.as_slice()).is_err());
    }
}
