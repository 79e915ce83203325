//! Lengths of messages that landed straight in their receive's buffer (their DATA
//! reached the engine without a payload: `Engine::note_landed`), until the receive is
//! taken. Owns only that record; must never decide whether a DATA is delivered.
//!
//! Almost always one message is in flight per receive: the latest is kept beside the
//! map, so a small message read from a shared-memory slot into its receive's buffer
//! costs no hash map insert and removal.

use crate::message::{Key, Map};

/// Most entries kept besides the latest (a stray, whose receive took another copy of
/// the message, is dropped wholesale beyond this).
const LANDED_MAX: usize = 1024;

/// The lengths of landed messages by key.
#[derive(Debug, Default)]
pub(super) struct Landed {
    /// The latest one noted.
    last: Option<(Key, usize)>,
    /// The others.
    more: Map<Key, usize>,
}

impl Landed {
    /// `key` landed, `len` bytes.
    #[inline]
    pub(super) fn insert(&mut self, key: Key, len: usize) {
        if let Some((k, n)) = self.last.replace((key, len)) {
            if k != key {
                // A frame lands only in a waiting receive's buffer, so each entry is
                // taken with its receive, except after a race of two replicas' copies
                // of one message where the later one landed: such strays are dropped
                // wholesale now and then (a lost entry only sizes one pull-ahead window
                // as for an empty message).
                if self.more.len() >= LANDED_MAX {
                    self.more.clear();
                }
                self.more.insert(k, n);
            }
        }
    }

    /// The length of `key`, if it landed.
    #[inline]
    pub(super) fn get(&self, key: &Key) -> Option<usize> {
        match self.last {
            Some((k, n)) if k == *key => Some(n),
            _ if self.more.is_empty() => None,
            _ => self.more.get(key).copied(),
        }
    }

    /// Takes the length of `key`, if it landed.
    #[inline]
    pub(super) fn remove(&mut self, key: &Key) -> Option<usize> {
        match self.last {
            Some((k, n)) if k == *key => {
                self.last = None;
                Some(n)
            }
            _ if self.more.is_empty() => None,
            _ => self.more.remove(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seq: u64) -> Key {
        Key {
            comm: 0,
            tag: 1,
            src: 2,
            dst: 3,
            seq,
        }
    }

    #[test]
    fn the_latest_and_the_others_are_found_and_taken_once() {
        let mut l = Landed::default();
        assert_eq!(l.get(&key(0)), None);
        l.insert(key(0), 8);
        l.insert(key(1), 16);
        assert_eq!((l.get(&key(0)), l.get(&key(1))), (Some(8), Some(16)));
        assert_eq!(l.remove(&key(1)), Some(16));
        assert_eq!(l.remove(&key(1)), None);
        assert_eq!(l.remove(&key(0)), Some(8));
        assert_eq!(l.get(&key(0)), None);
        l.insert(key(2), 4);
        l.insert(key(2), 5);
        assert_eq!(l.remove(&key(2)), Some(5));
        assert_eq!(l.remove(&key(2)), None, "noted twice, one entry");
    }

    #[test]
    fn strays_are_bounded() {
        let mut l = Landed::default();
        for s in 0..3 * LANDED_MAX as u64 {
            l.insert(key(s), 1);
        }
        assert!(l.more.len() <= LANDED_MAX);
        assert_eq!(l.get(&key(3 * LANDED_MAX as u64 - 1)), Some(1));
    }
}
