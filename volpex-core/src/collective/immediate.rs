//! Immediate (non-blocking) collectives (MPI-3.1 section 5.12): barrier, broadcast and
//! all-reduce that return a `Request` at once.
//!
//! Each call takes a fresh context of the communicator (named by how many communicators
//! and immediate collectives it created before, so every replica of every member agrees)
//! and runs the blocking algorithm there on a thread of its own, on copies of the inputs.
//! Its messages can therefore never match those of other collectives in flight, and the
//! program may compute meanwhile. Must never touch the caller's buffers from the thread:
//! the result is copied out when the request completes.

use crate::comm::{Communicator, Request};
use crate::datatype::Equivalence;
use crate::error::Error;

use super::{all_reduce, barrier, broadcast, Operation};

/// Starts `run` on its own thread in a new context of `comm`; the bytes it returns are
/// copied into `out` when the request completes.
fn start<'a>(
    comm: &Communicator,
    out: &'a mut [u8],
    run: impl FnOnce(&Communicator) -> Result<Vec<u8>, Error> + Send + 'static,
) -> Result<Request<'a>, Error> {
    let ctx = comm.immediate_context();
    let handle = std::thread::Builder::new()
        .name("volpex-icoll".into())
        .spawn(move || run(&ctx))
        .map_err(|e| Error::Runtime(format!("cannot start an immediate collective: {e}")))?;
    Ok(Request::collective(comm, handle, out))
}

/// MPI_Ibarrier.
pub fn immediate_barrier<'a>(comm: &Communicator) -> Result<Request<'a>, Error> {
    start(comm, &mut [], |c| barrier::barrier(c).map(|()| Vec::new()))
}

/// MPI_Ibcast of `buf` from `root`.
pub fn immediate_broadcast<'a, T: Equivalence>(
    comm: &Communicator,
    root: u32,
    buf: &'a mut [T],
) -> Result<Request<'a>, Error> {
    let mut copy: Vec<u8> = bytemuck::cast_slice(buf).to_vec();
    start(comm, bytemuck::cast_slice_mut(buf), move |c| {
        broadcast(c, root, &mut copy).map(|()| copy)
    })
}

/// MPI_Iallreduce of `send` into `recv` with `op`.
pub fn immediate_all_reduce<'a, T, O>(
    comm: &Communicator,
    send: &[T],
    recv: &'a mut [T],
    op: O,
) -> Result<Request<'a>, Error>
where
    T: Equivalence + Send,
    O: Operation<T> + Send + 'static,
{
    super::expect_len("all-reduce result", recv.len(), send.len())?;
    let input = send.to_vec();
    start(comm, bytemuck::cast_slice_mut(recv), move |c| {
        let mut result = vec![T::zeroed(); input.len()];
        all_reduce(c, &input, &mut result, &op)?;
        Ok(bytemuck::cast_slice(&result).to_vec())
    })
}
