//! `volpex-bench compare npb`: the official NPB 3.4 MPI code under Open MPI over TCP
//! against our ports under volpexrun, benchmark by benchmark and rank count by rank
//! count, alternating sides, medians of the benchmarks' own "Time in seconds", and three
//! ratios to the first side: of the medians, of each run's pair and of the best runs.
//! Ratios come from the reports' "Mop/s total" when every run printed one: NPB prints the time
//! with two decimals (a tenth of a second is ±5%) but the rate to five or more digits, and
//! every side counts the same operations, so two times stand in the inverse ratio of
//! their rates.
//!
//! A side is one way of running a benchmark ([`Side`]): the official code under Open MPI,
//! our ports under volpexrun, and the official code built with our own MPI wrappers under
//! volpexrun. The table has one column per side and a ratio to the first side for each of
//! the others.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::npb_ref::{RefBuild, Toolchain};
use super::{mpirun_command, run_bounded, Btl, Side};
use crate::npb::parse_report;

/// The benchmarks, in the order of the table (kernels, then pseudo-applications).
pub const BENCHES: [&str; 8] = ["ep", "is", "cg", "mg", "ft", "lu", "sp", "bt"];

/// `compare npb` options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Problem class: S, W, A, B or C.
    #[arg(long, default_value = "A")]
    pub class: String,
    /// Rank counts, comma-separated (BT and SP run only on squares, the others only on
    /// powers of two; EP on any).
    #[arg(long = "np", value_delimiter = ',', default_value = "1,2,4")]
    pub np: Vec<u32>,
    /// Runs of every benchmark on every side, alternating; medians are reported, and
    /// ratios of the medians, of each run's pair (paired) and of the best runs (best).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Benchmarks, comma-separated, of ep, is, cg, mg, ft, lu, sp, bt.
    #[arg(long, value_delimiter = ',', default_values_t = BENCHES.map(String::from))]
    pub benches: Vec<String>,
    /// Sides, comma-separated, in column order; ratios are to the first: openmpi (the
    /// official code under Open MPI's mpirun over TCP), openmpi-sm (the same over Open
    /// MPI's default transport on one host, shared memory), volpex (our ports under
    /// volpexrun), volpex-official (the official code built with volpexf90 and volpexcc,
    /// under volpexrun).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "openmpi,volpex,volpex-official"
    )]
    pub sides: Vec<Side>,
    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// The official NPB 3.4 MPI source (default: $VOLPEX_NPB_SRC, else
    /// `../shared/npb3.4-mpi` next to the workspace).
    #[arg(long)]
    pub npb_src: Option<PathBuf>,
    /// Where the official code is built (default: `npb-ref` in the cargo target
    /// directory this program runs from).
    #[arg(long)]
    pub build_dir: Option<PathBuf>,
    /// Our npb binary (default: next to this executable).
    #[arg(long)]
    pub npb: Option<PathBuf>,
    /// Time limit of one run, seconds.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// Also write a figure here (SVG): times over the first side's, a panel per rank
    /// count (as `volpex-bench plot npb` draws the CSV).
    #[arg(long)]
    pub svg: Option<PathBuf>,
}

/// Why a benchmark cannot run on `np` ranks (NPB's own rules), or `None` if it can.
pub(crate) fn np_refusal(bench: &str, np: u32) -> Option<&'static str> {
    let square = (1..=np).take_while(|k| k * k <= np).any(|k| k * k == np);
    match bench {
        _ if np == 0 => Some("needs at least one rank"),
        "bt" | "sp" if !square => Some("needs a square number of ranks"),
        "bt" | "sp" | "ep" => None,
        _ if !np.is_power_of_two() => Some("needs a power of two ranks"),
        _ => None,
    }
}

/// What one run gave.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RunResult {
    /// The benchmark printed its report: its time, its rate (Mop/s total, 0 when the
    /// time printed as 0.00) and whether it verified.
    Report {
        seconds: f64,
        mops: f64,
        verified: bool,
    },
    /// No report: why.
    Failed(String),
}

/// The runs of one benchmark, rank count and side.
#[derive(Debug, Default, Clone)]
pub(crate) struct Cell {
    runs: Vec<RunResult>,
}

impl Cell {
    /// The median time of the runs that reported.
    pub fn median(&self) -> Option<f64> {
        let t: Vec<f64> = self.reports().map(|(seconds, _)| seconds).collect();
        (!t.is_empty()).then(|| crate::runs::median(t))
    }

    /// (seconds, Mop/s) of each run that reported.
    fn reports(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.runs.iter().filter_map(|r| match r {
            RunResult::Report { seconds, mops, .. } => Some((*seconds, *mops)),
            RunResult::Failed(_) => None,
        })
    }

    /// The rates of the runs that reported, when there are some and every one of them
    /// printed a rate.
    fn rates(&self) -> Option<Vec<f64>> {
        let rates: Option<Vec<f64>> = self
            .reports()
            .map(|(_, mops)| (mops > 0.0).then_some(mops))
            .collect();
        rates.filter(|r| !r.is_empty())
    }

    /// The median rate of the runs that reported, when every one of them printed a rate.
    fn median_rate(&self) -> Option<f64> {
        self.rates().map(crate::runs::median)
    }

    /// The best run, as (seconds, Mop/s): the highest rate when every run that reported
    /// printed one (`rates`), else the shortest time with a rate of 0. On a shared machine
    /// a disturbance only ever slows a run down, so each side's best run is the nearest to
    /// its undisturbed speed.
    fn best(&self) -> Option<(f64, f64)> {
        match self.rates() {
            Some(_) => self.reports().max_by(|a, b| a.1.total_cmp(&b.1)),
            None => self
                .reports()
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(seconds, _)| (seconds, 0.0)),
        }
    }

    /// Every run reported and verified.
    pub fn ok(&self) -> bool {
        !self.runs.is_empty()
            && self
                .runs
                .iter()
                .all(|r| matches!(r, RunResult::Report { verified: true, .. }))
    }

    /// `""` when every run verified, `"*"` when one did not verify, `"!"` when one failed
    /// (failure wins).
    pub fn mark(&self) -> &'static str {
        if self.runs.iter().any(|r| matches!(r, RunResult::Failed(_))) {
            "!"
        } else if self.ok() {
            ""
        } else {
            "*"
        }
    }

    /// The first failure's reason.
    fn failure(&self) -> Option<&str> {
        self.runs.iter().find_map(|r| match r {
            RunResult::Failed(why) => Some(why.as_str()),
            RunResult::Report { .. } => None,
        })
    }
}

/// The result of one NPB run's output and exit: a report block wins (the official code
/// exits 0 even when it did not verify; our port exits 2 then).
pub(crate) fn judge(success: bool, stdout: &str, stderr: &str) -> RunResult {
    match parse_report(stdout) {
        Some((seconds, mops, verified)) if success || !verified => RunResult::Report {
            seconds,
            mops,
            verified,
        },
        _ => {
            let lines: Vec<&str> = stderr
                .lines()
                .chain(stdout.lines())
                .filter(|l| !l.trim().is_empty())
                .collect();
            let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
            RunResult::Failed(if tail.is_empty() {
                "no report".into()
            } else {
                tail
            })
        }
    }
}

/// Rows keyed by (benchmark position, np), one cell per side.
pub(crate) type Results = BTreeMap<(usize, u32), Vec<Cell>>;

/// Column names of the CSV for `sides`.
pub(crate) fn csv_header(sides: &[Side]) -> String {
    let mut h = String::from("bench,class,np");
    for s in sides {
        let _ = write!(h, ",{0}_s,{0}_verified", s.name());
    }
    for s in sides.iter().skip(1) {
        let _ = write!(h, ",{0}_ratio,{0}_paired,{0}_best", s.name());
    }
    h
}

/// The median over runs of `cell`'s time / `base`'s time in the same run (the sides of
/// one run ran one right after the other, under about the same load).
fn paired(base: &Cell, cell: &Cell) -> Option<f64> {
    let ratios: Vec<f64> = base
        .runs
        .iter()
        .zip(&cell.runs)
        .filter_map(|pair| match pair {
            (
                RunResult::Report {
                    seconds: b,
                    mops: bm,
                    ..
                },
                RunResult::Report {
                    seconds: v,
                    mops: vm,
                    ..
                },
            ) => time_ratio((*b, *bm), (*v, *vm)),
            _ => None,
        })
        .collect();
    (!ratios.is_empty()).then(|| crate::runs::median(ratios))
}

/// The best run of `cell` over the best run of `base` (see `Cell::best`).
fn best_ratio(base: &Cell, cell: &Cell) -> Option<f64> {
    time_ratio(base.best()?, cell.best()?)
}

/// The median time of `cell` over that of `base`: from the median rates when both have
/// them, else from the median seconds.
fn ratio(base: &Cell, cell: &Cell) -> Option<f64> {
    match (base.median_rate(), cell.median_rate()) {
        (Some(b), Some(v)) => Some(b / v),
        _ => time_ratio((base.median()?, 0.0), (cell.median()?, 0.0)),
    }
}

/// Time `v` over time `b`, each given as (seconds, Mop/s): from the rates when both are
/// positive, else from the seconds when the base is not zero (NPB prints seconds with two
/// decimals, so a short run reports 0.00).
fn time_ratio((b, b_rate): (f64, f64), (v, v_rate): (f64, f64)) -> Option<f64> {
    if b_rate > 0.0 && v_rate > 0.0 {
        Some(b_rate / v_rate)
    } else {
        (b > 0.0).then(|| v / b)
    }
}

fn fmt_opt(v: Option<f64>, prec: usize) -> String {
    v.map(|v| format!("{v:.prec$}")).unwrap_or_default()
}

/// The CSV (header and rows) of `results`.
pub(crate) fn csv(results: &Results, benches: &[String], class: &str, sides: &[Side]) -> String {
    let mut out = csv_header(sides);
    out.push('\n');
    for (&(b, np), cells) in results {
        let _ = write!(out, "{},{class},{np}", benches[b]);
        for c in cells {
            let verified = match c.mark() {
                "" => "yes",
                "*" => "no",
                _ => "failed",
            };
            let _ = write!(out, ",{},{verified}", fmt_opt(c.median(), 3));
        }
        for c in cells.iter().skip(1) {
            let _ = write!(
                out,
                ",{},{},{}",
                fmt_opt(ratio(&cells[0], c), 3),
                fmt_opt(paired(&cells[0], c), 3),
                fmt_opt(best_ratio(&cells[0], c), 3)
            );
        }
        out.push('\n');
    }
    out
}

/// The table of `results`, with a legend for marks and the failures' reasons.
pub(crate) fn table(results: &Results, benches: &[String], sides: &[Side]) -> String {
    let mut out = format!("{:<6} {:>3}", "bench", "np");
    for s in sides {
        let _ = write!(out, " {:>12}", format!("{}_s", s.name()));
    }
    for s in sides.iter().skip(1) {
        let _ = write!(
            out,
            " {:>14} {:>7} {:>5}",
            format!("{}/{}", s.name(), sides[0].name()),
            "paired",
            "best"
        );
    }
    out.push('\n');
    let mut notes = Vec::new();
    for (&(b, np), cells) in results {
        let _ = write!(out, "{:<6} {np:>3}", benches[b].to_uppercase());
        for (c, s) in cells.iter().zip(sides) {
            let text = match c.median() {
                Some(m) => format!("{m:.2}{}", c.mark()),
                None => "failed".into(),
            };
            let _ = write!(out, " {text:>12}");
            if let Some(why) = c.failure() {
                notes.push(format!("{} np={np} {}: {why}", benches[b], s.name()));
            } else if !c.ok() {
                notes.push(format!(
                    "{} np={np} {}: did not verify",
                    benches[b],
                    s.name()
                ));
            }
        }
        for c in cells.iter().skip(1) {
            let _ = write!(
                out,
                " {:>14} {:>7} {:>5}",
                fmt_opt(ratio(&cells[0], c), 2),
                fmt_opt(paired(&cells[0], c), 2),
                fmt_opt(best_ratio(&cells[0], c), 2)
            );
        }
        out.push('\n');
    }
    if !notes.is_empty() {
        out.push_str("(* some run did not verify, ! some run failed)\n");
        for n in notes {
            let _ = writeln!(out, "  {n}");
        }
    }
    out
}

/// The default source location: `$VOLPEX_NPB_SRC`, else `../shared/npb3.4-mpi` beside
/// the workspace this program was built from.
fn default_src() -> PathBuf {
    std::env::var_os("VOLPEX_NPB_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("..")
                .join("shared")
                .join("npb3.4-mpi")
        })
}

/// How to run one side.
enum Runner {
    /// Official binaries under mpirun, over `btl`.
    OpenMpi {
        mpirun: PathBuf,
        btl: Btl,
        build: RefBuild,
    },
    /// Our npb binary under volpexrun.
    Volpex { vrun: PathBuf, npb: PathBuf },
    /// Official binaries built with our wrappers, under volpexrun.
    VolpexOfficial { vrun: PathBuf, build: RefBuild },
}

impl Runner {
    fn command(&self, bench: &str, class: &str, np: u32, timeout: u64) -> Command {
        match self {
            Runner::OpenMpi { mpirun, btl, build } => {
                let mut cmd = mpirun_command(mpirun, *btl, np, timeout);
                cmd.arg(build.binary(bench));
                cmd
            }
            Runner::Volpex { vrun, npb } => {
                let mut cmd = volpexrun_command(vrun, np, timeout);
                cmd.arg(npb).args([bench, "--class", class]);
                cmd
            }
            Runner::VolpexOfficial { vrun, build } => {
                let mut cmd = volpexrun_command(vrun, np, timeout);
                cmd.arg(build.binary(bench));
                cmd
            }
        }
    }
}

/// `volpexrun -n NP -r 1 --timeout T`, the program to follow.
fn volpexrun_command(vrun: &Path, np: u32, timeout: u64) -> Command {
    let mut cmd = Command::new(vrun);
    cmd.args(["-n", &np.to_string(), "-r", "1"])
        .args(["--timeout", &timeout.to_string()]);
    cmd
}

/// The official code's build with `tc`, every benchmark of `jobs` built.
fn official_build(
    a: &Args,
    tc: &Toolchain,
    class: &str,
    benches: &[String],
    jobs: &[(usize, u32)],
) -> Result<RefBuild, String> {
    let src = a.npb_src.clone().unwrap_or_else(default_src);
    let root = match &a.build_dir {
        Some(d) => d.clone(),
        None => super::target_dir()?.join("npb-ref"),
    };
    let build = RefBuild::prepare(&src, &root, tc, class)?;
    for &(b, _) in jobs {
        build.ensure(&benches[b])?;
    }
    Ok(build)
}

/// `volpex-bench compare npb`.
pub fn run(a: &Args) -> Result<(), String> {
    let class = a.class.to_uppercase();
    if !["S", "W", "A", "B", "C"].contains(&class.as_str()) {
        return Err(format!(
            "unknown class {:?} (known: S, W, A, B, C)",
            a.class
        ));
    }
    let benches: Vec<String> = a.benches.iter().map(|b| b.to_lowercase()).collect();
    for b in &benches {
        if !BENCHES.contains(&b.as_str()) {
            return Err(format!(
                "unknown benchmark {b:?} (known: {})",
                BENCHES.join(", ")
            ));
        }
    }
    if a.sides.is_empty() {
        return Err("--sides names no side".into());
    }
    // Which combinations run; the others are skipped with a note.
    let mut jobs = Vec::new();
    for (i, b) in benches.iter().enumerate() {
        for &np in &a.np {
            match np_refusal(b, np) {
                Some(why) => eprintln!(
                    "volpex-bench: skipping {} on {np} ranks: {} {why}",
                    b.to_uppercase(),
                    b.to_uppercase()
                ),
                None => jobs.push((i, np)),
            }
        }
    }
    // Set up every side before running anything; a missing Open MPI is a skip.
    let mut runners = Vec::new();
    for side in &a.sides {
        runners.push(match side {
            Side::OpenMpi | Side::OpenMpiSm => {
                let tc = match Toolchain::open_mpi() {
                    Ok(tc) => tc,
                    Err(why) => {
                        eprintln!("volpex-bench: skipping compare npb: {why}");
                        return Ok(());
                    }
                };
                let Some(mpirun) = crate::runs::on_path("mpirun") else {
                    eprintln!(
                        "volpex-bench: skipping compare npb: Open MPI's mpirun is not installed (apt-get install openmpi-bin)"
                    );
                    return Ok(());
                };
                let build = official_build(a, &tc, &class, &benches, &jobs)?;
                let btl = side.btl().unwrap_or(Btl::Tcp);
                Runner::OpenMpi { mpirun, btl, build }
            }
            Side::Volpex => Runner::Volpex {
                vrun: crate::runs::volpexrun()?,
                npb: crate::npb::npb_binary(a.npb.as_ref())?,
            },
            Side::VolpexOfficial => {
                let tc = Toolchain::volpex().map_err(|why| {
                    format!("side volpex-official: {why}; or leave it out (--sides openmpi,volpex)")
                })?;
                let build = official_build(a, &tc, &class, &benches, &jobs)?;
                Runner::VolpexOfficial {
                    vrun: crate::runs::volpexrun()?,
                    build,
                }
            }
        });
    }
    let mut results: Results = BTreeMap::new();
    let rounds = a.runs.max(1);
    let limit = Duration::from_secs(a.timeout + 60);
    eprintln!(
        "volpex-bench: load average at start: {}",
        super::load_average()
    );
    for round in 0..rounds {
        for &(b, np) in &jobs {
            let bench = &benches[b];
            let cells = results
                .entry((b, np))
                .or_insert_with(|| vec![Cell::default(); runners.len()]);
            // Alternate which side goes first, so a trend in the machine's load favours
            // none of them.
            let mut order: Vec<usize> = (0..runners.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for s in order {
                let mut cmd = runners[s].command(bench, &class, np, a.timeout);
                let result = match run_bounded(&mut cmd, limit) {
                    Ok(f) => judge(f.status.success(), &f.stdout, &f.stderr),
                    Err(e) => RunResult::Failed(e),
                };
                eprintln!(
                    "volpex-bench: run {}/{rounds} {} class {class} np={np} {}: {}",
                    round + 1,
                    bench.to_uppercase(),
                    a.sides[s].name(),
                    match &result {
                        RunResult::Report {
                            seconds, verified, ..
                        } => format!(
                            "{seconds:.2} s{}",
                            if *verified { "" } else { ", NOT VERIFIED" }
                        ),
                        RunResult::Failed(why) => format!("FAILED ({why})"),
                    }
                );
                cells[s].runs.push(result);
            }
        }
    }
    eprintln!(
        "volpex-bench: load average at end: {}",
        super::load_average()
    );
    if a.csv {
        print!("{}", csv(&results, &benches, &class, &a.sides));
    } else {
        print!("{}", table(&results, &benches, &a.sides));
    }
    if let Some(p) = &a.svg {
        let figure = crate::plot::npb_svg(&csv(&results, &benches, &class, &a.sides), None)?;
        crate::plot::write(p, &figure)?;
    }
    let bad = results.values().flatten().filter(|c| !c.ok()).count();
    if bad > 0 {
        return Err(format!(
            "{bad} of {} benchmark cells failed or did not verify",
            results.len() * runners.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_counts_follow_npb_rules() {
        let table = [
            ("bt", 1, true),
            ("bt", 2, false),
            ("bt", 4, true),
            ("sp", 9, true),
            ("sp", 8, false),
            ("lu", 1, true),
            ("lu", 2, true),
            ("lu", 3, false),
            ("cg", 4, true),
            ("is", 6, false),
            ("ep", 3, true),
            ("ep", 0, false),
        ];
        for (bench, np, ok) in table {
            assert_eq!(np_refusal(bench, np).is_none(), ok, "{bench} on {np}");
        }
    }

    const REPORT: &str = " LU Benchmark Completed.\n Class           =                        A\n \
        Time in seconds =                     7.52\n Mop/s total     =                 15862.17\n \
        Verification    =               SUCCESSFUL\n";

    #[test]
    fn a_report_decides_and_failures_keep_the_reason() {
        assert_eq!(
            judge(true, REPORT, ""),
            RunResult::Report {
                seconds: 7.52,
                mops: 15862.17,
                verified: true
            }
        );
        // Our port exits 2 when it did not verify; the report still counts.
        let bad = REPORT.replace("SUCCESSFUL", "UNSUCCESSFUL");
        assert_eq!(
            judge(false, &bad, ""),
            RunResult::Report {
                seconds: 7.52,
                mops: 15862.17,
                verified: false
            }
        );
        // A verified report with a failed exit is a failure (the job broke afterwards).
        assert!(matches!(judge(false, REPORT, "x"), RunResult::Failed(_)));
        assert_eq!(
            judge(false, "", "a\nb\nc\nd\n"),
            RunResult::Failed("b | c | d".into())
        );
    }

    fn cell(runs: &[RunResult]) -> Cell {
        Cell {
            runs: runs.to_vec(),
        }
    }

    /// A verified run that printed no rate (its time printed as 0.00, or a test that
    /// checks the fallback to seconds).
    fn ok(s: f64) -> RunResult {
        RunResult::Report {
            seconds: s,
            mops: 0.0,
            verified: true,
        }
    }

    fn at_rate(seconds: f64, mops: f64) -> RunResult {
        RunResult::Report {
            seconds,
            mops,
            verified: true,
        }
    }

    #[test]
    fn cells_mark_unverified_and_failed_runs() {
        assert_eq!(cell(&[ok(1.0), ok(3.0), ok(2.0)]).median(), Some(2.0));
        assert_eq!(cell(&[ok(1.0)]).mark(), "");
        let unverified = RunResult::Report {
            seconds: 5.0,
            mops: 0.0,
            verified: false,
        };
        assert_eq!(cell(&[ok(1.0), unverified.clone()]).mark(), "*");
        let failed = RunResult::Failed("x".into());
        assert_eq!(cell(&[unverified, failed.clone()]).mark(), "!");
        assert_eq!(cell(&[failed]).median(), None);
        assert!(!cell(&[]).ok());
    }

    #[test]
    fn table_and_csv_have_a_column_per_side_and_ratios_to_the_first() {
        let sides = [Side::OpenMpi, Side::Volpex];
        let benches = vec!["lu".to_string(), "bt".to_string()];
        let mut r: Results = BTreeMap::new();
        r.insert(
            (0, 2),
            vec![cell(&[ok(2.0), ok(4.0)]), cell(&[ok(3.0), ok(5.0)])],
        );
        r.insert(
            (1, 4),
            vec![cell(&[ok(4.0)]), cell(&[RunResult::Failed("boom".into())])],
        );
        assert_eq!(
            csv(&r, &benches, "A", &sides),
            "bench,class,np,openmpi_s,openmpi_verified,volpex_s,volpex_verified,volpex_ratio,volpex_paired,volpex_best\n\
             lu,A,2,3.000,yes,4.000,yes,1.333,1.375,1.500\n\
             bt,A,4,4.000,yes,,failed,,,\n"
        );
        let t = table(&r, &benches, &sides);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("openmpi_s") && lines[0].contains("volpex/openmpi"));
        assert!(lines[0].ends_with("paired  best"), "{t}");
        // Medians 3 and 4 (ratio 1.33); per run 1.5 and 1.25 (paired 1.375); best runs
        // 2 and 3 (1.5).
        assert!(
            lines[1].starts_with("LU") && lines[1].ends_with("1.33    1.38  1.50"),
            "{t}"
        );
        assert!(
            lines[2].starts_with("BT") && lines[2].contains("failed"),
            "{t}"
        );
        assert!(t.contains("bt np=4 volpex: boom"), "{t}");
    }

    #[test]
    fn ratios_come_from_the_rates_when_every_run_printed_one() {
        // IS-like: 0.11 s and 0.12 s as printed, but rates 10% apart.
        let base = cell(&[
            at_rate(0.11, 770.0),
            at_rate(0.12, 760.0),
            at_rate(0.11, 780.0),
        ]);
        let side = cell(&[
            at_rate(0.12, 700.0),
            at_rate(0.12, 690.0),
            at_rate(0.13, 710.0),
        ]);
        let r = ratio(&base, &side).expect("a ratio");
        assert!((r - 770.0 / 700.0).abs() < 1e-12, "{r}");
        let p = paired(&base, &side).expect("a paired ratio");
        // Per run 1.100, 1.101 and 1.099.
        assert!((p - 770.0 / 700.0).abs() < 1e-12, "{p}");
        // The best runs: the highest rates, 780 and 710, whatever their printed times.
        let b = best_ratio(&base, &side).expect("a best ratio");
        assert!((b - 780.0 / 710.0).abs() < 1e-12, "{b}");
        // One run without a rate: the seconds decide.
        let side = cell(&[at_rate(0.12, 700.0), ok(0.12), at_rate(0.13, 710.0)]);
        let r = ratio(&base, &side).expect("a ratio");
        assert!((r - 0.12 / 0.11).abs() < 1e-12, "{r}");
    }
}
