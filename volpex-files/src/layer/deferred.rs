//! Writes made without their bytes: a replica that does not write its rank's files numbers
//! a collective write block, as `write` would, without holding its bytes, and gets them
//! only if it becomes the rank's writer before the writer applied it (`fill`).
//!
//! Owns the tickets' lifecycle (`write_deferred`, `resolve_deferred`, `fill`) on the
//! layer's state. Must never apply anything itself: the worker applies what the journal
//! holds.

use std::ffi::c_int;
use std::sync::Arc;

use super::{done, shared, tracked, wait_while, Link, Ticket};
use crate::protocol::Seq;

/// What a write made without its bytes came to (`resolve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deferred {
    /// The rank's writer applied it: the bytes are not needed.
    Applied,
    /// This replica writes the rank's files now and must apply it: `fill`.
    Needed,
}

/// Whether a write to `fd` may be made without its bytes (`write_deferred`): `fd` is a
/// file of the rank this replica does not write (another replica is the rank's writer,
/// as far as it knows), and nothing needs the bytes here (`VOLPEX_VERIFY_OUTPUT`, a
/// broken file, the layer's problem). A replica that replays from before its writer's
/// point may too (its senders need not keep what a replay would ask for again: MPI-IO's
/// collective write blocks are lent, not logged); it then keeps the write's bytes as
/// the file system has them for reading it back (`write_deferred`).
pub fn may_defer(fd: c_int) -> bool {
    if !tracked(fd) {
        return false;
    }
    let Some(sh) = shared() else { return false };
    let g = sh.state.lock();
    g.role.heard
        && !g.role.writing
        && !g.cfg.verify
        && g.problem.is_none()
        && !g.finished
        && matches!(g.link, Link::Up(_))
        && g.model
            .desc_of(fd)
            .is_some_and(|d| !g.sticky.contains_key(&d.file))
}

/// Whether the layer is on here with `VOLPEX_VERIFY_OUTPUT=1`.
pub fn verifies() -> bool {
    shared().is_some_and(|sh| sh.state.lock().cfg.verify)
}

/// pwrite of `len` bytes at `at` without the bytes, for a replica that gets them only
/// if it must apply them (`may_defer` said it may): the operation is numbered and
/// produced as `write` numbers it, and nothing is kept. Returns its number, which the
/// caller must resolve (`resolve_deferred`) before any other file operation but further
/// writes made without their bytes; 0: nothing to resolve (nothing to write, or a
/// replay's write kept as below).
///
/// A replica that replays from before its writer's point keeps what it writes, to read
/// its files back as they were (`State::hold_until`); the writer applied this write
/// already, so it keeps the write's bytes as they are: `own` (this rank's pieces of it,
/// from the program's buffer: file offset and bytes), the rest read from the file
/// system (other ranks' bytes of a shared file, as a replay reads them). Where it cannot
/// read them (the path changed since, or the writer's point is not past it), it stops
/// keeping what it wrote, for all its files, and says so: a file rewritten later then
/// cannot be read back in the replay (the replica retires if it tries), as when its
/// journal outgrows its bound (`retain`).
pub fn write_deferred(fd: c_int, len: u64, at: u64, own: &[(u64, &[u8])]) -> Result<Seq, c_int> {
    done(|sh, g| {
        let Some((file, offset, gate, header)) = g.start_write(fd, len, Some(at))? else {
            return Ok(0);
        };
        let (seq, trace) = g.next(&header);
        if let Some(h) = g.hold_until {
            match g.replayed_bytes(seq, file, offset, len, own) {
                Ok(data) => {
                    let data = Arc::new(data);
                    let entry = g.model.write_entry(seq, file, offset, data, gate);
                    g.push(entry);
                    g.outbox.dirty = true;
                    sh.cond.notify_all();
                    return Ok(0);
                }
                Err(why) => {
                    log::warn!(
                        "replica {}.{}: replaying, a collective write made without its bytes ({why}): a file rewritten before operation {h} cannot be read back as it was",
                        g.id.rank,
                        g.id.replica
                    );
                    g.hold_until = None;
                    g.retain();
                }
            }
        }
        g.deferred.insert(
            seq,
            Ticket {
                trace,
                file,
                offset,
                len,
                gate,
            },
        );
        sh.cond.notify_all();
        Ok(seq)
    })
}

/// Waits until write `seq` (made by `write_deferred`) is applied by the rank's writer
/// (`Deferred::Applied`), or until this replica becomes the writer first
/// (`Deferred::Needed`: give its bytes to `fill` next).
pub fn resolve_deferred(seq: Seq) -> Result<Deferred, c_int> {
    if seq == 0 {
        return Ok(Deferred::Applied);
    }
    done(|sh, g| {
        if !g.deferred.contains_key(&seq) {
            return Err(libc::EINVAL);
        }
        wait_while(
            sh,
            g,
            "the writer to apply a write made without its bytes",
            |s| s.known_applied() < seq && !s.role.writing,
        );
        if g.known_applied() >= seq {
            g.deferred.remove(&seq);
            g.outbox.dirty = true;
            sh.cond.notify_all();
            return Ok(Deferred::Applied);
        }
        if g.role.writing {
            return Ok(Deferred::Needed);
        }
        // The layer cannot go on (it lost volpexrun, or the program finished).
        g.deferred.remove(&seq);
        Err(libc::EIO)
    })
}

/// The bytes of write `seq`, which `write_deferred` made without them (`Deferred::Needed`):
/// `parts`, one after another, as `write` takes them. Kept in the journal, and applied by
/// the files thread in their place among the operations.
pub fn fill(seq: Seq, parts: &[&[u8]]) -> Result<(), c_int> {
    let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
    done(|sh, g| {
        let Some(t) = g.deferred.get(&seq).cloned() else {
            return Err(libc::EINVAL);
        };
        if len != t.len || g.deferred.keys().next() != Some(&seq) {
            return Err(libc::EINVAL);
        }
        g.deferred.remove(&seq);
        if g.known_applied() < seq {
            let data = g.journal.copy(parts);
            let mut e = g.model.write_entry(seq, t.file, t.offset, data, t.gate);
            e.trace = t.trace;
            g.journal.push(e);
        }
        g.retain();
        g.outbox.dirty = true;
        sh.cond.notify_all();
        Ok(())
    })
}
