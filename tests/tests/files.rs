//! Files written by unmodified programs under replication (docs/FILES.md): a C program
//! (stdio and POSIX calls), a Fortran one (OPEN, WRITE, CLOSE through libgfortran) and a
//! Rust one (`std::fs`) write text, binary, appended, rewritten, renamed, cut and removed
//! files and read them back (`tests/c/files.c`, `tests/fortran/files.f90`,
//! `tests/src/bin/files.rs`). At `-r 1`, `-r 2` and `-r 3`, with the rank's writer or
//! another replica killed, stopped or sent SIGTERM before, during and just before the end
//! of the writing, and regenerated replicas replaying the program from its start, every
//! file is byte-identical to the failure-free run's, the directory holds nothing else,
//! every replica read back what it wrote (a failed check would end it with code 1), and
//! the fault landed before the replica finished. `VOLPEX_FILES_ROUNDS=N` runs every case
//! N times (the race CloverLeaf hit showed in 5 of 9 runs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use volpex_tests::abi::{Mount, TempDir, DEADLINE};
use volpex_tests::{bin, run, Run};

/// Steps each program writes, and the pause after each: about 1.4 s of writing.
const STEPS: &str = "70";
const WORK_MS: &str = "20";
/// Fault times: as the writing starts, in its middle, just before its end.
const EARLY: f64 = 0.15;
const MIDDLE: f64 = 0.7;
const LATE: f64 = 1.2;

/// A program under test.
struct Program {
    name: &'static str,
    exe: PathBuf,
    /// Its arguments for a directory.
    args: fn(&str) -> Vec<String>,
}

fn c_args(dir: &str) -> Vec<String> {
    vec![dir.into(), STEPS.into(), WORK_MS.into()]
}

fn rust_args(dir: &str) -> Vec<String> {
    ["--dir", dir, "--steps", STEPS, "--work-ms", WORK_MS]
        .map(String::from)
        .to_vec()
}

/// Builds `source` (under `tests/`) with `wrapper` into `dir`.
fn build(wrapper: &str, dir: &TempDir, source: &str, name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = dir.0.join(name);
    let st = Command::new(bin(wrapper))
        .current_dir(&dir.0)
        .arg("-O2")
        .arg(format!("-I{}", root.join("c").display()))
        .arg("-o")
        .arg(&out)
        .arg(root.join(source))
        .output()
        .expect("run the wrapper compiler");
    assert!(
        st.status.success(),
        "{wrapper} {source} failed:\n{}{}",
        String::from_utf8_lossy(&st.stdout),
        String::from_utf8_lossy(&st.stderr)
    );
    out
}

fn programs(build_dir: &TempDir) -> Vec<Program> {
    vec![
        Program {
            name: "C",
            exe: build("volpexcc", build_dir, "c/files.c", "files_c"),
            args: c_args,
        },
        Program {
            name: "Fortran",
            exe: build("volpexf90", build_dir, "fortran/files.f90", "files_f"),
            args: c_args,
        },
        Program {
            name: "Rust",
            exe: bin("files"),
            args: rust_args,
        },
    ]
}

/// Every file in `dir`, by name.
fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("read the test directory")
        .map(|e| {
            let e = e.expect("a directory entry");
            let name = e.file_name().to_string_lossy().into_owned();
            let bytes = std::fs::read(e.path()).expect("read a file the job wrote");
            (name, bytes)
        })
        .collect()
}

/// A directory with what the programs expect before they run: an existing file per
/// rank, which they append to.
fn fresh_dir() -> TempDir {
    let dir = TempDir::new("files");
    for rank in 0..2 {
        std::fs::write(
            dir.0.join(format!("append-{rank}.txt")),
            b"before the job\n",
        )
        .expect("make a file the program appends to");
    }
    dir
}

/// The program's `files:` lines, sorted.
fn results(r: &Run) -> Vec<String> {
    let mut v: Vec<String> = r
        .ok()
        .lines()
        .filter(|l| l.starts_with("files: "))
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// What a failure-free run at `-r 1` leaves: the directory's files and the results.
struct Reference {
    files: BTreeMap<String, Vec<u8>>,
    results: Vec<String>,
}

fn reference(p: &Program) -> Reference {
    let dir = fresh_dir();
    let r = run(
        &["-n", "2", "-r", "1"],
        &p.exe,
        &strs(&(p.args)(&dir.0.to_string_lossy())),
        DEADLINE,
    );
    r.assert_no_leftovers();
    let results = results(&r);
    assert_eq!(results.len(), 2, "{}: {}", p.name, r.stdout);
    Reference {
        files: contents(&dir.0),
        results,
    }
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Runs `p` with volpexrun's `args`; asserts that every file is the reference's, that
/// the results are, and that no replica failed its own checks.
fn same_as_reference(p: &Program, refr: &Reference, args: &[&str]) -> Run {
    let dir = fresh_dir();
    let r = run(
        args,
        &p.exe,
        &strs(&(p.args)(&dir.0.to_string_lossy())),
        DEADLINE,
    );
    r.assert_no_leftovers();
    assert_eq!(
        results(&r),
        refr.results,
        "{} {args:?}: results differ\n{}",
        p.name,
        r.stderr
    );
    let got = contents(&dir.0);
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        refr.files.keys().collect::<Vec<_>>(),
        "{} {args:?}: the directory differs\n{}",
        p.name,
        r.stderr
    );
    for (name, bytes) in &refr.files {
        assert!(
            got[name] == *bytes,
            "{} {args:?}: {name} differs from the failure-free run's ({} bytes, {} expected)\n{}",
            p.name,
            got[name].len(),
            bytes.len(),
            r.stderr
        );
    }
    // A replica whose program found a wrong byte exits with code 1 (the others may
    // have finished the job): none may have.
    let failed: Vec<String> = r
        .report
        .as_ref()
        .and_then(|j| j["processes"].as_array())
        .into_iter()
        .flatten()
        .filter(|p| {
            p["detail"]
                .as_str()
                .is_some_and(|d| d.contains("exited with code"))
        })
        .map(|p| format!("{}.{}: {}", p["rank"], p["replica"], p["detail"]))
        .collect();
    assert!(
        failed.is_empty(),
        "{} {args:?}: {failed:?}\n{}",
        p.name,
        r.stderr
    );
    r
}

/// Asserts that replica `rank.replica` did not finish: the fault landed while it ran.
fn landed(r: &Run, rank: u64, replica: u64, what: &str) {
    assert_ne!(
        r.state(rank, replica),
        "finished",
        "{what}: the fault came after {rank}.{replica} finished\n{}",
        r.stderr
    );
}

fn rounds() -> usize {
    std::env::var("VOLPEX_FILES_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// The faults, at `-r 2` and `-r 3`; the replica each must have hit.
fn faults() -> Vec<(Vec<String>, (u64, u64))> {
    let f = |r: u32, spec: Vec<String>, hit| {
        let mut a = vec!["-n".to_string(), "2".into(), "-r".into(), r.to_string()];
        for s in spec {
            a.push("--fault".into());
            a.push(s);
        }
        (a, hit)
    };
    let s = |x: &str| x.to_string();
    vec![
        // The writer (the replica furthest ahead: replica 0 of both ranks at first).
        f(2, vec![format!("0.0:kill@{EARLY}")], (0, 0)),
        f(2, vec![format!("0.0:kill@{MIDDLE}")], (0, 0)),
        f(2, vec![format!("1.0:kill@{LATE}")], (1, 0)),
        f(2, vec![format!("0.0:stop@{MIDDLE}")], (0, 0)),
        f(2, vec![format!("0.0:term@{MIDDLE}")], (0, 0)),
        // Another replica.
        f(2, vec![format!("1.1:kill@{MIDDLE}")], (1, 1)),
        f(2, vec![format!("0.1:term@{LATE}")], (0, 1)),
        // Two of three, one after the other, and one early.
        f(
            3,
            vec![format!("0.0:kill@{EARLY}"), format!("0.1:kill@{MIDDLE}")],
            (0, 1),
        ),
        f(
            3,
            vec![s("1.2:kill@0.4"), format!("1.0:kill@{LATE}")],
            (1, 0),
        ),
    ]
}

#[test]
fn files_come_out_as_the_failure_free_run_writes_them() {
    let build_dir = TempDir::new("files-build");
    for p in programs(&build_dir) {
        let refr = reference(&p);
        // One process per rank: the same bytes (the layer at -r 1).
        same_as_reference(&p, &refr, &["-n", "2", "-r", "1"]);
        same_as_reference(&p, &refr, &["-n", "2", "-r", "2"]);
        for _ in 0..rounds() {
            for (args, (rank, replica)) in faults() {
                let r = same_as_reference(&p, &refr, &strs(&args));
                landed(&r, rank, replica, &format!("{} {args:?}", p.name));
            }
        }
    }
}

/// The case CloverLeaf lost in 5 of 9 runs: the writer killed mid-run and its new
/// incarnation replaying the program from the start while its sibling writes on. Never
/// a truncated file, never bytes of another time.
#[test]
fn a_regenerated_replica_replaying_the_program_never_truncates_its_ranks_files() {
    let build_dir = TempDir::new("files-build");
    let p = programs(&build_dir)
        .into_iter()
        .next()
        .expect("the C program");
    let refr = reference(&p);
    for round in 0..5 * rounds() {
        let at = 0.3 + 0.2 * (round % 5) as f64;
        let args = [
            "-n",
            "2",
            "-r",
            "2",
            "--fault",
            &format!("0.0:kill@{at:.1}"),
        ];
        let r = same_as_reference(&p, &refr, &args);
        landed(&r, 0, 0, &format!("round {round}"));
        let replayed = r
            .report
            .as_ref()
            .and_then(|j| j["processes"].as_array())
            .into_iter()
            .flatten()
            .any(|x| x["rank"] == 0 && x["replica"] == 0 && x["incarnation"] == 1);
        assert!(replayed, "round {round}: no new incarnation\n{}", r.stderr);
    }
}

/// `VOLPEX_VERIFY_OUTPUT=1`: a replica that writes other bytes than its sibling (here
/// one line of the Rust program's log, same length) is caught at the file: the job
/// fails naming the rank, the file and the offset. Without it the writer's bytes are
/// written and the job ends well: the check is what catches silent corruption.
#[test]
fn replicas_that_write_different_bytes_are_caught_at_the_file() {
    let dir = fresh_dir();
    let d = dir.0.to_string_lossy().into_owned();
    let mut args = rust_args(&d);
    args.push("--diverge".into());
    let unchecked = run(
        &["-n", "2", "-r", "2"],
        &bin("files"),
        &strs(&args),
        DEADLINE,
    );
    unchecked.assert_no_leftovers();
    unchecked.ok();
    let dir = fresh_dir();
    let d = dir.0.to_string_lossy().into_owned();
    let mut args = rust_args(&d);
    args.push("--diverge".into());
    let r = run(
        &["-n", "2", "-r", "2", "-x", "VOLPEX_VERIFY_OUTPUT=1"],
        &bin("files"),
        &strs(&args),
        DEADLINE,
    );
    r.assert_no_leftovers();
    assert_eq!(r.code, Some(74), "{}\n{}", r.stdout, r.stderr);
    // Rank 0's tenth line starts after nine lines `rank 0 step S all 2S+1`.
    let offset: usize = (1..10)
        .map(|s| format!("rank 0 step {s} all {}\n", 2 * s + 1).len())
        .sum();
    let want = format!("log-0.txt at offset {offset}");
    assert!(
        r.stderr.contains("output verification failed: rank 0") && r.stderr.contains(&want),
        "no {want:?} in\n{}",
        r.stderr
    );
}

/// A full disk: every write the disk refused reaches the program as its call's error
/// (fclose and close say ENOSPC, MPIX_Output_commit MPI_ERR_NO_SPACE) in every replica,
/// no output is published short, and the job fails naming the file and the reason.
/// Then a read-only file system: the opens fail with EROFS and MPI_ERR_READ_ONLY.
#[test]
#[cfg_attr(
    not(feature = "root-tests"),
    ignore = "needs root: mounts a small tmpfs"
)]
fn a_full_or_read_only_disk_is_the_programs_error_and_fails_the_job() {
    let build_dir = TempDir::new("files-build");
    let exe = build("volpexcc", &build_dir, "c/full.c", "full");
    for r in ["1", "2"] {
        let m = Mount::tmpfs("size=64k");
        let dir = m.0 .0.to_string_lossy().into_owned();
        let run = run(&["-n", "2", "-r", r], &exe, &[&dir, "102400"], DEADLINE);
        run.assert_no_leftovers();
        assert_eq!(run.code, Some(74), "-r {r}: {}\n{}", run.stdout, run.stderr);
        for rank in 0..2 {
            for line in [
                format!("rank {rank} fclose: No space left on device; commit: class 36"),
                format!("rank {rank} close: No space left on device"),
            ] {
                assert!(
                    run.stdout.lines().any(|l| l == line),
                    "-r {r}: no {line:?} in\n{}",
                    run.stdout
                );
            }
        }
        assert!(
            run.stderr.contains("error: rank ")
                && run.stderr.contains(".out-")
                && run.stderr.contains("ENOSPC (No space left on device"),
            "-r {r}: {}",
            run.stderr
        );
        // Nothing published, no temporary left: only what plain writes made.
        assert_eq!(m.names(), ["plain-0.dat", "plain-1.dat"], "-r {r}");

        m.remount("ro");
        let run = read_only_run(&exe, r, &dir);
        for rank in 0..2 {
            for line in [
                format!("rank {rank} output open: class 40"),
                format!("rank {rank} open: Read-only file system"),
            ] {
                assert!(
                    run.stdout.lines().any(|l| l == line),
                    "-r {r}: no {line:?} in\n{}",
                    run.stdout
                );
            }
        }
    }
}

/// The read-only run: the program handles its errors and ends well.
fn read_only_run(exe: &Path, r: &str, dir: &str) -> Run {
    let run = run(&["-n", "2", "-r", r], exe, &[dir, "4096"], DEADLINE);
    run.assert_no_leftovers();
    run.ok();
    run
}

/// Runs `exe` over the test hosts of `net` (two slots each), from their head.
#[cfg(feature = "root-tests")]
fn run_on_hosts(
    net: &volpex_tests::testhosts::TestNet,
    extra: &[&str],
    exe: &Path,
    args: &[&str],
) -> Run {
    let lines: Vec<String> = (0..net.len())
        .map(|i| format!("{} slots=2", net.name(i)))
        .collect();
    let hf = net.hostfile("hosts.txt", &lines);
    let ssh = net.ssh_cmd();
    let hf = hf.to_string_lossy().into_owned();
    let mut la = vec!["--ssh-cmd", ssh.as_str(), "--hosts", hf.as_str()];
    la.extend_from_slice(extra);
    volpex_tests::spawn_with(&["ip", "netns", "exec", &net.head()], &[], &la, exe, args)
        .wait(DEADLINE)
}

/// On several hosts sharing the file system (the test hosts see the machine's, as
/// hosts see an NFS export or a bind mount): the rank's writer on one host, its sibling
/// on another; the writer killed mid-run: every file is the failure-free run's.
#[test]
#[cfg_attr(
    not(feature = "root-tests"),
    ignore = "needs root: test hosts in network namespaces"
)]
fn files_of_a_job_on_several_hosts_sharing_the_file_system() {
    #[cfg(feature = "root-tests")]
    {
        let build_dir = TempDir::new("files-build");
        let p = programs(&build_dir)
            .into_iter()
            .next()
            .expect("the C program");
        let refr = reference(&p);
        let net = volpex_tests::testhosts::TestNet::new(2);
        let dir = fresh_dir();
        let d = dir.0.to_string_lossy().into_owned();
        let r = run_on_hosts(
            &net,
            &[
                "-n",
                "2",
                "-r",
                "2",
                "--fault",
                &format!("0.0:kill@{MIDDLE}"),
            ],
            &p.exe,
            &strs(&(p.args)(&d)),
        );
        r.assert_no_leftovers();
        assert_eq!(results(&r), refr.results, "{}\n{}", r.stdout, r.stderr);
        assert!(
            contents(&dir.0) == refr.files,
            "the files differ\n{}",
            r.stderr
        );
        landed(&r, 0, 0, "on hosts");
    }
}

/// A host that does not see the others' file system (the test directory is a tmpfs of
/// its own there): the job fails, naming the file and why, instead of ending well with
/// files that are not where the program wrote them.
///
/// Ignored: the check runs when a replica on the other host finishes its program, and
/// the job ends as soon as every rank has a finished replica, so when the replicas of
/// the host with the writers finish first (1 run in 3 here) the job ends well before
/// the check. The fix is a check at the job's end through the hosts' agents (the
/// writers' recorded paths, stat'ed on every host that runs a replica); until then this
/// case is detected only when the other host's replicas finish first.
#[test]
#[ignore = "flaky until the end-of-job check through the agents: see the doc comment"]
fn a_host_that_does_not_share_the_file_system_fails_the_job() {
    #[cfg(feature = "root-tests")]
    {
        let build_dir = TempDir::new("files-build");
        let exe = build("volpexcc", &build_dir, "c/full.c", "full");
        let mut net = volpex_tests::testhosts::TestNet::new(2);
        let dir = TempDir::new("files-hidden");
        net.hide(1, &dir.0);
        let d = dir.0.to_string_lossy().into_owned();
        let r = run_on_hosts(&net, &["-n", "2", "-r", "2"], &exe, &[&d, "8192"]);
        r.assert_no_leftovers();
        assert_eq!(r.code, Some(74), "{}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("as its writer wrote it")
                && r.stderr.contains("must be on a file system they share"),
            "{}",
            r.stderr
        );
    }
}
