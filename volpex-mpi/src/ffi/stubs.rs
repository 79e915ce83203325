//! Functions of `mpi.h` not implemented yet: each exists, so a program that calls it
//! links, and answers `MPI_ERR_OTHER` with a message naming it (through the error
//! handler of MPI_COMM_WORLD; see `error::not_implemented`). Their C arguments are not
//! read, so the Rust declarations take none: under the C calling convention a callee
//! that ignores its arguments is called correctly.

use std::os::raw::c_int;

use crate::error::not_implemented;

macro_rules! stubs {
    ($($name:ident),* $(,)?) => {$(
        #[no_mangle]
        pub extern "C" fn $name() -> c_int {
            not_implemented(stringify!($name))
        }
    )*};
}

stubs!(
    MPI_Add_error_class,
    MPI_Add_error_code,
    MPI_Add_error_string,
    MPI_Alltoallw,
    MPI_Comm_remote_group,
    MPI_Comm_remote_size,
    MPI_Graph_create,
    MPI_Graph_get,
    MPI_Graph_map,
    MPI_Graph_neighbors,
    MPI_Graph_neighbors_count,
    MPI_Graphdims_get,
    MPI_Imrecv,
    MPI_Intercomm_create,
    MPI_Intercomm_merge,
);

/// MPI_Pcontrol: profiling control, which MPI lets an implementation ignore.
#[no_mangle]
pub extern "C" fn MPI_Pcontrol(_level: c_int) -> c_int {
    crate::handles::class::SUCCESS
}
