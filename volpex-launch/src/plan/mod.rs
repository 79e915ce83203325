//! `volpexrun plan`: how many replicas a job needs to survive host failures, after P2P-MPI
//! (Genaud and Rattanapoka, "P2P-MPI", section 4.5), without and with regeneration.
//!
//! **Without regeneration** (the paper's model, `--no-regen` prints only this): a host fails
//! before time t with the Weibull probability `f(t) = 1 - exp(-(t*lambda)^delta)` (shape
//! `delta`, rate `lambda`; a mean time between failures M is the exponential case
//! `delta = 1, lambda = 1/M`). Failures are independent and each replica of a rank is on a
//! different host, so a rank is lost when all r of its hosts fail, and a job of p ranks
//! survives with probability `(1 - f(t)^r)^p`. Replication costs time: with `--overhead o`
//! the run takes `t * (1 + o*(r-1))` at degree r (the paper's linear overhead).
//!
//! **With regeneration** (issue 17, DESIGN.md "Regeneration"), a lost replica is replaced:
//! R seconds after its failure (`--regen-time`: spawn, snapshot from a live sibling,
//! catch-up) a new incarnation serves in its slot. A rank is then lost only when all r of
//! its slots are down *at the same moment*: a failure strikes while each of the other r - 1
//! slots is still waiting for its replacement to catch up.
//!
//! - Assumption: each slot alternates independently between up, for an exponential time of
//!   rate `lambda_e` (memoryless host failures, a replacement host as failure-prone as any
//!   other), and down, for a fixed time R (deterministic repair); every lost replica is
//!   regenerated on its own, in parallel with any other of the same rank; R is short
//!   against the mean time between failures (`lambda_e * R << 1`).
//! - Then, at the moment a slot fails, each other slot is down with probability about
//!   `lambda_e * R` (it failed within the last R), so one rank is lost at the rate
//!   `L(r) = r * lambda_e * (lambda_e * R)^(r-1)`, and a job of p ranks running t seconds
//!   survives with `exp(-p * t * L(r))`. R = 0 gives 1 for r >= 2.
//! - Why deterministic R, and no (r-1)! factor: the fraction of time a slot is down,
//!   `lambda_e*R / (1 + lambda_e*R)`, depends only on the mean of the repair time, so
//!   exponential repair of mean R gives the same leading term (the tests check both by
//!   simulation). The (r-1)! factor of textbook formulas belongs to *serialized* repair
//!   (one regeneration at a time per rank), which volpexrun does not do. Exactly, for
//!   independent slots in steady state, `L(r) = r*lambda_e*(lambda_e*R)^(r-1) /
//!   (1 + lambda_e*R)^r`; the printed figure omits the denominator and starts the
//!   steady state at time 0 (a job really starts with all slots up): both errors make it
//!   slightly pessimistic.
//! - Weibull failures are replaced by one constant rate: `lambda_e = max(1, delta) *
//!   (t*lambda)^delta / t`. For `delta <= 1` that is the mean rate over the run (the same
//!   expected number of failures per host as the Weibull model; with `delta < 1` the true
//!   hazard is higher only early in the run and lower after); for `delta > 1` (wear-out) it
//!   is the hazard at the end of the run, the highest the job meets. The exponential case
//!   uses lambda itself; wear-out errs on the safe side.
//! - r = 1: there is no sibling to take a snapshot from, so regeneration cannot help; the
//!   figure is the one without regeneration. For every r, regeneration only adds replicas,
//!   and extra replicas can only help, so the printed figure is never below the one without
//!   regeneration nor below the one with fewer replicas (both bounds matter only where
//!   `lambda_e * R` is not small, and the printout then warns that the figure is rough).
//!
//! Pure arithmetic and its printout; must never start anything.

use std::fmt::Write as _;

use clap::Parser;

use crate::error::PlanError;

/// Print the probability that a job survives host failures at r = 1..6 replicas, without and
/// with regeneration of lost replicas, and the smallest r that reaches a target in each case
/// (P2P-MPI section 4.5; regeneration: see `--regen-time`).
#[derive(Debug, Parser)]
#[command(name = "volpexrun plan")]
pub struct PlanArgs {
    /// Number of ranks.
    #[arg(short = 'n', long = "np", value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub ranks: u32,

    /// Expected run time of the job without replication: seconds, or with a unit
    /// (90s, 30m, 2h, 1d).
    #[arg(long = "time", value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_duration_s)]
    pub time_s: f64,

    /// Mean time between failures of one host (exponential failures: Weibull shape 1).
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true, value_parser = parse_duration_s, conflicts_with_all = ["shape", "rate"])]
    pub mtbf: Option<f64>,

    /// Weibull shape (delta > 0); below 1 means failures become rarer as a host stays up.
    #[arg(long = "weibull-shape", value_name = "DELTA", requires = "rate", allow_negative_numbers = true, value_parser = parse_shape)]
    pub shape: Option<f64>,

    /// Weibull rate lambda, failures per hour, or with a unit: 0.01/h, 2e-6/s, 0.2/d.
    #[arg(long = "weibull-rate", value_name = "LAMBDA", requires = "shape", allow_hyphen_values = true, value_parser = parse_rate_per_s)]
    pub rate: Option<f64>,

    /// Survival probability to reach.
    #[arg(long, value_name = "P", default_value_t = 0.99, allow_negative_numbers = true, value_parser = parse_probability)]
    pub target: f64,

    /// Extra run time per added replica, as a fraction of the run time (0.1 = 10%).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0, allow_negative_numbers = true, value_parser = parse_overhead)]
    pub overhead: f64,

    /// Largest replication degree to print.
    #[arg(long = "max-r", value_name = "R", default_value_t = 6, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub max_r: u32,

    /// Mean time from a replica's failure to its new incarnation having caught up (spawn,
    /// snapshot, catch-up): default 1 s, above what NPB class A measured from kill to
    /// caught up (docs/BENCHMARKS.md); measure yours with `volpexrun --report`. 0 means
    /// instant regeneration.
    #[arg(long = "regen-time", value_name = "DURATION", default_value = "1s", allow_hyphen_values = true, value_parser = parse_regen_time_s, conflicts_with = "no_regen")]
    pub regen_time_s: f64,

    /// Print only the table without regeneration (a lost replica is gone for good).
    #[arg(long = "no-regen")]
    pub no_regen: bool,
}

/// A host failure model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weibull {
    /// Shape delta.
    pub shape: f64,
    /// Rate lambda, per second.
    pub rate_per_s: f64,
}

impl Weibull {
    /// Probability that a host fails before `t_s` seconds.
    pub fn fail_by(&self, t_s: f64) -> f64 {
        -(-(t_s * self.rate_per_s).powf(self.shape)).exp_m1()
    }
}

/// Probability that a job of `ranks` ranks at degree `r` survives a run of `t_s` seconds
/// when lost replicas are gone for good.
pub fn survival(model: Weibull, ranks: u32, r: u32, t_s: f64) -> f64 {
    ln_survival(model, ranks, r, t_s).exp()
}

/// `ln` of [`survival`]: `p * ln(1 - f^r)`, so tiny failure probabilities keep their digits.
fn ln_survival(model: Weibull, ranks: u32, r: u32, t_s: f64) -> f64 {
    let f = model.fail_by(t_s);
    let all_r_fail = f.powi(r as i32);
    f64::from(ranks) * (-all_r_fail).ln_1p()
}

/// The constant per-host failure rate (per second) the regeneration model uses for a run of
/// `t_s` seconds: `max(1, delta) * (t*lambda)^delta / t` (see the module comment).
pub fn regen_host_rate_per_s(model: Weibull, t_s: f64) -> f64 {
    model.shape.max(1.0) * (t_s * model.rate_per_s).powf(model.shape) / t_s
}

/// Rate (per second) at which one rank of `r` replicas loses all of them at once, each host
/// failing at `rate_per_s` and each lost replica back after `regen_s`:
/// `r * lambda * (lambda * R)^(r-1)`.
pub fn rank_loss_rate(rate_per_s: f64, r: u32, regen_s: f64) -> f64 {
    f64::from(r) * rate_per_s * (rate_per_s * regen_s).powi(r as i32 - 1)
}

/// Probability that a job of `ranks` ranks at degree `r` survives a run of `t_s` seconds
/// when every lost replica is regenerated `regen_s` seconds after its failure.
pub fn survival_regen(model: Weibull, ranks: u32, r: u32, t_s: f64, regen_s: f64) -> f64 {
    ln_survival_regen(model, ranks, r, t_s, regen_s).exp()
}

/// `ln` of [`survival_regen`].
fn ln_survival_regen(model: Weibull, ranks: u32, r: u32, t_s: f64, regen_s: f64) -> f64 {
    let classic = ln_survival(model, ranks, r, t_s);
    if r < 2 {
        // No sibling to regenerate from.
        return classic;
    }
    if regen_s == 0.0 {
        // Never two slots down at once (and no 0 * inf below for an extreme Weibull).
        return 0.0;
    }
    let rate = regen_host_rate_per_s(model, t_s);
    // Regeneration only adds replicas, and a job can ignore replicas it has: never below the
    // figure without regeneration, nor below the one with fewer replicas.
    (2..=r)
        .map(|k| -(f64::from(ranks) * t_s * rank_loss_rate(rate, k, regen_s)))
        .filter(|l| !l.is_nan())
        .fold(classic, f64::max)
}

/// The printout of `volpexrun plan`.
pub fn report(a: &PlanArgs) -> Result<String, PlanError> {
    let model = match (a.mtbf, a.shape, a.rate) {
        (Some(m), None, None) => Weibull {
            shape: 1.0,
            rate_per_s: 1.0 / m,
        },
        (None, Some(shape), Some(rate_per_s)) => Weibull { shape, rate_per_s },
        _ => return Err(PlanError::NoModel),
    };
    let regen = !a.no_regen;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "job: {} ranks, {} without replication; host failures: Weibull shape {}, rate {:.4e}/h{}",
        a.ranks,
        human(a.time_s),
        model.shape,
        model.rate_per_s * 3600.0,
        a.mtbf
            .map(|m| format!(" (MTBF {})", human(m)))
            .unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "P(one host fails during the run) = {:.6}",
        model.fail_by(a.time_s)
    );
    if regen {
        let rate = regen_host_rate_per_s(model, a.time_s);
        let _ = writeln!(
            s,
            "regeneration: a lost replica is back {} after its failure (--regen-time); \
             host failure rate {:.4e}/h",
            human_regen(a.regen_time_s),
            rate * 3600.0
        );
        let load = rate * a.regen_time_s;
        if load > 0.1 || a.regen_time_s > 0.1 * a.time_s {
            let _ = writeln!(
                s,
                "note: regeneration is not short against the time between failures \
                 (rate x regen time = {load:.3}) or the run; the regeneration figures are rough"
            );
        }
        let _ = writeln!(
            s,
            "{:14}  {:-^26}  {:-^26}",
            "", " without regeneration ", " with regeneration "
        );
        let _ = writeln!(
            s,
            "{:>2}  {:>10}  {:>12}  {:>12}  {:>12}  {:>12}",
            "r", "run time", "P(survive)", "P(fail)", "P(survive)", "P(fail)"
        );
    } else {
        let _ = writeln!(
            s,
            "{:>2}  {:>10}  {:>12}  {:>12}",
            "r", "run time", "P(survive)", "P(fail)"
        );
    }
    let (mut best, mut best_regen) = (None, None);
    for r in 1..=a.max_r {
        let t = a.time_s * (1.0 + a.overhead * f64::from(r - 1));
        let p = survival(model, a.ranks, r, t);
        let fail = -ln_survival(model, a.ranks, r, t).exp_m1();
        let _ = write!(s, "{r:>2}  {:>10}  {p:>12.6}  {fail:>12.3e}", human(t));
        if best.is_none() && p >= a.target {
            best = Some(r);
        }
        if regen {
            let p = survival_regen(model, a.ranks, r, t, a.regen_time_s);
            let fail = -ln_survival_regen(model, a.ranks, r, t, a.regen_time_s).exp_m1();
            let _ = write!(s, "  {p:>12.6}  {fail:>12.3e}");
            if best_regen.is_none() && p >= a.target {
                best_regen = Some(r);
            }
        }
        s.push('\n');
    }
    let smallest = |best: Option<u32>| match best {
        Some(r) => format!("r = {r}"),
        None => format!("no r in 1..={}", a.max_r),
    };
    if regen {
        let _ = writeln!(
            s,
            "smallest r reaching P(survive) >= {}: without regeneration: {}; \
             with regeneration ({} to regenerate): {}",
            a.target,
            smallest(best),
            human_regen(a.regen_time_s),
            smallest(best_regen)
        );
    } else {
        match best {
            Some(r) => {
                let _ = writeln!(s, "smallest r reaching P(survive) >= {}: {r}", a.target);
            }
            None => {
                let _ = writeln!(
                    s,
                    "no r in 1..={} reaches P(survive) >= {}",
                    a.max_r, a.target
                );
            }
        }
    }
    Ok(s)
}

/// A regeneration time: `5 s`, `0.25 s`, or as [`human`] from a minute up.
fn human_regen(t_s: f64) -> String {
    if t_s < 60.0 {
        format!("{} s", (t_s * 1000.0).round() / 1000.0)
    } else {
        human(t_s)
    }
}

fn human(t_s: f64) -> String {
    if t_s >= 86_400.0 {
        format!("{:.2} d", t_s / 86_400.0)
    } else if t_s >= 3600.0 {
        format!("{:.2} h", t_s / 3600.0)
    } else if t_s >= 60.0 {
        format!("{:.1} min", t_s / 60.0)
    } else {
        format!("{t_s:.1} s")
    }
}

fn unit_s(u: &str) -> Option<f64> {
    match u {
        "" | "s" => Some(1.0),
        "m" | "min" => Some(60.0),
        "h" => Some(3600.0),
        "d" => Some(86_400.0),
        _ => None,
    }
}

/// The longest duration `--time` and `--mtbf` take: 100 years, in seconds.
pub const DURATION_MAX_S: f64 = 100.0 * 365.0 * 86_400.0;
/// The highest `--weibull-rate`: 1000 failures per second.
pub const RATE_MAX_PER_S: f64 = 1000.0;
/// The largest `--weibull-shape`.
pub const SHAPE_MAX: f64 = 100.0;
/// The largest `--overhead`: each added replica makes the run 100 times longer.
pub const OVERHEAD_MAX: f64 = 100.0;

/// Parses `90`, `90s`, `30m`, `2h`, `1d` into seconds, in (0, `DURATION_MAX_S`].
pub fn parse_duration_s(s: &str) -> Result<f64, PlanError> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| PlanError::NotDuration { input: s.into() })?;
    let u = unit_s(unit).ok_or_else(|| PlanError::UnknownUnit {
        input: s.into(),
        unit: unit.into(),
    })?;
    if !(v.is_finite() && v > 0.0) {
        return Err(PlanError::MustBePositive { input: s.into() });
    }
    if v * u > DURATION_MAX_S {
        return Err(PlanError::TooLarge {
            input: s.into(),
            max: "100 years (36500d)",
        });
    }
    Ok(v * u)
}

/// Parses a rate `0.01/h` (bare numbers are per hour) into per second, in
/// (0, `RATE_MAX_PER_S`].
pub fn parse_rate_per_s(s: &str) -> Result<f64, PlanError> {
    let (num, unit) = s.trim().split_once('/').unwrap_or((s.trim(), "h"));
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| PlanError::NotRate { input: s.into() })?;
    let u = unit_s(unit.trim())
        .filter(|_| !unit.trim().is_empty())
        .ok_or_else(|| PlanError::UnknownUnit {
            input: s.into(),
            unit: unit.into(),
        })?;
    if !(v.is_finite() && v > 0.0) {
        return Err(PlanError::MustBePositive { input: s.into() });
    }
    if v / u > RATE_MAX_PER_S {
        return Err(PlanError::TooLarge {
            input: s.into(),
            max: "1000/s",
        });
    }
    Ok(v / u)
}

/// Parses `--regen-time`: like [`parse_duration_s`], but 0 (instant regeneration) is allowed.
pub fn parse_regen_time_s(s: &str) -> Result<f64, PlanError> {
    match parse_duration_s(s) {
        Err(PlanError::MustBePositive { .. }) => {
            let t = s.trim();
            let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
            if t[..split].trim().parse::<f64>() == Ok(0.0) {
                Ok(0.0)
            } else {
                Err(PlanError::MustNotBeNegative { input: s.into() })
            }
        }
        other => other,
    }
}

fn parse_shape(s: &str) -> Result<f64, PlanError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= SHAPE_MAX => Ok(v),
        _ => Err(PlanError::NotPositive { input: s.into() }),
    }
}

fn parse_overhead(s: &str) -> Result<f64, PlanError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=OVERHEAD_MAX).contains(&v) => Ok(v),
        _ => Err(PlanError::NotNonNegative { input: s.into() }),
    }
}

fn parse_probability(s: &str) -> Result<f64, PlanError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(PlanError::NotProbability { input: s.into() }),
    }
}

/// Entry point of the subcommand; returns the exit code.
pub fn main(argv: impl IntoIterator<Item = std::ffi::OsString>) -> i32 {
    let a = match PlanArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match report(&a) {
        Ok(s) => {
            print!("{s}");
            0
        }
        Err(e) => {
            eprintln!("volpexrun plan: {e}");
            2
        }
    }
}

#[cfg(test)]
mod tests;
