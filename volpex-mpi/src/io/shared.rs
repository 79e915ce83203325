//! The shared file pointer (MPI-3.1 section 13.4.4). Every rank keeps a copy, moved only
//! by collective calls (ordered accesses, MPI_File_seek_shared, set_view), so every
//! rank, and every replica of it, has the same value without asking anyone: an ordered
//! access gathers each rank's count, starts at the pointer plus the counts of the ranks
//! before it (rank order, section 13.4.4), and moves the pointer past all of them.
//!
//! The independent shared-pointer calls (`MPI_File_read_shared`, `write_shared` and their
//! immediate forms) need an order between ranks decided at run time, by timing: under
//! replication every replica of every rank would have to agree on it (as on a wildcard
//! receive), which is not done; they return MPI_ERR_UNSUPPORTED_OPERATION.
//!
//! Owns the pointer's arithmetic; must never move it in an independent call.

use super::file::{self, Handle, SEEK_CUR, SEEK_END, SEEK_SET};
use crate::error::{MpiError, Result};
use crate::handles::class;

/// The position an ordered access of `n` etypes by this rank starts at; moves the shared
/// pointer past every rank's access. Collective over the file's communicator.
pub fn ordered_start(fh: i32, h: &Handle, n: u64) -> Result<u64> {
    let comm = file::comm_of(h)?;
    let mut counts = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&[n][..], &mut counts[..])?;
    let me = comm.rank() as usize;
    let before: u64 = counts[..me].iter().sum();
    let total: u64 = counts.iter().sum();
    file::with(fh, |e| {
        let at = e.shared_pos + before;
        e.shared_pos += total;
        Ok(at)
    })
}

/// MPI_File_seek_shared: collective; every rank must give the same offset and whence.
pub fn seek(fh: i32, offset: i64, whence: i32) -> Result<()> {
    let h = file::handle(fh)?;
    let comm = file::comm_of(&h)?;
    let mut all = vec![[0i64; 2]; comm.size() as usize];
    comm.all_gather_into(&[[offset, whence as i64]][..], &mut all[..])?;
    if all.iter().any(|a| *a != [offset, whence as i64]) {
        return Err(MpiError::new(
            class::NOT_SAME,
            "the ranks gave MPI_File_seek_shared different offsets or whences",
        ));
    }
    let base = match whence {
        SEEK_SET => 0,
        SEEK_CUR => file::with(fh, |e| Ok(e.shared_pos))? as i128,
        SEEK_END => {
            // The size every rank sees once all operations so far are applied.
            file::settle_all(&comm)?;
            file::end_etypes(&h)? as i128
        }
        w => return Err(MpiError::arg(format!("invalid whence {w}"))),
    };
    let to = base + offset as i128;
    let to = u64::try_from(to)
        .map_err(|_| MpiError::arg(format!("seek to a negative position {to}")))?;
    file::with(fh, |e| {
        e.shared_pos = to;
        Ok(())
    })
}

/// MPI_File_get_position_shared.
pub fn position(fh: i32) -> Result<u64> {
    file::with(fh, |e| Ok(e.shared_pos))
}
