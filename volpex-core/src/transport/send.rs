//! Sending a message: the application's send command, carried out under the core's lock.
//! The engine decides what to log, whom to answer and whether a message may skip the log
//! (`Engine::write_ahead`, `send`, `send_unlogged`) and makes every frame; this module
//! carries the command out: a large message's DATA frames (the engine's headers, then
//! the sender's buffer) start going out to the replicas whose pulls wait for it before it
//! is copied into the log, and the engine learns how much went out
//! (`Engine::handle_written`); an exchange's large block waits in the sender's buffer
//! until its pull comes; the sender blocks (turning the loop) while the log is full. Must
//! never decide protocol questions nor make wire bytes itself.

use std::io;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;

use volpex_proto::handshake::PeerId;
use volpex_proto::limits::{DIRECT_WRITE_BYTES_MIN, HEADER_BYTES, UNLOGGED_BYTES_MIN};
use volpex_proto::message::log::{Lend, LogFull};
use volpex_proto::message::pool;
use volpex_proto::message::Key;
use volpex_proto::pull::{DirectWrite, WriteAhead};
use volpex_proto::wire::stream::Landing;

use super::event_loop::Core;
use super::shm::SLOT_PAYLOAD_MAX;
use crate::config::{FULL_LOG_TURN, LENT_BYTES_MIN, LOANS_WAIT};
use crate::error::Error;

/// Why a send failed.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// Every replica of the destination is gone while the sender waited for log room.
    #[error("rank {rank} lost: all its replicas failed")]
    RankLost {
        /// The lost destination rank.
        rank: u32,
    },
    /// The event loop failed while the sender waited.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The log refused a message it had just made room for (a bug of ours).
    #[error("sender log refused a message it had room for: {0:?}")]
    LogRefused(LogFull),
}

impl From<SendError> for Error {
    fn from(e: SendError) -> Self {
        match e {
            SendError::RankLost { rank } => Error::RankLost { rank },
            SendError::Io(e) => Error::EventLoop(e),
            SendError::LogRefused(full) => Error::LogRefused(full),
        }
    }
}

/// A send polls the sockets first when they were last polled longer ago than this (see
/// `Core::start_send`): one non-blocking poll, a microsecond, against a pull that
/// would otherwise wait for the sender's next blocking call.
const READ_BEFORE_SEND_AFTER: Duration = Duration::from_micros(50);

/// A large send of an exchange that is not in the log yet (see `Core::send_unsettled`):
/// it went out whole, or waits for its pull. It borrows the sender's buffer until
/// `Core::settle_all` ends it.
#[derive(Debug)]
#[must_use = "an unsettled send holds its message's place: settle it"]
pub struct Unsettled<'b> {
    comm: u32,
    tag: i32,
    dst: u32,
    bytes: &'b [u8],
    place: Place,
}

/// Where an unsettled send stands.
#[derive(Debug)]
enum Place {
    /// No pull waited for it when it was sent and nothing of it went out: it keeps its
    /// place in the order of sends until a pull for it comes (`Core::release_awaited`) or
    /// the exchange ends.
    Held,
    /// It went out whole from the sender's buffer to every live replica of its
    /// destination, asking each to confirm it, as message `order` of (comm, dst) (the
    /// engine knows: its DATA is not written again if it is logged after all).
    Out { order: u64 },
}

/// The application's memory an immediate send lends to the log (`Core::send_lent`): the
/// payload of every frame and log entry of the message, without a copy. `_alive` counts
/// them: once the last is dropped, nothing here reads the memory any more.
struct Lent {
    mem: &'static [u8],
    _alive: Arc<()>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        self.mem
    }
}

/// An immediate send whose payload is lent to the log (`Core::send_lent`) until its
/// request completes (`Core::give_back`).
#[derive(Debug)]
#[must_use = "a lent send reads the application's memory until it is given back"]
pub struct Loan {
    key: Key,
    len: usize,
    alive: Weak<()>,
}

/// How long a `give_back` waiting for the frames that still share the lent memory to be
/// written lets the loop sleep between looks.
const LENT_TURN: Duration = Duration::from_millis(1);

impl Core {
    /// `send` of memory the caller lends until `lend`: a message of at least
    /// `LENT_BYTES_MIN` bytes is logged without being copied, its DATA frames go out from
    /// `mem` and ask each receiver to confirm it. `Lend::UntilComplete`: an immediate
    /// send's buffer, which the program leaves alone until the request completes
    /// (MPI-3.1 section 3.7.2), ended by `give_back`. `Lend::UntilChanged`: a one-sided
    /// target's window answering a get, ended by `take_back` before the target changes
    /// it; also where regenerated replicas replay from their siblings' logs, which keep
    /// the payload (retained) until it is taken back and copied then.
    /// `Lend::Unreplayed`: as `UntilComplete`, also where regenerated replicas replay
    /// from their siblings' logs (which keep every other message), for a message no
    /// replay asks for again: MPI-IO's collective write blocks, which a replaying
    /// aggregator replica skips (docs/FILES.md "Writes without their bytes"). `None`: it
    /// was sent as `send` sends (smaller, to itself, or lent until complete where a
    /// regenerated replica replays from its siblings' logs, which keep every message).
    pub fn send_lent(
        &mut self,
        (comm, tag, dst): (u32, i32, u32),
        mem: &'static [u8],
        lend: Lend,
    ) -> Result<Option<Loan>, SendError> {
        let lends = match lend {
            Lend::UntilComplete => self.engine.lends(),
            Lend::UntilChanged | Lend::Unreplayed => true,
        };
        if mem.len() < LENT_BYTES_MIN || dst == self.me.rank || !lends {
            self.send(comm, tag, dst, mem)?;
            return Ok(None);
        }
        let len = mem.len();
        let (now, _) = self.start_send(Some((comm, tag, dst)), &[dst], len, 1, &mut [])?;
        self.note_bulk(len, now);
        // Speculative pulls waiting for this command's write go first (as `send_ahead`).
        self.flush_all();
        let alive = Arc::new(());
        let weak = Arc::downgrade(&alive);
        let payload = Bytes::from_owner(Lent { mem, _alive: alive });
        let key = self
            .engine
            .send_lent(now, (comm, tag, dst), payload, lend)
            .map_err(SendError::LogRefused)?;
        self.end_send();
        Ok(Some(Loan {
            key,
            len,
            alive: weak,
        }))
    }

    /// Ends a `send_lent` loan (its request completes): waits, turning the loop, for
    /// every live replica of the destination to confirm the message, for at most
    /// `Config::confirm_wait`; a message some replica has not confirmed by then is copied
    /// into the log's own memory. Then waits for the frames that still share the lent
    /// memory to be written (a receiver that reads nothing holds it up, as Open MPI's
    /// rendezvous waits for its receiver). True when the message was copied.
    pub fn give_back(&mut self, loan: Loan) -> Result<bool, SendError> {
        if self.engine.holds_lent(&loan.key) {
            let until = self.now() + self.cfg.confirm_wait(loan.len);
            self.poll_until(until, |c| Ok(!c.engine.holds_lent(&loan.key)))?;
        }
        self.take_back(loan)
    }

    /// Ends a loan at once (one lent `Lend::UntilChanged`: its memory is about to change):
    /// a payload the log still holds is copied into the log's own memory (true), then it
    /// waits for the frames that still share the lent memory to be written.
    pub fn take_back(&mut self, loan: Loan) -> Result<bool, SendError> {
        let Loan { key, alive, .. } = loan;
        let copied = self.engine.give_back(&key);
        while alive.strong_count() > 0 {
            self.turn(Some(LENT_TURN), false)?;
        }
        Ok(copied)
    }

    /// Waits, turning the loop, until every live replica of their destinations confirmed
    /// the messages of `loans` (they left the log), for at most `LOANS_WAIT` plus the
    /// confirmation wait of those still lent: a collective call's end, before it gives
    /// its loans back (which copies what is still lent then). True when all were.
    pub fn await_loans(&mut self, loans: &[&Loan]) -> Result<bool, SendError> {
        let held = |c: &Core| {
            loans
                .iter()
                .filter(|l| c.engine.holds_lent(&l.key))
                .map(|l| l.len)
                .sum::<usize>()
        };
        let bytes = held(self);
        if bytes == 0 {
            return Ok(true);
        }
        let until = self.now() + LOANS_WAIT + self.cfg.confirm_wait(bytes);
        self.poll_until(until, |c| Ok(held(c) == 0))
    }

    /// Sends one message from `comm`/`tag` to world rank `dst`. It returns once the
    /// message is in the log (MPI buffered semantics); a large one first starts going out
    /// from `bytes`, and is copied into the log while the receiver reads it. A very large
    /// one (`unlogged_from`) that went out whole to every live replica of `dst` is not
    /// copied at all once they all confirm it (MPI lets a standard send wait for its
    /// receiver); if the confirmations are late, it is copied after all.
    pub fn send(&mut self, comm: u32, tag: i32, dst: u32, bytes: &[u8]) -> Result<(), SendError> {
        // Only a message written straight from `bytes` may skip the log (`send_ahead`):
        // a small one does not look at the peers' connections.
        let skip_from = (bytes.len() >= DIRECT_WRITE_BYTES_MIN).then(|| self.unlogged_from(dst));
        let (ahead, now) = self.send_ahead(comm, tag, dst, bytes, skip_from, &mut [])?;
        if let Some(order) = ahead {
            if self.await_delivery(comm, dst, order, bytes.len())? {
                self.engine.send_unlogged(comm, tag, dst);
                self.end_send();
                return Ok(());
            }
            return self.log_and_end(comm, tag, dst, bytes, self.now());
        }
        self.log_and_end(comm, tag, dst, bytes, now)
    }

    /// `send` to a rank this one exchanges with, by a caller that keeps `bytes`
    /// unchanged until its own receives of the exchange are in (an all-to-all): a large
    /// message is not copied into the log now. If it goes out whole to every live replica
    /// of `dst`, asking each to confirm it, it is not waited for either; if no pull waits
    /// for it, nothing of it goes out until a pull for it comes (`release_awaited`),
    /// as Open MPI's rendezvous waits for its receiver: it then lands in the receive's
    /// buffer, where a block sent ahead of its receive would be copied. The caller
    /// `settle_all`s them after its receives, and only the blocks not confirmed by then
    /// are copied (NPB IS on 4 ranks copied 6 MB per rank and iteration that Open MPI
    /// does not). Anything else is logged at once, and so is every message when the
    /// caller is not `exclusive`: an unsettled send is not numbered yet, so the caller
    /// must send nothing else to `dst` on `comm` before it settles this one. The loop
    /// turns it takes offer `landings`, the buffers of the caller's receives of the
    /// exchange.
    pub fn send_unsettled<'b>(
        &mut self,
        comm: u32,
        tag: i32,
        dst: u32,
        bytes: &'b [u8],
        exclusive: bool,
        landings: &mut [Landing<'_>],
    ) -> Result<Option<Unsettled<'b>>, SendError> {
        if !exclusive {
            let (_, now) = self.send_ahead(comm, tag, dst, bytes, None, landings)?;
            self.log_and_end(comm, tag, dst, bytes, now)?;
            return Ok(None);
        }
        let unsettled = |place| {
            Some(Unsettled {
                comm,
                tag,
                dst,
                bytes,
                place,
            })
        };
        let (ahead, now) = self.send_ahead(
            comm,
            tag,
            dst,
            bytes,
            Some(DIRECT_WRITE_BYTES_MIN),
            landings,
        )?;
        if let Some(order) = ahead {
            return Ok(unsettled(self.went_out(order)));
        }
        if bytes.len() >= DIRECT_WRITE_BYTES_MIN
            && !self.engine.wrote_ahead(comm, tag, dst)
            && dst != self.me.rank
        {
            self.engine.note_held();
            return Ok(unsettled(Place::Held));
        }
        self.log_and_end(comm, tag, dst, bytes, now)?;
        Ok(None)
    }

    /// Whether a pull waits for a held `Unsettled` send (`release_awaited` sends it).
    pub fn awaited(&self, u: &Unsettled<'_>) -> bool {
        matches!(u.place, Place::Held) && self.engine.next_send_awaited(u.comm, u.tag, u.dst)
    }

    /// Sends the held sends of `sends` that a pull waits for: each goes out straight from
    /// its buffer and stays unsettled if it went out whole to every live replica of its
    /// destination, else it is logged now, which answers every pull for it.
    pub fn release_awaited(
        &mut self,
        sends: &mut Vec<Unsettled<'_>>,
        landings: &mut [Landing<'_>],
    ) -> Result<(), SendError> {
        let mut i = 0;
        while i < sends.len() {
            if !self.awaited(&sends[i]) {
                i += 1;
                continue;
            }
            let u = &sends[i];
            let (comm, tag, dst, bytes) = (u.comm, u.tag, u.dst, u.bytes);
            self.wait_for_log_room(&[dst], bytes.len(), 1, landings)?;
            self.flush_all();
            let (order, whole) =
                self.write_ahead(comm, tag, dst, bytes, Some(DIRECT_WRITE_BYTES_MIN));
            if whole {
                sends[i].place = self.went_out(order);
                i += 1;
            } else {
                // Logged now: it is settled.
                let _logged = sends.remove(i);
                self.log_and_end(comm, tag, dst, bytes, self.now())?;
            }
        }
        Ok(())
    }

    /// The place of a send that just went out whole as message `order`; what was queued
    /// meanwhile is written now.
    fn went_out(&mut self, order: u64) -> Place {
        self.flush();
        Place::Out { order }
    }

    /// Whether every live replica of an `Unsettled` send's destination confirmed it.
    pub fn delivered(&self, u: &Unsettled<'_>) -> bool {
        match u.place {
            Place::Out { order, .. } => self.engine.delivered(u.comm, u.dst, order),
            Place::Held => false,
        }
    }

    /// Ends the `Unsettled` sends of an exchange whose receives are over. It first turns
    /// the loop, giving the CPU away between polls, while some are neither confirmed nor
    /// sent, for at most the settle wait of the largest (`Config::settle_wait`: about the
    /// cost of the copy it saves, longer where processes share cores): held ones go out
    /// as their pulls come (a receiver pulls on its own connection, so its pull may come
    /// after its data), and confirmations come in. Then each is recorded without its
    /// payload when every live replica of its destination confirmed it, else copied into
    /// the log.
    pub fn settle_all(&mut self, mut sends: Vec<Unsettled<'_>>) -> Result<(), SendError> {
        let longest = sends.iter().map(|u| u.bytes.len()).max().unwrap_or(0);
        let until = self.now() + self.cfg.settle_wait(longest);
        let waited = self.poll_until(until, |c| {
            c.release_awaited(&mut sends, &mut [])?;
            Ok(sends.iter().all(|u| c.delivered(u)))
        });
        let settled = sends
            .into_iter()
            .map(|u| self.settle(u))
            .fold(Ok(()), Result::and);
        waited.map(|_| ()).and(settled)
    }

    /// Ends one `Unsettled` send: recorded without its payload when every live replica
    /// of its destination confirmed it, else copied into the log now (a held one that no
    /// pull asked for goes there as any send).
    fn settle(&mut self, u: Unsettled<'_>) -> Result<(), SendError> {
        let delivered = self.delivered(&u);
        let Unsettled {
            comm,
            tag,
            dst,
            bytes,
            place: _,
        } = u;
        if delivered {
            self.engine.send_unlogged(comm, tag, dst);
        } else {
            // Out or held, the engine knows what went out of it already (a DATA frame
            // that went out whole is not written again).
            self.wait_for_log_room(&[dst], bytes.len(), 1, &mut [])?;
            self.log_send(self.now(), comm, tag, dst, pool::copy(bytes))?;
        }
        self.end_send();
        Ok(())
    }

    /// The start shared by the sends of one message: makes room in the log and, for a
    /// large message, writes it straight from `bytes` to the pulls waiting for it. The
    /// message's order number when it went out whole to every live replica of `dst`
    /// asking each to confirm it (only from `skip_from` bytes on): it may then skip the
    /// log.
    fn send_ahead(
        &mut self,
        comm: u32,
        tag: i32,
        dst: u32,
        bytes: &[u8],
        skip_from: Option<usize>,
        landings: &mut [Landing<'_>],
    ) -> Result<(Option<u64>, Duration), SendError> {
        let slots = bytes.len() <= SLOT_PAYLOAD_MAX && self.has_colocated();
        // A small message to replicas on this host whose pulls are parked here goes into
        // their slots first, and into the log after (the caller logs it next): before
        // the clock is read and before `start_send`, which would neither poll (a pull
        // for the message is parked: `Engine::next_send_awaited`) nor wait (the log has
        // room), so the receiver starts on the message that much sooner.
        let mut asked = false;
        if slots && self.engine.log_has_room(bytes.len(), 1) {
            asked = true;
            if self.publish_ahead(comm, tag, dst, bytes) {
                return Ok((None, self.now()));
            }
        }
        let (now, turned) =
            self.start_send(Some((comm, tag, dst)), &[dst], bytes.len(), 1, landings)?;
        if bytes.len() < DIRECT_WRITE_BYTES_MIN {
            // No pull was parked before: one the poll or the wait of `start_send`
            // brought is answered in its slot now.
            if slots && (!asked || turned) {
                self.publish_ahead(comm, tag, dst, bytes);
            }
            return Ok((None, now));
        }
        self.note_bulk(bytes.len(), now);
        // Speculative pulls waiting for this command's write go first, in a write of
        // their own: a receiver that answers the message being written finds its pull
        // here, instead of after the copy into the log.
        self.flush_all();
        let (order, confirmed) = self.write_ahead(comm, tag, dst, bytes, skip_from);
        Ok((confirmed.then_some(order), self.now()))
    }

    /// `send` of one buffer to each of `dsts` (world ranks) with one copy into the log for
    /// all of them (the sends of one buffer in a broadcast): a large message starts going
    /// out to all of them before that copy. `Ok(false)`, having sent nothing, when the
    /// messages must go one by one instead: fewer than two, large enough to skip the log,
    /// or more than the log could hold at once.
    pub fn send_shared(
        &mut self,
        comm: u32,
        tag: i32,
        dsts: &[u32],
        bytes: &[u8],
    ) -> Result<bool, SendError> {
        if dsts.len() < 2
            || bytes.len() >= UNLOGGED_BYTES_MIN
            || !self.engine.log_could_hold(bytes.len(), dsts.len())
        {
            return Ok(false);
        }
        let (mut now, _) = self.start_send(None, dsts, bytes.len(), dsts.len(), &mut [])?;
        if bytes.len() >= DIRECT_WRITE_BYTES_MIN {
            self.flush_all();
            for &dst in dsts {
                self.write_ahead(comm, tag, dst, bytes, None);
            }
            now = self.now();
        }
        let payload = pool::copy(bytes);
        for &dst in dsts {
            self.log_send(now, comm, tag, dst, payload.clone())?;
        }
        self.end_send();
        Ok(true)
    }

    /// Reads what peers sent since the sockets were last polled, if that was more than
    /// `READ_BEFORE_SEND_AFTER` ago (the application computed meanwhile): a pull that
    /// arrived for this message is then parked here, and this send answers it at once
    /// instead of leaving it to the next time this replica enters the library. Right
    /// after a receive (a ping-pong) this costs nothing. With `message` (comm, tag, dst),
    /// a send to one destination, it is skipped when a pull for that message is parked
    /// already (a poll is a large part of a small send's cost). Then waits for room in
    /// the log (`wait_for_log_room`).
    ///
    /// Returns the clock reading the send logs its message with (one reading per small
    /// send: each costs tens of nanoseconds on a virtual machine): this one, or the
    /// turn's, or a fresh one after the wait for room in the log turned the loop; and
    /// whether the loop turned (a pull may have come).
    fn start_send(
        &mut self,
        message: Option<(u32, i32, u32)>,
        dsts: &[u32],
        len: usize,
        copies: usize,
        landings: &mut [Landing<'_>],
    ) -> Result<(Duration, bool), SendError> {
        let mut now = self.now();
        let mut turned = false;
        if now.saturating_sub(self.polled_at) >= READ_BEFORE_SEND_AFTER
            && !message
                .is_some_and(|(comm, tag, dst)| self.engine.next_send_awaited(comm, tag, dst))
        {
            self.turn_with(Some(Duration::ZERO), false, landings)?;
            now = self.polled_at;
            turned = true;
        }
        if self.wait_for_log_room(dsts, len, copies, landings)? {
            now = self.now();
            turned = true;
        }
        Ok((now, turned))
    }

    /// Blocks until the log has room for `copies` messages of `len` bytes (or a
    /// destination is lost). True when it had to wait.
    fn wait_for_log_room(
        &mut self,
        dsts: &[u32],
        len: usize,
        copies: usize,
        landings: &mut [Landing<'_>],
    ) -> Result<bool, SendError> {
        let mut blocked = false;
        while !self.engine.log_has_room(len, copies) {
            if !blocked {
                log::debug!(
                    "replica {}: sender log full; blocking the sender until a replica of rank {dsts:?} consumes",
                    self.engine.me()
                );
                blocked = true;
            }
            if let Some(&rank) = dsts.iter().find(|&&d| !self.engine.rank_alive(d)) {
                return Err(SendError::RankLost { rank });
            }
            self.turn_with(Some(FULL_LOG_TURN), false, landings)?;
        }
        Ok(blocked)
    }

    /// Starts writing the next message from `comm`/`tag` to `dst` straight from `bytes`
    /// to every replica whose pull waits for it. Returns its order number and whether it
    /// went out whole, asking for confirmation, to every live replica of `dst` (only
    /// from `skip_from` bytes on, and if the engine allows it).
    fn write_ahead(
        &mut self,
        comm: u32,
        tag: i32,
        dst: u32,
        bytes: &[u8],
        skip_from: Option<usize>,
    ) -> (u64, bool) {
        let WriteAhead {
            order,
            writes,
            confirm,
            ..
        } = self
            .engine
            .write_ahead(comm, tag, dst, bytes.len(), skip_from);
        let mut whole = true;
        for w in &writes {
            whole &= self.write_direct(w, bytes, confirm);
        }
        (order, confirm && whole)
    }

    /// Turns the loop until every live replica of `dst` confirmed the message with
    /// `order` on `comm`, for at most `Config::confirm_wait`; false if they did not.
    fn await_delivery(
        &mut self,
        comm: u32,
        dst: u32,
        order: u64,
        len: usize,
    ) -> Result<bool, SendError> {
        let until = self.now() + self.cfg.confirm_wait(len);
        self.poll_until(until, |c| Ok(c.engine.delivered(comm, dst, order)))
    }

    /// Turns the loop without sleeping until `done` holds (true) or `until` passes
    /// (false), as a blocked call's spin does: giving the CPU away between polls where a
    /// receiver may need it to read and confirm.
    fn poll_until(
        &mut self,
        until: Duration,
        mut done: impl FnMut(&mut Core) -> Result<bool, SendError>,
    ) -> Result<bool, SendError> {
        let yield_when_idle = self.spin_config().yield_between;
        loop {
            if done(self)? {
                return Ok(true);
            }
            if self.now() >= until {
                return Ok(false);
            }
            self.turn(Some(Duration::ZERO), false)?;
            if yield_when_idle {
                std::thread::yield_now();
            }
        }
    }

    /// Copies a message into the log (the send that returns once it is there) and ends
    /// the send.
    fn log_and_end(
        &mut self,
        comm: u32,
        tag: i32,
        dst: u32,
        bytes: &[u8],
        now: Duration,
    ) -> Result<(), SendError> {
        self.log_send(now, comm, tag, dst, pool::copy(bytes))?;
        self.end_send();
        Ok(())
    }

    /// Logs the next message from `comm`/`tag` to `dst` at `now`. The caller made room
    /// under the same lock, so the log does not refuse it.
    fn log_send(
        &mut self,
        now: Duration,
        comm: u32,
        tag: i32,
        dst: u32,
        payload: bytes::Bytes,
    ) -> Result<(), SendError> {
        self.engine
            .send(now, comm, tag, dst, payload)
            .map(|_| ())
            .map_err(SendError::LogRefused)
    }

    /// Starts writing a DATA frame the engine made (`w`: its receiver and header; the
    /// payload is the sender's buffer) when the connection to its receiver is idle, and
    /// tells the engine how much went out: once the message is logged, the engine issues
    /// the rest (`Engine::poll_resumed`). True when the whole frame went out.
    fn write_direct(&mut self, w: &DirectWrite, payload: &[u8], confirm: bool) -> bool {
        let Some(&token) = self.peers.get(&w.to) else {
            return false;
        };
        let Some(c) = self.conns.get_mut(&token) else {
            return false;
        };
        let to_it = matches!(c.peer(), Some(PeerId::Replica(p, _)) if p == w.to);
        if !to_it || !c.link.out.is_empty() {
            return false;
        }
        let total = HEADER_BYTES + payload.len();
        // The whole frame in one call: the kernel takes what the socket buffer holds, and
        // the engine's rest of the frame carries on from there (also after an error,
        // which shows again when that rest is written).
        let bufs = [io::IoSlice::new(&w.header), io::IoSlice::new(payload)];
        let written = io::Write::write_vectored(&mut c.stream, &bufs).unwrap_or(0);
        self.engine
            .handle_written(w.to, w.req, written, token.0 as u64, confirm);
        written == total
    }

    /// `flush` at the end of a send command.
    fn end_send(&mut self) {
        self.flush();
    }
}
