//! The engine of one replica. Method kinds, in the order a driver uses them:
//! getters; `handle_frame`, `handle_peer_down`, `handle_timeout` for inputs; `send`,
//! `post_receive`, `detach` as commands; then `poll_transmit`, `poll_deferred`,
//! `poll_event`, `poll_timeout` and `take_received` for outputs. Poll transmits after
//! every input or command; deferred frames may wait for the next command's write.
//!
//! Speculative pulls: when the application takes a message of a stream (comm, tag, src),
//! the engine asks for the stream's next message right away, as a deferred frame, so it
//! leaves in the same write as the application's next send. By the time the application
//! posts that receive the pull is already parked at the sender (or answered), and each
//! message costs one write on each side, as with a push protocol. A speculative pull never
//! hedges, never retires the replica and never reports a lost rank: the real receive does.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;

use crate::config::Config;
use crate::message::log::{LogFull, Lookup};
use crate::message::{Consumed, Key, ReplicaId, SendLog};
use crate::replica::Liveness;
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
}

/// Something the driver must act on beyond transmitting frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineEvent {
    /// This replica cannot catch up and must retire (report, then exit).
    Retire {
        /// Human-readable reason naming the evicted message.
        reason: String,
    },
}

/// State of one ask (a pull sent to one sender replica).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AskState {
    /// Sent; no answer yet.
    Sent { at: Duration },
    /// The sender parked it (not sent yet there).
    Parked,
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

#[derive(Debug)]
struct Pending {
    asks: Vec<Ask>,
    /// When to ask another replica whether it already has the message.
    hedge_at: Duration,
    detached: bool,
    /// Asked for ahead of the application's receive (see the module doc).
    speculative: bool,
}

/// The pull-protocol state of one replica.
pub struct Engine {
    me: ReplicaId,
    replicas: u32,
    cfg: Config,
    log: SendLog,
    parked: HashMap<Key, Vec<(ReplicaId, u64)>>,
    /// Parked pulls not yet acknowledged, in parking order: (due, key, from, req).
    unacked: VecDeque<(Duration, Key, ReplicaId, u64)>,
    consumed: Consumed,
    consumed_dirty: bool,
    next_consumed_at: Duration,
    recv_seqs: HashMap<(u32, i32, u32), u64>,
    pending: HashMap<Key, Pending>,
    completed: HashMap<Key, Result<Bytes, RecvError>>,
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

impl Engine {
    /// A fresh engine for replica `me` of a job of `ranks` x `replicas`.
    pub fn new(me: ReplicaId, ranks: u32, replicas: u32, cfg: Config) -> Engine {
        Engine {
            me,
            replicas,
            log: SendLog::new(cfg.log_bytes_max, replicas),
            cfg,
            parked: HashMap::new(),
            unacked: VecDeque::new(),
            consumed: Consumed::default(),
            consumed_dirty: false,
            next_consumed_at: Duration::ZERO,
            recv_seqs: HashMap::new(),
            pending: HashMap::new(),
            completed: HashMap::new(),
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
    pub fn log_has_room(&mut self, len: usize) -> bool {
        self.log.has_room_for(len)
    }

    /// The key and order number the next `send` to (comm, tag, dst) will get, and the
    /// live replicas whose pulls for it are parked here (replica, request id): a driver
    /// may start writing the message to them before `send` logs it.
    pub fn next_send(&self, comm: u32, tag: i32, dst: u32) -> (Key, u64, Vec<(ReplicaId, u64)>) {
        let (key, order) = self.log.peek_next(comm, tag, self.me.rank, dst);
        let waiters = self
            .parked
            .get(&key)
            .map(|l| {
                l.iter()
                    .copied()
                    .filter(|(to, _)| *to != self.me && self.liveness.is_usable(*to))
                    .collect()
            })
            .unwrap_or_default();
        (key, order, waiters)
    }

    /// Whether any replica of `rank` may still be alive.
    pub fn rank_alive(&self, rank: u32) -> bool {
        self.liveness.rank_alive(rank)
    }

    // ---- commands ----

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
        let (key, order) = self
            .log
            .append(comm, tag, self.me.rank, dst, payload.clone())?;
        self.stats.sends += 1;
        if let Some(waiting) = self.parked.remove(&key) {
            for (to, req) in waiting {
                if self.liveness.is_usable(to) {
                    self.stats.served += 1;
                    self.out(
                        to,
                        Frame::Data {
                            key,
                            req,
                            order,
                            payload: payload.clone(),
                        },
                    );
                }
            }
        }
        self.drain_loopback(now);
        Ok(key)
    }

    /// Posts a receive from `src` with `tag` on `comm`: the next message with that
    /// (comm, tag, src) to this rank. Returns its key, the handle for `take_received`.
    pub fn post_receive(&mut self, now: Duration, comm: u32, tag: i32, src: u32) -> Key {
        let slot = self.recv_seqs.entry((comm, tag, src)).or_insert(0);
        let key = Key {
            comm,
            tag,
            src,
            dst: self.me.rank,
            seq: *slot,
        };
        *slot += 1;
        if let Some(p) = self.pending.get_mut(&key) {
            // A speculative pull is out already: it becomes the real one.
            p.speculative = false;
            p.hedge_at = now + self.cfg.hedge_timeout;
            if !p.asks.iter().any(Ask::outstanding) {
                self.ask_next(now, key);
            }
        } else if !self.completed.contains_key(&key) {
            self.pending.insert(
                key,
                Pending {
                    asks: Vec::new(),
                    hedge_at: now + self.cfg.hedge_timeout,
                    detached: false,
                    speculative: false,
                },
            );
            self.ask_next(now, key);
        }
        self.drain_loopback(now);
        key
    }

    /// The caller no longer wants this receive's data (a dropped request): it still
    /// consumes its message, which is discarded on arrival.
    pub fn detach(&mut self, key: &Key) {
        if let Some(p) = self.pending.get_mut(key) {
            p.detached = true;
        }
        self.completed.remove(key);
    }

    // ---- inputs ----

    /// A frame from an authenticated replica.
    pub fn handle_frame(&mut self, now: Duration, from: ReplicaId, frame: Frame) {
        self.dispatch(now, from, frame);
        self.drain_loopback(now);
    }

    /// A replica is gone (connection failed, or the launcher's death notice).
    pub fn handle_peer_down(&mut self, now: Duration, peer: ReplicaId) {
        if peer == self.me || !self.liveness.mark_dead(peer) {
            return;
        }
        log::info!("{}: replica {peer} is dead", self.me);
        self.log.note_dead(peer.rank, peer.replica);
        self.parked.retain(|_, list| {
            list.retain(|&(r, _)| r != peer);
            !list.is_empty()
        });
        self.fail_over(now, peer);
        self.drain_loopback(now);
    }

    /// Timers: hedges for waiting pulls, ack timeouts, consumption notices.
    pub fn handle_timeout(&mut self, now: Duration) {
        while let Some(&(due, key, from, req)) = self.unacked.front() {
            if due > now {
                break;
            }
            self.unacked.pop_front();
            let still_parked = self
                .parked
                .get(&key)
                .is_some_and(|l| l.contains(&(from, req)));
            if still_parked {
                self.ack(key, from, req);
            }
        }
        let mut silent = Vec::new();
        let mut hedge = Vec::new();
        for (key, p) in self.pending.iter() {
            for a in &p.asks {
                if let AskState::Sent { at } = a.state {
                    if now >= at + self.cfg.ack_timeout {
                        silent.push(ReplicaId::new(key.src, a.replica));
                    }
                }
            }
            if now >= p.hedge_at {
                hedge.push(*key);
            }
        }
        for peer in silent {
            if self.liveness.suspect(peer, now) {
                log::info!(
                    "{}: replica {peer} silent for {:?} (ack timeout); failing over",
                    self.me,
                    self.cfg.ack_timeout
                );
                self.fail_over(now, peer);
            }
        }
        for key in hedge {
            self.hedge(now, key);
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

    /// Next frame to put on the wire now.
    pub fn poll_transmit(&mut self) -> Option<(ReplicaId, Frame)> {
        self.transmit.pop_front()
    }

    /// Next frame that may wait for the next command's write (speculative pulls).
    pub fn poll_deferred(&mut self) -> Option<(ReplicaId, Frame)> {
        self.deferred.pop_front()
    }

    /// Next event for the driver.
    pub fn poll_event(&mut self) -> Option<EngineEvent> {
        self.events.pop_front()
    }

    /// The earliest time `handle_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<Duration> {
        let mut t: Option<Duration> = None;
        let mut at = |d: Duration| t = Some(t.map_or(d, |x| x.min(d)));
        for p in self.pending.values() {
            at(p.hedge_at);
            for a in &p.asks {
                if let AskState::Sent { at: s } = a.state {
                    at(s + self.cfg.ack_timeout);
                }
            }
        }
        if self.consumed_dirty {
            at(self.next_consumed_at);
        }
        if let Some(&(due, ..)) = self.unacked.front() {
            at(due);
        }
        t
    }

    /// The outcome of a receive, once it is complete. Taking a message also asks,
    /// speculatively, for the next one of its stream.
    pub fn take_received(&mut self, now: Duration, key: &Key) -> Option<Result<Bytes, RecvError>> {
        let r = self.completed.remove(key)?;
        if r.is_ok() {
            self.speculate(now, key);
        }
        Some(r)
    }

    // ---- internals ----

    /// Asks for the message after `done` on its stream, unless the application already
    /// posted that receive or it is a message to ourselves.
    fn speculate(&mut self, now: Duration, done: &Key) {
        let next = Key {
            seq: done.seq + 1,
            ..*done
        };
        let posted = self
            .recv_seqs
            .get(&(next.comm, next.tag, next.src))
            .copied()
            .unwrap_or(0);
        if next.src == self.me.rank
            || posted != next.seq
            || self.pending.contains_key(&next)
            || self.completed.contains_key(&next)
        {
            return;
        }
        self.pending.insert(
            next,
            Pending {
                asks: Vec::new(),
                hedge_at: Duration::MAX,
                detached: false,
                speculative: true,
            },
        );
        self.ask_next(now, next);
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
            Frame::Pull { key, req, consumed } => self.on_pull(now, from, key, req, consumed),
            Frame::Data {
                key,
                req: _,
                order,
                payload,
            } => self.on_data(now, from, key, order, payload),
            Frame::Ack { key, req, .. } => self.on_ack(from, key, req),
            Frame::Gone { key, req } => self.on_gone(now, from, key, req),
            Frame::Cancel { key, req } => {
                if let Some(list) = self.parked.get_mut(&key) {
                    list.retain(|&(r, q)| !(r == from && q == req));
                    if list.is_empty() {
                        self.parked.remove(&key);
                    }
                }
            }
            Frame::Consumed {
                comm,
                src,
                dst,
                watermark,
            } => {
                if src == self.me.rank && dst == from.rank {
                    self.log.note_consumed(comm, dst, from.replica, watermark);
                } else {
                    log::debug!("{}: CONSUMED from {from} for {src}->{dst} ignored", self.me);
                }
            }
        }
    }

    fn ask_mut(&mut self, key: &Key, from: ReplicaId, req: u64) -> Option<&mut Ask> {
        if from.rank != key.src {
            return None;
        }
        self.pending
            .get_mut(key)?
            .asks
            .iter_mut()
            .find(|a| a.replica == from.replica && a.req == req)
    }

    fn on_pull(&mut self, now: Duration, from: ReplicaId, key: Key, req: u64, consumed: u64) {
        if key.src != self.me.rank || key.dst != from.rank {
            log::warn!("{}: PULL {key} from {from} is not for us; dropped", self.me);
            return;
        }
        self.log
            .note_consumed(key.comm, key.dst, from.replica, consumed);
        let reply = match self.log.lookup(&key) {
            Lookup::Present(e) => {
                self.stats.served += 1;
                Frame::Data {
                    key,
                    req,
                    order: e.order,
                    payload: e.payload.clone(),
                }
            }
            Lookup::Evicted => Frame::Gone { key, req },
            Lookup::NotYetSent => {
                self.parked.entry(key).or_default().push((from, req));
                if self.cfg.ack_delay.is_zero() {
                    self.ack(key, from, req);
                } else {
                    self.unacked
                        .push_back((now + self.cfg.ack_delay, key, from, req));
                }
                return;
            }
        };
        self.out(from, reply);
    }

    fn ack(&mut self, key: Key, to: ReplicaId, req: u64) {
        let progress = self.log.sent_to(key.comm, key.dst);
        self.out(to, Frame::Ack { key, req, progress });
    }

    fn on_data(&mut self, now: Duration, from: ReplicaId, key: Key, order: u64, payload: Bytes) {
        if from.rank != key.src || key.dst != self.me.rank {
            log::warn!("{}: DATA {key} from {from} is not for us; dropped", self.me);
            return;
        }
        let Some(p) = self.pending.remove(&key) else {
            log::trace!("{}: duplicate DATA {key} from {from} dropped", self.me);
            return;
        };
        self.liveness.clear_suspicion(from);
        let mut lagging = Vec::new();
        for a in &p.asks {
            if a.replica != from.replica && a.outstanding() {
                let other = ReplicaId::new(key.src, a.replica);
                // The sibling we asked first is behind the one that answered.
                if self.liveness.suspect(other, now) {
                    log::info!(
                        "{}: replica {other} lags behind {from} for {key}; preferring others",
                        self.me
                    );
                    self.stats.failovers += 1;
                    lagging.push(other);
                }
                self.out(other, Frame::Cancel { key, req: a.req });
            }
        }
        self.stats.receives += 1;
        if self.consumed.record(key.comm, key.src, order) {
            self.consumed_dirty = true;
        }
        if !p.detached {
            self.completed.insert(key, Ok(payload));
        }
        for other in lagging {
            self.fail_over(now, other);
        }
    }

    /// A sender parked our pull. If another replica already parked one for the same
    /// message, that one is alive and simply has not sent yet: withdraw this (hedge) ask
    /// at once, so the message crosses the network only once.
    fn on_ack(&mut self, from: ReplicaId, key: Key, req: u64) {
        let Some(p) = self.pending.get_mut(&key) else {
            return;
        };
        let other_parked = p
            .asks
            .iter()
            .any(|a| a.replica != from.replica && a.state == AskState::Parked);
        let Some(a) = p
            .asks
            .iter_mut()
            .find(|a| a.replica == from.replica && a.req == req && from.rank == key.src)
        else {
            return;
        };
        if let AskState::Sent { .. } = a.state {
            if other_parked {
                a.state = AskState::Dropped;
                self.out(from, Frame::Cancel { key, req });
            } else {
                a.state = AskState::Parked;
            }
        }
    }

    fn on_gone(&mut self, now: Duration, from: ReplicaId, key: Key, req: u64) {
        let Some(a) = self.ask_mut(&key, from, req) else {
            return;
        };
        a.state = AskState::Gone;
        log::debug!("{}: {from} evicted {key}", self.me);
        self.ask_next(now, key);
    }

    /// Sends the pull for `key` to the best replica not asked yet. If none is left, the
    /// receive fails: rank lost when every replica is dead, retirement when the live ones
    /// all evicted it; otherwise it keeps waiting on the outstanding asks.
    fn ask_next(&mut self, now: Duration, key: Key) -> bool {
        let Some(p) = self.pending.get(&key) else {
            return false;
        };
        let asked = |k: u32| {
            p.asks
                .iter()
                .any(|a| a.replica == k && a.state != AskState::Dropped)
        };
        let choice = self.liveness.choose(key.src, self.me.replica, asked);
        if let Some(k) = choice {
            let req = self.next_req;
            self.next_req += 1;
            let consumed = self.consumed.watermark(key.comm, key.src);
            let mut speculative = false;
            if let Some(p) = self.pending.get_mut(&key) {
                if !p.asks.is_empty() {
                    self.stats.failovers += 1;
                }
                p.asks.retain(|a| a.replica != k);
                p.asks.push(Ask {
                    replica: k,
                    req,
                    state: AskState::Sent { at: now },
                });
                speculative = p.speculative;
            }
            let to = ReplicaId::new(key.src, k);
            let pull = Frame::Pull { key, req, consumed };
            if speculative && to != self.me {
                self.deferred.push_back((to, pull));
            } else {
                self.out(to, pull);
            }
            return true;
        }
        if p.speculative {
            // Nobody can serve it now; the real receive will ask again and report.
            if !p.asks.iter().any(Ask::outstanding) {
                self.pending.remove(&key);
            }
            return false;
        }
        if p.asks.iter().any(Ask::outstanding) {
            return false;
        }
        let err = if !self.liveness.rank_alive(key.src) {
            RecvError::RankLost { rank: key.src }
        } else if p.asks.iter().any(|a| a.state == AskState::Gone) {
            let reason = format!(
                "replica {} fell too far behind: message {key} evicted",
                self.me
            );
            if !self.retired {
                self.retired = true;
                self.events.push_back(EngineEvent::Retire {
                    reason: reason.clone(),
                });
            }
            RecvError::Retired { reason }
        } else {
            // Every live replica was dropped (cancelled); ask them all again.
            if let Some(p) = self.pending.get_mut(&key) {
                p.asks.clear();
            }
            return self.ask_next(now, key);
        };
        if let Some(p) = self.pending.remove(&key) {
            if !p.detached {
                self.completed.insert(key, Err(err));
            }
        }
        false
    }

    /// Re-posts every pull outstanding at `peer` to another replica of its rank.
    fn fail_over(&mut self, now: Duration, peer: ReplicaId) {
        let dead = !self.liveness.is_usable(peer);
        let keys: Vec<Key> = self
            .pending
            .iter()
            .filter(|(k, p)| {
                k.src == peer.rank
                    && p.asks
                        .iter()
                        .any(|a| a.replica == peer.replica && a.outstanding())
            })
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            if dead {
                if let Some(p) = self.pending.get_mut(&key) {
                    for a in p.asks.iter_mut().filter(|a| a.replica == peer.replica) {
                        a.state = AskState::Dropped;
                    }
                }
            }
            let others_outstanding = self.pending.get(&key).is_some_and(|p| {
                p.asks
                    .iter()
                    .any(|a| a.replica != peer.replica && a.outstanding())
            });
            if !others_outstanding {
                self.ask_next(now, key);
            }
        }
    }

    /// Asks one more replica whether it already has the message the current asks are
    /// still waiting for; the first DATA wins and the rest are cancelled.
    fn hedge(&mut self, now: Duration, key: Key) {
        let Some(p) = self.pending.get_mut(&key) else {
            return;
        };
        p.hedge_at = now + self.cfg.hedge_timeout;
        // Withdraw earlier hedges that were only parked too, keeping the first ask.
        let mut cancels = Vec::new();
        let mut seen_outstanding = false;
        for a in p.asks.iter_mut() {
            if a.state == AskState::Parked {
                if seen_outstanding {
                    cancels.push((a.replica, a.req));
                    a.state = AskState::Dropped;
                }
                seen_outstanding = true;
            } else if a.outstanding() {
                seen_outstanding = true;
            }
        }
        let outstanding: Vec<u32> = p
            .asks
            .iter()
            .filter(|a| a.outstanding())
            .map(|a| a.replica)
            .collect();
        let gone: Vec<u32> = p
            .asks
            .iter()
            .filter(|a| a.state == AskState::Gone)
            .map(|a| a.replica)
            .collect();
        let last_hedged = p.asks.last().map(|a| a.replica);
        for (k, req) in cancels {
            self.out(ReplicaId::new(key.src, k), Frame::Cancel { key, req });
        }
        if self.replicas < 2 {
            return;
        }
        // Rotate through the siblings not currently asked, starting after the last one.
        let start = last_hedged.map_or(self.me.replica, |k| k + 1);
        let candidate = (0..self.replicas)
            .map(|i| (start + i) % self.replicas)
            .find(|&k| {
                !outstanding.contains(&k)
                    && !gone.contains(&k)
                    && self.liveness.is_usable(ReplicaId::new(key.src, k))
            });
        if let Some(k) = candidate {
            let req = self.next_req;
            self.next_req += 1;
            let consumed = self.consumed.watermark(key.comm, key.src);
            if let Some(p) = self.pending.get_mut(&key) {
                p.asks.retain(|a| a.replica != k || a.outstanding());
                p.asks.push(Ask {
                    replica: k,
                    req,
                    state: AskState::Sent { at: now },
                });
            }
            log::trace!("{}: hedging {key} at replica {k}", self.me);
            self.out(
                ReplicaId::new(key.src, k),
                Frame::Pull { key, req, consumed },
            );
        }
    }
}
