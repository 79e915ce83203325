//! What the error handlers do with an error (MPI-3.1 section 8.3), and the error codes
//! and classes a program adds (section 8.5).
//!
//! Every exported function runs its body through `guard`, which turns an `Err` (or a
//! panic, which must never cross into C) into the communicator's error handler's answer:
//! with `MPI_ERRORS_ARE_FATAL` (the default) the process prints the function, the class
//! and the reason, and exits; with `MPI_ERRORS_RETURN` the function returns the class.
//! A replica that retired (it fell behind every sender's log) always exits with
//! `EXIT_RETIRED`, whatever the handler: it must leave the job, not fail it.
//!
//! Owns the answer to an error; must never make an error of its own beyond the panic it
//! catches (the error type is `error`'s).

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::{error_string, MpiError, Result};
use crate::handles::class;
use crate::state;

/// Runs the body of MPI function `func` and answers for its errors with the error handler
/// of `comm` (of MPI_COMM_WORLD when the function has no communicator, or when `comm` is
/// not a valid communicator).
pub fn guard(func: &'static str, comm: c_int, body: impl FnOnce() -> Result<()>) -> c_int {
    guard_with(func, body, || state::errhandler(comm))
}

/// Runs the body of `func` and answers for its errors with the handler `handler` gives
/// (asked only on an error; an error naming its communicator goes to that one's).
pub fn guard_with(
    func: &'static str,
    body: impl FnOnce() -> Result<()>,
    handler: impl FnOnce() -> state::Handler,
) -> c_int {
    let result = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        Err(MpiError::new(
            class::INTERN,
            format!("internal error in volpex-mpi: {what}"),
        ))
    });
    match result {
        Ok(()) => class::SUCCESS,
        Err(e) => match e.comm {
            Some(c) => raise_with(func, state::errhandler(c), e),
            None => raise_with(func, handler(), e),
        },
    }
}

/// Applies the error handler of `comm` to `e`: returns the class, or ends the process.
pub fn raise(func: &str, comm: c_int, e: MpiError) -> c_int {
    let comm = e.comm.unwrap_or(comm);
    raise_with(func, state::errhandler(comm), e)
}

/// Applies handler `h` to `e`: returns the class, or ends the process.
pub fn raise_with(func: &str, h: state::Handler, e: MpiError) -> c_int {
    if e.retired {
        eprintln!("volpex-mpi: {func}: {}; this replica leaves the job", e.msg);
        std::process::exit(volpex::exit::EXIT_RETIRED);
    }
    match h {
        state::Handler::Return => return e.class,
        state::Handler::User(f, c) => {
            crate::raw::call_errhandler(f, c, e.class);
            return e.class;
        }
        state::Handler::Fatal => {}
    }
    eprintln!(
        "volpex-mpi: {func}: {e}; MPI_ERRORS_ARE_FATAL ends the program{}",
        state::whoami()
    );
    std::process::exit(1);
}

/// Ends this replica, whatever the error handler, when it cannot go on correctly but
/// its siblings can (a shared window's team lost a member, `rma::shared`): exit code 1,
/// which volpexrun reads as the program's failure (no new incarnation), and the rank
/// lives on in its other replicas.
pub fn end_replica(func: &str, msg: &str) -> ! {
    eprintln!("volpex-mpi: {func}: {msg}{}", state::whoami());
    std::process::exit(1);
}

/// Calls handler `h` with `code` as a program's `MPI_*_call_errhandler` asks (MPI-3.1
/// section 8.3.4): MPI_ERRORS_ARE_FATAL ends the process; otherwise it returns.
pub fn call_handler(func: &str, h: state::Handler, code: c_int) {
    raise_with(
        func,
        h,
        MpiError::new(code, format!("error code {code} raised by the program")),
    );
}

/// The first code MPI_Add_error_class and MPI_Add_error_code give.
const FIRST_USER_CODE: c_int = class::LASTCODE + 1;

/// MPI_Add_error_class (MPI-3.1 section 8.5): a new class, above every code so far.
pub fn add_class() -> Result<c_int> {
    add_code_of(None)
}

/// MPI_Add_error_code: a new code of `class` (a predefined class or one the program
/// added; MPI_SUCCESS is not a class codes can have).
pub fn add_code(errorclass: c_int) -> Result<c_int> {
    let predefined = errorclass != class::SUCCESS && error_string(errorclass).is_some();
    let added =
        state::with(|s| Ok(user_code(s, errorclass).is_some_and(|u| u.class == errorclass)))?;
    if !predefined && !added {
        return Err(MpiError::arg(format!("invalid error class {errorclass}")));
    }
    add_code_of(Some(errorclass))
}

/// MPI_LASTUSEDCODE's value (an attribute of every communicator, `comm::get_attr`): the
/// largest error code or class so far (MPI-3.1 section 8.5), raised by
/// MPI_Add_error_class and MPI_Add_error_code.
pub static LASTUSEDCODE_VALUE: AtomicI32 = AtomicI32::new(class::LASTCODE);

fn add_code_of(of: Option<c_int>) -> Result<c_int> {
    let code = state::with(|s| {
        let code = FIRST_USER_CODE + s.codes.len() as c_int;
        s.codes.push(state::UserCode {
            class: of.unwrap_or(code),
            text: String::new(),
        });
        Ok(code)
    })?;
    LASTUSEDCODE_VALUE.fetch_max(code, Ordering::Relaxed);
    Ok(code)
}

fn user_code(s: &state::State, code: c_int) -> Option<&state::UserCode> {
    usize::try_from(code - FIRST_USER_CODE)
        .ok()
        .and_then(|i| s.codes.get(i))
}

/// MPI_Add_error_string: the text of a code or class the program added (a predefined
/// one's cannot change: MPI_ERR_ARG).
pub fn add_string(code: c_int, text: String) -> Result<()> {
    if text.len() >= crate::handles::MAX_ERROR_STRING {
        return Err(MpiError::arg(format!(
            "an error string of {} characters (fewer than MPI_MAX_ERROR_STRING = {})",
            text.len(),
            crate::handles::MAX_ERROR_STRING
        )));
    }
    state::with(|s| {
        let i = usize::try_from(code - FIRST_USER_CODE)
            .ok()
            .filter(|&i| i < s.codes.len())
            .ok_or_else(|| {
                MpiError::arg(format!(
                    "error code {code} was not added by MPI_Add_error_class or MPI_Add_error_code"
                ))
            })?;
        s.codes[i].text = text;
        Ok(())
    })
}

/// MPI_Error_class: the class of a predefined code (itself) or of one the program added.
pub fn class_of(code: c_int) -> Result<c_int> {
    if error_string(code).is_some() {
        return Ok(code);
    }
    state::with(|s| Ok(user_code(s, code).map(|u| u.class)))
        .ok()
        .flatten()
        .ok_or_else(|| MpiError::arg(format!("invalid error code {code}")))
}

/// MPI_Error_string: the text of a predefined code, or of one the program added (empty
/// until MPI_Add_error_string gives it one).
pub fn string_of(code: c_int) -> Result<String> {
    if let Some(t) = error_string(code) {
        return Ok(t.into());
    }
    state::with(|s| Ok(user_code(s, code).map(|u| u.text.clone())))
        .ok()
        .flatten()
        .ok_or_else(|| MpiError::arg(format!("invalid error code {code}")))
}

/// A function of the MPI interface this library does not implement yet: prints a line
/// naming it (a program may not check the code) and answers MPI_ERR_OTHER through the
/// error handler of MPI_COMM_WORLD.
pub fn not_implemented(func: &'static str) -> c_int {
    let e = MpiError::new(
        class::OTHER,
        format!("{func} is not implemented in volpex-mpi yet"),
    );
    eprintln!("volpex-mpi: {}", e.msg);
    raise(func, crate::handles::COMM_WORLD, e)
}

/// A function this library does not support (MPI-3.1 leaves process creation to the
/// implementation; one-sided communication and I/O are not written yet): prints a line
/// naming it and why, and answers `class` through the error handler of MPI_COMM_WORLD.
pub fn unsupported(func: &'static str, class: c_int, why: &'static str) -> c_int {
    let e = MpiError::new(class, format!("{func} is not supported: {why}"));
    eprintln!("volpex-mpi: {}", e.msg);
    raise(func, crate::handles::COMM_WORLD, e)
}
