//! Barrier (MPI-3.1 section 5.3): an all-reduce of nothing. Every rank reports to rank 0
//! up a binomial tree (`reduce`), and rank 0 releases them all (`broadcast`: flat on a
//! few ranks, else a binomial tree). Each child's pull for its release rides with its
//! report, so the barrier costs about one write per message; a dissemination barrier,
//! whose partners change every round, costs two, and was slower (4 ranks on two cores);
//! so was recursive doubling (pairwise exchanges), whose ranks leave at about the same
//! time. Its messages have their own tag, apart from those of `reduce` and `broadcast`.
//!
//! Owns the barrier's choice of algorithm. Must never reach past `PointToPoint`.

use crate::error::Error;

use super::{broadcast_with, reduce_with, tag, PointToPoint, SystemOperation};

/// Blocks until every rank of `comm` has entered the barrier.
pub fn barrier(comm: &dyn PointToPoint) -> Result<(), Error> {
    let at_root = (comm.shape().1 == 0).then_some(&mut [][..]);
    reduce_with::<u8, _>(comm, tag::BARRIER, 0, &[], at_root, &SystemOperation::sum())?;
    broadcast_with::<u8>(comm, tag::BARRIER, 0, &mut [])
}
