//! `volpexrun plan`: how many replicas a job needs to survive host failures, after P2P-MPI
//! (Genaud and Rattanapoka, "P2P-MPI", section 4.5).
//!
//! A host fails before time t with the Weibull probability `f(t) = 1 - exp(-(t*lambda)^delta)`
//! (shape `delta`, rate `lambda`; a mean time between failures M is the exponential case
//! `delta = 1, lambda = 1/M`). Failures are independent and each replica of a rank is on a
//! different host, so a rank is lost when all r of its hosts fail, and a job of p ranks
//! survives with probability `(1 - f(t)^r)^p`. Replication costs time: with `--overhead o`
//! the run takes `t * (1 + o*(r-1))` at degree r (the paper's linear overhead).
//!
//! Pure arithmetic and its printout; must never start anything.

use std::fmt::Write as _;

use clap::Parser;

use crate::error::PlanError;

/// Print the probability that a job survives host failures at r = 1..6 replicas, and the
/// smallest r that reaches a target (P2P-MPI section 4.5).
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

/// Probability that a job of `ranks` ranks at degree `r` survives a run of `t_s` seconds.
pub fn survival(model: Weibull, ranks: u32, r: u32, t_s: f64) -> f64 {
    let f = model.fail_by(t_s);
    let all_r_fail = f.powi(r as i32);
    // (1 - f^r)^p computed through logs so tiny probabilities keep their digits.
    (f64::from(ranks) * (-all_r_fail).ln_1p()).exp()
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
    let _ = writeln!(
        s,
        "{:>2}  {:>10}  {:>12}  {:>12}",
        "r", "run time", "P(survive)", "P(fail)"
    );
    let mut best = None;
    for r in 1..=a.max_r {
        let t = a.time_s * (1.0 + a.overhead * f64::from(r - 1));
        let p = survival(model, a.ranks, r, t);
        let _ = writeln!(s, "{r:>2}  {:>10}  {p:>12.6}  {:>12.3e}", human(t), 1.0 - p);
        if best.is_none() && p >= a.target {
            best = Some(r);
        }
    }
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
    Ok(s)
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
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    #[test]
    fn exponential_case_matches_the_closed_form() {
        // MTBF 10 h, 1 h run: f = 1 - e^-0.1.
        let m = Weibull {
            shape: 1.0,
            rate_per_s: 1.0 / 36_000.0,
        };
        let f = 1.0 - (-0.1f64).exp();
        assert!(close(m.fail_by(3600.0), f));
        for r in 1..=6 {
            let want = (1.0 - f.powi(r)).powi(16);
            assert!(close(survival(m, 16, r as u32, 3600.0), want), "r={r}");
        }
    }

    #[test]
    fn weibull_formula_of_section_4_5() {
        // Pappr(p, r) = 1 - (1 - (1 - e^-(t lambda)^delta)^r)^p
        let (p, t, lambda, delta) = (10u32, 7200.0, 1e-4, 0.7);
        let m = Weibull {
            shape: delta,
            rate_per_s: lambda,
        };
        for r in 1..=6 {
            let f: f64 = 1.0 - (-(t * lambda).powf(delta)).exp();
            let fail = 1.0 - (1.0 - f.powi(r)).powi(p as i32);
            assert!(
                (1.0 - survival(m, p, r as u32, t) - fail).abs() < 1e-12,
                "r={r}"
            );
        }
    }

    #[test]
    fn more_replicas_help_without_overhead() {
        let m = Weibull {
            shape: 0.5,
            rate_per_s: 1e-5,
        };
        let mut last = 0.0;
        for r in 1..=6 {
            let s = survival(m, 64, r, 86_400.0);
            assert!(s > last, "r={r}: {s} <= {last}");
            last = s;
        }
    }

    #[test]
    fn printout_names_the_smallest_r() {
        let a = PlanArgs::try_parse_from([
            "plan", "-n", "16", "--time", "2h", "--mtbf", "1d", "--target", "0.99",
        ])
        .unwrap();
        let s = report(&a).unwrap();
        // f = 1 - e^(-1/12) = 0.07996; r=2: (1-f^2)^16 = 0.9028; r=3: 0.99186.
        assert!(
            s.contains("smallest r reaching P(survive) >= 0.99: 3"),
            "{s}"
        );
        assert_eq!(
            s.lines()
                .filter(|l| l.trim_start().starts_with(char::is_numeric))
                .count(),
            6,
            "{s}"
        );
    }

    #[test]
    fn every_numeric_flag_refuses_what_is_out_of_range() {
        let base = ["plan", "-n", "4", "--time", "1h", "--mtbf", "1d"];
        let bad: [(&str, &[&str]); 8] = [
            ("-n", &["0", "-1", "100001", "nan", "1e3"]),
            ("--time", &["0", "-1h", "nan", "1e300", "inf"]),
            ("--mtbf", &["0", "1e300d", "nan"]),
            ("--target", &["0", "1", "1.5", "nan", "-0.5"]),
            ("--overhead", &["-0.1", "nan", "inf", "1e300", "101"]),
            ("--max-r", &["0", "65", "-1", "2.5"]),
            ("--weibull-shape", &["0", "-1", "nan", "inf", "101"]),
            ("--weibull-rate", &["0", "-1/h", "nan", "1e300/s"]),
        ];
        for (flag, values) in bad {
            for v in values {
                let mut argv: Vec<&str> = match flag {
                    "--weibull-shape" => {
                        vec!["plan", "-n", "4", "--time", "1h", "--weibull-rate", "1/h"]
                    }
                    "--weibull-rate" => {
                        vec!["plan", "-n", "4", "--time", "1h", "--weibull-shape", "1"]
                    }
                    "--mtbf" => vec!["plan", "-n", "4", "--time", "1h"],
                    _ => base.to_vec(),
                };
                if let Some(i) = argv.iter().position(|a| *a == flag) {
                    argv.remove(i + 1);
                    argv.remove(i);
                }
                argv.extend([flag, v]);
                let e = PlanArgs::try_parse_from(&argv).expect_err(&format!("{flag} {v}"));
                let text = e.to_string();
                assert!(text.contains(flag), "{flag} {v}: {text}");
            }
        }
    }

    #[test]
    fn units_and_bad_values() {
        assert_eq!(parse_duration_s("90").unwrap(), 90.0);
        assert_eq!(parse_duration_s("30m").unwrap(), 1800.0);
        assert_eq!(parse_duration_s("2h").unwrap(), 7200.0);
        assert_eq!(parse_duration_s("1.5d").unwrap(), 129_600.0);
        assert!(close(parse_rate_per_s("0.36").unwrap(), 1e-4));
        assert!(close(parse_rate_per_s("2/d").unwrap(), 2.0 / 86_400.0));
        for bad in ["", "x", "-1h", "0", "2w", "nan"] {
            assert!(parse_duration_s(bad).is_err(), "{bad}");
        }
        for bad in ["1/w", "0/h", "abc", "1/", "nan/h", "1e300/s", "inf"] {
            assert!(parse_rate_per_s(bad).is_err(), "{bad}");
        }
        for bad in ["1e300", "101y", "36501d", "inf", "-0"] {
            assert!(parse_duration_s(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_duration_s("36500d").unwrap(), DURATION_MAX_S);
        assert!(
            PlanArgs::try_parse_from(["plan", "-n", "4", "--time", "1h"])
                .map(|a| report(&a).is_err())
                .unwrap()
        );
        assert!(PlanArgs::try_parse_from([
            "plan",
            "-n",
            "4",
            "--time",
            "1h",
            "--weibull-shape",
            "0.7"
        ])
        .is_err());
    }
}
