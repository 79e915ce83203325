//! Barrier (MPI-3.1 section 5.3) by dissemination: ceil(log2 n) rounds, in round k each
//! rank signals rank + 2^k and waits for rank - 2^k.

use crate::comm::Communicator;
use crate::error::Error;

/// Tag of barrier messages in the collective context.
const TAG_BARRIER: i32 = 1;

/// Blocks until every rank of `comm` has entered the barrier.
pub fn barrier(comm: &Communicator) -> Result<(), Error> {
    let n = comm.size() as u32;
    let me = comm.rank() as u32;
    let mut step = 1u32;
    while step < n {
        let to = (me + step) % n;
        let from = (me + n - step) % n;
        comm.send_internal(TAG_BARRIER, to, &[])?;
        comm.receive_internal(TAG_BARRIER, from)?;
        step <<= 1;
    }
    Ok(())
}
