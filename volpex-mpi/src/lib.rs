//! The MPI C and Fortran interfaces over the Volpex runtime: `include/mpi.h`,
//! `include/mpif.h`, the `mpi` module (`include/mpi.f90`) and `libvolpexmpi` (`.so`,
//! `.a`), so unmodified C and Fortran MPI programs build with `volpexcc` / `volpexf90`
//! and run replicated under `volpexrun`.
//!
//! ```text
//!  Fortran program --calls--> ffi/fortran.rs  mpi_*_ (gfortran names): arguments by
//!                          |    reference, Fortran sentinels (common blocks), 1-based
//!                          |    indices, blank-padded strings -> the C functions
//!  C program  --calls-->  ffi/  the exported MPI_* functions: C pointers + counts ->
//!                          |    checked slices, references and handles through `raw`;
//!                          |    ffi/stubs.rs: functions not implemented yet
//!                          |    (MPI_ERR_OTHER naming the function); ffi/mpix.rs: the
//!                          |    MPIX_ fault-tolerance extensions
//!                          v
//!             safe layer:  io (MPI-IO over the file layer's calls: handles, access,
//!                          two-phase aggregation, the shared pointer), rma (one-sided
//!                          communication: windows, epochs, batches), lifecycle
//!                          (MPI_Init, MPI_Finalize), comm, icoll, coll, p2p, typeattr
//!                          (names, attributes), info, request, topo, types, errhandler
//!                          (what the error handlers do, codes a program adds), ft
//!                          (checkpoint and restore as bytes, seeds): the MPI semantics
//!                          state (the handle tables behind one mutex, and what their
//!                          entries hold), grequest (generalized requests' callbacks),
//!                          op (reductions)
//!                          raw: the one place C pointers become Rust values (every
//!                          raw-pointer dereference), and calls into the program's
//!                          functions
//!                          view (file views), window (what a window's entry holds),
//!                          darray, external32, overlap (the bytes
//!                          two buffers share), datatype (type maps, buffers, pieces;
//!                          its predefined types, envelopes and signatures), table,
//!                          topology (what a communicator's topology is), error
//!                          (classes), handles
//!                          |
//!                          v
//!             volpex      Communicator, Process, Request, collectives: the same API
//!                         Rust programs use
//! ```
//!
//! Every module uses only those listed after it (`docs/ARCHITECTURE.md` gives the layers;
//! `tests/tests/layering.rs` checks them).
//!
//! Handles are ints tagged by kind (`handles`); a bad handle, a null pointer or a
//! negative count is an MPI error (`MPI_ERRORS_ARE_FATAL` prints the function and the
//! reason and exits; `MPI_ERRORS_RETURN` returns the class), never undefined behaviour
//! in this crate. Every send is buffered by the volpex sender log, so immediate sends
//! complete at once, but for the synchronous mode, which waits for its receive (`p2p`).
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod coll;
pub mod comm;
pub mod darray;
pub mod datatype;
pub mod errhandler;
pub mod error;
pub mod external32;
pub mod ffi;
pub mod ft;
pub mod grequest;
pub mod handles;
pub mod icoll;
pub mod info;
pub mod io;
pub mod lifecycle;
pub mod op;
pub mod overlap;
pub mod p2p;
pub mod raw;
pub mod request;
pub mod rma;
pub mod state;
pub mod table;
pub mod topo;
pub mod topology;
pub mod typeattr;
pub mod types;
pub mod view;
pub mod window;
