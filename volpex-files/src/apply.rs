//! The writer's hands: applies journal entries to the file system, in order, and says
//! what the disk answered.
//!
//! Applying an entry again after a predecessor applied it changes nothing: writes are
//! positional, a creation does not exclude, a rename whose source is gone and a removal of
//! what is gone count as done. A file that could not be written (a full disk, a quota, a
//! read-only directory) is *broken*: its later writes are skipped, its close and fsync
//! report the error, and a rename of it is refused, so a short file is never published
//! under its final name.
//!
//! Owns the writer's descriptors of the rank's files; must never decide what to apply
//! or when (the worker does).

use std::collections::HashMap;
use std::ffi::{c_int, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::journal::{Entry, FileId, Gate, Op};
use crate::protocol::{Failure, Outcome, Seq};
use crate::real;

/// What applying one entry gave.
#[derive(Debug, Default)]
pub struct Applied {
    /// The outcome of a close or an fsync (the program waits for it).
    pub outcome: Option<Outcome>,
    /// The file could not be written.
    pub failure: Option<Failure>,
    /// Paths whose bytes or name changed other than by an append.
    pub mutated: Vec<(String, Seq)>,
}

/// The writer's descriptors and the files it could not write.
#[derive(Debug, Default)]
pub struct Applier {
    open: HashMap<FileId, c_int>,
    broken: HashMap<FileId, c_int>,
}

fn cpath(p: &Path) -> Result<CString, c_int> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)
}

fn show(p: &Path) -> String {
    p.display().to_string()
}

impl Applier {
    /// Applies one entry.
    pub fn apply(&mut self, e: &Entry) -> Applied {
        let mut out = Applied::default();
        let changed = |out: &mut Applied, p: &Path| {
            if e.gate == Gate::Everyone {
                out.mutated.push((show(p), e.seq));
            }
        };
        match &e.op {
            Op::Open {
                file,
                path,
                create,
                truncate,
                mode,
            } => {
                changed(&mut out, path);
                if *create || *truncate {
                    self.broken.remove(file);
                }
                let r = match self.open.get(file) {
                    Some(&fd) if *truncate => real::ftruncate(fd, 0),
                    Some(_) => Ok(()),
                    None if *create || *truncate => {
                        let flags = libc::O_WRONLY
                            | if *create { libc::O_CREAT } else { 0 }
                            | if *truncate { libc::O_TRUNC } else { 0 };
                        cpath(path)
                            .and_then(|c| real::open(&c, flags, *mode))
                            .map(|fd| {
                                self.open.insert(*file, fd);
                            })
                    }
                    // Opened without a change: its descriptor comes at its first write.
                    None => Ok(()),
                };
                if let Err(errno) = r {
                    out.failure = Some(self.fail(*file, path, "create", errno));
                }
            }
            Op::Write {
                file,
                path,
                offset,
                data,
            } => return self.write(e.seq, e.gate, *file, path.as_deref(), *offset, &[data]),
            Op::SetLen { file, path, len } => {
                if let Some(p) = path {
                    changed(&mut out, p);
                }
                if !self.broken.contains_key(file) {
                    let r = self
                        .fd(*file, path.as_deref())
                        .and_then(|fd| real::ftruncate(fd, *len));
                    if let Err(errno) = r {
                        out.failure =
                            Some(self.fail_opt(*file, path.as_deref(), "truncate", errno));
                    }
                }
            }
            Op::Close { file, last } => {
                let mut errno = self.broken.get(file).copied();
                if *last {
                    if let Some(fd) = self.open.remove(file) {
                        if let (Err(e), None) = (real::close(fd), errno) {
                            errno = Some(e);
                        }
                    }
                }
                out.outcome = Some(match errno {
                    Some(errno) => Outcome::Failed { errno },
                    None => Outcome::Ok {
                        existed: true,
                        size: 0,
                    },
                });
            }
            Op::Sync { file, path } => {
                let r = match self.broken.get(file) {
                    Some(&errno) => Err(errno),
                    None => self.fd(*file, path.as_deref()).and_then(real::fsync),
                };
                out.outcome = Some(match r {
                    Ok(()) => Outcome::Ok {
                        existed: true,
                        size: 0,
                    },
                    Err(errno) => {
                        if !self.broken.contains_key(file) {
                            out.failure =
                                Some(self.fail_opt(*file, path.as_deref(), "fsync", errno));
                        }
                        Outcome::Failed { errno }
                    }
                });
            }
            Op::Rename { file, from, to } => {
                changed(&mut out, from);
                changed(&mut out, to);
                if let Some(&errno) = self.broken.get(file) {
                    out.failure = Some(Failure {
                        path: show(from),
                        what: format!(
                            "rename to {} (refused: the file is incomplete, {})",
                            show(to),
                            crate::protocol::errno_name(errno)
                        ),
                        errno,
                    });
                } else {
                    let r = cpath(from).and_then(|f| cpath(to).and_then(|t| real::rename(&f, &t)));
                    match r {
                        Ok(()) => {}
                        // Applied before (by a predecessor): the source is gone.
                        Err(libc::ENOENT) if cpath(to).is_ok_and(|t| real::stat(&t).is_ok()) => {}
                        Err(errno) => {
                            out.failure = Some(Failure {
                                path: show(from),
                                what: format!("rename to {}", show(to)),
                                errno,
                            })
                        }
                    }
                }
            }
            Op::Unlink { path, .. } => {
                changed(&mut out, path);
                match cpath(path).and_then(|c| real::unlink(&c)) {
                    Ok(()) | Err(libc::ENOENT) => {}
                    Err(errno) => {
                        out.failure = Some(Failure {
                            path: show(path),
                            what: "unlink".into(),
                            errno,
                        })
                    }
                }
            }
            Op::Mkdir { path, mode } => {
                changed(&mut out, path);
                match cpath(path).and_then(|c| real::mkdir(&c, *mode)) {
                    Ok(()) | Err(libc::EEXIST) => {}
                    Err(errno) => {
                        out.failure = Some(Failure {
                            path: show(path),
                            what: "mkdir".into(),
                            errno,
                        })
                    }
                }
            }
            Op::Rmdir { path } => {
                changed(&mut out, path);
                match cpath(path).and_then(|c| real::rmdir(&c)) {
                    Ok(()) | Err(libc::ENOENT) => {}
                    Err(errno) => {
                        out.failure = Some(Failure {
                            path: show(path),
                            what: "rmdir".into(),
                            errno,
                        })
                    }
                }
            }
        }
        out
    }

    /// Applies write operation `seq`: `parts`, one after another, at `offset` of `file`
    /// (at `path`). The
    /// files thread applies a journal entry with it; a writer whose journal holds
    /// nothing unapplied applies its program's write with it at once, from the
    /// program's buffer (`layer::write`).
    pub fn write(
        &mut self,
        seq: Seq,
        gate: Gate,
        file: FileId,
        path: Option<&Path>,
        offset: u64,
        parts: &[&[u8]],
    ) -> Applied {
        let mut out = Applied::default();
        if let (Some(p), Gate::Everyone) = (path, gate) {
            out.mutated.push((show(p), seq));
        }
        if !self.broken.contains_key(&file) {
            let r = self.fd(file, path).and_then(|fd| match parts {
                [one] => real::pwrite_all(fd, one, offset),
                _ => real::pwritev_all(fd, parts, offset),
            });
            if let Err(errno) = r {
                out.failure = Some(self.fail_opt(file, path, "write", errno));
            }
        }
        out
    }

    /// The writer's descriptor of `file`, opened at `path` at its first use.
    fn fd(&mut self, file: FileId, path: Option<&Path>) -> Result<c_int, c_int> {
        if let Some(&fd) = self.open.get(&file) {
            return Ok(fd);
        }
        // Removed while open, before this writer had it open: its bytes cannot be reached.
        let p = path.ok_or(libc::ENOENT)?;
        let c = cpath(p)?;
        let fd = real::open(&c, libc::O_WRONLY, 0)?;
        self.open.insert(file, fd);
        Ok(fd)
    }

    fn fail(&mut self, file: FileId, path: &Path, what: &str, errno: c_int) -> Failure {
        self.fail_opt(file, Some(path), what, errno)
    }

    fn fail_opt(&mut self, file: FileId, path: Option<&Path>, what: &str, errno: c_int) -> Failure {
        self.broken.insert(file, errno);
        Failure {
            path: path.map_or_else(|| "(a removed file)".into(), show),
            what: what.into(),
            errno,
        }
    }

    /// Closes every descriptor (the process ends).
    pub fn close_all(&mut self) {
        for (_, fd) in self.open.drain() {
            let _ = real::close(fd);
        }
    }
}
