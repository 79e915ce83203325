//! The environment and error handling of `mpi.h` (MPI-3.1 chapter 8, and section 12.4
//! for threads): init and finalize, abort, thread levels, versions, processor name,
//! clock, memory allocation, error handlers on communicators, windows and files, error
//! classes, codes and strings, the program's own included. Thin shells over `state` and
//! `error`; never touches a message.

use super::*;
use crate::lifecycle;

// ---- Environment ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    guard("MPI_Init", COMM_WORLD, || lifecycle::init(0).map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    guard("MPI_Init_thread", COMM_WORLD, || {
        let p = lifecycle::init(required)?;
        set(provided, "provided", p)
    })
}

/// MPI_Finalize: first frees MPI_COMM_SELF's attributes, calling their delete functions
/// in the reverse order they were set (MPI-3.1 section 8.7.1), then a barrier that
/// serves passive-target requests (`rma::passive::finalize`), then leaves the job.
#[no_mangle]
pub extern "C" fn MPI_Finalize() -> c_int {
    guard("MPI_Finalize", COMM_WORLD, || {
        comm::delete_all_attrs(crate::handles::COMM_SELF)?;
        crate::rma::passive::finalize(&super::rma::memory)?;
        // What the program's streams and Fortran units still hold goes through the
        // file layer now, while the rank's writer can still apply it.
        super::raw::flush_program_output();
        lifecycle::finalize()
    })
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
        let s = errhandler::string_of(code)?;
        // SAFETY: MPI_MAX_ERROR_STRING bytes at `string` (MPI-3.1 section 8.4).
        unsafe { raw::put_string(string, MAX_ERROR_STRING, &s, resultlen) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Error_class(code: c_int, errorclass: *mut c_int) -> c_int {
    guard("MPI_Error_class", COMM_WORLD, || {
        set(errorclass, "errorclass", errhandler::class_of(code)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_class(errorclass: *mut c_int) -> c_int {
    guard("MPI_Add_error_class", COMM_WORLD, || {
        set(errorclass, "errorclass", errhandler::add_class()?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    guard("MPI_Add_error_code", COMM_WORLD, || {
        set(errorcode, "errorcode", errhandler::add_code(errorclass)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    guard("MPI_Add_error_string", COMM_WORLD, || {
        // SAFETY: a NUL-terminated string (MPI-3.1 section 8.5).
        let s = unsafe { raw::string(string, "string") }?;
        errhandler::add_string(errorcode, s)
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

/// A new error handler for objects of `kind`.
fn create_errhandler(
    f: Option<raw::ErrFn>,
    kind: state::ErrKind,
    errhandler: *mut c_int,
) -> Result<()> {
    let f = f.ok_or_else(|| MpiError::arg("the error handler function is a null pointer"))?;
    let h = state::with(|s| Ok(s.errhandlers.insert(state::ErrEntry { f: Some(f), kind })))?;
    set(errhandler, "errhandler", h)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_errhandler(
    f: Option<raw::ErrFn>,
    errhandler: *mut c_int,
) -> c_int {
    guard("MPI_Comm_create_errhandler", COMM_WORLD, || {
        create_errhandler(f, state::ErrKind::Comm, errhandler)
    })
}

/// MPI_Win_create_errhandler (MPI-3.1 section 8.3.2): the handler exists for the windows
/// to come; no window can be made yet, so setting it on one is MPI_ERR_WIN.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_errhandler(
    f: Option<raw::ErrFn>,
    errhandler: *mut c_int,
) -> c_int {
    guard("MPI_Win_create_errhandler", COMM_WORLD, || {
        create_errhandler(f, state::ErrKind::Win, errhandler)
    })
}

/// MPI_File_create_errhandler (MPI-3.1 section 8.3.3).
#[no_mangle]
pub unsafe extern "C" fn MPI_File_create_errhandler(
    f: Option<raw::ErrFn>,
    errhandler: *mut c_int,
) -> c_int {
    guard("MPI_File_create_errhandler", COMM_WORLD, || {
        create_errhandler(f, state::ErrKind::File, errhandler)
    })
}

/// MPI_File_set_errhandler (MPI-3.1 section 13.7): on a file, its handler; on
/// MPI_FILE_NULL, the handler files opened later start with, which also answers the
/// errors of calls with no valid file.
#[no_mangle]
pub extern "C" fn MPI_File_set_errhandler(file: c_int, errhandler: c_int) -> c_int {
    crate::io::guard("MPI_File_set_errhandler", file, || {
        state::with(|s| {
            s.errhandler_for(errhandler, state::ErrKind::File)?;
            if file == NULL {
                s.file_errhandler = errhandler;
            } else {
                s.files.get_mut(file)?.errhandler = errhandler;
            }
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_errhandler(file: c_int, errhandler: *mut c_int) -> c_int {
    crate::io::guard("MPI_File_get_errhandler", file, || {
        let e = state::with(|s| match file {
            NULL => Ok(s.file_errhandler),
            f => Ok(s.files.get(f)?.errhandler),
        })?;
        set(errhandler, "errhandler", e)
    })
}

/// MPI_File_call_errhandler: calls the file's handler (MPI_FILE_NULL's for
/// MPI_FILE_NULL).
#[no_mangle]
pub extern "C" fn MPI_File_call_errhandler(file: c_int, errorcode: c_int) -> c_int {
    crate::io::guard("MPI_File_call_errhandler", file, || {
        let h = state::with(|s| {
            let e = match file {
                NULL => s.file_errhandler,
                f => s.files.get(f)?.errhandler,
            };
            Ok(s.handler(e, file))
        })?;
        errhandler::call_handler("MPI_File_call_errhandler", h, errorcode);
        Ok(())
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

/// MPI_Comm_call_errhandler (MPI-3.1 section 8.3.4): calls the communicator's handler
/// with `errorcode`; MPI_SUCCESS once the handler returned.
#[no_mangle]
pub extern "C" fn MPI_Comm_call_errhandler(comm: Comm, errorcode: c_int) -> c_int {
    guard("MPI_Comm_call_errhandler", comm, || {
        let h = state::with(|s| {
            let e = s.comms.get(comm)?.errhandler;
            Ok(s.handler(e, comm))
        })?;
        errhandler::call_handler("MPI_Comm_call_errhandler", h, errorcode);
        Ok(())
    })
}

/// MPI_Aint_add (MPI-3.1 section 4.1.12): the address `disp` bytes past `base`.
#[no_mangle]
pub extern "C" fn MPI_Aint_add(base: isize, disp: isize) -> isize {
    base.wrapping_add(disp)
}

/// MPI_Aint_diff (MPI-3.1 section 4.1.12): the distance in bytes between two addresses.
#[no_mangle]
pub extern "C" fn MPI_Aint_diff(addr1: isize, addr2: isize) -> isize {
    addr1.wrapping_sub(addr2)
}
