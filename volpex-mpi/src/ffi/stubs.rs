//! Functions of `mpi.h` that this library does not support (dynamic processes, one-sided
//! communication, user data representations): each exists, so a program that calls it links, and answers
//! through the error handler of MPI_COMM_WORLD with a message naming it (see
//! `errhandler::unsupported`). Their C arguments are not read, so the Rust declarations
//! take none: under the C calling convention a callee that ignores its arguments is
//! called correctly. Must never hold a function that does something.

use std::os::raw::c_int;

use crate::errhandler::unsupported;
use crate::handles::class;

/// Functions this library does not support: `$class` with `$why`.
macro_rules! unsupported {
    ($class:expr, $why:literal: $($name:ident),* $(,)?) => {$(
        #[no_mangle]
        pub extern "C" fn $name() -> c_int {
            unsupported(stringify!($name), $class, $why)
        }
    )*};
}

// Process creation and management (MPI-3.1 chapter 10): a Volpex job has a fixed set of
// ranks, each replicated; new processes and connections between jobs are not supported.
unsupported!(class::SPAWN, "a Volpex job cannot spawn processes":
    MPI_Comm_spawn,
    MPI_Comm_spawn_multiple,
);
unsupported!(
    class::UNSUPPORTED_OPERATION,
    "a Volpex job cannot connect to other jobs (ports, name publishing)":
    MPI_Close_port,
    MPI_Comm_accept,
    MPI_Comm_connect,
    MPI_Comm_join,
    MPI_Lookup_name,
    MPI_Open_port,
    MPI_Publish_name,
    MPI_Unpublish_name,
);

// External data representations (MPI-3.1 section 13.5.3): only "native" is supported.
unsupported!(
    class::UNSUPPORTED_OPERATION,
    "only the \"native\" data representation is supported":
    MPI_Register_datarep,
);

/// MPI_Pcontrol: profiling control, which MPI lets an implementation ignore.
#[no_mangle]
pub extern "C" fn MPI_Pcontrol(_level: c_int) -> c_int {
    class::SUCCESS
}
