//! Hostile input, as property tests bounded to run in seconds: arbitrary bytes into the
//! frame decoder (`wire_decode`), arbitrary well-formed frames from arbitrary peers into
//! a small job's engines (`engine_frames`, driven by `drive` with values from `pick`).
//! The properties live in `decode_check` and `engine_check`, which the `fuzz/` crate at
//! the workspace root includes by path (with `drive`, `pick` and `alloc`) to run the same
//! checks for hours; memory is measured by a counting allocator (`alloc`).

mod alloc;
mod decode_check;
mod drive;
mod engine_check;
mod engine_frames;
mod pick;
mod wire_decode;
