//! The receive side of a communicator: what a receive matches (`spec`), posting it,
//! waiting for it (landing a large message straight in the caller's buffer) or testing
//! it, and the loop turns and coordinated choices that completing requests need.
//!
//! Owns the turn from "a posted receive" to "a status and the bytes in place". Must never
//! decide which message a receive matches or which replica to pull from (the engine
//! does), and never sends: the send path is `communicator.rs`.

use std::time::Duration;

use bytes::Bytes;
use smallvec::SmallVec;

use super::communicator::{Communicator, Partner};
use super::{Status, Tag};
use crate::error::Error;
use crate::transport::progress::AppGuard;
use crate::transport::{Core, Landing, Pace};
use volpex_proto::limits::LARGE_PAYLOAD_BYTES;
use volpex_proto::message::matching::{Matched, Mode, RecvId, RecvSpec, Source, TagSel};
use volpex_proto::message::{Key, Want};
use volpex_proto::pull::decision::CANCELLED_MATCH;
use volpex_proto::pull::ChoiceState;

impl Communicator {
    /// What a receive from `from` with `tag` (`None`: any tag) in context `ctx` matches.
    pub(crate) fn spec(
        &self,
        ctx: u32,
        from: Partner,
        tag: Option<Tag>,
    ) -> Result<RecvSpec, Error> {
        let src = match from {
            Partner::Rank(r) => Source::Rank(self.world_rank(self.check_rank(r)?)?),
            Partner::Any => Source::Any(self.members.world.clone()),
        };
        let tag = match tag {
            Some(t) => {
                Self::check_tag(t)?;
                TagSel::Tag(t)
            }
            None => TagSel::Any,
        };
        Ok(RecvSpec {
            comm: ctx,
            src,
            tag,
        })
    }

    /// Posts a receive or probe.
    pub(crate) fn post(&self, spec: RecvSpec, mode: Mode) -> Result<RecvId, Error> {
        self.post_then(spec, mode, true)
    }

    /// `post`; with `flush` false, what it has to send (its pull) waits for the next
    /// write or turn of the loop (`Process::post_message_before_send_with_tag`).
    pub(crate) fn post_then(
        &self,
        spec: RecvSpec,
        mode: Mode,
        flush: bool,
    ) -> Result<RecvId, Error> {
        self.inner.check_restored()?;
        let mut core = self.inner.rt.lock();
        if mode == Mode::ImmediateProbe {
            // Let what already reached the socket count.
            core.turn(Some(Duration::ZERO), false)
                .map_err(Error::EventLoop)?;
        }
        let now = core.now();
        let id = core.engine.post(now, spec, mode);
        if flush {
            core.flush();
        }
        Ok(id)
    }

    /// Drives the loop until `id` completes.
    pub(crate) fn wait(&self, id: RecvId) -> Result<Matched, Error> {
        let mut core = self.inner.rt.lock();
        core.drive_until(|c| c.take(id), &mut [])
            .map_err(Error::EventLoop)?
            .map_err(Error::from)
    }

    /// Drives the loop until receive `id` completes with its message in `buf` (a large
    /// one lands there straight from the socket). Returns its status.
    pub(crate) fn wait_into(
        &self,
        id: RecvId,
        buf: &mut [u8],
        elem: usize,
    ) -> Result<Status, Error> {
        let mut one = [RecvInto::new(id, buf)];
        Arrivals::new(&mut one).wait(&mut self.inner.rt.lock())?;
        let [done] = one;
        done.finish(self, elem)
    }

    /// Completes `id` if it is done, without waiting (one non-blocking loop turn).
    /// After a poll found nothing done: gives the CPU away when this process may have to
    /// share its core (`Config::yield_when_idle`, the default), as Open MPI does on a
    /// crowded host, so a program that polls (MPI_Test in a loop) does not keep the
    /// process it waits for off the CPU (3 ranks polling `MPI_Testall` on 2 cores: 10 ms
    /// a round trip without it, one scheduler time slice).
    pub(crate) fn idle(&self) {
        if self.inner.rt.lock().spin_config().yield_between {
            std::thread::yield_now();
        }
    }

    /// Completes `id` if an earlier turn of the loop brought its message (no turn).
    pub(crate) fn arrived(&self, id: RecvId) -> Result<Option<Matched>, Error> {
        match self.inner.rt.lock().take(id) {
            Some(r) => r.map(Some).map_err(Error::from),
            None => Ok(None),
        }
    }

    pub(crate) fn test(&self, id: RecvId) -> Result<Option<Matched>, Error> {
        let mut core = self.inner.rt.lock();
        if let Some(r) = core.take(id) {
            return r.map(Some).map_err(Error::from);
        }
        core.turn(Some(Duration::ZERO), false)
            .map_err(Error::EventLoop)?;
        match core.take(id) {
            Some(r) => r.map(Some).map_err(Error::from),
            None => Ok(None),
        }
    }

    /// One blocking turn of the event loop (returns when anything happened).
    pub(crate) fn drive_once(&self) -> Result<(), Error> {
        self.inner
            .rt
            .lock()
            .turn(None, false)
            .map_err(Error::EventLoop)
    }

    /// Drives the loop for up to `d` (returns sooner when anything happened): a caller
    /// that polls several things waits here between rounds.
    pub fn drive_for(&self, d: Duration) -> Result<(), Error> {
        self.inner
            .rt
            .lock()
            .turn(Some(d), false)
            .map_err(Error::EventLoop)
    }

    /// One pause of a wait that polls things itself (`Waiting`): while the wait is within
    /// the spin of a blocking receive's wait (`VOLPEX_SPIN_US`, `VOLPEX_HARD_SPIN_US`,
    /// `VOLPEX_YIELD`), a turn of the loop that does not sleep, then the CPU given away
    /// if the blocking waits would; after that, a turn that sleeps until something
    /// happens or `look` passed. So a serving call (a passive target's, which polls its
    /// requests and what it waits for) answers as soon as a blocking receive would: a
    /// turn that sleeps costs the wake-up of an idle core, tens of microseconds.
    pub fn pause(&self, w: &mut Waiting, look: Duration) -> Result<(), Error> {
        let mut core = self.inner.rt.lock();
        let pace = match &mut w.pace {
            Some(p) => p,
            None => {
                let now = core.now();
                w.pace.insert(Pace::new(core.spin_config_at(now), now))
            }
        };
        if !pace.spinning() {
            return core.turn(Some(look), false).map_err(Error::EventLoop);
        }
        core.turn(Some(Duration::ZERO), false)
            .map_err(Error::EventLoop)?;
        let give = pace.polled(|| core.turned_at());
        drop(core);
        if give {
            std::thread::yield_now();
        }
        Ok(())
    }

    /// Claims the next message with `tag` from world rank `src` on this communicator's
    /// point-to-point context without pulling it (`Engine::defer`).
    pub(crate) fn defer(&self, src: u32, tag: Tag) -> Result<Option<Key>, Error> {
        self.inner.check_restored()?;
        Ok(self.inner.rt.lock().engine.defer(self.id(), tag, src))
    }

    /// A deferred message that will not be taken counts as received (`Engine::skip`).
    pub(crate) fn skip_deferred(&self, key: Key) {
        let mut core = self.inner.rt.lock();
        core.engine.skip(key);
        core.flush();
    }

    /// Pulls a deferred message after all (`Engine::post_claimed`).
    pub(crate) fn post_deferred(&self, key: Key) -> Result<RecvId, Error> {
        self.inner.check_restored()?;
        let mut core = self.inner.rt.lock();
        let now = core.now();
        let id = core.engine.post_claimed(now, key);
        core.flush();
        Ok(id)
    }

    pub(crate) fn detach(&self, id: RecvId) {
        self.inner.rt.lock().engine.detach(id);
    }

    /// A slot for a choice this rank's replicas must agree on (`None`: not coordinated).
    pub(crate) fn post_choice(&self) -> Option<u64> {
        self.inner.rt.lock().engine.post_choice()
    }

    /// Where choice `slot` stands (asks the leader for it if need be).
    pub(crate) fn choice(&self, slot: u64) -> ChoiceState {
        let mut core = self.inner.rt.lock();
        let now = core.now();
        let st = core.engine.choice(now, slot);
        core.flush();
        st
    }

    /// A value every replica of this rank must see the same although it depends on
    /// timing (the size of a file other ranks write, for MPI-IO): the rank's leader
    /// replica computes it with `f` and records it as a choice (see "Wildcards and
    /// choices" in docs/LIBRARY.md); the other replicas take the leader's value and never
    /// call `f`. Every replica must make the same calls of it, in the same order. With
    /// one replica per rank, `f` answers.
    pub fn decide(&self, f: impl FnOnce() -> u64) -> Result<u64, Error> {
        self.decide_in_slot(|_| f())
    }

    /// `decide`, with `f` given the choice's slot (`None`: one replica per rank): the
    /// same in every replica and incarnation of the rank, and never reused by it. A
    /// leader that dies after `f` and before its siblings learnt the value leaves the
    /// choice to the next leader, which calls `f` again: an `f` that changes something
    /// outside the process (a file other ranks read) can record the slot there and, when
    /// it finds it, answer what it answered before instead of changing it twice.
    pub fn decide_in_slot(&self, f: impl FnOnce(Option<u64>) -> u64) -> Result<u64, Error> {
        let Some(slot) = self.post_choice() else {
            return Ok(f(None));
        };
        loop {
            match self.choice(slot) {
                ChoiceState::Made(v) => {
                    let b: [u8; 8] =
                        v[..].try_into().map_err(|_| Error::RequestChoiceMismatch {
                            choice: v.to_vec(),
                            requests: 0,
                        })?;
                    return Ok(u64::from_le_bytes(b));
                }
                ChoiceState::Yours => {
                    let x = f(Some(slot));
                    self.make_choice(slot, Bytes::copy_from_slice(&x.to_le_bytes()));
                    return Ok(x);
                }
                ChoiceState::Waiting => self.drive_once()?,
            }
        }
    }

    /// The next slot of this rank's choices, for a decision the program makes over
    /// time (`poll_choice`, `record_choice`) rather than at once (`decide`); `None`
    /// when the rank runs one replica (nothing to coordinate). Every replica must take
    /// the same slots in the same order.
    pub fn choice_slot(&self) -> Option<u64> {
        self.post_choice()
    }

    /// Where choice `slot` stands, without waiting (asks the leader for it if need be).
    pub fn poll_choice(&self, slot: u64) -> Decision {
        match self.choice(slot) {
            ChoiceState::Made(v) => Decision::Made(v),
            ChoiceState::Yours => Decision::Yours,
            ChoiceState::Waiting => Decision::Waiting,
        }
    }

    /// Records `value` as choice `slot`: only after `poll_choice` said `Yours`, and
    /// before anything that depends on it leaves this process (a message sent after it
    /// carries it to whoever might depend on it; docs/PROTOCOL.md, "Choices").
    pub fn record_choice(&self, slot: u64, value: Vec<u8>) {
        self.make_choice(slot, Bytes::from(value));
    }

    /// Records this replica's (the leader's) choice for `slot`.
    pub(crate) fn make_choice(&self, slot: u64, value: Bytes) {
        let mut core = self.inner.rt.lock();
        let now = core.now();
        core.engine.make_choice(now, slot, value);
        core.flush();
    }

    /// Decides and carries out the cancel of receive `id` (MPI_Cancel); true when it was
    /// cancelled, false when it matched a message (it then completes as usual). Every
    /// replica of the rank reaches the same answer: an `ANY_SOURCE` receive is cancelled
    /// when its coordination slot holds `CANCELLED_MATCH` (the leader puts it there if it
    /// had not chosen a match yet), any other receive when the leader's answer, recorded
    /// in a slot of its own, says so (`Matcher::may_cancel`); without coordination this
    /// replica decides alone.
    /// `wildcard` is the receive's coordination slot, as it was posted.
    pub(crate) fn cancel_receive(&self, id: RecvId, wildcard: Option<u64>) -> Result<bool, Error> {
        let mut core = self.inner.rt.lock();
        if wildcard.is_some() && !core.engine.is_unresolved(id) {
            // Its match was chosen (by the leader, which then answers no too): it is not
            // cancelled, and its slot, used, may be gone already.
            return Ok(false);
        }
        let slot = wildcard.or_else(|| core.engine.post_choice());
        let cancelled = loop {
            let now = core.now();
            let state = match slot {
                Some(s) => core.engine.choice(now, s),
                None => ChoiceState::Yours,
            };
            core.flush();
            match (state, wildcard) {
                (ChoiceState::Made(v), Some(_)) => break v == CANCELLED_MATCH,
                (ChoiceState::Made(v), None) => break v.first() == Some(&1),
                (ChoiceState::Yours, Some(s)) => {
                    // The leader had not chosen this receive's match: it never will.
                    core.engine
                        .make_choice(now, s, Bytes::from_static(CANCELLED_MATCH));
                    break true;
                }
                (ChoiceState::Yours, None) => {
                    let yes = core.engine.may_cancel(id);
                    if let Some(s) = slot {
                        core.engine
                            .make_choice(now, s, Bytes::from(vec![u8::from(yes)]));
                    }
                    break yes;
                }
                (ChoiceState::Waiting, _) => {
                    core.turn(None, false).map_err(Error::EventLoop)?;
                }
            }
        };
        if cancelled {
            let now = core.now();
            core.engine
                .cancel(now, id)
                .map_err(|_| Error::CancelDiverged)?;
        }
        core.flush();
        Ok(cancelled)
    }

    /// The coordination slot receive `id` was posted with (`Matcher::slot_of`).
    pub(crate) fn receive_slot(&self, id: RecvId) -> Option<u64> {
        self.inner.rt.lock().engine.receive_slot(id)
    }

    pub(crate) fn status_for(&self, key: &Key, bytes: usize) -> Status {
        Status {
            source: self.members.local(key.src).map_or(-1, |r| r as i32),
            tag: key.tag,
            bytes,
            cancelled: false,
        }
    }
}

/// A wait that polls several things itself, between which it pauses with
/// `Communicator::pause`: it starts with the first pause, and waits from then on as a
/// blocking receive would (spins, then sleeps).
#[derive(Debug, Default)]
pub struct Waiting {
    pace: Option<Pace>,
}

impl Waiting {
    /// Starts the wait over (its caller did something: what it waits for may take a
    /// while from now).
    pub fn restart(&mut self) {
        self.pace = None;
    }
}

/// Receives of the next whole messages with a tag from one rank, each into a buffer of
/// the caller's (usually one), waited for in the pauses of a wait that polls other
/// things too (a serving call's, `Waiting`): a large message lands straight in the
/// buffer when its first bytes come in one of these pauses (read in another turn of the
/// loop, it is copied there once it is whole), so the caller's polls must not turn the
/// loop themselves (`PostedMessage::arrived`). A pause does not return while a message
/// is landing (a turn of the loop that did not offer the buffer would have to drop its
/// rest), so the caller's own polls between pauses never withdraw a landing; meanwhile
/// it sleeps in the poll until more of the message comes, rather than spin. Dropped before it completed, it
/// claims nothing.
pub struct ReceiveInto<'b> {
    comm: Communicator,
    /// The receives, in order; taken once all completed.
    recv: Vec<RecvInto<'b>>,
}

impl<'b> ReceiveInto<'b> {
    pub(crate) fn new(comm: Communicator, recvs: Vec<(RecvId, &'b mut [u8])>) -> Self {
        ReceiveInto {
            comm,
            recv: recvs
                .into_iter()
                .map(|(id, buf)| RecvInto::new(id, buf))
                .collect(),
        }
    }

    /// One pause of the wait `w`, as `Communicator::pause`, offering the buffers: the
    /// messages' statuses, in order, once every one is in its buffer (then the receives
    /// are over).
    pub fn pause(&mut self, w: &mut Waiting, look: Duration) -> Result<Option<Vec<Status>>, Error> {
        if self.recv.is_empty() {
            return Err(Error::RequestCompleted);
        }
        let comm = self.comm.clone();
        let mut core = comm.inner.rt.lock();
        let pace = match &mut w.pace {
            Some(p) => p,
            None => {
                let now = core.now();
                w.pace.insert(Pace::new(core.spin_config_at(now), now))
            }
        };
        let mut arrivals = Arrivals::new(&mut self.recv);
        let complete = loop {
            arrivals.offer(&core);
            // While a message lands its bytes come as the socket gets them: the turn
            // sleeps until the next ones are there rather than spin (the sender needs a
            // core to write them, and a poll that finds a few kilobytes reads them in
            // a read call each).
            let spinning = pace.spinning() && !core.landing_in_progress();
            let wait = if spinning { Duration::ZERO } else { look };
            core.turn_with(Some(wait), false, arrivals.landings())
                .map_err(Error::EventLoop)?;
            let mut all = true;
            for r in arrivals.all.iter_mut().filter(|r| r.result.is_none()) {
                r.result = core.take(r.id);
                all &= r.result.is_some();
            }
            if all {
                break true;
            }
            if !core.landing_in_progress() {
                break false;
            }
        };
        drop(arrivals);
        let give = !complete && pace.spinning() && pace.polled(|| core.turned_at());
        drop(core);
        if give {
            std::thread::yield_now();
        }
        if !complete {
            return Ok(None);
        }
        std::mem::take(&mut self.recv)
            .into_iter()
            .map(|r| r.finish(&self.comm, 1))
            .collect::<Result<Vec<Status>, Error>>()
            .map(Some)
    }
}

impl Drop for ReceiveInto<'_> {
    fn drop(&mut self) {
        for r in &self.recv {
            self.comm.detach(r.id);
        }
    }
}

/// Where a choice slot stands (`Communicator::poll_choice`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Made, by the leader replica (or by this one earlier): act on it.
    Made(Bytes),
    /// This replica leads: decide, `record_choice`, then act.
    Yours,
    /// The leader has not told this replica yet: turn the loop and ask again.
    Waiting,
}

/// One receive waited for by `Arrivals`, with the buffer its message goes to.
pub(crate) struct RecvInto<'b> {
    id: RecvId,
    /// `None` while it is lent to a landing.
    buf: Option<&'b mut [u8]>,
    /// Which landing holds the buffer.
    at: Option<usize>,
    /// The bytes that landed in the buffer straight from the socket.
    landed: Option<usize>,
    result: Option<Result<Matched, volpex_proto::pull::RecvError>>,
}

impl<'b> RecvInto<'b> {
    pub(crate) fn new(id: RecvId, buf: &'b mut [u8]) -> Self {
        RecvInto {
            id,
            buf: Some(buf),
            at: None,
            landed: None,
            result: None,
        }
    }

    /// Whether its buffer is here and could take a landing: from a frame only a payload
    /// larger than `LARGE_PAYLOAD_BYTES` lands (a smaller one is copied out of the read
    /// buffer), so a buffer no larger is lent only when messages may come in
    /// shared-memory slots (`slots`: the core reaches a peer so), which land whatever
    /// their size (docs/SHM.md, "Messages read in place").
    fn may_land(&self, slots: bool) -> bool {
        self.at.is_none()
            && self
                .buf
                .as_ref()
                .is_some_and(|b| slots || b.len() > LARGE_PAYLOAD_BYTES)
    }

    /// The completed receive's status, its message in the buffer (copied there if it
    /// did not land).
    pub(crate) fn finish(self, comm: &Communicator, elem: usize) -> Result<Status, Error> {
        let Some(result) = self.result else {
            unreachable!("`Arrivals::wait` returns once every receive completed")
        };
        let Some(buf) = self.buf else {
            unreachable!("dropping `Arrivals` gives every buffer back")
        };
        let (key, payload) = message(result?)?;
        let n = match self.landed {
            Some(n) if payload.is_empty() => check_whole(n, elem).map(|()| n)?,
            _ => {
                let n = fill_bytes(buf, elem, &payload);
                volpex_proto::message::pool::recycle(payload);
                n?
            }
        };
        Ok(comm.status_for(&key, n))
    }
}

/// Receives waited for together, and the landings their buffers are lent to while they
/// wait; dropping it gives every buffer back to its receive.
pub(crate) struct Arrivals<'a, 'b> {
    all: &'a mut [RecvInto<'b>],
    /// Inline: a small receive's wait lends its buffer (to a shared-memory slot) without
    /// an allocation.
    landings: SmallVec<[Landing<'b>; 2]>,
}

impl<'a, 'b> Arrivals<'a, 'b> {
    pub(crate) fn new(all: &'a mut [RecvInto<'b>]) -> Self {
        Arrivals {
            all,
            landings: SmallVec::new(),
        }
    }

    /// Lends the buffer of each receive that now knows its message to a landing (until
    /// then nothing can land), if it `may_land` (a small receive's wait asks the engine
    /// nothing here and allocates nothing).
    pub(crate) fn offer(&mut self, core: &Core) {
        let slots = core.has_colocated();
        for i in 0..self.all.len() {
            let r = &self.all[i];
            if r.result.is_none() && r.may_land(slots) {
                if let Some(want) = core.engine.landing_for(r.id) {
                    self.lend(i, want);
                }
            }
        }
    }

    /// Lends receive `i`'s buffer to a landing of the message `want`.
    fn lend(&mut self, i: usize, want: Want) {
        let r = &mut self.all[i];
        if let Some(buf) = r.buf.take() {
            r.at = Some(self.landings.len());
            self.landings.push(Landing {
                want,
                buf,
                landed: None,
            });
        }
    }

    /// The landings offered so far, for a loop turn.
    pub(crate) fn landings(&mut self) -> &mut [Landing<'b>] {
        &mut self.landings
    }

    /// Drives the loop until every receive completed.
    pub(crate) fn wait(mut self, core: &mut AppGuard<'_>) -> Result<(), Error> {
        while !self.wait_or(core, |_| false)? {}
        Ok(())
    }

    /// Drives the loop until every receive completed (true) or, sooner, `interrupt` holds
    /// (false; it is asked before the first turn and after each).
    pub(crate) fn wait_or(
        &mut self,
        core: &mut AppGuard<'_>,
        mut interrupt: impl FnMut(&Core) -> bool,
    ) -> Result<bool, Error> {
        loop {
            self.offer(core);
            if self.all.iter().all(|r| r.result.is_some()) {
                return Ok(true);
            }
            if interrupt(core) {
                return Ok(false);
            }
            let all = &mut *self.all;
            let interrupted = core
                .drive_until(
                    |c| {
                        let mut changed = false;
                        let slots = c.has_colocated();
                        for r in all.iter_mut().filter(|r| r.result.is_none()) {
                            r.result = c.take(r.id);
                            changed |= r.result.is_some()
                                || (r.may_land(slots) && c.engine.landing_for(r.id).is_some());
                        }
                        if changed {
                            Some(false)
                        } else {
                            interrupt(c).then_some(true)
                        }
                    },
                    &mut self.landings,
                )
                .map_err(Error::EventLoop)?;
            if interrupted {
                return Ok(false);
            }
        }
    }
}

impl Drop for Arrivals<'_, '_> {
    fn drop(&mut self) {
        for (i, l) in self.landings.drain(..).enumerate() {
            if let Some(r) = self.all.iter_mut().find(|r| r.at == Some(i)) {
                r.buf = Some(l.buf);
                r.landed = l.landed.or(r.landed);
                // Here again: a later `Arrivals` may lend it (`ReceiveInto::pause`).
                r.at = None;
            }
        }
    }
}

/// The message a completed receive or blocking probe matched.
pub(crate) fn message(m: Matched) -> Result<(Key, Bytes), Error> {
    match m {
        Matched::Message { key, payload } => Ok((key, payload)),
        Matched::Nothing => Err(Error::NoMessage),
    }
}

pub(crate) fn check_whole(bytes: usize, elem: usize) -> Result<(), Error> {
    if bytes.is_multiple_of(elem.max(1)) {
        Ok(())
    } else {
        Err(Error::BadLength {
            message_bytes: bytes,
            elem_bytes: elem,
        })
    }
}

/// Copies a received message into a buffer of `elem`-byte elements, checking it fits
/// in whole elements.
pub(crate) fn fill_bytes(dst: &mut [u8], elem: usize, data: &[u8]) -> Result<usize, Error> {
    if data.len() > dst.len() {
        return Err(Error::Truncated {
            message_bytes: data.len(),
            buffer_bytes: dst.len(),
        });
    }
    check_whole(data.len(), elem)?;
    dst[..data.len()].copy_from_slice(data);
    Ok(data.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A receive whose buffer one `Arrivals` lent (and gave back) may be lent again by the
    /// next: `ReceiveInto::pause` makes a new `Arrivals` per pause, so a receive whose
    /// message was not known in the first pause must still land in a later one (before,
    /// its `at` stayed set and 0 of 40 `osu_get_bw` answers landed in place).
    #[test]
    fn a_receive_lent_once_may_be_lent_again() {
        let mut buf = vec![0u8; LARGE_PAYLOAD_BYTES + 1];
        let mut one = [RecvInto::new(RecvId(7), &mut buf)];
        let key = Key {
            comm: 1,
            tag: 6,
            src: 0,
            dst: 1,
            seq: 0,
        };
        for round in 0..3 {
            assert!(
                one[0].may_land(false),
                "round {round}: its buffer is offered"
            );
            let mut arrivals = Arrivals::new(&mut one);
            arrivals.lend(0, Want::Key(key));
            assert_eq!(arrivals.landings().len(), 1);
            assert!(
                !arrivals.all[0].may_land(true),
                "lent, it is not offered twice"
            );
            drop(arrivals);
        }
        assert!(one[0].buf.is_some() && one[0].at.is_none());
    }
}
