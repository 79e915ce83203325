//! A fault to inject into a replica (`--fault`, and what `--chaos` draws): its type, its
//! syntax, and the bound on every time the command line takes.
//!
//! Owns the value and its parser. Must never schedule or inject a fault (the job's
//! state machine does).

use std::time::Duration;

use crate::error::{CliError, FaultProblem};

/// The most seconds any flag or fault time takes (about 11.6 days): every such value
/// becomes a `Duration` and an environment variable in milliseconds, both of which hold it.
pub const SECONDS_MAX: f64 = 1e6;

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FaultAction {
    /// SIGKILL after a delay.
    Kill(Duration),
    /// SIGSTOP after a delay.
    Stop(Duration),
    /// SIGCONT after a delay.
    Cont(Duration),
    /// SIGTERM after a delay (a preemption notice, with regeneration on).
    Term(Duration),
    /// Exit right after the N-th send.
    ExitAfterSends(u64),
    /// Exit right after making the N-th coordinated choice.
    ExitAfterChoices(u64),
}

/// One injected fault.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fault {
    /// Rank.
    pub rank: u32,
    /// Replica index.
    pub replica: u32,
    /// What happens.
    pub action: FaultAction,
}

impl std::fmt::Display for Fault {
    /// The fault in the syntax `--fault` takes; times in whole milliseconds.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = |d: &Duration| d.as_millis() as f64 / 1000.0;
        write!(f, "{}.{}:", self.rank, self.replica)?;
        match &self.action {
            FaultAction::Kill(t) => write!(f, "kill@{}", secs(t)),
            FaultAction::Stop(t) => write!(f, "stop@{}", secs(t)),
            FaultAction::Cont(t) => write!(f, "cont@{}", secs(t)),
            FaultAction::Term(t) => write!(f, "term@{}", secs(t)),
            FaultAction::ExitAfterSends(n) => write!(f, "exit@sends={n}"),
            FaultAction::ExitAfterChoices(n) => write!(f, "exit@choices={n}"),
        }
    }
}

/// Parses `R.K:kill@T`, `R.K:stop@T`, `R.K:cont@T`, `R.K:term@T`, `R.K:exit@sends=N`,
/// `R.K:exit@choices=N`.
pub fn parse_fault(s: &str) -> Result<Fault, CliError> {
    let err = |problem: FaultProblem| CliError::Fault {
        spec: s.into(),
        problem,
    };
    let (who, what) = s
        .split_once(':')
        .ok_or_else(|| err(FaultProblem::MissingColon))?;
    let (r, k) = who
        .split_once('.')
        .ok_or_else(|| err(FaultProblem::NotRankReplica))?;
    let rank = r.parse::<u32>().map_err(|_| err(FaultProblem::BadRank))?;
    let replica = k
        .parse::<u32>()
        .map_err(|_| err(FaultProblem::BadReplica))?;
    let (verb, arg) = what
        .split_once('@')
        .ok_or_else(|| err(FaultProblem::MissingAt))?;
    let secs = |a: &str| -> Result<Duration, CliError> {
        let v = a.parse::<f64>().map_err(|_| err(FaultProblem::BadTime))?;
        if !(v.is_finite() && (0.0..=SECONDS_MAX).contains(&v)) {
            return Err(err(FaultProblem::TimeOutOfRange));
        }
        Ok(Duration::from_secs_f64(v))
    };
    let action = match verb {
        "kill" => FaultAction::Kill(secs(arg)?),
        "stop" => FaultAction::Stop(secs(arg)?),
        "cont" => FaultAction::Cont(secs(arg)?),
        "term" => FaultAction::Term(secs(arg)?),
        "exit" => {
            let (what, n) = arg
                .split_once('=')
                .ok_or_else(|| err(FaultProblem::ExitForm))?;
            let n = n.parse::<u64>().map_err(|_| err(FaultProblem::BadCount))?;
            if n == 0 {
                return Err(err(FaultProblem::ZeroCount));
            }
            match what {
                "sends" => FaultAction::ExitAfterSends(n),
                "choices" => FaultAction::ExitAfterChoices(n),
                _ => return Err(err(FaultProblem::ExitForm)),
            }
        }
        _ => return Err(err(FaultProblem::UnknownAction)),
    };
    Ok(Fault {
        rank,
        replica,
        action,
    })
}
