//! The exported C functions of `mpi.h`, one submodule per chapter of the standard
//! (`environment`, `point_to_point`, `requests`, `datatypes`, `collectives`,
//! `communicators`, `topologies`, `info`, `io`), the Fortran bindings (`fortran`), the profiling
//! names (`pmpi`) and the extensions (`mpix`). Each function is a thin shell: it turns its
//! C arguments into checked Rust values through `raw` (every raw pointer is read there),
//! calls the safe layer, and answers through `errhandler::guard` with the communicator's error
//! handler. Functions this library does not support are in `stubs`. This module holds the helpers
//! the shells share; it must never hold MPI logic of its own.
//!
//! # Safety
//!
//! Every function taking a pointer is `unsafe`: its pointers must be what the MPI
//! standard says they are (a buffer of `count` elements of the datatype, an `int` to
//! write, ...). `raw` documents what it checks and what it trusts. The private helpers
//! here and in the submodules (`set`, `set_status`, `requests::request_array`) are only
//! ever given pointer arguments of the exported function that calls them.
// The exported functions are documented by `mpi.h` and the MPI standard.
#![allow(missing_docs)]
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]

/// Defines exported functions of one C signature that differ only in a value they hand
/// to one shared body: `variants! { fn(a: A, b: B) => body; MPI_X = x, MPI_Y = y }`
/// makes `MPI_X(a, b)` return `body(("MPI_X", x), a, b)` (the name is what the error
/// handler reports). The send modes of MPI_Send, MPI_Isend and MPI_Send_init, and the
/// blocking and testing forms of the completion calls, are each one family.
macro_rules! variants {
    (fn $args:tt => $body:ident; $($name:ident = $variant:expr),+ $(,)?) => {
        $(variants!(@one $name, $variant, $body, $args);)+
    };
    (@one $name:ident, $variant:expr, $body:ident, ($($arg:ident: $ty:ty),* $(,)?)) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $ty),*) -> c_int {
            $body((stringify!($name), $variant), $($arg),*)
        }
    };
}

mod collectives;
mod communicators;
mod datatypes;
mod environment;
mod fortran;
mod info;
mod intercomm;
mod io;
mod mpix;
mod pmpi;
mod point_to_point;
mod requests;
pub(crate) mod rma;
mod stubs;
mod tools;
mod topologies;

pub use collectives::*;
pub use communicators::*;
pub use datatypes::*;
pub use environment::*;
pub use info::*;
pub use io::*;
pub use point_to_point::*;
pub use requests::*;
pub use rma::*;
pub use tools::*;
pub use topologies::*;

use std::ffi::{c_char, c_void};
use std::os::raw::c_int;
use std::sync::Arc;

use crate::coll::{self, Blocks};
use crate::comm::{self, SetOp};
use crate::datatype::{self, Datatype};
use crate::errhandler::{self, guard};
use crate::error::{MpiError, Result};
use crate::handles::{
    class, MpiStatus, COMM_WORLD, MAX_ERROR_STRING, MAX_INFO_KEY, MAX_LIBRARY_VERSION_STRING,
    MAX_OBJECT_NAME, MAX_PROCESSOR_NAME, NULL, UNDEFINED,
};
use crate::raw;
use crate::state::{self, Phase};
use crate::topo;
use crate::{p2p, request, types};
use raw::Region;

type Comm = c_int;
type Dtype = c_int;

fn dt(h: Dtype) -> Result<Arc<Datatype>> {
    state::datatype(h)
}

fn cnt(c: c_int) -> Result<usize> {
    datatype::count(c)
}

/// The region of `count` elements of `t` at `p`.
fn reg(p: *const c_void, t: &Datatype, count: usize) -> Result<Region> {
    raw::region(p, t, &[(0, count)])
}

/// Blocks (first element, count) of a `v` collective from C counts and displacements.
fn blocks(counts: &[c_int], displs: &[c_int]) -> Result<Blocks> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| Ok((i128::from(d), cnt(c)?)))
        .collect()
}

/// The memory of an immediate receive of `count` elements of `t` over `r`.
///
/// # Safety
/// As `raw::write_until_complete`.
unsafe fn recv_until_complete(r: Region, t: Arc<Datatype>, count: usize) -> p2p::RecvMem {
    if t.contiguous {
        // SAFETY: forwarded contract.
        p2p::RecvMem::Bytes(unsafe { raw::write_until_complete(r) })
    } else {
        // SAFETY: forwarded contract.
        let b = unsafe { raw::write_typed_until_complete(r, t) };
        p2p::RecvMem::Scattered(p2p::Scatter::new(b, count))
    }
}

/// Fills the status of a call that completes one operation. Its MPI_ERROR field is left
/// as the program set it: only the calls that complete several operations set it, when
/// they return MPI_ERR_IN_STATUS (MPI-3.1 section 3.2.5).
fn set_status(p: *mut MpiStatus, st: MpiStatus) -> Result<()> {
    // SAFETY: `p` is the status argument of an MPI call: null (ignored) or writable.
    if let Some(s) = unsafe { raw::status(p) }? {
        *s = MpiStatus {
            MPI_ERROR: s.MPI_ERROR,
            ..st
        };
    }
    Ok(())
}

/// Answers a call that may or may not have completed (MPI_Test, MPI_Iprobe, ...):
/// `flag` true and the status filled, or `flag` false and the status untouched.
fn set_flag_status(flag: *mut c_int, status: *mut MpiStatus, st: Option<MpiStatus>) -> Result<()> {
    match st {
        Some(st) => {
            set(flag, "flag", 1)?;
            set_status(status, st)
        }
        None => set(flag, "flag", 0),
    }
}

fn set<T>(p: *mut T, what: &str, v: T) -> Result<()> {
    // SAFETY: `p` is an output argument of an MPI call: a writable `T`.
    *unsafe { raw::out(p, what) }? = v;
    Ok(())
}

fn size_of_comm(comm: Comm) -> Result<usize> {
    Ok(comm::size(comm)? as usize)
}
