//! I/O calls of `mpi.h` (MPI-3.1 chapter 13): file handles, views, data access in every
//! form. Thin shells over `crate::io`; errors go to the file's error handler
//! (`io::guard`). Never keeps a pointer past the call: nonblocking accesses complete
//! before they return.

use super::*;
use crate::io::access::{self, Where};
use crate::io::{self as fio, file, shared};
use crate::state::Active;

type File = c_int;
type Offset = i64;

/// The packed bytes of `count` elements of `datatype` at `buf`, passed to `f`.
fn with_data<R>(
    fh: File,
    buf: *const c_void,
    count: c_int,
    datatype: Dtype,
    f: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<R> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    let r = reg(buf, &t, n)?;
    // SAFETY: a write's buffer holds `count` elements of `datatype` (MPI-3.1 13.4.1).
    let b = unsafe { raw::read(r, t.clone()) };
    let data = b.bytes(0, n)?;
    match external(fh)? {
        false => f(&data),
        true => f(&to_external(&t, n, &data, true)?),
    }
}

/// Whether file `fh`'s view is in external32.
fn external(fh: File) -> Result<bool> {
    file::with(fh, |e| Ok(e.view.external32))
}

/// `data` (whole elements of `t` first, up to `n`) converted to (`to_ext`) or from
/// external32; a partial element at the end stays as it is.
fn to_external(t: &Datatype, n: usize, data: &[u8], to_ext: bool) -> Result<Vec<u8>> {
    if !file::same_layout(t)? {
        return Err(MpiError::new(
            class::UNSUPPORTED_DATAREP,
            "external32 for a datatype whose basic elements differ in size from native",
        ));
    }
    let whole = match t.size {
        0 => 0,
        s => (data.len() / s).min(n),
    };
    let mut v = crate::external32::convert_all(t, whole, &data[..whole * t.size], to_ext)?;
    v.extend_from_slice(&data[whole * t.size..]);
    Ok(v)
}

/// Reads into `count` elements of `datatype` at `buf` with `f` (given the bytes to fill
/// in data order; returns how many it filled). Returns the bytes read.
fn into_buffer(
    fh: File,
    buf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    f: impl FnOnce(&mut [u8]) -> Result<usize>,
) -> Result<usize> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    let r = reg(buf, &t, n)?;
    let len = t.bytes_of(n)?;
    // SAFETY: a read's buffer holds `count` writable elements of `datatype` (13.4.1).
    let mut m = unsafe { raw::write(r, t.clone()) };
    let ext = external(fh)?;
    if !ext {
        if let Some(dst) = m.in_place(0, n)? {
            return f(dst);
        }
    }
    let mut v = vec![0u8; len];
    let got = f(&mut v)?;
    match ext {
        false => m.write(0, n, &v[..got])?,
        true => m.write(0, n, &to_external(&t, n, &v[..got], false)?)?,
    }
    Ok(got)
}

fn write_impl(
    fh: File,
    at: Where,
    coll: bool,
    (buf, count, datatype): (*const c_void, c_int, Dtype),
) -> Result<MpiStatus> {
    let n = with_data(fh, buf, count, datatype, |d| access::write(fh, at, coll, d))?;
    Ok(access::status(n))
}

fn read_impl(
    fh: File,
    at: Where,
    coll: bool,
    (buf, count, datatype): (*mut c_void, c_int, Dtype),
) -> Result<MpiStatus> {
    let n = into_buffer(fh, buf, count, datatype, |d| access::read(fh, at, coll, d))?;
    Ok(access::status(n))
}

/// A complete request with `st` (a nonblocking access done at once).
fn done_request(request: *mut c_int, st: MpiStatus) -> Result<()> {
    let h = request::add(Active::Done(st))?;
    set(request, "request", h)
}

/// Exports a family of accesses that differ only in where they go (`$at`, with the
/// offset argument when there is one) and whether they are collective: `$access`
/// (`write_impl`, `read_impl`) on a `$buf` buffer, its status handed to the caller by
/// `$finish` through a `$out` argument (`set_status` for the blocking forms,
/// `done_request` for the nonblocking ones, which are done at once).
macro_rules! file_access {
    (
        $buf:ty, $access:ident, $out:ident: $out_ty:ty => $finish:ident;
        $($name:ident($($off:ident)?) => $at:expr, $coll:expr;)*
    ) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            fh: File,
            $($off: Offset,)?
            buf: $buf,
            count: c_int,
            datatype: Dtype,
            $out: $out_ty,
        ) -> c_int {
            fio::guard(stringify!($name), fh, || {
                let st = $access(fh, $at$(($off))?, $coll, (buf, count, datatype))?;
                $finish($out, st)
            })
        }
    )*};
}

/// `Where::Offset` as a function of the offset argument.
fn off(o: Offset) -> Where {
    Where::Offset(o)
}

file_access! {
    *const c_void, write_impl, status: *mut MpiStatus => set_status;
    MPI_File_write_at(offset) => off, false;
    MPI_File_write_at_all(offset) => off, true;
    MPI_File_write() => Where::Individual, false;
    MPI_File_write_all() => Where::Individual, true;
    MPI_File_write_ordered() => Where::Ordered, true;
    MPI_File_write_shared() => Where::Shared, false;
}

file_access! {
    *mut c_void, read_impl, status: *mut MpiStatus => set_status;
    MPI_File_read_at(offset) => off, false;
    MPI_File_read_at_all(offset) => off, true;
    MPI_File_read() => Where::Individual, false;
    MPI_File_read_all() => Where::Individual, true;
    MPI_File_read_ordered() => Where::Ordered, true;
    MPI_File_read_shared() => Where::Shared, false;
}

file_access! {
    *const c_void, write_impl, request: *mut c_int => done_request;
    MPI_File_iwrite_at(offset) => off, false;
    MPI_File_iwrite_at_all(offset) => off, true;
    MPI_File_iwrite() => Where::Individual, false;
    MPI_File_iwrite_all() => Where::Individual, true;
    MPI_File_iwrite_shared() => Where::Shared, false;
}

file_access! {
    *mut c_void, read_impl, request: *mut c_int => done_request;
    MPI_File_iread_at(offset) => off, false;
    MPI_File_iread_at_all(offset) => off, true;
    MPI_File_iread() => Where::Individual, false;
    MPI_File_iread_all() => Where::Individual, true;
    MPI_File_iread_shared() => Where::Shared, false;
}

// Split collectives (section 13.4.5): the access at `_begin`, its status at `_end`.

macro_rules! split_write {
    ($($begin:ident($($off:ident)?) => $at:expr; $end:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $begin(
            fh: File,
            $($off: Offset,)?
            buf: *const c_void,
            count: c_int,
            datatype: Dtype,
        ) -> c_int {
            fio::guard(stringify!($begin), fh, || {
                access::no_split(fh)?;
                let st = write_impl(fh, $at$(($off))?, true, (buf, count, datatype))?;
                access::begin_split(fh, st.bytes() as usize, true)
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $end(
            fh: File,
            _buf: *const c_void,
            status: *mut MpiStatus,
        ) -> c_int {
            fio::guard(stringify!($end), fh, || set_status(status, access::end_split(fh, true)?))
        }
    )*};
}

macro_rules! split_read {
    ($($begin:ident($($off:ident)?) => $at:expr; $end:ident;)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $begin(
            fh: File,
            $($off: Offset,)?
            buf: *mut c_void,
            count: c_int,
            datatype: Dtype,
        ) -> c_int {
            fio::guard(stringify!($begin), fh, || {
                access::no_split(fh)?;
                let st = read_impl(fh, $at$(($off))?, true, (buf, count, datatype))?;
                access::begin_split(fh, st.bytes() as usize, false)
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $end(
            fh: File,
            _buf: *mut c_void,
            status: *mut MpiStatus,
        ) -> c_int {
            fio::guard(stringify!($end), fh, || set_status(status, access::end_split(fh, false)?))
        }
    )*};
}

split_write! {
    MPI_File_write_at_all_begin(offset) => off; MPI_File_write_at_all_end;
    MPI_File_write_all_begin() => Where::Individual; MPI_File_write_all_end;
    MPI_File_write_ordered_begin() => Where::Ordered; MPI_File_write_ordered_end;
}

split_read! {
    MPI_File_read_at_all_begin(offset) => off; MPI_File_read_at_all_end;
    MPI_File_read_all_begin() => Where::Individual; MPI_File_read_all_end;
    MPI_File_read_ordered_begin() => Where::Ordered; MPI_File_read_ordered_end;
}

// File manipulation (section 13.2).

#[no_mangle]
pub unsafe extern "C" fn MPI_File_open(
    comm: Comm,
    filename: *const c_char,
    amode: c_int,
    info: c_int,
    fh: *mut File,
) -> c_int {
    fio::guard("MPI_File_open", NULL, || {
        // SAFETY: `filename` is a NUL-terminated string (MPI-3.1 13.2.1).
        let path = unsafe { raw::string(filename, "filename") }?;
        let hints = crate::info::pairs(info)?;
        let h = file::open(comm, &path, amode, hints)?;
        set(fh, "fh", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_close(fh: *mut File) -> c_int {
    // SAFETY: `fh` points to a file handle (MPI-3.1 13.2.2).
    let h = unsafe { raw::out(fh, "fh") }.map(|p| *p).unwrap_or(NULL);
    fio::guard("MPI_File_close", h, || {
        // SAFETY: as above.
        let p = unsafe { raw::out(fh, "fh") }?;
        file::close(p)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_delete(filename: *const c_char, _info: c_int) -> c_int {
    fio::guard("MPI_File_delete", NULL, || {
        // SAFETY: `filename` is a NUL-terminated string (MPI-3.1 13.2.3).
        let path = unsafe { raw::string(filename, "filename") }?;
        file::delete(&path)
    })
}

#[no_mangle]
pub extern "C" fn MPI_File_set_size(fh: File, size: Offset) -> c_int {
    fio::guard("MPI_File_set_size", fh, || file::set_size(fh, size))
}

#[no_mangle]
pub extern "C" fn MPI_File_preallocate(fh: File, size: Offset) -> c_int {
    fio::guard("MPI_File_preallocate", fh, || file::preallocate(fh, size))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_size(fh: File, size: *mut Offset) -> c_int {
    fio::guard("MPI_File_get_size", fh, || {
        set(size, "size", file::size(fh)? as Offset)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_group(fh: File, group: *mut c_int) -> c_int {
    fio::guard("MPI_File_get_group", fh, || {
        let c = file::with(fh, |e| Ok(e.comm))?;
        set(group, "group", comm::group(c)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_amode(fh: File, amode: *mut c_int) -> c_int {
    fio::guard("MPI_File_get_amode", fh, || {
        set(amode, "amode", file::with(fh, |e| Ok(e.amode))?)
    })
}

#[no_mangle]
pub extern "C" fn MPI_File_set_info(fh: File, info: c_int) -> c_int {
    fio::guard("MPI_File_set_info", fh, || {
        let hints = crate::info::pairs(info)?;
        file::with(fh, |e| {
            file::merge_info(&mut e.info, hints);
            Ok(())
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_info(fh: File, info_used: *mut c_int) -> c_int {
    fio::guard("MPI_File_get_info", fh, || {
        let hints = file::with(fh, |e| Ok(e.info.clone()))?;
        set(info_used, "info_used", crate::info::from_pairs(hints)?)
    })
}

// Views (section 13.3).

#[no_mangle]
pub unsafe extern "C" fn MPI_File_set_view(
    fh: File,
    disp: Offset,
    etype: Dtype,
    filetype: Dtype,
    datarep: *const c_char,
    info: c_int,
) -> c_int {
    fio::guard("MPI_File_set_view", fh, || {
        // SAFETY: `datarep` is a NUL-terminated string (MPI-3.1 13.3).
        let rep = unsafe { raw::string(datarep, "datarep") }?;
        let hints = crate::info::pairs(info)?;
        file::set_view(fh, disp, (etype, filetype), &rep, hints)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_view(
    fh: File,
    disp: *mut Offset,
    etype: *mut Dtype,
    filetype: *mut Dtype,
    datarep: *mut c_char,
) -> c_int {
    fio::guard("MPI_File_get_view", fh, || {
        let (d, e, f, rep) = file::get_view(fh)?;
        set(disp, "disp", d)?;
        set(etype, "etype", e)?;
        set(filetype, "filetype", f)?;
        let mut len = 0;
        // SAFETY: `datarep` holds MPI_MAX_DATAREP_STRING (128) characters (MPI-3.1
        // 13.3); at most 11 are written.
        unsafe { raw::put_string(datarep, rep.len() + 1, rep, &mut len) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_type_extent(
    fh: File,
    datatype: Dtype,
    extent: *mut isize,
) -> c_int {
    fio::guard("MPI_File_get_type_extent", fh, || {
        file::handle(fh)?;
        set(extent, "extent", dt(datatype)?.extent)
    })
}

// Consistency (section 13.6.1).

#[no_mangle]
pub extern "C" fn MPI_File_set_atomicity(fh: File, flag: c_int) -> c_int {
    fio::guard("MPI_File_set_atomicity", fh, || {
        file::set_atomicity(fh, flag != 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_atomicity(fh: File, flag: *mut c_int) -> c_int {
    fio::guard("MPI_File_get_atomicity", fh, || {
        set(flag, "flag", file::with(fh, |e| Ok(e.atomic as c_int))?)
    })
}

#[no_mangle]
pub extern "C" fn MPI_File_sync(fh: File) -> c_int {
    fio::guard("MPI_File_sync", fh, || file::sync(fh))
}

// File pointers (section 13.4.2, 13.4.4).

#[no_mangle]
pub extern "C" fn MPI_File_seek(fh: File, offset: Offset, whence: c_int) -> c_int {
    fio::guard("MPI_File_seek", fh, || file::seek(fh, offset, whence))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_position(fh: File, offset: *mut Offset) -> c_int {
    fio::guard("MPI_File_get_position", fh, || {
        set(offset, "offset", file::with(fh, |e| Ok(e.pos))? as Offset)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_byte_offset(
    fh: File,
    offset: Offset,
    disp: *mut Offset,
) -> c_int {
    fio::guard("MPI_File_get_byte_offset", fh, || {
        let o = u64::try_from(offset)
            .map_err(|_| MpiError::arg(format!("negative offset {offset}")))?;
        let v = file::with(fh, |e| Ok(e.view.clone()))?;
        set(disp, "disp", v.byte_offset(o)? as Offset)
    })
}

#[no_mangle]
pub extern "C" fn MPI_File_seek_shared(fh: File, offset: Offset, whence: c_int) -> c_int {
    fio::guard("MPI_File_seek_shared", fh, || {
        shared::seek(fh, offset, whence)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_File_get_position_shared(fh: File, offset: *mut Offset) -> c_int {
    fio::guard("MPI_File_get_position_shared", fh, || {
        set(offset, "offset", shared::position(fh)? as Offset)
    })
}
