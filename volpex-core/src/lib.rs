//! Volpex: a replicated, pull-based MPI runtime for volatile machines.
//!
//! Every MPI rank runs as `r` replicas. Senders keep every message in a bounded
//! sender-side log; each receiving replica pulls each message from one replica of the
//! sender (its own team first, another on failure or lag). A job goes on while one replica
//! of every rank is alive, at the speed of the fastest replica of each rank.
//!
//! ```no_run
//! let universe = volpex::initialize()?;
//! let world = universe.world();
//! if world.rank() == 0 {
//!     world.process_at_rank(1).send(&[1.0f64, 2.0])?;
//! } else if world.rank() == 1 {
//!     let (v, status) = world.process_at_rank(0).receive_vec::<f64>()?;
//!     assert_eq!(v.len(), status.count::<f64>());
//! }
//! # Ok::<(), volpex::Error>(())
//! ```
//!
//! # Architecture
//!
//! ```text
//!  API  lib.rs re-exports: comm/ (Universe, Communicator, Process, Request, receive,
//!   |     collective methods) --uses--> collective/ (algorithms on collective::PointToPoint,
//!   |     which comm implements; collective never imports comm)
//!   v
//!  transport/  Core, the driver: event_loop (mio poll, routing), peers (dial, accept),
//!   |          launcher (control link, finalize), send (the send command's writes),
//!   |          progress (driver lock, background thread), auth (handshake)
//!   | drives (now, event) -> frames
//!   v
//!  pull/  Engine, no I/O and no clock: fetches | service | choices (Coordination over
//!   |     decision + foreign) | silence | timers (TimerTable) | outbox; logic in
//!   |     receive, serve, choices
//!   v
//!  message/ (key, matching, sender log, watermarks, pool)   replica/ (liveness)
//!  wire/ (header, frame, stream, control)                   bootstrap/ -> transport::auth
//!
//!  leaves any layer may use: config (every limit), exit (exit codes), error, datatype
//! ```
//!
//! Dependencies point down: `collective` never imports `comm`, `comm` never imports
//! `wire`, `transport` never imports `bootstrap`. The pull engine takes `(now, event)` and
//! yields frames; the mio transport drives it in production and a seeded simulator
//! (`tests/simulator/`) drives it in tests. `docs/ARCHITECTURE.md` has the picture of the
//! whole workspace.
//!
//! # Glossary
//!
//! | word | meaning |
//! |---|---|
//! | rank | a logical MPI process, 0..n |
//! | replica | one OS process running a rank; index 0..r |
//! | team k | replica k of every rank; a receiver asks its own team first |
//! | message key | (communicator, tag, source, destination, seq) |
//! | sender log | messages a replica has sent, kept for any replica of the receiver |
//! | pull | a receiver asks one replica of the sender for the message with a key |
#![deny(unsafe_code)]
#![deny(missing_docs)]

// The derive's expansion names `::volpex`, also inside this crate's own tests.
extern crate self as volpex;

// The public API: what this file re-exports.
mod collective;
mod comm;
pub mod datatype;
mod error;

pub use collective::{MaxLoc, MinLoc, Numeric, Operation, SystemOperation, UserOperation};
pub use comm::communicator::abort_exit_code;
pub use comm::{
    dims_create, initialize, test_any, test_some, wait_all, wait_any, wait_some, AnyProcess,
    CartesianCommunicator, CartesianLayout, Communicator, Group, InterCommunicator, Message,
    OutputFile, Process, Request, Status, Tag, Universe, ANY_SOURCE, TAG_UB,
};
pub use datatype::{
    bytemuck, Buffer, BufferMut, Elements, ElementsMut, Equivalence, Indexed, IndexedMut, Layout,
    LayoutError, Partition, PartitionMut, Strided, StridedMut, Target,
};
pub use error::Error;
// The runtime's diagnostics on stderr, for the programs that want them (never installed by
// the library itself).
pub use comm::universe::log_to_stderr;
/// `#[derive(Equivalence)]`: send a struct with padding or `bool` fields (the
/// `volpex-derive` crate; see `datatype::derive` for its message form).
pub use volpex_derive::Equivalence;

// Runtime internals, public only for the launcher (`volpexrun`), the benchmarks and the
// engine simulator of this workspace: not part of the API and not covered by semver.
#[doc(hidden)]
pub mod bootstrap;
#[doc(hidden)]
pub mod checkpoint;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod exit;
#[doc(hidden)]
pub mod message;
#[doc(hidden)]
pub mod pull;
#[doc(hidden)]
pub mod replica;
#[doc(hidden)]
pub mod transport;
#[doc(hidden)]
pub mod wire;

/// Seconds since an arbitrary fixed point in the past (MPI_Wtime).
pub fn wtime() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}
