//! How a blocked call waits before it sleeps in the kernel: how long it polls, whether it
//! yields the CPU between polls, and how long it first polls without yielding; the
//! window after a large message during which the poll is capped; and no poll at all
//! while other work crowds the host's CPUs (`load`).
//!
//! Owns these rules, the time of the last large message and the host's load as waits
//! see it. Must never poll, read or write a socket: `Core` notes the messages and
//! `progress::drive_until` does the waiting.

use std::cell::OnceCell;
use std::time::Duration;

use super::load::HostLoad;
use crate::config::{Config, SPIN_SHARED};

/// A message at least this large was read or sent: the kernel's softirq work moves it
/// (on loopback, in the softirq thread once it is much), and a long spin would keep that
/// thread from the CPU when the spinning thread has a real-time priority.
const BULK_BYTES: usize = 64 << 10;

/// For this long after a large message, a blocked call spins at most `SPIN_SHARED` (a
/// long spin at real-time priority slowed NPB FT's exchanges). Long enough for the waits
/// of an exchange that just sent or read one, short enough that waits further on in a
/// compute phase spin in full: NPB LU sends a face of a few hundred KB every iteration of
/// tens of milliseconds, and a longer window made its pipeline waits sleep after 1 ms
/// even on cores of their own.
const BULK_SPIN_FOR: Duration = Duration::from_millis(10);

/// How a blocked call waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spin {
    /// How long it polls before sleeping.
    pub poll: Duration,
    /// Whether it gives the CPU away between polls (once `hard` is over).
    pub yield_between: bool,
    /// How long it first polls without yielding.
    pub hard: Duration,
}

/// Where one blocked call stands in its wait (`Spin`, from when it started): it polls
/// without sleeping until the spin is over, giving the CPU away between polls once the
/// hard spin is over (if the spin says so), and then sleeps. The clock is read every
/// poll during the hard spin, every 16th after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    spin_until: Duration,
    hard_until: Duration,
    yield_between: bool,
    spinning: bool,
    hard: bool,
    polls: u32,
}

impl Pace {
    /// The pace of a wait that starts at `start` and waits as `spin` says.
    pub fn new(spin: Spin, start: Duration) -> Pace {
        Pace {
            spin_until: start + spin.poll,
            hard_until: start + spin.hard,
            yield_between: spin.yield_between,
            spinning: !spin.poll.is_zero(),
            hard: !spin.hard.is_zero(),
            polls: 0,
        }
    }

    /// Whether the next poll must not sleep.
    pub fn spinning(&self) -> bool {
        self.spinning
    }

    /// A poll found nothing done (`now` reads the clock, when needed); true when the
    /// caller gives the CPU away before the next one.
    pub fn polled(&mut self, now: impl FnOnce() -> Duration) -> bool {
        if !self.spinning {
            return false;
        }
        let give = self.yield_between && !self.hard;
        self.polls += 1;
        if self.hard || self.polls.is_multiple_of(16) {
            let now = now();
            self.spinning = now < self.spin_until;
            self.hard = now < self.hard_until;
        }
        give
    }
}

/// When a large message was last read or sent, and the host's load (watched from the
/// first wait on, as the configuration says).
#[derive(Debug, Default)]
pub(super) struct BulkWindow {
    at: Option<Duration>,
    load: OnceCell<HostLoad>,
}

impl BulkWindow {
    /// A message of `len` bytes was read or sent at `now`.
    pub(super) fn note(&mut self, len: usize, now: Duration) {
        if len >= BULK_BYTES {
            self.at = Some(now);
        }
    }

    /// How a call blocked at `now` waits, by `cfg`: its spin capped at `SPIN_SHARED`
    /// within `BULK_SPIN_FOR` of a large message; none (it sleeps at once, and is woken
    /// by its message) while other work crowds the host's CPUs.
    pub(super) fn spin(&self, cfg: &Config, now: Duration) -> Spin {
        let load = self
            .load
            .get_or_init(|| HostLoad::new(cfg.watch_load, cfg.here, super::load::online_cpus()));
        if load.crowded(now) {
            return Spin {
                poll: Duration::ZERO,
                yield_between: cfg.yield_when_idle,
                hard: Duration::ZERO,
            };
        }
        let poll = cfg.spin.unwrap_or(SPIN_SHARED);
        let bulk = self
            .at
            .is_some_and(|t| now.saturating_sub(t) < BULK_SPIN_FOR);
        Spin {
            poll: if bulk { poll.min(SPIN_SHARED) } else { poll },
            yield_between: cfg.yield_when_idle,
            hard: cfg.hard_spin.unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spinning(us: u64) -> Config {
        Config {
            spin: Some(Duration::from_micros(us)),
            ..Config::default()
        }
    }

    #[test]
    fn a_large_message_caps_the_spin_for_a_while_and_a_small_one_does_not() {
        let cfg = spinning(50_000);
        let full = Duration::from_millis(50);
        let mut w = BulkWindow::default();
        let t = Duration::from_secs(1);
        assert_eq!(w.spin(&cfg, t).poll, full);
        w.note(BULK_BYTES - 1, t);
        assert_eq!(
            w.spin(&cfg, t).poll,
            full,
            "a small message opens no window"
        );
        w.note(BULK_BYTES, t);
        assert_eq!(w.spin(&cfg, t).poll, SPIN_SHARED);
        let inside = t + BULK_SPIN_FOR - Duration::from_micros(1);
        assert_eq!(w.spin(&cfg, inside).poll, SPIN_SHARED);
        assert_eq!(w.spin(&cfg, t + BULK_SPIN_FOR).poll, full);
    }

    /// The pace of a wait: hard polls first, then polls that give the CPU away, then
    /// sleeps; a wait with no spin sleeps at once.
    #[test]
    fn a_wait_polls_hard_then_yields_then_sleeps() {
        let spin = Spin {
            poll: Duration::from_micros(100),
            yield_between: true,
            hard: Duration::from_micros(10),
        };
        let at = |us| Duration::from_micros(us);
        let mut p = Pace::new(spin, at(1000));
        assert!(p.spinning());
        assert!(!p.polled(|| at(1005)), "hard: no yield");
        assert!(!p.polled(|| at(1010)), "the hard spin ends at this poll");
        assert!(p.polled(|| unreachable!("read every 16th poll")));
        for _ in 3..15 {
            assert!(p.polled(|| unreachable!("read every 16th poll")));
        }
        assert!(p.polled(|| at(1099)));
        assert!(p.spinning());
        for _ in 16..31 {
            assert!(p.polled(|| unreachable!("read every 16th poll")));
        }
        assert!(p.polled(|| at(1100)));
        assert!(!p.spinning(), "the spin is over: the next poll sleeps");
        assert!(!p.polled(|| unreachable!("no clock once it sleeps")));
        let none = Spin {
            poll: Duration::ZERO,
            ..spin
        };
        assert!(!Pace::new(none, at(0)).spinning());
        let no_yield = Spin {
            yield_between: false,
            hard: Duration::ZERO,
            ..spin
        };
        assert!(!Pace::new(no_yield, at(0)).polled(|| at(1)));
    }

    /// A host whose every sample finds others' work (a job that may account for no
    /// runnable task): from the third sample on, a wait sleeps at once; a configuration
    /// that does not watch the load (the user chose the spins) keeps its spin.
    #[test]
    fn a_wait_on_a_host_crowded_by_others_sleeps_at_once() {
        let cfg = Config {
            watch_load: true,
            ..spinning(1000)
        };
        let w = BulkWindow::default();
        let load = HostLoad::new(true, 0, 0);
        if !load.watches() {
            return; // no procfs here, or a real-time test runner
        }
        assert!(w.load.set(load).is_ok());
        let t = |ms| Duration::from_secs(1) + Duration::from_millis(ms);
        let full = Duration::from_millis(1);
        assert_eq!(w.spin(&cfg, t(0)).poll, full, "one sample decides nothing");
        assert_eq!(w.spin(&cfg, t(10)).poll, full);
        let crowded = w.spin(&cfg, t(20));
        assert_eq!(crowded.poll, Duration::ZERO);
        assert_eq!(crowded.hard, Duration::ZERO);
        assert!(!Pace::new(crowded, t(20)).spinning(), "it sleeps at once");

        let unwatched = BulkWindow::default();
        let cfg = Config {
            watch_load: false,
            ..cfg
        };
        for ms in [0, 10, 20, 30] {
            assert_eq!(unwatched.spin(&cfg, t(ms)).poll, full);
        }
    }

    #[test]
    fn a_spin_below_the_cap_stays_and_the_other_settings_pass_through() {
        let cfg = Config {
            yield_when_idle: false,
            hard_spin: Some(Duration::from_micros(20)),
            ..spinning(200)
        };
        let mut w = BulkWindow::default();
        w.note(BULK_BYTES, Duration::ZERO);
        assert_eq!(
            w.spin(&cfg, Duration::ZERO),
            Spin {
                poll: Duration::from_micros(200),
                yield_between: false,
                hard: Duration::from_micros(20),
            }
        );
    }
}
