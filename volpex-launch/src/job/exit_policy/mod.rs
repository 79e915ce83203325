//! The exit policy: from the replicas' states, whether a rank is lost, whether the job is
//! done, what to do with each replica when it is, and the final verdict and exit code.
//!
//! A rank lives while one of its replicas is alive or has completed; the job is done
//! when every rank has a replica that completed; it succeeds when every rank has a
//! replica that finished cleanly. Plain functions over states, driven by `state` and by
//! the table tests below. Must never do I/O, read a clock or keep state of its own.
//!
//! volpexrun's exit code, like mpirun's:
//!
//! | code | when |
//! |---|---|
//! | 0 | every rank has a replica that exited 0 |
//! | the rank's own code | a rank failed because its program exited with a non-zero code: the first such rank's code (`exit 3` in every replica of a rank: 3) |
//! | 70 (`EXIT_RANK_LOST`) | a rank was lost to failures, not to its program's exit code: every replica killed, silent, on a lost host, retired |
//! | 124 (`EXIT_TIMEOUT`) | `--timeout` ran out (as `timeout(1)`) |
//! | 128 + S | volpexrun was interrupted by signal S: 129 SIGHUP, 130 SIGINT, 143 SIGTERM; or every replica of a rank was killed by the user signal S volpexrun forwarded (`state::deaths`) |
//! | 1 (`EXIT_LAUNCHER`) | volpexrun could not start or run the job (hosts unreachable or too few, no reachable replica, ...) |
//! | 2 (`EXIT_USAGE`) | the command line is wrong: clap's usage errors, a `--hosts` file that cannot be read or parsed, and values that do not fit the job (`start_error_code`) |

use volpex_proto::message::ReplicaId;

use super::replica::ReplicaState;
use crate::error::{HostsError, StartError};

/// The command line is wrong (clap's own code for a usage error).
pub const EXIT_USAGE: i32 = 2;

/// volpexrun's exit code for a job that could not start: `EXIT_USAGE` for a command line
/// wrong in itself (a bad value, a `--fault` or `--stdin` outside the job, `--host ''`, a
/// `--hosts` file that cannot be read or parsed, hosts with `--launcher local`),
/// `EXIT_LAUNCHER` for what the command line could not have known (other files, hosts
/// that cannot hold the job, the system).
pub fn start_error_code(e: &StartError) -> i32 {
    match e {
        StartError::Cli(_)
        | StartError::FaultOutsideJob { .. }
        | StartError::NoProgram
        | StartError::LocalWithHosts
        | StartError::SshWithoutHosts
        | StartError::Hosts(
            HostsError::List { .. }
            | HostsError::Line { .. }
            | HostsError::Empty { .. }
            | HostsError::Read { .. }
            | HostsError::TooLarge { .. },
        ) => EXIT_USAGE,
        StartError::EnvHostfile { .. }
        | StartError::Slurm(_)
        | StartError::Placement(_)
        | StartError::Bind(_)
        | StartError::Remote(_)
        | StartError::ControlPort { .. }
        | StartError::ControlAddr(_)
        | StartError::Thread(_)
        | StartError::Signals(_)
        | StartError::Spawn { .. }
        | StartError::Watch { .. }
        | StartError::CurrentDir(_)
        | StartError::CurrentExe(_)
        | StartError::ProgramNotFound { .. }
        | StartError::Wdir { .. }
        | StartError::ProgramIsDirectory { .. }
        | StartError::Report { .. }
        | StartError::NoReachableReplica(_) => EXIT_LAUNCHER,
    }
}

/// A rank was lost to failures (killed, silent, host lost, retired), not to its program's
/// own exit code.
pub const EXIT_RANK_LOST: i32 = 70;
/// `--timeout` ran out.
pub const EXIT_TIMEOUT: i32 = 124;
/// volpexrun itself could not start or run the job.
pub const EXIT_LAUNCHER: i32 = 1;

/// The exit code of volpexrun interrupted by signal `signal` (a shell's `128 + S`).
pub fn interrupted_code(signal: i32) -> i32 {
    128 + signal
}

/// The exit code of a failed rank: its program's own non-zero code if one of its replicas
/// exited with one, else `EXIT_RANK_LOST`.
pub fn rank_code(program_code: Option<i32>) -> i32 {
    match program_code {
        Some(c) if c != 0 => c,
        Some(_) | None => EXIT_RANK_LOST,
    }
}

/// The replicas' states of a job, rank-major (`rank * replicas + replica`).
#[derive(Debug, Clone, Copy)]
pub struct Grid<'a> {
    replicas: u32,
    states: &'a [&'a ReplicaState],
}

impl<'a> Grid<'a> {
    /// A grid of `states.len() / replicas` ranks.
    pub fn new(replicas: u32, states: &'a [&'a ReplicaState]) -> Grid<'a> {
        assert!(replicas > 0, "a job has at least one replica per rank");
        assert_eq!(
            states.len() % replicas as usize,
            0,
            "a state for every replica"
        );
        Grid { replicas, states }
    }

    /// How many ranks.
    pub fn ranks(&self) -> u32 {
        (self.states.len() / self.replicas as usize) as u32
    }

    /// The states of rank `rank`'s replicas, in replica order.
    pub fn rank(&self, rank: u32) -> &'a [&'a ReplicaState] {
        let r = self.replicas as usize;
        let start = rank as usize * r;
        &self.states[start..start + r]
    }
}

/// The rank still has a replica that is alive or has completed.
pub fn rank_alive(rank: &[&ReplicaState]) -> bool {
    rank.iter().any(|s| s.alive() || s.completed())
}

/// One of the rank's replicas completed (finalized or finished).
pub fn rank_completed(rank: &[&ReplicaState]) -> bool {
    rank.iter().any(|s| s.completed())
}

/// One of the rank's replicas exited cleanly after finishing.
pub fn rank_finished(rank: &[&ReplicaState]) -> bool {
    rank.iter().any(|s| **s == ReplicaState::Finished)
}

/// Where a running job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Some rank still works.
    Running,
    /// Every replica of `rank` (the first such rank) is gone: the job fails.
    Lost {
        /// The rank.
        rank: u32,
    },
    /// Every rank completed: the job shuts down.
    Done,
}

/// Where the job stands before its shutdown began.
pub fn progress(grid: Grid<'_>) -> Progress {
    if let Some(rank) = (0..grid.ranks()).find(|&r| !rank_alive(grid.rank(r))) {
        return Progress::Lost { rank };
    }
    if (0..grid.ranks()).all(|r| rank_completed(grid.rank(r))) {
        Progress::Done
    } else {
        Progress::Running
    }
}

/// The failure message for a lost rank, naming why each of its replicas is gone.
pub fn lost_message(grid: Grid<'_>, rank: u32) -> String {
    let why: Vec<String> = grid
        .rank(rank)
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let id = ReplicaId::new(rank, k as u32);
            match s {
                // Drained and still its replica's current incarnation: not replaced.
                ReplicaState::Drained => format!(
                    "{id}: {}, and its drain grace ran out before it could be replaced",
                    s.words()
                ),
                other => format!("{id}: {}", other.words()),
            }
        })
        .collect();
    let all = match grid.replicas {
        1 => "its only replica".to_string(),
        n => format!("all {n} replicas"),
    };
    format!("rank {rank} lost: {all} failed ({})", why.join("; "))
}

/// What becomes of a replica when the job is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtShutdown {
    /// It finished its work: send SHUTDOWN; it exits on its own.
    AskToExit,
    /// It is still working, and no longer needed: end it (SIGKILL).
    End,
    /// It is already gone.
    Leave,
}

/// What to do with a replica in state `state` when every rank has completed.
pub fn at_shutdown(state: &ReplicaState) -> AtShutdown {
    match state {
        ReplicaState::Finalized => AtShutdown::AskToExit,
        ReplicaState::Starting | ReplicaState::Running => AtShutdown::End,
        ReplicaState::Finished
        | ReplicaState::Failed(_)
        | ReplicaState::Retired(_)
        | ReplicaState::Ended
        | ReplicaState::Drained => AtShutdown::Leave,
    }
}

/// A failing job ends this replica (it is marked `Ended`; its process is killed).
pub fn ends_on_failure(state: &ReplicaState) -> bool {
    state.alive()
}

/// How the job ended, once every process is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every rank has a replica that finished cleanly.
    Succeeded,
    /// Why it failed, and volpexrun's exit code.
    Failed {
        /// Why.
        why: String,
        /// The exit code (see the table at the top).
        code: i32,
    },
}

impl Verdict {
    /// volpexrun's exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Succeeded => 0,
            Verdict::Failed { code, .. } => *code,
        }
    }

    /// The failure, if any.
    pub fn failure(&self) -> Option<&str> {
        match self {
            Verdict::Succeeded => None,
            Verdict::Failed { why, .. } => Some(why),
        }
    }
}

/// The verdict: the failure already decided during the run (with its code), else the
/// first rank that has no cleanly finished replica (with `rank_code` of its program's own
/// code, `program_code(rank)`), else success.
pub fn verdict(
    failure: Option<(&str, i32)>,
    grid: Grid<'_>,
    program_code: impl Fn(u32) -> Option<i32>,
) -> Verdict {
    if let Some((why, code)) = failure {
        return Verdict::Failed {
            why: why.to_string(),
            code,
        };
    }
    match (0..grid.ranks()).find(|&r| !rank_finished(grid.rank(r))) {
        Some(rank) => Verdict::Failed {
            why: format!("rank {rank}: no replica finished cleanly"),
            code: rank_code(program_code(rank)),
        },
        None => Verdict::Succeeded,
    }
}

#[cfg(test)]
mod tests;
