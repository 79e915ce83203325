//! `volpex-bench compare overlap`: `volpex-bench overlap` under volpexrun against its C
//! twin `c/overlap.c` under Open MPI over TCP, alternating sides, medians over rounds.
//! Each round runs the arrival part (2 ranks) and the pipeline part (`--np` ranks) as
//! separate jobs on every side.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{mpirun_command, run_bounded, Btl, Side, TempDir};
use crate::overlap::{Part, DEFAULT_COMPUTE_US, DEFAULT_MESSAGES, DEFAULT_SIZES};

/// `compare overlap` options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Rounds (every side runs both parts once per round); medians are reported.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Print CSV: test,size_bytes,messages,compute_us, a column per side, ratios.
    #[arg(long)]
    pub csv: bool,
    /// Sides, comma-separated, in column order; ratios are to the first: openmpi (the C
    /// twin under Open MPI over TCP), openmpi-sm (the same over Open MPI's shared
    /// memory), volpex (this program under volpexrun), volpex-official (the
    /// C twin built with volpexcc, under volpexrun).
    #[arg(long, value_delimiter = ',', default_value = "openmpi,volpex")]
    pub sides: Vec<Side>,
    /// Arrival: message sizes in bytes.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_SIZES)]
    pub sizes: Vec<usize>,
    /// Arrival: the sender's compute times in µs.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_COMPUTE_US)]
    pub compute_us: Vec<u64>,
    /// Arrival: messages sent in a row before the compute phase.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_MESSAGES)]
    pub messages: Vec<u64>,
    /// Arrival: timed messages per row and run.
    #[arg(long, default_value_t = 30)]
    pub iters: u64,
    /// Pipeline: ranks.
    #[arg(short = 'n', long = "np", default_value_t = 4)]
    pub np: u32,
    /// Pipeline: bytes per message.
    #[arg(long, default_value_t = 1024)]
    pub bytes: usize,
    /// Pipeline: compute time per step, µs.
    #[arg(long, default_value_t = 100)]
    pub work_us: u64,
    /// Pipeline: steps.
    #[arg(long, default_value_t = 1000)]
    pub steps: u64,
    /// Time limit of one job, seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
}

/// A row's key: test, size in bytes, messages (pipeline: steps), compute µs.
pub(crate) type Key = (String, usize, u64, u64);

/// The rows of the programs' CSV output (`test,size_bytes,messages,compute_us,time_us`).
pub(crate) fn parse(out: &str) -> Vec<(Key, f64)> {
    out.lines()
        .filter_map(|l| {
            let mut f = l.trim().split(',');
            let test = f.next()?;
            if test != Part::Arrival.name() && test != Part::Pipeline.name() {
                return None;
            }
            let key = (
                test.to_string(),
                f.next()?.parse().ok()?,
                f.next()?.parse().ok()?,
                f.next()?.parse().ok()?,
            );
            let t: f64 = f.next()?.parse().ok()?;
            f.next().is_none().then_some((key, t))
        })
        .collect()
}

/// Medians per row and side (`None` where a side gave no value).
pub(crate) type Rows = BTreeMap<Key, Vec<Option<f64>>>;

/// Medians of `samples` (per side: row -> values) as rows.
pub(crate) fn rows(samples: &[BTreeMap<Key, Vec<f64>>]) -> Rows {
    let mut rows: Rows = BTreeMap::new();
    for (s, side) in samples.iter().enumerate() {
        for (k, v) in side {
            rows.entry(k.clone())
                .or_insert_with(|| vec![None; samples.len()])[s] =
                Some(crate::runs::median(v.clone()));
        }
    }
    rows
}

/// The output: CSV or a table, one column per side and ratios to the first side.
pub(crate) fn render(rows: &Rows, sides: &[Side], csv: bool) -> String {
    let mut out = String::new();
    if csv {
        out.push_str("test,size_bytes,messages,compute_us");
        for s in sides {
            let _ = write!(out, ",{}_us", s.name());
        }
        for s in sides.iter().skip(1) {
            let _ = write!(out, ",{}_ratio", s.name());
        }
    } else {
        let _ = write!(
            out,
            "{:<9} {:>8} {:>8} {:>10}",
            "test", "bytes", "messages", "compute_us"
        );
        for s in sides {
            let _ = write!(out, " {:>12}", format!("{}_us", s.name()));
        }
        for s in sides.iter().skip(1) {
            let _ = write!(out, " {:>14}", format!("{}/{}", s.name(), sides[0].name()));
        }
    }
    out.push('\n');
    for ((test, size, m, c), vals) in rows {
        let ratios: Vec<Option<f64>> = vals
            .iter()
            .skip(1)
            .map(|v| v.zip(vals[0]).map(|(v, b)| v / b))
            .collect();
        let f = |v: &Option<f64>, p: usize| v.map(|v| format!("{v:.p$}")).unwrap_or_default();
        if csv {
            let _ = write!(out, "{test},{size},{m},{c}");
            for v in vals {
                let _ = write!(out, ",{}", f(v, 3));
            }
            for r in &ratios {
                let _ = write!(out, ",{}", f(r, 3));
            }
        } else {
            let _ = write!(out, "{test:<9} {size:>8} {m:>8} {c:>10}");
            for v in vals {
                let _ = write!(out, " {:>12}", f(v, 1));
            }
            for r in &ratios {
                let _ = write!(out, " {:>14}", f(r, 2));
            }
        }
        out.push('\n');
    }
    out
}

fn list<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// `volpex-bench compare overlap`.
pub fn run(a: &Args) -> Result<(), String> {
    if a.sides.is_empty() {
        return Err("--sides names no side".into());
    }
    if a.np < 2 {
        return Err("--np: the pipeline needs at least 2 ranks".into());
    }
    let missing = "is not installed (apt-get install openmpi-bin libopenmpi-dev)";
    let (Some(mpicc), Some(mpirun)) = (
        crate::runs::on_path("mpicc"),
        crate::runs::on_path("mpirun"),
    ) else {
        eprintln!("volpex-bench: skipping compare overlap: Open MPI's mpicc or mpirun {missing}");
        return Ok(());
    };
    let tmp =
        TempDir(std::env::temp_dir().join(format!("volpex-bench-{}-overlap", std::process::id())));
    std::fs::create_dir_all(&tmp.0).map_err(|e| format!("{}: {e}", tmp.0.display()))?;
    // The C twin, once per compiler wrapper a side needs.
    let compile = |cc: &Path, out: &str| -> Result<PathBuf, String> {
        let bin = tmp.0.join(out);
        super::run_capture(
            Command::new(cc)
                .arg("-O3")
                .arg("-o")
                .arg(&bin)
                .arg(super::c_dir().join("overlap.c")),
            &cc.display().to_string(),
        )?;
        Ok(bin)
    };
    let c_bin = if a.sides.iter().any(|s| s.btl().is_some()) {
        compile(&mpicc, "overlap")?
    } else {
        PathBuf::new()
    };
    let c_volpex = if a.sides.contains(&Side::VolpexOfficial) {
        let volpexcc = std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("volpexcc");
        if !volpexcc.is_file() {
            return Err(format!(
                "side volpex-official: {} is not built (cargo build --release -p volpex-mpi)",
                volpexcc.display()
            ));
        }
        compile(&volpexcc, "overlap-volpex")?
    } else {
        PathBuf::new()
    };
    let vrun = crate::runs::volpexrun()?;
    let me: PathBuf = std::env::current_exe().map_err(|e| e.to_string())?;
    let arrival_args = [
        "--part".to_string(),
        Part::Arrival.name().into(),
        "--csv".into(),
        "--sizes".into(),
        list(&a.sizes),
        "--compute-us".into(),
        list(&a.compute_us),
        "--messages".into(),
        list(&a.messages),
        "--iters".into(),
        a.iters.to_string(),
    ];
    let pipeline_args = [
        "--part".to_string(),
        Part::Pipeline.name().into(),
        "--csv".into(),
        "--bytes".into(),
        a.bytes.to_string(),
        "--work-us".into(),
        a.work_us.to_string(),
        "--steps".into(),
        a.steps.to_string(),
    ];
    let limit = Duration::from_secs(a.timeout + 30);
    let job = |side: Side, np: u32, args: &[String]| -> Result<String, String> {
        let mut cmd = match side {
            Side::OpenMpi | Side::OpenMpiSm => {
                let btl = side.btl().unwrap_or(Btl::Tcp);
                let mut c = mpirun_command(&mpirun, btl, np, a.timeout);
                c.arg(&c_bin);
                c
            }
            Side::Volpex => {
                let mut c = Command::new(&vrun);
                c.args(["-n", &np.to_string(), "-r", "1"])
                    .args(["--timeout", &a.timeout.to_string()])
                    .arg(&me)
                    .arg("overlap");
                c
            }
            Side::VolpexOfficial => {
                let mut c = Command::new(&vrun);
                c.args(["-n", &np.to_string(), "-r", "1"])
                    .args(["--timeout", &a.timeout.to_string()])
                    .arg(&c_volpex);
                c
            }
        };
        cmd.args(args);
        let f = run_bounded(&mut cmd, limit)?;
        if !f.status.success() {
            return Err(format!(
                "{} job failed ({}): {}",
                side.name(),
                f.status,
                f.stderr.trim()
            ));
        }
        Ok(f.stdout)
    };
    let mut samples: Vec<BTreeMap<Key, Vec<f64>>> = vec![BTreeMap::new(); a.sides.len()];
    let rounds = a.rounds.max(1);
    eprintln!(
        "volpex-bench: load average at start: {}",
        super::load_average()
    );
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..a.sides.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for s in order {
            let side = a.sides[s];
            eprintln!(
                "volpex-bench: round {}/{rounds}: {}",
                round + 1,
                side.name()
            );
            for (np, args) in [(2, &arrival_args[..]), (a.np, &pipeline_args[..])] {
                for (k, t) in parse(&job(side, np, args)?) {
                    samples[s].entry(k).or_default().push(t);
                }
            }
        }
    }
    eprintln!(
        "volpex-bench: load average at end: {}",
        super::load_average()
    );
    print!("{}", render(&rows(&samples), &a.sides, a.csv));
    if !a.csv {
        println!(
            "(arrival: median µs from the first send call to the last message in the \
             receiver's buffer; pipeline: µs for {} steps on {} ranks, ideal {} µs)",
            a.steps,
            a.np,
            (a.steps + u64::from(a.np) - 1) * a.work_us
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: &str, s: usize, c: u64, d: u64) -> Key {
        (t.to_string(), s, c, d)
    }

    #[test]
    fn parses_only_complete_rows() {
        let out = "test,size_bytes,messages,compute_us,time_us\n\
                   arrival,8,100,0,12.5\nnoise\narrival,8,x,0,1\n\
                   arrival,8,1,0,1,extra\npipeline,1024,100,0,100500.0\n";
        assert_eq!(
            parse(out),
            vec![
                (key("arrival", 8, 100, 0), 12.5),
                (key("pipeline", 1024, 100, 0), 100500.0)
            ]
        );
    }

    #[test]
    fn renders_medians_and_ratios_per_side() {
        let mut ompi = BTreeMap::new();
        ompi.insert(key("arrival", 8, 0, 0), vec![10.0, 30.0, 20.0]);
        ompi.insert(key("pipeline", 64, 5, 0), vec![100.0]);
        let mut ours = BTreeMap::new();
        ours.insert(key("arrival", 8, 0, 0), vec![40.0, 40.0]);
        let r = rows(&[ompi, ours]);
        let sides = [Side::OpenMpi, Side::Volpex];
        assert_eq!(
            render(&r, &sides, true),
            "test,size_bytes,messages,compute_us,openmpi_us,volpex_us,volpex_ratio\n\
             arrival,8,0,0,20.000,40.000,2.000\n\
             pipeline,64,5,0,100.000,,\n"
        );
        let t = render(&r, &sides, false);
        assert!(t.lines().nth(1).is_some_and(|l| l.ends_with("2.00")), "{t}");
    }
}
