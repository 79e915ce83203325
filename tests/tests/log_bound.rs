//! The sender log is bounded: eviction lets long runs complete, never drops a message no
//! replica has received, and a replica that falls out of the logs retires while the job
//! goes on. Reference: VolpexMPI section 3 ("buffer management"); DESIGN.md "Sender log".

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use volpex_tests::{bin, example, run, spawn, LiveJob};

const DEADLINE: Duration = Duration::from_secs(180);

#[test]
fn long_run_with_a_tiny_log_completes() {
    let args = ["--rounds", "400", "--payload", "4096"];
    let expect = run(&["-n", "4", "-r", "2"], &example("ring"), &args, DEADLINE)
        .ok()
        .to_string();
    let small = run(
        &["-n", "4", "-r", "2", "-x", "VOLPEX_LOG_BYTES=32768"],
        &example("ring"),
        &args,
        DEADLINE,
    );
    assert_eq!(small.ok(), expect, "{}", small.stderr);
    let evicted: u64 = small.report.as_ref().expect("report")["processes"]
        .as_array()
        .expect("processes")
        .iter()
        .filter_map(|p| p["stats"]["evicted"].as_u64())
        .sum();
    assert!(evicted > 0, "the log never filled: {}", small.stderr);
}

/// A deferred receive dropped without being skipped or fetched (its caller's error
/// path) releases its message: 64 messages of 256 KiB, each deferred and dropped by its
/// receiver, pass through a 4 MiB log (`bin/deferred.rs`). A build whose dropped claims
/// are never released fills the log and its sender waits for ever (checked: the job
/// hung until killed).
#[test]
fn dropped_deferred_receives_release_their_messages() {
    let r = run(
        &["-n", "2", "-x", "VOLPEX_LOG_BYTES=4194304"],
        &bin("deferred"),
        &["64"],
        DEADLINE,
    );
    assert!(r.ok().contains("deferred: ok 64"), "{}", r.stderr);
    r.assert_no_leftovers();
}

/// A broadcast's sends of one buffer share one log copy (`send_each_on`); with a log too
/// small to hold a large broadcast's messages to all children at once, they go one by
/// one, and every collective still gives the right result.
#[test]
fn collectives_complete_with_a_log_smaller_than_a_broadcast() {
    let expect = run(&["-n", "4"], &bin("collectives"), &[], DEADLINE)
        .ok()
        .to_string();
    let small = run(
        &["-n", "4", "-r", "2", "-x", "VOLPEX_LOG_BYTES=1048576"],
        &bin("collectives"),
        &[],
        DEADLINE,
    );
    assert_eq!(small.ok(), expect, "{}", small.stderr);
    small.assert_no_leftovers();
}

/// Waits until `ring --progress` says it reached `round` (on volpexrun's stderr).
fn reached(job: &mut LiveJob, round: u64) -> bool {
    let at = |l: &str| -> Option<u64> { l.split_once("ring: round ")?.1.trim().parse().ok() };
    job.wait_stderr(DEADLINE, |l| at(l).is_some_and(|r| r >= round))
        .is_some()
}

#[test]
fn a_replica_stopped_past_the_log_retires_and_the_job_succeeds() {
    let args = [
        "--rounds",
        "500",
        "--payload",
        "4096",
        "--work-ms",
        "2",
        "--progress",
        "10",
    ];
    let expect = run(&["-n", "4"], &example("ring"), &args, DEADLINE)
        .ok()
        .to_string();
    // The log holds ~23 of these messages. The rest of team 1 fails over to team 0
    // within one hedge (20 ms, a few rounds), so only the stopped replica falls behind.
    // It is stopped at round 20 and continued at round 150, ~130 rounds behind with 350
    // to go: by progress, not by time (stopped for 2 s, it did not fall out of the log
    // once on a loaded machine, whose rounds were too slow).
    let patience = DEADLINE.as_secs().to_string();
    let launcher = [
        "-n",
        "4",
        "-r",
        "2",
        "-x",
        "VOLPEX_LOG_BYTES=98304",
        "-x",
        "VOLPEX_HEDGE_MS=20",
        // However long 130 rounds take, the stopped replica is not declared dead within
        // the test's deadline: what is checked is its retirement, not its detection.
        "--heartbeat-timeout",
        &patience,
    ];
    let mut job = spawn(&launcher, &example("ring"), &args);
    assert!(reached(&mut job, 20), "the job never reached round 20");
    let stopped = job.pid_of(1, 1, 0).map(Pid::from_raw);
    let stopped = stopped.expect("replica 1.1 runs");
    kill(stopped, Signal::SIGSTOP).expect("SIGSTOP to replica 1.1");
    let far = reached(&mut job, 150);
    let _ = kill(stopped, Signal::SIGCONT);
    assert!(far, "the job never reached round 150 with 1.1 stopped");
    let r = job.wait(DEADLINE);
    assert_eq!(r.ok(), expect, "{}", r.stderr);
    assert!(
        r.stderr.contains("replica 1.1 fell too far behind"),
        "{}",
        r.stderr
    );
    assert_eq!(r.state(1, 1), "retired", "{}", r.stderr);
    r.assert_no_leftovers();
}

/// Replicas that lag only because the sibling they pulled from stopped do not retire:
/// the messages their team's senders evicted may still be in the stopped replica's log,
/// so they ask it again once it runs (issue 16, item 9: one stop used to retire a whole
/// team). The stop is shorter than the heartbeat timeout, so the launcher never declares
/// it dead.
#[test]
fn a_team_that_waited_for_a_stopped_sibling_does_not_retire() {
    let args = ["--rounds", "1200", "--payload", "4096", "--work-ms", "2"];
    let expect = run(&["-n", "3"], &example("ring"), &args, DEADLINE)
        .ok()
        .to_string();
    let launcher = [
        "-n",
        "3",
        "-r",
        "2",
        "--heartbeat-timeout",
        "20",
        "-x",
        "VOLPEX_LOG_BYTES=65536",
        "--fault",
        "1.1:stop@0.5",
        "--fault",
        "1.1:cont@4.5",
    ];
    let r = run(&launcher, &example("ring"), &args, DEADLINE);
    assert_eq!(r.ok(), expect, "{}", r.stderr);
    for rank in [0, 2] {
        assert_ne!(r.state(rank, 1), "retired", "{}", r.stderr);
    }
    r.assert_no_leftovers();
}
