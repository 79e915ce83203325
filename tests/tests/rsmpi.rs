//! What users of the `mpi` crate (rsmpi) reach for, under replication: derived
//! datatypes with padding and `bool` fields, single values in collectives,
//! displacements, immediate collectives, send modes, `send_receive_replace_into`,
//! Cartesian grids (MPI-3.1 chapters 3, 4.1, 5 and 7), at r = 1 and 2, with a replica
//! killed or exiting mid-run; and `abort` ending the job.

use std::time::Duration;
use volpex_tests::{bin, run};

#[test]
fn rsmpi_idioms_give_the_same_results_replicated_and_after_a_kill() {
    let args = &["--iters", "30", "--work-ms", "10"];
    for n in ["1", "3", "4"] {
        let expect = run(&["-n", n], &bin("rsmpi"), args, Duration::from_secs(120));
        let expect = expect.ok().to_string();
        assert!(
            expect.starts_with(&format!("rsmpi: ok ranks={n} ")),
            "{expect}"
        );
        let faults: &[&str] = if n == "4" {
            &["", "1.0:kill@0.2", "3.1:exit@sends=40", "0.0:exit@sends=25"]
        } else {
            &[""]
        };
        for fault in faults {
            let mut launcher = vec!["-n", n, "-r", "2"];
            if !fault.is_empty() {
                launcher.extend(["--fault", fault]);
            }
            let r = run(&launcher, &bin("rsmpi"), args, Duration::from_secs(120));
            assert_eq!(r.ok(), expect, "n={n} {fault}\n{}", r.stderr);
            r.assert_no_leftovers();
        }
    }
}

#[test]
fn abort_ends_the_job_with_a_failure() {
    let r = run(
        &["-n", "3", "-r", "2"],
        &bin("rsmpi"),
        &["--abort", "3"],
        Duration::from_secs(60),
    );
    assert!(
        matches!(r.code, Some(c) if c != 0),
        "exit {:?}\n{}",
        r.code,
        r.stderr
    );
    assert!(
        r.stderr.contains("rank 2 aborted the job") && r.stderr.contains("error code 3"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("went on"), "{}", r.stdout);
    r.assert_no_leftovers();
}
