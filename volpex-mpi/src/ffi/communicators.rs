//! Communicators and groups in `mpi.h` (MPI-3.1 chapter 6): dup (blocking, immediate,
//! with info), split (by color, by type), create (collective over the communicator or
//! over the group), inter-communicators (create, merge, remote group), free, compare,
//! info hints, names, attributes and group set operations. Thin shells over `comm`;
//! never sends a message itself.

use super::*;

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_size(comm: Comm, size: *mut c_int) -> c_int {
    guard("MPI_Comm_size", comm, || {
        set(size, "size", comm::size(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_rank(comm: Comm, rank: *mut c_int) -> c_int {
    guard("MPI_Comm_rank", comm, || {
        set(rank, "rank", comm::rank(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup(comm: Comm, newcomm: *mut c_int) -> c_int {
    guard("MPI_Comm_dup", comm, || {
        set(newcomm, "newcomm", comm::dup(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split(
    comm: Comm,
    color: c_int,
    key: c_int,
    newcomm: *mut c_int,
) -> c_int {
    guard("MPI_Comm_split", comm, || {
        set(newcomm, "newcomm", comm::split(comm, color, key)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create(comm: Comm, group: c_int, newcomm: *mut c_int) -> c_int {
    guard("MPI_Comm_create", comm, || {
        set(newcomm, "newcomm", comm::create(comm, group)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free(comm: *mut c_int) -> c_int {
    guard("MPI_Comm_free", COMM_WORLD, || {
        // SAFETY: `comm` points to a communicator handle.
        let h = unsafe { raw::out(comm, "comm") }?;
        comm::free(h)
    })
}

/// MPI_Comm_disconnect (MPI-3.1 section 10.5.4): waits for the communicator's pending
/// communication, then frees it. Sends complete once logged here, and a receive still
/// pending on a freed communicator completes later as with MPI_Comm_free, so this is
/// MPI_Comm_free.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_disconnect(comm: *mut c_int) -> c_int {
    guard("MPI_Comm_disconnect", COMM_WORLD, || {
        // SAFETY: `comm` points to a communicator handle.
        let h = unsafe { raw::out(comm, "comm") }?;
        comm::free(h)
    })
}

/// MPI_Comm_get_parent (MPI-3.1 section 10.3.2): no process of a Volpex job was started
/// by MPI_Comm_spawn, so there is no parent: MPI_COMM_NULL.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_parent(parent: *mut c_int) -> c_int {
    guard("MPI_Comm_get_parent", COMM_WORLD, || {
        set(parent, "parent", crate::handles::NULL)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_compare(a: Comm, b: Comm, result: *mut c_int) -> c_int {
    guard("MPI_Comm_compare", COMM_WORLD, || {
        set(result, "result", comm::compare(a, b)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_test_inter(comm: Comm, flag: *mut c_int) -> c_int {
    guard("MPI_Comm_test_inter", comm, || {
        set(flag, "flag", c_int::from(comm::is_inter(comm)?))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_size(comm: Comm, size: *mut c_int) -> c_int {
    guard("MPI_Comm_remote_size", comm, || {
        set(size, "size", comm::remote_size(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_group(comm: Comm, group: *mut c_int) -> c_int {
    guard("MPI_Comm_remote_group", comm, || {
        set(group, "group", comm::remote_group(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_group(
    comm: Comm,
    group: c_int,
    tag: c_int,
    newcomm: *mut c_int,
) -> c_int {
    guard("MPI_Comm_create_group", comm, || {
        set(newcomm, "newcomm", comm::create_group(comm, group, tag)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_idup(
    comm: Comm,
    newcomm: *mut c_int,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Comm_idup", comm, || {
        let (c, r) = comm::idup(comm)?;
        set(newcomm, "newcomm", c)?;
        set(request, "request", r)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_dup_with_info(
    comm: Comm,
    info: c_int,
    newcomm: *mut c_int,
) -> c_int {
    guard("MPI_Comm_dup_with_info", comm, || {
        set(newcomm, "newcomm", comm::dup_with_info(comm, info)?)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Comm_set_info(comm: Comm, info: c_int) -> c_int {
    guard("MPI_Comm_set_info", comm, || comm::set_info(comm, info))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_info(comm: Comm, info: *mut c_int) -> c_int {
    guard("MPI_Comm_get_info", comm, || {
        set(info, "info_used", comm::get_info(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_split_type(
    comm: Comm,
    split_type: c_int,
    key: c_int,
    info: c_int,
    newcomm: *mut c_int,
) -> c_int {
    guard("MPI_Comm_split_type", comm, || {
        set(
            newcomm,
            "newcomm",
            comm::split_type(comm, split_type, key, info)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_create(
    local_comm: Comm,
    local_leader: c_int,
    peer_comm: Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut c_int,
) -> c_int {
    guard("MPI_Intercomm_create", local_comm, || {
        let ic = comm::intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag)?;
        set(newintercomm, "newintercomm", ic)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_merge(
    intercomm: Comm,
    high: c_int,
    newintracomm: *mut c_int,
) -> c_int {
    guard("MPI_Intercomm_merge", intercomm, || {
        set(
            newintracomm,
            "newintracomm",
            comm::intercomm_merge(intercomm, high != 0)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_group(comm: Comm, group: *mut c_int) -> c_int {
    guard("MPI_Comm_group", comm, || {
        set(group, "group", comm::group(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_name(comm: Comm, name: *const c_char) -> c_int {
    guard("MPI_Comm_set_name", comm, || {
        // SAFETY: a NUL-terminated string (MPI-3.1 section 6.8).
        let n = unsafe { raw::string(name, "comm_name") }?;
        comm::set_name(comm, n)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_name(
    comm: Comm,
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    guard("MPI_Comm_get_name", comm, || {
        let n = comm::get_name(comm)?;
        // SAFETY: MPI_MAX_OBJECT_NAME bytes at `name` (MPI-3.1 section 6.8).
        unsafe { raw::put_string(name, MAX_OBJECT_NAME, &n, resultlen) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_get_attr(
    comm: Comm,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Comm_get_attr", comm, || {
        if keyval & !0x00ff_ffff == crate::handles::TAG_KEYVAL {
            return match comm::user_attr(comm, keyval)? {
                Some(v) => {
                    // SAFETY: `value` points to a `void *` that receives the attribute.
                    *unsafe { raw::out(value as *mut usize, "attribute_val") }? = v;
                    set(flag, "flag", 1)
                }
                None => set(flag, "flag", 0),
            };
        }
        match comm::get_attr(comm, keyval)? {
            Some(v) => {
                // SAFETY: `value` points to a `void *` that receives the attribute's address.
                unsafe { raw::put_attr(value, v) }?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_set_attr(comm: Comm, keyval: c_int, value: *mut c_void) -> c_int {
    guard("MPI_Comm_set_attr", comm, || {
        comm::set_attr(comm, keyval, value as usize)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Attr_put(comm: Comm, keyval: c_int, value: *mut c_void) -> c_int {
    guard("MPI_Attr_put", comm, || {
        comm::set_attr(comm, keyval, value as usize)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Comm_delete_attr(comm: Comm, keyval: c_int) -> c_int {
    guard("MPI_Comm_delete_attr", comm, || {
        comm::delete_attr(comm, keyval)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Attr_delete(comm: Comm, keyval: c_int) -> c_int {
    guard("MPI_Attr_delete", comm, || comm::delete_attr(comm, keyval))
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_create_keyval(
    copy: Option<raw::CopyAttrFn>,
    delete: Option<raw::DeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    guard("MPI_Comm_create_keyval", COMM_WORLD, || {
        let k = comm::create_keyval(crate::state::Keyval {
            copy: copy.map(raw::AttrCopy::C),
            delete: delete.map(raw::AttrDelete::C),
            extra: extra_state as usize,
        })?;
        set(keyval, "comm_keyval", k)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_create(
    copy: Option<raw::CopyAttrFn>,
    delete: Option<raw::DeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Comm_create_keyval(copy, delete, keyval, extra_state) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_free_keyval(keyval: *mut c_int) -> c_int {
    guard("MPI_Comm_free_keyval", COMM_WORLD, || {
        // SAFETY: `keyval` points to an attribute key.
        let k = unsafe { raw::out(keyval, "comm_keyval") }?;
        comm::free_keyval(k)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Keyval_free(keyval: *mut c_int) -> c_int {
    // SAFETY: the same argument, under the same contract.
    unsafe { MPI_Comm_free_keyval(keyval) }
}

/// MPI_COMM_DUP_FN: the copy function that copies the attribute's value. Also
/// MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN, whose first argument is another kind of handle
/// (an int as well) and which do the same.
#[no_mangle]
pub unsafe extern "C" fn MPI_COMM_DUP_FN(
    _old: c_int,
    _key: c_int,
    _extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: called by this library's MPI_Comm_dup with a `void *` to fill and a flag.
    let out = unsafe { raw::out(value_out as *mut *mut c_void, "attribute_val_out") };
    match out {
        Ok(o) => {
            *o = value_in;
            match set(flag, "flag", 1) {
                Ok(()) => crate::handles::class::SUCCESS,
                Err(e) => e.class,
            }
        }
        Err(e) => e.class,
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Attr_get(
    comm: Comm,
    keyval: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: the same arguments, under the same contract.
    unsafe { MPI_Comm_get_attr(comm, keyval, value, flag) }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_size(group: c_int, size: *mut c_int) -> c_int {
    guard("MPI_Group_size", COMM_WORLD, || {
        set(size, "size", comm::group_size(group)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_rank(group: c_int, rank: *mut c_int) -> c_int {
    guard("MPI_Group_rank", COMM_WORLD, || {
        set(rank, "rank", comm::group_rank(group)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_incl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    guard("MPI_Group_incl", COMM_WORLD, || {
        // SAFETY: `n` ranks (MPI-3.1 section 6.3.2).
        let rs = unsafe { raw::array(ranks, cnt(n)?, "ranks") }?;
        set(newgroup, "newgroup", comm::group_incl(group, rs)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_excl(
    group: c_int,
    n: c_int,
    ranks: *const c_int,
    newgroup: *mut c_int,
) -> c_int {
    guard("MPI_Group_excl", COMM_WORLD, || {
        // SAFETY: `n` ranks (MPI-3.1 section 6.3.2).
        let rs = unsafe { raw::array(ranks, cnt(n)?, "ranks") }?;
        set(newgroup, "newgroup", comm::group_excl(group, rs)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_translate_ranks(
    a: c_int,
    n: c_int,
    ranks1: *const c_int,
    b: c_int,
    ranks2: *mut c_int,
) -> c_int {
    guard("MPI_Group_translate_ranks", COMM_WORLD, || {
        let n = cnt(n)?;
        // SAFETY: `n` ranks in, `n` out (MPI-3.1 section 6.3.1).
        let rs = unsafe { raw::array(ranks1, n, "ranks1") }?;
        let out = comm::translate_ranks(a, rs, b)?;
        // SAFETY: as above.
        let dst = unsafe { raw::array_mut(ranks2, n, "ranks2") }?;
        dst.copy_from_slice(&out);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_compare(a: c_int, b: c_int, result: *mut c_int) -> c_int {
    guard("MPI_Group_compare", COMM_WORLD, || {
        set(result, "result", comm::group_compare(a, b)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_union(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int {
    guard("MPI_Group_union", COMM_WORLD, || {
        set(newgroup, "newgroup", comm::group_set(a, b, SetOp::Union)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_intersection(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int {
    guard("MPI_Group_intersection", COMM_WORLD, || {
        set(
            newgroup,
            "newgroup",
            comm::group_set(a, b, SetOp::Intersection)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_difference(a: c_int, b: c_int, newgroup: *mut c_int) -> c_int {
    guard("MPI_Group_difference", COMM_WORLD, || {
        set(
            newgroup,
            "newgroup",
            comm::group_set(a, b, SetOp::Difference)?,
        )
    })
}

fn range_impl(
    name: &'static str,
    incl: bool,
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    guard(name, COMM_WORLD, || {
        // SAFETY: `n` (first, last, stride) triplets (MPI-3.1 section 6.3.2).
        let rs = unsafe { raw::array(ranges, cnt(n)?, "ranges") }?;
        let ranks = comm::expand_ranges(group, rs)?;
        let g = if incl {
            comm::group_incl(group, &ranks)?
        } else {
            comm::group_excl(group, &ranks)?
        };
        set(newgroup, "newgroup", g)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_incl(
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    range_impl("MPI_Group_range_incl", true, group, n, ranges, newgroup)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_range_excl(
    group: c_int,
    n: c_int,
    ranges: *const [c_int; 3],
    newgroup: *mut c_int,
) -> c_int {
    range_impl("MPI_Group_range_excl", false, group, n, ranges, newgroup)
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Group_free(group: *mut c_int) -> c_int {
    guard("MPI_Group_free", COMM_WORLD, || {
        // SAFETY: `group` points to a group handle.
        let h = unsafe { raw::out(group, "group") }?;
        comm::group_free(h)
    })
}

/// MPI_TYPE_DUP_FN: see MPI_COMM_DUP_FN.
#[no_mangle]
pub unsafe extern "C" fn MPI_TYPE_DUP_FN(
    old: c_int,
    key: c_int,
    extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    unsafe { MPI_COMM_DUP_FN(old, key, extra, value_in, value_out, flag) }
}

/// MPI_WIN_DUP_FN: see MPI_COMM_DUP_FN.
#[no_mangle]
pub unsafe extern "C" fn MPI_WIN_DUP_FN(
    old: c_int,
    key: c_int,
    extra: *mut c_void,
    value_in: *mut c_void,
    value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    unsafe { MPI_COMM_DUP_FN(old, key, extra, value_in, value_out, flag) }
}
