//! Collective operations (MPI-3.1 chapter 5) over the volpex communicator's collectives:
//! each function here checks its arguments and describes the collective as a `Job`
//! (`job`): this rank's packed input, a kernel that runs it on a communicator, and where
//! its packed result goes. The same job runs blocking (`job::run`: MPI_Bcast, ...) or
//! starts immediate (`job::start`: MPI_Ibcast, ..., section 5.12), so each collective's
//! semantics are written once for both forms.
//!
//! Data movement (broadcast, gather, scatter, all-gather, all-to-all and their `v` and
//! `w` forms) runs on packed bytes; reductions run on the datatype's element type, or for
//! a user operation on whole elements of any datatype (`reduce`). `MPI_IN_PLACE` arrives
//! here as `None` for the side it replaces (section 5.2.1 lists where it is allowed);
//! the input is then a copy of the receive buffer's data taken at the call. Blocks at
//! displacements (`v` and `w` forms) are pieces of the buffer (`datatype::piece::Piece`),
//! packed in rank order. The neighbourhood collectives of process topologies are in `neighbor`.
//!
//! Owns the MPI semantics of each collective. Must never hold a raw pointer (`raw`
//! made the buffers) nor a collective algorithm (they are `volpex`'s).

pub mod job;
pub mod neighbor;
pub mod reduce;

use std::borrow::Cow;
use std::os::raw::c_int;

use volpex::Communicator;

use crate::datatype::piece::{pack, pieces, Piece, Pieced, PiecedMut, Source};
use crate::datatype::{Buf, BufMut};
use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::state;
use job::{Job, Output};
use reduce::{Combiner, Red};

/// Blocks of a `v` collective: (first element, count) per rank.
pub type Blocks = Vec<(i128, usize)>;

fn check_root(c: &Communicator, root: c_int) -> Result<()> {
    if root < 0 || root >= c.size() {
        return Err(MpiError::new(
            class::ROOT,
            format!("invalid root {root} (communicator size {})", c.size()),
        ));
    }
    Ok(())
}

fn in_place_not_here() -> MpiError {
    MpiError::new(class::BUFFER, "MPI_IN_PLACE is only for the root")
}

/// The current data of `pieces` of a receive buffer, copied (the input of a collective
/// called with MPI_IN_PLACE).
fn current(buf: &BufMut<'_>, pieces: &[Piece]) -> Result<Cow<'static, [u8]>> {
    let b = Buf::new(&*buf.mem, buf.origin, buf.dt.clone());
    Ok(Cow::Owned(pack(&b, pieces)?.into_owned()))
}

/// The packed length of `pieces`, one entry each.
fn lengths(pieces: &[Piece]) -> Result<Vec<usize>> {
    pieces.iter().map(Piece::bytes).collect()
}

fn total(counts: &[usize]) -> usize {
    counts.iter().sum()
}

/// `n` blocks of `count` elements, one after the other.
fn uniform(n: usize, count: usize) -> Blocks {
    (0..n).map(|i| (i as i128 * count as i128, count)).collect()
}

/// MPI_Barrier (MPI-3.1 section 5.3) and MPI_Ibarrier (section 5.12.1).
pub fn barrier(comm: c_int) -> Result<Job<'static>> {
    Job::new(
        comm,
        Cow::Borrowed(&[]),
        None,
        0,
        Box::new(|c, _, _| c.barrier()),
    )
}

/// MPI_Bcast (MPI-3.1 section 5.4): `count` elements of `buf` from `root`.
pub fn bcast<'a>(comm: c_int, buf: BufMut<'a>, count: usize, root: c_int) -> Result<Job<'a>> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    let job = Job::new(
        comm,
        Cow::Borrowed(&[]),
        Some(Output::whole(buf, count)),
        0,
        Box::new(move |c, _, b| c.process_at_rank(root).broadcast_into(b)),
    )?;
    Ok(if c.rank() == root {
        job.preloaded()
    } else {
        job
    })
}

/// The job of a reduction over `count` elements: the input is `send`, or with
/// MPI_IN_PLACE (`send` None) the receive buffer's first `count`; the result fills the
/// receive buffer's first `out_count` (without a receive buffer it is dropped).
fn reduction<'a>(
    comm: c_int,
    red: Red,
    op: c_int,
    send: Option<Source<'a>>,
    recv: Option<BufMut<'a>>,
    (count, out_count): (usize, usize),
) -> Result<Job<'a>> {
    let dt = match (&send, &recv) {
        (_, Some(r)) => r.dt.clone(),
        (Some(s), None) => s.dt().clone(),
        (None, None) => return Err(in_place_not_here()),
    };
    let comb = Combiner::new(op, &dt)?;
    let input = match (send, &recv) {
        (Some(s), _) => s.first(count)?,
        (None, Some(r)) => current(r, &[Piece::elements(&dt, 0, count)?])?,
        (None, None) => return Err(in_place_not_here()),
    };
    let out_len = dt.bytes_of(out_count)?;
    Job::new(
        comm,
        input,
        recv.map(|r| Output::whole(r, out_count)),
        out_len,
        Box::new(move |c, s, r| comb.reduce(c, &red, s, r)),
    )
}

/// MPI_Reduce (MPI-3.1 section 5.9.1): `recv` is the root's buffer (None elsewhere),
/// `send` None is MPI_IN_PLACE at the root.
pub fn reduce<'a>(
    comm: c_int,
    send: Option<Source<'a>>,
    recv: Option<BufMut<'a>>,
    count: usize,
    op: c_int,
    root: c_int,
) -> Result<Job<'a>> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    let at_root = c.rank() == root;
    let recv = recv.filter(|_| at_root);
    if !at_root && send.is_none() {
        return Err(in_place_not_here());
    }
    let red = Red::Reduce { root, at_root };
    let out = if at_root { count } else { 0 };
    reduction(comm, red, op, send, recv, (count, out))
}

/// MPI_Allreduce (MPI-3.1 section 5.9.6); `send` None is MPI_IN_PLACE.
pub fn allreduce<'a>(
    comm: c_int,
    send: Option<Source<'a>>,
    recv: BufMut<'a>,
    count: usize,
    op: c_int,
) -> Result<Job<'a>> {
    reduction(comm, Red::All, op, send, Some(recv), (count, count))
}

/// MPI_Scan (MPI-3.1 section 5.11.1); `send` None is MPI_IN_PLACE.
pub fn scan<'a>(
    comm: c_int,
    send: Option<Source<'a>>,
    recv: BufMut<'a>,
    count: usize,
    op: c_int,
) -> Result<Job<'a>> {
    reduction(comm, Red::Scan, op, send, Some(recv), (count, count))
}

/// MPI_Exscan (MPI-3.1 section 5.11.2): rank 0's receive buffer is left as it was (the
/// standard leaves it undefined); `send` None is MPI_IN_PLACE.
pub fn exscan<'a>(
    comm: c_int,
    send: Option<Source<'a>>,
    recv: BufMut<'a>,
    count: usize,
    op: c_int,
) -> Result<Job<'a>> {
    let mut job = reduction(comm, Red::Exscan, op, send, Some(recv), (count, count))?;
    if state::comm(comm)?.rank() == 0 {
        job.output = None;
    }
    Ok(job)
}

/// MPI_Reduce_scatter_block (MPI-3.1 section 5.10.1): `count` elements to each rank; with
/// MPI_IN_PLACE (`send` None) the input is the whole receive buffer.
pub fn reduce_scatter_block<'a>(
    comm: c_int,
    send: Option<Source<'a>>,
    recv: BufMut<'a>,
    count: usize,
    op: c_int,
) -> Result<Job<'a>> {
    let n = state::comm(comm)?.size() as usize;
    let all = count
        .checked_mul(n)
        .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
    reduction(comm, Red::ScatterBlock, op, send, Some(recv), (all, count))
}

/// MPI_Reduce_scatter (MPI-3.1 section 5.10.2): rank i gets `counts[i]` elements; with
/// MPI_IN_PLACE (`send` None) the input is the whole receive buffer.
pub fn reduce_scatter<'a>(
    comm: c_int,
    send: Option<Source<'a>>,
    recv: BufMut<'a>,
    counts: &[usize],
    op: c_int,
) -> Result<Job<'a>> {
    let me = state::comm(comm)?.rank() as usize;
    let size = recv.dt.size;
    let bytes = counts.iter().map(|&n| n * size).collect();
    let mine = counts.get(me).copied().unwrap_or(0);
    let red = Red::Scatter(bytes);
    reduction(comm, red, op, send, Some(recv), (total(counts), mine))
}

/// MPI_Reduce_local (MPI-3.1 section 5.9.7): `inout = input op inout`, `count` elements.
pub fn reduce_local(
    input: &Buf<'_>,
    inout: &mut BufMut<'_>,
    count: usize,
    op: c_int,
) -> Result<()> {
    let comb = Combiner::new(op, &inout.dt)?;
    let data = input.bytes(0, count)?;
    let mut acc = inout.bytes(0, count)?.into_owned();
    comb.local(&data, &mut acc)?;
    inout.write(0, count, &acc)
}

/// MPI_Gather (MPI-3.1 section 5.5): `recv` (buffer, count per rank) only at the root;
/// `send` None is MPI_IN_PLACE at the root.
pub fn gather<'a>(
    comm: c_int,
    send: Option<(Source<'a>, usize)>,
    recv: Option<(BufMut<'a>, usize)>,
    root: c_int,
) -> Result<Job<'a>> {
    let n = state::comm(comm)?.size() as usize;
    gatherv(comm, send, recv.map(|(b, k)| (b, uniform(n, k))), root)
}

/// MPI_Gatherv (MPI-3.1 section 5.5): the root's blocks per rank.
pub fn gatherv<'a>(
    comm: c_int,
    send: Option<(Source<'a>, usize)>,
    recv: Option<(BufMut<'a>, Blocks)>,
    root: c_int,
) -> Result<Job<'a>> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    match recv {
        Some((rbuf, blocks)) if c.rank() == root => {
            let ps = pieces(&rbuf.dt, &blocks)?;
            let input = match send {
                Some((s, k)) => s.first(k)?,
                None => current(&rbuf, &ps[root as usize..root as usize + 1])?,
            };
            let counts = lengths(&ps)?;
            let kernel: job::Kernel = Box::new(move |c, s, r| {
                c.process_at_rank(root)
                    .gather_varcount_into_root(s, r, &counts)
            });
            Job::new(comm, input, Some(Output::new(rbuf, ps)), 0, kernel)
        }
        _ => {
            let (s, k) = send.ok_or_else(in_place_not_here)?;
            let kernel: job::Kernel =
                Box::new(move |c, s, _| c.process_at_rank(root).gather_varcount_into(s));
            Job::new(comm, s.first(k)?, None, 0, kernel)
        }
    }
}

/// MPI_Scatter (MPI-3.1 section 5.6): `send` (buffer, count per rank) only at the root;
/// `recv` None is MPI_IN_PLACE at the root.
pub fn scatter<'a>(
    comm: c_int,
    send: Option<(Source<'a>, usize)>,
    recv: Option<(BufMut<'a>, usize)>,
    root: c_int,
) -> Result<Job<'a>> {
    let n = state::comm(comm)?.size() as usize;
    scatterv(comm, send.map(|(b, k)| (b, uniform(n, k))), recv, root)
}

/// MPI_Scatterv (MPI-3.1 section 5.6): the root's blocks per rank.
pub fn scatterv<'a>(
    comm: c_int,
    send: Option<(Source<'a>, Blocks)>,
    recv: Option<(BufMut<'a>, usize)>,
    root: c_int,
) -> Result<Job<'a>> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    let output = recv.map(|(b, k)| Output::whole(b, k));
    match send {
        Some((s, blocks)) if c.rank() == root => {
            let ps = pieces(s.dt(), &blocks)?;
            let counts = lengths(&ps)?;
            let mine = counts.get(root as usize).copied().unwrap_or(0);
            let kernel: job::Kernel = Box::new(move |c, s, r| {
                c.process_at_rank(root)
                    .scatter_varcount_into_root(s, &counts, r)
            });
            Job::new(comm, s.pack(&ps)?, output, mine, kernel)
        }
        _ => {
            let out = output.ok_or_else(in_place_not_here)?;
            let kernel: job::Kernel =
                Box::new(move |c, _, r| c.process_at_rank(root).scatter_varcount_into(r));
            Job::new(comm, Cow::Borrowed(&[]), Some(out), 0, kernel)
        }
    }
}

/// MPI_Allgather (MPI-3.1 section 5.7): `recv` is (buffer, count per rank); `send` None
/// is MPI_IN_PLACE.
pub fn allgather<'a>(
    comm: c_int,
    send: Option<(Source<'a>, usize)>,
    (rbuf, rk): (BufMut<'a>, usize),
) -> Result<Job<'a>> {
    let n = state::comm(comm)?.size() as usize;
    allgatherv(comm, send, (rbuf, uniform(n, rk)))
}

/// MPI_Allgatherv (MPI-3.1 section 5.7): the blocks per rank.
pub fn allgatherv<'a>(
    comm: c_int,
    send: Option<(Source<'a>, usize)>,
    (rbuf, blocks): (BufMut<'a>, Blocks),
) -> Result<Job<'a>> {
    let me = state::comm(comm)?.rank() as usize;
    let ps = pieces(&rbuf.dt, &blocks)?;
    let input = match send {
        Some((s, k)) => s.first(k)?,
        None => current(&rbuf, &ps[me..me + 1])?,
    };
    let counts = lengths(&ps)?;
    let kernel: job::Kernel = Box::new(move |c, s, r| c.all_gather_varcount_into(s, r, &counts));
    Job::new(comm, input, Some(Output::new(rbuf, ps)), 0, kernel)
}

/// MPI_Alltoall (MPI-3.1 section 5.8): each side is (buffer, count per rank); `send`
/// None is MPI_IN_PLACE.
pub fn alltoall<'a>(
    comm: c_int,
    send: Option<(Source<'a>, usize)>,
    (rbuf, rk): (BufMut<'a>, usize),
) -> Result<Job<'a>> {
    let n = state::comm(comm)?.size() as usize;
    let send = send.map(|(s, k)| (s, uniform(n, k)));
    alltoallv(comm, send, (rbuf, uniform(n, rk)))
}

/// MPI_Alltoallv (MPI-3.1 section 5.8): the blocks per rank of each side.
pub fn alltoallv<'a>(
    comm: c_int,
    send: Option<(Source<'a>, Blocks)>,
    (rbuf, rblocks): (BufMut<'a>, Blocks),
) -> Result<Job<'a>> {
    let send = send
        .map(|(s, b)| pieces(s.dt(), &b).map(|ps| (s, ps)))
        .transpose()?;
    let rps = pieces(&rbuf.dt, &rblocks)?;
    alltoallw(comm, send, (rbuf, rps))
}

/// MPI_Alltoallw (MPI-3.1 section 5.8): one piece per rank on each side, each with its
/// own datatype and byte displacement; `send` None is MPI_IN_PLACE (the input is the
/// receive pieces' data).
pub fn alltoallw<'a>(
    comm: c_int,
    send: Option<Pieced<'a>>,
    (rbuf, rps): PiecedMut<'a>,
) -> Result<Job<'a>> {
    let n = state::comm(comm)?.size() as usize;
    if rps.len() != n || send.as_ref().is_some_and(|(_, p)| p.len() != n) {
        return Err(MpiError::new(class::ARG, "one block per rank"));
    }
    let rc = lengths(&rps)?;
    let (input, sc) = match send {
        Some((s, ps)) => (s.pack(&ps)?, lengths(&ps)?),
        None => (current(&rbuf, &rps)?, rc.clone()),
    };
    let kernel: job::Kernel = Box::new(move |c, s, r| c.all_to_all_varcount_into(s, &sc, r, &rc));
    Job::new(comm, input, Some(Output::new(rbuf, rps)), 0, kernel)
}
