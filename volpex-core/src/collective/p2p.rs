//! Point-to-point in a communicator's collective context, as the algorithms use it:
//! buffered sends (a send returns once the message is in the local log), and receives
//! that may be posted ahead of time and are completed in a fixed order.
//!
//! Posting the receives of a step (or of a whole algorithm) before sending lets their
//! pulls reach the senders first, so each message goes out the moment it is sent. A
//! receive completed with `Recv::into` lands a large message straight in the caller's
//! buffer. Completing receives in a fixed order (never "whichever came first") keeps
//! every replica of a rank doing the same thing.

use crate::comm::communicator::Partner;
use crate::comm::Communicator;
use crate::datatype::Equivalence;
use crate::error::Error;
use crate::message::matching::{Mode, RecvId};

use super::expect_len;

/// A receive posted in the collective context; dropping it unfinished discards its
/// message when it comes (an algorithm that failed half-way leaves nothing behind).
pub(super) struct Recv<'c> {
    comm: &'c Communicator,
    id: Option<RecvId>,
}

impl Recv<'_> {
    /// Waits for the message and puts it in `out`, whose length it must have.
    pub(super) fn into<T: Equivalence>(mut self, out: &mut [T]) -> Result<(), Error> {
        let Some(id) = self.id.take() else {
            return Err(Error::Runtime("collective receive completed twice".into()));
        };
        let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
        let want = dst.len();
        let st = self
            .comm
            .wait_into(id, dst, std::mem::size_of::<T>().max(1))?;
        expect_len("collective message bytes", st.count_bytes(), want)
    }
}

impl Drop for Recv<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.comm.detach(id);
        }
    }
}

/// Posts a receive of the next message from rank `src` with `tag`.
pub(super) fn post<'c>(comm: &'c Communicator, tag: i32, src: u32) -> Result<Recv<'c>, Error> {
    let spec = comm.spec(comm.id() + 1, Partner::Rank(src as i32), Some(tag))?;
    let id = comm.post(spec, Mode::Receive)?;
    Ok(Recv { comm, id: Some(id) })
}

/// Receives the next message from `src` with `tag` into `out` (its exact length).
pub(super) fn recv<T: Equivalence>(
    comm: &Communicator,
    tag: i32,
    src: u32,
    out: &mut [T],
) -> Result<(), Error> {
    post(comm, tag, src)?.into(out)
}

/// Sends `data` to rank `dst` with `tag` (returns once it is logged).
pub(super) fn send<T: Equivalence>(
    comm: &Communicator,
    tag: i32,
    dst: u32,
    data: &[T],
) -> Result<(), Error> {
    comm.send_internal(tag, dst, bytemuck::cast_slice(data))
}

/// Sends `data` to each of `dsts` in turn, copying it into the local log once for all.
pub(super) fn send_each<T: Equivalence>(
    comm: &Communicator,
    tag: i32,
    dsts: &[u32],
    data: &[T],
) -> Result<(), Error> {
    comm.send_internal_each(tag, dsts, bytemuck::cast_slice(data))
}
