//! `--chaos SEED:SPEC`: random faults drawn from a seed, decided against the live job.
//!
//! Owns the spec parser and the schedule generator: a ChaCha generator seeded with SEED
//! draws the times of timed faults (a Poisson process of kills and stops, each stop
//! followed by a continue), picks their targets among the replicas the caller says are
//! running, and at the start arms exit faults (`exit@sends=N`). Every fault it decides is
//! a `fault::Fault`, the same value `--fault` gives, and goes into a schedule printed in
//! `--fault` syntax, so any run can be replayed. Unless the spec says `last`, it never
//! takes a replica when no other replica of its rank would be left alive, running (not
//! stopped by chaos) and not armed to exit.
//!
//! Pure: must never do I/O, read a clock or signal anything. Time and the replicas'
//! states come in as arguments; the job's state machine fires the faults.

use std::fmt;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{ChaosProblem, CliError};
use crate::fault::{Fault, FaultAction, SECONDS_MAX};

/// The highest kill or stop rate, per second.
pub const RATE_MAX_PER_S: f64 = 1000.0;
/// The largest `exit-sends`.
pub const EXIT_SENDS_MAX: u64 = 1_000_000_000;
/// How long a stopped replica stays stopped unless `stop-for` says otherwise.
pub const STOP_FOR_DEFAULT: Duration = Duration::from_millis(500);
/// The largest N of an armed `exit@sends=N` unless `exit-sends` says otherwise.
pub const EXIT_SENDS_DEFAULT: u64 = 200;

/// A parsed `--chaos SEED:SPEC`.
#[derive(Debug, Clone, PartialEq)]
pub struct ChaosSpec {
    /// Seeds the generator.
    pub seed: u64,
    /// SIGKILLs per second, over the whole job.
    pub kill_per_s: f64,
    /// SIGSTOPs per second, over the whole job.
    pub stop_per_s: f64,
    /// How long a stopped replica stays stopped before its SIGCONT.
    pub stop_for: Duration,
    /// Probability that a replica is armed, at the start, to exit after N sends.
    pub exit_p: f64,
    /// N is drawn from 1..=exit_sends.
    pub exit_sends: u64,
    /// No timed fault before this time since the start.
    pub from: Duration,
    /// No timed fault after this time since the start.
    pub until: Option<Duration>,
    /// At most this many timed faults (kills and stops).
    pub max: Option<u32>,
    /// The last live replica of a rank may be taken.
    pub last: bool,
}

impl fmt::Display for ChaosSpec {
    /// The spec in the syntax `--chaos` takes, every field spelled out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:kill={},stop={},stop-for={},exit={},exit-sends={},from={}",
            self.seed,
            self.kill_per_s,
            self.stop_per_s,
            self.stop_for.as_secs_f64(),
            self.exit_p,
            self.exit_sends,
            self.from.as_secs_f64()
        )?;
        if let Some(u) = self.until {
            write!(f, ",until={}", u.as_secs_f64())?;
        }
        if let Some(m) = self.max {
            write!(f, ",max={m}")?;
        }
        write!(f, ",last={}", if self.last { "yes" } else { "no" })
    }
}

/// Parses `SEED:ITEM,ITEM,...`; see docs/REGENERATION.md, "Chaos", for the items.
pub fn parse_chaos(s: &str) -> Result<ChaosSpec, CliError> {
    let err = |problem: ChaosProblem| CliError::Chaos {
        spec: s.into(),
        problem,
    };
    let (seed, items) = s
        .split_once(':')
        .ok_or_else(|| err(ChaosProblem::MissingColon))?;
    let seed = seed
        .trim()
        .parse::<u64>()
        .map_err(|_| err(ChaosProblem::BadSeed))?;
    let mut spec = ChaosSpec {
        seed,
        kill_per_s: 0.0,
        stop_per_s: 0.0,
        stop_for: STOP_FOR_DEFAULT,
        exit_p: 0.0,
        exit_sends: EXIT_SENDS_DEFAULT,
        from: Duration::ZERO,
        until: None,
        max: None,
        last: false,
    };
    let num = |key: &'static str, v: &str, lo: f64, hi: f64| -> Result<f64, CliError> {
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() && x >= lo && x <= hi => Ok(x),
            _ => Err(err(ChaosProblem::OutOfRange { key, lo, hi })),
        }
    };
    for item in items.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        match key.trim() {
            "kill" => spec.kill_per_s = num("kill", value, 0.0, RATE_MAX_PER_S)?,
            "stop" => spec.stop_per_s = num("stop", value, 0.0, RATE_MAX_PER_S)?,
            "stop-for" => {
                let v = num("stop-for", value, 0.001, SECONDS_MAX)?;
                spec.stop_for = Duration::from_secs_f64(v);
            }
            "exit" => spec.exit_p = num("exit", value, 0.0, 1.0)?,
            "exit-sends" => {
                spec.exit_sends = value
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (1..=EXIT_SENDS_MAX).contains(n))
                    .ok_or_else(|| {
                        err(ChaosProblem::OutOfRange {
                            key: "exit-sends",
                            lo: 1.0,
                            hi: EXIT_SENDS_MAX as f64,
                        })
                    })?
            }
            "from" => spec.from = Duration::from_secs_f64(num("from", value, 0.0, SECONDS_MAX)?),
            "until" => {
                spec.until = Some(Duration::from_secs_f64(num(
                    "until",
                    value,
                    0.0,
                    SECONDS_MAX,
                )?))
            }
            "max" => {
                spec.max = Some(value.trim().parse::<u32>().map_err(|_| {
                    err(ChaosProblem::OutOfRange {
                        key: "max",
                        lo: 0.0,
                        hi: f64::from(u32::MAX),
                    })
                })?)
            }
            "last" => {
                spec.last = match value.trim() {
                    "" | "yes" => true,
                    "no" => false,
                    _ => return Err(err(ChaosProblem::BadLast)),
                }
            }
            other => return Err(err(ChaosProblem::UnknownKey { key: other.into() })),
        }
    }
    if spec.until.is_some_and(|u| u < spec.from) {
        return Err(err(ChaosProblem::EmptyWindow));
    }
    if spec.kill_per_s == 0.0 && spec.stop_per_s == 0.0 && spec.exit_p == 0.0 {
        return Err(err(ChaosProblem::Nothing));
    }
    Ok(spec)
}

/// What the caller knows of one replica when chaos decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Live {
    /// Registered and computing: a target, and a sibling that keeps its rank alive.
    Running,
    /// Alive but not a target (starting, or finished and serving its log): keeps its
    /// rank alive.
    Alive,
    /// Gone.
    Gone,
}

/// The generator: the spec, its seeded stream, and what it decided so far.
///
/// `new` arms the exit faults (`start_faults`); then the caller calls `decide` at the
/// latest at `next_at`, with every replica's `Live` state (rank-major), and fires the
/// faults it returns. `schedule` is every fault decided, for printing and replay.
#[derive(Debug, Clone)]
pub struct Chaos {
    spec: ChaosSpec,
    replicas: u32,
    rng: ChaCha8Rng,
    next_at: Option<Duration>,
    timed: u32,
    schedule: Vec<Fault>,
    /// How much of the schedule `take_unreported` has handed out.
    reported: usize,
    /// Replicas armed to exit after some sends (rank-major flags).
    armed: Vec<bool>,
    /// Replicas stopped by chaos, and when their SIGCONT is due (rank-major).
    stopped_until: Vec<Option<Duration>>,
}

impl Chaos {
    /// A generator for a job of `ranks` x `replicas`; arms the exit faults.
    pub fn new(spec: ChaosSpec, ranks: u32, replicas: u32) -> Chaos {
        let n = (ranks * replicas) as usize;
        let mut c = Chaos {
            rng: ChaCha8Rng::seed_from_u64(spec.seed),
            replicas,
            next_at: None,
            timed: 0,
            schedule: Vec::new(),
            reported: 0,
            armed: vec![false; n],
            stopped_until: vec![None; n],
            spec,
        };
        for rank in 0..ranks {
            for k in 0..replicas {
                let draw: f64 = c.rng.random();
                let n = c.rng.random_range(1..=c.spec.exit_sends);
                let others_safe = (0..replicas).any(|j| j != k && !c.armed[c.idx(rank, j)]);
                if draw < c.spec.exit_p && (c.spec.last || others_safe) {
                    let i = c.idx(rank, k);
                    c.armed[i] = true;
                    c.schedule.push(Fault {
                        rank,
                        replica: k,
                        action: FaultAction::ExitAfterSends(n),
                    });
                }
            }
        }
        c.next_at = c.gap(c.spec.from);
        c
    }

    /// The spec it runs.
    pub fn spec(&self) -> &ChaosSpec {
        &self.spec
    }

    /// The exit faults armed at the start (they go into the processes' environment).
    pub fn start_faults(&self) -> Vec<Fault> {
        self.schedule
            .iter()
            .filter(|f| matches!(f.action, FaultAction::ExitAfterSends(_)))
            .copied()
            .collect()
    }

    /// Every fault decided so far, in order: the exits armed at the start, then the
    /// timed faults (a stop with its continue).
    pub fn schedule(&self) -> &[Fault] {
        &self.schedule
    }

    /// The faults decided since the last call (all of them at the first), to print.
    pub fn take_unreported(&mut self) -> Vec<Fault> {
        let fresh = self.schedule[self.reported..].to_vec();
        self.reported = self.schedule.len();
        fresh
    }

    /// Kills and stops decided so far.
    #[cfg(test)]
    pub fn timed_count(&self) -> u32 {
        self.timed
    }

    /// When the next timed fault is due, if any is left.
    pub fn next_at(&self) -> Option<Duration> {
        self.next_at
    }

    /// No timed fault after this: the job is over (done or failed).
    pub fn stop(&mut self) {
        self.next_at = None;
    }

    /// Decides every timed fault due at `now`, against `live` (every replica, rank-major).
    /// A fault whose target cannot be taken is skipped (the draw still counts, so the times
    /// depend on the seed alone). Returns the faults to fire, with their times.
    pub fn decide(&mut self, now: Duration, live: &[Live]) -> Vec<Fault> {
        for (i, s) in self.stopped_until.iter_mut().enumerate() {
            if s.is_some_and(|t| t <= now) || live.get(i) == Some(&Live::Gone) {
                *s = None;
            }
        }
        let mut out = Vec::new();
        // Kills decided in this call count at once: two due together never take a rank.
        let mut live = live.to_vec();
        while let Some(at) = self.next_at.filter(|&t| t <= now) {
            let total = self.spec.kill_per_s + self.spec.stop_per_s;
            let kill = self.rng.random::<f64>() * total < self.spec.kill_per_s;
            let pick: f64 = self.rng.random();
            self.next_at = self.gap(at);
            let targets: Vec<usize> = (0..live.len())
                .filter(|&i| self.takeable(i, &live))
                .collect();
            if targets.is_empty() {
                continue;
            }
            let i = targets[((pick * targets.len() as f64) as usize).min(targets.len() - 1)];
            let (rank, replica) = (i as u32 / self.replicas, i as u32 % self.replicas);
            // Whole milliseconds, as the schedule prints them: a replay fires the same times.
            let at = Duration::from_millis(now.as_millis() as u64);
            let mut fault = |action| {
                let f = Fault {
                    rank,
                    replica,
                    action,
                };
                self.schedule.push(f);
                out.push(f);
            };
            if kill {
                fault(FaultAction::Kill(at));
                live[i] = Live::Gone;
            } else {
                let cont = at + self.spec.stop_for;
                fault(FaultAction::Stop(at));
                fault(FaultAction::Cont(cont));
                self.stopped_until[i] = Some(cont);
            }
            self.timed += 1;
            if self.spec.max.is_some_and(|m| self.timed >= m) {
                self.next_at = None;
            }
        }
        out
    }

    fn idx(&self, rank: u32, replica: u32) -> usize {
        (rank * self.replicas + replica) as usize
    }

    /// The time of the next timed fault after `after` (exponential gap), or `None` when
    /// none is left (no rate, past `until`, `max` reached).
    fn gap(&mut self, after: Duration) -> Option<Duration> {
        let total = self.spec.kill_per_s + self.spec.stop_per_s;
        if total <= 0.0 || self.spec.max.is_some_and(|m| self.timed >= m) {
            return None;
        }
        let u: f64 = self.rng.random();
        let secs = (-(1.0 - u).ln() / total).min(SECONDS_MAX);
        let at = after + Duration::from_secs_f64(secs);
        match self.spec.until {
            Some(u) if at > u => None,
            _ => Some(at),
        }
    }

    /// Replica `i` is running, not stopped by chaos, and (unless `last`) its rank keeps
    /// another replica that is alive, not stopped and not armed to exit.
    fn takeable(&self, i: usize, live: &[Live]) -> bool {
        if live[i] != Live::Running || self.stopped_until[i].is_some() {
            return false;
        }
        if self.spec.last {
            return true;
        }
        let r = self.replicas as usize;
        let first = i - i % r;
        (first..first + r).any(|j| {
            j != i && live[j] != Live::Gone && self.stopped_until[j].is_none() && !self.armed[j]
        })
    }
}

#[cfg(test)]
mod tests;
