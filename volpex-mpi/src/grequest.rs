//! Generalized requests (MPI-3.1 section 12.2): operations the program runs itself,
//! started with `MPI_Grequest_start` and marked done with `MPI_Grequest_complete`, then
//! waited for, tested, cancelled and freed like any request.
//!
//! Each is a `volpex::Request::generalized` in the request table, so `MPI_Waitany` and
//! the other calls that pick completed requests choose it as they choose receives: the
//! leader replica of the rank decides and every replica reports the same requests. Its
//! status is what the program's query function writes when a wait or test completes it
//! (and `MPI_Request_get_status` once it is done); its free function runs after that, or,
//! for a request the program freed first, when both `MPI_Request_free` and
//! `MPI_Grequest_complete` happened. `MPI_Cancel` calls the cancel function.
//!
//! Owns the callbacks and the "done" flag of every generalized request, by handle (the
//! flag must be reachable while a wait holds the request out of its table slot, from the
//! thread that completes it). Must never call a callback but where section 12.2 says.

use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{MpiError, Result};
use crate::handles::{class, MpiStatus, COMM_WORLD};
use crate::raw::{GreqFns, Pending};
use crate::request::{self, Active};
use crate::state;

/// One generalized request.
pub struct Grequest {
    fns: GreqFns,
    /// The program's `extra_state`, passed back to every callback.
    extra: usize,
    /// Set by MPI_Grequest_complete.
    done: Arc<AtomicBool>,
    /// MPI_Request_free was called before it was done: the free function runs when it is.
    freed: AtomicBool,
}

/// The generalized requests not yet freed, by handle.
static LIVE: Mutex<BTreeMap<c_int, Arc<Grequest>>> = Mutex::new(BTreeMap::new());

fn callback_error(which: &str, code: c_int) -> Result<()> {
    if code == class::SUCCESS {
        return Ok(());
    }
    Err(MpiError::new(
        code,
        format!("the generalized request's {which} function returned error code {code}"),
    ))
}

impl Grequest {
    /// Whether MPI_Grequest_complete was called.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// The status the query function writes (MPI_Request_get_status of a done request).
    pub fn query(&self) -> Result<MpiStatus> {
        let mut st = MpiStatus::empty();
        callback_error("query", self.fns.query(self.extra, &mut st))?;
        Ok(st)
    }

    /// MPI_Cancel: calls the cancel function with whether it is done already.
    pub fn cancel(&self) -> Result<()> {
        callback_error("cancel", self.fns.cancel(self.extra, self.is_done()))
    }
}

/// MPI_Grequest_start: a new active request that completes when the program calls
/// `complete` on it.
pub fn start(fns: GreqFns, extra: usize) -> Result<c_int> {
    let world = state::comm(COMM_WORLD)?;
    let done = Arc::new(AtomicBool::new(false));
    let g = Arc::new(Grequest {
        fns,
        extra,
        done: done.clone(),
        freed: AtomicBool::new(false),
    });
    let r = volpex::Request::generalized(&world, done);
    let h = request::add(Active::Generalized(Pending(r, COMM_WORLD), g.clone()))?;
    LIVE.lock().insert(h, g);
    Ok(h)
}

/// MPI_Grequest_complete: request `h` is done; a wait on it returns (from any thread).
/// If the program freed it already, its free function runs now.
pub fn complete(h: c_int) -> Result<()> {
    let freed = {
        // Under the lock, so that of this and `free` exactly one sees both calls made.
        let mut live = LIVE.lock();
        let g = live
            .get(&h)
            .cloned()
            .ok_or_else(|| MpiError::new(class::REQUEST, "not a generalized request"))?;
        if g.done.swap(true, Ordering::AcqRel) {
            return Err(MpiError::new(
                class::REQUEST,
                "MPI_Grequest_complete called twice on one request",
            ));
        }
        g.freed.load(Ordering::Acquire).then(|| {
            live.remove(&h);
            g
        })
    };
    if let Some(g) = freed {
        state::with(|s| s.requests.remove(h).map(drop))?;
        callback_error("free", g.fns.free(g.extra))?;
    }
    Ok(())
}

/// A wait or test completed request `h`: its status from the query function, then the
/// free function. The error is the free function's, else the query function's (MPI-3.1
/// section 12.2: the last callback's).
pub fn finished(h: c_int, g: &Grequest) -> Result<MpiStatus> {
    LIVE.lock().remove(&h);
    let mut st = MpiStatus::empty();
    let q = g.fns.query(g.extra, &mut st);
    let f = g.fns.free(g.extra);
    callback_error("free", f)?;
    callback_error("query", q)?;
    Ok(st)
}

/// MPI_Request_free of request `h`: true when it may go now (it was done: its free
/// function ran); false when it stays until MPI_Grequest_complete.
pub fn free(h: c_int, g: &Grequest) -> Result<bool> {
    {
        let mut live = LIVE.lock();
        g.freed.store(true, Ordering::Release);
        if !g.is_done() {
            return Ok(false);
        }
        live.remove(&h);
    }
    callback_error("free", g.fns.free(g.extra))?;
    Ok(true)
}
