//! C streams on the rank's files. The C library's stdio writes through its own internal
//! calls, which never reach `symbols`: so `fopen`, `fopen64` and `fdopen` of a file the
//! layer takes give the program a stream made with `fopencookie` whose reads, writes,
//! seeks and close are the layer's. Its descriptor field holds the layer's descriptor,
//! so `fileno` works (libstdc++'s file streams write through it). `freopen` onto such a
//! file is refused, loudly (the stream it reuses cannot be one of these).

use std::ffi::{c_char, c_int, c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use libc::{off64_t, size_t, ssize_t, FILE};

use crate::layer::{self, tracked, Handled};
use crate::real::{self, set_errno};

/// glibc's `cookie_io_functions_t`.
#[repr(C)]
struct CookieIo {
    read: unsafe extern "C" fn(*mut c_void, *mut c_char, size_t) -> ssize_t,
    write: unsafe extern "C" fn(*mut c_void, *const c_char, size_t) -> ssize_t,
    seek: unsafe extern "C" fn(*mut c_void, *mut off64_t, c_int) -> c_int,
    close: unsafe extern "C" fn(*mut c_void) -> c_int,
}

extern "C" {
    /// glibc's fopencookie(3).
    fn fopencookie(cookie: *mut c_void, mode: *const c_char, io: CookieIo) -> *mut FILE;
}

/// Offset of `_fileno` in glibc's `struct _IO_FILE` on 64-bit targets: `int _flags`
/// (padded to 8), eleven buffer pointers, `_markers`, `_chain`.
const FILENO_OFFSET: usize = 8 + 13 * 8;
/// `check_layout` found `_fileno` where `FILENO_OFFSET` says.
static FILENO_KNOWN: AtomicBool = AtomicBool::new(false);

/// Checks on a real stream that its descriptor sits at `FILENO_OFFSET`.
pub fn check_layout() {
    // SAFETY: literal NUL-terminated arguments.
    let f = unsafe { real::raw_fopen(c"/dev/null".as_ptr(), c"r".as_ptr()) };
    if f.is_null() {
        return;
    }
    // SAFETY: `f` is a live stream; `_fileno` lies within glibc's FILE, which is larger
    // than FILENO_OFFSET + 4 bytes on 64-bit targets; read as a plain int.
    let (at, fileno) = unsafe {
        (
            std::ptr::read_unaligned((f as *const u8).add(FILENO_OFFSET) as *const c_int),
            real::raw_fileno(f),
        )
    };
    // SAFETY: closing the stream opened above.
    unsafe { libc::fclose(f) };
    let ok = cfg!(target_pointer_width = "64") && at == fileno && fileno >= 0;
    FILENO_KNOWN.store(ok, Ordering::Relaxed);
    if !ok {
        log::warn!("unexpected stdio layout: fileno() of streams on replicated files returns -1");
    }
}

/// The open flags of an fopen mode; `None` for a mode fopen refuses.
fn flags(mode: &[u8]) -> Option<c_int> {
    let (first, rest) = mode.split_first()?;
    let plus = rest.iter().take_while(|&&c| c != b',').any(|&c| c == b'+');
    let mut f = match (first, plus) {
        (b'r', false) => libc::O_RDONLY,
        (b'r', true) => libc::O_RDWR,
        (b'w', false) => libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
        (b'w', true) => libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC,
        (b'a', false) => libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
        (b'a', true) => libc::O_RDWR | libc::O_CREAT | libc::O_APPEND,
        _ => return None,
    };
    for &c in rest.iter().take_while(|&&c| c != b',') {
        match c {
            b'x' => f |= libc::O_EXCL,
            b'e' => f |= libc::O_CLOEXEC,
            _ => {}
        }
    }
    Some(f)
}

unsafe extern "C" fn cookie_read(c: *mut c_void, buf: *mut c_char, n: size_t) -> ssize_t {
    let fd = c as usize as c_int;
    if n == 0 {
        return 0;
    }
    if buf.is_null() {
        set_errno(libc::EFAULT);
        return -1;
    }
    // SAFETY: stdio hands a writable buffer of `n` bytes.
    let b = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, n) };
    match layer::read(fd, b, None) {
        Ok(k) => k as ssize_t,
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

unsafe extern "C" fn cookie_write(c: *mut c_void, buf: *const c_char, n: size_t) -> ssize_t {
    let fd = c as usize as c_int;
    if n == 0 {
        return 0;
    }
    if buf.is_null() {
        set_errno(libc::EFAULT);
        return -1;
    }
    // SAFETY: stdio hands `n` readable bytes.
    let b = unsafe { std::slice::from_raw_parts(buf as *const u8, n) };
    match layer::write(fd, &[b], None) {
        Ok(k) => k as ssize_t,
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

unsafe extern "C" fn cookie_seek(c: *mut c_void, off: *mut off64_t, whence: c_int) -> c_int {
    let fd = c as usize as c_int;
    if off.is_null() {
        set_errno(libc::EINVAL);
        return -1;
    }
    // SAFETY: stdio passes a valid offset to read and update.
    let o = unsafe { &mut *off };
    match layer::seek(fd, *o, whence) {
        Ok(p) => {
            *o = p as off64_t;
            0
        }
        Err(e) => {
            set_errno(e);
            -1
        }
    }
}

unsafe extern "C" fn cookie_close(c: *mut c_void) -> c_int {
    let fd = c as usize as c_int;
    if !tracked(fd) {
        // Closed under the stream already (close(fileno(f))).
        return 0;
    }
    super::symbols::close_tracked(fd)
}

/// A stream on the layer's descriptor `fd`; closes `fd` if it cannot be made.
fn stream(fd: c_int, mode: &CStr) -> *mut FILE {
    let funcs = CookieIo {
        read: cookie_read,
        write: cookie_write,
        seek: cookie_seek,
        close: cookie_close,
    };
    // SAFETY: a valid mode string and callbacks that take the cookie as a descriptor.
    let f = unsafe { fopencookie(fd as usize as *mut c_void, mode.as_ptr(), funcs) };
    if f.is_null() {
        let e = real::errno();
        super::symbols::close_tracked(fd);
        set_errno(e);
        return f;
    }
    if FILENO_KNOWN.load(Ordering::Relaxed) {
        // SAFETY: `check_layout` found `_fileno` at this offset of glibc's FILE; the
        // stream was just made and is not shared yet.
        unsafe { std::ptr::write_unaligned((f as *mut u8).add(FILENO_OFFSET) as *mut c_int, fd) };
    }
    f
}

/// fopen for both names.
///
/// # Safety
/// C's contract for fopen.
unsafe fn fopen_any(p: *const c_char, mode: *const c_char) -> *mut FILE {
    if layer::active() && !p.is_null() && !mode.is_null() {
        // SAFETY: fopen's contract: NUL-terminated path and mode.
        let (pc, mc) = unsafe { (CStr::from_ptr(p), CStr::from_ptr(mode)) };
        if let Some(fl) = flags(mc.to_bytes()) {
            let path = Path::new(OsStr::from_bytes(pc.to_bytes()));
            match layer::open(libc::AT_FDCWD, path, fl, 0o666) {
                Handled::Pass => {}
                Handled::Done(Ok(fd)) => return stream(fd, mc),
                Handled::Done(Err(e)) => {
                    set_errno(e);
                    return std::ptr::null_mut();
                }
            }
        }
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_fopen(p, mode) }
}

/// fopen(3).
///
/// # Safety
/// C's contract for fopen.
#[no_mangle]
pub unsafe extern "C" fn fopen(p: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: forwarded contract.
    unsafe { fopen_any(p, mode) }
}

/// fopen64(3).
///
/// # Safety
/// C's contract for fopen.
#[no_mangle]
pub unsafe extern "C" fn fopen64(p: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: forwarded contract.
    unsafe { fopen_any(p, mode) }
}

/// fdopen(3): a stream on one of the layer's descriptors is one of ours.
///
/// # Safety
/// C's contract for fdopen.
#[no_mangle]
pub unsafe extern "C" fn fdopen(fd: c_int, mode: *const c_char) -> *mut FILE {
    if tracked(fd) && !mode.is_null() {
        // SAFETY: fdopen's contract: a NUL-terminated mode.
        return stream(fd, unsafe { CStr::from_ptr(mode) });
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_fdopen(fd, mode) }
}

/// freopen for both names.
///
/// # Safety
/// C's contract for freopen.
unsafe fn freopen_any(p: *const c_char, mode: *const c_char, f: *mut FILE) -> *mut FILE {
    if layer::active() && !p.is_null() && !mode.is_null() {
        // SAFETY: freopen's contract.
        let (pc, mc) = unsafe { (CStr::from_ptr(p), CStr::from_ptr(mode)) };
        let path = Path::new(OsStr::from_bytes(pc.to_bytes()));
        if flags(mc.to_bytes()).is_some_and(|fl| layer::claims(path, fl)) {
            log::error!(
                "freopen of a stream onto {} refused: a replicated program writes its files with fopen or open (see docs/FILES.md)",
                path.display()
            );
            eprintln!(
                "volpex: freopen(\"{}\", \"{}\") refused under replication: open the file with fopen instead",
                path.display(),
                mc.to_string_lossy()
            );
            set_errno(libc::ENOTSUP);
            return std::ptr::null_mut();
        }
    }
    // SAFETY: the program's own arguments.
    unsafe { real::raw_freopen(p, mode, f) }
}

/// freopen(3).
///
/// # Safety
/// C's contract for freopen.
#[no_mangle]
pub unsafe extern "C" fn freopen(p: *const c_char, mode: *const c_char, f: *mut FILE) -> *mut FILE {
    // SAFETY: forwarded contract.
    unsafe { freopen_any(p, mode, f) }
}

/// freopen64(3).
///
/// # Safety
/// C's contract for freopen.
#[no_mangle]
pub unsafe extern "C" fn freopen64(
    p: *const c_char,
    mode: *const c_char,
    f: *mut FILE,
) -> *mut FILE {
    // SAFETY: forwarded contract.
    unsafe { freopen_any(p, mode, f) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fopen_modes_become_open_flags() {
        assert_eq!(flags(b"r"), Some(libc::O_RDONLY));
        assert_eq!(flags(b"rb+"), Some(libc::O_RDWR));
        assert_eq!(
            flags(b"wx"),
            Some(libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_EXCL)
        );
        assert_eq!(
            flags(b"a+e"),
            Some(libc::O_RDWR | libc::O_CREAT | libc::O_APPEND | libc::O_CLOEXEC)
        );
        assert_eq!(
            flags(b"w,ccs=UTF-8"),
            Some(libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC)
        );
        assert_eq!(flags(b"z"), None);
        assert_eq!(flags(b""), None);
    }
}
