//! Immediate (non-blocking) collectives (MPI-3.1 section 5.12): barrier, broadcast and
//! all-reduce that start at once and run meanwhile.
//!
//! Each call takes a fresh context of the communicator (`PointToPoint::immediate_context`:
//! named by how many communicators and immediate collectives it created before, so every
//! replica of every member agrees) and runs the blocking algorithm there on a thread of
//! its own, on copies of the inputs. Its messages can therefore never match those of other
//! collectives in flight, and the program may compute meanwhile. Owns only the thread and
//! the copies; must never touch the caller's buffers from the thread: the result comes
//! back as bytes, which the request (`comm`) copies out when it completes.

use std::thread::JoinHandle;

use crate::datatype::Equivalence;
use crate::error::Error;

use super::{all_reduce, barrier, broadcast, Operation, PointToPoint};

/// An immediate collective in flight: its thread, which returns the result's bytes.
pub type Running = JoinHandle<Result<Vec<u8>, Error>>;

/// Starts `run` on its own thread in a new context of `comm`.
fn start(
    comm: &dyn PointToPoint,
    run: impl FnOnce(&dyn PointToPoint) -> Result<Vec<u8>, Error> + Send + 'static,
) -> Result<Running, Error> {
    let ctx = comm.immediate_context();
    std::thread::Builder::new()
        .name("volpex-icoll".into())
        .spawn(move || run(&*ctx))
        .map_err(Error::ImmediateCollectiveStart)
}

/// MPI_Ibarrier; its result is empty.
pub fn immediate_barrier(comm: &dyn PointToPoint) -> Result<Running, Error> {
    start(comm, |c| barrier::barrier(c).map(|()| Vec::new()))
}

/// MPI_Ibcast of `buf` from `root`; the result is the broadcast buffer's bytes.
pub fn immediate_broadcast<T: Equivalence>(
    comm: &dyn PointToPoint,
    root: u32,
    buf: &[T],
) -> Result<Running, Error> {
    let mut copy: Vec<u8> = bytemuck::cast_slice(buf).to_vec();
    start(comm, move |c| broadcast(c, root, &mut copy).map(|()| copy))
}

/// MPI_Iallreduce of `send` with `op`, for a result buffer of `recv_len` elements; the
/// result is the reduction's bytes.
pub fn immediate_all_reduce<T, O>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv_len: usize,
    op: O,
) -> Result<Running, Error>
where
    T: Equivalence + Send,
    O: Operation<T> + Send + 'static,
{
    super::expect_len("all-reduce result", recv_len, send.len())?;
    let input = send.to_vec();
    start(comm, move |c| {
        let mut result = vec![T::zeroed(); input.len()];
        all_reduce(c, &input, &mut result, &op)?;
        Ok(bytemuck::cast_slice(&result).to_vec())
    })
}
