//! The engine's timer table: one deadline per engine-wide timer, indexed by `Timer`.
//! Answers "what is the next deadline" and "which timers fired" for the timers that are
//! not tied to one pull; the per-pull deadlines (ack timeouts, silence of a parked pull,
//! hedges) belong to `fetches`, and acknowledgements due to `service`. Owns no protocol
//! logic and never reads a clock: times come in as arguments.

use std::time::Duration;

/// An engine-wide timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// Tell the peers that choices we gave them became stable (armed while we owe any).
    SettleNotice,
    /// Send the followers the choices this leader made since its last batch.
    ChoicesBatch,
    /// Tell senders how far this replica consumed their streams (armed while there is
    /// news).
    ConsumedNotice,
    /// A message held back by the output commit has waited an ack timeout: fence the
    /// siblings that do not take the choices it depends on.
    OutputCommit,
}

impl Timer {
    fn index(self) -> usize {
        match self {
            Timer::SettleNotice => 0,
            Timer::ChoicesBatch => 1,
            Timer::ConsumedNotice => 2,
            Timer::OutputCommit => 3,
        }
    }
}

/// When each timer fires, if armed.
#[derive(Debug, Default, Clone)]
pub(super) struct TimerTable {
    at: [Option<Duration>; 4],
}

impl TimerTable {
    /// Arms `timer` to fire at `at` (re-arming moves it).
    pub(super) fn set(&mut self, timer: Timer, at: Duration) {
        self.at[timer.index()] = Some(at);
    }

    /// Arms `timer` at `at` unless it is armed already.
    pub(super) fn set_if_idle(&mut self, timer: Timer, at: Duration) {
        self.at[timer.index()].get_or_insert(at);
    }

    /// Disarms `timer`.
    pub(super) fn stop(&mut self, timer: Timer) {
        self.at[timer.index()] = None;
    }

    /// When `timer` fires, if armed.
    pub(super) fn get(&self, timer: Timer) -> Option<Duration> {
        self.at[timer.index()]
    }

    /// The earliest armed deadline.
    pub(super) fn next(&self) -> Option<Duration> {
        self.at.iter().flatten().min().copied()
    }

    /// Whether `timer` is armed and due at `now`; a fired timer stays armed until its
    /// handler re-arms or stops it.
    pub(super) fn is_due(&self, timer: Timer, now: Duration) -> bool {
        self.get(timer).is_some_and(|t| now >= t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn next_is_the_earliest_armed_deadline() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        t.set(Timer::ConsumedNotice, 30 * MS);
        t.set(Timer::ChoicesBatch, 10 * MS);
        assert_eq!(t.next(), Some(10 * MS));
        t.stop(Timer::ChoicesBatch);
        assert_eq!(t.next(), Some(30 * MS));
    }

    #[test]
    fn set_if_idle_keeps_an_armed_deadline() {
        let mut t = TimerTable::default();
        t.set_if_idle(Timer::OutputCommit, 5 * MS);
        t.set_if_idle(Timer::OutputCommit, 9 * MS);
        assert_eq!(t.get(Timer::OutputCommit), Some(5 * MS));
        t.set(Timer::OutputCommit, 9 * MS);
        assert_eq!(t.get(Timer::OutputCommit), Some(9 * MS));
    }

    #[test]
    fn a_due_timer_stays_armed_until_its_handler_moves_it() {
        let mut t = TimerTable::default();
        t.set(Timer::SettleNotice, 10 * MS);
        t.set(Timer::ChoicesBatch, 20 * MS);
        assert!(t.is_due(Timer::SettleNotice, 10 * MS));
        assert!(t.is_due(Timer::SettleNotice, 11 * MS));
        assert!(!t.is_due(Timer::ChoicesBatch, 19 * MS));
        assert!(!t.is_due(Timer::OutputCommit, 30 * MS));
    }
}
