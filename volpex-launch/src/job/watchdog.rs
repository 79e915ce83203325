//! A thread that notes every `EVERY` that volpexrun runs. When the main loop finds the
//! last note much older than that, volpexrun itself did not run (SIGSTOP, a starved CPU),
//! wherever the stop caught the main loop: in its wait for the next input, or handling
//! one (the exits of the replicas that gave it up may be the first thing it handles
//! after the stop, and their loss must be put down to the stop).
//!
//! Owns the note; must never touch the job.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the thread notes that the process runs.
const EVERY: Duration = Duration::from_millis(100);

/// The note, shared with the thread.
pub(super) struct Watchdog {
    /// Milliseconds since the job's start at the last note.
    last_ms: Arc<AtomicU64>,
}

impl Watchdog {
    /// Starts the thread; `None` if it cannot start (the main loop's own wait then is the
    /// only measure of a stall).
    pub(super) fn start(start: Instant) -> Option<Watchdog> {
        let last_ms = Arc::new(AtomicU64::new(0));
        let note = last_ms.clone();
        std::thread::Builder::new()
            .name("volpexrun-watchdog".into())
            .spawn(move || loop {
                note.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
                std::thread::sleep(EVERY);
            })
            .ok()?;
        Some(Watchdog { last_ms })
    }

    /// When the next note was due, had the process run.
    pub(super) fn due(&self) -> Duration {
        Duration::from_millis(self.last_ms.load(Ordering::Relaxed)) + EVERY
    }
}
