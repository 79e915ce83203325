//! Immediate (non-blocking) collectives (MPI-3.1 section 5.12): every collective can
//! start at once and run meanwhile.
//!
//! Each call takes a fresh context of the communicator (`PointToPoint::immediate_context`:
//! named by how many communicators and immediate collectives it created before, so every
//! replica of every member agrees) and runs the blocking algorithm there on a thread of
//! its own, on copies of the inputs. Its messages can therefore never match those of other
//! collectives in flight, and the program may compute meanwhile; every replica of a rank
//! runs the same algorithm on the same inputs, so replication and failover work as for the
//! blocking ones. Owns only the thread; must never touch the caller's buffers from it: the
//! result comes back as bytes, which the request (`comm`) puts in place when it completes.

use std::thread::JoinHandle;

use crate::error::Error;

use super::PointToPoint;

/// An immediate collective in flight: its thread, which returns the result's bytes.
pub type Running = JoinHandle<Result<Vec<u8>, Error>>;

/// Starts `run` on its own thread in a new context of `comm`.
pub fn start(
    comm: &dyn PointToPoint,
    run: impl FnOnce(&dyn PointToPoint) -> Result<Vec<u8>, Error> + Send + 'static,
) -> Result<Running, Error> {
    let ctx = comm.immediate_context();
    std::thread::Builder::new()
        .name("volpex-icoll".into())
        .spawn(move || run(&*ctx))
        .map_err(Error::ImmediateCollectiveStart)
}
