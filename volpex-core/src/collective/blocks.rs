//! Collectives that move blocks between ranks without combining them (MPI-3.1 sections
//! 5.5 to 5.8): gather, scatter, all-gather and all-to-all, and their varying-count
//! forms, plus the block arithmetic (`offsets`, `uniform`, `check_counts`) that
//! reduce-scatter shares.
//!
//! Owns these algorithms only. Must never reach past `PointToPoint` (no communicator,
//! engine or socket), and never complete receives in any but a fixed order.

use crate::error::Error;
use bytemuck::Pod;

use super::p2p::{self, post};
use super::{broadcast_with, expect_len, limit, tag, PointToPoint};

/// MPI_Gather (MPI-3.1 section 5.5): rank i's `send` lands in block i of `recv` at
/// `root` (flat tree, as `gather_varcount`).
pub fn gather<T: Pod>(
    comm: &dyn PointToPoint,
    root: u32,
    send: &[T],
    recv: Option<&mut [T]>,
) -> Result<(), Error> {
    let counts = uniform(comm, send.len());
    gather_varcount(comm, root, send, recv.map(|r| (r, counts.as_slice())))
}

/// MPI_Scatter (MPI-3.1 section 5.6): block i of `send` at `root` lands in `recv` at
/// rank i (flat tree, as `scatter_varcount`).
pub fn scatter<T: Pod>(
    comm: &dyn PointToPoint,
    root: u32,
    send: Option<&[T]>,
    recv: &mut [T],
) -> Result<(), Error> {
    let counts = uniform(comm, recv.len());
    scatter_varcount(comm, root, send.map(|s| (s, counts.as_slice())), recv)
}

/// MPI_Allgather (MPI-3.1 section 5.7): every rank's `send` lands in its block of every
/// `recv` (as `all_gather_varcount`).
pub fn all_gather<T: Pod>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv: &mut [T],
) -> Result<(), Error> {
    all_gather_varcount(comm, send, recv, &uniform(comm, send.len()))
}

/// MPI_Alltoall (MPI-3.1 section 5.8): block j of rank i's `send` lands in block i of
/// rank j's `recv`. Up to `limit::ALL_TO_ALL_ROOT_BYTES` in all (the size times each
/// rank's `send`), through rank 0: a gather of every rank's blocks, then a scatter of
/// each rank's (2(n - 1) messages instead of n(n - 1), and each rank's pull for its part
/// rides with its contribution). Otherwise as `all_to_all_varcount`.
pub fn all_to_all<T: Pod>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv: &mut [T],
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let n = n as usize;
    if !send.len().is_multiple_of(n) {
        return Err(Error::BufferSize {
            what: "all-to-all input (a multiple of the size)",
            expected: send.len() - send.len() % n,
            got: send.len(),
        });
    }
    let block = send.len() / n;
    if n == 1 || std::mem::size_of_val(send) * n > limit::ALL_TO_ALL_ROOT_BYTES {
        let counts = uniform(comm, block);
        return all_to_all_varcount(comm, send, &counts, recv, &counts);
    }
    expect_len("all-to-all result", recv.len(), send.len())?;
    if me != 0 {
        gather(comm, 0, send, None)?;
        return scatter(comm, 0, None, recv);
    }
    // Rank i's blocks, one after the other; then, for each rank j, block j of each.
    let mut all = vec![T::zeroed(); n * send.len()];
    gather(comm, 0, send, Some(&mut all))?;
    let mut out = vec![T::zeroed(); all.len()];
    for j in 0..n {
        for i in 0..n {
            let (to, from) = ((j * n + i) * block, (i * n + j) * block);
            out[to..to + block].copy_from_slice(&all[from..from + block]);
        }
    }
    scatter(comm, 0, Some(&out), recv)
}

/// Offsets of consecutive blocks of the given lengths, and their total.
pub(super) fn offsets(counts: &[usize]) -> (Vec<usize>, usize) {
    let mut at = Vec::with_capacity(counts.len());
    let mut total = 0;
    for c in counts {
        at.push(total);
        total += c;
    }
    (at, total)
}

/// The same block length for every rank.
pub(super) fn uniform(comm: &dyn PointToPoint, len: usize) -> Vec<usize> {
    vec![len; comm.shape().0 as usize]
}

pub(super) fn check_counts(comm: &dyn PointToPoint, counts: &[usize]) -> Result<(), Error> {
    expect_len(
        "counts (one per rank)",
        counts.len(),
        comm.shape().0 as usize,
    )
}

/// MPI_Gatherv (MPI-3.1 section 5.5): rank i's `send` (of `counts[i]` elements) lands
/// at offset `counts[..i].sum()` of `recv` at `root`. Flat tree: the root posts every
/// receive, then waits for them together, each landing straight in place.
pub fn gather_varcount<T: Pod>(
    comm: &dyn PointToPoint,
    root: u32,
    send: &[T],
    recv: Option<(&mut [T], &[usize])>,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    if me != root {
        return p2p::send(comm, tag::GATHER, root, send);
    }
    let (out, counts) = recv.ok_or(Error::Usage("gatherv: the root needs a buffer and counts"))?;
    check_counts(comm, counts)?;
    let (_, total) = offsets(counts);
    expect_len("gatherv result", out.len(), total)?;
    expect_len("gatherv own block", send.len(), counts[me as usize])?;
    let mut posted = Vec::with_capacity(n as usize - 1);
    for r in (0..n).filter(|&r| r != me) {
        posted.push((r as usize, post(comm, tag::GATHER, r)?));
    }
    let mut blocks = split_blocks(out, counts);
    if let Some(own) = blocks[me as usize].take() {
        own.copy_from_slice(send);
    }
    let waits = posted
        .into_iter()
        .filter_map(|(r, p)| Some((p, blocks[r].take()?)))
        .collect();
    p2p::into_all(comm, waits)
}

/// MPI_Scatterv (MPI-3.1 section 5.6): the block of `counts[i]` elements at offset
/// `counts[..i].sum()` of `send` at `root` lands in `recv` at rank i. Flat tree: the
/// root's sends are buffered, so it sends every block at once.
pub fn scatter_varcount<T: Pod>(
    comm: &dyn PointToPoint,
    root: u32,
    send: Option<(&[T], &[usize])>,
    recv: &mut [T],
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    if me != root {
        return p2p::recv(comm, tag::SCATTER, root, recv);
    }
    let (src, counts) = send.ok_or(Error::Usage("scatterv: the root needs a buffer and counts"))?;
    check_counts(comm, counts)?;
    let (at, total) = offsets(counts);
    expect_len("scatterv input", src.len(), total)?;
    expect_len("scatterv own block", recv.len(), counts[me as usize])?;
    for i in 1..n {
        let r = ((me + i) % n) as usize;
        p2p::send(comm, tag::SCATTER, r as u32, &src[at[r]..at[r] + counts[r]])?;
    }
    recv.copy_from_slice(&src[at[me as usize]..at[me as usize] + counts[me as usize]]);
    Ok(())
}

/// MPI_Allgatherv (MPI-3.1 section 5.7): rank i's `send` (`counts[i]` elements) lands at
/// its offset in every `recv`. Below `limit::GATHER_BROADCAST_BYTES` in all, a gather to
/// rank 0 and a broadcast (each child's pull for the broadcast rides with its part);
/// from there a ring: in n - 1 steps each rank passes on to the next the block it got in
/// the step before, with every receive posted up front.
pub fn all_gather_varcount<T: Pod>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv: &mut [T],
    counts: &[usize],
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    check_counts(comm, counts)?;
    let (at, total) = offsets(counts);
    expect_len("allgatherv result", recv.len(), total)?;
    expect_len("allgatherv own block", send.len(), counts[me as usize])?;
    if std::mem::size_of_val(recv) < limit::GATHER_BROADCAST_BYTES {
        gather_varcount(comm, 0, send, (me == 0).then_some((&mut *recv, counts)))?;
        return broadcast_with(comm, tag::ALL_GATHER, 0, recv);
    }
    let block = |r: u32| at[r as usize]..at[r as usize] + counts[r as usize];
    recv[block(me)].copy_from_slice(send);
    let (right, left) = ((me + 1) % n, (me + n - 1) % n);
    let mut posted = Vec::with_capacity(n as usize - 1);
    for _ in 1..n {
        posted.push(post(comm, tag::ALL_GATHER, left)?);
    }
    for (step, r) in (0..n).zip(posted) {
        let out = (me + n - step) % n;
        let inn = (me + 2 * n - step - 1) % n;
        p2p::send(comm, tag::ALL_GATHER, right, &recv[block(out)])?;
        r.into(&mut recv[block(inn)])?;
    }
    Ok(())
}

/// MPI_Alltoallv (MPI-3.1 section 5.8): `send_counts[j]` elements at their offset in
/// `send` go to rank j; `recv_counts[i]` elements from rank i land at their offset in
/// `recv`. Every block goes straight to its rank, in the pairwise-exchange order (to
/// rank + 1, rank + 2, ..., from rank - 1, rank - 2, ..., so no rank is everyone's first
/// target), all sends and all receives at once: a rank sends everything and then posts
/// its receives, or, when it gets a block of `limit::POST_FIRST_BYTES` or more, posts
/// first; the receives complete together, each landing in place whichever comes first.
pub fn all_to_all_varcount<T: Pod>(
    comm: &dyn PointToPoint,
    send: &[T],
    send_counts: &[usize],
    recv: &mut [T],
    recv_counts: &[usize],
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    check_counts(comm, send_counts)?;
    check_counts(comm, recv_counts)?;
    let (sat, stotal) = offsets(send_counts);
    let (_, rtotal) = offsets(recv_counts);
    expect_len("alltoallv input", send.len(), stotal)?;
    expect_len("alltoallv result", recv.len(), rtotal)?;
    let sblock = |r: u32| sat[r as usize]..sat[r as usize] + send_counts[r as usize];
    expect_len(
        "alltoallv own block",
        recv_counts[me as usize],
        send_counts[me as usize],
    )?;
    let largest = recv_counts.iter().max().copied().unwrap_or(0) * std::mem::size_of::<T>();
    let post_first = largest >= limit::POST_FIRST_BYTES;
    let sends: Vec<(u32, &[T])> = (1..n)
        .map(|step| {
            let to = (me + step) % n;
            (to, &send[sblock(to)])
        })
        .collect();
    if !post_first {
        for &(to, block) in &sends {
            p2p::send(comm, tag::ALL_TO_ALL, to, block)?;
        }
    }
    let mut posted = Vec::with_capacity(n as usize - 1);
    for step in 1..n {
        let from = (me + n - step) % n;
        posted.push((from, post(comm, tag::ALL_TO_ALL, from)?));
    }
    let mut blocks = split_blocks(recv, recv_counts);
    let own = blocks[me as usize].take();
    let waits = posted
        .into_iter()
        .filter_map(|(from, r)| Some((r, blocks[from as usize].take()?)))
        .collect();
    let sends = if post_first { &sends[..] } else { &[] };
    p2p::exchange(comm, tag::ALL_TO_ALL, sends, waits)?;
    if let Some(own) = own {
        own.copy_from_slice(&send[sblock(me)]);
    }
    Ok(())
}

/// `buf` cut into consecutive blocks of `counts` elements (which must fit).
fn split_blocks<'b, T>(mut buf: &'b mut [T], counts: &[usize]) -> Vec<Option<&'b mut [T]>> {
    counts
        .iter()
        .map(|&c| {
            let (block, rest) = std::mem::take(&mut buf).split_at_mut(c);
            buf = rest;
            Some(block)
        })
        .collect()
}
