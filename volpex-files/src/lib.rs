//! Files written by replicated programs: every byte a rank writes lands once, from one
//! replica, and every replica reads what a failure-free run reads.
//!
//! All replicas of a rank run the same program, so they make the same file operations in
//! the same order; the layer numbers them (1, 2, 3, ... per rank). One replica per rank,
//! the *writer* (chosen by volpexrun), applies them to the file system; the others keep
//! the ones it has not applied yet and answer their program from their own model of the
//! files. A new writer re-applies from the last point its predecessor reported, which
//! changes nothing that was already there, so a killed, stopped or regenerated replica
//! never truncates, overwrites or interleaves what the rank's files hold. See
//! `docs/FILES.md` for the rules and what is covered.
//!
//! ```text
//!  program (C stdio, POSIX, libgfortran, libstdc++, Rust std::fs)
//!     |  open/write/rename/stat/fopen ... (the C library's names, defined here)
//!     v
//!  sys/      raw arguments -> checked values; stdio streams made with fopencookie
//!     |      (`stdio`); what the layer does not track goes to the C library (`real`)
//!     v
//!  layer     the replica's state: model (offsets, sizes, names), journal (operations not
//!     |      applied yet), overlay (reads), outcomes recorded by the writer; waits
//!     v
//!  worker    the files thread: applies the journal when this replica writes (`apply`),
//!            reports to volpexrun over the files connection (`protocol`)
//!                          |
//!                          v
//!  coordinator (in volpexrun): per rank, who writes, how far applied, outcomes, gates
//! ```
//!
//! The picture is the way an operation travels; the imports point down the layers of
//! `docs/ARCHITECTURE.md`: `sys` and `worker` use `layer`, which neither names (`activate`
//! below hands it the worker's start), and `real`, the C library's own functions, is the
//! bottom every module's own I/O goes through. `sys` and `real` hold the only unsafe code.
//!
//! Words: *operation* one numbered file operation of a rank (`Seq`); *writer* the
//! replica that applies them; *journal* a replica's operations not known applied;
//! *outcome* the result of an operation that depends on the file system, decided by the
//! writer and taken by all; *gate* the least number of operations any other live replica
//! has produced: an operation that changes bytes already written (or names) waits for it.
#![deny(unsafe_code)]
#![deny(missing_docs)]

mod apply;
pub mod coordinator;
mod journal;
mod layer;
mod model;
mod overlay;
mod paths;
pub mod protocol;
mod real;
mod sys;
mod worker;

pub use layer::{
    deliver, finish, link_lost, private, restore, settle, shared_open, snapshot, Connect, Identity,
    Sender,
};

/// Writes `parts`, one after another, at `offset` of descriptor `fd`, as one `pwritev`
/// does: through the layer (one operation, applied without a copy when this replica
/// may write at once) when it tracks `fd`, else with the C library's `pwritev`. For
/// Rust code of the runtime (MPI-IO's aggregators) that writes gathered pieces.
pub fn write_at(fd: std::os::raw::c_int, parts: &[&[u8]], offset: u64) -> std::io::Result<()> {
    let r = if layer::tracked(fd) {
        layer::write(fd, parts, Some(offset)).map(|_| ())
    } else {
        real::pwritev_all(fd, parts, offset)
    };
    r.map_err(std::io::Error::from_raw_os_error)
}

pub use layer::Deferred;
pub use protocol::Seq;

/// Whether a write to `fd` may be made without its bytes (`write_deferred`): `fd` is a
/// file the layer tracks and this replica is not its rank's writer (see
/// `layer::may_defer`).
pub fn may_defer(fd: std::os::raw::c_int) -> bool {
    layer::may_defer(fd)
}

/// Whether the replicas compare the bytes they write (`VOLPEX_VERIFY_OUTPUT=1`): then
/// every replica of a rank needs the bytes of its writes, in a replay too.
pub fn verifies() -> bool {
    layer::verifies()
}

/// A write of `len` bytes at `offset` of `fd` made without its bytes, for a replica that
/// is not its rank's writer (`may_defer`): it counts as the write; returns its number,
/// which must be given to `resolve` before any other file operation but more such writes.
/// MPI-IO's aggregators use it so that the follower of an aggregator never receives the
/// bytes its writer writes (docs/FILES.md, "Writes without their bytes"). `own`: this
/// rank's pieces of the write (file offset, bytes), which a replica replaying from
/// before its writer's point keeps, with the rest as the file system has it, to read
/// the file back as it was (0 returned: nothing to resolve).
pub fn write_deferred(
    fd: std::os::raw::c_int,
    len: u64,
    offset: u64,
    own: &[(u64, &[u8])],
) -> std::io::Result<Seq> {
    layer::write_deferred(fd, len, offset, own).map_err(std::io::Error::from_raw_os_error)
}

/// Waits until write `seq` (`write_deferred`) is applied by the rank's writer, or this
/// replica writes the rank's files itself (`Deferred::Needed`: `fill` it next, in order).
pub fn resolve(seq: Seq) -> std::io::Result<Deferred> {
    layer::resolve_deferred(seq).map_err(std::io::Error::from_raw_os_error)
}

/// The bytes of write `seq` (`write_deferred`, resolved `Deferred::Needed`), one part
/// after another; the earliest such write first.
pub fn fill(seq: Seq, parts: &[&[u8]]) -> std::io::Result<()> {
    layer::fill(seq, parts).map_err(std::io::Error::from_raw_os_error)
}

/// Starts the layer in this process (a replica of a launched job). Files opened before
/// stay the C library's. `VOLPEX_FILES=0` leaves the layer off.
pub fn activate(id: Identity, connect: Connect) {
    layer::activate(id, connect, sys::init, worker::start);
}
