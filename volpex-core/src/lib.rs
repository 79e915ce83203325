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
//!   |     collective methods, checkpoint, output files)
//!   v
//!  collective/ (algorithms on collective::PointToPoint, which comm implements)
//!  bootstrap/  (joining a job: launcher connection, rendezvous, heartbeat, CPU binding,
//!   |           the handover's blocking ends)
//!   v
//!  transport/  Core, the driver of the protocol engine (`volpex_proto::Engine`): the
//!   |          mio event loop, peers, sends, the launcher link, draining; progress (who
//!   |          drives when); clock (the transport's one clock)
//!   v
//!  datatype/ (Equivalence, buffers, layouts)      env (the one reader of the environment)
//!  error (Error)    exit (the one place that ends the process)    config (every limit)
//! ```
//!
//! Dependencies point down; `tests/tests/layering.rs` of the workspace checks them
//! against `docs/ARCHITECTURE.md`. The protocol itself (wire format, sender log, pull
//! engine, replica choice, checkpoints) is the `volpex-proto` crate: no I/O and no
//! clock, driven here by the mio transport and in its tests by a seeded simulator.
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
pub use comm::{
    dims_create, initialize, polling_between, test_any, test_some, wait_all, wait_any, wait_some,
    AnyProcess, Between, CartesianCommunicator, CartesianGrid, CartesianLayout, Communicator,
    Decision, DeferredMessage, Group, InterCommunicator, Message, OutputFile, PostedMessage,
    Process, ReceiveInto, Request, Status, Tag, Universe, Waiting, ANY_SOURCE, TAG_UB,
};
pub use datatype::{
    bytemuck, Buffer, BufferMut, Elements, ElementsMut, Equivalence, Indexed, IndexedMut, Layout,
    LayoutError, Partition, PartitionMut, Strided, StridedMut, Target,
};
pub use error::Error;
pub use exit::abort_exit_code;
// The runtime's diagnostics on stderr, for the programs that want them (never installed by
// the library itself).
pub use comm::universe::log_to_stderr;
/// `#[derive(Equivalence)]`: send a struct with padding or `bool` fields (the
/// `volpex-derive` crate; see `datatype::derive` for its message form).
pub use volpex_derive::Equivalence;

// The runtime beneath the API: private (the protocol itself is the `volpex-proto` crate).
mod bootstrap;
mod config;
mod env;
mod transport;

/// A message whose payload is memory the caller lent to the log
/// (`Process::send_lent_until_changed_with_tag`).
pub use transport::Loan;

/// Memory processes on one host share by load and store (MPI_Win_allocate_shared).
pub use transport::shared;

/// The exit codes a replica ends with on its own (`volpex_proto::launch::exit`), for
/// programs and bindings that report them.
pub mod exit;

/// Where the collective algorithms switch, in bytes and ranks (for tests and benchmarks
/// that exercise both sides of each switch).
pub use config::collective as collective_limits;

/// Seconds since an arbitrary fixed point in the past (MPI_Wtime).
pub fn wtime() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_secs_f64()
}
