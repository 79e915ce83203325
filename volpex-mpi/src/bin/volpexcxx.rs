//! `volpexcxx`: the C++ compiler (`c++`, or `VOLPEX_CXX`) with the flags for `mpi.h` and
//! `libvolpexmpi`, like `mpicxx`; `volpexcxx -show` prints the command.

#[path = "../wrapper.rs"]
mod wrapper;

fn main() {
    wrapper::main("volpexcxx", "VOLPEX_CXX", "c++")
}
