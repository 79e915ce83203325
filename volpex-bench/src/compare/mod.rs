//! Side-by-side runs: the same benchmark under Volpex and under Open MPI over TCP and its
//! shared memory (for ping-pong and HPCG also Volpex over TCP; for OSU's one-sided
//! programs Volpex at several replica counts), alternating, several rounds, medians.

mod hpcg;
mod npb;
mod npb_ref;
mod osu;
mod overlap;

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::runs::{median, on_path, volpexrun};

/// What to compare.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// Ping-pong latency and bandwidth, 1 B .. 4 MiB.
    Pingpong(Args),
    /// All-reduce, broadcast and all-to-all times, 8 B .. 1 MiB.
    Collectives(CollectiveArgs),
    /// The official NPB 3.4 MPI code under Open MPI (built into the target directory)
    /// against our ports under volpexrun, per benchmark and rank count.
    Npb(npb::Args),
    /// Delivery while the sender computes, and a receive-compute-send pipeline:
    /// `volpex-bench overlap` against `c/overlap.c` under Open MPI.
    Overlap(overlap::Args),
    /// OSU micro-benchmarks' one-sided programs (the user's OSU source directory) under
    /// Open MPI over TCP (`osc pt2pt`) and under volpexrun over TCP at each replica count.
    Osu(osu::Args),
    /// HPCG (the user's HPCG source directory) built with mpicxx and with volpexcxx, under
    /// Open MPI's shared memory and TCP and under volpexrun: GFLOP/s of the valid runs.
    Hpcg(hpcg::Args),
}

/// One way of running a benchmark: a column of the comparison tables.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The official or C program under Open MPI's mpirun over TCP.
    #[value(name = "openmpi")]
    OpenMpi,
    /// The same under Open MPI's default transport on one host, shared memory
    /// (`--mca btl self,vader`).
    #[value(name = "openmpi-sm")]
    OpenMpiSm,
    /// Our Rust program under volpexrun, one replica per rank.
    #[value(name = "volpex")]
    Volpex,
    /// The official program built with our MPI wrappers (`volpexf90`, `volpexcc`) under
    /// volpexrun, one replica per rank.
    #[value(name = "volpex-official")]
    VolpexOfficial,
}

impl Side {
    /// The name in column headers and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Side::OpenMpi => "openmpi",
            Side::OpenMpiSm => "openmpi-sm",
            Side::Volpex => "volpex",
            Side::VolpexOfficial => "volpex-official",
        }
    }

    /// Open MPI's transport, for the sides that run under Open MPI.
    fn btl(self) -> Option<Btl> {
        match self {
            Side::OpenMpi => Some(Btl::Tcp),
            Side::OpenMpiSm => Some(Btl::Sm),
            Side::Volpex | Side::VolpexOfficial => None,
        }
    }
}

/// Collective comparison options.
#[derive(clap::Args, Debug)]
pub struct CollectiveArgs {
    /// Ranks on both sides.
    #[arg(short = 'n', long = "np", default_value_t = 4)]
    pub ranks: u32,
    /// Replicas per rank on the Volpex side.
    #[arg(short = 'r', long = "replicas", default_value_t = 1)]
    pub replicas: u32,
    /// Runs of each side, alternating; the medians are reported.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Print CSV: op,size_bytes,volpex_us,openmpi_us,ratio, then for Open MPI's shared
    /// memory side (when `--openmpi` names it) openmpi-sm_us,openmpi-sm_ratio.
    #[arg(long)]
    pub csv: bool,
    /// Open MPI's transports, a side each, comma-separated: tcp (over loopback, as
    /// between hosts; its column is `openmpi`), sm (its default on one host, shared
    /// memory; `openmpi-sm`).
    #[arg(long = "openmpi", value_enum, value_delimiter = ',',
          default_values_t = [OpenMpiBtl::Tcp, OpenMpiBtl::Sm])]
    pub openmpi: Vec<OpenMpiBtl>,
    /// Largest size in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_bytes: usize,
    /// Operations per size up to 8 KiB (fewer for larger sizes).
    #[arg(long, default_value_t = 500)]
    pub iters: u64,
    /// How operations are timed (see `volpex-bench collectives --help`).
    #[arg(long, value_enum, default_value_t = crate::collectives::Method::Loop)]
    pub method: crate::collectives::Method,
    /// Operations to compare, comma-separated (see `volpex-bench collectives --help`).
    #[arg(long, value_delimiter = ',', default_values_t = crate::collectives::DEFAULT_OPS.map(String::from))]
    pub ops: Vec<String>,
}

/// An Open MPI side of `compare collectives`, by its transport.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMpiBtl {
    /// TCP on loopback (`--mca btl self,tcp`).
    #[value(name = "tcp")]
    Tcp,
    /// Shared memory (`--mca btl self,vader`).
    #[value(name = "sm")]
    Sm,
}

impl OpenMpiBtl {
    fn btl(self) -> Btl {
        match self {
            OpenMpiBtl::Tcp => Btl::Tcp,
            OpenMpiBtl::Sm => Btl::Sm,
        }
    }

    /// Its columns' name (`openmpi` for TCP, as before there was a second side).
    fn name(self) -> &'static str {
        match self {
            OpenMpiBtl::Tcp => "openmpi",
            OpenMpiBtl::Sm => "openmpi-sm",
        }
    }
}

/// Header of `compare collectives --csv` output: Volpex and Open MPI over TCP, then a
/// time and a ratio for each further Open MPI side.
fn collectives_csv_header(sides: &[OpenMpiBtl]) -> String {
    let mut h = String::from("op,size_bytes,volpex_us");
    for (i, s) in sides.iter().enumerate() {
        if i == 0 {
            h.push_str(&format!(",{}_us,ratio", s.name()));
        } else {
            h.push_str(&format!(",{0}_us,{0}_ratio", s.name()));
        }
    }
    h
}

/// Comparison options.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Replicas per rank on the Volpex sides (each replica pulls from its own team).
    #[arg(short = 'r', long = "replicas", default_value_t = 1)]
    pub replicas: u32,
    /// Runs of each side, alternating (the order turns each round); the medians are
    /// reported.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// The columns, comma-separated; ratios are of the first side's latency to each
    /// other's.
    #[arg(long, value_enum, value_delimiter = ',',
          default_values_t = [PingSide::Volpex, PingSide::OpenMpiSm, PingSide::OpenMpiTcp])]
    pub sides: Vec<PingSide>,
    /// Print CSV: size_bytes, then per side {side}_lat_us and {side}_mbps, then per side
    /// after the first {side}_lat_ratio (first side's latency over this side's).
    #[arg(long)]
    pub csv: bool,
    /// Smallest message size in bytes; the sizes double from it (0 counts as 1).
    #[arg(long, default_value_t = 1)]
    pub min_bytes: usize,
    /// Largest message size in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    pub max_bytes: usize,
    /// Round trips per size up to 8 KiB (fewer for larger sizes).
    #[arg(long, default_value_t = 2000)]
    pub iters: u64,
    /// Also write a figure here (SVG): latency and bandwidth against size, a line per
    /// side (as `volpex-bench plot pingpong` draws the CSV).
    #[arg(long)]
    pub svg: Option<PathBuf>,
}

/// A column of `compare pingpong` and `compare hpcg`: a library and the transport it uses
/// on one host.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PingSide {
    /// The program under volpexrun as users run it (`volpex-bench pingpong`, HPCG built
    /// with volpexcxx): shared memory between processes on one host (docs/SHM.md).
    #[value(name = "volpex")]
    Volpex,
    /// The same with `VOLPEX_SHM=0`: TCP on loopback, as between two hosts.
    #[value(name = "volpex-tcp")]
    VolpexTcp,
    /// The program built with Open MPI (`c/pingpong.c`, HPCG built with mpicxx) under its
    /// default transport on one host, shared memory (`--mca btl self,vader`).
    #[value(name = "openmpi-sm")]
    OpenMpiSm,
    /// The same under Open MPI over TCP on loopback (`--mca btl self,tcp`).
    #[value(name = "openmpi-tcp")]
    OpenMpiTcp,
}

impl PingSide {
    /// The name in column headers and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PingSide::Volpex => "volpex",
            PingSide::VolpexTcp => "volpex-tcp",
            PingSide::OpenMpiSm => "openmpi-sm",
            PingSide::OpenMpiTcp => "openmpi-tcp",
        }
    }
}

/// Which of Open MPI's byte transports a run uses between its processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Btl {
    /// TCP on loopback: `--mca btl self,tcp --mca btl_tcp_if_include lo`.
    Tcp,
    /// Shared memory, Open MPI's default on one host: `--mca btl self,vader`.
    Sm,
}

impl Btl {
    /// The `mpirun` arguments that choose it.
    fn args(self) -> &'static [&'static str] {
        match self {
            Btl::Tcp => &[
                "--mca",
                "btl",
                "self,tcp",
                "--mca",
                "btl_tcp_if_include",
                "lo",
            ],
            Btl::Sm => &["--mca", "btl", "self,vader"],
        }
    }
}

/// The cargo target directory this program runs from (the parent of its `release` or
/// `debug` directory; else its own directory), where reference builds go.
fn target_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe
        .parent()
        .ok_or("the executable has no directory")?
        .to_path_buf();
    Ok(match dir.file_name().and_then(|n| n.to_str()) {
        Some("release" | "debug") => dir.parent().map(Path::to_path_buf).unwrap_or(dir),
        _ => dir,
    })
}

/// `items` in their order, each once; `Err(empty)` when there is none.
fn distinct<T: PartialEq + Copy>(items: &[T], empty: &str) -> Result<Vec<T>, String> {
    let mut out: Vec<T> = Vec::new();
    for s in items {
        if !out.contains(s) {
            out.push(*s);
        }
    }
    if out.is_empty() {
        return Err(empty.into());
    }
    Ok(out)
}

/// Removes a directory when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Rows of `size_bytes,lat_us,mbps` in a program's output.
fn parse(out: &str) -> BTreeMap<usize, (f64, f64)> {
    out.lines()
        .filter_map(|l| {
            let mut f = l.trim().split(',');
            let size = f.next()?.parse().ok()?;
            let lat = f.next()?.parse().ok()?;
            let bw = f.next()?.parse().ok()?;
            Some((size, (lat, bw)))
        })
        .collect()
}

/// The directory of the C programs: $VOLPEX_BENCH_C_DIR, else `c/` in this crate.
fn c_dir() -> PathBuf {
    std::env::var_os("VOLPEX_BENCH_C_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("c"))
}

/// `mpirun -n NP` over `btl`, with `--oversubscribe --bind-to core:overload-allowed`
/// only when `np` exceeds this machine's CPUs (so Open MPI keeps its default binding
/// otherwise), and Open MPI's own `--timeout`.
fn mpirun_command(mpirun: &Path, btl: Btl, np: u32, timeout_s: u64) -> Command {
    let mut cmd = mpirun_placed(mpirun, btl, np);
    cmd.args(["--timeout", &timeout_s.to_string()]);
    cmd
}

/// `mpirun -n NP` over `btl`, placed as `crowded_args` says for this machine's CPUs:
/// every Open MPI run of `compare` starts here.
fn mpirun_placed(mpirun: &Path, btl: Btl, np: u32) -> Command {
    let mut cmd = Command::new(mpirun);
    if nix::unistd::geteuid().is_root() {
        cmd.arg("--allow-run-as-root");
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    cmd.args(crowded_args(np, cpus))
        .args(btl.args())
        .args(["-n", &np.to_string()]);
    cmd
}

/// The placement arguments of `np` ranks on `cpus` CPUs: none when every rank has a CPU
/// (Open MPI then binds to cores and polls without end); with more ranks than CPUs
/// `--oversubscribe` (which also makes Open MPI yield when idle) and binding to cores in
/// turn, as volpexrun binds a crowded host's processes: left to the kernel, Open MPI's
/// times at 4 ranks on 2 cores take one of two levels by where the processes land (NPB
/// IS class A 0.11 or 0.17 s).
fn crowded_args(np: u32, cpus: usize) -> &'static [&'static str] {
    if np as usize > cpus {
        &["--oversubscribe", "--bind-to", "core:overload-allowed"]
    } else {
        &[]
    }
}

/// A finished child process.
struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` to its end, capturing its output; past `limit` it gets SIGTERM (by its
/// process id; mpirun and volpexrun end their own processes on it), then SIGKILL 5 s
/// later, and the result is an error.
fn run_bounded(cmd: &mut Command, limit: Duration) -> Result<Finished, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let start = Instant::now();
    let mut termed: Option<Instant> = None;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => break Err(format!("waiting for {:?}: {e}", cmd.get_program())),
        }
        match termed {
            None if start.elapsed() > limit => {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
                termed = Some(Instant::now());
            }
            Some(t) if t.elapsed() > Duration::from_secs(5) => {
                let _ = child.kill();
            }
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    if termed.is_some() {
        return Err(format!(
            "{:?} did not finish within {} s; ended",
            cmd.get_program(),
            limit.as_secs()
        ));
    }
    Ok(Finished {
        status,
        stdout,
        stderr,
    })
}

fn run_capture(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The 1, 5 and 15 minute load averages, as the kernel reports them (the machine may be
/// shared; the figures say how much).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

/// Both sides of a comparison: a compiled C program for Open MPI, and this binary's
/// subcommand under volpexrun.
struct Harness {
    _tmp: TempDir,
    c_bin: PathBuf,
    mpirun: PathBuf,
    vrun: PathBuf,
    me: PathBuf,
}

impl Harness {
    fn new(c_file: &str) -> Result<Harness, String> {
        let missing = "is not installed (apt-get install openmpi-bin libopenmpi-dev)";
        let mpicc = on_path("mpicc").ok_or(format!("Open MPI's mpicc {missing}"))?;
        let mpirun = on_path("mpirun").ok_or(format!("Open MPI's mpirun {missing}"))?;
        let src_dir = c_dir();
        let tmp = TempDir(
            std::env::temp_dir().join(format!("volpex-bench-{}-{c_file}", std::process::id())),
        );
        std::fs::create_dir_all(&tmp.0).map_err(|e| format!("{}: {e}", tmp.0.display()))?;
        let c_bin = tmp.0.join("bench");
        run_capture(
            Command::new(&mpicc)
                .arg("-O3")
                .arg("-o")
                .arg(&c_bin)
                .arg(src_dir.join(c_file)),
            "mpicc",
        )?;
        Ok(Harness {
            _tmp: tmp,
            c_bin,
            mpirun,
            vrun: volpexrun()?,
            me: std::env::current_exe().map_err(|e| e.to_string())?,
        })
    }

    fn openmpi(&self, btl: Btl, ranks: u32, args: &[String]) -> Result<String, String> {
        run_capture(&mut self.openmpi_command(btl, ranks, args), "mpirun")
    }

    /// The C program under `mpirun`, placed as every Open MPI run of `compare` is
    /// (`mpirun_placed`).
    fn openmpi_command(&self, btl: Btl, ranks: u32, args: &[String]) -> Command {
        let mut cmd = mpirun_placed(&self.mpirun, btl, ranks);
        cmd.arg(&self.c_bin).args(args);
        cmd
    }

    /// `shm`: whether processes on one host use shared memory (`VOLPEX_SHM`).
    fn volpex(
        &self,
        ranks: u32,
        replicas: u32,
        shm: bool,
        sub: &str,
        args: &[String],
    ) -> Result<String, String> {
        let mut cmd = Command::new(&self.vrun);
        cmd.env("VOLPEX_SHM", if shm { "1" } else { "0" })
            .args(["-n", &ranks.to_string(), "-r", &replicas.to_string()])
            .arg(&self.me)
            .arg(sub)
            .args(args);
        run_capture(&mut cmd, "volpexrun")
    }
}

/// Runs the comparison.
pub fn run(what: &What) -> Result<(), String> {
    match what {
        What::Pingpong(a) => pingpong(a),
        What::Collectives(a) => collectives(a),
        What::Npb(a) => npb::run(a),
        What::Overlap(a) => overlap::run(a),
        What::Osu(a) => osu::run(a),
        What::Hpcg(a) => hpcg::run(a),
    }
}

fn pingpong(a: &Args) -> Result<(), String> {
    let sides = distinct(&a.sides, "--sides names no side")?;
    if a.min_bytes > a.max_bytes {
        return Err(format!(
            "--min-bytes {} is larger than --max-bytes {}",
            a.min_bytes, a.max_bytes
        ));
    }
    let h = Harness::new("pingpong.c")?;
    let common = [
        "--csv".to_string(),
        "--min-bytes".to_string(),
        a.min_bytes.max(1).to_string(),
        "--max-bytes".to_string(),
        a.max_bytes.to_string(),
        "--iters".to_string(),
        a.iters.to_string(),
    ];
    // Per side, per size, the latency of each round.
    let mut lat: Vec<BTreeMap<usize, Vec<f64>>> = vec![BTreeMap::new(); sides.len()];
    let rounds = a.rounds.max(1);
    eprintln!("volpex-bench: load average at start: {}", load_average());
    for round in 1..=rounds {
        // The order turns each round, so a trend in the machine's load favours no side.
        for k in (0..sides.len()).map(|i| (i + round - 1) % sides.len()) {
            let side = sides[k];
            eprintln!("volpex-bench: round {round}/{rounds}: {}", side.name());
            let out = match side {
                PingSide::Volpex => h.volpex(2, a.replicas, true, "pingpong", &common)?,
                PingSide::VolpexTcp => h.volpex(2, a.replicas, false, "pingpong", &common)?,
                PingSide::OpenMpiSm => h.openmpi(Btl::Sm, 2, &common)?,
                PingSide::OpenMpiTcp => h.openmpi(Btl::Tcp, 2, &common)?,
            };
            for (s, (l, _)) in parse(&out) {
                lat[k].entry(s).or_default().push(l);
            }
        }
    }
    eprintln!("volpex-bench: load average at end: {}", load_average());
    let names: Vec<&str> = sides.iter().map(|s| s.name()).collect();
    let mut header = vec!["size_bytes".to_string()];
    header.extend(names.iter().map(|n| format!("{n}_lat_us")));
    header.extend(names.iter().map(|n| format!("{n}_mbps")));
    header.extend(names[1..].iter().map(|n| format!("{n}_lat_ratio")));
    // The CSV is kept for the figure whether or not it is printed.
    let mut csv = header.join(",") + "\n";
    if a.csv {
        println!("{}", header.join(","));
    } else {
        let mut line = format!("{:>10}", "bytes");
        for n in &names {
            line.push_str(&format!(" {:>13}", format!("{n}_us")));
        }
        for n in &names {
            line.push_str(&format!(" {:>13}", format!("{n}_MB/s")));
        }
        for n in &names[1..] {
            line.push_str(&format!(" {:>13}", format!("x {n}")));
        }
        println!("{line}");
    }
    // Sizes every side measured.
    let sizes: Vec<usize> = lat[0]
        .keys()
        .copied()
        .filter(|s| lat.iter().all(|m| m.contains_key(s)))
        .collect();
    for size in sizes {
        let med: Vec<f64> = lat
            .iter_mut()
            .map(|m| median(m.remove(&size).unwrap_or_default()))
            .collect();
        // Bandwidth from the median latency (bytes per microsecond = MB/s).
        let bw: Vec<f64> = med.iter().map(|l| size as f64 / l).collect();
        let ratios: Vec<f64> = med[1..].iter().map(|l| med[0] / l).collect();
        let mut row = size.to_string();
        let mut line = format!("{size:>10}");
        for l in &med {
            row.push_str(&format!(",{l:.3}"));
            line.push_str(&format!(" {l:>13.3}"));
        }
        for b in &bw {
            row.push_str(&format!(",{b:.1}"));
            line.push_str(&format!(" {b:>13.1}"));
        }
        for r in &ratios {
            row.push_str(&format!(",{r:.3}"));
            line.push_str(&format!(" {r:>13.2}"));
        }
        csv.push_str(&row);
        csv.push('\n');
        println!("{}", if a.csv { &row } else { &line });
    }
    if let Some(p) = &a.svg {
        crate::plot::write(p, &crate::plot::pingpong_svg(&csv, None)?)?;
    }
    Ok(())
}

/// Rows of `op,size_bytes,time_us`.
fn parse_ops(out: &str) -> Vec<((String, usize), f64)> {
    out.lines()
        .filter_map(|l| {
            let mut f = l.trim().split(',');
            let op = f.next()?.to_string();
            let size = f.next()?.parse().ok()?;
            let t = f.next()?.parse().ok()?;
            Some(((op, size), t))
        })
        .collect()
}

fn collectives(a: &CollectiveArgs) -> Result<(), String> {
    let openmpi = distinct(&a.openmpi, "--openmpi names no transport")?;
    let h = Harness::new("collectives.c")?;
    let common = [
        "--csv".to_string(),
        "--max-bytes".to_string(),
        a.max_bytes.to_string(),
        "--iters".to_string(),
        a.iters.to_string(),
        "--method".to_string(),
        a.method.name().to_string(),
        "--ops".to_string(),
        a.ops.join(","),
    ];
    // Side 0 is Volpex, side k > 0 is openmpi[k - 1]; per side, per (op, size), the time
    // of each round.
    let sides = 1 + openmpi.len();
    let mut times: Vec<BTreeMap<(String, usize), Vec<f64>>> = vec![BTreeMap::new(); sides];
    let rounds = a.rounds.max(1);
    eprintln!("volpex-bench: load average at start: {}", load_average());
    for round in 1..=rounds {
        // The order turns each round, so a trend in the machine's load favours no side.
        for k in (0..sides).map(|i| (i + round - 1) % sides) {
            let out = if k == 0 {
                eprintln!(
                    "volpex-bench: round {round}/{rounds}: Volpex r={}",
                    a.replicas
                );
                h.volpex(a.ranks, a.replicas, true, "collectives", &common)?
            } else {
                let o = openmpi[k - 1];
                eprintln!("volpex-bench: round {round}/{rounds}: {}", o.name());
                h.openmpi(o.btl(), a.ranks, &common)?
            };
            for (key, t) in parse_ops(&out) {
                times[k].entry(key).or_default().push(t);
            }
        }
    }
    eprintln!("volpex-bench: load average at end: {}", load_average());
    if a.csv {
        println!("{}", collectives_csv_header(&openmpi));
    } else {
        // `x NAME` is the ratio of the medians; `paired` the median of each round's ratio
        // (the sides of a round ran one right after the other, under about the same
        // load).
        let mut line = format!("{:<10} {:>10} {:>12}", "op", "bytes", "volpex_us");
        for o in &openmpi {
            line.push_str(&format!(" {:>14}", format!("{}_us", o.name())));
        }
        for o in &openmpi {
            line.push_str(&format!(
                " {:>12} {:>8}",
                format!("x {}", o.name()),
                "paired"
            ));
        }
        println!("{line}");
    }
    let volpex = std::mem::take(&mut times[0]);
    for ((op, size), v) in volpex {
        let others: Option<Vec<Vec<f64>>> = times[1..]
            .iter_mut()
            .map(|m| m.remove(&(op.clone(), size)))
            .collect();
        let Some(others) = others else {
            continue;
        };
        let v_med = median(v.clone());
        let meds: Vec<f64> = others.iter().map(|o| median(o.clone())).collect();
        if a.csv {
            let mut row = format!("{op},{size},{v_med:.3}");
            for o in &meds {
                row.push_str(&format!(",{o:.3},{:.3}", v_med / o));
            }
            println!("{row}");
        } else {
            let mut line = format!("{op:<10} {size:>10} {v_med:>12.3}");
            for o in &meds {
                line.push_str(&format!(" {o:>14.3}"));
            }
            for (o, med) in others.iter().zip(&meds) {
                let paired = median(v.iter().zip(o).map(|(v, o)| v / o).collect());
                line.push_str(&format!(" {:>12.2} {paired:>8.2}", v_med / med));
            }
            println!("{line}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Open MPI run of `compare` (the C programs of `compare pingpong` and
    /// `compare collectives` as much as NPB, OSU and HPCG) is oversubscribed only with
    /// more ranks than CPUs: `--oversubscribe` makes Open MPI yield when idle, which
    /// slowed its ping-pong where each rank had a CPU of its own.
    #[test]
    fn open_mpi_runs_oversubscribed_only_with_more_ranks_than_cpus() {
        assert!(crowded_args(2, 2).is_empty());
        assert_eq!(
            crowded_args(4, 2),
            ["--oversubscribe", "--bind-to", "core:overload-allowed"]
        );
        let h = Harness {
            _tmp: TempDir(std::env::temp_dir().join("volpex-bench-test-never-made")),
            c_bin: PathBuf::from("bench"),
            mpirun: PathBuf::from("mpirun"),
            vrun: PathBuf::from("volpexrun"),
            me: PathBuf::from("volpex-bench"),
        };
        let args = |ranks| -> Vec<String> {
            h.openmpi_command(Btl::Tcp, ranks, &["--csv".to_string()])
                .get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let fits = args(1);
        assert!(!fits.iter().any(|a| a == "--oversubscribe"), "{fits:?}");
        assert!(fits.ends_with(&["-n".into(), "1".into(), "bench".into(), "--csv".into()]));
        let crowded = args(cpus + 1);
        assert!(
            crowded.iter().any(|a| a == "--oversubscribe"),
            "{crowded:?}"
        );
        assert!(
            crowded.iter().any(|a| a == "core:overload-allowed"),
            "{crowded:?}"
        );
    }

    #[test]
    fn collectives_csv_keeps_its_first_columns_and_adds_a_pair_per_side() {
        assert_eq!(
            collectives_csv_header(&[OpenMpiBtl::Tcp]),
            "op,size_bytes,volpex_us,openmpi_us,ratio"
        );
        assert_eq!(
            collectives_csv_header(&[OpenMpiBtl::Tcp, OpenMpiBtl::Sm]),
            "op,size_bytes,volpex_us,openmpi_us,ratio,openmpi-sm_us,openmpi-sm_ratio"
        );
        assert_eq!(
            collectives_csv_header(&[OpenMpiBtl::Sm]),
            "op,size_bytes,volpex_us,openmpi-sm_us,ratio"
        );
    }

    #[test]
    fn parses_only_csv_rows() {
        let rows = parse("size_bytes,lat_us,mbps\n8,10.5,0.8\nnoise\n16,11,1.5\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[&8], (10.5, 0.8));
    }
}
