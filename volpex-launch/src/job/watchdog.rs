//! A thread that notes every `EVERY` that volpexrun runs, and how long it did not when a
//! turn came much later than asked. The main loop asks both before it handles an input:
//! a last note much older than `EVERY`, or a gap the thread saw, means volpexrun itself
//! did not run (SIGSTOP, a starved CPU), wherever the stop caught the main loop and
//! whichever thread ran first after it (the exits of the replicas that gave volpexrun up
//! may be the first thing it handles after the stop, and their loss must be put down to
//! the stop).
//!
//! Owns the notes; must never touch the job.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the thread notes that the process runs.
const EVERY: Duration = Duration::from_millis(100);

/// The notes, shared with the thread (milliseconds since the job's start).
#[derive(Default)]
struct Notes {
    /// The last turn.
    last: AtomicU64,
    /// The end of the last gap between turns much longer than `EVERY` (0: none yet).
    gap_end: AtomicU64,
    /// Its length.
    gap: AtomicU64,
}

/// The watchdog's notes.
pub(super) struct Watchdog {
    notes: Arc<Notes>,
    /// The end of the last gap the main loop took.
    seen_gap_end: u64,
}

impl Watchdog {
    /// Starts the thread; `None` if it cannot start (the main loop's own wait then is the
    /// only measure of a stall).
    pub(super) fn start(start: Instant) -> Option<Watchdog> {
        let notes = Arc::new(Notes::default());
        let n = notes.clone();
        std::thread::Builder::new()
            .name("volpexrun-watchdog".into())
            .spawn(move || {
                let ms = || start.elapsed().as_millis() as u64;
                let mut prev = ms();
                loop {
                    n.last.store(prev, Ordering::Relaxed);
                    std::thread::sleep(EVERY);
                    let now = ms();
                    let gap = now.saturating_sub(prev);
                    if gap > 2 * EVERY.as_millis() as u64 {
                        n.gap
                            .store(gap - EVERY.as_millis() as u64, Ordering::Relaxed);
                        n.gap_end.store(now, Ordering::Relaxed);
                    }
                    prev = now;
                }
            })
            .ok()?;
        Some(Watchdog {
            notes,
            seen_gap_end: 0,
        })
    }

    /// When the next note was due, had the process run.
    pub(super) fn due(&self) -> Duration {
        Duration::from_millis(self.notes.last.load(Ordering::Relaxed)) + EVERY
    }

    /// A gap the thread saw since the last call: (when it began, when it ended).
    pub(super) fn take_gap(&mut self) -> Option<(Duration, Duration)> {
        let end = self.notes.gap_end.load(Ordering::Relaxed);
        if end == self.seen_gap_end {
            return None;
        }
        self.seen_gap_end = end;
        let gap = self.notes.gap.load(Ordering::Relaxed);
        Some((
            Duration::from_millis(end.saturating_sub(gap)),
            Duration::from_millis(end),
        ))
    }
}
