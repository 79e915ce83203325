//! The receiving side of the pull protocol, `Receiving`: asking the best replica for
//! what the matcher needs, taking DATA, failing over on deaths, silence and GONE, hedging
//! against lagging replicas, speculative pulls, and telling senders how far this replica
//! received. A type over the engine's parts it uses (`Engine::receiving` makes it); its
//! own state is `fetches`. The engine carries out what spans the coordination (a DATA
//! frame's choices, recording an adopted choice, matching again after an arrival). Must
//! never serve other replicas.

use std::time::Duration;

use bytes::Bytes;

use super::ahead::{self, any_tag_stream, stream_of, AHEAD_MAX};
use super::fetches::{Ask, AskState, Fetches, Pending};
use super::outbox::Outbox;
use super::silence::Silence;
use super::timers::{Timer, TimerTable};
use super::{EngineEvent, RecvError};
use crate::config::Config;
use crate::message::matching::Matcher;
use crate::message::{Consumed, Key, ReplicaId, ReqId, Set, Want};
use crate::pull::decision::{Authority, Decisions, DECISION_CTX};
use crate::replica::Liveness;
use crate::wire::control::ReplicaStats;
use crate::wire::Frame;

/// The receiving side of one replica, over the engine's parts it uses.
pub(super) struct Receiving<'e> {
    pub(super) me: ReplicaId,
    pub(super) replicas: u32,
    pub(super) cfg: &'e Config,
    pub(super) fetches: &'e mut Fetches,
    /// When each sender was last heard from and asked again.
    pub(super) silence: &'e mut Silence,
    pub(super) matcher: &'e mut Matcher<RecvError>,
    pub(super) liveness: &'e mut Liveness,
    pub(super) consumed: &'e mut Consumed,
    /// The earliest time senders may hear of `consumed` again.
    pub(super) consumed_notice_after: Duration,
    /// This rank's choices: who leads them, so who is asked for one.
    pub(super) decisions: &'e Decisions,
    pub(super) streams: &'e mut ahead::Streams,
    pub(super) timers: &'e mut TimerTable,
    pub(super) out: &'e mut Outbox,
    pub(super) stats: &'e mut ReplicaStats,
    /// Messages that every live replica of their sender answered ENDED for.
    pub(super) ended: &'e mut Set<Want>,
    /// Replicas the launcher was asked to fence.
    pub(super) fenced: &'e mut Set<ReplicaId>,
    /// This replica is retiring (asked once).
    pub(super) retired: &'e mut bool,
    /// A regenerated incarnation that has not caught up yet.
    pub(super) catching_up: bool,
}

/// Asks the launcher to fence `peer` (once): a sibling that makes or holds choices is
/// silent or unreachable.
pub(super) fn fence(me: ReplicaId, fenced: &mut Set<ReplicaId>, out: &mut Outbox, peer: ReplicaId) {
    if fenced.insert(peer) {
        log::info!("{me}: asking the launcher to fence {peer}");
        out.event(EngineEvent::Fence { peer });
    }
}

impl Receiving<'_> {
    /// Asks the launcher to fence `peer` (see `fence`).
    fn fence(&mut self, peer: ReplicaId) {
        fence(self.me, self.fenced, self.out, peer);
    }

    /// Makes sure `want` is being fetched.
    pub(super) fn want(&mut self, now: Duration, want: Want, needed: bool) {
        if let Some(p) = self.fetches.get_mut(&want) {
            if needed && !p.needed() {
                p.needed_since = Some(now);
                p.hedge_at = now + self.cfg.hedge_timeout;
                let speculated_at = p.speculated_at;
                // A leader that went silent while we only stood by is needed now.
                let silent = p.replicas(|a| a.state == AskState::Silent);
                if want.comm() == DECISION_CTX {
                    for k in silent {
                        self.fence(ReplicaId::new(self.me.rank, k));
                    }
                }
                // A speculative pull still waiting for a write goes now: we wait for it.
                let late = self.out.hurry_pull(want);
                if let Some(t) = speculated_at {
                    self.streams
                        .on_needed(stream_of(&want), now.saturating_sub(t), late);
                }
                if !self
                    .fetches
                    .get(&want)
                    .is_some_and(Pending::any_outstanding)
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
        let hedge_at = if needed {
            now + self.cfg.hedge_timeout
        } else {
            Duration::MAX
        };
        self.fetches
            .insert(want, Pending::new(hedge_at, needed.then_some(now), false));
        self.ask_next(now, want);
    }

    /// After the application took the message `key` (of `len` bytes) of a stream, asks
    /// ahead for the stream's next ones, as many as `ahead::Streams::window` says: by
    /// order number for an `ANY_TAG` receive (`any_tag` names its (comm, src)), else by
    /// key. A sender that sends a few in a row, or runs ahead, then answers each of its
    /// sends at once, and one that finished long ago answers a few at each wake-up.
    pub(super) fn speculate_after(
        &mut self,
        now: Duration,
        key: Key,
        len: usize,
        any_tag: Option<(u32, u32)>,
    ) {
        let stream = match any_tag {
            Some((comm, src)) => any_tag_stream(comm, src),
            None => stream_of(&Want::Key(key)),
        };
        let Some((ahead, eager)) = self.streams.window(&stream, key.is_point_to_point(), len)
        else {
            return;
        };
        // Pulls go out half a window at a time, together in one write: a stream read one
        // message at a time costs its sender one read of pulls per half window, not one
        // per message. Standing pulls were made in order, so when the one just past the
        // first half of the window stands, fewer than half are missing: most takes stop
        // at this one lookup. (An eager stream goes on: it hurries pulls made while lazy.)
        let half = ahead.div_ceil(2);
        // An `ANY_TAG` stream's place: its (comm, src) and first order number not taken.
        let by_order = any_tag.map(|(comm, src)| (comm, src, self.consumed.watermark(comm, src)));
        let dst = self.me.rank;
        let order_want = |comm, src, order| Want::Order {
            comm,
            src,
            dst,
            order,
        };
        let probe = match by_order {
            Some((comm, src, first)) => order_want(comm, src, first + (ahead - half) as u64),
            None => Want::Key(Key {
                seq: key.seq.saturating_add(1 + (ahead - half) as u64),
                ..key
            }),
        };
        if !eager && self.fetches.contains(&probe) {
            return;
        }
        // The next `ahead` messages not here yet.
        let mut next = [Want::Key(key); AHEAD_MAX];
        let mut n = 0;
        match by_order {
            Some((comm, src, first)) => {
                // By order, less those here unclaimed already.
                let wanted = ahead.saturating_sub(self.matcher.unexpected_from(comm, src));
                let mut order = first;
                for slot in &mut next[..wanted] {
                    while self.consumed.has(comm, src, order) {
                        order += 1;
                    }
                    *slot = order_want(comm, src, order);
                    order += 1;
                }
                n = wanted;
            }
            None => {
                let claimed_below = self.matcher.next_claim(key.comm, key.tag, key.src);
                for i in 1..=ahead as u64 {
                    let Some(seq) = key.seq.checked_add(i) else {
                        break;
                    };
                    let k = Key { seq, ..key };
                    // A receive posted for it already asks for it.
                    if claimed_below <= seq && !self.matcher.is_unexpected(&k) {
                        next[n] = Want::Key(k);
                        n += 1;
                    }
                }
            }
        }
        let next = &next[..n];
        let missing = next.iter().filter(|w| !self.fetches.contains(w)).count();
        if missing >= half {
            for &want in next {
                self.speculate(now, want);
            }
        }
        if eager {
            // Asked while the stream was lazy: they go now.
            for &want in next {
                self.out.hurry_pull(want);
            }
        }
    }

    /// Asks ahead for `want`, unless it is a message to ourselves, a choice, or already
    /// asked for.
    fn speculate(&mut self, now: Duration, want: Want) {
        if want.src() == self.me.rank || want.comm() == DECISION_CTX || self.fetches.contains(&want)
        {
            return;
        }
        let defer = !self.streams.is_eager(&stream_of(&want));
        self.fetches.insert(want, Pending::speculative(now, defer));
        self.ask_next(now, want);
    }

    /// `peer` did not answer the ask for `want` in time: fence it if it is the leader of
    /// our choices, otherwise suspect it and ask another replica.
    pub(super) fn on_silent(&mut self, now: Duration, want: Want, peer: ReplicaId) {
        if let Some(a) = self
            .fetches
            .get_mut(&want)
            .and_then(|p| p.asks.iter_mut().find(|a| a.replica == peer.replica))
        {
            a.state = AskState::Silent;
        }
        if want.comm() == DECISION_CTX {
            // Only fence a leader this replica is waiting on; a standing pull just waits.
            if self.fetches.get(&want).is_some_and(|p| p.needed()) {
                log::info!(
                    "{}: leader {peer} silent for {:?}; fencing it",
                    self.me,
                    self.cfg.ack_timeout
                );
                self.fence(peer);
            }
            return;
        }
        if self.liveness.suspect(peer, now) {
            log::info!(
                "{}: replica {peer} silent for {:?} (ack timeout); failing over",
                self.me,
                self.cfg.ack_timeout
            );
            self.stats.failovers += 1;
        }
        if !self
            .fetches
            .get(&want)
            .is_some_and(Pending::any_outstanding)
        {
            self.ask_next(now, want);
        }
    }

    /// A DATA frame from `from` followed CHOICES that were refused, or a fenced
    /// incarnation sent it: it may depend on a choice the new leader of a rank decides
    /// differently, so it is dropped and its pull stays out, to fail over or be asked
    /// again.
    pub(super) fn stale(&mut self, now: Duration, from: ReplicaId, key: Key, order: u64) {
        log::info!(
            "{}: DATA {key} from {from} dropped (stale choices)",
            self.me
        );
        // The sender forgot the pull it answered. A parked ask would wait forever
        // while the sender stays responsive: wait for an answer from now on, so the
        // ack timeout asks again elsewhere (not at once: the sender may repeat the
        // same stale choices until the takeover reaches it).
        let by_order = Want::Order {
            comm: key.comm,
            src: key.src,
            dst: key.dst,
            order,
        };
        for want in [Want::Key(key), by_order] {
            if let Some(p) = self.fetches.get_mut(&want) {
                for a in p.asks.iter_mut() {
                    if a.replica == from.replica && a.outstanding() {
                        a.state = AskState::Sent { at: now };
                    }
                }
            }
        }
    }

    /// Message `key` (the `order`-th of its stream) arrived from `from`, new here: its
    /// pulls end, it counts as received, and the matcher has it (the engine matches
    /// again).
    pub(super) fn arrived(
        &mut self,
        now: Duration,
        from: ReplicaId,
        key: Key,
        order: u64,
        payload: Bytes,
    ) {
        let by_order = Want::Order {
            comm: key.comm,
            src: key.src,
            dst: key.dst,
            order,
        };
        self.complete(now, from, &[Want::Key(key), by_order]);
        self.stats.receives += 1;
        let first_missing = self.consumed.watermark(key.comm, key.src);
        debug_assert!(
            !self.consumed.has(key.comm, key.src, order),
            "{key} received twice"
        );
        if self.consumed.record(key.comm, key.src, order) {
            self.timers
                .set_if_idle(Timer::ConsumedNotice, self.consumed_notice_after);
        }
        self.matcher.arrive(key, order, payload, first_missing);
    }

    /// `wants` arrived from `from`: forget them, withdraw the other asks, and mark the
    /// replicas asked before that did not answer as lagging: one that never even
    /// acknowledged an ask a hedge interval old (stopped, or cut off), or one a receive
    /// waited for at least the lag timeout while `from` had the message whenever asked
    /// (`from` never parked an ask for it). A live replica that parked the pull and is
    /// behind by less is the ordinary drift between teams on a loaded host, and moving
    /// pulls away from it would only couple the teams.
    pub(super) fn complete(&mut self, now: Duration, from: ReplicaId, wants: &[Want]) {
        self.liveness.clear_suspicion(from);
        let mut lagging = Vec::new();
        for want in wants {
            let Some(p) = self.fetches.remove(want) else {
                continue;
            };
            // Waited the lag timeout, and the replica that answered had the message
            // whenever it was asked: one that parked an ask for it was behind too (the
            // sender's program had not reached the send), and its answer winning the race
            // by a hair says nothing about how far behind the others are (the MPI-IO
            // benchmark at -r 2 on a loaded host flipped its pulls between the teams of
            // its aggregator, 64 failovers in one run with nothing failed).
            // The wait counts only while this replica ran: after a stall of the whole
            // host (every replica starved at once), the receive waited long, not the
            // sender that kept it waiting.
            let far_behind = p
                .waited_running(now)
                .is_some_and(|w| w >= self.cfg.lag_timeout)
                && !p.was_parked_by(from.replica);
            // This replica did not run on time lately (its latest hedge turn came late,
            // or the next one is overdue): an ask it sees unacknowledged may have waited
            // for a sender starved with it, and says nothing.
            let stalled = p.late || p.turn_late(now, self.cfg.hedge_timeout);
            for a in p.asks.iter().filter(|a| a.outstanding()) {
                if a.replica == from.replica {
                    continue;
                }
                let other = ReplicaId::new(from.rank, a.replica);
                let silent = !stalled
                    && matches!(a.state, AskState::Sent { at }
                    if now.saturating_sub(at) >= self.cfg.hedge_timeout);
                // The sibling we asked first is silent, or far behind the one that answered.
                if (silent || far_behind)
                    && other.rank != self.me.rank
                    && self.liveness.suspect(other, now)
                {
                    log::info!(
                        "{}: replica {other} lags behind {from} for {want} ({}); preferring others",
                        self.me,
                        if silent {
                            "never acknowledged the pull"
                        } else {
                            "far behind"
                        }
                    );
                    self.stats.failovers += 1;
                    lagging.push(other);
                }
                self.out.send(
                    other,
                    Frame::Cancel {
                        want: *want,
                        req: a.req,
                    },
                );
            }
        }
        for other in lagging {
            self.fail_over(now, other, false);
        }
    }

    /// A sender parked our pull. If another replica already parked one for the same
    /// message, that one is alive and simply has not sent yet: withdraw this (hedge) ask
    /// at once, so the message crosses the network only once.
    pub(super) fn on_ack(&mut self, from: ReplicaId, want: Want, req: ReqId) {
        if from.rank != want.src() {
            return;
        }
        let Some(p) = self.fetches.get_mut(&want) else {
            return;
        };
        let other_parked = p
            .asks
            .iter()
            .any(|a| a.replica != from.replica && a.state == AskState::Parked);
        // Whichever of its asks it acknowledged, it lacked the message then.
        p.note_parked(from.replica);
        let Some(a) = p.ask_mut(from.replica, req) else {
            return;
        };
        match a.state {
            AskState::Sent { .. } | AskState::Silent if other_parked => {
                a.state = AskState::Dropped;
                self.out.send(from, Frame::Cancel { want, req });
            }
            AskState::Sent { .. } | AskState::Silent => a.state = AskState::Parked,
            AskState::Parked | AskState::Gone | AskState::Ended | AskState::Dropped => {}
        }
    }

    /// The sender replica `from` cannot serve `want`: it evicted it (`AskState::Gone`), or
    /// its program ended without sending it (`AskState::Ended`, never for a choice). Ask
    /// another replica; once none is left the receive fails (see `ask_next`).
    pub(super) fn on_refused(
        &mut self,
        now: Duration,
        from: ReplicaId,
        want: Want,
        req: ReqId,
        why: AskState,
    ) {
        if from.rank != want.src() || (why == AskState::Ended && want.comm() == DECISION_CTX) {
            return;
        }
        let Some(a) = self
            .fetches
            .get_mut(&want)
            .and_then(|p| p.ask_mut(from.replica, req))
        else {
            return;
        };
        a.state = why;
        log::debug!("{}: {from} answered {why:?} for {want}", self.me);
        self.ask_next(now, want);
    }

    /// Every live replica of `want`'s sender ended without sending it: unresolved
    /// receives (wildcards) that can take nothing else fail too.
    fn ended_everywhere(&mut self, want: Want) {
        self.ended.insert(want);
        let (liveness, ended, consumed) = (&self.liveness, &self.ended, &self.consumed);
        self.matcher.fail_unresolved_by_candidates(
            &|comm, src| consumed.watermark(comm, src),
            |src, candidate| {
                if !liveness.rank_alive(src) {
                    Some(RecvError::RankLost { rank: src })
                } else if ended.contains(candidate) {
                    Some(RecvError::SenderEnded { rank: src })
                } else {
                    None
                }
            },
        );
    }

    /// The replica to ask for `want` next: the leader for a choice, otherwise the best
    /// replica of the sender not asked yet (own team first).
    fn choose_replica(&self, want: &Want, p: &Pending) -> Option<u32> {
        let asked = |k: u32| {
            p.asks
                .iter()
                .any(|a| a.replica == k && a.state != AskState::Dropped)
        };
        if want.comm() == DECISION_CTX {
            return match self.decisions.authority() {
                Authority::Follower { leader } if !asked(*leader) => Some(*leader),
                Authority::Follower { .. } | Authority::TakingOver { .. } | Authority::Leader => {
                    None
                }
            };
        }
        self.liveness.choose(want.src(), self.me.replica, asked)
    }

    /// Sends the pull for `want` to the best replica not asked yet. If none is left, the
    /// receive fails: rank lost when every replica is dead, retirement when the live ones
    /// all evicted it; otherwise it keeps waiting on the outstanding asks.
    pub(super) fn ask_next(&mut self, now: Duration, want: Want) {
        let Some(p) = self.fetches.get(&want) else {
            return;
        };
        if let Some(k) = self.choose_replica(&want, p) {
            let mut defer = false;
            if let Some(p) = self.fetches.get_mut(&want) {
                // A move away from an ask that still stands, or that the sender lost
                // (evicted), is a failover; one away from a replica whose program ended
                // (a pull ahead of a sender that finished, as every job's end has some)
                // is not, and a dead replica's asks are counted where it died.
                if p.asks
                    .iter()
                    .any(|a| !matches!(a.state, AskState::Dropped | AskState::Ended))
                {
                    self.stats.failovers += 1;
                }
                defer = std::mem::take(&mut p.defer);
            }
            let (to, pull) = self.new_ask(now, want, k, false);
            if defer {
                self.out.defer(to, pull);
            } else {
                self.out.send(to, pull);
            }
            return;
        }
        if want.comm() == DECISION_CTX {
            // A choice is never lost: the leader (maybe this replica, after a takeover)
            // makes it; a GONE means we fell behind.
            if p.any_gone() {
                let reason = format!(
                    "replica {} fell too far behind: choice {} evicted",
                    self.me, want
                );
                self.retire(reason);
            }
            return;
        }
        if !p.needed() {
            // Nobody waits for it yet; whoever does will ask again and report.
            if !p.any_outstanding() {
                let ended = p.any_ended();
                self.fetches.remove(&want);
                if ended {
                    self.ended_everywhere(want);
                }
            }
            return;
        }
        if p.any_outstanding() {
            return;
        }
        if self.liveness.rank_alive(want.src()) && !self.liveness.has_candidate(want.src()) {
            // Only new incarnations still catching up are left: ask once one caught up
            // (or fail once they died; see `retry_idle`).
            return;
        }
        let (ended, gone) = (p.any_ended(), p.any_gone());
        let err = if !self.liveness.rank_alive(want.src()) {
            RecvError::RankLost { rank: want.src() }
        } else if ended {
            log::info!(
                "{}: every replica of rank {} ended without sending {want}",
                self.me,
                want.src()
            );
            RecvError::SenderEnded { rank: want.src() }
        } else if gone && self.ask_silent_again(now, want) {
            return;
        } else if gone {
            let reason = if self.catching_up {
                format!(
                    "rank {} cannot be regenerated: messages evicted ({want}); call checkpoint",
                    self.me.rank
                )
            } else {
                format!(
                    "replica {} fell too far behind: message {want} evicted",
                    self.me
                )
            };
            self.retire(reason.clone());
            RecvError::Retired { reason }
        } else {
            // Every live replica was dropped (cancelled); ask them all again. If none may
            // be asked (the rank's only live replicas are new incarnations still catching
            // up), wait: `handle_peer_alive` asks again once one caught up.
            if let Some(p) = self.fetches.get_mut(&want) {
                p.asks.clear();
            }
            let askable = self
                .fetches
                .get(&want)
                .is_some_and(|p| self.choose_replica(&want, p).is_some());
            if askable {
                self.ask_next(now, want);
            }
            return;
        };
        self.fetches.remove(&want);
        if err == (RecvError::SenderEnded { rank: want.src() }) {
            self.ended_everywhere(want);
        }
        match want {
            Want::Key(key) => self.matcher.fail_key(&key, err),
            Want::Order { comm, src, .. } => self.matcher.fail_unresolved(|spec| {
                (spec.comm == comm && spec.ranks() == [src]).then(|| err.clone())
            }),
        }
    }

    /// The replicas that evicted `want` cannot serve it, but one that went silent (stopped,
    /// or starved of CPU) may still hold it: ask it again rather than retire, since this
    /// replica only lags because it was waiting for that one. A silent replica that is
    /// really gone is declared dead by the launcher, and then this replica retires.
    /// Returns whether it asked.
    fn ask_silent_again(&mut self, now: Duration, want: Want) -> bool {
        let src = want.src();
        let Some(p) = self.fetches.get(&want) else {
            return false;
        };
        let silent = p.replicas(|a| {
            a.state == AskState::Silent
                && self.liveness.is_candidate(ReplicaId::new(src, a.replica))
        });
        if silent.is_empty() {
            return false;
        }
        for k in silent {
            log::debug!(
                "{}: {want} evicted elsewhere; asking silent replica {src}.{k} again",
                self.me
            );
            let (to, pull) = self.new_ask(now, want, k, false);
            self.out.send(to, pull);
        }
        true
    }

    pub(super) fn retire(&mut self, reason: String) {
        if !*self.retired {
            *self.retired = true;
            self.out.event(EngineEvent::Retire { reason });
        }
    }

    /// Asks again for every message from `rank` that no ask waits for (they waited for a
    /// replica of it to catch up, or its last replica died).
    pub(super) fn retry_idle(&mut self, now: Duration, rank: u32) {
        let idle = self
            .fetches
            .wants(|w, p| w.src() == rank && !p.any_outstanding());
        for want in idle {
            self.ask_next(now, want);
        }
    }

    /// Re-posts every pull outstanding at `peer` to another replica of its rank; `gone`:
    /// that incarnation is gone (dead, or replaced by a joining successor whose asks start
    /// afresh: what the old one parked would otherwise be waited for forever).
    pub(super) fn fail_over(&mut self, now: Duration, peer: ReplicaId, gone: bool) {
        let dead = gone || !self.liveness.is_usable(peer);
        let wants = self.fetches.wants(|w, p| {
            w.src() == peer.rank
                && p.asks
                    .iter()
                    .any(|a| a.replica == peer.replica && a.outstanding())
        });
        for want in wants {
            if dead {
                if let Some(p) = self.fetches.get_mut(&want) {
                    for a in p.asks.iter_mut().filter(|a| a.replica == peer.replica) {
                        a.state = AskState::Dropped;
                    }
                }
            }
            if !self.fetches.others_outstanding(&want, peer.replica) {
                // `ask_next` counts a move away from an ask that still stands; a pull
                // taken off a dead replica (its asks dropped) to another one is a
                // failover too (one that waits for the successor of the only replica, a
                // handover at one replica, is not: it moves nowhere).
                let only_dropped = self
                    .fetches
                    .get(&want)
                    .is_some_and(|p| p.asks.iter().all(|a| a.state == AskState::Dropped));
                if dead && only_dropped && self.liveness.has_candidate(want.src()) {
                    self.stats.failovers += 1;
                }
                self.ask_next(now, want);
            }
        }
    }

    /// Asks `peer`, which parked pull `req` for `want`, again (a live sender answers with
    /// an ACK, or the DATA if it has sent it since).
    pub(super) fn ask_again(&mut self, now: Duration, peer: ReplicaId, want: Want, req: ReqId) {
        self.silence.pinged(peer, now);
        let consumed = self.consumed.watermark(want.comm(), want.src());
        log::trace!("{}: asking {peer} again for {want}", self.me);
        self.out.send(
            peer,
            Frame::Pull {
                want,
                req,
                consumed,
            },
        );
    }

    /// Asks one more replica whether it already has the message the current asks are
    /// still waiting for; the first DATA wins and the rest are cancelled.
    pub(super) fn hedge(&mut self, now: Duration, want: Want) {
        let Some(p) = self.fetches.get_mut(&want) else {
            return;
        };
        // A hedge turn this late means this process itself did not run on time (its CPU
        // starved, as on a loaded host all replicas are): a silence it measured says
        // nothing about the peer, which was likely starved too.
        let late = p.turn_late(now, self.cfg.hedge_timeout);
        let late_by = now.saturating_sub(p.hedge_at);
        p.stalled += late_by;
        p.late = late;
        p.hedge_at = now + self.cfg.hedge_timeout;
        if want.comm() == DECISION_CTX {
            return;
        }
        // The sender that parked the pull first is asked again (a live one answers at
        // once); asked a hedge interval ago and silent since, it is stopped or cut off:
        // failed over from now, not after an ack timeout, nor only once a sibling
        // answers (which may be far later when that sibling is behind too). Unless this
        // turn is late: then it is asked again, and judged at the next punctual turn (a
        // starved receiver failed over from live senders, "silent for 954 ms since it was
        // asked again", in the MPI-IO benchmark at -r 2 on a loaded host).
        let parked = p
            .asks
            .iter()
            .find(|a| a.state == AskState::Parked)
            .map(|a| (ReplicaId::new(want.src(), a.replica), a.req));
        if let Some((peer, req)) = parked.filter(|(peer, _)| peer.rank != self.me.rank) {
            match self.silence.unanswered_since(peer) {
                Some(_) if late => {
                    log::debug!(
                        "{}: hedge for {want} late; asking {peer} again instead of judging its silence",
                        self.me
                    );
                    self.ask_again(now, peer, want, req);
                }
                Some(t) if now >= t + self.cfg.hedge_timeout => {
                    if self.liveness.suspect(peer, now) {
                        log::info!(
                            "{}: replica {peer} silent for {:?} since it was asked again for {want}; failing over",
                            self.me,
                            now - t
                        );
                        // Moving its pulls away counts the failovers (`ask_next`).
                        self.fail_over(now, peer, false);
                        return;
                    }
                }
                Some(_) => {}
                None => self.ask_again(now, peer, want, req),
            }
        }
        let Some(p) = self.fetches.get_mut(&want) else {
            return;
        };
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
        let outstanding = p.replicas(Ask::outstanding);
        let gone = p.replicas(|a| matches!(a.state, AskState::Gone | AskState::Ended));
        let last_hedged = p.asks.last().map(|a| a.replica);
        let src = want.src();
        for (k, req) in cancels {
            self.out
                .send(ReplicaId::new(src, k), Frame::Cancel { want, req });
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
                    && self.liveness.is_candidate(ReplicaId::new(src, k))
            });
        if let Some(k) = candidate {
            log::trace!("{}: hedging {want} at replica {k}", self.me);
            let (to, pull) = self.new_ask(now, want, k, true);
            self.out.send(to, pull);
        }
    }

    /// A new ask for `want` to replica `k` of its sender, recorded (replacing an earlier
    /// one to `k` unless `keep_outstanding` and it still waits): where it goes, and the
    /// PULL to send there.
    fn new_ask(
        &mut self,
        now: Duration,
        want: Want,
        k: u32,
        keep_outstanding: bool,
    ) -> (ReplicaId, Frame) {
        // Data already received is never asked for again (DESIGN "Pull protocol").
        debug_assert!(
            match want {
                Want::Order {
                    comm, src, order, ..
                } => comm == DECISION_CTX || !self.consumed.has(comm, src, order),
                Want::Key(k) => !self.matcher.is_unexpected(&k),
            },
            "{}: asking again for {want}, which arrived",
            self.me
        );
        let req = self.fetches.new_req();
        if let Some(p) = self.fetches.get_mut(&want) {
            p.record_ask(k, req, now, keep_outstanding);
        }
        let pull = Frame::Pull {
            want,
            req,
            consumed: self.consumed.watermark(want.comm(), want.src()),
        };
        (ReplicaId::new(want.src(), k), pull)
    }

    /// Tells the senders how far this replica received their streams.
    pub(super) fn tell_consumed(&mut self) {
        for (comm, src, watermark) in self.consumed.take_dirty() {
            let dst = self.me.rank;
            self.send_to_replicas_of(src, || Frame::Consumed {
                comm,
                src,
                dst,
                watermark,
            });
        }
    }

    /// Sends `frame()` to every usable replica of `rank` but this one.
    fn send_to_replicas_of(&mut self, rank: u32, frame: impl Fn() -> Frame) {
        to_replicas_of(self.me, self.replicas, self.liveness, self.out, rank, frame);
    }
}

/// Sends `frame()` to every usable replica of `rank` (of `replicas` each) but `me`.
pub(super) fn to_replicas_of(
    me: ReplicaId,
    replicas: u32,
    liveness: &Liveness,
    out: &mut Outbox,
    rank: u32,
    frame: impl Fn() -> Frame,
) {
    for k in 0..replicas {
        let to = ReplicaId::new(rank, k);
        if to != me && liveness.is_usable(to) {
            out.send(to, frame());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use crate::config::Config;
    use crate::message::matching::{Matched, Mode, RecvId, RecvSpec, Source, TagSel};
    use crate::message::{ReplicaId, Want};
    use crate::pull::{Engine, RecvError};
    use crate::wire::Frame;

    fn spec() -> RecvSpec {
        RecvSpec {
            comm: 0,
            src: Source::Rank(0),
            tag: TagSel::Tag(3),
        }
    }

    /// Moves frames both ways (deferred ones too) until none is left.
    fn deliver(a: &mut (ReplicaId, Engine), b: &mut (ReplicaId, Engine), now: Duration) {
        fn one_way(
            from: &mut (ReplicaId, Engine),
            to: &mut (ReplicaId, Engine),
            now: Duration,
        ) -> bool {
            let mut moved = false;
            while let Some((_, f)) = from.1.poll_transmit().or_else(|| from.1.poll_deferred()) {
                to.1.handle_frame(now, from.0, f);
                moved = true;
            }
            moved
        }
        while one_way(a, b, now) | one_way(b, a, now) {}
    }

    fn pulled_seq(f: &Frame) -> Option<u64> {
        match f {
            Frame::Pull {
                want: Want::Key(k), ..
            } => Some(k.seq),
            _ => None,
        }
    }

    /// Replica 0.0 (sender) and 1.0 (receiver) of a 2-rank job at one replica, started.
    fn started_pair(now: Duration) -> ((ReplicaId, Engine), (ReplicaId, Engine)) {
        let (s, r) = (ReplicaId::new(0, 0), ReplicaId::new(1, 0));
        let mut sender = (s, Engine::new(s, 2, 1, Config::default()));
        let mut receiver = (r, Engine::new(r, 2, 1, Config::default()));
        sender.1.start(now);
        receiver.1.start(now);
        (sender, receiver)
    }

    /// The receiver takes a first message, then posts the next receive `gap` later,
    /// before its speculative pull left (it wrote nothing to the sender); the sender then
    /// sends the second, and three more the receiver takes in a row. Returns the seqs of
    /// the pulls the receiver sends at once after taking the fifth (half its window of
    /// eight is used up then).
    fn pulls_after_a_gap_of(gap: Duration) -> Vec<u64> {
        pulls_after_a_gap_taking(gap, |e, now, id| e.take(now, id))
    }

    /// `pulls_after_a_gap_of`, the last three messages taken by `take`.
    fn pulls_after_a_gap_taking(
        gap: Duration,
        take: impl Fn(&mut Engine, Duration, RecvId) -> Option<Result<Matched, RecvError>>,
    ) -> Vec<u64> {
        let now = Duration::from_secs(1);
        let (mut sender, mut receiver) = started_pair(now);
        let r = receiver.0;
        sender
            .1
            .send(now, 0, 3, 1, Bytes::from_static(b"first"))
            .expect("room");
        let id = receiver.1.post(now, spec(), Mode::Receive);
        deliver(&mut sender, &mut receiver, now);
        assert!(matches!(
            receiver.1.take(now, id),
            Some(Ok(Matched::Message { .. }))
        ));
        // The pull for the next message waits for a write to the sender.
        assert!(receiver.1.poll_transmit().is_none());
        let later = now + gap;
        let id = receiver.1.post(later, spec(), Mode::Receive);
        let hurried = receiver.1.poll_transmit().expect("the pull goes now");
        assert_eq!(pulled_seq(&hurried.1), Some(1));
        sender.1.handle_frame(later, r, hurried.1);
        sender
            .1
            .send(later, 0, 3, 1, Bytes::from_static(b"second"))
            .expect("room");
        deliver(&mut sender, &mut receiver, later);
        assert!(matches!(
            receiver.1.take(later, id),
            Some(Ok(Matched::Message { .. }))
        ));
        for _ in 0..3 {
            sender
                .1
                .send(later, 0, 3, 1, Bytes::from_static(b"more"))
                .expect("room");
        }
        deliver(&mut sender, &mut receiver, later);
        for _ in 0..3 {
            let id = receiver.1.post(later, spec(), Mode::Receive);
            assert!(matches!(
                take(&mut receiver.1, later, id),
                Some(Ok(Matched::Message { .. }))
            ));
        }
        std::iter::from_fn(|| receiver.1.poll_transmit())
            .filter_map(|(_, f)| pulled_seq(&f))
            .collect()
    }

    /// Every frame the receiver has to send now, handed on to the sender.
    fn receiver_frames(
        sender: &mut (ReplicaId, Engine),
        receiver: &mut (ReplicaId, Engine),
        now: Duration,
    ) -> Vec<Frame> {
        let mut out = Vec::new();
        while let Some((_, f)) = receiver
            .1
            .poll_transmit()
            .or_else(|| receiver.1.poll_deferred())
        {
            out.push(f.clone());
            sender.1.handle_frame(now, receiver.0, f);
        }
        out
    }

    /// A started pair whose sender sent "first", "second" and "third" with tag 3 to the
    /// receiver.
    fn three_sent_on_tag_3(now: Duration) -> ((ReplicaId, Engine), (ReplicaId, Engine)) {
        let (mut sender, receiver) = started_pair(now);
        for m in [&b"first"[..], b"second", b"third"] {
            sender
                .1
                .send(now, 0, 3, 1, Bytes::copy_from_slice(m))
                .expect("room");
        }
        (sender, receiver)
    }

    /// A deferred receive (`Engine::defer`) claims its message's place in the stream and
    /// pulls nothing; skipped, it counts as received without its DATA ever coming, so
    /// the watermark the sender hears passes it (and the sender may drop it).
    #[test]
    fn a_skipped_deferred_receive_is_never_pulled_and_counts_as_received() {
        let now = Duration::from_secs(1);
        let (mut sender, mut receiver) = three_sent_on_tag_3(now);
        let k0 = receiver.1.defer(0, 3, 0).expect("nothing posted before");
        let k1 = receiver.1.defer(0, 3, 0).expect("nothing posted before");
        assert_eq!((k0.seq, k1.seq), (0, 1));
        assert!(receiver_frames(&mut sender, &mut receiver, now).is_empty());
        // The next receive of the stream gets the third message.
        let id = receiver.1.post(now, spec(), Mode::Receive);
        deliver(&mut sender, &mut receiver, now);
        match receiver.1.take(now, id) {
            Some(Ok(Matched::Message { key, payload })) => {
                assert_eq!((key.seq, &payload[..]), (2, &b"third"[..]));
            }
            other => panic!("{other:?}"),
        }
        receiver.1.skip(k1);
        receiver.1.skip(k0);
        let later = now + Duration::from_secs(1);
        receiver.1.handle_timeout(later);
        let frames = receiver_frames(&mut sender, &mut receiver, later);
        assert!(
            frames.iter().all(|f| !matches!(f, Frame::Pull { .. })),
            "no pull, not even ahead: {frames:?}"
        );
        let told: Vec<u64> = frames
            .iter()
            .filter_map(|f| match f {
                Frame::Consumed { watermark, .. } => Some(*watermark),
                _ => None,
            })
            .collect();
        assert_eq!(told.last(), Some(&3), "{frames:?}");
        assert!(sender.1.delivered(0, 1, 2));
    }

    /// A deferred receive taken after all (`post_claimed`: its replica became its rank's
    /// file writer) pulls exactly its message, and nothing ahead of it.
    #[test]
    fn a_deferred_receive_taken_later_pulls_exactly_its_message() {
        let now = Duration::from_secs(1);
        let (mut sender, mut receiver) = three_sent_on_tag_3(now);
        let k0 = receiver.1.defer(0, 3, 0).expect("nothing posted before");
        let id = receiver.1.post_claimed(now, k0);
        let frames = receiver_frames(&mut sender, &mut receiver, now);
        let pulled: Vec<u64> = frames.iter().filter_map(pulled_seq).collect();
        assert_eq!(pulled, [0]);
        deliver(&mut sender, &mut receiver, now);
        match receiver.1.take(now, id) {
            Some(Ok(Matched::Message { key, payload })) => {
                assert_eq!((key.seq, &payload[..]), (0, &b"first"[..]));
            }
            other => panic!("{other:?}"),
        }
        let later = now + Duration::from_secs(1);
        receiver.1.handle_timeout(later);
        let frames = receiver_frames(&mut sender, &mut receiver, later);
        assert!(
            frames.iter().all(|f| pulled_seq(f).is_none()),
            "nothing pulled ahead: {frames:?}"
        );
    }

    /// A speculative pull waits for the next write to its sender. If the application
    /// posts the receive it was meant for first, after computing a while (it wrote
    /// nothing to that sender meanwhile: LU's pipeline), the stream turns eager: its next
    /// speculative pulls leave at once, for the next few messages, so a sender running
    /// ahead answers each send at once.
    #[test]
    fn a_stream_whose_speculative_pull_was_late_pulls_ahead_at_once() {
        // Pulls 2 to 8 (a stream of small messages asks eight ahead) left with the
        // write that carried pull 1; the next half window leaves at once.
        assert_eq!(
            pulls_after_a_gap_of(Duration::from_millis(1)),
            [9, 10, 11, 12]
        );
    }

    /// `take_later` leaves a lazy stream's pulls ahead for `speculate_pending` (the
    /// driver's next turn, once the caller's answer is on its way) and makes the same
    /// pulls then as `take`; with replicas, and for an eager stream, it makes them at
    /// once, as `take` does.
    #[test]
    fn take_later_leaves_a_lazy_streams_pulls_for_later_and_an_eager_ones_not() {
        let now = Duration::from_secs(1);
        let seqs = |e: &mut Engine| -> Vec<u64> {
            std::iter::from_fn(|| e.poll_transmit().or_else(|| e.poll_deferred()))
                .filter_map(|(_, f)| pulled_seq(&f))
                .collect()
        };
        let mut pulled = Vec::new();
        for later in [false, true] {
            let (mut sender, mut receiver) = started_pair(now);
            sender
                .1
                .send(now, 0, 3, 1, Bytes::from_static(b"first"))
                .expect("room");
            let id = receiver.1.post(now, spec(), Mode::Receive);
            deliver(&mut sender, &mut receiver, now);
            let got = if later {
                receiver.1.take_later(|| now, id)
            } else {
                receiver.1.take(now, id)
            };
            assert!(matches!(got, Some(Ok(Matched::Message { .. }))));
            if later {
                assert_eq!(seqs(&mut receiver.1), [0u64; 0], "no pull made yet");
                receiver.1.speculate_pending(now);
            }
            pulled.push(seqs(&mut receiver.1));
        }
        assert_eq!(pulled[0], (1..=8).collect::<Vec<u64>>());
        assert_eq!(pulled[1], pulled[0]);
        // With replicas, the pulls are made with the take (they ride with the answer).
        let (s, r) = (ReplicaId::new(0, 0), ReplicaId::new(1, 0));
        let mut sender = (s, Engine::new(s, 2, 2, Config::default()));
        let mut receiver = (r, Engine::new(r, 2, 2, Config::default()));
        sender.1.start(now);
        receiver.1.start(now);
        sender
            .1
            .send(now, 0, 3, 1, Bytes::from_static(b"first"))
            .expect("room");
        let id = receiver.1.post(now, spec(), Mode::Receive);
        deliver(&mut sender, &mut receiver, now);
        let got = receiver.1.take_later(|| now, id);
        assert!(matches!(got, Some(Ok(Matched::Message { .. }))), "{got:?}");
        assert_eq!(seqs(&mut receiver.1), (1..=8).collect::<Vec<u64>>());
        // Eager: the pulls leave with the take, without `speculate_pending`.
        assert_eq!(
            pulls_after_a_gap_taking(Duration::from_millis(1), |e, now, id| e
                .take_later(|| now, id)),
            [9, 10, 11, 12]
        );
    }

    /// A message whose pull came when it had been in the sender's log for a while (the
    /// sender computed, or sent a burst) comes with FLAG_LATE: the receiver pulls that
    /// stream ahead from then on.
    #[test]
    fn a_message_that_waited_in_the_log_makes_its_stream_pull_ahead() {
        let (late, mut receiver) = a_burst_taken_late(1);
        assert!(late, "the DATA says it waited");
        let ahead: Vec<u64> = std::iter::from_fn(|| receiver.poll_transmit())
            .filter_map(|(_, f)| pulled_seq(&f))
            .collect();
        assert_eq!(ahead, (1..=8).collect::<Vec<u64>>());
    }

    /// A stream received with `ANY_TAG` (rsmpi's `receive_into`) pulls ahead too, by
    /// order number: half a window at a time, skipping what is here.
    #[test]
    fn an_any_tag_stream_pulls_ahead_by_order() {
        let now = Duration::from_secs(1);
        let (mut sender, mut receiver) = started_pair(now);
        let r = receiver.0;
        let any = RecvSpec {
            tag: TagSel::Any,
            ..spec()
        };
        let mut orders = Vec::new();
        for _ in 0..5 {
            sender
                .1
                .send(now, 0, 3, 1, Bytes::from_static(b"msg"))
                .expect("room");
            let id = receiver.1.post(now, any.clone(), Mode::Receive);
            deliver(&mut sender, &mut receiver, now);
            assert!(matches!(
                receiver.1.take(now, id),
                Some(Ok(Matched::Message { .. }))
            ));
            // What the receiver asks now, handed on to the sender.
            let mut asked = Vec::new();
            while let Some((_, f)) = receiver
                .1
                .poll_transmit()
                .or_else(|| receiver.1.poll_deferred())
            {
                if let Frame::Pull {
                    want: Want::Order { order, .. },
                    ..
                } = f
                {
                    asked.push(order);
                }
                sender.1.handle_frame(now, r, f);
            }
            orders.push(asked);
        }
        // Taking message 0 asks for 1 to 8; 1 to 3 come by those pulls and ask for
        // nothing; taking 4 leaves four missing (9 to 12), asked together.
        let expected: [Vec<u64>; 5] = [
            (1..=8).collect(),
            vec![],
            vec![],
            vec![],
            (9..=12).collect(),
        ];
        assert_eq!(orders, expected);
    }

    /// A pull the old incarnation of a sender parked is asked again of its successor once
    /// that one caught up (a handover at one replica: nobody else could answer it).
    #[test]
    fn a_pull_parked_at_a_replaced_incarnation_is_asked_of_its_successor() {
        let now = Duration::from_secs(1);
        let ((s, mut sender), (r, mut receiver)) = started_pair(now);
        let _id = receiver.post(now, spec(), Mode::Receive);
        let (_, pull) = receiver.poll_transmit().expect("a pull");
        sender.handle_frame(now, r, pull);
        let later = now + Duration::from_millis(50);
        sender.handle_timeout(later);
        let (_, ack) = sender.poll_transmit().expect("parked: an ACK");
        assert!(matches!(ack, Frame::Ack { .. }), "{ack:?}");
        receiver.handle_frame(later, s, ack);
        receiver.handle_peer_joining(later, s, 1, true);
        receiver.handle_peer_alive(later, s);
        let asked: Vec<u64> = std::iter::from_fn(|| receiver.poll_transmit())
            .filter(|(to, _)| *to == s)
            .filter_map(|(_, f)| pulled_seq(&f))
            .collect();
        assert_eq!(asked, [0], "the successor is asked");
        assert_eq!(receiver.stats().failovers, 0, "nothing failed");
    }

    /// A receiver that pulled one message twice, by its key and by its order number (a
    /// receive by tag, then one with `ANY_TAG`), gets one direct write of it, not two:
    /// two DATA frames written straight to one link follow each other on the wire even
    /// when the first went out only in part (NPB FT class B's all-to-all over shared
    /// memory broke its streams so).
    #[test]
    fn a_message_pulled_twice_by_one_replica_is_written_to_it_directly_once() {
        let now = Duration::from_secs(1);
        let ((_, mut sender), (r, mut receiver)) = started_pair(now);
        let _by_key = receiver.post(now, spec(), Mode::Receive);
        let any = RecvSpec {
            tag: TagSel::Any,
            ..spec()
        };
        let _by_order = receiver.post(now, any, Mode::Receive);
        let mut wants = Vec::new();
        while let Some((_, f)) = receiver
            .poll_transmit()
            .or_else(|| receiver.poll_deferred())
        {
            if let Frame::Pull { want, .. } = &f {
                wants.push(*want);
            }
            sender.handle_frame(now, r, f);
        }
        assert!(
            wants.iter().any(|w| matches!(w, Want::Key(_)))
                && wants.iter().any(|w| matches!(w, Want::Order { .. })),
            "pulled by key and by order: {wants:?}"
        );
        let ahead = sender.write_ahead(0, 3, 1, 1 << 20, None);
        assert_eq!(ahead.writes.len(), 1, "one direct write to {r}");
        // The slots' version of it (`slots_ahead`, a small message): the same message,
        // one slot for that replica.
        let slots = sender.slots_ahead(0, 3, 1);
        assert_eq!((slots.key, slots.order), (ahead.key, ahead.order));
        assert_eq!(
            slots.to.as_slice(),
            &[(r, ahead.writes[0].req)],
            "one slot for {r}"
        );
    }

    /// The ids and engines of 0.0, 0.1 (the two replicas of sender rank 0) and 1.0 (a
    /// receiver) of a 2-rank, 2-replica job with the default configuration, started at
    /// `now`.
    fn two_senders_one_receiver(now: Duration) -> ([ReplicaId; 3], Vec<Engine>) {
        let ids = [(0, 0), (0, 1), (1, 0)].map(|(r, k)| ReplicaId::new(r, k));
        let engines = ids
            .map(|id| {
                let mut e = Engine::new(id, 2, 2, Config::default());
                e.start(now);
                e
            })
            .into();
        (ids, engines)
    }

    /// Replica 1.0 waits for a message its own team's sender 0.0 has not sent yet (and
    /// says so with an ACK if `acked`, else it is stopped); the hedge asks 0.1, which has,
    /// and its DATA arrives `answered_after` the receive began waiting. Returns the receiver's failovers and which replica it asks first for the
    /// next message.
    fn hedge_answered_after(answered_after: Duration, acked: bool) -> (u64, ReplicaId) {
        let now = Duration::from_secs(1);
        let (ids, mut engines) = two_senders_one_receiver(now);
        let payload = || Bytes::from_static(b"m");
        engines[1].send(now, 0, 3, 1, payload()).expect("room");
        engines[1].send(now, 0, 3, 1, payload()).expect("room");
        // Frames go from `from` to their address; the receiver's to 0.1 wait in `held`
        // until `answered_after`.
        let route = |engines: &mut Vec<Engine>, at: Duration, hold: bool| {
            route_where(&ids, engines, at, |from, to| {
                !(hold && from == 1 && to == 2)
            })
        };
        let id = engines[2].post(now, spec(), Mode::Receive);
        route(&mut engines, now, true);
        if acked {
            let ack_at = now + Duration::from_millis(2);
            engines[0].handle_timeout(ack_at);
            route(&mut engines, ack_at, true);
        }
        let hedge = Config::default().hedge_timeout;
        let hedge_at = now + hedge;
        engines[2].handle_timeout(hedge_at);
        let mut held = route(&mut engines, hedge_at, true);
        assert!(!held.is_empty(), "0.1 answered the hedge");
        let at = now + answered_after;
        // The receiver's later turns come on time (it runs; only the answer is slow).
        let mut turn = hedge_at + hedge;
        while turn < at {
            engines[2].handle_timeout(turn);
            held.extend(route(&mut engines, turn, true));
            if acked {
                let acks = turn + Duration::from_millis(2);
                engines[0].handle_timeout(acks);
                held.extend(route(&mut engines, acks, true));
            }
            turn += hedge;
        }
        for f in held {
            engines[2].handle_frame(at, ids[1], f);
        }
        assert!(matches!(
            engines[2].take(at, id),
            Some(Ok(Matched::Message { .. }))
        ));
        let _next = engines[2].post(at, spec(), Mode::Receive);
        let first = std::iter::from_fn(|| engines[2].poll_transmit())
            .find(|(_, f)| matches!(f, Frame::Pull { .. }))
            .map(|(to, _)| to)
            .expect("a pull for the next message");
        (engines[2].stats().failovers, first)
    }

    /// A hedge answered within the lag timeout delivers the message and moves nothing:
    /// the receiver keeps asking its own team's sender first, and nothing failed over
    /// (NPB FT at `-n 4 -r 2` beside another job counted 18 to 129 failovers without a
    /// failure: teams drift apart by hundreds of milliseconds on a loaded host). One
    /// answered after a receive waited the lag timeout marks the first replica far
    /// behind, and one that never acknowledged the pull (stopped) is failed over from at
    /// the hedge's answer, as before: later pulls go to the one that answered.
    #[test]
    fn only_a_replica_far_behind_its_sibling_or_silent_is_failed_over_from() {
        let cfg = Config::default();
        let drift = hedge_answered_after(cfg.lag_timeout / 2, true);
        assert_eq!(drift, (0, ReplicaId::new(0, 0)), "drift moves nothing");
        let far = hedge_answered_after(cfg.lag_timeout, true);
        assert_eq!(far, (1, ReplicaId::new(0, 1)), "far behind: failed over");
        let stopped = hedge_answered_after(cfg.hedge_timeout, false);
        assert_eq!(stopped, (1, ReplicaId::new(0, 1)), "silent: failed over");
    }

    /// Both replicas of the sender are behind the receiver (its program has not reached
    /// the send): 0.0 parks the pull, and 0.1 parks every hedge too until, after the
    /// receive waited the lag timeout, it sends first and answers the next hedge. It won
    /// a race; 0.0, which answers every question, is not far behind, and nothing fails
    /// over (the MPI-IO benchmark at -r 2 on a loaded host counted 64 failovers so, its
    /// receivers' pulls flipping between its aggregator's replicas).
    #[test]
    fn a_sibling_that_was_behind_too_winning_the_race_is_no_lag() {
        let now = Duration::from_secs(1);
        let (ids, mut engines) = two_senders_one_receiver(now);
        let cfg = Config::default();
        let route = |engines: &mut Vec<Engine>, at: Duration| route_cut(&ids, engines, at, None);
        // Every replica's timers at `at`, then the senders' ACKs a moment later.
        let turn = |engines: &mut Vec<Engine>, at: Duration| {
            engines[2].handle_timeout(at);
            route(engines, at);
            let acks = at + Duration::from_millis(2);
            engines[0].handle_timeout(acks);
            engines[1].handle_timeout(acks);
            route(engines, acks);
        };
        let id = engines[2].post(now, spec(), Mode::Receive);
        route(&mut engines, now);
        turn(&mut engines, now);
        let mut at = now;
        while at < now + cfg.lag_timeout {
            at += cfg.hedge_timeout;
            turn(&mut engines, at);
        }
        assert!(engines[2].take(at, id).is_none(), "nobody sent yet");
        engines[1]
            .send(at, 0, 3, 1, Bytes::from_static(b"m"))
            .expect("room");
        route(&mut engines, at);
        while engines[2].take(at, id).is_none() {
            assert!(at < now + 2 * cfg.lag_timeout, "the hedge fetched it");
            at += cfg.hedge_timeout;
            turn(&mut engines, at);
        }
        assert_eq!(
            engines[2].stats().failovers,
            0,
            "a race won, nothing failed"
        );
    }

    /// Moves every frame from engine `from` to engine `to` that `deliver(from, to)`
    /// allows, at `at`, until none is left; returns the others, in order.
    fn route_where(
        ids: &[ReplicaId],
        engines: &mut [Engine],
        at: Duration,
        deliver: impl Fn(usize, usize) -> bool,
    ) -> Vec<Frame> {
        let mut kept = Vec::new();
        loop {
            let mut moved = false;
            for from in 0..ids.len() {
                while let Some((to, f)) = engines[from].poll_transmit() {
                    let Some(i) = ids.iter().position(|&id| id == to) else {
                        continue;
                    };
                    moved = true;
                    if deliver(from, i) {
                        engines[i].handle_frame(at, ids[from], f);
                    } else {
                        kept.push(f);
                    }
                }
            }
            if !moved {
                return kept;
            }
        }
    }

    /// Moves every frame to its replica, at `at`, until none is left; those from or to
    /// engine `cut` (a stopped replica) are lost.
    fn route_cut(ids: &[ReplicaId], engines: &mut [Engine], at: Duration, cut: Option<usize>) {
        route_where(ids, engines, at, |from, to| {
            cut != Some(from) && cut != Some(to)
        });
    }

    /// The whole host stalls (every replica starved at once) while 1.0 waits for a
    /// message from its own team's 0.0 (which parked the pull if `acked`, else got it but
    /// ran no timer to acknowledge it): 1.0's first hedge comes 900 ms late, and 0.1,
    /// which has the message, answers it at once. Returns 1.0's failovers.
    fn stalled_host_hedge_answered(acked: bool) -> u64 {
        let now = Duration::from_secs(1);
        let (ids, mut engines) = two_senders_one_receiver(now);
        let cfg = Config::default();
        engines[1]
            .send(now, 0, 3, 1, Bytes::from_static(b"m"))
            .expect("room");
        let id = engines[2].post(now, spec(), Mode::Receive);
        route_cut(&ids, &mut engines, now, None);
        engines[2].handle_timeout(now);
        if acked {
            let ack_at = now + Duration::from_millis(2);
            engines[0].handle_timeout(ack_at);
            route_cut(&ids, &mut engines, ack_at, None);
        }
        let late = now + cfg.hedge_timeout + Duration::from_millis(900);
        assert!(late - now >= cfg.lag_timeout);
        engines[2].handle_timeout(late);
        route_cut(&ids, &mut engines, late, None);
        assert!(matches!(
            engines[2].take(late, id),
            Some(Ok(Matched::Message { .. }))
        ));
        engines[2].stats().failovers
    }

    /// The receive waited more than the lag timeout, but 1.0 ran for only a hedge
    /// interval of it: 0.0 is not far behind, and nothing fails over (a failure-free
    /// io_write -n 4 -r 2 run whose processes were all stopped 0.6 to 0.9 s at a time
    /// counted 21 failovers so).
    #[test]
    fn a_wait_the_receiver_spent_stalled_is_no_lag() {
        assert_eq!(stalled_host_hedge_answered(true), 0, "the receiver stalled");
    }

    /// 0.0 never even acknowledged the pull (it was starved with the receiver) when the
    /// late hedge's answer came from 0.1: no evidence that 0.0 is stopped, and nothing
    /// fails over.
    #[test]
    fn an_ask_unacknowledged_through_the_receivers_own_stall_is_no_lag() {
        assert_eq!(
            stalled_host_hedge_answered(false),
            0,
            "the receiver stalled"
        );
    }

    /// A sender's log keeps what a draining replica had not consumed for the successor
    /// that takes its state over, beyond the replay budget (NPB FT class B sends more than
    /// the budget between two checkpoints: its handover newcomers retired with "fell too
    /// far behind: message evicted"); for a successor that replays, that is retained only
    /// within the budget.
    /// Issue 42: replica 0.0 parked 1.0's pull (acknowledged it), then stopped; its
    /// sibling 0.1 has not sent the message either (its team is behind), so no hedge
    /// answer ever shows that 0.0 lags. The hedge asks 0.0 again; silent a hedge interval
    /// later, it is failed over from then (the VOLPEX_LAG_MS rule alone waited for a
    /// sibling's answer and one lag timeout: a stopped replica was failed over from
    /// about 1.5 s after the stop). A live one that answers the question again is not.
    #[test]
    fn a_parked_sender_silent_after_being_asked_again_is_failed_over_from() {
        for live in [false, true] {
            let now = Duration::from_secs(1);
            let (ids, mut engines) = two_senders_one_receiver(now);
            let hedge = Config::default().hedge_timeout;
            // Every frame reaches its replica, except 0.0's once it is stopped.
            let route = |engines: &mut Vec<Engine>, at: Duration, stopped: bool| {
                route_cut(&ids, engines, at, stopped.then_some(0))
            };
            let _id = engines[2].post(now, spec(), Mode::Receive);
            route(&mut engines, now, false);
            let ack_at = now + Duration::from_millis(2);
            engines[0].handle_timeout(ack_at);
            route(&mut engines, ack_at, false);
            let stopped = !live;
            let mut at = now + hedge;
            for _ in 0..2 {
                engines[2].handle_timeout(at);
                route(&mut engines, at, stopped);
                let acks = at + Duration::from_millis(2);
                engines[0].handle_timeout(acks);
                engines[1].handle_timeout(acks);
                route(&mut engines, acks, stopped);
                at += hedge;
            }
            let failovers = engines[2].stats().failovers;
            if live {
                assert_eq!(failovers, 0, "a live sender that answers is kept");
            } else {
                assert_eq!(failovers, 1, "a stopped sender is failed over from");
            }
        }
    }

    /// As above, 0.0 parked 1.0's pull and stopped; but the receiver's own hedge turn
    /// that would judge 0.0's silence comes late (the receiver did not run on time: on a
    /// starved host its senders did not either). It asks 0.0 again rather than fail over,
    /// and fails over at the next turn that comes on time.
    #[test]
    fn a_late_hedge_asks_again_before_it_judges_a_silence() {
        let now = Duration::from_secs(1);
        let (ids, mut engines) = two_senders_one_receiver(now);
        let hedge = Config::default().hedge_timeout;
        let route = |engines: &mut Vec<Engine>, at: Duration, stopped: bool| {
            route_cut(&ids, engines, at, stopped.then_some(0))
        };
        let turn = |engines: &mut Vec<Engine>, at: Duration| {
            engines[2].handle_timeout(at);
            route(engines, at, true);
            let acks = at + Duration::from_millis(2);
            engines[1].handle_timeout(acks);
            route(engines, acks, true);
        };
        let _id = engines[2].post(now, spec(), Mode::Receive);
        route(&mut engines, now, false);
        let ack_at = now + Duration::from_millis(2);
        engines[0].handle_timeout(ack_at);
        route(&mut engines, ack_at, false);
        // 0.0 stops; the first hedge asks it again, on time.
        let mut at = now + hedge;
        turn(&mut engines, at);
        // The next one, due a hedge interval later, runs 750 ms late.
        at += hedge + Duration::from_millis(750);
        turn(&mut engines, at);
        assert_eq!(engines[2].stats().failovers, 0, "late: asked again");
        at += hedge;
        turn(&mut engines, at);
        assert_eq!(engines[2].stats().failovers, 1, "on time: failed over");
    }

    #[test]
    fn what_a_handed_over_replica_had_not_consumed_outlasts_the_replay_budget() {
        use crate::message::log::Lookup;
        use crate::message::Key;
        let kept = |handover: bool| -> usize {
            let now = Duration::from_secs(1);
            let cfg = Config {
                regenerate: true,
                replay_bytes_max: 0,
                ..Config::default()
            };
            let mut sender = Engine::new(ReplicaId::new(0, 0), 2, 2, cfg);
            sender.start(now);
            for i in 0..8u8 {
                sender
                    .send(now, 0, 3, 1, Bytes::from(vec![i; 64]))
                    .expect("room");
            }
            let consumed = |watermark| Frame::Consumed {
                comm: 0,
                src: 0,
                dst: 1,
                watermark,
            };
            // 1.0 stopped at its checkpoint after 3 messages; 1.1 took all 8.
            sender.handle_frame(now, ReplicaId::new(1, 0), consumed(3));
            sender.handle_frame(now, ReplicaId::new(1, 1), consumed(8));
            sender.handle_peer_joining(now, ReplicaId::new(1, 0), 1, handover);
            (0..8)
                .filter(|&seq| {
                    let key = Key {
                        comm: 0,
                        tag: 3,
                        src: 0,
                        dst: 1,
                        seq,
                    };
                    matches!(sender.log.lookup(&key), Lookup::Present(_))
                })
                .count()
        };
        assert_eq!(kept(true), 5, "messages 3 to 7, for the successor");
        assert_eq!(kept(false), 0, "nothing beyond a budget of 0");
    }

    /// A process that joins while every replica of a rank is a new incarnation not yet
    /// registered (a whole machine handing over at once) waits for them: its receive
    /// from that rank neither fails (the rank is not lost) nor asks anyone until one of
    /// them registered and caught up, which is then asked.
    #[test]
    fn a_rank_whose_replicas_are_all_starting_is_waited_for_not_lost() {
        let now = Duration::from_secs(1);
        let r = ReplicaId::new(1, 0);
        let (s0, s1) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
        let mut receiver = Engine::joining(r, 2, 2, Config::default(), &[vec![1, 1], vec![0, 0]]);
        receiver.handle_peers_starting(now, &[s0, s1]);
        receiver.start(now);
        assert!(receiver.rank_alive(0), "starting replicas keep their rank");
        let id = receiver.post(now, spec(), Mode::Receive);
        let later = now + Duration::from_secs(5);
        receiver.handle_timeout(later);
        assert!(receiver.take(later, id).is_none(), "it waits");
        let asked = |e: &mut Engine| -> Vec<(ReplicaId, u64)> {
            std::iter::from_fn(|| e.poll_transmit())
                .filter_map(|(to, f)| pulled_seq(&f).map(|q| (to, q)))
                .collect()
        };
        assert_eq!(asked(&mut receiver), [], "nobody to ask yet");
        receiver.handle_peer_joining(later, s1, 1, false);
        assert_eq!(asked(&mut receiver), [], "joining: not asked yet");
        receiver.handle_peer_alive(later, s1);
        assert_eq!(asked(&mut receiver), [(s1, 0)], "caught up: asked");
        assert!(receiver.take(later, id).is_none());
    }

    /// Replica 0.0 sends two messages to 1.0 (each rank has `replicas` replicas), and 1.0
    /// posts the receive for the first 1 ms later, then takes it: whether the DATA came
    /// with FLAG_LATE, and the receiver's engine.
    fn a_burst_taken_late(replicas: u32) -> (bool, Engine) {
        let now = Duration::from_secs(1);
        let (s, r) = (ReplicaId::new(0, 0), ReplicaId::new(1, 0));
        let mut sender = Engine::new(s, 2, replicas, Config::default());
        let mut receiver = Engine::new(r, 2, replicas, Config::default());
        sender.start(now);
        receiver.start(now);
        for m in [&b"first"[..], b"second"] {
            sender
                .send(now, 0, 3, 1, Bytes::from_static(m))
                .expect("room");
        }
        let later = now + Duration::from_millis(1);
        let id = receiver.post(later, spec(), Mode::Receive);
        let (_, pull) = receiver.poll_transmit().expect("a pull");
        sender.handle_frame(later, r, pull);
        let (_, data) = sender.poll_transmit().expect("an answer");
        let late = matches!(data, Frame::Data { late: true, .. });
        receiver.handle_frame(later, s, data);
        assert!(matches!(
            receiver.take(later, id),
            Some(Ok(Matched::Message { .. }))
        ));
        (late, receiver)
    }

    /// Pulls ahead that a sender's replica answers ENDED (its program finished first, as
    /// at the end of every replicated job) move to its sibling without counting as
    /// failovers: nothing failed.
    #[test]
    fn pulls_ahead_of_a_sender_that_ended_are_no_failovers() {
        let (_, mut receiver) = a_burst_taken_late(2);
        let (s, later) = (ReplicaId::new(0, 0), Duration::from_millis(1001));
        let ahead: Vec<Frame> = std::iter::from_fn(|| receiver.poll_transmit())
            .map(|(_, f)| f)
            .filter(|f| pulled_seq(f).is_some())
            .collect();
        assert!(!ahead.is_empty(), "the stream pulls ahead");
        for f in ahead {
            if let Frame::Pull { want, req, .. } = f {
                receiver.handle_frame(later, s, Frame::Ended { want, req });
            }
        }
        let moved = std::iter::from_fn(|| receiver.poll_transmit())
            .filter(|(to, f)| *to == ReplicaId::new(0, 1) && pulled_seq(f).is_some())
            .count();
        assert!(moved > 0, "asked the sibling");
        assert_eq!(receiver.stats().failovers, 0);
    }

    /// A receive that follows the previous one closely (a loop of collectives) keeps its
    /// stream lazy: the next pull waits for a write, which costs nothing extra.
    #[test]
    fn a_stream_received_in_a_tight_loop_stays_lazy() {
        assert_eq!(
            pulls_after_a_gap_of(Duration::from_micros(5)),
            Vec::<u64>::new()
        );
    }
}
