//! HPCG (the user's copy of hpcg-benchmark/hpcg, never part of this repository) built with
//! Open MPI's `mpicxx` and with our `volpexcxx`, run side by side on one host: GFLOP/s of
//! each valid run, medians per side, ratios to the first side.
//!
//! Owns the build of HPCG outside the source tree (every `src/*.cpp` compiled into one
//! binary per toolchain under `<target>/hpcg-ref/<toolchain>/`) and the reading of HPCG's
//! report. Must never write into the HPCG source directory, and never report a GFLOP/s
//! figure of a run HPCG itself did not call valid.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{load_average, mpirun_command, run_bounded, run_capture, PingSide, TempDir};
use crate::runs::{median, on_path};

/// `compare hpcg` options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// HPCG's source directory (its top, holding `src/` and `setup/`; public:
    /// github.com/hpcg-benchmark/hpcg).
    #[arg(long)]
    pub hpcg_dir: PathBuf,
    /// Ranks on every side.
    #[arg(short = 'n', long = "np", default_value_t = 4)]
    pub ranks: u32,
    /// Local grid edge: each rank's subgrid is N x N x N (HPCG's --nx, --ny, --nz).
    #[arg(long, default_value_t = 16)]
    pub local: u32,
    /// Seconds of the timed phase (HPCG's --rt); runs shorter than 1800 s are valid but
    /// not official, as HPCG's report says.
    #[arg(long, default_value_t = 15)]
    pub rt: u32,
    /// Replicas per rank on the Volpex sides.
    #[arg(short = 'r', long = "replicas", default_value_t = 1)]
    pub replicas: u32,
    /// Runs of each side, alternating (the order turns each round); medians are reported.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// The columns, comma-separated; ratios are of each side's GFLOP/s to the first's:
    /// openmpi-sm (HPCG built with mpicxx under Open MPI's default transport on one
    /// host, shared memory), openmpi-tcp (the same over TCP), volpex (built with
    /// volpexcxx under volpexrun, shared memory between processes on one host),
    /// volpex-tcp (the same with VOLPEX_SHM=0).
    #[arg(long, value_enum, value_delimiter = ',',
          default_values_t = [PingSide::OpenMpiSm, PingSide::OpenMpiTcp, PingSide::Volpex])]
    pub sides: Vec<PingSide>,
    /// Where the two builds go (default: `hpcg-ref` in the cargo target directory this
    /// program runs from).
    #[arg(long)]
    pub build_dir: Option<PathBuf>,
    /// Print CSV: side,gflops (the median),ratio, then one row per run (run,side,gflops).
    #[arg(long)]
    pub csv: bool,
    /// Time limit of one run, seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
}

/// The GFLOP/s rating of a run HPCG called valid, from its report (`Final
/// Summary::HPCG result is VALID with a GFLOP/s rating of=X`); `Err` says why there is
/// none.
pub(crate) fn rating(report: &str) -> Result<f64, String> {
    const VALID: &str = "HPCG result is VALID with a GFLOP/s rating of=";
    if let Some(l) = report.lines().find(|l| l.contains(VALID)) {
        let value = l.split(VALID).nth(1).unwrap_or("").trim();
        return value
            .parse::<f64>()
            .ok()
            .filter(|g| g.is_finite() && *g > 0.0)
            .ok_or_else(|| format!("HPCG's report gives no rating: {l:?}"));
    }
    if report.contains("HPCG result is=INVALID") {
        return Err("HPCG called the run INVALID".into());
    }
    Err("HPCG wrote no final summary".into())
}

/// One toolchain's build of HPCG.
struct Build {
    binary: PathBuf,
}

impl Build {
    /// Compiles every `src/*.cpp` of `src` with `cxx` into `<root>/<name>/xhpcg`, as
    /// HPCG's `setup/Make.Linux_MPI` does (no OpenMP), unless that binary exists.
    fn ensure(src: &Path, root: &Path, name: &str, cxx: &Path) -> Result<Build, String> {
        let dir = root.join(name);
        let binary = dir.join("xhpcg");
        if let Ok(binary) = std::fs::canonicalize(&binary) {
            return Ok(Build { binary });
        }
        let srcdir = src.join("src");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&srcdir)
            .map_err(|e| format!("{}: {e} (is --hpcg-dir HPCG's source?)", srcdir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
            .collect();
        if !files.iter().any(|p| p.ends_with("main.cpp")) {
            return Err(format!(
                "{} holds no main.cpp: --hpcg-dir must be HPCG's source directory",
                srcdir.display()
            ));
        }
        files.sort();
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        eprintln!(
            "volpex-bench: building HPCG with {} into {}",
            cxx.display(),
            dir.display()
        );
        // Into a temporary name first, so an interrupted build leaves no binary.
        let partial = dir.join("xhpcg.partial");
        run_capture(
            Command::new(cxx)
                .args(["-DHPCG_NO_OPENMP", "-O3", "-ffast-math", "-ftree-vectorize"])
                .arg("-I")
                .arg(&srcdir)
                .args(&files)
                .arg("-o")
                .arg(&partial),
            &cxx.display().to_string(),
        )?;
        std::fs::rename(&partial, &binary).map_err(|e| format!("{}: {e}", binary.display()))?;
        // Absolute, as every run starts in a directory of its own.
        let binary =
            std::fs::canonicalize(&binary).map_err(|e| format!("{}: {e}", binary.display()))?;
        Ok(Build { binary })
    }
}

/// `volpex-bench compare hpcg`.
pub fn run(a: &Args) -> Result<(), String> {
    let sides = super::distinct(&a.sides, "--sides names no side")?;
    if a.local < 16 || !a.local.is_multiple_of(8) {
        return Err(format!(
            "--local {} : HPCG needs a multiple of 8, at least 16",
            a.local
        ));
    }
    let root = match &a.build_dir {
        Some(d) => d.clone(),
        None => super::target_dir()?.join("hpcg-ref"),
    };
    let open_mpi = sides
        .iter()
        .any(|s| matches!(s, PingSide::OpenMpiSm | PingSide::OpenMpiTcp));
    let volpex = sides
        .iter()
        .any(|s| matches!(s, PingSide::Volpex | PingSide::VolpexTcp));
    let missing = "is not installed (apt-get install openmpi-bin libopenmpi-dev)";
    let (ompi_build, mpirun) = if open_mpi {
        let mpicxx = on_path("mpicxx").ok_or(format!("Open MPI's mpicxx {missing}"))?;
        let mpirun = on_path("mpirun").ok_or(format!("Open MPI's mpirun {missing}"))?;
        let b = Build::ensure(&a.hpcg_dir, &root, "openmpi", &mpicxx)?;
        (Some(b), mpirun)
    } else {
        (None, PathBuf::new())
    };
    let (volpex_build, vrun) = if volpex {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let volpexcxx = exe.with_file_name("volpexcxx");
        if !volpexcxx.is_file() {
            return Err(format!(
                "{} is not built (cargo build --release -p volpex-mpi)",
                volpexcxx.display()
            ));
        }
        let b = Build::ensure(&a.hpcg_dir, &root, "volpex", &volpexcxx)?;
        (Some(b), crate::runs::volpexrun()?)
    } else {
        (None, PathBuf::new())
    };
    let hpcg_args = [
        format!("--nx={}", a.local),
        format!("--ny={}", a.local),
        format!("--nz={}", a.local),
        format!("--rt={}", a.rt),
    ];
    let limit = Duration::from_secs(a.timeout + 30);
    let mut runs: Vec<(usize, PingSide, f64)> = Vec::new();
    let mut by_side: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    let rounds = a.rounds.max(1);
    eprintln!("volpex-bench: load average at start: {}", load_average());
    for round in 1..=rounds {
        for k in (0..sides.len()).map(|i| (i + round - 1) % sides.len()) {
            let side = sides[k];
            // HPCG writes its reports into the directory it runs in: one of its own per
            // run, removed after.
            let cwd = TempDir(std::env::temp_dir().join(format!(
                "volpex-bench-hpcg-{}-{round}-{k}",
                std::process::id()
            )));
            std::fs::create_dir_all(&cwd.0).map_err(|e| format!("{}: {e}", cwd.0.display()))?;
            let mut cmd = match (side, &ompi_build, &volpex_build) {
                (PingSide::OpenMpiSm | PingSide::OpenMpiTcp, Some(b), _) => {
                    let btl = if side == PingSide::OpenMpiSm {
                        super::Btl::Sm
                    } else {
                        super::Btl::Tcp
                    };
                    let mut c = mpirun_command(&mpirun, btl, a.ranks, a.timeout);
                    c.arg(&b.binary);
                    c
                }
                (PingSide::Volpex | PingSide::VolpexTcp, _, Some(b)) => {
                    let mut c = Command::new(&vrun);
                    c.env(
                        "VOLPEX_SHM",
                        if side == PingSide::Volpex { "1" } else { "0" },
                    )
                    .args(["-n", &a.ranks.to_string(), "-r", &a.replicas.to_string()])
                    .args(["--timeout", &a.timeout.to_string()])
                    .arg(&b.binary);
                    c
                }
                _ => return Err(format!("side {} has no build", side.name())),
            };
            cmd.args(&hpcg_args).current_dir(&cwd.0);
            let f = run_bounded(&mut cmd, limit)?;
            if !f.status.success() {
                return Err(format!(
                    "HPCG under {} failed ({}): {}",
                    side.name(),
                    f.status,
                    f.stderr.trim()
                ));
            }
            let report = read_report(&cwd.0)?;
            let g = rating(&report).map_err(|e| format!("HPCG under {}: {e}", side.name()))?;
            eprintln!(
                "volpex-bench: round {round}/{rounds}: {}: {g:.3} GFLOP/s",
                side.name()
            );
            runs.push((round, side, g));
            by_side.entry(k).or_default().push(g);
        }
    }
    eprintln!("volpex-bench: load average at end: {}", load_average());
    let medians: Vec<f64> = (0..sides.len())
        .map(|k| median(by_side.remove(&k).unwrap_or_default()))
        .collect();
    if a.csv {
        println!("side,gflops,ratio");
        for (s, m) in sides.iter().zip(&medians) {
            println!("{},{m:.4},{:.3}", s.name(), m / medians[0]);
        }
        println!("run,side,gflops");
        for (round, s, g) in &runs {
            println!("{round},{},{g:.4}", s.name());
        }
    } else {
        println!(
            "HPCG, {} ranks, {}^3 local grid, --rt={} ({} rounds, medians)",
            a.ranks, a.local, a.rt, rounds
        );
        println!("{:<14} {:>10} {:>10}", "side", "GFLOP/s", "ratio");
        for (s, m) in sides.iter().zip(&medians) {
            println!("{:<14} {m:>10.3} {:>10.3}", s.name(), m / medians[0]);
        }
    }
    Ok(())
}

/// The text of the one `HPCG-Benchmark*.txt` report in `dir`.
fn read_report(dir: &Path) -> Result<String, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with("HPCG-Benchmark") {
            return std::fs::read_to_string(e.path())
                .map_err(|err| format!("{}: {err}", e.path().display()));
        }
    }
    Err(format!("HPCG wrote no report in {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_report_gives_its_rating_and_an_invalid_one_none() {
        let valid = "HPCG-Benchmark\nversion=3.1\nFinal Summary=\n\
                     Final Summary::HPCG result is VALID with a GFLOP/s rating of=1.89123\n\
                     Final Summary::HPCG 2.4 rating for historical reasons is=1.9\n";
        assert_eq!(rating(valid), Ok(1.89123));
        let invalid = "Final Summary=\nFinal Summary::HPCG result is=INVALID.\n";
        assert_eq!(
            rating(invalid),
            Err("HPCG called the run INVALID".to_string())
        );
        assert!(rating("HPCG-Benchmark\nversion=3.1\n").is_err());
        let garbled = "Final Summary::HPCG result is VALID with a GFLOP/s rating of=nan\n";
        assert!(rating(garbled).is_err());
    }
}
