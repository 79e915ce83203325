//! Helpers for integration tests that run real Volpex jobs: real processes, real sockets
//! on loopback or between test hosts (`testhosts`: network namespaces with sshd and
//! Slurm), real signals.
//!
//! Every job is started through `volpexrun`; a job that outlives its deadline gets
//! SIGTERM (volpexrun then ends every process it started, by pid) and, if that does not
//! end it, SIGKILL. Temporary files are removed when their guard drops, also on failure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub mod abi;
pub mod metadata;
pub mod prerequisites;
pub mod testhosts;

pub use prerequisites::{has_command, npb_verified, official_npb, prerequisite};

/// Directory of the build profile the tests were built with (`target/debug`, ...).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Builds every binary and example of the workspace once per test process, so the
/// tests run the code they were compiled with.
pub fn ensure_built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(&root)
            .args(["build", "--workspace", "--lib", "--bins", "--examples"]);
        if profile_dir().file_name().and_then(|s| s.to_str()) == Some("release") {
            cmd.arg("--release");
        }
        let st = cmd.status().expect("run cargo build");
        assert!(st.success(), "cargo build of the workspace binaries failed");
    });
}

/// Path of `volpexrun`.
pub fn volpexrun() -> PathBuf {
    ensure_built();
    profile_dir().join("volpexrun")
}

/// Path of a `volpex-core` example.
pub fn example(name: &str) -> PathBuf {
    ensure_built();
    profile_dir().join("examples").join(name)
}

/// Path of a workspace binary (test programs of this crate, volpex-bench, npb).
pub fn bin(name: &str) -> PathBuf {
    ensure_built();
    profile_dir().join(name)
}

/// A file path that is removed when dropped.
pub struct TempPath(pub PathBuf);

impl TempPath {
    /// A fresh unique path in the temp dir.
    pub fn new(stem: &str) -> TempPath {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        TempPath(std::env::temp_dir().join(format!(
            "volpex-test-{}-{}-{stem}",
            std::process::id(),
            n
        )))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What a finished job left behind.
#[derive(Debug)]
pub struct Run {
    /// volpexrun's exit code; `None` if it had to be killed at the deadline.
    pub code: Option<i32>,
    /// volpexrun's stdout (the program's deduplicated output).
    pub stdout: String,
    /// volpexrun's stderr (program stderr, summary, errors).
    pub stderr: String,
    /// The `--report` JSON.
    pub report: Option<serde_json::Value>,
    /// Wall time.
    pub elapsed: Duration,
}

impl Run {
    /// volpexrun's one `volpexrun: error` line (panics naming the run's stderr if there
    /// is not exactly one).
    pub fn the_error(&self) -> &str {
        let errors: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.contains("volpexrun: error"))
            .collect();
        assert_eq!(errors.len(), 1, "{}", self.stderr);
        errors[0]
    }

    /// The `--report`'s events of `kind`.
    pub fn events(&self, kind: &str) -> Vec<&serde_json::Value> {
        self.report
            .as_ref()
            .and_then(|r| r["events"].as_array())
            .map(|es| es.iter().filter(|e| e["kind"] == kind).collect())
            .unwrap_or_default()
    }

    /// The `--report`'s processes (every incarnation of every replica).
    pub fn processes(&self) -> Vec<&serde_json::Value> {
        self.report
            .as_ref()
            .and_then(|r| r["processes"].as_array())
            .map(|ps| ps.iter().collect())
            .unwrap_or_default()
    }

    /// The `regen` program's lines (`regen: rank R ...`), each rank's in the order it
    /// printed them, ranks in order (they interleave at will), and its result line.
    pub fn regen_lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .ok()
            .lines()
            .filter(|l| l.starts_with("regen: "))
            .map(str::to_string)
            .collect();
        lines.sort_by_key(|l| {
            l.split_whitespace()
                .nth(2)
                .and_then(|r| r.parse::<u32>().ok())
                .unwrap_or(u32::MAX)
        });
        lines
    }

    /// Asserts success and returns stdout.
    pub fn ok(&self) -> &str {
        assert_eq!(
            self.code,
            Some(0),
            "job failed\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        &self.stdout
    }

    /// The total of counter `name` (`sends`, `unlogged`, ...) over every incarnation of
    /// every replica in the report.
    pub fn counter(&self, name: &str) -> u64 {
        self.report
            .as_ref()
            .and_then(|r| r["processes"].as_array())
            .map(|ps| ps.iter().filter_map(|p| p["stats"][name].as_u64()).sum())
            .unwrap_or(0)
    }

    /// State of replica `rank.replica` in the report.
    pub fn state(&self, rank: u64, replica: u64) -> String {
        self.report
            .as_ref()
            .and_then(|r| r["processes"].as_array())
            .and_then(|ps| {
                ps.iter()
                    .find(|p| p["rank"] == rank && p["replica"] == replica)
                    .and_then(|p| p["state"].as_str())
            })
            .unwrap_or("?")
            .to_string()
    }

    /// Whether the report records a SIGKILL of incarnation 0 of replica `rank.replica`
    /// while the job ran (a timed `--fault R.I:kill@T` lands only then).
    pub fn killed(&self, rank: u64, replica: u64) -> bool {
        self.report
            .as_ref()
            .and_then(|r| r["events"].as_array())
            .is_some_and(|es| {
                es.iter().any(|e| {
                    e["kind"] == "killed"
                        && e["rank"] == rank
                        && e["replica"] == replica
                        && e["incarnation"] == 0
                })
            })
    }

    /// Asserts that no process the job started is still running.
    pub fn assert_no_leftovers(&self) {
        let Some(ps) = self.report.as_ref().and_then(|r| r["processes"].as_array()) else {
            return;
        };
        for p in ps {
            let pid = p["pid"].as_u64().unwrap_or(0);
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat.split_whitespace().nth(2) == Some("Z");
            assert!(
                cmdline.is_empty() || zombie,
                "process {pid} ({}) is still running",
                String::from_utf8_lossy(&cmdline)
            );
        }
    }
}

/// A running job.
pub struct LiveJob {
    child: Child,
    start: Instant,
    report: TempPath,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
    out_lines: Vec<String>,
    err_lines: Vec<String>,
}

/// Starts `volpexrun LAUNCHER_ARGS --report FILE PROGRAM PROG_ARGS`.
pub fn spawn(launcher_args: &[&str], program: &Path, prog_args: &[&str]) -> LiveJob {
    spawn_with(&[], &[], launcher_args, program, prog_args)
}

/// `spawn`, with volpexrun run through `wrapper` (e.g. `ip netns exec NS`, which execs it
/// so the pid stays volpexrun's) and `env` added to its environment.
pub fn spawn_with(
    wrapper: &[&str],
    env: &[(&str, &str)],
    launcher_args: &[&str],
    program: &Path,
    prog_args: &[&str],
) -> LiveJob {
    let report = TempPath::new("report.json");
    let mut cmd = match wrapper.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(volpexrun());
            c
        }
        None => Command::new(volpexrun()),
    };
    cmd.envs(env.iter().copied())
        .args(launcher_args)
        .arg("--report")
        .arg(&report.0)
        .arg(program)
        .args(prog_args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start volpexrun");
    let stdout = lines(child.stdout.take().expect("stdout"));
    let stderr = lines(child.stderr.take().expect("stderr"));
    LiveJob {
        child,
        start: Instant::now(),
        report,
        stdout,
        stderr,
        out_lines: Vec::new(),
        err_lines: Vec::new(),
    }
}

fn lines<R: std::io::Read + Send + 'static>(r: R) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(r).lines() {
            let Ok(l) = l else { return };
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    rx
}

impl LiveJob {
    /// volpexrun's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The pid of incarnation `inc` of replica `rank.replica` of this job (a child of its
    /// volpexrun), if it runs.
    pub fn pid_of(&self, rank: u32, replica: u32, inc: u32) -> Option<i32> {
        let parent = self.pid().to_string();
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // pid (comm) state ppid ...: comm may hold spaces; what follows the last ')'
            // does not.
            let after = stat.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
            let mut fields = after.split_whitespace();
            let (state, ppid) = (fields.next(), fields.next());
            if ppid != Some(parent.as_str()) || state == Some("Z") {
                continue;
            }
            if is_replica(pid, rank, replica, inc) {
                return Some(pid);
            }
        }
        None
    }

    /// volpexrun's standard error read so far (by `wait_stderr`), for a failure's message.
    pub fn stderr_so_far(&self) -> String {
        self.err_lines.join("\n")
    }

    /// Waits until a stderr line satisfies `f` (returns it) or the deadline passes.
    pub fn wait_stderr(&mut self, deadline: Duration, f: impl Fn(&str) -> bool) -> Option<String> {
        let end = Instant::now() + deadline;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(l) => {
                    let hit = f(&l);
                    self.err_lines.push(l.clone());
                    if hit {
                        return Some(l);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Waits for the job to end (ending it at the deadline) and collects its results.
    pub fn wait(mut self, deadline: Duration) -> Run {
        let end = self.start + deadline;
        let mut code = None;
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => {
                    code = st.code();
                    break;
                }
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    self.terminate();
                    break;
                }
            }
        }
        let elapsed = self.start.elapsed();
        while let Ok(l) = self.stdout.recv_timeout(Duration::from_secs(2)) {
            self.out_lines.push(l);
        }
        while let Ok(l) = self.stderr.recv_timeout(Duration::from_secs(2)) {
            self.err_lines.push(l);
        }
        let report = std::fs::read_to_string(&self.report.0)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok());
        Run {
            code,
            stdout: self.out_lines.join("\n"),
            stderr: self.err_lines.join("\n"),
            report,
            elapsed,
        }
    }

    fn terminate(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LiveJob {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.terminate();
        }
    }
}

/// Runs a job to completion (or the deadline).
pub fn run(launcher_args: &[&str], program: &Path, prog_args: &[&str], deadline: Duration) -> Run {
    spawn(launcher_args, program, prog_args).wait(deadline)
}

/// The program output lines that start with `prefix`.
pub fn result_lines<'a>(stdout: &'a str, prefix: &str) -> Vec<&'a str> {
    stdout.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// For test programs that write a file of each replica's own (the CPUs it may use, the
/// choices it followed), which the file layer refuses (replicas must make the same file
/// operations, docs/FILES.md): turns the layer off in this process. Call it first in
/// `main`, before `volpex::initialize()` and before any thread starts.
pub fn without_file_layer() {
    std::env::set_var("VOLPEX_FILES", "0");
}

/// For the test programs: prints `<program>: FAILED <what>` and exits 1 unless `ok`.
pub fn check(program: &str, ok: bool, what: &str) {
    if !ok {
        println!("{program}: FAILED {what}");
        std::process::exit(1);
    }
}

/// For the test programs: the CPUs each thread of this process may run on
/// (`Cpus_allowed_list` of every task in /proc/self/task), one list per thread.
pub fn thread_cpu_lists() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut lines = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")? {
        let status = std::fs::read_to_string(task?.path().join("status"))?;
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .ok_or("no Cpus_allowed_list")?;
        lines.push(list.trim().to_string());
    }
    Ok(lines)
}

/// The CPUs the calling thread may run on (as volpexrun sees its own).
pub fn allowed_cpus() -> Result<Vec<usize>, String> {
    use nix::sched::{sched_getaffinity, CpuSet};
    let set = sched_getaffinity(nix::unistd::Pid::from_raw(0)).map_err(|e| e.to_string())?;
    Ok((0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect())
}

/// True if process `pid` is incarnation `inc` of replica `rank.replica` (by its
/// environment), of whichever job.
pub fn is_replica(pid: i32, rank: u32, replica: u32, inc: u32) -> bool {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    let vars: Vec<String> = environ
        .split(|&b| b == 0)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    let incarnation = vars
        .iter()
        .find_map(|v| v.strip_prefix("VOLPEX_INCARNATION="))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0u32);
    let want = [
        format!("VOLPEX_RANK={rank}"),
        format!("VOLPEX_REPLICA={replica}"),
    ];
    want.iter().all(|w| vars.contains(w)) && incarnation == inc
}

/// A process held in a CPU cgroup that lets it run 1 ms per second: runnable (state R),
/// starved, never stopped, as on a machine whose every CPU is taken. Dropped, it lets the
/// process go and removes the cgroup.
pub struct Throttle {
    dir: std::path::PathBuf,
    parent: std::path::PathBuf,
    pid: i32,
}

impl Throttle {
    /// Throttles `pid` (cgroup v1 `cpu` controller, else v2 `cpu.max`); `None` where
    /// neither can be written (not root, no cpu controller).
    pub fn new(pid: i32) -> Option<Throttle> {
        let name = format!("volpex-starve-{}-{pid}", std::process::id());
        let v1 = std::path::Path::new("/sys/fs/cgroup/cpu");
        let v2 = std::path::Path::new("/sys/fs/cgroup");
        let (parent, limits): (&std::path::Path, &[(&str, &str)]) =
            if v1.join("cpu.cfs_quota_us").exists() {
                (
                    v1,
                    &[
                        ("cpu.cfs_period_us", "1000000"),
                        ("cpu.cfs_quota_us", "1000"),
                    ],
                )
            } else {
                (v2, &[("cpu.max", "1000 1000000")])
            };
        let dir = parent.join(name);
        std::fs::create_dir(&dir).ok()?;
        let t = Throttle {
            dir,
            parent: parent.into(),
            pid,
        };
        for (file, value) in limits {
            std::fs::write(t.dir.join(file), value).ok()?;
        }
        std::fs::write(t.dir.join("cgroup.procs"), pid.to_string()).ok()?;
        Some(t)
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::write(self.parent.join("cgroup.procs"), self.pid.to_string());
        // The cgroup empties once the process has moved out.
        let end = Instant::now() + Duration::from_secs(10);
        while std::fs::remove_dir(&self.dir).is_err() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
