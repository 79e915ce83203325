//! The one place C pointers become Rust values. Every function here checks what it can
//! (null, `MPI_IN_PLACE` where it is not allowed, alignment, address overflow, that a
//! send and a receive buffer of one call share no byte, and that no two slices it makes
//! for one call alias: `read_apart`) and documents what it must take
//! on trust from the MPI standard: that a buffer argument points to memory holding
//! `count` elements of its datatype for the duration of the call (MPI-3.1 section 3.2.2),
//! or, for an immediate receive, until the request completes (section 3.7.2).
//!
//! The bottom of the C interface: the exported functions (`ffi`) make their arguments
//! here, and the safe layer calls the program's functions (user operations, error
//! handlers, attribute callbacks, generalized requests) through it. Holds every
//! raw-pointer dereference of the crate. Must never hold MPI semantics, nor use a module
//! above it (it knows buffers, datatypes, errors and handles, nothing of the tables).
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_void, CStr};
use std::os::raw::c_int;
use std::sync::Arc;

use crate::datatype::piece::{Piece, Source};
use crate::datatype::{Buf, BufMut, Datatype, Packed};
use crate::error::{MpiError, Result};
use crate::handles::{class, MpiStatus, IN_PLACE};

/// A volpex request in the request table, and its communicator's handle (whose error
/// handler answers for its errors).
pub struct Pending(pub volpex::Request<'static>, pub c_int);

// SAFETY: `volpex::Request` is not `Send` only because a receive request may hold a
// `Target::Scattered(Box<dyn Layout>)` and an immediate collective a boxed closure that
// puts its result in place; this crate only ever posts receives into byte slices
// (`Target::Contiguous`, plain `&mut [u8]`) and into `p2p::Scatter`s (a byte slice, an
// offset and an `Arc<Datatype>`), and its collectives' closures hold only what the job
// owns (`coll::job::Output`: byte slices and `Arc<Datatype>`s), all `Send`, as is every
// other part of a request (its communicator, a running collective's handle). A request
// is used by one thread at a time: the table's mutex, or the call that took it out of the
// table.
unsafe impl Send for Pending {}

/// The memory a buffer argument covers: `len` bytes from address `start`, with the C
/// pointer `origin` bytes in.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    start: usize,
    len: usize,
    origin: isize,
}

/// Whether `p` is MPI_IN_PLACE.
pub fn in_place(p: *const c_void) -> bool {
    p as usize == IN_PLACE
}

/// The lowest address a datatype may reach from MPI_BOTTOM (the null pointer): a
/// datatype built from absolute addresses (MPI_Get_address) starts above Linux's lowest
/// mappable address (`vm.mmap_min_addr`, 65536 by default); a null buffer whose data
/// starts lower is a mistake, not MPI_BOTTOM.
const BOTTOM_MIN_ADDRESS: isize = 65536;

/// The region `count` elements of `dt` from element `first` take at `p` (`p` null:
/// MPI_BOTTOM, with `dt` giving absolute addresses).
pub fn region(p: *const c_void, dt: &Datatype, blocks: &[(i128, usize)]) -> Result<Region> {
    let spans = blocks
        .iter()
        .map(|&(first, count)| dt.span(first, count))
        .collect::<Result<Vec<_>>>()?;
    region_of(p, &spans)
}

/// The region of pieces at byte offsets from `p`, each `(offset, count, datatype)`
/// (MPI_Alltoallw's blocks, each of its own datatype).
pub fn pieces_region(p: *const c_void, pieces: &[(isize, usize, &Datatype)]) -> Result<Region> {
    let spans = pieces
        .iter()
        .map(|&(at, count, dt)| {
            let (off, len) = dt.span(0, count)?;
            Ok((off.checked_add(at).ok_or_else(too_far)?, len))
        })
        .collect::<Result<Vec<_>>>()?;
    region_of(p, &spans)
}

/// The region covering `spans` (offset from `p`, length in bytes).
fn region_of(p: *const c_void, spans: &[(isize, usize)]) -> Result<Region> {
    let mut bounds: Option<(isize, isize)> = None;
    for &(off, len) in spans {
        if len == 0 {
            continue;
        }
        let end = off.checked_add(len as isize).ok_or_else(too_far)?;
        bounds = Some(bounds.map_or((off, end), |(l, h)| (l.min(off), h.max(end))));
    }
    let Some((lo, hi)) = bounds else {
        return Ok(Region {
            start: 0,
            len: 0,
            origin: 0,
        });
    };
    if p.is_null() && lo < BOTTOM_MIN_ADDRESS {
        return Err(MpiError::new(class::BUFFER, "null buffer with data in it"));
    }
    if in_place(p) {
        return Err(MpiError::new(
            class::BUFFER,
            "MPI_IN_PLACE is not allowed here",
        ));
    }
    let start = (p as usize).checked_add_signed(lo).ok_or_else(too_far)?;
    let len = (hi - lo) as usize;
    start.checked_add(len).ok_or_else(too_far)?;
    Ok(Region {
        start,
        len,
        origin: -lo,
    })
}

fn too_far() -> MpiError {
    MpiError::new(class::BUFFER, "buffer reaches outside the address space")
}

/// The region of `len` plain bytes at `p` (MPI_Pack's output, MPI_Unpack's input).
pub fn bytes_region(p: *const c_void, len: usize) -> Result<Region> {
    if len == 0 {
        return Ok(Region {
            start: 0,
            len: 0,
            origin: 0,
        });
    }
    if p.is_null() || in_place(p) {
        return Err(MpiError::new(class::BUFFER, "invalid buffer pointer"));
    }
    let start = p as usize;
    start.checked_add(len).ok_or_else(too_far)?;
    Ok(Region {
        start,
        len,
        origin: 0,
    })
}

/// Refuses a send and a receive region that overlap at all: for arguments that are plain
/// bytes on one side (MPI_Pack's output, MPI_Unpack's input), where the extents are the
/// bytes (MPI-3.1 section 2.3: no aliasing between arguments; MPI_IN_PLACE is the way to
/// reuse a buffer).
pub fn disjoint(a: &Region, b: &Region) -> Result<()> {
    if apart(a, b) {
        Ok(())
    } else {
        Err(MpiError::new(
            class::BUFFER,
            "send and receive buffers overlap (use MPI_IN_PLACE)",
        ))
    }
}

fn apart(a: &Region, b: &Region) -> bool {
    a.len == 0 || b.len == 0 || a.start + a.len <= b.start || b.start + b.len <= a.start
}

/// The address of a region's origin (the C pointer).
fn origin_address(r: &Region) -> usize {
    r.start.wrapping_add_signed(r.origin)
}

/// The receive buffer of a call, as `read_apart` compares it with the send buffer: its
/// region, its datatype and the ranges of elements (first, count) it receives.
pub type Receiving<'b> = (&'b Region, &'b Datatype, &'b [(i128, usize)]);

/// The send buffer of a call that also receives into `recv`: `send` itself when the
/// two regions are apart (the common case: no copy); when their extents overlap but no
/// byte is both sent and received (MPI-3.1 section 3.10 forbids only that: two strided
/// types may interleave), a packed copy of the data in `store`, read before the receive
/// buffer exists, so that no slice over the send region ever aliases the receive one.
/// A byte both sent and received is MPI_ERR_BUFFER.
///
/// # Safety
/// As `read` for `send`; and the caller makes no view of `recv` until the returned
/// buffer has been read (a receive is written after `read_apart` returns).
pub unsafe fn read_apart<'a>(
    store: &'a mut Packed,
    send: Region,
    dt: Arc<Datatype>,
    blocks: &[(i128, usize)],
    recv: Option<Receiving<'_>>,
) -> Result<Buf<'a>> {
    let Some((rr, rdt, rblocks)) = recv else {
        // SAFETY: forwarded contract.
        return Ok(unsafe { read(send, dt) });
    };
    if apart(&send, rr) {
        // SAFETY: forwarded contract; no byte of `send` is in `recv` (checked).
        return Ok(unsafe { read(send, dt) });
    }
    let s = crate::overlap::Touch {
        base: origin_address(&send),
        dt: &dt,
        blocks,
    };
    let r = crate::overlap::Touch {
        base: origin_address(rr),
        dt: rdt,
        blocks: rblocks,
    };
    if crate::overlap::share_bytes(&s, &r) {
        return Err(MpiError::new(
            class::BUFFER,
            "send and receive buffers share bytes (use MPI_IN_PLACE)",
        ));
    }
    for &(first, count) in blocks {
        // Ranges that follow each other are one piece, as they are in memory.
        match store.pieces.last_mut() {
            Some((f, n, _)) if *f + *n as i128 == first => *n += count,
            _ => store.pieces.push((first, count, store.data.len())),
        }
        // SAFETY: forwarded contract; these bytes are not received (checked above).
        unsafe { copy_touched(&send, s.base as i128, &dt, (first, count), &mut store.data) }?;
    }
    Ok(store.buf(dt))
}

/// Appends to `out` the bytes `count` elements of `dt` from element `first` touch, the
/// buffer's origin at address `base`, in message order.
///
/// # Safety
/// `send` must be readable, as `read` requires, and none of its bytes written while this
/// runs.
unsafe fn copy_touched(
    send: &Region,
    base: i128,
    dt: &Datatype,
    (first, count): (i128, usize),
    out: &mut Vec<u8>,
) -> Result<()> {
    for (off, len) in dt.touched(first, count) {
        let at = usize::try_from(base + off).map_err(|_| too_far())?;
        if at < send.start || at + len > send.start + send.len {
            return Err(MpiError::new(
                class::INTERN,
                "a block outside its buffer's region",
            ));
        }
        // SAFETY: inside `send` (checked above), which the caller vouches readable; the
        // slice lives for this copy only.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(at as *const u8, len) });
    }
    Ok(())
}

/// What `pieces` of the buffer over `r` touch, each piece's blocks in `blocks`.
fn touches<'t>(
    r: &Region,
    pieces: &'t [Piece],
    blocks: &'t [[(i128, usize); 1]],
) -> Vec<crate::overlap::Touch<'t>> {
    let origin = origin_address(r);
    pieces
        .iter()
        .zip(blocks)
        .map(|(p, b)| crate::overlap::Touch {
            base: origin.wrapping_add_signed(p.at),
            dt: &p.dt,
            blocks: &b[..],
        })
        .collect()
}

/// The send buffer of a collective that also receives into `recv` (its region and the
/// pieces it receives into), `pieces` of it sent: what `read_apart` is for a call whose
/// pieces may each have their own datatype and place (MPI_Alltoallw). The program's
/// memory when the two regions are apart (no copy); when their extents overlap but no
/// byte is both sent and received, a packed copy of the pieces the job owns, read now,
/// before the receive buffer exists. A byte both sent and received is MPI_ERR_BUFFER.
///
/// # Safety
/// As `read` for `send`, whose region must cover the bytes `pieces` touch (`region` or
/// `pieces_region` made it from them); and the caller makes no view of `recv` until this
/// returns.
pub unsafe fn source<'a>(
    send: Region,
    dt: Arc<Datatype>,
    pieces: &[Piece],
    recv: Option<(&Region, &[Piece])>,
) -> Result<Source<'a>> {
    let Some((rr, rps)) = recv.filter(|(rr, _)| !apart(&send, rr)) else {
        // SAFETY: forwarded contract; no byte of `send` is in `recv` (checked).
        return Ok(Source::Memory(unsafe { read(send, dt) }));
    };
    // A piece without data may lie anywhere (even outside the buffer): it touches nothing.
    let with_data = |ps: &[Piece]| ps.iter().filter(|p| p.has_data()).cloned().collect();
    let (sps, rps): (Vec<Piece>, Vec<Piece>) = (with_data(pieces), with_data(rps));
    let blocks = |ps: &[Piece]| ps.iter().map(|p| [(0, p.count)]).collect::<Vec<_>>();
    let (sb, rb) = (blocks(&sps), blocks(&rps));
    let (st, rt) = (touches(&send, &sps, &sb), touches(rr, &rps, &rb));
    if crate::overlap::any_share_bytes(&st, &rt) {
        return Err(MpiError::new(
            class::BUFFER,
            "send and receive buffers share bytes (use MPI_IN_PLACE)",
        ));
    }
    let mut data = Vec::new();
    let mut copied = Vec::with_capacity(sps.len());
    for (p, t) in sps.iter().zip(&st) {
        copied.push((p.clone(), data.len()));
        // SAFETY: forwarded contract; these bytes are not received (checked above).
        unsafe { copy_touched(&send, t.base as i128, &p.dt, (0, p.count), &mut data) }?;
    }
    Ok(Source::Copy {
        data,
        pieces: copied,
        dt,
    })
}

/// A send buffer over `r`.
///
/// # Safety
/// `r` must come from `region` for a pointer the caller got from C with a count and
/// datatype that, by the MPI standard, describe readable memory for the whole call.
pub unsafe fn read<'a>(r: Region, dt: Arc<Datatype>) -> Buf<'a> {
    let mem: &[u8] = if r.len == 0 {
        &[]
    } else {
        // SAFETY: the region is non-null and does not wrap (checked by `region`); the
        // caller vouches it is readable for the call (MPI-3.1 section 3.2.2).
        unsafe { std::slice::from_raw_parts(r.start as *const u8, r.len) }
    };
    Buf::new(mem, r.origin, dt)
}

/// A send buffer over `r` that the runtime reads after the call returns: the origin
/// buffer of a one-sided put or accumulate, read by the synchronization that completes
/// the operation.
///
/// # Safety
/// As `read`, and the program must neither free nor change the memory until the
/// operation completes at the origin (MPI-3.1 section 11.3).
pub unsafe fn read_until_complete(r: Region, dt: Arc<Datatype>) -> Buf<'static> {
    // SAFETY: as `read`, for as long as the operation, which the caller vouches for.
    unsafe { read(r, dt) }
}

/// A receive buffer over `r`.
///
/// # Safety
/// As `read`, for writable memory no other argument of the call overlaps (`disjoint`).
pub unsafe fn write<'a>(r: Region, dt: Arc<Datatype>) -> BufMut<'a> {
    let mem: &mut [u8] = if r.len == 0 {
        &mut []
    } else {
        // SAFETY: non-null and not wrapping (checked by `region`); writable and not
        // aliased by another argument for the call (the caller's contract and `disjoint`).
        unsafe { std::slice::from_raw_parts_mut(r.start as *mut u8, r.len) }
    };
    BufMut {
        mem,
        origin: r.origin,
        dt,
    }
}

/// The receive memory of an immediate receive, which must live until it completes.
///
/// # Safety
/// As `write`, and the program must neither free nor touch the memory until the request
/// completes or is freed (MPI-3.1 section 3.7.2); the request holds the slice until then.
pub unsafe fn write_until_complete(r: Region) -> &'static mut [u8] {
    if r.len == 0 {
        return &mut [];
    }
    // SAFETY: as `write`; the lifetime is the request's, which the MPI standard bounds:
    // the buffer stays allocated and untouched by the program until the request completes.
    unsafe { std::slice::from_raw_parts_mut(r.start as *mut u8, r.len) }
}

/// The receive buffer of an immediate receive into a non-contiguous datatype, which must
/// live until it completes.
///
/// # Safety
/// As `write_until_complete`.
pub unsafe fn write_typed_until_complete(r: Region, dt: Arc<Datatype>) -> BufMut<'static> {
    // SAFETY: as `write`, for the lifetime of the request, which the caller vouches for
    // (MPI-3.1 section 3.7.2).
    unsafe { write(r, dt) }
}

fn check_ptr<T>(p: *const T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(MpiError::arg(format!("{what} is a null pointer")));
    }
    if !p.is_aligned() {
        return Err(MpiError::arg(format!("{what} is not aligned")));
    }
    Ok(())
}

/// An output argument (`int *size`).
///
/// # Safety
/// A non-null `p` must point to a writable `T` for the call.
pub unsafe fn out<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T> {
    check_ptr(p, what)?;
    // SAFETY: non-null and aligned (checked); writable by the caller's contract.
    Ok(unsafe { &mut *p })
}

/// An input argument passed by pointer (`const MPI_Status *`).
///
/// # Safety
/// A non-null `p` must point to a readable `T` for the call.
pub unsafe fn input<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    check_ptr(p, what)?;
    // SAFETY: non-null and aligned (checked); readable by the caller's contract.
    Ok(unsafe { &*p })
}

/// A status argument: None for MPI_STATUS_IGNORE (the null pointer).
///
/// # Safety
/// A non-null `p` must point to a writable MPI_Status.
pub unsafe fn status<'a>(p: *mut MpiStatus) -> Result<Option<&'a mut MpiStatus>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: as `out`.
    unsafe { out(p, "status") }.map(Some)
}

/// An input array of `n` elements (`const int ranks[]`).
///
/// # Safety
/// If `n > 0`, `p` must point to `n` readable elements.
pub unsafe fn array<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    check_ptr(p, what)?;
    // SAFETY: non-null, aligned; `n` readable elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// The weights of a distributed graph's edges (MPI-3.1 section 7.5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights<'a> {
    /// MPI_UNWEIGHTED: the graph has no weights.
    Unweighted,
    /// MPI_WEIGHTS_EMPTY: weighted, and this process gives no edge.
    Empty,
    /// One weight per edge.
    Given(&'a [c_int]),
}

/// The two weights sentinels (`mpi.h` makes them addresses of library objects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sentinel {
    /// MPI_UNWEIGHTED.
    Unweighted,
    /// MPI_WEIGHTS_EMPTY.
    WeightsEmpty,
}

/// A weights argument of `n` entries: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY or an array.
/// `sentinel` says which sentinel `p` is, if any (the interface that owns the sentinels'
/// addresses tells).
///
/// # Safety
/// Any other `p` must point to `n` readable ints when `n > 0`.
pub unsafe fn weights<'a>(
    p: *const c_int,
    sentinel: Option<Sentinel>,
    n: usize,
    what: &str,
) -> Result<Weights<'a>> {
    match sentinel {
        Some(Sentinel::Unweighted) => Ok(Weights::Unweighted),
        Some(Sentinel::WeightsEmpty) if n == 0 => Ok(Weights::Empty),
        Some(Sentinel::WeightsEmpty) => Err(MpiError::arg(format!(
            "{what}: MPI_WEIGHTS_EMPTY with {n} edges"
        ))),
        // SAFETY: forwarded contract.
        None => unsafe { array(p, n, what) }.map(Weights::Given),
    }
}

/// An output weights array of `n` entries, None for a sentinel (nothing to write;
/// `sentinel` says which sentinel `p` is, if any).
///
/// # Safety
/// Any other `p` must point to `n` writable ints when `n > 0`.
pub unsafe fn weights_out<'a>(
    p: *mut c_int,
    sentinel: Option<Sentinel>,
    n: usize,
) -> Result<Option<&'a mut [c_int]>> {
    if sentinel.is_some() {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { array_mut(p, n, "weights") }.map(Some)
}

/// An output or in-out array of `n` elements (`MPI_Request array_of_requests[]`).
///
/// # Safety
/// If `n > 0`, `p` must point to `n` writable elements no other argument overlaps.
pub unsafe fn array_mut<'a, T>(p: *mut T, n: usize, what: &str) -> Result<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    check_ptr(p, what)?;
    // SAFETY: non-null, aligned; `n` writable elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// An array of statuses: None for MPI_STATUSES_IGNORE.
///
/// # Safety
/// As `array_mut` for a non-null `p`.
pub unsafe fn statuses<'a>(p: *mut MpiStatus, n: usize) -> Result<Option<&'a mut [MpiStatus]>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: as `array_mut`.
    unsafe { array_mut(p, n, "array_of_statuses") }.map(Some)
}

/// Copies `s` into the C string buffer `dst` of `cap` bytes (NUL-terminated, truncated
/// to fit) and its length into `*len`.
///
/// # Safety
/// `dst` must point to `cap` writable bytes, `len` to a writable int.
pub unsafe fn put_string(dst: *mut c_char, cap: usize, s: &str, len: *mut c_int) -> Result<()> {
    // SAFETY: forwarded contract.
    let len = unsafe { out(len, "resultlen") }?;
    // SAFETY: forwarded contract.
    let buf = unsafe { array_mut(dst as *mut u8, cap, "string buffer") }?;
    let n = s.len().min(cap.saturating_sub(1));
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    if let Some(end) = buf.get_mut(n) {
        *end = 0;
    }
    *len = n as c_int;
    Ok(())
}

/// A NUL-terminated C string.
///
/// # Safety
/// A non-null `p` must point to a NUL-terminated string.
pub unsafe fn string(p: *const c_char, what: &str) -> Result<String> {
    if p.is_null() {
        return Err(MpiError::arg(format!("{what} is a null pointer")));
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Writes `v` through the `void *` of MPI_Comm_get_attr, which points to a pointer.
///
/// # Safety
/// A non-null `p` must point to a writable `void *`.
pub unsafe fn put_attr(p: *mut c_void, v: *const c_int) -> Result<()> {
    // SAFETY: forwarded contract.
    let slot = unsafe { out(p as *mut *const c_int, "attribute_val") }?;
    *slot = v;
    Ok(())
}

/// `MPI_User_function`: `void f(void *invec, void *inoutvec, int *len, MPI_Datatype *)`.
pub type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut c_int);

/// Calls a user operation on `len` elements of datatype `dt` (handle): `inout = input op
/// inout`, each buffer holding the elements as the datatype lays them out in memory,
/// with their origin `origin` bytes in.
pub fn call_user_op(
    f: UserFn,
    input: &mut [u8],
    inout: &mut [u8],
    origin: usize,
    len: usize,
    dt: c_int,
) {
    if origin > input.len() || origin > inout.len() {
        return;
    }
    let mut len = c_int::try_from(len).unwrap_or(c_int::MAX);
    let mut dt = dt;
    // SAFETY: `f` is the function the program gave MPI_Op_create, with the signature of
    // MPI_User_function (MPI-3.1 section 5.9.5); both buffers hold `len` elements of
    // `dt` laid out from their origin, `origin` bytes in (checked to be inside them), and
    // are ours for the call; `len` and `dt` are locals it may read.
    unsafe {
        f(
            input.as_mut_ptr().add(origin) as *mut c_void,
            inout.as_mut_ptr().add(origin) as *mut c_void,
            &mut len,
            &mut dt,
        )
    }
}

/// `MPI_Comm_errhandler_function`: `void f(MPI_Comm *comm, int *error_code, ...)`.
pub type ErrFn = unsafe extern "C" fn(*mut c_int, *mut c_int, ...);

/// Calls the program's error handler for an error of class `code` on `comm` (or on a
/// window or a file: their handler functions take the same two pointers).
pub fn call_errhandler(f: ErrFn, comm: c_int, code: c_int) {
    let (mut comm, mut code) = (comm, code);
    // SAFETY: `f` is the function the program gave MPI_Comm_create_errhandler (or
    // MPI_Win_/MPI_File_create_errhandler), with the signature of
    // MPI_Comm_errhandler_function (MPI-3.1 section 8.3.1); its two arguments point to
    // locals it may read and write.
    unsafe { f(&mut comm, &mut code) }
}

/// `MPI_Comm_copy_attr_function`.
pub type CopyAttrFn =
    unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
/// `MPI_Comm_delete_attr_function`.
pub type DeleteAttrFn = unsafe extern "C" fn(c_int, c_int, *mut c_void, *mut c_void) -> c_int;

/// Calls an attribute copy function (on MPI_Comm_dup): the new value, if it says to copy.
pub fn call_copy_attr(
    f: CopyAttrFn,
    old: c_int,
    key: c_int,
    extra: usize,
    value: usize,
) -> (c_int, Option<usize>) {
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut flag: c_int = 0;
    // SAFETY: `f` is the copy function the program gave MPI_Comm_create_keyval, with the
    // signature of MPI_Comm_copy_attr_function (MPI-3.1 section 6.7.2); `out` and `flag`
    // are locals it writes; `extra` and `value` are the program's own pointers, passed
    // back as they came.
    let code = unsafe {
        f(
            old,
            key,
            extra as *mut c_void,
            value as *mut c_void,
            &mut out as *mut *mut c_void as *mut c_void,
            &mut flag,
        )
    };
    (code, (flag != 0).then_some(out as usize))
}

/// Calls an attribute delete function (MPI_Comm_delete_attr, MPI_Comm_free).
pub fn call_delete_attr(
    f: DeleteAttrFn,
    comm: c_int,
    key: c_int,
    value: usize,
    extra: usize,
) -> c_int {
    // SAFETY: `f` is the delete function the program gave MPI_Comm_create_keyval, with
    // the signature of MPI_Comm_delete_attr_function; `value` and `extra` are the
    // program's own pointers, passed back as they came.
    unsafe { f(comm, key, value as *mut c_void, extra as *mut c_void) }
}

/// A Fortran `COMM_COPY_ATTR_FUNCTION(OLDCOMM, COMM_KEYVAL, EXTRA_STATE,
/// ATTRIBUTE_VAL_IN, ATTRIBUTE_VAL_OUT, FLAG, IERROR)`: every argument by reference,
/// the state and values INTEGER(KIND=MPI_ADDRESS_KIND), FLAG a LOGICAL.
pub type FortranCopyFn = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const isize,
    *const isize,
    *mut isize,
    *mut c_int,
    *mut c_int,
);
/// A Fortran `TYPE_COPY_ATTR_FUNCTION`: the interface of `FortranCopyFn` (MPI-3.1
/// section 6.7.4), with a datatype for the communicator.
pub type FortranCopyAttrFn = FortranCopyFn;
/// A Fortran `TYPE_DELETE_ATTR_FUNCTION(DATATYPE, TYPE_KEYVAL, ATTRIBUTE_VAL,
/// EXTRA_STATE, IERROR)`: the interface of `FortranDeleteFn`.
pub type FortranDeleteAttrFn = FortranDeleteFn;

/// Calls a Fortran attribute copy function: (its IERROR, the new value if FLAG says
/// to copy).
pub fn call_fortran_copy_attr(
    f: FortranCopyAttrFn,
    old: c_int,
    key: c_int,
    extra: usize,
    value: usize,
) -> (c_int, Option<usize>) {
    let (extra, value) = (extra as isize, value as isize);
    let (mut out, mut flag, mut ierr): (isize, c_int, c_int) = (0, 0, 0);
    // SAFETY: `f` is the procedure the program gave MPI_COMM_CREATE_KEYVAL or
    // MPI_TYPE_CREATE_KEYVAL (MPI-3.1 sections 6.7.2 and 6.7.4, Fortran binding); every
    // argument points to a local of the type the binding declares, which it may read
    // and (out, flag, ierr) write.
    unsafe { f(&old, &key, &extra, &value, &mut out, &mut flag, &mut ierr) };
    (ierr, (flag != 0).then_some(out as usize))
}

/// Calls a Fortran attribute delete function: its IERROR.
pub fn call_fortran_delete_attr(
    f: FortranDeleteAttrFn,
    handle: c_int,
    key: c_int,
    value: usize,
    extra: usize,
) -> c_int {
    let (value, extra) = (value as isize, extra as isize);
    let mut ierr: c_int = 0;
    // SAFETY: as `call_fortran_copy_attr`, for the delete procedure.
    unsafe { f(&handle, &key, &value, &extra, &mut ierr) };
    ierr
}

/// `MPI_Grequest_query_function`: `int f(void *extra_state, MPI_Status *status)`.
pub type GreqQueryFn = unsafe extern "C" fn(*mut c_void, *mut MpiStatus) -> c_int;
/// `MPI_Grequest_free_function`: `int f(void *extra_state)`.
pub type GreqFreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`: `int f(void *extra_state, int complete)`.
pub type GreqCancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
/// Fortran `SUBROUTINE QUERY_FN(EXTRA_STATE, STATUS, IERROR)`, every argument by
/// reference, `EXTRA_STATE` an `INTEGER(KIND=MPI_ADDRESS_KIND)`.
pub type FortranGreqQueryFn = unsafe extern "C" fn(*mut isize, *mut MpiStatus, *mut c_int);
/// Fortran `SUBROUTINE FREE_FN(EXTRA_STATE, IERROR)`.
pub type FortranGreqFreeFn = unsafe extern "C" fn(*mut isize, *mut c_int);
/// Fortran `SUBROUTINE CANCEL_FN(EXTRA_STATE, COMPLETE, IERROR)`, `COMPLETE` a LOGICAL.
pub type FortranGreqCancelFn = unsafe extern "C" fn(*mut isize, *mut c_int, *mut c_int);

/// The callbacks of a generalized request (MPI-3.1 section 12.2), as C or Fortran gave
/// them; a null one does nothing and returns MPI_SUCCESS.
#[derive(Debug, Clone, Copy)]
pub enum GreqFns {
    /// From MPI_Grequest_start.
    C {
        /// Fills the status.
        query: Option<GreqQueryFn>,
        /// Frees the program's state.
        free: Option<GreqFreeFn>,
        /// Starts a cancel.
        cancel: Option<GreqCancelFn>,
    },
    /// From MPI_GREQUEST_START in Fortran.
    Fortran {
        /// Fills the status.
        query: Option<FortranGreqQueryFn>,
        /// Frees the program's state.
        free: Option<FortranGreqFreeFn>,
        /// Starts a cancel.
        cancel: Option<FortranGreqCancelFn>,
    },
}

impl GreqFns {
    /// Calls the query function with `extra` on `st`; its error code.
    pub fn query(&self, extra: usize, st: &mut MpiStatus) -> c_int {
        match *self {
            // SAFETY: `f` is the query function the program gave MPI_Grequest_start, with
            // the signature of MPI_Grequest_query_function; `extra` is the program's own
            // pointer, passed back as it came, and `st` a status it may write.
            GreqFns::C { query: Some(f), .. } => unsafe { f(extra as *mut c_void, st) },
            GreqFns::Fortran { query: Some(f), .. } => {
                let (mut extra, mut ierr) = (extra as isize, 0);
                // SAFETY: the Fortran subroutine the program gave MPI_GREQUEST_START,
                // whose three arguments are by reference: locals and a status it may
                // write (six INTEGERs, laid out as the C status).
                unsafe { f(&mut extra, st, &mut ierr) };
                ierr
            }
            GreqFns::C { query: None, .. } | GreqFns::Fortran { query: None, .. } => 0,
        }
    }

    /// Calls the free function with `extra`; its error code.
    pub fn free(&self, extra: usize) -> c_int {
        match *self {
            // SAFETY: the free function the program gave MPI_Grequest_start, with the
            // signature of MPI_Grequest_free_function; `extra` passed back as it came.
            GreqFns::C { free: Some(f), .. } => unsafe { f(extra as *mut c_void) },
            GreqFns::Fortran { free: Some(f), .. } => {
                let (mut extra, mut ierr) = (extra as isize, 0);
                // SAFETY: the program's Fortran subroutine; both arguments are locals.
                unsafe { f(&mut extra, &mut ierr) };
                ierr
            }
            GreqFns::C { free: None, .. } | GreqFns::Fortran { free: None, .. } => 0,
        }
    }

    /// Calls the cancel function with `extra` and whether the request is complete; its
    /// error code.
    pub fn cancel(&self, extra: usize, complete: bool) -> c_int {
        match *self {
            GreqFns::C {
                cancel: Some(f), ..
            } => {
                // SAFETY: the cancel function the program gave MPI_Grequest_start, with
                // the signature of MPI_Grequest_cancel_function; `extra` passed back as
                // it came.
                unsafe { f(extra as *mut c_void, c_int::from(complete)) }
            }
            GreqFns::Fortran {
                cancel: Some(f), ..
            } => {
                let (mut extra, mut done, mut ierr) = (extra as isize, c_int::from(complete), 0);
                // SAFETY: the program's Fortran subroutine; its arguments are locals (a
                // LOGICAL is an INTEGER, 1 for .TRUE. in gfortran).
                unsafe { f(&mut extra, &mut done, &mut ierr) };
                ierr
            }
            GreqFns::C { cancel: None, .. } | GreqFns::Fortran { cancel: None, .. } => 0,
        }
    }
}

/// A Fortran `COMM_DELETE_ATTR_FUNCTION(COMM, COMM_KEYVAL, ATTRIBUTE_VAL, EXTRA_STATE,
/// IERROR)`.
pub type FortranDeleteFn =
    unsafe extern "C" fn(*const c_int, *const c_int, *const isize, *const isize, *mut c_int);
/// MPI-1's Fortran `COPY_FUNCTION` (MPI_KEYVAL_CREATE): as `FortranCopyFn` with INTEGER
/// state and values.
pub type Fortran1CopyFn = unsafe extern "C" fn(
    *const c_int,
    *const c_int,
    *const c_int,
    *const c_int,
    *mut c_int,
    *mut c_int,
    *mut c_int,
);
/// MPI-1's Fortran `DELETE_FUNCTION`: as `FortranDeleteFn` with INTEGER ones.
pub type Fortran1DeleteFn =
    unsafe extern "C" fn(*const c_int, *const c_int, *const c_int, *const c_int, *mut c_int);

/// An attribute copy function of the program, in its language (MPI-3.1 sections 6.7.2
/// and 17.2.7: a Fortran callback gets every argument by reference).
#[derive(Debug, Clone, Copy)]
pub enum AttrCopy {
    /// MPI_Comm_create_keyval's.
    C(CopyAttrFn),
    /// MPI_COMM_CREATE_KEYVAL's.
    Fortran(FortranCopyFn),
    /// MPI_KEYVAL_CREATE's (INTEGER values).
    Fortran1(Fortran1CopyFn),
}

/// An attribute delete function of the program, in its language.
#[derive(Debug, Clone, Copy)]
pub enum AttrDelete {
    /// MPI_Comm_create_keyval's.
    C(DeleteAttrFn),
    /// MPI_COMM_CREATE_KEYVAL's.
    Fortran(FortranDeleteFn),
    /// MPI_KEYVAL_CREATE's (INTEGER values).
    Fortran1(Fortran1DeleteFn),
}

/// Calls an attribute copy function in any language: its return code, and the new value
/// if it says to copy. Fortran's values are the attribute's value itself (MPI-1's,
/// INTEGERs, cut to 32 bits and sign-extended back).
pub fn copy_attr(
    f: AttrCopy,
    old: c_int,
    key: c_int,
    extra: usize,
    value: usize,
) -> (c_int, Option<usize>) {
    match f {
        AttrCopy::C(f) => call_copy_attr(f, old, key, extra, value),
        AttrCopy::Fortran(f) => call_fortran_copy_attr(f, old, key, extra, value),
        AttrCopy::Fortran1(f) => {
            let (extra, value, mut out) = (extra as c_int, value as c_int, 0 as c_int);
            let (mut flag, mut ierr) = (0 as c_int, 0 as c_int);
            // SAFETY: `f` is the procedure the program gave MPI_KEYVAL_CREATE, with the
            // interface of MPI-1's COPY_FUNCTION (MPI-3.1 section 17.2.7), whose values
            // are INTEGERs; every argument points to a local of the right type.
            unsafe { f(&old, &key, &extra, &value, &mut out, &mut flag, &mut ierr) };
            (ierr, (flag != 0).then_some(out as usize))
        }
    }
}

/// Calls an attribute delete function in any language; its return code.
pub fn delete_attr(f: AttrDelete, comm: c_int, key: c_int, value: usize, extra: usize) -> c_int {
    match f {
        AttrDelete::C(f) => call_delete_attr(f, comm, key, value, extra),
        AttrDelete::Fortran(f) => call_fortran_delete_attr(f, comm, key, value, extra),
        AttrDelete::Fortran1(f) => {
            let (value, extra, mut ierr) = (value as c_int, extra as c_int, 0 as c_int);
            // SAFETY: the procedure the program gave MPI_KEYVAL_CREATE, with the
            // interface of MPI-1's DELETE_FUNCTION; every argument points to a local.
            unsafe { f(&comm, &key, &value, &extra, &mut ierr) };
            ierr
        }
    }
}

/// One slice over `parts` when each starts where the one before ends (the buffers of a
/// flush's gets into consecutive places of one array, which its answer then fills in
/// place, `rma::passive`); else the parts, untouched.
pub fn adjacent(
    parts: Vec<&'static mut [u8]>,
) -> std::result::Result<&'static mut [u8], Vec<&'static mut [u8]>> {
    let follows = parts
        .windows(2)
        .all(|w| (w[0].as_ptr() as usize).checked_add(w[0].len()) == Some(w[1].as_ptr() as usize));
    let Some(first) = parts.first() else {
        return Err(parts);
    };
    if !follows {
        return Err(parts);
    }
    let start = first.as_ptr() as usize;
    let len = parts.iter().map(|p| p.len()).sum();
    drop(parts);
    // SAFETY: the parts were slices of the program's memory (made here from the C
    // pointers of the calls that queued them, each valid until the epoch ends), each the
    // only view of its bytes, and each starting where the one before ends: together they
    // are the `len` bytes from `start`, as one view. They are consumed, so this slice is
    // the only view of those bytes, for as long as they were valid.
    Ok(unsafe { std::slice::from_raw_parts_mut(start as *mut u8, len) })
}

/// A window's memory as a byte slice, for the synchronization call applying one-sided
/// operations to it (`rma::sync`).
///
/// # Safety
/// `base`..`base + size` must be the window's memory: what the program gave
/// MPI_Win_create (MPI-3.1 section 11.2.1: it stays valid until MPI_Win_free) or what
/// MPI_Win_allocate made; the caller is inside an MPI call on the window, during which
/// MPI-3.1 section 11.7 forbids the program to access what the epoch's operations access,
/// and uses the slice only until it returns.
pub unsafe fn window_memory(base: usize, size: usize) -> Result<&'static mut [u8]> {
    if size == 0 {
        return Ok(&mut []);
    }
    if base == 0 {
        return Err(MpiError::new(
            class::BASE,
            "a window of bytes at a null base",
        ));
    }
    base.checked_add(size).ok_or_else(too_far)?;
    // SAFETY: the caller's contract: `size` bytes at `base` are the window's memory,
    // writable, and no other view of them exists while the slice lives.
    Ok(unsafe { std::slice::from_raw_parts_mut(base as *mut u8, size) })
}

/// A window's one block of memory (`window_memory`: MPI_Win_create's or
/// MPI_Win_allocate's), whose pieces may be lent to the log (`Window::lend`).
pub struct Block(pub &'static mut [u8]);

impl crate::window::Window for Block {
    fn piece(&mut self, off: u64, len: u64) -> Result<&mut [u8]> {
        self.0.piece(off, len)
    }

    fn lend(&mut self, off: u64, len: u64) -> Result<Option<&'static [u8]>> {
        let p = self.0.piece(off, len)?;
        // SAFETY: the bytes are the window's memory, valid until MPI_Win_free
        // (`window_memory`'s contract); `Window::lend`'s caller takes the loan back before
        // anything may change them and before the window is freed, so nothing writes
        // them while this view lives.
        Ok(Some(unsafe {
            std::slice::from_raw_parts(p.as_ptr(), p.len())
        }))
    }
}

/// The memory attached to a dynamic window, as a one-sided operation's target sees it:
/// (window address, address, bytes) per region (`rma::object::attached`).
pub struct Attached(pub Vec<(u64, usize, usize)>);

impl crate::window::Window for Attached {
    fn piece(&mut self, off: u64, len: u64) -> Result<&mut [u8]> {
        let inside = |from: u64, size: usize| {
            off >= from && len <= size as u64 && off - from <= size as u64 - len
        };
        // A window address (MPI_Get_address after the attach); else the address itself
        // (one taken before the attach: the same only where replicas are alike).
        let at = self
            .0
            .iter()
            .find(|&&(v, _, s)| inside(v, s))
            .map(|&(v, base, _)| base + (off - v) as usize)
            .or_else(|| {
                self.0
                    .iter()
                    .any(|&(_, base, s)| inside(base as u64, s))
                    .then_some(off as usize)
            })
            .ok_or_else(|| {
                MpiError::new(
                    class::RMA_RANGE,
                    format!("an access of {len} bytes at window address {off:#x}, which no attached memory holds"),
                )
            })?;
        // SAFETY: `at .. at + len` lies inside memory the program attached to the
        // window (MPI-3.1 section 11.2.4: valid until it detaches it), and the caller is
        // inside an MPI call applying the window's operations, as for `window_memory`.
        unsafe { window_memory(at, len as usize) }
    }
}

/// Bytes in front of every MPI_Alloc_mem block, holding its size.
const ALLOC_HEADER: usize = 16;

/// MPI_Alloc_mem: `size` bytes aligned to 16, or None if the allocator refuses.
pub fn alloc_mem(size: usize) -> Option<*mut c_void> {
    let total = size.checked_add(ALLOC_HEADER)?;
    let layout = std::alloc::Layout::from_size_align(total, ALLOC_HEADER).ok()?;
    // SAFETY: `layout` has a non-zero size (at least the header).
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is a fresh allocation of `total` >= 16 bytes, aligned to 16.
    unsafe {
        (p as *mut usize).write(total);
        Some(p.add(ALLOC_HEADER) as *mut c_void)
    }
}

/// MPI_Free_mem of a block MPI_Alloc_mem returned.
///
/// # Safety
/// `base` must come from `alloc_mem` and not have been freed.
pub unsafe fn free_mem(base: *mut c_void) {
    if base.is_null() {
        return;
    }
    // SAFETY: `base` is 16 bytes into a block `alloc_mem` made, whose first word is the
    // block's total size, and the layout it was allocated with is (total, 16).
    unsafe {
        let p = (base as *mut u8).sub(ALLOC_HEADER);
        let total = (p as *const usize).read();
        std::alloc::dealloc(
            p,
            std::alloc::Layout::from_size_align_unchecked(total, ALLOC_HEADER),
        );
    }
}

/// The address the program's executable gives a global symbol (a Fortran common block
/// such as `mpi_fortran_bottom_`), as the dynamic linker resolves it for everyone;
/// `None` if no loaded object exports it.
pub fn global_address(name: &CStr) -> Option<usize> {
    // SAFETY: `dlsym` with RTLD_DEFAULT only reads the NUL-terminated name; the address
    // it returns is compared, never dereferenced.
    let p = unsafe { nix::libc::dlsym(nix::libc::RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p as usize)
}

/// Flushes the program's C stdio streams and, in a Fortran program, every gfortran unit,
/// so that what it printed before a checkpoint comes out before the checkpoint's output
/// mark (which the runtime writes on the file descriptor directly).
pub fn flush_program_output() {
    // SAFETY: fflush(NULL) flushes every open output stream; it takes no pointer of ours.
    unsafe { nix::libc::fflush(std::ptr::null_mut()) };
    let Some(f) = global_address(c"_gfortran_flush_i4") else {
        return;
    };
    // SAFETY: `_gfortran_flush_i4` is libgfortran's FLUSH intrinsic,
    // `void flush_i4(GFC_INTEGER_4 *unit)`, which flushes every unit when `unit` is null;
    // the symbol is only found in a program linked with libgfortran.
    unsafe {
        let flush: unsafe extern "C" fn(*const c_int) = std::mem::transmute(f);
        flush(std::ptr::null());
    }
}

/// A Fortran string argument: `len` bytes (its hidden length), trailing blanks dropped.
///
/// # Safety
/// A non-null `p` must point to `len` readable bytes.
pub unsafe fn fortran_string(p: *const c_char, len: usize, what: &str) -> Result<String> {
    if p.is_null() {
        return Err(MpiError::arg(format!("{what} is a null pointer")));
    }
    // SAFETY: forwarded contract; `c_char` has alignment 1.
    let bytes = unsafe { array(p as *const u8, len, what) }?;
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

/// Writes `s` into a Fortran string of `len` bytes, blank-padded (truncated to fit);
/// returns how many bytes of `s` it holds.
///
/// # Safety
/// A non-null `p` must point to `len` writable bytes.
pub unsafe fn put_fortran_string(p: *mut c_char, len: usize, s: &str) -> Result<usize> {
    // SAFETY: forwarded contract.
    let buf = unsafe { array_mut(p as *mut u8, len, "string") }?;
    let n = s.len().min(len);
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    buf[n..].fill(b' ');
    Ok(n)
}

/// A plain byte buffer of `len` bytes at `p` (MPIX_Checkpoint's state).
///
/// # Safety
/// If `len > 0`, `p` must point to `len` readable bytes for the call.
pub unsafe fn bytes<'a>(p: *const c_void, len: usize) -> Result<&'a [u8]> {
    let r = bytes_region(p, len)?;
    if r.len == 0 {
        return Ok(&[]);
    }
    // SAFETY: non-null, not wrapping (checked by `bytes_region`); readable by contract.
    Ok(unsafe { std::slice::from_raw_parts(r.start as *const u8, r.len) })
}

/// A writable byte buffer of `len` bytes at `p` (MPIX_Restored's).
///
/// # Safety
/// If `len > 0`, `p` must point to `len` writable bytes no other argument overlaps.
pub unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize) -> Result<&'a mut [u8]> {
    let r = bytes_region(p, len)?;
    if r.len == 0 {
        return Ok(&mut []);
    }
    // SAFETY: non-null, not wrapping (checked by `bytes_region`); writable by contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(r.start as *mut u8, r.len) })
}

/// Ignores SIGPIPE, as every Rust program's runtime does before `main`, unless the
/// program chose a disposition of its own: a C or Fortran program's default would end
/// the process when it writes to a connection a dead peer closed, where the runtime
/// expects an error it handles (a failover).
pub fn ignore_sigpipe() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    // SAFETY: installing SIG_IGN runs no code of ours in a signal handler; the previous
    // disposition is put back if the program had one of its own.
    unsafe {
        if let Ok(old) = sigaction(Signal::SIGPIPE, &ignore) {
            if !matches!(old.handler(), SigHandler::SigDfl) {
                let _ = sigaction(Signal::SIGPIPE, &old);
            }
        }
    }
}

extern "C" {
    fn volpex_long_double_sum(a: *mut u8, b: *const u8);
    fn volpex_long_double_prod(a: *mut u8, b: *const u8);
}

/// `a = a + b` (`prod`: `a * b`) on two C `long double`s as their 16 bytes
/// (`csrc/long_double.c`: Rust has no arithmetic of that precision).
pub fn long_double_combine(prod: bool, a: &mut [u8; 16], b: &[u8; 16]) {
    let (a, b) = (a.as_mut_ptr(), b.as_ptr());
    // SAFETY: both point to 16 valid bytes, the size of a C long double on the targets
    // we build for (checked by tests/c/abi.c), which the C side copies in and out.
    unsafe {
        if prod {
            volpex_long_double_prod(a, b);
        } else {
            volpex_long_double_sum(a, b);
        }
    }
}

/// Sends of parts of `mem` lent to the transport (not copied into its log) for the
/// length of `f`: every loan is given back (`Loans::send`'s requests completed, which
/// copies a message some replica of its destination has not confirmed) before
/// `lending` returns, also when `f` fails or panics. MPI-IO's collective write lends
/// the caller's buffer this way for the length of the call (`io::aggregate`).
/// With `lend` false the sends are ordinary ones (copied into the log).
pub fn lending<R>(mem: &[u8], lend: bool, f: impl FnOnce(&mut Loans) -> R) -> R {
    // SAFETY: the `'static` slice never leaves `Loans` but inside the requests its
    // `send` makes, which it owns; they are completed (the transport reads the memory no
    // more once `give_back` returns) when `loans` is dropped, here at the latest, while
    // `mem` is still borrowed. `f` gets `&mut Loans` only and cannot move them out.
    let lent: &'static [u8] = unsafe { std::slice::from_raw_parts(mem.as_ptr(), mem.len()) };
    let mut loans = Loans {
        mem: lent,
        lend,
        requests: Vec::new(),
    };
    f(&mut loans)
}

/// The loans of a `lending` call.
pub struct Loans {
    mem: &'static [u8],
    lend: bool,
    /// In the order they were made (given back oldest first: their receivers confirm in
    /// that order).
    requests: Vec<volpex::Request<'static>>,
}

impl Loans {
    /// Sends `mem[range]` to `to` with `tag`, lent (`Process::
    /// immediate_send_lent_unreplayed_with_tag`: a small one is sent as any message).
    pub fn send(
        &mut self,
        to: &volpex::Process,
        range: std::ops::Range<usize>,
        tag: i32,
    ) -> Result<()> {
        let part = self
            .mem
            .get(range)
            .ok_or_else(|| MpiError::new(class::INTERN, "a lent range outside its memory"))?;
        if !self.lend {
            to.send_with_tag(part, tag)?;
            return Ok(());
        }
        let r = to.immediate_send_lent_unreplayed_with_tag(part, tag)?;
        self.requests.push(r);
        Ok(())
    }

    /// Gives every loan back now (oldest first), with the first error, after waiting a
    /// while for their receivers' confirmations (`volpex::Request::await_lent`): what is
    /// confirmed by then is not copied.
    pub fn give_back(&mut self) -> Result<()> {
        let mut first = volpex::Request::await_lent(&self.requests).err();
        for r in self.requests.drain(..) {
            if let Err(e) = r.wait() {
                first.get_or_insert(e);
            }
        }
        match first {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

impl Drop for Loans {
    fn drop(&mut self) {
        // Each request gives its loan back as it is dropped (oldest first).
        self.requests.drain(..).for_each(drop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts that follow each other become one slice over all of them; parts with a gap
    /// between them (or out of order) come back as they were.
    #[test]
    fn adjacent_parts_become_one_slice() {
        let mem: &'static mut [u8] = Box::leak(vec![0u8; 12].into_boxed_slice());
        let (a, rest) = mem.split_at_mut(4);
        let (b, c) = rest.split_at_mut(4);
        let one = adjacent(vec![a, b, c]).expect("adjacent");
        assert_eq!(one.len(), 12);
        one.copy_from_slice(&[7; 12]);

        let mem: &'static mut [u8] = Box::leak(vec![0u8; 12].into_boxed_slice());
        let (a, rest) = mem.split_at_mut(4);
        let (_gap, c) = rest.split_at_mut(4);
        let back = adjacent(vec![a, c]).expect_err("a gap");
        assert_eq!(back.iter().map(|p| p.len()).collect::<Vec<_>>(), [4, 4]);

        let mem: &'static mut [u8] = Box::leak(vec![0u8; 8].into_boxed_slice());
        let (a, b) = mem.split_at_mut(4);
        assert!(adjacent(vec![b, a]).is_err(), "out of order");
        assert!(adjacent(Vec::new()).is_err());
    }
}
