//! Collective operations (MPI-3.1 chapter 5), built on replicated point-to-point in a
//! communicator's own collective context, so they never match user messages and are
//! replicated and fault tolerant like everything else.
//!
//! Algorithms: dissemination barrier; binomial-tree broadcast; binomial-tree reduction in
//! rank order (correct for non-commutative operations), forwarded to the root;
//! all-reduce by recursive doubling (commutative) or reduce plus broadcast; linear gather and scatter at the root; ring
//! all-gather; pairwise-exchange all-to-all; chained scans. The varcount (v) variants use
//! the same algorithms with per-rank block lengths; reduce-scatter is an all-reduce that
//! keeps one block. Must never touch sockets or
//! the engine directly: only the communicator's internal send and receive.

pub mod barrier;
pub mod immediate;
pub mod ops;

use crate::comm::Communicator;
use crate::datatype::Equivalence;
use crate::error::Error;
pub use ops::{MaxLoc, MinLoc, Numeric, Operation, SystemOperation, UserOperation};

/// Tags of the collective context; one per algorithm, so different collectives never
/// match each other's messages.
mod tag {
    pub const BROADCAST: i32 = 2;
    pub const REDUCE: i32 = 3;
    pub const GATHER: i32 = 4;
    pub const SCATTER: i32 = 5;
    pub const ALL_GATHER: i32 = 6;
    pub const ALL_TO_ALL: i32 = 7;
    pub const SCAN: i32 = 8;
    pub const ALL_REDUCE: i32 = 9;
}

fn bytes<T: Equivalence>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

fn expect_len(what: &'static str, got: usize, expected: usize) -> Result<(), Error> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::BufferSize {
            what,
            expected,
            got,
        })
    }
}

fn recv_into<T: Equivalence>(
    comm: &Communicator,
    tag: i32,
    src: u32,
    out: &mut [T],
) -> Result<(), Error> {
    let data = comm.receive_internal(tag, src)?;
    let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
    expect_len("collective message bytes", data.len(), dst.len())?;
    dst.copy_from_slice(&data);
    Ok(())
}

fn shape(comm: &Communicator) -> (u32, u32) {
    (comm.size() as u32, comm.rank() as u32)
}

/// MPI_Bcast: `buf` at `root` is copied into `buf` everywhere (binomial tree).
pub fn broadcast<T: Equivalence>(
    comm: &Communicator,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    let rel = (me + n - root) % n;
    let mut mask = 1u32;
    while mask < n {
        if rel & mask != 0 {
            recv_into(comm, tag::BROADCAST, (rel - mask + root) % n, buf)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            comm.send_internal(tag::BROADCAST, (rel + mask + root) % n, bytes(buf))?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// MPI_Reduce: the element-wise reduction of every rank's `send`, in rank order, lands
/// in `recv` at `root` (`recv` is ignored elsewhere).
pub fn reduce<T: Equivalence, O: Operation<T>>(
    comm: &Communicator,
    root: u32,
    send: &[T],
    recv: Option<&mut [T]>,
    op: &O,
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    let mut acc = send.to_vec();
    let mut child = vec![T::zeroed(); send.len()];
    let mut mask = 1u32;
    while mask < n {
        if me & mask != 0 {
            comm.send_internal(tag::REDUCE, me - mask, bytes(&acc))?;
            break;
        }
        if me + mask < n {
            recv_into(comm, tag::REDUCE, me + mask, &mut child)?;
            op.combine(&mut acc, &child);
        }
        mask <<= 1;
    }
    if root != 0 {
        if me == 0 {
            comm.send_internal(tag::REDUCE, root, bytes(&acc))?;
        } else if me == root {
            recv_into(comm, tag::REDUCE, 0, &mut acc)?;
        }
    }
    if me == root {
        let out = recv.ok_or(Error::BufferSize {
            what: "reduce result at the root",
            expected: send.len(),
            got: 0,
        })?;
        expect_len("reduce result", out.len(), send.len())?;
        out.copy_from_slice(&acc);
    }
    Ok(())
}

/// MPI_Allreduce. Commutative operations use recursive doubling (ranks beyond the
/// largest power of two fold into a partner first and get the result back); every step
/// combines the lower rank's partial on the left, so all ranks compute bit-identical
/// results. Non-commutative operations reduce to rank 0 in rank order, then broadcast.
pub fn all_reduce<T: Equivalence, O: Operation<T>>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
    op: &O,
) -> Result<(), Error> {
    expect_len("all-reduce result", recv.len(), send.len())?;
    let (n, me) = shape(comm);
    if !op.is_commutative() || n == 1 {
        let at_root = (me == 0).then_some(&mut *recv);
        reduce(comm, 0, send, at_root, op)?;
        return broadcast(comm, 0, recv);
    }
    let p = 1u32 << (31 - n.leading_zeros());
    let extra = n - p;
    if me >= p {
        comm.send_internal(tag::ALL_REDUCE, me - p, bytes(send))?;
        return recv_into(comm, tag::ALL_REDUCE, me - p, recv);
    }
    let mut acc = send.to_vec();
    let mut other = vec![T::zeroed(); send.len()];
    if me < extra {
        recv_into(comm, tag::ALL_REDUCE, me + p, &mut other)?;
        op.combine(&mut acc, &other);
    }
    let mut mask = 1u32;
    while mask < p {
        let partner = me ^ mask;
        comm.send_internal(tag::ALL_REDUCE, partner, bytes(&acc))?;
        recv_into(comm, tag::ALL_REDUCE, partner, &mut other)?;
        if partner < me {
            op.combine(&mut other, &acc);
            std::mem::swap(&mut acc, &mut other);
        } else {
            op.combine(&mut acc, &other);
        }
        mask <<= 1;
    }
    if me < extra {
        comm.send_internal(tag::ALL_REDUCE, me + p, bytes(&acc))?;
    }
    recv.copy_from_slice(&acc);
    Ok(())
}

/// MPI_Gather: rank i's `send` lands in block i of `recv` at `root`.
pub fn gather<T: Equivalence>(
    comm: &Communicator,
    root: u32,
    send: &[T],
    recv: Option<&mut [T]>,
) -> Result<(), Error> {
    let counts = uniform(comm, send.len());
    gather_varcount(comm, root, send, recv.map(|r| (r, counts.as_slice())))
}

/// MPI_Scatter: block i of `send` at `root` lands in `recv` at rank i.
pub fn scatter<T: Equivalence>(
    comm: &Communicator,
    root: u32,
    send: Option<&[T]>,
    recv: &mut [T],
) -> Result<(), Error> {
    let counts = uniform(comm, recv.len());
    scatter_varcount(comm, root, send.map(|s| (s, counts.as_slice())), recv)
}

/// MPI_Allgather: every rank's `send` lands in its block of every `recv` (ring).
pub fn all_gather<T: Equivalence>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
) -> Result<(), Error> {
    all_gather_varcount(comm, send, recv, &uniform(comm, send.len()))
}

/// MPI_Alltoall: block j of rank i's `send` lands in block i of rank j's `recv`
/// (pairwise exchange).
pub fn all_to_all<T: Equivalence>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
) -> Result<(), Error> {
    let n = comm.size() as usize;
    if !send.len().is_multiple_of(n) {
        return Err(Error::BufferSize {
            what: "all-to-all input (a multiple of the size)",
            expected: send.len() - send.len() % n,
            got: send.len(),
        });
    }
    let counts = uniform(comm, send.len() / n);
    all_to_all_varcount(comm, send, &counts, recv, &counts)
}

/// MPI_Scan (inclusive) and MPI_Exscan: rank i gets the reduction of ranks 0..=i (or
/// 0..i; rank 0's `recv` is left as it was for the exclusive scan).
pub fn scan<T: Equivalence, O: Operation<T>>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
    op: &O,
    exclusive: bool,
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    expect_len("scan result", recv.len(), send.len())?;
    let mut inclusive = send.to_vec();
    if me > 0 {
        let mut prefix = vec![T::zeroed(); send.len()];
        recv_into(comm, tag::SCAN, me - 1, &mut prefix)?;
        if exclusive {
            recv.copy_from_slice(&prefix);
        }
        op.combine(&mut prefix, send);
        inclusive = prefix;
    }
    if !exclusive {
        recv.copy_from_slice(&inclusive);
    }
    if me + 1 < n {
        comm.send_internal(tag::SCAN, me + 1, bytes(&inclusive))?;
    }
    Ok(())
}

/// Offsets of consecutive blocks of the given lengths, and their total.
fn offsets(counts: &[usize]) -> (Vec<usize>, usize) {
    let mut at = Vec::with_capacity(counts.len());
    let mut total = 0;
    for c in counts {
        at.push(total);
        total += c;
    }
    (at, total)
}

/// The same block length for every rank.
fn uniform(comm: &Communicator, len: usize) -> Vec<usize> {
    vec![len; comm.size() as usize]
}

fn check_counts(comm: &Communicator, counts: &[usize]) -> Result<(), Error> {
    expect_len("counts (one per rank)", counts.len(), comm.size() as usize)
}

/// MPI_Gatherv: rank i's `send` (of `counts[i]` elements) lands at offset
/// `counts[..i].sum()` of `recv` at `root`.
pub fn gather_varcount<T: Equivalence>(
    comm: &Communicator,
    root: u32,
    send: &[T],
    recv: Option<(&mut [T], &[usize])>,
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    if me != root {
        return comm.send_internal(tag::GATHER, root, bytes(send));
    }
    let (out, counts) = recv.ok_or(Error::Usage("gatherv: the root needs a buffer and counts"))?;
    check_counts(comm, counts)?;
    let (at, total) = offsets(counts);
    expect_len("gatherv result", out.len(), total)?;
    for r in 0..n as usize {
        let block = &mut out[at[r]..at[r] + counts[r]];
        if r == me as usize {
            expect_len("gatherv own block", send.len(), counts[r])?;
            block.copy_from_slice(send);
        } else {
            recv_into(comm, tag::GATHER, r as u32, block)?;
        }
    }
    Ok(())
}

/// MPI_Scatterv: the block of `counts[i]` elements at offset `counts[..i].sum()` of
/// `send` at `root` lands in `recv` at rank i.
pub fn scatter_varcount<T: Equivalence>(
    comm: &Communicator,
    root: u32,
    send: Option<(&[T], &[usize])>,
    recv: &mut [T],
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    if me != root {
        return recv_into(comm, tag::SCATTER, root, recv);
    }
    let (src, counts) = send.ok_or(Error::Usage("scatterv: the root needs a buffer and counts"))?;
    check_counts(comm, counts)?;
    let (at, total) = offsets(counts);
    expect_len("scatterv input", src.len(), total)?;
    for r in 0..n as usize {
        let block = &src[at[r]..at[r] + counts[r]];
        if r == me as usize {
            expect_len("scatterv own block", recv.len(), counts[r])?;
            recv.copy_from_slice(block);
        } else {
            comm.send_internal(tag::SCATTER, r as u32, bytes(block))?;
        }
    }
    Ok(())
}

/// MPI_Allgatherv: rank i's `send` (`counts[i]` elements) lands at its offset in every
/// `recv` (ring).
pub fn all_gather_varcount<T: Equivalence>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
    counts: &[usize],
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    check_counts(comm, counts)?;
    let (at, total) = offsets(counts);
    expect_len("allgatherv result", recv.len(), total)?;
    expect_len("allgatherv own block", send.len(), counts[me as usize])?;
    let block = |r: u32| at[r as usize]..at[r as usize] + counts[r as usize];
    recv[block(me)].copy_from_slice(send);
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    for step in 0..n.saturating_sub(1) {
        let out = (me + n - step) % n;
        let inn = (me + 2 * n - step - 1) % n;
        comm.send_internal(tag::ALL_GATHER, right, bytes(&recv[block(out)]))?;
        recv_into(comm, tag::ALL_GATHER, left, &mut recv[block(inn)])?;
    }
    Ok(())
}

/// MPI_Alltoallv: `send_counts[j]` elements at their offset in `send` go to rank j;
/// `recv_counts[i]` elements from rank i land at their offset in `recv`.
pub fn all_to_all_varcount<T: Equivalence>(
    comm: &Communicator,
    send: &[T],
    send_counts: &[usize],
    recv: &mut [T],
    recv_counts: &[usize],
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    check_counts(comm, send_counts)?;
    check_counts(comm, recv_counts)?;
    let (sat, stotal) = offsets(send_counts);
    let (rat, rtotal) = offsets(recv_counts);
    expect_len("alltoallv input", send.len(), stotal)?;
    expect_len("alltoallv result", recv.len(), rtotal)?;
    let sblock = |r: u32| sat[r as usize]..sat[r as usize] + send_counts[r as usize];
    let rblock = |r: u32| rat[r as usize]..rat[r as usize] + recv_counts[r as usize];
    expect_len(
        "alltoallv own block",
        recv_counts[me as usize],
        send_counts[me as usize],
    )?;
    recv[rblock(me)].copy_from_slice(&send[sblock(me)]);
    for step in 1..n {
        let to = (me + step) % n;
        let from = (me + n - step) % n;
        comm.send_internal(tag::ALL_TO_ALL, to, bytes(&send[sblock(to)]))?;
        recv_into(comm, tag::ALL_TO_ALL, from, &mut recv[rblock(from)])?;
    }
    Ok(())
}

/// MPI_Reduce_scatter: the reduction of every rank's `send` (`counts.sum()` elements), of
/// which rank i keeps the `counts[i]` elements at their offset.
pub fn reduce_scatter<T: Equivalence, O: Operation<T>>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
    counts: &[usize],
    op: &O,
) -> Result<(), Error> {
    let (_, me) = shape(comm);
    check_counts(comm, counts)?;
    let (at, total) = offsets(counts);
    expect_len("reduce-scatter input", send.len(), total)?;
    expect_len("reduce-scatter result", recv.len(), counts[me as usize])?;
    let mut all = vec![T::zeroed(); total];
    all_reduce(comm, send, &mut all, op)?;
    recv.copy_from_slice(&all[at[me as usize]..at[me as usize] + recv.len()]);
    Ok(())
}

/// MPI_Reduce_scatter_block: the reduction of every rank's `send` (size x `recv.len()`
/// elements), of which rank i keeps block i.
pub fn reduce_scatter_block<T: Equivalence, O: Operation<T>>(
    comm: &Communicator,
    send: &[T],
    recv: &mut [T],
    op: &O,
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    let k = recv.len();
    expect_len("reduce-scatter input", send.len(), k * n as usize)?;
    let mut all = vec![T::zeroed(); send.len()];
    all_reduce(comm, send, &mut all, op)?;
    recv.copy_from_slice(&all[me as usize * k..(me as usize + 1) * k]);
    Ok(())
}
