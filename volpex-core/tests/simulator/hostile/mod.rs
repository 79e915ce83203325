//! Hostile input, as property tests bounded to run in seconds: arbitrary bytes into the
//! frame decoder (`wire_decode`), arbitrary well-formed frames from arbitrary peers into
//! a small job's engines (`engine_frames`, driven by `drive`). Both check that nothing
//! panics and that memory stays within bounds, measured by a counting allocator
//! (`alloc`). The `fuzz/` crate at the workspace root runs the same two for hours.

mod alloc;
pub mod drive;
mod engine_frames;
mod wire_decode;
