//! The serving side's state: pulls parked here for messages not sent yet (who waits, with
//! which request id, and how much of its answer a direct write put on the wire already),
//! the acknowledgements of parked pulls not sent yet (when an ack delay is configured),
//! and the messages held back by the output commit. Never answers anything itself: the
//! engine does (see `serve`).

use std::collections::VecDeque;
use std::time::Duration;

use smallvec::SmallVec;

use crate::message::{Map, ReplicaId, ReqId, Set, Want};

/// The pulls parked for one message: almost always one (two or three with replicas), so
/// inline, not allocated per message.
pub(super) type Waiters = SmallVec<[Waiter; 2]>;

/// A replica waiting for a message, and the id of its pull.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Waiter {
    /// The receiving replica.
    pub from: ReplicaId,
    /// Its pull's id, echoed in the answer.
    pub req: ReqId,
}

/// A parked pull whose ACK waits until `due`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct UnackedPull {
    due: Duration,
    want: Want,
    waiter: Waiter,
}

/// How much of the DATA frame answering a parked pull a direct write put on a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Written {
    /// Bytes of the encoded frame, header included.
    pub(super) bytes: usize,
    /// The driver's name for the link.
    pub(super) link: u64,
    /// Whether its header asked the receiver to confirm (`FLAG_CONFIRM`).
    pub(super) confirm: bool,
}

/// Pulls parked here, their pending ACKs, and messages held by the output commit.
#[derive(Debug, Default)]
pub(super) struct Service {
    parked: Map<Want, Waiters>,
    /// Parked pulls whose answer a direct write began (see `Engine::handle_written`).
    written: Map<Waiter, Written>,
    /// Parked pulls not yet acknowledged, in parking order.
    unacked: VecDeque<UnackedPull>,
    /// Parked wants whose message is logged but may not leave yet (output commit).
    blocked: Set<Want>,
}

impl Service {
    /// Parks `w`'s pull for `want`.
    pub(super) fn park(&mut self, want: Want, w: Waiter) {
        let list = self.parked.entry(want).or_default();
        // A pull asked again is acknowledged, not parked twice (see `on_pull`).
        debug_assert!(!list.contains(&w), "{w:?} parked twice for {want}");
        list.push(w);
    }

    /// Whether `w`'s pull for `want` is parked here.
    pub(super) fn is_parked(&self, want: &Want, w: Waiter) -> bool {
        self.parked.get(want).is_some_and(|l| l.contains(&w))
    }

    /// Whether any pull for `want` is parked here.
    pub(super) fn has_waiters(&self, want: &Want) -> bool {
        self.parked.contains_key(want)
    }

    /// The pulls parked for `want`.
    pub(super) fn waiters(&self, want: &Want) -> &[Waiter] {
        self.parked.get(want).map_or(&[], SmallVec::as_slice)
    }

    /// Takes every pull parked for `want` (to answer them, or because no answer can
    /// come).
    pub(super) fn take(&mut self, want: &Want) -> Waiters {
        let taken = self.parked.remove(want).unwrap_or_default();
        if !self.written.is_empty() {
            for w in &taken {
                self.written.remove(w);
            }
        }
        taken
    }

    /// Takes every pull parked for `want` to answer it; the answer takes each one's
    /// direct-write mark with `take_written`.
    pub(super) fn take_answering(&mut self, want: &Want) -> Waiters {
        self.parked.remove(want).unwrap_or_default()
    }

    /// How much of the answer to `w`'s pull a direct write put on the wire already, if
    /// any; the mark goes.
    pub(super) fn take_written(&mut self, w: Waiter) -> Option<Written> {
        if self.written.is_empty() {
            return None;
        }
        self.written.remove(&w)
    }

    /// A direct write put the first bytes of the answer to `w`'s pull on a link.
    pub(super) fn note_written(&mut self, w: Waiter, written: Written) {
        self.written.insert(w, written);
    }

    /// Whether a direct write began the answer to any pull parked for `want`.
    pub(super) fn any_written(&self, want: &Want) -> bool {
        !self.written.is_empty()
            && self
                .waiters(want)
                .iter()
                .any(|w| self.written.contains_key(w))
    }

    /// Every want with pulls parked here.
    pub(super) fn parked_wants(&self) -> impl Iterator<Item = &Want> + '_ {
        self.parked.keys()
    }

    /// `w` withdrew its pull for `want`.
    pub(super) fn cancel(&mut self, want: &Want, w: Waiter) {
        if let Some(list) = self.parked.get_mut(want) {
            list.retain(|x| *x != w);
            if list.is_empty() {
                self.parked.remove(want);
            }
        }
        self.written.remove(&w);
    }

    /// `peer` is dead: its pulls are forgotten.
    pub(super) fn forget(&mut self, peer: ReplicaId) {
        self.parked.retain(|_, list| {
            list.retain(|w| w.from != peer);
            !list.is_empty()
        });
        self.written.retain(|w, _| w.from != peer);
    }

    /// The ACK of `w`'s pull for `want` goes at `due`.
    pub(super) fn ack_later(&mut self, due: Duration, want: Want, w: Waiter) {
        self.unacked.push_back(UnackedPull {
            due,
            want,
            waiter: w,
        });
    }

    /// When the next delayed ACK is due.
    pub(super) fn next_ack_due(&self) -> Option<Duration> {
        self.unacked.front().map(|u| u.due)
    }

    /// The delayed ACKs due at `now` whose pull is still parked.
    pub(super) fn due_acks(&mut self, now: Duration) -> Vec<(Want, Waiter)> {
        let mut due = Vec::new();
        while let Some(&u) = self.unacked.front() {
            if u.due > now {
                break;
            }
            self.unacked.pop_front();
            if self.is_parked(&u.want, u.waiter) {
                due.push((u.want, u.waiter));
            }
        }
        due
    }

    /// Holds `want` back (output commit).
    pub(super) fn block(&mut self, want: Want) {
        self.blocked.insert(want);
    }

    /// The wants held back.
    pub(super) fn blocked(&self) -> Vec<Want> {
        self.blocked.iter().copied().collect()
    }

    /// Whether anything is held back.
    pub(super) fn any_blocked(&self) -> bool {
        !self.blocked.is_empty()
    }

    pub(super) fn unblock(&mut self, want: &Want) {
        self.blocked.remove(want);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pull::engine::test_want;

    const MS: Duration = Duration::from_millis(1);

    fn want(seq: u64) -> Want {
        test_want(0, 1, seq)
    }

    fn waiter(replica: u32, req: u64) -> Waiter {
        Waiter {
            from: ReplicaId::new(1, replica),
            req: ReqId(req),
        }
    }

    #[test]
    fn cancelling_the_last_waiter_forgets_the_want() {
        let mut s = Service::default();
        s.park(want(0), waiter(0, 1));
        s.park(want(0), waiter(1, 7));
        s.cancel(&want(0), waiter(0, 2));
        assert_eq!(s.waiters(&want(0)).len(), 2);
        s.cancel(&want(0), waiter(0, 1));
        s.cancel(&want(0), waiter(1, 7));
        assert!(!s.has_waiters(&want(0)));
    }

    #[test]
    fn a_dead_peer_s_pulls_are_forgotten() {
        let mut s = Service::default();
        s.park(want(0), waiter(0, 1));
        s.park(want(1), waiter(0, 2));
        s.park(want(1), waiter(1, 3));
        s.forget(ReplicaId::new(1, 0));
        assert!(!s.has_waiters(&want(0)));
        assert_eq!(s.take(&want(1)).as_slice(), [waiter(1, 3)]);
    }

    #[test]
    fn delayed_acks_go_in_order_and_only_while_parked() {
        let mut s = Service::default();
        s.park(want(0), waiter(0, 1));
        s.park(want(1), waiter(0, 2));
        s.ack_later(5 * MS, want(0), waiter(0, 1));
        s.ack_later(7 * MS, want(1), waiter(0, 2));
        assert_eq!(s.next_ack_due(), Some(5 * MS));
        s.take(&want(1));
        assert_eq!(s.due_acks(6 * MS), [(want(0), waiter(0, 1))]);
        assert_eq!(s.due_acks(8 * MS), []);
        assert_eq!(s.next_ack_due(), None);
    }

    #[test]
    fn what_a_direct_write_began_is_answered_once_and_forgotten_with_its_pull() {
        let mut s = Service::default();
        let began = Written {
            bytes: 9,
            link: 4,
            confirm: false,
        };
        s.park(want(0), waiter(0, 1));
        s.park(want(0), waiter(1, 2));
        s.note_written(waiter(0, 1), began);
        assert!(s.any_written(&want(0)));
        let answering = s.take_answering(&want(0));
        assert_eq!(answering.as_slice(), [waiter(0, 1), waiter(1, 2)]);
        let marks: Vec<_> = answering.into_iter().map(|w| s.take_written(w)).collect();
        assert_eq!(marks, [Some(began), None]);
        assert!(!s.any_written(&want(0)));
        // Cancelled, taken unanswered or dead: the mark goes with the pull.
        s.park(want(1), waiter(0, 3));
        s.note_written(waiter(0, 3), began);
        s.cancel(&want(1), waiter(0, 3));
        s.park(want(2), waiter(0, 4));
        s.note_written(waiter(0, 4), began);
        s.take(&want(2));
        s.park(want(3), waiter(1, 5));
        s.note_written(waiter(1, 5), began);
        s.forget(ReplicaId::new(1, 1));
        assert!(s.written.is_empty());
    }

    #[test]
    fn held_wants_are_listed_until_unblocked() {
        let mut s = Service::default();
        s.block(want(0));
        s.block(want(1));
        s.block(want(1));
        assert_eq!(s.blocked().len(), 2);
        s.unblock(&want(0));
        s.unblock(&want(1));
        assert!(!s.any_blocked());
    }
}
