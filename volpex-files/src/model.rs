//! The rank's files as its program sees them at this replica's point in the sequence:
//! each file's path and size, the open descriptions (offset, append mode, access) and the
//! descriptors naming them, the paths the rank removed and the directories it made.
//!
//! Every replica keeps one, fed with the same operations and outcomes, so all of them give
//! the program the same offsets, sizes and errors whether their operations are applied
//! yet or not. Each change that reaches the file system comes out as a journal `Entry`.
//!
//! Owns this state; must never touch the file system (outcomes that depend on it come in
//! as arguments).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::journal::{Entry, FileId, Gate, Op};
use crate::protocol::Seq;

/// An open file description (what `open` makes and `dup` shares).
pub type DescId = u64;

/// A file of the rank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct File {
    /// Its path now; `None` once removed (it lives on while open).
    pub path: Option<Arc<Path>>,
    /// Its size as the program sees it.
    pub size: u64,
    /// Open descriptions of it.
    pub open: u32,
    /// Several ranks write it (an MPI-IO file): its size is the larger of the model's
    /// and the file system's, and reads are not cut to the model's size.
    #[serde(default)]
    pub shared: bool,
}

/// An open file description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Desc {
    /// Of which file.
    pub file: FileId,
    /// The file offset.
    pub offset: u64,
    /// O_APPEND: every write goes to the end.
    pub append: bool,
    /// Open for reading.
    pub read: bool,
    /// Open for writing.
    pub write: bool,
    /// Descriptors naming it.
    pub refs: u32,
}

/// What the rank did to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Named {
    /// It names this file.
    File(FileId),
    /// The rank removed it or renamed it away.
    Gone,
}

/// What the model knows of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// A file of the rank.
    File(FileId),
    /// The rank removed it: it does not exist.
    Gone,
    /// The rank never touched it: the file system says.
    Unknown,
}

/// How a descriptor is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// For reading.
    pub read: bool,
    /// For writing.
    pub write: bool,
    /// O_APPEND.
    pub append: bool,
    /// O_TRUNC.
    pub truncate: bool,
}

/// The state.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Model {
    files: HashMap<FileId, File>,
    paths: HashMap<PathBuf, Named>,
    /// Directories the rank made (true) or removed (false).
    dirs: HashMap<PathBuf, bool>,
    /// Not in a snapshot: a restored process opened nothing.
    #[serde(skip)]
    descs: HashMap<DescId, Desc>,
    #[serde(skip)]
    fds: HashMap<i32, DescId>,
    #[serde(skip)]
    next_desc: DescId,
}

/// A descriptor that is not one of the layer's, or not open for what was asked.
pub const EBADF: i32 = libc::EBADF;

impl Model {
    /// What the model knows of `path`.
    pub fn known(&self, path: &Path) -> Known {
        match self.paths.get(path) {
            Some(Named::File(id)) => Known::File(*id),
            Some(Named::Gone) => Known::Gone,
            None => Known::Unknown,
        }
    }

    /// Whether the rank made (`Some(true)`) or removed (`Some(false)`) this directory.
    pub fn dir(&self, path: &Path) -> Option<bool> {
        self.dirs.get(path).copied()
    }

    /// A file.
    pub fn file(&self, id: FileId) -> Option<&File> {
        self.files.get(&id)
    }

    /// The file an open description is of.
    pub fn desc_of_id(&self, desc: DescId) -> Option<FileId> {
        self.descs.get(&desc).map(|d| d.file)
    }

    /// Marks file `id` as written by several ranks (see `File::shared`).
    pub fn share(&mut self, id: FileId) {
        if let Some(f) = self.files.get_mut(&id) {
            f.shared = true;
        }
    }

    /// The description behind a descriptor.
    pub fn desc_of(&self, fd: i32) -> Option<&Desc> {
        self.fds.get(&fd).and_then(|d| self.descs.get(d))
    }

    /// The files of the rank that exist and no descriptor holds open: path and size.
    pub fn closed_files(&self) -> Vec<(Arc<Path>, u64)> {
        self.files
            .values()
            .filter(|f| f.open == 0)
            .filter_map(|f| f.path.clone().map(|p| (p, f.size)))
            .collect()
    }

    /// Whether any file is open for writing (a checkpoint cannot carry it).
    pub fn open_for_writing(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .descs
            .values()
            .filter(|d| d.write)
            .filter_map(|d| self.files.get(&d.file))
            .filter_map(|f| f.path.as_ref().map(|p| p.display().to_string()))
            .collect();
        v.sort();
        v.dedup();
        v
    }

    fn new_desc(&mut self, file: FileId, a: Access) -> DescId {
        self.next_desc += 1;
        let id = self.next_desc;
        self.descs.insert(
            id,
            Desc {
                file,
                offset: 0,
                append: a.append,
                read: a.read,
                write: a.write,
                refs: 0,
            },
        );
        if let Some(f) = self.files.get_mut(&file) {
            f.open += 1;
        }
        id
    }

    /// Operation `seq` opens `path` for writing; the writer found that the file
    /// `existed` with `size` bytes (for a path the rank never touched). Returns the new
    /// description and the journal entry.
    pub fn open_write(
        &mut self,
        seq: Seq,
        path: Arc<Path>,
        (existed, size): (bool, u64),
        a: Access,
        mode: u32,
    ) -> (DescId, Entry) {
        let (file, create, before) = match self.known(&path) {
            Known::File(id) => (id, false, self.files.get(&id).map_or(0, |f| f.size)),
            Known::Gone => (seq, true, 0),
            Known::Unknown if existed => (seq, false, size),
            Known::Unknown => (seq, true, 0),
        };
        if file == seq {
            self.files.insert(
                seq,
                File {
                    path: Some(path.clone()),
                    size: before,
                    open: 0,
                    shared: false,
                },
            );
            self.paths.insert(path.to_path_buf(), Named::File(seq));
        }
        let truncate = a.truncate && before > 0;
        if truncate {
            if let Some(f) = self.files.get_mut(&file) {
                f.size = 0;
            }
        }
        let desc = self.new_desc(file, a);
        // A path first touched: what other replicas decide about it (exists? how
        // large?) must not change under them.
        let gate = if create || truncate || file == seq {
            Gate::Everyone
        } else {
            Gate::Free
        };
        let entry = Entry {
            seq,
            op: Op::Open {
                file,
                path,
                create,
                truncate,
                mode,
            },
            gate,
            recorded_first: true,
            trace: 0,
        };
        (desc, entry)
    }

    /// Opens a file of the rank for reading only (no operation: nothing changes).
    pub fn open_read(&mut self, file: FileId) -> DescId {
        self.new_desc(
            file,
            Access {
                read: true,
                write: false,
                append: false,
                truncate: false,
            },
        )
    }

    /// Descriptor `fd` now names description `desc`.
    pub fn bind(&mut self, fd: i32, desc: DescId) {
        if let Some(d) = self.descs.get_mut(&desc) {
            d.refs += 1;
            self.fds.insert(fd, desc);
        }
    }

    /// `dup`: `new` names what `old` names.
    pub fn dup(&mut self, old: i32, new: i32) -> Result<(), i32> {
        let d = *self.fds.get(&old).ok_or(EBADF)?;
        self.bind(new, d);
        Ok(())
    }

    /// Closes descriptor `fd`. Returns the journal entry for a descriptor open for
    /// writing (a close reports what the disk said), `None` for a read-only one.
    pub fn close(&mut self, seq: Seq, fd: i32) -> Result<Option<Entry>, i32> {
        let id = self.fds.remove(&fd).ok_or(EBADF)?;
        let Some(d) = self.descs.get_mut(&id) else {
            return Err(EBADF);
        };
        d.refs = d.refs.saturating_sub(1);
        let (file, write, gone) = (d.file, d.write, d.refs == 0);
        if gone {
            self.descs.remove(&id);
            if let Some(f) = self.files.get_mut(&file) {
                f.open = f.open.saturating_sub(1);
                // A shared file closed is the file system's again: other ranks may
                // remove it, cut it or write it before this rank opens it next.
                if f.shared && f.open == 0 {
                    if let Some(p) = f.path.take() {
                        if self.paths.get(&*p) == Some(&Named::File(file)) {
                            self.paths.remove(&*p);
                        }
                    }
                }
            }
        }
        if !write {
            return Ok(None);
        }
        let last = self.files.get(&file).is_none_or(|f| f.open == 0);
        Ok(Some(Entry {
            seq,
            op: Op::Close { file, last },
            gate: Gate::Free,
            recorded_first: false,
            trace: 0,
        }))
    }

    /// A write of `len` bytes through `fd`, at `at` (pwrite) or the file offset. Returns
    /// the file, the offset written and whether it changes bytes already in the file.
    pub fn write(
        &mut self,
        fd: i32,
        len: u64,
        at: Option<u64>,
    ) -> Result<(FileId, u64, Gate), i32> {
        let id = *self.fds.get(&fd).ok_or(EBADF)?;
        let d = self.descs.get_mut(&id).ok_or(EBADF)?;
        if !d.write {
            return Err(EBADF);
        }
        let f = self.files.get_mut(&d.file).ok_or(EBADF)?;
        // Linux: a pwrite on an O_APPEND descriptor appends too.
        let offset = if d.append {
            f.size
        } else {
            at.unwrap_or(d.offset)
        };
        let end = offset.checked_add(len).ok_or(libc::EFBIG)?;
        let gate = if offset < f.size && len > 0 {
            Gate::Everyone
        } else {
            Gate::Free
        };
        if len > 0 {
            f.size = f.size.max(end);
        }
        if at.is_none() {
            d.offset = end;
        }
        Ok((d.file, offset, gate))
    }

    /// The journal entry of a write (`write` decided where).
    pub fn write_entry(
        &self,
        seq: Seq,
        file: FileId,
        offset: u64,
        data: Arc<Vec<u8>>,
        gate: Gate,
    ) -> Entry {
        Entry {
            seq,
            op: Op::Write {
                file,
                path: self.files.get(&file).and_then(|f| f.path.clone()),
                offset,
                data,
            },
            gate,
            recorded_first: false,
            trace: 0,
        }
    }

    /// A read of up to `len` bytes through `fd` at `at` or the file offset: the file,
    /// where, and how many bytes there are (the offset moves past them).
    pub fn read(&mut self, fd: i32, len: u64, at: Option<u64>) -> Result<(FileId, u64, u64), i32> {
        let id = *self.fds.get(&fd).ok_or(EBADF)?;
        let d = self.descs.get_mut(&id).ok_or(EBADF)?;
        if !d.read {
            return Err(EBADF);
        }
        let (size, shared) = self
            .files
            .get(&d.file)
            .map_or((0, false), |f| (f.size, f.shared));
        let offset = at.unwrap_or(d.offset);
        // A shared file's reader cuts the read to what the file system has.
        let n = match shared {
            true => len,
            false => size.saturating_sub(offset).min(len),
        };
        if at.is_none() {
            d.offset = offset + n;
        }
        Ok((d.file, offset, n))
    }

    /// lseek.
    pub fn seek(&mut self, fd: i32, off: i64, whence: i32) -> Result<u64, i32> {
        let id = *self.fds.get(&fd).ok_or(EBADF)?;
        let d = self.descs.get_mut(&id).ok_or(EBADF)?;
        let size = self.files.get(&d.file).map_or(0, |f| f.size);
        let base = match whence {
            libc::SEEK_SET => 0,
            libc::SEEK_CUR => d.offset as i128,
            libc::SEEK_END => size as i128,
            libc::SEEK_DATA if (off as i128) < size as i128 && off >= 0 => 0,
            libc::SEEK_HOLE if (off as i128) < size as i128 && off >= 0 => {
                d.offset = size;
                return Ok(size);
            }
            libc::SEEK_DATA | libc::SEEK_HOLE => return Err(libc::ENXIO),
            _ => return Err(libc::EINVAL),
        };
        let to = base + off as i128;
        if to < 0 || to > i64::MAX as i128 {
            return Err(libc::EINVAL);
        }
        d.offset = to as u64;
        Ok(d.offset)
    }

    /// ftruncate through `fd`: the journal entry.
    pub fn set_len_fd(&mut self, seq: Seq, fd: i32, len: u64) -> Result<Entry, i32> {
        let d = self.desc_of(fd).ok_or(EBADF)?;
        if !d.write {
            return Err(libc::EINVAL);
        }
        let file = d.file;
        Ok(self.set_len(seq, file, len))
    }

    /// Sets a file's length: the journal entry.
    pub fn set_len(&mut self, seq: Seq, file: FileId, len: u64) -> Entry {
        let (path, before) = self
            .files
            .get(&file)
            .map_or((None, 0), |f| (f.path.clone(), f.size));
        if let Some(f) = self.files.get_mut(&file) {
            f.size = len;
        }
        Entry {
            seq,
            op: Op::SetLen { file, path, len },
            gate: if len < before {
                Gate::Everyone
            } else {
                Gate::Free
            },
            recorded_first: false,
            trace: 0,
        }
    }

    /// fsync through `fd`: the journal entry.
    pub fn sync(&self, seq: Seq, fd: i32) -> Result<Entry, i32> {
        let d = self.desc_of(fd).ok_or(EBADF)?;
        let path = self.files.get(&d.file).and_then(|f| f.path.clone());
        Ok(Entry {
            seq,
            op: Op::Sync { file: d.file, path },
            gate: Gate::Free,
            recorded_first: false,
            trace: 0,
        })
    }

    /// Operation `seq` renames `from` to `to` (the writer found the source, of `size`
    /// bytes, when the rank never touched it).
    pub fn rename(&mut self, seq: Seq, from: Arc<Path>, to: Arc<Path>, size: u64) -> Entry {
        let id = match self.known(&from) {
            Known::File(id) => id,
            Known::Gone | Known::Unknown => {
                self.files.insert(
                    seq,
                    File {
                        path: None,
                        size,
                        open: 0,
                        shared: false,
                    },
                );
                seq
            }
        };
        if let Known::File(old) = self.known(&to) {
            if old != id {
                if let Some(f) = self.files.get_mut(&old) {
                    f.path = None;
                }
            }
        }
        if let Some(f) = self.files.get_mut(&id) {
            f.path = Some(to.clone());
        }
        self.paths.insert(from.to_path_buf(), Named::Gone);
        self.paths.insert(to.to_path_buf(), Named::File(id));
        Entry {
            seq,
            op: Op::Rename { file: id, from, to },
            gate: Gate::Everyone,
            recorded_first: true,
            trace: 0,
        }
    }

    /// Operation `seq` removes `path`.
    pub fn unlink(&mut self, seq: Seq, path: Arc<Path>) -> Entry {
        let file = match self.known(&path) {
            Known::File(id) => Some(id),
            Known::Gone | Known::Unknown => None,
        };
        if let Some(f) = file.and_then(|id| self.files.get_mut(&id)) {
            f.path = None;
        }
        self.paths.insert(path.to_path_buf(), Named::Gone);
        Entry {
            seq,
            op: Op::Unlink { file, path },
            gate: Gate::Everyone,
            recorded_first: true,
            trace: 0,
        }
    }

    /// Operation `seq` makes (`made`) or removes a directory.
    pub fn dir_op(&mut self, seq: Seq, path: Arc<Path>, made: bool, mode: u32) -> Entry {
        self.dirs.insert(path.to_path_buf(), made);
        Entry {
            seq,
            op: if made {
                Op::Mkdir { path, mode }
            } else {
                Op::Rmdir { path }
            },
            gate: Gate::Everyone,
            recorded_first: true,
            trace: 0,
        }
    }

    /// After a restore: no descriptor is open in this process.
    pub fn forget_descriptors(&mut self) {
        self.descs.clear();
        self.fds.clear();
        for f in self.files.values_mut() {
            f.open = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Arc<Path> {
        Arc::from(Path::new(s))
    }

    const W: Access = Access {
        read: false,
        write: true,
        append: false,
        truncate: true,
    };
    const A: Access = Access {
        read: false,
        write: true,
        append: true,
        truncate: false,
    };

    #[test]
    fn a_new_file_is_created_and_appends_are_free_rewrites_are_not() {
        let mut m = Model::default();
        let (d, e) = m.open_write(1, p("/o"), (false, 0), W, 0o644);
        assert!(matches!(
            e.op,
            Op::Open {
                create: true,
                truncate: false,
                ..
            }
        ));
        assert_eq!(e.gate, Gate::Everyone);
        m.bind(3, d);
        assert_eq!(m.write(3, 10, None), Ok((1, 0, Gate::Free)));
        assert_eq!(m.write(3, 5, None), Ok((1, 10, Gate::Free)));
        assert_eq!(m.seek(3, 2, libc::SEEK_SET), Ok(2));
        assert_eq!(m.write(3, 4, None), Ok((1, 2, Gate::Everyone)));
        assert_eq!(m.seek(3, 0, libc::SEEK_END), Ok(15));
        assert_eq!(m.file(1).map(|f| f.size), Some(15));
        // pwrite past the end: a hole, still an append.
        assert_eq!(m.write(3, 1, Some(100)), Ok((1, 100, Gate::Free)));
        assert_eq!(m.seek(3, 0, libc::SEEK_CUR), Ok(15));
        let c = m.close(2, 3).unwrap().unwrap();
        assert!(matches!(
            c.op,
            Op::Close {
                file: 1,
                last: true
            }
        ));
        assert_eq!(m.write(3, 1, None), Err(EBADF));
    }

    #[test]
    fn an_existing_file_keeps_its_size_unless_truncated_and_append_goes_to_the_end() {
        let mut m = Model::default();
        let (d, e) = m.open_write(1, p("/log"), (true, 40), A, 0o644);
        assert!(matches!(
            e.op,
            Op::Open {
                create: false,
                truncate: false,
                ..
            }
        ));
        assert_eq!(
            e.gate,
            Gate::Everyone,
            "first touched: others decide about it too"
        );
        m.bind(4, d);
        // Opened again without O_TRUNC: nothing for others to wait for.
        let (_, again) = m.open_write(9, p("/log"), (true, 0), A, 0o644);
        assert_eq!(again.gate, Gate::Free);
        m.seek(4, 0, libc::SEEK_SET).unwrap();
        assert_eq!(m.write(4, 2, None), Ok((1, 40, Gate::Free)));
        // The same path again with O_TRUNC: the same file, cut.
        let (d2, e2) = m.open_write(2, p("/log"), (true, 999), W, 0o644);
        assert!(matches!(
            e2.op,
            Op::Open {
                file: 1,
                create: false,
                truncate: true,
                ..
            }
        ));
        assert_eq!(e2.gate, Gate::Everyone);
        m.bind(5, d2);
        assert_eq!(m.file(1).map(|f| f.size), Some(0));
        assert!(matches!(
            m.close(3, 4).unwrap().map(|e| e.op),
            Some(Op::Close { last: false, .. })
        ));
    }

    #[test]
    fn dup_shares_the_offset_and_read_stops_at_the_size() {
        let mut m = Model::default();
        let rw = Access {
            read: true,
            write: true,
            append: false,
            truncate: false,
        };
        let (d, _) = m.open_write(1, p("/f"), (false, 0), rw, 0o600);
        m.bind(3, d);
        m.dup(3, 9).unwrap();
        m.write(3, 8, None).unwrap();
        assert_eq!(m.seek(9, 0, libc::SEEK_CUR), Ok(8));
        m.seek(9, 2, libc::SEEK_SET).unwrap();
        assert_eq!(m.read(3, 100, None), Ok((1, 2, 6)));
        assert_eq!(m.read(3, 100, None), Ok((1, 8, 0)));
        assert!(m.close(2, 3).unwrap().is_some());
        assert!(matches!(
            m.close(3, 9).unwrap().map(|e| e.op),
            Some(Op::Close { last: true, .. })
        ));
        assert_eq!(m.seek(3, 0, libc::SEEK_SET), Err(EBADF));
    }

    #[test]
    fn renames_and_removals_move_names() {
        let mut m = Model::default();
        let (d, _) = m.open_write(1, p("/tmp/a"), (false, 0), W, 0o644);
        m.bind(3, d);
        m.write(3, 3, None).unwrap();
        let e = m.rename(2, p("/tmp/a"), p("/tmp/b"), 0);
        assert_eq!(e.gate, Gate::Everyone);
        assert_eq!(m.known(Path::new("/tmp/a")), Known::Gone);
        assert_eq!(m.known(Path::new("/tmp/b")), Known::File(1));
        // A file the rank never touched, renamed over b: b is that file now.
        m.rename(3, p("/in"), p("/tmp/b"), 77);
        assert_eq!(m.known(Path::new("/tmp/b")), Known::File(3));
        assert_eq!(m.file(3).map(|f| f.size), Some(77));
        assert_eq!(m.file(1).map(|f| f.path.is_none()), Some(true));
        m.unlink(4, p("/tmp/b"));
        assert_eq!(m.known(Path::new("/tmp/b")), Known::Gone);
        // Created again.
        let (_, e) = m.open_write(5, p("/tmp/b"), (true, 5), W, 0o644);
        assert!(matches!(
            e.op,
            Op::Open {
                file: 5,
                create: true,
                ..
            }
        ));
    }

    #[test]
    fn seeks_refuse_what_lseek_refuses() {
        let mut m = Model::default();
        let (d, _) = m.open_write(1, p("/s"), (true, 10), A, 0o644);
        m.bind(3, d);
        assert_eq!(m.seek(3, -1, libc::SEEK_SET), Err(libc::EINVAL));
        assert_eq!(m.seek(3, 0, 99), Err(libc::EINVAL));
        assert_eq!(m.seek(3, 10, libc::SEEK_DATA), Err(libc::ENXIO));
        assert_eq!(m.seek(3, 3, libc::SEEK_HOLE), Ok(10));
        assert_eq!(m.seek(8, 0, libc::SEEK_SET), Err(EBADF));
    }
}
