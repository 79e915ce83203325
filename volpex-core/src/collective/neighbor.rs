//! Neighbourhood exchanges (MPI-3.1 section 7.6): each rank sends blocks to the ranks of
//! one list and receives blocks from the ranks of another, as a process topology names
//! them. The topologies themselves (which ranks, in which order) belong to the caller;
//! here a message travels in a "slot", and a receive takes only a message of its own
//! slot from its sender: a Cartesian shift sends in the slot of its direction, so the
//! two messages a rank gets from one neighbour on a periodic dimension of size 2 (from
//! its -1 side and from its +1 side) go where the standard puts them. Between two ranks
//! in one slot, messages match in the order sent (a multigraph's repeated edges).
//!
//! Owns the exchange only. Must never reach past `PointToPoint`, and completes its
//! receives in list order.

use crate::error::Error;

use super::p2p::{into_all, post, send};
use super::{tag, PointToPoint};

/// The most slots an exchange may use (tags above `tag::NEIGHBOR` up to `i32::MAX`).
pub const SLOTS_MAX: u32 = (i32::MAX - tag::NEIGHBOR) as u32;

/// Sends each `(rank, slot, bytes)` of `sends` and receives each `(rank, slot, buf)` of
/// `recvs`, a message of exactly the buffer's length: every receive is posted before the
/// first send, so each message goes out to a pull already waiting for it.
pub fn exchange(
    comm: &dyn PointToPoint,
    sends: &[(u32, u32, &[u8])],
    recvs: Vec<(u32, u32, &mut [u8])>,
) -> Result<(), Error> {
    let tag_of = |slot: u32| -> Result<i32, Error> {
        if slot > SLOTS_MAX {
            return Err(Error::Usage("neighbourhood exchange: slot out of range"));
        }
        Ok(tag::NEIGHBOR + slot as i32)
    };
    let mut posted = Vec::with_capacity(recvs.len());
    for (src, slot, buf) in recvs {
        posted.push((post(comm, tag_of(slot)?, src)?, buf));
    }
    for &(dst, slot, bytes) in sends {
        send(comm, tag_of(slot)?, dst, bytes)?;
    }
    into_all(comm, posted)
}
