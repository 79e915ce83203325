//! One-sided calls of `mpi.h` (MPI-3.1 chapter 11): windows, communication calls (also
//! request-based), active and passive target synchronization. Thin shells over `crate::rma`; errors go to the
//! window's error handler (`rma::object::guard`). A get's origin buffer is kept until the
//! synchronization that ends its epoch writes it (MPI-3.1 section 11.3.2 forbids the
//! program to touch it before), and a put's or an accumulate's until the one that sends
//! its data reads it (section 11.3: the program leaves it unchanged until the operation
//! completes); a request-based put's or accumulate's data are copied at the call, since
//! its request completes at once. Nothing else is kept past the call.

use std::borrow::Cow;

use super::*;
use crate::rma::access::{self, Target};
use crate::rma::batch::Window;
use crate::rma::{object, passive, shared, sync};
use crate::window::{FLAVOR_ALLOCATE, FLAVOR_CREATE, FLAVOR_DYNAMIC};

type Win = c_int;
type Aint = isize;

/// The window's memory for the synchronization call running on it.
pub(crate) fn memory(win: Win) -> Result<Box<dyn Window>> {
    if let Some(regions) = object::attached(win)? {
        return Ok(Box::new(raw::Attached(regions)));
    }
    let (base, size) = object::memory(win)?;
    // SAFETY: `base`/`size` are what MPI_Win_create was given or what MPI_Win_allocate
    // made, valid until MPI_Win_free (MPI-3.1 section 11.2); this call is inside MPI on
    // the window, and uses the slice only until it returns.
    let bytes: &'static mut [u8] = unsafe { raw::window_memory(base, size) }?;
    Ok(Box::new(raw::Block(bytes)))
}

fn target(rank: c_int, disp: Aint, count: c_int, datatype: Dtype) -> Result<Target> {
    Ok(Target {
        rank,
        disp,
        count: cnt(count)?,
        dt: dt(datatype)?,
    })
}

/// The packed bytes of `count` elements of `datatype` at `buf`, borrowed from the
/// origin buffer when it is contiguous: the synchronization that completes the
/// operation reads them (MPI-3.1 section 11.3: the program leaves an origin buffer
/// unchanged until then), so a put's data is copied once, into its request.
///
/// # Safety
/// `buf` holds `count` elements of `datatype` until the operation completes at the
/// origin (the epoch's end, a flush).
unsafe fn origin_data(
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
) -> Result<Cow<'static, [u8]>> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    let r = reg(buf, &t, n)?;
    // SAFETY: an origin buffer holds `count` elements of its datatype and the program
    // leaves it unchanged until the operation completes (the caller's contract).
    unsafe { raw::read_until_complete(r, t) }.bytes(0, n)
}

/// The packed bytes of `count` elements of `datatype` at `buf`, copied at the call (a
/// request-based put's buffer is free at once, as its request is).
fn packed(buf: *const c_void, count: c_int, datatype: Dtype) -> Result<Cow<'static, [u8]>> {
    // SAFETY: only for this call: the bytes are copied before it returns.
    let b = unsafe { origin_data(buf, count, datatype) }?;
    Ok(Cow::Owned(b.into_owned()))
}

/// `count` elements of `datatype` at `buf`, written when the epoch ends.
fn landing(
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
) -> Result<(datatype::BufMut<'static>, usize)> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    let r = reg(buf, &t, n)?;
    // SAFETY: a result buffer holds `count` writable elements of its datatype and the
    // program leaves it alone until the synchronization ending the epoch (11.3.2).
    Ok((unsafe { raw::write_typed_until_complete(r, t) }, n))
}

// ---- Windows (section 11.2) ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: Aint,
    disp_unit: c_int,
    info: c_int,
    comm: Comm,
    win: *mut Win,
) -> c_int {
    guard("MPI_Win_create", comm, || {
        let size = window_size(size)?;
        raw::bytes_region(base, size)?;
        let h = object::create(
            base as usize,
            size,
            disp_unit,
            crate::info::pairs(info)?,
            comm,
            FLAVOR_CREATE,
            false,
        )?;
        set(win, "win", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate(
    size: Aint,
    disp_unit: c_int,
    info: c_int,
    comm: Comm,
    baseptr: *mut c_void,
    win: *mut Win,
) -> c_int {
    guard("MPI_Win_allocate", comm, || {
        let n = window_size(size)?;
        let base = raw::alloc_mem(n.max(1))
            .ok_or_else(|| MpiError::new(class::NO_MEM, format!("{n} bytes for a window")))?;
        // Zeroed, so every replica's window starts the same.
        // SAFETY: `base` is a fresh allocation of at least `n` bytes.
        unsafe { std::ptr::write_bytes(base as *mut u8, 0, n) };
        let made = object::create(
            base as usize,
            n,
            disp_unit,
            crate::info::pairs(info)?,
            comm,
            FLAVOR_ALLOCATE,
            true,
        );
        let h = match made {
            Ok(h) => h,
            Err(e) => {
                // SAFETY: `base` came from `alloc_mem` just above and is not shared.
                unsafe { raw::free_mem(base) };
                return Err(e);
            }
        };
        set(baseptr as *mut *mut c_void, "baseptr", base)?;
        set(win, "win", h)
    })
}

/// MPI_Win_allocate_shared (MPI-3.1 section 11.2.3): `rma::shared`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate_shared(
    size: Aint,
    disp_unit: c_int,
    info: c_int,
    comm: Comm,
    baseptr: *mut c_void,
    win: *mut Win,
) -> c_int {
    guard("MPI_Win_allocate_shared", comm, || {
        let n = window_size(size)?;
        let (h, base) = shared::allocate(n, disp_unit, crate::info::pairs(info)?, comm)?;
        set(baseptr as *mut *mut c_void, "baseptr", base as *mut c_void)?;
        set(win, "win", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_shared_query(
    win: Win,
    rank: c_int,
    size: *mut Aint,
    disp_unit: *mut c_int,
    baseptr: *mut c_void,
) -> c_int {
    object::guard("MPI_Win_shared_query", win, || {
        let (n, unit, base) = shared::query(win, rank)?;
        set(size, "size", n as Aint)?;
        set(disp_unit, "disp_unit", unit)?;
        set(baseptr as *mut *mut c_void, "baseptr", base as *mut c_void)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_dynamic(info: c_int, comm: Comm, win: *mut Win) -> c_int {
    guard("MPI_Win_create_dynamic", comm, || {
        let h = object::create(
            0,
            0,
            1,
            crate::info::pairs(info)?,
            comm,
            FLAVOR_DYNAMIC,
            false,
        )?;
        set(win, "win", h)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_attach(win: Win, base: *mut c_void, size: Aint) -> c_int {
    object::guard("MPI_Win_attach", win, || {
        let size = usize::try_from(size)
            .map_err(|_| MpiError::new(class::SIZE, format!("attached size {size}")))?;
        raw::bytes_region(base, size)?;
        object::attach(win, base as usize, size)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_detach(win: Win, base: *const c_void) -> c_int {
    object::guard("MPI_Win_detach", win, || object::detach(win, base as usize))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free(win: *mut Win) -> c_int {
    // SAFETY: `win` points to a window handle.
    let h = unsafe { win.as_ref() }.copied().unwrap_or(NULL);
    object::guard("MPI_Win_free", h, || {
        // SAFETY: `win` points to a window handle (MPI-3.1 section 11.2.5).
        let w = unsafe { raw::out(win, "win") }?;
        let freed = object::free(w, &memory)?;
        shared::free(h);
        if let Some(base) = freed {
            // SAFETY: an MPI_Win_allocate window's memory came from `alloc_mem`, and the
            // window (the only holder of the address but the program) is gone.
            unsafe { raw::free_mem(base as *mut c_void) };
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_group(win: Win, group: *mut c_int) -> c_int {
    object::guard("MPI_Win_get_group", win, || {
        set(group, "group", object::group(win)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_set_name(win: Win, name: *const c_char) -> c_int {
    object::guard("MPI_Win_set_name", win, || {
        // SAFETY: a NUL-terminated string (MPI-3.1 section 6.8).
        let n = unsafe { raw::string(name, "win_name") }?;
        let n: String = n.chars().take(MAX_OBJECT_NAME - 1).collect();
        object::with(win, |e| {
            e.name = n;
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_name(
    win: Win,
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    object::guard("MPI_Win_get_name", win, || {
        let n = object::with(win, |e| Ok(e.name.clone()))?;
        // SAFETY: MPI_MAX_OBJECT_NAME bytes at `name` (MPI-3.1 section 6.8).
        unsafe { raw::put_string(name, MAX_OBJECT_NAME, &n, resultlen) }
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_set_info(win: Win, info: c_int) -> c_int {
    object::guard("MPI_Win_set_info", win, || {
        let hints = crate::info::pairs(info)?;
        object::with(win, |e| {
            for (k, v) in hints {
                e.info.retain(|(x, _)| *x != k);
                e.info.push((k, v));
            }
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_info(win: Win, info_used: *mut c_int) -> c_int {
    object::guard("MPI_Win_get_info", win, || {
        let hints = object::with(win, |e| Ok(e.info.clone()))?;
        set(info_used, "info_used", crate::info::from_pairs(hints)?)
    })
}

// ---- Attributes (section 6.7.4) ----

/// MPI_Win_create_keyval: window keys share the one key table.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_keyval(
    copy: Option<raw::CopyAttrFn>,
    delete: Option<raw::DeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Comm_create_keyval(copy, delete, keyval, extra_state) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free_keyval(keyval: *mut c_int) -> c_int {
    // SAFETY: the same argument, under the same contract.
    unsafe { MPI_Comm_free_keyval(keyval) }
}

#[no_mangle]
pub extern "C" fn MPI_Win_set_attr(win: Win, keyval: c_int, value: *mut c_void) -> c_int {
    object::guard("MPI_Win_set_attr", win, || {
        object::set_attr(win, keyval, value as usize)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_delete_attr(win: Win, keyval: c_int) -> c_int {
    object::guard("MPI_Win_delete_attr", win, || {
        object::delete_attr(win, keyval)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_attr(
    win: Win,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    object::guard("MPI_Win_get_attr", win, || {
        let v = match object::fixed_attr(win, keyval)? {
            // C gets where the value is (the base itself for MPI_WIN_BASE).
            Some((at, _)) => Some(at),
            None => object::user_attr(win, keyval)?,
        };
        match v {
            Some(v) => {
                // `attribute_val` points to a `void *` (MPI-3.1 section 6.7.4).
                set(value as *mut usize, "attribute_val", v)?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }
    })
}

// ---- Error handlers (section 8.3.2) ----

#[no_mangle]
pub extern "C" fn MPI_Win_set_errhandler(win: Win, errhandler: c_int) -> c_int {
    object::guard("MPI_Win_set_errhandler", win, || {
        state::with(|s| {
            s.errhandler_for(errhandler, state::ErrKind::Win)?;
            s.wins.get_mut(win)?.errhandler = errhandler;
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_errhandler(win: Win, errhandler: *mut c_int) -> c_int {
    object::guard("MPI_Win_get_errhandler", win, || {
        let e = object::with(win, |e| Ok(e.errhandler))?;
        set(errhandler, "errhandler", e)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_call_errhandler(win: Win, errorcode: c_int) -> c_int {
    object::guard("MPI_Win_call_errhandler", win, || {
        let h = state::with(|s| Ok(s.handler(s.wins.get(win)?.errhandler, win)))?;
        errhandler::call_handler("MPI_Win_call_errhandler", h, errorcode);
        Ok(())
    })
}

// ---- Communication calls (section 11.3) ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Put(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    win: Win,
) -> c_int {
    object::guard("MPI_Put", win, || {
        // SAFETY: the origin buffer is left unchanged until the epoch ends (MPI-3.1 11.3).
        let data = unsafe { origin_data(origin_addr, origin_count, origin_datatype) }?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        access::put(win, data, t)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    win: Win,
) -> c_int {
    object::guard("MPI_Get", win, || {
        let (buf, n) = landing(origin_addr, origin_count, origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        access::get(win, buf, n, t)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    op: c_int,
    win: Win,
) -> c_int {
    object::guard("MPI_Accumulate", win, || {
        // SAFETY: the origin buffer is left unchanged until the epoch ends (MPI-3.1 11.3).
        let data = unsafe { origin_data(origin_addr, origin_count, origin_datatype) }?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        access::accumulate(win, data, Some(&dt(origin_datatype)?), op, t, None)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    op: c_int,
    win: Win,
) -> c_int {
    object::guard("MPI_Get_accumulate", win, || {
        let no_op = state::op(op)?.kind == crate::op::OpKind::NoOp;
        let (data, origin) = if no_op {
            (Cow::Borrowed(&[][..]), None)
        } else {
            (
                // SAFETY: the origin buffer is left unchanged until the epoch ends (MPI-3.1 11.3).
                unsafe { origin_data(origin_addr, origin_count, origin_datatype) }?,
                Some(dt(origin_datatype)?),
            )
        };
        let result = landing(result_addr, result_count, result_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        access::accumulate(win, data, origin.as_ref(), op, t, Some(result))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    op: c_int,
    win: Win,
) -> c_int {
    object::guard("MPI_Fetch_and_op", win, || {
        let no_op = state::op(op)?.kind == crate::op::OpKind::NoOp;
        let data = if no_op {
            Cow::Borrowed(&[][..])
        } else {
            packed(origin_addr, 1, datatype)?
        };
        let result = landing(result_addr, 1, datatype)?;
        let t = target(target_rank, target_disp, 1, datatype)?;
        let origin = dt(datatype)?;
        access::accumulate(win, data, Some(&origin), op, t, Some(result))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    win: Win,
) -> c_int {
    object::guard("MPI_Compare_and_swap", win, || {
        let data = packed(origin_addr, 1, datatype)?;
        let compare = packed(compare_addr, 1, datatype)?;
        let (result, _) = landing(result_addr, 1, datatype)?;
        let t = target(target_rank, target_disp, 1, datatype)?;
        access::compare_and_swap(win, data, compare, result, t)
    })
}

// ---- Active target synchronization (section 11.5) ----

#[no_mangle]
pub extern "C" fn MPI_Win_fence(assert: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_fence", win, || sync::fence(win, assert, &memory))
}

#[no_mangle]
pub extern "C" fn MPI_Win_start(group: c_int, _assert: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_start", win, || sync::start(win, group))
}

#[no_mangle]
pub extern "C" fn MPI_Win_complete(win: Win) -> c_int {
    object::guard("MPI_Win_complete", win, || sync::complete(win, &memory))
}

#[no_mangle]
pub extern "C" fn MPI_Win_post(group: c_int, _assert: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_post", win, || sync::post(win, group))
}

#[no_mangle]
pub extern "C" fn MPI_Win_wait(win: Win) -> c_int {
    object::guard("MPI_Win_wait", win, || sync::wait(win, &memory))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Win_test(win: Win, flag: *mut c_int) -> c_int {
    object::guard("MPI_Win_test", win, || {
        let done = sync::test(win, &memory)?;
        set(flag, "flag", done as c_int)
    })
}

// ---- Passive target synchronization (section 11.5.3) ----

#[no_mangle]
pub extern "C" fn MPI_Win_lock(lock_type: c_int, rank: c_int, _assert: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_lock", win, || {
        passive::lock(win, passive::kind_of(lock_type)?, rank, &memory)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_unlock(rank: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_unlock", win, || {
        passive::unlock(win, rank, &memory)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_lock_all(_assert: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_lock_all", win, || passive::lock_all(win, &memory))
}

#[no_mangle]
pub extern "C" fn MPI_Win_unlock_all(win: Win) -> c_int {
    object::guard("MPI_Win_unlock_all", win, || {
        passive::unlock_all(win, &memory)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_flush(rank: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_flush", win, || passive::flush(win, rank, &memory))
}

/// A get's buffer is written only when its answer came, so a local flush is a flush.
#[no_mangle]
pub extern "C" fn MPI_Win_flush_local(rank: c_int, win: Win) -> c_int {
    object::guard("MPI_Win_flush_local", win, || {
        passive::flush(win, rank, &memory)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_flush_all(win: Win) -> c_int {
    object::guard("MPI_Win_flush_all", win, || {
        passive::flush_all(win, &memory)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_flush_local_all(win: Win) -> c_int {
    object::guard("MPI_Win_flush_local_all", win, || {
        passive::flush_all(win, &memory)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Win_sync(win: Win) -> c_int {
    object::guard("MPI_Win_sync", win, || {
        object::with(win, |_| Ok(()))?;
        passive::sync(&memory)
    })
}

// ---- Request-based operations (section 11.3.5) ----

/// The request of an operation on `rank` in a passive-target epoch: complete at once (a
/// put's and an accumulate's data were copied; `fetch`: the epoch's operations on the
/// target are flushed first, so a get's data is here).
fn rma_request(win: Win, rank: c_int, fetch: bool, request: *mut c_int) -> Result<()> {
    let locked = rank == crate::handles::PROC_NULL
        || object::with(win, |e| Ok(e.epoch.locks.contains_key(&rank)))?;
    if !locked {
        return Err(MpiError::new(
            class::RMA_SYNC,
            format!(
                "request-based operations need a passive-target epoch (rank {rank} is not locked)"
            ),
        ));
    }
    if fetch && rank != crate::handles::PROC_NULL {
        passive::flush(win, rank, &memory)?;
    }
    let h = request::add(state::Active::Done(MpiStatus::new(
        crate::handles::ANY_SOURCE,
        crate::handles::ANY_TAG,
        0,
    )))?;
    set(request, "request", h)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rput(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    win: Win,
    request: *mut c_int,
) -> c_int {
    object::guard("MPI_Rput", win, || {
        let data = packed(origin_addr, origin_count, origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        access::put(win, data, t)?;
        rma_request(win, target_rank, false, request)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rget(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    win: Win,
    request: *mut c_int,
) -> c_int {
    object::guard("MPI_Rget", win, || {
        let (buf, n) = landing(origin_addr, origin_count, origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        access::get(win, buf, n, t)?;
        rma_request(win, target_rank, true, request)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Raccumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    op: c_int,
    win: Win,
    request: *mut c_int,
) -> c_int {
    object::guard("MPI_Raccumulate", win, || {
        let data = packed(origin_addr, origin_count, origin_datatype)?;
        let t = target(target_rank, target_disp, target_count, target_datatype)?;
        access::accumulate(win, data, Some(&dt(origin_datatype)?), op, t, None)?;
        rma_request(win, target_rank, false, request)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Rget_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: Dtype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: Dtype,
    target_rank: c_int,
    target_disp: Aint,
    target_count: c_int,
    target_datatype: Dtype,
    op: c_int,
    win: Win,
    request: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    let rc = unsafe {
        MPI_Get_accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            result_addr,
            result_count,
            result_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
        )
    };
    if rc != 0 {
        return rc;
    }
    object::guard("MPI_Rget_accumulate", win, || {
        rma_request(win, target_rank, true, request)
    })
}

/// A window's size argument as a byte count (MPI_ERR_SIZE when negative).
fn window_size(size: Aint) -> Result<usize> {
    usize::try_from(size).map_err(|_| MpiError::new(class::SIZE, format!("window size {size}")))
}
