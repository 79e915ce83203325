//! `volpex-bench chaos --minutes M`: a soak run. Loops jobs under `volpexrun --chaos`
//! (ring, stencil, NPB CG, MG, LU; each at every replica degree asked for, a new seed
//! each time), each paired with the same job failure-free, checks every result against
//! the failure-free one (the ring's and stencil's output, NPB's verification) and
//! reports runs, faults injected, failures (with the flags that replay them) and the
//! time under chaos against failure-free.
//!
//! A measurement, never a test: it asserts nothing about time. Must never leave a
//! process behind: every job runs under volpexrun with `--timeout`, which ends what it
//! started.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::runs::volpexrun;

/// The report line of a verified NPB run.
const VERIFIED: &str = "Verification    =               SUCCESSFUL";

/// Options of `volpex-bench chaos`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// How long to keep starting jobs, in minutes.
    #[arg(long, default_value_t = 5.0, value_parser = parse_minutes)]
    pub minutes: f64,
    /// The chaos spec after `SEED:` for the ring and the stencil (about 2 s each at the
    /// sizes used; see docs/REGENERATION.md, "Chaos").
    #[arg(
        long,
        default_value = "kill=2,stop=2,stop-for=0.3,exit=0.1,exit-sends=100"
    )]
    pub spec: String,
    /// The chaos spec after `SEED:` for cg, mg and lu (class S lasts 0.1 to 1 s).
    #[arg(
        long,
        default_value = "kill=10,stop=10,stop-for=0.1,exit=0.2,exit-sends=100"
    )]
    pub npb_spec: String,
    /// Programs, comma-separated: ring, stencil, cg, mg, lu.
    #[arg(long, value_delimiter = ',', default_value = "ring,stencil,cg,mg,lu")]
    pub programs: Vec<String>,
    /// NPB class of cg, mg and lu.
    #[arg(long, default_value = "S")]
    pub class: String,
    /// Ranks of every job.
    #[arg(long = "np", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub np: u32,
    /// Replica degrees, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "2,3")]
    pub replicas: Vec<u32>,
    /// First seed; run i uses seed + i.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Time limit of one job in seconds (volpexrun --timeout).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub timeout: u64,
}

fn parse_minutes(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 100_000.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a number of minutes (allowed: 0 < M <= 100000)"
        )),
    }
}

/// One program: how to run it and how to check what it printed.
struct Program {
    name: String,
    path: PathBuf,
    args: Vec<String>,
    /// NPB verifies itself; the examples are compared with the failure-free output.
    npb: bool,
}

/// What one job gave.
struct Outcome {
    ok: bool,
    /// volpexrun's exit status, in words.
    code: String,
    wall: f64,
    stdout: String,
    stderr: String,
}

fn job(vrun: &PathBuf, p: &Program, np: u32, r: u32, timeout: u64, chaos: Option<&str>) -> Outcome {
    let mut cmd = Command::new(vrun);
    cmd.args(["-n", &np.to_string(), "-r", &r.to_string()])
        .args(["--timeout", &timeout.to_string()]);
    if let Some(c) = chaos {
        cmd.args(["--chaos", c]);
    }
    cmd.arg(&p.path).args(&p.args);
    let t0 = Instant::now();
    let out = cmd.output();
    let wall = t0.elapsed().as_secs_f64();
    match out {
        Err(e) => Outcome {
            ok: false,
            code: "none".into(),
            wall,
            stdout: String::new(),
            stderr: format!("cannot start volpexrun: {e}"),
        },
        Ok(o) => {
            let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
            let ok = o.status.success()
                && (!p.npb
                    || (stdout.matches(VERIFIED).count() == 1 && !stdout.contains("UNSUCCESSFUL")));
            Outcome {
                ok,
                code: o.status.to_string(),
                wall,
                stdout,
                stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            }
        }
    }
}

/// Kills, stops and exits armed, from volpexrun's chaos summary line.
fn injected(stderr: &str) -> Option<(u64, u64, u64)> {
    let line = stderr.lines().find(|l| l.contains(": injected "))?;
    let rest = line.split_once(": injected ")?.1;
    let mut n = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|w| !w.is_empty())
        .map(|w| w.parse::<u64>().ok());
    Some((n.next()??, n.next()??, n.next()??))
}

fn programs(a: &Args) -> Result<Vec<Program>, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = me
        .parent()
        .ok_or("volpex-bench has no directory")?
        .to_path_buf();
    let strs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    a.programs
        .iter()
        .map(|name| {
            let (path, args, npb) = match name.as_str() {
                "ring" => (
                    dir.join("examples/ring"),
                    strs(&["--rounds", "300", "--work-ms", "2", "--payload", "256"]),
                    false,
                ),
                "stencil" => (
                    dir.join("examples/stencil"),
                    strs(&["--cells", "300", "--iters", "300", "--work-ms", "2"]),
                    false,
                ),
                "cg" | "mg" | "lu" => (
                    dir.join("npb"),
                    vec![name.clone(), "--class".into(), a.class.clone()],
                    true,
                ),
                other => {
                    return Err(format!(
                        "unknown program {other:?} (ring, stencil, cg, mg, lu)"
                    ))
                }
            };
            if !path.is_file() {
                return Err(format!(
                    "{} not found (build it: cargo build --release --workspace --bins --examples)",
                    path.display()
                ));
            }
            Ok(Program {
                name: name.clone(),
                path,
                args,
                npb,
            })
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

/// Runs the soak; returns an error (exit 1) if any job failed.
pub fn run(a: &Args) -> Result<(), String> {
    let vrun = volpexrun()?;
    let progs = programs(a)?;
    if a.replicas.is_empty() || a.replicas.iter().any(|&r| !(1..=16).contains(&r)) {
        return Err("--replicas takes degrees from 1 to 16".into());
    }
    let configs: Vec<(usize, u32)> = (0..progs.len())
        .flat_map(|p| a.replicas.iter().map(move |&r| (p, r)))
        .collect();
    let end = Instant::now() + Duration::from_secs_f64(a.minutes * 60.0);
    let (mut runs, mut kills, mut stops, mut exits) = (0u64, 0u64, 0u64, 0u64);
    let mut failures: Vec<String> = Vec::new();
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); configs.len()];
    let mut i = 0usize;
    while Instant::now() < end {
        let c = i % configs.len();
        let (p, r) = configs[c];
        let prog = &progs[p];
        let seed = a.seed + i as u64;
        let rates = if prog.npb { &a.npb_spec } else { &a.spec };
        let spec = format!("{seed}:{rates}");
        let clean = job(&vrun, prog, a.np, r, a.timeout, None);
        let chaos = job(&vrun, prog, a.np, r, a.timeout, Some(&spec));
        runs += 1;
        let what = format!("{} -n {} -r {r} --chaos {spec}", prog.name, a.np);
        if let Some((k, s, e)) = injected(&chaos.stderr) {
            kills += k;
            stops += s;
            exits += e;
        }
        let same = prog.npb || chaos.stdout == clean.stdout;
        if !clean.ok {
            failures.push(format!(
                "{} -n {} -r {r} failure-free run failed",
                prog.name, a.np
            ));
        } else if !(chaos.ok && same) {
            let replay = chaos
                .stderr
                .lines()
                .find(|l| l.contains(": injected "))
                .unwrap_or("(no chaos summary)")
                .to_string();
            let why = chaos
                .stderr
                .lines()
                .filter(|l| l.starts_with("volpexrun: error:") || l.contains("unresponsive"))
                .collect::<Vec<_>>()
                .join(" | ");
            let why = if why.is_empty() {
                format!("exit {}, wrong result", chaos.code)
            } else {
                why
            };
            failures.push(format!("{what}: {why}; {replay}"));
        } else {
            ratios[c].push(chaos.wall / clean.wall);
        }
        eprintln!(
            "run {runs}: {what}: {} ({:.2} s, failure-free {:.2} s)",
            if chaos.ok && same { "ok" } else { "FAILED" },
            chaos.wall,
            clean.wall
        );
        i += 1;
    }
    println!(
        "chaos soak: {:.1} min, -n {}, spec {} (NPB class {}: {})",
        a.minutes, a.np, a.spec, a.class, a.npb_spec
    );
    println!("runs: {runs}");
    println!(
        "faults injected: {} ({kills} kills, {stops} stops, {exits} exits armed)",
        kills + stops + exits
    );
    println!("failures: {}", failures.len());
    for f in &failures {
        println!("  {f}");
    }
    println!("time under chaos / failure-free (median of paired runs):");
    for (c, (p, r)) in configs.iter().enumerate() {
        if let Some(m) = median(ratios[c].clone()) {
            println!(
                "  {:8} -r {r}: {m:.2} ({} pairs)",
                progs[*p].name,
                ratios[c].len()
            );
        }
    }
    if let Some(m) = median(ratios.concat()) {
        println!("  all: {m:.2}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("{} of {runs} chaos runs failed", failures.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_chaos_summary() {
        let err = "volpexrun: chaos 7: injected 2 kills, 3 stops, 1 exits armed; replay: --fault 0.1:kill@0.5";
        assert_eq!(injected(err), Some((2, 3, 1)));
        assert_eq!(injected("nothing"), None);
    }

    #[test]
    fn minutes_are_checked() {
        for bad in ["0", "-1", "nan", "inf", "1e300"] {
            assert!(parse_minutes(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_minutes("0.5"), Ok(0.5));
    }
}
