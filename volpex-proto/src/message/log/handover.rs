//! The whole sender log handed from a draining replica to its next incarnation (see
//! `bootstrap::handover`): the new incarnation serves every message its predecessor sent
//! that a receiver may still pull, and keeps the predecessor's view of who consumed and
//! checkpointed what. Also the part a sibling sent before its checkpoint, for a replica
//! restored from that checkpoint (`export_sent_before`, `adopt`). Owns the log's
//! encoding (a postcard head, then the payloads as they are); must never do I/O.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{LogEntry, SendLog};
use crate::message::{Key, Map};

/// One entry's place in the encoding: key fields, order, choices, retained, length.
type EntryHead = ((u32, i32, u32, u32, u64), u64, u64, bool, u64);
/// Per (comm, dst) marks, one per replica of dst.
type Marks = Vec<((u32, u32), Vec<u64>)>;

/// Everything of a log but its payloads.
#[derive(Debug, Serialize, Deserialize)]
struct Head {
    entries: Vec<EntryHead>,
    seqs: Vec<((u32, i32, u32), u64)>,
    orders: Vec<((u32, u32), u64)>,
    consumed: Marks,
    dead: Vec<(u32, Vec<u32>)>,
    checkpointed: Marks,
    joining: Vec<(u32, Vec<u32>)>,
    evicted_count: u64,
}

fn key_fields(k: &Key) -> (u32, i32, u32, u32, u64) {
    (k.comm, k.tag, k.src, k.dst, k.seq)
}

fn sorted<K: Ord + Copy, V: Clone>(m: &Map<K, V>) -> Vec<(K, V)> {
    let mut v: Vec<(K, V)> = m.iter().map(|(k, v)| (*k, v.clone())).collect();
    v.sort_unstable_by_key(|(k, _)| *k);
    v
}

impl SendLog {
    /// The log encoded for a new incarnation of this replica: a little-endian u64 length
    /// of the postcard head, the head, then every payload in send order.
    pub fn export(&self) -> Result<Vec<u8>, String> {
        self.encode(|_| true, true)
    }

    /// The entries this replica sent before a checkpoint whose next order numbers per
    /// (comm, dst) were `orders` (`progress().1` then), encoded as by `export` without
    /// numbering or marks: for a sibling restored from that checkpoint (`adopt`), which
    /// then serves them should this replica die before their destinations received them.
    pub fn export_sent_before(&self, orders: &[((u32, u32), u64)]) -> Result<Vec<u8>, String> {
        let below: Map<(u32, u32), u64> = orders.iter().copied().collect();
        self.encode(
            |e| {
                below
                    .get(&(e.0.comm, e.0.dst))
                    .is_some_and(|&next| e.1.order < next)
            },
            false,
        )
    }

    /// The entries `keep` picks, with this log's numbering and marks if `state`.
    fn encode(
        &self,
        keep: impl Fn(&(&Key, &LogEntry, bool)) -> bool,
        state: bool,
    ) -> Result<Vec<u8>, String> {
        // Live entries in send order, then the retained ones (every live replica has them).
        let live: Vec<(&Key, &LogEntry, bool)> = self
            .fifo
            .iter()
            .filter_map(|k| self.entries.get(k).map(|e| (k, e, false)))
            .chain(self.retained.iter().map(|(k, e)| (k, e, true)))
            .filter(|e| keep(e))
            .collect();
        let mut head = Head {
            entries: live
                .iter()
                .map(|(k, e, retained)| {
                    (
                        key_fields(k),
                        e.order,
                        e.choices,
                        *retained,
                        e.payload.len() as u64,
                    )
                })
                .collect(),
            seqs: Vec::new(),
            orders: Vec::new(),
            consumed: Vec::new(),
            dead: Vec::new(),
            checkpointed: Vec::new(),
            joining: Vec::new(),
            evicted_count: 0,
        };
        if state {
            head.seqs = sorted(&self.seqs);
            head.orders = sorted(&self.orders);
            head.consumed = sorted(&self.consumed);
            head.dead = sorted(&self.dead);
            head.checkpointed = sorted(&self.checkpointed);
            head.joining = sorted(&self.joining);
            head.evicted_count = self.evicted_count;
        }
        let head = postcard::to_stdvec(&head).map_err(|e| e.to_string())?;
        let payload: usize = live.iter().map(|(_, e, _)| e.payload.len()).sum();
        let mut out = Vec::with_capacity(8 + head.len() + payload);
        out.extend_from_slice(&(head.len() as u64).to_le_bytes());
        out.extend_from_slice(&head);
        for (_, e, _) in live {
            out.extend_from_slice(&e.payload);
        }
        Ok(out)
    }

    /// Replaces this (fresh) log's contents with an exported one; the bounds stay this
    /// log's. Payloads share `bytes`.
    pub fn import(&mut self, bytes: Bytes) -> Result<(), String> {
        let (mut fresh, head) = self.decode(bytes)?;
        fresh.seqs = head.seqs.into_iter().collect();
        fresh.orders = head.orders.into_iter().collect();
        fresh.consumed = head.consumed.into_iter().collect();
        fresh.dead = head.dead.into_iter().collect();
        fresh.checkpointed = head.checkpointed.into_iter().collect();
        fresh.joining = head.joining.into_iter().collect();
        fresh.evicted_count = head.evicted_count;
        *self = fresh;
        Ok(())
    }

    /// Takes a sibling's entries (`export_sent_before`) into this log, which restored
    /// that sibling's checkpoint and holds no entry yet: its numbering and marks stay,
    /// and what its marks say every live replica of a destination has goes at once.
    pub fn adopt(&mut self, bytes: Bytes) -> Result<(), String> {
        if !self.is_empty() {
            return Err("a sibling's log entries: this log holds entries already".into());
        }
        let (fresh, head) = self.decode(bytes)?;
        for ((comm, tag, _, dst, seq), ..) in &head.entries {
            let next = self.seqs.get(&(*comm, *tag, *dst)).copied().unwrap_or(0);
            if *seq >= next {
                return Err(format!(
                    "a sibling's log entries: ({comm}, {tag}, {dst}) seq {seq} was not sent before its checkpoint"
                ));
            }
        }
        self.bytes_used = fresh.bytes_used;
        self.entries = fresh.entries;
        self.fifo = fresh.fifo;
        self.by_dst = fresh.by_dst;
        self.retained = fresh.retained;
        self.retained_bytes = fresh.retained_bytes;
        let mut streams: Vec<(u32, u32)> = head
            .entries
            .iter()
            .map(|((comm, _, _, dst, _), ..)| (*comm, *dst))
            .collect();
        streams.sort_unstable();
        streams.dedup();
        for (comm, dst) in streams {
            self.marks(comm, dst);
            self.drop_fully_consumed(comm, dst);
            self.release_checkpointed(comm, dst);
        }
        self.trim_retained();
        Ok(())
    }

    /// A fresh log with this one's bounds holding the entries of an encoded one, and the
    /// rest of its head.
    fn decode(&self, bytes: Bytes) -> Result<(SendLog, Head), String> {
        let len = bytes
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
            .ok_or("handed-over log: truncated")?;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_add(8))
            .filter(|&e| e <= bytes.len())
            .ok_or("handed-over log: bad head length")?;
        let head: Head = postcard::from_bytes(&bytes[8..end]).map_err(|e| e.to_string())?;
        let mut at = end;
        let mut fresh = SendLog::new(self.bytes_max, self.replicas as u32);
        fresh.retain_max = self.retain_max;
        let mut retained_entries = Vec::new();
        for &((comm, tag, src, dst, seq), order, choices, retained, len) in &head.entries {
            let len = usize::try_from(len).map_err(|_| "handed-over log: bad length")?;
            let next = at
                .checked_add(len)
                .filter(|&n| n <= bytes.len())
                .ok_or("handed-over log: payloads truncated")?;
            let key = Key {
                comm,
                tag,
                src,
                dst,
                seq,
            };
            let entry = LogEntry {
                payload: bytes.slice(at..next),
                order,
                choices,
                logged_at: std::time::Duration::ZERO,
                // Only complete sends are handed over (at a checkpoint no request is
                // outstanding), and their other replicas flag their own copies.
                sync: false,
                lent: None,
            };
            let cost = Self::cost(len);
            fresh.bytes_used += cost;
            if retained {
                fresh.retained_bytes += cost;
                retained_entries.push((key, entry));
            } else {
                fresh.fifo.push_back(key);
                fresh
                    .by_dst
                    .entry((comm, dst))
                    .or_default()
                    .push_back((order, key));
                fresh.entries.insert(key, entry);
            }
            at = next;
        }
        for q in fresh.by_dst.values_mut() {
            q.make_contiguous().sort_unstable_by_key(|(o, _)| *o);
        }
        // Retained entries go in per (comm, dst) by order number, and into the eviction
        // queue ahead of the live ones (they are older than the live ones of their
        // stream).
        retained_entries.sort_by_key(|(k, e)| (k.comm, k.dst, e.order));
        for (key, _) in retained_entries.iter().rev() {
            fresh.fifo.push_front(*key);
        }
        for (key, entry) in retained_entries {
            fresh.retained.push(key, entry);
        }
        Ok((fresh, head))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::log::Lookup;
    use std::time::Duration;

    #[test]
    fn a_handed_over_log_serves_what_the_old_one_did() {
        let mut old = SendLog::new(1 << 20, 2);
        let mut keys = Vec::new();
        for i in 0..5u8 {
            let (k, _) = old
                .append(
                    0,
                    7,
                    1,
                    2,
                    Bytes::from(vec![i; 10 + i as usize]),
                    0,
                    Duration::ZERO,
                )
                .expect("room");
            keys.push(k);
        }
        old.append(3, 1, 1, 0, Bytes::from_static(b"other"), 2, Duration::ZERO)
            .expect("room");
        // Both replicas of rank 2 have the first two: they are dropped.
        old.note_consumed(0, 2, 0, 2);
        old.note_consumed(0, 2, 1, 2);
        let bytes = Bytes::from(old.export().expect("export"));
        let mut new = SendLog::new(1 << 20, 2);
        new.import(bytes).expect("import");
        for (i, k) in keys.iter().enumerate() {
            match (old.lookup(k), new.lookup(k)) {
                (Lookup::Present(a), Lookup::Present(b)) => {
                    assert_eq!(a.payload, b.payload);
                    assert_eq!((a.order, a.choices), (b.order, b.choices));
                }
                (Lookup::Evicted, Lookup::Evicted) => assert!(i < 2),
                (a, b) => panic!("entry {i}: {a:?} against {b:?}"),
            }
        }
        assert_eq!(new.progress(), old.progress());
        assert_eq!(new.used_bytes(), old.used_bytes());
        // The next send continues the numbering.
        let (k, order) = new
            .append(0, 7, 1, 2, Bytes::from_static(b"next"), 0, Duration::ZERO)
            .expect("room");
        assert_eq!((k.seq, order), (5, 5));
        // Consumption goes on from the old marks.
        new.note_consumed(0, 2, 0, 5);
        new.note_consumed(0, 2, 1, 5);
        assert!(matches!(new.lookup(&keys[4]), Lookup::Evicted));
    }

    #[test]
    fn retained_entries_are_handed_over_and_stay_retained() {
        let mut old = SendLog::new(1 << 20, 1).retaining(1 << 20);
        let keys: Vec<Key> = (0..4u8)
            .map(|i| {
                old.append(
                    0,
                    i32::from(i % 2),
                    1,
                    2,
                    Bytes::from(vec![i; 5]),
                    0,
                    Duration::ZERO,
                )
                .expect("room")
                .0
            })
            .collect();
        old.note_consumed(0, 2, 0, 2);
        let mut new = SendLog::new(1 << 20, 1).retaining(1 << 20);
        new.import(Bytes::from(old.export().expect("export")))
            .expect("import");
        assert_eq!(new.retained_bytes(), old.retained_bytes());
        assert_eq!(new.used_bytes(), old.used_bytes());
        for k in &keys {
            match (old.lookup(k), new.lookup(k)) {
                (Lookup::Present(a), Lookup::Present(b)) => assert_eq!(a.payload, b.payload),
                (a, b) => panic!("{k}: {a:?} against {b:?}"),
            }
        }
        assert_eq!(new.key_at_order(0, 2, 1), Some(keys[1]));
        // The retained ones leave at the next checkpoint, the live ones stay.
        new.note_checkpoint(0, 2, 0, 2);
        assert!(matches!(new.lookup(&keys[1]), Lookup::Evicted));
        assert!(matches!(new.lookup(&keys[2]), Lookup::Present(_)));
        assert_eq!(new.retained_bytes(), 0);
    }

    /// What a sibling sent before its checkpoint goes to a replica restored from that
    /// checkpoint: below the checkpoint's order numbers only, and what the restored
    /// replica's marks say every replica of the destination has goes at once.
    #[test]
    fn a_restored_sibling_adopts_what_was_sent_before_the_checkpoint() {
        let mut sibling = SendLog::new(1 << 20, 2);
        let keys: Vec<Key> = (0..4u8)
            .map(|i| {
                sibling
                    .append(0, 7, 1, 2, Bytes::from(vec![i; 6]), 0, Duration::ZERO)
                    .expect("room")
                    .0
            })
            .collect();
        // The checkpoint was taken after three sends.
        let orders = vec![((0, 2), 3)];
        let (seqs, _) = sibling.progress();
        let seqs: Vec<_> = seqs.into_iter().map(|(k, _)| (k, 3)).collect();
        let bytes = Bytes::from(sibling.export_sent_before(&orders).expect("export"));
        let mut restored = SendLog::new(1 << 20, 2);
        restored.restore_progress(&seqs, &orders);
        // Replica 0 of rank 2 told the restored one it has the first message, replica 1
        // everything so far.
        restored.note_consumed(0, 2, 0, 1);
        restored.note_consumed(0, 2, 1, 3);
        restored.adopt(bytes.clone()).expect("adopt");
        assert!(matches!(restored.lookup(&keys[0]), Lookup::Evicted));
        for k in &keys[1..3] {
            match (sibling.lookup(k), restored.lookup(k)) {
                (Lookup::Present(a), Lookup::Present(b)) => {
                    assert_eq!(a.payload, b.payload);
                    assert_eq!(a.order, b.order);
                }
                (a, b) => panic!("{k}: {a:?} against {b:?}"),
            }
        }
        // Sent after the checkpoint: the restored replica sends it itself.
        assert!(matches!(restored.lookup(&keys[3]), Lookup::NotYetSent));
        assert_eq!(restored.progress().1, orders);
        // Only into a log that holds nothing yet.
        assert!(restored.adopt(bytes).is_err());
        // Entries past the restored numbering are refused.
        let all = Bytes::from(sibling.export_sent_before(&[((0, 2), 4)]).expect("export"));
        let mut behind = SendLog::new(1 << 20, 2);
        behind.restore_progress(&seqs, &orders);
        assert!(behind.adopt(all).is_err());
    }

    #[test]
    fn a_damaged_handover_is_refused() {
        let mut old = SendLog::new(1 << 20, 1);
        old.append(0, 0, 0, 1, Bytes::from_static(b"abcdef"), 0, Duration::ZERO)
            .expect("room");
        let bytes = old.export().expect("export");
        let mut new = SendLog::new(1 << 20, 1);
        assert!(new
            .import(Bytes::from(bytes[..bytes.len() - 2].to_vec()))
            .is_err());
        assert!(new
            .import(Bytes::from_static(b"\xff\xff\xff\xff\xff\xff\xff\x7f"))
            .is_err());
        assert!(new.import(Bytes::new()).is_err());
    }
}
