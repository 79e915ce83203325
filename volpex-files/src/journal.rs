//! The journal: this replica's file operations that the rank's writer has not applied
//! yet (as far as this replica knows), in order, with their data.
//!
//! Every operation is positional (an append became a write at the offset the file's size
//! gave it), so applying a suffix of the journal again to a file that already holds it
//! changes nothing: a new writer re-applies from the last point its predecessor reported.
//! Reads of a file this rank wrote see the file system as applied, with the journal laid
//! over it (`overlay`).
//!
//! Owns the entries, their byte count and the buffers of trimmed writes kept for later
//! ones; must never touch the file system.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::protocol::Seq;

/// A file of the rank, named by the operation that first brought it into the layer (equal
/// in every replica).
pub type FileId = u64;

/// One operation, as the writer applies it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Open a file for writing: create it (if it did not exist) or cut it to nothing.
    Open {
        /// Which file.
        file: FileId,
        /// Where.
        path: Arc<Path>,
        /// It did not exist: create it.
        create: bool,
        /// It existed and had bytes: cut it to length 0.
        truncate: bool,
        /// Permissions of a created file (the kernel applies the umask).
        mode: u32,
    },
    /// Bytes at an offset.
    Write {
        /// Which file.
        file: FileId,
        /// Its path then (`None`: removed while open).
        path: Option<Arc<Path>>,
        /// Where.
        offset: u64,
        /// What.
        data: Arc<Vec<u8>>,
    },
    /// Set the length (ftruncate, truncate).
    SetLen {
        /// Which file.
        file: FileId,
        /// Its path then.
        path: Option<Arc<Path>>,
        /// The new length.
        len: u64,
    },
    /// A descriptor of the file closed; `last`: no other is open.
    Close {
        /// Which file.
        file: FileId,
        /// No descriptor of it is open any more.
        last: bool,
    },
    /// fsync / fdatasync.
    Sync {
        /// Which file.
        file: FileId,
        /// Its path then.
        path: Option<Arc<Path>>,
    },
    /// rename.
    Rename {
        /// The file that moved (the rank's name for it after the rename).
        file: FileId,
        /// From where.
        from: Arc<Path>,
        /// To where.
        to: Arc<Path>,
    },
    /// unlink.
    Unlink {
        /// The rank's file that was there, if the rank knew it.
        file: Option<FileId>,
        /// What.
        path: Arc<Path>,
    },
    /// mkdir.
    Mkdir {
        /// What.
        path: Arc<Path>,
        /// Its permissions.
        mode: u32,
    },
    /// rmdir.
    Rmdir {
        /// What.
        path: Arc<Path>,
    },
}

impl Op {
    /// Whether it moves or removes a name (where a file is on the file system).
    pub fn renames(&self) -> bool {
        match self {
            Op::Rename { .. } | Op::Unlink { .. } | Op::Mkdir { .. } | Op::Rmdir { .. } => true,
            Op::Open { .. }
            | Op::Write { .. }
            | Op::SetLen { .. }
            | Op::Close { .. }
            | Op::Sync { .. } => false,
        }
    }

    /// The file it concerns, if it names one.
    pub fn file(&self) -> Option<FileId> {
        match self {
            Op::Open { file, .. }
            | Op::Write { file, .. }
            | Op::SetLen { file, .. }
            | Op::Close { file, .. }
            | Op::Sync { file, .. }
            | Op::Rename { file, .. } => Some(*file),
            Op::Unlink { file, .. } => *file,
            Op::Mkdir { .. } | Op::Rmdir { .. } => None,
        }
    }
}

/// How an entry may be applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Gate {
    /// At once (an append, a close).
    Free,
    /// Once every live replica has produced it: it changes what is already there (a
    /// rewrite, a truncation, a rename, a creation, a removal).
    Everyone,
}

/// One journal entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its number.
    pub seq: Seq,
    /// What.
    pub op: Op,
    /// When it may be applied.
    pub gate: Gate,
    /// Its outcome was decided from the file system before it is applied: the writer
    /// applies it only once the launcher has recorded that outcome, so a writer that
    /// takes over never decides it again differently.
    pub recorded_first: bool,
    /// The trace (see `layer`) after it: the record of a close's or an fsync's outcome
    /// carries it.
    pub trace: u64,
}

impl Entry {
    /// Bytes it holds.
    pub fn bytes(&self) -> usize {
        match &self.op {
            Op::Write { data, .. } => data.len() + 64,
            _ => 64,
        }
    }
}

/// The entries not known to be applied, oldest first.
#[derive(Debug, Default)]
pub struct Journal {
    entries: VecDeque<Entry>,
    bytes: usize,
    /// Buffers of trimmed writes, kept for the next ones (`copy`).
    spare: Vec<Vec<u8>>,
}

/// Bytes of trimmed writes' buffers kept for later writes, at most: a follower that
/// keeps large writes (a two-phase aggregator's) until its writer applied them fills
/// memory it already has instead of new pages (a page fault per 4 KiB).
const SPARE_BYTES: usize = 64 << 20;
/// Buffers smaller than this are not kept (the allocator serves them well).
const SPARE_MIN: usize = 64 << 10;

impl Journal {
    /// Appends an entry (numbers increase).
    pub fn push(&mut self, e: Entry) {
        debug_assert!(self.entries.back().is_none_or(|b| b.seq < e.seq));
        self.bytes += e.bytes();
        self.entries.push_back(e);
    }

    /// Drops every entry up to `seq`.
    pub fn trim_through(&mut self, seq: Seq) {
        while self.entries.front().is_some_and(|e| e.seq <= seq) {
            if let Some(e) = self.entries.pop_front() {
                self.bytes -= e.bytes();
                if let Op::Write { data, .. } = e.op {
                    self.recycle(data);
                }
            }
        }
    }

    /// A write's bytes for an entry: a copy of `parts`, one after another, in a spare
    /// buffer when one is large enough.
    pub fn copy(&mut self, parts: &[&[u8]]) -> Arc<Vec<u8>> {
        let len = parts.iter().map(|p| p.len()).sum();
        let mut v = match self.spare.iter().position(|b| b.capacity() >= len) {
            Some(i) => self.spare.swap_remove(i),
            None => Vec::with_capacity(len),
        };
        v.clear();
        for p in parts {
            v.extend_from_slice(p);
        }
        Arc::new(v)
    }

    /// Keeps a trimmed write's buffer for a later write, if no one else holds it (the
    /// files thread may, in a batch) and there is room.
    fn recycle(&mut self, data: Arc<Vec<u8>>) {
        let Ok(v) = Arc::try_unwrap(data) else { return };
        let kept: usize = self.spare.iter().map(Vec::capacity).sum();
        if v.capacity() >= SPARE_MIN && kept + v.capacity() <= SPARE_BYTES {
            self.spare.push(v);
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Every entry, oldest first (for a snapshot).
    pub fn to_vec(&self) -> Vec<Entry> {
        self.entries.iter().cloned().collect()
    }

    /// Entries after `seq`.
    pub fn after(&self, seq: Seq) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(move |e| e.seq > seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(seq: Seq, n: usize) -> Entry {
        Entry {
            seq,
            op: Op::Write {
                file: 1,
                path: None,
                offset: 0,
                data: Arc::new(vec![0u8; n]),
            },
            gate: Gate::Free,
            recorded_first: false,
            trace: 0,
        }
    }

    #[test]
    fn trimming_drops_applied_entries_and_their_bytes() {
        let mut j = Journal::default();
        j.push(write(1, 100));
        j.push(write(3, 10));
        j.push(write(4, 1));
        assert_eq!(j.bytes(), 111 + 3 * 64);
        j.trim_through(2);
        assert_eq!(j.after(0).next().map(|e| e.seq), Some(3));
        assert_eq!(j.after(3).count(), 1);
        j.trim_through(10);
        assert!(j.after(0).next().is_none());
        assert_eq!(j.bytes(), 0);
    }

    #[test]
    fn a_trimmed_writes_buffer_holds_a_later_write() {
        let mut j = Journal::default();
        let data = j.copy(&[&[7u8; SPARE_MIN]]);
        let at = data.as_ptr();
        j.push(Entry {
            op: Op::Write {
                file: 1,
                path: None,
                offset: 0,
                data,
            },
            ..write(1, 0)
        });
        j.trim_through(1);
        let again = j.copy(&[&[9u8; 100]]);
        assert_eq!(again.as_ptr(), at, "the trimmed buffer is used again");
        assert_eq!(&again[..], &[9u8; 100][..]);
        // A buffer someone else still holds (a batch of the files thread) is not.
        let held = j.copy(&[&[1u8; SPARE_MIN]]);
        j.push(Entry {
            op: Op::Write {
                file: 1,
                path: None,
                offset: 0,
                data: held.clone(),
            },
            ..write(2, 0)
        });
        j.trim_through(2);
        assert_ne!(j.copy(&[&[2u8; 10]]).as_ptr(), held.as_ptr());
    }
}
