//! MPI-IO (MPI-3.1 chapter 13) over POSIX calls that go through the file layer
//! (`volpex-files`, docs/FILES.md): every `pwrite`, `pread`, `ftruncate`, `fsync`,
//! `unlink` made here reaches the layer's symbols (libvolpexmpi is linked
//! `-Bsymbolic-functions`, so the standard library's calls bind to them), so the rule of
//! replicated files holds for MPI-IO: each byte written once, by the rank's writer
//! replica; reads served to every replica; a regenerated incarnation never rewrites what
//! was applied. Files are opened with `volpex_files::shared_open` (several ranks write
//! them), and every call after which another rank may look at the file (open, close,
//! sync, set_size, preallocate, a write in atomic mode) waits for the layer to have
//! applied this rank's operations (`volpex_files::settle`) before it tells the others.
//!
//! ```text
//!  ffi/io.rs   the MPI_File_* functions: pointers -> checked values, errors -> the
//!      |       file's error handler (`guard`)
//!      v
//!  file        handles and their state (amode, view, pointers, hints), open/close,
//!      |       sizes, sync, seek
//!  access      reads and writes: explicit offsets, individual and shared pointers,
//!      |       blocking, nonblocking (complete at once), collective, split
//!  aggregate   two-phase collective writes and reads (a few ranks write large runs)
//!  shared      the shared file pointer: a file moved by each rank's leader replica
//!              under flock, the others taking its answer; ordered accesses
//! ```
//!
//! Below it, `view` (a top-level module: the open file's entry in `state` holds one)
//! flattens a view into (offset, length) pieces.
//!
//! Must never touch the file system but through `std::fs` calls the layer sees, and
//! never hold the state's lock across I/O or communication.

pub mod access;
pub mod aggregate;
pub mod file;
pub mod shared;

use std::os::raw::c_int;

use crate::error::{MpiError, Result};
use crate::handles::{class, NULL};
use crate::state;

/// The MPI error class of a system error (MPI-3.1 section 13.7, table 13.3).
pub fn class_of(e: &std::io::Error) -> c_int {
    use nix::errno::Errno as E;
    match e.raw_os_error().map(E::from_raw) {
        Some(E::ENOENT | E::ENOTDIR) => class::NO_SUCH_FILE,
        Some(E::EACCES | E::EPERM) => class::ACCESS,
        Some(E::ENOSPC) => class::NO_SPACE,
        Some(E::EDQUOT) => class::QUOTA,
        Some(E::EROFS) => class::READ_ONLY,
        Some(E::EEXIST) => class::FILE_EXISTS,
        Some(E::EISDIR | E::ENAMETOOLONG) => class::BAD_FILE,
        _ => class::IO,
    }
}

/// An MPI error for system error `e` during `what`.
pub fn sys(e: std::io::Error, what: &str) -> MpiError {
    MpiError::new(class_of(&e), format!("{what}: {e}"))
}

/// Runs the body of file function `func` on file `fh` and answers for its errors with
/// the file's error handler, or that of MPI_FILE_NULL when `fh` is no open file
/// (MPI-3.1 section 13.7: MPI_ERRORS_RETURN unless the program set another).
pub fn guard(func: &'static str, fh: c_int, body: impl FnOnce() -> Result<()>) -> c_int {
    crate::errhandler::guard_with(func, body, || {
        state::with(|s| {
            Ok(match s.files.get(fh) {
                Ok(f) if fh != NULL => s.handler(f.errhandler, fh),
                _ => s.handler(s.file_errhandler, NULL),
            })
        })
        .unwrap_or(state::Handler::Fatal)
    })
}
