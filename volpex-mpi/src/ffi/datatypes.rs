//! Datatypes in `mpi.h` (MPI-3.1 chapter 4, and the datatype parts of chapters 6 and
//! 17): constructors, commit, dup and free, sizes and extents (also as MPI_Count),
//! envelopes and contents, names and attributes, MPI_Get_elements, pack and unpack
//! (also in external32), the F90 types. Thin shells over `types`, `typeattr` and
//! `external32`; never reads a message buffer beyond what a pack call names.

use super::*;
use crate::datatype::envelope::Combiner;
use crate::typeattr;

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size(datatype: Dtype, size: *mut c_int) -> c_int {
    guard("MPI_Type_size", COMM_WORLD, || {
        let n = match crate::datatype::predefined::size_of_handle(datatype) {
            Some(n) => n,
            None => types::query(datatype, |t| t.size)?,
        };
        set(size, "size", c_int::try_from(n).unwrap_or(UNDEFINED))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_x(datatype: Dtype, size: *mut i64) -> c_int {
    guard("MPI_Type_size_x", COMM_WORLD, || {
        set(size, "size", types::query(datatype, |t| t.size as i64)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent(
    datatype: Dtype,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    guard("MPI_Type_get_extent", COMM_WORLD, || {
        let (l, e) = types::query(datatype, |t| (t.lb, t.extent))?;
        set(lb, "lb", l)?;
        set(extent, "extent", e)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent(
    datatype: Dtype,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    guard("MPI_Type_get_true_extent", COMM_WORLD, || {
        let (l, u) = types::query(datatype, |t| (t.true_lb, t.true_ub))?;
        set(lb, "true_lb", l)?;
        set(extent, "true_extent", u - l)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_extent(datatype: Dtype, extent: *mut isize) -> c_int {
    guard("MPI_Type_extent", COMM_WORLD, || {
        set(extent, "extent", types::query(datatype, |t| t.extent)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_lb(datatype: Dtype, lb: *mut isize) -> c_int {
    guard("MPI_Type_lb", COMM_WORLD, || {
        set(lb, "lb", types::query(datatype, |t| t.lb)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_ub(datatype: Dtype, ub: *mut isize) -> c_int {
    guard("MPI_Type_ub", COMM_WORLD, || {
        set(ub, "ub", types::query(datatype, |t| t.lb + t.extent)?)
    })
}

fn new_type(
    name: &'static str,
    newtype: *mut c_int,
    make: impl FnOnce() -> Result<Datatype>,
) -> c_int {
    guard(name, COMM_WORLD, || {
        let h = types::add(make()?)?;
        set(newtype, "newtype", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_contiguous(
    count: c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_contiguous", newtype, || {
        types::contiguous(count, oldtype)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_vector", newtype, || {
        types::vector(count, blocklength, stride, oldtype)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hvector(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_hvector", newtype, || {
        types::hvector(count, blocklength, stride, oldtype)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_hvector(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_indexed(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_indexed", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` block lengths and displacements (MPI-3.1 section 4.1.4).
        let (lens, ds) = unsafe {
            (
                raw::array(blocklengths, n, "array_of_blocklengths")?,
                raw::array(displs, n, "array_of_displacements")?,
            )
        };
        types::indexed(lens, ds, oldtype)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_hindexed", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` block lengths and byte displacements (MPI-3.1 section 4.1.5).
        let (lens, ds) = unsafe {
            (
                raw::array(blocklengths, n, "array_of_blocklengths")?,
                raw::array(displs, n, "array_of_displacements")?,
            )
        };
        types::hindexed(lens, ds, oldtype)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_hindexed(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Type_create_hindexed(count, blocklengths, displs, oldtype, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_indexed_block(
    count: c_int,
    blocklength: c_int,
    displs: *const c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_indexed_block", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` displacements (MPI-3.1 section 4.1.4).
        let ds = unsafe { raw::array(displs, n, "array_of_displacements") }?;
        types::indexed_block(blocklength, ds, oldtype)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_block(
    count: c_int,
    blocklength: c_int,
    displs: *const isize,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_hindexed_block", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` byte displacements (MPI-3.1 section 4.1.5).
        let ds = unsafe { raw::array(displs, n, "array_of_displacements") }?;
        types::hindexed_block(blocklength, ds, oldtype)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_subarray(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_subarray", newtype, || {
        let n = cnt(ndims)?;
        // SAFETY: `ndims` entries in each array (MPI-3.1 section 4.1.3).
        let (a, b, c) = unsafe {
            (
                raw::array(sizes, n, "array_of_sizes")?,
                raw::array(subsizes, n, "array_of_subsizes")?,
                raw::array(starts, n, "array_of_starts")?,
            )
        };
        crate::darray::subarray(a, b, c, order, types::any(oldtype)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_darray(
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const c_int,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: Dtype,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_darray", newtype, || {
        let n = cnt(ndims)?;
        // SAFETY: `ndims` entries in each array (MPI-3.1 section 4.1.4).
        let a = unsafe {
            crate::darray::Darray {
                size,
                rank,
                gsizes: raw::array(gsizes, n, "array_of_gsizes")?,
                distribs: raw::array(distribs, n, "array_of_distribs")?,
                dargs: raw::array(dargs, n, "array_of_dargs")?,
                psizes: raw::array(psizes, n, "array_of_psizes")?,
                order,
            }
        };
        crate::darray::darray(&a, types::any(oldtype)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_struct(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    typelist: *const c_int,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_struct", newtype, || {
        let n = cnt(count)?;
        // SAFETY: `count` block lengths, byte displacements and types (MPI-3.1 4.1.2).
        let (lens, ds, ts) = unsafe {
            (
                raw::array(blocklengths, n, "array_of_blocklengths")?,
                raw::array(displs, n, "array_of_displacements")?,
                raw::array(typelist, n, "array_of_types")?,
            )
        };
        types::create_struct(lens, ds, ts)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_struct(
    count: c_int,
    blocklengths: *const c_int,
    displs: *const isize,
    typelist: *const c_int,
    newtype: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Type_create_struct(count, blocklengths, displs, typelist, newtype) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_resized(
    oldtype: Dtype,
    lb: isize,
    extent: isize,
    newtype: *mut c_int,
) -> c_int {
    new_type("MPI_Type_create_resized", newtype, || {
        types::resized(oldtype, lb, extent)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_dup(oldtype: Dtype, newtype: *mut c_int) -> c_int {
    guard("MPI_Type_dup", COMM_WORLD, || {
        set(newtype, "newtype", typeattr::dup(oldtype)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_commit(datatype: *mut c_int) -> c_int {
    guard("MPI_Type_commit", COMM_WORLD, || {
        // SAFETY: `datatype` points to a datatype handle.
        let h = unsafe { raw::out(datatype, "datatype") }?;
        types::commit(*h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut c_int) -> c_int {
    guard("MPI_Type_free", COMM_WORLD, || {
        // SAFETY: `datatype` points to a datatype handle.
        let h = unsafe { raw::out(datatype, "datatype") }?;
        typeattr::free(*h)?;
        *h = NULL;
        Ok(())
    })
}

/// The bytes `len` bytes of a packed buffer at `p` cover, as a datatype argument (the
/// side of MPI_Pack and MPI_Unpack that is not typed).
fn packed_side(p: *const c_void, len: usize) -> Result<(Region, Arc<Datatype>)> {
    Ok((
        raw::bytes_region(p, len)?,
        types::any(types::named("MPI_BYTE")?)?,
    ))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack(
    inbuf: *const c_void,
    incount: c_int,
    datatype: Dtype,
    outbuf: *mut c_void,
    outsize: c_int,
    position: *mut c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Pack", comm, || {
        let (t, n) = (dt(datatype)?, cnt(incount)?);
        let out_len = cnt(outsize)?;
        let (ir, (or, byte)) = (reg(inbuf, &t, n)?, packed_side(outbuf, out_len)?);
        let mut store = datatype::Packed::default();
        let recv = (&or, &*byte, &[(0, out_len)][..]);
        // SAFETY: `incount` elements in (MPI-3.1 section 4.2); the output is made after.
        let i = unsafe { raw::read_apart(&mut store, ir, t.clone(), &[(0, n)], Some(recv)) }?;
        // SAFETY: `outsize` bytes out; no byte of them is read (checked).
        let o = unsafe { raw::write(or, t) };
        // SAFETY: `position` points to an int.
        let pos = unsafe { raw::out(position, "position") }?;
        types::pack(&i, n, o.mem, pos)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack(
    inbuf: *const c_void,
    insize: c_int,
    position: *mut c_int,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Unpack", comm, || {
        let (t, n) = (dt(datatype)?, cnt(outcount)?);
        let in_len = cnt(insize)?;
        let ((ir, byte), or) = (packed_side(inbuf, in_len)?, reg(outbuf, &t, n)?);
        let mut store = datatype::Packed::default();
        let recv = (&or, &*t, &[(0, n)][..]);
        // SAFETY: `insize` bytes in (MPI-3.1 section 4.2); the output is made after.
        let i = unsafe { raw::read_apart(&mut store, ir, byte, &[(0, in_len)], Some(recv)) }?;
        // SAFETY: room for `outcount` elements out; no byte of them is read (checked).
        let mut o = unsafe { raw::write(or, t) };
        // SAFETY: `position` points to an int.
        let pos = unsafe { raw::out(position, "position") }?;
        types::unpack(&i.bytes(0, in_len)?, pos, &mut o, n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_size(
    incount: c_int,
    datatype: Dtype,
    comm: Comm,
    size: *mut c_int,
) -> c_int {
    guard("MPI_Pack_size", comm, || {
        let n = types::any(datatype)?.bytes_of(cnt(incount)?)?;
        set(
            size,
            "size",
            c_int::try_from(n).map_err(|_| MpiError::new(class::COUNT, "too large"))?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_address(location: *const c_void, address: *mut isize) -> c_int {
    guard("MPI_Get_address", COMM_WORLD, || {
        // Memory attached to a dynamic window has a window address (`rma::object`).
        set(
            address,
            "address",
            crate::rma::object::address(location as usize),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Address(location: *const c_void, address: *mut isize) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Get_address(location, address) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent_x(
    datatype: Dtype,
    lb: *mut i64,
    extent: *mut i64,
) -> c_int {
    guard("MPI_Type_get_extent_x", COMM_WORLD, || {
        let (l, e) = types::query(datatype, |t| (t.lb as i64, t.extent as i64))?;
        set(lb, "lb", l)?;
        set(extent, "extent", e)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent_x(
    datatype: Dtype,
    lb: *mut i64,
    extent: *mut i64,
) -> c_int {
    guard("MPI_Type_get_true_extent_x", COMM_WORLD, || {
        let (l, u) = types::query(datatype, |t| (t.true_lb as i64, t.true_ub as i64))?;
        set(lb, "true_lb", l)?;
        set(extent, "true_extent", u - l)
    })
}

/// The basic elements `status` says were received, in elements of `datatype` (MPI-3.1
/// section 4.1.11): None if the data ends inside a basic element.
fn elements(status: *const MpiStatus, datatype: Dtype) -> Result<Option<u64>> {
    // SAFETY: `status` points to a status a completed operation filled.
    let st = unsafe { raw::input(status, "status") }?;
    Ok(crate::datatype::signature::elements(
        &*types::any(datatype)?,
        st.bytes(),
    ))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements(
    status: *const MpiStatus,
    datatype: Dtype,
    count: *mut c_int,
) -> c_int {
    guard("MPI_Get_elements", COMM_WORLD, || {
        let n = elements(status, datatype)?.and_then(|n| c_int::try_from(n).ok());
        set(count, "count", n.unwrap_or(UNDEFINED))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Get_elements_x(
    status: *const MpiStatus,
    datatype: Dtype,
    count: *mut i64,
) -> c_int {
    guard("MPI_Get_elements_x", COMM_WORLD, || {
        let n = elements(status, datatype)?.and_then(|n| i64::try_from(n).ok());
        set(count, "count", n.unwrap_or(i64::from(UNDEFINED)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope(
    datatype: Dtype,
    num_integers: *mut c_int,
    num_addresses: *mut c_int,
    num_datatypes: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_envelope", COMM_WORLD, || {
        let [i, a, d, c] = types::query(datatype, |t| t.contents.envelope())?;
        set(num_integers, "num_integers", i)?;
        set(num_addresses, "num_addresses", a)?;
        set(num_datatypes, "num_datatypes", d)?;
        set(combiner, "combiner", c)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_contents(
    datatype: Dtype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    integers: *mut c_int,
    addresses: *mut isize,
    datatypes: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_contents", COMM_WORLD, || {
        let c = types::any(datatype)?.contents.clone();
        let (mi, ma, md) = (cnt(max_integers)?, cnt(max_addresses)?, cnt(max_datatypes)?);
        c.check_room(mi, ma, md)?;
        // SAFETY: room for `max_*` entries in each array (MPI-3.1 section 4.1.13); only
        // as many as the envelope says are written.
        let (i, a, d) = unsafe {
            (
                raw::array_mut(integers, c.ints.len(), "array_of_integers")?,
                raw::array_mut(addresses, c.addrs.len(), "array_of_addresses")?,
                raw::array_mut(datatypes, c.types.len(), "array_of_datatypes")?,
            )
        };
        i.copy_from_slice(&c.ints);
        a.copy_from_slice(&c.addrs);
        d.copy_from_slice(&types::contents(datatype)?.1);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_name(datatype: Dtype, name: *const c_char) -> c_int {
    guard("MPI_Type_set_name", COMM_WORLD, || {
        // SAFETY: a NUL-terminated string (MPI-3.1 section 6.8).
        let n = unsafe { raw::string(name, "type_name") }?;
        typeattr::set_name(datatype, &n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_name(
    datatype: Dtype,
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_name", COMM_WORLD, || {
        let n = typeattr::get_name(datatype)?;
        // SAFETY: room for MPI_MAX_OBJECT_NAME characters (MPI-3.1 section 6.8).
        unsafe { raw::put_string(name, MAX_OBJECT_NAME, &n, resultlen) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_keyval(
    copy_fn: Option<raw::CopyAttrFn>,
    delete_fn: Option<raw::DeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Type_create_keyval", COMM_WORLD, || {
        use crate::state::{CopyFn, DeleteFn};
        let k = typeattr::create_keyval(
            copy_fn.map(CopyFn::C),
            delete_fn.map(DeleteFn::C),
            extra_state as usize,
        )?;
        set(keyval, "type_keyval", k)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free_keyval(keyval: *mut c_int) -> c_int {
    guard("MPI_Type_free_keyval", COMM_WORLD, || {
        // SAFETY: `keyval` points to a keyval handle.
        typeattr::free_keyval(unsafe { raw::out(keyval, "type_keyval") }?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_attr(
    datatype: Dtype,
    keyval: c_int,
    value: *mut c_void,
) -> c_int {
    guard("MPI_Type_set_attr", COMM_WORLD, || {
        typeattr::set_attr(datatype, keyval, value as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_attr(
    datatype: Dtype,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Type_get_attr", COMM_WORLD, || {
        match typeattr::get_attr(datatype, keyval)? {
            Some(v) => {
                // `attribute_val` points to a `void *` (MPI-3.1 section 6.7.4).
                set(value as *mut usize, "attribute_val", v)?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_delete_attr(datatype: Dtype, keyval: c_int) -> c_int {
    guard("MPI_Type_delete_attr", COMM_WORLD, || {
        typeattr::delete_attr(datatype, keyval)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_match_size(
    typeclass: c_int,
    size: c_int,
    datatype: *mut c_int,
) -> c_int {
    guard("MPI_Type_match_size", COMM_WORLD, || {
        set(datatype, "datatype", types::match_size(typeclass, size)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_f90_real(
    p: c_int,
    r: c_int,
    newtype: *mut c_int,
) -> c_int {
    guard("MPI_Type_create_f90_real", COMM_WORLD, || {
        set(newtype, "newtype", types::f90(Combiner::F90Real, p, r)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_f90_complex(
    p: c_int,
    r: c_int,
    newtype: *mut c_int,
) -> c_int {
    guard("MPI_Type_create_f90_complex", COMM_WORLD, || {
        set(newtype, "newtype", types::f90(Combiner::F90Complex, p, r)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_f90_integer(r: c_int, newtype: *mut c_int) -> c_int {
    guard("MPI_Type_create_f90_integer", COMM_WORLD, || {
        set(newtype, "newtype", types::f90(Combiner::F90Integer, 0, r)?)
    })
}

/// The `datarep` argument of the external32 calls.
fn datarep(p: *const c_char) -> Result<()> {
    // SAFETY: a NUL-terminated string (MPI-3.1 section 4.3).
    let d = unsafe { raw::string(p, "datarep") }?;
    crate::external32::check_datarep(&d)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external_size(
    rep: *const c_char,
    incount: c_int,
    datatype: Dtype,
    size: *mut isize,
) -> c_int {
    guard("MPI_Pack_external_size", COMM_WORLD, || {
        datarep(rep)?;
        let n = crate::external32::size(&*types::any(datatype)?, cnt(incount)?)?;
        let n = isize::try_from(n).map_err(|_| MpiError::new(class::COUNT, "too large"))?;
        set(size, "size", n)
    })
}

/// A byte count from an `MPI_Aint`.
fn aint_len(n: isize, what: &str) -> Result<usize> {
    usize::try_from(n).map_err(|_| MpiError::arg(format!("negative {what} {n}")))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Pack_external(
    rep: *const c_char,
    inbuf: *const c_void,
    incount: c_int,
    datatype: Dtype,
    outbuf: *mut c_void,
    outsize: isize,
    position: *mut isize,
) -> c_int {
    guard("MPI_Pack_external", COMM_WORLD, || {
        datarep(rep)?;
        let (t, n) = (dt(datatype)?, cnt(incount)?);
        let out_len = aint_len(outsize, "outsize")?;
        let (ir, (or, byte)) = (reg(inbuf, &t, n)?, packed_side(outbuf, out_len)?);
        let mut store = datatype::Packed::default();
        let recv = (&or, &*byte, &[(0, out_len)][..]);
        // SAFETY: as MPI_Pack (MPI-3.1 section 4.3).
        let i = unsafe { raw::read_apart(&mut store, ir, t.clone(), &[(0, n)], Some(recv)) }?;
        // SAFETY: as MPI_Pack.
        let o = unsafe { raw::write(or, t) };
        // SAFETY: `position` points to an MPI_Aint.
        let pos = unsafe { raw::out(position, "position") }?;
        types::pack_external(&i, n, o.mem, pos)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Unpack_external(
    rep: *const c_char,
    inbuf: *const c_void,
    insize: isize,
    position: *mut isize,
    outbuf: *mut c_void,
    outcount: c_int,
    datatype: Dtype,
) -> c_int {
    guard("MPI_Unpack_external", COMM_WORLD, || {
        datarep(rep)?;
        let (t, n) = (dt(datatype)?, cnt(outcount)?);
        let in_len = aint_len(insize, "insize")?;
        let ((ir, byte), or) = (packed_side(inbuf, in_len)?, reg(outbuf, &t, n)?);
        let mut store = datatype::Packed::default();
        let recv = (&or, &*t, &[(0, n)][..]);
        // SAFETY: as MPI_Unpack (MPI-3.1 section 4.3).
        let i = unsafe { raw::read_apart(&mut store, ir, byte, &[(0, in_len)], Some(recv)) }?;
        // SAFETY: as MPI_Unpack.
        let mut o = unsafe { raw::write(or, t) };
        // SAFETY: `position` points to an MPI_Aint.
        let pos = unsafe { raw::out(position, "position") }?;
        types::unpack_external(&i.bytes(0, in_len)?, pos, &mut o, n)
    })
}
