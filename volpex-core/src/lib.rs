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
//!  comm/       (Universe, Communicator, Process, Request; the collective methods)
//!    |--> collective/  (algorithms on collective::PointToPoint alone; comm implements it)
//!    |--> bootstrap/   (launcher rendezvous, heartbeat) --> transport::auth (handshake)
//!    v
//!  transport/  (progress: driver lock; mio loop, connections)  --drives-->  pull/
//!    |                                                            (Engine: no I/O)
//!    v                                                                  |
//!  wire/       (header, frames, streams)  <-----------------------------+
//!    v                                                                  |
//!  message/    (keys, matching, sender log)  <--  replica/ (liveness)  <-+
//!
//!  leaves any layer may use: exit (process exit codes), error, config, datatype
//! ```
//!
//! Dependencies point down: `collective` never imports `comm`, `transport` never imports
//! `bootstrap`. The pull engine takes `(now, event)` and yields frames; the mio transport
//! drives it in production and a seeded simulator drives it in tests.
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

// The public API: what this file re-exports.
mod collective;
mod comm;
mod datatype;
mod error;

pub use collective::{MaxLoc, MinLoc, Numeric, Operation, SystemOperation, UserOperation};
pub use comm::{
    initialize, test_any, test_some, wait_all, wait_any, wait_some, AnyProcess, Communicator,
    Group, Message, Process, Request, Status, Tag, Universe, ANY_SOURCE, TAG_UB,
};
pub use datatype::{
    bytemuck, Buffer, BufferMut, Equivalence, Indexed, IndexedMut, Layout, LayoutError, Strided,
    StridedMut, Target,
};
pub use error::Error;

// Runtime internals, public only for the launcher (`volpexrun`), the benchmarks and the
// engine simulator of this workspace: not part of the API and not covered by semver.
#[doc(hidden)]
pub mod bootstrap;
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
