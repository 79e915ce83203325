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
//! thread that completes it). Must never call a callback but where section 12.2 says,
//! nor reach the request table: `request` starts and completes them there
//! (`request::start_generalized`, `request::complete_generalized`).

use std::collections::BTreeMap;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{MpiError, Result};
use crate::handles::{class, MpiStatus};
use crate::raw::GreqFns;

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

    /// Calls the free function.
    pub fn free_function(&self) -> Result<()> {
        callback_error("free", self.fns.free(self.extra))
    }
}

/// A generalized request with the program's functions `fns` and `extra_state`, done once
/// `done` is set (MPI_Grequest_start; `request::start_generalized` puts it in the table).
pub fn new(fns: GreqFns, extra: usize, done: Arc<AtomicBool>) -> Arc<Grequest> {
    Arc::new(Grequest {
        fns,
        extra,
        done,
        freed: AtomicBool::new(false),
    })
}

/// Request `h` is the generalized request `g` until it is freed.
pub fn register(h: c_int, g: Arc<Grequest>) {
    LIVE.lock().insert(h, g);
}

/// MPI_Grequest_complete of request `h`: marks it done (a wait on it returns, from any
/// thread). If the program freed it already, returns it: the caller takes it out of the
/// request table, then calls `free_function`.
pub fn complete(h: c_int) -> Result<Option<Arc<Grequest>>> {
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
    Ok(g.freed.load(Ordering::Acquire).then(|| {
        live.remove(&h);
        g
    }))
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
    g.free_function()?;
    Ok(true)
}
