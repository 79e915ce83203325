//! `volpex-bench compare osu`: OSU micro-benchmarks' one-sided and point-to-point
//! programs (public, fetched by the user; never part of this repository) built with Open MPI's `mpicc` and with
//! `volpexcc`, run under Open MPI over TCP with its `osc pt2pt` component and under
//! volpexrun over TCP (`VOLPEX_SHM=0`) at each replica count asked for, alternating
//! sides, medians per message size.
//!
//! Owns the OSU build and the reading of OSU's output; the runs go through `compare`'s
//! helpers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{load_average, mpirun_command, run_bounded, run_capture, Btl, TempDir};
use crate::runs::{median, on_path, volpexrun};

/// `compare osu` options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The OSU micro-benchmarks' source directory (its top, holding `mpi/one-sided`, or
    /// that directory itself).
    #[arg(long)]
    pub osu_dir: PathBuf,
    /// Benchmarks, comma-separated, by their name without `osu_`: point-to-point ones
    /// (`mpi/pt2pt/osu_NAME.c`: `bw`, `latency`, ...) and one-sided ones
    /// (`mpi/one-sided/osu_NAME.c`).
    #[arg(long, value_delimiter = ',', default_value = "put_latency,get_bw")]
    pub benches: Vec<String>,
    /// Replica counts of the Volpex sides, comma-separated: a column each.
    #[arg(
        short = 'r',
        long = "replicas",
        value_delimiter = ',',
        default_value = "1,2"
    )]
    pub replicas: Vec<u32>,
    /// Rounds (every side runs every benchmark once per round, the order turning from
    /// round to round); medians are reported.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Arguments for every benchmark, one string (e.g. "-i 20 -x 2").
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub osu_args: String,
    /// Print CSV: bench,size_bytes,unit, a column per side, then each Volpex side over
    /// Open MPI, then each later Volpex side over the first.
    #[arg(long)]
    pub csv: bool,
    /// Time limit of one run, seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout: u64,
}

/// A column: Open MPI, or Volpex at a replica count.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Column {
    OpenMpi,
    Volpex(u32),
}

impl Column {
    fn name(self) -> String {
        match self {
            Column::OpenMpi => "openmpi".into(),
            Column::Volpex(r) => format!("volpex-r{r}"),
        }
    }
}

/// What one OSU run printed: its unit (from the column header) and a value per size.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Report {
    pub unit: String,
    pub rows: BTreeMap<usize, f64>,
}

/// Reads OSU's output: `#` lines (the last one naming the column, `Latency (us)` or
/// `Bandwidth (MB/s)`), then a size and a value per line.
pub(crate) fn parse(out: &str) -> Report {
    let mut r = Report::default();
    for line in out.lines().map(str::trim) {
        if let Some(head) = line.strip_prefix('#') {
            if let (Some(a), Some(b)) = (head.find('('), head.rfind(')')) {
                if a < b {
                    r.unit = head[a + 1..b].to_string();
                }
            }
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [size, value] = f[..] {
            if let (Ok(s), Ok(v)) = (size.parse(), value.parse()) {
                r.rows.insert(s, v);
            }
        }
    }
    r
}

/// Where a benchmark's sources are: the one-sided directory, and the helper sources
/// and include directories it compiles with (OSU 5.3: `osu_1sc.c` beside it; 5.4 and
/// later: `util/osu_util.c` and `util/osu_util_mpi.c`).
struct Sources {
    dir: PathBuf,
    helpers: Vec<PathBuf>,
    includes: Vec<PathBuf>,
}

impl Sources {
    /// The point-to-point benchmarks (`bw`, `latency`, ...: `mpi/pt2pt/osu_NAME.c`),
    /// compiled with `osu_pt2pt.c` beside them (OSU 5.3) or the `util` helpers (5.4 and
    /// later).
    fn find_pt2pt(osu: &Path) -> Option<Sources> {
        Self::locate(osu, "mpi/pt2pt", "osu_latency.c", "osu_pt2pt.c").ok()
    }

    /// The one-sided benchmarks (`mpi/one-sided/osu_NAME.c`), compiled with `osu_1sc.c`
    /// beside them (OSU 5.3) or the `util` helpers.
    fn find(osu: &Path) -> Result<Sources, String> {
        Self::locate(osu, "mpi/one-sided", "osu_put_latency.c", "osu_1sc.c")
    }

    /// The directory of `osu` (its `sub`, or itself) holding `marker`, with its own
    /// `helper` beside it or else the `util` helpers.
    fn locate(osu: &Path, sub: &str, marker: &str, helper: &str) -> Result<Sources, String> {
        let dir = [osu.join(sub), osu.to_path_buf()]
            .into_iter()
            .find(|d| d.join(marker).is_file())
            .ok_or_else(|| format!("{}: no OSU sources ({sub}/{marker})", osu.display()))?;
        if dir.join(helper).is_file() {
            return Ok(Sources {
                helpers: vec![dir.join(helper)],
                includes: vec![dir.clone()],
                dir,
            });
        }
        let util = [dir.join("../../util"), osu.join("util")]
            .into_iter()
            .find(|u| u.join("osu_util.c").is_file())
            .ok_or_else(|| {
                format!(
                    "{}: neither {helper} nor util/osu_util.c beside the sources",
                    dir.display()
                )
            })?;
        Ok(Sources {
            helpers: ["osu_util.c", "osu_util_mpi.c"]
                .iter()
                .map(|f| util.join(f))
                .filter(|p| p.is_file())
                .collect(),
            includes: vec![util, dir.clone()],
            dir,
        })
    }

    /// Builds `osu_NAME.c` with `cc` into `out`.
    fn build(&self, cc: &Path, bench: &str, out: &Path) -> Result<(), String> {
        let main = self.dir.join(format!("osu_{bench}.c"));
        if !main.is_file() {
            return Err(format!("{}: no such benchmark", main.display()));
        }
        let mut cmd = Command::new(cc);
        cmd.arg("-O2").arg("-o").arg(out);
        for i in &self.includes {
            cmd.arg("-I").arg(i);
        }
        cmd.arg(&main).args(&self.helpers);
        run_capture(&mut cmd, &format!("{} (osu_{bench})", cc.display())).map(drop)
    }
}

/// Per benchmark and column: the unit and each round's value per size.
type Results = BTreeMap<(String, usize), (String, BTreeMap<usize, Vec<f64>>)>;

/// Runs the comparison.
pub fn run(a: &Args) -> Result<(), String> {
    if a.benches.is_empty() {
        return Err("--benches names no benchmark".into());
    }
    let missing = "is not installed (apt-get install openmpi-bin libopenmpi-dev)";
    let mpicc = on_path("mpicc").ok_or(format!("Open MPI's mpicc {missing}"))?;
    let mpirun = on_path("mpirun").ok_or(format!("Open MPI's mpirun {missing}"))?;
    let volpexcc = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name("volpexcc");
    if !volpexcc.is_file() {
        return Err(format!(
            "{} is not built (cargo build --release -p volpex-mpi)",
            volpexcc.display()
        ));
    }
    let vrun = volpexrun()?;
    let one_sided = Sources::find(&a.osu_dir);
    let pt2pt = Sources::find_pt2pt(&a.osu_dir);
    // A benchmark is point-to-point if its source is there (`bw`, `latency`), else
    // one-sided.
    let sources = |b: &str| -> Result<&Sources, String> {
        match &pt2pt {
            Some(p) if p.dir.join(format!("osu_{b}.c")).is_file() => Ok(p),
            _ => one_sided.as_ref().map_err(Clone::clone),
        }
    };
    let tmp =
        TempDir(std::env::temp_dir().join(format!("volpex-bench-{}-osu", std::process::id())));
    std::fs::create_dir_all(&tmp.0).map_err(|e| format!("{}: {e}", tmp.0.display()))?;
    let binary = |bench: &str, side: &str| tmp.0.join(format!("osu_{bench}.{side}"));
    for b in &a.benches {
        let src = sources(b)?;
        src.build(&mpicc, b, &binary(b, "openmpi"))?;
        src.build(&volpexcc, b, &binary(b, "volpex"))?;
    }
    let mut columns = vec![Column::OpenMpi];
    for &r in &a.replicas {
        if r == 0 {
            return Err("--replicas: at least 1".into());
        }
        if !columns.contains(&Column::Volpex(r)) {
            columns.push(Column::Volpex(r));
        }
    }
    let osu_args: Vec<&str> = a.osu_args.split_whitespace().collect();
    let limit = Duration::from_secs(a.timeout + 30);
    let mut got = Results::new();
    let rounds = a.rounds.max(1);
    eprintln!("volpex-bench: load average at start: {}", load_average());
    for round in 1..=rounds {
        // The order turns each round, so a trend in the machine's load favours no side.
        for k in (0..columns.len()).map(|i| (i + round - 1) % columns.len()) {
            let col = columns[k];
            for b in &a.benches {
                eprintln!(
                    "volpex-bench: round {round}/{rounds}: osu_{b} {}",
                    col.name()
                );
                let mut cmd = match col {
                    Column::OpenMpi => {
                        let mut c = mpirun_command(&mpirun, Btl::Tcp, 2, a.timeout);
                        c.args(["--mca", "osc", "pt2pt"]).arg(binary(b, "openmpi"));
                        c
                    }
                    Column::Volpex(r) => {
                        let mut c = Command::new(&vrun);
                        c.env("VOLPEX_SHM", "0")
                            .args(["-n", "2", "-r", &r.to_string()])
                            .args(["--timeout", &a.timeout.to_string()])
                            .arg(binary(b, "volpex"));
                        c
                    }
                };
                cmd.args(&osu_args);
                let f = run_bounded(&mut cmd, limit)?;
                if !f.status.success() {
                    return Err(format!(
                        "osu_{b} under {} failed ({}):\n{}{}",
                        col.name(),
                        f.status,
                        f.stdout,
                        f.stderr
                    ));
                }
                let rep = parse(&f.stdout);
                if rep.rows.is_empty() {
                    return Err(format!(
                        "osu_{b} under {} printed no results:\n{}",
                        col.name(),
                        f.stdout
                    ));
                }
                let e = got.entry((b.clone(), k)).or_default();
                e.0 = rep.unit;
                for (s, v) in rep.rows {
                    e.1.entry(s).or_default().push(v);
                }
            }
        }
    }
    eprintln!("volpex-bench: load average at end: {}", load_average());
    print!("{}", table(a, &columns, got));
    Ok(())
}

/// The medians and ratios, as CSV or as a table.
fn table(a: &Args, columns: &[Column], mut got: Results) -> String {
    let names: Vec<String> = columns.iter().map(|c| c.name()).collect();
    let volpex: Vec<&String> = names[1..].iter().collect();
    let mut header = vec!["bench".to_string(), "size_bytes".into(), "unit".into()];
    header.extend(names.iter().cloned());
    header.extend(volpex.iter().map(|n| format!("{n}_ratio")));
    if let Some((first, rest)) = volpex.split_first() {
        header.extend(rest.iter().map(|n| format!("{n}_over_{first}")));
    }
    let mut out = String::new();
    let width = |h: &str| h.len().max(10);
    if a.csv {
        let _ = writeln!(out, "{}", header.join(","));
    } else {
        let line: Vec<String> = header
            .iter()
            .map(|h| format!("{h:>w$}", w = width(h)))
            .collect();
        let _ = writeln!(out, "{}", line.join(" "));
    }
    for b in &a.benches {
        let per: Vec<(String, BTreeMap<usize, Vec<f64>>)> = (0..columns.len())
            .map(|k| got.remove(&(b.clone(), k)).unwrap_or_default())
            .collect();
        let unit = per[0].0.replace(' ', "");
        let sizes: Vec<usize> = per[0]
            .1
            .keys()
            .copied()
            .filter(|s| per.iter().all(|(_, m)| m.contains_key(s)))
            .collect();
        for size in sizes {
            let med: Vec<f64> = per
                .iter()
                .map(|(_, m)| median(m.get(&size).cloned().unwrap_or_default()))
                .collect();
            let mut row = vec![b.clone(), size.to_string(), unit.clone()];
            row.extend(med.iter().map(|v| format!("{v:.2}")));
            row.extend(med[1..].iter().map(|v| format!("{:.3}", v / med[0])));
            if med.len() > 2 {
                row.extend(med[2..].iter().map(|v| format!("{:.3}", v / med[1])));
            }
            if a.csv {
                let _ = writeln!(out, "{}", row.join(","));
            } else {
                let line: Vec<String> = row
                    .iter()
                    .zip(&header)
                    .map(|(v, h)| format!("{v:>w$}", w = width(h)))
                    .collect();
                let _ = writeln!(out, "{}", line.join(" "));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_point_to_point_sources_and_their_helper() {
        let top = std::env::temp_dir().join(format!("osu-find-{}", std::process::id()));
        let pt2pt = top.join("mpi/pt2pt");
        std::fs::create_dir_all(&pt2pt).expect("temp dir");
        for f in ["osu_latency.c", "osu_bw.c", "osu_pt2pt.c"] {
            std::fs::write(pt2pt.join(f), "").expect("temp file");
        }
        let found = Sources::find_pt2pt(&top);
        let one_sided = Sources::find(&top);
        std::fs::remove_dir_all(&top).expect("temp dir removed");
        let s = found.expect("pt2pt sources");
        assert_eq!(s.dir, pt2pt);
        assert_eq!(s.helpers, vec![pt2pt.join("osu_pt2pt.c")]);
        assert!(one_sided.is_err(), "no one-sided sources there");
    }

    #[test]
    fn reads_the_unit_and_the_rows() {
        let out = "# OSU MPI_Get Bandwidth Test v5.3.2\n# Window creation: MPI_Win_allocate\n\
                   # Synchronization: MPI_Win_flush\n# Size      Bandwidth (MB/s)\n\
                   1                       0.52\n1048576              6653.10\nvolpexrun: done\n";
        let r = parse(out);
        assert_eq!(r.unit, "MB/s");
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.rows[&1048576], 6653.10);
    }
}
