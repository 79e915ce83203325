//! Path-changing calls on the rank's files: rename, unlink, rmdir and mkdir. Each takes
//! the next number of the rank's sequence and the writer's recorded outcome, then lands
//! in the model and the journal.
//!
//! Owns how each call decides its outcome from the model. Must never change the file
//! system itself: the worker applies the journal's entries.

use std::ffi::c_int;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use parking_lot::MutexGuard;

use super::{cpath, op, target, Handled, Shared, State, Target};
use crate::journal::Entry;
use crate::model::Known;
use crate::protocol::{Outcome, Seq};
use crate::real;

/// A path-changing operation (rename, unlink, mkdir, rmdir) with a recorded outcome.
fn name_op(
    sh: &'static Shared,
    g: &mut MutexGuard<'_, State>,
    header: &[u8],
    decide: &dyn Fn(&State) -> Outcome,
    apply: impl FnOnce(&mut State, Seq, Outcome) -> Entry,
) -> Handled<()> {
    if g.finished {
        return Handled::Pass;
    }
    if g.problem.is_some() {
        return Handled::Done(Err(libc::EIO));
    }
    g.ensure_worker();
    let (seq, trace) = g.next(header);
    g.in_flight = true;
    let outcome = State::outcome(sh, g, seq, trace, decide);
    g.in_flight = false;
    match outcome {
        Outcome::Failed { errno } => Handled::Done(Err(errno)),
        ok @ Outcome::Ok { .. } => {
            let entry = apply(g, seq, ok);
            g.push(entry);
            sh.cond.notify_all();
            Handled::Done(Ok(()))
        }
    }
}

/// rename / renameat.
pub fn rename(fromfd: c_int, from: &Path, tofd: c_int, to: &Path) -> Handled<()> {
    op(|sh, g| {
        let (Target::Path(a), Target::Path(b)) = (target(g, fromfd, from), target(g, tofd, to))
        else {
            return Handled::Pass;
        };
        // Neither name is the rank's yet, and the source is not a regular file (a
        // directory): the system's.
        if g.model.known(&a) == Known::Unknown && g.model.dir(&a).is_none() {
            if let Some(Ok(st)) = cpath(&a).map(|c| real::stat(&c)) {
                if st.st_mode & libc::S_IFMT != libc::S_IFREG {
                    return Handled::Pass;
                }
            }
        }
        let mut header = b"rename".to_vec();
        header.extend_from_slice(a.as_os_str().as_bytes());
        header.push(0);
        header.extend_from_slice(b.as_os_str().as_bytes());
        let (ac, bc) = (a.clone(), b.clone());
        let decide = move |s: &State| match s.decide_existing(&ac, false) {
            Outcome::Ok { size, .. } => match s.parent_writable(&bc) {
                Ok(()) => Outcome::Ok {
                    existed: true,
                    size,
                },
                Err(errno) => Outcome::Failed { errno },
            },
            f => f,
        };
        name_op(sh, g, &header, &decide, |s, seq, o| {
            let size = match o {
                Outcome::Ok { size, .. } => size,
                Outcome::Failed { .. } => 0,
            };
            s.model
                .rename(seq, Arc::from(a.as_path()), Arc::from(b.as_path()), size)
        })
    })
}

/// unlink / unlinkat / remove / rmdir (`dir`).
pub fn unlink(dirfd: c_int, path: &Path, dir: bool) -> Handled<()> {
    op(|sh, g| {
        let Target::Path(abs) = target(g, dirfd, path) else {
            return Handled::Pass;
        };
        if g.model.known(&abs) == Known::Unknown && g.model.dir(&abs).is_none() {
            match cpath(&abs).map(|c| real::stat(&c)) {
                // A file the system does not have, or not a plain file or directory: the
                // system answers.
                Some(Ok(st))
                    if st.st_mode & libc::S_IFMT != libc::S_IFREG
                        && st.st_mode & libc::S_IFMT != libc::S_IFDIR =>
                {
                    return Handled::Pass
                }
                _ => {}
            }
        }
        let mut header = if dir {
            b"rmdir".to_vec()
        } else {
            b"unlink".to_vec()
        };
        header.extend_from_slice(abs.as_os_str().as_bytes());
        let p = abs.clone();
        // A removal does not need the size: it is no outcome (another rank may be
        // writing a file several ranks share while the replicas decide).
        let decide = move |s: &State| match s.decide_existing(&p, dir) {
            Outcome::Ok { existed, .. } => Outcome::Ok { existed, size: 0 },
            o => o,
        };
        name_op(sh, g, &header, &decide, |s, seq, _| {
            if dir {
                s.model.dir_op(seq, Arc::from(abs.as_path()), false, 0)
            } else {
                s.model.unlink(seq, Arc::from(abs.as_path()))
            }
        })
    })
}

/// mkdir / mkdirat.
pub fn mkdir(dirfd: c_int, path: &Path, mode: u32) -> Handled<()> {
    op(|sh, g| {
        let Target::Path(abs) = target(g, dirfd, path) else {
            return Handled::Pass;
        };
        let mut header = b"mkdir".to_vec();
        header.extend_from_slice(abs.as_os_str().as_bytes());
        let p = abs.clone();
        let decide = move |s: &State| {
            let exists = match (s.model.dir(&p), s.model.known(&p)) {
                (Some(made), _) => made,
                (None, Known::File(_)) => true,
                (None, Known::Gone) => false,
                (None, Known::Unknown) => cpath(&p).is_some_and(|c| real::stat(&c).is_ok()),
            };
            if exists {
                Outcome::Failed {
                    errno: libc::EEXIST,
                }
            } else {
                match s.parent_writable(&p) {
                    Ok(()) => Outcome::Ok {
                        existed: false,
                        size: 0,
                    },
                    Err(errno) => Outcome::Failed { errno },
                }
            }
        };
        name_op(sh, g, &header, &decide, |s, seq, _| {
            s.model.dir_op(seq, Arc::from(abs.as_path()), true, mode)
        })
    })
}
