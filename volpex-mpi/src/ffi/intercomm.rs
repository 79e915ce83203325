//! The C arguments of the collectives on an inter-communicator (MPI-3.1 section 5.2.2),
//! blocking and immediate: the exported functions in `collectives` hand their arguments
//! here when the communicator is an inter-communicator. Per-rank arrays (counts,
//! displacements) have one entry per process of the remote group, except the receive
//! counts of a reduce-scatter (the local group's); the root's buffers matter at
//! `MPI_ROOT` only, the others' nowhere in the root's group; `MPI_IN_PLACE` is not
//! allowed. Thin shells over `icoll`; never sends a message itself.
//!
//! Each shell builds buffers that live as long as the operation (`'static`), so one body
//! serves the blocking form (run at once, before the call returns) and the immediate one
//! (run on its own thread until the request completes: MPI-3.1 section 5.12 keeps the
//! buffers the program's until then).

use volpex::InterCommunicator;

use super::*;
use crate::icoll::{self, Role};

/// Where an immediate call puts its request (None: the blocking form).
pub(super) type Req = Option<*mut c_int>;

/// Runs `op` now, or starts it and stores its request.
fn run(
    comm: Comm,
    ic: &InterCommunicator,
    request: Req,
    op: impl FnOnce(&InterCommunicator) -> Result<()> + Send + 'static,
) -> Result<()> {
    match request {
        None => op(ic),
        Some(p) => set(p, "request", icoll::start(comm, ic, op)?),
    }
}

fn no_in_place(p: *const c_void) -> Result<()> {
    if raw::in_place(p) {
        return Err(MpiError::new(
            class::BUFFER,
            "MPI_IN_PLACE is not allowed on an inter-communicator",
        ));
    }
    Ok(())
}

/// A send buffer of `blocks` of `t` at `p`, for the operation's lifetime.
///
/// # Safety
/// `p` holds those blocks and stays readable until the operation completes.
unsafe fn source(p: *const c_void, t: Dtype, blocks: &Blocks) -> Result<datatype::Buf<'static>> {
    no_in_place(p)?;
    let t = dt(t)?;
    let r = raw::region(p, &t, blocks)?;
    // SAFETY: the caller's contract: readable until the operation completes.
    Ok(unsafe { raw::read(r, t) })
}

/// A receive buffer of `blocks` of `t` at `p`, for the operation's lifetime.
///
/// # Safety
/// `p` holds those blocks, writable and untouched by the program until the operation
/// completes.
unsafe fn sink(p: *mut c_void, t: Dtype, blocks: &Blocks) -> Result<datatype::BufMut<'static>> {
    no_in_place(p)?;
    let t = dt(t)?;
    let r = raw::region(p, &t, blocks)?;
    // SAFETY: the caller's contract: writable and the operation's until it completes.
    Ok(unsafe { raw::write(r, t) })
}

fn one(count: c_int) -> Result<Blocks> {
    Ok(vec![(0, cnt(count)?)])
}

/// Per-rank blocks from `n` counts and displacements.
///
/// # Safety
/// `counts` and `displs` point to `n` ints each.
unsafe fn per_rank(n: usize, counts: *const c_int, displs: *const c_int) -> Result<Blocks> {
    // SAFETY: the caller's contract.
    unsafe {
        blocks(
            raw::array(counts, n, "counts")?,
            raw::array(displs, n, "displs")?,
        )
    }
}

fn remote(ic: &InterCommunicator) -> usize {
    ic.remote_size() as usize
}

/// MPI_Barrier, MPI_Ibarrier.
pub(super) fn barrier(comm: Comm, ic: &InterCommunicator, request: Req) -> Result<()> {
    run(comm, ic, request, icoll::barrier)
}

/// MPI_Bcast, MPI_Ibcast.
///
/// # Safety
/// The arguments of MPI_Bcast (the buffer, until the request completes).
pub(super) unsafe fn bcast(
    comm: Comm,
    ic: &InterCommunicator,
    (buffer, count, datatype, root): (*mut c_void, c_int, Dtype, c_int),
    request: Req,
) -> Result<()> {
    let n = cnt(count)?;
    let mut b = match icoll::role(ic, root)? {
        Role::Idle => None,
        // SAFETY: `count` elements, read at the root, written elsewhere, until the end.
        Role::Root | Role::Leaf(_) => Some(unsafe { sink(buffer, datatype, &one(count)?) }?),
    };
    run(comm, ic, request, move |ic| match &mut b {
        Some(b) => icoll::bcast(ic, b, n, root),
        None => Ok(()),
    })
}

/// MPI_Gather(v), MPI_Igather(v): `recv` is (buffer, per-rank blocks or None for
/// `recvcount` each, datatype).
///
/// # Safety
/// The arguments of MPI_Gather or MPI_Gatherv.
pub(super) unsafe fn gather(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, sendcount, sendtype): (*const c_void, c_int, Dtype),
    (recvbuf, recvcount, rblocks, recvtype): (*mut c_void, c_int, Option<Blocks>, Dtype),
    root: c_int,
    request: Req,
) -> Result<()> {
    let role = icoll::role(ic, root)?;
    let (mut send, mut recv) = (None, None);
    match role {
        Role::Root => {
            let bl = match rblocks {
                Some(b) => b,
                None => icoll::blocks_of(ic, cnt(recvcount)?),
            };
            // SAFETY: the root's receive blocks, until the end.
            recv = Some((unsafe { sink(recvbuf, recvtype, &bl) }?, bl));
        }
        Role::Leaf(_) => {
            // SAFETY: `sendcount` elements to send, until the end.
            send = Some((
                unsafe { source(sendbuf, sendtype, &one(sendcount)?) }?,
                cnt(sendcount)?,
            ));
        }
        Role::Idle => {}
    }
    run(comm, ic, request, move |ic| {
        icoll::gather(
            ic,
            send.as_ref().map(|(b, k)| (b, *k)),
            recv.as_mut().map(|(b, bl)| (b, std::mem::take(bl))),
            root,
        )
    })
}

/// The blocks of MPI_Gatherv's or MPI_Scatterv's root.
///
/// # Safety
/// At the root, `counts` and `displs` point to one int per remote process.
pub(super) unsafe fn root_blocks(
    ic: &InterCommunicator,
    root: c_int,
    counts: *const c_int,
    displs: *const c_int,
) -> Result<Option<Blocks>> {
    if root != crate::handles::ROOT {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    unsafe { per_rank(remote(ic), counts, displs) }.map(Some)
}

/// MPI_Scatter(v), MPI_Iscatter(v): `send` is (buffer, per-rank blocks or None for
/// `sendcount` each, datatype).
///
/// # Safety
/// The arguments of MPI_Scatter or MPI_Scatterv.
pub(super) unsafe fn scatter(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, sendcount, sblocks, sendtype): (*const c_void, c_int, Option<Blocks>, Dtype),
    (recvbuf, recvcount, recvtype): (*mut c_void, c_int, Dtype),
    root: c_int,
    request: Req,
) -> Result<()> {
    let (mut send, mut recv) = (None, None);
    match icoll::role(ic, root)? {
        Role::Root => {
            let bl = match sblocks {
                Some(b) => b,
                None => icoll::blocks_of(ic, cnt(sendcount)?),
            };
            // SAFETY: the root's send blocks, until the end.
            send = Some((unsafe { source(sendbuf, sendtype, &bl) }?, bl));
        }
        Role::Leaf(_) => {
            // SAFETY: `recvcount` elements of room, until the end.
            recv = Some((
                unsafe { sink(recvbuf, recvtype, &one(recvcount)?) }?,
                cnt(recvcount)?,
            ));
        }
        Role::Idle => {}
    }
    run(comm, ic, request, move |ic| {
        icoll::scatter(
            ic,
            send.as_ref().map(|(b, bl)| (b, bl.clone())),
            recv.as_mut().map(|(b, k)| (b, *k)),
            root,
        )
    })
}

/// MPI_Allgather(v), MPI_Iallgather(v): `rblocks` None for `recvcount` per remote rank.
///
/// # Safety
/// The arguments of MPI_Allgather or MPI_Allgatherv.
pub(super) unsafe fn allgather(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, sendcount, sendtype): (*const c_void, c_int, Dtype),
    (recvbuf, recvcount, rblocks, recvtype): (*mut c_void, c_int, Option<Blocks>, Dtype),
    request: Req,
) -> Result<()> {
    let k = cnt(sendcount)?;
    // SAFETY: `sendcount` elements to send, until the end.
    let s = unsafe { source(sendbuf, sendtype, &one(sendcount)?) }?;
    let bl = match rblocks {
        Some(b) => b,
        None => icoll::blocks_of(ic, cnt(recvcount)?),
    };
    // SAFETY: the receive blocks, until the end.
    let mut r = unsafe { sink(recvbuf, recvtype, &bl) }?;
    run(comm, ic, request, move |ic| {
        icoll::allgather(ic, (&s, k), &mut r, &bl)
    })
}

/// Per-remote-rank blocks of an all-gather's or all-to-all's receive side.
///
/// # Safety
/// `counts` and `displs` point to one int per remote process.
pub(super) unsafe fn remote_blocks(
    ic: &InterCommunicator,
    counts: *const c_int,
    displs: *const c_int,
) -> Result<Blocks> {
    // SAFETY: the caller's contract.
    unsafe { per_rank(remote(ic), counts, displs) }
}

/// MPI_Alltoall(v), MPI_Ialltoall(v): blocks None for `count` per remote rank.
///
/// # Safety
/// The arguments of MPI_Alltoall or MPI_Alltoallv.
pub(super) unsafe fn alltoall(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, sendcount, sblocks, sendtype): (*const c_void, c_int, Option<Blocks>, Dtype),
    (recvbuf, recvcount, rblocks, recvtype): (*mut c_void, c_int, Option<Blocks>, Dtype),
    request: Req,
) -> Result<()> {
    let sbl = match sblocks {
        Some(b) => b,
        None => icoll::blocks_of(ic, cnt(sendcount)?),
    };
    let rbl = match rblocks {
        Some(b) => b,
        None => icoll::blocks_of(ic, cnt(recvcount)?),
    };
    // SAFETY: the send blocks, until the end.
    let s = unsafe { source(sendbuf, sendtype, &sbl) }?;
    // SAFETY: the receive blocks, until the end.
    let mut r = unsafe { sink(recvbuf, recvtype, &rbl) }?;
    run(comm, ic, request, move |ic| {
        icoll::alltoall(ic, (&s, &sbl), &mut r, &rbl)
    })
}

/// MPI_Alltoallw, MPI_Ialltoallw: one count, byte displacement and datatype per remote
/// rank on each side.
///
/// # Safety
/// The arguments of MPI_Alltoallw: each array holds one entry per remote process.
pub(super) unsafe fn alltoallw(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, sendcounts, sdispls, sendtypes): (
        *const c_void,
        *const c_int,
        *const c_int,
        *const Dtype,
    ),
    (recvbuf, recvcounts, rdispls, recvtypes): (
        *mut c_void,
        *const c_int,
        *const c_int,
        *const Dtype,
    ),
    request: Req,
) -> Result<()> {
    let n = remote(ic);
    no_in_place(sendbuf)?;
    no_in_place(recvbuf)?;
    // SAFETY: one entry per remote process in each array (MPI-3.1 section 5.8).
    let (sc, sd, st, rc, rd, rt) = unsafe {
        (
            raw::array(sendcounts, n, "sendcounts")?,
            raw::array(sdispls, n, "sdispls")?,
            raw::array(sendtypes, n, "sendtypes")?,
            raw::array(recvcounts, n, "recvcounts")?,
            raw::array(rdispls, n, "rdispls")?,
            raw::array(recvtypes, n, "recvtypes")?,
        )
    };
    let mut sends = Vec::with_capacity(n);
    for i in 0..n {
        let (t, k) = (dt(st[i])?, cnt(sc[i])?);
        // The displacement is in bytes: the block starts `sd[i]` bytes in.
        let at = (sendbuf as *const u8).wrapping_offset(sd[i] as isize) as *const c_void;
        let r = reg(at, &t, k)?;
        // SAFETY: block i of the send buffer, read during this call (its bytes are
        // packed here, before an immediate operation starts).
        let b = unsafe { raw::read(r, t) };
        sends.push(std::borrow::Cow::Owned(b.bytes(0, k)?.into_owned()));
    }
    let mut sinks = Vec::with_capacity(n);
    let mut caps = Vec::with_capacity(n);
    for i in 0..n {
        let (t, k) = (dt(rt[i])?, cnt(rc[i])?);
        caps.push(t.bytes_of(k)?);
        let at = (recvbuf as *mut u8).wrapping_offset(rd[i] as isize) as *mut c_void;
        let r = reg(at, &t, k)?;
        // SAFETY: block i of the receive buffer, the operation's until it completes; the
        // program must not give two blocks the same bytes (MPI-3.1 section 5.8).
        sinks.push((unsafe { raw::write(r, t) }, k));
    }
    run(comm, ic, request, move |ic| {
        icoll::alltoallw(ic, &sends, &caps, |i, data| {
            let (b, k) = &mut sinks[i];
            b.write(0, *k, data)
        })
    })
}

/// Checks `op` names an operation before an immediate reduction starts.
fn check_op(op: c_int) -> Result<()> {
    state::op(op).map(drop)
}

/// MPI_Reduce, MPI_Ireduce.
///
/// # Safety
/// The arguments of MPI_Reduce.
pub(super) unsafe fn reduce(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, recvbuf, count, datatype, op, root): (
        *const c_void,
        *mut c_void,
        c_int,
        Dtype,
        c_int,
        c_int,
    ),
    request: Req,
) -> Result<()> {
    check_op(op)?;
    let n = cnt(count)?;
    let (mut send, mut recv) = (None, None);
    match icoll::role(ic, root)? {
        // SAFETY: `count` elements of room at the root, until the end.
        Role::Root => recv = Some(unsafe { sink(recvbuf, datatype, &one(count)?) }?),
        // SAFETY: `count` elements to send, until the end.
        Role::Leaf(_) => send = Some(unsafe { source(sendbuf, datatype, &one(count)?) }?),
        Role::Idle => {}
    }
    run(comm, ic, request, move |ic| {
        icoll::reduce(ic, send.as_ref(), recv.as_mut(), n, op, root)
    })
}

/// MPI_Allreduce, MPI_Iallreduce.
///
/// # Safety
/// The arguments of MPI_Allreduce.
pub(super) unsafe fn allreduce(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, recvbuf, count, datatype, op): (*const c_void, *mut c_void, c_int, Dtype, c_int),
    request: Req,
) -> Result<()> {
    check_op(op)?;
    let n = cnt(count)?;
    // SAFETY: `count` elements in each buffer, until the end.
    let s = unsafe { source(sendbuf, datatype, &one(count)?) }?;
    // SAFETY: as above.
    let mut r = unsafe { sink(recvbuf, datatype, &one(count)?) }?;
    run(comm, ic, request, move |ic| {
        icoll::allreduce(ic, &s, &mut r, n, op)
    })
}

/// MPI_Reduce_scatter(_block), MPI_Ireduce_scatter(_block): `counts` has one entry per
/// process of the local group.
///
/// # Safety
/// The send and receive buffers of MPI_Reduce_scatter.
pub(super) unsafe fn reduce_scatter(
    comm: Comm,
    ic: &InterCommunicator,
    (sendbuf, recvbuf, counts, datatype, op): (
        *const c_void,
        *mut c_void,
        Vec<usize>,
        Dtype,
        c_int,
    ),
    request: Req,
) -> Result<()> {
    check_op(op)?;
    let total: usize = counts.iter().sum();
    let mine = counts.get(ic.rank() as usize).copied().unwrap_or(0);
    // SAFETY: the sum of the counts to send, until the end.
    let s = unsafe { source(sendbuf, datatype, &vec![(0, total)]) }?;
    // SAFETY: this rank's count of room, until the end.
    let mut r = unsafe { sink(recvbuf, datatype, &vec![(0, mine)]) }?;
    run(comm, ic, request, move |ic| {
        icoll::reduce_scatter(ic, (&s, total), &mut r, &counts, op)
    })
}
