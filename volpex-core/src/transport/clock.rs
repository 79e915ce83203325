//! The transport's one clock: the time since the process joined the job, which is also
//! the engine's `now`. `Core` is given one (`SystemClock` in production), and every
//! deadline of the transport (the engine's timers, spins, the waits of a send) is read
//! from it, so a driver under test can run the loop on a clock of its own.
//!
//! Owns reading the time. Must never be bypassed: the transport reads no other clock.

use std::sync::Arc;
use std::time::{Duration, Instant};

/// A source of the transport's time other than the system's (a test's).
pub trait Clock: Send + Sync {
    /// Time since a fixed point (the process joining the job); never goes back.
    fn now(&self) -> Duration;
}

/// The clock a `Core` runs on: the system's, read without an indirect call on the
/// message path, or one given (a test's).
#[derive(Clone)]
pub enum TransportClock {
    /// The operating system's monotonic clock.
    System(SystemClock),
    /// Another source (the transport's own tests drive a `Core` on a clock they move).
    #[cfg_attr(not(test), allow(dead_code))]
    Given(Arc<dyn Clock>),
}

impl TransportClock {
    /// Time since the clock's zero.
    #[inline]
    pub fn now(&self) -> Duration {
        match self {
            TransportClock::System(c) => c.now(),
            TransportClock::Given(c) => c.now(),
        }
    }
}

/// The operating system's monotonic clock, from the moment it was made.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    /// A clock that reads zero now.
    pub fn starting_now() -> SystemClock {
        SystemClock {
            start: Instant::now(),
        }
    }
}

impl SystemClock {
    /// Time since the clock was made.
    #[inline]
    pub fn now(&self) -> Duration {
        self.start.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_clock_starts_at_zero_and_goes_on() {
        let c = SystemClock::starting_now();
        let a = c.now();
        assert!(a < Duration::from_secs(1));
        assert!(c.now() >= a);
    }
}
