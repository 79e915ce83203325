//! The numbers `include/mpi.h` defines, mirrored for the library: handle tags and
//! predefined handles, special ranks and tags, error classes, attribute keys. Each
//! constant here must equal its `#define` in `mpi.h` (`tests/tests/c_abi.rs` compiles a
//! program that checks them).
//!
//! Handles are C ints: the high byte says what kind of object a handle names (so a
//! datatype passed as a communicator is refused with a message saying so), the low three
//! bytes index that kind's table. Handle 0 is the null handle of every kind.

use std::os::raw::c_int;

/// High byte of every communicator handle.
pub const TAG_COMM: c_int = 0x44 << 24;
/// High byte of every group handle.
pub const TAG_GROUP: c_int = 0x48 << 24;
/// High byte of every datatype handle.
pub const TAG_DATATYPE: c_int = 0x4c << 24;
/// High byte of every reduction operation handle.
pub const TAG_OP: c_int = 0x58 << 24;
/// High byte of every request handle.
pub const TAG_REQUEST: c_int = 0x2c << 24;
/// High byte of every error handler handle.
pub const TAG_ERRHANDLER: c_int = 0x54 << 24;
/// High byte of every matched-message handle (MPI_Mprobe).
pub const TAG_MESSAGE: c_int = 0x4d << 24;
/// High byte of every attribute key made by the program (MPI_Comm_create_keyval).
pub const TAG_KEYVAL: c_int = 0x24 << 24;
/// High byte of every info handle.
pub const TAG_INFO: c_int = 0x5c << 24;
/// High byte of every file handle (MPI_File_open).
pub const TAG_FILE: c_int = 0x46 << 24;
/// High byte of every window handle (MPI_Win_create, MPI_Win_allocate).
pub const TAG_WIN: c_int = 0x57 << 24;
/// MPI_MESSAGE_NO_PROC: the message a matched probe of MPI_PROC_NULL gets.
pub const MESSAGE_NO_PROC: c_int = TAG_MESSAGE | 1;

/// The null handle of every kind (MPI_COMM_NULL, MPI_REQUEST_NULL, ...).
pub const NULL: c_int = 0;
/// MPI_COMM_WORLD.
pub const COMM_WORLD: c_int = TAG_COMM | 1;
/// MPI_COMM_SELF.
pub const COMM_SELF: c_int = TAG_COMM | 2;
/// MPI_GROUP_EMPTY.
pub const GROUP_EMPTY: c_int = TAG_GROUP | 1;
/// MPI_ERRORS_ARE_FATAL.
pub const ERRORS_ARE_FATAL: c_int = TAG_ERRHANDLER | 1;
/// MPI_ERRORS_RETURN.
pub const ERRORS_RETURN: c_int = TAG_ERRHANDLER | 2;

/// MPI_PROC_NULL.
pub const PROC_NULL: c_int = -1;
/// MPI_ANY_SOURCE.
pub const ANY_SOURCE: c_int = -2;
/// MPI_ANY_TAG.
pub const ANY_TAG: c_int = -1;
/// MPI_UNDEFINED.
pub const UNDEFINED: c_int = -32766;

/// MPI_ROOT: the root of an inter-communicator collective, in the root's group.
pub const ROOT: c_int = -3;
/// MPI_COMM_TYPE_SHARED.
pub const COMM_TYPE_SHARED: c_int = 1;
/// MPI_MAX_INFO_KEY.
pub const MAX_INFO_KEY: usize = 255;
/// MPI_MAX_INFO_VAL.
pub const MAX_INFO_VAL: usize = 1024;

/// MPI_IN_PLACE, as an address.
pub const IN_PLACE: usize = 1;

/// MPI_MAX_PROCESSOR_NAME.
pub const MAX_PROCESSOR_NAME: usize = 256;
/// MPI_MAX_ERROR_STRING.
pub const MAX_ERROR_STRING: usize = 512;
/// MPI_MAX_OBJECT_NAME.
pub const MAX_OBJECT_NAME: usize = 128;
/// MPI_MAX_LIBRARY_VERSION_STRING.
pub const MAX_LIBRARY_VERSION_STRING: usize = 256;

/// MPI_BSEND_OVERHEAD: bytes of attached buffer a buffered send counts beyond its data.
pub const BSEND_OVERHEAD: usize = 96;

/// MPI_THREAD_SINGLE.
pub const THREAD_SINGLE: c_int = 0;
/// MPI_THREAD_SERIALIZED: the most this library provides (calls from any thread, one at a
/// time).
pub const THREAD_SERIALIZED: c_int = 2;
/// MPI_THREAD_MULTIPLE.
pub const THREAD_MULTIPLE: c_int = 3;

/// MPI_IDENT.
pub const IDENT: c_int = 0;
/// MPI_CONGRUENT.
pub const CONGRUENT: c_int = 1;
/// MPI_SIMILAR.
pub const SIMILAR: c_int = 2;
/// MPI_UNEQUAL.
pub const UNEQUAL: c_int = 3;

/// Predefined attribute keys.
pub mod attr {
    use std::os::raw::c_int;
    /// MPI_TAG_UB.
    pub const TAG_UB: c_int = 0x6440_0001;
    /// MPI_HOST.
    pub const HOST: c_int = 0x6440_0002;
    /// MPI_IO.
    pub const IO: c_int = 0x6440_0003;
    /// MPI_WTIME_IS_GLOBAL.
    pub const WTIME_IS_GLOBAL: c_int = 0x6440_0004;
    /// MPI_UNIVERSE_SIZE.
    pub const UNIVERSE_SIZE: c_int = 0x6440_0005;
    /// MPI_LASTUSEDCODE.
    pub const LASTUSEDCODE: c_int = 0x6440_0006;
    /// MPI_APPNUM.
    pub const APPNUM: c_int = 0x6440_0007;
}

/// Error classes (MPI-3.1 section 8.4, and section 14.3.9 for the tool interface's), as
/// in `mpi.h`.
pub mod class {
    use std::os::raw::c_int;
    /// MPI_SUCCESS.
    pub const SUCCESS: c_int = 0;
    /// MPI_ERR_BUFFER.
    pub const BUFFER: c_int = 1;
    /// MPI_ERR_COUNT.
    pub const COUNT: c_int = 2;
    /// MPI_ERR_TYPE.
    pub const TYPE: c_int = 3;
    /// MPI_ERR_TAG.
    pub const TAG: c_int = 4;
    /// MPI_ERR_COMM.
    pub const COMM: c_int = 5;
    /// MPI_ERR_RANK.
    pub const RANK: c_int = 6;
    /// MPI_ERR_ROOT.
    pub const ROOT: c_int = 7;
    /// MPI_ERR_GROUP.
    pub const GROUP: c_int = 8;
    /// MPI_ERR_OP.
    pub const OP: c_int = 9;
    /// MPI_ERR_TOPOLOGY.
    pub const TOPOLOGY: c_int = 10;
    /// MPI_ERR_DIMS.
    pub const DIMS: c_int = 11;
    /// MPI_ERR_ARG.
    pub const ARG: c_int = 12;
    /// MPI_ERR_UNKNOWN.
    pub const UNKNOWN: c_int = 13;
    /// MPI_ERR_TRUNCATE.
    pub const TRUNCATE: c_int = 14;
    /// MPI_ERR_OTHER.
    pub const OTHER: c_int = 15;
    /// MPI_ERR_INTERN.
    pub const INTERN: c_int = 16;
    /// MPI_ERR_IN_STATUS.
    pub const IN_STATUS: c_int = 17;
    /// MPI_ERR_PENDING.
    pub const PENDING: c_int = 18;
    /// MPI_ERR_REQUEST.
    pub const REQUEST: c_int = 19;
    /// MPI_ERR_ACCESS.
    pub const ACCESS: c_int = 20;
    /// MPI_ERR_AMODE.
    pub const AMODE: c_int = 21;
    /// MPI_ERR_BAD_FILE.
    pub const BAD_FILE: c_int = 22;
    /// MPI_ERR_CONVERSION.
    pub const CONVERSION: c_int = 23;
    /// MPI_ERR_DUP_DATAREP.
    pub const DUP_DATAREP: c_int = 24;
    /// MPI_ERR_FILE_EXISTS.
    pub const FILE_EXISTS: c_int = 25;
    /// MPI_ERR_FILE_IN_USE.
    pub const FILE_IN_USE: c_int = 26;
    /// MPI_ERR_FILE.
    pub const FILE: c_int = 27;
    /// MPI_ERR_INFO.
    pub const INFO: c_int = 28;
    /// MPI_ERR_INFO_KEY.
    pub const INFO_KEY: c_int = 29;
    /// MPI_ERR_INFO_VALUE.
    pub const INFO_VALUE: c_int = 30;
    /// MPI_ERR_INFO_NOKEY.
    pub const INFO_NOKEY: c_int = 31;
    /// MPI_ERR_IO.
    pub const IO: c_int = 32;
    /// MPI_ERR_NAME.
    pub const NAME: c_int = 33;
    /// MPI_ERR_NO_MEM.
    pub const NO_MEM: c_int = 34;
    /// MPI_ERR_NOT_SAME.
    pub const NOT_SAME: c_int = 35;
    /// MPI_ERR_NO_SPACE.
    pub const NO_SPACE: c_int = 36;
    /// MPI_ERR_NO_SUCH_FILE.
    pub const NO_SUCH_FILE: c_int = 37;
    /// MPI_ERR_PORT.
    pub const PORT: c_int = 38;
    /// MPI_ERR_QUOTA.
    pub const QUOTA: c_int = 39;
    /// MPI_ERR_READ_ONLY.
    pub const READ_ONLY: c_int = 40;
    /// MPI_ERR_SERVICE.
    pub const SERVICE: c_int = 41;
    /// MPI_ERR_SPAWN.
    pub const SPAWN: c_int = 42;
    /// MPI_ERR_UNSUPPORTED_DATAREP.
    pub const UNSUPPORTED_DATAREP: c_int = 43;
    /// MPI_ERR_UNSUPPORTED_OPERATION.
    pub const UNSUPPORTED_OPERATION: c_int = 44;
    /// MPI_ERR_WIN.
    pub const WIN: c_int = 45;
    /// MPI_ERR_BASE.
    pub const BASE: c_int = 46;
    /// MPI_ERR_LOCKTYPE.
    pub const LOCKTYPE: c_int = 47;
    /// MPI_ERR_KEYVAL.
    pub const KEYVAL: c_int = 48;
    /// MPI_ERR_RMA_CONFLICT.
    pub const RMA_CONFLICT: c_int = 49;
    /// MPI_ERR_RMA_SYNC.
    pub const RMA_SYNC: c_int = 50;
    /// MPI_ERR_SIZE.
    pub const SIZE: c_int = 51;
    /// MPI_ERR_DISP.
    pub const DISP: c_int = 52;
    /// MPI_ERR_ASSERT.
    pub const ASSERT: c_int = 53;
    /// MPI_ERR_RMA_RANGE.
    pub const RMA_RANGE: c_int = 54;
    /// MPI_ERR_RMA_ATTACH.
    pub const RMA_ATTACH: c_int = 55;
    /// MPI_ERR_RMA_SHARED.
    pub const RMA_SHARED: c_int = 56;
    /// MPI_ERR_RMA_FLAVOR.
    pub const RMA_FLAVOR: c_int = 57;
    /// MPIX_ERR_PROC_FAILED.
    pub const PROC_FAILED: c_int = 58;
    /// MPI_T_ERR_MEMORY.
    pub const T_MEMORY: c_int = 59;
    /// MPI_T_ERR_NOT_INITIALIZED.
    pub const T_NOT_INITIALIZED: c_int = 60;
    /// MPI_T_ERR_CANNOT_INIT.
    pub const T_CANNOT_INIT: c_int = 61;
    /// MPI_T_ERR_INVALID_INDEX.
    pub const T_INVALID_INDEX: c_int = 62;
    /// MPI_T_ERR_INVALID_ITEM.
    pub const T_INVALID_ITEM: c_int = 63;
    /// MPI_T_ERR_INVALID_HANDLE.
    pub const T_INVALID_HANDLE: c_int = 64;
    /// MPI_T_ERR_OUT_OF_HANDLES.
    pub const T_OUT_OF_HANDLES: c_int = 65;
    /// MPI_T_ERR_OUT_OF_SESSIONS.
    pub const T_OUT_OF_SESSIONS: c_int = 66;
    /// MPI_T_ERR_INVALID_SESSION.
    pub const T_INVALID_SESSION: c_int = 67;
    /// MPI_T_ERR_CVAR_SET_NOT_NOW.
    pub const T_CVAR_SET_NOT_NOW: c_int = 68;
    /// MPI_T_ERR_CVAR_SET_NEVER.
    pub const T_CVAR_SET_NEVER: c_int = 69;
    /// MPI_T_ERR_PVAR_NO_STARTSTOP.
    pub const T_PVAR_NO_STARTSTOP: c_int = 70;
    /// MPI_T_ERR_PVAR_NO_WRITE.
    pub const T_PVAR_NO_WRITE: c_int = 71;
    /// MPI_T_ERR_PVAR_NO_ATOMIC.
    pub const T_PVAR_NO_ATOMIC: c_int = 72;
    /// MPI_T_ERR_INVALID_NAME.
    pub const T_INVALID_NAME: c_int = 73;
    /// MPI_T_ERR_INVALID.
    pub const T_INVALID: c_int = 74;
    /// MPI_ERR_LASTCODE: the largest predefined error code.
    pub const LASTCODE: c_int = 74;
}

/// The C `MPI_Status`: three public fields, then the library's own (cancelled flag,
/// message length in bytes split in two ints). Six ints, no padding.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(non_snake_case)]
pub struct MpiStatus {
    /// Source rank (in the communicator).
    pub MPI_SOURCE: c_int,
    /// Tag.
    pub MPI_TAG: c_int,
    /// Error code (for multiple completion calls).
    pub MPI_ERROR: c_int,
    /// 1 if cancelled.
    pub cancelled: c_int,
    /// Low 32 bits of the length in bytes.
    pub count_lo: c_int,
    /// High 32 bits of the length in bytes.
    pub count_hi: c_int,
}

impl MpiStatus {
    /// A status with these fields.
    pub fn new(source: c_int, tag: c_int, bytes: usize) -> MpiStatus {
        let b = bytes as u64;
        MpiStatus {
            MPI_SOURCE: source,
            MPI_TAG: tag,
            MPI_ERROR: class::SUCCESS,
            cancelled: 0,
            count_lo: (b & 0xffff_ffff) as u32 as c_int,
            count_hi: (b >> 32) as u32 as c_int,
        }
    }

    /// The status of an operation with MPI_PROC_NULL, or of an empty completion.
    pub fn empty() -> MpiStatus {
        MpiStatus::new(PROC_NULL, ANY_TAG, 0)
    }

    /// The message length in bytes.
    pub fn bytes(&self) -> u64 {
        (u64::from(self.count_hi as u32) << 32) | u64::from(self.count_lo as u32)
    }
}
