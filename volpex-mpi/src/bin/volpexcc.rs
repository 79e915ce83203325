//! `volpexcc`: the C compiler (`cc`, or `VOLPEX_CC`) with the flags for `mpi.h` and
//! `libvolpexmpi`, like `mpicc`; `volpexcc -show` prints the command.

#[path = "../wrapper.rs"]
mod wrapper;

fn main() {
    wrapper::main("volpexcc", "VOLPEX_CC", "cc")
}
