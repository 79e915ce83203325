//! Broadcast algorithms: flat and binomial trees, and scatter plus ring all-gather (van de
//! Geijn: Barnett et al., "Interprocessor collective communication library (InterCom)",
//! SHPCC 1994; Thakur, Rabenseifner and Gropp, IJHPCA 2005). Ranks are taken relative
//! to the root.

use crate::comm::Communicator;
use crate::datatype::Equivalence;
use crate::error::Error;

use super::halving::even_bounds;
use super::p2p::{post, recv, send};
use super::shape;

/// The root sends `buf` to every other rank itself.
pub(super) fn flat<T: Equivalence>(
    comm: &Communicator,
    tag: i32,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    if me != root {
        return recv(comm, tag, root, buf);
    }
    for i in 1..n {
        send(comm, tag, (root + i) % n, buf)?;
    }
    Ok(())
}

/// Binomial tree: relative rank r receives from r minus its lowest set bit, then sends
/// to r + 2^k for every 2^k below that bit, farthest first.
pub(super) fn binomial<T: Equivalence>(
    comm: &Communicator,
    tag: i32,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    let rel = (me + n - root) % n;
    let mut mask = 1u32;
    while mask < n {
        if rel & mask != 0 {
            recv(comm, tag, (rel - mask + root) % n, buf)?;
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if rel + mask < n {
            send(comm, tag, (rel + mask + root) % n, buf)?;
        }
        mask >>= 1;
    }
    Ok(())
}

/// Scatter from the root (flat), then a ring all-gather over relative ranks: in step s,
/// rank r passes block r - s to r + 1. The rank before the root skips its sends (the root
/// has every block), so each non-root rank receives the buffer exactly once in all.
pub(super) fn scatter_ring<T: Equivalence>(
    comm: &Communicator,
    tag: i32,
    root: u32,
    buf: &mut [T],
) -> Result<(), Error> {
    let (n, me) = shape(comm);
    let rel = (me + n - root) % n;
    let at = even_bounds(buf.len(), n as usize);
    let block = |b: u32| at[b as usize]..at[b as usize + 1];
    let abs = |r: u32| (r + root) % n;
    let (left, right) = ((me + n - 1) % n, (me + 1) % n);
    if rel == 0 {
        for r in 1..n {
            send(comm, tag, abs(r), &buf[block(r)])?;
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
                send(comm, tag, right, &buf[block((rel + n - s) % n)])?;
            }
            if let Some(r) = ring.next() {
                r.into(&mut buf[block((rel + 2 * n - s - 1) % n)])?;
            }
        }
        return Ok(());
    }
    for s in 0..n - 1 {
        send(comm, tag, right, &buf[block((n - s) % n)])?;
    }
    Ok(())
}
