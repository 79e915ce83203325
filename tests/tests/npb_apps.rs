//! The NAS pseudo-applications BT, SP and LU (npb/src/bt, sp, lu on the shared
//! npb/src/cfd module) run as real Volpex jobs at class S and must verify against the
//! official values (npb-verification.md): failure-free at 1 and 4 ranks, with a replica
//! lost or stopped mid-run at 4 ranks x 2 replicas, and with a clear error for a process
//! count the reference refuses.

use std::process::Command;
use std::time::Duration;
use volpex_tests::{bin, run, Run};

const DEADLINE: Duration = Duration::from_secs(180);
const SUCCESS: &str = "Verification    =               SUCCESSFUL";

fn job(bench: &str, launcher: &[&str]) -> Run {
    let run = run(launcher, &bin("npb"), &[bench, "--class", "S"], DEADLINE);
    run.assert_no_leftovers();
    run
}

fn assert_verified(bench: &str, what: &str, run: &Run) {
    let out = run.ok();
    assert_eq!(
        out.matches(SUCCESS).count(),
        1,
        "{bench} {what}: expected one successful verification\n--- stdout\n{out}\n--- stderr\n{}",
        run.stderr
    );
    assert!(
        out.contains(&format!(" {} Benchmark Completed.", bench.to_uppercase())),
        "{bench} {what}: no report block\n{out}"
    );
}

/// BT, SP, LU (whole time-step loop, verification): class S as a plain process without
/// volpexrun, a job of one rank.
#[test]
fn apps_verify_as_a_single_plain_process() {
    for bench in ["bt", "sp", "lu"] {
        let out = Command::new(bin("npb"))
            .args([bench, "--class", "S"])
            .output()
            .expect("run npb");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{bench}: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(stdout.matches(SUCCESS).count(), 1, "{bench}\n{stdout}");
    }
}

/// BT, SP, LU: class S at N = 1 and N = 4 (r = 1) through volpexrun; at 4 ranks BT and
/// SP run two cells per process (pipelined line solves, copy_faces) and LU a 2 x 2
/// wavefront (exchange_1/3/4/5/6).
#[test]
fn apps_verify_at_one_and_four_ranks() {
    for bench in ["bt", "sp", "lu"] {
        for n in ["1", "4"] {
            let r = job(bench, &["-n", n, "-r", "1"]);
            assert_verified(bench, &format!("-n {n}"), &r);
        }
    }
}

/// BT, SP, LU at 4 ranks x 2 replicas: a replica that exits abruptly mid-run (after its
/// K-th send, K inside the time-step loop) changes nothing. K is about a tenth of the
/// rank's sends (class S at 4 ranks: BT 742, SP 1222, LU 1141): the job ends when the
/// faster team finishes, and with teams bound to their own CPUs the other team was seen
/// not yet 35% through.
#[test]
fn apps_verify_when_a_replica_dies_mid_run() {
    for (bench, fault) in [
        ("bt", "2.1:exit@sends=80"),
        ("sp", "1.0:exit@sends=120"),
        ("lu", "2.1:exit@sends=110"),
    ] {
        let r = job(bench, &["-n", "4", "-r", "2", "--fault", fault]);
        assert_verified(bench, fault, &r);
        let (rank, replica) = (fault.as_bytes()[0] - b'0', fault.as_bytes()[2] - b'0');
        assert_eq!(
            r.state(rank.into(), replica.into()),
            "failed",
            "{bench} {fault}\n{}",
            r.stderr
        );
    }
}

/// BT, SP, LU at 4 ranks x 2 replicas: a replica SIGSTOPped early and never continued
/// does not stop the job.
#[test]
fn apps_verify_when_a_replica_is_stopped() {
    for bench in ["bt", "sp", "lu"] {
        let r = job(bench, &["-n", "4", "-r", "2", "--fault", "1.1:stop@0.3"]);
        assert_verified(bench, "1.1:stop@0.3", &r);
    }
}

/// Setup (BT/SP decomposition, LU process grid): process counts the reference refuses
/// end the job with a clear error and a non-zero exit.
#[test]
fn a_bad_process_count_is_refused_clearly() {
    for (bench, n, msg) in [
        ("bt", "2", "square number of processes"),
        ("sp", "3", "square number of processes"),
        ("lu", "3", "power-of-two number of processes"),
    ] {
        let r = job(bench, &["-n", n]);
        assert_ne!(r.code, Some(0), "{bench} -n {n}\n{}", r.stderr);
        assert!(r.code.is_some(), "{bench} -n {n} timed out\n{}", r.stderr);
        assert!(
            r.stderr.contains(msg),
            "{bench} -n {n}: no clear message\n{}",
            r.stderr
        );
        assert!(!r.stdout.contains(SUCCESS), "{bench} -n {n}\n{}", r.stdout);
    }
}
