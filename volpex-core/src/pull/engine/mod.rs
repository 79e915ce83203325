//! The engine of one replica. Method kinds, in the order a driver uses them:
//! getters; `handle_frame`, `handle_peer_down`, `handle_timeout` for inputs; `send`,
//! `post`, `detach`, `make_choice` as commands; then `poll_transmit`, `poll_deferred`,
//! `poll_event`, `poll_timeout` and `take` for outputs. Poll transmits after every input
//! or command; deferred frames may wait for a write to their peer, or until the driver
//! idles.
//!
//! Receiving is split in two: `message::matching` decides which message each posted
//! receive matches and says what it needs; this engine fetches it, choosing replicas,
//! failing over and hedging. Coordinated choices (`ANY_SOURCE`, immediate probes,
//! `wait_any`, ...) come from `decision`. This file holds the state, the driver-facing
//! methods and dispatch; `fetch` is the receiver side, `serve` the sender side, and
//! `choices` the glue to `decision`.
//!
//! Speculative pulls: when the application takes a message of a stream (comm, tag, src),
//! the engine asks for the stream's next message right away, as a deferred frame. It
//! leaves with the next write to that sender, or as soon as the application waits for
//! something and the loop finds nothing to do, so it is never written on the way to a
//! message. By the time the application posts that receive the pull is already parked at
//! the sender (or answered), and each message costs one write on each side, as with a
//! push protocol. A pull nobody waits for yet (a speculative pull, or a candidate of an
//! unresolved wildcard) never hedges, never retires the replica and never reports a lost
//! rank: the receive that needs it does.
//!
//! Silence: a pull with no answer within the ack timeout, or parked at a replica we have
//! not heard from for that long (we ask again halfway, so a live sender always answers),
//! fails over. For choices, a silent or unreachable leader is fenced through the launcher
//! instead, so that two replicas never choose at once.

mod choices;
mod fetch;
mod serve;

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;

use super::decision::{self, slot_key, Authority, Decisions, Slot, DECISION_CTX};
use super::foreign::{Foreign, Refused};
use crate::config::{
    Config, CHOICES_BATCH, CHOICES_BATCH_WAIT, CHOICES_CARRIED_MAX, DECISIONS_HELD_MAX,
};
use crate::message::log::{LogFull, Lookup};
use crate::message::matching::{Choice, Chooser, Matched, Matcher, Mode, Need, RecvId, RecvSpec};
use crate::message::{Consumed, Key, Map, ReplicaId, SendLog, Set, Want};
use crate::replica::Liveness;
use crate::wire::control::ReplicaStats;
use crate::wire::Frame;

/// Most choices one pull for a choice is answered with (the asked one and those after).
const CHOICES_PER_ANSWER: u64 = 64;

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

/// State of one ask (a pull sent to one sender replica).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AskState {
    /// Sent; no answer yet.
    Sent { at: Duration },
    /// The sender parked it (not sent yet there).
    Parked,
    /// No answer within the ack timeout (or the sender went quiet while it was parked):
    /// another replica was asked; a late answer still counts.
    Silent,
    /// The sender evicted the message.
    Gone,
    /// Abandoned: the replica died, or it was cancelled.
    Dropped,
}

#[derive(Debug, Clone)]
struct Ask {
    replica: u32,
    req: u64,
    state: AskState,
}

impl Ask {
    fn outstanding(&self) -> bool {
        matches!(self.state, AskState::Sent { .. } | AskState::Parked)
    }
}

impl Pending {
    /// The replicas whose ask satisfies `f`.
    fn replicas(&self, f: impl Fn(&Ask) -> bool) -> Vec<u32> {
        self.asks
            .iter()
            .filter(|a| f(a))
            .map(|a| a.replica)
            .collect()
    }
}

#[derive(Debug)]
struct Pending {
    asks: Vec<Ask>,
    /// When to ask another replica whether it already has the message.
    hedge_at: Duration,
    /// A resolved receive waits for it (else it is fetched ahead).
    needed: bool,
    /// Its first ask may wait for the next command's write (a speculative pull).
    defer: bool,
}

/// The pull-protocol state of one replica.
pub struct Engine {
    me: ReplicaId,
    replicas: u32,
    cfg: Config,
    log: SendLog,
    decisions: Decisions,
    /// Choices of other ranks this replica may depend on (see `foreign`).
    foreign: Foreign,
    /// Peers whose next DATA must be dropped: the CHOICES before it were refused.
    refused: Set<ReplicaId>,
    /// (peer, rank): we sent that peer unstable choices of that rank and have not told
    /// it since that they became stable; and when to tell the quiet ones.
    owed: Set<(ReplicaId, u32)>,
    next_notice_at: Duration,
    parked: Map<Want, Vec<(ReplicaId, u64)>>,
    /// Choices this replica made as leader that its followers were not sent yet, and
    /// when they go at the latest (see `choices::after_record`).
    choices_unsent: u64,
    choices_due: Option<Duration>,
    /// Parked wants whose message is logged but may not leave yet (output commit, see
    /// `decision`), and since when the oldest has waited.
    blocked: Set<Want>,
    blocked_since: Option<Duration>,
    /// Parked pulls not yet acknowledged, in parking order: (due, want, from, req).
    unacked: VecDeque<(Duration, Want, ReplicaId, u64)>,
    consumed: Consumed,
    consumed_dirty: bool,
    next_consumed_at: Duration,
    matcher: Matcher<RecvError>,
    pending: Map<Want, Pending>,
    /// Scratch list of what the matcher needs (kept to avoid an allocation per message).
    needs: Vec<Need>,
    /// When a frame last came from each peer, and when we last asked it again.
    heard: Map<ReplicaId, Duration>,
    pinged: Map<ReplicaId, Duration>,
    /// The last `handle_timeout`: a long gap means this process was stopped.
    last_tick: Duration,
    fenced: Set<ReplicaId>,
    liveness: Liveness,
    transmit: VecDeque<(ReplicaId, Frame)>,
    /// Frames that may wait for the next command's write (speculative pulls).
    deferred: VecDeque<(ReplicaId, Frame)>,
    loopback: VecDeque<Frame>,
    events: VecDeque<EngineEvent>,
    next_req: u64,
    retired: bool,
    stats: ReplicaStats,
}

/// The matcher's view of the choices: records go to `decisions`, and the slots recorded
/// are remembered so the engine can serve followers waiting for them.
struct EngineChooser<'a> {
    decisions: &'a mut Decisions,
    recorded: Vec<u64>,
    made: &'a mut u64,
}

impl Chooser for EngineChooser<'_> {
    fn recorded(&mut self, slot: u64) -> Option<Choice> {
        let Slot::Held(b) = self.decisions.slot(slot) else {
            return None;
        };
        self.decisions.mark_used(slot);
        match decision::decode_match(&b) {
            Some(c) => Some(c),
            None => {
                log::error!("choice {slot} is not a match; treated as nothing");
                Some(None)
            }
        }
    }

    fn may_choose(&mut self, _slot: u64) -> bool {
        self.decisions.is_leader()
    }

    fn record(&mut self, slot: u64, choice: Choice) {
        if self.decisions.record(slot, decision::encode_match(choice)) {
            self.recorded.push(slot);
            *self.made += 1;
        }
        self.decisions.mark_used(slot);
    }
}

impl Engine {
    /// A fresh engine for replica `me` of a job of `ranks` x `replicas`.
    pub fn new(me: ReplicaId, ranks: u32, replicas: u32, cfg: Config) -> Engine {
        let coordinated = replicas > 1 && !cfg.send_deterministic;
        Engine {
            me,
            replicas,
            log: SendLog::new(cfg.log_bytes_max, replicas),
            decisions: Decisions::new(me, replicas, coordinated, DECISIONS_HELD_MAX),
            foreign: Foreign::default(),
            refused: Set::default(),
            owed: Set::default(),
            next_notice_at: Duration::ZERO,
            cfg,
            parked: Map::default(),
            choices_unsent: 0,
            choices_due: None,
            blocked: Set::default(),
            blocked_since: None,
            unacked: VecDeque::new(),
            consumed: Consumed::default(),
            consumed_dirty: false,
            next_consumed_at: Duration::ZERO,
            matcher: Matcher::new(me.rank),
            pending: Map::default(),
            needs: Vec::new(),
            heard: Map::default(),
            pinged: Map::default(),
            last_tick: Duration::ZERO,
            fenced: Set::default(),
            liveness: Liveness::new(ranks, replicas),
            transmit: VecDeque::new(),
            deferred: VecDeque::new(),
            loopback: VecDeque::new(),
            events: VecDeque::new(),
            next_req: 1,
            retired: false,
            stats: ReplicaStats::default(),
        }
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

    /// Whether a message of `len` bytes fits the log now (evicting what may go).
    pub fn log_has_room(&mut self, len: usize, copies: usize) -> bool {
        self.log.has_room_for(len, copies)
    }

    /// Whether `copies` messages of `len` bytes fit in the sender log at all.
    pub fn log_could_hold(&self, len: usize, copies: usize) -> bool {
        self.log.could_hold(len, copies)
    }

    /// The key and order number the next `send` to (comm, tag, dst) will get, and the
    /// live replicas whose pulls for it are parked here (replica, request id): a driver
    /// may start writing the message to them before `send` logs it.
    pub fn next_send(&self, comm: u32, tag: i32, dst: u32) -> (Key, u64, Vec<(ReplicaId, u64)>) {
        let (key, order) = self.log.peek_next(comm, tag, self.me.rank, dst);
        // Choices to carry go in a frame before the DATA: no direct write then.
        if self.decisions.used_bound() > self.decisions.stable() || !self.foreign.is_empty() {
            return (key, order, Vec::new());
        }
        let by_order = Want::Order {
            comm,
            src: self.me.rank,
            dst,
            order,
        };
        let waiters = [Want::Key(key), by_order]
            .iter()
            .filter_map(|w| self.parked.get(w))
            .flatten()
            .copied()
            .filter(|(to, _)| *to != self.me && self.liveness.is_usable(*to))
            .collect();
        (key, order, waiters)
    }

    /// The tunables it runs with.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Whether every live replica of `dst` is among `waiters` (as `next_send` returns
    /// them): then all of them can confirm the message written to them at once.
    pub fn all_replicas_waiting(&self, dst: u32, waiters: &[(ReplicaId, u64)]) -> bool {
        dst != self.me.rank
            && (0..self.replicas).all(|k| {
                let r = ReplicaId::new(dst, k);
                !self.liveness.is_usable(r) || waiters.iter().any(|(to, _)| *to == r)
            })
    }

    /// Whether every live replica of `dst` reported having the message with `order` on
    /// `comm` (dead ones count as having everything).
    pub fn delivered(&self, comm: u32, dst: u32, order: u64) -> bool {
        self.log.delivered(comm, dst, order)
    }

    /// Records the send `next_send` announced without logging its payload: every live
    /// replica of `dst` already confirmed it (`delivered`), so no one can ask for it
    /// again; a pull for it is answered GONE. The pulls parked for it were answered by
    /// the caller's direct writes.
    pub fn send_unlogged(&mut self, comm: u32, tag: i32, dst: u32) {
        let (key, order) = self.log.append_unlogged(comm, tag, self.me.rank, dst);
        self.stats.sends += 1;
        self.stats.unlogged += 1;
        let by_order = Want::Order {
            comm,
            src: self.me.rank,
            dst,
            order,
        };
        self.parked.remove(&Want::Key(key));
        self.parked.remove(&by_order);
    }

    /// Replicas of other ranks not known dead (asked when taking over after `dead`).
    fn live_elsewhere(&self, dead: ReplicaId) -> Vec<ReplicaId> {
        self.liveness
            .usable()
            .filter(|p| p.rank != self.me.rank && *p != dead)
            .collect()
    }

    /// Whether a message that depends on every choice of this rank below `choices` may
    /// leave now: they are stable, or few enough to carry along.
    fn may_leave(&self, choices: u64) -> bool {
        self.decisions.can_carry(choices, CHOICES_CARRIED_MAX)
    }

    /// Sends a logged message, preceded by the choices it may depend on that not every
    /// replica of their rank holds yet (see `foreign`), and by the news that choices this
    /// peer got earlier became stable.
    fn data_to(
        &mut self,
        to: ReplicaId,
        key: Key,
        req: u64,
        order: u64,
        payload: Bytes,
        choices: u64,
    ) {
        // A message to ourselves (a rank sending to itself) needs no choices: we hold them.
        let mut carried_own = false;
        if to != self.me && choices > self.decisions.stable() {
            if let Some(entries) = self.decisions.unstable(choices, CHOICES_CARRIED_MAX) {
                self.out(to, self.choices_frame(self.me.rank, entries));
                self.owed.insert((to, self.me.rank));
                carried_own = true;
            }
        }
        if to != self.me && !self.foreign.is_empty() {
            for (rank, term, stable, entries) in self.foreign.carried() {
                let choices = Frame::Choices {
                    rank: *rank,
                    term: *term,
                    stable: *stable,
                    entries: entries.clone(),
                };
                self.transmit.push_back((to, choices));
                self.owed.insert((to, *rank));
            }
        }
        if !self.owed.is_empty() && !carried_own {
            self.settle(|peer| peer == to);
        }
        self.out(
            to,
            Frame::Data {
                key,
                req,
                order,
                payload,
                confirm: false,
            },
        );
    }

    /// A CHOICES frame about `rank` as this replica knows it (no entries: a notice).
    fn choices_frame(&self, rank: u32, entries: Bytes) -> Frame {
        let (term, stable) = if rank == self.me.rank {
            (self.decisions.term(), self.decisions.stable())
        } else {
            (0, self.foreign.of_rank(rank).1)
        };
        Frame::Choices {
            rank,
            term,
            stable,
            entries,
        }
    }

    /// Tells the peers `which` selects that the choices they got from us are stable now
    /// (so they stop carrying them along).
    fn settle(&mut self, which: impl Fn(ReplicaId) -> bool) {
        let settled: Vec<(ReplicaId, u32)> = self
            .owed
            .iter()
            .copied()
            .filter(|&(peer, rank)| {
                which(peer)
                    && if rank == self.me.rank {
                        self.decisions.used_bound() <= self.decisions.stable()
                    } else {
                        !self.foreign.of_rank(rank).0
                    }
            })
            .collect();
        for (peer, rank) in settled {
            self.owed.remove(&(peer, rank));
            if self.liveness.is_usable(peer) {
                self.out(peer, self.choices_frame(rank, Bytes::new()));
            }
        }
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
        self.decisions.enabled()
    }

    // ---- commands ----

    /// The program declares itself send-deterministic: every replica makes its own
    /// choices. Call before any coordinated operation.
    pub fn declare_send_deterministic(&mut self) {
        self.decisions.disable();
    }

    /// Appends a message to the log and answers any pull parked for it. `Err(LogFull)`
    /// means the caller must wait (drive the engine) and try again.
    pub fn send(
        &mut self,
        now: Duration,
        comm: u32,
        tag: i32,
        dst: u32,
        payload: Bytes,
    ) -> Result<Key, LogFull> {
        let choices = self.decisions.used_bound();
        let (key, order) =
            self.log
                .append(comm, tag, self.me.rank, dst, payload.clone(), choices)?;
        self.stats.sends += 1;
        let by_order = Want::Order {
            comm,
            src: self.me.rank,
            dst,
            order,
        };
        for want in [Want::Key(key), by_order] {
            if !self.parked.contains_key(&want) {
                continue;
            }
            if self.may_leave(choices) {
                self.serve_parked(want, key, order, &payload, choices);
            } else {
                self.block(now, want);
            }
        }
        self.drain_loopback(now);
        Ok(key)
    }

    /// Posts a receive or probe; its result comes out of `take`.
    pub fn post(&mut self, now: Duration, spec: RecvSpec, mode: Mode) -> RecvId {
        let coordinate = spec.any_source() || mode == Mode::ImmediateProbe;
        let slot = (coordinate && self.decisions.enabled()).then(|| self.decisions.next_slot());
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
        self.decisions.enabled().then(|| self.decisions.next_slot())
    }

    /// Where the caller's choice `slot` stands; asks the leader for it if need be.
    pub fn choice(&mut self, now: Duration, slot: u64) -> ChoiceState {
        match self.decisions.slot(slot) {
            Slot::Held(b) => {
                self.decisions.mark_used(slot);
                ChoiceState::Made(b)
            }
            Slot::Evicted => ChoiceState::Waiting,
            Slot::Unknown if self.decisions.is_leader() => ChoiceState::Yours,
            Slot::Unknown => {
                self.want(now, Want::Key(slot_key(self.me.rank, slot)), true);
                self.drain_loopback(now);
                ChoiceState::Waiting
            }
        }
    }

    /// The leader records its choice for `slot`.
    pub fn make_choice(&mut self, now: Duration, slot: u64, value: Bytes) {
        if self.decisions.record(slot, value) {
            self.stats.choices += 1;
            self.after_record(now, slot);
        }
        self.decisions.mark_used(slot);
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
        self.heard.insert(from, now);
        self.dispatch(now, from, frame);
        self.drain_loopback(now);
    }

    /// A replica is gone: `confirmed` when the launcher said so (it ended the process),
    /// otherwise its connection failed.
    pub fn handle_peer_down(&mut self, now: Duration, peer: ReplicaId, confirmed: bool) {
        if peer == self.me {
            return;
        }
        if peer.rank == self.me.rank && self.decisions.enabled() {
            if confirmed {
                let others = self.live_elsewhere(peer);
                if let Some(asked) = self
                    .decisions
                    .on_dead(peer.replica, now, others.into_iter())
                {
                    let base = self.consumed.watermark(DECISION_CTX, self.me.rank);
                    for to in asked {
                        self.out(
                            to,
                            Frame::Takeover {
                                rank: self.me.rank,
                                base,
                            },
                        );
                    }
                }
                self.release_blocked(now);
                self.on_authority_change(now);
            } else {
                self.fence(peer);
            }
        } else if confirmed && self.decisions.forget(peer) {
            self.on_authority_change(now);
        }
        if self.liveness.mark_dead(peer) {
            log::info!("{}: replica {peer} is dead", self.me);
            self.log.note_dead(peer.rank, peer.replica);
            self.parked.retain(|_, list| {
                list.retain(|&(r, _)| r != peer);
                !list.is_empty()
            });
            self.fail_over(now, peer);
            let liveness = &self.liveness;
            self.matcher.fail_unresolved(|spec| {
                let ranks = spec.ranks();
                let lost = !ranks.is_empty() && ranks.iter().all(|&r| !liveness.rank_alive(r));
                lost.then(|| RecvError::RankLost { rank: ranks[0] })
            });
        }
        self.rematch(now);
        self.drain_loopback(now);
    }

    /// Timers: acks, silence, hedges, takeover answers, consumption notices.
    pub fn handle_timeout(&mut self, now: Duration) {
        if now > self.last_tick + self.cfg.ack_timeout {
            self.resync(now);
        }
        self.last_tick = now;
        if !self.owed.is_empty() && now >= self.next_notice_at {
            self.settle(|_| true);
            self.next_notice_at = now + self.cfg.consumed_interval;
        }
        if self.choices_due.is_some_and(|d| now >= d) {
            self.send_choices();
        }
        while let Some(&(due, want, from, req)) = self.unacked.front() {
            if due > now {
                break;
            }
            self.unacked.pop_front();
            let still_parked = self
                .parked
                .get(&want)
                .is_some_and(|l| l.contains(&(from, req)));
            if still_parked {
                self.ack(want, from, req);
            }
        }
        let half = self.cfg.ack_timeout / 2;
        // Asks whose replica went silent, and peers to ask again (keepalive).
        let mut silent: Vec<(Want, ReplicaId)> = Vec::new();
        let mut ping: Map<ReplicaId, (Want, u64)> = Map::default();
        let mut hedge = Vec::new();
        for (want, p) in self.pending.iter() {
            for a in &p.asks {
                let peer = ReplicaId::new(want.src(), a.replica);
                if peer == self.me {
                    continue;
                }
                match a.state {
                    AskState::Sent { at } if now >= at + self.cfg.ack_timeout => {
                        silent.push((*want, peer));
                    }
                    AskState::Parked => {
                        let heard = self.heard.get(&peer).copied().unwrap_or(Duration::ZERO);
                        if now >= heard + self.cfg.ack_timeout {
                            silent.push((*want, peer));
                        } else if now >= heard + half
                            && self.pinged.get(&peer).is_none_or(|&t| t < heard)
                        {
                            ping.entry(peer).or_insert((*want, a.req));
                        }
                    }
                    AskState::Sent { .. }
                    | AskState::Silent
                    | AskState::Gone
                    | AskState::Dropped => {}
                }
            }
            if now >= p.hedge_at {
                hedge.push(*want);
            }
        }
        for (peer, (want, req)) in ping {
            self.pinged.insert(peer, now);
            let consumed = self.consumed.watermark(want.comm(), want.src());
            log::trace!("{}: asking {peer} again for {want} (keepalive)", self.me);
            self.out(
                peer,
                Frame::Pull {
                    want,
                    req,
                    consumed,
                },
            );
        }
        for (want, peer) in silent {
            self.on_silent(now, want, peer);
        }
        for peer in self.decisions.overdue(now, self.cfg.ack_timeout) {
            self.fence(peer);
        }
        if self
            .blocked_since
            .is_some_and(|t| now >= t + self.cfg.ack_timeout)
        {
            for k in self.decisions.lagging(self.decisions.used_bound()) {
                log::info!(
                    "{}: sibling {}.{k} has not taken choices for {:?}; fencing it",
                    self.me,
                    self.me.rank,
                    self.cfg.ack_timeout
                );
                self.fence(ReplicaId::new(self.me.rank, k));
            }
            self.blocked_since = Some(now);
        }
        for want in hedge {
            self.hedge(now, want);
        }
        if self.consumed_dirty && now >= self.next_consumed_at {
            self.consumed_dirty = false;
            self.next_consumed_at = now + self.cfg.consumed_interval;
            for (comm, src, watermark) in self.consumed.take_dirty() {
                for k in 0..self.replicas {
                    let to = ReplicaId::new(src, k);
                    if to != self.me && self.liveness.is_usable(to) {
                        self.out(
                            to,
                            Frame::Consumed {
                                comm,
                                src,
                                dst: self.me.rank,
                                watermark,
                            },
                        );
                    }
                }
            }
        }
        self.drain_loopback(now);
    }

    // ---- outputs ----

    /// Next frame to put on the wire now. A pull whose message arrived (or was given up)
    /// before the pull left is dropped: several messages of a stream often come in one
    /// read, and taking the first asks for the second before that is handled.
    pub fn poll_transmit(&mut self) -> Option<(ReplicaId, Frame)> {
        while let Some((to, f)) = self.transmit.pop_front() {
            if matches!(&f, Frame::Pull { want, .. } if !self.pending.contains_key(want)) {
                continue;
            }
            return Some((to, f));
        }
        None
    }

    /// Next frame that may wait (speculative pulls): for a write to its peer, or until
    /// the driver has nothing else to do.
    pub fn poll_deferred(&mut self) -> Option<(ReplicaId, Frame)> {
        self.deferred.pop_front()
    }

    /// Next deferred frame to a peer for which `rides` holds (one a write goes to anyway).
    pub fn poll_deferred_to(
        &mut self,
        rides: impl Fn(ReplicaId) -> bool,
    ) -> Option<(ReplicaId, Frame)> {
        let i = self.deferred.iter().position(|(to, _)| rides(*to))?;
        self.deferred.remove(i)
    }

    /// Next event for the driver.
    pub fn poll_event(&mut self) -> Option<EngineEvent> {
        self.events.pop_front()
    }

    /// The earliest time `handle_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<Duration> {
        let mut t: Option<Duration> = None;
        let mut at = |d: Duration| t = Some(t.map_or(d, |x| x.min(d)));
        let half = self.cfg.ack_timeout / 2;
        for (want, p) in &self.pending {
            at(p.hedge_at);
            for a in &p.asks {
                let peer = ReplicaId::new(want.src(), a.replica);
                if peer == self.me {
                    continue;
                }
                match a.state {
                    AskState::Sent { at: s } => at(s + self.cfg.ack_timeout),
                    AskState::Parked => {
                        let heard = self.heard.get(&peer).copied().unwrap_or(Duration::ZERO);
                        let pinged = self.pinged.get(&peer).is_some_and(|&t| t >= heard);
                        at(heard + if pinged { self.cfg.ack_timeout } else { half });
                    }
                    AskState::Silent | AskState::Gone | AskState::Dropped => {}
                }
            }
        }
        if self.consumed_dirty {
            at(self.next_consumed_at);
        }
        if !self.owed.is_empty() {
            at(self.next_notice_at);
        }
        if let Some(&(due, ..)) = self.unacked.front() {
            at(due);
        }
        if let Some(d) = self.choices_due {
            at(d);
        }
        if let Some(d) = self.decisions.deadline(self.cfg.ack_timeout) {
            at(d);
        }
        if let Some(b) = self.blocked_since {
            at(b + self.cfg.ack_timeout);
        }
        t
    }

    /// The outcome of a receive or probe, once complete. Taking a message also asks,
    /// speculatively, for the next one of its stream.
    pub fn take(&mut self, now: Duration, id: RecvId) -> Option<Result<Matched, RecvError>> {
        let (r, any_tag) = self.matcher.take(id)?;
        match (&r, any_tag) {
            (Ok(Matched::Message { .. }), Some((comm, src))) => {
                let order = self.consumed.watermark(comm, src);
                if !self.matcher.has_unexpected_below(comm, src, order) {
                    let dst = self.me.rank;
                    self.speculate(
                        now,
                        Want::Order {
                            comm,
                            src,
                            dst,
                            order,
                        },
                    );
                }
            }
            (Ok(Matched::Message { key, .. }), None) => {
                let next = Key {
                    seq: key.seq + 1,
                    ..*key
                };
                let claimed = self.matcher.next_claim(next.comm, next.tag, next.src) != next.seq;
                if !claimed && !self.matcher.is_unexpected(&next) {
                    self.speculate(now, Want::Key(next));
                }
            }
            (Ok(Matched::Nothing) | Err(_), _) => {}
        }
        Some(r)
    }

    // ---- internals ----

    /// Lets the matcher resolve what it can and fetches what it needs.
    fn rematch(&mut self, now: Duration) {
        if !self.matcher.has_unresolved() {
            return;
        }
        let mut needs = std::mem::take(&mut self.needs);
        let mut chooser = EngineChooser {
            decisions: &mut self.decisions,
            recorded: Vec::new(),
            made: &mut self.stats.choices,
        };
        let consumed = &self.consumed;
        self.matcher.resolve(
            &|comm, src| consumed.watermark(comm, src),
            &mut chooser,
            &mut needs,
        );
        let recorded = chooser.recorded;
        for slot in recorded {
            self.after_record(now, slot);
        }
        for need in needs.drain(..) {
            match need {
                Need::Message { want, needed } => self.want(now, want, needed),
                Need::Choice(slot) => self.want(now, Want::Key(slot_key(self.me.rank, slot)), true),
            }
        }
        self.needs = needs;
    }

    /// Makes sure `want` is being fetched.
    fn want(&mut self, now: Duration, want: Want, needed: bool) {
        if let Some(p) = self.pending.get_mut(&want) {
            if needed && !p.needed {
                p.needed = true;
                p.hedge_at = now + self.cfg.hedge_timeout;
                // A leader that went silent while we only stood by is needed now.
                let silent = p.replicas(|a| a.state == AskState::Silent);
                if want.comm() == DECISION_CTX {
                    for k in silent {
                        self.fence(ReplicaId::new(self.me.rank, k));
                    }
                }
                // A speculative pull still waiting for a write goes now: we wait for it.
                let deferred = self
                    .deferred
                    .iter()
                    .position(|(_, f)| matches!(f, Frame::Pull { want: w, .. } if *w == want));
                if let Some(d) = deferred.and_then(|i| self.deferred.remove(i)) {
                    self.transmit.push_back(d);
                }
                if !self
                    .pending
                    .get(&want)
                    .is_some_and(|p| p.asks.iter().any(Ask::outstanding))
                {
                    self.ask_next(now, want);
                }
            }
            return;
        }
        if let Want::Key(k) = want {
            if self.matcher.is_unexpected(&k) {
                return;
            }
        }
        self.pending.insert(
            want,
            Pending {
                asks: Vec::new(),
                hedge_at: if needed {
                    now + self.cfg.hedge_timeout
                } else {
                    Duration::MAX
                },
                needed,
                defer: false,
            },
        );
        self.ask_next(now, want);
    }

    fn out(&mut self, to: ReplicaId, f: Frame) {
        if to == self.me {
            self.loopback.push_back(f);
        } else {
            self.transmit.push_back((to, f));
        }
    }

    fn drain_loopback(&mut self, now: Duration) {
        while let Some(f) = self.loopback.pop_front() {
            self.dispatch(now, self.me, f);
        }
    }

    fn dispatch(&mut self, now: Duration, from: ReplicaId, frame: Frame) {
        match frame {
            Frame::Pull {
                want,
                req,
                consumed,
            } => self.on_pull(now, from, want, req, consumed),
            Frame::Data {
                key,
                req: _,
                order,
                payload,
                confirm,
            } => {
                self.on_data(now, from, key, order, payload);
                if confirm {
                    // The sender kept no copy and waits for this (see `send_unlogged`).
                    self.out(
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
            Frame::Gone { want, req } => self.on_gone(now, from, want, req),
            Frame::Cancel { want, req } => {
                if let Some(list) = self.parked.get_mut(&want) {
                    list.retain(|&(r, q)| !(r == from && q == req));
                    if list.is_empty() {
                        self.parked.remove(&want);
                    }
                }
            }
            Frame::Consumed {
                comm,
                src,
                dst,
                watermark,
            } => {
                if comm == DECISION_CTX && src == self.me.rank && from.rank == self.me.rank {
                    if self.decisions.note_held(from.replica, watermark) {
                        self.release_blocked(now);
                    }
                } else if src == self.me.rank && dst == from.rank {
                    self.log.note_consumed(comm, dst, from.replica, watermark);
                } else {
                    log::debug!("{}: CONSUMED from {from} for {src}->{dst} ignored", self.me);
                }
            }
            Frame::Takeover { rank, base } => {
                if from.rank != rank {
                    log::warn!("{}: TAKEOVER from {from} for rank {rank} ignored", self.me);
                } else if rank == self.me.rank {
                    let entries = self.decisions.on_takeover(from.replica, base);
                    self.out(from, Frame::Decided { rank, entries });
                } else {
                    let entries = self.foreign.on_takeover(from, base);
                    self.out(from, Frame::Decided { rank, entries });
                }
            }
            Frame::Choices {
                rank,
                term,
                stable,
                entries,
            } => {
                if rank == self.me.rank {
                    // Our own rank's choices, from a sibling: adopt them as if pulled
                    // (a message from our own rank may depend on them).
                    self.adopt_carried(now, from, &entries);
                    return;
                }
                match self.foreign.note(from, rank, term, stable, &entries) {
                    Ok(()) => {}
                    Err(Refused::Stale) => {
                        log::info!(
                            "{}: choices of rank {rank} from {from} predate its takeover; the message they go with is dropped",
                            self.me
                        );
                        self.refused.insert(from);
                    }
                    Err(Refused::Malformed(e)) => {
                        log::error!("{}: bad CHOICES from {from}: {e}", self.me);
                        self.refused.insert(from);
                    }
                }
            }
            Frame::Decided { rank, entries } => {
                if rank != self.me.rank {
                    log::warn!("{}: DECIDED from {from} for rank {rank} ignored", self.me);
                    return;
                }
                match self.decisions.on_decided(from, &entries) {
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
    }
}
