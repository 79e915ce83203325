//! Consumption watermarks: how far a receiver has received from one sender.
//!
//! Every send from `src` to `dst` on a communicator gets an order number (0, 1, 2, ...).
//! A receiver's watermark for (comm, src) is the smallest order number it has *not* yet
//! received; everything below it has arrived. Receivers report watermarks to senders
//! (piggybacked on pulls and in CONSUMED frames) so sender logs can evict safely.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::Map;

/// How far one stream (comm, src) was received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Received {
    /// Communicator.
    pub comm: u32,
    /// Source rank.
    pub src: u32,
    /// First order number not received.
    pub watermark: u64,
    /// Order numbers received above the watermark.
    pub above: Vec<u64>,
}

/// Per-(comm, src) consumption state of one receiver.
#[derive(Debug, Default)]
pub struct Consumed {
    by_source: Map<(u32, u32), Track>,
}

#[derive(Debug, Default)]
struct Track {
    watermark: u64,
    above: BTreeSet<u64>,
    dirty: bool,
}

impl Consumed {
    /// Records that the message with `order` from `src` on `comm` has been received.
    /// Returns true when the watermark moved.
    pub fn record(&mut self, comm: u32, src: u32, order: u64) -> bool {
        let t = self.by_source.entry((comm, src)).or_default();
        if order < t.watermark {
            return false;
        }
        if order != t.watermark {
            t.above.insert(order);
            return false;
        }
        // The usual case: the next one in order (no set traffic unless there are holes).
        t.watermark += 1;
        while t.above.remove(&t.watermark) {
            t.watermark += 1;
        }
        t.dirty = true;
        true
    }

    /// Whether the message with `order` from `src` on `comm` was recorded already.
    pub fn has(&self, comm: u32, src: u32, order: u64) -> bool {
        self.by_source
            .get(&(comm, src))
            .is_some_and(|t| order < t.watermark || t.above.contains(&order))
    }

    /// Current watermark for (comm, src).
    pub fn watermark(&self, comm: u32, src: u32) -> u64 {
        self.by_source.get(&(comm, src)).map_or(0, |t| t.watermark)
    }

    /// Every stream's progress, for a snapshot.
    pub fn tracks(&self) -> Vec<Received> {
        let mut out: Vec<Received> = self
            .by_source
            .iter()
            .map(|(&(comm, src), t)| Received {
                comm,
                src,
                watermark: t.watermark,
                above: t.above.iter().copied().collect(),
            })
            .collect();
        out.sort_unstable_by_key(|r| (r.comm, r.src));
        out
    }

    /// Progress restored from a snapshot's `tracks` (reported to senders at the next
    /// `take_dirty`).
    pub fn restore(&mut self, tracks: &[Received]) {
        self.by_source = tracks
            .iter()
            .map(|r| {
                (
                    (r.comm, r.src),
                    Track {
                        watermark: r.watermark,
                        above: r.above.iter().copied().collect(),
                        dirty: true,
                    },
                )
            })
            .collect();
    }

    /// Every watermark of streams from `src`, as (comm, watermark).
    pub fn from_source(&self, src: u32) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = self
            .by_source
            .iter()
            .filter(|((_, s), _)| *s == src)
            .map(|(&(comm, _), t)| (comm, t.watermark))
            .collect();
        out.sort_unstable();
        out
    }

    /// Reports every watermark again at the next `take_dirty`.
    pub fn mark_all_dirty(&mut self) {
        for t in self.by_source.values_mut() {
            t.dirty = true;
        }
    }

    /// Watermarks that moved since the last call, as (comm, src, watermark).
    pub fn take_dirty(&mut self) -> Vec<(u32, u32, u64)> {
        let mut out = Vec::new();
        for (&(comm, src), t) in self.by_source.iter_mut() {
            if t.dirty {
                t.dirty = false;
                out.push((comm, src, t.watermark));
            }
        }
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watermark_waits_for_holes() {
        let mut c = Consumed::default();
        assert!(!c.record(0, 1, 1));
        assert_eq!(c.watermark(0, 1), 0);
        assert!(c.has(0, 1, 1) && !c.has(0, 1, 0));
        assert!(c.record(0, 1, 0));
        assert_eq!(c.watermark(0, 1), 2);
        assert!(
            !c.record(0, 1, 0),
            "duplicate below the watermark is ignored"
        );
        assert_eq!(c.take_dirty(), vec![(0, 1, 2)]);
        assert!(c.take_dirty().is_empty());
    }
}
