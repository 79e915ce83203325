//! Collective operations (MPI-3.1 chapter 5), built on replicated point-to-point in a
//! communicator's own collective context, so they never match user messages and are
//! replicated and fault tolerant like everything else. Must never touch sockets, the
//! engine or the communicators: the algorithms run on `PointToPoint` (`p2p`), a narrow
//! interface of their own that `comm` implements, and nothing here imports `comm`.
//!
//! Every rank of a call takes the same algorithm: the choice depends only on what MPI
//! requires to agree (the size, counts, root, operation and element type). Each rank
//! completes its receives in a fixed order, so the replicas of a rank do the same thing.
//! Reductions give every rank the same bits: each element is combined in one fixed order
//! by one rank, which hands the result to the others.
//!
//! Why the algorithms differ from a push-based MPI: a receiver pulls every message, so
//! each message costs the receiver a pull and the sender the data, unless the pull rides
//! with data going the other way (the runtime asks for a stream's next message as soon
//! as the application takes one, in the same write as its next send). Trees in which a
//! child sends to its parent and then receives from it (reduce then broadcast, gather
//! then broadcast) pay for about one write per message, while exchanges between
//! changing partners (recursive doubling, dissemination, all-to-one-to-all direct
//! exchanges) pay for two. With more ranks than cores the writes are what costs time,
//! so small operations use trees; large ones use algorithms that move fewer bytes
//! (recursive halving, rings), whose messages are worth their pulls. The switch points
//! are in `limit`.
//!
//! Files: this one (broadcast, reductions, scan, reduce-scatter), `blocks` (gather,
//! scatter, all-gather, all-to-all), `tree` and `halving` (the algorithms they share),
//! `barrier`, `neighbor` (the exchanges of process topologies), `immediate` (the same on
//! a thread of their own), `ops` (operations), `p2p` (`PointToPoint`, all they run on).

pub mod barrier;
mod blocks;
mod halving;
pub mod immediate;
pub mod neighbor;
pub mod ops;
mod p2p;
mod tree;

use crate::error::Error;
use bytemuck::Pod;
pub use ops::{MaxLoc, MinLoc, Numeric, Operation, SystemOperation, UserOperation};

pub use blocks::{
    all_gather, all_gather_varcount, all_to_all, all_to_all_varcount, gather, gather_varcount,
    scatter, scatter_varcount,
};
use blocks::{check_counts, offsets, uniform};
use halving::{even_bounds, Members};
use p2p::post;
pub use p2p::PointToPoint;

/// Tags of the collective context: one per collective (and phase), so a collective's
/// messages are told apart from those of the next collective by order alone. Collectives
/// built from others (barrier, small all-reduce, ...) use their own tag for every part:
/// a receiver asks for the next message of a stream as it takes one (speculative pull),
/// so two streams of back-to-back messages (a barrier's release, then a broadcast from
/// the same root) would find that pull not yet at the sender and pay a round trip.
mod tag {
    pub const BARRIER: i32 = 1;
    pub const BROADCAST: i32 = 2;
    pub const REDUCE: i32 = 3;
    pub const GATHER: i32 = 4;
    pub const SCATTER: i32 = 5;
    pub const ALL_GATHER: i32 = 6;
    pub const ALL_TO_ALL: i32 = 7;
    pub const SCAN: i32 = 8;
    pub const ALL_REDUCE: i32 = 9;
    pub const REDUCE_SCATTER: i32 = 10;
    /// The reduced parts of a large reduce, on their way to the root.
    pub const REDUCE_PARTS: i32 = 11;
    /// Neighbourhood exchanges: this tag plus the slot of the message.
    pub const NEIGHBOR: i32 = 16;
}

/// Where the algorithms switch: `config::collective`.
pub(crate) use crate::config::collective as limit;

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

/// MPI_Bcast (MPI-3.1 section 5.4): `buf` at `root` is copied into `buf` everywhere.
/// Flat tree (the root sends to every rank) up to `limit::FLAT_BYTES` on at most
/// `limit::FLAT_RANKS` ranks; scatter plus ring all-gather (van de Geijn) from
/// `limit::SCATTER_BYTES` on at least `limit::SCATTER_RANKS` ranks (and at least one
/// element per rank); otherwise a binomial tree.
pub fn broadcast<T: Pod>(comm: &dyn PointToPoint, root: u32, buf: &mut [T]) -> Result<(), Error> {
    broadcast_with(comm, tag::BROADCAST, root, buf)
}

/// `broadcast` on the streams of `tag`.
fn broadcast_with<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, _) = comm.shape();
    let bytes = std::mem::size_of_val(buf);
    if n == 1 {
        Ok(())
    } else if n <= limit::FLAT_RANKS && bytes <= limit::FLAT_BYTES {
        tree::flat(comm, tag, root, buf)
    } else if n >= limit::SCATTER_RANKS && bytes >= limit::SCATTER_BYTES && buf.len() >= n as usize
    {
        tree::scatter_ring(comm, tag, root, buf)
    } else {
        tree::binomial(comm, tag, root, buf)
    }
}

/// MPI_Reduce (MPI-3.1 section 5.9.1): the element-wise reduction of every rank's `send`
/// lands in `recv` at `root` (`recv` is ignored elsewhere). Commutative operations from
/// `limit::HALVING_BYTES` (and at least one element, `op.granule()` values, per rank):
/// reduce-scatter by recursive halving, then every part straight to the root
/// (Rabenseifner). Up to
/// `limit::FLAT_BYTES` on at most `limit::FLAT_RANKS` ranks, a flat tree: every rank
/// sends to the root, which combines all in rank order. Otherwise a binomial tree, each
/// rank combining its children's partials in rank order: rooted at the root for
/// commutative operations, at rank 0 (which forwards the result) for the others.
pub fn reduce<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    root: u32,
    send: &[T],
    recv: Option<&mut [T]>,
    op: &O,
) -> Result<(), Error> {
    reduce_with(comm, tag::REDUCE, root, send, recv, op)
}

/// `reduce` on the streams of `tag` (the recursive halving keeps its own tags).
fn reduce_with<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    tag: i32,
    root: u32,
    send: &[T],
    recv: Option<&mut [T]>,
    op: &O,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let out = if me == root {
        let out = recv.ok_or(Error::BufferSize {
            what: "reduce result at the root",
            expected: send.len(),
            got: 0,
        })?;
        expect_len("reduce result", out.len(), send.len())?;
        Some(out)
    } else {
        None
    };
    let bytes = std::mem::size_of_val(send);
    if op.is_commutative()
        && bytes >= limit::HALVING_BYTES
        && send.len() / op.granule() >= n as usize
    {
        reduce_halving(comm, root, send, out, op)
    } else if n <= limit::FLAT_RANKS && bytes <= limit::FLAT_BYTES {
        tree::reduce_flat(comm, tag, root, send, out, op)
    } else {
        tree::reduce_binomial(comm, tag, root, send, out, op)
    }
}

/// Reduce for large vectors of a commutative operation: reduce-scatter by recursive
/// halving, then each member's part straight into the root's result.
fn reduce_halving<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    root: u32,
    send: &[T],
    out: Option<&mut [T]>,
    op: &O,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let m = Members::of(n);
    let bounds = even_bounds(send.len(), m.p as usize, op.granule());
    let part = |k: u32| bounds[k as usize]..bounds[k as usize + 1];
    // The root posts its receives first, so they wait at the members.
    let mut parts = Vec::new();
    if out.is_some() {
        for k in (0..m.p).filter(|&k| m.rank(k) != me) {
            parts.push((k, post(comm, tag::REDUCE_PARTS, m.rank(k))?));
        }
    }
    let mut acc = send.to_vec();
    let member = halving::reduce_scatter(comm, tag::REDUCE, &mut acc, &bounds, op)?;
    if let Some(k) = member.filter(|_| me != root) {
        p2p::send(comm, tag::REDUCE_PARTS, root, &acc[part(k)])?;
    }
    if let Some(out) = out {
        if let Some(k) = member {
            out[part(k)].copy_from_slice(&acc[part(k)]);
        }
        for (k, r) in parts {
            r.into(&mut out[part(k)])?;
        }
    }
    Ok(())
}

/// MPI_Allreduce (MPI-3.1 section 5.9.6): the reduction of every rank's `send` lands in
/// every rank's `recv`, the same bits everywhere. Commutative operations from
/// `limit::HALVING_BYTES` (and at least one element per rank): reduce-scatter by
/// recursive halving plus all-gather by recursive doubling (Rabenseifner), ranks beyond
/// the largest power of two first handing their vectors to a partner (and getting the
/// result back). Otherwise `reduce` to rank 0 (a binomial tree in rank order, so right
/// for non-commutative operations) and `broadcast` from it.
pub fn all_reduce<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv: &mut [T],
    op: &O,
) -> Result<(), Error> {
    expect_len("all-reduce result", recv.len(), send.len())?;
    let (n, me) = comm.shape();
    if n == 1 {
        recv.copy_from_slice(send);
        return Ok(());
    }
    if op.is_commutative()
        && std::mem::size_of_val(send) >= limit::HALVING_BYTES
        && send.len() / op.granule() >= n as usize
    {
        recv.copy_from_slice(send);
        let bounds = even_bounds(send.len(), Members::of(n).p as usize, op.granule());
        let member = halving::reduce_scatter(comm, tag::ALL_REDUCE, recv, &bounds, op)?;
        return halving::all_gather(comm, tag::ALL_REDUCE, recv, &bounds, member);
    }
    reduce_with(
        comm,
        tag::ALL_REDUCE,
        0,
        send,
        (me == 0).then_some(&mut *recv),
        op,
    )?;
    broadcast_with(comm, tag::ALL_REDUCE, 0, recv)
}

/// MPI_Scan (MPI-3.1 section 5.11.1) and MPI_Exscan (section 5.11.2): rank i gets the
/// reduction of ranks 0..=i (or 0..i; rank 0's `recv` is left as it was for the
/// exclusive scan), combined in rank order. On at most `limit::CHAIN_SCAN_RANKS` ranks a
/// chain (rank i combines rank i - 1's prefix with its own and passes it on); above,
/// recursive doubling: in step k each rank exchanges the reduction of its aligned group
/// of 2^k ranks with the rank 2^k away, so every partial covers a contiguous run of
/// ranks (log2(n) steps).
pub fn scan<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv: &mut [T],
    op: &O,
    exclusive: bool,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    expect_len("scan result", recv.len(), send.len())?;
    // The reduction of the ranks below this one (rank 0: none).
    let below = if n <= limit::CHAIN_SCAN_RANKS {
        let below = if me > 0 {
            let mut prefix = vec![T::zeroed(); send.len()];
            p2p::recv(comm, tag::SCAN, me - 1, &mut prefix)?;
            Some(prefix)
        } else {
            None
        };
        if me + 1 < n {
            let mut upto = send.to_vec();
            if let Some(b) = &below {
                upto.copy_from_slice(b);
                op.combine(&mut upto, send);
            }
            p2p::send(comm, tag::SCAN, me + 1, &upto)?;
        }
        below
    } else {
        scan_doubling(comm, send, op)?
    };
    match (exclusive, below) {
        (true, Some(b)) => recv.copy_from_slice(&b),
        (true, None) => {}
        (false, Some(mut b)) => {
            op.combine(&mut b, send);
            recv.copy_from_slice(&b);
        }
        (false, None) => recv.copy_from_slice(send),
    }
    Ok(())
}

/// The recursive-doubling part of `scan`: the reduction of the ranks below this one.
fn scan_doubling<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    send: &[T],
    op: &O,
) -> Result<Option<Vec<T>>, Error> {
    let (n, me) = comm.shape();
    // The reduction of this rank's current group, and of the ranks of it below this one.
    let mut group = send.to_vec();
    let mut below: Option<Vec<T>> = None;
    let mut other = vec![T::zeroed(); send.len()];
    let mut scratch = vec![T::zeroed(); send.len()];
    let mut mask = 1u32;
    while mask < n {
        let partner = me ^ mask;
        mask <<= 1;
        if partner >= n {
            continue;
        }
        p2p::send(comm, tag::SCAN, partner, &group)?;
        p2p::recv(comm, tag::SCAN, partner, &mut other)?;
        if partner < me {
            if let Some(b) = &mut below {
                scratch.copy_from_slice(&other);
                op.combine(&mut scratch, b);
                std::mem::swap(b, &mut scratch);
            } else {
                below = Some(other.clone());
            }
            op.combine(&mut other, &group);
            std::mem::swap(&mut group, &mut other);
        } else {
            op.combine(&mut group, &other);
        }
    }
    Ok(below)
}

/// MPI_Reduce_scatter (MPI-3.1 section 5.10.2): the reduction of every rank's `send`
/// (`counts.sum()` elements), of which rank i keeps the `counts[i]` elements at their
/// offset. Commutative operations from `limit::HALVING_BYTES` in all: recursive halving
/// (a paired rank's part comes from the partner that reduced it). Otherwise `reduce` to
/// rank 0 (rank order) and `scatter_varcount` from it.
pub fn reduce_scatter<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv: &mut [T],
    counts: &[usize],
    op: &O,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    check_counts(comm, counts)?;
    let (at, total) = offsets(counts);
    expect_len("reduce-scatter input", send.len(), total)?;
    expect_len("reduce-scatter result", recv.len(), counts[me as usize])?;
    let mine = at[me as usize]..at[me as usize] + recv.len();
    if n == 1 {
        recv.copy_from_slice(send);
        return Ok(());
    }
    if !op.is_commutative() || std::mem::size_of_val(send) < limit::HALVING_BYTES {
        let mut all = if me == 0 {
            vec![T::zeroed(); total]
        } else {
            Vec::new()
        };
        let at_root = (me == 0).then_some(&mut all[..]);
        reduce_with(comm, tag::REDUCE_SCATTER, 0, send, at_root, op)?;
        let from = (me == 0).then_some((&all[..], counts));
        return scatter_varcount(comm, 0, from, recv);
    }
    // Member k answers for the blocks of the ranks it stands for: 2k and 2k + 1 if it
    // was paired, k + rem otherwise.
    let m = Members::of(n);
    let mut bounds: Vec<usize> = (0..m.p)
        .map(|k| at[(m.rank(k) - u32::from(k < m.rem)) as usize])
        .collect();
    bounds.push(total);
    let mut acc = send.to_vec();
    let member = halving::reduce_scatter(comm, tag::REDUCE_SCATTER, &mut acc, &bounds, op)?;
    match member {
        None => p2p::recv(comm, tag::REDUCE_SCATTER, me + 1, recv),
        Some(k) => {
            if k < m.rem {
                let lower = me as usize - 1;
                let part = &acc[at[lower]..at[lower] + counts[lower]];
                p2p::send(comm, tag::REDUCE_SCATTER, me - 1, part)?;
            }
            recv.copy_from_slice(&acc[mine]);
            Ok(())
        }
    }
}

/// MPI_Reduce_scatter_block (MPI-3.1 section 5.10.1): the reduction of every rank's
/// `send` (size x `recv.len()` elements), of which rank i keeps block i (as
/// `reduce_scatter`).
pub fn reduce_scatter_block<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    send: &[T],
    recv: &mut [T],
    op: &O,
) -> Result<(), Error> {
    let n = comm.shape().0 as usize;
    expect_len("reduce-scatter input", send.len(), recv.len() * n)?;
    reduce_scatter(comm, send, recv, &uniform(comm, recv.len()), op)
}
