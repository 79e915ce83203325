//! Requests of immediate operations (MPI-3.1 section 3.7) and persistent ones (section
//! 3.9), and their completion: `Wait`, `Test` and the `all`/`any`/`some` families, over
//! `volpex::Request`.
//!
//! Which of several requests `Waitany`/`Testany`/`Waitsome`/`Testsome` report depends on
//! timing, so they go through `volpex::wait_any` and friends, which make every replica of
//! the rank report the same ones. A request is taken out of its table slot while a call
//! waits on it (its handle stays reserved) and released when it completes; a persistent
//! request goes back to its slot, inactive, until the next `MPI_Start`.

use std::os::raw::c_int;
use std::sync::Arc;

use volpex::Request;

use crate::datatype::Datatype;
use crate::error::{MpiError, Result};
use crate::ffi::raw::{Pending, Region};
use crate::handles::{class, MpiStatus, ANY_SOURCE, ANY_TAG, NULL, UNDEFINED};
use crate::state;

/// An operation in flight.
pub enum Active {
    /// A volpex request (a send's is complete from the start).
    Volpex(Pending),
    /// Complete with this status (an operation with MPI_PROC_NULL).
    Done(MpiStatus),
}

/// What a persistent request does at each `MPI_Start`.
#[derive(Clone)]
pub struct Persistent {
    /// A send (true) or a receive.
    pub send: bool,
    /// Communicator handle.
    pub comm: c_int,
    /// The buffer's memory.
    pub region: Region,
    /// Its datatype.
    pub dt: Arc<Datatype>,
    /// Element count.
    pub count: usize,
    /// Destination or source rank.
    pub peer: c_int,
    /// Tag.
    pub tag: c_int,
}

/// A request in the table.
pub struct ReqEntry {
    /// The operation in flight (None: an inactive persistent request).
    pub active: Option<Active>,
    /// Set for a persistent request.
    pub persistent: Option<Persistent>,
}

/// Adds an active request, returns its handle.
pub fn add(a: Active) -> Result<c_int> {
    state::with(|s| {
        Ok(s.requests.insert(ReqEntry {
            active: Some(a),
            persistent: None,
        }))
    })
}

/// Adds an inactive persistent request (MPI_Send_init, MPI_Recv_init).
pub fn add_persistent(p: Persistent) -> Result<c_int> {
    state::with(|s| {
        Ok(s.requests.insert(ReqEntry {
            active: None,
            persistent: Some(p),
        }))
    })
}

/// What MPI_Start must do for `h`: its persistent operation, if it is inactive.
pub fn to_start(h: c_int) -> Result<Persistent> {
    state::with(|s| {
        let e = s.requests.get(h)?;
        match (&e.persistent, &e.active) {
            (Some(p), None) => Ok(p.clone()),
            (Some(_), Some(_)) => Err(MpiError::new(
                class::REQUEST,
                "MPI_Start on an active request",
            )),
            (None, _) => Err(MpiError::new(
                class::REQUEST,
                "MPI_Start on a request that is not persistent",
            )),
        }
    })
}

/// Makes persistent request `h` active with `a` (MPI_Start).
pub fn activate(h: c_int, a: Active) -> Result<()> {
    state::with(|s| {
        s.requests.get_mut(h)?.active = Some(a);
        Ok(())
    })
}

/// The status of a completed volpex operation.
pub fn status_of(st: &volpex::Status) -> MpiStatus {
    if st.is_cancelled() {
        let mut c = MpiStatus::new(ANY_SOURCE, ANY_TAG, 0);
        c.cancelled = 1;
        return c;
    }
    MpiStatus::new(st.source_rank(), st.tag(), st.count_bytes())
}

/// The status of a wait on an inactive request (MPI-3.1 section 3.7.3).
fn inactive() -> MpiStatus {
    MpiStatus::new(ANY_SOURCE, ANY_TAG, 0)
}

/// Takes the operation in flight out of request `h`; the entry's shell stays reserved.
/// None for an inactive request (null or persistent not started).
fn take_active(h: c_int) -> Result<Option<(Active, Option<Persistent>)>> {
    if h == NULL {
        return Ok(None);
    }
    state::with(|s| {
        let mut e = s.requests.take(h)?;
        match e.active.take() {
            Some(a) => Ok(Some((a, e.persistent))),
            None => {
                s.requests.put_back(h, e);
                Ok(None)
            }
        }
    })
}

/// Puts back an operation still in flight.
fn put_back(h: c_int, a: Active, p: Option<Persistent>) {
    let _ = state::with(|s| {
        s.requests.put_back(
            h,
            ReqEntry {
                active: Some(a),
                persistent: p,
            },
        );
        Ok(())
    });
}

/// Ends an operation of request `*h`: a persistent request goes back inactive, another
/// is freed and `*h` becomes MPI_REQUEST_NULL.
fn finish(h: &mut c_int, p: Option<Persistent>) {
    let persistent = p.is_some();
    let _ = state::with(|s| {
        match p {
            Some(p) => s.requests.put_back(
                *h,
                ReqEntry {
                    active: None,
                    persistent: Some(p),
                },
            ),
            None => s.requests.release(*h),
        }
        Ok(())
    });
    if !persistent {
        *h = NULL;
    }
}

/// MPI_Wait.
pub fn wait(h: &mut c_int) -> Result<MpiStatus> {
    let Some((a, p)) = take_active(*h)? else {
        return Ok(inactive());
    };
    finish(h, p);
    match a {
        Active::Done(st) => Ok(st),
        Active::Volpex(r) => {
            let comm = r.1;
            r.0.wait()
                .map(|st| status_of(&st))
                .map_err(|e| MpiError::from(e).on(comm))
        }
    }
}

/// MPI_Test: completes `*h` if it can without waiting.
pub fn test(h: &mut c_int) -> Result<Option<MpiStatus>> {
    let Some((a, p)) = take_active(*h)? else {
        return Ok(Some(inactive()));
    };
    let st = match a {
        Active::Done(st) => st,
        Active::Volpex(mut r) => match r.0.test() {
            Ok(Some(st)) => status_of(&st),
            Ok(None) => {
                put_back(*h, Active::Volpex(r), p);
                return Ok(None);
            }
            Err(e) => {
                let comm = r.1;
                finish(h, p);
                return Err(MpiError::from(e).on(comm));
            }
        },
    };
    finish(h, p);
    Ok(Some(st))
}

/// MPI_Request_get_status: like MPI_Test, but the request stays as it is.
pub fn get_status(h: c_int) -> Result<Option<MpiStatus>> {
    let Some((mut a, p)) = take_active(h)? else {
        return Ok(Some(inactive()));
    };
    let st = match &mut a {
        Active::Done(st) => Ok(Some(*st)),
        Active::Volpex(r) => {
            let comm = r.1;
            r.0.test()
                .map(|o| o.as_ref().map(status_of))
                .map_err(|e| MpiError::from(e).on(comm))
        }
    };
    put_back(h, a, p);
    st
}

/// MPI_Cancel: cancels a pending receive (see `volpex::Request::cancel`: every replica
/// of the rank gets the same answer); the request still has to be completed, and its
/// status then says whether it was cancelled (MPI_Test_cancelled). A send, complete from
/// the start (its message is in the sender log), an immediate collective, a completed
/// request and an inactive persistent one are left as they are.
pub fn cancel(h: c_int) -> Result<()> {
    if h == NULL {
        return Err(MpiError::new(
            class::REQUEST,
            "MPI_Cancel on MPI_REQUEST_NULL",
        ));
    }
    let Some((mut a, p)) = take_active(h)? else {
        return Ok(());
    };
    let r = match &mut a {
        Active::Done(_) => Ok(()),
        Active::Volpex(r) => {
            let comm = r.1;
            r.0.cancel()
                .map(drop)
                .map_err(|e| MpiError::from(e).on(comm))
        }
    };
    put_back(h, a, p);
    r
}

/// MPI_Request_free: forgets the request; a receive not yet complete discards its
/// message when it arrives.
pub fn free(h: &mut c_int) -> Result<()> {
    state::with(|s| s.requests.remove(*h).map(drop))?;
    *h = NULL;
    Ok(())
}

/// MPI_Waitall. `statuses` has one entry per request, or is None (MPI_STATUSES_IGNORE).
pub fn wait_all(hs: &mut [c_int], mut statuses: Option<&mut [MpiStatus]>) -> Result<()> {
    let mut first: Option<MpiError> = None;
    for (i, h) in hs.iter_mut().enumerate() {
        let st = match wait(h) {
            Ok(st) => st,
            Err(e) => {
                let mut st = inactive();
                st.MPI_ERROR = e.class;
                first.get_or_insert(e);
                st
            }
        };
        if let Some(s) = statuses.as_deref_mut().and_then(|s| s.get_mut(i)) {
            *s = st;
        }
    }
    match first {
        None => Ok(()),
        Some(e) if statuses.is_some() => {
            let comm = e.comm;
            let mut err = MpiError::new(class::IN_STATUS, e.msg);
            err.comm = comm;
            Err(err)
        }
        Some(e) => Err(e),
    }
}

/// MPI_Testall: completes every request if all are complete, else none.
pub fn test_all(hs: &mut [c_int], statuses: Option<&mut [MpiStatus]>) -> Result<bool> {
    for &h in hs.iter() {
        let Some((mut a, p)) = take_active(h)? else {
            continue;
        };
        let ready = match &mut a {
            Active::Done(_) => Ok(true),
            Active::Volpex(r) => {
                let comm = r.1;
                r.0.test()
                    .map(|r| r.is_some())
                    .map_err(|e| MpiError::from(e).on(comm))
            }
        };
        put_back(h, a, p);
        if !ready? {
            return Ok(false);
        }
    }
    wait_all(hs, statuses)?;
    Ok(true)
}

/// The active requests among `hs`, taken out of the table.
enum Gathered {
    None,
    Done(usize, MpiStatus),
    Active(Vec<Slot>, Vec<Request<'static>>),
}

/// Where a gathered request came from: its index in the caller's array, its handle, its
/// persistent operation and its communicator.
type Slot = (usize, c_int, Option<Persistent>, c_int);

fn gather(hs: &mut [c_int]) -> Result<Gathered> {
    let mut at: Vec<Slot> = Vec::new();
    let mut reqs = Vec::new();
    for (i, h) in hs.iter_mut().enumerate() {
        match take_active(*h) {
            Ok(None) => {}
            Ok(Some((Active::Done(st), p))) => {
                finish(h, p);
                scatter(at, reqs);
                return Ok(Gathered::Done(i, st));
            }
            Ok(Some((Active::Volpex(r), p))) => {
                at.push((i, *h, p, r.1));
                reqs.push(r.0);
            }
            Err(e) => {
                scatter(at, reqs);
                return Err(e);
            }
        }
    }
    Ok(if at.is_empty() {
        Gathered::None
    } else {
        Gathered::Active(at, reqs)
    })
}

/// Puts requests `gather` took back into their slots.
fn scatter(at: Vec<Slot>, reqs: Vec<Request<'static>>) {
    for ((_, h, p, comm), r) in at.into_iter().zip(reqs) {
        put_back(h, Active::Volpex(Pending(r, comm)), p);
    }
}

/// MPI_Waitany / MPI_Testany (`block` false): the index of a completed request and its
/// status; `Some((UNDEFINED, empty))` when no request is active; `None` when testing
/// found nothing complete.
pub fn any(hs: &mut [c_int], block: bool) -> Result<Option<(c_int, MpiStatus)>> {
    match gather(hs)? {
        Gathered::None => Ok(Some((UNDEFINED, inactive()))),
        Gathered::Done(i, st) => Ok(Some((i as c_int, st))),
        Gathered::Active(mut at, mut reqs) => {
            let r = if block {
                volpex::wait_any(&mut reqs)
            } else {
                volpex::test_any(&mut reqs)
            };
            let done = match r {
                Ok(Some((k, st))) => {
                    let (i, _, p, _) = at.remove(k);
                    finish(&mut hs[i], p);
                    Some((i as c_int, status_of(&st)))
                }
                Ok(None) => None,
                Err(e) => {
                    let comm = at.first().map_or(crate::handles::COMM_WORLD, |s| s.3);
                    scatter(at, reqs);
                    return Err(MpiError::from(e).on(comm));
                }
            };
            scatter(at, reqs);
            Ok(done)
        }
    }
}

/// MPI_Waitsome / MPI_Testsome: the completed requests' indices and statuses; `None`
/// when no request is active (outcount MPI_UNDEFINED).
pub fn some(hs: &mut [c_int], block: bool) -> Result<Option<Vec<(c_int, MpiStatus)>>> {
    match gather(hs)? {
        Gathered::None => Ok(None),
        Gathered::Done(i, st) => Ok(Some(vec![(i as c_int, st)])),
        Gathered::Active(mut at, mut reqs) => {
            let r = if block {
                volpex::wait_some(&mut reqs)
            } else {
                volpex::test_some(&mut reqs)
            };
            match r {
                Ok(done) => {
                    let mut out = Vec::with_capacity(done.len());
                    // Indices refer to the list before removal, in ascending order.
                    for (k, st) in done.iter().rev() {
                        let (i, _, p, _) = at.remove(*k);
                        finish(&mut hs[i], p);
                        out.push((i as c_int, status_of(st)));
                    }
                    out.reverse();
                    scatter(at, reqs);
                    Ok(Some(out))
                }
                Err(e) => {
                    let comm = at.first().map_or(crate::handles::COMM_WORLD, |s| s.3);
                    scatter(at, reqs);
                    Err(MpiError::from(e).on(comm))
                }
            }
        }
    }
}
