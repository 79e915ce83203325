//! What the C and Fortran interface tests (`tests/c_abi.rs`, `tests/fortran_abi.rs`,
//! `tests/mpi_*.rs`) share: a temporary build directory, compiling a test program of
//! `tests/c/` or `tests/fortran/` with our wrapper compilers, running it alone or as a
//! job, and the fault scenarios every language must pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::{run, Run, TempPath};

/// How long one job of these tests may take.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// A temporary directory, removed when dropped (also when a test fails).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(stem: &str) -> TempDir {
        let p = TempPath::new(stem);
        std::fs::create_dir_all(&p.0).expect("create temp dir");
        // The TempPath would remove a file; the directory is ours to remove.
        let dir = p.0.clone();
        std::mem::forget(p);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A tmpfs mounted (with `options`, such as `size=64k`) on a fresh directory, unmounted
/// and removed when dropped (also when the test fails). Needs root.
pub struct Mount(pub TempDir);

impl Mount {
    pub fn tmpfs(options: &str) -> Mount {
        let dir = TempDir::new("files-mount");
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&dir.0)
            .status()
            .expect("run mount");
        assert!(
            st.success(),
            "mount -t tmpfs -o {options} failed (root is needed)"
        );
        Mount(dir)
    }

    /// Mounts it again with `options` (`ro`).
    pub fn remount(&self, options: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0 .0)
            .status()
            .expect("run mount");
        assert!(st.success(), "mount -o remount,{options} failed");
    }

    /// The names in it, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.0 .0)
            .expect("read the mount")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        v.sort();
        v
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0 .0).status();
    }
}

/// A copy of the official NPB sources `npb` in `dir`, ready for `make` with our wrapper
/// compilers: `MPIFC = volpexf90` and `MPICC = volpexcc` in `config/make.def` (with the
/// `-fallow-invalid-boz` the suite's randi8.f needs with gfortran 10 or later), and
/// `bin/`.
pub fn official_npb_copy(npb: &Path, dir: &TempDir) {
    let copy = Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", npb.display()))
        .arg(&dir.0)
        .status()
        .expect("cp");
    assert!(copy.success());
    let template = std::fs::read_to_string(dir.0.join("config/make.def.template"))
        .expect("read make.def.template");
    let def: String = template
        .lines()
        .map(|l| {
            if l.starts_with("MPIFC") {
                format!("MPIFC = {}", crate::bin("volpexf90").display())
            } else if l.starts_with("MPICC") {
                format!("MPICC = {}", crate::bin("volpexcc").display())
            } else if l.starts_with("FFLAGS") {
                "FFLAGS = -O3 -fallow-invalid-boz".to_string()
            } else if l.starts_with("FMPI_")
                || l.starts_with("CMPI_LIB")
                || l.starts_with("CMPI_INC")
            {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.0.join("config/make.def"), def).expect("write make.def");
    std::fs::create_dir_all(dir.0.join("bin")).expect("mkdir bin");
}

/// Compiles `tests/c/NAME.c` with volpexcc (`-O2 -Wall -Werror`) into `dir`.
pub fn compile_c(dir: &TempDir, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("c")
        .join(format!("{name}.c"));
    compile_with("volpexcc", dir, &src, &["-O2", "-Wall", "-Werror"])
}

/// Compiles `tests/fortran/FILE` (`.f90` or `.f`) with `wrapper` (volpexf90, volpexf77)
/// into `dir`, named as the file without its extension.
pub fn compile_fortran(wrapper: &str, dir: &TempDir, file: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fortran")
        .join(file);
    compile_with(wrapper, dir, &src, &["-O2", "-Wall"])
}

fn compile_with(wrapper: &str, dir: &TempDir, src: &Path, flags: &[&str]) -> PathBuf {
    let name = src.file_stem().expect("a source file name");
    let out = dir.0.join(name);
    let st = Command::new(crate::bin(wrapper))
        .current_dir(&dir.0)
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(src)
        .output()
        .expect("run the wrapper compiler");
    assert!(
        st.status.success(),
        "{wrapper} {} failed:\n{}{}",
        src.display(),
        String::from_utf8_lossy(&st.stdout),
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

/// Runs `program` with volpexrun's `args`; asserts it succeeded and returns stdout.
pub fn job(args: &[&str], program: &Path, prog_args: &[&str]) -> String {
    let r = run(args, program, prog_args, DEADLINE);
    r.assert_no_leftovers();
    r.ok().to_string()
}

/// Runs `program` alone, as `./a.out`.
pub fn singleton(program: &Path, args: &[&str]) -> Output {
    let child = Command::new(program)
        .args(args)
        .env_remove("VOLPEX_RANK")
        .env_remove("VOLPEX_LAUNCHER")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the program alone");
    // A program that hangs is ended by its pid at the deadline, and the test fails.
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(out) => out.expect("wait for the program"),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!(
                "{} {args:?} alone did not end within {DEADLINE:?}",
                program.display()
            );
        }
    }
}

/// The first line of `stdout` that starts with `prefix`.
pub fn first_line(stdout: &str, prefix: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{stdout}"))
        .to_string()
}

/// A replica killed (SIGKILL) or stopped (SIGSTOP, never continued) mid-run changes
/// nothing: `exe` (which prints a line starting with `name`) gives the failure-free
/// run's line at `-n 3 -r 2` with 1.0 killed, 0.1 killed or 2.0 stopped, and the fault
/// landed before the replica finished. Reference: VolpexMPI section 3.
pub fn faults_change_nothing(exe: &Path, name: &str, args: &[&str]) {
    let reference = first_line(&job(&["-n", "3", "-r", "1"], exe, args), name);
    for fault in ["1.0:kill@0.2", "0.1:kill@0.3", "2.0:stop@0.2"] {
        let r = run(
            &["-n", "3", "-r", "2", "--fault", fault],
            exe,
            args,
            DEADLINE,
        );
        r.assert_no_leftovers();
        assert_eq!(
            first_line(r.ok(), name),
            reference,
            "{name} with {fault}\n{}",
            r.stderr
        );
        let (rank, replica) = (fault.as_bytes()[0] - b'0', fault.as_bytes()[2] - b'0');
        assert_ne!(
            r.state(rank.into(), replica.into()),
            "finished",
            "{name}: {fault} landed after the replica finished\n{}",
            r.stderr
        );
    }
}

/// The MPIX_ checkpoint scenario (`tests/c/checkpoint.c`, `tests/fortran/checkpoint.f90`):
/// 150 iterations checkpointed every one, at `-n 3 -r 2` with replica 1.0 killed, then
/// 0.1; each new incarnation must be restored from its sibling's snapshot (the report's
/// `from`), each progress line must appear once and in order, and the result must be
/// the failure-free run's. Returns the faulty run for checks of its own.
pub fn checkpoint_survives_two_losses(exe: &Path) -> Run {
    let args = ["150", "20"];
    let reference = first_line(&job(&["-n", "3", "-r", "1"], exe, &args), "checkpoint:");
    let faults = ["--fault", "1.0:kill@1", "--fault", "0.1:kill@2"];
    let la: Vec<&str> = ["-n", "3", "-r", "2"].into_iter().chain(faults).collect();
    let r = run(&la, exe, &args, DEADLINE);
    r.assert_no_leftovers();
    let out = r.ok();
    assert_eq!(first_line(out, "checkpoint:"), reference, "{}", r.stderr);
    let printed: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("iteration "))
        .collect();
    let expect: Vec<String> = (1..=15).map(|i| format!("iteration {}", i * 10)).collect();
    assert_eq!(printed, expect, "each line once, in order\n{out}");
    let procs = r.processes();
    for (rank, replica) in [(1, 0), (0, 1)] {
        let from: Vec<&str> = procs
            .iter()
            .filter(|p| p["rank"] == rank && p["replica"] == replica && p["incarnation"] == 1)
            .filter_map(|p| p["from"].as_str())
            .collect();
        assert!(
            from.len() == 1 && from[0].starts_with("snapshot "),
            "{rank}.{replica}: {from:?}\n{}",
            r.stderr
        );
    }
    r
}

/// The MPIX_ output scenario (`tests/c/output.c`, `tests/fortran/output.f90`): at `-n 2
/// -r 2` without regeneration, replica 0.1 and then 1.0 killed while every replica writes
/// its rank's file, line by line; each path must hold exactly one complete copy (every
/// line, once) and the directory nothing else: no temporary of a dead replica.
pub fn output_survives_lost_replicas(exe: &Path) {
    let dir = TempDir::new("output");
    let d = dir.0.to_string_lossy().into_owned();
    let (lines, work_ms) = (40, "20");
    let la = [
        "-n",
        "2",
        "-r",
        "2",
        "--regenerate",
        "never",
        "--fault",
        "0.1:kill@0.3",
        "--fault",
        "1.0:kill@0.4",
    ];
    let r = run(&la, exe, &[&d, &lines.to_string(), work_ms], DEADLINE);
    r.assert_no_leftovers();
    first_line(r.ok(), "output: ok size 2");
    for (rank, replica) in [(0, 1), (1, 0)] {
        assert_ne!(
            r.state(rank, replica),
            "finished",
            "{rank}.{replica}: the kill landed after it finished\n{}",
            r.stderr
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir.0)
        .expect("read the output directory")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert_eq!(names, ["out-0.txt", "out-1.txt"], "{}", r.stderr);
    for rank in 0..2 {
        let text =
            std::fs::read_to_string(dir.0.join(format!("out-{rank}.txt"))).expect("read an output");
        let expect: String = (0..lines)
            .map(|i| format!("rank {rank} line {i} sum {}\n", 2 * i + 1))
            .collect();
        assert_eq!(text, expect, "out-{rank}.txt");
    }
}
