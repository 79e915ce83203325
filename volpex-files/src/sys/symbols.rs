//! The C library's file functions, defined here in the program's place: each turns its
//! raw arguments into checked values and asks the layer, or passes them untouched to the
//! C library's own (`real`). A descriptor call costs one bit test when the descriptor is
//! not the layer's; a path call, when the layer is not active, one atomic load.
//!
//! Variadic C functions (`open`, `openat`, `fcntl`) are defined with their optional
//! argument as a fixed one: the x86-64 and AArch64 Linux calling conventions pass both
//! the same way, and the argument is only used when the call has it (O_CREAT, the
//! commands that take one).

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use libc::{mode_t, off_t, size_t, ssize_t};

use crate::layer::{self, tracked, Handled, StatInfo};
use crate::real::{self, set_errno};

/// A C string argument as a path; `None` for a null pointer.
///
/// # Safety
/// A non-null `p` points to a NUL-terminated string that lives through the call.
unsafe fn path<'a>(p: *const c_char) -> Option<&'a Path> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let c = unsafe { CStr::from_ptr(p) };
    Some(Path::new(OsStr::from_bytes(c.to_bytes())))
}

/// A buffer argument as a slice; `None` for a null pointer with a length.
///
/// # Safety
/// A non-null `p` points to `n` readable bytes that live through the call.
unsafe fn bytes<'a>(p: *const c_void, n: size_t) -> Option<&'a [u8]> {
    if n == 0 {
        return Some(&[]);
    }
    if p.is_null() || n > isize::MAX as usize {
        return None;
    }
    // SAFETY: the caller's contract.
    Some(unsafe { std::slice::from_raw_parts(p as *const u8, n) })
}

/// A buffer argument as a mutable slice.
///
/// # Safety
/// A non-null `p` points to `n` writable bytes, not used elsewhere during the call.
unsafe fn bytes_mut<'a>(p: *mut c_void, n: size_t) -> Option<&'a mut [u8]> {
    if n == 0 {
        return Some(&mut []);
    }
    if p.is_null() || n > isize::MAX as usize {
        return None;
    }
    // SAFETY: the caller's contract.
    Some(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, n) })
}

/// An iovec array as slices.
///
/// # Safety
/// `iov` points to `n` iovecs, each naming readable memory that lives through the call.
unsafe fn iovecs<'a>(iov: *const libc::iovec, n: c_int) -> Option<Vec<&'a [u8]>> {
    if !(0..=libc::UIO_MAXIOV).contains(&n) || (iov.is_null() && n > 0) {
        return None;
    }
    if n == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the caller's contract.
    let v = unsafe { std::slice::from_raw_parts(iov, n as usize) };
    v.iter()
        // SAFETY: the caller's contract, for each iovec.
        .map(|i| unsafe { bytes(i.iov_base, i.iov_len) })
        .collect()
}

fn fail<T: From<i8>>(e: c_int) -> T {
    set_errno(e);
    T::from(-1)
}

fn int(r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

fn size(r: Result<usize, c_int>) -> ssize_t {
    match r {
        Ok(n) => n as ssize_t,
        Err(e) => fail(e),
    }
}

fn pos(off: off_t) -> Result<u64, c_int> {
    u64::try_from(off).map_err(|_| libc::EINVAL)
}

// ---- open ------------------------------------------------------------------------

/// openat for every open variant.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn open_at(dirfd: c_int, p: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    if layer::active() {
        // SAFETY: forwarded contract.
        if let Some(pp) = unsafe { path(p) } {
            if let Handled::Done(r) = layer::open(dirfd, pp, flags, mode) {
                return match r {
                    Ok(fd) => fd,
                    Err(e) => fail(e),
                };
            }
        }
    }
    // SAFETY: the program's own arguments, passed on.
    unsafe { real::raw_openat(dirfd, p, flags, mode) }
}

/// open(2).
///
/// # Safety
/// C's contract for open.
#[no_mangle]
pub unsafe extern "C" fn open(p: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(libc::AT_FDCWD, p, flags, mode) }
}

/// open64(2).
///
/// # Safety
/// C's contract for open.
#[no_mangle]
pub unsafe extern "C" fn open64(p: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(libc::AT_FDCWD, p, flags, mode) }
}

/// The fortified open (`_FORTIFY_SOURCE`).
///
/// # Safety
/// C's contract for open without a mode.
#[no_mangle]
pub unsafe extern "C" fn __open_2(p: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(libc::AT_FDCWD, p, flags, 0) }
}

/// The fortified open64.
///
/// # Safety
/// C's contract for open without a mode.
#[no_mangle]
pub unsafe extern "C" fn __open64_2(p: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(libc::AT_FDCWD, p, flags, 0) }
}

/// openat(2).
///
/// # Safety
/// C's contract for openat.
#[no_mangle]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    p: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(dirfd, p, flags, mode) }
}

/// openat64(2).
///
/// # Safety
/// C's contract for openat.
#[no_mangle]
pub unsafe extern "C" fn openat64(
    dirfd: c_int,
    p: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(dirfd, p, flags, mode) }
}

/// The fortified openat.
///
/// # Safety
/// C's contract for openat without a mode.
#[no_mangle]
pub unsafe extern "C" fn __openat_2(dirfd: c_int, p: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(dirfd, p, flags, 0) }
}

/// The fortified openat64.
///
/// # Safety
/// C's contract for openat without a mode.
#[no_mangle]
pub unsafe extern "C" fn __openat64_2(dirfd: c_int, p: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { open_at(dirfd, p, flags, 0) }
}

/// creat(2).
///
/// # Safety
/// C's contract for creat.
#[no_mangle]
pub unsafe extern "C" fn creat(p: *const c_char, mode: mode_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        open_at(
            libc::AT_FDCWD,
            p,
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            mode,
        )
    }
}

/// creat64(2).
///
/// # Safety
/// C's contract for creat.
#[no_mangle]
pub unsafe extern "C" fn creat64(p: *const c_char, mode: mode_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        open_at(
            libc::AT_FDCWD,
            p,
            libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
            mode,
        )
    }
}

/// Closes a descriptor of the layer: the layer's close, then the placeholder's.
pub(super) fn close_tracked(fd: c_int) -> c_int {
    let r = layer::close(fd);
    // SAFETY: the placeholder descriptor, which the layer no longer names.
    unsafe { real::raw_close(fd) };
    int(r)
}

/// close(2).
///
/// # Safety
/// C's contract for close.
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if tracked(fd) {
        return close_tracked(fd);
    }
    // SAFETY: the program's own argument.
    unsafe { real::raw_close(fd) }
}

// ---- write -----------------------------------------------------------------------

/// write(2).
///
/// # Safety
/// C's contract for write.
#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t {
    if tracked(fd) {
        // SAFETY: write's contract: `n` readable bytes at `buf`.
        return match unsafe { bytes(buf, n) } {
            Some(b) => size(layer::write(fd, &[b], None)),
            None => fail(libc::EFAULT),
        };
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_write(fd, buf, n) }
}

/// pwrite for both names.
///
/// # Safety
/// C's contract for pwrite.
unsafe fn pwrite_any(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t {
    if tracked(fd) {
        // SAFETY: pwrite's contract.
        let b = unsafe { bytes(buf, n) };
        return match (b, pos(off)) {
            (Some(b), Ok(at)) => size(layer::write(fd, &[b], Some(at))),
            (None, _) => fail(libc::EFAULT),
            (_, Err(e)) => fail(e),
        };
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_pwrite(fd, buf, n, off) }
}

/// pwrite(2).
///
/// # Safety
/// C's contract for pwrite.
#[no_mangle]
pub unsafe extern "C" fn pwrite(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { pwrite_any(fd, buf, n, off) }
}

/// pwrite64(2).
///
/// # Safety
/// C's contract for pwrite.
#[no_mangle]
pub unsafe extern "C" fn pwrite64(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { pwrite_any(fd, buf, n, off) }
}

/// writev and pwritev, one operation for all the vectors.
///
/// # Safety
/// C's contract for writev.
unsafe fn writev_any(fd: c_int, iov: *const libc::iovec, n: c_int, at: Option<off_t>) -> ssize_t {
    // SAFETY: writev's contract.
    let Some(parts) = (unsafe { iovecs(iov, n) }) else {
        return fail(libc::EINVAL);
    };
    let at = match at.map(pos).transpose() {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    size(layer::write(fd, &parts, at))
}

/// writev(2).
///
/// # Safety
/// C's contract for writev.
#[no_mangle]
pub unsafe extern "C" fn writev(fd: c_int, iov: *const libc::iovec, n: c_int) -> ssize_t {
    if tracked(fd) {
        // SAFETY: forwarded contract.
        return unsafe { writev_any(fd, iov, n, None) };
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_writev(fd, iov, n) }
}

/// pwritev(2).
///
/// # Safety
/// C's contract for pwritev.
#[no_mangle]
pub unsafe extern "C" fn pwritev(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: off_t,
) -> ssize_t {
    if tracked(fd) {
        // SAFETY: forwarded contract.
        return unsafe { writev_any(fd, iov, n, Some(off)) };
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_pwritev(fd, iov, n, off) }
}

/// pwritev64(2).
///
/// # Safety
/// C's contract for pwritev.
#[no_mangle]
pub unsafe extern "C" fn pwritev64(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: off_t,
) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { pwritev(fd, iov, n, off) }
}

// ---- read ------------------------------------------------------------------------

/// read for every name.
///
/// # Safety
/// C's contract for read.
unsafe fn read_any(fd: c_int, buf: *mut c_void, n: size_t, at: Option<off_t>) -> ssize_t {
    if tracked(fd) {
        // SAFETY: read's contract: `n` writable bytes at `buf`.
        let b = unsafe { bytes_mut(buf, n) };
        let at = match at.map(pos).transpose() {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        return match b {
            Some(b) => size(layer::read(fd, b, at)),
            None => fail(libc::EFAULT),
        };
    }
    // SAFETY: the program's own arguments.
    unsafe {
        match at {
            None => real::raw_read(fd, buf, n),
            Some(off) => real::raw_pread(fd, buf, n, off),
        }
    }
}

/// read(2).
///
/// # Safety
/// C's contract for read.
#[no_mangle]
pub unsafe extern "C" fn read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { read_any(fd, buf, n, None) }
}

/// The fortified read.
///
/// # Safety
/// C's contract for read, with `n <= buflen`.
#[no_mangle]
pub unsafe extern "C" fn __read_chk(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    buflen: size_t,
) -> ssize_t {
    // SAFETY: forwarded contract; never more than the buffer holds.
    unsafe { read_any(fd, buf, n.min(buflen), None) }
}

/// pread(2).
///
/// # Safety
/// C's contract for pread.
#[no_mangle]
pub unsafe extern "C" fn pread(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { read_any(fd, buf, n, Some(off)) }
}

/// pread64(2).
///
/// # Safety
/// C's contract for pread.
#[no_mangle]
pub unsafe extern "C" fn pread64(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { read_any(fd, buf, n, Some(off)) }
}

/// The fortified pread.
///
/// # Safety
/// C's contract for pread, with `n <= buflen`.
#[no_mangle]
pub unsafe extern "C" fn __pread_chk(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    off: off_t,
    buflen: size_t,
) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { read_any(fd, buf, n.min(buflen), Some(off)) }
}

/// The fortified pread64.
///
/// # Safety
/// C's contract for pread, with `n <= buflen`.
#[no_mangle]
pub unsafe extern "C" fn __pread64_chk(
    fd: c_int,
    buf: *mut c_void,
    n: size_t,
    off: off_t,
    buflen: size_t,
) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { read_any(fd, buf, n.min(buflen), Some(off)) }
}

/// readv and preadv into the vectors in order.
///
/// # Safety
/// C's contract for readv.
unsafe fn readv_any(fd: c_int, iov: *const libc::iovec, n: c_int, at: Option<off_t>) -> ssize_t {
    if !(0..=libc::UIO_MAXIOV).contains(&n) || (iov.is_null() && n > 0) {
        return fail(libc::EINVAL);
    }
    let total: usize = if n == 0 {
        0
    } else {
        // SAFETY: readv's contract: `n` iovecs at `iov`.
        unsafe { std::slice::from_raw_parts(iov, n as usize) }
            .iter()
            .map(|i| i.iov_len)
            .sum()
    };
    let mut tmp = vec![0u8; total];
    let at = match at.map(pos).transpose() {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let got = match layer::read(fd, &mut tmp, at) {
        Ok(g) => g,
        Err(e) => return fail(e),
    };
    let mut left = &tmp[..got];
    for k in 0..n as usize {
        if left.is_empty() {
            break;
        }
        // SAFETY: readv's contract: iovec k names `iov_len` writable bytes.
        let i = unsafe { &*iov.add(k) };
        // SAFETY: as above.
        let Some(dst) = (unsafe { bytes_mut(i.iov_base, i.iov_len) }) else {
            return fail(libc::EFAULT);
        };
        let m = dst.len().min(left.len());
        dst[..m].copy_from_slice(&left[..m]);
        left = &left[m..];
    }
    got as ssize_t
}

/// readv(2).
///
/// # Safety
/// C's contract for readv.
#[no_mangle]
pub unsafe extern "C" fn readv(fd: c_int, iov: *const libc::iovec, n: c_int) -> ssize_t {
    if tracked(fd) {
        // SAFETY: forwarded contract.
        return unsafe { readv_any(fd, iov, n, None) };
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_readv(fd, iov, n) }
}

/// preadv(2).
///
/// # Safety
/// C's contract for preadv.
#[no_mangle]
pub unsafe extern "C" fn preadv(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: off_t,
) -> ssize_t {
    if tracked(fd) {
        // SAFETY: forwarded contract.
        return unsafe { readv_any(fd, iov, n, Some(off)) };
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_preadv(fd, iov, n, off) }
}

/// preadv64(2).
///
/// # Safety
/// C's contract for preadv.
#[no_mangle]
pub unsafe extern "C" fn preadv64(
    fd: c_int,
    iov: *const libc::iovec,
    n: c_int,
    off: off_t,
) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { preadv(fd, iov, n, off) }
}

// ---- offsets, sizes, syncs -------------------------------------------------------

/// lseek(2).
///
/// # Safety
/// C's contract for lseek.
#[no_mangle]
pub unsafe extern "C" fn lseek(fd: c_int, off: off_t, whence: c_int) -> off_t {
    if tracked(fd) {
        return match layer::seek(fd, off, whence) {
            Ok(p) => p as off_t,
            Err(e) => fail(e),
        };
    }
    // SAFETY: no pointer.
    unsafe { real::raw_lseek(fd, off, whence) }
}

/// lseek64(2).
///
/// # Safety
/// C's contract for lseek.
#[no_mangle]
pub unsafe extern "C" fn lseek64(fd: c_int, off: off_t, whence: c_int) -> off_t {
    // SAFETY: forwarded contract.
    unsafe { lseek(fd, off, whence) }
}

/// ftruncate(2).
///
/// # Safety
/// C's contract for ftruncate.
#[no_mangle]
pub unsafe extern "C" fn ftruncate(fd: c_int, len: off_t) -> c_int {
    if tracked(fd) {
        return int(pos(len).and_then(|l| layer::ftruncate(fd, l)));
    }
    // SAFETY: no pointer.
    unsafe { real::raw_ftruncate(fd, len) }
}

/// ftruncate64(2).
///
/// # Safety
/// C's contract for ftruncate.
#[no_mangle]
pub unsafe extern "C" fn ftruncate64(fd: c_int, len: off_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { ftruncate(fd, len) }
}

/// truncate(2).
///
/// # Safety
/// C's contract for truncate.
#[no_mangle]
pub unsafe extern "C" fn truncate(p: *const c_char, len: off_t) -> c_int {
    if layer::active() {
        // SAFETY: truncate's contract.
        if let (Some(pp), Ok(l)) = (unsafe { path(p) }, pos(len)) {
            if let Handled::Done(r) = layer::truncate(pp, l) {
                return int(r);
            }
        }
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_truncate(p, len) }
}

/// truncate64(2).
///
/// # Safety
/// C's contract for truncate.
#[no_mangle]
pub unsafe extern "C" fn truncate64(p: *const c_char, len: off_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { truncate(p, len) }
}

/// fsync(2).
///
/// # Safety
/// C's contract for fsync.
#[no_mangle]
pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
    if tracked(fd) {
        return int(layer::fsync(fd));
    }
    // SAFETY: no pointer.
    unsafe { real::raw_fsync(fd) }
}

/// fdatasync(2).
///
/// # Safety
/// C's contract for fdatasync.
#[no_mangle]
pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
    if tracked(fd) {
        return int(layer::fsync(fd));
    }
    // SAFETY: no pointer.
    unsafe { real::raw_fdatasync(fd) }
}

// ---- descriptors -----------------------------------------------------------------

/// A duplicate of the layer's descriptor `old`, made from its placeholder.
fn dup_tracked(old: c_int, min: c_int, cloexec: bool) -> c_int {
    match real::dup_from(old, min, cloexec) {
        Ok(new) => match layer::dup(old, new) {
            Ok(()) => new,
            Err(e) => {
                // SAFETY: the descriptor just made, not the layer's.
                unsafe { real::raw_close(new) };
                fail(e)
            }
        },
        Err(e) => fail(e),
    }
}

/// dup(2).
///
/// # Safety
/// C's contract for dup.
#[no_mangle]
pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
    if tracked(fd) {
        return dup_tracked(fd, 0, false);
    }
    // SAFETY: no pointer.
    unsafe { real::raw_dup(fd) }
}

/// dup2 and dup3: `to` is closed first (through the layer if it is its), then names
/// what `fd` names.
fn dup_onto(fd: c_int, to: c_int, flags: Option<c_int>) -> c_int {
    if fd == to {
        return match flags {
            Some(_) => fail(libc::EINVAL),
            None if tracked(fd) => fd,
            // SAFETY: no pointer.
            None => unsafe { real::raw_dup2(fd, to) },
        };
    }
    if tracked(to) {
        // dup2 closes it silently.
        let _ = layer::close(to);
    }
    // SAFETY: no pointer; a placeholder of the layer is duplicated like any descriptor.
    let r = unsafe {
        match flags {
            Some(f) => real::raw_dup3(fd, to, f),
            None => real::raw_dup2(fd, to),
        }
    };
    if r >= 0 && tracked(fd) {
        if let Err(e) = layer::dup(fd, to) {
            // SAFETY: the descriptor just made.
            unsafe { real::raw_close(to) };
            return fail(e);
        }
    }
    r
}

/// dup2(2).
///
/// # Safety
/// C's contract for dup2.
#[no_mangle]
pub unsafe extern "C" fn dup2(fd: c_int, to: c_int) -> c_int {
    dup_onto(fd, to, None)
}

/// dup3(2).
///
/// # Safety
/// C's contract for dup3.
#[no_mangle]
pub unsafe extern "C" fn dup3(fd: c_int, to: c_int, flags: c_int) -> c_int {
    dup_onto(fd, to, Some(flags))
}

/// fcntl on a descriptor of the layer: duplicates, status flags, locks (granted: the
/// rank is one writer), descriptor flags on the placeholder.
fn fcntl_tracked(fd: c_int, cmd: c_int, arg: libc::c_ulong) -> c_int {
    match cmd {
        libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => {
            dup_tracked(fd, arg as c_int, cmd == libc::F_DUPFD_CLOEXEC)
        }
        libc::F_GETFL => match layer::status_flags(fd) {
            Ok(f) => f,
            Err(e) => fail(e),
        },
        libc::F_SETFL => 0,
        // SAFETY: no pointer (the argument is a flag word).
        libc::F_GETFD | libc::F_SETFD => unsafe { real::raw_fcntl(fd, cmd, arg) },
        libc::F_SETLK | libc::F_SETLKW | libc::F_OFD_SETLK | libc::F_OFD_SETLKW => 0,
        libc::F_GETLK | libc::F_OFD_GETLK => {
            let p = arg as *mut libc::flock;
            if p.is_null() {
                return fail(libc::EFAULT);
            }
            // SAFETY: F_GETLK's argument is a `struct flock *` (fcntl's contract).
            unsafe { (*p).l_type = libc::F_UNLCK as i16 };
            0
        }
        _ => fail(libc::EINVAL),
    }
}

/// fcntl(2).
///
/// # Safety
/// C's contract for fcntl.
#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: libc::c_ulong) -> c_int {
    if tracked(fd) {
        return fcntl_tracked(fd, cmd, arg);
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_fcntl(fd, cmd, arg) }
}

/// fcntl64(2).
///
/// # Safety
/// C's contract for fcntl.
#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: libc::c_ulong) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { fcntl(fd, cmd, arg) }
}

/// flock(2): granted on the layer's files.
///
/// # Safety
/// C's contract for flock.
#[no_mangle]
pub unsafe extern "C" fn flock(fd: c_int, op: c_int) -> c_int {
    if tracked(fd) {
        return 0;
    }
    // SAFETY: no pointer.
    unsafe { real::raw_flock(fd, op) }
}

/// mmap(2): refused on the layer's files (each replica would map a file only one of them
/// writes), loudly.
///
/// # Safety
/// C's contract for mmap.
#[no_mangle]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    if flags & libc::MAP_ANONYMOUS == 0 && tracked(fd) {
        log::error!(
            "mmap of {} refused: a file written under replication cannot be mapped (see docs/FILES.md)",
            layer::describe(fd)
        );
        set_errno(libc::ENODEV);
        return libc::MAP_FAILED;
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_mmap(addr, len, prot, flags, fd, off) }
}

/// mmap64(2).
///
/// # Safety
/// C's contract for mmap.
#[no_mangle]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: size_t,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    off: off_t,
) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { mmap(addr, len, prot, flags, fd, off) }
}

/// copy_file_range(2): EXDEV on the layer's files, so callers copy with read and write.
///
/// # Safety
/// C's contract for copy_file_range.
#[no_mangle]
pub unsafe extern "C" fn copy_file_range(
    fd_in: c_int,
    off_in: *mut i64,
    fd_out: c_int,
    off_out: *mut i64,
    len: size_t,
    flags: c_uint,
) -> ssize_t {
    if tracked(fd_in) || tracked(fd_out) {
        return fail(libc::EXDEV);
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_copy_file_range(fd_in, off_in, fd_out, off_out, len, flags) }
}

/// sendfile(2): EINVAL on the layer's files, so callers copy with read and write.
///
/// # Safety
/// C's contract for sendfile.
#[no_mangle]
pub unsafe extern "C" fn sendfile(out: c_int, inp: c_int, off: *mut off_t, n: size_t) -> ssize_t {
    if tracked(out) || tracked(inp) {
        return fail(libc::EINVAL);
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_sendfile(out, inp, off, n) }
}

/// sendfile64(2).
///
/// # Safety
/// C's contract for sendfile.
#[no_mangle]
pub unsafe extern "C" fn sendfile64(out: c_int, inp: c_int, off: *mut off_t, n: size_t) -> ssize_t {
    // SAFETY: forwarded contract.
    unsafe { sendfile(out, inp, off, n) }
}

// ---- stat ------------------------------------------------------------------------

/// Fills a stat buffer for one of the rank's files: the file system's fields when the
/// file is there, the size the program sees.
fn fill_stat(st: &mut libc::stat64, info: &StatInfo) {
    let real = info
        .path
        .as_ref()
        .and_then(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).ok())
        .and_then(|c| real::stat(&c).ok());
    match real {
        Some(r) => *st = r,
        None => {
            // SAFETY: all-zero bytes are a valid stat (plain integers).
            *st = unsafe { std::mem::zeroed() };
            st.st_mode = libc::S_IFREG | 0o644;
            st.st_nlink = 1;
            // SAFETY: getuid and getgid take nothing and cannot fail.
            (st.st_uid, st.st_gid) = unsafe { (libc::getuid(), libc::getgid()) };
            st.st_blksize = 4096;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            (st.st_atime, st.st_mtime, st.st_ctime) = (now, now, now);
        }
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        st.st_mode = libc::S_IFREG | (st.st_mode & 0o7777);
    }
    st.st_size = info.size as i64;
    st.st_blocks = info.size.div_ceil(512) as i64;
}

/// Writes the answer for a file of the layer into the program's stat buffer.
///
/// # Safety
/// `buf` points to a writable `struct stat` (the same layout as `stat64` on 64-bit
/// Linux).
unsafe fn answer_stat(buf: *mut libc::stat64, r: Result<StatInfo, c_int>) -> c_int {
    match r {
        Ok(info) if !buf.is_null() => {
            // SAFETY: the caller's contract.
            fill_stat(unsafe { &mut *buf }, &info);
            0
        }
        Ok(_) => fail(libc::EFAULT),
        Err(e) => fail(e),
    }
}

/// fstat(2).
///
/// # Safety
/// C's contract for fstat.
#[no_mangle]
pub unsafe extern "C" fn fstat(fd: c_int, buf: *mut libc::stat64) -> c_int {
    if tracked(fd) {
        // SAFETY: fstat's contract.
        return unsafe { answer_stat(buf, layer::fstat(fd)) };
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_fstat(fd, buf) }
}

/// fstat64(2).
///
/// # Safety
/// C's contract for fstat.
#[no_mangle]
pub unsafe extern "C" fn fstat64(fd: c_int, buf: *mut libc::stat64) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { fstat(fd, buf) }
}

/// stat on a path for every name.
///
/// # Safety
/// C's contract for fstatat.
unsafe fn stat_at(dirfd: c_int, p: *const c_char, buf: *mut libc::stat64, flags: c_int) -> c_int {
    // SAFETY: fstatat's contract.
    let pp = unsafe { path(p) };
    if pp.is_some_and(|x| x.as_os_str().is_empty()) && flags & libc::AT_EMPTY_PATH != 0 {
        if tracked(dirfd) {
            // SAFETY: forwarded contract.
            return unsafe { answer_stat(buf, layer::fstat(dirfd)) };
        }
    } else if layer::active() {
        if let Some(pp) = pp {
            if let Handled::Done(r) = layer::stat_path(dirfd, pp) {
                // SAFETY: forwarded contract.
                return unsafe { answer_stat(buf, r) };
            }
        }
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_fstatat(dirfd, p, buf, flags) }
}

/// stat(2).
///
/// # Safety
/// C's contract for stat.
#[no_mangle]
pub unsafe extern "C" fn stat(p: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { stat_at(libc::AT_FDCWD, p, buf, 0) }
}

/// stat64(2).
///
/// # Safety
/// C's contract for stat.
#[no_mangle]
pub unsafe extern "C" fn stat64(p: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { stat_at(libc::AT_FDCWD, p, buf, 0) }
}

/// lstat(2) (the layer's files are never links).
///
/// # Safety
/// C's contract for lstat.
#[no_mangle]
pub unsafe extern "C" fn lstat(p: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { stat_at(libc::AT_FDCWD, p, buf, libc::AT_SYMLINK_NOFOLLOW) }
}

/// lstat64(2).
///
/// # Safety
/// C's contract for lstat.
#[no_mangle]
pub unsafe extern "C" fn lstat64(p: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { stat_at(libc::AT_FDCWD, p, buf, libc::AT_SYMLINK_NOFOLLOW) }
}

/// fstatat(2).
///
/// # Safety
/// C's contract for fstatat.
#[no_mangle]
pub unsafe extern "C" fn fstatat(
    dirfd: c_int,
    p: *const c_char,
    buf: *mut libc::stat64,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { stat_at(dirfd, p, buf, flags) }
}

/// fstatat64(2).
///
/// # Safety
/// C's contract for fstatat.
#[no_mangle]
pub unsafe extern "C" fn fstatat64(
    dirfd: c_int,
    p: *const c_char,
    buf: *mut libc::stat64,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { stat_at(dirfd, p, buf, flags) }
}

/// statx(2) (what Rust's standard library asks first).
///
/// # Safety
/// C's contract for statx.
#[no_mangle]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    p: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    // SAFETY: statx's contract.
    let pp = unsafe { path(p) };
    let r = if pp.is_some_and(|x| x.as_os_str().is_empty()) && flags & libc::AT_EMPTY_PATH != 0 {
        tracked(dirfd).then(|| layer::fstat(dirfd))
    } else if layer::active() {
        match pp.map(|pp| layer::stat_path(dirfd, pp)) {
            Some(Handled::Done(r)) => Some(r),
            Some(Handled::Pass) | None => None,
        }
    } else {
        None
    };
    let Some(r) = r else {
        // SAFETY: the program's own arguments.
        return unsafe { real::raw_statx(dirfd, p, flags, mask, buf) };
    };
    let info = match r {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    if buf.is_null() {
        return fail(libc::EFAULT);
    }
    // SAFETY: all-zero bytes are a valid stat64 (plain integers).
    let mut st: libc::stat64 = unsafe { std::mem::zeroed() };
    fill_stat(&mut st, &info);
    // SAFETY: statx's contract: `buf` is a writable `struct statx`; all-zero is valid.
    let x = unsafe { &mut *buf };
    // SAFETY: as above.
    *x = unsafe { std::mem::zeroed() };
    x.stx_mask = libc::STATX_BASIC_STATS;
    x.stx_blksize = st.st_blksize as u32;
    x.stx_nlink = st.st_nlink as u32;
    x.stx_uid = st.st_uid;
    x.stx_gid = st.st_gid;
    x.stx_mode = st.st_mode as u16;
    x.stx_ino = st.st_ino;
    x.stx_size = st.st_size as u64;
    x.stx_blocks = st.st_blocks as u64;
    x.stx_atime.tv_sec = st.st_atime;
    x.stx_mtime.tv_sec = st.st_mtime;
    x.stx_ctime.tv_sec = st.st_ctime;
    x.stx_dev_major = libc::major(st.st_dev);
    x.stx_dev_minor = libc::minor(st.st_dev);
    0
}

/// access and faccessat: a file of the rank exists.
///
/// # Safety
/// C's contract for faccessat.
unsafe fn access_at(dirfd: c_int, p: *const c_char, mode: c_int, flags: c_int) -> c_int {
    if layer::active() {
        // SAFETY: faccessat's contract.
        if let Some(pp) = unsafe { path(p) } {
            if let Handled::Done(r) = layer::stat_path(dirfd, pp) {
                return int(r.map(|_| ()));
            }
        }
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_faccessat(dirfd, p, mode, flags) }
}

/// access(2).
///
/// # Safety
/// C's contract for access.
#[no_mangle]
pub unsafe extern "C" fn access(p: *const c_char, mode: c_int) -> c_int {
    if !layer::active() {
        // SAFETY: the program's own arguments.
        return unsafe { real::raw_access(p, mode) };
    }
    // SAFETY: forwarded contract.
    unsafe { access_at(libc::AT_FDCWD, p, mode, 0) }
}

/// faccessat(2).
///
/// # Safety
/// C's contract for faccessat.
#[no_mangle]
pub unsafe extern "C" fn faccessat(
    dirfd: c_int,
    p: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { access_at(dirfd, p, mode, flags) }
}

// ---- names -----------------------------------------------------------------------

/// rename for every name.
///
/// # Safety
/// C's contract for renameat2.
unsafe fn rename_at(
    fd1: c_int,
    from: *const c_char,
    fd2: c_int,
    to: *const c_char,
    flags: c_uint,
) -> c_int {
    if layer::active() && (flags == 0 || flags == libc::RENAME_NOREPLACE) {
        // SAFETY: renameat2's contract.
        if let (Some(a), Some(b)) = unsafe { (path(from), path(to)) } {
            if flags == libc::RENAME_NOREPLACE {
                if let Handled::Done(Ok(_)) = layer::stat_path(fd2, b) {
                    return fail(libc::EEXIST);
                }
            }
            if let Handled::Done(r) = layer::rename(fd1, a, fd2, b) {
                return int(r);
            }
        }
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_renameat2(fd1, from, fd2, to, flags) }
}

/// rename(2).
///
/// # Safety
/// C's contract for rename.
#[no_mangle]
pub unsafe extern "C" fn rename(from: *const c_char, to: *const c_char) -> c_int {
    if !layer::active() {
        // SAFETY: the program's own arguments.
        return unsafe { real::raw_rename(from, to) };
    }
    // SAFETY: forwarded contract.
    unsafe { rename_at(libc::AT_FDCWD, from, libc::AT_FDCWD, to, 0) }
}

/// renameat(2).
///
/// # Safety
/// C's contract for renameat.
#[no_mangle]
pub unsafe extern "C" fn renameat(
    fd1: c_int,
    from: *const c_char,
    fd2: c_int,
    to: *const c_char,
) -> c_int {
    if !layer::active() {
        // SAFETY: the program's own arguments.
        return unsafe { real::raw_renameat(fd1, from, fd2, to) };
    }
    // SAFETY: forwarded contract.
    unsafe { rename_at(fd1, from, fd2, to, 0) }
}

/// renameat2(2).
///
/// # Safety
/// C's contract for renameat2.
#[no_mangle]
pub unsafe extern "C" fn renameat2(
    fd1: c_int,
    from: *const c_char,
    fd2: c_int,
    to: *const c_char,
    flags: c_uint,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { rename_at(fd1, from, fd2, to, flags) }
}

/// unlink and rmdir for every name.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn remove_at(dirfd: c_int, p: *const c_char, dir: bool) -> Option<c_int> {
    if !layer::active() {
        return None;
    }
    // SAFETY: forwarded contract.
    let pp = unsafe { path(p) }?;
    match layer::unlink(dirfd, pp, dir) {
        Handled::Done(r) => Some(int(r)),
        Handled::Pass => None,
    }
}

/// unlink(2).
///
/// # Safety
/// C's contract for unlink.
#[no_mangle]
pub unsafe extern "C" fn unlink(p: *const c_char) -> c_int {
    // SAFETY: forwarded contract.
    match unsafe { remove_at(libc::AT_FDCWD, p, false) } {
        Some(r) => r,
        // SAFETY: the program's own argument.
        None => unsafe { real::raw_unlink(p) },
    }
}

/// unlinkat(2).
///
/// # Safety
/// C's contract for unlinkat.
#[no_mangle]
pub unsafe extern "C" fn unlinkat(dirfd: c_int, p: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    match unsafe { remove_at(dirfd, p, flags & libc::AT_REMOVEDIR != 0) } {
        Some(r) => r,
        // SAFETY: the program's own arguments.
        None => unsafe { real::raw_unlinkat(dirfd, p, flags) },
    }
}

/// rmdir(2).
///
/// # Safety
/// C's contract for rmdir.
#[no_mangle]
pub unsafe extern "C" fn rmdir(p: *const c_char) -> c_int {
    // SAFETY: forwarded contract.
    match unsafe { remove_at(libc::AT_FDCWD, p, true) } {
        Some(r) => r,
        // SAFETY: the program's own argument.
        None => unsafe { real::raw_rmdir(p) },
    }
}

/// remove(3): a file, else a directory.
///
/// # Safety
/// C's contract for remove.
#[no_mangle]
pub unsafe extern "C" fn remove(p: *const c_char) -> c_int {
    // SAFETY: forwarded contract.
    match unsafe { remove_at(libc::AT_FDCWD, p, false) } {
        Some(r) if r < 0 && real::errno() == libc::EISDIR => {
            // SAFETY: forwarded contract.
            unsafe { remove_at(libc::AT_FDCWD, p, true) }.unwrap_or(r)
        }
        Some(r) => r,
        // SAFETY: the program's own argument.
        None => unsafe { real::raw_remove(p) },
    }
}

/// mkdir and mkdirat.
///
/// # Safety
/// C's contract for mkdirat.
unsafe fn mkdir_at(dirfd: c_int, p: *const c_char, mode: mode_t) -> c_int {
    if layer::active() {
        // SAFETY: forwarded contract.
        if let Some(pp) = unsafe { path(p) } {
            if let Handled::Done(r) = layer::mkdir(dirfd, pp, mode) {
                return int(r);
            }
        }
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_mkdirat(dirfd, p, mode) }
}

/// mkdir(2).
///
/// # Safety
/// C's contract for mkdir.
#[no_mangle]
pub unsafe extern "C" fn mkdir(p: *const c_char, mode: mode_t) -> c_int {
    if !layer::active() {
        // SAFETY: the program's own arguments.
        return unsafe { real::raw_mkdir(p, mode) };
    }
    // SAFETY: forwarded contract.
    unsafe { mkdir_at(libc::AT_FDCWD, p, mode) }
}

/// mkdirat(2).
///
/// # Safety
/// C's contract for mkdirat.
#[no_mangle]
pub unsafe extern "C" fn mkdirat(dirfd: c_int, p: *const c_char, mode: mode_t) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { mkdir_at(dirfd, p, mode) }
}

// ---- temporary files: this process's own -------------------------------------------

/// The mkstemp family: made by the C library, then noted as this process's own.
///
/// # Safety
/// `t` is a writable NUL-terminated template.
unsafe fn mktemp_any(t: *mut c_char, suffix: c_int, flags: c_int) -> c_int {
    // SAFETY: the program's own arguments.
    let fd = unsafe { real::raw_mkostemps(t, suffix, flags) };
    if fd >= 0 && layer::active() {
        // SAFETY: mkostemps filled in the template, still NUL-terminated.
        if let Some(p) = unsafe { path(t) } {
            layer::private(p);
        }
    }
    fd
}

/// mkstemp(3).
///
/// # Safety
/// C's contract for mkstemp.
#[no_mangle]
pub unsafe extern "C" fn mkstemp(t: *mut c_char) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { mktemp_any(t, 0, 0) }
}

/// mkstemp64(3).
///
/// # Safety
/// C's contract for mkstemp.
#[no_mangle]
pub unsafe extern "C" fn mkstemp64(t: *mut c_char) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { mktemp_any(t, 0, 0) }
}

/// mkostemp(3) (libgfortran's scratch files).
///
/// # Safety
/// C's contract for mkostemp.
#[no_mangle]
pub unsafe extern "C" fn mkostemp(t: *mut c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { mktemp_any(t, 0, flags) }
}

/// mkostemp64(3).
///
/// # Safety
/// C's contract for mkostemp.
#[no_mangle]
pub unsafe extern "C" fn mkostemp64(t: *mut c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { mktemp_any(t, 0, flags) }
}

/// mkstemps(3).
///
/// # Safety
/// C's contract for mkstemps.
#[no_mangle]
pub unsafe extern "C" fn mkstemps(t: *mut c_char, suffix: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { mktemp_any(t, suffix, 0) }
}

/// mkostemps(3).
///
/// # Safety
/// C's contract for mkostemps.
#[no_mangle]
pub unsafe extern "C" fn mkostemps(t: *mut c_char, suffix: c_int, flags: c_int) -> c_int {
    // SAFETY: forwarded contract.
    unsafe { mktemp_any(t, suffix, flags) }
}

/// mkdtemp(3): the directory and all in it are this process's own.
///
/// # Safety
/// C's contract for mkdtemp.
#[no_mangle]
pub unsafe extern "C" fn mkdtemp(t: *mut c_char) -> *mut c_char {
    // SAFETY: the program's own argument.
    let r = unsafe { real::raw_mkdtemp(t) };
    if !r.is_null() && layer::active() {
        // SAFETY: mkdtemp returns the template, filled in.
        if let Some(p) = unsafe { path(r) } {
            layer::private(p);
        }
    }
    r
}
