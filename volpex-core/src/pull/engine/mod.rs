//! The engine of one replica. Method kinds, in the order a driver uses them:
//! getters; `handle_frame`, `handle_peer_down`, `handle_timeout` for inputs; `send`,
//! `post`, `detach`, `make_choice` as commands; then `poll_transmit`, `poll_deferred`,
//! `poll_event`, `poll_timeout` and `take` for outputs. Poll transmits after every input
//! or command; deferred frames may wait for a write to their peer, or until the driver
//! idles.
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
//! | `ahead::Streams` | which streams are pulled ahead, how far, and whether at once |
//! | `message::SendLog`, `message::matching::Matcher`, `replica::Liveness` | the log, matching, who is alive |
//!
//! The protocol logic that spans them lives in this file (dispatch, timers), `receive`
//! (asking, failing over, hedging, pulling ahead), `serve` (the send commands and
//! answering pulls), `choices` (coordinated choices), `membership` (deaths, joining and
//! caught-up incarnations) and `snapshot` (checkpoints). Receiving is split in two: `message::matching`
//! decides which message each posted receive matches and says what it needs; the engine
//! fetches it.
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

use self::choices::{Coordination, EngineChooser};
use self::fetches::{AskState, Fetches};
use self::outbox::Outbox;
use self::service::Service;
pub use self::service::Waiter;
use self::silence::Silence;
pub use self::snapshot::SnapshotAnswer;
use self::snapshot::Snapshots;
pub use self::synchronous::MatchState;
use self::synchronous::Synchronous;
use self::timers::{Timer, TimerTable};
use super::decision::{slot_key, Slot, DECISION_CTX};
use crate::config::{Config, DECISIONS_HELD_MAX};
use crate::message::matching::{CancelDiverged, Matched, Matcher, Mode, Need, RecvId, RecvSpec};
use crate::message::{Consumed, Key, Map, ReplicaId, SendLog, Set, Want};
use crate::replica::Liveness;
use crate::wire::control::ReplicaStats;
use crate::wire::Frame;

/// Most `Engine::landed` entries kept.
const LANDED_MAX: usize = 1024;

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
    /// Live replicas whose pulls for it are parked here: write it to them.
    pub waiters: Vec<Waiter>,
    /// Write it asking each to confirm it: it may skip the log once all did (see
    /// `send_unlogged`).
    pub confirm: bool,
}

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
    /// Messages that every live replica of their sender answered ENDED for.
    ended: Set<Want>,
    /// Which streams are pulled ahead, and how far.
    streams: ahead::Streams,
    /// Lengths of messages that landed straight in their receive's buffer (their DATA
    /// reached the engine without payload), until the receive is taken: the pull-ahead
    /// window is sized by them.
    landed: Map<Key, usize>,
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
            ended: Set::default(),
            streams: ahead::Streams::default(),
            landed: Map::default(),
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
    pub fn me(&self) -> ReplicaId {
        self.me
    }

    /// Counters so far.
    pub fn stats(&self) -> ReplicaStats {
        ReplicaStats {
            evicted: self.log.evicted_count(),
            ..self.stats.clone()
        }
    }

    /// The tunables it runs with.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Whether a message of `len` bytes fits the log now (evicting what may go).
    pub fn log_has_room(&mut self, len: usize, copies: usize) -> bool {
        self.log.has_room_for(len, copies)
    }

    /// Whether `copies` messages of `len` bytes fit in the sender log at all.
    pub fn log_could_hold(&self, len: usize, copies: usize) -> bool {
        self.log.could_hold(len, copies)
    }

    /// Whether every live replica of `dst` reported having the message with `order` on
    /// `comm` (dead ones count as having everything).
    pub fn delivered(&self, comm: u32, dst: u32, order: u64) -> bool {
        self.log.delivered(comm, dst, order)
    }

    /// Whether any replica of `rank` may still be alive.
    pub fn rank_alive(&self, rank: u32) -> bool {
        self.liveness.rank_alive(rank)
    }

    /// How a blocking receive's message can be recognized on the wire before it is
    /// matched, so it can land straight in the receive buffer: its key once resolved, or
    /// its order number (see `Matcher::sole_order`).
    pub fn landing_for(&self, id: RecvId) -> Option<Want> {
        if let Some(k) = self.matcher.resolved_key(id) {
            return Some(Want::Key(k));
        }
        let consumed = &self.consumed;
        self.matcher
            .sole_order(id, &|comm, src| consumed.watermark(comm, src))
    }

    /// Whether choices are coordinated between replicas (off with one replica per rank
    /// or for a send-deterministic program).
    pub fn coordinated(&self) -> bool {
        self.coord.decisions.enabled()
    }

    // ---- commands ----

    /// Posts a receive or probe; its result comes out of `take`.
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
                self.want(now, Want::Key(slot_key(self.me.rank, slot)), true);
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
        for need in needs {
            match need {
                Need::Message { want, needed } => self.want(now, want, needed),
                Need::Choice(slot) => self.want(now, Want::Key(slot_key(self.me.rank, slot)), true),
            }
        }
        self.rematch(now);
        self.drain_loopback(now);
        Ok(())
    }

    /// Starts what runs without being asked: a follower's standing pull for its leader's
    /// next choice. Call once, after the peers are known.
    pub fn start(&mut self, now: Duration) {
        self.stand(now);
        self.drain_loopback(now);
    }

    // ---- inputs ----

    /// A frame from an authenticated replica.
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
            self.settle(|_| true);
        }
        if self.timers.is_due(Timer::ChoicesBatch, now) {
            self.send_choices();
        }
        for (want, w) in self.service.due_acks(now) {
            self.ack(want, w);
        }
        let due = self.fetches.scan(now, &self.silence, ack_timeout);
        for (peer, want, req) in due.ping {
            self.silence.pinged(peer, now);
            let consumed = self.consumed.watermark(want.comm(), want.src());
            log::trace!("{}: asking {peer} again for {want} (keepalive)", self.me);
            self.out.send(
                peer,
                Frame::Pull {
                    want,
                    req,
                    consumed,
                },
            );
        }
        for (want, peer) in due.silent {
            self.on_silent(now, want, peer);
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
            self.hedge(now, want);
        }
        if self.timers.is_due(Timer::ConsumedNotice, now) {
            self.timers.stop(Timer::ConsumedNotice);
            self.consumed_notice_after = now + self.cfg.consumed_interval;
            self.tell_consumed();
        }
        self.drain_loopback(now);
    }

    // ---- outputs ----

    /// True when frames wait to be put on the wire now (`poll_transmit`).
    pub fn has_transmit(&self) -> bool {
        self.out.has_transmit()
    }

    /// Next frame to put on the wire now. A pull whose message arrived (or was given up)
    /// before the pull left is dropped: several messages of a stream often come in one
    /// read, and taking the first asks for the second before that is handled.
    pub fn poll_transmit(&mut self) -> Option<(ReplicaId, Frame)> {
        let fetches = &self.fetches;
        self.out
            .poll_transmit(|f| matches!(f, Frame::Pull { want, .. } if !fetches.contains(want)))
    }

    /// Next frame that may wait (speculative pulls): for a write to its peer, or until
    /// the driver has nothing else to do.
    pub fn poll_deferred(&mut self) -> Option<(ReplicaId, Frame)> {
        self.out.poll_deferred()
    }

    /// Next deferred frame to a peer for which `rides` holds (one a write goes to anyway).
    pub fn poll_deferred_to(
        &mut self,
        rides: impl Fn(ReplicaId) -> bool,
    ) -> Option<(ReplicaId, Frame)> {
        self.out.poll_deferred_to(rides)
    }

    /// Next event for the driver.
    pub fn poll_event(&mut self) -> Option<EngineEvent> {
        self.out.poll_event()
    }

    /// The earliest time `handle_timeout` has work to do.
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

    /// The outcome of a receive or probe, once complete. Taking a message also asks,
    /// speculatively, for the next one of its stream.
    pub fn take(&mut self, now: Duration, id: RecvId) -> Option<Result<Matched, RecvError>> {
        let (r, any_tag) = self.matcher.take(id)?;
        if let Ok(Matched::Message { key, payload, .. }) = &r {
            let len = self.landed.remove(key).unwrap_or(payload.len());
            self.speculate_after(now, *key, len, any_tag);
        }
        Some(r)
    }

    /// The DATA of `key` about to be handled carries no payload because its `len` bytes
    /// landed straight in a waiting receive's buffer.
    pub fn note_landed(&mut self, key: Key, len: usize) {
        // A frame lands only in a waiting receive's buffer, so each entry is taken with
        // its receive, except after a race of two replicas' copies of one message where
        // the later one landed: such strays are dropped wholesale now and then (a lost
        // entry only sizes one pull-ahead window as for an empty message).
        if self.landed.len() >= LANDED_MAX {
            self.landed.clear();
        }
        self.landed.insert(key, len);
    }

    // ---- internals ----

    /// The want naming the `order`-th message from this replica's rank to `dst` on `comm`.
    fn order_want(&self, comm: u32, dst: u32, order: u64) -> Want {
        Want::Order {
            comm,
            src: self.me.rank,
            dst,
            order,
        }
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
        for need in needs.drain(..) {
            match need {
                Need::Message { want, needed } => self.want(now, want, needed),
                Need::Choice(slot) => self.want(now, Want::Key(slot_key(self.me.rank, slot)), true),
            }
        }
        self.needs = needs;
        self.tell_matched();
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
            } => self.on_pull(now, Waiter { from, req }, want, consumed),
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
                    0 => landed.get(&key).copied().unwrap_or(0),
                    n => n,
                };
                self.streams.on_data(&key, late, confirm, len);
                // A synchronous message is noted once (not a duplicate copy).
                let note = sync
                    && key.comm != DECISION_CTX
                    && !self.consumed.has(key.comm, key.src, order);
                self.on_data(now, from, key, order, payload);
                if note {
                    self.note_synchronous(key);
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
            Frame::Ack { want, req, .. } => self.on_ack(from, want, req),
            Frame::Gone { want, req } => self.on_refused(now, from, want, req, AskState::Gone),
            Frame::Ended { want, req } => self.on_refused(now, from, want, req, AskState::Ended),
            Frame::Cancel { want, req } => self.service.cancel(&want, Waiter { from, req }),
            Frame::Consumed {
                comm,
                src,
                dst,
                watermark,
            } => {
                if comm == DECISION_CTX && src == self.me.rank && from.rank == self.me.rank {
                    if self.coord.decisions.note_held(from.replica, watermark) {
                        self.release_blocked(now);
                    }
                } else if src == self.me.rank && dst == from.rank {
                    self.log.note_consumed(comm, dst, from.replica, watermark);
                } else {
                    log::debug!("{}: CONSUMED from {from} for {src}->{dst} ignored", self.me);
                }
            }
            Frame::Matched { key } => self.on_matched(from, key),
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
            | Frame::Snapshot { .. }) => self.on_snapshot_frame(from, f),
        }
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
