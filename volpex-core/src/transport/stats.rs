//! Periodic counter reports to the launcher: whenever the engine's counters changed, and
//! at most every `config::STATS_INTERVAL` (a new failover at once), the loop sends
//! `ToLauncher::Stats` on the control connection, so the launcher holds a replica's latest
//! counters however it ends (killed, failed, ended once its rank finished elsewhere).
//!
//! A regenerated incarnation also says here when it caught up (its receive counter reached
//! the launcher's target, `ToLauncher::CaughtUp`).
//!
//! Owns only the record of what was last sent. Must never block, nor send anything but
//! counters and that notice.

use std::time::Duration;

use super::event_loop::Core;
use crate::config::STATS_INTERVAL;
use volpex_proto::wire::control::{ReplicaStats, ToLauncher};

/// What the launcher last got.
#[derive(Debug, Default)]
pub(super) struct StatsSent {
    stats: ReplicaStats,
    at: Option<Duration>,
}

impl Core {
    /// A regenerated incarnation has caught up only once it received at least `n`
    /// messages (what its sibling had when it answered the snapshot request).
    pub fn catch_up_at_least(&mut self, n: u64) {
        if let Some(t) = self.catch_up.as_mut() {
            *t = (*t).max(n);
        }
    }

    /// Sends the counters if they changed and the interval passed; returns how long the
    /// loop may sleep before a changed report is due (`None`: nothing pending).
    pub(super) fn report_stats(&mut self, now: Duration) -> Option<Duration> {
        self.launcher?;
        let stats = self.engine.stats();
        if let Some(target) = self.catch_up {
            if stats.receives >= target && self.engine.holds_all_choices() {
                log::info!("{}: caught up after {} messages", self.me, stats.receives);
                self.catch_up = None;
                self.engine.set_catching_up(false);
                self.tell_launcher(&ToLauncher::CaughtUp {
                    receives: stats.receives,
                });
            }
        }
        if stats == self.stats_sent.stats {
            return None;
        }
        // A failover goes out at once: rare, and the replica that counted it is often
        // ended moments later (its team is behind), before a batched report was due.
        let failed_over = stats.failovers != self.stats_sent.stats.failovers;
        if let Some(at) = self.stats_sent.at.filter(|_| !failed_over) {
            let due = at + STATS_INTERVAL;
            if now < due {
                return Some(due - now);
            }
        }
        self.tell_launcher(&ToLauncher::Stats {
            stats: stats.clone(),
        });
        self.stats_sent = StatsSent {
            stats,
            at: Some(now),
        };
        None
    }
}
