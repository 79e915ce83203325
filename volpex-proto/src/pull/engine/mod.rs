//! The engine of one replica. Method kinds, in the order a driver uses them:
//! getters; `handle_frame`, `handle_peer_down`, `handle_timeout`, `handle_written` for
//! inputs; `send`, `post`, `detach`, `make_choice` as commands; then `poll_resumed`,
//! `poll_transmit`, `poll_deferred`, `poll_event`, `poll_timeout` and `take` for outputs.
//! Poll resumed frames and transmits after every input or command; deferred frames may
//! wait for a write to their peer, or until the driver idles.
//!
//! The engine is the only writer of wire bytes: a large message's DATA frames start
//! going out straight from the sender's buffer before it is logged, but the engine makes
//! them (`write_ahead` gives the driver their headers), learns how much went out
//! (`handle_written`) and issues the rest once the message is logged (`poll_resumed`).
//!
//! The engine composes one type per mechanism, each owning its state and tested alone:
//!
//! | part | owns |
//! |---|---|
//! | `fetches` | messages being pulled, the asks sent for each, their deadlines |
//! | `service` | pulls parked here, delayed ACKs, messages held by the output commit |
//! | `choices::Coordination` | choices of this rank and others', what peers are owed |
//! | `silence` | when each peer was last heard from and asked again |
//! | `timers` | the engine-wide timers (`Timer`), one table |
//! | `outbox` | frames and events for the driver |
//! | `synchronous` | synchronous sends waiting for their receive, synchronous messages not claimed yet |
//! | `ahead::Streams` | which streams are pulled ahead, how far, and whether at once |
//! | `message::SendLog`, `message::matching::Matcher`, `replica::Liveness` | the log, matching, who is alive |
//!
//! The logic that spans them is in sides, types over borrowed parts that the engine
//! makes for a call and that carry it out on just those parts:
//!
//! | side | made by | does |
//! |---|---|---|
//! | `serve::Serving` | `serving()` | the send commands, answering and parking pulls, the output commit |
//! | `choices::Announce` | `announce()` | choices leaving: batches to followers, carried choices, stability notices |
//! | `membership::Roster` | `roster()` | deaths, joining and caught-up incarnations, the incarnation table |
//! | `receive::Receiving` | `receiving()` | asking, taking DATA, failing over, hedging, pulling ahead, telling senders how far it received |
//!
//! This file is the engine's API (each input, command and output in one place, calling
//! the sides and then what their answers ask of the others), dispatch, timers, and the
//! glue that spans the sides (a DATA frame, recording a choice, leadership changes);
//! `snapshot` and `synchronous` add the engine's checkpoint and synchronous-send
//! commands and getters, and no other file holds an `impl Engine`. Receiving is split in two: `message::matching` decides which
//! message each posted receive matches and says what it needs; the engine fetches it.
//!
//! Speculative pulls (pulling ahead): see `ahead`. A pull nobody waits for yet (a
//! speculative pull, or a candidate of an unresolved wildcard) never hedges, never
//! retires the replica and never reports a lost rank: the receive that needs it does.
//!
//! Silence: a pull with no answer within the ack timeout, or parked at a replica we have
//! not heard from for that long (we ask again halfway, so a live sender always answers),
//! fails over. For choices, a silent or unreachable leader is fenced through the launcher
//! instead, so that two replicas never choose at once.

mod ahead;
mod choices;
mod fetches;
mod landed;
mod membership;
mod outbox;
mod receive;
mod serve;
mod service;
mod silence;
mod snapshot;
mod synchronous;
mod timers;

use std::time::Duration;

use bytes::Bytes;

use self::choices::{Announce, Coordination, EngineChooser};
use self::fetches::{AskState, Fetches};
use self::membership::{Gone, Roster, Successor};
use self::outbox::Outbox;
pub use self::outbox::Resumed;
use self::receive::Receiving;
use self::serve::Serving;
pub use self::serve::SlotsAhead;
use self::service::Service;
use self::service::Waiter;
use self::silence::Silence;
pub use self::snapshot::SnapshotAnswer;
use self::snapshot::Snapshots;
pub use self::synchronous::MatchState;
use self::synchronous::Synchronous;
use self::timers::{Timer, TimerTable};
use super::decision::{ordinal, slot_key, Authority, Slot, DECISION_CTX};
use crate::config::Config;
use crate::limits::{CHOICES_BATCH_WAIT, DECISIONS_HELD_MAX, HEADER_BYTES};
use crate::message::log::{Lend, LogFull, Lookup};
use crate::message::matching::{CancelDiverged, Matched, Matcher, Mode, Need, RecvId, RecvSpec};
use crate::message::{Consumed, Key, Map, ReplicaId, ReqId, SendLog, Set, Want, ACK_TAG};
use crate::replica::{Liveness, PeerState};
use crate::wire::control::ReplicaStats;
use crate::wire::Frame;

/// Why a receive did not deliver.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// Every replica of the sending rank is gone.
    #[error("rank {rank} lost: all its replicas failed")]
    RankLost {
        /// The lost rank.
        rank: u32,
    },
    /// This replica fell too far behind: every live sender replica evicted the message.
    #[error("{reason}")]
    Retired {
        /// Human-readable reason.
        reason: String,
    },
    /// The program of every live replica of the sending rank ended (it finished, or
    /// returned an error) without sending the message.
    #[error("rank {rank} ended without sending the message this receive waits for")]
    SenderEnded {
        /// The sending rank.
        rank: u32,
    },
}

/// Something the driver must act on beyond transmitting frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineEvent {
    /// This replica cannot catch up and must retire (report, then exit).
    Retire {
        /// Human-readable reason naming the evicted message.
        reason: String,
    },
    /// A sibling that makes or holds choices is unreachable or silent: ask the launcher
    /// to end it and announce its death.
    Fence {
        /// The sibling.
        peer: ReplicaId,
    },
}

/// Where a coordinated choice of the caller's (see `post_choice`) stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChoiceState {
    /// Made (here or by the leader): act on it.
    Made(Bytes),
    /// This replica leads: decide now and call `make_choice`.
    Yours,
    /// The leader has not told us yet.
    Waiting,
}

/// The next send to one destination as a driver may write it before it is logged (see
/// `Engine::write_ahead`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteAhead {
    /// Its key.
    pub key: Key,
    /// Its order number among the sends to the destination on its communicator.
    pub order: u64,
    /// Its DATA frames to the live replicas whose pulls for it are parked here (inline:
    /// a small send asks for them on every message, and there are seldom more than two).
    pub writes: smallvec::SmallVec<[DirectWrite; 2]>,
    /// The frames ask each receiver to confirm it: it may skip the log once all did (see
    /// `send_unlogged`).
    pub confirm: bool,
    /// It is sent synchronously (its frames carry `FLAG_SYNC`).
    pub sync: bool,
}

/// A DATA frame the driver writes straight from the sender's buffer: `header`, then the
/// buffer. It reports how much went out with `Engine::handle_written`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectWrite {
    /// The replica whose pull it answers.
    pub to: ReplicaId,
    /// That pull's id.
    pub req: ReqId,
    /// The frame's encoded header.
    pub header: [u8; HEADER_BYTES],
}

/// A message taken, for the pulls ahead of it: its key, its length and, for an
/// `ANY_TAG` receive, its (comm, src) stream.
type Taken = (Key, usize, Option<(u32, u32)>);

/// The pull-protocol state of one replica.
pub struct Engine {
    me: ReplicaId,
    replicas: u32,
    cfg: Config,
    log: SendLog,
    coord: Coordination,
    service: Service,
    fetches: Fetches,
    silence: Silence,
    timers: TimerTable,
    /// How far this replica received every stream, and the earliest time senders may
    /// hear of it again (`Timer::ConsumedNotice` waits for it).
    consumed: Consumed,
    consumed_notice_after: Duration,
    matcher: Matcher<RecvError>,
    /// Scratch list of what the matcher needs (kept to avoid an allocation per message).
    needs: Vec<Need>,
    fenced: Set<ReplicaId>,
    liveness: Liveness,
    /// The application finalized: it sends nothing more, so a pull for a message not
    /// sent yet is answered ENDED.
    finalized: bool,
    /// This replica handed its checkpoint over to its next incarnation (`hand_over`): it
    /// receives nothing more, and reports nothing it receives.
    handed_over: bool,
    /// Messages that every live replica of their sender answered ENDED for.
    ended: Set<Want>,
    /// Which streams are pulled ahead, and how far.
    streams: ahead::Streams,
    /// Lengths of messages that landed straight in their receive's buffer (their DATA
    /// reached the engine without payload), until the receive is taken: the pull-ahead
    /// window is sized by them.
    landed: landed::Landed,
    /// Streams (comm, src) with deferred receives (`defer`), and the one tag their
    /// source sends this rank on that communicator: never pulled ahead.
    deferred: Map<(u32, u32), i32>,
    /// A message taken by `take_later` whose speculative pulls wait for
    /// `speculate_pending`.
    speculation: Option<Taken>,
    out: Outbox,
    retired: bool,
    stats: ReplicaStats,
    /// The newest incarnation known of every replica, `[rank][replica]` (see
    /// `decision::ordinal`).
    incarnations: Vec<Vec<u32>>,
    /// This is a regenerated incarnation replaying its program that has not caught up
    /// yet: it cannot take over its rank's choices, and an evicted message means it
    /// cannot be regenerated.
    catching_up: bool,
    /// Checkpoints taken here and snapshots asked for.
    snapshots: Snapshots,
    /// Synchronous sends waiting for their receive, and synchronous messages waiting for
    /// one (`synchronous`).
    sync: Synchronous,
}

impl Engine {
    /// A fresh engine for replica `me` of a job of `ranks` x `replicas`, every replica
    /// in its first incarnation.
    pub fn new(me: ReplicaId, ranks: u32, replicas: u32, cfg: Config) -> Engine {
        Engine::joining(me, ranks, replicas, cfg, &[])
    }

    /// A fresh engine for replica `me` joining a job whose replicas are in the
    /// incarnations `incarnations[rank][replica]` (missing entries: 0). A regenerated
    /// replica follows its rank's oldest live sibling's choices (see `pull::decision`).
    pub fn joining(
        me: ReplicaId,
        ranks: u32,
        replicas: u32,
        cfg: Config,
        incarnations: &[Vec<u32>],
    ) -> Engine {
        let coordinated = replicas > 1 && !cfg.send_deterministic;
        let incarnations: Vec<Vec<u32>> = (0..ranks as usize)
            .map(|r| {
                (0..replicas as usize)
                    .map(|k| {
                        incarnations
                            .get(r)
                            .and_then(|x| x.get(k))
                            .copied()
                            .unwrap_or(0)
                    })
                    .collect()
            })
            .collect();
        let mine = incarnations
            .get(me.rank as usize)
            .cloned()
            .unwrap_or_default();
        let log = SendLog::new(cfg.log_bytes_max, replicas);
        Engine {
            me,
            replicas,
            log: if cfg.regenerate {
                log.retaining(cfg.replay_bytes_max)
            } else {
                log
            },
            coord: Coordination::new(
                me,
                replicas,
                coordinated,
                DECISIONS_HELD_MAX,
                (&mine, cfg.regenerate),
            ),
            service: Service::default(),
            fetches: Fetches::new(me),
            silence: Silence::default(),
            timers: TimerTable::default(),
            consumed: Consumed::default(),
            consumed_notice_after: Duration::ZERO,
            matcher: Matcher::new(me.rank),
            needs: Vec::new(),
            fenced: Set::default(),
            liveness: Liveness::new(ranks, replicas),
            finalized: false,
            handed_over: false,
            ended: Set::default(),
            streams: ahead::Streams::default(),
            landed: landed::Landed::default(),
            deferred: Map::default(),
            speculation: None,
            out: Outbox::new(me),
            retired: false,
            stats: ReplicaStats::default(),
            incarnations,
            catching_up: false,
            snapshots: Snapshots::default(),
            sync: Synchronous::default(),
            cfg,
        }
    }

    /// Whether this replica holds every choice its rank's leader made so far: choices
    /// are not coordinated, or it leads, or its standing pull for the next one is parked
    /// at the leader (not made yet). A regenerated replica counts as caught up only then.
    pub fn holds_all_choices(&self) -> bool {
        let d = &self.coord.decisions;
        if !d.enabled() || d.is_leader() {
            return true;
        }
        let next = self.consumed.watermark(DECISION_CTX, self.me.rank);
        self.fetches
            .get(&Want::Key(slot_key(self.me.rank, next)))
            .is_some_and(|p| p.asks.iter().any(|a| a.state == AskState::Parked))
    }

    // ---- getters ----

    /// This replica.
    #[inline]
    pub fn me(&self) -> ReplicaId {
        self.me
    }

    /// Counters so far.
    #[inline]
    pub fn stats(&self) -> ReplicaStats {
        ReplicaStats {
            evicted: self.log.evicted_count(),
            ..self.stats.clone()
        }
    }

    /// The tunables it runs with.
    #[inline]
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Whether a message of `len` bytes fits the log now (evicting what may go).
    #[inline]
    pub fn log_has_room(&mut self, len: usize, copies: usize) -> bool {
        self.log.has_room_for(len, copies)
    }

    /// Whether `copies` messages of `len` bytes fit in the sender log at all.
    #[inline]
    pub fn log_could_hold(&self, len: usize, copies: usize) -> bool {
        self.log.could_hold(len, copies)
    }

    /// Whether every live replica of `dst` reported having the message with `order` on
    /// `comm` (dead ones count as having everything).
    #[inline]
    pub fn delivered(&self, comm: u32, dst: u32, order: u64) -> bool {
        self.log.delivered(comm, dst, order)
    }

    /// Whether any replica of `rank` may still be alive.
    #[inline]
    pub fn rank_alive(&self, rank: u32) -> bool {
        self.liveness.rank_alive(rank)
    }

    /// How a blocking receive's message can be recognized on the wire before it is
    /// matched, so it can land straight in the receive buffer: its key once resolved, or
    /// its order number (see `Matcher::sole_order`).
    #[inline]
    pub fn landing_for(&self, id: RecvId) -> Option<Want> {
        if let Some(k) = self.matcher.resolved_key(id) {
            return Some(Want::Key(k));
        }
        let consumed = &self.consumed;
        self.matcher
            .sole_order(id, &|comm, src| consumed.watermark(comm, src))
    }

    /// Whether a direct write began the next send to (comm, tag, dst): it must be
    /// logged (or confirmed), not held.
    #[inline]
    pub fn wrote_ahead(&self, comm: u32, tag: i32, dst: u32) -> bool {
        let (key, order) = self.log.peek_next(comm, tag, self.me.rank, dst);
        self.service.any_written(&Want::Key(key))
            || self.service.any_written(&self.order_want(comm, dst, order))
    }

    /// Whether a pull for the next send to (comm, tag, dst) is parked here already: that
    /// send answers it, and nothing newer on the sockets can change what it writes.
    #[inline]
    pub fn next_send_awaited(&self, comm: u32, tag: i32, dst: u32) -> bool {
        let (key, order) = self.log.peek_next(comm, tag, self.me.rank, dst);
        self.service.has_waiters(&Want::Key(key))
            || self.service.has_waiters(&self.order_want(comm, dst, order))
    }

    /// Whether choices are coordinated between replicas (off with one replica per rank
    /// or for a send-deterministic program).
    #[inline]
    pub fn coordinated(&self) -> bool {
        self.coord.decisions.enabled()
    }

    // ---- commands ----

    /// Posts a receive or probe; its result comes out of `take`.
    #[inline]
    pub fn post(&mut self, now: Duration, spec: RecvSpec, mode: Mode) -> RecvId {
        let coordinate = spec.any_source() || mode == Mode::ImmediateProbe;
        let decisions = &mut self.coord.decisions;
        let slot = (coordinate && decisions.enabled()).then(|| decisions.next_slot());
        let id = self.matcher.post(spec, mode, slot);
        self.rematch(now);
        self.drain_loopback(now);
        id
    }

    /// The caller no longer wants this result (a dropped request): a receive still
    /// consumes its message, which is discarded on arrival.
    pub fn detach(&mut self, id: RecvId) {
        self.matcher.detach(id);
    }

    /// A slot for a choice the caller makes (`wait_any`, `test_some`, ...), or `None`
    /// when choices are not coordinated (decide locally).
    pub fn post_choice(&mut self) -> Option<u64> {
        let decisions = &mut self.coord.decisions;
        decisions.enabled().then(|| decisions.next_slot())
    }

    /// Where the caller's choice `slot` stands; asks the leader for it if need be.
    pub fn choice(&mut self, now: Duration, slot: u64) -> ChoiceState {
        match self.coord.decisions.slot(slot) {
            Slot::Held(b) => {
                self.coord.decisions.mark_used(slot);
                ChoiceState::Made(b)
            }
            Slot::Evicted => ChoiceState::Waiting,
            Slot::Unknown if self.coord.decisions.is_leader() => ChoiceState::Yours,
            Slot::Unknown => {
                let want = Want::Key(slot_key(self.me.rank, slot));
                self.receiving().want(now, want, true);
                self.drain_loopback(now);
                ChoiceState::Waiting
            }
        }
    }

    /// The leader records its choice for `slot`.
    pub fn make_choice(&mut self, now: Duration, slot: u64, value: Bytes) {
        if self.coord.decisions.record(slot, value) {
            self.stats.choices += 1;
            self.after_record(now, slot);
        }
        self.coord.decisions.mark_used(slot);
    }

    /// The coordination slot receive `id` was posted with (an `ANY_SOURCE` receive whose
    /// match the leader chooses): a cancel of it is decided in that slot.
    pub fn receive_slot(&self, id: RecvId) -> Option<u64> {
        self.matcher.slot_of(id)
    }

    /// Whether receive or probe `id` is posted and does not know its match yet.
    pub fn is_unresolved(&self, id: RecvId) -> bool {
        self.matcher.is_unresolved(id)
    }

    /// Whether this replica, as the one that decides, cancels receive `id`
    /// (`Matcher::may_cancel`).
    pub fn may_cancel(&self, id: RecvId) -> bool {
        self.matcher.may_cancel(id)
    }

    /// Carries out the decision that receive `id` is cancelled (`Matcher::cancel`): a
    /// message no receive waits for any more is not fetched (its pulls are withdrawn
    /// with CANCEL, so neither this replica nor the sender keeps them; should it come
    /// all the same, it waits in the unexpected queue).
    pub fn cancel(&mut self, now: Duration, id: RecvId) -> Result<(), CancelDiverged> {
        let mut needs = Vec::new();
        for k in self.matcher.cancel(id, &mut needs)? {
            let want = Want::Key(k);
            let Some(p) = self.fetches.remove(&want) else {
                continue;
            };
            for a in p.asks.iter().filter(|a| a.outstanding()) {
                self.out.send(
                    ReplicaId::new(k.src, a.replica),
                    Frame::Cancel { want, req: a.req },
                );
            }
        }
        self.fetch_needs(now, needs.drain(..));
        self.rematch(now);
        self.drain_loopback(now);
        Ok(())
    }

    /// The program freed a communicator whose contexts are `ctxs` (MPI_Comm_free):
    /// fetches ahead on them that no receive waits for are dropped and their pulls
    /// withdrawn with CANCEL, as `cancel` does, so neither this replica nor the senders
    /// keep them for the job's life (a program making and freeing 500 windows, each
    /// over a communicator of its own, spent most of its time scanning their deadlines).
    /// A receive still posted there keeps its fetch; a message that comes all the same
    /// waits in the unexpected queue.
    pub fn forget_contexts(&mut self, ctxs: &[u32]) {
        self.deferred.retain(|(comm, _), _| !ctxs.contains(comm));
        for want in self
            .fetches
            .wants(|w, p| !p.needed() && ctxs.contains(&w.comm()))
        {
            let Some(p) = self.fetches.remove(&want) else {
                continue;
            };
            for a in p.asks.iter().filter(|a| a.outstanding()) {
                self.out.send(
                    ReplicaId::new(want.src(), a.replica),
                    Frame::Cancel { want, req: a.req },
                );
            }
        }
    }

    // ---- the send path's commands (the serving side, `Serving`) ----

    /// What a driver may write before the next `send` to (comm, tag, dst) logs it (see
    /// `Serving::write_ahead`): the message's key and order number, its DATA frames to
    /// the live replicas whose pulls for it are parked here (to write straight from the
    /// sender's buffer, reporting what went out with `handle_written`), and whether a
    /// message of `len` bytes may skip the log (`skip_log_from`; `None`: never).
    #[inline]
    pub fn write_ahead(
        &mut self,
        comm: u32,
        tag: i32,
        dst: u32,
        len: usize,
        skip_log_from: Option<usize>,
    ) -> WriteAhead {
        self.serving()
            .write_ahead(comm, tag, dst, len, skip_log_from)
    }

    /// `write_ahead` for the shared-memory slots of a small message alone (see
    /// `Serving::slots_ahead`): its pulls parked here, without frame headers. Each one
    /// the driver publishes is reported with `handle_written` (whole, no confirmation).
    #[inline]
    pub fn slots_ahead(&mut self, comm: u32, tag: i32, dst: u32) -> SlotsAhead {
        self.serving().slots_ahead(comm, tag, dst)
    }

    /// The driver wrote the first `written` bytes of a DATA frame `write_ahead` gave it
    /// (to `to`'s pull `req`) on its link `link`; `confirm` is that `write_ahead`'s.
    #[inline]
    pub fn handle_written(
        &mut self,
        to: ReplicaId,
        req: ReqId,
        written: usize,
        link: u64,
        confirm: bool,
    ) {
        self.serving()
            .handle_written(to, req, written, link, confirm);
    }

    /// Counts a send that waits for its pull before going out (`ReplicaStats::held`).
    pub fn note_held(&mut self) {
        self.serving().note_held();
    }

    /// Appends a message to the log and answers any pull parked for it. `Err(LogFull)`
    /// means the caller must wait (drive the engine) and try again.
    #[inline]
    pub fn send(
        &mut self,
        now: Duration,
        comm: u32,
        tag: i32,
        dst: u32,
        payload: Bytes,
    ) -> Result<Key, LogFull> {
        self.append_and_serve(now, (comm, tag, dst), payload, None)
    }

    /// `send` of a payload the application lends to the log until `lend`: logged without a
    /// copy, its DATA frames ask each receiver to confirm it. `Lend::UntilComplete` (an
    /// immediate send's buffer, until its request completes): never retained for a
    /// replay, and only where no replica regenerates from its siblings' logs (`lends`).
    /// `Lend::UntilChanged` (a one-sided target's window, until it changes): retained
    /// for a replay like any payload, also where replicas regenerate. `Lend::Unreplayed`
    /// (a message no replay asks for: MPI-IO's collective write blocks, which a replaying
    /// aggregator replica skips, docs/PROTOCOL.md "Deferred receives"): as
    /// `UntilComplete`, also where replicas regenerate. The caller must `give_back` it
    /// before then.
    pub fn send_lent(
        &mut self,
        now: Duration,
        (comm, tag, dst): (u32, i32, u32),
        payload: Bytes,
        lend: Lend,
    ) -> Result<Key, LogFull> {
        debug_assert!(lend != Lend::UntilComplete || self.lends());
        self.append_and_serve(now, (comm, tag, dst), payload, Some(lend))
    }

    /// `send` (`lent`: `send_lent`), then what the sends to this replica itself brought.
    #[inline]
    fn append_and_serve(
        &mut self,
        now: Duration,
        to: (u32, i32, u32),
        payload: Bytes,
        lent: Option<Lend>,
    ) -> Result<Key, LogFull> {
        let r = self.serving().send(now, to, payload, lent);
        self.drain_loopback(now);
        r
    }

    /// Whether a send may lend its payload to the log (`send_lent`): not when a
    /// regenerated replica replays from its siblings' logs, which must keep what every
    /// live replica received.
    pub fn lends(&self) -> bool {
        !self.cfg.regenerates_from_siblings(self.replicas)
    }

    /// Whether the sender log holds message `key` (an acknowledgement never is:
    /// `message::ACK_TAG`).
    pub fn log_holds(&self, key: &Key) -> bool {
        matches!(self.log.lookup(key), Lookup::Present(_))
    }

    /// Whether the log still holds lent message `key` (some live replica of its
    /// destination has not confirmed it yet; or, lent until changed, it is retained).
    pub fn holds_lent(&self, key: &Key) -> bool {
        self.log.holds_lent(key)
    }

    /// Ends the loan of `send_lent`'s message `key`: a payload the log still holds is
    /// copied into the log's own memory (true). Frames already queued may still share the
    /// lent payload until they are written.
    pub fn give_back(&mut self, key: &Key) -> bool {
        let copied = self.log.give_back(key);
        if !copied {
            // Never copied into the log (`ReplicaStats::unlogged`).
            self.stats.unlogged += 1;
        }
        copied
    }

    /// Records the send `write_ahead` announced without logging its payload: every live
    /// replica of `dst` already confirmed it (`delivered`).
    pub fn send_unlogged(&mut self, comm: u32, tag: i32, dst: u32) {
        self.serving().send_unlogged(comm, tag, dst);
    }

    /// The application finalized: it makes no more sends (see `Serving::finalize`).
    pub fn finalize(&mut self, now: Duration) {
        self.serving().finalize();
        self.drain_loopback(now);
    }

    // ---- membership (`Roster`) ----

    /// This engine is a regenerated incarnation that replays its program until it
    /// caught up (`false`: it has).
    pub fn set_catching_up(&mut self, catching_up: bool) {
        self.catching_up = catching_up;
    }

    /// A replica is gone: `confirmed` when the launcher said so (it ended the process),
    /// otherwise its connection failed (which leaves the last replica of a rank suspect,
    /// not dead).
    pub fn handle_peer_down(&mut self, now: Duration, peer: ReplicaId, confirmed: bool) {
        self.peer_gone(now, peer, confirmed, Successor::None);
    }

    /// A new incarnation `inc` of `peer` registered and replays its program: it may pull
    /// from here and is sent consumption notices, but is not asked for messages nor
    /// waited for before evicting log entries until `handle_peer_alive`. Also the news
    /// that a replica this process was told is starting (`handle_peers_starting`, same
    /// `inc`) registered. `handover`: it takes its draining predecessor's state over and
    /// goes on from where that one stopped (see `Successor::TakesOver`).
    pub fn handle_peer_joining(
        &mut self,
        now: Duration,
        peer: ReplicaId,
        inc: u32,
        handover: bool,
    ) {
        let known = self.incarnation_of(peer);
        let registered = inc == known && self.liveness.state(peer) == PeerState::Starting;
        if peer == self.me || (inc <= known && !registered) {
            return;
        }
        let successor = if handover {
            Successor::TakesOver
        } else {
            Successor::Replays
        };
        if !registered {
            // Whatever the older incarnation was doing, it is gone.
            self.peer_gone(now, peer, true, successor);
        }
        self.roster().join(peer, inc, successor);
        if peer.rank == self.me.rank {
            self.coord.decisions.on_joining(peer.replica, inc);
        }
        self.rematch(now);
        self.drain_loopback(now);
    }

    /// A joining incarnation of `peer` caught up: an ordinary live replica again. For
    /// this replica itself: it tells every sender how far it received.
    pub fn handle_peer_alive(&mut self, now: Duration, peer: ReplicaId) {
        if peer == self.me {
            self.catching_up = false;
            self.consumed.mark_all_dirty();
            self.receiving().tell_consumed();
            self.snapshots
                .tell_checkpoint(self.me, self.replicas, &self.liveness, &mut self.out);
            return;
        }
        if self.roster().caught_up(peer) {
            self.receiving().retry_idle(now, peer.rank);
        }
        self.rematch(now);
        self.drain_loopback(now);
    }

    /// The launcher's table, when this process joined, listed `peers` as starting: new
    /// incarnations that had not registered yet. Their ranks are not lost, but they can
    /// neither be reached nor asked until they join (`handle_peer_joining` with the
    /// incarnation they have here). A sibling's predecessor is gone with its choices (the
    /// takeover runs as for a death).
    pub fn handle_peers_starting(&mut self, now: Duration, peers: &[ReplicaId]) {
        let peers: Vec<ReplicaId> = peers
            .iter()
            .copied()
            .filter(|&p| p != self.me && self.roster().starting(p))
            .collect();
        for &peer in &peers {
            if peer.rank == self.me.rank && self.coord.decisions.enabled() {
                self.sibling_dead(now, peer);
            }
        }
        if !peers.is_empty() {
            self.rematch(now);
            self.drain_loopback(now);
        }
    }

    /// Starts what runs without being asked: a follower's standing pull for its leader's
    /// next choice. Call once, after the peers are known.
    pub fn start(&mut self, now: Duration) {
        self.stand(now);
        self.drain_loopback(now);
    }

    // ---- inputs ----

    /// A frame from an authenticated replica.
    #[inline]
    pub fn handle_frame(&mut self, now: Duration, from: ReplicaId, frame: Frame) {
        self.silence.heard(from, now);
        self.dispatch(now, from, frame);
        self.drain_loopback(now);
    }

    /// Timers: acks, silence, hedges, takeover answers, consumption notices.
    pub fn handle_timeout(&mut self, now: Duration) {
        let ack_timeout = self.cfg.ack_timeout;
        if let Some(gap) = self.silence.tick(now, ack_timeout) {
            log::debug!(
                "{}: no timer ran for {gap:?}; restarting silence clocks",
                self.me
            );
            self.fetches.resync(now);
            if self.timers.get(Timer::OutputCommit).is_some() {
                self.timers.set(Timer::OutputCommit, now + ack_timeout);
            }
            self.coord.decisions.restart_clock(now);
        }
        if self.timers.is_due(Timer::SettleNotice, now) {
            self.coord.notice_after = now + self.cfg.consumed_interval;
            self.announce().settle(|_| true);
        }
        if self.timers.is_due(Timer::ChoicesBatch, now) {
            self.announce().send_choices();
        }
        for (want, w) in self.service.due_acks(now) {
            self.serving().ack(want, w);
        }
        let due = self.fetches.scan(now, &self.silence, ack_timeout);
        for (peer, want, req) in due.ping {
            self.receiving().ask_again(now, peer, want, req);
        }
        for (want, peer) in due.silent {
            self.receiving().on_silent(now, want, peer);
        }
        for peer in self.coord.decisions.overdue(now, ack_timeout) {
            self.fence(peer);
        }
        if self.timers.is_due(Timer::OutputCommit, now) {
            let bound = self.coord.decisions.used_bound();
            for k in self.coord.decisions.lagging(bound) {
                log::info!(
                    "{}: sibling {}.{k} has not taken choices for {ack_timeout:?}; fencing it",
                    self.me,
                    self.me.rank,
                );
                self.fence(ReplicaId::new(self.me.rank, k));
            }
            self.timers.set(Timer::OutputCommit, now + ack_timeout);
        }
        for want in due.hedge {
            self.receiving().hedge(now, want);
        }
        if self.timers.is_due(Timer::ConsumedNotice, now) {
            self.timers.stop(Timer::ConsumedNotice);
            self.consumed_notice_after = now + self.cfg.consumed_interval;
            self.receiving().tell_consumed();
        }
        self.drain_loopback(now);
        // Fetches' deadlines that passed were acted on: the next is a later one.
        self.fetches.refresh_if_passed(now, ack_timeout);
    }

    // ---- outputs ----

    /// True when frames wait to be put on the wire now (`poll_transmit`).
    #[inline]
    pub fn has_transmit(&self) -> bool {
        self.out.has_transmit()
    }

    /// True when frames wait to be put on the wire now (`poll_resumed`, `poll_transmit`)
    /// or events for the driver (`poll_event`): false means a flush has nothing of the
    /// engine's to do.
    #[inline]
    pub fn has_output(&self) -> bool {
        self.out.has_output()
    }

    /// Next rest of a frame a direct write began: the driver writes it on its link before
    /// anything else there (poll these before `poll_transmit`).
    #[inline]
    pub fn poll_resumed(&mut self) -> Option<Resumed> {
        self.out.poll_resumed()
    }

    /// Next frame to put on the wire now. A pull whose message arrived (or was given up)
    /// before the pull left is dropped: several messages of a stream often come in one
    /// read, and taking the first asks for the second before that is handled.
    /// After `hand_over`, no pull and no report of what arrived leaves.
    #[inline]
    pub fn poll_transmit(&mut self) -> Option<(ReplicaId, Frame)> {
        let (fetches, handed_over) = (&self.fetches, self.handed_over);
        self.out.poll_transmit(|f| match f {
            Frame::Pull { want, .. } => handed_over || !fetches.contains(want),
            Frame::Consumed { .. } => handed_over,
            _ => false,
        })
    }

    /// `Config::regenerates_from_siblings` for this job.
    pub fn regenerates_from_siblings(&self) -> bool {
        self.cfg.regenerates_from_siblings(self.replicas)
    }

    /// This draining replica stopped at the checkpoint it hands over to its next
    /// incarnation: from now on it pulls nothing and reports no receipt (CONSUMED, or
    /// the watermark a pull carries). Its senders then keep every message after that
    /// checkpoint, and the successor pulls them again, also those this replica had
    /// already pulled ahead (at `-r 1` nothing else would keep them: the log drops what
    /// every replica of the destination reported, and a large message may skip it).
    pub fn hand_over(&mut self) {
        self.handed_over = true;
    }

    /// Next frame that may wait (speculative pulls): for a write to its peer, or until
    /// the driver has nothing else to do.
    #[inline]
    pub fn poll_deferred(&mut self) -> Option<(ReplicaId, Frame)> {
        if self.handed_over {
            // Only speculative pulls wait there (`hand_over`).
            while self.out.poll_deferred().is_some() {}
            return None;
        }
        self.out.poll_deferred()
    }

    /// Next deferred frame to a peer for which `rides` holds (one a write goes to anyway).
    #[inline]
    pub fn poll_deferred_to(
        &mut self,
        rides: impl Fn(ReplicaId) -> bool,
    ) -> Option<(ReplicaId, Frame)> {
        if self.handed_over {
            return self.poll_deferred();
        }
        self.out.poll_deferred_to(rides)
    }

    /// Next event for the driver.
    #[inline]
    pub fn poll_event(&mut self) -> Option<EngineEvent> {
        self.out.poll_event()
    }

    /// The earliest time `handle_timeout` has work to do, or earlier (never later): after
    /// a pull ended or a deadline moved later, a turn may come early, find nothing due and
    /// make the next answer exact.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Duration> {
        let ack_timeout = self.cfg.ack_timeout;
        [
            self.fetches.next_deadline(&self.silence, ack_timeout),
            self.timers.next(),
            self.service.next_ack_due(),
            self.coord.decisions.deadline(ack_timeout),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether receive or probe `id` completed (`take` would return it).
    #[inline]
    pub fn is_done(&self, id: RecvId) -> bool {
        self.matcher.is_done(id)
    }

    /// The outcome of a receive or probe, once complete. Taking a message also asks,
    /// speculatively, for the next one of its stream.
    #[inline]
    pub fn take(&mut self, now: Duration, id: RecvId) -> Option<Result<Matched, RecvError>> {
        let r = self.take_later(|| now, id);
        self.speculate_pending(now);
        r
    }

    /// `take`, leaving the speculative pulls after the message for `speculate_pending`
    /// (run first if an earlier take left some). A driver takes a message this way so
    /// that its caller has it, and can answer it, before the engine works out the pulls
    /// ahead: a lazy stream's pulls wait for a later write anyway (`poll_deferred`). An
    /// eager stream's are made at once, as `take` makes them, and so is every stream's
    /// with more than one replica per rank. `now` is read only when pulls are made.
    #[inline]
    pub fn take_later(
        &mut self,
        now: impl FnOnce() -> Duration,
        id: RecvId,
    ) -> Option<Result<Matched, RecvError>> {
        let (r, any_tag) = self.matcher.take(id)?;
        let mut now = Some(now);
        let mut clock = move || now.take().map_or(Duration::ZERO, |f| f());
        let mut at = None;
        if self.speculation.is_some() {
            let t = clock();
            at = Some(t);
            self.speculate_pending(t);
        }
        if let Ok(Matched::Message { key, payload, .. }) = &r {
            // Acknowledgements are never pulled ahead: their receiver posts each one's
            // receive before the request it acknowledges, whose write carries the pull.
            if key.tag == ACK_TAG {
                return Some(r);
            }
            let len = self.landed.remove(key).unwrap_or(payload.len());
            self.speculation = Some((*key, len, any_tag));
            // An eager stream's pulls leave before the caller has the message (they are
            // not deferred: see `receive::speculate`). With replicas the partners'
            // answers come later than a deferred frame waits while its caller idles
            // (`IDLE_FLUSH_AFTER` in the driver): pulls made after the caller's answer
            // would go alone then, where made now they ride with that answer.
            let stream = match any_tag {
                Some((comm, src)) => ahead::any_tag_stream(comm, src),
                None => ahead::stream_of(&Want::Key(*key)),
            };
            if self.replicas > 1 || self.streams.is_eager(&stream) {
                let t = at.unwrap_or_else(clock);
                self.speculate_pending(t);
            }
        }
        Some(r)
    }

    /// Makes the speculative pulls a `take_later` left, at `now`.
    #[inline]
    pub fn speculate_pending(&mut self, now: Duration) {
        let Some((key, len, any_tag)) = self.speculation.take() else {
            return;
        };
        // A stream with deferred receives is never pulled ahead: its messages would
        // come although the deferred ones are never taken (`defer`).
        if self.deferred.is_empty() || !self.deferred.contains_key(&(key.comm, key.src)) {
            self.receiving().speculate_after(now, key, len, any_tag);
        }
    }

    // ---- deferred receives ----

    /// Claims the next message of stream (comm, `tag`, src) without pulling it: a
    /// deferred receive. The next receive of the stream gets the message after it; this
    /// one is either never taken (`skip`: it counts as received, its bytes never cross
    /// the network) or taken later (`post_claimed`). Until then this replica's watermark
    /// for (comm, src) stays below it, so every replica of the sender keeps it in its
    /// log. The caller promises that on `comm` the source sends this rank only messages
    /// with `tag` (a communicator of their own): a message's order number is then its
    /// seq, which is how `skip` records it without its DATA. `None` while an earlier
    /// receive that could match the stream is unresolved.
    pub fn defer(&mut self, comm: u32, tag: i32, src: u32) -> Option<Key> {
        let key = self.matcher.claim(comm, tag, src)?;
        self.deferred.insert((comm, src), tag);
        Some(key)
    }

    /// A deferred receive (`defer`) that will not be taken: its message counts as
    /// received (the watermark moves past it once every earlier one is), so the
    /// sender's replicas may drop it.
    pub fn skip(&mut self, key: Key) {
        self.matcher.drop_claimed(&key);
        if self.consumed.record(key.comm, key.src, key.seq) {
            self.timers
                .set_if_idle(Timer::ConsumedNotice, self.consumed_notice_after);
        }
    }

    /// Takes a deferred receive (`defer`) after all: a receive of exactly `key`, pulled
    /// from any live replica of its sender; its result comes out of `take`.
    pub fn post_claimed(&mut self, now: Duration, key: Key) -> RecvId {
        let mut needs = std::mem::take(&mut self.needs);
        let id = self.matcher.post_claimed(key, &mut needs);
        self.fetch_needs(now, needs.drain(..));
        self.needs = needs;
        self.drain_loopback(now);
        id
    }

    /// The DATA of `key` about to be handled carries no payload because its `len` bytes
    /// landed straight in a waiting receive's buffer.
    #[inline]
    pub fn note_landed(&mut self, key: Key, len: usize) {
        self.landed.insert(key, len);
    }

    // ---- internals ----

    /// The want naming the `order`-th message from this replica's rank to `dst` on `comm`.
    fn order_want(&self, comm: u32, dst: u32, order: u64) -> Want {
        order_want(self.me.rank, comm, dst, order)
    }

    /// The serving side (see `Serving`).
    fn serving(&mut self) -> Serving<'_> {
        Serving {
            me: self.me,
            replicas: self.replicas,
            cfg: &self.cfg,
            log: &mut self.log,
            service: &mut self.service,
            coord: &mut self.coord,
            liveness: &self.liveness,
            consumed: &self.consumed,
            timers: &mut self.timers,
            out: &mut self.out,
            stats: &mut self.stats,
            sync: &self.sync,
            finalized: &mut self.finalized,
        }
    }

    /// Who is in the job (see `Roster`).
    fn roster(&mut self) -> Roster<'_> {
        Roster {
            me: self.me,
            liveness: &mut self.liveness,
            log: &mut self.log,
            service: &mut self.service,
            incarnations: &mut self.incarnations,
            consumed: &self.consumed,
            out: &mut self.out,
        }
    }

    /// The receiving side (see `Receiving`).
    fn receiving(&mut self) -> Receiving<'_> {
        Receiving {
            me: self.me,
            replicas: self.replicas,
            cfg: &self.cfg,
            fetches: &mut self.fetches,
            silence: &mut self.silence,
            matcher: &mut self.matcher,
            liveness: &mut self.liveness,
            consumed: &mut self.consumed,
            consumed_notice_after: self.consumed_notice_after,
            decisions: &self.coord.decisions,
            streams: &mut self.streams,
            timers: &mut self.timers,
            out: &mut self.out,
            stats: &mut self.stats,
            ended: &mut self.ended,
            fenced: &mut self.fenced,
            retired: &mut self.retired,
            catching_up: self.catching_up,
        }
    }

    /// A DATA frame from `from`: dropped when it is not for us, when the choices it may
    /// depend on were refused (`Receiving::stale`) or when it is a duplicate; a choice of
    /// this rank is adopted and recorded; a message goes to the receiving side, and the
    /// matcher matches again.
    fn on_data(&mut self, now: Duration, from: ReplicaId, key: Key, order: u64, payload: Bytes) {
        if from.rank != key.src || key.dst != self.me.rank {
            log::warn!("{}: DATA {key} from {from} is not for us; dropped", self.me);
            return;
        }
        if (!self.coord.refused.is_empty() && self.coord.refused.remove(&from))
            || self.coord.foreign.is_fenced(from, self.ordinal_of(from))
        {
            self.receiving().stale(now, from, key, order);
            return;
        }
        if self.consumed.has(key.comm, key.src, order) {
            log::trace!("{}: duplicate DATA {key} from {from} dropped", self.me);
            return;
        }
        if !self.deferred.is_empty() {
            if let Some(&tag) = self.deferred.get(&(key.comm, key.src)) {
                if tag != key.tag || order != key.seq {
                    log::error!(
                        "{}: DATA {key} (order {order}) on a stream with deferred receives of tag {tag}: its order is not its seq, a skipped message may be counted wrongly",
                        self.me
                    );
                }
            }
        }
        if key.comm == DECISION_CTX {
            let adopted = self.coord.decisions.adopt(key.seq, payload, from.replica);
            if let Slot::Held(_) = self.coord.decisions.slot(key.seq) {
                self.receiving().complete(now, from, &[Want::Key(key)]);
            }
            if adopted {
                self.after_record(now, key.seq);
            }
            return;
        }
        self.receiving().arrived(now, from, key, order, payload);
        self.rematch(now);
    }

    /// Sends MATCHED for every synchronous message a receive claimed since it arrived
    /// (see `synchronous`); one sent to ourselves is matched here at once.
    fn tell_matched(&mut self) {
        for key in self.sync.take_claimed(&self.matcher) {
            if key.src == self.me.rank {
                self.sync.on_matched(self.me, &self.log, self.me, key);
            }
            receive::to_replicas_of(
                self.me,
                self.replicas,
                &self.liveness,
                &mut self.out,
                key.src,
                || Frame::Matched { key },
            );
        }
    }

    /// This replica must retire (see `Receiving::retire`).
    fn retire(&mut self, reason: String) {
        self.receiving().retire(reason);
    }

    /// Asks the launcher to fence `peer` (see `receive::fence`).
    fn fence(&mut self, peer: ReplicaId) {
        receive::fence(self.me, &mut self.fenced, &mut self.out, peer);
    }

    /// The newest incarnation of `r` known here.
    fn incarnation_of(&self, r: ReplicaId) -> u32 {
        membership::incarnation_of(&self.incarnations, r)
    }

    /// `r`'s place in its rank's order of leadership (see `decision::ordinal`).
    fn ordinal_of(&self, r: ReplicaId) -> u32 {
        ordinal(self.incarnation_of(r), r.replica, self.replicas)
    }

    /// `peer` is gone (see `Roster::gone`): the coordination learns it first (a sibling
    /// fenced or dead, a foreign leader forgotten), then what was asked of it is asked
    /// elsewhere and receives only it could answer fail.
    fn peer_gone(&mut self, now: Duration, peer: ReplicaId, confirmed: bool, successor: Successor) {
        if peer == self.me {
            return;
        }
        self.coord.foreign.forget_author(peer);
        if peer.rank == self.me.rank && self.coord.decisions.enabled() {
            if confirmed {
                self.sibling_dead(now, peer);
            } else {
                self.fence(peer);
            }
        } else if confirmed && self.coord.decisions.forget(peer) {
            self.on_authority_change(now);
        }
        match self.roster().gone(now, peer, confirmed, successor) {
            Gone::Known | Gone::Suspect => {}
            Gone::Dead { rank_lost } => {
                self.receiving().fail_over(now, peer, true);
                if rank_lost {
                    self.receiving().retry_idle(now, peer.rank);
                }
                let liveness = &self.liveness;
                self.matcher.fail_unresolved(|spec| {
                    let ranks = spec.ranks();
                    let lost = !ranks.is_empty() && ranks.iter().all(|&r| !liveness.rank_alive(r));
                    lost.then(|| RecvError::RankLost { rank: ranks[0] })
                });
            }
        }
        self.rematch(now);
        self.drain_loopback(now);
    }

    /// Lets the matcher resolve what it can and fetches what it needs.
    fn rematch(&mut self, now: Duration) {
        if !self.matcher.has_unresolved() {
            return;
        }
        let mut needs = std::mem::take(&mut self.needs);
        let mut chooser = EngineChooser::new(&mut self.coord.decisions, &mut self.stats.choices);
        let consumed = &self.consumed;
        self.matcher.resolve(
            &|comm, src| consumed.watermark(comm, src),
            &mut chooser,
            &mut needs,
        );
        for slot in chooser.into_recorded() {
            self.after_record(now, slot);
        }
        self.fetch_needs(now, needs.drain(..));
        self.needs = needs;
        self.tell_matched();
    }

    /// Fetches what the matcher said it needs: a message (now, or ahead as a pull
    /// nobody waits for yet) or the decision of a choice slot.
    fn fetch_needs(&mut self, now: Duration, needs: impl Iterator<Item = Need>) {
        for need in needs {
            let (want, needed) = match need {
                Need::Message { want, needed } => (want, needed),
                Need::Choice(slot) => (Want::Key(slot_key(self.me.rank, slot)), true),
            };
            self.receiving().want(now, want, needed);
        }
    }

    fn drain_loopback(&mut self, now: Duration) {
        while let Some(f) = self.out.pop_loopback() {
            self.dispatch(now, self.me, f);
        }
    }

    fn dispatch(&mut self, now: Duration, from: ReplicaId, frame: Frame) {
        match frame {
            Frame::Pull {
                want,
                req,
                consumed,
            } => self
                .serving()
                .on_pull(now, Waiter { from, req }, want, consumed),
            Frame::Data {
                key,
                req: _,
                order,
                payload,
                confirm,
                late,
                sync,
            } => {
                // Its length: the payload's, or what landed straight in a receive's
                // buffer (`note_landed`).
                let landed = &self.landed;
                let len = || match payload.len() {
                    0 => landed.get(&key).unwrap_or(0),
                    n => n,
                };
                self.streams.on_data(&key, late, confirm, len);
                // A synchronous message is noted once (not a duplicate copy).
                let note = sync
                    && key.comm != DECISION_CTX
                    && !self.consumed.has(key.comm, key.src, order);
                self.on_data(now, from, key, order, payload);
                if note {
                    self.sync.arrived(key);
                    self.tell_matched();
                }
                if confirm {
                    // The sender kept no copy and waits for this (see `send_unlogged`).
                    self.out.send(
                        from,
                        Frame::Consumed {
                            comm: key.comm,
                            src: key.src,
                            dst: self.me.rank,
                            watermark: self.consumed.watermark(key.comm, key.src),
                        },
                    );
                }
            }
            Frame::Ack { want, req, .. } => self.receiving().on_ack(from, want, req),
            Frame::Gone { want, req } => {
                self.receiving()
                    .on_refused(now, from, want, req, AskState::Gone)
            }
            Frame::Ended { want, req } => {
                self.receiving()
                    .on_refused(now, from, want, req, AskState::Ended)
            }
            Frame::Cancel { want, req } => self.service.cancel(&want, Waiter { from, req }),
            Frame::Consumed {
                comm,
                src,
                dst,
                watermark,
            } => {
                if comm == DECISION_CTX && src == self.me.rank && from.rank == self.me.rank {
                    if self.coord.decisions.note_held(from.replica, watermark) {
                        self.serving().release_blocked(now);
                    }
                } else if src == self.me.rank && dst == from.rank {
                    self.log.note_consumed(comm, dst, from.replica, watermark);
                } else {
                    log::debug!("{}: CONSUMED from {from} for {src}->{dst} ignored", self.me);
                }
            }
            Frame::Matched { key } => self.sync.on_matched(self.me, &self.log, from, key),
            Frame::Takeover { rank, base } => self.on_takeover(from, rank, base),
            Frame::Choices {
                rank,
                term,
                stable,
                entries,
            } => self.on_choices(now, from, rank, term, stable, &entries),
            Frame::Decided { rank, entries } => self.on_decided(now, from, rank, &entries),
            f @ (Frame::Checkpointed { .. }
            | Frame::SnapshotAsk { .. }
            | Frame::Snapshot { .. }) => {
                let receives = self.stats.receives;
                self.snapshots
                    .handle(self.me, from, f, receives, &mut self.log, &mut self.out)
            }
        }
    }

    // ---- internals: the coordination's glue (see `choices`) ----

    /// The outgoing side of the choices (see `Announce`).
    fn announce(&mut self) -> Announce<'_> {
        Announce {
            me: self.me,
            replicas: self.replicas,
            coord: &mut self.coord,
            service: &mut self.service,
            liveness: &self.liveness,
            consumed: &self.consumed,
            timers: &mut self.timers,
            out: &mut self.out,
        }
    }
    /// A choice was recorded here: it counts as received for eviction, and followers
    /// waiting for it get it. A leader sends its followers new choices `CHOICES_BATCH` at a
    /// time, or `CHOICES_BATCH_WAIT` after the first: one write (and one answer from each
    /// follower) per choice was most of what an `ANY_SOURCE` receive cost over a specific
    /// one at r = 2. A replica that adopted a choice passes it on at once.
    fn after_record(&mut self, now: Duration, slot: u64) {
        let advanced = self.consumed.record(DECISION_CTX, self.me.rank, slot);
        if self.coord.decisions.is_leader() {
            if self.coord.one_more_unsent() {
                self.announce().send_choices();
            } else {
                self.timers
                    .set_if_idle(Timer::ChoicesBatch, now + CHOICES_BATCH_WAIT);
            }
        } else {
            self.announce().answer_choice_pull(slot);
            if advanced {
                self.announce().report_choices();
            }
        }
        self.fetches
            .remove(&Want::Key(slot_key(self.me.rank, slot)));
        self.stand(now);
        self.rematch(now);
    }

    /// A follower keeps a pull for the first choice it does not hold standing at the
    /// leader (see `decision`).
    fn stand(&mut self, now: Duration) {
        if !self.coord.decisions.enabled() || self.coord.decisions.is_leader() {
            return;
        }
        let next = self.consumed.watermark(DECISION_CTX, self.me.rank);
        if let Slot::Unknown = self.coord.decisions.slot(next) {
            let want = Want::Key(slot_key(self.me.rank, next));
            self.receiving().want(now, want, false);
        }
    }

    /// Leadership may have changed: a new leader drops its pulls for choices (it makes or
    /// adopted them), a follower re-asks the new leader.
    fn on_authority_change(&mut self, now: Duration) {
        if self.coord.has_unsent() {
            self.announce().send_choices();
        }
        let choice_wants = self.fetches.wants(|w, _| w.comm() == DECISION_CTX);
        for want in choice_wants {
            match self.coord.decisions.authority() {
                Authority::Leader => {
                    self.fetches.remove(&want);
                }
                Authority::Follower { leader } => {
                    let leader = *leader;
                    let asked = self.fetches.get(&want).is_some_and(|p| {
                        p.asks
                            .iter()
                            .any(|a| a.replica == leader && a.outstanding())
                    });
                    if !asked {
                        self.receiving().ask_next(now, want);
                    }
                }
                Authority::TakingOver { .. } => {}
            }
        }
        self.stand(now);
        self.rematch(now);
    }

    /// The launcher confirmed sibling `peer` dead: take over its choices if it led (ask
    /// every live replica of the job what it holds), and let out what waited for it.
    fn sibling_dead(&mut self, now: Duration, peer: ReplicaId) {
        let others: Vec<ReplicaId> = self
            .liveness
            .usable()
            .filter(|p| p.rank != self.me.rank && *p != peer)
            .collect();
        if let Some(asked) = self
            .coord
            .decisions
            .on_dead(peer.replica, now, others.into_iter())
        {
            if self.catching_up {
                // It never saw the choices the dead replicas made: it cannot lead.
                self.retire(format!(
                    "rank {} cannot be regenerated: its last caught-up replica died before \
                     incarnation {} of {} caught up",
                    self.me.rank,
                    self.incarnation_of(self.me),
                    self.me
                ));
                return;
            }
            let base = self.consumed.watermark(DECISION_CTX, self.me.rank);
            for to in asked {
                self.out.send(
                    to,
                    Frame::Takeover {
                        rank: self.me.rank,
                        base,
                    },
                );
            }
        }
        self.serving().release_blocked(now);
        self.on_authority_change(now);
    }

    /// TAKEOVER from `from`: answer with the choices of its rank held here.
    fn on_takeover(&mut self, from: ReplicaId, rank: u32, base: u64) {
        let ord = self.ordinal_of(from);
        if let Some(entries) = self.coord.takeover_answer(self.me, from, ord, rank, base) {
            self.out.send(from, Frame::Decided { rank, entries });
        }
    }

    /// CHOICES from `from`, just before a DATA frame that may depend on them. Our own
    /// rank's choices, from a sibling, are adopted as if pulled (a message from our own
    /// rank may depend on them).
    fn on_choices(
        &mut self,
        now: Duration,
        from: ReplicaId,
        rank: u32,
        term: u32,
        stable: u64,
        entries: &Bytes,
    ) {
        if rank == self.me.rank {
            for (slot, v) in self.coord.carried(self.me, from, entries) {
                if self.coord.decisions.adopt(slot, v, from.replica) {
                    self.after_record(now, slot);
                }
            }
            return;
        }
        let ord = self.ordinal_of(from);
        self.coord
            .note_foreign(self.me, from, ord, rank, term, stable, entries);
    }

    /// DECIDED from `from`: its answer to our takeover.
    fn on_decided(&mut self, now: Duration, from: ReplicaId, rank: u32, entries: &Bytes) {
        if rank != self.me.rank {
            log::warn!("{}: DECIDED from {from} for rank {rank} ignored", self.me);
            return;
        }
        match self.coord.decisions.on_decided(from, entries) {
            Ok(adopted) => {
                for slot in adopted {
                    self.after_record(now, slot);
                }
                self.on_authority_change(now);
            }
            Err(e) => log::error!("{}: bad DECIDED from {from}: {e}", self.me),
        }
    }
}

/// The want naming the `order`-th message from `src` to `dst` on `comm`.
fn order_want(src: u32, comm: u32, dst: u32, order: u64) -> Want {
    Want::Order {
        comm,
        src,
        dst,
        order,
    }
}

/// The want of message `seq` from `src` to `dst` on communicator 0 with tag 0, for the
/// unit tests of the engine's parts.
#[cfg(test)]
fn test_want(src: u32, dst: u32, seq: u64) -> Want {
    Want::Key(Key {
        comm: 0,
        tag: 0,
        src,
        dst,
        seq,
    })
}
