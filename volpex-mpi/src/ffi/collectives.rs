//! Collective operations in `mpi.h` (MPI-3.1 chapter 5), blocking and immediate, with
//! local reductions and user operations. Thin shells over `coll`; never keeps a pointer
//! past the call except an immediate call's buffers, which `request` holds.

use super::*;

#[no_mangle]
pub extern "C" fn MPI_Barrier(comm: Comm) -> c_int {
    guard("MPI_Barrier", comm, || match state::inter(comm)? {
        Some(ic) => intercomm::barrier(comm, &ic, None),
        None => coll::barrier(comm),
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: Comm, request: *mut c_int) -> c_int {
    guard("MPI_Ibarrier", comm, || match state::inter(comm)? {
        Some(ic) => intercomm::barrier(comm, &ic, Some(request)),
        None => set(request, "request", coll::ibarrier(comm)?),
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: Dtype,
    root: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Ibcast", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Ibcast's own arguments.
            return unsafe {
                intercomm::bcast(buffer, count, datatype, root, comm, &ic, Some(request))
            };
        }
        let (t, n) = (dt(datatype)?, cnt(count)?);
        if !t.contiguous {
            return Err(MpiError::new(
                class::TYPE,
                format!(
                    "{}: immediate broadcasts of non-contiguous datatypes are not implemented yet",
                    t.name
                ),
            ));
        }
        let r = reg(buffer, &t, n)?;
        // SAFETY: the buffer stays valid and untouched until the request completes
        // (MPI-3.1 section 5.12).
        let mem = unsafe { raw::write_until_complete(r) };
        set(request, "request", coll::ibcast(comm, mem, root)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
    request: *mut c_int,
) -> c_int {
    guard("MPI_Iallreduce", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Iallreduce's own arguments.
            return unsafe {
                intercomm::allreduce(
                    sendbuf,
                    recvbuf,
                    count,
                    datatype,
                    op,
                    comm,
                    &ic,
                    Some(request),
                )
            };
        }
        let (t, n) = (dt(datatype)?, cnt(count)?);
        if !t.contiguous {
            return Err(MpiError::new(
                class::TYPE,
                format!(
                    "{}: immediate reductions of non-contiguous datatypes are not implemented yet",
                    t.name
                ),
            ));
        }
        let sr = red_send(sendbuf, &t, n)?;
        let rr = reg(recvbuf, &t, n)?;
        let (mut store, one) = (datatype::Packed::default(), [(0, n)]);
        let s = sr
            .map(|s| {
                // SAFETY: `count` elements to send, read during this call (the data is copied
                // before it returns), before the receive buffer is made (`read_apart`).
                unsafe { raw::read_apart(&mut store, s, t.clone(), &one, Some((&rr, &t, &one))) }
            })
            .transpose()?;
        // SAFETY: the receive buffer stays valid and untouched until the request
        // completes (MPI-3.1 section 5.12).
        let mem = unsafe { raw::write_until_complete(rr) };
        set(
            request,
            "request",
            coll::iallreduce(comm, s.as_ref(), mem, &t, n, op)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Bcast", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Bcast's own arguments.
            return unsafe { intercomm::bcast(buffer, count, datatype, root, comm, &ic, None) };
        }
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = reg(buffer, &t, n)?;
        // SAFETY: `count` elements of `datatype`, read at the root, written elsewhere.
        let mut b = unsafe { raw::write(r, t) };
        coll::bcast(comm, &mut b, n, root)
    })
}

/// The send side of a reduction: None for MPI_IN_PLACE.
fn red_send(sendbuf: *const c_void, t: &Arc<Datatype>, n: usize) -> Result<Option<Region>> {
    if raw::in_place(sendbuf) {
        Ok(None)
    } else {
        reg(sendbuf, t, n).map(Some)
    }
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Reduce", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Reduce's own arguments.
            return unsafe {
                intercomm::reduce(sendbuf, recvbuf, count, datatype, op, root, comm, &ic, None)
            };
        }
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let at_root = comm::rank(comm)? == root;
        let sr = red_send(sendbuf, &t, n)?;
        let rr = if at_root {
            Some(reg(recvbuf, &t, n)?)
        } else {
            None
        };
        let (mut store, one) = (datatype::Packed::default(), [(0, n)]);
        let recv = rr.as_ref().map(|r| (r, &*t, &one[..]));
        let s = sr
            .map(|s| {
                // SAFETY: the send buffer holds `count` elements; the root's receive buffer has
                // room for them (recvbuf is significant only at the root), made after
                // (`read_apart`).
                unsafe { raw::read_apart(&mut store, s, t.clone(), &one, recv) }
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = rr.map(|r| unsafe { raw::write(r, t.clone()) });
        coll::reduce(comm, s.as_ref(), r.as_mut(), n, op, root)
    })
}

type Whole =
    fn(c_int, Option<&datatype::Buf<'_>>, &mut datatype::BufMut<'_>, usize, c_int) -> Result<()>;

fn whole_impl(
    name: &'static str,
    f: Whole,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    guard(name, comm, || {
        if let Some(ic) = state::inter(comm)? {
            if name != "MPI_Allreduce" {
                return intercomm::scan(name);
            }
            // SAFETY: MPI_Allreduce's own arguments.
            return unsafe {
                intercomm::allreduce(sendbuf, recvbuf, count, datatype, op, comm, &ic, None)
            };
        }
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let sr = red_send(sendbuf, &t, n)?;
        let rr = reg(recvbuf, &t, n)?;
        let (mut store, one) = (datatype::Packed::default(), [(0, n)]);
        let s = sr
            .map(|s| {
                // SAFETY: `count` elements in each buffer (MPI-3.1 5.9); the receive buffer is
                // made after (`read_apart`).
                unsafe { raw::read_apart(&mut store, s, t.clone(), &one, Some((&rr, &t, &one))) }
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, t) };
        f(comm, s.as_ref(), &mut r, n, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    whole_impl(
        "MPI_Allreduce",
        coll::allreduce,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    whole_impl(
        "MPI_Scan",
        coll::scan,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    whole_impl(
        "MPI_Exscan",
        coll::exscan,
        sendbuf,
        recvbuf,
        count,
        datatype,
        op,
        comm,
    )
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Reduce_scatter_block", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Reduce_scatter_block's own arguments.
            return unsafe {
                intercomm::reduce_scatter_block(
                    sendbuf, recvbuf, recvcount, datatype, op, comm, &ic, None,
                )
            };
        }
        let (t, n) = (dt(datatype)?, cnt(recvcount)?);
        let size = size_of_comm(comm)?;
        let total = n
            .checked_mul(size)
            .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
        let sr = red_send(sendbuf, &t, total)?;
        let rr = reg(recvbuf, &t, if sr.is_none() { total } else { n })?;
        let mut store = datatype::Packed::default();
        let recv = (&rr, &*t, &[(0, n)][..]);
        let s = sr
            .map(|s| {
                // SAFETY: size x recvcount elements to send, recvcount (or, in place, all) to
                // receive (MPI-3.1 5.10.1); the receive buffer is made after (`read_apart`).
                unsafe { raw::read_apart(&mut store, s, t.clone(), &[(0, total)], Some(recv)) }
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, t) };
        coll::reduce_scatter_block(comm, s.as_ref(), &mut r, n, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Reduce_scatter", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Reduce_scatter's own arguments.
            return unsafe {
                intercomm::reduce_scatter(
                    sendbuf, recvbuf, recvcounts, datatype, op, comm, &ic, None,
                )
            };
        }
        let t = dt(datatype)?;
        let size = size_of_comm(comm)?;
        // SAFETY: one count per rank (MPI-3.1 section 5.10.1).
        let counts: Vec<usize> = unsafe { raw::array(recvcounts, size, "recvcounts") }?
            .iter()
            .map(|&c| cnt(c))
            .collect::<Result<_>>()?;
        let total: usize = counts.iter().sum();
        let mine = counts.get(comm::rank(comm)? as usize).copied().unwrap_or(0);
        let sr = red_send(sendbuf, &t, total)?;
        let rr = reg(recvbuf, &t, if sr.is_none() { total } else { mine })?;
        let mut store = datatype::Packed::default();
        let recv = (&rr, &*t, &[(0, mine)][..]);
        let s = sr
            .map(|s| {
                // SAFETY: the sum of the counts to send, this rank's count (or, in place, all)
                // to receive; the receive buffer is made after (`read_apart`).
                unsafe { raw::read_apart(&mut store, s, t.clone(), &[(0, total)], Some(recv)) }
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, t) };
        coll::reduce_scatter(comm, s.as_ref(), &mut r, &counts, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Gather", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Gather's own arguments.
            return unsafe {
                intercomm::gather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &ic,
                    None,
                )
            };
        }
        let at_root = comm::rank(comm)? == root;
        let send = if at_root && raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let recv = if at_root {
            let (t, n) = (dt(recvtype)?, cnt(recvcount)?);
            let all = n
                .checked_mul(size_of_comm(comm)?)
                .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
            Some((reg(recvbuf, &t, all)?, t, n, [(0, all)]))
        } else {
            None
        };
        let mut store = datatype::Packed::default();
        let beside = recv.as_ref().map(|(r, t, _, b)| (r, &**t, &b[..]));
        let s = send
            .map(|(r, t, n)| {
                // SAFETY: the send buffer holds sendcount elements; at the root the receive
                // buffer has room for size x recvcount (MPI-3.1 5.5), made after (`read_apart`).
                let b = unsafe { raw::read_apart(&mut store, r, t, &[(0, n)], beside) }?;
                Ok::<_, MpiError>((b, n))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, n, _)| (unsafe { raw::write(r, t) }, n));
        coll::gather(
            comm,
            s.as_ref().map(|(b, n)| (b, *n)),
            r.as_mut().map(|(b, n)| (b, *n)),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Gatherv", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Gatherv's own arguments.
            return unsafe {
                intercomm::gatherv(
                    sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                    comm, &ic, None,
                )
            };
        }
        let at_root = comm::rank(comm)? == root;
        let send = if at_root && raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let recv = if at_root {
            let t = dt(recvtype)?;
            let size = size_of_comm(comm)?;
            // SAFETY: one count and displacement per rank at the root (MPI-3.1 5.5).
            let bl = unsafe {
                blocks(
                    raw::array(recvcounts, size, "recvcounts")?,
                    raw::array(displs, size, "displs")?,
                )
            }?;
            Some((raw::region(recvbuf, &t, &bl)?, t, bl))
        } else {
            None
        };
        let mut store = datatype::Packed::default();
        let beside = recv.as_ref().map(|(r, t, b)| (r, &**t, &b[..]));
        let s = send
            .map(|(r, t, n)| {
                // SAFETY: as MPI_Gather, with the root's blocks at their displacements.
                let b = unsafe { raw::read_apart(&mut store, r, t, &[(0, n)], beside) }?;
                Ok::<_, MpiError>((b, n))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, b)| (unsafe { raw::write(r, t) }, b));
        coll::gatherv(
            comm,
            s.as_ref().map(|(b, n)| (b, *n)),
            r.as_mut().map(|(b, bl)| (b, std::mem::take(bl))),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Scatter", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Scatter's own arguments.
            return unsafe {
                intercomm::scatter(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &ic,
                    None,
                )
            };
        }
        let at_root = comm::rank(comm)? == root;
        let send = if at_root {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            let all = n
                .checked_mul(size_of_comm(comm)?)
                .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
            Some((reg(sendbuf, &t, all)?, t, n, all))
        } else {
            None
        };
        let recv = if at_root && raw::in_place(recvbuf) {
            None
        } else {
            let (t, n) = (dt(recvtype)?, cnt(recvcount)?);
            Some((reg(recvbuf, &t, n)?, t, n, [(0, n)]))
        };
        let mut store = datatype::Packed::default();
        let beside = recv.as_ref().map(|(r, t, _, b)| (r, &**t, &b[..]));
        let s = send
            .map(|(r, t, n, all)| {
                // SAFETY: at the root size x sendcount elements to send; recvcount elements of
                // room (MPI-3.1 5.6), made after (`read_apart`).
                let b = unsafe { raw::read_apart(&mut store, r, t, &[(0, all)], beside) }?;
                Ok::<_, MpiError>((b, n))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, n, _)| (unsafe { raw::write(r, t) }, n));
        coll::scatter(
            comm,
            s.as_ref().map(|(b, n)| (b, *n)),
            r.as_mut().map(|(b, n)| (b, *n)),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    root: c_int,
    comm: Comm,
) -> c_int {
    guard("MPI_Scatterv", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Scatterv's own arguments.
            return unsafe {
                intercomm::scatterv(
                    sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                    comm, &ic, None,
                )
            };
        }
        let at_root = comm::rank(comm)? == root;
        let send = if at_root {
            let t = dt(sendtype)?;
            let size = size_of_comm(comm)?;
            // SAFETY: one count and displacement per rank at the root (MPI-3.1 5.6).
            let bl = unsafe {
                blocks(
                    raw::array(sendcounts, size, "sendcounts")?,
                    raw::array(displs, size, "displs")?,
                )
            }?;
            Some((raw::region(sendbuf, &t, &bl)?, t, bl))
        } else {
            None
        };
        let recv = if at_root && raw::in_place(recvbuf) {
            None
        } else {
            let (t, n) = (dt(recvtype)?, cnt(recvcount)?);
            Some((reg(recvbuf, &t, n)?, t, n, [(0, n)]))
        };
        let mut store = datatype::Packed::default();
        let beside = recv.as_ref().map(|(r, t, _, b)| (r, &**t, &b[..]));
        let s = send
            .map(|(r, t, b)| {
                // SAFETY: as MPI_Scatter, with the root's blocks at their displacements.
                let s = unsafe { raw::read_apart(&mut store, r, t, &b, beside) }?;
                Ok::<_, MpiError>((s, b))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = recv.map(|(r, t, n, _)| (unsafe { raw::write(r, t) }, n));
        coll::scatterv(
            comm,
            s.as_ref().map(|(b, bl)| (b, bl.clone())),
            r.as_mut().map(|(b, n)| (b, *n)),
            root,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Allgather", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Allgather's own arguments.
            return unsafe {
                intercomm::allgather(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &ic, None,
                )
            };
        }
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let (rt, rn) = (dt(recvtype)?, cnt(recvcount)?);
        let all = rn
            .checked_mul(size_of_comm(comm)?)
            .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
        let rr = reg(recvbuf, &rt, all)?;
        let mut store = datatype::Packed::default();
        let beside = (&rr, &*rt, &[(0, all)][..]);
        let s = send
            .map(|(r, t, n)| {
                // SAFETY: sendcount elements to send, room for size x recvcount (MPI-3.1 5.7),
                // made after (`read_apart`).
                let b = unsafe { raw::read_apart(&mut store, r, t, &[(0, n)], Some(beside)) }?;
                Ok::<_, MpiError>((b, n))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::allgather(comm, s.as_ref().map(|(b, n)| (b, *n)), (&mut r, rn))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Allgatherv", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Allgatherv's own arguments.
            return unsafe {
                intercomm::allgatherv(
                    sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &ic,
                    None,
                )
            };
        }
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            Some((reg(sendbuf, &t, n)?, t, n))
        };
        let rt = dt(recvtype)?;
        let size = size_of_comm(comm)?;
        // SAFETY: one count and displacement per rank (MPI-3.1 section 5.7).
        let bl = unsafe {
            blocks(
                raw::array(recvcounts, size, "recvcounts")?,
                raw::array(displs, size, "displs")?,
            )
        }?;
        let rr = raw::region(recvbuf, &rt, &bl)?;
        let mut store = datatype::Packed::default();
        let beside = (&rr, &*rt, &bl[..]);
        let s = send
            .map(|(r, t, n)| {
                // SAFETY: as MPI_Allgather, with blocks at their displacements.
                let b = unsafe { raw::read_apart(&mut store, r, t, &[(0, n)], Some(beside)) }?;
                Ok::<_, MpiError>((b, n))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::allgatherv(comm, s.as_ref().map(|(b, n)| (b, *n)), &mut r, bl)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Alltoall", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Alltoall's own arguments.
            return unsafe {
                intercomm::alltoall(
                    sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &ic, None,
                )
            };
        }
        let size = size_of_comm(comm)?;
        let too_large = || MpiError::new(class::COUNT, "count too large");
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let (t, n) = (dt(sendtype)?, cnt(sendcount)?);
            let all = n.checked_mul(size).ok_or_else(too_large)?;
            Some((reg(sendbuf, &t, all)?, t, n, all))
        };
        let (rt, rn) = (dt(recvtype)?, cnt(recvcount)?);
        let rall = rn.checked_mul(size).ok_or_else(too_large)?;
        let rr = reg(recvbuf, &rt, rall)?;
        let mut store = datatype::Packed::default();
        let beside = (&rr, &*rt, &[(0, rall)][..]);
        let s = send
            .map(|(r, t, n, all)| {
                // SAFETY: size x count elements in each buffer (MPI-3.1 5.8); the receive buffer
                // is made after (`read_apart`).
                let b = unsafe { raw::read_apart(&mut store, r, t, &[(0, all)], Some(beside)) }?;
                Ok::<_, MpiError>((b, n))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::alltoall(comm, s.as_ref().map(|(b, n)| (b, *n)), (&mut r, rn))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: Dtype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: Dtype,
    comm: Comm,
) -> c_int {
    guard("MPI_Alltoallv", comm, || {
        if let Some(ic) = state::inter(comm)? {
            // SAFETY: MPI_Alltoallv's own arguments.
            return unsafe {
                intercomm::alltoallv(
                    sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                    comm, &ic, None,
                )
            };
        }
        let size = size_of_comm(comm)?;
        let send = if raw::in_place(sendbuf) {
            None
        } else {
            let t = dt(sendtype)?;
            // SAFETY: one count and displacement per rank (MPI-3.1 section 5.8).
            let bl = unsafe {
                blocks(
                    raw::array(sendcounts, size, "sendcounts")?,
                    raw::array(sdispls, size, "sdispls")?,
                )
            }?;
            Some((raw::region(sendbuf, &t, &bl)?, t, bl))
        };
        let rt = dt(recvtype)?;
        // SAFETY: as above.
        let rbl = unsafe {
            blocks(
                raw::array(recvcounts, size, "recvcounts")?,
                raw::array(rdispls, size, "rdispls")?,
            )
        }?;
        let rr = raw::region(recvbuf, &rt, &rbl)?;
        let mut store = datatype::Packed::default();
        let beside = (&rr, &*rt, &rbl[..]);
        let s = send
            .map(|(r, t, b)| {
                // SAFETY: the blocks at their displacements in each buffer; the receive buffer
                // is made after (`read_apart`).
                let s = unsafe { raw::read_apart(&mut store, r, t, &b, Some(beside)) }?;
                Ok::<_, MpiError>((s, b))
            })
            .transpose()?;
        // SAFETY: as above.
        let mut r = unsafe { raw::write(rr, rt) };
        coll::alltoallv(comm, s.as_ref().map(|(b, bl)| (b, bl.clone())), &mut r, rbl)
    })
}

// ---- Local reductions ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Reduce_local(
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: c_int,
    datatype: Dtype,
    op: c_int,
) -> c_int {
    guard("MPI_Reduce_local", COMM_WORLD, || {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let (ir, or) = (reg(inbuf, &t, n)?, reg(inoutbuf, &t, n)?);
        let (mut store, one) = (datatype::Packed::default(), [(0, n)]);
        // SAFETY: `count` elements in each buffer (MPI-3.1 5.9.7); the inout buffer is
        // made after (`read_apart`).
        let i = unsafe { raw::read_apart(&mut store, ir, t.clone(), &one, Some((&or, &t, &one))) }?;
        // SAFETY: as above.
        let mut o = unsafe { raw::write(or, t) };
        coll::reduce_local(&i, &mut o, n, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_commutative(op: c_int, commute: *mut c_int) -> c_int {
    guard("MPI_Op_commutative", COMM_WORLD, || {
        let o = state::op(op)?;
        set(
            commute,
            "commute",
            c_int::from(o.user.is_none_or(|u| u.commute)),
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_create(
    user_fn: Option<raw::UserFn>,
    commute: c_int,
    op: *mut c_int,
) -> c_int {
    guard("MPI_Op_create", COMM_WORLD, || {
        let f = user_fn.ok_or_else(|| MpiError::arg("user_fn is a null pointer"))?;
        let user = crate::op::User {
            f,
            commute: commute != 0,
        };
        let h = state::with(|s| {
            Ok(s.ops.insert(crate::op::Op {
                name: "a user operation",
                kind: crate::op::OpKind::NoOp,
                user: Some(user),
            }))
        })?;
        set(op, "op", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Op_free(op: *mut c_int) -> c_int {
    guard("MPI_Op_free", COMM_WORLD, || {
        // SAFETY: `op` points to an operation handle.
        let h = unsafe { raw::out(op, "op") }?;
        state::with(|s| s.ops.remove(*h).map(drop))?;
        *h = NULL;
        Ok(())
    })
}
