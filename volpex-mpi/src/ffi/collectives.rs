//! Collective operations in `mpi.h` (MPI-3.1 chapter 5), the neighbourhood collectives of
//! process topologies (section 7.6), local reductions and user operations. Each
//! collective is one body, which turns its C arguments into a `coll::job::Job`, and
//! `collective!` exports it twice: the blocking function runs the job, the immediate one
//! (section 5.12: the same arguments and a request) starts it. On an inter-communicator
//! (section 5.2.2) both forms hand their arguments to `intercomm` instead, where the
//! collective has an `inter` clause; the others are not defined there (MPI_ERR_COMM).
//! Never keeps a pointer past the call except an immediate call's receive buffer, which
//! its request holds.

use volpex::InterCommunicator;

use super::intercomm::{self, Req};
use super::*;
use crate::coll::job::{self, Job};
use crate::coll::neighbor::{self, Sends};
use crate::datatype::piece::{self, Piece, Pieced, PiecedMut, Source};
use crate::datatype::BufMut;

/// Exports a collective's blocking form `$blocking` and immediate form `$immediate`
/// from one body, which turns the blocking form's arguments into the job: the blocking
/// form runs it, the immediate one starts it. On an inter-communicator the `inter`
/// clause runs instead, with `$ic` the inter-communicator and `$req` where an immediate
/// call's request goes (None for the blocking form); without one, MPI_ERR_COMM.
macro_rules! collective {
    ($(
        $blocking:ident / $immediate:ident($($arg:ident: $ty:ty),* ; $comm:ident)
        $(inter($ic:ident, $req:ident) $inter:block)?
        $body:block
    )*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $blocking($($arg: $ty,)* $comm: Comm) -> c_int {
            guard(stringify!($blocking), $comm, || {
                if let Some(ic) = state::inter($comm)? {
                    return on_inter!(stringify!($blocking), ic, None $(, $ic, $req, $inter)?);
                }
                // The caller's arguments are valid for the call, which the job does not
                // outlive (it runs to completion here, serving passive-target requests
                // meanwhile while a window allows locks).
                let job: Result<Job<'_>> = $body;
                crate::rma::passive::collective(job?, &super::rma::memory)
            })
        }

        #[no_mangle]
        pub unsafe extern "C" fn $immediate(
            $($arg: $ty,)*
            $comm: Comm,
            request: *mut c_int,
        ) -> c_int {
            guard(stringify!($immediate), $comm, || {
                if let Some(ic) = state::inter($comm)? {
                    return on_inter!(
                        stringify!($immediate), ic, Some(request) $(, $ic, $req, $inter)?
                    );
                }
                // SAFETY: `request` is the call's output argument.
                let out = unsafe { raw::out(request, "request") }?;
                // The caller's buffers stay valid and its receive buffer untouched until
                // the request completes (MPI-3.1 section 5.12); the job reads the send
                // data before `start` returns.
                let job: Result<Job<'static>> = $body;
                *out = job::start(job?)?;
                Ok(())
            })
        }
    )*};
}

/// A collective on inter-communicator `$found`: its `inter` clause with `$ic` and `$req`
/// bound, or MPI_ERR_COMM without one (MPI-3.1 section 5.2.2 lists the collectives an
/// inter-communicator has).
macro_rules! on_inter {
    ($name:expr, $found:ident, $request:expr) => {{
        let _: (&InterCommunicator, Req) = (&$found, $request);
        Err(MpiError::new(
            class::COMM,
            format!("{} is not defined on inter-communicators", $name),
        ))
    }};
    ($name:expr, $found:ident, $request:expr, $ic:ident, $req:ident, $inter:block) => {{
        let $ic: &InterCommunicator = &$found;
        let $req: Req = $request;
        $inter
    }};
}

/// MPI_Barrier: a serving call while a window allows locks (`rma::passive`), so a
/// target waiting here applies its origins' requests; then the team barrier of every
/// shared window it spans (`rma::shared`), which orders their loads and stores.
#[no_mangle]
pub extern "C" fn MPI_Barrier(comm: Comm) -> c_int {
    guard("MPI_Barrier", comm, || {
        if let Some(ic) = state::inter(comm)? {
            return intercomm::barrier(comm, &ic, None);
        }
        let c = state::comm(comm)?;
        crate::rma::passive::barrier(&c, &super::rma::memory)?;
        crate::rma::shared::after_barrier(&c);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Ibarrier(comm: Comm, request: *mut c_int) -> c_int {
    guard("MPI_Ibarrier", comm, || {
        if let Some(ic) = state::inter(comm)? {
            return intercomm::barrier(comm, &ic, Some(request));
        }
        // SAFETY: `request` is the call's output argument.
        let out = unsafe { raw::out(request, "request") }?;
        *out = job::start(coll::barrier(comm)?)?;
        Ok(())
    })
}

collective! {
    MPI_Bcast / MPI_Ibcast(buffer: *mut c_void, count: c_int, datatype: Dtype, root: c_int; comm)
    inter(ic, request) {
        let args = (buffer, count, datatype, root);
        // SAFETY: the call's arguments; an immediate call's buffer is the request's until
        // it completes (MPI-3.1 section 5.12).
        unsafe { intercomm::bcast(comm, ic, args, request) }
    } {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let r = side(buffer, &t, &[(0, n)], false)?;
        // SAFETY: `count` elements of `datatype`, read at the root, written elsewhere.
        let (_, b) = unsafe { buffers(None, r) }?;
        let (b, _) = b.ok_or_else(no_buffer)?;
        coll::bcast(comm, b, n, root)
    }
    MPI_Reduce / MPI_Ireduce(
        sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Dtype, op: c_int,
        root: c_int; comm
    ) inter(ic, request) {
        let args = (sendbuf, recvbuf, count, datatype, op, root);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::reduce(comm, ic, args, request) }
    } {
        let (t, n) = (dt(datatype)?, cnt(count)?);
        let at_root = comm::rank(comm)? == root;
        let counts = (n, at_root.then_some(n));
        // SAFETY: `count` elements each side; recvbuf is significant only at the root.
        let (s, r) = unsafe { reduction_buffers(sendbuf, recvbuf, &t, counts) }?;
        coll::reduce(comm, s, r, n, op, root)
    }
    MPI_Reduce_scatter_block / MPI_Ireduce_scatter_block(
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: Dtype,
        op: c_int; comm
    ) inter(ic, request) {
        let counts = vec![cnt(recvcount)?; ic.size() as usize];
        let args = (sendbuf, recvbuf, counts, datatype, op);
        // SAFETY: the call's buffers (and an immediate call's until it completes).
        unsafe { intercomm::reduce_scatter(comm, ic, args, request) }
    } {
        let (t, n) = (dt(datatype)?, cnt(recvcount)?);
        let all = times(n, size_of_comm(comm)?)?;
        // SAFETY: size x recvcount elements to send, recvcount (or, in place, all) to
        // receive (MPI-3.1 section 5.10.1).
        let (s, r) = unsafe { reduction_buffers(sendbuf, recvbuf, &t, (all, Some(n))) }?;
        coll::reduce_scatter_block(comm, s, r.ok_or_else(no_recv)?, n, op)
    }
    MPI_Reduce_scatter / MPI_Ireduce_scatter(
        sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: Dtype,
        op: c_int; comm
    ) inter(ic, request) {
        // SAFETY: one count per process of the local group (MPI-3.1 section 5.10.2).
        let counts = unsafe { counts_of(recvcounts, ic.size() as usize, "recvcounts") }?;
        let args = (sendbuf, recvbuf, counts, datatype, op);
        // SAFETY: the call's buffers (and an immediate call's until it completes).
        unsafe { intercomm::reduce_scatter(comm, ic, args, request) }
    } {
        let t = dt(datatype)?;
        // SAFETY: one count per rank (MPI-3.1 section 5.10.2).
        let counts = unsafe { counts_of(recvcounts, size_of_comm(comm)?, "recvcounts") }?;
        let all: usize = counts.iter().sum();
        let mine = counts.get(comm::rank(comm)? as usize).copied().unwrap_or(0);
        // SAFETY: the sum of the counts to send, this rank's count (or, in place, all) to
        // receive.
        let (s, r) = unsafe { reduction_buffers(sendbuf, recvbuf, &t, (all, Some(mine))) }?;
        coll::reduce_scatter(comm, s, r.ok_or_else(no_recv)?, &counts, op)
    }
    MPI_Gather / MPI_Igather(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcount: c_int, recvtype: Dtype, root: c_int; comm
    ) inter(ic, request) {
        let send = (sendbuf, sendcount, sendtype);
        let recv = (recvbuf, recvcount, None, recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::gather(comm, ic, send, recv, root, request) }
    } {
        let at_root = comm::rank(comm)? == root;
        let send = counted(sendbuf, (sendcount, sendtype), at_root)?;
        let recv = match at_root {
            true => Some(per_rank(recvbuf, (recvcount, recvtype), size_of_comm(comm)?)?),
            false => None,
        };
        // SAFETY: sendcount elements to send; at the root room for size x recvcount
        // (MPI-3.1 section 5.5).
        let (s, r) = unsafe { with_extra(send, recv) }?;
        coll::gather(comm, s, r, root)
    }
    MPI_Gatherv / MPI_Igatherv(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcounts: *const c_int, displs: *const c_int, recvtype: Dtype, root: c_int; comm
    ) inter(ic, request) {
        // SAFETY: at the root, one count and displacement per remote process.
        let bl = unsafe { intercomm::root_blocks(ic, root, recvcounts, displs) }?;
        let send = (sendbuf, sendcount, sendtype);
        let recv = (recvbuf, 0, bl, recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::gather(comm, ic, send, recv, root, request) }
    } {
        let (at_root, size) = (comm::rank(comm)? == root, size_of_comm(comm)?);
        let send = counted(sendbuf, (sendcount, sendtype), at_root)?;
        let recv = match at_root {
            // SAFETY: one count and displacement per rank at the root (MPI-3.1 5.5).
            true => unsafe { v_side(recvbuf, (recvcounts, displs, recvtype), size, false) }?,
            false => None,
        };
        // SAFETY: as MPI_Gather, with the root's blocks at their displacements.
        let (s, r) = unsafe { with_extra(send, recv) }?;
        coll::gatherv(comm, s, r, root)
    }
    MPI_Scatter / MPI_Iscatter(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcount: c_int, recvtype: Dtype, root: c_int; comm
    ) inter(ic, request) {
        let send = (sendbuf, sendcount, None, sendtype);
        let recv = (recvbuf, recvcount, recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::scatter(comm, ic, send, recv, root, request) }
    } {
        let at_root = comm::rank(comm)? == root;
        let send = match at_root {
            true => Some(per_rank(sendbuf, (sendcount, sendtype), size_of_comm(comm)?)?),
            false => None,
        };
        let recv = counted(recvbuf, (recvcount, recvtype), at_root)?;
        // SAFETY: at the root size x sendcount elements to send; recvcount elements of room
        // (MPI-3.1 section 5.6).
        let (s, r) = unsafe { with_extra(send, recv) }?;
        coll::scatter(comm, s, r, root)
    }
    MPI_Scatterv / MPI_Iscatterv(
        sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: Dtype,
        recvbuf: *mut c_void, recvcount: c_int, recvtype: Dtype, root: c_int; comm
    ) inter(ic, request) {
        // SAFETY: at the root, one count and displacement per remote process.
        let bl = unsafe { intercomm::root_blocks(ic, root, sendcounts, displs) }?;
        let send = (sendbuf, 0, bl, sendtype);
        let recv = (recvbuf, recvcount, recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::scatter(comm, ic, send, recv, root, request) }
    } {
        let (at_root, size) = (comm::rank(comm)? == root, size_of_comm(comm)?);
        let send = match at_root {
            // SAFETY: one count and displacement per rank at the root (MPI-3.1 5.6).
            true => unsafe { v_side(sendbuf, (sendcounts, displs, sendtype), size, false) }?,
            false => None,
        };
        let recv = counted(recvbuf, (recvcount, recvtype), at_root)?;
        // SAFETY: as MPI_Scatter, with the root's blocks at their displacements.
        let (s, r) = unsafe { with_extra(send, recv) }?;
        coll::scatterv(comm, s, r, root)
    }
    MPI_Allgather / MPI_Iallgather(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcount: c_int, recvtype: Dtype; comm
    ) inter(ic, request) {
        let send = (sendbuf, sendcount, sendtype);
        let recv = (recvbuf, recvcount, None, recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::allgather(comm, ic, send, recv, request) }
    } {
        let send = counted(sendbuf, (sendcount, sendtype), true)?;
        let recv = per_rank(recvbuf, (recvcount, recvtype), size_of_comm(comm)?)?;
        // SAFETY: sendcount elements to send, room for size x recvcount (MPI-3.1 5.7).
        let (s, r) = unsafe { with_extra(send, Some(recv)) }?;
        coll::allgather(comm, s, r.ok_or_else(no_recv)?)
    }
    MPI_Allgatherv / MPI_Iallgatherv(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcounts: *const c_int, displs: *const c_int, recvtype: Dtype; comm
    ) inter(ic, request) {
        // SAFETY: one count and displacement per remote process.
        let bl = unsafe { intercomm::remote_blocks(ic, recvcounts, displs) }?;
        let send = (sendbuf, sendcount, sendtype);
        let recv = (recvbuf, 0, Some(bl), recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::allgather(comm, ic, send, recv, request) }
    } {
        let send = counted(sendbuf, (sendcount, sendtype), true)?;
        let size = size_of_comm(comm)?;
        // SAFETY: one count and displacement per rank (MPI-3.1 section 5.7).
        let recv = unsafe { v_side(recvbuf, (recvcounts, displs, recvtype), size, false) }?;
        // SAFETY: as MPI_Allgather, with blocks at their displacements.
        let (s, r) = unsafe { with_extra(send, recv) }?;
        coll::allgatherv(comm, s, r.ok_or_else(no_recv)?)
    }
    MPI_Alltoall / MPI_Ialltoall(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcount: c_int, recvtype: Dtype; comm
    ) inter(ic, request) {
        let send = (sendbuf, sendcount, None, sendtype);
        let recv = (recvbuf, recvcount, None, recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::alltoall(comm, ic, send, recv, request) }
    } {
        let size = size_of_comm(comm)?;
        let send = match raw::in_place(sendbuf) {
            true => None,
            false => Some(per_rank(sendbuf, (sendcount, sendtype), size)?),
        };
        let recv = per_rank(recvbuf, (recvcount, recvtype), size)?;
        // SAFETY: size x count elements in each buffer (MPI-3.1 section 5.8).
        let (s, r) = unsafe { with_extra(send, Some(recv)) }?;
        coll::alltoall(comm, s, r.ok_or_else(no_recv)?)
    }
    MPI_Alltoallv / MPI_Ialltoallv(
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Dtype,
        recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int,
        recvtype: Dtype; comm
    ) inter(ic, request) {
        // SAFETY: one count and displacement per remote process on each side.
        let (sbl, rbl) = unsafe {
            (
                intercomm::remote_blocks(ic, sendcounts, sdispls)?,
                intercomm::remote_blocks(ic, recvcounts, rdispls)?,
            )
        };
        let send = (sendbuf, 0, Some(sbl), sendtype);
        let recv = (recvbuf, 0, Some(rbl), recvtype);
        // SAFETY: the call's arguments (and an immediate call's until it completes).
        unsafe { intercomm::alltoall(comm, ic, send, recv, request) }
    } {
        let size = size_of_comm(comm)?;
        // SAFETY: one count and displacement per rank on each side (MPI-3.1 section 5.8).
        let (send, recv) = unsafe {
            (
                v_side(sendbuf, (sendcounts, sdispls, sendtype), size, true)?,
                v_side(recvbuf, (recvcounts, rdispls, recvtype), size, false)?,
            )
        };
        // SAFETY: the blocks at their displacements in each buffer.
        let (s, r) = unsafe { with_extra(send, recv) }?;
        coll::alltoallv(comm, s, r.ok_or_else(no_recv)?)
    }
    MPI_Alltoallw / MPI_Ialltoallw(
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int,
        sendtypes: *const Dtype, recvbuf: *mut c_void, recvcounts: *const c_int,
        rdispls: *const c_int, recvtypes: *const Dtype; comm
    ) inter(ic, request) {
        let send = (sendbuf, sendcounts, sdispls, sendtypes);
        let recv = (recvbuf, recvcounts, rdispls, recvtypes);
        // SAFETY: the call's arguments, one entry per remote process in each array (and an
        // immediate call's buffers until it completes).
        unsafe { intercomm::alltoallw(comm, ic, send, recv, request) }
    } {
        let size = size_of_comm(comm)?;
        // SAFETY: one count, byte displacement and datatype per rank on each side (MPI-3.1
        // section 5.8).
        let (send, recv) = unsafe {
            (
                w_side(sendbuf, (sendcounts, sdispls, sendtypes), size, true)?,
                w_side(recvbuf, (recvcounts, rdispls, recvtypes), size, false)?,
            )
        };
        // SAFETY: the pieces at their displacements in each buffer.
        let (s, r) = unsafe { w_buffers(send, recv.ok_or_else(no_recv)?) }?;
        coll::alltoallw(comm, s, r)
    }
    MPI_Neighbor_allgather / MPI_Ineighbor_allgather(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcount: c_int, recvtype: Dtype; comm
    ) {
        let (indegree, _) = neighbor::degrees(comm)?;
        let (st, sn) = (dt(sendtype)?, cnt(sendcount)?);
        let send = side(sendbuf, &st, &[(0, sn)], false)?.ok_or_else(no_buffer)?;
        let recv = neighbor_side(recvbuf, (recvcount, recvtype), indegree)?;
        // SAFETY: sendcount elements to send, recvcount from each source (MPI-3.1 7.6.1).
        let ((s, mut sp), r) = unsafe { neighbor_pieces(send, recv) }?;
        let piece = sp.pop().ok_or_else(no_buffer)?;
        neighbor::exchange(comm, Sends::Same(s, piece), r)
    }
    MPI_Neighbor_allgatherv / MPI_Ineighbor_allgatherv(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcounts: *const c_int, displs: *const c_int, recvtype: Dtype; comm
    ) {
        let (indegree, _) = neighbor::degrees(comm)?;
        let (st, sn) = (dt(sendtype)?, cnt(sendcount)?);
        let send = side(sendbuf, &st, &[(0, sn)], false)?.ok_or_else(no_buffer)?;
        // SAFETY: one count and displacement per source (MPI-3.1 section 7.6.1).
        let (recv, _) =
            unsafe { v_side(recvbuf, (recvcounts, displs, recvtype), indegree, false) }?
                .ok_or_else(no_recv)?;
        // SAFETY: sendcount elements to send, the blocks at their displacements.
        let ((s, mut sp), r) = unsafe { neighbor_pieces(send, recv) }?;
        let piece = sp.pop().ok_or_else(no_buffer)?;
        neighbor::exchange(comm, Sends::Same(s, piece), r)
    }
    MPI_Neighbor_alltoall / MPI_Ineighbor_alltoall(
        sendbuf: *const c_void, sendcount: c_int, sendtype: Dtype, recvbuf: *mut c_void,
        recvcount: c_int, recvtype: Dtype; comm
    ) {
        let (indegree, outdegree) = neighbor::degrees(comm)?;
        let send = neighbor_side(sendbuf, (sendcount, sendtype), outdegree)?;
        let recv = neighbor_side(recvbuf, (recvcount, recvtype), indegree)?;
        // SAFETY: a block per destination to send, a block per source to receive (MPI-3.1
        // section 7.6.2).
        let ((s, sp), r) = unsafe { neighbor_pieces(send, recv) }?;
        neighbor::exchange(comm, Sends::Each(s, sp), r)
    }
    MPI_Neighbor_alltoallv / MPI_Ineighbor_alltoallv(
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: Dtype,
        recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int,
        recvtype: Dtype; comm
    ) {
        let (indegree, outdegree) = neighbor::degrees(comm)?;
        // SAFETY: one count and displacement per destination and per source (MPI-3.1
        // section 7.6.2).
        let (send, recv) = unsafe {
            (
                v_side(sendbuf, (sendcounts, sdispls, sendtype), outdegree, false)?,
                v_side(recvbuf, (recvcounts, rdispls, recvtype), indegree, false)?,
            )
        };
        let (send, _) = send.ok_or_else(no_buffer)?;
        let (recv, _) = recv.ok_or_else(no_recv)?;
        // SAFETY: the blocks at their displacements in each buffer.
        let ((s, sp), r) = unsafe { neighbor_pieces(send, recv) }?;
        neighbor::exchange(comm, Sends::Each(s, sp), r)
    }
    MPI_Neighbor_alltoallw / MPI_Ineighbor_alltoallw(
        sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const isize,
        sendtypes: *const Dtype, recvbuf: *mut c_void, recvcounts: *const c_int,
        rdispls: *const isize, recvtypes: *const Dtype; comm
    ) {
        let (indegree, outdegree) = neighbor::degrees(comm)?;
        // SAFETY: one count, byte displacement and datatype per destination and per source
        // (MPI-3.1 section 7.6.2).
        let (send, recv) = unsafe {
            (
                w_side(sendbuf, (sendcounts, sdispls, sendtypes), outdegree, false)?,
                w_side(recvbuf, (recvcounts, rdispls, recvtypes), indegree, false)?,
            )
        };
        // SAFETY: the pieces at their displacements in each buffer.
        let (s, r) = unsafe { w_buffers(send, recv.ok_or_else(no_recv)?) }?;
        let (s, sp) = s.ok_or_else(|| MpiError::new(class::BUFFER, "no send buffer"))?;
        neighbor::exchange(comm, Sends::Each(s, sp), r)
    }
}

/// Exports the reductions with `count` elements on each side (MPI_Allreduce, MPI_Scan,
/// MPI_Exscan and their immediate forms), each made by `coll::$f`; on an
/// inter-communicator by `intercomm::$inter` where it has one.
macro_rules! whole_reductions {
    ($($blocking:ident / $immediate:ident = $f:ident $(, inter $inter:ident)?;)*) => {
        collective! {$(
            $blocking / $immediate(
                sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: Dtype,
                op: c_int; comm
            ) $(inter(ic, request) {
                let args = (sendbuf, recvbuf, count, datatype, op);
                // SAFETY: the call's arguments (and an immediate call's until it completes).
                unsafe { intercomm::$inter(comm, ic, args, request) }
            })? {
                // SAFETY: the call's own arguments.
                unsafe { whole(coll::$f, (sendbuf, recvbuf), count, datatype, op, comm) }
            }
        )*}
    };
}

whole_reductions! {
    MPI_Allreduce / MPI_Iallreduce = allreduce, inter allreduce;
    MPI_Scan / MPI_Iscan = scan;
    MPI_Exscan / MPI_Iexscan = exscan;
}

// ---- What the bodies share ----

/// A buffer argument before it becomes a buffer: its memory, its datatype (of the `w`
/// forms, one of the pieces' own, never used) and the pieces of it the call sends or
/// receives.
struct Side {
    region: Region,
    dt: Arc<Datatype>,
    pieces: Vec<Piece>,
}

/// The memory of `blocks` of `t` at `p`, None where `p` is MPI_IN_PLACE and that is
/// allowed here (`in_place_ok`).
fn side(
    p: *const c_void,
    t: &Arc<Datatype>,
    blocks: &[(i128, usize)],
    in_place_ok: bool,
) -> Result<Option<Side>> {
    if in_place_ok && raw::in_place(p) {
        return Ok(None);
    }
    Ok(Some(Side {
        region: raw::region(p, t, blocks)?,
        dt: t.clone(),
        pieces: piece::pieces(t, blocks)?,
    }))
}

/// The send and receive buffers of a call, with their pieces. They may share no byte
/// (MPI-3.1 sections 2.3 and 3.10; MPI_IN_PLACE is the way to reuse one), but their
/// extents may interleave: the send buffer is then copied before the receive buffer
/// exists (`raw::source`), so no two slices alias.
///
/// # Safety
/// Each side's region must come from `raw::region` or `raw::pieces_region` for the
/// call's own pointer, counts and datatypes, which by the MPI standard describe memory
/// readable (send) or writable (receive) for `'a`: the call, or until an immediate
/// call's request completes.
unsafe fn buffers<'a>(
    send: Option<Side>,
    recv: Option<Side>,
) -> Result<(Option<Pieced<'a>>, Option<PiecedMut<'a>>)> {
    let s = match send {
        Some(Side { region, dt, pieces }) => {
            let beside = recv.as_ref().map(|r| (&r.region, &r.pieces[..]));
            // SAFETY: forwarded contract; the receive buffer is made after this.
            let source = unsafe { raw::source(region, dt, &pieces, beside) }?;
            Some((source, pieces))
        }
        None => None,
    };
    // SAFETY: forwarded contract; the send side reads memory apart from this region, or
    // its own copy (`raw::source`).
    let r = recv.map(|r| (unsafe { raw::write(r.region, r.dt) }, r.pieces));
    Ok((s, r))
}

/// `n * size` elements, or MPI_ERR_COUNT.
fn times(n: usize, size: usize) -> Result<usize> {
    n.checked_mul(size)
        .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))
}

/// One block (count, displacement) per entry of C arrays of `n` counts and displacements.
///
/// # Safety
/// `counts` and `displs` must point to `n` readable ints when `n > 0`.
unsafe fn blocks_of(
    counts: *const c_int,
    displs: *const c_int,
    n: usize,
    what: (&str, &str),
) -> Result<Blocks> {
    // SAFETY: forwarded contract.
    unsafe {
        blocks(
            raw::array(counts, n, what.0)?,
            raw::array(displs, n, what.1)?,
        )
    }
}

/// `n` C counts.
///
/// # Safety
/// `counts` must point to `n` readable ints when `n > 0`.
unsafe fn counts_of(counts: *const c_int, n: usize, what: &str) -> Result<Vec<usize>> {
    // SAFETY: forwarded contract.
    unsafe { raw::array(counts, n, what) }?
        .iter()
        .map(|&c| cnt(c))
        .collect()
}

/// A `w` side (MPI_Alltoallw, MPI_Neighbor_alltoallw): for each of `n` blocks its
/// count, byte displacement and datatype, and the memory they take at `p` (None:
/// MPI_IN_PLACE, where `in_place_ok`).
///
/// # Safety
/// The three arrays must point to `n` readable entries when `n > 0`.
unsafe fn w_side<D: Copy>(
    p: *const c_void,
    (counts, displs, types): (*const c_int, *const D, *const Dtype),
    n: usize,
    in_place_ok: bool,
) -> Result<Option<Side>>
where
    isize: TryFrom<D>,
{
    if in_place_ok && raw::in_place(p) {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    let (c, d, t) = unsafe {
        (
            raw::array(counts, n, "counts")?,
            raw::array(displs, n, "displacements")?,
            raw::array(types, n, "datatypes")?,
        )
    };
    let mut pieces = Vec::with_capacity(n);
    for i in 0..n {
        let count = cnt(c[i])?;
        // The datatype of a block without data is not looked at (MPI_DATATYPE_NULL is
        // common there).
        let dt = match dt(t[i]) {
            Err(_) if count == 0 => no_data()?,
            t => t?,
        };
        let at = isize::try_from(d[i])
            .map_err(|_| MpiError::new(class::ARG, "displacement too large"))?;
        pieces.push(Piece { at, count, dt });
    }
    let spans: Vec<(isize, usize, &Datatype)> =
        pieces.iter().map(|p| (p.at, p.count, &*p.dt)).collect();
    let region = raw::pieces_region(p, &spans)?;
    // The buffer's own datatype is never used: each piece has its own.
    let dt = pieces.first().map_or_else(no_data, |p| Ok(p.dt.clone()))?;
    Ok(Some(Side { region, dt, pieces }))
}

/// The datatype of a block that has no data (MPI_BYTE).
fn no_data() -> Result<Arc<Datatype>> {
    dt(types::named("MPI_BYTE")?)
}

/// The send and receive buffers of a `w` call (see `buffers`).
///
/// # Safety
/// As `buffers`, for sides from `w_side`.
unsafe fn w_buffers<'a>(
    send: Option<Side>,
    recv: Side,
) -> Result<(Option<Pieced<'a>>, PiecedMut<'a>)> {
    // SAFETY: forwarded contract.
    let (s, r) = unsafe { buffers(send, Some(recv)) }?;
    Ok((s, r.ok_or_else(no_recv)?))
}

// ---- The shells: C arguments to a job ----

/// The buffers of a reduction: `send_count` elements to send (or MPI_IN_PLACE),
/// `recv_count` to receive (MPI-3.1 section 5.9); no receive side where `recv_count`
/// is None (a non-root of MPI_Reduce).
///
/// # Safety
/// As `buffers`, for the call's own pointers.
unsafe fn reduction_buffers<'a>(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    t: &Arc<Datatype>,
    (send_count, recv_count): (usize, Option<usize>),
) -> Result<(Option<Source<'a>>, Option<BufMut<'a>>)> {
    let s = side(sendbuf, t, &[(0, send_count)], true)?;
    // With MPI_IN_PLACE the receive buffer holds the input too.
    let recv_count = recv_count.map(|k| if s.is_none() { k.max(send_count) } else { k });
    let r = match recv_count {
        Some(k) => side(recvbuf, t, &[(0, k)], false)?,
        None => None,
    };
    // SAFETY: forwarded contract.
    let (s, r) = unsafe { buffers(s, r) }?;
    Ok((s.map(|(b, _)| b), r.map(|(b, _)| b)))
}

fn no_recv() -> MpiError {
    MpiError::new(class::BUFFER, "no receive buffer")
}

/// What a side made without MPI_IN_PLACE allowed is never (it is always Some).
fn no_buffer() -> MpiError {
    MpiError::new(class::INTERN, "a buffer argument came out empty")
}

type Whole = for<'a> fn(c_int, Option<Source<'a>>, BufMut<'a>, usize, c_int) -> Result<Job<'a>>;

/// The shell of the reductions with `count` elements on each side.
///
/// # Safety
/// As `buffers`, for the call's own pointers.
unsafe fn whole<'a>(
    f: Whole,
    (sendbuf, recvbuf): (*const c_void, *mut c_void),
    count: c_int,
    datatype: Dtype,
    op: c_int,
    comm: Comm,
) -> Result<Job<'a>> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    // SAFETY: `count` elements each side (MPI-3.1 sections 5.9.6, 5.11).
    let (s, r) = unsafe { reduction_buffers(sendbuf, recvbuf, &t, (n, Some(n))) }?;
    f(comm, s, r.ok_or_else(no_recv)?, n, op)
}

/// A buffer argument of `count` elements, None for MPI_IN_PLACE where `in_place_ok`.
fn counted(
    sendbuf: *const c_void,
    (count, datatype): (c_int, Dtype),
    in_place_ok: bool,
) -> Result<Option<(Side, usize)>> {
    if in_place_ok && raw::in_place(sendbuf) {
        return Ok(None);
    }
    let (t, n) = (dt(datatype)?, cnt(count)?);
    Ok(side(sendbuf, &t, &[(0, n)], false)?.map(|s| (s, n)))
}

/// A buffer argument of `count` elements for each of `ranks` ranks.
fn per_rank(
    p: *const c_void,
    (count, datatype): (c_int, Dtype),
    ranks: usize,
) -> Result<(Side, usize)> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    let r = side(p, &t, &[(0, times(n, ranks)?)], false)?;
    Ok((r.ok_or_else(no_buffer)?, n))
}

/// A side of blocks at displacements (`v` forms): counts and displacements of `ranks`.
///
/// # Safety
/// The arrays must point to `ranks` readable ints.
unsafe fn v_side(
    p: *const c_void,
    (counts, displs, datatype): (*const c_int, *const c_int, Dtype),
    ranks: usize,
    in_place_ok: bool,
) -> Result<Option<(Side, Blocks)>> {
    if in_place_ok && raw::in_place(p) {
        return Ok(None);
    }
    let t = dt(datatype)?;
    // SAFETY: forwarded contract.
    let bl = unsafe { blocks_of(counts, displs, ranks, ("counts", "displacements")) }?;
    Ok(side(p, &t, &bl, false)?.map(|s| (s, bl)))
}

/// A send and a receive buffer with extra data each.
type WithExtra<'a, A, B> = (Option<(Source<'a>, A)>, Option<(BufMut<'a>, B)>);

/// Makes buffers of a send and a receive side that carry extra data (counts, blocks).
///
/// # Safety
/// As `buffers`.
unsafe fn with_extra<'a, A, B>(
    send: Option<(Side, A)>,
    recv: Option<(Side, B)>,
) -> Result<WithExtra<'a, A, B>> {
    let (sa, sx) = send.map_or((None, None), |(s, x)| (Some(s), Some(x)));
    let (ra, rx) = recv.map_or((None, None), |(r, x)| (Some(r), Some(x)));
    // SAFETY: forwarded contract.
    let (s, r) = unsafe { buffers(sa, ra) }?;
    Ok((s.map(|(b, _)| b).zip(sx), r.map(|(b, _)| b).zip(rx)))
}

// ---- Neighbourhood collectives (MPI-3.1 section 7.6) ----

/// A side of a neighbourhood collective: `count` elements for each of `degree`
/// neighbours, one after the other.
fn neighbor_side(
    p: *const c_void,
    (count, datatype): (c_int, Dtype),
    degree: usize,
) -> Result<Side> {
    let (t, n) = (dt(datatype)?, cnt(count)?);
    let bl: Blocks = (0..degree).map(|i| (i as i128 * n as i128, n)).collect();
    side(p, &t, &bl, false)?.ok_or_else(no_buffer)
}

/// The buffers of a neighbourhood collective, with their pieces.
///
/// # Safety
/// As `buffers`.
unsafe fn neighbor_pieces<'a>(send: Side, recv: Side) -> Result<(Pieced<'a>, PiecedMut<'a>)> {
    // SAFETY: forwarded contract.
    let (s, r) = unsafe { buffers(Some(send), Some(recv)) }?;
    Ok((s.ok_or_else(no_buffer)?, r.ok_or_else(no_recv)?))
}

// ---- Local reductions and operations ----

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
