//! The point-to-point interface the collectives run on (`PointToPoint`), and the few
//! helpers the algorithms use on it: buffered sends (a send returns once the message is in
//! the local log), and receives that may be posted ahead of time and are completed in a
//! fixed order.
//!
//! Owns the boundary between the collectives and the communicators: `comm` implements
//! `PointToPoint` for its `Communicator`, and nothing in `collective` may reach past it
//! (nothing here imports from `comm`), so the algorithms never see locks, engines or
//! requests.
//!
//! Posting the receives of a step (or of a whole algorithm) before sending lets their
//! pulls reach the senders first, so each message goes out the moment it is sent. A
//! receive completed with `Recv::into` lands a large message straight in the caller's
//! buffer. Completing receives in a fixed order (never "whichever came first") keeps
//! every replica of a rank doing the same thing.

use crate::error::Error;
use bytemuck::Pod;
use volpex_proto::message::matching::RecvId;

use super::expect_len;

/// Point-to-point in a communicator's collective context (its own message space, apart
/// from user messages), as the collective algorithms need it. Ranks are ranks of the
/// communicator, `0..size`; tags are the collectives' own.
pub trait PointToPoint {
    /// The number of ranks and this process's rank.
    fn shape(&self) -> (u32, u32);

    /// Posts a receive of the next message from rank `src` with `tag`.
    fn post_internal(&self, tag: i32, src: u32) -> Result<RecvId, Error>;

    /// Waits for posted receive `id` and puts its message into `buf`, a buffer of
    /// `elem`-byte elements (a large message lands there straight from the socket).
    /// Returns the message's length in bytes.
    fn wait_internal_into(&self, id: RecvId, buf: &mut [u8], elem: usize) -> Result<usize, Error>;

    /// Gives up posted receive `id`: its message is discarded when it comes.
    fn discard(&self, id: RecvId);

    /// Sends `bytes` to rank `dst` with `tag`; returns once the message is logged.
    fn send_internal(&self, tag: i32, dst: u32, bytes: &[u8]) -> Result<(), Error>;

    /// An exchange: sends block i of `sends` to its rank with `tag`, then waits for the
    /// posted receives `recvs` together, each message into its buffer of `elem`-byte
    /// elements (a large one lands there straight from the socket whichever comes first,
    /// from the first send on). Returns the lengths in bytes, in the order of `recvs`.
    /// A large block that went out whole is not copied into the local log unless its
    /// receivers have not confirmed it by the end (`send_internal` waits for that
    /// inside the send; here the receiver sends to this rank at the same time, so
    /// waiting there would only delay both).
    fn exchange_internal(
        &self,
        tag: i32,
        sends: &[(u32, &[u8])],
        recvs: Vec<(RecvId, &mut [u8])>,
        elem: usize,
    ) -> Result<Vec<usize>, Error>;

    /// Sends `bytes` to each of `dsts` in turn with `tag`, copying them into the local log
    /// once for all.
    fn send_internal_each(&self, tag: i32, dsts: &[u32], bytes: &[u8]) -> Result<(), Error>;
}

/// A receive posted in the collective context; dropping it unfinished discards its
/// message when it comes (an algorithm that failed half-way leaves nothing behind).
pub(super) struct Recv<'c> {
    comm: &'c dyn PointToPoint,
    /// `None` only once `into` took it (then the drop has nothing to discard).
    id: Option<RecvId>,
}

impl Recv<'_> {
    /// Waits for the message and puts it in `out`, whose length it must have.
    pub(super) fn into<T: Pod>(mut self, out: &mut [T]) -> Result<(), Error> {
        let Some(id) = self.id.take() else {
            unreachable!("a collective receive is completed once: `into` takes it by value")
        };
        let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
        let want = dst.len();
        let got = self
            .comm
            .wait_internal_into(id, dst, std::mem::size_of::<T>().max(1))?;
        expect_len("collective message bytes", got, want)
    }
}

/// Waits for the receives `recvs` together and puts each message in its buffer, whose
/// length it must have (a large one lands there whichever comes first, where completing
/// them one by one would copy those that came early).
pub(super) fn into_all<T: Pod>(
    comm: &dyn PointToPoint,
    recvs: Vec<(Recv<'_>, &mut [T])>,
) -> Result<(), Error> {
    exchange(comm, 0, &[], recvs)
}

/// Sends block i of `sends` to its rank with `tag`, then waits for `recvs` as `into_all`
/// (see `PointToPoint::exchange_internal`).
pub(super) fn exchange<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    sends: &[(u32, &[T])],
    recvs: Vec<(Recv<'_>, &mut [T])>,
) -> Result<(), Error> {
    let mut want = Vec::with_capacity(recvs.len());
    let mut all = Vec::with_capacity(recvs.len());
    for (mut r, out) in recvs {
        let Some(id) = r.id.take() else {
            unreachable!("a collective receive is completed once: `exchange` takes it by value")
        };
        let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
        want.push(dst.len());
        all.push((id, dst));
    }
    let sends: Vec<(u32, &[u8])> = sends
        .iter()
        .map(|&(to, b)| (to, bytemuck::cast_slice(b)))
        .collect();
    let got = comm.exchange_internal(tag, &sends, all, std::mem::size_of::<T>().max(1))?;
    for (g, w) in got.into_iter().zip(want) {
        expect_len("collective message bytes", g, w)?;
    }
    Ok(())
}

impl Drop for Recv<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.comm.discard(id);
        }
    }
}

/// Posts a receive of the next message from rank `src` with `tag`.
pub(super) fn post(comm: &dyn PointToPoint, tag: i32, src: u32) -> Result<Recv<'_>, Error> {
    let id = comm.post_internal(tag, src)?;
    Ok(Recv { comm, id: Some(id) })
}

/// Receives the next message from `src` with `tag` into `out` (its exact length).
pub(super) fn recv<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    src: u32,
    out: &mut [T],
) -> Result<(), Error> {
    post(comm, tag, src)?.into(out)
}

/// Sends `data` to rank `dst` with `tag` (returns once it is logged).
pub(super) fn send<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    dst: u32,
    data: &[T],
) -> Result<(), Error> {
    comm.send_internal(tag, dst, bytemuck::cast_slice(data))
}

/// Sends `data` to each of `dsts` in turn, copying it into the local log once for all.
pub(super) fn send_each<T: Pod>(
    comm: &dyn PointToPoint,
    tag: i32,
    dsts: &[u32],
    data: &[T],
) -> Result<(), Error> {
    comm.send_internal_each(tag, dsts, bytemuck::cast_slice(data))
}
