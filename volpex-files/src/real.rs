//! The C library's own functions, behind the ones this crate exports: found with
//! `dlsym(RTLD_NEXT, name)` at their first use, so they keep every behaviour of the C
//! library (cancellation points, errno), and called either with the program's raw
//! arguments (pass-through, `raw_*`) or through safe wrappers that take checked Rust values
//! and return `Result<_, errno>` (the layer's own I/O).
//!
//! The bottom of the crate, and with `sys` its only unsafe code: the exported functions
//! (`sys`) pass through to it, and the layer, the worker and the writer (`apply`) do
//! their own I/O with it, so none of them comes back into an exported function. Must
//! never decide anything about the files nor use another module of this crate.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

use libc::{mode_t, off_t, size_t, ssize_t, FILE};

/// The address of the C library's `name` (NUL-terminated), 0 if there is none.
fn resolve(name: &'static [u8]) -> usize {
    // SAFETY: `name` is a NUL-terminated literal (the macro below appends the NUL);
    // RTLD_NEXT asks for the next definition after this object's, the C library's.
    unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr() as *const c_char) as usize }
}

/// The value a failed call returns, with errno ENOSYS, when the C library has no such
/// function.
pub trait Failure {
    /// -1, or a null pointer.
    fn failure() -> Self;
}

impl Failure for c_int {
    fn failure() -> Self {
        -1
    }
}

impl Failure for ssize_t {
    fn failure() -> Self {
        -1
    }
}

impl Failure for i64 {
    fn failure() -> Self {
        -1
    }
}

impl Failure for *mut FILE {
    fn failure() -> Self {
        std::ptr::null_mut()
    }
}

impl Failure for *mut c_void {
    fn failure() -> Self {
        libc::MAP_FAILED
    }
}

impl Failure for *mut c_char {
    fn failure() -> Self {
        std::ptr::null_mut()
    }
}

/// Sets errno.
pub fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns this thread's errno, always valid.
    unsafe { *libc::__errno_location() = e };
}

/// This thread's errno.
pub fn errno() -> c_int {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() }
}

macro_rules! real {
    ($( $(#[$m:meta])* fn $name:ident = $sym:literal ($($a:ident: $t:ty),*) -> $r:ty; )*) => {
        $(
            $(#[$m])*
            /// The C library's function of this name, called with these arguments.
            ///
            /// # Safety
            /// The C function's own contract on its arguments.
            pub unsafe fn $name($($a: $t),*) -> $r {
                static ADDR: AtomicUsize = AtomicUsize::new(0);
                let mut p = ADDR.load(Ordering::Relaxed);
                if p == 0 {
                    p = resolve(concat!($sym, "\0").as_bytes());
                    ADDR.store(p, Ordering::Relaxed);
                }
                if p == 0 {
                    set_errno(libc::ENOSYS);
                    return <$r as Failure>::failure();
                }
                // SAFETY: `p` is the C library's function of this name, whose signature
                // this declaration repeats; a variadic one (open, openat, fcntl) gets its
                // optional argument as a fixed one, which the x86-64 and AArch64 Linux
                // calling conventions pass in the same register.
                let f: unsafe extern "C" fn($($t),*) -> $r =
                    unsafe { std::mem::transmute::<usize, _>(p) };
                // SAFETY: forwarded contract.
                unsafe { f($($a),*) }
            }
        )*
    };
}

real! {
    fn raw_open = "open" (path: *const c_char, flags: c_int, mode: mode_t) -> c_int;
    fn raw_openat = "openat" (dirfd: c_int, path: *const c_char, flags: c_int, mode: mode_t) -> c_int;
    fn raw_close = "close" (fd: c_int) -> c_int;
    fn raw_read = "read" (fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t;
    fn raw_pread = "pread64" (fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t;
    fn raw_readv = "readv" (fd: c_int, iov: *const libc::iovec, n: c_int) -> ssize_t;
    fn raw_preadv = "preadv64" (fd: c_int, iov: *const libc::iovec, n: c_int, off: off_t) -> ssize_t;
    fn raw_write = "write" (fd: c_int, buf: *const c_void, n: size_t) -> ssize_t;
    fn raw_pwrite = "pwrite64" (fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t;
    fn raw_writev = "writev" (fd: c_int, iov: *const libc::iovec, n: c_int) -> ssize_t;
    fn raw_pwritev = "pwritev64" (fd: c_int, iov: *const libc::iovec, n: c_int, off: off_t) -> ssize_t;
    fn raw_lseek = "lseek64" (fd: c_int, off: off_t, whence: c_int) -> off_t;
    fn raw_ftruncate = "ftruncate64" (fd: c_int, len: off_t) -> c_int;
    fn raw_truncate = "truncate64" (path: *const c_char, len: off_t) -> c_int;
    fn raw_fsync = "fsync" (fd: c_int) -> c_int;
    fn raw_fdatasync = "fdatasync" (fd: c_int) -> c_int;
    fn raw_dup = "dup" (fd: c_int) -> c_int;
    fn raw_dup2 = "dup2" (fd: c_int, to: c_int) -> c_int;
    fn raw_dup3 = "dup3" (fd: c_int, to: c_int, flags: c_int) -> c_int;
    fn raw_fcntl = "fcntl64" (fd: c_int, cmd: c_int, arg: libc::c_ulong) -> c_int;
    fn raw_fstat = "fstat64" (fd: c_int, st: *mut libc::stat64) -> c_int;
    fn raw_stat = "stat64" (path: *const c_char, st: *mut libc::stat64) -> c_int;
    fn raw_fstatat = "fstatat64" (dirfd: c_int, path: *const c_char, st: *mut libc::stat64, flags: c_int) -> c_int;
    fn raw_statx = "statx" (dirfd: c_int, path: *const c_char, flags: c_int, mask: libc::c_uint, st: *mut libc::statx) -> c_int;
    fn raw_access = "access" (path: *const c_char, mode: c_int) -> c_int;
    fn raw_faccessat = "faccessat" (dirfd: c_int, path: *const c_char, mode: c_int, flags: c_int) -> c_int;
    fn raw_rename = "rename" (from: *const c_char, to: *const c_char) -> c_int;
    fn raw_renameat = "renameat" (fromfd: c_int, from: *const c_char, tofd: c_int, to: *const c_char) -> c_int;
    fn raw_renameat2 = "renameat2" (fromfd: c_int, from: *const c_char, tofd: c_int, to: *const c_char, flags: libc::c_uint) -> c_int;
    fn raw_unlink = "unlink" (path: *const c_char) -> c_int;
    fn raw_unlinkat = "unlinkat" (dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    fn raw_remove = "remove" (path: *const c_char) -> c_int;
    fn raw_mkdir = "mkdir" (path: *const c_char, mode: mode_t) -> c_int;
    fn raw_mkdirat = "mkdirat" (dirfd: c_int, path: *const c_char, mode: mode_t) -> c_int;
    fn raw_rmdir = "rmdir" (path: *const c_char) -> c_int;
    fn raw_mmap = "mmap64" (addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void;
    fn raw_copy_file_range = "copy_file_range" (fd_in: c_int, off_in: *mut i64, fd_out: c_int, off_out: *mut i64, len: size_t, flags: libc::c_uint) -> ssize_t;
    fn raw_sendfile = "sendfile64" (out: c_int, inp: c_int, off: *mut off_t, n: size_t) -> ssize_t;
    fn raw_flock = "flock" (fd: c_int, op: c_int) -> c_int;
    fn raw_fopen = "fopen64" (path: *const c_char, mode: *const c_char) -> *mut FILE;
    fn raw_fdopen = "fdopen" (fd: c_int, mode: *const c_char) -> *mut FILE;
    fn raw_freopen = "freopen64" (path: *const c_char, mode: *const c_char, f: *mut FILE) -> *mut FILE;
    fn raw_mkostemps = "mkostemps" (template: *mut c_char, suffix: c_int, flags: c_int) -> c_int;
    fn raw_mkdtemp = "mkdtemp" (template: *mut c_char) -> *mut c_char;
    fn raw_fileno = "fileno" (f: *mut FILE) -> c_int;
}

fn check(r: c_int) -> Result<c_int, c_int> {
    if r < 0 {
        Err(errno())
    } else {
        Ok(r)
    }
}

/// open(2) for the layer's own use (retries EINTR).
pub fn open(path: &CStr, flags: c_int, mode: mode_t) -> Result<c_int, c_int> {
    loop {
        // SAFETY: a NUL-terminated path.
        match check(unsafe { raw_open(path.as_ptr(), flags | libc::O_CLOEXEC, mode) }) {
            Err(libc::EINTR) => continue,
            r => return r,
        }
    }
}

/// close(2).
pub fn close(fd: c_int) -> Result<(), c_int> {
    // SAFETY: closing a descriptor the layer owns.
    check(unsafe { raw_close(fd) }).map(|_| ())
}

/// Writes all of `data` at `off`.
pub fn pwrite_all(fd: c_int, mut data: &[u8], mut off: u64) -> Result<(), c_int> {
    while !data.is_empty() {
        // SAFETY: `data` is readable for its length.
        let n = unsafe { raw_pwrite(fd, data.as_ptr() as *const c_void, data.len(), off as off_t) };
        match n {
            n if n > 0 => {
                data = &data[n as usize..];
                off += n as u64;
            }
            0 => return Err(libc::EIO),
            _ if errno() == libc::EINTR => {}
            _ => return Err(errno()),
        }
    }
    Ok(())
}

/// Writes all of `parts`, one after another, at `off` (`pwritev`, at most `IOV_MAX`
/// vectors a call).
pub fn pwritev_all(fd: c_int, parts: &[&[u8]], mut off: u64) -> Result<(), c_int> {
    const MAX: usize = 1024;
    let mut parts: Vec<&[u8]> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    let mut first = 0;
    while first < parts.len() {
        let iov: Vec<libc::iovec> = parts[first..(first + MAX).min(parts.len())]
            .iter()
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut c_void,
                iov_len: p.len(),
            })
            .collect();
        // SAFETY: each iovec names a readable slice that lives through the call.
        let n = unsafe { raw_pwritev(fd, iov.as_ptr(), iov.len() as c_int, off as off_t) };
        let mut n = match n {
            n if n > 0 => n as usize,
            0 => return Err(libc::EIO),
            _ if errno() == libc::EINTR => continue,
            _ => return Err(errno()),
        };
        off += n as u64;
        while n > 0 {
            let p = parts[first];
            if n >= p.len() {
                n -= p.len();
                first += 1;
            } else {
                parts[first] = &p[n..];
                n = 0;
            }
        }
    }
    Ok(())
}

/// Reads up to `buf.len()` bytes at `off` (fewer at the end of the file).
pub fn pread_full(fd: c_int, buf: &mut [u8], off: u64) -> Result<usize, c_int> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: `buf[done..]` is writable for its length.
        let n = unsafe {
            raw_pread(
                fd,
                buf[done..].as_mut_ptr() as *mut c_void,
                buf.len() - done,
                (off + done as u64) as off_t,
            )
        };
        match n {
            0 => break,
            n if n > 0 => done += n as usize,
            _ if errno() == libc::EINTR => {}
            _ => return Err(errno()),
        }
    }
    Ok(done)
}

/// ftruncate(2).
pub fn ftruncate(fd: c_int, len: u64) -> Result<(), c_int> {
    // SAFETY: no pointer.
    check(unsafe { raw_ftruncate(fd, len as off_t) }).map(|_| ())
}

/// fsync(2).
pub fn fsync(fd: c_int) -> Result<(), c_int> {
    // SAFETY: no pointer.
    check(unsafe { raw_fsync(fd) }).map(|_| ())
}

/// rename(2).
pub fn rename(from: &CStr, to: &CStr) -> Result<(), c_int> {
    // SAFETY: NUL-terminated paths.
    check(unsafe { raw_rename(from.as_ptr(), to.as_ptr()) }).map(|_| ())
}

/// unlink(2).
pub fn unlink(path: &CStr) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    check(unsafe { raw_unlink(path.as_ptr()) }).map(|_| ())
}

/// mkdir(2).
pub fn mkdir(path: &CStr, mode: mode_t) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    check(unsafe { raw_mkdir(path.as_ptr(), mode) }).map(|_| ())
}

/// rmdir(2).
pub fn rmdir(path: &CStr) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    check(unsafe { raw_rmdir(path.as_ptr()) }).map(|_| ())
}

/// stat(2), following links.
pub fn stat(path: &CStr) -> Result<libc::stat64, c_int> {
    // SAFETY: all-zero bytes are a valid `stat64` (plain integers).
    let mut st: libc::stat64 = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a writable stat buffer.
    check(unsafe { raw_stat(path.as_ptr(), &mut st) }).map(|_| st)
}

/// fstat(2).
pub fn fstat(fd: c_int) -> Result<libc::stat64, c_int> {
    // SAFETY: all-zero bytes are a valid `stat64` (plain integers).
    let mut st: libc::stat64 = unsafe { std::mem::zeroed() };
    // SAFETY: a writable stat buffer.
    check(unsafe { raw_fstat(fd, &mut st) }).map(|_| st)
}

/// Whether the effective user may access `path` with `mode` (W_OK, ...): EACCES, EROFS.
pub fn access(path: &CStr, mode: c_int) -> Result<(), c_int> {
    // SAFETY: a NUL-terminated path.
    check(unsafe { raw_faccessat(libc::AT_FDCWD, path.as_ptr(), mode, libc::AT_EACCESS) })
        .map(|_| ())
}

/// A descriptor that stands for a file of the layer in the program: it reserves the
/// number, and any call that reaches the kernel with it (not through the layer) fails
/// with EBADF instead of writing somewhere: an `O_PATH` descriptor of `/dev/null`.
pub fn placeholder(cloexec: bool) -> Result<c_int, c_int> {
    let flags = libc::O_PATH | if cloexec { libc::O_CLOEXEC } else { 0 };
    // SAFETY: a NUL-terminated literal path.
    check(unsafe { raw_open(c"/dev/null".as_ptr(), flags, 0) })
}

/// `dup` of a placeholder to the lowest free number at least `min`.
pub fn dup_from(fd: c_int, min: c_int, cloexec: bool) -> Result<c_int, c_int> {
    let cmd = if cloexec {
        libc::F_DUPFD_CLOEXEC
    } else {
        libc::F_DUPFD
    };
    // SAFETY: no pointer.
    check(unsafe { raw_fcntl(fd, cmd, min as libc::c_ulong) })
}

/// Ends the process at once (no exit handlers: they would write through the layer).
pub fn exit_now(code: c_int) -> ! {
    // SAFETY: _exit takes no pointer and does not return.
    unsafe { libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_gathered_write_of_more_parts_than_one_call_takes_lands_whole() {
        let path = std::env::temp_dir().join(format!("volpex-pwritev-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        let bytes: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        // 3000 parts of one byte and an empty one: three calls of at most 1024 vectors.
        let mut parts: Vec<&[u8]> = bytes.chunks(1).collect();
        parts.insert(7, &[]);
        let r = pwritev_all(file.as_raw_fd(), &parts, 5);
        let got = std::fs::read(&path);
        std::fs::remove_file(&path).unwrap();
        r.unwrap();
        let got = got.unwrap();
        assert_eq!(&got[..5], &[0; 5]);
        assert_eq!(&got[5..], &bytes[..]);
    }
}
