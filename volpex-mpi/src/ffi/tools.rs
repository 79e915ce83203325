//! The tool information interface (MPI-3.1 section 14.3): `MPI_T_*`. This library
//! exports no control variables, no performance variables and no categories, so the
//! counts are 0 and every index, name and variable handle is invalid; what remains is
//! real: initialization counting (`MPI_T_init_thread` may be called before `MPI_Init` and
//! any number of times, section 14.3.4), performance-variable sessions, and the error
//! classes (`MPI_T_ERR_*`), which these functions return directly (the MPI_T interface
//! has no error handlers, section 14.3.9).
//!
//! Owns the initialization count and the set of open sessions. Must never touch the rest
//! of the library's state: MPI_T is usable whether or not MPI is initialized.

use std::collections::BTreeSet;
use std::ffi::{c_char, c_void};
use std::os::raw::c_int;

use parking_lot::Mutex;

use super::set;
use crate::handles::{class, THREAD_MULTIPLE};

/// How many times MPI_T_init_thread was called, minus MPI_T_finalize's, and the
/// sessions open now (as the numbers their handles carry) with the next number to give.
struct Tools {
    inits: u32,
    sessions: BTreeSet<usize>,
    next_session: usize,
}

static TOOLS: Mutex<Tools> = Mutex::new(Tools {
    inits: 0,
    sessions: BTreeSet::new(),
    // Handles 0 and 1 are MPI_T_PVAR_SESSION_NULL and MPI_T_PVAR_ALL_HANDLES.
    next_session: 16,
});

type Session = *mut c_void;

/// Runs `f` if the interface is initialized, else answers MPI_T_ERR_NOT_INITIALIZED.
fn initialized(f: impl FnOnce(&mut Tools) -> c_int) -> c_int {
    let mut t = TOOLS.lock();
    if t.inits == 0 {
        return class::T_NOT_INITIALIZED;
    }
    f(&mut t)
}

/// `set`, with a bad pointer answered MPI_T_ERR_INVALID.
fn put<T>(p: *mut T, what: &str, v: T) -> c_int {
    match set(p, what, v) {
        Ok(()) => class::SUCCESS,
        Err(_) => class::T_INVALID,
    }
}

/// Whether `s` names an open session.
fn open_session(t: &Tools, s: Session) -> bool {
    t.sessions.contains(&(s as usize))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
    // Every function here takes one lock, so any thread level can be granted.
    let code = put(provided, "provided", required.clamp(0, THREAD_MULTIPLE));
    if code == class::SUCCESS {
        TOOLS.lock().inits += 1;
    }
    code
}

#[no_mangle]
pub extern "C" fn MPI_T_finalize() -> c_int {
    initialized(|t| {
        t.inits -= 1;
        if t.inits == 0 {
            t.sessions.clear();
        }
        class::SUCCESS
    })
}

/// `MPI_T_cvar_get_num`, `MPI_T_pvar_get_num`, `MPI_T_category_get_num`: none.
macro_rules! none_exist {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(num: *mut c_int) -> c_int {
            initialized(|_| put(num, "num", 0))
        }
    )*};
}

none_exist!(
    MPI_T_cvar_get_num,
    MPI_T_pvar_get_num,
    MPI_T_category_get_num
);

/// Functions that name a variable or category by index: no index is valid. Their other
/// arguments are not read (see `stubs` for why a C callee may ignore them).
macro_rules! by_index {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(_index: c_int) -> c_int {
            initialized(|_| class::T_INVALID_INDEX)
        }
    )*};
}

by_index!(
    MPI_T_cvar_get_info,
    MPI_T_cvar_handle_alloc,
    MPI_T_pvar_get_info,
    MPI_T_category_get_info,
    MPI_T_category_get_cvars,
    MPI_T_category_get_pvars,
    MPI_T_category_get_categories
);

/// Functions that look a variable or category up by name: no name exists.
macro_rules! by_name {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(_name: *const c_char) -> c_int {
            initialized(|_| class::T_INVALID_NAME)
        }
    )*};
}

by_name!(
    MPI_T_cvar_get_index,
    MPI_T_pvar_get_index,
    MPI_T_category_get_index
);

/// Functions on a control-variable handle or an enumeration: none can exist.
macro_rules! by_handle {
    ($($name:ident),*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(_handle: *mut c_void) -> c_int {
            initialized(|_| class::T_INVALID_HANDLE)
        }
    )*};
}

by_handle!(
    MPI_T_cvar_handle_free,
    MPI_T_cvar_read,
    MPI_T_cvar_write,
    MPI_T_enum_get_info,
    MPI_T_enum_get_item
);

/// MPI_T_category_changed: the categories never change, so the stamp stays 0.
#[no_mangle]
pub unsafe extern "C" fn MPI_T_category_changed(stamp: *mut c_int) -> c_int {
    initialized(|_| put(stamp, "stamp", 0))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_session_create(session: *mut Session) -> c_int {
    initialized(|t| {
        let s = t.next_session;
        let code = put(session, "session", s as Session);
        if code == class::SUCCESS {
            t.sessions.insert(s);
            t.next_session += 1;
        }
        code
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_T_pvar_session_free(session: *mut Session) -> c_int {
    initialized(|t| {
        // SAFETY: `session` is the argument of MPI_T_pvar_session_free: a readable handle.
        let s = match unsafe { super::raw::input(session, "session") } {
            Ok(s) => *s,
            Err(_) => return class::T_INVALID,
        };
        if !t.sessions.remove(&(s as usize)) {
            return class::T_INVALID_SESSION;
        }
        put(session, "session", std::ptr::null_mut())
    })
}

/// Functions on a performance-variable handle within a session: the session must be
/// open; no handle exists, but MPI_T_PVAR_ALL_HANDLES (start, stop, reset) names all
/// of none, which succeeds.
macro_rules! in_session {
    ($($name:ident: $all:expr),* $(,)?) => {$(
        #[no_mangle]
        pub extern "C" fn $name(session: Session, handle: *mut c_void) -> c_int {
            initialized(|t| {
                if !open_session(t, session) {
                    class::T_INVALID_SESSION
                } else if $all && handle as usize == 1 {
                    class::SUCCESS
                } else {
                    class::T_INVALID_HANDLE
                }
            })
        }
    )*};
}

in_session!(
    MPI_T_pvar_handle_free: false,
    MPI_T_pvar_start: true,
    MPI_T_pvar_stop: true,
    MPI_T_pvar_read: false,
    MPI_T_pvar_write: false,
    MPI_T_pvar_reset: true,
    MPI_T_pvar_readreset: false,
);

/// MPI_T_pvar_handle_alloc: no index is valid (once the session is).
#[no_mangle]
pub extern "C" fn MPI_T_pvar_handle_alloc(session: Session, _index: c_int) -> c_int {
    initialized(|t| {
        if open_session(t, session) {
            class::T_INVALID_INDEX
        } else {
            class::T_INVALID_SESSION
        }
    })
}
