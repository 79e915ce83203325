//! The exported C functions of `mpi.h`. Each one is a thin shell: it turns its C
//! arguments into checked Rust values through `raw` (the only `unsafe` in the crate),
//! calls the safe layer, and answers through `error::guard` with the communicator's error
//! handler. Functions not implemented yet are in `stubs`.
//!
//! # Safety
//!
//! Every function taking a pointer is `unsafe`: its pointers must be what the MPI
//! standard says they are (a buffer of `count` elements of the datatype, an `int` to
//! write, ...). `raw` documents what it checks and what it trusts. The private helpers
//! here (`set`, `set_status`, `request_array`) are only ever given pointer arguments of
//! the exported function that calls them.
// The exported functions are documented by `mpi.h` and the MPI standard.
#![allow(missing_docs)]
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![allow(non_snake_case)]
#![allow(clippy::missing_safety_doc)]
#![allow(clippy::too_many_arguments)]

mod fortran;
mod mpix;
mod pmpi;
pub mod raw;
mod stubs;

use std::ffi::{c_char, c_void};
use std::os::raw::c_int;
use std::sync::Arc;

use crate::coll::{self, Blocks};
use crate::comm::{self, SetOp};
use crate::datatype::{self, Datatype};
use crate::error::{self, guard, MpiError, Result};
use crate::handles::{
    class, MpiStatus, COMM_WORLD, MAX_ERROR_STRING, MAX_LIBRARY_VERSION_STRING, MAX_OBJECT_NAME,
    MAX_PROCESSOR_NAME, NULL, UNDEFINED,
};
use crate::state::{self, Phase};
use crate::topo::{self, Cart};
use crate::{p2p, request, types};
use raw::Region;

type Comm = c_int;
type Dtype = c_int;

fn dt(h: Dtype) -> Result<Arc<Datatype>> {
    state::datatype(h)
}

fn cnt(c: c_int) -> Result<usize> {
    datatype::count(c)
}

/// The region of `count` elements of `t` at `p`.
fn reg(p: *const c_void, t: &Datatype, count: usize) -> Result<Region> {
    raw::region(p, t, &[(0, count)])
}

/// Blocks (first element, count) of a `v` collective from C counts and displacements.
fn blocks(counts: &[c_int], displs: &[c_int]) -> Result<Blocks> {
    counts
        .iter()
        .zip(displs)
        .map(|(&c, &d)| Ok((i128::from(d), cnt(c)?)))
        .collect()
}

fn set_status(p: *mut MpiStatus, st: MpiStatus) -> Result<()> {
    // SAFETY: `p` is the status argument of an MPI call: null (ignored) or writable.
    if let Some(s) = unsafe { raw::status(p) }? {
        *s = st;
    }
    Ok(())
}

fn set<T>(p: *mut T, what: &str, v: T) -> Result<()> {
    // SAFETY: `p` is an output argument of an MPI call: a writable `T`.
    *unsafe { raw::out(p, what) }? = v;
    Ok(())
}

fn size_of_comm(comm: Comm) -> Result<usize> {
    Ok(comm::size(comm)? as usize)
}

// ---- Environment ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    guard("MPI_Init", COMM_WORLD, || state::init(0).map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    guard("MPI_Init_thread", COMM_WORLD, || {
        let p = state::init(required)?;
        set(provided, "provided", p)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Finalize() -> c_int {
    guard("MPI_Finalize", COMM_WORLD, state::finalize)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Initialized(flag: *mut c_int) -> c_int {
    guard("MPI_Initialized", COMM_WORLD, || {
        set(
            flag,
            "flag",
            c_int::from(state::phase() != Phase::NotStarted),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Finalized(flag: *mut c_int) -> c_int {
    guard("MPI_Finalized", COMM_WORLD, || {
        set(
            flag,
            "flag",
            c_int::from(state::phase() == Phase::Finalized),
        )
    })
}

#[no_mangle]
pub extern "C" fn MPI_Abort(comm: Comm, errorcode: c_int) -> c_int {
    eprintln!(
        "volpex-mpi: MPI_Abort(communicator {comm:#x}, error code {errorcode}){}",
        state::whoami()
    );
    // MPI_Abort's code as the library's `abort` uses it (1 for codes volpexrun reserves).
    std::process::exit(volpex::abort_exit_code(errorcode));
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Query_thread(provided: *mut c_int) -> c_int {
    guard("MPI_Query_thread", COMM_WORLD, || {
        let p = state::with(|s| Ok(s.thread_level))?;
        set(provided, "provided", p)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Is_thread_main(flag: *mut c_int) -> c_int {
    guard("MPI_Is_thread_main", COMM_WORLD, || {
        let main = state::with(|s| Ok(s.main_thread == std::thread::current().id()))?;
        set(flag, "flag", c_int::from(main))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    guard("MPI_Get_version", COMM_WORLD, || {
        set(version, "version", 3)?;
        set(subversion, "subversion", 1)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_library_version(
    version: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Get_library_version", COMM_WORLD, || {
        let v = format!(
            "Volpex MPI {} (MPI 3.1 C interface)",
            env!("CARGO_PKG_VERSION")
        );
        // SAFETY: MPI_MAX_LIBRARY_VERSION_STRING bytes at `version` (MPI-3.1 8.1.1).
        unsafe { raw::put_string(version, MAX_LIBRARY_VERSION_STRING, &v, resultlen) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
    guard("MPI_Get_processor_name", COMM_WORLD, || {
        let host = types::processor_name();
        // SAFETY: MPI_MAX_PROCESSOR_NAME bytes at `name` (MPI-3.1 section 8.1.1).
        unsafe { raw::put_string(name, MAX_PROCESSOR_NAME, &host, resultlen) }
    })
}

#[no_mangle]
pub extern "C" fn MPI_Wtime() -> f64 {
    volpex::wtime()
}

#[no_mangle]
pub extern "C" fn MPI_Wtick() -> f64 {
    1e-9
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alloc_mem(size: isize, _info: c_int, baseptr: *mut c_void) -> c_int {
    guard("MPI_Alloc_mem", COMM_WORLD, || {
        let n = usize::try_from(size).map_err(|_| MpiError::arg(format!("invalid size {size}")))?;
        let p = raw::alloc_mem(n)
            .ok_or_else(|| MpiError::new(34, format!("cannot allocate {n} bytes")))?;
        set(baseptr as *mut *mut c_void, "baseptr", p)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Free_mem(base: *mut c_void) -> c_int {
    guard("MPI_Free_mem", COMM_WORLD, || {
        // SAFETY: `base` is a block MPI_Alloc_mem returned (MPI-3.1 section 8.2).
        unsafe { raw::free_mem(base) };
        Ok(())
    })
}

// ---- Errors ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Error_string(
    code: c_int,
    string: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Error_string", COMM_WORLD, || {
        let s = error::error_string(code)
            .ok_or_else(|| MpiError::arg(format!("invalid error code {code}")))?;
        // SAFETY: MPI_MAX_ERROR_STRING bytes at `string` (MPI-3.1 section 8.4).
        unsafe { raw::put_string(string, MAX_ERROR_STRING, s, resultlen) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Error_class(code: c_int, errorclass: *mut c_int) -> c_int {
    guard("MPI_Error_class", COMM_WORLD, || {
        if error::error_string(code).is_none() {
            return Err(MpiError::arg(format!("invalid error code {code}")));
        }
        set(errorclass, "errorclass", code)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Comm_set_errhandler(comm: Comm, errhandler: c_int) -> c_int {
    guard("MPI_Comm_set_errhandler", comm, || {
        state::set_errhandler(comm, errhandler)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Errhandler_set(comm: Comm, errhandler: c_int) -> c_int {
    guard("MPI_Errhandler_set", comm, || {
        state::set_errhandler(comm, errhandler)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_errhandler(comm: Comm, errhandler: *mut c_int) -> c_int {
    guard("MPI_Comm_get_errhandler", comm, || {
        let e = state::with(|s| Ok(s.comms.get(comm)?.errhandler))?;
        set(errhandler, "errhandler", e)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_get(comm: Comm, errhandler: *mut c_int) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Comm_get_errhandler(comm, errhandler) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_free(errhandler: *mut c_int) -> c_int {
    guard("MPI_Errhandler_free", COMM_WORLD, || {
        // SAFETY: `errhandler` points to an error handler handle.
        let h = unsafe { raw::out(errhandler, "errhandler") }?;
        // A handler stays while communicators may use it (MPI-3.1 section 8.3.4): freeing
        // only clears the handle.
        state::with(|s| s.errhandlers.get(*h).map(drop))?;
        *h = NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_errhandler(
    f: Option<raw::ErrFn>,
    errhandler: *mut c_int,
) -> c_int {
    guard("MPI_Comm_create_errhandler", COMM_WORLD, || {
        let f = f.ok_or_else(|| MpiError::arg("comm_errhandler_fn is a null pointer"))?;
        let h = state::with(|s| Ok(s.errhandlers.insert(Some(f))))?;
        set(errhandler, "errhandler", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Errhandler_create(
    f: Option<raw::ErrFn>,
    errhandler: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Comm_create_errhandler(f, errhandler) }
}

#[no_mangle]
pub extern "C" fn MPI_Comm_call_errhandler(comm: Comm, errorcode: c_int) -> c_int {
    guard("MPI_Comm_call_errhandler", comm, || {
        Err(MpiError::new(
            errorcode,
            "MPI_Comm_call_errhandler called by the program",
        ))
    })
}

// ---- Point-to-point ----

fn send_impl(
    name: &'static str,
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
        p2p::send(comm, &b, n, dest, tag)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Send(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
) -> c_int {
    send_impl("MPI_Send", buf, count, datatype, dest, tag, comm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
) -> c_int {
    send_impl("MPI_Ssend", buf, count, datatype, dest, tag, comm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
) -> c_int {
    send_impl("MPI_Bsend", buf, count, datatype, dest, tag, comm)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
) -> c_int {
    send_impl("MPI_Rsend", buf, count, datatype, dest, tag, comm)
}

fn isend_impl(
    name: &'static str,
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
        // SAFETY: as MPI_Send; the send is complete (copied) when the call returns.
        let b = unsafe { raw::read(r, t) };
        let h = p2p::isend(comm, &b, n, dest, tag)?;
        set(request, "request", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Isend(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    isend_impl("MPI_Isend", buf, count, datatype, dest, tag, comm, request)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Issend(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    isend_impl("MPI_Issend", buf, count, datatype, dest, tag, comm, request)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibsend(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    isend_impl("MPI_Ibsend", buf, count, datatype, dest, tag, comm, request)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Irsend(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    isend_impl("MPI_Irsend", buf, count, datatype, dest, tag, comm, request)
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
        if !t.contiguous {
            return Err(MpiError::new(
                class::TYPE,
                format!(
                    "{}: immediate receives into non-contiguous datatypes are not implemented yet",
                    t.name
                ),
            ));
        }
        let r = reg(buf, &t, n)?;
        // SAFETY: the receive buffer stays valid and untouched until the request
        // completes (MPI-3.1 section 3.7.2).
        let mem = unsafe { raw::write_until_complete(r) };
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
        raw::disjoint(&sr, &rr)?;
        // SAFETY: MPI_Sendrecv's buffers as MPI_Send's and MPI_Recv's; disjoint (checked).
        let (s, mut r) = unsafe { (raw::read(sr, st_), raw::write(rr, rt)) };
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
        match p2p::iprobe(comm, source, tag)? {
            Some(st) => {
                set(flag, "flag", 1)?;
                set_status(status, st)
            }
            None => set(flag, "flag", 0),
        }
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    message: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard("MPI_Mrecv", COMM_WORLD, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = reg(buf, &t, n)?;
        // SAFETY: `message` points to a message handle.
        let m = unsafe { raw::out(message, "message") }?;
        // SAFETY: room for `count` elements (MPI-3.1 section 3.8.3).
        let mut b = unsafe { raw::write(r, t) };
        let st = p2p::mrecv(m, &mut b, n)?;
        set_status(status, st)
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements(
    status: *const MpiStatus,
    datatype: Dtype,
    count: *mut c_int,
) -> c_int {
    guard("MPI_Get_elements", COMM_WORLD, || {
        // SAFETY: as MPI_Get_count.
        let st = unsafe { raw::input(status, "status") }?;
        let t = dt(datatype)?;
        let n = match t.base {
            Some(p) if p.size() > 0 && st.bytes() % p.size() as u64 == 0 => {
                c_int::try_from(st.bytes() / p.size() as u64).unwrap_or(UNDEFINED)
            }
            _ => p2p::get_count(st, &t),
        };
        set(count, "count", n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements_x(
    status: *const MpiStatus,
    datatype: Dtype,
    count: *mut i64,
) -> c_int {
    guard("MPI_Get_elements_x", COMM_WORLD, || {
        let mut n: c_int = 0;
        // SAFETY: the same status and datatype; `n` is a local.
        let code = unsafe { MPI_Get_elements(status, datatype, &mut n) };
        if code != class::SUCCESS {
            return Err(MpiError::new(code, "MPI_Get_elements failed"));
        }
        set(count, "count", i64::from(n))
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_attach(_buffer: *mut c_void, _size: c_int) -> c_int {
    // Sends are buffered by the sender log; the user's buffer is never used.
    guard("MPI_Buffer_attach", COMM_WORLD, || state::with(|_| Ok(())))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    guard("MPI_Buffer_detach", COMM_WORLD, || {
        // SAFETY: `buffer_addr` points to a `void *` (MPI-3.1 section 3.6.1).
        *unsafe { raw::out(buffer_addr as *mut *mut c_void, "buffer_addr") }? =
            std::ptr::null_mut();
        set(size, "size", 0)
    })
}

// ---- Persistent requests ----

fn send_init(
    name: &'static str,
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
        let h = request::add_persistent(request::Persistent {
            send: true,
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

#[no_mangle]
pub unsafe extern "C" fn MPI_Send_init(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    send_init(
        "MPI_Send_init",
        buf,
        count,
        datatype,
        dest,
        tag,
        comm,
        request,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ssend_init(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    send_init(
        "MPI_Ssend_init",
        buf,
        count,
        datatype,
        dest,
        tag,
        comm,
        request,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    send_init(
        "MPI_Bsend_init",
        buf,
        count,
        datatype,
        dest,
        tag,
        comm,
        request,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rsend_init(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    dest: c_int,
    tag: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    send_init(
        "MPI_Rsend_init",
        buf,
        count,
        datatype,
        dest,
        tag,
        comm,
        request,
    )
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
        if !t.contiguous {
            return Err(MpiError::new(
                class::TYPE,
                format!(
                    "{}: persistent receives into non-contiguous datatypes are not implemented yet",
                    t.name
                ),
            ));
        }
        let region = reg(buf, &t, n)?;
        comm::size(comm)?;
        let h = request::add_persistent(request::Persistent {
            send: false,
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
    let active = if p.send {
        // SAFETY: the buffer given to MPI_Send_init holds `count` elements whenever the
        // request is started (MPI-3.1 section 3.9); the send copies it before returning.
        let b = unsafe { raw::read(p.region, p.dt.clone()) };
        p2p::start_send(p.comm, &b, p.count, p.peer, p.tag)?
    } else {
        // SAFETY: the buffer given to MPI_Recv_init stays valid and untouched until the
        // started receive completes (MPI-3.1 sections 3.7.2 and 3.9).
        let mem = unsafe { raw::write_until_complete(p.region) };
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
        let st = request::wait(h)?;
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
        match request::test(h)? {
            Some(st) => {
                set(flag, "flag", 1)?;
                set_status(status, st)
            }
            None => set(flag, "flag", 0),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Request_get_status(
    req: c_int,
    flag: *mut c_int,
    status: *mut MpiStatus,
) -> c_int {
    guard(
        "MPI_Request_get_status",
        COMM_WORLD,
        || match request::get_status(req)? {
            Some(st) => {
                set(flag, "flag", 1)?;
                set_status(status, st)
            }
            None => set(flag, "flag", 0),
        },
    )
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

fn some_impl(
    name: &'static str,
    block: bool,
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
        let mut sts = unsafe { raw::statuses(statuses, n) }?;
        for (k, (i, st)) in done.iter().enumerate() {
            idx[k] = *i;
            if let Some(s) = sts.as_deref_mut() {
                s[k] = *st;
            }
        }
        set(outcount, "outcount", done.len() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Waitsome(
    incount: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MpiStatus,
) -> c_int {
    some_impl(
        "MPI_Waitsome",
        true,
        incount,
        reqs,
        outcount,
        indices,
        statuses,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Testsome(
    incount: c_int,
    reqs: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MpiStatus,
) -> c_int {
    some_impl(
        "MPI_Testsome",
        false,
        incount,
        reqs,
        outcount,
        indices,
        statuses,
    )
}

// ---- Datatypes ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size(datatype: Dtype, size: *mut c_int) -> c_int {
    guard("MPI_Type_size", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(size, "size", c_int::try_from(t.size).unwrap_or(UNDEFINED))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_x(datatype: Dtype, size: *mut i64) -> c_int {
    guard("MPI_Type_size_x", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(size, "size", t.size as i64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent(
    datatype: Dtype,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    guard("MPI_Type_get_extent", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(lb, "lb", t.lb)?;
        set(extent, "extent", t.extent)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent(
    datatype: Dtype,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    guard("MPI_Type_get_true_extent", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(lb, "true_lb", t.true_lb)?;
        set(extent, "true_extent", t.true_ub - t.true_lb)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_extent(datatype: Dtype, extent: *mut isize) -> c_int {
    guard("MPI_Type_extent", COMM_WORLD, || {
        set(extent, "extent", types::any(datatype)?.extent)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_lb(datatype: Dtype, lb: *mut isize) -> c_int {
    guard("MPI_Type_lb", COMM_WORLD, || {
        set(lb, "lb", types::any(datatype)?.lb)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_ub(datatype: Dtype, ub: *mut isize) -> c_int {
    guard("MPI_Type_ub", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(ub, "ub", t.lb + t.extent)
    })
}

fn new_type(
    name: &'static str,
    newtype: *mut c_int,
    make: impl FnOnce() -> Result<Datatype>,
) -> c_int {
    guard(name, COMM_WORLD, || {
        let h = types::add(make()?)?;
        set(newtype, "newtype", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_contiguous(
    count: c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_contiguous", newtype, || {
        Datatype::derived(
            "MPI_Type_contiguous",
            &[(0, cnt(count)?, types::any(oldtype)?)],
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_vector", newtype, || {
        let old = types::any(oldtype)?;
        let stride = isize::try_from(stride).unwrap_or(0) * old.extent;
        types::hvector(
            "MPI_Type_vector",
            cnt(count)?,
            cnt(blocklength)?,
            stride,
            old,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hvector(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_hvector", newtype, || {
        types::hvector(
            "MPI_Type_create_hvector",
            cnt(count)?,
            cnt(blocklength)?,
            stride,
            types::any(oldtype)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_hvector(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_indexed(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_indexed", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` block lengths and displacements (MPI-3.1 section 4.1.4).
        let (lens, ds) = unsafe {
            (
                raw::array(blocklengths, n, "array_of_blocklengths")?,
                raw::array(displs, n, "array_of_displacements")?,
            )
        };
        let old = types::any(oldtype)?;
        let bytes: Vec<isize> = ds.iter().map(|&d| d as isize * old.extent).collect();
        types::hindexed("MPI_Type_indexed", lens, &bytes, old)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_hindexed", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` block lengths and byte displacements (MPI-3.1 section 4.1.5).
        let (lens, ds) = unsafe {
            (
                raw::array(blocklengths, n, "array_of_blocklengths")?,
                raw::array(displs, n, "array_of_displacements")?,
            )
        };
        types::hindexed("MPI_Type_create_hindexed", lens, ds, types::any(oldtype)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_hindexed(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Type_create_hindexed(count, blocklengths, displs, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_indexed_block(
    count: c_int,
    blocklength: c_int,
    displs: *const c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_indexed_block", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` displacements (MPI-3.1 section 4.1.4).
        let ds = unsafe { raw::array(displs, n, "array_of_displacements") }?;
        let old = types::any(oldtype)?;
        let bytes: Vec<isize> = ds.iter().map(|&d| d as isize * old.extent).collect();
        types::hindexed(
            "MPI_Type_create_indexed_block",
            &vec![blocklength; n],
            &bytes,
            old,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_block(
    count: c_int,
    blocklength: c_int,
    displs: *const isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_hindexed_block", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` byte displacements (MPI-3.1 section 4.1.5).
        let ds = unsafe { raw::array(displs, n, "array_of_displacements") }?;
        types::hindexed(
            "MPI_Type_create_hindexed_block",
            &vec![blocklength; n],
            ds,
            types::any(oldtype)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_subarray(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_subarray", newtype, || {
        let n = cnt(ndims)?;
        // SAFETY: `ndims` entries in each array (MPI-3.1 section 4.1.3).
        let (a, b, c) = unsafe {
            (
                raw::array(sizes, n, "array_of_sizes")?,
                raw::array(subsizes, n, "array_of_subsizes")?,
                raw::array(starts, n, "array_of_starts")?,
            )
        };
        let fortran = match order {
            56 => false,
            57 => true,
            o => return Err(MpiError::arg(format!("invalid order {o}"))),
        };
        types::subarray(a, b, c, fortran, types::any(oldtype)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_struct(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    typelist: *const c_int,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_struct", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` block lengths, byte displacements and types (MPI-3.1 4.1.2).
        let (lens, ds, ts) = unsafe {
            (
                raw::array(blocklengths, n, "array_of_blocklengths")?,
                raw::array(displs, n, "array_of_displacements")?,
                raw::array(typelist, n, "array_of_types")?,
            )
        };
        types::create_struct(lens, ds, ts)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_struct(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    typelist: *const c_int,
    newtype: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Type_create_struct(count, blocklengths, displs, typelist, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_resized(
    oldtype: Dtype,
    lb: isize,
    extent: isize,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_resized", newtype, || {
        Ok(types::any(oldtype)?.resized(lb, extent))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_dup(oldtype: Dtype, newtype: *mut c_int) -> c_int {
    new_type("MPI_Type_dup", newtype, || {
        let mut t = (*types::any(oldtype)?).clone();
        t.predefined = false;
        Ok(t)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_commit(datatype: *mut c_int) -> c_int {
    guard("MPI_Type_commit", COMM_WORLD, || {
        // SAFETY: `datatype` points to a datatype handle.
        let h = unsafe { raw::out(datatype, "datatype") }?;
        types::commit(*h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut c_int) -> c_int {
    guard("MPI_Type_free", COMM_WORLD, || {
        // SAFETY: `datatype` points to a datatype handle.
        let h = unsafe { raw::out(datatype, "datatype") }?;
        types::free(*h)?;
        *h = NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: Dtype,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Pack", comm, || {
        let (t, n) = (dt(datatype)?, cnt(incount)?);
        let (ir, or) = (
            reg(inbuf, &t, n)?,
            raw::bytes_region(outbuf, cnt(outsize)?)?,
        );
        raw::disjoint(&ir, &or)?;
        // SAFETY: `incount` elements in; `outsize` bytes out (MPI-3.1 section 4.2);
        // disjoint (checked).
        let (i, o) = unsafe { (raw::read(ir, t.clone()), raw::write(or, t)) };
        // SAFETY: `position` points to an int.
        let pos = unsafe { raw::out(position, "position") }?;
        types::pack(&i, n, o.mem, pos)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Unpack", comm, || {
        let (t, n) = (dt(datatype)?, cnt(outcount)?);
        let (ir, or) = (raw::bytes_region(inbuf, cnt(insize)?)?, reg(outbuf, &t, n)?);
        raw::disjoint(&ir, &or)?;
        // SAFETY: `insize` bytes in; room for `outcount` elements out (MPI-3.1 4.2);
        // disjoint (checked).
        let (i, mut o) = unsafe { (raw::read(ir, t.clone()), raw::write(or, t)) };
        // SAFETY: `position` points to an int.
        let pos = unsafe { raw::out(position, "position") }?;
        types::unpack(i.mem, pos, &mut o, n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_size(
    incount: c_int,
    datatype: Dtype,
    comm: Comm,
    size: *mut c_int,
) -> c_int {
    guard("MPI_Pack_size", comm, || {
        let n = types::any(datatype)?.bytes_of(cnt(incount)?)?;
        set(
            size,
            "size",
            c_int::try_from(n).map_err(|_| MpiError::new(class::COUNT, "too large"))?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_address(location: *const c_void, address: *mut isize) -> c_int {
    guard("MPI_Get_address", COMM_WORLD, || {
        set(address, "address", location as isize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Address(location: *const c_void, address: *mut isize) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Get_address(location, address) }
}

// ---- Collectives ----

#[no_mangle]
pub extern "C" fn MPI_Barrier(comm: Comm) -> c_int {
    guard("MPI_Barrier", comm, || coll::barrier(comm))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: Comm, request: *mut c_int) -> c_int {
    guard("MPI_Ibarrier", comm, || {
        set(request, "request", coll::ibarrier(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: Dtype,
    root: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Ibcast", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        if !t.contiguous {
            return Err(MpiError::new(
                class::TYPE,
                format!(
                    "{}: immediate broadcasts of non-contiguous datatypes are not implemented yet",
                    t.name
                ),
            ));
        }
        let r = reg(buffer, &t, n)?;
        // SAFETY: the buffer stays valid and untouched until the request completes
        // (MPI-3.1 section 5.12).
        let mem = unsafe { raw::write_until_complete(r) };
        set(request, "request", coll::ibcast(comm, mem, root)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Iallreduce", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        if !t.contiguous {
            return Err(MpiError::new(
                class::TYPE,
                format!(
                    "{}: immediate reductions of non-contiguous datatypes are not implemented yet",
                    t.name
                ),
            ));
        }
        let sr = red_send(sendbuf, &t, n)?;
        let rr = reg(recvbuf, &t, n)?;
        if let Some(s) = &sr {
            raw::disjoint(s, &rr)?;
        }
        // SAFETY: `count` elements to send, read during this call (the data is copied
        // before it returns); disjoint (checked).
        let s = sr.map(|s| unsafe { raw::read(s, t.clone()) });
        // SAFETY: the receive buffer stays valid and untouched until the request
        // completes (MPI-3.1 section 5.12).
        let mem = unsafe { raw::write_until_complete(rr) };
        set(
            request,
            "request",
            coll::iallreduce(comm, s.as_ref(), mem, &t, n, op)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Bcast", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = reg(buffer, &t, n)?;
        // SAFETY: `count` elements of `datatype`, read at the root, written elsewhere.
        let mut b = unsafe { raw::write(r, t) };
        coll::bcast(comm, &mut b, n, root)
    })
}

/// The send side of a reduction: None for MPI_IN_PLACE.
fn red_send(sendbuf: *const c_void, t: &Arc<Datatype>, n: usize) -> Result<Option<Region>> {
    if raw::in_place(sendbuf) {
        Ok(None)
    } else {
        reg(sendbuf, t, n).map(Some)
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Reduce", comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let at_root = comm::rank(comm)? == root;
        let sr = red_send(sendbuf, &t, n)?;
        let rr = if at_root {
            Some(reg(recvbuf, &t, n)?)
        } else {
            None
        };
        if let (Some(s), Some(r)) = (&sr, &rr) {
            raw::disjoint(s, r)?;
        }
        // SAFETY: the send buffer holds `count` elements; the root's receive buffer has
        // room for them (recvbuf is significant only at the root); disjoint (checked).
        let s = sr.map(|s| unsafe { raw::read(s, t.clone()) });
        // SAFETY: as above.
        let mut r = rr.map(|r| unsafe { raw::write(r, t.clone()) });
        coll::reduce(comm, s.as_ref(), r.as_mut(), n, op, root)
    })
}

type Whole =
    fn(c_int, Option<&datatype::Buf<'_>>, &mut datatype::BufMut<'_>, usize, c_int) -> Result<()>;

fn whole_impl(
    name: &'static str,
    f: Whole,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    guard(name, comm, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let sr = red_send(sendbuf, &t, n)?;
        let rr = reg(recvbuf, &t, n)?;
        if let Some(s) = &sr {
            raw::disjoint(s, &rr)?;
        }
        // SAFETY: `count` elements in each buffer (MPI-3.1 5.9); disjoint (checked).
        let s = sr.map(|s| unsafe { raw::read(s, t.clone()) });
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, t) };
        f(comm, s.as_ref(), &mut r, n, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    whole_impl(
        "MPI_Allreduce",
        coll::allreduce,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    whole_impl(
        "MPI_Scan",
        coll::scan,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    whole_impl(
        "MPI_Exscan",
        coll::exscan,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Reduce_scatter_block", comm, || {
        let (t, n) = (dt(datatype)?, cnt(recvcount)?);
        let size = size_of_comm(comm)?;
        let total = n
            .checked_mul(size)
            .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
        let sr = red_send(sendbuf, &t, total)?;
        let rr = reg(recvbuf, &t, if sr.is_none() { total } else { n })?;
        if let Some(s) = &sr {
            raw::disjoint(s, &rr)?;
        }
        // SAFETY: size x recvcount elements to send, recvcount (or, in place, all) to
        // receive (MPI-3.1 5.10.1); disjoint (checked).
        let s = sr.map(|s| unsafe { raw::read(s, t.clone()) });
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, t) };
        coll::reduce_scatter_block(comm, s.as_ref(), &mut r, n, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Reduce_scatter", comm, || {
        let t = dt(datatype)?;
        let size = size_of_comm(comm)?;
        // SAFETY: one count per rank (MPI-3.1 section 5.10.1).
        let counts: Vec<usize> = unsafe { raw::array(recvcounts, size, "recvcounts") }?
            .iter()
            .map(|&c| cnt(c))
            .collect::<Result<_>>()?;
        let total: usize = counts.iter().sum();
        let mine = counts.get(comm::rank(comm)? as usize).copied().unwrap_or(0);
        let sr = red_send(sendbuf, &t, total)?;
        let rr = reg(recvbuf, &t, if sr.is_none() { total } else { mine })?;
        if let Some(s) = &sr {
            raw::disjoint(s, &rr)?;
        }
        // SAFETY: the sum of the counts to send, this rank's count (or, in place, all)
        // to receive; disjoint (checked).
        let s = sr.map(|s| unsafe { raw::read(s, t.clone()) });
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, t) };
        coll::reduce_scatter(comm, s.as_ref(), &mut r, &counts, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Gather", comm, || {
        let at_root = comm::rank(comm)? == root;
        let send = if at_root && raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let recv = if at_root {
            let (t, n) = (dt(recvtype)?, cnt(recvcount)?);
            let all = n
                .checked_mul(size_of_comm(comm)?)
                .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
            Some((reg(recvbuf, &t, all)?, t, n))
        } else {
            None
        };
        if let (Some(s), Some(r)) = (&send, &recv) {
            raw::disjoint(&s.0, &r.0)?;
        }
        // SAFETY: the send buffer holds sendcount elements; at the root the receive
        // buffer has room for size x recvcount (MPI-3.1 5.5); disjoint (checked).
        let s = send.map(|(r, t, n)| (unsafe { raw::read(r, t) }, n));
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, n)| (unsafe { raw::write(r, t) }, n));
        coll::gather(
            comm,
            s.as_ref().map(|(b, n)| (b, *n)),
            r.as_mut().map(|(b, n)| (b, *n)),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Gatherv", comm, || {
        let at_root = comm::rank(comm)? == root;
        let send = if at_root && raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let recv = if at_root {
            let t = dt(recvtype)?;
            let size = size_of_comm(comm)?;
            // SAFETY: one count and displacement per rank at the root (MPI-3.1 5.5).
            let bl = unsafe {
                blocks(
                    raw::array(recvcounts, size, "recvcounts")?,
                    raw::array(displs, size, "displs")?,
                )
            }?;
            Some((raw::region(recvbuf, &t, &bl)?, t, bl))
        } else {
            None
        };
        if let (Some(s), Some(r)) = (&send, &recv) {
            raw::disjoint(&s.0, &r.0)?;
        }
        // SAFETY: as MPI_Gather, with the root's blocks at their displacements.
        let s = send.map(|(r, t, n)| (unsafe { raw::read(r, t) }, n));
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, b)| (unsafe { raw::write(r, t) }, b));
        coll::gatherv(
            comm,
            s.as_ref().map(|(b, n)| (b, *n)),
            r.as_mut().map(|(b, bl)| (b, std::mem::take(bl))),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Scatter", comm, || {
        let at_root = comm::rank(comm)? == root;
        let send = if at_root {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            let all = n
                .checked_mul(size_of_comm(comm)?)
                .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
            Some((reg(sendbuf, &t, all)?, t, n))
        } else {
            None
        };
        let recv = if at_root && raw::in_place(recvbuf) {
            None
        } else {
            let (t, n) = (dt(recvtype)?, cnt(recvcount)?);
            Some((reg(recvbuf, &t, n)?, t, n))
        };
        if let (Some(s), Some(r)) = (&send, &recv) {
            raw::disjoint(&s.0, &r.0)?;
        }
        // SAFETY: at the root size x sendcount elements to send; recvcount elements of
        // room (MPI-3.1 5.6); disjoint (checked).
        let s = send.map(|(r, t, n)| (unsafe { raw::read(r, t) }, n));
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, n)| (unsafe { raw::write(r, t) }, n));
        coll::scatter(
            comm,
            s.as_ref().map(|(b, n)| (b, *n)),
            r.as_mut().map(|(b, n)| (b, *n)),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Scatterv", comm, || {
        let at_root = comm::rank(comm)? == root;
        let send = if at_root {
            let t = dt(sendtype)?;
            let size = size_of_comm(comm)?;
            // SAFETY: one count and displacement per rank at the root (MPI-3.1 5.6).
            let bl = unsafe {
                blocks(
                    raw::array(sendcounts, size, "sendcounts")?,
                    raw::array(displs, size, "displs")?,
                )
            }?;
            Some((raw::region(sendbuf, &t, &bl)?, t, bl))
        } else {
            None
        };
        let recv = if at_root && raw::in_place(recvbuf) {
            None
        } else {
            let (t, n) = (dt(recvtype)?, cnt(recvcount)?);
            Some((reg(recvbuf, &t, n)?, t, n))
        };
        if let (Some(s), Some(r)) = (&send, &recv) {
            raw::disjoint(&s.0, &r.0)?;
        }
        // SAFETY: as MPI_Scatter, with the root's blocks at their displacements.
        let s = send.map(|(r, t, b)| (unsafe { raw::read(r, t) }, b));
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, n)| (unsafe { raw::write(r, t) }, n));
        coll::scatterv(
            comm,
            s.as_ref().map(|(b, bl)| (b, bl.clone())),
            r.as_mut().map(|(b, n)| (b, *n)),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Allgather", comm, || {
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let (rt, rn) = (dt(recvtype)?, cnt(recvcount)?);
        let all = rn
            .checked_mul(size_of_comm(comm)?)
            .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
        let rr = reg(recvbuf, &rt, all)?;
        if let Some(s) = &send {
            raw::disjoint(&s.0, &rr)?;
        }
        // SAFETY: sendcount elements to send, room for size x recvcount (MPI-3.1 5.7);
        // disjoint (checked).
        let s = send.map(|(r, t, n)| (unsafe { raw::read(r, t) }, n));
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::allgather(comm, s.as_ref().map(|(b, n)| (b, *n)), (&mut r, rn))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Allgatherv", comm, || {
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let rt = dt(recvtype)?;
        let size = size_of_comm(comm)?;
        // SAFETY: one count and displacement per rank (MPI-3.1 section 5.7).
        let bl = unsafe {
            blocks(
                raw::array(recvcounts, size, "recvcounts")?,
                raw::array(displs, size, "displs")?,
            )
        }?;
        let rr = raw::region(recvbuf, &rt, &bl)?;
        if let Some(s) = &send {
            raw::disjoint(&s.0, &rr)?;
        }
        // SAFETY: as MPI_Allgather, with blocks at their displacements.
        let s = send.map(|(r, t, n)| (unsafe { raw::read(r, t) }, n));
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::allgatherv(comm, s.as_ref().map(|(b, n)| (b, *n)), &mut r, bl)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Alltoall", comm, || {
        let size = size_of_comm(comm)?;
        let too_large = || MpiError::new(class::COUNT, "count too large");
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((
                reg(sendbuf, &t, n.checked_mul(size).ok_or_else(too_large)?)?,
                t,
                n,
            ))
        };
        let (rt, rn) = (dt(recvtype)?, cnt(recvcount)?);
        let rr = reg(recvbuf, &rt, rn.checked_mul(size).ok_or_else(too_large)?)?;
        if let Some(s) = &send {
            raw::disjoint(&s.0, &rr)?;
        }
        // SAFETY: size x count elements in each buffer (MPI-3.1 5.8); disjoint (checked).
        let s = send.map(|(r, t, n)| (unsafe { raw::read(r, t) }, n));
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::alltoall(comm, s.as_ref().map(|(b, n)| (b, *n)), (&mut r, rn))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Alltoallv", comm, || {
        let size = size_of_comm(comm)?;
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let t = dt(sendtype)?;
            // SAFETY: one count and displacement per rank (MPI-3.1 section 5.8).
            let bl = unsafe {
                blocks(
                    raw::array(sendcounts, size, "sendcounts")?,
                    raw::array(sdispls, size, "sdispls")?,
                )
            }?;
            Some((raw::region(sendbuf, &t, &bl)?, t, bl))
        };
        let rt = dt(recvtype)?;
        // SAFETY: as above.
        let rbl = unsafe {
            blocks(
                raw::array(recvcounts, size, "recvcounts")?,
                raw::array(rdispls, size, "rdispls")?,
            )
        }?;
        let rr = raw::region(recvbuf, &rt, &rbl)?;
        if let Some(s) = &send {
            raw::disjoint(&s.0, &rr)?;
        }
        // SAFETY: the blocks at their displacements in each buffer; disjoint (checked).
        let s = send.map(|(r, t, b)| (unsafe { raw::read(r, t) }, b));
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::alltoallv(comm, s.as_ref().map(|(b, bl)| (b, bl.clone())), &mut r, rbl)
    })
}

// ---- Communicators and groups ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_size(comm: Comm, size: *mut c_int) -> c_int {
    guard("MPI_Comm_size", comm, || {
        set(size, "size", comm::size(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_rank(comm: Comm, rank: *mut c_int) -> c_int {
    guard("MPI_Comm_rank", comm, || {
        set(rank, "rank", comm::rank(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: Comm, newcomm: *mut c_int) -> c_int {
    guard("MPI_Comm_dup", comm, || {
        set(newcomm, "newcomm", comm::dup(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut c_int,
) -> c_int {
    guard("MPI_Comm_split", comm, || {
        set(newcomm, "newcomm", comm::split(comm, color, key)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(comm: Comm, group: c_int, newcomm: *mut c_int) -> c_int {
    guard("MPI_Comm_create", comm, || {
        set(newcomm, "newcomm", comm::create(comm, group)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    guard("MPI_Comm_free", COMM_WORLD, || {
        // SAFETY: `comm` points to a communicator handle.
        let h = unsafe { raw::out(comm, "comm") }?;
        comm::free(h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_compare(a: Comm, b: Comm, result: *mut c_int) -> c_int {
    guard("MPI_Comm_compare", COMM_WORLD, || {
        set(result, "result", comm::compare(a, b)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: Comm, flag: *mut c_int) -> c_int {
    guard("MPI_Comm_test_inter", comm, || {
        comm::size(comm)?;
        set(flag, "flag", 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_group(comm: Comm, group: *mut c_int) -> c_int {
    guard("MPI_Comm_group", comm, || {
        set(group, "group", comm::group(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: Comm, name: *const c_char) -> c_int {
    guard("MPI_Comm_set_name", comm, || {
        // SAFETY: a NUL-terminated string (MPI-3.1 section 6.8).
        let n = unsafe { raw::string(name, "comm_name") }?;
        comm::set_name(comm, n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_name(
    comm: Comm,
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Comm_get_name", comm, || {
        let n = comm::get_name(comm)?;
        // SAFETY: MPI_MAX_OBJECT_NAME bytes at `name` (MPI-3.1 section 6.8).
        unsafe { raw::put_string(name, MAX_OBJECT_NAME, &n, resultlen) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: Comm,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Comm_get_attr", comm, || {
        if keyval & !0x00ff_ffff == crate::handles::TAG_KEYVAL {
            return match comm::user_attr(comm, keyval)? {
                Some(v) => {
                    // SAFETY: `value` points to a `void *` that receives the attribute.
                    *unsafe { raw::out(value as *mut usize, "attribute_val") }? = v;
                    set(flag, "flag", 1)
                }
                None => set(flag, "flag", 0),
            };
        }
        match comm::get_attr(comm, keyval)? {
            Some(v) => {
                // SAFETY: `value` points to a `void *` that receives the attribute's address.
                unsafe { raw::put_attr(value, v) }?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_attr(comm: Comm, keyval: c_int, value: *mut c_void) -> c_int {
    guard("MPI_Comm_set_attr", comm, || {
        comm::set_attr(comm, keyval, value as usize)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Attr_put(comm: Comm, keyval: c_int, value: *mut c_void) -> c_int {
    guard("MPI_Attr_put", comm, || {
        comm::set_attr(comm, keyval, value as usize)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Comm_delete_attr(comm: Comm, keyval: c_int) -> c_int {
    guard("MPI_Comm_delete_attr", comm, || {
        comm::delete_attr(comm, keyval)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Attr_delete(comm: Comm, keyval: c_int) -> c_int {
    guard("MPI_Attr_delete", comm, || comm::delete_attr(comm, keyval))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    copy: Option<raw::CopyAttrFn>,
    delete: Option<raw::DeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Comm_create_keyval", COMM_WORLD, || {
        let k = comm::create_keyval(crate::state::Keyval {
            copy,
            delete,
            extra: extra_state as usize,
        })?;
        set(keyval, "comm_keyval", k)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy: Option<raw::CopyAttrFn>,
    delete: Option<raw::DeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Comm_create_keyval(copy, delete, keyval, extra_state) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free_keyval(keyval: *mut c_int) -> c_int {
    guard("MPI_Comm_free_keyval", COMM_WORLD, || {
        // SAFETY: `keyval` points to an attribute key.
        let k = unsafe { raw::out(keyval, "comm_keyval") }?;
        comm::free_keyval(k)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: the same argument, under the same contract.
    unsafe { MPI_Comm_free_keyval(keyval) }
}

/// MPI_COMM_DUP_FN: the copy function that copies the attribute's value.
#[no_mangle]
pub unsafe extern "C" fn MPI_COMM_DUP_FN(
    _old: Comm,
    _key: c_int,
    _extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: called by this library's MPI_Comm_dup with a `void *` to fill and a flag.
    let out = unsafe { raw::out(value_out as *mut *mut c_void, "attribute_val_out") };
    match out {
        Ok(o) => {
            *o = value_in;
            match set(flag, "flag", 1) {
                Ok(()) => crate::handles::class::SUCCESS,
                Err(e) => e.class,
            }
        }
        Err(e) => e.class,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_get(
    comm: Comm,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Comm_get_attr(comm, keyval, value, flag) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_size(group: c_int, size: *mut c_int) -> c_int {
    guard("MPI_Group_size", COMM_WORLD, || {
        set(size, "size", comm::group_size(group)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_rank(group: c_int, rank: *mut c_int) -> c_int {
    guard("MPI_Group_rank", COMM_WORLD, || {
        set(rank, "rank", comm::group_rank(group)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_incl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    guard("MPI_Group_incl", COMM_WORLD, || {
        // SAFETY: `n` ranks (MPI-3.1 section 6.3.2).
        let rs = unsafe { raw::array(ranks, cnt(n)?, "ranks") }?;
        set(newgroup, "newgroup", comm::group_incl(group, rs)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_excl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    guard("MPI_Group_excl", COMM_WORLD, || {
        // SAFETY: `n` ranks (MPI-3.1 section 6.3.2).
        let rs = unsafe { raw::array(ranks, cnt(n)?, "ranks") }?;
        set(newgroup, "newgroup", comm::group_excl(group, rs)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_translate_ranks(
    a: c_int,
    n: c_int,
    ranks1: *const c_int,
    b: c_int,
    ranks2: *mut c_int,
) -> c_int {
    guard("MPI_Group_translate_ranks", COMM_WORLD, || {
        let n = cnt(n)?;
        // SAFETY: `n` ranks in, `n` out (MPI-3.1 section 6.3.1).
        let rs = unsafe { raw::array(ranks1, n, "ranks1") }?;
        let out = comm::translate_ranks(a, rs, b)?;
        // SAFETY: as above.
        let dst = unsafe { raw::array_mut(ranks2, n, "ranks2") }?;
        dst.copy_from_slice(&out);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_compare(a: c_int, b: c_int, result: *mut c_int) -> c_int {
    guard("MPI_Group_compare", COMM_WORLD, || {
        set(result, "result", comm::group_compare(a, b)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_union(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int {
    guard("MPI_Group_union", COMM_WORLD, || {
        set(newgroup, "newgroup", comm::group_set(a, b, SetOp::Union)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_intersection(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int {
    guard("MPI_Group_intersection", COMM_WORLD, || {
        set(
            newgroup,
            "newgroup",
            comm::group_set(a, b, SetOp::Intersection)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_difference(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int {
    guard("MPI_Group_difference", COMM_WORLD, || {
        set(
            newgroup,
            "newgroup",
            comm::group_set(a, b, SetOp::Difference)?,
        )
    })
}

fn range_impl(
    name: &'static str,
    incl: bool,
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    guard(name, COMM_WORLD, || {
        // SAFETY: `n` (first, last, stride) triplets (MPI-3.1 section 6.3.2).
        let rs = unsafe { raw::array(ranges, cnt(n)?, "ranges") }?;
        let ranks = comm::expand_ranges(group, rs)?;
        let g = if incl {
            comm::group_incl(group, &ranks)?
        } else {
            comm::group_excl(group, &ranks)?
        };
        set(newgroup, "newgroup", g)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_incl(
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    range_impl("MPI_Group_range_incl", true, group, n, ranges, newgroup)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_excl(
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    range_impl("MPI_Group_range_excl", false, group, n, ranges, newgroup)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_free(group: *mut c_int) -> c_int {
    guard("MPI_Group_free", COMM_WORLD, || {
        // SAFETY: `group` points to a group handle.
        let h = unsafe { raw::out(group, "group") }?;
        comm::group_free(h)
    })
}

// ---- Cartesian topologies ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    guard("MPI_Dims_create", COMM_WORLD, || {
        // SAFETY: `ndims` dimensions (MPI-3.1 section 7.5.2).
        let d = unsafe { raw::array_mut(dims, cnt(ndims)?, "dims") }?;
        topo::dims_create(nnodes, d)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_create(
    comm: Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut c_int,
) -> c_int {
    guard("MPI_Cart_create", comm, || {
        let n = cnt(ndims)?;
        // SAFETY: `ndims` dimensions and periods (MPI-3.1 section 7.5.1).
        let (d, p) = unsafe {
            (
                raw::array(dims, n, "dims")?,
                raw::array(periods, n, "periods")?,
            )
        };
        let cart = Cart {
            dims: d.to_vec(),
            periods: p.iter().map(|&x| x != 0).collect(),
        };
        set(comm_cart, "comm_cart", topo::cart_create(comm, cart)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Topo_test(comm: Comm, status: *mut c_int) -> c_int {
    guard("MPI_Topo_test", comm, || {
        set(status, "status", topo::topo_test(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: Comm, ndims: *mut c_int) -> c_int {
    guard("MPI_Cartdim_get", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        set(ndims, "ndims", cart.dims.len() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_get(
    comm: Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    guard("MPI_Cart_get", comm, || {
        let (cart, rank) = topo::cart_of(comm)?;
        let n = cart.dims.len().min(cnt(maxdims)?);
        let me = cart.coords(rank)?;
        // SAFETY: `maxdims` entries in each array (MPI-3.1 section 7.5.5).
        let (d, p, c) = unsafe {
            (
                raw::array_mut(dims, n, "dims")?,
                raw::array_mut(periods, n, "periods")?,
                raw::array_mut(coords, n, "coords")?,
            )
        };
        for i in 0..n {
            d[i] = cart.dims[i];
            p[i] = c_int::from(cart.periods[i]);
            c[i] = me[i];
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_rank(
    comm: Comm,
    coords: *const c_int,
    rank: *mut c_int,
) -> c_int {
    guard("MPI_Cart_rank", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        // SAFETY: one coordinate per dimension (MPI-3.1 section 7.5.5).
        let c = unsafe { raw::array(coords, cart.dims.len(), "coords") }?;
        set(rank, "rank", cart.rank(c)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    guard("MPI_Cart_coords", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        let me = cart.coords(rank)?;
        let n = me.len().min(cnt(maxdims)?);
        // SAFETY: `maxdims` coordinates (MPI-3.1 section 7.5.5).
        let c = unsafe { raw::array_mut(coords, n, "coords") }?;
        c.copy_from_slice(&me[..n]);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: Comm,
    direction: c_int,
    disp: c_int,
    source: *mut c_int,
    dest: *mut c_int,
) -> c_int {
    guard("MPI_Cart_shift", comm, || {
        let (cart, rank) = topo::cart_of(comm)?;
        let (s, d) = cart.shift(rank, direction, disp)?;
        set(source, "rank_source", s)?;
        set(dest, "rank_dest", d)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_sub(
    comm: Comm,
    remain_dims: *const c_int,
    newcomm: *mut c_int,
) -> c_int {
    guard("MPI_Cart_sub", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        // SAFETY: one flag per dimension (MPI-3.1 section 7.5.7).
        let r = unsafe { raw::array(remain_dims, cart.dims.len(), "remain_dims") }?;
        let remain: Vec<bool> = r.iter().map(|&x| x != 0).collect();
        set(newcomm, "newcomm", topo::cart_sub(comm, &remain)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_map(
    comm: Comm,
    ndims: c_int,
    dims: *const c_int,
    _periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    guard("MPI_Cart_map", comm, || {
        // SAFETY: `ndims` dimensions (MPI-3.1 section 7.5.8).
        let d = unsafe { raw::array(dims, cnt(ndims)?, "dims") }?;
        let n: c_int = d.iter().product();
        let rank = comm::rank(comm)?;
        set(newrank, "newrank", if rank < n { rank } else { UNDEFINED })
    })
}

// ---- Local reductions ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
) -> c_int {
    guard("MPI_Reduce_local", COMM_WORLD, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let (ir, or) = (reg(inbuf, &t, n)?, reg(inoutbuf, &t, n)?);
        raw::disjoint(&ir, &or)?;
        // SAFETY: `count` elements in each buffer (MPI-3.1 5.9.7); disjoint (checked).
        let (i, mut o) = unsafe { (raw::read(ir, t.clone()), raw::write(or, t)) };
        coll::reduce_local(&i, &mut o, n, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int {
    guard("MPI_Op_commutative", COMM_WORLD, || {
        let o = state::op(op)?;
        set(
            commute,
            "commute",
            c_int::from(o.user.is_none_or(|u| u.commute)),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_create(
    user_fn: Option<raw::UserFn>,
    commute: c_int,
    op: *mut c_int,
) -> c_int {
    guard("MPI_Op_create", COMM_WORLD, || {
        let f = user_fn.ok_or_else(|| MpiError::arg("user_fn is a null pointer"))?;
        let user = crate::op::User {
            f,
            commute: commute != 0,
        };
        let h = state::with(|s| {
            Ok(s.ops.insert(crate::op::Op {
                name: "a user operation",
                kind: crate::op::OpKind::NoOp,
                user: Some(user),
            }))
        })?;
        set(op, "op", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_free(op: *mut c_int) -> c_int {
    guard("MPI_Op_free", COMM_WORLD, || {
        // SAFETY: `op` points to an operation handle.
        let h = unsafe { raw::out(op, "op") }?;
        state::with(|s| s.ops.remove(*h).map(drop))?;
        *h = NULL;
        Ok(())
    })
}

// ---- Info objects ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_create(info: *mut c_int) -> c_int {
    guard("MPI_Info_create", COMM_WORLD, || {
        set(info, "info", types::info_create()?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_set(
    info: c_int,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    guard("MPI_Info_set", COMM_WORLD, || {
        // SAFETY: NUL-terminated strings (MPI-3.1 section 9).
        let (k, v) = unsafe { (raw::string(key, "key")?, raw::string(value, "value")?) };
        types::info_set(info, k, v)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get(
    info: c_int,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Info_get", COMM_WORLD, || {
        // SAFETY: a NUL-terminated key (MPI-3.1 section 9).
        let k = unsafe { raw::string(key, "key") }?;
        match types::info_get(info, &k)? {
            Some(v) => {
                let mut len = 0;
                // SAFETY: `valuelen` + 1 bytes at `value` (MPI-3.1 section 9).
                unsafe { raw::put_string(value, cnt(valuelen)? + 1, &v, &mut len) }?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_free(info: *mut c_int) -> c_int {
    guard("MPI_Info_free", COMM_WORLD, || {
        // SAFETY: `info` points to an info handle.
        let h = unsafe { raw::out(info, "info") }?;
        types::info_free(*h)?;
        *h = NULL;
        Ok(())
    })
}

// ---- Handle conversion: handles are the same integers in C and Fortran ----

macro_rules! same_handle {
    ($($f2c:ident $c2f:ident),*) => {$(
        #[no_mangle]
        pub extern "C" fn $f2c(h: c_int) -> c_int {
            h
        }
        #[no_mangle]
        pub extern "C" fn $c2f(h: c_int) -> c_int {
            h
        }
    )*};
}
same_handle!(
    MPI_Comm_f2c MPI_Comm_c2f,
    MPI_Type_f2c MPI_Type_c2f,
    MPI_Group_f2c MPI_Group_c2f,
    MPI_Op_f2c MPI_Op_c2f,
    MPI_Request_f2c MPI_Request_c2f,
    MPI_Errhandler_f2c MPI_Errhandler_c2f,
    MPI_Info_f2c MPI_Info_c2f
);
