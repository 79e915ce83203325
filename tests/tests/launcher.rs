//! volpexrun's own behaviour: flags, bad input, timeouts, being interrupted.
//! Reference: DESIGN.md "Launcher".

use std::process::Command;
use std::time::Duration;
use volpex_tests::{example, run, spawn, volpexrun};

const LONG_RING: &[&str] = &["--rounds", "100000", "--work-ms", "1"];

#[test]
fn tag_output_prefixes_the_rank() {
    let r = run(
        &["-n", "3", "-r", "2", "--tag-output"],
        &example("ring"),
        &["--rounds", "3"],
        Duration::from_secs(60),
    );
    assert!(r.ok().starts_with("[0] ring: ranks=3"), "{}", r.stdout);
}

#[test]
fn timeout_ends_every_process_and_says_so() {
    let r = run(
        &["-n", "3", "-r", "2", "--timeout", "1"],
        &example("ring"),
        LONG_RING,
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("timed out after 1.0 s"), "{}", r.stderr);
    assert!(r.elapsed < Duration::from_secs(30));
    r.assert_no_leftovers();
}

#[test]
fn sigterm_to_volpexrun_ends_every_process() {
    let mut job = spawn(
        &["-n", "2", "-r", "2", "-x", "VOLPEX_LOG=info"],
        &example("ring"),
        LONG_RING,
    );
    // Wait until every replica is up.
    for _ in 0..4 {
        job.wait_stderr(Duration::from_secs(30), |l| l.contains("listening on"))
            .expect("replica up");
    }
    let pid = nix::unistd::Pid::from_raw(job.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signal");
    let r = job.wait(Duration::from_secs(60));
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("interrupted by SIGTERM"), "{}", r.stderr);
    r.assert_no_leftovers();
}

#[test]
fn bad_input_gets_a_clear_error() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-n", "2", "/nonexistent/program"],
            "cannot start /nonexistent/program",
        ),
        (
            &["-n", "2", "--fault", "5.0:kill@1", "true"],
            "--fault names replica 5.0",
        ),
        (
            &["-n", "2", "--fault", "1.0:explode@1", "true"],
            "unknown action",
        ),
        (&["-n", "0", "true"], "0 is not in 1..=100000"),
        (
            &["-n", "2", "-x", "VOLPEX_SURELY_UNSET_VAR", "true"],
            "not set",
        ),
        (&["-n", "2"], "PROGRAM"),
    ];
    for (args, want) in cases {
        let out = Command::new(volpexrun())
            .args(*args)
            .output()
            .expect("run volpexrun");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(err.contains(want), "{args:?}: expected {want:?} in\n{err}");
    }
}
