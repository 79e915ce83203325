//! Point-to-point calls of `mpi.h` (MPI-3.1 chapter 3): blocking and immediate sends and
//! receives in every mode, probes (also matching ones), sendrecv, counts and the
//! buffered-send buffer. Thin shells over `p2p`; never keeps a pointer past the call
//! except an immediate call's buffer, which `request` holds.

use super::*;
use crate::state::SendMode;

fn send_impl(
    (name, mode): (&'static str, SendMode),
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
) -> c_int {
    guard(name, comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = reg(buf, &t, n)?;
        // SAFETY: MPI_Send's buffer holds `count` elements of `datatype` (MPI-3.1 3.2.2).
        let b = unsafe { raw::read(r, t) };
        p2p::send(comm, &b, n, (dest, tag), mode)
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
    ) => send_impl;
    MPI_Send = SendMode::Standard,
    MPI_Ssend = SendMode::Synchronous,
    MPI_Bsend = SendMode::Buffered,
    MPI_Rsend = SendMode::Ready,
}

fn isend_impl(
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
        let r = reg(buf, &t, n)?;
        // SAFETY: as MPI_Send, and the program neither frees nor changes the buffer until
        // the request completes (MPI-3.1 section 3.7.2): a lent buffer is given back by
        // the request's completion or free (`volpex::transport::Core::give_back`).
        let b = unsafe { raw::read_until_complete(r, t) };
        let h = p2p::isend(comm, &b, n, (dest, tag), mode)?;
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
    ) => isend_impl;
    MPI_Isend = SendMode::Standard,
    MPI_Issend = SendMode::Synchronous,
    MPI_Ibsend = SendMode::Buffered,
    MPI_Irsend = SendMode::Ready,
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Recv", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = reg(buf, &t, n)?;
        if crate::rma::passive::active() {
            // A serving call (`rma::passive`): an immediate receive, tested between
            // serving origins' requests.
            // SAFETY: MPI_Recv's buffer has room for `count` elements (MPI-3.1 3.2.4),
            // and the call does not return before the receive completed.
            let mem = unsafe { recv_until_complete(r, t, n) };
            let mut h = p2p::irecv(comm, mem, source, tag)?;
            let st = crate::rma::passive::serve(&super::rma::memory, || request::test(&mut h))?;
            return set_status(status, st);
        }
        // SAFETY: MPI_Recv's buffer has room for `count` elements (MPI-3.1 3.2.4).
        let mut b = unsafe { raw::write(r, t) };
        let st = p2p::recv(comm, &mut b, n, source, tag)?;
        set_status(status, st)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    source: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Irecv", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = reg(buf, &t, n)?;
        // SAFETY: the receive buffer stays valid and untouched until the request
        // completes (MPI-3.1 section 3.7.2).
        let mem = unsafe { recv_until_complete(r, t, n) };
        let h = p2p::irecv(comm, mem, source, tag)?;
        set(request, "request", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Sendrecv", comm, || {
        let (st_, sn) = (dt(sendtype)?, cnt(sendcount)?);
        let (rt, rn) = (dt(recvtype)?, cnt(recvcount)?);
        let (sr, rr) = (reg(sendbuf, &st_, sn)?, reg(recvbuf, &rt, rn)?);
        let mut store = datatype::Packed::default();
        let recv = (&rr, &*rt, &[(0, rn)][..]);
        // SAFETY: MPI_Sendrecv's send buffer as MPI_Send's; the receive buffer is made
        // after it, and no byte is both sent and received (checked; MPI-3.1 3.10).
        let s = unsafe { raw::read_apart(&mut store, sr, st_, &[(0, sn)], Some(recv)) }?;
        // SAFETY: as MPI_Recv's; apart from the send data (above).
        let mut r = unsafe { raw::write(rr, rt) };
        let st = p2p::sendrecv(comm, (&s, sn, dest, sendtag), (&mut r, rn, source, recvtag))?;
        set_status(status, st)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: Comm,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Sendrecv_replace", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = reg(buf, &t, n)?;
        // SAFETY: `count` elements of `datatype`, read then written (MPI-3.1 3.10).
        let mut b = unsafe { raw::write(r, t) };
        let st = p2p::sendrecv_replace(comm, &mut b, n, (dest, sendtag), (source, recvtag))?;
        set_status(status, st)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Probe", comm, || {
        let st = p2p::probe(comm, source, tag)?;
        set_status(status, st)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Iprobe", comm, || {
        set_flag_status(flag, status, p2p::iprobe(comm, source, tag)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Mprobe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Mprobe", comm, || {
        let (m, st) = p2p::mprobe(comm, source, tag)?;
        set(message, "message", m)?;
        set_status(status, st)
    })
}

/// Runs `f` (MPI_Mrecv, MPI_Imrecv) on matched message `*message` and a receive buffer
/// of `count` elements of `datatype` at `buf`.
fn with_matched<T>(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    message: *mut c_int,
    f: impl FnOnce(&mut c_int, &mut datatype::BufMut<'_>, usize) -> Result<T>,
) -> Result<T> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    let r = reg(buf, &t, n)?;
    // SAFETY: `message` points to a message handle.
    let m = unsafe { raw::out(message, "message") }?;
    // SAFETY: room for `count` elements (MPI-3.1 section 3.8.3); both calls receive the
    // message before they return.
    let mut b = unsafe { raw::write(r, t) };
    f(m, &mut b, n)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Mrecv", COMM_WORLD, || {
        let st = with_matched(buf, count, datatype, message, p2p::mrecv)?;
        set_status(status, st)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    message: *mut c_int,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Imrecv", COMM_WORLD, || {
        let h = with_matched(buf, count, datatype, message, p2p::imrecv)?;
        set(request, "request", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_count(
    status: *const MpiStatus,
    datatype: Dtype,
    count: *mut c_int,
) -> c_int {
    guard("MPI_Get_count", COMM_WORLD, || {
        // SAFETY: `status` points to a status a completed operation filled.
        let st = unsafe { raw::input(status, "status") }?;
        let t = dt(datatype)?;
        set(count, "count", p2p::get_count(st, &t))
    })
}

/// MPI_Improbe: an immediate probe, then a matched probe of the message it saw (nothing
/// can take that message in between: calls are serialized, MPI_THREAD_SERIALIZED).
#[no_mangle]
pub unsafe extern "C" fn MPI_Improbe(
    source: c_int,
    tag: c_int,
    comm: Comm,
    flag: *mut c_int,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Improbe", comm, || {
        match p2p::iprobe(comm, source, tag)? {
            Some(st) if st.MPI_SOURCE == crate::handles::PROC_NULL => {
                set(flag, "flag", 1)?;
                set(message, "message", crate::handles::MESSAGE_NO_PROC)?;
                set_status(status, st)
            }
            Some(st) => {
                let (m, st2) = p2p::mprobe(comm, st.MPI_SOURCE, st.MPI_TAG)?;
                set(flag, "flag", 1)?;
                set(message, "message", m)?;
                set_status(status, st2)
            }
            None => set(flag, "flag", 0),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Test_cancelled(status: *const MpiStatus, flag: *mut c_int) -> c_int {
    guard("MPI_Test_cancelled", COMM_WORLD, || {
        // SAFETY: as MPI_Get_count.
        let st = unsafe { raw::input(status, "status") }?;
        set(flag, "flag", st.cancelled)
    })
}

/// MPI_Buffer_attach: the buffer MPI_Bsend checks messages against (see `p2p::bsend`).
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    guard("MPI_Buffer_attach", COMM_WORLD, || {
        state::with(|_| Ok(()))?;
        p2p::bsend::attach(buffer as usize, size)
    })
}

/// MPI_Buffer_detach: the buffer and size attached, at once (no buffered message is ever
/// kept in it; see `p2p::bsend`).
#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    guard("MPI_Buffer_detach", COMM_WORLD, || {
        state::with(|_| Ok(()))?;
        // SAFETY: `buffer_addr` points to a `void *` (MPI-3.1 section 3.6.1).
        let out = unsafe { raw::out(buffer_addr as *mut *mut c_void, "buffer_addr") }?;
        let (addr, n) = p2p::bsend::detach();
        *out = addr as *mut c_void;
        set(size, "size", n)
    })
}
