//! The exported `MPIX_` fault-tolerance extensions of `mpi.h` (see `ft`): checkpoint the
//! program's state as bytes, get it back in a regenerated replica, tell a new incarnation,
//! and a seed equal in every replica of a rank. Thin shells like the rest of `ffi`:
//! they own only the turning of pointers into checked byte slices and outputs, and must
//! never keep a pointer past the call (the state is copied in both directions).

use std::ffi::{c_char, c_void};
use std::os::raw::c_int;

use super::{cnt, raw, set};
use crate::errhandler::guard;
use crate::ft;
use crate::handles::COMM_WORLD;

/// MPIX_MAX_OUTPUT_PATH of mpi.h: room enough for any path MPIX_Output_open gives.
pub const MAX_OUTPUT_PATH: usize = 4096;

#[no_mangle]
pub unsafe extern "C" fn MPIX_Checkpoint(state: *const c_void, bytes: c_int, comm: c_int) -> c_int {
    guard("MPIX_Checkpoint", comm, || {
        // SAFETY: `bytes` readable bytes at `state` (mpi.h's contract for MPIX_Checkpoint).
        let s = unsafe { raw::bytes(state, cnt(bytes)?) }?;
        raw::flush_program_output();
        ft::checkpoint(comm, s)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Restored(
    state: *mut c_void,
    max_bytes: c_int,
    bytes: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    guard("MPIX_Restored", COMM_WORLD, || {
        let cap = cnt(max_bytes)?;
        if let Some(n) = ft::restored_len()? {
            set(bytes, "bytes", c_int::try_from(n).unwrap_or(c_int::MAX))?;
        }
        // SAFETY: `max_bytes` writable bytes at `state` (mpi.h's contract).
        let out = unsafe { raw::bytes_mut(state, cap) }?;
        match ft::restored_into(out)? {
            Some(_) => set(flag, "flag", 1),
            None => {
                set(bytes, "bytes", 0)?;
                set(flag, "flag", 0)
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Regenerated(flag: *mut c_int) -> c_int {
    guard("MPIX_Regenerated", COMM_WORLD, || {
        set(flag, "flag", c_int::from(ft::regenerated()?))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Seed(comm: c_int, salt: u64, seed: *mut u64) -> c_int {
    guard("MPIX_Seed", comm, || {
        set(seed, "seed", ft::seed(comm, salt)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Output_open(
    path: *const c_char,
    tmp_path: *mut c_char,
    maxlen: c_int,
) -> c_int {
    guard("MPIX_Output_open", COMM_WORLD, || {
        // SAFETY: a NUL-terminated string (mpi.h's contract).
        let p = unsafe { raw::string(path, "path") }?;
        let cap = cnt(maxlen)?;
        let w = ft::output_open(&p)?;
        if w.len() >= cap {
            ft::output_discard(&p);
            return Err(crate::error::MpiError::arg(format!(
                "MPIX_Output_open: the path to write ({} bytes) does not fit in maxlen {cap}",
                w.len()
            )));
        }
        let mut n: c_int = 0;
        // SAFETY: `maxlen` writable bytes at `tmp_path` (mpi.h's contract), `n` a local.
        unsafe { raw::put_string(tmp_path, cap, &w, &mut n) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Output_commit(path: *const c_char) -> c_int {
    guard("MPIX_Output_commit", COMM_WORLD, || {
        // SAFETY: a NUL-terminated string (mpi.h's contract).
        let p = unsafe { raw::string(path, "path") }?;
        raw::flush_program_output();
        ft::output_commit(&p)
    })
}
