//! Live feedback while a job runs: one line per replica death, failover and lagging
//! replica (regenerations are the state machine's own `Action::Live` lines), and the
//! status line a terminal shows (ranks, replicas alive, failovers, elapsed).
//!
//! Owns what it has already reported, nothing else: it watches the state machine's
//! records after every step and says what changed. Must never decide anything about the
//! job, and never print: the driver prints its lines (unless `--quiet`).

use std::time::Duration;

use volpex::message::ReplicaId;

use super::replica::{Replica, ReplicaState};

/// A replica this many messages behind its rank's most advanced running sibling (by the
/// counters they report) is said to lag; it is said again only after it came within
/// half of that.
pub const LAG_LINE_RECEIVES: u64 = 1000;

/// What was reported about one incarnation.
#[derive(Debug, Clone, Default)]
struct Seen {
    /// It was alive at the last look.
    alive: bool,
    /// Failovers it had reported at the last look.
    failovers: u64,
    /// It was said to lag.
    lagging: bool,
}

/// What the job's live lines have said so far.
#[derive(Debug, Default)]
pub struct Feedback {
    /// Indexed like the state machine's incarnations (which are only ever appended).
    seen: Vec<Seen>,
}

/// How a replica that is no longer alive ended, in words.
fn ending(state: &ReplicaState) -> String {
    match state {
        ReplicaState::Failed(w) | ReplicaState::Retired(w) => w.clone(),
        ReplicaState::Drained => "drained".into(),
        ReplicaState::Finished => "finished".into(),
        ReplicaState::Ended => "ended".into(),
        ReplicaState::Starting | ReplicaState::Running | ReplicaState::Finalized => "alive".into(),
    }
}

impl Feedback {
    /// The lines about what changed in `procs` (every incarnation, in the order they
    /// started) since the last look; `running` is false once the job is ending (done,
    /// failed or interrupted: deaths are endings then, not news).
    pub fn observe(&mut self, procs: &[Replica], replicas: u32, running: bool) -> Vec<String> {
        let mut lines = Vec::new();
        while self.seen.len() < procs.len() {
            self.seen.push(Seen {
                alive: true,
                ..Seen::default()
            });
        }
        for (i, p) in procs.iter().enumerate() {
            let alive = p.state.alive();
            let was = self.seen[i].alive;
            self.seen[i].alive = alive;
            if was && !alive && running && p.state == ReplicaState::Drained {
                lines.push(format!(
                    "replica {} drained after a preemption notice (SIGTERM); its replacement takes over",
                    p.id
                ));
            } else if was && !alive && running && p.state != ReplicaState::Finished {
                let left = (0..replicas)
                    .filter(|&k| {
                        procs.iter().any(|q| {
                            // A new incarnation still catching up does not count yet.
                            q.id == ReplicaId::new(p.id.rank, k)
                                && (q.state.alive() || q.state.completed())
                                && q.caught_up()
                        })
                    })
                    .count();
                let inc = match p.incarnation {
                    0 => String::new(),
                    n => format!(" (incarnation {n})"),
                };
                lines.push(format!(
                    "replica {}{inc} lost: {}; rank {} goes on with {left} of {replicas} replica{}",
                    p.id,
                    ending(&p.state),
                    p.id.rank,
                    if replicas == 1 { "" } else { "s" }
                ));
            }
            let failovers = p.stats.as_ref().map_or(0, |s| s.failovers);
            if failovers > self.seen[i].failovers {
                let new = failovers - self.seen[i].failovers;
                self.seen[i].failovers = failovers;
                if running {
                    lines.push(format!(
                        "replica {} failed over: {new} pull{} moved to another replica of a sender ({failovers} in all)",
                        p.id,
                        if new == 1 { "" } else { "s" }
                    ));
                }
            }
        }
        if running {
            self.lagging(procs, &mut lines);
        }
        lines
    }

    /// Lines about live replicas far behind their rank's most advanced live sibling.
    fn lagging(&mut self, procs: &[Replica], lines: &mut Vec<String>) {
        for (i, p) in procs.iter().enumerate() {
            let Some(mine) = p.stats.as_ref().map(|s| s.receives) else {
                continue;
            };
            if !p.state.alive() || !p.caught_up() {
                continue;
            }
            // Against siblings still running: one that finished reported its final count,
            // ours may be a reporting period old, and someone finishes first at every end.
            let ahead = procs
                .iter()
                .filter(|q| {
                    q.id.rank == p.id.rank && q.id != p.id && q.state == ReplicaState::Running
                })
                .filter_map(|q| q.stats.as_ref().map(|s| (q.id, s.receives)))
                .max_by_key(|(_, r)| *r);
            let Some((leader, theirs)) = ahead else {
                continue;
            };
            let behind = theirs.saturating_sub(mine);
            if !self.seen[i].lagging && behind >= LAG_LINE_RECEIVES {
                self.seen[i].lagging = true;
                lines.push(format!(
                    "replica {} lags: {behind} messages behind replica {leader}",
                    p.id
                ));
            } else if self.seen[i].lagging && behind < LAG_LINE_RECEIVES / 2 {
                self.seen[i].lagging = false;
            }
        }
    }
}

/// The status line: ranks, replicas alive of all, failovers so far, regenerations,
/// elapsed time.
pub fn status_line(
    procs: &[Replica],
    ranks: u32,
    replicas: u32,
    regenerations: u32,
    elapsed: Duration,
) -> String {
    let alive = procs.iter().filter(|p| p.state.alive()).count();
    let failovers: u64 = procs
        .iter()
        .filter_map(|p| p.stats.as_ref())
        .map(|s| s.failovers)
        .sum();
    let regen = match regenerations {
        0 => String::new(),
        n => format!(" | regenerations {n}"),
    };
    format!(
        "ranks {ranks} | replicas alive {alive}/{} | failovers {failovers}{regen} | {:.1} s",
        ranks * replicas,
        elapsed.as_secs_f64()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use volpex::wire::control::ReplicaStats;

    fn grid(ranks: u32, replicas: u32) -> Vec<Replica> {
        let mut v = Vec::new();
        for x in 0..ranks {
            for k in 0..replicas {
                let mut p = Replica::starting(ReplicaId::new(x, k), 0);
                p.state = ReplicaState::Running;
                v.push(p);
            }
        }
        v
    }

    fn stats(failovers: u64, receives: u64) -> Option<ReplicaStats> {
        Some(ReplicaStats {
            failovers,
            receives,
            ..ReplicaStats::default()
        })
    }

    #[test]
    fn a_death_a_failover_and_a_lag_are_each_said_once() {
        let mut f = Feedback::default();
        let mut procs = grid(2, 2);
        assert!(f.observe(&procs, 2, true).is_empty());
        procs[2].state = ReplicaState::Failed("killed by SIGKILL".into());
        assert_eq!(
            f.observe(&procs, 2, true),
            ["replica 1.0 lost: killed by SIGKILL; rank 1 goes on with 1 of 2 replicas"]
        );
        assert!(f.observe(&procs, 2, true).is_empty(), "once");
        procs[0].stats = stats(2, 10);
        procs[1].stats = stats(0, 10);
        assert_eq!(
            f.observe(&procs, 2, true),
            ["replica 0.0 failed over: 2 pulls moved to another replica of a sender (2 in all)"]
        );
        procs[1].stats = stats(0, 10 + LAG_LINE_RECEIVES);
        assert_eq!(
            f.observe(&procs, 2, true),
            ["replica 0.0 lags: 1000 messages behind replica 0.1"]
        );
        procs[1].stats = stats(0, 20 + LAG_LINE_RECEIVES);
        assert!(f.observe(&procs, 2, true).is_empty(), "once while it lags");
    }

    /// Being behind a sibling that finished (its final count against our periodic one) is
    /// how every job with replicas ends, not a lag.
    #[test]
    fn behind_a_sibling_that_finished_is_no_lag() {
        let mut f = Feedback::default();
        let mut procs = grid(1, 2);
        procs[0].stats = stats(0, 10);
        procs[1].stats = stats(0, 10 + 2 * LAG_LINE_RECEIVES);
        procs[1].state = ReplicaState::Finalized;
        assert!(f.observe(&procs, 2, true).is_empty());
        procs[1].state = ReplicaState::Running;
        assert_eq!(
            f.observe(&procs, 2, true),
            ["replica 0.0 lags: 2000 messages behind replica 0.1"]
        );
    }

    #[test]
    fn endings_of_a_job_that_is_over_are_not_news() {
        let mut f = Feedback::default();
        let mut procs = grid(1, 2);
        f.observe(&procs, 2, true);
        procs[0].state = ReplicaState::Finished;
        procs[1].state = ReplicaState::Ended;
        assert!(f.observe(&procs, 2, false).is_empty());
    }

    #[test]
    fn the_status_line_counts_every_incarnations_failovers() {
        let mut procs = grid(2, 2);
        procs[0].stats = stats(3, 0);
        procs[3].state = ReplicaState::Failed("killed".into());
        procs[3].stats = stats(2, 0);
        assert_eq!(
            status_line(&procs, 2, 2, 1, Duration::from_millis(12_340)),
            "ranks 2 | replicas alive 3/4 | failovers 5 | regenerations 1 | 12.3 s"
        );
    }
}
