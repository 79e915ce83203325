//! Requests of immediate operations (MPI-3.1 section 3.7), persistent ones (section 3.9)
//! and generalized ones (section 12.2, `grequest`), and their completion: `Wait`, `Test`
//! and the `all`/`any`/`some` families, over `volpex::Request`.
//!
//! Which of several requests `Waitany`/`Testany`/`Waitsome`/`Testsome` report depends on
//! timing, so they go through `volpex::wait_any` and friends, which make every replica of
//! the rank report the same ones. A request is taken out of its table slot while a call
//! waits on it (its handle stays reserved) and released when it completes; a persistent
//! request goes back to its slot, inactive, until the next `MPI_Start`.
//!
//! Owns the operations on the request table; what an entry holds (`state::ReqEntry`,
//! `Active`, `Persistent`) is defined with the table. Must never call a generalized
//! request's functions itself (`grequest` does, where section 12.2 says).

use std::os::raw::c_int;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use volpex::Request;

use crate::error::{MpiError, Result};
use crate::grequest::{self, Grequest};
use crate::handles::{class, MpiStatus, ANY_SOURCE, ANY_TAG, COMM_WORLD, NULL, UNDEFINED};
use crate::raw::{GreqFns, Pending};
use crate::state::{self, Active, Persistent, ReqEntry};

/// MPI_Grequest_start (MPI-3.1 section 12.2): a new active generalized request that
/// completes when the program calls `complete_generalized` on it.
pub fn start_generalized(fns: GreqFns, extra: usize) -> Result<c_int> {
    let world = state::comm(COMM_WORLD)?;
    let done = Arc::new(AtomicBool::new(false));
    let g = grequest::new(fns, extra, done.clone());
    let r = volpex::Request::generalized(&world, done);
    let h = add(Active::Generalized(Pending(r, COMM_WORLD), g.clone()))?;
    grequest::register(h, g);
    Ok(h)
}

/// MPI_Grequest_complete: request `h` is done; a wait on it returns (from any thread).
/// If the program freed it already, its free function runs now.
pub fn complete_generalized(h: c_int) -> Result<()> {
    if let Some(g) = grequest::complete(h)? {
        state::with(|s| s.requests.remove(h).map(drop))?;
        g.free_function()?;
    }
    Ok(())
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

/// Waits for operation `a` of request `h` to complete.
fn complete(h: c_int, a: Active) -> Result<MpiStatus> {
    match a {
        Active::Done(st) => Ok(st),
        Active::Volpex(r) => {
            let comm = r.1;
            r.0.wait()
                .map(|st| status_of(&st))
                .map_err(|e| MpiError::from(e).on(comm))
        }
        Active::Generalized(r, g) => {
            let comm = r.1;
            r.0.wait().map_err(|e| MpiError::from(e).on(comm))?;
            grequest::finished(h, &g)
        }
    }
}

/// Completes operation `a` of request `h` if it is complete: its status; `None` (and `a`
/// as it was) when it is not.
fn try_complete(h: c_int, a: &mut Active) -> Result<Option<MpiStatus>> {
    match a {
        Active::Done(st) => Ok(Some(*st)),
        Active::Volpex(r) => {
            let comm = r.1;
            r.0.test()
                .map(|o| o.as_ref().map(status_of))
                .map_err(|e| MpiError::from(e).on(comm))
        }
        Active::Generalized(_, g) if !g.is_done() => Ok(None),
        Active::Generalized(_, g) => grequest::finished(h, g).map(Some),
    }
}

/// Whether operation `a` is complete (a receive that is takes its message).
fn is_complete(a: &mut Active) -> Result<bool> {
    match a {
        Active::Done(_) => Ok(true),
        Active::Generalized(_, g) => Ok(g.is_done()),
        Active::Volpex(r) => {
            let comm = r.1;
            r.0.test()
                .map(|o| o.is_some())
                .map_err(|e| MpiError::from(e).on(comm))
        }
    }
}

/// MPI_Wait (while a window allows locks, `ffi`'s MPI_Wait serves instead: it tests
/// the request between serving its origins' requests, `rma::passive`).
pub fn wait(h: &mut c_int) -> Result<MpiStatus> {
    let Some((a, p)) = take_active(*h)? else {
        return Ok(inactive());
    };
    let r = complete(*h, a);
    finish(h, p);
    r
}

/// MPI_Test: completes `*h` if it can without waiting.
pub fn test(h: &mut c_int) -> Result<Option<MpiStatus>> {
    let Some((mut a, p)) = take_active(*h)? else {
        return Ok(Some(inactive()));
    };
    let r = try_complete(*h, &mut a);
    if let Ok(None) = r {
        put_back(*h, a, p);
        return Ok(None);
    }
    finish(h, p);
    r
}

/// MPI_Request_get_status: like MPI_Test, but the request stays as it is (a done
/// generalized request's query function runs; its free function does not).
pub fn get_status(h: c_int) -> Result<Option<MpiStatus>> {
    let Some((mut a, p)) = take_active(h)? else {
        return Ok(Some(inactive()));
    };
    let st = match &mut a {
        Active::Done(st) => Ok(Some(*st)),
        Active::Generalized(_, g) => match g.is_done() {
            true => g.query().map(Some),
            false => Ok(None),
        },
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
/// status then says whether it was cancelled (MPI_Test_cancelled). A generalized
/// request's cancel function is called (its query function then says). A send,
/// complete from the start (its message is in the sender log), an immediate collective,
/// a completed request and an inactive persistent one are left as they are.
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
        Active::Generalized(_, g) => g.cancel(),
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
/// message when it arrives; a generalized request not yet complete stays until
/// MPI_Grequest_complete, which then calls its free function.
pub fn free(h: &mut c_int) -> Result<()> {
    let e = state::with(|s| s.requests.take(*h))?;
    let handle = *h;
    *h = NULL;
    if let (Some(Active::Generalized(_, g)), None) = (&e.active, &e.persistent) {
        let g = g.clone();
        let r = grequest::free(handle, &g);
        if let Ok(false) = r {
            put_back_entry(handle, e);
            return Ok(());
        }
        release(handle);
        return r.map(drop);
    }
    release(handle);
    Ok(())
}

fn put_back_entry(h: c_int, e: ReqEntry) {
    let _ = state::with(|s| {
        s.requests.put_back(h, e);
        Ok(())
    });
}

fn release(h: c_int) {
    let _ = state::with(|s| {
        s.requests.release(h);
        Ok(())
    });
}

/// The error of a multiple completion call whose statuses say which operations failed
/// (MPI-3.1 section 3.7.5: MPI_ERR_IN_STATUS when there are statuses to say it in).
fn in_status(e: MpiError, statuses: bool) -> MpiError {
    if !statuses {
        return e;
    }
    let comm = e.comm;
    let mut err = MpiError::new(class::IN_STATUS, e.msg);
    err.comm = comm;
    err
}

/// Writes `st` into a status of a multiple completion call: its MPI_ERROR field as it was
/// unless `failed` (the call returns MPI_ERR_IN_STATUS, and each status says how its
/// operation ended).
fn put_status(slot: &mut MpiStatus, st: MpiStatus, failed: bool) {
    let error = if failed { st.MPI_ERROR } else { slot.MPI_ERROR };
    *slot = MpiStatus {
        MPI_ERROR: error,
        ..st
    };
}

/// MPI_Waitall. `statuses` has one entry per request, or is None (MPI_STATUSES_IGNORE).
pub fn wait_all(hs: &mut [c_int], mut statuses: Option<&mut [MpiStatus]>) -> Result<()> {
    let mut first: Option<MpiError> = None;
    let mut done = Vec::with_capacity(hs.len());
    for h in hs.iter_mut() {
        done.push(match wait(h) {
            Ok(st) => st,
            Err(e) => {
                let mut st = inactive();
                st.MPI_ERROR = e.class;
                first.get_or_insert(e);
                st
            }
        });
    }
    if let Some(sts) = statuses.as_deref_mut() {
        for (slot, st) in sts.iter_mut().zip(done) {
            put_status(slot, st, first.is_some());
        }
    }
    match first {
        None => Ok(()),
        Some(e) => Err(in_status(e, statuses.is_some())),
    }
}

/// MPI_Testall: completes every request if all are complete, else none.
pub fn test_all(hs: &mut [c_int], statuses: Option<&mut [MpiStatus]>) -> Result<bool> {
    for &h in hs.iter() {
        let Some((mut a, p)) = take_active(h)? else {
            continue;
        };
        let r = is_complete(&mut a);
        put_back(h, a, p);
        if !r? {
            return Ok(false);
        }
    }
    wait_all(hs, statuses)?;
    Ok(true)
}

/// An active request `gather` took out of the table.
struct Slot {
    /// Its index in the caller's array.
    at: usize,
    handle: c_int,
    persistent: Option<Persistent>,
    comm: c_int,
    /// Set for a generalized request.
    greq: Option<Arc<Grequest>>,
}

impl Slot {
    /// Gives the request back to its table slot.
    fn put_back(self, r: Request<'static>) {
        let a = match self.greq {
            Some(g) => Active::Generalized(Pending(r, self.comm), g),
            None => Active::Volpex(Pending(r, self.comm)),
        };
        put_back(self.handle, a, self.persistent);
    }

    /// Its request completed with `st`: the caller's handle is finished, and the MPI
    /// status says how it ended (MPI_ERROR set when it failed).
    fn finish(self, hs: &mut [c_int], st: &volpex::Status) -> (c_int, Result<MpiStatus>) {
        let r = match &self.greq {
            Some(g) => grequest::finished(self.handle, g),
            None => Ok(status_of(st)),
        };
        finish(&mut hs[self.at], self.persistent);
        (self.at as c_int, r)
    }
}

/// The active requests among `hs`, taken out of the table.
enum Gathered {
    None,
    Done(usize, MpiStatus),
    Active(Vec<Slot>, Vec<Request<'static>>),
}

fn gather(hs: &mut [c_int]) -> Result<Gathered> {
    let mut at: Vec<Slot> = Vec::new();
    let mut reqs = Vec::new();
    for (i, h) in hs.iter_mut().enumerate() {
        let (r, greq, p) = match take_active(*h) {
            Ok(None) => continue,
            Ok(Some((Active::Done(st), p))) => {
                finish(h, p);
                scatter(at, reqs);
                return Ok(Gathered::Done(i, st));
            }
            Ok(Some((Active::Volpex(r), p))) => (r, None, p),
            Ok(Some((Active::Generalized(r, g), p))) => (r, Some(g), p),
            Err(e) => {
                scatter(at, reqs);
                return Err(e);
            }
        };
        at.push(Slot {
            at: i,
            handle: *h,
            persistent: p,
            comm: r.1,
            greq,
        });
        reqs.push(r.0);
    }
    Ok(if at.is_empty() {
        Gathered::None
    } else {
        Gathered::Active(at, reqs)
    })
}

/// Puts requests `gather` took back into their slots.
fn scatter(at: Vec<Slot>, reqs: Vec<Request<'static>>) {
    for (slot, r) in at.into_iter().zip(reqs) {
        slot.put_back(r);
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
            match r {
                Ok(Some((k, st))) => {
                    let (i, done) = at.remove(k).finish(hs, &st);
                    scatter(at, reqs);
                    done.map(|st| Some((i, st)))
                }
                Ok(None) => {
                    scatter(at, reqs);
                    Ok(None)
                }
                Err(e) => {
                    let comm = at.first().map_or(COMM_WORLD, |s| s.comm);
                    scatter(at, reqs);
                    Err(MpiError::from(e).on(comm))
                }
            }
        }
    }
}

/// One request a "some" call completed: its index, and its status or error.
pub type Completed = (c_int, Result<MpiStatus>);

/// MPI_Waitsome / MPI_Testsome: the completed requests' indices and statuses; `None`
/// when no request is active (outcount MPI_UNDEFINED).
pub fn some(hs: &mut [c_int], block: bool) -> Result<Option<Vec<Completed>>> {
    match gather(hs)? {
        Gathered::None => Ok(None),
        Gathered::Done(i, st) => Ok(Some(vec![(i as c_int, Ok(st))])),
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
                        out.push(at.remove(*k).finish(hs, st));
                    }
                    out.reverse();
                    scatter(at, reqs);
                    Ok(Some(out))
                }
                Err(e) => {
                    let comm = at.first().map_or(COMM_WORLD, |s| s.comm);
                    scatter(at, reqs);
                    Err(MpiError::from(e).on(comm))
                }
            }
        }
    }
}

/// The statuses of a "some" call's completed requests, and its error: MPI_ERR_IN_STATUS
/// (or the first error, with MPI_STATUSES_IGNORE) when any failed, each status then
/// saying how its request ended.
pub fn some_statuses(
    done: Vec<Completed>,
    statuses: bool,
) -> (Vec<(c_int, MpiStatus)>, Result<()>) {
    let mut first = None;
    let out = done
        .into_iter()
        .map(|(i, r)| match r {
            Ok(st) => (i, st),
            Err(e) => {
                let mut st = inactive();
                st.MPI_ERROR = e.class;
                first.get_or_insert(e);
                (i, st)
            }
        })
        .collect();
    (out, first.map_or(Ok(()), |e| Err(in_status(e, statuses))))
}

/// Writes the statuses of a "some" call (`put_status`).
pub fn put_some_statuses(slots: &mut [MpiStatus], done: &[(c_int, MpiStatus)], failed: bool) {
    for (slot, (_, st)) in slots.iter_mut().zip(done) {
        put_status(slot, *st, failed);
    }
}
