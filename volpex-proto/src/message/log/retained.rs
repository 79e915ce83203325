//! The entries every live replica of their destination has received, kept for a new
//! incarnation replaying its program (see `SendLog::retaining`). Owns their storage:
//! per (comm, dst) in order-number order, with an index per (comm, tag, dst) by seq, so
//! retaining an entry appends, dropping the oldest pops a front, and a lookup is two
//! binary searches; nothing grows a hash map per message (at `-r 1` every message of
//! the run passes through here, up to the replay bound). Must never decide what to keep:
//! `SendLog` does.

use std::collections::VecDeque;

use super::LogEntry;
use crate::message::{Key, Map};

/// One retained entry.
#[derive(Debug)]
struct Kept {
    /// Place in retention order (`Retained::queue`).
    generation: u64,
    key: Key,
    entry: LogEntry,
}

/// Retained entries; see the module comment.
#[derive(Debug, Default)]
pub(super) struct Retained {
    /// Per (comm, dst), increasing order numbers.
    streams: Map<(u32, u32), VecDeque<Kept>>,
    /// Per (comm, tag, dst): (seq, order) of the stream's entries with that tag, by seq.
    /// Seqs and order numbers increase together, so each is a subsequence of its stream
    /// and leaves from its front when the stream's front leaves.
    by_tag: Map<(u32, i32, u32), VecDeque<(u64, u64)>>,
    /// (generation, stream) in retention order, oldest first; an item whose entry
    /// already left its stream (released, evicted) is skipped when reached.
    queue: VecDeque<(u64, (u32, u32))>,
    next_generation: u64,
    len: usize,
}

impl Retained {
    /// Number of entries held.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Keeps `entry`, the next of its (comm, dst) stream by order number.
    pub(super) fn push(&mut self, key: Key, entry: LogEntry) {
        let stream = (key.comm, key.dst);
        let order = entry.order;
        let q = self.streams.entry(stream).or_default();
        debug_assert!(
            q.back().is_none_or(|k| k.entry.order < order),
            "retained order numbers to {} on {} not increasing",
            key.dst,
            key.comm
        );
        let generation = self.next_generation;
        self.next_generation += 1;
        q.push_back(Kept {
            generation,
            key,
            entry,
        });
        self.by_tag
            .entry((key.comm, key.tag, key.dst))
            .or_default()
            .push_back((key.seq, order));
        self.queue.push_back((generation, stream));
        self.len += 1;
        if self.queue.len() > 2 * self.len + 64 {
            self.compact_queue();
        }
    }

    fn position(&self, key: &Key) -> Option<usize> {
        let seqs = self.by_tag.get(&(key.comm, key.tag, key.dst))?;
        let i = seqs.binary_search_by_key(&key.seq, |&(s, _)| s).ok()?;
        let order = seqs.get(i)?.1;
        self.index_of_order(key.comm, key.dst, order)
    }

    fn index_of_order(&self, comm: u32, dst: u32, order: u64) -> Option<usize> {
        let q = self.streams.get(&(comm, dst))?;
        if q.front()?.entry.order > order || q.back()?.entry.order < order {
            return None;
        }
        q.binary_search_by_key(&order, |k| k.entry.order).ok()
    }

    /// The retained entry of `key`.
    pub(super) fn get(&self, key: &Key) -> Option<&LogEntry> {
        let i = self.position(key)?;
        let kept = self.streams.get(&(key.comm, key.dst))?.get(i)?;
        (kept.key == *key).then_some(&kept.entry)
    }

    /// The retained entry of `key`, to change.
    pub(super) fn get_mut(&mut self, key: &Key) -> Option<&mut LogEntry> {
        let i = self.position(key)?;
        let kept = self.streams.get_mut(&(key.comm, key.dst))?.get_mut(i)?;
        (kept.key == *key).then_some(&mut kept.entry)
    }

    /// The key of the retained `order`-th message to `dst` on `comm`.
    pub(super) fn key_at_order(&self, comm: u32, dst: u32, order: u64) -> Option<Key> {
        let i = self.index_of_order(comm, dst, order)?;
        Some(self.streams.get(&(comm, dst))?.get(i)?.key)
    }

    /// The oldest retained entry to `dst` on `comm`.
    pub(super) fn front(&self, comm: u32, dst: u32) -> Option<(&Key, &LogEntry)> {
        self.streams
            .get(&(comm, dst))?
            .front()
            .map(|k| (&k.key, &k.entry))
    }

    /// Drops the oldest retained entry to `dst` on `comm`.
    pub(super) fn pop_front(&mut self, comm: u32, dst: u32) -> Option<(Key, LogEntry)> {
        let kept = self.streams.get_mut(&(comm, dst))?.pop_front()?;
        let key = kept.key;
        if let Some(seqs) = self.by_tag.get_mut(&(key.comm, key.tag, key.dst)) {
            let front = seqs.pop_front();
            debug_assert_eq!(front, Some((key.seq, kept.entry.order)));
        }
        self.len -= 1;
        Some((key, kept.entry))
    }

    /// Drops the entry retained first of all still held.
    pub(super) fn pop_oldest(&mut self) -> Option<(Key, LogEntry)> {
        while let Some((generation, (comm, dst))) = self.queue.pop_front() {
            let current = self
                .streams
                .get(&(comm, dst))
                .and_then(|q| q.front())
                .is_some_and(|k| k.generation == generation);
            if current {
                return self.pop_front(comm, dst);
            }
        }
        None
    }

    /// Every entry, to change.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = (&Key, &mut LogEntry)> {
        self.streams
            .values_mut()
            .flat_map(|q| q.iter_mut().map(|k| (&k.key, &mut k.entry)))
    }

    /// Every entry in storage order, for the handover's export.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Key, &LogEntry)> {
        self.streams
            .values()
            .flat_map(|q| q.iter().map(|k| (&k.key, &k.entry)))
    }

    /// Forgets queue items of entries gone: an entry leaves only from its stream's front,
    /// so an item is live while its stream's front is not younger.
    fn compact_queue(&mut self) {
        let streams = &self.streams;
        self.queue.retain(|(generation, stream)| {
            streams
                .get(stream)
                .and_then(|q| q.front())
                .is_some_and(|k| k.generation <= *generation)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::time::Duration;

    fn entry(order: u64) -> LogEntry {
        LogEntry {
            payload: Bytes::from_static(b"x"),
            order,
            choices: 0,
            logged_at: Duration::ZERO,
            sync: false,
            lent: None,
        }
    }

    fn key(tag: i32, dst: u32, seq: u64) -> Key {
        Key {
            comm: 0,
            tag,
            src: 9,
            dst,
            seq,
        }
    }

    #[test]
    fn finds_by_key_and_order_and_drops_oldest_first_across_streams() {
        let mut r = Retained::default();
        r.push(key(1, 1, 0), entry(0));
        r.push(key(2, 1, 0), entry(1));
        r.push(key(1, 2, 0), entry(0));
        r.push(key(1, 1, 1), entry(3));
        assert_eq!(r.len(), 4);
        assert_eq!(r.get(&key(1, 1, 1)).map(|e| e.order), Some(3));
        assert!(r.get(&key(1, 1, 2)).is_none());
        assert!(r.get(&key(3, 1, 0)).is_none());
        assert_eq!(r.key_at_order(0, 1, 1), Some(key(2, 1, 0)));
        assert_eq!(r.key_at_order(0, 1, 2), None);
        // Release the front of stream (0, 1) out of retention order: the queue skips it.
        assert_eq!(r.pop_front(0, 1).map(|(k, _)| k), Some(key(1, 1, 0)));
        assert_eq!(r.pop_oldest().map(|(k, _)| k), Some(key(2, 1, 0)));
        assert_eq!(r.pop_oldest().map(|(k, _)| k), Some(key(1, 2, 0)));
        assert_eq!(r.front(0, 1).map(|(k, _)| *k), Some(key(1, 1, 1)));
        assert_eq!(r.pop_oldest().map(|(k, _)| k), Some(key(1, 1, 1)));
        assert!(r.pop_oldest().is_none());
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn the_retention_queue_stays_bounded_when_entries_leave_by_their_stream() {
        let mut r = Retained::default();
        for i in 0..10_000u64 {
            r.push(key(0, 1, i), entry(i));
            r.pop_front(0, 1);
        }
        assert_eq!(r.len(), 0);
        assert!(r.queue.len() <= 2 * r.len() + 65);
    }
}
