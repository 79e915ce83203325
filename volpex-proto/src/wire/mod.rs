//! The wire format: one fixed little-endian header, then the raw payload.
//!
//! Owns encoding and decoding of every frame that crosses a socket, and the checks on every
//! field read from the network. The table is in `docs/PROTOCOL.md`. Must never do I/O
//! itself beyond the `Read`/`Write` handed to the stream helpers, and never panic or
//! allocate without bound on bad input.

pub mod control;
pub mod frame;
pub mod header;
pub mod stream;

pub use frame::Frame;
pub use header::{Header, Kind, WireError};
