//! Derived datatypes in `mpi.h` (MPI-3.1 chapter 4): constructors, commit and free, sizes
//! and extents, pack and unpack. Thin shells over `datatype`; never reads a message
//! buffer beyond what a pack call names.

use super::*;

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size(datatype: Dtype, size: *mut c_int) -> c_int {
    guard("MPI_Type_size", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(size, "size", c_int::try_from(t.size).unwrap_or(UNDEFINED))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_size_x(datatype: Dtype, size: *mut i64) -> c_int {
    guard("MPI_Type_size_x", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(size, "size", t.size as i64)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent(
    datatype: Dtype,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    guard("MPI_Type_get_extent", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(lb, "lb", t.lb)?;
        set(extent, "extent", t.extent)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent(
    datatype: Dtype,
    lb: *mut isize,
    extent: *mut isize,
) -> c_int {
    guard("MPI_Type_get_true_extent", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(lb, "true_lb", t.true_lb)?;
        set(extent, "true_extent", t.true_ub - t.true_lb)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_extent(datatype: Dtype, extent: *mut isize) -> c_int {
    guard("MPI_Type_extent", COMM_WORLD, || {
        set(extent, "extent", types::any(datatype)?.extent)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_lb(datatype: Dtype, lb: *mut isize) -> c_int {
    guard("MPI_Type_lb", COMM_WORLD, || {
        set(lb, "lb", types::any(datatype)?.lb)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_ub(datatype: Dtype, ub: *mut isize) -> c_int {
    guard("MPI_Type_ub", COMM_WORLD, || {
        let t = types::any(datatype)?;
        set(ub, "ub", t.lb + t.extent)
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
        Datatype::derived(
            "MPI_Type_contiguous",
            &[(0, cnt(count)?, types::any(oldtype)?)],
        )
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
        let old = types::any(oldtype)?;
        let stride = isize::try_from(stride).unwrap_or(0) * old.extent;
        types::hvector(
            "MPI_Type_vector",
            cnt(count)?,
            cnt(blocklength)?,
            stride,
            old,
        )
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
        types::hvector(
            "MPI_Type_create_hvector",
            cnt(count)?,
            cnt(blocklength)?,
            stride,
            types::any(oldtype)?,
        )
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
        let old = types::any(oldtype)?;
        let bytes: Vec<isize> = ds.iter().map(|&d| d as isize * old.extent).collect();
        types::hindexed("MPI_Type_indexed", lens, &bytes, old)
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
        types::hindexed("MPI_Type_create_hindexed", lens, ds, types::any(oldtype)?)
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
        let old = types::any(oldtype)?;
        let bytes: Vec<isize> = ds.iter().map(|&d| d as isize * old.extent).collect();
        types::hindexed(
            "MPI_Type_create_indexed_block",
            &vec![blocklength; n],
            &bytes,
            old,
        )
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
        types::hindexed(
            "MPI_Type_create_hindexed_block",
            &vec![blocklength; n],
            ds,
            types::any(oldtype)?,
        )
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
        let fortran = match order {
            56 => false,
            57 => true,
            o => return Err(MpiError::arg(format!("invalid order {o}"))),
        };
        types::subarray(a, b, c, fortran, types::any(oldtype)?)
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
        Ok(types::any(oldtype)?.resized(lb, extent))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Type_dup(oldtype: Dtype, newtype: *mut c_int) -> c_int {
    new_type("MPI_Type_dup", newtype, || {
        let mut t = (*types::any(oldtype)?).clone();
        t.predefined = false;
        Ok(t)
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
        types::free(*h)?;
        *h = NULL;
        Ok(())
    })
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
        let (ir, or) = (
            reg(inbuf, &t, n)?,
            raw::bytes_region(outbuf, cnt(outsize)?)?,
        );
        raw::disjoint(&ir, &or)?;
        // SAFETY: `incount` elements in; `outsize` bytes out (MPI-3.1 section 4.2);
        // disjoint (checked).
        let (i, o) = unsafe { (raw::read(ir, t.clone()), raw::write(or, t)) };
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
        let (ir, or) = (raw::bytes_region(inbuf, cnt(insize)?)?, reg(outbuf, &t, n)?);
        raw::disjoint(&ir, &or)?;
        // SAFETY: `insize` bytes in; room for `outcount` elements out (MPI-3.1 4.2);
        // disjoint (checked).
        let (i, mut o) = unsafe { (raw::read(ir, t.clone()), raw::write(or, t)) };
        // SAFETY: `position` points to an int.
        let pos = unsafe { raw::out(position, "position") }?;
        types::unpack(i.mem, pos, &mut o, n)
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
        set(address, "address", location as isize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Address(location: *const c_void, address: *mut isize) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Get_address(location, address) }
}
