//! `Process`: one rank of a communicator, or any rank (`any_process`), as the partner of
//! point-to-point operations (MPI-3.1 chapter 3); its rooted collectives
//! (`broadcast_into`, `reduce_into_root`, ...) are in `collectives.rs`.
//!
//! Owns the mapping of every receive flavour (blocking, immediate, vector, probe,
//! matched probe; with a tag or `ANY_TAG`) onto one posted operation of the matcher. Must
//! never decide matches itself: the engine does.

use bytes::Bytes;

use super::communicator::{Communicator, Partner};
use super::receive::{check_whole, fill_bytes, message, ReceiveInto};
use super::request::Request;
use super::{Status, Tag};
use crate::datatype::{vec_from_bytes, Buffer, BufferMut, Equivalence, Target};
use crate::error::Error;
use crate::transport::Loan;
use volpex_proto::message::matching::{Matched, Mode, RecvSpec, TagSel};
use volpex_proto::message::Lend;
use volpex_proto::message::{Key, ACK_TAG};

/// `MPI_ANY_SOURCE`: what `Process::rank` returns for `any_process()`.
pub const ANY_SOURCE: i32 = -1;

/// A partner of point-to-point operations: one rank of a communicator, or any rank
/// (`Communicator::any_process`, receives and probes only). Receives without a tag match
/// any tag (`MPI_ANY_TAG`), as in the `mpi` crate; sends without a tag use tag 0.
#[derive(Clone, Copy)]
pub struct Process<'a> {
    pub(super) comm: &'a Communicator,
    partner: Partner,
}

/// Any rank of a communicator as a source (`MPI_ANY_SOURCE`).
pub type AnyProcess<'a> = Process<'a>;

/// A message taken by `matched_probe` (MPI_Mprobe): it is this caller's, and no other
/// receive can match it any more.
pub struct Message {
    comm: Communicator,
    key: Key,
    payload: Bytes,
}

/// Puts a received message into a receive target, checking it fits in whole elements;
/// returns its length in bytes.
pub(crate) fn deliver(target: Target<'_>, elem: usize, data: &[u8]) -> Result<usize, Error> {
    match target {
        Target::Contiguous(b) => fill_bytes(b, elem, data),
        Target::Scattered(mut layout) => {
            if data.len() > layout.byte_len() {
                return Err(Error::Truncated {
                    message_bytes: data.len(),
                    buffer_bytes: layout.byte_len(),
                });
            }
            check_whole(data.len(), elem)?;
            layout.unpack(data)?;
            Ok(data.len())
        }
    }
}

/// A posted receive of one whole message from one rank (`Process::post_message_with_tag`);
/// dropped before it completed, it claims nothing.
pub struct PostedMessage {
    comm: Communicator,
    /// `None` once its message was taken.
    id: Option<volpex_proto::message::matching::RecvId>,
}

impl PostedMessage {
    /// The message, if it is here (one non-blocking turn of the loop).
    pub fn test(&mut self) -> Result<Option<Bytes>, Error> {
        let Some(id) = self.id else {
            return Err(Error::RequestCompleted);
        };
        match self.comm.test(id)? {
            Some(m) => {
                self.id = None;
                Ok(Some(message(m)?.1))
            }
            None => Ok(None),
        }
    }

    /// The message, if a turn of the loop brought it already (`test` without the turn:
    /// for a caller that polls several things and turns the loop itself between its
    /// polls, offering buffers a turn of `test` would not, as a serving call waiting for
    /// an answer to land in place does).
    pub fn arrived(&mut self) -> Result<Option<Bytes>, Error> {
        let Some(id) = self.id else {
            return Err(Error::RequestCompleted);
        };
        match self.comm.arrived(id)? {
            Some(m) => {
                self.id = None;
                Ok(Some(message(m)?.1))
            }
            None => Ok(None),
        }
    }

    /// Waits for the message.
    pub fn wait(mut self) -> Result<Bytes, Error> {
        let id = self.id.take().ok_or(Error::RequestCompleted)?;
        Ok(message(self.comm.wait(id)?)?.1)
    }

    /// Gives the buffer of a message `test` or `wait` returned back for the next large
    /// one, once the caller is done with it: a large message dropped instead returns
    /// its memory to the OS, and the next one costs a page fault per 4 KiB (a 32 MiB
    /// one-sided answer per flush: the origin's leading cost in `osu_get_bw`).
    pub fn recycle(payload: Bytes) {
        volpex_proto::message::pool::recycle(payload);
    }
}

/// A message claimed in its stream without being pulled (`Process::defer_message_with_tag`):
/// the next receive from its sender with its tag gets the message after it. Until it is
/// skipped or fetched, this replica's watermark for its sender stays below it, so every
/// replica of the sender keeps it. Dropped without either (its caller's error path), it
/// is skipped: else the sender's replicas would keep it, and all they send on the
/// communicator after it, for the job.
pub struct DeferredMessage {
    comm: Communicator,
    /// `None` once skipped or fetched.
    key: Option<volpex_proto::message::Key>,
}

impl DeferredMessage {
    /// Releases it without its bytes ever coming: it counts as received.
    pub fn skip(mut self) {
        if let Some(key) = self.key.take() {
            self.comm.skip_deferred(key);
        }
    }

    /// Pulls it after all, from any live replica of its sender.
    pub fn fetch(mut self) -> Result<PostedMessage, Error> {
        let key = self.key.take().ok_or(Error::RequestCompleted)?;
        let id = self.comm.post_deferred(key)?;
        Ok(PostedMessage {
            comm: self.comm.clone(),
            id: Some(id),
        })
    }
}

impl Drop for DeferredMessage {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.comm.skip_deferred(key);
        }
    }
}

impl Drop for PostedMessage {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.comm.detach(id);
        }
    }
}

impl Message {
    /// Receives it into `buf` (MPI_Mrecv).
    pub fn matched_receive_into<B: BufferMut + ?Sized>(self, buf: &mut B) -> Result<Status, Error> {
        let elem = buf.elem_bytes();
        let n = deliver(buf.target(), elem, &self.payload)?;
        Ok(self.comm.status_for(&self.key, n))
    }

    /// Receives it as a vector of `T`.
    pub fn matched_receive_vec<T: Equivalence>(self) -> Result<(Vec<T>, Status), Error> {
        let v = vec_from_bytes::<T>(&self.payload)?;
        Ok((v, self.comm.status_for(&self.key, self.payload.len())))
    }
}

impl<'a> Process<'a> {
    pub(crate) fn new(comm: &'a Communicator, rank: i32) -> Process<'a> {
        Process {
            comm,
            partner: Partner::Rank(rank),
        }
    }

    pub(crate) fn any(comm: &'a Communicator) -> Process<'a> {
        Process {
            comm,
            partner: Partner::Any,
        }
    }

    /// This partner's rank, or `ANY_SOURCE`.
    pub fn rank(&self) -> i32 {
        match self.partner {
            Partner::Rank(r) => r,
            Partner::Any => ANY_SOURCE,
        }
    }

    pub(super) fn dest(&self) -> Result<u32, Error> {
        match self.partner {
            Partner::Rank(r) => self.comm.check_rank(r),
            Partner::Any => Err(Error::Usage("cannot send to any_process()")),
        }
    }

    /// Buffered send with tag 0 (MPI_Send): returns once the message is in the local log.
    pub fn send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<(), Error> {
        self.send_with_tag(buf, 0)
    }

    /// Buffered send with a tag.
    pub fn send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) -> Result<(), Error> {
        let dst = self.dest()?;
        Communicator::check_tag(tag)?;
        self.comm.send_on(self.comm.id(), tag, dst, &buf.bytes())
    }

    /// Sends this rank the next *acknowledgement* on this communicator: a message without
    /// bytes that stays out of the sender log (`volpex_proto::message::ACK_TAG`), received
    /// with `post_acknowledgement_before_send`. The communicator must carry nothing else
    /// from this process to that rank (else the acknowledgement is logged as any
    /// message): a one-sided window's acknowledgements of requests whose answer carries
    /// nothing (docs/PROTOCOL.md, "Passive target").
    pub fn acknowledge(&self) -> Result<(), Error> {
        let dst = self.dest()?;
        self.comm.send_on(self.comm.id(), ACK_TAG, dst, &[])
    }

    /// Buffered send with a tag of memory the caller lends until it changes it (a
    /// one-sided target's window, answering a get): a large message is logged without a
    /// copy, also where replicas regenerate from their siblings' logs; the caller gives
    /// the loan back (`Communicator::take_back`, which copies what the log still holds)
    /// before it changes the memory, and before the memory is freed. `None`: it was sent
    /// as `send_with_tag` sends (small, or to this process itself).
    pub fn send_lent_until_changed_with_tag(
        &self,
        mem: &'static [u8],
        tag: Tag,
    ) -> Result<Option<Loan>, Error> {
        let dst = self.dest()?;
        Communicator::check_tag(tag)?;
        self.comm
            .send_lent_on((self.comm.id(), tag, dst), mem, Lend::UntilChanged)
    }

    /// Synchronous send with tag 0 (MPI_Ssend, as the `mpi` crate's `synchronous_send`,
    /// MPI-3.1 section 3.4): the message goes into the sender log as any other, and the
    /// call returns once a receive of the destination claimed it (the matching receive
    /// has started), whichever replica of the destination claimed it first. An error
    /// when every replica of the destination is gone.
    pub fn synchronous_send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<(), Error> {
        self.synchronous_send_with_tag(buf, 0)
    }

    /// Synchronous send with a tag (see `synchronous_send`).
    pub fn synchronous_send_with_tag<B: Buffer + ?Sized>(
        &self,
        buf: &B,
        tag: Tag,
    ) -> Result<(), Error> {
        let dst = self.dest()?;
        Communicator::check_tag(tag)?;
        let key = self
            .comm
            .send_synchronous_on(self.comm.id(), tag, dst, &buf.bytes())?;
        self.comm.wait_matched(&key)
    }

    /// Ready send with tag 0 (MPI_Rsend): MPI requires the receive to be posted already;
    /// a Volpex send never depends on that (the receiver pulls), so it is `send`.
    pub fn ready_send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<(), Error> {
        self.send_with_tag(buf, 0)
    }

    /// Ready send with a tag (see `ready_send`).
    pub fn ready_send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) -> Result<(), Error> {
        self.send_with_tag(buf, tag)
    }

    /// Buffered send with tag 0 (MPI_Bsend): every send is, so it is `send`.
    pub fn buffered_send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<(), Error> {
        self.send_with_tag(buf, 0)
    }

    /// Immediate synchronous send (MPI_Issend): the message is logged at once (the buffer
    /// is free again when this returns) and the request completes once a receive claimed
    /// it (see `synchronous_send`). `cancel` makes it complete at once instead.
    pub fn immediate_synchronous_send<'r, B: Buffer + ?Sized>(
        &self,
        buf: &B,
    ) -> Result<Request<'r>, Error> {
        self.immediate_synchronous_send_with_tag(buf, 0)
    }

    /// Immediate synchronous send with a tag.
    pub fn immediate_synchronous_send_with_tag<'r, B: Buffer + ?Sized>(
        &self,
        buf: &B,
        tag: Tag,
    ) -> Result<Request<'r>, Error> {
        let bytes = buf.bytes();
        let dst = self.dest()?;
        Communicator::check_tag(tag)?;
        let key = self
            .comm
            .send_synchronous_on(self.comm.id(), tag, dst, &bytes)?;
        let status = Status {
            source: self.comm.rank(),
            tag,
            bytes: bytes.len(),
            cancelled: false,
        };
        Ok(Request::synchronous(self.comm, key, status))
    }

    /// Immediate ready send (MPI_Irsend): complete once logged (see `ready_send`).
    pub fn immediate_ready_send<'r, B: Buffer + ?Sized>(
        &self,
        buf: &B,
    ) -> Result<Request<'r>, Error> {
        self.immediate_send_with_tag(buf, 0)
    }

    /// Immediate ready send with a tag.
    pub fn immediate_ready_send_with_tag<'r, B: Buffer + ?Sized>(
        &self,
        buf: &B,
        tag: Tag,
    ) -> Result<Request<'r>, Error> {
        self.immediate_send_with_tag(buf, tag)
    }

    /// Immediate send (MPI_Isend). Sends are buffered, so the request is already complete.
    pub fn immediate_send<'r, B: Buffer + ?Sized>(&self, buf: &B) -> Result<Request<'r>, Error> {
        self.immediate_send_with_tag(buf, 0)
    }

    /// Immediate send with a tag.
    pub fn immediate_send_with_tag<'r, B: Buffer + ?Sized>(
        &self,
        buf: &B,
        tag: Tag,
    ) -> Result<Request<'r>, Error> {
        let bytes = buf.bytes();
        let dst = self.dest()?;
        Communicator::check_tag(tag)?;
        self.comm.send_on(self.comm.id(), tag, dst, &bytes)?;
        Ok(Request::done(Status {
            source: self.comm.rank(),
            tag,
            bytes: bytes.len(),
            cancelled: false,
        }))
    }

    /// Immediate send with a tag of memory the caller lends until the request completes
    /// (an MPI program's buffer, which it leaves alone until then: MPI-3.1 section 3.7.2):
    /// a large message is not copied into the log unless its receivers' confirmations
    /// are late when the request completes (see `Core::send_lent`).
    pub fn immediate_send_lent_with_tag(
        &self,
        mem: &'static [u8],
        tag: Tag,
    ) -> Result<Request<'static>, Error> {
        self.lend_with_tag(mem, tag, Lend::UntilComplete)
    }

    /// `immediate_send_lent_with_tag` of a message no replay asks for again, lent also
    /// where replicas regenerate from their siblings' logs (MPI-IO's collective write
    /// blocks; see `Core::send_lent`, `Lend::Unreplayed`). The caller completes (or
    /// drops) the request before the memory changes.
    pub fn immediate_send_lent_unreplayed_with_tag(
        &self,
        mem: &'static [u8],
        tag: Tag,
    ) -> Result<Request<'static>, Error> {
        self.lend_with_tag(mem, tag, Lend::Unreplayed)
    }

    fn lend_with_tag(
        &self,
        mem: &'static [u8],
        tag: Tag,
        lend: Lend,
    ) -> Result<Request<'static>, Error> {
        let dst = self.dest()?;
        Communicator::check_tag(tag)?;
        let status = Status {
            source: self.comm.rank(),
            tag,
            bytes: mem.len(),
            cancelled: false,
        };
        Ok(
            match self
                .comm
                .send_lent_on((self.comm.id(), tag, dst), mem, lend)?
            {
                Some(loan) => Request::lent(self.comm, loan, status),
                None => Request::done(status),
            },
        )
    }

    fn post(
        &self,
        tag: Option<Tag>,
        mode: Mode,
    ) -> Result<volpex_proto::message::matching::RecvId, Error> {
        let spec = self.comm.spec(self.comm.id(), self.partner, tag)?;
        self.comm.post(spec, mode)
    }

    /// Receives the next message with any tag into `buf` (MPI_Recv with MPI_ANY_TAG).
    pub fn receive_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<Status, Error> {
        self.receive_into_tagged(buf, None)
    }

    /// Receives the next message with `tag` into `buf`.
    pub fn receive_into_with_tag<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        tag: Tag,
    ) -> Result<Status, Error> {
        self.receive_into_tagged(buf, Some(tag))
    }

    fn receive_into_tagged<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        tag: Option<Tag>,
    ) -> Result<Status, Error> {
        let id = self.post(tag, Mode::Receive)?;
        let elem = buf.elem_bytes();
        match buf.target() {
            Target::Contiguous(b) => self.comm.wait_into(id, b, elem),
            Target::Scattered(layout) => {
                let (key, data) = message(self.comm.wait(id)?)?;
                let n = deliver(Target::Scattered(layout), elem, &data)?;
                Ok(self.comm.status_for(&key, n))
            }
        }
    }

    /// Receives one value of `T` with any tag.
    pub fn receive<T: Equivalence>(&self) -> Result<(T, Status), Error> {
        self.receive_one(None)
    }

    /// Receives one value of `T` with `tag`.
    pub fn receive_with_tag<T: Equivalence>(&self, tag: Tag) -> Result<(T, Status), Error> {
        self.receive_one(Some(tag))
    }

    fn receive_one<T: Equivalence>(&self, tag: Option<Tag>) -> Result<(T, Status), Error> {
        let mut v = [T::fill()];
        let st = self.receive_into_tagged(&mut v[..], tag)?;
        if st.count_bytes() != T::WIRE_BYTES {
            return Err(Error::BadLength {
                message_bytes: st.count_bytes(),
                elem_bytes: T::WIRE_BYTES,
            });
        }
        let [x] = v;
        Ok((x, st))
    }

    /// Receives a whole message of `T`s with any tag, however long.
    pub fn receive_vec<T: Equivalence>(&self) -> Result<(Vec<T>, Status), Error> {
        self.receive_vec_tagged(None)
    }

    /// Receives a whole message of `T`s with `tag`.
    pub fn receive_vec_with_tag<T: Equivalence>(
        &self,
        tag: Tag,
    ) -> Result<(Vec<T>, Status), Error> {
        self.receive_vec_tagged(Some(tag))
    }

    fn receive_vec_tagged<T: Equivalence>(
        &self,
        tag: Option<Tag>,
    ) -> Result<(Vec<T>, Status), Error> {
        let id = self.post(tag, Mode::Receive)?;
        let (key, data) = message(self.comm.wait(id)?)?;
        let len = data.len();
        let v = vec_from_bytes::<T>(&data);
        volpex_proto::message::pool::recycle(data);
        Ok((v?, self.comm.status_for(&key, len)))
    }

    /// Immediate receive with any tag into `buf` (MPI_Irecv); the buffer is borrowed until
    /// the request completes.
    pub fn immediate_receive_into<'b, B: BufferMut + ?Sized>(
        &self,
        buf: &'b mut B,
    ) -> Result<Request<'b>, Error> {
        self.immediate_receive_tagged(buf, None)
    }

    /// Immediate receive with a tag.
    pub fn immediate_receive_into_with_tag<'b, B: BufferMut + ?Sized>(
        &self,
        buf: &'b mut B,
        tag: Tag,
    ) -> Result<Request<'b>, Error> {
        self.immediate_receive_tagged(buf, Some(tag))
    }

    /// Immediate receive with any tag into `target`, a layout the caller made (such as a
    /// foreign datatype's) that takes messages of whole `elem`-byte elements; the request
    /// holds the target until it completes.
    pub fn immediate_receive_target<'b>(
        &self,
        target: Target<'b>,
        elem: usize,
    ) -> Result<Request<'b>, Error> {
        self.immediate_receive_posted(target, elem, None)
    }

    /// `immediate_receive_target` with a tag.
    pub fn immediate_receive_target_with_tag<'b>(
        &self,
        target: Target<'b>,
        elem: usize,
        tag: Tag,
    ) -> Result<Request<'b>, Error> {
        self.immediate_receive_posted(target, elem, Some(tag))
    }

    fn immediate_receive_tagged<'b, B: BufferMut + ?Sized>(
        &self,
        buf: &'b mut B,
        tag: Option<Tag>,
    ) -> Result<Request<'b>, Error> {
        let elem = buf.elem_bytes();
        self.immediate_receive_posted(buf.target(), elem, tag)
    }

    fn immediate_receive_posted<'b>(
        &self,
        target: Target<'b>,
        elem: usize,
        tag: Option<Tag>,
    ) -> Result<Request<'b>, Error> {
        let id = self.post(tag, Mode::Receive)?;
        // Only an ANY_SOURCE receive has a coordination slot (`Engine::post`): asking
        // costs a lock.
        let slot = match self.partner {
            Partner::Any => self.comm.receive_slot(id),
            Partner::Rank(_) => None,
        };
        Ok(Request::receive(self.comm, id, target, elem, slot))
    }

    /// Posts a receive of the next whole message with `tag` from this rank, of any
    /// length, to be tested (without coordination: from one source the message is the
    /// same in every replica, only when it is here differs) or waited for.
    pub fn post_message_with_tag(&self, tag: Tag) -> Result<PostedMessage, Error> {
        self.post_message_then(tag, true)
    }

    /// `post_message_with_tag` by a caller that sends next, to this rank or another:
    /// the receive's pull waits for that send and goes out in the same write when the
    /// send is to this rank (a one-sided origin's answer receive and its request; a
    /// target's receive of an origin's next request and its answer), else with the
    /// next write or turn of the loop. A write saved is a few microseconds on the
    /// critical path of a round trip over TCP.
    pub fn post_message_before_send_with_tag(&self, tag: Tag) -> Result<PostedMessage, Error> {
        self.post_message_then(tag, false)
    }

    /// Posts a receive of the next acknowledgement from this rank (`acknowledge`), its
    /// pull waiting for the caller's next write as `post_message_before_send_with_tag`'s.
    pub fn post_acknowledgement_before_send(&self) -> Result<PostedMessage, Error> {
        let mut spec = self.partner_spec(None)?;
        spec.tag = TagSel::Tag(ACK_TAG);
        self.post_spec_then(spec, false)
    }

    /// Posts a receive of the next whole message with `tag` from this rank into `buf`,
    /// waited for in the pauses of a wait that polls other things too (`ReceiveInto`);
    /// its pull waits for the caller's next write, as `post_message_before_send_with_tag`.
    pub fn post_into_before_send_with_tag<'b>(
        &self,
        buf: &'b mut [u8],
        tag: Tag,
    ) -> Result<ReceiveInto<'b>, Error> {
        self.post_pieces_into_before_send_with_tag(vec![buf], tag)
    }

    /// `post_into_before_send_with_tag` for the next `bufs.len()` messages with `tag`
    /// from this rank, the k-th into `bufs[k]`, all waited for together (a large answer
    /// sent in pieces: each can land while the next is on its way).
    pub fn post_pieces_into_before_send_with_tag<'b>(
        &self,
        bufs: Vec<&'b mut [u8]>,
        tag: Tag,
    ) -> Result<ReceiveInto<'b>, Error> {
        if matches!(self.partner, Partner::Any) {
            return Err(Error::Usage(
                "a posted message comes from one rank, not any",
            ));
        }
        let mut recvs = Vec::with_capacity(bufs.len());
        for buf in bufs {
            let spec = self.comm.spec(self.comm.id(), self.partner, Some(tag))?;
            recvs.push((self.comm.post_then(spec, Mode::Receive, false)?, buf));
        }
        Ok(ReceiveInto::new(self.comm.clone(), recvs))
    }

    fn post_message_then(&self, tag: Tag, flush: bool) -> Result<PostedMessage, Error> {
        let spec = self.partner_spec(Some(tag))?;
        self.post_spec_then(spec, flush)
    }

    /// A receive's spec for messages from this rank (one rank, not any) with `tag`.
    fn partner_spec(&self, tag: Option<Tag>) -> Result<RecvSpec, Error> {
        if matches!(self.partner, Partner::Any) {
            return Err(Error::Usage(
                "a posted message comes from one rank, not any",
            ));
        }
        self.comm.spec(self.comm.id(), self.partner, tag)
    }

    /// Posts a receive of `spec` (`flush`: its pull goes at once, else with the next
    /// write).
    fn post_spec_then(&self, spec: RecvSpec, flush: bool) -> Result<PostedMessage, Error> {
        let id = self.comm.post_then(spec, Mode::Receive, flush)?;
        Ok(PostedMessage {
            comm: self.comm.clone(),
            id: Some(id),
        })
    }

    /// Claims the next message with `tag` from this rank without pulling it: a deferred
    /// receive (see `DeferredMessage`), for a replica that needs the message only if
    /// something fails (the aggregator of an MPI-IO write whose replica is not the
    /// rank's file writer). The communicator must carry from this rank to the caller's
    /// only messages with `tag`: a deferred message is counted as received by its
    /// place in that stream. `None` while an earlier receive that could match is still
    /// unresolved (receive it normally then).
    pub fn defer_message_with_tag(&self, tag: Tag) -> Result<Option<DeferredMessage>, Error> {
        let src = match self.partner {
            Partner::Any => {
                return Err(Error::Usage(
                    "a deferred message comes from one rank, not any",
                ))
            }
            Partner::Rank(r) => self.comm.world_rank(self.comm.check_rank(r)?)?,
        };
        Communicator::check_tag(tag)?;
        Ok(self.comm.defer(src, tag)?.map(|key| DeferredMessage {
            comm: self.comm.clone(),
            key: Some(key),
        }))
    }

    /// Waits for a message with any tag and returns its status without receiving it
    /// (MPI_Probe); a receive from `status.source_rank()` with `status.tag()` then gets it.
    pub fn probe(&self) -> Result<Status, Error> {
        self.probe_tagged(None)
    }

    /// `probe` for a message with `tag`.
    pub fn probe_with_tag(&self, tag: Tag) -> Result<Status, Error> {
        self.probe_tagged(Some(tag))
    }

    fn probe_tagged(&self, tag: Option<Tag>) -> Result<Status, Error> {
        let id = self.post(tag, Mode::Probe)?;
        let (key, data) = message(self.comm.wait(id)?)?;
        Ok(self.comm.status_for(&key, data.len()))
    }

    /// Whether a message with any tag is here now, without receiving it (MPI_Iprobe).
    /// Every replica of this rank gets the same answer: the leader's.
    pub fn immediate_probe(&self) -> Result<Option<Status>, Error> {
        self.immediate_probe_tagged(None)
    }

    /// `immediate_probe` for a message with `tag`.
    pub fn immediate_probe_with_tag(&self, tag: Tag) -> Result<Option<Status>, Error> {
        self.immediate_probe_tagged(Some(tag))
    }

    fn immediate_probe_tagged(&self, tag: Option<Tag>) -> Result<Option<Status>, Error> {
        let id = self.post(tag, Mode::ImmediateProbe)?;
        Ok(match self.comm.wait(id)? {
            Matched::Message { key, payload } => Some(self.comm.status_for(&key, payload.len())),
            Matched::Nothing => {
                // A program that polls with MPI_Iprobe: see `Communicator::idle`.
                self.comm.idle();
                None
            }
        })
    }

    /// Waits for a message with any tag and takes it for this caller alone (MPI_Mprobe).
    pub fn matched_probe(&self) -> Result<(Message, Status), Error> {
        self.matched_probe_tagged(None)
    }

    /// `matched_probe` for a message with `tag`.
    pub fn matched_probe_with_tag(&self, tag: Tag) -> Result<(Message, Status), Error> {
        self.matched_probe_tagged(Some(tag))
    }

    fn matched_probe_tagged(&self, tag: Option<Tag>) -> Result<(Message, Status), Error> {
        let id = self.post(tag, Mode::Receive)?;
        let (key, payload) = message(self.comm.wait(id)?)?;
        let status = self.comm.status_for(&key, payload.len());
        let msg = Message {
            comm: self.comm.clone(),
            key,
            payload,
        };
        Ok((msg, status))
    }
}
