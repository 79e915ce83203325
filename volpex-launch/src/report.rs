//! The end-of-job summary, as text for people and JSON for tools (`--report`).
//!
//! Owns the summary's shape and wording. Must never decide the verdict (the job's exit
//! policy does) or touch processes.

use serde::Serialize;
use volpex::wire::control::ReplicaStats;

use crate::job::replica::{Replica, ReplicaState};

/// One replica's line in the report.
#[derive(Debug, Serialize)]
pub struct ReplicaReport {
    /// Rank.
    pub rank: u32,
    /// Replica index (team).
    pub replica: u32,
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
    /// Builds one line from the launcher's view of a replica; a failure's detail ends
    /// with what its program last wrote to standard error.
    pub fn new(p: &Replica, host: &str) -> Self {
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
            ReplicaState::Finalized => ("finalized", None),
            ReplicaState::Starting | ReplicaState::Running => ("running", None),
        };
        ReplicaReport {
            rank: id.rank,
            replica: id.replica,
            host: host.to_string(),
            pid,
            state: name,
            detail,
            stats,
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
    /// Failovers all replicas reported.
    pub failovers: u64,
    /// Every replica.
    pub processes: Vec<ReplicaReport>,
}

impl Report {
    /// The human summary printed to stderr.
    pub fn text(&self) -> String {
        let mut s = format!(
            "volpexrun: {} ranks x {} replicas, {} in {:.2} s, {} failovers\n",
            self.ranks,
            self.replicas,
            if self.success { "succeeded" } else { "FAILED" },
            self.elapsed_s,
            self.failovers
        );
        for p in &self.processes {
            if p.state == "finished" {
                continue;
            }
            s.push_str(&format!(
                "volpexrun:   replica {}.{} ({} on {}) {}{}\n",
                p.rank,
                p.replica,
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

    /// Writes the JSON report.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, json + "\n")
    }
}
