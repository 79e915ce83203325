//! A program error never hangs a job: a rank whose `main` returns an error (its own, or
//! one the library returned to it) or panics while others wait for its messages ends
//! the job with a failure that names it and says what it last wrote. Reference:
//! DESIGN.md "Failure detection" (no hang) and "Launcher" (exit policy); issue 16, item 1.

use std::time::Duration;
use volpex_tests::{bin, run, Run};

const DEADLINE: Duration = Duration::from_secs(60);

fn errors(replicas: &str, mode: &str) -> Run {
    let r = run(
        &["-n", "3", "-r", replicas],
        &bin("errors"),
        &["--mode", mode],
        DEADLINE,
    );
    r.assert_no_leftovers();
    r
}

/// The summary line of replica `rank.replica`.
fn summary_line(r: &Run, rank: u32, replica: u32) -> String {
    let who = format!("volpexrun:   replica {rank}.{replica} ");
    r.stderr
        .lines()
        .find(|l| l.starts_with(&who))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_healthy_run_of_the_error_program_succeeds() {
    let r = errors("2", "ok");
    assert_eq!(r.ok().lines().filter(|l| *l == "errors: ok").count(), 2);
}

#[test]
fn an_error_returned_from_main_fails_the_job_and_is_named() {
    for replicas in ["1", "2"] {
        let r = errors(replicas, "error");
        assert!(r.code.is_some(), "volpexrun hung\n{}", r.stderr);
        assert_ne!(r.code, Some(0), "{}", r.stderr);
        let line = summary_line(&r, 0, 0);
        assert!(
            line.contains("failed") && line.contains("it last wrote: Error: BadInput"),
            "replica 0.0 must be failed with its error text, got {line:?}\n{}",
            r.stderr
        );
        assert_eq!(r.state(0, 0), "failed");
        // The waiting ranks learn that rank 0 ended instead of waiting forever.
        assert!(
            r.stderr.contains("rank 0 ended without sending"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn a_library_error_returned_with_question_mark_fails_the_job() {
    let r = errors("1", "out-of-range");
    assert!(r.code.is_some(), "volpexrun hung\n{}", r.stderr);
    assert_ne!(r.code, Some(0));
    let line = summary_line(&r, 0, 0);
    assert!(
        line.contains("failed") && line.contains("RankOutOfRange { rank: 8, size: 3 }"),
        "got {line:?}\n{}",
        r.stderr
    );
}

#[test]
fn a_panic_is_reported_as_a_panic() {
    let r = errors("2", "panic");
    assert!(r.code.is_some(), "volpexrun hung\n{}", r.stderr);
    assert_ne!(r.code, Some(0));
    for replica in [0, 1] {
        let line = summary_line(&r, 0, replica);
        assert!(
            line.contains("exited with code 101")
                && line.contains("panicked at tests/src/bin/errors.rs")
                && line.contains("rank 0 gives up")
                && !line.contains("fenced"),
            "replica 0.{replica} must be diagnosed by its panic, got {line:?}\n{}",
            r.stderr
        );
    }
}
