//! Replication must not change results: the examples print the same line at r = 1, 2, 3.
//! Reference: VolpexMPI section 3 (replicas and teams); DESIGN.md "Determinism contract".

use std::time::Duration;
use volpex_tests::{example, run};

fn same_at_every_r(name: &str, args: &[&str]) {
    let mut lines = Vec::new();
    for r in ["1", "2", "3"] {
        let run = run(
            &["-n", "4", "-r", r],
            &example(name),
            args,
            Duration::from_secs(120),
        );
        let out = run.ok().to_string();
        assert_eq!(out.lines().count(), 1, "one result line at r={r}: {out}");
        run.assert_no_leftovers();
        lines.push(out);
    }
    assert_eq!(lines[0], lines[1], "r=1 vs r=2");
    assert_eq!(lines[0], lines[2], "r=1 vs r=3");
}

#[test]
fn ring_same_result_at_r_1_2_3() {
    same_at_every_r("ring", &["--rounds", "100", "--payload", "1000"]);
}

#[test]
fn stencil_same_result_at_r_1_2_3() {
    same_at_every_r("stencil", &["--cells", "500", "--iters", "200"]);
}

#[test]
fn single_process_run_needs_no_launcher() {
    let out = std::process::Command::new(example("ring"))
        .args(["--rounds", "5"])
        .output()
        .expect("run ring");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ring: ranks=1 rounds=5"));
}
