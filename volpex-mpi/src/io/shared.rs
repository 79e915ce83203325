//! The shared file pointer (MPI-3.1 section 13.4.4), in etypes of the current view.
//!
//! It lives in a small file beside the data file (`.NAME.volpex-shfp`: 8 bytes,
//! little-endian, then the ranks' records of their moves, `record_at`), as ROMIO keeps
//! it in a hidden file: an independent access
//! (`MPI_File_read_shared`, `write_shared` and their immediate forms) takes its position
//! with a fetch-and-add under an exclusive `flock`, so accesses of different ranks
//! never overlap, in the order the ranks come. Which rank comes first depends on timing,
//! so under replication it is a choice: the rank's leader replica does the fetch-and-add
//! (the pointer file is the layer's `private` file: only the leader touches it) and the
//! other replicas take the position it got (`Communicator::decide`), as they take its
//! choice of a wildcard receive's source. A leader that dies after moving the pointer
//! and before its siblings learnt the position leaves the choice to the next leader,
//! which moves the pointer again: so every move records its choice slot (the same in
//! every replica of the rank) in the pointer file, and a move that finds its slot there
//! answers the position recorded with it and changes nothing.
//!
//! Ordered accesses (`_ordered`) are collective: an all-gather of the counts, rank 0's
//! leader takes the pointer past all of them in one fetch-and-add, a broadcast of where
//! it was; each rank accesses at that position plus the counts of the ranks before it.
//!
//! Owns the pointer file; must never touch it in a replica that is not its rank's
//! leader (everything here goes through `decide`).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use volpex::Communicator;

use super::file::{self, Handle, SEEK_CUR, SEEK_END, SEEK_SET};
use super::sys;
use crate::error::{MpiError, Result};
use crate::handles::class;

/// Where the shared pointer of the file at `path` lives.
pub fn pointer_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.volpex-shfp"))
}

/// How the pointer changes in one locked step.
#[derive(Clone, Copy)]
enum Step {
    /// Adds this many etypes.
    Add(u64),
    /// Sets it.
    Set(u64),
    /// Makes the file anew with this value (at open: no record of an earlier job's
    /// moves stays; no rank moves it before the open's barrier).
    Make(u64),
    /// Reads it.
    Read,
}

/// Moves a rank keeps recorded in the pointer file (a ring, by slot): more than a leader
/// can make before its siblings hear of them.
const RECORDS: u64 = 64;

/// Where, in the pointer file, the record of `rank`'s move in choice `slot` is: after
/// the pointer (8 bytes), `RECORDS` records of 16 bytes per rank of the file's
/// communicator, each `slot + 1` (0: none) and the pointer before the move.
fn record_at(rank: u64, slot: u64) -> u64 {
    8 + (rank * RECORDS + slot % RECORDS) * 16
}

/// Opens the pointer file (making it), locks it, applies `step`; returns the value
/// before. Only in the rank's leader replica. `mark`, (rank, choice slot) under
/// replication: a move whose slot is recorded was made by a leader that died before its
/// siblings learnt the value; it is not made again, its value before is the answer.
fn locked(p: &Path, step: Step, mark: Option<(u64, u64)>) -> std::io::Result<u64> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(p)?;
    let f = nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, e)| std::io::Error::from_raw_os_error(e as i32))?;
    if let Step::Make(_) = step {
        f.set_len(0)?;
    }
    let moves = !matches!(step, Step::Read);
    let record = mark.filter(|_| moves).map(|(rank, slot)| {
        let at = record_at(rank, slot);
        (at, slot + 1)
    });
    if let Some((at, tag)) = record {
        let mut b = [0u8; 16];
        if read_full(&f, &mut b, at)? == 16 && b[..8] == tag.to_le_bytes() {
            let mut before = [0u8; 8];
            before.copy_from_slice(&b[8..]);
            return Ok(u64::from_le_bytes(before));
        }
    }
    let old = read_value(&f)?;
    let new = match step {
        Step::Add(n) => old + n,
        Step::Set(v) | Step::Make(v) => v,
        Step::Read => old,
    };
    if moves {
        // The pointer first: a leader killed between the two writes leaves a gap (the
        // next leader moves the pointer again), never two accesses at one position.
        f.write_all_at(&new.to_le_bytes(), 0)?;
    }
    if let Some((at, tag)) = record {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&tag.to_le_bytes());
        b[8..].copy_from_slice(&old.to_le_bytes());
        f.write_all_at(&b, at)?;
    }
    Ok(old)
}

/// Reads up to `b.len()` bytes at `at`: how many there were.
fn read_full(f: &File, b: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < b.len() {
        match f.read_at(&mut b[n..], at + n as u64)? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn read_value(f: &File) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    Ok(match read_full(f, &mut b, 0)? {
        8 => u64::from_le_bytes(b),
        _ => 0,
    })
}

/// `step` on the pointer of the file at `path`, done by this rank's leader replica and
/// taken by the others: the value before.
fn step(comm: &Communicator, path: &Path, s: Step) -> Result<u64> {
    let p = pointer_path(path);
    volpex_files::private(&p);
    let mut err = None;
    let rank = comm.rank() as u64;
    let v = comm.decide_in_slot(|slot| match locked(&p, s, slot.map(|k| (rank, k))) {
        Ok(v) => v,
        Err(e) => {
            err = Some(e);
            0
        }
    })?;
    match err {
        Some(e) => Err(sys(e, &format!("the shared file pointer {}", p.display()))),
        None => Ok(v),
    }
}

/// Makes the pointer of the file at `path` with value `at` (rank 0 of the file's
/// communicator, at open, before a barrier).
pub fn make(comm: &Communicator, path: &Path, at: u64) -> Result<()> {
    step(comm, path, Step::Make(at)).map(drop)
}

/// Sets the pointer of the file at `path` to `at` (MPI_File_set_view, seek_shared).
pub fn set(comm: &Communicator, path: &Path, at: u64) -> Result<()> {
    step(comm, path, Step::Set(at)).map(drop)
}

/// Removes the pointer file (rank 0, at close).
pub fn remove(comm: &Communicator, path: &Path) -> Result<()> {
    let p = pointer_path(path);
    volpex_files::private(&p);
    comm.decide(|| {
        let _ = std::fs::remove_file(&p);
        0
    })?;
    Ok(())
}

/// The position an independent shared-pointer access of `n` etypes starts at; the
/// pointer moves past it.
pub fn take(h: &Handle, n: u64) -> Result<u64> {
    step(&file::comm_of(h)?, &h.path, Step::Add(n))
}

/// The position an ordered access of `n` etypes by this rank starts at; moves the shared
/// pointer past every rank's access. Collective over the file's communicator.
pub fn ordered_start(h: &Handle, n: u64) -> Result<u64> {
    let comm = file::comm_of(h)?;
    let mut counts = vec![0u64; comm.size() as usize];
    comm.all_gather_into(&[n][..], &mut counts[..])?;
    let me = comm.rank() as usize;
    let before: u64 = counts[..me].iter().sum();
    let total: u64 = counts.iter().sum();
    let mut base = [0u64];
    if me == 0 {
        base[0] = step(&comm, &h.path, Step::Add(total))?;
    }
    comm.process_at_rank(0).broadcast_into(&mut base)?;
    Ok(base[0] + before)
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
    if whence == SEEK_END {
        // The size every rank sees once all operations so far are applied.
        file::settle_all(&comm)?;
    }
    let mut res = [class::SUCCESS as i64, 0];
    if comm.rank() == 0 {
        let base = match whence {
            SEEK_SET => Ok(0),
            SEEK_CUR => step(&comm, &h.path, Step::Read).map(|v| v as i128),
            SEEK_END => file::end_etypes(&h).map(|v| v as i128),
            w => Err(MpiError::arg(format!("invalid whence {w}"))),
        };
        let to = base.and_then(|b| {
            u64::try_from(b + offset as i128).map_err(|_| {
                MpiError::arg(format!(
                    "seek to a negative position {}",
                    b + offset as i128
                ))
            })
        });
        match to.and_then(|t| set(&comm, &h.path, t)) {
            Ok(()) => {}
            Err(e) => res = [e.class as i64, 0],
        }
    }
    comm.process_at_rank(0).broadcast_into(&mut res)?;
    if res[0] != class::SUCCESS as i64 {
        return Err(MpiError::new(res[0] as i32, "MPI_File_seek_shared failed"));
    }
    Ok(())
}

/// MPI_File_get_position_shared.
pub fn position(fh: i32) -> Result<u64> {
    let h = file::handle(fh)?;
    step(&file::comm_of(&h)?, &h.path, Step::Read)
}
