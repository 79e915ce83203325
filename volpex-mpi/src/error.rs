//! Errors of the C interface: an error class and a message (`MpiError`), the names of
//! the classes, and the texts of `MPI_Error_string` for the predefined ones. What the
//! error handlers do with an error is `errhandler`'s. Must never look at a handle table.

use std::fmt;
use std::os::raw::c_int;

use crate::handles::class;

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
