//! Requests of immediate operations (MPI-3.1 section 3.7) and their completion: `Wait`,
//! `Test` and the `all`/`any`/`some` families, over `volpex::Request`.
//!
//! Which of several requests `Waitany`/`Testany`/`Waitsome`/`Testsome` report depends on
//! timing, so they go through `volpex::wait_any` and friends, which make every replica of
//! the rank report the same ones. A request is taken out of its table slot while a call
//! waits on it (its handle stays reserved) and released when it completes.

use std::os::raw::c_int;

use volpex::Request;

use crate::error::{MpiError, Result};
use crate::ffi::raw::Pending;
use crate::handles::{class, MpiStatus, ANY_SOURCE, ANY_TAG, NULL, UNDEFINED};
use crate::state;

/// A request in the table.
pub enum ReqEntry {
    /// A volpex request (a send's is complete from the start).
    Active(Pending),
    /// Complete with this status (an operation with MPI_PROC_NULL).
    Done(MpiStatus),
}

/// Adds a request, returns its handle.
pub fn add(e: ReqEntry) -> Result<c_int> {
    state::with(|s| Ok(s.requests.insert(e)))
}

/// The status of a completed volpex operation.
pub fn status_of(st: &volpex::Status) -> MpiStatus {
    MpiStatus::new(st.source_rank(), st.tag(), st.count_bytes())
}

/// The status of a wait on an inactive request (MPI-3.1 section 3.7.3).
fn inactive() -> MpiStatus {
    MpiStatus::new(ANY_SOURCE, ANY_TAG, 0)
}

fn take(h: c_int) -> Result<ReqEntry> {
    state::with(|s| s.requests.take(h))
}

fn put_back(h: c_int, e: ReqEntry) {
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

/// MPI_Wait: completes `*h` and sets it to MPI_REQUEST_NULL.
pub fn wait(h: &mut c_int) -> Result<MpiStatus> {
    if *h == NULL {
        return Ok(inactive());
    }
    let e = take(*h)?;
    release(*h);
    *h = NULL;
    match e {
        ReqEntry::Done(st) => Ok(st),
        ReqEntry::Active(p) => Ok(status_of(&p.0.wait()?)),
    }
}

/// MPI_Test: completes `*h` if it can without waiting.
pub fn test(h: &mut c_int) -> Result<Option<MpiStatus>> {
    if *h == NULL {
        return Ok(Some(inactive()));
    }
    let e = take(*h)?;
    let done = match e {
        ReqEntry::Done(st) => Some(st),
        ReqEntry::Active(mut p) => match p.0.test() {
            Ok(Some(st)) => Some(status_of(&st)),
            Ok(None) => {
                put_back(*h, ReqEntry::Active(p));
                return Ok(None);
            }
            Err(e) => {
                release(*h);
                *h = NULL;
                return Err(e.into());
            }
        },
    };
    release(*h);
    *h = NULL;
    Ok(done)
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
        Some(e) if statuses.is_some() => Err(MpiError::new(class::IN_STATUS, e.msg)),
        Some(e) => Err(e),
    }
}

/// MPI_Testall: completes every request if all are complete, else none.
pub fn test_all(hs: &mut [c_int], statuses: Option<&mut [MpiStatus]>) -> Result<bool> {
    for h in hs.iter() {
        if *h == NULL {
            continue;
        }
        let mut e = take(*h)?;
        let ready = match &mut e {
            ReqEntry::Done(_) => true,
            ReqEntry::Active(p) => match p.0.test() {
                Ok(r) => r.is_some(),
                Err(err) => {
                    put_back(*h, e);
                    return Err(err.into());
                }
            },
        };
        put_back(*h, e);
        if !ready {
            return Ok(false);
        }
    }
    wait_all(hs, statuses)?;
    Ok(true)
}

/// The active requests among `hs`, taken out of the table: (index in `hs`, handle) and
/// the volpex requests, or the first one already complete without volpex.
enum Gathered {
    None,
    Done(usize, MpiStatus),
    Active(Vec<(usize, c_int)>, Vec<Request<'static>>),
}

fn gather(hs: &[c_int]) -> Result<Gathered> {
    let mut at = Vec::new();
    let mut reqs = Vec::new();
    for (i, &h) in hs.iter().enumerate() {
        if h == NULL {
            continue;
        }
        match take(h) {
            Ok(ReqEntry::Done(st)) => {
                release(h);
                scatter(at, reqs);
                return Ok(Gathered::Done(i, st));
            }
            Ok(ReqEntry::Active(p)) => {
                at.push((i, h));
                reqs.push(p.0);
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
fn scatter(at: Vec<(usize, c_int)>, reqs: Vec<Request<'static>>) {
    for ((_, h), r) in at.into_iter().zip(reqs) {
        put_back(h, ReqEntry::Active(Pending(r)));
    }
}

/// MPI_Waitany / MPI_Testany (`block` false): the index of a completed request and its
/// status; `Some((UNDEFINED, empty))` when no request is active; `None` when testing
/// found nothing complete.
pub fn any(hs: &mut [c_int], block: bool) -> Result<Option<(c_int, MpiStatus)>> {
    match gather(hs)? {
        Gathered::None => Ok(Some((UNDEFINED, inactive()))),
        Gathered::Done(i, st) => {
            hs[i] = NULL;
            Ok(Some((i as c_int, st)))
        }
        Gathered::Active(mut at, mut reqs) => {
            let r = if block {
                volpex::wait_any(&mut reqs)
            } else {
                volpex::test_any(&mut reqs)
            };
            let done = match r {
                Ok(Some((k, st))) => {
                    let (i, h) = at.remove(k);
                    release(h);
                    hs[i] = NULL;
                    Some((i as c_int, status_of(&st)))
                }
                Ok(None) => None,
                Err(e) => {
                    scatter(at, reqs);
                    return Err(e.into());
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
        Gathered::Done(i, st) => {
            hs[i] = NULL;
            Ok(Some(vec![(i as c_int, st)]))
        }
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
                        let (i, h) = at.remove(*k);
                        release(h);
                        hs[i] = NULL;
                        out.push((i as c_int, status_of(st)));
                    }
                    out.reverse();
                    scatter(at, reqs);
                    Ok(Some(out))
                }
                Err(e) => {
                    scatter(at, reqs);
                    Err(e.into())
                }
            }
        }
    }
}
