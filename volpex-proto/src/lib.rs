//! The Volpex pull protocol as a state machine with no I/O: the wire format, message
//! identity and the sender log, the pull engine, replica choice and the checkpoint format.
//!
//! Nothing here opens a socket, starts a thread, reads a clock or the environment, or
//! ends the process. Time and events come in as arguments (`Engine::handle_*`), commands
//! change state (`Engine::send`, `Engine::post`), and what must go on the wire comes out
//! (`Engine::poll_transmit`, `Engine::poll_timeout`). `volpex`'s mio transport drives the
//! engine in production; the seeded simulator in `tests/simulator/` drives many engines
//! with a fake clock and network in one process; the launcher (`volpexrun`) uses the
//! control messages, the handshake and the launch contract.
//!
//! ```text
//!  pull/        Engine: fetches | service | choices | silence | timers | outbox;
//!   |           decision (this rank's choices), foreign (other ranks' choices)
//!   v
//!  checkpoint   the snapshot format        replica/  liveness, replica choice
//!   |                                        |
//!   v                                        v
//!  handshake    job-key authentication, Link (one connection's handshake state)
//!   |
//!   v
//!  wire/        header (field table, size checked at compile time), frame, control
//!   |           messages, stream (incremental reader, output queue)
//!   v
//!  message/     key, matching, sender log, watermarks, pool
//!   |
//!   v
//!  leaves:      config (the engine's tunables), limits (every limit), launch (the
//!               launcher <-> replica contract: environment variables, exit codes)
//! ```
//!
//! Dependencies point down; `tests/layering.rs` of the workspace checks it against
//! `docs/ARCHITECTURE.md`.
//!
//! # Glossary
//!
//! | word | meaning |
//! |---|---|
//! | rank | a logical MPI process, 0..n |
//! | replica | one OS process running a rank; index 0..r |
//! | incarnation | which process of a replica this is (0, then one more per regeneration) |
//! | team k | replica k of every rank; a receiver asks its own team first |
//! | message key | (communicator, tag, source, destination, seq) |
//! | order number | a message's place among the sends from its source to its destination on its communicator |
//! | sender log | messages a replica has sent, kept for any replica of the receiver |
//! | pull | a receiver asks one replica of the sender for the message with a key |
//! | choice | a wildcard match or `wait_any` outcome; made by the rank's leader replica, followed by its siblings |
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod checkpoint;
pub mod config;
pub mod handshake;
pub mod launch;
pub mod limits;
pub mod message;
pub mod pull;
pub mod replica;
pub mod wire;

pub use config::Config;
pub use pull::Engine;
