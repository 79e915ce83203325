//! Trees: broadcast and reduce by flat and binomial trees, and broadcast by scatter plus
//! ring all-gather (van de Geijn: Barnett et al., "Interprocessor collective
//! communication library (InterCom)", SHPCC 1994; Thakur, Rabenseifner and Gropp,
//! IJHPCA 2005). Broadcast ranks are taken relative to the root.
//!
//! Owns these algorithms only. Must never reach past `PointToPoint` (no communicator,
//! engine or socket), and never complete receives in any but a fixed order.

use crate::error::Error;
use bytemuck::Pod;

use super::halving::even_bounds;
use super::p2p::{self, post, recv};
use super::{Operation, PointToPoint};

/// The root sends `buf` to every other rank itself (one copy into its log for all).
pub(super) fn flat<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    if me != root {
        return recv(comm, tag, root, buf);
    }
    let others: Vec<u32> = (1..n).map(|i| (root + i) % n).collect();
    p2p::send_each(comm, tag, &others, buf)
}

/// Binomial tree: relative rank r receives from r minus its lowest set bit, then sends
/// to r + 2^k for every 2^k below that bit, farthest first (one copy into its log for
/// all).
pub(super) fn binomial<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let rel = (me + n - root) % n;
    let mut mask = 1u32;
    while mask < n {
        if rel & mask != 0 {
            recv(comm, tag, (rel - mask + root) % n, buf)?;
            break;
        }
        mask <<= 1;
    }
    let mut children = Vec::new();
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            children.push((rel + mask + root) % n);
        }
        mask >>= 1;
    }
    p2p::send_each(comm, tag, &children, buf)
}

/// Scatter from the root (flat), then a ring all-gather over relative ranks: in step s,
/// rank r passes block r - s to r + 1. The rank before the root skips its sends (the root
/// has every block), so each non-root rank receives the buffer exactly once in all.
pub(super) fn scatter_ring<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let rel = (me + n - root) % n;
    let at = even_bounds(buf.len(), n as usize, 1);
    let block = |b: u32| at[b as usize]..at[b as usize + 1];
    let abs = |r: u32| (r + root) % n;
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    if rel == 0 {
        for r in 1..n {
            p2p::send(comm, tag, abs(r), &buf[block(r)])?;
        }
    } else {
        // The scatter's block, then the ring's blocks (from the left; in order, so with
        // the root on the left its scatter block still comes first).
        let mine = post(comm, tag, root)?;
        let mut ring = Vec::with_capacity(n as usize - 1);
        for _ in 1..n {
            ring.push(post(comm, tag, left)?);
        }
        mine.into(&mut buf[block(rel)])?;
        let mut ring = ring.into_iter();
        for s in 0..n - 1 {
            if rel + 1 < n {
                p2p::send(comm, tag, right, &buf[block((rel + n - s) % n)])?;
            }
            if let Some(r) = ring.next() {
                r.into(&mut buf[block((rel + 2 * n - s - 1) % n)])?;
            }
        }
        return Ok(());
    }
    for s in 0..n - 1 {
        p2p::send(comm, tag, right, &buf[block((n - s) % n)])?;
    }
    Ok(())
}

/// Every rank sends `send` to the root, which combines all of them in rank order into
/// `out` (its own in its place).
pub(super) fn reduce_flat<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    tag: i32,
    root: u32,
    send: &[T],
    out: Option<&mut [T]>,
    op: &O,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let Some(out) = out else {
        return p2p::send(comm, tag, root, send);
    };
    let mut posted = Vec::with_capacity(n as usize - 1);
    for r in (0..n).filter(|&r| r != me) {
        posted.push((r, post(comm, tag, r)?));
    }
    // Rank 0's contribution first, then each other one's in turn.
    let mut other = vec![T::zeroed(); send.len()];
    let mut posted = posted.into_iter().peekable();
    if me == 0 {
        out.copy_from_slice(send);
    } else if let Some((_, first)) = posted.next_if(|(r, _)| *r == 0) {
        first.into(out)?;
    }
    for r in 1..n {
        if r == me {
            op.combine(out, send);
        } else if let Some((_, p)) = posted.next_if(|(from, _)| *from == r) {
            p.into(&mut other)?;
            op.combine(out, &other);
        }
    }
    Ok(())
}

/// Binomial tree: each rank combines its own vector with its children's partials (which
/// cover the ranks right above it, nearest first) and sends the result to its parent.
/// Rooted at `root` for commutative operations; at rank 0 otherwise (so every partial
/// covers consecutive ranks in order), which then forwards the result to `root`.
pub(super) fn reduce_binomial<T: Pod, O: Operation<T>>(
    comm: &dyn PointToPoint,
    tag: i32,
    root: u32,
    send: &[T],
    out: Option<&mut [T]>,
    op: &O,
) -> Result<(), Error> {
    let (n, me) = comm.shape();
    let tree_root = if op.is_commutative() { root } else { 0 };
    let rel = (me + n - tree_root) % n;
    let abs = |r: u32| (r + tree_root) % n;
    let mut children = Vec::new();
    let mut mask = 1u32;
    while mask < n && rel & mask == 0 {
        if rel + mask < n {
            children.push(post(comm, tag, abs(rel + mask))?);
        }
        mask <<= 1;
    }
    let mut acc = send.to_vec();
    if !children.is_empty() {
        let mut child = vec![T::zeroed(); send.len()];
        for c in children {
            c.into(&mut child)?;
            op.combine(&mut acc, &child);
        }
    }
    if rel != 0 {
        p2p::send(comm, tag, abs(rel - mask), &acc)?;
    } else if me != root {
        p2p::send(comm, tag, root, &acc)?;
    }
    if let Some(out) = out {
        if me == tree_root {
            out.copy_from_slice(&acc);
        } else {
            recv(comm, tag, tree_root, out)?;
        }
    }
    Ok(())
}
