//! The fetching side's state: every message this replica is pulling (`Pending`), the
//! asks sent for it to replicas of its sender (`Ask`, with the state machine of one ask),
//! the request ids, and the deadlines of all of them (ack timeouts, silence of a parked
//! ask, hedges). `scan` (which deadlines passed) and `next_deadline` (the earliest one)
//! share one rule per ask state. Never sends anything: the engine acts on what `scan`
//! finds (see `receive`).
//!
//! `next_deadline` runs at every timer turn and does not walk the fetches: it answers
//! from floors kept as fetches change (a lower bound of the hedges and of the unanswered
//! asks' send times, lowered by every change, exact again when nothing is left under
//! one, and made exact by `refresh` once passed) and from a count of parked asks per
//! peer (exact; their deadlines come from `Silence` at the call). A fetch handed out by
//! `get_mut` is accounted for at the next change of this table or by `next_deadline`
//! itself, so the answer is never later than the walk's (`walk_deadline`, checked in
//! debug builds): at worst a turn comes early, finds nothing due and `refresh`es. Never
//! let a change to a fetch bypass `get_mut`, `insert` or `remove`.

use std::time::Duration;

use smallvec::SmallVec;

use super::silence::{ParkedCheck, Silence};
use crate::message::{Map, ReplicaId, ReqId, Want};

/// State of one ask (a pull sent to one sender replica).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AskState {
    /// Sent; no answer yet.
    Sent { at: Duration },
    /// The sender parked it (not sent yet there).
    Parked,
    /// No answer within the ack timeout (or the sender went quiet while it was parked):
    /// another replica was asked; a late answer still counts.
    Silent,
    /// The sender evicted the message.
    Gone,
    /// The sender's program ended without sending it.
    Ended,
    /// Abandoned: the replica died, or it was cancelled.
    Dropped,
}

/// One pull sent to replica `replica` of the sender.
#[derive(Debug, Clone)]
pub(super) struct Ask {
    pub(super) replica: u32,
    pub(super) req: ReqId,
    pub(super) state: AskState,
}

impl Ask {
    /// Still waiting for an answer.
    pub(super) fn outstanding(&self) -> bool {
        match self.state {
            AskState::Sent { .. } | AskState::Parked => true,
            AskState::Silent | AskState::Gone | AskState::Ended | AskState::Dropped => false,
        }
    }
}

/// A message being fetched.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) asks: SmallVec<[Ask; 2]>,
    /// When to ask another replica whether it already has the message.
    pub(super) hedge_at: Duration,
    /// Since when a resolved receive waits for it (`None`: it is fetched ahead).
    pub(super) needed_since: Option<Duration>,
    /// Its first ask may wait for the next command's write (a speculative pull).
    pub(super) defer: bool,
    /// A speculative pull: when it was made (see `receive::want`).
    pub(super) speculated_at: Option<Duration>,
    /// The replicas (bit k: replica k, for k < 64) that parked an ask for it: each lacked
    /// it when asked, so it was behind too, and its answer winning a race later is no sign
    /// that the others lag (see `receive::complete`).
    pub(super) parked_by: u64,
    /// How late this replica's hedge turns for it came, in all, while a receive waited:
    /// time it did not run (starved), not time the sender kept it waiting.
    pub(super) stalled: Duration,
    /// Its latest hedge turn came late (this replica did not run on time).
    pub(super) late: bool,
    /// The replicas of its parked asks as `Fetches::parked` counts them.
    counted_parked: SmallVec<[u32; 2]>,
    /// Its unanswered asks as `Fetches::sent` counts them.
    counted_sent: u32,
    /// Whether `Fetches::hedged` counts it.
    counted_hedge: bool,
}

impl Pending {
    /// A new fetch; `hedge_at` is `Duration::MAX` for one nobody waits for, and
    /// `needed_since` when a receive started waiting for it.
    pub(super) fn new(hedge_at: Duration, needed_since: Option<Duration>, defer: bool) -> Pending {
        Pending {
            asks: SmallVec::new(),
            hedge_at,
            needed_since,
            defer,
            speculated_at: None,
            parked_by: 0,
            stalled: Duration::ZERO,
            late: false,
            counted_parked: SmallVec::new(),
            counted_sent: 0,
            counted_hedge: false,
        }
    }

    /// A speculative pull made at `now`; `defer`: its first ask may wait for a write.
    pub(super) fn speculative(now: Duration, defer: bool) -> Pending {
        Pending {
            speculated_at: Some(now),
            ..Pending::new(Duration::MAX, None, defer)
        }
    }

    /// The replicas whose ask satisfies `f`.
    pub(super) fn replicas(&self, f: impl Fn(&Ask) -> bool) -> Vec<u32> {
        self.asks
            .iter()
            .filter(|a| f(a))
            .map(|a| a.replica)
            .collect()
    }

    /// Whether a resolved receive waits for it.
    pub(super) fn needed(&self) -> bool {
        self.needed_since.is_some()
    }

    /// Whether any ask still waits for an answer.
    pub(super) fn any_outstanding(&self) -> bool {
        self.asks.iter().any(Ask::outstanding)
    }

    /// Whether any replica evicted the message.
    pub(super) fn any_gone(&self) -> bool {
        self.asks.iter().any(|a| a.state == AskState::Gone)
    }

    /// Whether any replica's program ended without sending it.
    pub(super) fn any_ended(&self) -> bool {
        self.asks.iter().any(|a| a.state == AskState::Ended)
    }

    /// How long a receive has waited for it at `now`, less the time this replica did not
    /// run meanwhile: its hedge turns' lateness, and how overdue the next one is (`None`
    /// when nobody waits for it).
    pub(super) fn waited_running(&self, now: Duration) -> Option<Duration> {
        let overdue = now.saturating_sub(self.hedge_at);
        self.needed_since.map(|t| {
            now.saturating_sub(t)
                .saturating_sub(self.stalled)
                .saturating_sub(overdue)
        })
    }

    /// Whether its hedge turn is (or, at the turn itself, was) due more than half a hedge
    /// interval ago at `now`: this replica did not run on time.
    pub(super) fn turn_late(&self, now: Duration, hedge: Duration) -> bool {
        now.saturating_sub(self.hedge_at) >= hedge / 2
    }

    /// Replica `k` parked an ask for it (lacked it when asked).
    pub(super) fn note_parked(&mut self, k: u32) {
        self.parked_by |= 1u64.checked_shl(k).unwrap_or(0);
    }

    /// Whether replica `k` parked an ask for it (always false for k >= 64).
    pub(super) fn was_parked_by(&self, k: u32) -> bool {
        self.parked_by & 1u64.checked_shl(k).unwrap_or(0) != 0
    }

    /// The ask `req` sent to `replica`, if it is still on record.
    pub(super) fn ask_mut(&mut self, replica: u32, req: ReqId) -> Option<&mut Ask> {
        self.asks
            .iter_mut()
            .find(|a| a.replica == replica && a.req == req)
    }

    /// Records a new ask to `replica`, replacing an earlier one to the same replica
    /// unless `keep_outstanding` and that one still waits.
    pub(super) fn record_ask(
        &mut self,
        replica: u32,
        req: ReqId,
        now: Duration,
        keep_outstanding: bool,
    ) {
        self.asks
            .retain(|a| a.replica != replica || (keep_outstanding && a.outstanding()));
        self.asks.push(Ask {
            replica,
            req,
            state: AskState::Sent { at: now },
        });
    }
}

/// What passed its deadline in one scan (see `Fetches::scan`).
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Expired {
    /// Asks whose replica went silent.
    pub(super) silent: Vec<(Want, ReplicaId)>,
    /// Peers to ask again (keepalive), with one pull parked there to repeat.
    pub(super) ping: Vec<(ReplicaId, Want, ReqId)>,
    /// Fetches due for a hedge.
    pub(super) hedge: Vec<Want>,
}

/// Every fetch in progress, by what it fetches.
#[derive(Debug)]
pub(super) struct Fetches {
    me: ReplicaId,
    /// Where each fetch is in `slots`.
    pending: Map<Want, usize>,
    /// The fetches (a free slot is `None`): a fetch changed last is found again by its
    /// slot, without a lookup.
    slots: Vec<Option<(Want, Pending)>>,
    free: Vec<usize>,
    next_req: ReqId,
    /// At most the earliest `hedge_at` of any fetch.
    hedge_floor: Duration,
    /// At most the earliest send time of any unanswered ask to another replica.
    sent_floor: Duration,
    /// How many unanswered asks to other replicas there are (when none, `sent_floor`
    /// is exact again).
    sent: usize,
    /// How many fetches have a hedge time (when none, `hedge_floor` is).
    hedged: usize,
    /// How many asks are parked at each peer (other than this replica): exact.
    parked: SmallVec<[(ReplicaId, u32); 4]>,
    /// The slot of the fetch `get_mut` handed out last, not accounted for yet.
    touched: Option<usize>,
}

/// Counts one more (`up`) or one fewer ask parked at `peer`, dropping a count that
/// reaches 0.
fn count_parked(parked: &mut SmallVec<[(ReplicaId, u32); 4]>, peer: ReplicaId, up: bool) {
    match parked.iter().position(|(p, _)| *p == peer) {
        Some(i) if up => parked[i].1 += 1,
        Some(i) => {
            parked[i].1 -= 1;
            if parked[i].1 == 0 {
                parked.swap_remove(i);
            }
        }
        None if up => parked.push((peer, 1)),
        None => debug_assert!(false, "uncounting a parked ask at {peer} never counted"),
    }
}

impl Fetches {
    pub(super) fn new(me: ReplicaId) -> Fetches {
        Fetches {
            me,
            pending: Map::default(),
            slots: Vec::new(),
            free: Vec::new(),
            next_req: ReqId(1),
            hedge_floor: Duration::MAX,
            sent_floor: Duration::MAX,
            sent: 0,
            hedged: 0,
            parked: SmallVec::new(),
            touched: None,
        }
    }

    /// Brings the floors and parked counts up to date with the fetch `get_mut` handed
    /// out last: its deadlines may have moved earlier, its asks parked or answered.
    fn account(&mut self) {
        let Some(i) = self.touched.take() else {
            return;
        };
        let Some((want, p)) = self.slots.get_mut(i).and_then(Option::as_mut) else {
            return;
        };
        self.hedge_floor = self.hedge_floor.min(p.hedge_at);
        let hedge = p.hedge_at != Duration::MAX;
        if hedge != p.counted_hedge {
            if hedge {
                self.hedged += 1;
            } else {
                self.hedged -= 1;
            }
            p.counted_hedge = hedge;
        }
        let mut now_parked: SmallVec<[u32; 2]> = SmallVec::new();
        let mut sent = 0;
        for a in &p.asks {
            if ReplicaId::new(want.src(), a.replica) == self.me {
                continue;
            }
            match a.state {
                AskState::Sent { at } => {
                    self.sent_floor = self.sent_floor.min(at);
                    sent += 1;
                }
                AskState::Parked => now_parked.push(a.replica),
                _ => {}
            }
        }
        self.sent = self.sent + sent as usize - p.counted_sent as usize;
        p.counted_sent = sent;
        if now_parked != p.counted_parked {
            for &r in &p.counted_parked {
                count_parked(&mut self.parked, ReplicaId::new(want.src(), r), false);
            }
            for &r in &now_parked {
                count_parked(&mut self.parked, ReplicaId::new(want.src(), r), true);
            }
            p.counted_parked = now_parked;
        }
        self.reset_empty_floors();
    }

    /// Forgets the asks and hedge of `p`, which left the table, as they were counted.
    fn uncount(&mut self, want: &Want, p: &mut Pending) {
        for r in p.counted_parked.drain(..) {
            count_parked(&mut self.parked, ReplicaId::new(want.src(), r), false);
        }
        self.sent -= std::mem::take(&mut p.counted_sent) as usize;
        self.hedged -= usize::from(std::mem::take(&mut p.counted_hedge));
        self.reset_empty_floors();
    }

    /// A floor with nothing left under it is exact: none.
    fn reset_empty_floors(&mut self) {
        if self.sent == 0 {
            self.sent_floor = Duration::MAX;
        }
        if self.hedged == 0 {
            self.hedge_floor = Duration::MAX;
        }
    }

    /// A request id not used before.
    pub(super) fn new_req(&mut self) -> ReqId {
        let req = self.next_req;
        self.next_req = req.next();
        req
    }

    pub(super) fn get(&self, want: &Want) -> Option<&Pending> {
        self.slot(*self.pending.get(want)?)
    }

    fn slot(&self, i: usize) -> Option<&Pending> {
        self.slots.get(i)?.as_ref().map(|(_, p)| p)
    }

    /// Every fetch, in the map's (fixed) order.
    fn iter(&self) -> impl Iterator<Item = (&Want, &Pending)> {
        self.pending
            .iter()
            .filter_map(|(w, &i)| Some((w, self.slot(i)?)))
    }

    /// The fetch of `want`, to change: accounted for at the next change of this table
    /// (or by `next_deadline`), so keep no other way to change one.
    pub(super) fn get_mut(&mut self, want: &Want) -> Option<&mut Pending> {
        // A fetch changed twice in a row is accounted for once, after the second.
        let i = *self.pending.get(want)?;
        if self.touched != Some(i) {
            self.account();
        }
        self.touched = Some(i);
        self.slots.get_mut(i)?.as_mut().map(|(_, p)| p)
    }

    pub(super) fn contains(&self, want: &Want) -> bool {
        self.pending.contains_key(want)
    }

    pub(super) fn insert(&mut self, want: Want, mut p: Pending) {
        p.counted_parked.clear();
        p.counted_sent = 0;
        p.counted_hedge = false;
        let (free, slots) = (&mut self.free, &mut self.slots);
        let i = *self.pending.entry(want).or_insert_with(|| {
            free.pop().unwrap_or_else(|| {
                slots.push(None);
                slots.len() - 1
            })
        });
        if self.touched != Some(i) {
            self.account();
        }
        if let Some((w, mut old)) = self.slots[i].replace((want, p)) {
            self.uncount(&w, &mut old);
        }
        self.touched = Some(i);
    }

    pub(super) fn remove(&mut self, want: &Want) -> Option<Pending> {
        // The fetch changed last needs no accounting if it is the one that goes (its
        // parked asks are uncounted as they were counted).
        let i = self.pending.remove(want)?;
        if self.touched == Some(i) {
            self.touched = None;
        } else {
            self.account();
        }
        let (_, mut p) = self.slots[i].take()?;
        self.free.push(i);
        self.uncount(want, &mut p);
        debug_assert!(!self.pending.is_empty() || (self.parked.is_empty() && self.sent == 0));
        Some(p)
    }

    /// Every want fetched, in the map's (fixed) order.
    pub(super) fn wants(&self, f: impl Fn(&Want, &Pending) -> bool) -> Vec<Want> {
        self.iter()
            .filter(|(w, p)| f(w, p))
            .map(|(w, _)| *w)
            .collect()
    }

    /// Whether some ask other than `replica`'s still waits for `want`.
    pub(super) fn others_outstanding(&self, want: &Want, replica: u32) -> bool {
        self.get(want).is_some_and(|p| {
            p.asks
                .iter()
                .any(|a| a.replica != replica && a.outstanding())
        })
    }

    /// This process did not run for a while: asks in flight start their clock again.
    pub(super) fn resync(&mut self, now: Duration) {
        for (_, p) in self.slots.iter_mut().flatten() {
            for a in p.asks.iter_mut() {
                if let AskState::Sent { at } = &mut a.state {
                    *at = now;
                }
            }
        }
        self.refresh();
    }

    /// Makes the floors exact again (one walk over the fetches).
    pub(super) fn refresh(&mut self) {
        self.account();
        let (mut hedge, mut sent) = (Duration::MAX, Duration::MAX);
        for (want, p) in self.iter() {
            hedge = hedge.min(p.hedge_at);
            for a in &p.asks {
                if let AskState::Sent { at } = a.state {
                    if ReplicaId::new(want.src(), a.replica) != self.me {
                        sent = sent.min(at);
                    }
                }
            }
        }
        self.hedge_floor = hedge;
        self.sent_floor = sent;
    }

    /// `refresh` if a floor passed by `now`: a timer turn that found the floors due
    /// makes them exact, so that the next deadline is not that passed one again.
    pub(super) fn refresh_if_passed(&mut self, now: Duration, ack_timeout: Duration) {
        if self.hedge_floor <= now || self.sent_floor.saturating_add(ack_timeout) <= now {
            self.refresh();
        }
    }

    /// When the ask `a` for `want` needs attention, if ever: an unanswered one after the
    /// ack timeout; a parked one when its replica's silence calls for it.
    fn ask_deadline(
        &self,
        want: &Want,
        a: &Ask,
        silence: &Silence,
        ack_timeout: Duration,
        parked: &mut Option<(ReplicaId, Duration)>,
    ) -> Option<Duration> {
        let peer = ReplicaId::new(want.src(), a.replica);
        if peer == self.me {
            return None;
        }
        match a.state {
            AskState::Sent { at } => Some(at + ack_timeout),
            // A stream's pulls mostly wait at one replica: its parked deadline (two map
            // lookups) is worked out once per run of asks to it (`parked`, the last one
            // worked out in this pass), not once per ask.
            AskState::Parked => match *parked {
                Some((p, d)) if p == peer => Some(d),
                _ => {
                    let d = silence.parked_deadline(peer, ack_timeout);
                    *parked = Some((peer, d));
                    Some(d)
                }
            },
            AskState::Silent | AskState::Gone | AskState::Ended | AskState::Dropped => None,
        }
    }

    /// The earliest deadline of any fetch (`Duration::MAX` for one that waits for
    /// nothing but a hedge it never makes), or earlier: never later than `walk_deadline`,
    /// equal to it after `refresh` until a fetch's deadline moves later or a fetch goes.
    /// Costs a few comparisons and one `Silence` lookup per peer with parked asks.
    pub(super) fn next_deadline(
        &self,
        silence: &Silence,
        ack_timeout: Duration,
    ) -> Option<Duration> {
        if self.pending.is_empty() {
            return None;
        }
        let mut t = self
            .hedge_floor
            .min(self.sent_floor.saturating_add(ack_timeout));
        for &(peer, _) in &self.parked {
            t = t.min(silence.parked_deadline(peer, ack_timeout));
        }
        if let Some((want, p)) = self
            .touched
            .and_then(|i| self.slots.get(i)?.as_ref())
            .map(|(w, p)| (*w, p))
        {
            t = t.min(p.hedge_at);
            let mut parked = None;
            for a in &p.asks {
                if let Some(d) = self.ask_deadline(&want, a, silence, ack_timeout, &mut parked) {
                    t = t.min(d);
                }
            }
        }
        debug_assert!(
            Some(t) <= self.walk_deadline(silence, ack_timeout),
            "next deadline {t:?} later than the walk's {:?}",
            self.walk_deadline(silence, ack_timeout)
        );
        Some(t)
    }

    /// The earliest deadline of any fetch, by a walk over all of them (what
    /// `next_deadline` must never be later than).
    pub(super) fn walk_deadline(
        &self,
        silence: &Silence,
        ack_timeout: Duration,
    ) -> Option<Duration> {
        let mut t: Option<Duration> = None;
        let mut parked = None;
        for (want, p) in self.iter() {
            t = Some(t.map_or(p.hedge_at, |x| x.min(p.hedge_at)));
            for a in &p.asks {
                if let Some(d) = self.ask_deadline(want, a, silence, ack_timeout, &mut parked) {
                    t = Some(t.map_or(d, |x| x.min(d)));
                }
            }
        }
        t
    }

    /// What is due at `now`: silent asks, peers to ask again (one pull each), hedges.
    pub(super) fn scan(&self, now: Duration, silence: &Silence, ack_timeout: Duration) -> Expired {
        let mut out = Expired::default();
        let mut parked = None;
        for (want, p) in self.iter() {
            for a in &p.asks {
                if self
                    .ask_deadline(want, a, silence, ack_timeout, &mut parked)
                    .is_none_or(|d| now < d)
                {
                    continue;
                }
                let peer = ReplicaId::new(want.src(), a.replica);
                match a.state {
                    AskState::Sent { .. } => out.silent.push((*want, peer)),
                    AskState::Parked => match silence.parked(peer, now, ack_timeout) {
                        ParkedCheck::Silent => out.silent.push((*want, peer)),
                        ParkedCheck::Ping => {
                            if !out.ping.iter().any(|(p, ..)| *p == peer) {
                                out.ping.push((peer, *want, a.req));
                            }
                        }
                        ParkedCheck::Quiet { .. } => {}
                    },
                    AskState::Silent | AskState::Gone | AskState::Ended | AskState::Dropped => {}
                }
            }
            if now >= p.hedge_at {
                out.hedge.push(*want);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pull::engine::test_want;

    const MS: Duration = Duration::from_millis(1);
    const ACK: Duration = Duration::from_millis(100);

    fn want(seq: u64) -> Want {
        test_want(1, 0, seq)
    }

    fn fetches_with(asks: &[(u64, u32, AskState)]) -> Fetches {
        let mut f = Fetches::new(ReplicaId::new(0, 0));
        for &(seq, replica, state) in asks {
            let req = f.new_req();
            if !f.contains(&want(seq)) {
                f.insert(
                    want(seq),
                    Pending::new(Duration::MAX, Some(Duration::ZERO), false),
                );
            }
            let Some(p) = f.get_mut(&want(seq)) else {
                unreachable!("inserted above");
            };
            p.asks.push(Ask {
                replica,
                req,
                state,
            });
        }
        f
    }

    #[test]
    fn request_ids_are_never_reused_and_never_the_unasked_id() {
        let mut f = Fetches::new(ReplicaId::new(0, 0));
        let a = f.new_req();
        let b = f.new_req();
        assert_ne!(a, ReqId::UNASKED);
        assert!(b > a);
    }

    #[test]
    fn an_unanswered_ask_is_silent_after_the_ack_timeout() {
        let f = fetches_with(&[(0, 0, AskState::Sent { at: 10 * MS })]);
        let s = Silence::default();
        assert_eq!(f.next_deadline(&s, ACK), Some(110 * MS));
        assert_eq!(f.scan(109 * MS, &s, ACK), Expired::default());
        assert_eq!(
            f.scan(110 * MS, &s, ACK).silent,
            [(want(0), ReplicaId::new(1, 0))]
        );
    }

    #[test]
    fn parked_asks_ping_each_peer_once_per_scan() {
        let f = fetches_with(&[(0, 1, AskState::Parked), (1, 1, AskState::Parked)]);
        let mut s = Silence::default();
        s.heard(ReplicaId::new(1, 1), Duration::ZERO);
        assert_eq!(f.next_deadline(&s, ACK), Some(50 * MS));
        let e = f.scan(50 * MS, &s, ACK);
        assert_eq!(e.ping.len(), 1);
        assert!(e.silent.is_empty());
        let e = f.scan(100 * MS, &s, ACK);
        assert_eq!(e.silent.len(), 2);
    }

    #[test]
    fn settled_asks_have_no_deadline_but_hedges_do() {
        let mut f = fetches_with(&[
            (0, 0, AskState::Silent),
            (0, 1, AskState::Gone),
            (0, 1, AskState::Dropped),
        ]);
        let s = Silence::default();
        // A fetch nobody hedges still reports its (never reached) hedge time.
        assert_eq!(f.next_deadline(&s, ACK), Some(Duration::MAX));
        if let Some(p) = f.get_mut(&want(0)) {
            p.hedge_at = 30 * MS;
        }
        assert_eq!(f.next_deadline(&s, ACK), Some(30 * MS));
        assert_eq!(f.scan(30 * MS, &s, ACK).hedge, [want(0)]);
    }

    #[test]
    fn asks_of_our_own_rank_to_ourselves_never_time_out() {
        let mut f = Fetches::new(ReplicaId::new(1, 0));
        f.insert(
            want(0),
            Pending::new(Duration::MAX, Some(Duration::ZERO), false),
        );
        let req = f.new_req();
        if let Some(p) = f.get_mut(&want(0)) {
            p.record_ask(0, req, Duration::ZERO, false);
        }
        assert_eq!(
            f.next_deadline(&Silence::default(), ACK),
            Some(Duration::MAX)
        );
    }

    #[test]
    fn a_new_ask_replaces_a_settled_one_to_the_same_replica() {
        let mut p = Pending::new(Duration::MAX, Some(Duration::ZERO), false);
        p.record_ask(1, ReqId(1), Duration::ZERO, false);
        p.asks[0].state = AskState::Silent;
        p.record_ask(1, ReqId(2), 5 * MS, false);
        assert_eq!(p.asks.len(), 1);
        assert_eq!(p.asks[0].req, ReqId(2));
        // A hedge keeps an ask that is still outstanding.
        p.record_ask(1, ReqId(3), 6 * MS, true);
        assert_eq!(p.replicas(Ask::outstanding), [1, 1]);
    }

    /// Asserts what `next_deadline` promises: never later than the walk, the same after
    /// `refresh`, and parked asks counted exactly.
    fn check(f: &mut Fetches, s: &Silence) {
        let walk = f.walk_deadline(s, ACK);
        let next = f.next_deadline(s, ACK);
        assert_eq!(next.is_none(), walk.is_none());
        assert!(next <= walk, "{next:?} later than {walk:?}");
        f.refresh();
        assert_eq!(f.next_deadline(s, ACK), walk);
        let mut counted: Vec<(ReplicaId, u32)> = f.parked.to_vec();
        let mut walked: Vec<(ReplicaId, u32)> = Vec::new();
        for (w, p) in f.iter() {
            for a in &p.asks {
                let peer = ReplicaId::new(w.src(), a.replica);
                if a.state == AskState::Parked && peer != f.me {
                    match walked.iter_mut().find(|(q, _)| *q == peer) {
                        Some(e) => e.1 += 1,
                        None => walked.push((peer, 1)),
                    }
                }
            }
        }
        counted.sort();
        walked.sort();
        assert_eq!(counted, walked);
        let sent = f
            .iter()
            .flat_map(|(w, p)| p.asks.iter().map(move |a| (w, a)))
            .filter(|(w, a)| {
                matches!(a.state, AskState::Sent { .. })
                    && ReplicaId::new(w.src(), a.replica) != f.me
            })
            .count();
        assert_eq!(f.sent, sent);
        let hedged = f
            .iter()
            .filter(|(_, p)| p.hedge_at != Duration::MAX)
            .count();
        assert_eq!(f.hedged, hedged);
    }

    fn ask(f: &mut Fetches, seq: u64, replica: u32, state: AskState) {
        let req = f.new_req();
        if let Some(p) = f.get_mut(&want(seq)) {
            p.asks.push(Ask {
                replica,
                req,
                state,
            });
        }
    }

    fn set_state(f: &mut Fetches, seq: u64, replica: u32, state: AskState) {
        if let Some(p) = f.get_mut(&want(seq)) {
            for a in p.asks.iter_mut().filter(|a| a.replica == replica) {
                a.state = state;
            }
        }
    }

    #[test]
    fn a_parked_ask_follows_its_peers_silence_and_leaves_with_its_fetch() {
        let mut f = fetches_with(&[(0, 1, AskState::Sent { at: 10 * MS })]);
        let mut s = Silence::default();
        s.heard(ReplicaId::new(1, 1), 5 * MS);
        assert_eq!(f.next_deadline(&s, ACK), Some(110 * MS));
        // The sender parks it: half an ack timeout after it was last heard from.
        set_state(&mut f, 0, 1, AskState::Parked);
        assert_eq!(f.next_deadline(&s, ACK), Some(55 * MS));
        check(&mut f, &s);
        // Heard again: later; asked again since: the whole timeout.
        s.heard(ReplicaId::new(1, 1), 30 * MS);
        assert_eq!(f.next_deadline(&s, ACK), Some(80 * MS));
        s.pinged(ReplicaId::new(1, 1), 80 * MS);
        assert_eq!(f.next_deadline(&s, ACK), Some(130 * MS));
        // A second fetch parked at the same peer, and another fetch still asking.
        f.insert(want(1), Pending::new(Duration::MAX, None, false));
        ask(&mut f, 1, 1, AskState::Parked);
        f.insert(want(2), Pending::new(Duration::MAX, None, false));
        ask(&mut f, 2, 0, AskState::Sent { at: 100 * MS });
        check(&mut f, &s);
        // The parked ones go (answered, or their fetch taken): only the other is left.
        f.remove(&want(0));
        set_state(&mut f, 1, 1, AskState::Gone);
        // (The fetch just changed counts its parked asks at the table's next change.)
        assert!(f.next_deadline(&s, ACK) <= Some(200 * MS));
        check(&mut f, &s);
        assert_eq!(f.next_deadline(&s, ACK), Some(200 * MS));
    }

    #[test]
    fn a_hedge_moved_earlier_shows_at_once_and_one_moved_later_after_its_turn() {
        let mut f = fetches_with(&[(0, 1, AskState::Parked)]);
        let mut s = Silence::default();
        s.pinged(ReplicaId::new(1, 1), Duration::ZERO);
        if let Some(p) = f.get_mut(&want(0)) {
            p.hedge_at = 30 * MS;
        }
        assert_eq!(f.next_deadline(&s, ACK), Some(30 * MS));
        // The hedge turn moves it on: until the turn's refresh the old one may show.
        if let Some(p) = f.get_mut(&want(0)) {
            p.hedge_at = 230 * MS;
        }
        assert!(f.next_deadline(&s, ACK) <= Some(100 * MS));
        f.refresh_if_passed(30 * MS, ACK);
        assert_eq!(f.next_deadline(&s, ACK), Some(100 * MS));
        s.heard(ReplicaId::new(1, 1), 90 * MS);
        assert_eq!(f.next_deadline(&s, ACK), Some(140 * MS));
        check(&mut f, &s);
    }

    #[test]
    fn a_silent_replicas_ask_stops_counting_and_a_new_ask_does() {
        let mut f = fetches_with(&[(0, 0, AskState::Sent { at: 10 * MS })]);
        let s = Silence::default();
        assert_eq!(f.next_deadline(&s, ACK), Some(110 * MS));
        // Silent: its deadline is gone once a turn passed it.
        set_state(&mut f, 0, 0, AskState::Silent);
        f.refresh_if_passed(110 * MS, ACK);
        assert_eq!(f.next_deadline(&s, ACK), Some(Duration::MAX));
        // Another replica is asked (a hedge keeps the first ask).
        let req = f.new_req();
        if let Some(p) = f.get_mut(&want(0)) {
            p.record_ask(1, req, 110 * MS, true);
        }
        assert_eq!(f.next_deadline(&s, ACK), Some(210 * MS));
        check(&mut f, &s);
        // Answered: with no unanswered ask left, its floor goes at the next change.
        set_state(&mut f, 0, 1, AskState::Gone);
        f.insert(want(1), Pending::new(Duration::MAX, None, false));
        assert_eq!(f.next_deadline(&s, ACK), Some(Duration::MAX));
        f.remove(&want(1));
        // The fetch ends: nothing is due any more.
        f.remove(&want(0));
        assert_eq!(f.next_deadline(&s, ACK), None);
        check(&mut f, &s);
    }

    #[test]
    fn asks_removed_leave_an_early_deadline_until_refreshed_and_never_a_late_one() {
        let mut f = fetches_with(&[
            (0, 1, AskState::Sent { at: 10 * MS }),
            (1, 1, AskState::Sent { at: 20 * MS }),
        ]);
        let s = Silence::default();
        assert_eq!(f.next_deadline(&s, ACK), Some(110 * MS));
        f.remove(&want(0));
        assert!(f.next_deadline(&s, ACK) <= Some(120 * MS));
        f.refresh_if_passed(110 * MS, ACK);
        assert_eq!(f.next_deadline(&s, ACK), Some(120 * MS));
        // A fetch taken out and put back is counted again (its parked ask once).
        set_state(&mut f, 1, 1, AskState::Parked);
        let p = f.remove(&want(1));
        assert!(f.parked.is_empty());
        if let Some(p) = p {
            f.insert(want(1), p);
        }
        check(&mut f, &s);
    }

    #[test]
    fn the_deadline_is_never_later_than_the_walk_over_random_changes() {
        use rand::{Rng, SeedableRng};
        for seed in 0..40u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            // This replica is 1.0: asks to replica 0 of rank 1 are to ourselves.
            let mut f = Fetches::new(ReplicaId::new(1, 0));
            let mut s = Silence::default();
            let mut now = Duration::ZERO;
            for _ in 0..400 {
                now += MS * rng.random_range(0..20);
                let seq = rng.random_range(0..6u64);
                let src = rng.random_range(1..3u32);
                let w = test_want(src, 0, seq);
                let replica = rng.random_range(0..3u32);
                let state = match rng.random_range(0..6) {
                    0 | 1 => AskState::Sent { at: now },
                    2 => AskState::Parked,
                    3 => AskState::Silent,
                    4 => AskState::Gone,
                    _ => AskState::Dropped,
                };
                match rng.random_range(0..12) {
                    0 => {
                        let hedge = if rng.random_bool(0.5) {
                            now + 200 * MS
                        } else {
                            Duration::MAX
                        };
                        f.insert(w, Pending::new(hedge, None, false));
                    }
                    1 => {
                        f.remove(&w);
                    }
                    2 | 3 => {
                        let req = f.new_req();
                        let keep = rng.random_bool(0.5);
                        if let Some(p) = f.get_mut(&w) {
                            p.record_ask(replica, req, now, keep);
                        }
                    }
                    4 | 5 => {
                        if let Some(p) = f.get_mut(&w) {
                            if let Some(a) = p.asks.iter_mut().find(|a| a.replica == replica) {
                                a.state = state;
                            }
                        }
                    }
                    6 => {
                        if let Some(p) = f.get_mut(&w) {
                            p.hedge_at = now + MS * rng.random_range(0..300);
                        }
                    }
                    7 => {
                        if let Some(p) = f.get_mut(&w) {
                            p.asks.clear();
                        }
                    }
                    8 => s.heard(ReplicaId::new(src, replica), now),
                    9 => s.pinged(ReplicaId::new(src, replica), now),
                    10 => {
                        if s.tick(now, ACK).is_some() {
                            f.resync(now);
                        }
                    }
                    _ => f.refresh_if_passed(now, ACK),
                }
                let walk = f.walk_deadline(&s, ACK);
                let next = f.next_deadline(&s, ACK);
                assert!(next <= walk, "seed {seed}: {next:?} later than {walk:?}");
                assert_eq!(next.is_none(), walk.is_none());
                // A turn at the deadline it gave finds it passed and refreshes; one at the
                // walk's sees the same floors or earlier.
                if rng.random_bool(0.1) {
                    check(&mut f, &s);
                }
            }
        }
    }
}
