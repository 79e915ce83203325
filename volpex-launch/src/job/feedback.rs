//! Live feedback while a job runs: one line per replica death, failover and lagging
//! replica (regenerations are the state machine's own `Action::Live` lines), and the
//! status line a terminal shows (ranks, replicas alive, failovers, elapsed).
//!
//! Owns what it has already reported, nothing else: it watches the state machine's
//! records after every step and says what changed, and keeps each change with the time
//! it saw it (the report's `events` and every incarnation's `ended_s`). Must never decide
//! anything about the job, and never print: the driver prints its lines (unless
//! `--quiet`).

use std::time::Duration;

use volpex_proto::message::ReplicaId;

use super::replica::{Origin, Replica, ReplicaState};

/// A replica this many messages behind its rank's most advanced running sibling (by the
/// counters they report) for `LAG_LINE_AFTER` is said to lag; it is said again only after
/// it came within half of that.
pub const LAG_LINE_RECEIVES: u64 = 1000;

/// How long a replica must stay `LAG_LINE_RECEIVES` behind before it is said to lag:
/// replicas that share cores (two teams on two cores) drift apart and back all the time
/// (an NPB LU class A run at -r 2 said 74 lags in 18 s before this rule).
pub const LAG_LINE_AFTER: Duration = Duration::from_secs(2);

/// Where a replica stands in the lag rule.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
enum Lag {
    /// Within reach of its siblings.
    #[default]
    No,
    /// `LAG_LINE_RECEIVES` behind since then, not said yet.
    Behind { since: Duration },
    /// Said to lag; not again until it comes within half of `LAG_LINE_RECEIVES`.
    Said,
}

/// What was reported about one incarnation.
#[derive(Debug, Clone, Default)]
struct Seen {
    /// It was alive at the last look.
    alive: bool,
    /// When it was first seen no longer alive (died, finished or ended), since the job
    /// started.
    ended_at: Option<Duration>,
    /// Failovers it had reported at the last look.
    failovers: u64,
    /// Where it stands in the lag rule.
    lag: Lag,
    /// Its catching up was recorded.
    caught_up: bool,
}

/// One thing the live feedback saw happen to an incarnation.
#[derive(Debug, Clone, PartialEq)]
pub enum Happening {
    /// Lost while the job ran: killed, exited badly, silent, fenced, retired; why.
    Lost(String),
    /// Ended after a preemption notice, its replacement taking over.
    Drained,
    /// Its pulls moved to another replica of a sender: how many since the last look,
    /// and in all.
    Failover { new: u64, total: u64 },
    /// It fell this many messages behind its rank's most advanced live sibling.
    Lagging { behind: u64, leader: ReplicaId },
    /// A new incarnation started (its time is its start).
    Regenerated,
    /// A new incarnation caught up with its siblings (its time is when it did).
    CaughtUp,
}

/// A [`Happening`] with its time and whom it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Since the job started: when the state machine recorded it (a start, a catching
    /// up), else when the feedback first saw it.
    pub at: Duration,
    /// The replica.
    pub id: ReplicaId,
    /// Which incarnation of it.
    pub incarnation: u32,
    /// What happened.
    pub what: Happening,
}

/// What the job's live lines have said so far.
#[derive(Debug, Default)]
pub struct Feedback {
    /// Indexed like the state machine's incarnations (which are only ever appended).
    seen: Vec<Seen>,
    /// Everything seen so far, in the order it was seen.
    records: Vec<Record>,
}

impl Feedback {
    /// Everything seen so far, in the order it was seen.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// When incarnation `i` (indexed like the state machine's) was first seen no longer
    /// alive; `None` while it is (or was at the last look).
    pub fn ended_at(&self, i: usize) -> Option<Duration> {
        self.seen.get(i).and_then(|s| s.ended_at)
    }

    fn record(&mut self, at: Duration, p: &Replica, what: Happening) {
        self.records.push(Record {
            at,
            id: p.id,
            incarnation: p.incarnation,
            what,
        });
    }

    /// The lines about what changed in `procs` (every incarnation, in the order they
    /// started) since the last look at `now`; `running` is false once the job is ending
    /// (done, failed or interrupted: deaths are endings then, not news, and nobody is
    /// said to lag; failovers are still said).
    pub fn observe(
        &mut self,
        procs: &[Replica],
        replicas: u32,
        running: bool,
        now: Duration,
    ) -> Vec<String> {
        let mut lines = Vec::new();
        while self.seen.len() < procs.len() {
            let p = &procs[self.seen.len()];
            if p.origin != Origin::Start {
                self.record(p.started_at, p, Happening::Regenerated);
            }
            self.seen.push(Seen {
                alive: true,
                ..Seen::default()
            });
        }
        for (i, p) in procs.iter().enumerate() {
            let alive = p.state.alive();
            let was = self.seen[i].alive;
            self.seen[i].alive = alive;
            if was && !alive {
                self.seen[i].ended_at = Some(now);
            }
            if let (Some(at), false) = (p.caught_up_at, self.seen[i].caught_up) {
                self.seen[i].caught_up = true;
                if p.origin != Origin::Start {
                    self.record(at, p, Happening::CaughtUp);
                }
            }
            if was && !alive && running && p.state == ReplicaState::Drained {
                self.record(now, p, Happening::Drained);
                lines.push(format!(
                    "replica {} drained after a preemption notice (SIGTERM); its replacement takes over",
                    p.id
                ));
            } else if was && !alive && running && p.ended_by_forwarded {
                // Every replica got the signal: how many are left says nothing.
                self.record(now, p, Happening::Lost(p.state.words()));
                lines.push(format!("replica {} ended: {}", p.id, p.state.words()));
            } else if was && !alive && running && p.state != ReplicaState::Finished {
                self.record(now, p, Happening::Lost(p.state.words()));
                let left = (0..replicas)
                    .filter(|&k| {
                        procs.iter().any(|q| {
                            // A new incarnation still catching up does not count yet,
                            // nor one started again before the rendezvous until it
                            // registered.
                            q.id == ReplicaId::new(p.id.rank, k)
                                && (q.state.alive() || q.state.completed())
                                && q.caught_up()
                                && !(q.origin == Origin::Restart && q.addr.is_none())
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
                    p.state.words(),
                    p.id.rank,
                    if replicas == 1 { "" } else { "s" }
                ));
            }
            let failovers = p.stats.as_ref().map_or(0, |s| s.failovers);
            if failovers > self.seen[i].failovers {
                let new = failovers - self.seen[i].failovers;
                self.seen[i].failovers = failovers;
                // Said also once the job is ending: a replica's last failovers reach
                // volpexrun with its final report, and the summary counts them.
                self.record(
                    now,
                    p,
                    Happening::Failover {
                        new,
                        total: failovers,
                    },
                );
                lines.push(format!(
                    "replica {} failed over: {new} pull{} moved to another replica of a sender ({failovers} in all)",
                    p.id,
                    if new == 1 { "" } else { "s" }
                ));
            }
        }
        if running {
            self.lagging(procs, &mut lines, now);
        }
        lines
    }

    /// Lines about live replicas far behind their rank's most advanced live sibling.
    fn lagging(&mut self, procs: &[Replica], lines: &mut Vec<String>, now: Duration) {
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
            let far = behind >= LAG_LINE_RECEIVES;
            let near = behind < LAG_LINE_RECEIVES / 2;
            self.seen[i].lag = match self.seen[i].lag {
                Lag::No if far => Lag::Behind { since: now },
                Lag::Behind { since } if far && now.saturating_sub(since) >= LAG_LINE_AFTER => {
                    self.record(now, p, Happening::Lagging { behind, leader });
                    lines.push(format!(
                        "replica {} lags: {behind} messages behind replica {leader}",
                        p.id
                    ));
                    Lag::Said
                }
                Lag::Behind { .. } | Lag::Said if near => Lag::No,
                state @ (Lag::No | Lag::Behind { .. } | Lag::Said) => state,
            };
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
    use volpex_proto::wire::control::ReplicaStats;

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
        assert!(f.observe(&procs, 2, true, SEC).is_empty());
        procs[2].state = ReplicaState::Failed("killed by SIGKILL".into());
        assert_eq!(
            f.observe(&procs, 2, true, SEC),
            ["replica 1.0 lost: killed by SIGKILL; rank 1 goes on with 1 of 2 replicas"]
        );
        assert!(f.observe(&procs, 2, true, SEC).is_empty(), "once");
        // Killed by a signal volpexrun forwarded to every replica: no "goes on".
        procs[3].state =
            ReplicaState::Failed("killed by SIGUSR1, which volpexrun forwarded".into());
        procs[3].ended_by_forwarded = true;
        assert_eq!(
            f.observe(&procs, 2, true, SEC),
            ["replica 1.1 ended: killed by SIGUSR1, which volpexrun forwarded"]
        );
        procs[0].stats = stats(2, 10);
        procs[1].stats = stats(0, 10);
        assert_eq!(
            f.observe(&procs, 2, true, SEC),
            ["replica 0.0 failed over: 2 pulls moved to another replica of a sender (2 in all)"]
        );
        procs[1].stats = stats(0, 10 + LAG_LINE_RECEIVES);
        assert!(
            f.observe(&procs, 2, true, SEC).is_empty(),
            "not at once: replicas drift apart and back"
        );
        assert_eq!(
            f.observe(&procs, 2, true, SEC + LAG_LINE_AFTER),
            ["replica 0.0 lags: 1000 messages behind replica 0.1"]
        );
        procs[1].stats = stats(0, 20 + LAG_LINE_RECEIVES);
        assert!(
            f.observe(&procs, 2, true, 2 * SEC + LAG_LINE_AFTER)
                .is_empty(),
            "once while it lags"
        );
    }

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn what_was_said_is_kept_with_its_time() {
        let mut f = Feedback::default();
        let mut procs = grid(2, 2);
        f.observe(&procs, 2, true, SEC);
        procs[3].state = ReplicaState::Failed("killed by SIGKILL".into());
        f.observe(&procs, 2, true, 2 * SEC);
        let mut newer = Replica::newcomer(ReplicaId::new(1, 1), 1, 0, 2 * SEC);
        newer.state = ReplicaState::Running;
        procs.push(newer);
        procs[0].stats = stats(1, 0);
        f.observe(&procs, 2, true, 3 * SEC);
        procs[4].caught_up_at = Some(4 * SEC);
        f.observe(&procs, 2, true, 5 * SEC);
        for p in procs.iter_mut() {
            p.state = ReplicaState::Finished;
        }
        f.observe(&procs, 2, false, 6 * SEC);
        let said: Vec<(u64, ReplicaId, u32, Happening)> = f
            .records()
            .iter()
            .map(|r| (r.at.as_secs(), r.id, r.incarnation, r.what.clone()))
            .collect();
        let (r11, r00) = (ReplicaId::new(1, 1), ReplicaId::new(0, 0));
        assert_eq!(
            said,
            [
                (2, r11, 0, Happening::Lost("killed by SIGKILL".into())),
                (2, r11, 1, Happening::Regenerated),
                (3, r00, 0, Happening::Failover { new: 1, total: 1 }),
                (4, r11, 1, Happening::CaughtUp),
            ]
        );
        assert_eq!(f.ended_at(3), Some(2 * SEC));
        assert_eq!(f.ended_at(0), Some(6 * SEC), "finishing ends it too");
        assert_eq!(f.ended_at(9), None);
    }

    /// Being behind a sibling that finished (its final count against our periodic one) is
    /// how every job with replicas ends, not a lag.
    /// A replica lost before the rendezvous is started again at once: until the new
    /// incarnation registered, its rank goes on with one replica fewer.
    #[test]
    fn a_replica_started_again_counts_once_it_registered() {
        let mut f = Feedback::default();
        let mut procs = grid(2, 2);
        f.observe(&procs, 2, true, SEC);
        procs[2].state = ReplicaState::Failed("killed by SIGKILL".into());
        let mut again = Replica::newcomer(ReplicaId::new(1, 0), 1, 0, SEC);
        again.origin = Origin::Restart;
        procs.push(again);
        assert_eq!(
            f.observe(&procs, 2, true, SEC),
            ["replica 1.0 lost: killed by SIGKILL; rank 1 goes on with 1 of 2 replicas"]
        );
        procs[4].addr = Some("10.0.0.1:7000".into());
        procs[4].state = ReplicaState::Running;
        procs[3].state = ReplicaState::Failed("killed by SIGKILL".into());
        assert_eq!(
            f.observe(&procs, 2, true, 2 * SEC),
            ["replica 1.1 lost: killed by SIGKILL; rank 1 goes on with 1 of 2 replicas"]
        );
    }

    #[test]
    fn behind_a_sibling_that_finished_is_no_lag() {
        let mut f = Feedback::default();
        let mut procs = grid(1, 2);
        procs[0].stats = stats(0, 10);
        procs[1].stats = stats(0, 10 + 2 * LAG_LINE_RECEIVES);
        procs[1].state = ReplicaState::Finalized;
        assert!(f.observe(&procs, 2, true, SEC).is_empty());
        procs[1].state = ReplicaState::Running;
        assert!(f.observe(&procs, 2, true, SEC).is_empty());
        assert_eq!(
            f.observe(&procs, 2, true, SEC + LAG_LINE_AFTER),
            ["replica 0.0 lags: 2000 messages behind replica 0.1"]
        );
    }

    /// A replica that falls behind and catches up within `LAG_LINE_AFTER` (teams sharing
    /// cores) is not said to lag.
    #[test]
    fn a_passing_drift_is_no_lag() {
        let mut f = Feedback::default();
        let mut procs = grid(1, 2);
        procs[0].stats = stats(0, 10);
        procs[1].stats = stats(0, 10 + LAG_LINE_RECEIVES);
        assert!(f.observe(&procs, 2, true, SEC).is_empty());
        procs[0].stats = stats(0, 900);
        assert!(f.observe(&procs, 2, true, 2 * SEC).is_empty());
        procs[1].stats = stats(0, 900 + LAG_LINE_RECEIVES);
        assert!(f.observe(&procs, 2, true, SEC + LAG_LINE_AFTER).is_empty());
    }

    /// Failovers that reach volpexrun with the final reports, once every rank completed,
    /// get their line: the summary counts them, and the user sees which replica made them.
    #[test]
    fn failovers_in_the_final_reports_are_said() {
        let mut f = Feedback::default();
        let mut procs = grid(2, 2);
        assert!(f.observe(&procs, 2, true, SEC).is_empty());
        for p in procs.iter_mut() {
            p.state = ReplicaState::Finished;
        }
        procs[2].stats = stats(3, 10);
        assert_eq!(
            f.observe(&procs, 2, false, 2 * SEC),
            ["replica 1.0 failed over: 3 pulls moved to another replica of a sender (3 in all)"]
        );
        assert_eq!(
            f.records().last().map(|r| r.what.clone()),
            Some(Happening::Failover { new: 3, total: 3 })
        );
        assert!(f.observe(&procs, 2, false, 2 * SEC).is_empty(), "once");
    }

    #[test]
    fn endings_of_a_job_that_is_over_are_not_news() {
        let mut f = Feedback::default();
        let mut procs = grid(1, 2);
        f.observe(&procs, 2, true, SEC);
        procs[0].state = ReplicaState::Finished;
        procs[1].state = ReplicaState::Ended;
        assert!(f.observe(&procs, 2, false, SEC).is_empty());
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
