//! `volpex-bench npb`: runs a chosen set of NAS Parallel Benchmark jobs (benchmark x
//! class x ranks x replicas) under volpexrun, optionally again with one replica killed
//! mid-run, reads the report block rank 0 prints (time, Mop/s, verification) and writes
//! the results as CSV and as a Markdown table (and with `--svg` a figure, see `plot`). A
//! run with a replica killed carries its time over the failure-free run's (`ratio`). A job
//! that fails or does not verify is a row saying so, and makes the command exit non-zero
//! once every job has run.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use crate::runs::volpexrun;

/// The benchmarks the `npb` binary knows.
const BENCHES: [&str; 8] = ["bt", "sp", "lu", "ep", "is", "cg", "mg", "ft"];
/// The problem classes.
const CLASSES: [&str; 5] = ["S", "W", "A", "B", "C"];
/// The CSV header. `ratio`: a with-fault run's seconds over the failure-free run's of the
/// same configuration (empty for failure-free rows, and when either run gave no time).
pub const CSV_HEADER: &str = "bench,class,np,replicas,fault,seconds,mops,verified,ratio";

/// Options of `volpex-bench npb`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Benchmarks, comma-separated: bt, sp, lu, ep, is, cg, mg, ft.
    #[arg(long, value_delimiter = ',', default_value = "ep")]
    pub bench: Vec<String>,
    /// Problem classes, comma-separated: S, W, A, B, C.
    #[arg(long, value_delimiter = ',', default_value = "S")]
    pub class: Vec<String>,
    /// Rank counts, comma-separated (BT and SP need squares, the others powers of two).
    #[arg(long = "np", value_delimiter = ',', default_value = "1")]
    pub np: Vec<u32>,
    /// Replica counts, comma-separated.
    #[arg(long = "replicas", value_delimiter = ',', default_value = "1")]
    pub replicas: Vec<u32>,
    /// Run every configuration with two or more replicas again with replica 1 of the
    /// last rank killed mid-run.
    #[arg(long)]
    pub kill: bool,
    /// When to kill: this fraction into the failure-free run's timed loop (taken to
    /// start `wall - seconds` after the job did).
    #[arg(long, default_value_t = 0.4)]
    pub kill_at: f64,
    /// Write the CSV here (default: standard output).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write a Markdown table here.
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Write a figure here (SVG): every configuration's time failure-free and with the
    /// kill, the ratio over each pair (as `volpex-bench plot npb-runs` draws the CSV).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// The npb binary (default: next to this executable).
    #[arg(long)]
    pub npb: Option<PathBuf>,
    /// Time limit of one job in seconds (volpexrun --timeout).
    #[arg(long, default_value_t = 3600)]
    pub timeout: u64,
}

/// One job's configuration.
#[derive(Clone, Debug)]
struct Job {
    bench: String,
    class: String,
    np: u32,
    replicas: u32,
    /// The volpexrun fault spec, if a replica is killed.
    fault: Option<String>,
}

/// What a job gave.
#[derive(Debug)]
enum Outcome {
    /// It ran to the end and printed a report.
    Report {
        seconds: f64,
        mops: f64,
        verified: bool,
    },
    /// It did not run to the end, or printed no report: why.
    Failed(String),
}

/// A finished job.
struct Row {
    job: Job,
    outcome: Outcome,
    /// Wall time of the whole job (start-up included), seconds.
    wall: f64,
    /// With a fault: seconds over the failure-free run's.
    ratio: Option<f64>,
}

impl Row {
    fn csv(&self) -> String {
        let j = &self.job;
        let fault = j.fault.as_deref().unwrap_or("none");
        match &self.outcome {
            Outcome::Report {
                seconds,
                mops,
                verified,
            } => format!(
                "{},{},{},{},{fault},{seconds:.2},{mops:.2},{},{}",
                j.bench,
                j.class,
                j.np,
                j.replicas,
                if *verified { "yes" } else { "no" },
                self.ratio.map(|r| format!("{r:.3}")).unwrap_or_default()
            ),
            Outcome::Failed(_) => format!(
                "{},{},{},{},{fault},,,failed,",
                j.bench, j.class, j.np, j.replicas
            ),
        }
    }

    fn ok(&self) -> bool {
        matches!(self.outcome, Outcome::Report { verified: true, .. })
    }
}

/// The value after `label` and `=` on the report line starting with `label`.
fn field<'a>(out: &'a str, label: &str) -> Option<&'a str> {
    out.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(label))
        .find_map(|l| l.split_once('='))
        .map(|(_, v)| v.trim())
}

/// Time, Mop/s and verdict of an NPB report block.
pub(crate) fn parse_report(out: &str) -> Option<(f64, f64, bool)> {
    let seconds = field(out, "Time in seconds")?.parse().ok()?;
    let mops = field(out, "Mop/s total")?.parse().ok()?;
    let verified = match field(out, "Verification")? {
        "SUCCESSFUL" => true,
        "UNSUCCESSFUL" => false,
        _ => return None,
    };
    Some((seconds, mops, verified))
}

/// The last lines of `s`, for failure notes.
fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

fn run_job(vrun: &PathBuf, npb: &PathBuf, job: &Job, timeout: u64) -> Row {
    let mut cmd = Command::new(vrun);
    cmd.args(["-n", &job.np.to_string(), "-r", &job.replicas.to_string()])
        .args(["--timeout", &timeout.to_string()]);
    if let Some(f) = &job.fault {
        cmd.args(["--fault", f]);
    }
    cmd.arg(npb).args([&job.bench, "--class", &job.class]);
    let t0 = Instant::now();
    let out = cmd.output();
    let wall = t0.elapsed().as_secs_f64();
    let outcome = match out {
        Err(e) => Outcome::Failed(format!("cannot start volpexrun: {e}")),
        Ok(o) => {
            let stdout = String::from_utf8_lossy(&o.stdout);
            let stderr = String::from_utf8_lossy(&o.stderr);
            match parse_report(&stdout) {
                // npb exits 2 when the run did not verify: the report says so.
                Some((seconds, mops, verified)) if o.status.success() || !verified => {
                    Outcome::Report {
                        seconds,
                        mops,
                        verified,
                    }
                }
                _ => Outcome::Failed(format!("{}: {}", o.status, tail(&stderr, 3))),
            }
        }
    };
    Row {
        job: job.clone(),
        outcome,
        wall,
        ratio: None,
    }
}

/// A one-line progress bar on standard error.
struct Progress {
    total: usize,
    done: usize,
    tty: bool,
}

impl Progress {
    fn bar(&self) -> String {
        const W: usize = 24;
        let filled = (self.done * W).checked_div(self.total).unwrap_or(W);
        format!(
            "[{}{}] {}/{}",
            "#".repeat(filled),
            ".".repeat(W - filled),
            self.done,
            self.total
        )
    }

    fn start(&self, what: &str) {
        if self.tty {
            eprint!("\r\x1b[2K{} {what} ...", self.bar());
        }
    }

    fn finish(&mut self, what: &str, result: &str) {
        self.done += 1;
        if self.tty {
            eprint!("\r\x1b[2K");
        }
        eprintln!("{} {what}: {result}", self.bar());
    }
}

fn label(job: &Job) -> String {
    let mut s = format!(
        "{} {} np={} r={}",
        job.bench, job.class, job.np, job.replicas
    );
    if let Some(f) = &job.fault {
        let _ = write!(s, " fault {f}");
    }
    s
}

fn result_text(row: &Row) -> String {
    match &row.outcome {
        Outcome::Report {
            seconds, verified, ..
        } => format!(
            "{seconds:.2} s, {}",
            if *verified {
                "verified"
            } else {
                "NOT VERIFIED"
            }
        ),
        Outcome::Failed(why) => format!("FAILED ({why})"),
    }
}

/// The Markdown table of `rows`, failures explained below it.
fn markdown(rows: &[Row]) -> String {
    let mut md = String::from(
        "| bench | class | np | replicas | fault | seconds | Mop/s | verified | with fault / failure-free |\n\
         |---|---|---:|---:|---|---:|---:|---|---:|\n",
    );
    let mut notes = Vec::new();
    for r in rows {
        let j = &r.job;
        let fault = j.fault.as_deref().unwrap_or("none");
        let (secs, mops, v) = match &r.outcome {
            Outcome::Report {
                seconds,
                mops,
                verified,
            } => (
                format!("{seconds:.2}"),
                format!("{mops:.2}"),
                if *verified { "yes" } else { "**no**" }.to_string(),
            ),
            Outcome::Failed(why) => {
                notes.push(format!(
                    "- {} {} np={} r={} ({fault}): {why}",
                    j.bench, j.class, j.np, j.replicas
                ));
                ("-".into(), "-".into(), "**failed**".into())
            }
        };
        let ratio = r.ratio.map(|x| format!("{x:.2}")).unwrap_or_default();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {fault} | {secs} | {mops} | {v} | {ratio} |",
            j.bench, j.class, j.np, j.replicas
        );
    }
    if !notes.is_empty() {
        md.push_str("\nFailed jobs:\n\n");
        md.push_str(&notes.join("\n"));
        md.push('\n');
    }
    md
}

/// `volpex-bench npb`.
/// The npb binary: `given`, or the one next to this executable.
pub(crate) fn npb_binary(given: Option<&PathBuf>) -> Result<PathBuf, String> {
    let npb = match given {
        Some(p) => p.clone(),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("npb"),
    };
    if !npb.is_file() {
        return Err(format!(
            "npb not found at {} (build it: cargo build --release -p npb, or pass --npb)",
            npb.display()
        ));
    }
    Ok(npb)
}

pub fn run(a: &Args) -> Result<(), String> {
    for b in &a.bench {
        if !BENCHES.contains(&b.as_str()) {
            return Err(format!(
                "unknown benchmark {b:?} (known: {})",
                BENCHES.join(", ")
            ));
        }
    }
    for c in &a.class {
        if !CLASSES.contains(&c.as_str()) {
            return Err(format!(
                "unknown class {c:?} (known: {})",
                CLASSES.join(", ")
            ));
        }
    }
    if a.np.contains(&0) || a.replicas.contains(&0) {
        return Err("--np and --replicas take positive counts".into());
    }
    if !(a.kill_at > 0.0 && a.kill_at < 1.0) {
        return Err(format!("--kill-at must lie in (0, 1), got {}", a.kill_at));
    }
    let vrun = volpexrun()?;
    let npb = npb_binary(a.npb.as_ref())?;
    let mut jobs = Vec::new();
    for b in &a.bench {
        for c in &a.class {
            for &np in &a.np {
                for &r in &a.replicas {
                    jobs.push(Job {
                        bench: b.clone(),
                        class: c.clone(),
                        np,
                        replicas: r,
                        fault: None,
                    });
                }
            }
        }
    }
    let kills = if a.kill {
        jobs.iter().filter(|j| j.replicas >= 2).count()
    } else {
        0
    };
    let mut progress = Progress {
        total: jobs.len() + kills,
        done: 0,
        tty: std::io::stderr().is_terminal(),
    };
    let mut rows: Vec<Row> = Vec::new();
    for job in jobs {
        progress.start(&label(&job));
        let row = run_job(&vrun, &npb, &job, a.timeout);
        progress.finish(&label(&job), &result_text(&row));
        // The timed loop is taken to end with the job: it starts (wall - seconds) in.
        let (base, free_seconds) = match row.outcome {
            Outcome::Report { seconds, .. } => (
                Some((row.wall - seconds).max(0.0) + a.kill_at * seconds),
                Some(seconds),
            ),
            Outcome::Failed(_) => (None, None),
        };
        rows.push(row);
        if !(a.kill && job.replicas >= 2) {
            continue;
        }
        // Replica 1 of the last rank, a fraction of the failure-free run's timed loop in.
        let mut kj = job.clone();
        let row = match base {
            Some(at) => {
                kj.fault = Some(format!("{}.1:kill@{at:.1}", job.np - 1));
                progress.start(&label(&kj));
                let mut row = run_job(&vrun, &npb, &kj, a.timeout);
                if let (Outcome::Report { seconds, .. }, Some(free)) = (&row.outcome, free_seconds)
                {
                    row.ratio = (free > 0.0).then(|| seconds / free);
                }
                row
            }
            None => {
                kj.fault = Some(format!("{}.1:kill", job.np - 1));
                Row {
                    job: kj.clone(),
                    outcome: Outcome::Failed(
                        "not run: the failure-free run gave no time to place the kill".into(),
                    ),
                    wall: 0.0,
                    ratio: None,
                }
            }
        };
        progress.finish(&label(&kj), &result_text(&row));
        rows.push(row);
    }
    let mut csv = String::from(CSV_HEADER);
    csv.push('\n');
    for r in &rows {
        csv.push_str(&r.csv());
        csv.push('\n');
    }
    match &a.csv {
        Some(p) => {
            std::fs::write(p, &csv).map_err(|e| format!("cannot write {}: {e}", p.display()))?
        }
        None => print!("{csv}"),
    }
    if let Some(p) = &a.markdown {
        std::fs::write(p, markdown(&rows))
            .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
    }
    if let Some(p) = &a.svg {
        crate::plot::write(p, &crate::plot::npb_runs_svg(&csv, None)?)?;
    }
    let bad = rows.iter().filter(|r| !r.ok()).count();
    if bad > 0 {
        return Err(format!(
            "{bad} of {} jobs failed or did not verify",
            rows.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\n SP Benchmark Completed.\n Class           =             S\n \
        Time in seconds =                     0.06\n Total processes =                        1\n \
        Mop/s total     =                  1418.46\n Mop/s/process   =                  1418.46\n \
        Verification    =               SUCCESSFUL\n";

    #[test]
    fn reads_the_report_block() {
        assert_eq!(parse_report(REPORT), Some((0.06, 1418.46, true)));
        let bad = REPORT.replace("SUCCESSFUL", "UNSUCCESSFUL");
        assert_eq!(parse_report(&bad), Some((0.06, 1418.46, false)));
        assert_eq!(parse_report("no report"), None);
    }
}
