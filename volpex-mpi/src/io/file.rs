//! File handles (MPI-3.1 sections 13.2, 13.4.2-13.4.4, 13.6, 13.7): opening (collective:
//! amode checked and agreed, the file made by rank 0 before the others open it),
//! closing (`MPI_MODE_DELETE_ON_CLOSE`), deleting, sizes, sync, hints, the individual
//! file pointer and the error handler of each file.
//!
//! Owns the operations on each open file's entry (`state::FileEntry`, defined with the
//! table); must never do I/O while holding the state's
//! lock, nor reach the file system other than through `std::fs` (the file layer).

use std::fs::OpenOptions;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use volpex::{Communicator, SystemOperation};

use super::sys;
use crate::error::{MpiError, Result};
use crate::handles::{class, ERRORS_RETURN};
use crate::state::{self, FileEntry};
use crate::view::View;

/// MPI_MODE_CREATE.
pub const MODE_CREATE: c_int = 1;
/// MPI_MODE_RDONLY.
pub const MODE_RDONLY: c_int = 2;
/// MPI_MODE_WRONLY.
pub const MODE_WRONLY: c_int = 4;
/// MPI_MODE_RDWR.
pub const MODE_RDWR: c_int = 8;
/// MPI_MODE_DELETE_ON_CLOSE.
pub const MODE_DELETE_ON_CLOSE: c_int = 16;
/// MPI_MODE_UNIQUE_OPEN.
pub const MODE_UNIQUE_OPEN: c_int = 32;
/// MPI_MODE_EXCL.
pub const MODE_EXCL: c_int = 64;
/// MPI_MODE_APPEND.
pub const MODE_APPEND: c_int = 128;
/// MPI_MODE_SEQUENTIAL.
pub const MODE_SEQUENTIAL: c_int = 256;

/// MPI_DISPLACEMENT_CURRENT.
pub const DISPLACEMENT_CURRENT: i64 = -54278278;

/// MPI_SEEK_SET.
pub const SEEK_SET: c_int = 600;
/// MPI_SEEK_CUR.
pub const SEEK_CUR: c_int = 602;
/// MPI_SEEK_END.
pub const SEEK_END: c_int = 604;

/// What an access needs of an open file, taken out of the table.
#[derive(Clone)]
pub struct Handle {
    /// The file's communicator handle.
    pub comm: c_int,
    /// The communicator of its collective writes' data blocks.
    pub blocks: c_int,
    /// The access mode.
    pub amode: c_int,
    /// The descriptor.
    pub file: Arc<std::fs::File>,
    /// The view.
    pub view: View,
    /// Atomic mode.
    pub atomic: bool,
    /// Its path as given.
    pub path: PathBuf,
    /// The collective accesses' aggregators.
    pub aggregators: Arc<[usize]>,
    /// Bytes of each aggregator's domain one round of a collective access moves.
    pub round: u64,
}

/// The entry of open file `fh`, for `f`.
pub fn with<R>(fh: c_int, f: impl FnOnce(&mut FileEntry) -> Result<R>) -> Result<R> {
    state::with(|s| f(s.files.get_mut(fh)?))
}

/// What an access of `fh` needs.
pub fn handle(fh: c_int) -> Result<Handle> {
    with(fh, |e| {
        Ok(Handle {
            comm: e.comm,
            blocks: e.blocks,
            amode: e.amode,
            file: e.file.clone(),
            view: e.view.clone(),
            atomic: e.atomic,
            path: e.path.clone(),
            aggregators: e.aggregators.clone(),
            round: e.round,
        })
    })
}

/// The communicator behind the file's handle.
pub fn comm_of(h: &Handle) -> Result<Communicator> {
    state::comm(h.comm)
}

/// The size of the file: the larger of what this rank wrote and what the file system
/// holds (other ranks' writes, applied). It depends on when it is asked, so the rank's
/// leader replica asks and the others take its answer (`Communicator::decide`).
pub fn file_size(h: &Handle) -> Result<u64> {
    let mut err = None;
    let size = comm_of(h)?.decide(|| match h.file.metadata() {
        Ok(m) => m.len(),
        Err(e) => {
            err = Some(e);
            0
        }
    })?;
    match err {
        Some(e) => Err(sys(e, "fstat")),
        None => Ok(size),
    }
}

/// Checks an access mode alone (section 13.2.1).
pub fn check_amode(amode: c_int) -> Result<()> {
    let known = MODE_CREATE
        | MODE_RDONLY
        | MODE_WRONLY
        | MODE_RDWR
        | MODE_DELETE_ON_CLOSE
        | MODE_UNIQUE_OPEN
        | MODE_EXCL
        | MODE_APPEND
        | MODE_SEQUENTIAL;
    let bad = |why: &str| {
        Err(MpiError::new(
            class::AMODE,
            format!("amode {amode:#x}: {why}"),
        ))
    };
    if amode & !known != 0 {
        return bad("unknown bits");
    }
    let access = [MODE_RDONLY, MODE_WRONLY, MODE_RDWR]
        .iter()
        .filter(|&&m| amode & m != 0)
        .count();
    if access != 1 {
        return bad("exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR is needed");
    }
    if amode & MODE_RDONLY != 0 && amode & (MODE_CREATE | MODE_EXCL) != 0 {
        return bad("MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL");
    }
    if amode & MODE_RDWR != 0 && amode & MODE_SEQUENTIAL != 0 {
        return bad("MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL");
    }
    Ok(())
}

/// Agrees on an outcome over `comm`: the largest error class any rank had (0: none).
pub fn agree(comm: &Communicator, mine: c_int) -> Result<c_int> {
    let mut all = [0];
    comm.all_reduce_into(&[mine], &mut all, SystemOperation::max())?;
    Ok(all[0])
}

/// Opens `path` with `amode` (std's options; `create` and `excl` for the one rank that
/// makes the file), through the file layer as a file several ranks share.
fn open_path(path: &Path, amode: c_int, create: bool) -> std::io::Result<std::fs::File> {
    let mut o = OpenOptions::new();
    o.read(amode & MODE_WRONLY == 0)
        .write(amode & MODE_RDONLY == 0);
    if create && amode & MODE_EXCL != 0 {
        o.create_new(true);
    } else if create {
        o.create(true);
    }
    volpex_files::shared_open(|| o.open(path))
}

/// MPI_File_open (section 13.2.1): collective over `comm`. Rank 0 makes the file
/// (`MPI_MODE_CREATE`, `MPI_MODE_EXCL`) and waits until it is on the file system; then
/// every rank opens it, and all agree on the outcome: if any rank failed, every rank
/// returns the error (the largest class) and no file is open.
pub fn open(comm_h: c_int, path: &str, amode: c_int, info: Vec<(String, String)>) -> Result<c_int> {
    let comm = state::intra(comm_h, "MPI_File_open")?;
    check_amode(amode)?;
    // Every rank must give the same amode (section 13.2.1).
    let mut range = [0; 2];
    comm.all_reduce_into(&[amode, -amode][..], &mut range[..], SystemOperation::max())?;
    if range[0] != -range[1] {
        return Err(MpiError::new(
            class::NOT_SAME,
            "the ranks gave MPI_File_open different amodes",
        ));
    }
    let path = PathBuf::from(path);
    let create = amode & MODE_CREATE != 0;
    let mut opened: Option<std::fs::File> = None;
    let mut mine = class::SUCCESS;
    let mut why = String::new();
    if create {
        let mut r0 = [class::SUCCESS];
        if comm.rank() == 0 {
            match open_path(&path, amode, true) {
                Ok(f) => {
                    volpex_files::settle();
                    opened = Some(f);
                }
                Err(e) => {
                    r0[0] = super::class_of(&e);
                    why = format!("cannot make {}: {e}", path.display());
                }
            }
        }
        comm.process_at_rank(0).broadcast_into(&mut r0)?;
        if r0[0] != class::SUCCESS {
            return Err(MpiError::new(
                r0[0],
                if why.is_empty() {
                    format!("rank 0 could not make {}", path.display())
                } else {
                    why
                },
            ));
        }
    }
    if opened.is_none() {
        match open_path(&path, amode, false) {
            Ok(f) => opened = Some(f),
            Err(e) => {
                mine = super::class_of(&e);
                why = format!("cannot open {}: {e}", path.display());
            }
        }
    }
    let all = agree(&comm, mine)?;
    if all != class::SUCCESS {
        drop(opened);
        return Err(MpiError::new(
            all,
            if why.is_empty() {
                format!("another rank could not open {}", path.display())
            } else {
                why
            },
        ));
    }
    let Some(file) = opened else {
        return Err(MpiError::new(
            class::INTERN,
            "no file after a successful open",
        ));
    };
    let file = Arc::new(file);
    let fcomm = crate::comm::dup(comm_h)?;
    let blocks = crate::comm::dup(comm_h)?;
    let aggregators = super::aggregate::aggregators(&state::comm(fcomm)?, &info)?;
    let round = super::aggregate::round_bytes(&state::comm(fcomm)?, &info)?;
    let byte_h = crate::types::named("MPI_BYTE")?;
    let byte = state::datatype(byte_h)?;
    let entry = FileEntry {
        comm: fcomm,
        blocks,
        path,
        amode,
        file,
        view: View::bytes(byte, byte_h),
        pos: 0,
        atomic: false,
        info,
        errhandler: state::with(|s| Ok(s.file_errhandler)).unwrap_or(ERRORS_RETURN),
        split: None,
        aggregators: aggregators.into(),
        round,
    };
    let h = state::with(|s| Ok(s.files.insert(entry)))?;
    // Both pointers start at the end with MPI_MODE_APPEND (section 13.2.1).
    let start = match amode & MODE_APPEND {
        0 => 0,
        _ => file_size(&handle(h)?)?,
    };
    with(h, |e| {
        e.pos = start;
        Ok(())
    })?;
    let fcomm = state::comm(fcomm)?;
    if fcomm.rank() == 0 {
        super::shared::make(&fcomm, &handle(h)?.path, start)?;
    }
    fcomm.barrier()?;
    Ok(h)
}

/// MPI_File_close (section 13.2.2): collective. The file's operations applied, then a
/// barrier, then rank 0 removes it for `MPI_MODE_DELETE_ON_CLOSE`. A write the disk
/// refused (a full disk, a quota) is this call's error.
pub fn close(fh: &mut c_int) -> Result<()> {
    let e = state::with(|s| s.files.remove(*fh))?;
    *fh = crate::handles::NULL;
    let comm = state::comm(e.comm)?;
    let file = Arc::try_unwrap(e.file)
        .map_err(|_| MpiError::new(class::FILE, "the file is in use by another call"))?;
    // close(2) through the layer: it says whether the writer's writes reached the disk.
    let closed = nix::unistd::close(file).map_err(|e| std::io::Error::from_raw_os_error(e as i32));
    volpex_files::settle();
    let mine = match &closed {
        Ok(()) => class::SUCCESS,
        Err(e) => super::class_of(e),
    };
    let all = agree(&comm, mine)?;
    if comm.rank() == 0 {
        super::shared::remove(&comm, &e.path)?;
        if e.amode & MODE_DELETE_ON_CLOSE != 0 {
            let _ = std::fs::remove_file(&e.path);
            volpex_files::settle();
        }
    }
    comm.barrier()?;
    for mut c in [e.comm, e.blocks] {
        crate::comm::free(&mut c)?;
    }
    if let Err(err) = closed {
        return Err(sys(err, &format!("close of {}", e.path.display())));
    }
    if all != class::SUCCESS {
        return Err(MpiError::new(
            all,
            format!("another rank's close of {} failed", e.path.display()),
        ));
    }
    Ok(())
}

/// MPI_File_delete (section 13.2.3).
pub fn delete(path: &str) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| sys(e, &format!("cannot delete {path}")))?;
    volpex_files::settle();
    Ok(())
}

/// Applies this rank's operations on the file, then a barrier: what every rank did to
/// the file before is on the file system after.
pub fn settle_all(comm: &Communicator) -> Result<()> {
    volpex_files::settle();
    comm.barrier()?;
    Ok(())
}

/// Checks that every rank gave the same `size`.
fn same_size(comm: &Communicator, size: i64, what: &str) -> Result<()> {
    let mut range = [0i64; 2];
    comm.all_reduce_into(&[size, -size][..], &mut range[..], SystemOperation::max())?;
    if range[0] != -range[1] {
        return Err(MpiError::new(
            class::NOT_SAME,
            format!("the ranks gave {what} different sizes"),
        ));
    }
    Ok(())
}

fn check_writable(h: &Handle, what: &str) -> Result<()> {
    if h.amode & MODE_RDONLY != 0 {
        return Err(MpiError::new(
            class::READ_ONLY,
            format!("{what} of a file opened MPI_MODE_RDONLY"),
        ));
    }
    if h.amode & MODE_SEQUENTIAL != 0 {
        return Err(MpiError::new(
            class::UNSUPPORTED_OPERATION,
            format!("{what} of a file opened MPI_MODE_SEQUENTIAL"),
        ));
    }
    Ok(())
}

/// MPI_File_set_size (section 13.2.4): collective; every rank cuts or extends the file
/// (so each rank's view of its size is the new one), between two points where every
/// rank's operations are applied.
pub fn set_size(fh: c_int, size: i64) -> Result<()> {
    let h = handle(fh)?;
    check_writable(&h, "MPI_File_set_size")?;
    let size = u64::try_from(size).map_err(|_| MpiError::arg(format!("negative size {size}")))?;
    let comm = comm_of(&h)?;
    same_size(&comm, size as i64, "MPI_File_set_size")?;
    settle_all(&comm)?;
    let mine = match h.file.set_len(size) {
        Ok(()) => class::SUCCESS,
        Err(e) => super::class_of(&e),
    };
    volpex_files::settle();
    let all = agree(&comm, mine)?;
    if all != class::SUCCESS {
        return Err(MpiError::new(all, "MPI_File_set_size failed"));
    }
    Ok(())
}

/// MPI_File_preallocate (section 13.2.5): collective; rank 0 extends a smaller file with
/// zeros (storage is allocated as the file system does for a sparse file).
pub fn preallocate(fh: c_int, size: i64) -> Result<()> {
    let h = handle(fh)?;
    check_writable(&h, "MPI_File_preallocate")?;
    let size = u64::try_from(size).map_err(|_| MpiError::arg(format!("negative size {size}")))?;
    let comm = comm_of(&h)?;
    same_size(&comm, size as i64, "MPI_File_preallocate")?;
    settle_all(&comm)?;
    let mut mine = class::SUCCESS;
    if comm.rank() == 0 {
        let now = file_size(&h)?;
        if now < size {
            if let Err(e) = h.file.set_len(size) {
                mine = super::class_of(&e);
            }
        }
    }
    volpex_files::settle();
    let all = agree(&comm, mine)?;
    if all != class::SUCCESS {
        return Err(MpiError::new(all, "MPI_File_preallocate failed"));
    }
    Ok(())
}

/// MPI_File_get_size (section 13.2.6): the larger of what this rank wrote and what the
/// file system holds (other ranks' writes applied).
pub fn size(fh: c_int) -> Result<u64> {
    file_size(&handle(fh)?)
}

/// MPI_File_sync (section 13.6.1): collective in MPI; here the rank's operations reach
/// the file system (the writer applied them), so that after a barrier every rank reads
/// them.
pub fn sync(fh: c_int) -> Result<()> {
    let h = handle(fh)?;
    if h.amode & MODE_RDONLY == 0 {
        volpex_files::settle();
    }
    Ok(())
}

/// MPI_File_seek (section 13.4.2): the individual pointer, in etypes.
pub fn seek(fh: c_int, offset: i64, whence: c_int) -> Result<()> {
    let h = handle(fh)?;
    if h.amode & MODE_SEQUENTIAL != 0 {
        return Err(MpiError::new(
            class::UNSUPPORTED_OPERATION,
            "MPI_File_seek on a file opened MPI_MODE_SEQUENTIAL",
        ));
    }
    let base = match whence {
        SEEK_SET => 0,
        SEEK_CUR => with(fh, |e| Ok(e.pos))? as i128,
        SEEK_END => end_etypes(&h)? as i128,
        w => return Err(MpiError::arg(format!("invalid whence {w}"))),
    };
    let to = base + offset as i128;
    let to = u64::try_from(to)
        .map_err(|_| MpiError::arg(format!("seek to a negative position {to}")))?;
    with(fh, |e| {
        e.pos = to;
        Ok(())
    })
}

/// Where the file ends, in etypes of the view (whole etypes before the end).
pub fn end_etypes(h: &Handle) -> Result<u64> {
    let size = file_size(h)?;
    Ok(h.view.data_before(size).div_ceil(h.view.esize()))
}

/// MPI_File_set_view (section 13.3): collective; resets both pointers. Only the
/// `native` representation.
pub fn set_view(
    fh: c_int,
    disp: i64,
    types: (c_int, c_int),
    datarep: &str,
    info: Vec<(String, String)>,
) -> Result<()> {
    let h = handle(fh)?;
    let (etype, filetype) = (state::datatype(types.0)?, state::datatype(types.1)?);
    let external32 = match datarep {
        "native" => false,
        "external32" if same_layout(&etype)? && same_layout(&filetype)? => true,
        _ => {
            return Err(MpiError::new(
                class::UNSUPPORTED_DATAREP,
                format!(
                    "data representation {datarep:?} (\"native\" is supported, and \"external32\" for types whose basic elements are as large in both)"
                ),
            ))
        }
    };
    if !etype.committed || !filetype.committed {
        return Err(MpiError::new(
            class::TYPE,
            "an uncommitted etype or filetype",
        ));
    }
    let comm = comm_of(&h)?;
    let disp = if disp == DISPLACEMENT_CURRENT {
        // The shared pointer's place, in bytes (section 13.3; MPI_MODE_SEQUENTIAL only).
        if h.amode & MODE_SEQUENTIAL == 0 {
            return Err(MpiError::arg(
                "MPI_DISPLACEMENT_CURRENT with a file not opened MPI_MODE_SEQUENTIAL",
            ));
        }
        let mut at = [0u64];
        if comm.rank() == 0 {
            at[0] = h.view.byte_offset(super::shared::position(fh)?)?;
        }
        comm.process_at_rank(0).broadcast_into(&mut at)?;
        at[0]
    } else {
        u64::try_from(disp).map_err(|_| MpiError::arg(format!("negative displacement {disp}")))?
    };
    let mut view = View::new(disp, etype, filetype, types)?;
    view.external32 = external32;
    // Both pointers go back to 0: rank 0 resets the shared one once every rank is here
    // (one may still read it before its own set_view), and the others wait for it.
    comm.barrier()?;
    if comm.rank() == 0 {
        super::shared::set(&comm, &h.path, 0)?;
    }
    comm.barrier()?;
    with(fh, |e| {
        e.view = view;
        e.pos = 0;
        merge_info(&mut e.info, info);
        Ok(())
    })
}

/// Whether `t`'s data takes as many bytes in external32 as in memory.
pub fn same_layout(t: &crate::datatype::Datatype) -> Result<bool> {
    Ok(crate::external32::size(t, 1)? == t.size as u64)
}

/// Sets the hints in `new` over `old`.
pub fn merge_info(old: &mut Vec<(String, String)>, new: Vec<(String, String)>) {
    for (k, v) in new {
        match old.iter_mut().find(|(ok, _)| *ok == k) {
            Some(kv) => kv.1 = v,
            None => old.push((k, v)),
        }
    }
}

/// MPI_File_get_view: the displacement and the handles, derived ones duplicated
/// (section 13.3: "new datatypes"), and the data representation.
pub fn get_view(fh: c_int) -> Result<(i64, c_int, c_int, &'static str)> {
    let v = with(fh, |e| Ok(e.view.clone()))?;
    let dup = |h: c_int, t: &Arc<crate::datatype::Datatype>| -> Result<c_int> {
        if t.predefined {
            Ok(h)
        } else {
            let mut d = crate::datatype::Datatype::dup(t);
            d.committed = true;
            crate::types::add(d)
        }
    };
    Ok((
        v.disp as i64,
        dup(v.handles.0, &v.etype)?,
        dup(v.handles.1, &v.filetype)?,
        if v.external32 { "external32" } else { "native" },
    ))
}

/// MPI_File_set_atomicity (section 13.6.1): collective; every rank must give the same.
pub fn set_atomicity(fh: c_int, flag: bool) -> Result<()> {
    let h = handle(fh)?;
    let comm = comm_of(&h)?;
    same_size(&comm, flag as i64, "MPI_File_set_atomicity")?;
    with(fh, |e| {
        e.atomic = flag;
        Ok(())
    })
}
