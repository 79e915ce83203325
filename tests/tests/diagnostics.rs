//! What volpexrun says when things go wrong must be true and must name the cause: the
//! exit codes of command-line errors, `--report`, `--wdir` and a program that is a
//! directory checked before anything starts, a program that exits without MPI_Finalize
//! or with one of the runtime's own exit codes,
//! a preempted replica that was not replaced, the order of the live lines, and volpexrun
//! itself stopped. Real processes, no timed assertions.
//! Reference: issue 42 item 3; docs/VOLPEXRUN.md (exit codes, `--report`, output).

use std::process::Command;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use volpex_tests::abi::{compile_c, TempDir};
use volpex_tests::{bin, example, run, spawn, volpexrun, TempPath};

const DEADLINE: Duration = Duration::from_secs(120);
/// At least 3 s of run: faults at 1 s land while it runs.
const RING: &[&str] = &["--rounds", "1500", "--work-ms", "2"];

/// `volpexrun ARGS`: exit code and stderr.
fn volpexrun_with(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(volpexrun())
        .args(args)
        .output()
        .expect("run volpexrun");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn command_line_errors_exit_2_with_one_readable_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-n", "2", "--fault", "5.0:kill@1", "true"],
            "--fault names replica 5.0",
        ),
        (&["-n", "2", "--stdin", "7", "true"], "--stdin 7"),
        (&["-n", "2", "-x", "", "true"], "empty variable name"),
        (&["-n", "2", "--host", "", "true"], "empty host name"),
        (
            &["-n", "2", "--heartbeat-timeout", "0.1", "true"],
            "must be longer than --heartbeat-interval",
        ),
        (
            &["-n", "2", "--heartbeat-timeout", "1e-300", "true"],
            "\"1e-300\" is not a number of seconds",
        ),
    ];
    for (args, want) in cases {
        let (code, err) = volpexrun_with(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: expected {want:?} in\n{err}");
        assert!(
            err.lines().all(|l| l.len() < 200),
            "{args:?}: no endless line\n{err}"
        );
    }
}

#[test]
fn a_bad_wdir_or_a_directory_as_the_program_is_named_before_anything_starts() {
    let missing = TempPath::new("no-such-dir");
    let m = missing.0.to_string_lossy().into_owned();
    let (code, err) = volpexrun_with(&["-n", "2", "--wdir", &m, "true"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(&format!("--wdir {m}: No such file")), "{err}");
    let dir = TempDir::new("a-directory");
    let d = dir.0.to_string_lossy().into_owned();
    let (code, err) = volpexrun_with(&["-n", "1", &d]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot start {d}: it is a directory")),
        "{err}"
    );
}

#[test]
fn a_report_that_cannot_be_written_is_refused_before_the_job_or_fails_it_after() {
    let dir = TempDir::new("report");
    let marker = dir.0.join("ran");
    let m = marker.to_string_lossy().into_owned();
    let d = dir.0.to_string_lossy().into_owned();
    let nowhere = format!("{d}/missing/report.json");
    // Found out before the job: the program (`touch MARKER`) never runs.
    for (report, says) in [
        (nowhere.as_str(), "No such file or directory"),
        (d.as_str(), "Is a directory"),
    ] {
        let (code, err) = volpexrun_with(&["-n", "1", "--report", report, "touch", &m]);
        assert_eq!(code, Some(1), "{report}: {err}");
        assert!(
            err.contains(&format!(
                "--report {report}: cannot write the report there: {says}"
            )),
            "{report}: {err}"
        );
        assert!(!marker.exists(), "{report}: the job ran");
    }
    // A device that takes no bytes is found out at the end: the job fails.
    let (code, err) = volpexrun_with(&["-n", "1", "--report", "/dev/full", "touch", &m]);
    assert!(marker.exists(), "the job ran: {err}");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("error: --report /dev/full: cannot write the report: No space left"),
        "{err}"
    );
}

/// A C program that returns from main without MPI_Finalize: the error names
/// MPI_Finalize, and every rank's result line is printed (before, the lines that came
/// after the first exit failed the job were dropped).
#[test]
fn a_c_program_without_mpi_finalize_is_told_so_and_keeps_its_output() {
    let dir = TempDir::new("nofinalize");
    let exe = compile_c(&dir, "misbehave");
    for r in ["1", "2"] {
        let run = run(&["-n", "4", "-r", r], &exe, &["nofinalize"], DEADLINE);
        run.assert_no_leftovers();
        assert_eq!(run.code, Some(70), "-r {r}\n{}", run.stderr);
        let error = run.the_error();
        assert!(
            error.contains("exited with code 0 without calling MPI_Finalize"),
            "-r {r}: {error}"
        );
        let mut lines: Vec<&str> = run.stdout.lines().collect();
        lines.sort();
        let expect: Vec<String> = (0..4)
            .map(|rank| format!("misbehave: rank {rank} of 4 sum 6"))
            .collect();
        assert_eq!(lines, expect, "-r {r}\n{}", run.stderr);
    }
}

/// A program that exits by itself with 75, 76 or 77, the codes the runtime also ends a
/// replica with (retired, orphaned, drained): under mpirun the job ends with that code,
/// and so here. Before, volpexrun took them for the runtime's, called the rank retired
/// or drained, started replacements and ended the job with 70.
#[test]
fn a_programs_own_exit_code_is_not_taken_for_the_runtimes() {
    let dir = TempDir::new("ownexit");
    let exe = compile_c(&dir, "misbehave");
    for code in [75, 76, 77] {
        let mode = format!("exit{code}");
        for r in ["1", "2"] {
            let run = run(&["-n", "2", "-r", r], &exe, &[&mode, "100", "2"], DEADLINE);
            run.assert_no_leftovers();
            assert_eq!(run.code, Some(code), "{mode} -r {r}\n{}", run.stderr);
            let error = run.the_error();
            assert!(
                error.contains(&format!("exited with code {code}")),
                "{mode} -r {r}: {error}\n{}",
                run.stderr
            );
            // volpexrun's own lines (the other rank's replicas, ended with the job, may
            // say they drain on the SIGTERM that ends them). The sibling that saw the
            // first exit's connections close asks for a fence: the exit decides, nothing
            // is ended or started for it.
            let said: Vec<&str> = run
                .stderr
                .lines()
                .filter(|l| l.starts_with("volpexrun"))
                .collect();
            for wrong in [
                "retired",
                "drained",
                "heartbeat",
                "unresponsive",
                "starting incarnation",
            ] {
                assert!(
                    !said.iter().any(|l| l.contains(wrong)),
                    "{mode} -r {r}: says {wrong:?}\n{}",
                    run.stderr
                );
            }
        }
    }
}

/// A replica preempted at -r 1 whose program never checkpoints cannot hand over: its
/// rank is lost, said in words (not `Drained`), and the report does not claim it was
/// replaced.
#[test]
fn a_preempted_replica_that_was_not_replaced_is_not_called_replaced() {
    let run = run(
        &[
            "-n",
            "2",
            "-r",
            "1",
            "--drain-grace",
            "1",
            "--fault",
            "1.0:term@1",
        ],
        &example("ring"),
        RING,
        DEADLINE,
    );
    run.assert_no_leftovers();
    assert_eq!(run.code, Some(70), "{}", run.stderr);
    let error = run.the_error();
    assert!(
        error.contains("rank 1 lost: its only replica failed (1.0: ended after a preemption notice (SIGTERM), and its drain grace ran out before it could be replaced)"),
        "{error}"
    );
    assert!(!run.stderr.contains("Drained"), "{}", run.stderr);
    let detail = run
        .report
        .as_ref()
        .and_then(|r| r["processes"].as_array())
        .and_then(|ps| ps.iter().find(|p| p["rank"] == 1))
        .map(|p| p["detail"].to_string())
        .unwrap_or_default();
    assert!(
        detail.contains("drain grace ran out before it could be replaced"),
        "{detail}"
    );
}

/// The live line about a lost replica comes before the line about the new incarnation
/// that answers it.
#[test]
fn a_loss_is_said_before_its_replacement_starts() {
    let run = run(
        &["-n", "3", "-r", "2", "--fault", "1.0:kill@1"],
        &example("ring"),
        RING,
        DEADLINE,
    );
    run.assert_no_leftovers();
    run.ok();
    let at = |needle: &str| {
        run.stderr
            .lines()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in\n{}", run.stderr))
    };
    assert!(
        at("replica 1.0 lost: killed by SIGKILL") < at("rank 1 replica 0: starting incarnation 1"),
        "{}",
        run.stderr
    );
}

/// The replicas of volpexrun `parent` that are still running (children not yet exited).
fn running_children(parent: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // pid (comm) state ppid ...: what follows the last ')' holds no spaces of comm.
            let after = stat.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
            let mut f = after.split_whitespace();
            let (state, ppid) = (f.next(), f.next());
            ppid == Some(&parent.to_string()) && state != Some("Z")
        })
        .count()
}

/// SIGCONT to a stopped volpexrun when dropped, so that a failing test does not leave it
/// stopped.
struct Continue(Pid);

impl Drop for Continue {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

/// volpexrun itself stopped (SIGSTOP) until its processes gave it up, then continued:
/// the lost rank's error says the cause was volpexrun's own stop.
#[test]
fn a_launcher_that_was_stopped_says_its_stop_lost_the_rank() {
    // `regen` prints its progress every 10 rounds: the job runs once rank 1 has.
    let mut job = spawn(&["-n", "2", "-r", "2"], &bin("regen"), &["100000", "5"]);
    job.wait_stderr(DEADLINE, |l| l.contains("regen: rank 1 round 20"))
        .expect("the job runs");
    let pid = Pid::from_raw(job.pid() as i32);
    kill(pid, Signal::SIGSTOP).expect("stop volpexrun");
    let resume = Continue(pid);
    // Its processes hear no heartbeat and exit (their exits wait in volpexrun's pipes).
    let until = Instant::now() + DEADLINE;
    while running_children(job.pid()) > 0 {
        assert!(
            Instant::now() < until,
            "the processes never gave volpexrun up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(resume);
    let run = job.wait(DEADLINE);
    run.assert_no_leftovers();
    assert_eq!(run.code, Some(70), "{}", run.stderr);
    let error = run.the_error();
    assert!(error.contains(" lost: "), "{error}");
    assert!(
        error.contains("volpexrun itself did not run for") && error.contains("it was stopped"),
        "{error}"
    );
}
