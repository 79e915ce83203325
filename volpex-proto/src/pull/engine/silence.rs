//! Per-replica silence: when each peer was last heard from, when we last asked it again
//! (keepalive), and whether this process itself stopped running (a long gap between
//! timer turns), in which case every silence clock starts over. Decides when a pull
//! parked at a peer is pinged and when that peer counts as silent; the deadlines of both
//! come from one rule (`parked_deadline`) that the timer scan and `poll_timeout` share.
//! Never sends anything and never decides what to do about a silent peer.

use std::time::Duration;

use crate::message::{Map, ReplicaId};

/// What a pull parked at a peer calls for now (see `Silence::parked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ParkedCheck {
    /// Heard from recently enough; look again at the deadline.
    Quiet { until: Duration },
    /// Quiet for half the ack timeout and not asked since: ask again (a live sender
    /// answers with an ACK).
    Ping,
    /// Quiet for the whole ack timeout: the peer is silent.
    Silent,
}

/// Silence clocks of every peer.
#[derive(Debug, Default)]
pub(super) struct Silence {
    /// When a frame last came from each peer.
    heard: Map<ReplicaId, Duration>,
    /// When we last asked each peer again.
    pinged: Map<ReplicaId, Duration>,
    /// The last timer turn: a long gap means this process was stopped.
    last_tick: Duration,
}

impl Silence {
    /// A frame came from `peer`.
    pub(super) fn heard(&mut self, peer: ReplicaId, now: Duration) {
        self.heard.insert(peer, now);
    }

    /// A timer turn at `now`. When the previous one is more than `ack_timeout` ago, this
    /// process did not run (stopped, or starved of CPU), so what looked like silence was
    /// ours: every peer's clock restarts now, and the gap is returned.
    pub(super) fn tick(&mut self, now: Duration, ack_timeout: Duration) -> Option<Duration> {
        let gap = now.saturating_sub(self.last_tick);
        let stalled = now > self.last_tick + ack_timeout;
        if stalled {
            for t in self.heard.values_mut() {
                *t = now;
            }
            self.pinged.clear();
        }
        self.last_tick = now;
        stalled.then_some(gap)
    }

    /// We asked `peer` again at `now`.
    pub(super) fn pinged(&mut self, peer: ReplicaId, now: Duration) {
        self.pinged.insert(peer, now);
    }

    /// When a pull parked at `peer` next needs attention: half an ack timeout after we
    /// last heard from it (to ask again), or a whole one once we asked since.
    pub(super) fn parked_deadline(&self, peer: ReplicaId, ack_timeout: Duration) -> Duration {
        let heard = self.last_heard(peer);
        let asked_since = self.pinged.get(&peer).is_some_and(|&t| t >= heard);
        heard
            + if asked_since {
                ack_timeout
            } else {
                ack_timeout / 2
            }
    }

    /// What a pull parked at `peer` calls for at `now`.
    pub(super) fn parked(
        &self,
        peer: ReplicaId,
        now: Duration,
        ack_timeout: Duration,
    ) -> ParkedCheck {
        let heard = self.last_heard(peer);
        if now >= heard + ack_timeout {
            ParkedCheck::Silent
        } else if now >= heard + ack_timeout / 2
            && self.pinged.get(&peer).is_none_or(|&t| t < heard)
        {
            ParkedCheck::Ping
        } else {
            ParkedCheck::Quiet {
                until: self.parked_deadline(peer, ack_timeout),
            }
        }
    }

    /// When we asked `peer` again without hearing from it since, if we did (heard at
    /// the same instant counts as answered).
    pub(super) fn unanswered_since(&self, peer: ReplicaId) -> Option<Duration> {
        let heard = self.last_heard(peer);
        self.pinged.get(&peer).copied().filter(|&t| t > heard)
    }

    fn last_heard(&self, peer: ReplicaId) -> Duration {
        self.heard.get(&peer).copied().unwrap_or(Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const ACK: Duration = Duration::from_millis(100);

    fn peer() -> ReplicaId {
        ReplicaId::new(1, 0)
    }

    #[test]
    fn a_parked_pull_is_pinged_at_half_the_timeout_then_silent_at_the_whole() {
        let mut s = Silence::default();
        s.heard(peer(), 10 * MS);
        assert_eq!(
            s.parked(peer(), 40 * MS, ACK),
            ParkedCheck::Quiet { until: 60 * MS }
        );
        assert_eq!(s.parked(peer(), 60 * MS, ACK), ParkedCheck::Ping);
        s.pinged(peer(), 60 * MS);
        assert_eq!(
            s.parked(peer(), 70 * MS, ACK),
            ParkedCheck::Quiet { until: 110 * MS }
        );
        assert_eq!(s.parked(peer(), 110 * MS, ACK), ParkedCheck::Silent);
    }

    #[test]
    fn hearing_again_restarts_the_clock_and_allows_a_new_ping() {
        let mut s = Silence::default();
        s.heard(peer(), Duration::ZERO);
        s.pinged(peer(), 50 * MS);
        s.heard(peer(), 80 * MS);
        assert_eq!(s.parked_deadline(peer(), ACK), 130 * MS);
        assert_eq!(s.parked(peer(), 130 * MS, ACK), ParkedCheck::Ping);
    }

    #[test]
    fn a_stalled_process_restarts_every_clock() {
        let mut s = Silence::default();
        assert_eq!(s.tick(50 * MS, ACK), None);
        s.heard(peer(), 50 * MS);
        s.pinged(peer(), 100 * MS);
        assert_eq!(s.tick(140 * MS, ACK), None);
        // Stopped for a second: the peer's silence was ours.
        assert_eq!(s.tick(1140 * MS, ACK), Some(1000 * MS));
        assert_eq!(
            s.parked(peer(), 1140 * MS, ACK),
            ParkedCheck::Quiet { until: 1190 * MS }
        );
    }
}
