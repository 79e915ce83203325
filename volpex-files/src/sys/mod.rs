//! The C library functions this crate exports in the program's place (`symbols`: open,
//! write, rename, stat, ...; `stdio`: fopen and its kin), which turn the program's raw
//! pointers into checked values and call `layer`, and hand what the layer does not track
//! to the C library's own functions (`crate::real`, the crate's other unsafe module).
//!
//! How a program gets these: `libvolpexmpi.so`, linked by `volpexcc` and `volpexf90`,
//! defines them, and the dynamic linker binds the program's calls, and those of its
//! libraries (libgfortran, libstdc++), to the first definition in load order: ours, not
//! libc's. A Rust program using the `volpex` crate links this crate statically: its
//! standard library's calls bind to these at link time. Calls the C library makes inside
//! itself (stdio's writes) never reach them, hence `stdio`. A descriptor the layer does
//! not track costs one bit test before the C library's function runs.
//!
//! Must never decide anything about the files (the layer does), nor call an exported
//! function of this crate from the inside (`crate::real` only).
#![allow(unsafe_code)]

mod stdio;
mod symbols;

/// Installs what the layer needs once it is active: the child of a fork leaves the
/// layer's files alone; stdio's descriptor field is where this build expects it.
pub fn init() {
    extern "C" fn child() {
        crate::layer::forked();
    }
    // SAFETY: registers a handler that takes no argument and only stores two atomics.
    let r = unsafe { libc::pthread_atfork(None, None, Some(child)) };
    if r != 0 {
        log::warn!("pthread_atfork failed ({r}): a forked child could write the rank's files");
    }
    stdio::check_layout();
}
