//! Synchronous sends (MPI_Ssend, MPI-3.1 section 3.4): a send that completes only once
//! the matching receive has started.
//!
//! A pull alone cannot say that: receivers pull ahead of their receives, and under
//! replication each receiver replica pulls from one replica of the sender, so a sender
//! replica whose partner died would never hear. Instead the message says it is
//! synchronous (DATA with `FLAG_SYNC`: the sender log keeps the flag with the message, so
//! every replica that serves it says so, also one whose own send completed long ago),
//! and the receiver, once one of its receives claimed
//! it (posted receives claim their messages in order, arrived or not; a matched probe
//! claims too, a probe does not), tells *every* replica of the sender with MATCHED.
//!
//! A sender replica completes its send on the MATCHED of its own team's receiver (the
//! one that pulls from it), or once every live, caught-up replica of the receiver sent
//! one. Not on any MATCHED: a replica behind its sibling would find its send complete
//! where, in its own run, the receive could not have started yet (another team's
//! receiver went on with the sibling's messages, and claimed it early). Not only on its
//! team's: when that receiver replica dies, the others claim the same message and say
//! so, and nobody is held back. MATCHEDs that come before the send is made (the replica
//! is behind) are kept for it.
//!
//! A regenerated sender replica replays sends whose receives were claimed before it
//! existed, so no MATCHED will come: for it, a receiver replica's report that it received
//! the message (CONSUMED) completes the send too. All replicas of the receiver lost
//! completes it with an error.
//!
//! Owns the sender's synchronous sends in flight and the receiver's synchronous messages
//! not claimed yet. Must never hold back or reorder a message: synchronous is a property
//! of completion only.

use super::Engine;
use crate::message::matching::Matcher;
use crate::message::{Key, Map, ReplicaId, SendLog, Set};

/// Where a synchronous send stands (`Engine::match_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchState {
    /// No receive has claimed it yet, as far as this replica knows.
    Waiting,
    /// A receive claimed it: the send is complete.
    Matched,
    /// Every replica of its destination is gone.
    Lost,
}

/// A synchronous send of this replica, or MATCHEDs that came before it.
#[derive(Debug, Clone, Default)]
struct Pending {
    /// Its order number among the sends to its destination on its communicator.
    order: u64,
    /// This replica made the send (`expect_match`).
    made: bool,
    /// The replicas of the destination whose MATCHED came.
    matched: Vec<u32>,
}

/// Both sides' state.
#[derive(Debug, Default)]
pub(super) struct Synchronous {
    /// Sender: synchronous sends not complete here yet, and MATCHEDs for sends not made.
    sending: Map<Key, Pending>,
    /// Receiver: synchronous messages that arrived and that no receive claimed yet.
    unclaimed: Set<Key>,
}

impl Synchronous {
    /// Whether this replica made the message `key` as a synchronous send that is still
    /// in flight: its DATA frames carry `FLAG_SYNC`.
    #[inline]
    pub(super) fn is_made(&self, key: &Key) -> bool {
        !self.sending.is_empty() && self.sending.get(key).is_some_and(|p| p.made)
    }

    /// A MATCHED from `from` to `me`: a receive of its rank claimed our message `key`
    /// (`log` says which sends `me` made already).
    pub(super) fn on_matched(&mut self, me: ReplicaId, log: &SendLog, from: ReplicaId, key: Key) {
        if key.src != me.rank || key.dst != from.rank {
            log::warn!("{me}: MATCHED {key} from {from} is not for us; dropped");
            return;
        }
        if let Some(p) = self.sending.get_mut(&key) {
            if !p.matched.contains(&from.replica) {
                p.matched.push(from.replica);
            }
            return;
        }
        // Not sent here yet (this replica is behind the one the receiver pulled from):
        // kept for `expect_match`. Anything else is a send complete here already.
        let (next, _) = log.peek_next(key.comm, key.tag, key.src, key.dst);
        if key.seq >= next.seq {
            self.sending.insert(
                key,
                Pending {
                    matched: vec![from.replica],
                    ..Pending::default()
                },
            );
        }
    }

    /// The synchronous message `key` arrived here (once: not a duplicate).
    pub(super) fn arrived(&mut self, key: Key) {
        self.unclaimed.insert(key);
    }

    /// The synchronous messages a receive claimed since they arrived, forgotten here:
    /// their senders are told MATCHED.
    pub(super) fn take_claimed<E: Clone>(&mut self, matcher: &Matcher<E>) -> Vec<Key> {
        if self.unclaimed.is_empty() {
            return Vec::new();
        }
        let claimed: Vec<Key> = self
            .unclaimed
            .iter()
            .filter(|k| matcher.next_claim(k.comm, k.tag, k.src) > k.seq)
            .copied()
            .collect();
        for key in &claimed {
            self.unclaimed.remove(key);
        }
        claimed
    }
}

impl Engine {
    /// Makes the next send to (comm, tag, dst) synchronous: its DATA frames ask the
    /// receiver for MATCHED (see `match_state`). Returns its key.
    pub fn expect_match(&mut self, comm: u32, tag: i32, dst: u32) -> Key {
        let (key, order) = self.log.peek_next(comm, tag, self.me.rank, dst);
        let p = self.sync.sending.entry(key).or_default();
        p.order = order;
        p.made = true;
        key
    }

    /// Whether the message `key` of this replica is a synchronous send in flight (its
    /// DATA frames carry `FLAG_SYNC`).
    pub fn is_synchronous(&self, key: &Key) -> bool {
        self.sync.is_made(key)
    }

    /// Where synchronous send `key` (see `expect_match`) stands.
    pub fn match_state(&self, key: &Key) -> MatchState {
        let Some(p) = self.sync.sending.get(key) else {
            return MatchState::Matched;
        };
        // Its own team's receiver, or every live caught-up one (module doc).
        let everyone = || {
            (0..self.replicas)
                .filter(|&k| self.liveness.is_candidate(ReplicaId::new(key.dst, k)))
                .all(|k| p.matched.contains(&k))
        };
        if p.matched.contains(&self.me.replica) || (!p.matched.is_empty() && everyone()) {
            return MatchState::Matched;
        }
        // A regenerated replica replays sends claimed before it joined (module doc).
        if self.incarnation_of(self.me) > 0 && self.log.received_by_some(key.comm, key.dst, p.order)
        {
            return MatchState::Matched;
        }
        if !self.liveness.rank_alive(key.dst) {
            return MatchState::Lost;
        }
        MatchState::Waiting
    }

    /// The caller no longer waits for synchronous send `key` (it completed, or was
    /// cancelled or freed).
    pub fn forget_match(&mut self, key: &Key) {
        self.sync.sending.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::MatchState;
    use crate::config::Config;
    use crate::message::matching::{Matched, Mode, RecvSpec, Source, TagSel};
    use crate::message::ReplicaId;
    use crate::pull::Engine;
    use crate::wire::Frame;

    const NOW: Duration = Duration::from_secs(1);

    /// A job of 2 ranks x `replicas`, started: rank 0 sends, rank 1 receives.
    fn job(replicas: u32) -> Vec<(ReplicaId, Engine)> {
        let mut all: Vec<(ReplicaId, Engine)> = (0..2)
            .flat_map(|rank| (0..replicas).map(move |k| ReplicaId::new(rank, k)))
            .map(|id| (id, Engine::new(id, 2, replicas, Config::default())))
            .collect();
        for (_, e) in &mut all {
            e.start(NOW);
        }
        all
    }

    fn at(all: &mut [(ReplicaId, Engine)], id: ReplicaId) -> &mut Engine {
        &mut all
            .iter_mut()
            .find(|(i, _)| *i == id)
            .expect("in the job")
            .1
    }

    /// Moves every frame (deferred ones too) to its live destination until none is left;
    /// returns the MATCHED frames delivered, as (to, from).
    fn route(all: &mut [(ReplicaId, Engine)], dead: &[ReplicaId]) -> Vec<(ReplicaId, ReplicaId)> {
        let mut matched = Vec::new();
        loop {
            let mut moved = Vec::new();
            for (id, e) in all.iter_mut() {
                while let Some((to, f)) = e.poll_transmit().or_else(|| e.poll_deferred()) {
                    moved.push((*id, to, f));
                }
            }
            if moved.is_empty() {
                return matched;
            }
            for (from, to, f) in moved {
                if dead.contains(&to) || dead.contains(&from) {
                    continue;
                }
                if matches!(f, Frame::Matched { .. }) {
                    matched.push((to, from));
                }
                at(all, to).handle_frame(NOW, from, f);
            }
        }
    }

    fn exact(tag: i32) -> RecvSpec {
        RecvSpec {
            comm: 0,
            src: Source::Rank(0),
            tag: TagSel::Tag(tag),
        }
    }

    fn send_sync(e: &mut Engine, tag: i32) -> crate::message::Key {
        let key = e.expect_match(0, tag, 1);
        let sent = e
            .send(NOW, 0, tag, 1, Bytes::from_static(b"sync"))
            .expect("room");
        assert_eq!(sent, key);
        key
    }

    fn kill(all: &mut [(ReplicaId, Engine)], victim: ReplicaId) {
        for (id, e) in all.iter_mut() {
            if *id != victim {
                e.handle_peer_down(NOW, victim, true);
            }
        }
    }

    /// MPI-3.1 section 3.4: a synchronous send pulled ahead of its receive is not
    /// complete until the receive is posted; a probe does not complete it.
    #[test]
    fn pulled_ahead_is_not_matched_until_a_receive_claims_it() {
        let mut all = job(1);
        let (s, r) = (ReplicaId::new(0, 0), ReplicaId::new(1, 0));
        // A first message of the stream makes the receiver pull ahead for the next ones.
        at(&mut all, s)
            .send(NOW, 0, 5, 1, Bytes::from_static(b"plain"))
            .expect("room");
        let id = at(&mut all, r).post(NOW, exact(5), Mode::Receive);
        route(&mut all, &[]);
        assert!(at(&mut all, r).take(NOW, id).is_some());
        let key = send_sync(at(&mut all, s), 5);
        route(&mut all, &[]);
        assert_eq!(at(&mut all, s).match_state(&key), MatchState::Waiting);
        let probe = at(&mut all, r).post(NOW, exact(5), Mode::Probe);
        route(&mut all, &[]);
        assert!(matches!(
            at(&mut all, r).take(NOW, probe),
            Some(Ok(Matched::Message { .. }))
        ));
        assert_eq!(at(&mut all, s).match_state(&key), MatchState::Waiting);
        // The receive claims it: the message was here already, MATCHED goes at once.
        let id = at(&mut all, r).post(NOW, exact(5), Mode::Receive);
        let matched = route(&mut all, &[]);
        assert_eq!(matched, vec![(s, r)]);
        assert_eq!(at(&mut all, s).match_state(&key), MatchState::Matched);
        assert!(at(&mut all, r).take(NOW, id).is_some());
        at(&mut all, s).forget_match(&key);
        assert!(!at(&mut all, s).is_synchronous(&key));
    }

    /// A receive posted before the send claims the message before it arrives: MATCHED
    /// goes when it arrives, to every replica of the sender, each of which completes on
    /// it; the receiver replica that pulled from the other team's sender dies first.
    #[test]
    fn every_sender_replica_completes_when_a_receiver_replica_dies() {
        let mut all = job(2);
        let (s0, s1) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
        let (r0, r1) = (ReplicaId::new(1, 0), ReplicaId::new(1, 1));
        let ids: Vec<_> = [r0, r1]
            .iter()
            .map(|&r| (r, at(&mut all, r).post(NOW, exact(7), Mode::Receive)))
            .collect();
        route(&mut all, &[]);
        let k0 = send_sync(at(&mut all, s0), 7);
        let k1 = send_sync(at(&mut all, s1), 7);
        assert_eq!(k0, k1);
        // Replica 1.1 took its pull's answer from 0.1 and dies before it arrives.
        kill(&mut all, r1);
        route(&mut all, &[r1]);
        assert_eq!(at(&mut all, s0).match_state(&k0), MatchState::Matched);
        assert_eq!(at(&mut all, s1).match_state(&k1), MatchState::Matched);
        assert!(at(&mut all, r0).take(NOW, ids[0].1).is_some());
    }

    /// A sender replica behind its sibling gets MATCHED before it makes the send: it keeps
    /// it, and its send completes as soon as it is made.
    #[test]
    fn matched_before_the_send_is_kept() {
        let mut all = job(2);
        let (s0, s1) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
        let r0 = ReplicaId::new(1, 0);
        // Only team 0's receiver is alive: it pulls from 0.0.
        let r1 = ReplicaId::new(1, 1);
        kill(&mut all, r1);
        let id = at(&mut all, r0).post(NOW, exact(2), Mode::Receive);
        route(&mut all, &[r1]);
        let key = send_sync(at(&mut all, s0), 2);
        let matched = route(&mut all, &[r1]);
        assert!(matched.iter().any(|&(to, _)| to == s1), "{matched:?}");
        assert!(at(&mut all, r0).take(NOW, id).is_some());
        assert_eq!(send_sync(at(&mut all, s1), 2), key);
        assert_eq!(at(&mut all, s1).match_state(&key), MatchState::Matched);
        // A late MATCHED for a send complete already is not kept.
        at(&mut all, s1).forget_match(&key);
        at(&mut all, s1).handle_frame(NOW, r0, Frame::Matched { key });
        assert!(!at(&mut all, s1).is_synchronous(&key));
    }

    /// A sender replica behind its sibling: the receive its sibling's message let the
    /// other team's receiver post does not complete its send, made before or after that
    /// MATCHED came, while its own team's receiver has not posted yet; that one's
    /// MATCHED does.
    #[test]
    fn another_teams_matched_waits_for_the_own_teams() {
        let mut all = job(2);
        let (s0, s1) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
        let (r0, r1) = (ReplicaId::new(1, 0), ReplicaId::new(1, 1));
        let k0 = send_sync(at(&mut all, s0), 8);
        let k1 = send_sync(at(&mut all, s1), 8);
        route(&mut all, &[]);
        let id1 = at(&mut all, r1).post(NOW, exact(8), Mode::Receive);
        let matched = route(&mut all, &[]);
        assert!(matched.contains(&(s0, r1)), "{matched:?}");
        assert_eq!(at(&mut all, s1).match_state(&k1), MatchState::Matched);
        assert_eq!(at(&mut all, s0).match_state(&k0), MatchState::Waiting);
        let id0 = at(&mut all, r0).post(NOW, exact(8), Mode::Receive);
        route(&mut all, &[]);
        assert_eq!(at(&mut all, s0).match_state(&k0), MatchState::Matched);
        assert!(at(&mut all, r0).take(NOW, id0).is_some());
        assert!(at(&mut all, r1).take(NOW, id1).is_some());
    }

    /// The same with the MATCHED before the send.
    #[test]
    fn an_early_matched_waits_for_the_other_live_receivers() {
        let mut all = job(2);
        let (s0, s1) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
        let (r0, r1) = (ReplicaId::new(1, 0), ReplicaId::new(1, 1));
        let id1 = at(&mut all, r1).post(NOW, exact(3), Mode::Receive);
        route(&mut all, &[]);
        let key = send_sync(at(&mut all, s1), 3);
        route(&mut all, &[]);
        assert_eq!(at(&mut all, s1).match_state(&key), MatchState::Matched);
        assert!(at(&mut all, r1).take(NOW, id1).is_some());
        assert_eq!(send_sync(at(&mut all, s0), 3), key);
        route(&mut all, &[]);
        assert_eq!(at(&mut all, s0).match_state(&key), MatchState::Waiting);
        let id0 = at(&mut all, r0).post(NOW, exact(3), Mode::Receive);
        route(&mut all, &[]);
        assert_eq!(at(&mut all, s0).match_state(&key), MatchState::Matched);
        assert!(at(&mut all, r0).take(NOW, id0).is_some());
    }

    /// A sender replica that completed its send (and forgot it) still flags the message
    /// when it serves it, so a receiver replica that pulls it from there after failing
    /// over tells the sender's replicas (the one whose own team's receiver it is waits
    /// for exactly that).
    #[test]
    fn a_completed_send_is_still_served_as_synchronous() {
        let mut all = job(2);
        let (s0, s1) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
        let (r0, r1) = (ReplicaId::new(1, 0), ReplicaId::new(1, 1));
        let id1 = at(&mut all, r1).post(NOW, exact(9), Mode::Receive);
        route(&mut all, &[]);
        let key = send_sync(at(&mut all, s1), 9);
        route(&mut all, &[]);
        assert_eq!(at(&mut all, s1).match_state(&key), MatchState::Matched);
        at(&mut all, s1).forget_match(&key);
        assert!(at(&mut all, r1).take(NOW, id1).is_some());
        // 1.0 cannot reach 0.0: it fails over and pulls the message from 0.1.
        at(&mut all, r0).handle_peer_down(NOW, s0, true);
        let id0 = at(&mut all, r0).post(NOW, exact(9), Mode::Receive);
        let matched = route(&mut all, &[]);
        assert_eq!(matched, vec![(s1, r0)]);
        assert!(at(&mut all, r0).take(NOW, id0).is_some());
    }

    /// Every replica of the destination lost: the send ends with an error, not a hang.
    #[test]
    fn lost_destination_is_reported() {
        let mut all = job(2);
        let s0 = ReplicaId::new(0, 0);
        let key = send_sync(at(&mut all, s0), 1);
        kill(&mut all, ReplicaId::new(1, 0));
        kill(&mut all, ReplicaId::new(1, 1));
        assert_eq!(at(&mut all, s0).match_state(&key), MatchState::Lost);
    }

    /// MATCHED from a rank that is not the message's destination is dropped.
    #[test]
    fn foreign_matched_is_dropped() {
        let mut all = job(1);
        let s = ReplicaId::new(0, 0);
        let key = send_sync(at(&mut all, s), 4);
        at(&mut all, s).handle_frame(NOW, ReplicaId::new(0, 0), Frame::Matched { key });
        assert_eq!(at(&mut all, s).match_state(&key), MatchState::Waiting);
    }
}
