//! Immediate (non-blocking) collectives (MPI-3.1 section 5.12): every collective can
//! start at once and run meanwhile.
//!
//! Each call takes a fresh context of the communicator (a communicator of the same ranks
//! that `comm` names by how many communicators and immediate collectives it created
//! before, so every replica of every member agrees) and runs the blocking algorithm
//! there on a thread of its own, on copies of the inputs. Its messages can therefore
//! never match those of other collectives in flight, and the program may compute
//! meanwhile; every replica of a rank runs the same algorithm on the same inputs, so
//! replication and failover work as for the blocking ones. Owns only the thread; must
//! never touch the caller's buffers from it: the result comes back as bytes, which the
//! request (`comm`) puts in place when it completes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::Error;

/// An immediate collective in flight: its thread, which returns the result's bytes, and
/// the flag it raises when it has them.
pub struct Running {
    thread: JoinHandle<Result<Vec<u8>, Error>>,
    done: Arc<AtomicBool>,
}

impl Running {
    /// Whether the result is ready (`join` then returns without waiting for more than
    /// the thread's exit).
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// Waits for the result.
    pub fn join(self) -> Result<Vec<u8>, Error> {
        self.thread
            .join()
            .map_err(|_| Error::ImmediateCollectivePanicked)?
    }
}

/// Starts `run` on its own thread with `ctx`, the fresh context it runs in; once the
/// result is ready (the flag `Running::is_done` reads is up), `finished` tells whoever
/// may be waiting for it.
pub fn start<C: Send + 'static>(
    ctx: C,
    run: impl FnOnce(&C) -> Result<Vec<u8>, Error> + Send + 'static,
    finished: impl FnOnce(&C) + Send + 'static,
) -> Result<Running, Error> {
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    let thread = std::thread::Builder::new()
        .name("volpex-icoll".into())
        .spawn(move || {
            let result = run(&ctx);
            flag.store(true, Ordering::Release);
            finished(&ctx);
            result
        })
        .map_err(Error::ImmediateCollectiveStart)?;
    Ok(Running { thread, done })
}
