//! `volpex-bench regen`: what regenerating lost replicas costs a job. For each NAS
//! benchmark given, runs the job failure-free and with replica 1 of the last rank killed
//! every `--every` seconds (`--kills` times; each kill hits whichever incarnation is alive
//! then), alternately, `--runs` times; prints the medians, the cost of one regeneration as
//! a fraction of the failure-free time, and how long each new incarnation took from its
//! start to having caught up (from volpexrun's `--report`); with `--svg`, the timeline of
//! the last run with kills (see `plot`). A measurement, never a test.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::npb::{npb_binary, parse_report};
use crate::runs::{median, volpexrun};

/// Options of `volpex-bench regen`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Benchmarks, comma-separated (bt, sp, lu, ep, is, cg, mg, ft).
    #[arg(long, value_delimiter = ',', default_value = "cg,mg")]
    pub bench: Vec<String>,
    /// Problem class.
    #[arg(long, default_value = "A")]
    pub class: String,
    /// Ranks.
    #[arg(long, default_value_t = 4)]
    pub np: u32,
    /// Replicas per rank.
    #[arg(long, default_value_t = 2)]
    pub replicas: u32,
    /// Seconds between kills (the first one this long after the start).
    #[arg(long, default_value_t = 3.0)]
    pub every: f64,
    /// Kills per faulty run.
    #[arg(long, default_value_t = 1)]
    pub kills: u32,
    /// Pairs of runs (failure-free, faulty).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// The npb binary (default: next to this executable).
    #[arg(long)]
    pub npb: Option<PathBuf>,
    /// Extra volpexrun options, e.g. `--volpexrun-arg=--regenerate=always`.
    #[arg(long = "volpexrun-arg", allow_hyphen_values = true)]
    pub volpexrun_args: Vec<String>,
    /// Extra npb options, e.g. `--npb-arg=--checkpoint-every=2`.
    #[arg(long = "npb-arg", allow_hyphen_values = true)]
    pub npb_args: Vec<String>,
    /// Write the timeline of each benchmark's last run with kills here (SVG: replicas,
    /// incarnations, kills, failovers; as `volpex-bench plot timeline` draws a
    /// `volpexrun --report`); with several benchmarks, NAME-BENCH.svg.
    #[arg(long)]
    pub svg: Option<PathBuf>,
}

/// One job's outcome.
struct Outcome {
    /// The benchmark's own timed loop, seconds.
    seconds: f64,
    /// The whole job, start-up included.
    wall: f64,
    /// Catch-up times of the new incarnations (from their start), seconds.
    catch_ups: Vec<f64>,
    /// Times from each kill to its new incarnation having caught up, seconds.
    recoveries: Vec<f64>,
    /// New incarnations started.
    regenerations: usize,
    /// volpexrun's `--report` (JSON), empty if it wrote none.
    report: String,
}

/// Every number under a key named `key` anywhere in `v`.
fn numbers_under(v: &serde_json::Value, key: &str, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k == key {
                    if let Some(n) = x.as_f64() {
                        out.push(n);
                    }
                }
                numbers_under(x, key, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| numbers_under(x, key, out)),
        _ => {}
    }
}

fn run_one(vrun: &Path, npb: &Path, a: &Args, bench: &str, kills: u32) -> Result<Outcome, String> {
    let report = std::env::temp_dir().join(format!("volpex-regen-{}.json", std::process::id()));
    let mut cmd = Command::new(vrun);
    cmd.args(["-n", &a.np.to_string(), "-r", &a.replicas.to_string()])
        .arg("--report")
        .arg(&report)
        .args(&a.volpexrun_args);
    for i in 1..=kills {
        cmd.arg("--fault")
            .arg(format!("{}.1:kill@{}", a.np - 1, a.every * f64::from(i)));
    }
    cmd.arg(npb)
        .args([bench, "--class", &a.class])
        .args(&a.npb_args);
    let t0 = Instant::now();
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start volpexrun: {e}"))?;
    let wall = t0.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    let Some((seconds, _, true)) = parse_report(&stdout) else {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last: Vec<&str> = stderr.lines().rev().take(4).collect();
        return Err(format!(
            "{bench} did not verify ({}): {}",
            out.status,
            last.join(" | ")
        ));
    };
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
    // Only the incarnations' records: the report's events name incarnations too.
    let mut catch_ups = Vec::new();
    numbers_under(&parsed["processes"], "caught_up_after_s", &mut catch_ups);
    let mut incarnations = Vec::new();
    numbers_under(&parsed["processes"], "incarnation", &mut incarnations);
    // The new incarnations of the killed replica, in order, against the kill times.
    let recoveries = parsed["processes"]
        .as_array()
        .map(|reps| {
            reps.iter()
                .filter(|p| p["rank"] == a.np - 1 && p["replica"] == 1 && p["incarnation"] != 0)
                .filter_map(|p| Some(p["started_s"].as_f64()? + p["caught_up_after_s"].as_f64()?))
                .zip((1..=kills).map(|i| a.every * f64::from(i)))
                .map(|(done, kill)| done - kill)
                .collect()
        })
        .unwrap_or_default();
    Ok(Outcome {
        seconds,
        wall,
        catch_ups,
        recoveries,
        regenerations: incarnations.iter().filter(|&&i| i > 0.0).count(),
        report: json,
    })
}

/// `path`, or with `many` benchmarks `path` with `-BENCH` before its extension.
fn per_bench(path: &Path, bench: &str, many: bool) -> PathBuf {
    if !many {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{bench}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{bench}"),
    };
    path.with_file_name(name)
}

/// Runs the measurement and prints a Markdown table.
pub fn run(a: &Args) -> Result<(), String> {
    if a.replicas < 2 || a.np == 0 || a.runs == 0 || a.every.is_nan() || a.every <= 0.0 {
        return Err("regen needs --replicas >= 2, --np, --runs >= 1, --every > 0".into());
    }
    let vrun = volpexrun()?;
    let npb = npb_binary(a.npb.as_ref())?;
    println!(
        "| bench | class | np x r | kills | failure-free s (wall) | with kills s (wall) | per regeneration | catch-up s (median, max) | kill to caught up s (median, max) |"
    );
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|");
    for bench in &a.bench {
        let (mut free, mut faulty) = (Vec::new(), Vec::new());
        for i in 0..a.runs {
            eprintln!("{bench} {} round {}/{}", a.class, i + 1, a.runs);
            free.push(run_one(&vrun, &npb, a, bench, 0)?);
            faulty.push(run_one(&vrun, &npb, a, bench, a.kills)?);
        }
        let med = |v: &[Outcome], f: fn(&Outcome) -> f64| median(v.iter().map(f).collect());
        let (fs, fw) = (med(&free, |o| o.seconds), med(&free, |o| o.wall));
        let (ks, kw) = (med(&faulty, |o| o.seconds), med(&faulty, |o| o.wall));
        let regens = median(faulty.iter().map(|o| o.regenerations as f64).collect());
        let catch: Vec<f64> = faulty.iter().flat_map(|o| o.catch_ups.clone()).collect();
        let max = catch.iter().copied().fold(f64::NAN, f64::max);
        let rec: Vec<f64> = faulty.iter().flat_map(|o| o.recoveries.clone()).collect();
        let rec_max = rec.iter().copied().fold(f64::NAN, f64::max);
        let per = if regens > 0.0 {
            (kw - fw) / fw / regens
        } else {
            f64::NAN
        };
        if let (Some(svg), Some(last)) = (&a.svg, faulty.last()) {
            let path = per_bench(svg, bench, a.bench.len() > 1);
            let title = format!(
                "{} class {} at -n {} -r {}, {} kill{} of replica {}.1",
                bench.to_uppercase(),
                a.class,
                a.np,
                a.replicas,
                a.kills,
                if a.kills == 1 { "" } else { "s" },
                a.np - 1
            );
            crate::plot::write(
                &path,
                &crate::plot::timeline_svg(&last.report, Some(&title))
                    .map_err(|e| format!("the timeline of {bench}: {e}"))?,
            )?;
        }
        println!(
            "| {bench} | {} | {} x {} | {} | {fs:.2} ({fw:.2}) | {ks:.2} ({kw:.2}) | {:.1}% | {:.2}, {max:.2} | {:.2}, {rec_max:.2} |",
            a.class,
            a.np,
            a.replicas,
            regens,
            per * 100.0,
            median(catch.clone()),
            median(rec),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_figure_per_benchmark() {
        let p = Path::new("/tmp/t.svg");
        assert_eq!(per_bench(p, "cg", false), p);
        assert_eq!(per_bench(p, "cg", true), Path::new("/tmp/t-cg.svg"));
        assert_eq!(per_bench(Path::new("t"), "mg", true), Path::new("t-mg"));
    }
}
