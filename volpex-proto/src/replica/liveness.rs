//! Per-replica state and team-first selection (VolpexMPI section 3, "replica selection").

use std::time::Duration;

use crate::message::ReplicaId;

/// What this process believes about one replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerState {
    /// Answers normally.
    Alive,
    /// Timed out or lagged behind a sibling; asked only when nothing better is left.
    Suspect {
        /// When it became suspect.
        since: Duration,
    },
    /// Its process is gone (connection failed, or the launcher said so).
    Dead,
    /// A new incarnation replays the program to catch up: it is answered and told what
    /// was consumed, but not asked for messages.
    Joining,
    /// A new incarnation the launcher started has not registered yet: it can be neither
    /// reached nor asked, but its rank is not lost; it becomes `Joining` when it
    /// registers.
    Starting,
}

/// Beliefs about every replica of the job.
#[derive(Debug, Clone)]
pub struct Liveness {
    replicas: u32,
    states: Vec<PeerState>,
}

impl Liveness {
    /// Everyone alive.
    pub fn new(ranks: u32, replicas: u32) -> Self {
        Liveness {
            replicas,
            states: vec![PeerState::Alive; (ranks * replicas) as usize],
        }
    }

    fn idx(&self, id: ReplicaId) -> Option<usize> {
        if id.replica >= self.replicas {
            return None;
        }
        let i = u64::from(id.rank) * u64::from(self.replicas) + u64::from(id.replica);
        usize::try_from(i).ok().filter(|i| *i < self.states.len())
    }

    /// Current state; unknown ids count as dead.
    pub fn state(&self, id: ReplicaId) -> PeerState {
        self.idx(id).map_or(PeerState::Dead, |i| self.states[i])
    }

    /// True unless known dead or not registered yet (a joining incarnation is usable:
    /// it is answered).
    pub fn is_usable(&self, id: ReplicaId) -> bool {
        match self.state(id) {
            PeerState::Alive | PeerState::Suspect { .. } | PeerState::Joining => true,
            PeerState::Dead | PeerState::Starting => false,
        }
    }

    /// Whether it may be asked for messages: alive or suspect, not dead nor joining.
    pub fn is_candidate(&self, id: ReplicaId) -> bool {
        match self.state(id) {
            PeerState::Alive | PeerState::Suspect { .. } => true,
            PeerState::Dead | PeerState::Joining | PeerState::Starting => false,
        }
    }

    /// Sets `id`'s state to `to`; returns true if that changed it.
    fn set_state(&mut self, id: ReplicaId, to: PeerState) -> bool {
        match self.idx(id) {
            Some(i) if self.states[i] != to => {
                self.states[i] = to;
                true
            }
            _ => false,
        }
    }

    /// A new incarnation of `id` was started and has not registered; returns true if
    /// that changed anything.
    pub fn mark_starting(&mut self, id: ReplicaId) -> bool {
        self.set_state(id, PeerState::Starting)
    }

    /// A new incarnation of `id` replays the program; returns true if that changed
    /// anything.
    pub fn mark_joining(&mut self, id: ReplicaId) -> bool {
        self.set_state(id, PeerState::Joining)
    }

    /// A joining incarnation caught up; returns true if it was joining.
    pub fn mark_caught_up(&mut self, id: ReplicaId) -> bool {
        match self.idx(id) {
            Some(i) if self.states[i] == PeerState::Joining => {
                self.states[i] = PeerState::Alive;
                true
            }
            _ => false,
        }
    }

    /// Every replica of the job not known dead.
    pub fn usable(&self) -> impl Iterator<Item = ReplicaId> + '_ {
        let r = self.replicas.max(1);
        (0..self.states.len() as u32)
            .map(move |i| ReplicaId::new(i / r, i % r))
            .filter(|&id| self.is_usable(id))
    }

    /// Marks dead; returns true if it was not already.
    pub fn mark_dead(&mut self, id: ReplicaId) -> bool {
        self.set_state(id, PeerState::Dead)
    }

    /// Marks an alive replica suspect; returns true if it changed.
    pub fn suspect(&mut self, id: ReplicaId, now: Duration) -> bool {
        match self.idx(id) {
            Some(i) if self.states[i] == PeerState::Alive => {
                self.states[i] = PeerState::Suspect { since: now };
                true
            }
            _ => false,
        }
    }

    /// A suspect that delivered data is trusted again.
    pub fn clear_suspicion(&mut self, id: ReplicaId) {
        if let Some(i) = self.idx(id) {
            if let PeerState::Suspect { .. } = self.states[i] {
                self.states[i] = PeerState::Alive;
            }
        }
    }

    /// True when at least one replica of `rank` is not dead (a starting one counts).
    pub fn rank_alive(&self, rank: u32) -> bool {
        (0..self.replicas).any(|k| self.state(ReplicaId::new(rank, k)) != PeerState::Dead)
    }

    /// Whether `id` is the only replica of its rank not known dead.
    pub fn is_last_usable(&self, id: ReplicaId) -> bool {
        self.is_usable(id)
            && (0..self.replicas)
                .filter(|&k| k != id.replica)
                .all(|k| !self.is_usable(ReplicaId::new(id.rank, k)))
    }

    /// Whether some replica of `rank` may be asked for messages (not all of the living
    /// are new incarnations catching up).
    pub fn has_candidate(&self, rank: u32) -> bool {
        (0..self.replicas).any(|k| self.is_candidate(ReplicaId::new(rank, k)))
    }

    /// The replica of `rank` to ask next, for a receiver in team `team`: own team first,
    /// then the other teams in ring order; alive before suspect; never dead, never one
    /// `skip` rejects.
    pub fn choose(&self, rank: u32, team: u32, skip: impl Fn(u32) -> bool) -> Option<u32> {
        let order = (0..self.replicas).map(|i| (team + i) % self.replicas);
        let mut suspect = None;
        for k in order {
            if skip(k) {
                continue;
            }
            match self.state(ReplicaId::new(rank, k)) {
                PeerState::Alive => return Some(k),
                PeerState::Suspect { .. } => {
                    suspect.get_or_insert(k);
                }
                PeerState::Dead | PeerState::Joining | PeerState::Starting => {}
            }
        }
        suspect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_team_first_then_ring_order_suspects_last() {
        let mut l = Liveness::new(2, 3);
        assert_eq!(l.choose(1, 2, |_| false), Some(2));
        l.suspect(ReplicaId::new(1, 2), Duration::ZERO);
        assert_eq!(l.choose(1, 2, |_| false), Some(0));
        l.mark_dead(ReplicaId::new(1, 0));
        assert_eq!(l.choose(1, 2, |_| false), Some(1));
        l.mark_dead(ReplicaId::new(1, 1));
        assert_eq!(l.choose(1, 2, |_| false), Some(2), "suspect beats nothing");
        assert!(l.is_last_usable(ReplicaId::new(1, 2)));
        assert!(!l.is_last_usable(ReplicaId::new(1, 1)), "dead already");
        assert!(!l.is_last_usable(ReplicaId::new(0, 0)));
        l.mark_dead(ReplicaId::new(1, 2));
        assert_eq!(l.choose(1, 2, |_| false), None);
        assert!(!l.rank_alive(1));
        assert!(l.rank_alive(0));
    }

    #[test]
    fn a_joining_incarnation_is_answered_but_not_asked_until_it_caught_up() {
        let mut l = Liveness::new(2, 2);
        let r = ReplicaId::new(1, 0);
        l.mark_dead(r);
        assert!(l.mark_joining(r));
        assert!(l.is_usable(r) && !l.is_candidate(r));
        assert_eq!(l.choose(1, 0, |_| false), Some(1));
        assert!(!l.suspect(r, Duration::ZERO));
        assert!(l.mark_caught_up(r));
        assert!(l.is_candidate(r));
        assert_eq!(l.choose(1, 0, |_| false), Some(0));
        assert!(!l.mark_caught_up(r), "only once");
    }
}
