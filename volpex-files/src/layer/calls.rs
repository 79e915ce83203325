//! The program's calls on descriptors and paths of the rank's files: open, close,
//! write, read, seek, truncation, fsync, dup, stat and the descriptor's description.
//! Each goes through the model under the layer's state (`op`), takes the next number of
//! the rank's sequence where it changes something, and lands in the journal.
//!
//! Owns how each call turns into the model's and the journal's operations. Must never
//! change the file system itself (the worker applies the journal's entries), nor call a
//! function this crate exports while holding the state.

use std::ffi::c_int;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{
    cpath, done, inside, mark, op, opening_shared, resolve, shared, target, wait_while, Handled,
    Link, State, Target, AHEAD_BYTES, FD_LIMIT, SYNC_WAIT,
};
use crate::model::{Access, Known};
use crate::protocol::Outcome;
use crate::{overlay, real};

/// open / openat / creat / fopen.
pub fn open(dirfd: c_int, path: &Path, flags: c_int, mode: u32) -> Handled<c_int> {
    let acc = flags & libc::O_ACCMODE;
    let write = acc == libc::O_WRONLY || acc == libc::O_RDWR || flags & libc::O_CREAT != 0;
    if flags & (libc::O_PATH | libc::O_DIRECTORY) != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE
    {
        return Handled::Pass;
    }
    op(|sh, g| {
        let Target::Path(abs) = target(g, dirfd, path) else {
            return Handled::Pass;
        };
        let known = g.model.known(&abs);
        if !write {
            return match known {
                Known::File(id) => {
                    if opening_shared() {
                        g.model.share(id);
                    }
                    let desc = g.model.open_read(id);
                    match real::placeholder(flags & libc::O_CLOEXEC != 0) {
                        Ok(fd) if fd < FD_LIMIT => {
                            g.model.bind(fd, desc);
                            mark(fd, true);
                            Handled::Done(Ok(fd))
                        }
                        Ok(fd) => {
                            let _ = real::close(fd);
                            Handled::Done(Err(libc::EMFILE))
                        }
                        Err(e) => Handled::Done(Err(e)),
                    }
                }
                Known::Gone => Handled::Done(Err(libc::ENOENT)),
                Known::Unknown => match g.check_replay(&abs) {
                    Ok(()) => Handled::Pass,
                    Err(e) => Handled::Done(Err(e)),
                },
            };
        }
        if g.finished {
            return Handled::Pass;
        }
        if known == Known::Unknown {
            // A device, a pipe, a socket: the system's.
            if let Some(Ok(st)) = cpath(&abs).map(|c| real::stat(&c)) {
                if st.st_mode & libc::S_IFMT != libc::S_IFREG
                    && st.st_mode & libc::S_IFMT != libc::S_IFDIR
                {
                    return Handled::Pass;
                }
            }
        }
        if let Some(e) = g.problem.as_ref().map(|_| libc::EIO) {
            return Handled::Done(Err(e));
        }
        let fd = match real::placeholder(flags & libc::O_CLOEXEC != 0) {
            Ok(fd) if fd < FD_LIMIT => fd,
            Ok(fd) => {
                let _ = real::close(fd);
                return Handled::Done(Err(libc::EMFILE));
            }
            Err(e) => return Handled::Done(Err(e)),
        };
        g.ensure_worker();
        let create = flags & libc::O_CREAT != 0;
        let excl = create && flags & libc::O_EXCL != 0;
        let mut header = b"open".to_vec();
        header.extend_from_slice(abs.as_os_str().as_bytes());
        header.extend_from_slice(&flags.to_le_bytes());
        let (seq, trace) = g.next(&header);
        g.in_flight = true;
        let shared = opening_shared();
        let decide = |s: &State| match s.decide_open(&abs, create, excl) {
            Outcome::Ok { existed, .. } if shared => Outcome::Ok { existed, size: 0 },
            o => o,
        };
        let outcome = State::outcome(sh, g, seq, trace, &decide);
        g.in_flight = false;
        let (existed, size) = match outcome {
            Outcome::Ok { existed, size } => (existed, size),
            Outcome::Failed { errno } => {
                let _ = real::close(fd);
                return Handled::Done(Err(errno));
            }
        };
        let access = Access {
            read: acc == libc::O_RDWR,
            write: acc != libc::O_RDONLY,
            append: flags & libc::O_APPEND != 0,
            truncate: flags & libc::O_TRUNC != 0,
        };
        let (desc, entry) =
            g.model
                .open_write(seq, Arc::from(abs.as_path()), (existed, size), access, mode);
        g.push(entry);
        if shared {
            if let Some(d) = g.model.desc_of_id(desc) {
                g.model.share(d);
            }
        }
        g.model.bind(fd, desc);
        mark(fd, true);
        sh.cond.notify_all();
        Handled::Done(Ok(fd))
    })
}

/// close of a descriptor of the layer (the caller closes the placeholder after).
pub fn close(fd: c_int) -> Result<(), c_int> {
    done(|sh, g| {
        mark(fd, false);
        let seq = g.produced + 1;
        let Some(entry) = g.model.close(seq, fd)? else {
            return Ok(());
        };
        let file = entry.op.file();
        if let Some((_, r)) = file.and_then(|f| g.readers.remove(&f)) {
            let _ = real::close(r);
        }
        let (seq, _) = g.next(&[b"close".as_slice(), &file.unwrap_or(0).to_le_bytes()].concat());
        g.push(entry);
        sh.cond.notify_all();
        State::synced(sh, g, seq, file.unwrap_or(0))
    })
}

/// write / pwrite (`at`) / writev: `parts`, one after another, as one operation.
pub fn write(fd: c_int, parts: &[&[u8]], at: Option<u64>) -> Result<usize, c_int> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    done(|sh, g| {
        let Some((file, offset, gate, header)) = g.start_write(fd, len as u64, at)? else {
            return Ok(0);
        };
        if g.applies_now(gate) {
            return State::write_in_place(sh, g, &header, file, offset, parts, gate);
        }
        let (seq, _) = g.next(&header);
        if g.hold_until.is_none() && g.known_applied() >= seq {
            // Its writer applied it already (it runs ahead): nothing to keep.
            let path = g.model.file(file).and_then(|f| f.path.clone());
            g.digest(seq, path.as_deref(), offset, parts);
            g.outbox.dirty = true;
            return Ok(len);
        }
        let data_copy = g.journal.copy(parts);
        let entry = g.model.write_entry(seq, file, offset, data_copy, gate);
        g.push(entry);
        sh.cond.notify_all();
        let max = match g.hold_until {
            Some(_) => g.cfg.journal_bytes_max,
            None => g.cfg.journal_bytes_max.min(AHEAD_BYTES),
        };
        if g.journal.bytes() > max {
            log::debug!(
                "replica {}.{}: file journal full ({} bytes): waiting for the writer",
                g.id.rank,
                g.id.replica,
                g.journal.bytes()
            );
            wait_while(sh, g, "room in the file journal", |s| {
                s.journal.bytes() > max / 2
            });
        }
        Ok(len)
    })
}

/// read / pread (`at`) / readv.
pub fn read(fd: c_int, buf: &mut [u8], at: Option<u64>) -> Result<usize, c_int> {
    done(|sh, g| {
        let (file, offset, n) = g.model.read(fd, buf.len() as u64, at)?;
        let out = &mut buf[..n as usize];
        let mut disk = vec![0u8; out.len()];
        // Where the file is on the file system is certain only once the writer applied
        // this replica's renames of it (it may be applying one now): wait for its word.
        let moved = |s: &State| {
            s.journal
                .after(s.kept)
                .filter(|e| e.op.renames() && e.op.file() == Some(file))
                .map(|e| e.seq)
                .last()
        };
        if !g.role.writing && overlay::reads_disk(&g.journal, g.kept, file) {
            if let Some(m) = moved(g) {
                let start = Instant::now();
                while g.known_applied() < m
                    && start.elapsed() < SYNC_WAIT
                    && g.problem.is_none()
                    && !matches!(g.link, Link::Down)
                {
                    g.outbox.dirty = true;
                    g.outbox.urgent = true;
                    sh.cond.notify_all();
                    sh.cond.wait_for(g, Duration::from_millis(20));
                }
            }
        }
        let kept = g.kept;
        // A shared file's bytes are on the file system whoever made it (other ranks
        // write it; a replica that replays reads what is there now).
        let shared = g.model.file(file).is_some_and(|f| f.shared);
        let got = if shared || overlay::reads_disk(&g.journal, kept, file) {
            g.read_base(file, offset, &mut disk)?
        } else {
            0
        };
        // A shared file holds what the file system has, or this rank wrote.
        let out = match g.model.file(file) {
            Some(f) if f.shared => {
                let end = f.size.max(offset + got as u64);
                let n = end.saturating_sub(offset).min(out.len() as u64);
                &mut out[..n as usize]
            }
            _ => out,
        };
        let read = match shared {
            true => overlay::read_shared,
            false => overlay::read,
        };
        read(
            &g.journal,
            kept,
            file,
            offset,
            out,
            &mut |_, b: &mut [u8]| {
                let k = got.min(b.len());
                b[..k].copy_from_slice(&disk[..k]);
                k
            },
        );
        Ok(out.len())
    })
}

/// lseek.
pub fn seek(fd: c_int, off: i64, whence: c_int) -> Result<u64, c_int> {
    done(|_, g| g.model.seek(fd, off, whence))
}

/// ftruncate.
pub fn ftruncate(fd: c_int, len: u64) -> Result<(), c_int> {
    done(|sh, g| {
        let seq = g.produced + 1;
        let entry = g.model.set_len_fd(seq, fd, len)?;
        let mut header = b"setlen".to_vec();
        header.extend_from_slice(&entry.op.file().unwrap_or(0).to_le_bytes());
        header.extend_from_slice(&len.to_le_bytes());
        g.next(&header);
        g.push(entry);
        sh.cond.notify_all();
        Ok(())
    })
}

/// truncate(path) of one of the rank's files.
pub fn truncate(path: &Path, len: u64) -> Handled<()> {
    op(|sh, g| {
        let Target::Path(abs) = target(g, libc::AT_FDCWD, path) else {
            return Handled::Pass;
        };
        let Known::File(file) = g.model.known(&abs) else {
            return match g.model.known(&abs) {
                Known::Gone => Handled::Done(Err(libc::ENOENT)),
                _ => Handled::Pass,
            };
        };
        let seq = g.produced + 1;
        let entry = g.model.set_len(seq, file, len);
        let mut header = b"setlen".to_vec();
        header.extend_from_slice(&file.to_le_bytes());
        header.extend_from_slice(&len.to_le_bytes());
        g.next(&header);
        g.push(entry);
        sh.cond.notify_all();
        Handled::Done(Ok(()))
    })
}

/// fsync / fdatasync: waits until the writer applied and synced the file through here.
pub fn fsync(fd: c_int) -> Result<(), c_int> {
    done(|sh, g| {
        let seq = g.produced + 1;
        let entry = g.model.sync(seq, fd)?;
        let file = entry.op.file().unwrap_or(0);
        let (seq, _) = g.next(&[b"sync".as_slice(), &file.to_le_bytes()].concat());
        g.push(entry);
        sh.cond.notify_all();
        let r = State::synced(sh, g, seq, file);
        if let Err(errno) = r {
            g.sticky.insert(file, errno);
        }
        r
    })
}

/// `new` (a real descriptor the caller duplicated from `old`'s placeholder) now names
/// what `old` names.
pub fn dup(old: c_int, new: c_int) -> Result<(), c_int> {
    done(|_, g| {
        if new >= FD_LIMIT {
            return Err(libc::EMFILE);
        }
        g.model.dup(old, new)?;
        mark(new, true);
        Ok(())
    })
}

/// fcntl(F_GETFL) of a descriptor of the layer.
pub fn status_flags(fd: c_int) -> Result<c_int, c_int> {
    done(|_, g| {
        let d = g.model.desc_of(fd).ok_or(libc::EBADF)?;
        let acc = match (d.read, d.write) {
            (true, true) => libc::O_RDWR,
            (false, true) => libc::O_WRONLY,
            _ => libc::O_RDONLY,
        };
        Ok(acc | if d.append { libc::O_APPEND } else { 0 } | libc::O_LARGEFILE)
    })
}

/// What `fstat`/`stat` report of one of the rank's files: its path (for the rest of the
/// fields, from the file system when it is there) and its size.
pub struct StatInfo {
    /// Where the file is (`None`: removed).
    pub path: Option<PathBuf>,
    /// Its size as the program sees it.
    pub size: u64,
}

/// fstat of a descriptor of the layer.
pub fn fstat(fd: c_int) -> Result<StatInfo, c_int> {
    done(|_, g| {
        let d = g.model.desc_of(fd).ok_or(libc::EBADF)?;
        let f = g.model.file(d.file).ok_or(libc::EBADF)?;
        let on_disk = || {
            let c = cpath(f.path.as_deref()?)?;
            real::stat(&c).ok().map(|st| st.st_size as u64)
        };
        let size = match f.shared {
            true => f.size.max(on_disk().unwrap_or(0)),
            false => f.size,
        };
        Ok(StatInfo {
            path: f.path.as_ref().map(|p| p.to_path_buf()),
            size,
        })
    })
}

/// stat / access of a path: the rank's files answered from the model.
pub fn stat_path(dirfd: c_int, path: &Path) -> Handled<StatInfo> {
    op(|_, g| {
        let Target::Path(abs) = target(g, dirfd, path) else {
            return Handled::Pass;
        };
        match g.model.known(&abs) {
            Known::File(id) => Handled::Done(Ok(StatInfo {
                path: Some(abs),
                size: g.model.file(id).map_or(0, |f| f.size),
            })),
            Known::Gone => Handled::Done(Err(libc::ENOENT)),
            Known::Unknown if g.model.dir(&abs) == Some(false) => Handled::Done(Err(libc::ENOENT)),
            Known::Unknown => match g.check_replay(&abs) {
                Ok(()) => Handled::Pass,
                Err(e) => Handled::Done(Err(e)),
            },
        }
    })
}

/// The path of a descriptor's file, for messages.
pub fn describe(fd: c_int) -> String {
    let Some(sh) = shared() else {
        return format!("descriptor {fd}");
    };
    inside(|| {
        let g = sh.state.lock();
        g.model
            .desc_of(fd)
            .and_then(|d| g.model.file(d.file))
            .and_then(|f| f.path.as_ref().map(|p| p.display().to_string()))
            .unwrap_or_else(|| format!("descriptor {fd}"))
    })
}

/// A file this process made for itself (mkstemp and its kin): never the rank's.
pub fn private(path: &Path) {
    let Some(sh) = shared() else { return };
    inside(|| {
        if let Some(abs) = resolve(libc::AT_FDCWD, path) {
            sh.state.lock().private.insert(abs);
        }
    });
}
