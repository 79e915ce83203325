//! `volpexf77`: the same wrapper as `volpexf90` (gfortran compiles both fixed and free
//! form), under the name Makefiles that set `MPIF77` expect.

#[path = "../wrapper.rs"]
mod wrapper;

fn main() {
    wrapper::fortran_main("volpexf77")
}
