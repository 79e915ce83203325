//! Choices that must be equal in every replica of a rank: which message an `ANY_SOURCE`
//! receive or probe matches, what an immediate probe saw, which requests `wait_any` and
//! `test_some` report. Owns who makes them, where they are kept, and the takeover when the
//! replica that made them dies. Must never do I/O: the engine moves its frames.
//!
//! Every coordinated call gets the next slot number of its rank (the k-th such call in
//! program order, the same in every replica). The *leader*, the oldest replica of the
//! rank the launcher has not declared dead, makes each choice when its application reaches
//! the call and records it. Replicas are ordered by their *ordinal*, incarnation times
//! replicas plus index: first incarnations by index, and a regenerated incarnation after
//! every sibling older than it, so it never leads while one of them lives. Followers pull slot k from the leader like a message (key:
//! `DECISION_CTX`, tag 0, src = dst = the rank, seq = k) and keep what they got. A follower
//! whose leader is unreachable or silent asks the launcher to fence it (kill it and
//! announce its death), so two replicas never choose at once.
//!
//! Followers keep a pull for the next slot standing at the leader, so they hold each
//! choice one hop after it is made, however far behind their application runs.
//!
//! A message a replica sends after following slot k may depend on that choice. Each
//! replica reports the slots it holds with CONSUMED frames; slots every live sibling
//! holds are *stable*. A message that depends on unstable choices carries them (a
//! CHOICES frame just before its DATA, see `foreign`), so whoever may depend on a choice
//! holds it, and goes out at once. Only when it would carry more than
//! `CHOICES_CARRIED_MAX` of them is it held back until they are stable (output commit).
//!
//! A replica that becomes leader after a death has not seen every choice the dead leader
//! made: first it sends TAKEOVER to every live replica of the job, siblings and others,
//! which answer with every choice of the rank they hold (DECIDED) and from then on ignore
//! choices from replicas below the new leader. Only when every live replica answered (or
//! died) does the new leader choose anything itself.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};

use super::foreign::{decode_entries, encode_entries};
use crate::message::{Key, ReplicaId};

/// Context id of choice slots; never a communicator's (those are 31-bit hashes, plus one).
pub const DECISION_CTX: u32 = u32::MAX;

/// The key slot `slot` of `rank`'s choices is pulled under.
pub fn slot_key(rank: u32, slot: u64) -> Key {
    Key {
        comm: DECISION_CTX,
        tag: 0,
        src: rank,
        dst: rank,
        seq: slot,
    }
}

/// Who makes this rank's choices, as this replica sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authority {
    /// Replica `leader` chooses; this one pulls its choices.
    Follower {
        /// Replica index of the leader.
        leader: u32,
    },
    /// This replica will lead once the listed replicas told it what they hold.
    TakingOver {
        /// Replicas (siblings and others) that have not answered TAKEOVER yet.
        waiting: Vec<ReplicaId>,
        /// When the takeover started (for the answer timeout).
        since: Duration,
    },
    /// This replica chooses.
    Leader,
}

/// Where a slot stands at this replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Slot {
    /// Recorded here.
    Held(Bytes),
    /// Was here, evicted since.
    Evicted,
    /// Not known here yet.
    Unknown,
}

/// The choice state of one replica.
#[derive(Debug)]
pub struct Decisions {
    me: ReplicaId,
    replicas: u32,
    enabled: bool,
    next_slot: u64,
    held: BTreeMap<u64, Bytes>,
    evicted_below: u64,
    /// Per sibling: every slot below this arrived there (`u64::MAX` once it is dead, and
    /// for this replica itself).
    marks: Vec<u64>,
    /// Slots this replica followed or chose: every one below `used_below`, and these.
    used_below: u64,
    used_above: BTreeSet<u64>,
    /// Replicas the launcher declared dead.
    dead: Vec<bool>,
    authority: Authority,
    /// Choices from replicas whose ordinal is below this are ignored (a takeover fenced
    /// them).
    fenced_below: u32,
    held_max: usize,
    /// Incarnation of every sibling (see `ordinal`).
    incs: Vec<u32>,
    /// Keep slots for regenerated siblings replaying the program (up to `held_max`).
    retain: bool,
}

/// The order of replica `index` in incarnation `inc` among the `replicas` of its rank:
/// leadership goes to the lowest live ordinal, and a takeover fences lower ones.
pub fn ordinal(inc: u32, index: u32, replicas: u32) -> u32 {
    inc.saturating_mul(replicas).saturating_add(index)
}

impl Decisions {
    /// Choice state of replica `me`; `enabled` is false when no coordination is needed (one
    /// replica per rank, or a program declared send-deterministic).
    pub fn new(me: ReplicaId, replicas: u32, enabled: bool, held_max: usize) -> Decisions {
        let mut marks = vec![0; replicas as usize];
        if let Some(m) = marks.get_mut(me.replica as usize) {
            *m = u64::MAX;
        }
        Decisions {
            me,
            replicas,
            enabled,
            next_slot: 0,
            held: BTreeMap::new(),
            evicted_below: 0,
            marks,
            used_below: 0,
            used_above: BTreeSet::new(),
            dead: vec![false; replicas as usize],
            authority: if me.replica == 0 {
                Authority::Leader
            } else {
                Authority::Follower { leader: 0 }
            },
            fenced_below: 0,
            held_max: held_max.max(1),
            incs: vec![0; replicas as usize],
            retain: false,
        }
    }

    /// Keeps every slot (up to the bound) for regenerated siblings that replay the
    /// program from its start.
    pub fn retaining(mut self) -> Self {
        self.retain = true;
        self
    }

    /// Siblings are in incarnations `incs` (this replica joins in its own): the oldest
    /// leads.
    pub fn in_incarnations(mut self, incs: &[u32]) -> Self {
        for (slot, &i) in self.incs.iter_mut().zip(incs) {
            *slot = i;
        }
        let leader = self.oldest_live().unwrap_or(self.me.replica);
        self.authority = if leader == self.me.replica {
            Authority::Leader
        } else {
            Authority::Follower { leader }
        };
        self
    }

    fn ord(&self, k: u32) -> u32 {
        ordinal(
            self.incs.get(k as usize).copied().unwrap_or(0),
            k,
            self.replicas,
        )
    }

    /// The live sibling (or this replica) with the lowest ordinal.
    fn oldest_live(&self) -> Option<u32> {
        (0..self.replicas)
            .filter(|&k| !self.dead[k as usize])
            .min_by_key(|&k| self.ord(k))
    }

    /// A new incarnation `inc` of sibling `replica` joins: it is live again, ordered after
    /// every older sibling, and a choice is stable only once it holds it too (it pulls
    /// them all from the start): were its leader to die, it must find every choice it
    /// lacks with someone.
    pub fn on_joining(&mut self, replica: u32, inc: u32) {
        let i = replica as usize;
        if i >= self.dead.len() || replica == self.me.replica {
            return;
        }
        self.incs[i] = inc;
        self.dead[i] = false;
        self.marks[i] = 0;
    }

    /// Slot numbering for a snapshot: next slot, used below, used above.
    pub fn counters(&self) -> (u64, u64, Vec<u64>) {
        (
            self.next_slot,
            self.used_below,
            self.used_above.iter().copied().collect(),
        )
    }

    /// Continues the slot numbering from a snapshot's `counters`.
    pub fn restore_counters(&mut self, next: u64, used_below: u64, used_above: &[u64]) {
        self.next_slot = next;
        self.used_below = used_below;
        self.used_above = used_above.iter().copied().collect();
    }

    /// Whether coordinated calls need slots at all.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The slot of the next coordinated call.
    pub fn next_slot(&mut self) -> u64 {
        let s = self.next_slot;
        self.next_slot += 1;
        s
    }

    /// Who chooses.
    pub fn authority(&self) -> &Authority {
        &self.authority
    }

    /// True when this replica chooses.
    pub fn is_leader(&self) -> bool {
        self.authority == Authority::Leader
    }

    /// Where `slot` stands here.
    pub fn slot(&self, slot: u64) -> Slot {
        match self.held.get(&slot) {
            Some(b) => Slot::Held(b.clone()),
            None if slot < self.evicted_below => Slot::Evicted,
            None => Slot::Unknown,
        }
    }

    /// This replica acted on slot `slot` (followed or made it).
    pub fn mark_used(&mut self, slot: u64) {
        if slot < self.used_below {
            return;
        }
        self.used_above.insert(slot);
        while self.used_above.remove(&self.used_below) {
            self.used_below += 1;
        }
    }

    /// How many choices a message sent now may depend on: one past the highest slot used.
    pub fn used_bound(&self) -> u64 {
        self.used_above
            .last()
            .map_or(self.used_below, |&m| m + 1)
            .max(self.used_below)
    }

    /// Every live sibling holds every slot below this (`u64::MAX` with none left).
    pub fn stable(&self) -> u64 {
        self.marks.iter().copied().min().unwrap_or(u64::MAX)
    }

    /// The replica that vouches for the choices this one holds: its leader (itself while
    /// it leads or takes over), or a newer one whose takeover it answered.
    pub fn term(&self) -> u32 {
        let leader = match self.authority {
            Authority::Follower { leader } => leader,
            Authority::TakingOver { .. } | Authority::Leader => self.me.replica,
        };
        self.ord(leader).max(self.fenced_below)
    }

    /// The unstable choices a message depending on every slot below `bound` must carry
    /// (`Some(empty)` if none), or `None` if there are more than `max` or one is no longer
    /// held here: then it must wait until they are stable.
    pub fn unstable(&self, bound: u64, max: usize) -> Option<Bytes> {
        let stable = self.stable();
        self.can_carry(bound, max)
            .then(|| encode_entries(self.held.range(stable..bound.max(stable))))
    }

    /// Whether `unstable(bound, max)` is `Some`, without encoding anything.
    pub fn can_carry(&self, bound: u64, max: usize) -> bool {
        let stable = self.stable();
        bound <= stable
            || (bound - stable <= max as u64
                && self.held.range(stable..bound).count() as u64 == bound - stable)
    }

    /// Live siblings holding fewer than `bound` slots.
    pub fn lagging(&self, bound: u64) -> Vec<u32> {
        (0..self.replicas)
            .filter(|&k| self.marks[k as usize] < bound)
            .collect()
    }

    /// The leader records its choice for `slot`; false if the slot was known already.
    pub fn record(&mut self, slot: u64, value: Bytes) -> bool {
        if self.held.contains_key(&slot) || slot < self.evicted_below {
            return false;
        }
        self.held.insert(slot, value);
        true
    }

    /// A choice pulled from replica `from`; false if ignored (fenced sender, or known).
    pub fn adopt(&mut self, slot: u64, value: Bytes, from: u32) -> bool {
        if self.ord(from) < self.fenced_below {
            log::debug!(
                "{}: choice {slot} from fenced replica {from} ignored",
                self.me
            );
            return false;
        }
        self.record(slot, value)
    }

    /// The launcher declared sibling `replica` dead. If this replica must now take over,
    /// returns the replicas to send TAKEOVER to: its live siblings and `others`, the live
    /// replicas of other ranks (possibly none: then it leads at once).
    pub fn on_dead(
        &mut self,
        replica: u32,
        now: Duration,
        others: impl Iterator<Item = ReplicaId>,
    ) -> Option<Vec<ReplicaId>> {
        let i = replica as usize;
        if i >= self.dead.len() || self.dead[i] || replica == self.me.replica {
            return None;
        }
        self.dead[i] = true;
        self.marks[i] = u64::MAX;
        self.evict();
        let lowest = self.oldest_live()?;
        match &mut self.authority {
            Authority::Leader => None,
            Authority::TakingOver { .. } => {
                self.forget(ReplicaId::new(self.me.rank, replica));
                None
            }
            Authority::Follower { .. } if lowest == self.me.replica => {
                let rank = self.me.rank;
                let asked: Vec<ReplicaId> = (0..self.replicas)
                    .filter(|&k| k != self.me.replica && !self.dead[k as usize])
                    .map(|k| ReplicaId::new(rank, k))
                    .chain(others.filter(|p| p.rank != rank))
                    .collect();
                log::info!(
                    "{}: leader of rank {rank}'s choices is dead; taking over (asking {} replicas)",
                    self.me,
                    asked.len()
                );
                self.authority = if asked.is_empty() {
                    Authority::Leader
                } else {
                    Authority::TakingOver {
                        waiting: asked.clone(),
                        since: now,
                    }
                };
                Some(asked)
            }
            Authority::Follower { .. } => {
                self.authority = Authority::Follower { leader: lowest };
                None
            }
        }
    }

    /// Replica `peer` (of any rank) died: a takeover no longer waits for its answer.
    /// True if that completed the takeover.
    pub fn forget(&mut self, peer: ReplicaId) -> bool {
        let Authority::TakingOver { waiting, .. } = &mut self.authority else {
            return false;
        };
        waiting.retain(|&p| p != peer);
        if waiting.is_empty() {
            log::info!("{}: now leads rank {}'s choices", self.me, self.me.rank);
            self.authority = Authority::Leader;
            return true;
        }
        false
    }

    /// Sibling `from` takes over: fence every sibling ordered before it; the entries it
    /// asked for.
    pub fn on_takeover(&mut self, from: u32, base: u64) -> Bytes {
        self.fenced_below = self.fenced_below.max(self.ord(from));
        encode_entries(self.held.range(base..))
    }

    /// Replica `from` (a sibling, or a replica of another rank) answered TAKEOVER.
    /// Returns the slots newly adopted, or an error for entries that do not decode.
    pub fn on_decided(&mut self, from: ReplicaId, entries: &Bytes) -> Result<Vec<u64>, String> {
        let Authority::TakingOver { waiting, .. } = &mut self.authority else {
            return Ok(Vec::new());
        };
        if !waiting.contains(&from) {
            return Ok(Vec::new());
        }
        // Decode before changing anything: a bad answer leaves the sibling owing one.
        let entries = decode_entries(entries)?;
        waiting.retain(|&k| k != from);
        if waiting.is_empty() {
            log::info!("{}: now leads rank {}'s choices", self.me, self.me.rank);
            self.authority = Authority::Leader;
        }
        let mut adopted = Vec::new();
        for (slot, v) in entries {
            if self.record(slot, v) {
                adopted.push(slot);
            }
        }
        Ok(adopted)
    }

    /// Replicas still owing a TAKEOVER answer past `timeout` (to be fenced); the timeout
    /// starts over.
    pub fn overdue(&mut self, now: Duration, timeout: Duration) -> Vec<ReplicaId> {
        match &mut self.authority {
            Authority::TakingOver { waiting, since } if now >= *since + timeout => {
                *since = now;
                waiting.clone()
            }
            Authority::TakingOver { .. } | Authority::Follower { .. } | Authority::Leader => {
                Vec::new()
            }
        }
    }

    /// Restarts the takeover answer timeout (this process was not running).
    pub fn restart_clock(&mut self, now: Duration) {
        if let Authority::TakingOver { since, .. } = &mut self.authority {
            *since = now;
        }
    }

    /// When the takeover answer timeout fires, if one runs.
    pub fn deadline(&self, timeout: Duration) -> Option<Duration> {
        match &self.authority {
            Authority::TakingOver { since, .. } => Some(*since + timeout),
            Authority::Follower { .. } | Authority::Leader => None,
        }
    }

    /// Sibling `replica` holds every slot below `watermark`. Returns whether that moved
    /// `stable`.
    pub fn note_held(&mut self, replica: u32, watermark: u64) -> bool {
        let before = self.stable();
        if let Some(m) = self.marks.get_mut(replica as usize) {
            if *m != u64::MAX && watermark > *m {
                *m = watermark;
            }
        }
        self.evict();
        self.stable() != before
    }

    /// Drops what no live replica still needs (every sibling holds it and this replica
    /// used it), and the oldest used ones beyond the bound.
    fn evict(&mut self) {
        let used = self.used_below;
        if !self.retain {
            self.evict_below(self.stable().min(used));
        }
        while self.held.len() > self.held_max {
            match self.held.first_key_value() {
                Some((&first, _)) if first < used => self.evict_below(first + 1),
                _ => break,
            }
        }
    }

    fn evict_below(&mut self, bound: u64) {
        if bound <= self.evicted_below {
            return;
        }
        self.held = self.held.split_off(&bound);
        self.evicted_below = bound;
    }
}

/// A matching choice as bytes: empty for "nothing", else source and tag.
pub fn encode_match(choice: Option<(u32, i32)>) -> Bytes {
    match choice {
        None => Bytes::new(),
        Some((src, tag)) => {
            let mut b = BytesMut::with_capacity(8);
            b.put_u32_le(src);
            b.put_i32_le(tag);
            b.freeze()
        }
    }
}

/// The value of an `ANY_SOURCE` receive's slot when the leader cancelled the receive
/// before choosing its match (MPI_Cancel): one byte, neither a match (0 or 8 bytes) nor
/// request indices (4 bytes each). A follower's receive stays unresolved on it until its
/// own application cancels the receive too.
pub const CANCELLED_MATCH: &[u8] = b"C";

/// Decodes `encode_match`; `None` (outer) for bytes that are neither form.
pub fn decode_match(b: &[u8]) -> Option<Option<(u32, i32)>> {
    match b.len() {
        0 => Some(None),
        8 => {
            let src = u32::from_le_bytes(b[..4].try_into().ok()?);
            let tag = i32::from_le_bytes(b[4..].try_into().ok()?);
            Some(Some((src, tag)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_live_replica_leads_and_takes_over_after_asking() {
        let mut d = Decisions::new(ReplicaId::new(3, 1), 3, true, 100);
        assert_eq!(d.authority(), &Authority::Follower { leader: 0 });
        assert!(d.adopt(0, encode_match(Some((1, 2))), 0));
        let t = Duration::from_secs(1);
        let other = ReplicaId::new(1, 0);
        let (sib, none) = (ReplicaId::new(3, 2), Vec::<ReplicaId>::new());
        // The replicas of other ranks are asked too (any of them may hold choices).
        assert_eq!(
            d.on_dead(0, t, [other, ReplicaId::new(3, 2)].into_iter()),
            Some(vec![sib, other])
        );
        assert!(!d.is_leader());
        assert_eq!(d.overdue(t, Duration::from_secs(2)), none);
        assert_eq!(d.overdue(t * 3, Duration::from_secs(2)), vec![sib, other]);
        assert_eq!(d.overdue(t * 3, Duration::from_secs(2)), none);
        assert!(!d.forget(other), "the sibling has not answered yet");
        // Sibling 2 held slot 1 from the dead leader: it is adopted, not chosen anew.
        let mut sibling = Decisions::new(ReplicaId::new(3, 2), 3, true, 100);
        sibling.adopt(1, encode_match(None), 0);
        let entries = sibling.on_takeover(1, 1);
        assert!(
            !sibling.adopt(2, encode_match(None), 0),
            "fenced below replica 1"
        );
        assert_eq!(d.on_decided(sib, &entries), Ok(vec![1]));
        assert!(d.is_leader());
        assert_eq!(d.slot(1), Slot::Held(encode_match(None)));
        assert!(
            !d.record(1, encode_match(Some((0, 0)))),
            "never chosen twice"
        );
    }

    #[test]
    fn held_and_used_slots_are_evicted_and_stability_follows_siblings() {
        let mut d = Decisions::new(ReplicaId::new(0, 0), 3, true, 2);
        for s in 0..4 {
            d.record(s, encode_match(None));
            d.mark_used(s);
        }
        assert_eq!((d.used_bound(), d.stable()), (4, 0));
        assert!(!d.note_held(1, 3), "replica 2 holds nothing yet");
        assert!(d.note_held(2, 2));
        assert_eq!(d.stable(), 2);
        assert_eq!(d.lagging(3), vec![2]);
        assert_eq!(d.slot(1), Slot::Evicted);
        assert_eq!(d.slot(2), Slot::Held(Bytes::new()));
        d.on_dead(2, Duration::ZERO, std::iter::empty());
        assert_eq!(d.stable(), 3);
    }

    #[test]
    fn unused_slots_stay_however_far_siblings_are() {
        let mut d = Decisions::new(ReplicaId::new(0, 1), 2, true, 1);
        for s in 0..3 {
            d.adopt(s, encode_match(None), 0);
        }
        d.note_held(0, 3);
        assert_eq!(d.slot(0), Slot::Held(Bytes::new()), "not used here yet");
        d.mark_used(0);
        d.note_held(0, 3);
        assert_eq!(d.slot(0), Slot::Evicted);
        assert_eq!(d.slot(1), Slot::Held(Bytes::new()));
    }

    #[test]
    fn malformed_entries_are_errors() {
        let mut d = Decisions::new(ReplicaId::new(0, 1), 2, true, 10);
        d.on_dead(0, Duration::ZERO, std::iter::empty());
        assert!(
            d.on_decided(ReplicaId::new(0, 1), &Bytes::from_static(&[1, 2, 3]))
                .is_ok(),
            "not waiting for replica 1"
        );
        let mut e = Decisions::new(ReplicaId::new(0, 1), 3, true, 10);
        e.on_dead(0, Duration::ZERO, std::iter::empty());
        let mut bad = 5u64.to_le_bytes().to_vec();
        bad.extend_from_slice(&100u32.to_le_bytes());
        assert!(e
            .on_decided(ReplicaId::new(0, 2), &Bytes::from(bad))
            .is_err());
        assert_eq!(decode_match(&[1, 2, 3]), None);
        assert_eq!(
            decode_match(&encode_match(Some((4, -1)))),
            Some(Some((4, -1)))
        );
    }
}
