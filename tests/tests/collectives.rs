//! Collectives against sequential computations at r = 1, 2, 3 and N in {1, 2, 3, 4, 5,
//! 7, 8} (7: three ranks pair up before recursive halving), on small vectors and on
//! vectors above the switch points of the large-vector algorithms, and surviving a
//! SIGKILL mid-operation. Reference: MPI-3.1 chapter 5.

use std::time::Duration;
use volpex_tests::{bin, run};

#[test]
fn every_collective_matches_a_sequential_computation() {
    for n in ["1", "2", "3", "4", "5", "7", "8"] {
        let mut first = None;
        for r in ["1", "2", "3"] {
            let run = run(
                &["-n", n, "-r", r],
                &bin("collectives"),
                &[],
                Duration::from_secs(180),
            );
            let out = run.ok().to_string();
            assert!(
                out.starts_with(&format!("collectives: ok ranks={n} ")),
                "n={n} r={r}: {out}"
            );
            run.assert_no_leftovers();
            match &first {
                None => first = Some(out),
                Some(f) => assert_eq!(&out, f, "n={n}: r={r} differs from r=1"),
            }
        }
    }
}

#[test]
fn collectives_survive_a_kill_mid_operation() {
    let args = &["--iters", "40", "--work-ms", "5"];
    let expect = run(
        &["-n", "4"],
        &bin("collectives"),
        args,
        Duration::from_secs(180),
    );
    let expect = expect.ok().to_string();
    for fault in ["0.0:kill@0.1", "3.1:kill@0.15", "2.0:exit@sends=50"] {
        let r = run(
            &["-n", "4", "-r", "2", "--fault", fault],
            &bin("collectives"),
            args,
            Duration::from_secs(180),
        );
        assert_eq!(r.ok(), expect, "{fault}\n{}", r.stderr);
        r.assert_no_leftovers();
    }
}

/// A large all-to-all whose last rank enters 200 ms late: the blocks sent to it before
/// it pulled wait for its pulls (counter `held`) instead of being copied into the log,
/// and the results are those of a run without the delay, with one replica and with two.
#[test]
fn large_all_to_all_blocks_wait_for_a_late_receiver() {
    let expect = run(
        &["-n", "3"],
        &bin("collectives"),
        &["--late-ms", "0"],
        Duration::from_secs(180),
    );
    let expect = expect.ok().to_string();
    for r in ["1", "2"] {
        let late = run(
            &["-n", "3", "-r", r],
            &bin("collectives"),
            &["--late-ms", "200"],
            Duration::from_secs(180),
        );
        assert_eq!(late.ok(), expect, "r={r}\n{}", late.stderr);
        let held = late.counter("held");
        assert!(
            held > 0,
            "r={r}: no block waited for its pull (held={held})"
        );
        late.assert_no_leftovers();
    }
}
