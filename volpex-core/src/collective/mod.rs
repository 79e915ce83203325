//! Collective operations, built on replicated point-to-point in a communicator's own
//! collective context so they never match user messages.
//!
//! Must never touch sockets or the engine directly: only the communicator's internal
//! send and receive.

pub mod barrier;
