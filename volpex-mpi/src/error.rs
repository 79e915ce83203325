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
        Err(e) => raise(func, comm, e),
    }
}

/// Applies the error handler of `comm` to `e`: returns the class, or ends the process.
pub fn raise(func: &str, comm: c_int, e: MpiError) -> c_int {
    let comm = e.comm.unwrap_or(comm);
    if e.retired {
        eprintln!("volpex-mpi: {func}: {}; this replica leaves the job", e.msg);
        std::process::exit(volpex::exit::EXIT_RETIRED);
    }
    match state::errhandler(comm) {
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
        class::IO => "MPI_ERR_IO",
        class::KEYVAL => "MPI_ERR_KEYVAL",
        class::INFO => "MPI_ERR_INFO",
        class::INFO_KEY => "MPI_ERR_INFO_KEY",
        class::PROC_FAILED => "MPIX_ERR_PROC_FAILED",
        _ => "MPI_ERR_UNKNOWN",
    }
}

/// The text `MPI_Error_string` gives for an error code (codes are classes here).
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
        class::IO => "MPI_ERR_IO: input/output error",
        class::KEYVAL => "MPI_ERR_KEYVAL: invalid attribute key",
        class::INFO => "MPI_ERR_INFO: invalid info object",
        class::INFO_KEY => "MPI_ERR_INFO_KEY: invalid info key",
        class::PROC_FAILED => "MPIX_ERR_PROC_FAILED: every replica of a rank is gone",
        c if (0..=class::LASTCODE).contains(&c) => "MPI error (class without a message here)",
        _ => return None,
    })
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
