//! The end-of-job summary, as text for people and JSON for tools (`--report`).
//!
//! Owns the summary's shape and wording. Must never decide the verdict (the job's exit
//! policy does) or touch processes.

use std::time::Duration;

use serde::Serialize;
use volpex_proto::wire::control::ReplicaStats;

use super::feedback::{Happening, Record};
use super::replica::{Replica, ReplicaState};
use super::state::HostNotice;
use volpex_proto::message::ReplicaId;

/// One incarnation of a replica in the report.
#[derive(Debug, Serialize)]
pub struct ReplicaReport {
    /// Rank.
    pub rank: u32,
    /// Replica index (team).
    pub replica: u32,
    /// Which incarnation: 0 for the job's first processes, then 1 + the highest its rank
    /// had used.
    pub incarnation: u32,
    /// When it was started, seconds since the job started.
    pub started_s: f64,
    /// Where its state came from: "start" (incarnation 0), "restart" (a new incarnation
    /// started before the rendezvous, afresh, in a lost one's place), "replay" (a new
    /// incarnation that replays its rank from the start) or "snapshot N" (restored from
    /// its sibling's checkpoint N).
    pub from: String,
    /// How long a new incarnation took to catch up with its siblings; `None` for the
    /// first processes, one started again before the rendezvous (nothing to catch up) and
    /// a new incarnation that never caught up.
    pub caught_up_after_s: Option<f64>,
    /// When volpexrun saw it stop (died, finished, ended), seconds since the job started;
    /// `None` if it was still alive as far as volpexrun knew at the end.
    pub ended_s: Option<f64>,
    /// Host it ran on.
    pub host: String,
    /// OS process id.
    pub pid: u32,
    /// finished | failed | retired | ended | finalized (the program finished, the
    /// process had not exited) | running.
    pub state: &'static str,
    /// Why it failed or retired.
    pub detail: Option<String>,
    /// The latest counters the replica reported (periodically, and when it finished).
    pub stats: Option<ReplicaStats>,
}

impl ReplicaReport {
    /// Builds one line from the launcher's view of a replica, when it was seen to end and
    /// whether a later incarnation replaced it; a failure's detail ends with what its
    /// program last wrote to standard error.
    pub fn new(p: &Replica, host: &str, ended: Option<Duration>, replaced: bool) -> Self {
        let (id, pid, stats) = (p.id, p.pid, p.stats.clone());
        let (name, detail) = match &p.state {
            ReplicaState::Finished => ("finished", None),
            ReplicaState::Failed(w) => (
                "failed",
                Some(match p.last_words.text() {
                    Some(words) => format!("{w}; it last wrote: {words}"),
                    None => w.clone(),
                }),
            ),
            ReplicaState::Retired(w) => ("retired", Some(w.clone())),
            ReplicaState::Ended => ("ended", None),
            ReplicaState::Drained => (
                "drained",
                Some(if replaced {
                    "preemption notice (SIGTERM); replaced".into()
                } else {
                    "preemption notice (SIGTERM); its drain grace ran out before it could be replaced".into()
                }),
            ),
            ReplicaState::Finalized => ("finalized", None),
            ReplicaState::Starting | ReplicaState::Running => ("running", None),
        };
        ReplicaReport {
            rank: id.rank,
            replica: id.replica,
            incarnation: p.incarnation,
            started_s: p.started_at.as_secs_f64(),
            from: p.origin.word(),
            caught_up_after_s: p
                .caught_up_at
                .map(|t| t.saturating_sub(p.started_at).as_secs_f64()),
            ended_s: ended.map(|t| t.as_secs_f64()),
            host: host.to_string(),
            pid,
            state: name,
            detail,
            stats,
        }
    }
}

/// One thing that happened to an incarnation while the job ran, as the live lines said
/// it (they are printed, or logged with `--quiet`).
#[derive(Debug, Serialize)]
pub struct EventReport {
    /// Seconds since the job started: a start or a catching up when the state machine
    /// recorded it, anything else when volpexrun saw it (failovers when the replica's
    /// counters arrived, at most 0.5 s late).
    pub t_s: f64,
    /// killed (by a signal) | died (exited, silent, fenced, cut off) | retired | drained |
    /// failover | lagging | regenerated (a new incarnation started) | caught_up |
    /// notice (a preemption notice for the incarnation's host, `--preemption-notice`).
    pub kind: &'static str,
    /// Rank.
    pub rank: u32,
    /// Replica index (team).
    pub replica: u32,
    /// Which incarnation.
    pub incarnation: u32,
    /// Why it died; failovers: `N pulls (M in all)`; lagging: how far behind whom;
    /// notice: which notice, for which host.
    pub detail: Option<String>,
    /// Notice: when the host goes, seconds since the job started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_s: Option<f64>,
    /// Notice: when the incarnation's handover finished (its replacement caught up),
    /// seconds since the job started; absent if it never did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handed_over_s: Option<f64>,
}

impl EventReport {
    /// The report's events: every record, by time (a death is seen a moment after the
    /// step that recorded its replacement's start); `notices` are the `notice` events (`EventReport::notice`).
    pub fn by_time(records: &[Record], notices: Vec<EventReport>) -> Vec<EventReport> {
        let mut events: Vec<EventReport> = records.iter().map(EventReport::new).collect();
        events.extend(notices);
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        events
    }

    /// The report's words for one record of the live feedback.
    pub fn new(r: &Record) -> Self {
        let (kind, detail) = match &r.what {
            Happening::Lost(why) if why.starts_with("killed by") => ("killed", Some(why.clone())),
            Happening::Lost(why) if why.starts_with("retired") => ("retired", Some(why.clone())),
            Happening::Lost(why) => ("died", Some(why.clone())),
            Happening::Drained => ("drained", None),
            Happening::Failover { new, total } => (
                "failover",
                Some(format!(
                    "{new} pull{} ({total} in all)",
                    if *new == 1 { "" } else { "s" }
                )),
            ),
            Happening::Lagging { behind, leader } => (
                "lagging",
                Some(format!("{behind} messages behind replica {leader}")),
            ),
            Happening::Regenerated => ("regenerated", None),
            Happening::CaughtUp => ("caught_up", None),
        };
        EventReport {
            t_s: r.at.as_secs_f64(),
            kind,
            rank: r.id.rank,
            replica: r.id.replica,
            incarnation: r.incarnation,
            detail,
            deadline_s: None,
            handed_over_s: None,
        }
    }

    /// The `notice` event of incarnation `inc` of `id`, which lived on `host` when
    /// `notice` came, and whose replacement caught up at `handed_over`.
    pub fn notice(
        notice: &HostNotice,
        host: &str,
        (id, inc): (ReplicaId, u32),
        handed_over: Option<Duration>,
    ) -> Self {
        EventReport {
            t_s: notice.at.as_secs_f64(),
            kind: "notice",
            rank: id.rank,
            replica: id.replica,
            incarnation: inc,
            detail: Some(format!("preemption notice {} for {host}", notice.said)),
            deadline_s: Some(notice.deadline.as_secs_f64()),
            handed_over_s: handed_over.map(|t| t.as_secs_f64()),
        }
    }
}

/// The whole summary.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Ranks in the job.
    pub ranks: u32,
    /// Replicas per rank.
    pub replicas: u32,
    /// Whether every rank finished.
    pub success: bool,
    /// volpexrun's exit code.
    pub exit_code: i32,
    /// Wall time from start to end, seconds.
    pub elapsed_s: f64,
    /// Why the job failed.
    pub error: Option<String>,
    /// Failovers all replicas reported (every incarnation's).
    pub failovers: u64,
    /// New incarnations started.
    pub regenerations: u32,
    /// What else regeneration has to say: ranks no longer regenerated and why, no room.
    pub regeneration_notes: Vec<String>,
    /// Every incarnation of every replica.
    pub processes: Vec<ReplicaReport>,
    /// What happened while the job ran, by time.
    pub events: Vec<EventReport>,
}

impl Report {
    /// The human summary printed to stderr.
    pub fn text(&self) -> String {
        let mut s = format!(
            "volpexrun: {} x {}, {} in {:.2} s, {}{}\n",
            count(u64::from(self.ranks), "rank"),
            count(u64::from(self.replicas), "replica"),
            if self.success { "succeeded" } else { "FAILED" },
            self.elapsed_s,
            count(self.failovers, "failover"),
            match self.regenerations {
                0 => String::new(),
                1 => ", 1 regeneration".to_string(),
                n => format!(", {n} regenerations"),
            }
        );
        for p in self.processes.iter().filter(|p| p.from != "start") {
            s.push_str(&format!(
                "volpexrun:   rank {} replica {}: incarnation {} started on {} at {:.1} s{}, {}\n",
                p.rank,
                p.replica,
                p.incarnation,
                p.host,
                p.started_s,
                match p.from.as_str() {
                    "replay" | "restart" => String::new(),
                    from => format!(" from {from}"),
                },
                match (p.from.as_str(), p.caught_up_after_s) {
                    // Nothing to catch up: nobody had state yet.
                    ("restart", _) => "afresh before the rendezvous".to_string(),
                    (_, Some(t)) => format!("caught up in {t:.1} s"),
                    (_, None) => "never caught up".to_string(),
                }
            ));
        }
        for note in &self.regeneration_notes {
            s.push_str(&format!("volpexrun:   {note}\n"));
        }
        for p in &self.processes {
            if p.state == "finished" {
                continue;
            }
            let who = if p.incarnation == 0 {
                format!("{}.{}", p.rank, p.replica)
            } else {
                format!("{}.{} incarnation {}", p.rank, p.replica, p.incarnation)
            };
            s.push_str(&format!(
                "volpexrun:   replica {who} ({} on {}) {}{}\n",
                if p.pid == 0 {
                    "never started".to_string()
                } else {
                    format!("pid {}", p.pid)
                },
                p.host,
                p.state,
                p.detail
                    .as_ref()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default()
            ));
        }
        s
    }

    /// Whether `path` can take the report, checked before the job starts: it is opened
    /// for writing without changing it (created, then removed, if it did not exist). A
    /// device that fails every write (`/dev/full`) passes: `write` finds it out.
    pub fn check_writable(path: &std::path::Path) -> std::io::Result<()> {
        use std::fs::OpenOptions;
        match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(_) => std::fs::remove_file(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                OpenOptions::new().append(true).open(path).map(|_| ())
            }
            Err(e) => Err(e),
        }
    }

    /// Writes the JSON report.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, json + "\n")
    }
}

/// `n` and `word`, plural unless `n` is 1 (`1 failover`, `2 failovers`).
fn count(n: u64, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use volpex_proto::message::ReplicaId;

    /// Found from outside (issue 42): the summary said `4 ranks x 1 replicas` and
    /// `1 failovers`.
    #[test]
    fn the_summary_counts_in_the_singular_for_one() {
        let report = |ranks, replicas, failovers| Report {
            ranks,
            replicas,
            success: true,
            exit_code: 0,
            elapsed_s: 1.0,
            error: None,
            failovers,
            regenerations: 0,
            regeneration_notes: Vec::new(),
            processes: Vec::new(),
            events: Vec::new(),
        };
        let first = |r: Report| r.text().lines().next().map(str::to_string);
        assert_eq!(
            first(report(4, 1, 1)).as_deref(),
            Some("volpexrun: 4 ranks x 1 replica, succeeded in 1.00 s, 1 failover")
        );
        assert_eq!(
            first(report(1, 2, 0)).as_deref(),
            Some("volpexrun: 1 rank x 2 replicas, succeeded in 1.00 s, 0 failovers")
        );
    }

    fn record(secs: u64, what: Happening) -> Record {
        Record {
            at: Duration::from_secs(secs),
            id: ReplicaId::new(1, 0),
            incarnation: 2,
            what,
        }
    }

    /// Issue 42 item 3: `--report` is checked before the job starts, leaving what is
    /// there as it was.
    #[test]
    fn a_report_path_is_checked_without_changing_it() {
        let dir = std::env::temp_dir().join(format!("volpex-report-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let new = dir.join("new.json");
        let old = dir.join("old.json");
        std::fs::write(&old, "before").expect("write");
        let results = [
            Report::check_writable(&new).is_ok(),
            new.exists(),
            Report::check_writable(&old).is_ok(),
            std::fs::read_to_string(&old).ok() == Some("before".into()),
            Report::check_writable(&dir).is_err(),
            Report::check_writable(&dir.join("missing/r.json")).is_err(),
        ];
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(results, [true, false, true, true, true, true]);
    }

    /// Issue 42 item 3: a drained replica is said to be replaced only when it was.
    #[test]
    fn a_drained_replica_is_replaced_only_if_a_later_incarnation_started() {
        let mut p = Replica::starting(ReplicaId::new(1, 0), 0);
        p.state = ReplicaState::Drained;
        let r = ReplicaReport::new(&p, "localhost", None, true);
        assert_eq!(r.state, "drained");
        assert_eq!(
            r.detail.as_deref(),
            Some("preemption notice (SIGTERM); replaced")
        );
        let r = ReplicaReport::new(&p, "localhost", None, false);
        assert_eq!(
            r.detail.as_deref(),
            Some(
                "preemption notice (SIGTERM); its drain grace ran out before it could be replaced"
            )
        );
    }

    #[test]
    fn events_are_named_by_kind_and_sorted_by_time() {
        let events = EventReport::by_time(
            &[
                record(
                    3,
                    Happening::Lost("killed by SIGKILL (fault injection)".into()),
                ),
                record(
                    1,
                    Happening::Lost("silent on host h1: no heartbeat for 2.1 s".into()),
                ),
                record(2, Happening::Lost("retired (exit code 75)".into())),
                record(4, Happening::Failover { new: 1, total: 3 }),
                record(5, Happening::Regenerated),
            ],
            Vec::new(),
        );
        let kinds: Vec<(f64, &str)> = events.iter().map(|e| (e.t_s, e.kind)).collect();
        assert_eq!(
            kinds,
            [
                (1.0, "died"),
                (2.0, "retired"),
                (3.0, "killed"),
                (4.0, "failover"),
                (5.0, "regenerated")
            ]
        );
        assert_eq!(events[3].detail.as_deref(), Some("1 pull (3 in all)"));
        assert_eq!(
            (events[0].rank, events[0].replica, events[0].incarnation),
            (1, 0, 2)
        );
        let json = serde_json::to_value(&events[2]).expect("serializes");
        assert_eq!(json["kind"], "killed");
        assert_eq!(json["detail"], "killed by SIGKILL (fault injection)");
    }
}
