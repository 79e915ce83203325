//! The application-facing API in the style of the `mpi` crate: universe, communicators,
//! point-to-point operations, requests and statuses.
//!
//! Owns the mapping from MPI calls to engine commands and the waiting loop. Must never
//! open sockets or decide which replica to ask.
//!
//! Files: `communicator` (identity, creation, the send path), `receive` (posting,
//! waiting, testing), `process` (point-to-point partners), `collectives` (the collective
//! methods, and `collective::PointToPoint` for `Communicator`), `immediate` (their
//! immediate forms), `request`, `status`, `group`, `universe`, `checkpoint` (checkpoints
//! and restoring them), `output` (output files written by every replica, committed
//! once), `topology` (Cartesian grids), `inter` (inter-communicators). `comm` depends on
//! `collective`, never the other way.

mod checkpoint;
mod collectives;
pub mod communicator;
pub mod group;
mod immediate;
pub mod inter;
pub mod output;
pub mod process;
mod receive;
pub mod request;
pub mod status;
pub mod topology;
pub mod universe;

pub use collectives::{polling_between, Between};
pub use communicator::Communicator;
pub use group::Group;
pub use inter::InterCommunicator;
pub use output::OutputFile;
pub use process::{AnyProcess, DeferredMessage, Message, PostedMessage, Process, ANY_SOURCE};
pub use receive::{Decision, ReceiveInto, Waiting};
pub use request::{test_any, test_some, wait_all, wait_any, wait_some, Request};
pub use status::Status;
pub use topology::{dims_create, CartesianCommunicator, CartesianGrid, CartesianLayout};
pub use universe::{initialize, Universe};

/// A message tag.
pub type Tag = i32;

/// Largest user tag (MPI_TAG_UB).
pub const TAG_UB: Tag = crate::config::TAG_UB;
