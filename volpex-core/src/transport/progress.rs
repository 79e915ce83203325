//! Who drives the event loop when.
//!
//! The core sits behind one lock. An application thread that needs progress (a blocking
//! receive, a full log) takes the lock and turns the loop itself, so a message that
//! arrives wakes exactly the thread that waits for it. While the application computes,
//! a background thread turns the loop so pulls from other replicas are served. The
//! background thread steps aside whenever the application wants the lock: it never
//! sleeps in `poll` while an application thread waits (the waker kicks it out), and it
//! stays away while the application has used the lock since its last look (it looks
//! again after two milliseconds, then ever less often while the application keeps using
//! it, up to `APP_ACTIVE_LOOK_MAX`).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mio::Waker;
use parking_lot::{Mutex, MutexGuard};

use super::clock::TransportClock;
use super::event_loop::{Core, Signals};
use super::spin::Pace;
use crate::config::{APP_ACTIVE_LOOK_MAX, APP_ACTIVE_WINDOW, APP_HANDOVER_SPIN, BACKGROUND_POLL};
use volpex_proto::wire::stream::Landing;

/// The shared runtime of one replica.
pub struct Runtime {
    core: Mutex<Core>,
    /// The core's clock, read before its lock is taken.
    clock: TransportClock,
    waker: Waker,
    signals: Arc<Signals>,
    /// How often the application released the core (no clock on the message path).
    app_uses: AtomicU64,
    stop: AtomicBool,
}

/// The application's hold on the core; releasing it lets the background thread run.
pub struct AppGuard<'a> {
    rt: &'a Runtime,
    guard: MutexGuard<'a, Core>,
}

impl std::ops::Deref for AppGuard<'_> {
    type Target = Core;
    fn deref(&self) -> &Core {
        &self.guard
    }
}

impl std::ops::DerefMut for AppGuard<'_> {
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.guard
    }
}

impl Drop for AppGuard<'_> {
    fn drop(&mut self) {
        let rt = self.rt;
        rt.app_uses.fetch_add(1, Ordering::Relaxed);
        rt.signals.app_waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

impl AppGuard<'_> {
    /// Turns the loop until `done` yields a value: first polling without sleeping for the
    /// configured spin time (yielding the CPU between polls once the hard spin is over),
    /// then sleeping in `poll`.
    /// `landings` must belong to the receives `done` waits for. Between turns the core goes
    /// to another application thread that waits for it (immediate collectives run on
    /// threads of their own), unless a message is landing in one of our buffers.
    pub fn drive_until<T>(
        &mut self,
        mut done: impl FnMut(&mut Core) -> Option<T>,
        landings: &mut [Landing<'_>],
    ) -> io::Result<T> {
        if let Some(v) = done(&mut self.guard) {
            return Ok(v);
        }
        let start = self.guard.now();
        let mut pace = Pace::new(self.guard.spin_config_at(start), start);
        loop {
            let wait = if pace.spinning() {
                Some(Duration::ZERO)
            } else {
                None
            };
            self.guard.turn_with(wait, false, landings)?;
            if let Some(v) = done(&mut self.guard) {
                return Ok(v);
            }
            if self.rt.signals.app_waiting.load(Ordering::SeqCst) > 1
                && !self.guard.landing_in_progress()
            {
                MutexGuard::bump(&mut self.guard);
                if let Some(v) = done(&mut self.guard) {
                    return Ok(v);
                }
            }
            // With more processes than cores, the one we wait for may need the CPU.
            if pace.polled(|| self.guard.turned_at()) {
                std::thread::yield_now();
            }
        }
    }
}

/// The lock of `m`; while another thread holds it (the background thread, asleep in
/// `poll` until the waker rouses it), tried again between yields of the CPU for up to
/// `spin` of `clock` before sleeping on it.
fn take<'m, T>(m: &'m Mutex<T>, spin: Duration, clock: &TransportClock) -> MutexGuard<'m, T> {
    if let Some(g) = m.try_lock() {
        return g;
    }
    let until = clock.now() + spin;
    loop {
        std::thread::yield_now();
        if let Some(g) = m.try_lock() {
            return g;
        }
        if clock.now() >= until {
            return m.lock();
        }
    }
}

/// How long the progress thread stays away after it last stayed away `last` (zero: it
/// last served) and found the application using the core again: twice
/// `APP_ACTIVE_WINDOW` the first time, then twice as long each time up to
/// `APP_ACTIVE_LOOK_MAX`.
fn next_look(last: Duration) -> Duration {
    (last * 2).clamp(APP_ACTIVE_WINDOW * 2, APP_ACTIVE_LOOK_MAX)
}

impl Runtime {
    /// Wraps a core and starts the background progress thread.
    pub fn start(core: Core, waker: Waker) -> (Arc<Runtime>, JoinHandle<()>) {
        let signals = core.signals();
        let clock = core.clock();
        let rt = Arc::new(Runtime {
            core: Mutex::new(core),
            clock,
            waker,
            signals,
            app_uses: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let bg = rt.clone();
        let handle = std::thread::Builder::new()
            .name("volpex-progress".into())
            .spawn(move || bg.background())
            .unwrap_or_else(|e| {
                // Without a progress thread the app thread still drives the loop in every
                // call; only serving while computing is lost.
                log::warn!("no background progress thread: {e}");
                std::thread::spawn(|| {})
            });
        (rt, handle)
    }

    /// Takes the core for the application thread.
    pub fn lock(&self) -> AppGuard<'_> {
        self.signals.app_waiting.fetch_add(1, Ordering::SeqCst);
        if self.signals.in_poll.load(Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
        AppGuard {
            rt: self,
            guard: take(&self.core, APP_HANDOVER_SPIN, &self.clock),
        }
    }

    /// Rouses whoever sleeps in `poll` holding the core (an application thread waiting
    /// for any of several requests learns that an immediate collective's thread is done,
    /// which no socket would tell it).
    pub fn wake(&self) {
        let _ = self.waker.wake();
    }

    /// Stops the background thread (it exits after its current turn).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
    }

    fn background(&self) {
        let mut seen = u64::MAX;
        let mut away = Duration::ZERO;
        while !self.stop.load(Ordering::SeqCst) {
            // The application used the core since the last look, or waits for it: stay
            // away, the longer the more looks in a row found it so.
            let uses = self.app_uses.load(Ordering::Relaxed);
            let active = self.signals.app_waiting.load(Ordering::SeqCst) > 0 || uses != seen;
            seen = uses;
            if active {
                away = next_look(away);
                std::thread::sleep(away);
                continue;
            }
            away = Duration::ZERO;
            let mut core = self.core.lock();
            if let Err(e) = core.turn(Some(BACKGROUND_POLL), true) {
                log::error!("event loop failed: {e}");
                drop(core);
                std::thread::sleep(BACKGROUND_POLL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::SystemClock;

    #[test]
    fn looks_grow_apart_while_the_application_stays_active_and_start_over_after_a_serve() {
        let mut away = Duration::ZERO;
        let mut seen = Vec::new();
        for _ in 0..7 {
            away = next_look(away);
            seen.push(away.as_millis());
        }
        assert_eq!(seen, [2, 4, 8, 16, 32, 32, 32]);
        assert_eq!(next_look(Duration::ZERO), APP_ACTIVE_WINDOW * 2);
    }

    #[test]
    fn the_lock_is_taken_whether_its_holder_lets_go_within_the_spin_or_after_it() {
        let m = std::sync::Arc::new(Mutex::new(0u32));
        for hold in [Duration::from_micros(100), Duration::from_millis(20)] {
            let held = m.lock();
            let clock = TransportClock::System(SystemClock::starting_now());
            let other = m.clone();
            let taker = std::thread::spawn(move || {
                *take(&other, Duration::from_millis(2), &clock) += 1;
            });
            std::thread::sleep(hold);
            drop(held);
            taker.join().expect("the taker got the lock");
        }
        assert_eq!(*m.lock(), 2);
        // Free: taken at once.
        *take(
            &m,
            Duration::ZERO,
            &TransportClock::System(SystemClock::starting_now()),
        ) += 1;
        assert_eq!(*m.lock(), 3);
    }
}
