//! Persistent requests and completion in `mpi.h` (MPI-3.1 sections 3.7-3.9): `*_init`,
//! start, wait, test and their any/some/all forms, request status, cancel and free;
//! generalized requests and statuses (sections 12.2, 12.3). Thin shells over `request`
//! and `grequest`; never owns a request's state.

use super::*;
use crate::state::SendMode;

// ---- Persistent requests ----

fn send_init(
    (name, mode): (&'static str, SendMode),
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    guard(name, comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let region = reg(buf, &t, n)?;
        comm::size(comm)?;
        let h = request::add_persistent(state::Persistent {
            send: Some(mode),
            comm,
            region,
            dt: t,
            count: n,
            peer: dest,
            tag,
        })?;
        set(request, "request", h)
    })
}

variants! {
    fn(
        buf: *const c_void,
        count: c_int,
        datatype: Dtype,
        dest: c_int,
        tag: c_int,
        comm: Comm,
        request: *mut c_int,
    ) => send_init;
    MPI_Send_init = SendMode::Standard,
    MPI_Ssend_init = SendMode::Synchronous,
    MPI_Bsend_init = SendMode::Buffered,
    MPI_Rsend_init = SendMode::Ready,
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Recv_init", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let region = reg(buf, &t, n)?;
        comm::size(comm)?;
        let h = request::add_persistent(state::Persistent {
            send: None,
            comm,
            region,
            dt: t,
            count: n,
            peer: source,
            tag,
        })?;
        set(request, "request", h)
    })
}

/// Starts persistent request `h`.
fn start(h: c_int) -> Result<()> {
    let p = request::to_start(h)?;
    let active = if let Some(mode) = p.send {
        // SAFETY: the buffer given to MPI_Send_init holds `count` elements whenever the
        // request is started (MPI-3.1 section 3.9); the send copies it before returning.
        let b = unsafe { raw::read(p.region, p.dt.clone()) };
        p2p::start_send(p.comm, &b, p.count, (p.peer, p.tag), mode)?
    } else {
        // SAFETY: the buffer given to MPI_Recv_init stays valid and untouched until the
        // started receive completes (MPI-3.1 sections 3.7.2 and 3.9).
        let mem = unsafe { recv_until_complete(p.region, p.dt, p.count) };
        p2p::start_recv(p.comm, mem, p.peer, p.tag)?
    };
    request::activate(h, active)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Start(req: *mut c_int) -> c_int {
    guard("MPI_Start", COMM_WORLD, || {
        // SAFETY: `req` points to a request handle.
        let h = unsafe { raw::input(req, "request") }?;
        start(*h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Startall(count: c_int, reqs: *mut c_int) -> c_int {
    guard("MPI_Startall", COMM_WORLD, || {
        let hs = request_array(count, reqs)?;
        hs.iter().try_for_each(|&h| start(h))
    })
}

// ---- Completion ----

fn request_array<'a>(n: c_int, reqs: *mut c_int) -> Result<&'a mut [c_int]> {
    // SAFETY: an array of `count` requests (MPI-3.1 section 3.7.5).
    unsafe { raw::array_mut(reqs, cnt(n)?, "array_of_requests") }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Wait(req: *mut c_int, status: *mut MpiStatus) -> c_int {
    guard("MPI_Wait", COMM_WORLD, || {
        // SAFETY: `req` points to a request handle.
        let h = unsafe { raw::out(req, "request") }?;
        // While a window allows locks, a serving call (`rma::passive`).
        let st = if crate::rma::passive::active() {
            crate::rma::passive::serve(&super::rma::memory, || request::test(h))?
        } else {
            request::wait(h)?
        };
        set_status(status, st)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Test(
    req: *mut c_int,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Test", COMM_WORLD, || {
        // SAFETY: `req` points to a request handle.
        let h = unsafe { raw::out(req, "request") }?;
        set_flag_status(flag, status, request::test(h)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status(
    req: c_int,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Request_get_status", COMM_WORLD, || {
        set_flag_status(flag, status, request::get_status(req)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cancel(req: *mut c_int) -> c_int {
    guard("MPI_Cancel", COMM_WORLD, || {
        // SAFETY: `req` points to a request handle.
        let h = unsafe { raw::out(req, "request") }?;
        request::cancel(*h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Request_free(req: *mut c_int) -> c_int {
    guard("MPI_Request_free", COMM_WORLD, || {
        // SAFETY: `req` points to a request handle.
        let h = unsafe { raw::out(req, "request") }?;
        request::free(h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitall(
    count: c_int,
    reqs: *mut c_int,
    statuses: *mut MpiStatus,
) -> c_int {
    guard("MPI_Waitall", COMM_WORLD, || {
        let hs = request_array(count, reqs)?;
        // SAFETY: `count` statuses, or MPI_STATUSES_IGNORE.
        let sts = unsafe { raw::statuses(statuses, hs.len()) }?;
        request::wait_all(hs, sts)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testall(
    count: c_int,
    reqs: *mut c_int,
    flag: *mut c_int,
    statuses: *mut MpiStatus,
) -> c_int {
    guard("MPI_Testall", COMM_WORLD, || {
        let hs = request_array(count, reqs)?;
        // SAFETY: `count` statuses, or MPI_STATUSES_IGNORE.
        let sts = unsafe { raw::statuses(statuses, hs.len()) }?;
        let done = request::test_all(hs, sts)?;
        set(flag, "flag", c_int::from(done))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitany(
    count: c_int,
    reqs: *mut c_int,
    index: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Waitany", COMM_WORLD, || {
        let hs = request_array(count, reqs)?;
        let (i, st) = request::any(hs, true)?.unwrap_or((UNDEFINED, MpiStatus::empty()));
        set(index, "index", i)?;
        set_status(status, st)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testany(
    count: c_int,
    reqs: *mut c_int,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Testany", COMM_WORLD, || {
        let hs = request_array(count, reqs)?;
        match request::any(hs, false)? {
            Some((i, st)) => {
                set(index, "index", i)?;
                set(flag, "flag", 1)?;
                set_status(status, st)
            }
            None => {
                set(index, "index", UNDEFINED)?;
                set(flag, "flag", 0)
            }
        }
    })
}

/// MPI_Waitsome (`block`) and MPI_Testsome.
fn some_impl(
    (name, block): (&'static str, bool),
    incount: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MpiStatus,
) -> c_int {
    guard(name, COMM_WORLD, || {
        let hs = request_array(incount, reqs)?;
        let n = hs.len();
        let Some(done) = request::some(hs, block)? else {
            return set(outcount, "outcount", UNDEFINED);
        };
        // SAFETY: `incount` indices (MPI-3.1 section 3.7.5).
        let idx = unsafe { raw::array_mut(indices, n, "array_of_indices") }?;
        // SAFETY: `incount` statuses, or MPI_STATUSES_IGNORE.
        let sts = unsafe { raw::statuses(statuses, n) }?;
        let (done, result) = request::some_statuses(done, sts.is_some());
        for (k, (i, _)) in done.iter().enumerate() {
            idx[k] = *i;
        }
        if let Some(s) = sts {
            request::put_some_statuses(s, &done, result.is_err());
        }
        set(outcount, "outcount", done.len() as c_int)?;
        result
    })
}

variants! {
    fn(
        incount: c_int,
        reqs: *mut c_int,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MpiStatus,
    ) => some_impl;
    MPI_Waitsome = true,
    MPI_Testsome = false,
}

// ---- Generalized requests and statuses (MPI-3.1 sections 12.2, 12.3) ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Grequest_start(
    query_fn: Option<raw::GreqQueryFn>,
    free_fn: Option<raw::GreqFreeFn>,
    cancel_fn: Option<raw::GreqCancelFn>,
    extra_state: *mut c_void,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Grequest_start", COMM_WORLD, || {
        let fns = raw::GreqFns::C {
            query: query_fn,
            free: free_fn,
            cancel: cancel_fn,
        };
        let h = request::start_generalized(fns, extra_state as usize)?;
        set(request, "request", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Grequest_complete(request: c_int) -> c_int {
    guard("MPI_Grequest_complete", COMM_WORLD, || {
        request::complete_generalized(request)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_cancelled(status: *mut MpiStatus, flag: c_int) -> c_int {
    guard("MPI_Status_set_cancelled", COMM_WORLD, || {
        // SAFETY: `status` points to a status the program owns.
        let st = unsafe { raw::out(status, "status") }?;
        st.cancelled = c_int::from(flag != 0);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements(
    status: *mut MpiStatus,
    datatype: Dtype,
    count: c_int,
) -> c_int {
    guard("MPI_Status_set_elements", COMM_WORLD, || {
        // SAFETY: `status` points to a status the program owns.
        let st = unsafe { raw::out(status, "status") }?;
        p2p::set_elements(st, &*dt(datatype)?, i64::from(count))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_set_elements_x(
    status: *mut MpiStatus,
    datatype: Dtype,
    count: i64,
) -> c_int {
    guard("MPI_Status_set_elements_x", COMM_WORLD, || {
        // SAFETY: `status` points to a status the program owns.
        let st = unsafe { raw::out(status, "status") }?;
        p2p::set_elements(st, &*dt(datatype)?, count)
    })
}
