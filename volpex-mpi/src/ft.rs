//! The fault-tolerance extensions (`MPIX_Checkpoint`, `MPIX_Restored`,
//! `MPIX_Regenerated`, `MPIX_Seed`, `MPIX_Output_open`, `MPIX_Output_commit`): the C and
//! Fortran face of `Communicator::checkpoint`, `Universe::restored`,
//! `Universe::regenerated`, `Communicator::rank_seed` and `Universe::create_output`, with
//! the program's state as plain bytes and output files written by the program's own I/O.
//!
//! Owns the restored state between the moment it is taken from the universe and the
//! moment the program has copied it out (a buffer too small is an error the program can
//! retry with a bigger one), and the output files begun and not committed yet (by the
//! path the program named). Must never touch C pointers (`ffi` does) nor interpret the
//! state's bytes.

use std::os::raw::c_int;

use parking_lot::Mutex;
use volpex::OutputFile;

use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::state;

/// The restored state, once taken from the universe, until the program copied it out.
static RESTORED: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// MPIX_Checkpoint: `state` becomes the latest checkpoint of this replica (on any
/// communicator: the checkpoint is the whole process's).
pub fn checkpoint(comm: c_int, state_bytes: &[u8]) -> Result<()> {
    let c = state::comm(comm)?;
    c.checkpoint(&state_bytes.to_vec())?;
    Ok(())
}

/// The restored state's length, if this replica was restored from a checkpoint.
pub fn restored_len() -> Result<Option<usize>> {
    take_from_universe()?;
    Ok(RESTORED.lock().as_ref().map(Vec::len))
}

/// MPIX_Restored: copies the restored state into `out` and returns its length (`None`:
/// not restored). A state longer than `out` is MPI_ERR_TRUNCATE and stays available.
pub fn restored_into(out: &mut [u8]) -> Result<Option<usize>> {
    take_from_universe()?;
    let mut held = RESTORED.lock();
    let Some(bytes) = held.as_ref() else {
        return Ok(None);
    };
    let n = bytes.len();
    let Some(dst) = out.get_mut(..n) else {
        return Err(MpiError::new(
            class::TRUNCATE,
            format!("the restored state has {n} bytes, the buffer {}", out.len()),
        ));
    };
    dst.copy_from_slice(bytes);
    *held = None;
    Ok(Some(n))
}

fn take_from_universe() -> Result<()> {
    let got = state::with(|s| {
        let u = s
            .universe
            .as_ref()
            .ok_or_else(|| MpiError::new(class::OTHER, "MPI is not running"))?;
        Ok(u.restored::<Vec<u8>>()?)
    })?;
    if let Some(bytes) = got {
        *RESTORED.lock() = Some(bytes);
    }
    Ok(())
}

/// MPIX_Regenerated: whether this process is a new incarnation of its replica (restored
/// from a checkpoint or replaying the program from its start).
pub fn regenerated() -> Result<bool> {
    state::with(|s| Ok(s.universe.as_ref().is_some_and(|u| u.regenerated())))
}

/// MPIX_Seed: a seed equal in every replica of this rank and different across ranks of
/// `comm` (and across salts).
pub fn seed(comm: c_int, salt: u64) -> Result<u64> {
    Ok(state::comm(comm)?.rank_seed(salt))
}

/// The error class of an I/O error (MPI-3.1 section 13.7, the I/O error classes):
/// a full disk is MPI_ERR_NO_SPACE, a quota MPI_ERR_QUOTA, a read-only file system
/// MPI_ERR_READ_ONLY, a permission MPI_ERR_ACCESS, a missing directory
/// MPI_ERR_NO_SUCH_FILE, anything else MPI_ERR_IO.
pub fn io_class(e: &std::io::Error) -> c_int {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::StorageFull => class::NO_SPACE,
        K::QuotaExceeded => class::QUOTA,
        K::ReadOnlyFilesystem => class::READ_ONLY,
        K::PermissionDenied => class::ACCESS,
        K::NotFound | K::NotADirectory => class::NO_SUCH_FILE,
        _ => class::IO,
    }
}

/// Output files begun (MPIX_Output_open) and not committed yet, by the path named.
static OUTPUTS: Mutex<Vec<(String, OutputFile)>> = Mutex::new(Vec::new());

/// MPIX_Output_open: begins the output file at `path` (see `Universe::create_output`)
/// and returns the path at which the program writes it (with fopen, a Fortran OPEN).
/// Opening a path again discards what was begun for it.
pub fn output_open(path: &str) -> Result<String> {
    if path.is_empty() {
        return Err(MpiError::arg("MPIX_Output_open: empty path"));
    }
    let out = state::with(|s| {
        let u = s
            .universe
            .as_ref()
            .ok_or_else(|| MpiError::new(class::OTHER, "MPI is not running"))?;
        u.create_output(path)
            .map_err(|e| MpiError::new(io_class(&e), format!("{path}: {e}")))
    })?;
    let writable = out.writable_path().to_string_lossy().into_owned();
    let mut outs = OUTPUTS.lock();
    if let Some(i) = outs.iter().position(|(p, _)| p == path) {
        outs.remove(i).1.discard();
    }
    outs.push((path.to_string(), out));
    Ok(writable)
}

/// MPIX_Output_commit: puts the output begun for `path` at its path (one complete copy,
/// in one atomic rename). The program must have closed (or flushed) what it wrote; a
/// write the disk refused (ENOSPC, EDQUOT) is this call's error, and nothing is
/// published.
pub fn output_commit(path: &str) -> Result<()> {
    let out = {
        let mut outs = OUTPUTS.lock();
        let i = outs.iter().position(|(p, _)| p == path).ok_or_else(|| {
            MpiError::arg(format!(
                "MPIX_Output_commit: no output open for {path} (MPIX_Output_open first)"
            ))
        })?;
        outs.remove(i).1
    };
    out.commit()
        .map_err(|e| MpiError::new(io_class(&e), format!("{path}: {e}")))
}

/// Discards the output begun for `path`, if any.
pub fn output_discard(path: &str) {
    let mut outs = OUTPUTS.lock();
    if let Some(i) = outs.iter().position(|(p, _)| p == path) {
        outs.remove(i).1.discard();
    }
}

/// Discards every output not committed (at MPI_Finalize): a named temporary would stay.
pub fn discard_outputs() {
    OUTPUTS.lock().clear();
}
