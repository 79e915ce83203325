//! Coordinated choices in the engine: `Coordination` holds this rank's choices
//! (`decision::Decisions`), the choices of other ranks heard of (`foreign::Foreign`), and
//! what peers are owed about them, and reads the choice frames (carried choices,
//! CHOICES of other ranks, TAKEOVER); `Announce` sends them (batches to followers,
//! choices carried before a message, stability notices). The engine's glue (recording a
//! choice, the followers' standing pull, leadership changes, takeover) is in `mod.rs`.
//! Never fetches or serves a message itself.

use std::time::Duration;

use bytes::Bytes;

use super::outbox::Outbox;
use super::service::Service;
use super::timers::{Timer, TimerTable};
use crate::limits::{CHOICES_BATCH, CHOICES_CARRIED_MAX, CHOICES_PER_ANSWER};
use crate::message::matching::{Choice, Chooser};
use crate::message::{Consumed, ReplicaId, ReqId, Set, Want};
use crate::pull::decision::{self, slot_key, Decisions, Slot, DECISION_CTX};
use crate::pull::foreign::{decode_entries, Foreign, Refused};
use crate::replica::Liveness;
use crate::wire::Frame;

/// The choices this replica knows of, and what it owes its peers about them.
#[derive(Debug)]
pub(super) struct Coordination {
    pub(super) decisions: Decisions,
    /// Choices of other ranks this replica may depend on (see `foreign`).
    pub(super) foreign: Foreign,
    /// Peers whose next DATA must be dropped: the CHOICES before it were refused.
    pub(super) refused: Set<ReplicaId>,
    /// (peer, rank): we sent that peer unstable choices of that rank and have not told
    /// it since that they became stable.
    owed: Set<(ReplicaId, u32)>,
    /// The earliest time the quiet peers we owe are told (`Timer::SettleNotice`).
    pub(super) notice_after: Duration,
    /// Choices this replica made as leader that its followers were not sent yet.
    unsent: u64,
}

impl Coordination {
    /// `incs`: the incarnation of each sibling; `retain`: keep slots for regenerated
    /// siblings replaying the program.
    pub(super) fn new(
        me: ReplicaId,
        replicas: u32,
        enabled: bool,
        held_max: usize,
        (incs, retain): (&[u32], bool),
    ) -> Self {
        let decisions = Decisions::new(me, replicas, enabled, held_max).in_incarnations(incs);
        Coordination {
            decisions: if retain {
                decisions.retaining()
            } else {
                decisions
            },
            foreign: Foreign::default(),
            refused: Set::default(),
            owed: Set::default(),
            notice_after: Duration::ZERO,
            unsent: 0,
        }
    }

    /// The choices of this rank that sibling `from` carried on a message to `me` (see
    /// `foreign`), to adopt in order; none when choices are not coordinated, and none
    /// (the message refused) when they are malformed.
    pub(super) fn carried(
        &mut self,
        me: ReplicaId,
        from: ReplicaId,
        entries: &Bytes,
    ) -> Vec<(u64, Bytes)> {
        if from == me || !self.decisions.enabled() {
            return Vec::new();
        }
        decode_entries(entries).unwrap_or_else(|e| {
            log::error!("{me}: bad CHOICES from {from}: {e}");
            self.refused.insert(from);
            Vec::new()
        })
    }

    /// CHOICES of another rank from `from` (of ordinal `ord`), just before a DATA frame
    /// that may depend on them: noted, or the DATA refused when they predate a takeover
    /// or are malformed.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn note_foreign(
        &mut self,
        me: ReplicaId,
        from: ReplicaId,
        ord: u32,
        rank: u32,
        term: u32,
        stable: u64,
        entries: &Bytes,
    ) {
        match self.foreign.note(from, ord, rank, term, stable, entries) {
            Ok(()) => {}
            Err(Refused::Stale) => {
                log::info!(
                    "{me}: choices of rank {rank} from {from} predate its takeover; the message they go with is dropped"
                );
                self.refused.insert(from);
            }
            Err(Refused::Malformed(e)) => {
                log::error!("{me}: bad CHOICES from {from}: {e}");
                self.refused.insert(from);
            }
        }
    }

    /// TAKEOVER from `from` (of ordinal `ord`) for `rank`: the choices of that rank held
    /// here, to answer with DECIDED; none for a TAKEOVER that does not come from `rank`.
    pub(super) fn takeover_answer(
        &mut self,
        me: ReplicaId,
        from: ReplicaId,
        ord: u32,
        rank: u32,
        base: u64,
    ) -> Option<Bytes> {
        if from.rank != rank {
            log::warn!("{me}: TAKEOVER from {from} for rank {rank} ignored");
            return None;
        }
        Some(if rank == me.rank {
            self.decisions.on_takeover(from.replica, base)
        } else {
            self.foreign.on_takeover(from, ord, base)
        })
    }

    /// The leader made one more choice its followers were not sent: whether a batch of
    /// them (`CHOICES_BATCH`) is ready to go.
    pub(super) fn one_more_unsent(&mut self) -> bool {
        self.unsent += 1;
        self.unsent >= CHOICES_BATCH
    }

    /// Whether the leader made choices its followers were not sent yet.
    pub(super) fn has_unsent(&self) -> bool {
        self.unsent > 0
    }

    /// Whether a message sent now must be preceded by CHOICES frames (so it cannot be
    /// written ahead of its log entry).
    pub(super) fn must_carry(&self) -> bool {
        self.decisions.used_bound() > self.decisions.stable() || !self.foreign.is_empty()
    }

    /// Whether a message that depends on every choice of this rank below `choices` may
    /// leave now: they are stable, or few enough to carry along.
    pub(super) fn may_leave(&self, choices: u64) -> bool {
        self.decisions.can_carry(choices, CHOICES_CARRIED_MAX)
    }

    /// Takes the (peer, rank) pairs `which` selects whose choices became stable: they
    /// are owed a notice.
    fn take_settled(
        &mut self,
        me: u32,
        which: impl Fn(ReplicaId) -> bool,
    ) -> Vec<(ReplicaId, u32)> {
        let settled: Vec<(ReplicaId, u32)> = self
            .owed
            .iter()
            .copied()
            .filter(|&(peer, rank)| {
                which(peer)
                    && if rank == me {
                        self.decisions.used_bound() <= self.decisions.stable()
                    } else {
                        !self.foreign.of_rank(rank).0
                    }
            })
            .collect();
        for s in &settled {
            self.owed.remove(s);
        }
        settled
    }

    /// A CHOICES frame about `rank` as this replica knows it (no entries: a notice).
    /// `held`: this replica holds every choice of its own rank below this. The watermark
    /// it tells is what every live replica of the rank holds, this one included, so never
    /// more than `held`: with no live sibling left `Decisions::stable` is unbounded, and a
    /// receiver keeps the highest watermark it heard, so it would drop every choice of
    /// the rank carried to it after a new incarnation joins (and not answer a takeover
    /// with them).
    fn frame(&self, me: u32, rank: u32, entries: Bytes, held: u64) -> Frame {
        let (term, stable) = if rank == me {
            (self.decisions.term(), self.decisions.stable().min(held))
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
}

/// The matcher's view of the choices: records go to `decisions`, and the slots recorded
/// are remembered so the engine can serve followers waiting for them.
pub(super) struct EngineChooser<'a> {
    decisions: &'a mut Decisions,
    recorded: Vec<u64>,
    made: &'a mut u64,
}

impl<'a> EngineChooser<'a> {
    pub(super) fn new(decisions: &'a mut Decisions, made: &'a mut u64) -> Self {
        EngineChooser {
            decisions,
            recorded: Vec::new(),
            made,
        }
    }

    /// The slots recorded through this chooser.
    pub(super) fn into_recorded(self) -> Vec<u64> {
        self.recorded
    }
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

    fn cancelled(&mut self, slot: u64) -> bool {
        matches!(self.decisions.slot(slot), Slot::Held(b) if b == decision::CANCELLED_MATCH)
    }

    fn record(&mut self, slot: u64, choice: Choice) {
        if self.decisions.record(slot, decision::encode_match(choice)) {
            self.recorded.push(slot);
            *self.made += 1;
        }
        self.decisions.mark_used(slot);
    }
}

/// The choices leaving this replica, over the engine's parts they use: batches to the
/// followers (answering their parked pulls), the choices a message carries before it
/// goes (`carry_choices`), notices that carried choices became stable, and how far this
/// replica holds its rank's choices. Made by `Engine::announce` and `Serving::announce`.
pub(super) struct Announce<'e> {
    pub(super) me: ReplicaId,
    pub(super) replicas: u32,
    pub(super) coord: &'e mut Coordination,
    pub(super) service: &'e mut Service,
    pub(super) liveness: &'e Liveness,
    pub(super) consumed: &'e Consumed,
    pub(super) timers: &'e mut TimerTable,
    pub(super) out: &'e mut Outbox,
}

impl Announce<'_> {
    /// Sends the followers the choices made since the last batch: parked pulls for them
    /// are answered, and siblings learn how far this replica holds them.
    pub(super) fn send_choices(&mut self) {
        self.coord.unsent = 0;
        self.timers.stop(Timer::ChoicesBatch);
        let me = self.me.rank;
        let mut asked: Vec<u64> = self
            .service
            .parked_wants()
            .filter_map(|w| match w {
                Want::Key(k) if *k == slot_key(me, k.seq) => Some(k.seq),
                _ => None,
            })
            .collect();
        // Lowest first, each before the ones after it: over a FIFO connection a follower
        // then holds a choice only with every one before it, whenever its leader dies. A
        // follower holding choices past one it lacks would keep them at a takeover and
        // decide the missing one anew, though the dead leader made the later ones knowing
        // it (seed 485001478 of `wildcard_leaders_killed_in_turn_after_catch_up`: the
        // follower pulled slots 37 and 38 for receives posted together and got them at
        // once while its standing pull for 36 waited for this batch; the leader died; 36
        // was decided anew and 39 then waited for a message its sender could send only
        // later, a deadlock).
        asked.sort_unstable();
        for slot in asked {
            self.answer_choice_pull(slot);
        }
        self.report_choices();
    }

    /// Sends the batch of choices not sent yet, if any.
    pub(super) fn flush_choices(&mut self) {
        if self.coord.unsent > 0 {
            self.send_choices();
        }
    }

    /// Answers the pulls parked for choice `slot` of this rank if it is held here, each
    /// with the held choices after it too (see `out_choices_after`).
    pub(super) fn answer_choice_pull(&mut self, slot: u64) {
        let key = slot_key(self.me.rank, slot);
        let Slot::Held(value) = self.coord.decisions.slot(slot) else {
            return;
        };
        for w in self.service.take(&Want::Key(key)) {
            if self.liveness.is_usable(w.from) {
                self.out.send(
                    w.from,
                    Frame::Data {
                        key,
                        req: w.req,
                        order: slot,
                        payload: value.clone(),
                        confirm: false,
                        late: false,
                        sync: false,
                    },
                );
                self.out_choices_after(w.from, slot);
            }
        }
    }

    /// Sends `to` the held choices after `slot`, unasked (a follower far behind catches up
    /// in one write; its standing pull then asks past them).
    pub(super) fn out_choices_after(&mut self, to: ReplicaId, slot: u64) {
        for next in slot.saturating_add(1)..slot.saturating_add(CHOICES_PER_ANSWER) {
            let Slot::Held(more) = self.coord.decisions.slot(next) else {
                break;
            };
            self.out.send(
                to,
                Frame::Data {
                    key: slot_key(self.me.rank, next),
                    req: ReqId::UNASKED,
                    order: next,
                    payload: more,
                    confirm: false,
                    late: false,
                    sync: false,
                },
            );
        }
    }

    /// Tells the siblings how far this replica holds its rank's choices: they need it to
    /// settle what their messages carry (and to let out a message held by the output
    /// commit).
    pub(super) fn report_choices(&mut self) {
        let watermark = self.consumed.watermark(DECISION_CTX, self.me.rank);
        for k in 0..self.replicas {
            let to = ReplicaId::new(self.me.rank, k);
            if to != self.me && self.liveness.is_usable(to) {
                self.out.send(
                    to,
                    Frame::Consumed {
                        comm: DECISION_CTX,
                        src: self.me.rank,
                        dst: self.me.rank,
                        watermark,
                    },
                );
            }
        }
    }

    /// Before a message that depends on this rank's choices below `choices` goes to `to`:
    /// the unstable ones it depends on, the unstable choices of other ranks this replica
    /// may depend on (see `foreign`), or else the news that choices `to` got earlier
    /// became stable. A message to ourselves needs none: we hold them.
    pub(super) fn carry_choices(&mut self, to: ReplicaId, choices: u64) {
        let me = self.me.rank;
        let mut carried_own = false;
        if to != self.me && choices > self.coord.decisions.stable() {
            if let Some(entries) = self.coord.decisions.unstable(choices, CHOICES_CARRIED_MAX) {
                let held = self.consumed.watermark(DECISION_CTX, me);
                self.out.send(to, self.coord.frame(me, me, entries, held));
                self.coord.owed.insert((to, me));
                carried_own = true;
            }
        }
        if to != self.me && !self.coord.foreign.is_empty() {
            // Not back to the leader whose own choices they are: it holds them.
            let own = self.coord.foreign.vouched_by(to).map(|t| (to.rank, t));
            for (rank, term, stable, entries) in self.coord.foreign.carried() {
                if own == Some((*rank, *term)) {
                    continue;
                }
                let choices = Frame::Choices {
                    rank: *rank,
                    term: *term,
                    stable: *stable,
                    entries: entries.clone(),
                };
                self.out.send(to, choices);
                self.coord.owed.insert((to, *rank));
            }
        }
        if !self.coord.owed.is_empty() && !carried_own {
            self.settle(|peer| peer == to);
        }
        self.arm_settle_notice();
    }

    /// Tells the peers `which` selects that the choices they got from us are stable now
    /// (so they stop carrying them along).
    pub(super) fn settle(&mut self, which: impl Fn(ReplicaId) -> bool) {
        let me = self.me.rank;
        let held = self.consumed.watermark(DECISION_CTX, me);
        for (peer, rank) in self.coord.take_settled(me, which) {
            if self.liveness.is_usable(peer) {
                self.out
                    .send(peer, self.coord.frame(me, rank, Bytes::new(), held));
            }
        }
        self.arm_settle_notice();
    }

    /// `Timer::SettleNotice` runs while any peer is owed a notice.
    pub(super) fn arm_settle_notice(&mut self) {
        if self.coord.owed.is_empty() {
            self.timers.stop(Timer::SettleNotice);
        } else {
            self.timers
                .set(Timer::SettleNotice, self.coord.notice_after);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ChoiceState, Engine};
    use super::*;

    fn coordination(replicas: u32) -> Coordination {
        Coordination::new(
            ReplicaId::new(0, 0),
            replicas,
            replicas > 1,
            16,
            (&[], false),
        )
    }

    #[test]
    fn nothing_to_carry_without_choices() {
        let c = coordination(2);
        assert!(!c.must_carry());
        assert!(c.may_leave(0));
    }

    #[test]
    fn an_unstable_choice_in_use_must_be_carried() {
        let mut c = coordination(2);
        let slot = c.decisions.next_slot();
        assert!(c.decisions.record(slot, Bytes::from_static(b"x")));
        c.decisions.mark_used(slot);
        assert!(c.must_carry());
        // One unstable choice is few enough to carry along.
        assert!(c.may_leave(c.decisions.used_bound()));
    }

    /// With no live sibling left `Decisions::stable` is unbounded; the watermark told to
    /// other ranks stops at what this replica holds. Seed 59000200 of the simulator's
    /// `wildcard_leaders_killed_in_turn_after_catch_up`: a leader alone told the others
    /// "stable: u64::MAX", they kept that watermark and dropped every choice of its rank
    /// carried to them after a sibling's new incarnation joined, and when the leader died
    /// that sibling's takeover did not find one its messages depended on.
    #[test]
    fn a_replica_alone_tells_no_choice_it_does_not_hold_stable() {
        let leader = ReplicaId::new(2, 0);
        let mut c = Coordination::new(leader, 2, true, 16, (&[], true));
        c.decisions.on_dead(1, Duration::ZERO, std::iter::empty());
        let chosen = decision::encode_match(Some((1, 0)));
        for slot in 0..3 {
            assert!(c.decisions.record(slot, chosen.clone()));
            c.decisions.mark_used(slot);
        }
        assert_eq!(c.decisions.stable(), u64::MAX, "no live sibling");
        let Frame::Choices { stable, .. } = c.frame(2, 2, Bytes::new(), 3) else {
            unreachable!()
        };
        assert_eq!(stable, 3, "not u64::MAX");
        // A replica of rank 0 hears it; then the sibling's new incarnation joins, and the
        // leader's next choice goes to rank 0 with a message.
        let mut heard = Foreign::default();
        heard.note(leader, 0, 2, 0, stable, &Bytes::new()).unwrap();
        c.decisions.on_joining(1, 1);
        assert!(c.decisions.record(3, chosen.clone()));
        c.decisions.mark_used(3);
        let entries = c.decisions.unstable(4, CHOICES_CARRIED_MAX).unwrap();
        let Frame::Choices {
            term,
            stable,
            entries,
            ..
        } = c.frame(2, 2, entries, 4)
        else {
            unreachable!()
        };
        assert_eq!(stable, 0, "the newcomer holds nothing yet");
        heard.note(leader, 0, 2, term, stable, &entries).unwrap();
        // The leader dies; the newcomer (ordinal 3), caught up with slots 0..3, takes over.
        let answer = heard.on_takeover(ReplicaId::new(2, 1), 3, 3);
        assert_eq!(decode_entries(&answer), Ok(vec![(3, chosen)]));
    }

    /// A leader answers a pull for a choice behind the ones before it that a standing
    /// pull waits for in a batch: a follower never holds a choice without the earlier
    /// ones, whenever the leader dies (else a takeover decides the missing one anew under
    /// later ones made knowing it). Seed 485001478 of the simulator's
    /// `wildcard_leaders_killed_in_turn_after_catch_up` deadlocked so.
    #[test]
    fn a_pulled_choice_goes_behind_the_earlier_ones() {
        let (leader, follower) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
        let mut l = Engine::new(leader, 1, 2, crate::config::Config::default());
        let mut f = Engine::new(follower, 1, 2, crate::config::Config::default());
        let now = Duration::ZERO;
        l.start(now);
        f.start(now);
        // Frames between the two; returns the choices the follower got, in order.
        let pump = |l: &mut Engine, f: &mut Engine| -> Vec<u64> {
            let mut got = Vec::new();
            loop {
                let mut moved = false;
                while let Some((to, fr)) = l.poll_transmit().or_else(|| l.poll_deferred()) {
                    if let (true, Frame::Data { key, .. }) = (to == follower, &fr) {
                        got.push(key.seq);
                    }
                    f.handle_frame(now, leader, fr);
                    moved = true;
                }
                while let Some((_, fr)) = f.poll_transmit().or_else(|| f.poll_deferred()) {
                    l.handle_frame(now, follower, fr);
                    moved = true;
                }
                if !moved {
                    return got;
                }
            }
        };
        // The follower's standing pull for slot 0 is parked at the leader, which makes
        // slots 0 and 1: fewer than a batch, so they wait.
        pump(&mut l, &mut f);
        for _ in 0..2 {
            let slot = l.post_choice().unwrap();
            assert_eq!(l.choice(now, slot), ChoiceState::Yours);
            l.make_choice(now, slot, Bytes::from_static(b"c"));
        }
        const { assert!(CHOICES_BATCH > 2) };
        assert_eq!(pump(&mut l, &mut f), Vec::<u64>::new());
        // The follower needs slot 1 before slot 0 (receives posted together).
        let (first, second) = (f.post_choice().unwrap(), f.post_choice().unwrap());
        assert_eq!(f.choice(now, second), ChoiceState::Waiting);
        let got = pump(&mut l, &mut f);
        assert_eq!(got.first(), Some(&first), "slot 0 first, not {got:?}");
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "{got:?}");
    }

    #[test]
    fn settled_pairs_are_taken_once() {
        let mut c = coordination(2);
        let peer = ReplicaId::new(1, 0);
        c.owed.insert((peer, 0));
        c.owed.insert((peer, 5));
        // Rank 5's choices: none held here, so stable; ours: nothing used, so stable.
        assert_eq!(c.take_settled(0, |p| p != peer), []);
        let mut settled = c.take_settled(0, |p| p == peer);
        settled.sort();
        assert_eq!(settled, [(peer, 0), (peer, 5)]);
        assert_eq!(c.take_settled(0, |_| true), []);
    }
}
