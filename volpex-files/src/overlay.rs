//! Reads of a file the rank writes: the bytes a failure-free run would read at this
//! replica's point in the sequence.
//!
//! The file system holds the file as the writer applied it, through operation `applied`
//! at least: everything before, maybe appends after (a writer ahead of this replica), but
//! no change to bytes this replica could read (such operations wait until every live
//! replica produced them, see `journal::Gate`). This replica's own operations after
//! `applied` are in its journal; laid over the file system's bytes, in order, they give
//! the file as the program wrote it. Where the journal created or cut the file, the file
//! system's older bytes do not count.
//!
//! Owns only this computation; the caller reads the file system (`base`).

use std::path::Path;
use std::sync::Arc;

use crate::journal::{FileId, Journal, Op};
use crate::protocol::Seq;

/// Where `file` was on the file system as applied through `applied`, given its path now
/// (`None`: removed): the journal's renames and removals of it after `applied`, undone.
/// `Ok(None)`: it did not exist then (created after), or was removed before.
pub fn path_at(
    journal: &Journal,
    applied: Seq,
    file: FileId,
    now: Option<Arc<Path>>,
) -> Option<Arc<Path>> {
    let mut path = now;
    for e in journal.after(applied).collect::<Vec<_>>().into_iter().rev() {
        match &e.op {
            Op::Rename { file: f, from, .. } if *f == file => path = Some(from.clone()),
            Op::Unlink {
                file: Some(f),
                path: p,
            } if *f == file => path = Some(p.clone()),
            Op::Open {
                file: f,
                create: true,
                ..
            } if *f == file => return None,
            _ => {}
        }
    }
    path
}

/// Whether a read of `file` needs the file system's copy: the journal after `applied`
/// neither created it nor cut it to nothing.
pub fn reads_disk(journal: &Journal, applied: Seq, file: FileId) -> bool {
    !journal.after(applied).any(|e| match &e.op {
        Op::Open {
            file: f,
            create,
            truncate,
            ..
        } => *f == file && (*create || *truncate),
        _ => false,
    })
}

/// Fills `buf` with `file`'s bytes at `offset` (the caller clamped `buf` to the file's
/// size). `base(offset, buf)` reads the file system's copy and returns how many bytes it
/// had (the rest reads as zeros).
pub fn read(
    journal: &Journal,
    applied: Seq,
    file: FileId,
    offset: u64,
    buf: &mut [u8],
    base: &mut dyn FnMut(u64, &mut [u8]) -> usize,
) {
    read_over(journal, applied, file, offset, buf, base, true)
}

/// `read` of a file several ranks write (`File::shared`): the file system's bytes always
/// count (other ranks' writes are there), this replica's own operations laid over them.
pub fn read_shared(
    journal: &Journal,
    applied: Seq,
    file: FileId,
    offset: u64,
    buf: &mut [u8],
    base: &mut dyn FnMut(u64, &mut [u8]) -> usize,
) {
    read_over(journal, applied, file, offset, buf, base, false)
}

fn read_over(
    journal: &Journal,
    applied: Seq,
    file: FileId,
    offset: u64,
    buf: &mut [u8],
    base: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    resets: bool,
) {
    let mine: Vec<&Op> = journal
        .after(applied)
        .map(|e| &e.op)
        .filter(|op| op.file() == Some(file))
        .collect();
    // The last entry that made the file empty: what came before it does not count.
    let reset = mine.iter().rposition(|op| {
        resets
            && matches!(
                op,
                Op::Open { create: true, .. } | Op::Open { truncate: true, .. }
            )
    });
    let from = match reset {
        Some(i) => {
            buf.fill(0);
            i + 1
        }
        None => {
            let got = base(offset, buf).min(buf.len());
            buf[got..].fill(0);
            0
        }
    };
    let end = offset + buf.len() as u64;
    for op in &mine[from..] {
        match op {
            Op::Write {
                offset: at, data, ..
            } => {
                let (lo, hi) = (offset.max(*at), end.min(at + data.len() as u64));
                if lo < hi {
                    buf[(lo - offset) as usize..(hi - offset) as usize]
                        .copy_from_slice(&data[(lo - at) as usize..(hi - at) as usize]);
                }
            }
            Op::SetLen { len, .. } => {
                if *len < end {
                    let lo = offset.max(*len);
                    buf[(lo - offset) as usize..].fill(0);
                }
            }
            Op::Open { .. }
            | Op::Close { .. }
            | Op::Sync { .. }
            | Op::Rename { .. }
            | Op::Unlink { .. }
            | Op::Mkdir { .. }
            | Op::Rmdir { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{Entry, Gate};
    use proptest::prelude::*;

    fn entry(seq: Seq, op: Op) -> Entry {
        Entry {
            seq,
            op,
            gate: Gate::Free,
            recorded_first: false,
            trace: 0,
        }
    }

    fn w(file: FileId, offset: u64, data: &[u8]) -> Op {
        Op::Write {
            file,
            path: None,
            offset,
            data: Arc::new(data.to_vec()),
        }
    }

    fn read_all(j: &Journal, applied: Seq, disk: &[u8], size: usize) -> Vec<u8> {
        let mut buf = vec![0xAA; size];
        read(j, applied, 1, 0, &mut buf, &mut |off, b: &mut [u8]| {
            let d = disk.get(off as usize..).unwrap_or(&[]);
            let n = d.len().min(b.len());
            b[..n].copy_from_slice(&d[..n]);
            n
        });
        buf
    }

    #[test]
    fn the_journal_lies_over_the_disk() {
        let mut j = Journal::default();
        j.push(entry(5, w(1, 2, b"XY")));
        j.push(entry(6, w(2, 0, b"other file")));
        j.push(entry(
            7,
            Op::SetLen {
                file: 1,
                path: None,
                len: 3,
            },
        ));
        j.push(entry(8, w(1, 5, b"Z")));
        // Disk: applied through 4, plus an append from a writer ahead (ignored past 6).
        assert_eq!(read_all(&j, 4, b"abcdefgh", 6), b"abX\0\0Z");
        // Everything through 6 applied: the SetLen and the last write still lie over it.
        assert_eq!(read_all(&j, 6, b"abXYe", 6), b"abX\0\0Z");
        // A created file: the disk's older bytes do not count.
        let mut j = Journal::default();
        j.push(entry(
            3,
            Op::Open {
                file: 1,
                path: Arc::from(Path::new("/f")),
                create: false,
                truncate: true,
                mode: 0,
            },
        ));
        j.push(entry(4, w(1, 1, b"q")));
        assert_eq!(read_all(&j, 2, b"old!", 2), b"\0q");
    }

    #[test]
    fn the_path_then_undoes_later_renames() {
        let a: Arc<Path> = Arc::from(Path::new("/a"));
        let b: Arc<Path> = Arc::from(Path::new("/b"));
        let mut j = Journal::default();
        j.push(entry(
            4,
            Op::Rename {
                file: 1,
                from: a.clone(),
                to: b.clone(),
            },
        ));
        j.push(entry(
            5,
            Op::Unlink {
                file: Some(1),
                path: b.clone(),
            },
        ));
        assert_eq!(path_at(&j, 3, 1, None), Some(a.clone()));
        assert_eq!(path_at(&j, 4, 1, None), Some(b.clone()));
        assert_eq!(path_at(&j, 5, 1, None), None);
        assert_eq!(path_at(&j, 3, 2, Some(b.clone())), Some(b));
    }

    proptest! {
        /// Against a plain in-memory file: apply a random sequence of writes and
        /// truncations; the disk holds a prefix of them applied (and maybe later appends);
        /// the overlay reads what the whole sequence gives.
        #[test]
        fn overlay_reads_what_the_sequence_wrote(
            ops in proptest::collection::vec((0u64..40, 1usize..12, any::<u8>(), any::<bool>()), 1..20),
            cut in 0usize..20,
        ) {
            let mut truth: Vec<u8> = Vec::new();
            let mut disk: Vec<u8> = Vec::new();
            let mut j = Journal::default();
            let applied = cut.min(ops.len()) as Seq;
            for (i, (off, len, byte, trunc)) in ops.iter().enumerate() {
                let seq = i as Seq + 1;
                let op = if *trunc {
                    let l = (*off as usize).min(truth.len());
                    truth.truncate(l);
                    Op::SetLen { file: 1, path: None, len: l as u64 }
                } else {
                    let end = *off as usize + len;
                    if truth.len() < end { truth.resize(end, 0); }
                    truth[*off as usize..end].fill(*byte);
                    w(1, *off, &vec![*byte; *len])
                };
                if seq <= applied {
                    disk = truth.clone();
                }
                j.push(entry(seq, op));
            }
            j.trim_through(applied);
            prop_assert_eq!(read_all(&j, applied, &disk, truth.len()), truth);
        }
    }
}
