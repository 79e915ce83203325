//! Errors of the C interface: an error class and a message, what the error handlers do
//! with them (MPI-3.1 section 8.3), and the texts of `MPI_Error_string`.
//!
//! Every exported function runs its body through `guard`, which turns an `Err` (or a
//! panic, which must never cross into C) into the communicator's error handler's answer:
//! with `MPI_ERRORS_ARE_FATAL` (the default) the process prints the function, the class
//! and the reason, and exits; with `MPI_ERRORS_RETURN` the function returns the class.
//! A replica that retired (it fell behind every sender's log) always exits with
//! `EXIT_RETIRED`, whatever the handler: it must leave the job, not fail it.

use std::fmt;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::handles::class;
use crate::state;

/// An MPI error: its class and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiError {
    /// Error class (`MPI_ERR_*`), what the function returns.
    pub class: c_int,
    /// The reason, for the message printed by `MPI_ERRORS_ARE_FATAL`.
    pub msg: String,
    /// The replica retired: it must exit with `EXIT_RETIRED`.
    pub retired: bool,
    /// The communicator whose error handler answers, when it is not the call's own (the
    /// communicator of a request a completion call waited on).
    pub comm: Option<c_int>,
}

/// Result of the safe layer.
pub type Result<T, E = MpiError> = std::result::Result<T, E>;

impl MpiError {
    /// An error of `class` with a reason.
    pub fn new(class: c_int, msg: impl Into<String>) -> MpiError {
        MpiError {
            class,
            msg: msg.into(),
            retired: false,
            comm: None,
        }
    }

    /// This error, answered by communicator `comm`'s error handler.
    pub fn on(mut self, comm: c_int) -> MpiError {
        self.comm = Some(comm);
        self
    }

    /// MPI_ERR_ARG.
    pub fn arg(msg: impl Into<String>) -> MpiError {
        MpiError::new(class::ARG, msg)
    }
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.msg, class_name(self.class))
    }
}

impl From<volpex::Error> for MpiError {
    fn from(e: volpex::Error) -> MpiError {
        use volpex::Error as E;
        let c = match &e {
            E::RankOutOfRange { .. } => class::RANK,
            E::BadTag(_) => class::TAG,
            E::Truncated { .. } | E::BadLength { .. } => class::TRUNCATE,
            E::BufferSize { .. } => class::COUNT,
            E::RankLost { .. } | E::SenderEnded { .. } => class::PROC_FAILED,
            E::Usage(_) => class::ARG,
            E::RequestCompleted => class::REQUEST,
            E::Retired(_) => class::OTHER,
            E::Launch(_)
            | E::Bootstrap(_)
            | E::EventLoopStart(_)
            | E::EventLoop(_)
            | E::ImmediateCollectiveStart(_)
            | E::ImmediateCollectivePanicked
            | E::NoMessage
            | E::CancelDiverged
            | E::RequestChoiceMismatch { .. }
            | E::LogRefused(_)
            | E::CheckpointState(_)
            | E::RestoreState(_)
            | E::NotRestored => class::INTERN,
        };
        MpiError {
            class: c,
            msg: e.to_string(),
            retired: matches!(e, E::Retired(_)),
            comm: None,
        }
    }
}

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
            crate::ffi::raw::call_errhandler(f, c, e.class);
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

/// Calls handler `h` with `code` as a program's `MPI_*_call_errhandler` asks (MPI-3.1
/// section 8.3.4): MPI_ERRORS_ARE_FATAL ends the process; otherwise it returns.
pub fn call_handler(func: &str, h: state::Handler, code: c_int) {
    raise_with(
        func,
        h,
        MpiError::new(code, format!("error code {code} raised by the program")),
    );
}

/// The name of an error class (`MPI_ERR_RANK`).
pub fn class_name(c: c_int) -> &'static str {
    match c {
        class::SUCCESS => "MPI_SUCCESS",
        class::BUFFER => "MPI_ERR_BUFFER",
        class::COUNT => "MPI_ERR_COUNT",
        class::TYPE => "MPI_ERR_TYPE",
        class::TAG => "MPI_ERR_TAG",
        class::COMM => "MPI_ERR_COMM",
        class::RANK => "MPI_ERR_RANK",
        class::ROOT => "MPI_ERR_ROOT",
        class::GROUP => "MPI_ERR_GROUP",
        class::OP => "MPI_ERR_OP",
        class::TOPOLOGY => "MPI_ERR_TOPOLOGY",
        class::DIMS => "MPI_ERR_DIMS",
        class::ARG => "MPI_ERR_ARG",
        class::UNKNOWN => "MPI_ERR_UNKNOWN",
        class::TRUNCATE => "MPI_ERR_TRUNCATE",
        class::OTHER => "MPI_ERR_OTHER",
        class::INTERN => "MPI_ERR_INTERN",
        class::IN_STATUS => "MPI_ERR_IN_STATUS",
        class::PENDING => "MPI_ERR_PENDING",
        class::REQUEST => "MPI_ERR_REQUEST",
        class::ACCESS => "MPI_ERR_ACCESS",
        class::AMODE => "MPI_ERR_AMODE",
        class::BAD_FILE => "MPI_ERR_BAD_FILE",
        class::CONVERSION => "MPI_ERR_CONVERSION",
        class::DUP_DATAREP => "MPI_ERR_DUP_DATAREP",
        class::FILE_EXISTS => "MPI_ERR_FILE_EXISTS",
        class::FILE_IN_USE => "MPI_ERR_FILE_IN_USE",
        class::FILE => "MPI_ERR_FILE",
        class::INFO => "MPI_ERR_INFO",
        class::INFO_KEY => "MPI_ERR_INFO_KEY",
        class::INFO_VALUE => "MPI_ERR_INFO_VALUE",
        class::INFO_NOKEY => "MPI_ERR_INFO_NOKEY",
        class::IO => "MPI_ERR_IO",
        class::NAME => "MPI_ERR_NAME",
        class::NO_MEM => "MPI_ERR_NO_MEM",
        class::NOT_SAME => "MPI_ERR_NOT_SAME",
        class::NO_SPACE => "MPI_ERR_NO_SPACE",
        class::NO_SUCH_FILE => "MPI_ERR_NO_SUCH_FILE",
        class::PORT => "MPI_ERR_PORT",
        class::QUOTA => "MPI_ERR_QUOTA",
        class::READ_ONLY => "MPI_ERR_READ_ONLY",
        class::SERVICE => "MPI_ERR_SERVICE",
        class::SPAWN => "MPI_ERR_SPAWN",
        class::UNSUPPORTED_DATAREP => "MPI_ERR_UNSUPPORTED_DATAREP",
        class::UNSUPPORTED_OPERATION => "MPI_ERR_UNSUPPORTED_OPERATION",
        class::WIN => "MPI_ERR_WIN",
        class::BASE => "MPI_ERR_BASE",
        class::LOCKTYPE => "MPI_ERR_LOCKTYPE",
        class::KEYVAL => "MPI_ERR_KEYVAL",
        class::RMA_CONFLICT => "MPI_ERR_RMA_CONFLICT",
        class::RMA_SYNC => "MPI_ERR_RMA_SYNC",
        class::SIZE => "MPI_ERR_SIZE",
        class::DISP => "MPI_ERR_DISP",
        class::ASSERT => "MPI_ERR_ASSERT",
        class::RMA_RANGE => "MPI_ERR_RMA_RANGE",
        class::RMA_ATTACH => "MPI_ERR_RMA_ATTACH",
        class::RMA_SHARED => "MPI_ERR_RMA_SHARED",
        class::RMA_FLAVOR => "MPI_ERR_RMA_FLAVOR",
        class::PROC_FAILED => "MPIX_ERR_PROC_FAILED",
        class::T_MEMORY => "MPI_T_ERR_MEMORY",
        class::T_NOT_INITIALIZED => "MPI_T_ERR_NOT_INITIALIZED",
        class::T_CANNOT_INIT => "MPI_T_ERR_CANNOT_INIT",
        class::T_INVALID_INDEX => "MPI_T_ERR_INVALID_INDEX",
        class::T_INVALID_ITEM => "MPI_T_ERR_INVALID_ITEM",
        class::T_INVALID_HANDLE => "MPI_T_ERR_INVALID_HANDLE",
        class::T_OUT_OF_HANDLES => "MPI_T_ERR_OUT_OF_HANDLES",
        class::T_OUT_OF_SESSIONS => "MPI_T_ERR_OUT_OF_SESSIONS",
        class::T_INVALID_SESSION => "MPI_T_ERR_INVALID_SESSION",
        class::T_CVAR_SET_NOT_NOW => "MPI_T_ERR_CVAR_SET_NOT_NOW",
        class::T_CVAR_SET_NEVER => "MPI_T_ERR_CVAR_SET_NEVER",
        class::T_PVAR_NO_STARTSTOP => "MPI_T_ERR_PVAR_NO_STARTSTOP",
        class::T_PVAR_NO_WRITE => "MPI_T_ERR_PVAR_NO_WRITE",
        class::T_PVAR_NO_ATOMIC => "MPI_T_ERR_PVAR_NO_ATOMIC",
        class::T_INVALID_NAME => "MPI_T_ERR_INVALID_NAME",
        class::T_INVALID => "MPI_T_ERR_INVALID",
        _ => "MPI_ERR_UNKNOWN",
    }
}

/// The text `MPI_Error_string` gives for a predefined error code (codes are classes
/// here).
pub fn error_string(code: c_int) -> Option<&'static str> {
    Some(match code {
        class::SUCCESS => "MPI_SUCCESS: no error",
        class::BUFFER => "MPI_ERR_BUFFER: invalid buffer pointer",
        class::COUNT => "MPI_ERR_COUNT: invalid count argument",
        class::TYPE => "MPI_ERR_TYPE: invalid datatype",
        class::TAG => "MPI_ERR_TAG: invalid tag",
        class::COMM => "MPI_ERR_COMM: invalid communicator",
        class::RANK => "MPI_ERR_RANK: invalid rank",
        class::ROOT => "MPI_ERR_ROOT: invalid root",
        class::GROUP => "MPI_ERR_GROUP: invalid group",
        class::OP => "MPI_ERR_OP: invalid reduce operation",
        class::TOPOLOGY => "MPI_ERR_TOPOLOGY: invalid communicator topology",
        class::DIMS => "MPI_ERR_DIMS: invalid dimension argument",
        class::ARG => "MPI_ERR_ARG: invalid argument of some other kind",
        class::UNKNOWN => "MPI_ERR_UNKNOWN: unknown error",
        class::TRUNCATE => "MPI_ERR_TRUNCATE: message truncated",
        class::OTHER => "MPI_ERR_OTHER: known error not in this list",
        class::INTERN => "MPI_ERR_INTERN: internal error",
        class::IN_STATUS => "MPI_ERR_IN_STATUS: error code is in status",
        class::PENDING => "MPI_ERR_PENDING: pending request",
        class::REQUEST => "MPI_ERR_REQUEST: invalid request",
        class::ACCESS => "MPI_ERR_ACCESS: permission denied",
        class::AMODE => "MPI_ERR_AMODE: invalid access mode",
        class::BAD_FILE => "MPI_ERR_BAD_FILE: invalid file name",
        class::CONVERSION => "MPI_ERR_CONVERSION: an error in a user data conversion function",
        class::DUP_DATAREP => {
            "MPI_ERR_DUP_DATAREP: data representation identifier already registered"
        }
        class::FILE_EXISTS => "MPI_ERR_FILE_EXISTS: file exists",
        class::FILE_IN_USE => {
            "MPI_ERR_FILE_IN_USE: file operation could not be completed: the file is in use"
        }
        class::FILE => "MPI_ERR_FILE: invalid file handle",
        class::INFO => "MPI_ERR_INFO: invalid info object",
        class::INFO_KEY => "MPI_ERR_INFO_KEY: invalid info key",
        class::INFO_VALUE => "MPI_ERR_INFO_VALUE: invalid info value",
        class::INFO_NOKEY => "MPI_ERR_INFO_NOKEY: key not defined in the info object",
        class::IO => "MPI_ERR_IO: input/output error",
        class::NAME => "MPI_ERR_NAME: invalid service name",
        class::NO_MEM => "MPI_ERR_NO_MEM: out of memory (MPI_Alloc_mem)",
        class::NOT_SAME => "MPI_ERR_NOT_SAME: collective argument not identical on all processes",
        class::NO_SPACE => "MPI_ERR_NO_SPACE: not enough space",
        class::NO_SUCH_FILE => "MPI_ERR_NO_SUCH_FILE: file does not exist",
        class::PORT => "MPI_ERR_PORT: invalid port name",
        class::QUOTA => "MPI_ERR_QUOTA: quota exceeded",
        class::READ_ONLY => "MPI_ERR_READ_ONLY: read-only file or file system",
        class::SERVICE => "MPI_ERR_SERVICE: invalid service name (MPI_Unpublish_name)",
        class::SPAWN => "MPI_ERR_SPAWN: error spawning processes",
        class::UNSUPPORTED_DATAREP => {
            "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation"
        }
        class::UNSUPPORTED_OPERATION => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        class::WIN => "MPI_ERR_WIN: invalid window",
        class::BASE => "MPI_ERR_BASE: invalid base address",
        class::LOCKTYPE => "MPI_ERR_LOCKTYPE: invalid lock type",
        class::KEYVAL => "MPI_ERR_KEYVAL: invalid attribute key",
        class::RMA_CONFLICT => "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
        class::RMA_SYNC => "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
        class::SIZE => "MPI_ERR_SIZE: invalid size",
        class::DISP => "MPI_ERR_DISP: invalid displacement",
        class::ASSERT => "MPI_ERR_ASSERT: invalid assertion",
        class::RMA_RANGE => "MPI_ERR_RMA_RANGE: target memory is not part of the window",
        class::RMA_ATTACH => "MPI_ERR_RMA_ATTACH: memory cannot be attached",
        class::RMA_SHARED => "MPI_ERR_RMA_SHARED: memory cannot be shared",
        class::RMA_FLAVOR => {
            "MPI_ERR_RMA_FLAVOR: passed window has the wrong flavor for the called function"
        }
        class::PROC_FAILED => "MPIX_ERR_PROC_FAILED: every replica of a rank is gone",
        class::T_MEMORY => "MPI_T_ERR_MEMORY: out of memory",
        class::T_NOT_INITIALIZED => {
            "MPI_T_ERR_NOT_INITIALIZED: the tool interface is not initialized"
        }
        class::T_CANNOT_INIT => "MPI_T_ERR_CANNOT_INIT: the tool interface cannot be initialized",
        class::T_INVALID_INDEX => "MPI_T_ERR_INVALID_INDEX: invalid variable or category index",
        class::T_INVALID_ITEM => "MPI_T_ERR_INVALID_ITEM: invalid item index of an enumeration",
        class::T_INVALID_HANDLE => "MPI_T_ERR_INVALID_HANDLE: invalid handle",
        class::T_OUT_OF_HANDLES => "MPI_T_ERR_OUT_OF_HANDLES: no more handles",
        class::T_OUT_OF_SESSIONS => "MPI_T_ERR_OUT_OF_SESSIONS: no more sessions",
        class::T_INVALID_SESSION => "MPI_T_ERR_INVALID_SESSION: invalid session",
        class::T_CVAR_SET_NOT_NOW => {
            "MPI_T_ERR_CVAR_SET_NOT_NOW: the control variable cannot be set now"
        }
        class::T_CVAR_SET_NEVER => {
            "MPI_T_ERR_CVAR_SET_NEVER: the control variable can never be set"
        }
        class::T_PVAR_NO_STARTSTOP => {
            "MPI_T_ERR_PVAR_NO_STARTSTOP: the performance variable cannot be started or stopped"
        }
        class::T_PVAR_NO_WRITE => {
            "MPI_T_ERR_PVAR_NO_WRITE: the performance variable cannot be written or reset"
        }
        class::T_PVAR_NO_ATOMIC => {
            "MPI_T_ERR_PVAR_NO_ATOMIC: the performance variable cannot be read and reset atomically"
        }
        class::T_INVALID_NAME => "MPI_T_ERR_INVALID_NAME: no variable or category of that name",
        class::T_INVALID => "MPI_T_ERR_INVALID: invalid use of the tool interface",
        _ => return None,
    })
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

fn add_code_of(of: Option<c_int>) -> Result<c_int> {
    let code = state::with(|s| {
        let code = FIRST_USER_CODE + s.codes.len() as c_int;
        s.codes.push(state::UserCode {
            class: of.unwrap_or(code),
            text: String::new(),
        });
        Ok(code)
    })?;
    crate::comm::note_code(code);
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
