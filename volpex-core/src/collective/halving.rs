//! Reduce-scatter by recursive halving and all-gather by recursive doubling (Rabenseifner,
//! "Optimization of collective reduction operations", ICCS 2004; Thakur, Rabenseifner and
//! Gropp, IJHPCA 2005), the large-vector path of all-reduce, reduce and reduce-scatter
//! for commutative operations.
//!
//! With n ranks and p the largest power of two not above n, the first 2(n - p) ranks
//! pair up first: each even one hands its whole vector to the odd one above it and sits
//! the halving out, so p ranks remain ("members"), numbered 0..p in rank order. Member k
//! answers for the contiguous part `bounds[k]..bounds[k + 1]` of the vector. In step j of
//! the halving, members exchange half of what they still answer for with the member
//! p / 2^(j+1) away and combine the half they keep; after log2(p) steps member k holds
//! the reduction of its part. Each part is reduced by exactly one rank, so whatever
//! comes next hands every rank the same bits.
//!
//! Owns these two algorithms only. Must never reach past `PointToPoint` (no
//! communicator, engine or socket), and never complete receives in any but a fixed order.

use crate::error::Error;
use bytemuck::Pod;

use super::p2p::{post, send};
use super::{Operation, PointToPoint};

/// How the ranks are paired for the halving.
#[derive(Debug, Clone, Copy)]
pub(super) struct Members {
    /// Members (a power of two).
    pub p: u32,
    /// Ranks below `2 * rem` are paired (`rem = n - p`).
    pub rem: u32,
}

impl Members {
    pub(super) fn of(n: u32) -> Members {
        let p = 1u32 << (31 - n.max(1).leading_zeros());
        Members { p, rem: n - p }
    }

    /// The member number of `rank`, or `None` for an even rank that hands its vector on.
    pub(super) fn member(&self, rank: u32) -> Option<u32> {
        if rank < 2 * self.rem {
            (rank % 2 == 1).then_some(rank / 2)
        } else {
            Some(rank - self.rem)
        }
    }

    /// The rank of member `k`.
    pub(super) fn rank(&self, k: u32) -> u32 {
        if k < self.rem {
            2 * k + 1
        } else {
            k + self.rem
        }
    }
}

/// Offsets splitting `len` values, in whole elements of `granule` values, into `parts`
/// contiguous parts of nearly equal length (the first `elements % parts` one element
/// longer): `parts + 1` entries.
pub(super) fn even_bounds(len: usize, parts: usize, granule: usize) -> Vec<usize> {
    let elements = len / granule;
    let (q, r) = (elements / parts, elements % parts);
    (0..=parts).map(|i| (i * q + i.min(r)) * granule).collect()
}

/// Pairs up the first 2(n - p) ranks (the even one's vector goes to the odd one, which
/// combines it into `acc`) and reduce-scatters `acc` over the members by recursive
/// halving, with `tag`. Returns this rank's member number (`None`: handed on); a member
/// k then holds the reduction of `acc[bounds[k]..bounds[k + 1]]`.
pub(super) fn reduce_scatter<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    tag: i32,
    acc: &mut [T],
    bounds: &[usize],
    op: &O,
) -> Result<Option<u32>, Error> {
    let (n, me) = comm.shape();
    let m = Members::of(n);
    let Some(k) = m.member(me) else {
        send(comm, tag, me + 1, acc)?;
        return Ok(None);
    };
    // Every receive is posted before the first send, so the pulls wait at the partners.
    let paired = (me < 2 * m.rem)
        .then(|| post(comm, tag, me - 1))
        .transpose()?;
    let mut steps = Vec::new();
    let mut mask = m.p >> 1;
    while mask > 0 {
        steps.push(post(comm, tag, m.rank(k ^ mask))?);
        mask >>= 1;
    }
    let part = |a: u32, b: u32| bounds[a as usize]..bounds[b as usize];
    // The halves this member keeps, step by step, and the most it receives at once.
    let mut keeps = Vec::with_capacity(steps.len());
    let (mut lo, mut hi) = (0u32, m.p);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let (keep, give) = if k < mid {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        keeps.push((keep, give));
        (lo, hi) = keep;
    }
    let most = keeps.iter().map(|((a, b), _)| part(*a, *b).len()).max();
    let mut tmp = vec![T::zeroed(); most.unwrap_or(0)];
    if let Some(r) = paired {
        let mut lower = vec![T::zeroed(); acc.len()];
        r.into(&mut lower)?;
        op.combine(acc, &lower);
    }
    for (r, (keep, give)) in steps.into_iter().zip(keeps) {
        let partner = m.rank(k ^ (keep.1 - keep.0));
        send(comm, tag, partner, &acc[part(give.0, give.1)])?;
        let kept = part(keep.0, keep.1);
        let got = &mut tmp[..kept.len()];
        r.into(got)?;
        op.combine(&mut acc[kept], got);
    }
    Ok(Some(k))
}

/// The reverse of `reduce_scatter`: member k contributes `acc[bounds[k]..bounds[k + 1]]`
/// and all members end up with all of `acc` (recursive doubling), then each odd paired
/// rank hands the whole vector back to the even rank below it, with `tag`.
pub(super) fn all_gather<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    acc: &mut [T],
    bounds: &[usize],
    member: Option<u32>,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let m = Members::of(n);
    let Some(k) = member else {
        return post(comm, tag, me + 1)?.into(acc);
    };
    let mut steps = Vec::new();
    let mut mask = 1u32;
    while mask < m.p {
        steps.push(post(comm, tag, m.rank(k ^ mask))?);
        mask <<= 1;
    }
    let mut mask = 1u32;
    for r in steps {
        let lo = k & !(mask - 1);
        let theirs = lo ^ mask;
        let part = |a: u32| bounds[a as usize]..bounds[(a + mask) as usize];
        send(comm, tag, m.rank(k ^ mask), &acc[part(lo)])?;
        r.into(&mut acc[part(theirs)])?;
        mask <<= 1;
    }
    if me < 2 * m.rem {
        send(comm, tag, me - 1, acc)?;
    }
    Ok(())
}
