//! Data access (MPI-3.1 section 13.4): reads and writes at explicit offsets, at the
//! individual file pointer and at the shared one (ordered), independent and collective,
//! blocking, nonblocking and split. The data moves between the program's buffer (packed
//! by the datatype engine) and the pieces the view gives, with `pwrite` / `pread`
//! through the file layer.
//!
//! Nonblocking calls do their access at once and return a complete request (MPI allows
//! an immediate call to complete before it returns); split collectives do theirs at
//! `_begin` and report it at `_end`. Collective calls go through `aggregate` (two-phase).
//!
//! Owns the positions and the access checks; must never hold the state's lock across
//! I/O.

use std::os::unix::fs::FileExt;

use super::file::{self, Handle, MODE_RDONLY, MODE_SEQUENTIAL, MODE_WRONLY};
use super::sys;
use crate::error::{MpiError, Result};
use crate::handles::{class, MpiStatus, ANY_SOURCE, ANY_TAG};
use crate::state::Split;

/// Where an access starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// An explicit offset, in etypes (`_at` calls).
    Offset(i64),
    /// The individual file pointer.
    Individual,
    /// The shared file pointer, in rank order (`_ordered` calls).
    Ordered,
    /// The shared file pointer, in the order the ranks come (`_shared` calls).
    Shared,
}

/// Which way the data goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// From the buffer to the file.
    Write,
    /// From the file to the buffer.
    Read,
}

/// The status of an access that moved `bytes` bytes.
pub fn status(bytes: usize) -> MpiStatus {
    MpiStatus::new(ANY_SOURCE, ANY_TAG, bytes)
}

/// Checks an access of `dir` at `at` against the amode (section 13.4: a read of a file
/// opened write-only is MPI_ERR_ACCESS, a write of a read-only one MPI_ERR_READ_ONLY;
/// explicit offsets and the individual pointer are not allowed with
/// MPI_MODE_SEQUENTIAL).
pub fn check(h: &Handle, dir: Dir, at: Where) -> Result<()> {
    match dir {
        Dir::Read if h.amode & MODE_WRONLY != 0 => {
            return Err(MpiError::new(
                class::ACCESS,
                "a read of a file opened MPI_MODE_WRONLY",
            ))
        }
        Dir::Write if h.amode & MODE_RDONLY != 0 => {
            return Err(MpiError::new(
                class::READ_ONLY,
                "a write to a file opened MPI_MODE_RDONLY",
            ))
        }
        Dir::Read | Dir::Write => {}
    }
    if h.amode & MODE_SEQUENTIAL != 0 && !matches!(at, Where::Ordered | Where::Shared) {
        return Err(MpiError::new(
            class::UNSUPPORTED_OPERATION,
            "only the shared file pointer may be used with MPI_MODE_SEQUENTIAL",
        ));
    }
    Ok(())
}

/// The number of etypes in `bytes` bytes of data (an access must move whole etypes).
pub fn etypes(h: &Handle, bytes: usize) -> Result<u64> {
    let e = h.view.esize();
    if !(bytes as u64).is_multiple_of(e) {
        return Err(MpiError::new(
            class::TYPE,
            format!("{bytes} bytes of data are not whole etypes of {e} bytes"),
        ));
    }
    Ok(bytes as u64 / e)
}

/// Writes `data` at view position `pos` (etypes), piece by piece.
pub fn write_at(h: &Handle, pos: u64, data: &[u8]) -> Result<()> {
    let start = pos
        .checked_mul(h.view.esize())
        .ok_or_else(|| MpiError::arg("offset out of range"))?;
    let mut at = 0;
    for (off, len) in h.view.pieces(start, data.len() as u64)? {
        h.file
            .write_all_at(&data[at..at + len], off)
            .map_err(|e| sys(e, "write"))?;
        at += len;
    }
    if h.atomic {
        // Atomic mode: the bytes are on the file system when the call returns.
        volpex_files::settle();
    }
    Ok(())
}

/// Reads into `out` from view position `pos` (etypes); stops at the end of the file.
/// Returns the bytes read.
pub fn read_at(h: &Handle, pos: u64, out: &mut [u8]) -> Result<usize> {
    let start = pos
        .checked_mul(h.view.esize())
        .ok_or_else(|| MpiError::arg("offset out of range"))?;
    let mut at = 0;
    for (off, len) in h.view.pieces(start, out.len() as u64)? {
        let got = read_full(h, off, &mut out[at..at + len])?;
        at += got;
        if got < len {
            break;
        }
    }
    Ok(at)
}

/// Reads `buf` at `off` until it is full or the file ends.
fn read_full(h: &Handle, off: u64, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match h.file.read_at(&mut buf[n..], off + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(sys(e, "read")),
        }
    }
    Ok(n)
}

/// The view position an access of `bytes` bytes at `at` starts at; moves the pointer
/// it uses by `moved(bytes)` etypes once known (`advance`).
fn start(fh: i32, h: &Handle, at: Where, bytes: usize) -> Result<u64> {
    match at {
        Where::Offset(o) => {
            u64::try_from(o).map_err(|_| MpiError::arg(format!("negative offset {o}")))
        }
        Where::Individual => file::with(fh, |e| Ok(e.pos)),
        Where::Ordered => super::shared::ordered_start(h, etypes(h, bytes)?),
        Where::Shared => super::shared::take(h, etypes(h, bytes)?),
    }
}

/// Moves the individual pointer past `bytes` bytes from `pos` (an `Individual` access).
fn advance(fh: i32, h: &Handle, at: Where, pos: u64, bytes: usize) -> Result<()> {
    if at == Where::Individual {
        let moved = bytes as u64 / h.view.esize();
        file::with(fh, |e| {
            e.pos = pos + moved;
            Ok(())
        })?;
    }
    Ok(())
}

/// A write of `data` (the buffer's packed bytes) to file `fh` at `at`; `collective`:
/// every rank of the file's communicator calls it. Returns the bytes written.
pub fn write(fh: i32, at: Where, collective: bool, data: &[u8]) -> Result<usize> {
    let h = file::handle(fh)?;
    check(&h, Dir::Write, at)?;
    etypes(&h, data.len())?;
    let pos = start(fh, &h, at, data.len())?;
    if collective {
        super::aggregate::write(&h, pos, data)?;
        // What a collective write wrote is on the file system before the rank's next
        // communication, so the ranks read it after their next collective call, as
        // with ROMIO (MPI-3.1 13.6.1 asks for sync-barrier-sync; programs rely on less).
        volpex_files::settle();
    } else {
        write_at(&h, pos, data)?;
    }
    advance(fh, &h, at, pos, data.len())?;
    Ok(data.len())
}

/// A read of `out.len()` bytes from file `fh` at `at` into `out`. Returns the bytes
/// read (fewer at the end of the file).
pub fn read(fh: i32, at: Where, collective: bool, out: &mut [u8]) -> Result<usize> {
    let h = file::handle(fh)?;
    check(&h, Dir::Read, at)?;
    etypes(&h, out.len())?;
    let pos = start(fh, &h, at, out.len())?;
    let n = if collective {
        super::aggregate::read(&h, pos, out)?
    } else {
        read_at(&h, pos, out)?
    };
    advance(fh, &h, at, pos, n)?;
    Ok(n)
}

/// Records the begun split collective of `fh` (section 13.4.5: one at a time per file).
pub fn begin_split(fh: i32, bytes: usize, write: bool) -> Result<()> {
    file::with(fh, |e| {
        if e.split.is_some() {
            return Err(MpiError::new(
                class::IO,
                "a split collective is already in progress on this file",
            ));
        }
        e.split = Some(Split { bytes, write });
        Ok(())
    })
}

/// Ends the split collective of `fh`: its status.
pub fn end_split(fh: i32, write: bool) -> Result<MpiStatus> {
    file::with(fh, |e| match e.split.take() {
        Some(s) if s.write == write => Ok(status(s.bytes)),
        Some(s) => {
            e.split = Some(s);
            Err(MpiError::new(
                class::IO,
                "the split collective in progress goes the other way",
            ))
        }
        None => Err(MpiError::new(
            class::IO,
            "no split collective in progress on this file",
        )),
    })
}

/// Checks, before a split `_begin`, that none is in progress.
pub fn no_split(fh: i32) -> Result<()> {
    file::with(fh, |e| match e.split {
        Some(_) => Err(MpiError::new(
            class::IO,
            "a split collective is already in progress on this file",
        )),
        None => Ok(()),
    })
}
