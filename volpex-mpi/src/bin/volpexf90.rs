//! `volpexf90` (also `volpexf77`): gfortran (or `VOLPEX_FC`) with the flags for
//! `mpif.h`, the `mpi` module and `libvolpexmpi`, like `mpif90`; `volpexf90 -show`
//! prints the command.

#[path = "../wrapper.rs"]
mod wrapper;

fn main() {
    wrapper::fortran_main("volpexf90")
}
