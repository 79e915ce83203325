//! Replica failures must not change results while one replica of every rank lives, and
//! must end the job with one clear message when a whole rank is lost.
//! Reference: VolpexMPI section 3 (replica selection, failover); DESIGN.md "Failure
//! detection" and "Launcher" (exit policy).

use rand::{Rng, SeedableRng};
use std::time::Duration;
use volpex_tests::{bin, example, run, Run};

const DEADLINE: Duration = Duration::from_secs(120);
const RING: &[&str] = &["--rounds", "150", "--work-ms", "2", "--payload", "256"];
const STENCIL: &[&str] = &["--cells", "300", "--iters", "150", "--work-ms", "2"];

fn reference(name: &str, args: &[&str]) -> (String, Duration) {
    let r = run(&["-n", "4", "-r", "2"], &example(name), args, DEADLINE);
    (r.ok().to_string(), r.elapsed)
}

fn seeded() -> rand::rngs::StdRng {
    let seed = std::env::var("VOLPEX_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random::<u64>());
    eprintln!("VOLPEX_TEST_SEED={seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// The replica a `R.I:kill@T` fault names and its time.
fn kill_of(fault: &str) -> Option<(u64, u64, f64)> {
    let (who, at) = fault.split_once(":kill@")?;
    let (rank, replica) = who.split_once('.')?;
    Some((rank.parse().ok()?, replica.parse().ok()?, at.parse().ok()?))
}

/// `with_faults_and`, where every timed kill (`R.I:kill@T`) must land while the job
/// runs: a run that ended before one of them is run again with every kill time halved
/// (the failure-free time was measured on a loaded machine), at most four times.
fn with_kills(name: &str, args: &[&str], r: &str, faults: &[String], more: &[&str]) -> Run {
    let mut scale = 1.0;
    for _ in 0..4 {
        let scaled: Vec<String> = faults
            .iter()
            .map(|f| match kill_of(f) {
                Some((rank, k, at)) => format!("{rank}.{k}:kill@{:.3}", at * scale),
                None => f.clone(),
            })
            .collect();
        let run = with_faults_and(name, args, r, &scaled, more);
        let landed = scaled
            .iter()
            .filter_map(|f| kill_of(f))
            .all(|(rank, k, _)| run.killed(rank, k));
        if landed {
            return run;
        }
        eprintln!("{name}: {scaled:?} did not all land before the job ended; again, earlier");
        scale /= 2.0;
    }
    panic!("{name}: the kills in {faults:?} never landed while the job ran");
}

/// `with_faults` at `-r 2` with one `R.K:exit@sends=N` fault, which must land: its
/// replica must end failed, by its own exit after send N. The teams of replicas run
/// apart, and the job ends (ending the slower replicas) once one replica of every rank
/// finished: on a loaded machine a whole team was seen half the job behind then, so a
/// replica of it never reached a late send. A run where the replica was ended so, before
/// its N-th send, is run again with N halved, at most four times; a replica that
/// finished (it went past send N) fails the test at once.
fn with_exit(name: &str, args: &[&str], fault: &str) -> Run {
    let (who, n) = fault.split_once(":exit@sends=").expect("R.K:exit@sends=N");
    let (rank, replica) = who.split_once('.').expect("R.K");
    let (rank, replica): (u64, u64) = (
        rank.parse().expect("a rank"),
        replica.parse().expect("a replica"),
    );
    let mut n: u64 = n.parse().expect("a count");
    for _ in 0..4 {
        let fault = format!("{who}:exit@sends={n}");
        let run = with_faults(name, args, "2", std::slice::from_ref(&fault));
        match run.state(rank, replica).as_str() {
            "failed" => {
                let exit = format!("volpex[{who}] exits after send {n} (fault injection)");
                assert!(
                    run.stderr.contains(&exit),
                    "{name} with {fault}\n{}",
                    run.stderr
                );
                return run;
            }
            "ended" => {
                eprintln!("{name}: {fault} did not land before the job ended; again, earlier");
                n = n.div_ceil(2);
            }
            other => panic!("{name} with {fault}: replica {who} {other}\n{}", run.stderr),
        }
    }
    panic!("{name}: {fault} never landed while the job ran");
}

fn with_faults(name: &str, args: &[&str], r: &str, faults: &[String]) -> Run {
    with_faults_and(name, args, r, faults, &[])
}

/// `with_faults` with more volpexrun options.
fn with_faults_and(name: &str, args: &[&str], r: &str, faults: &[String], more: &[&str]) -> Run {
    let mut la: Vec<&str> = vec!["-n", "4", "-r", r];
    la.extend_from_slice(more);
    for f in faults {
        la.push("--fault");
        la.push(f);
    }
    let run = run(&la, &example(name), args, DEADLINE);
    run.assert_no_leftovers();
    run
}

#[test]
fn sigkill_of_any_one_replica_changes_nothing() {
    let mut rng = seeded();
    for (name, args) in [("ring", RING), ("stencil", STENCIL)] {
        let (expect, t) = reference(name, args);
        for _ in 0..2 {
            let rank = rng.random_range(0..4);
            let replica = rng.random_range(0..2);
            let at = rng.random_range(0.05..t.as_secs_f64() * 0.8);
            let fault = format!("{rank}.{replica}:kill@{at:.3}");
            let run = with_kills(name, args, "2", &[fault], &[]);
            assert_eq!(
                run.ok(),
                expect,
                "{name} with a kill of {rank}.{replica}\n{}",
                run.stderr
            );
        }
    }
}

#[test]
fn exit_after_sends_changes_nothing() {
    for (name, args) in [("ring", RING), ("stencil", STENCIL)] {
        let (expect, _) = reference(name, args);
        for fault in [
            "0.0:exit@sends=1",
            "2.1:exit@sends=40",
            "3.0:exit@sends=100",
        ] {
            let run = with_exit(name, args, fault);
            assert_eq!(run.ok(), expect, "{name} with {fault}\n{}", run.stderr);
        }
    }
}

#[test]
fn r3_survives_two_replicas_of_one_rank() {
    let mut rng = seeded();
    for (name, args) in [("ring", RING), ("stencil", STENCIL)] {
        let (expect, t) = reference(name, args);
        let rank = rng.random_range(0..4);
        let a = rng.random_range(0.05..t.as_secs_f64() * 0.4);
        let b = rng.random_range(a..t.as_secs_f64() * 0.8);
        let (k1, k2) = match rng.random_range(0..3) {
            0 => (0, 1),
            1 => (1, 2),
            _ => (0, 2),
        };
        let faults = [
            format!("{rank}.{k1}:kill@{a:.3}"),
            format!("{rank}.{k2}:kill@{b:.3}"),
        ];
        let run = with_kills(name, args, "3", &faults, &[]);
        assert_eq!(
            run.ok(),
            expect,
            "{name} with kills of {rank}.{k1} and {rank}.{k2}\n{}",
            run.stderr
        );
    }
}

#[test]
fn sigstopped_replica_does_not_stop_the_job() {
    for (name, args) in [("ring", RING), ("stencil", STENCIL)] {
        let (expect, t) = reference(name, args);
        for fault in ["1.0:stop@0.2", "0.1:stop@0.1", "3.0:stop@0"] {
            let run = with_faults(name, args, "2", &[fault.to_string()]);
            assert_eq!(run.ok(), expect, "{name} with {fault}\n{}", run.stderr);
            eprintln!(
                "{name} {fault}: {:.2} s vs {:.2} s failure-free ({:.2}x)",
                run.elapsed.as_secs_f64(),
                t.as_secs_f64(),
                run.elapsed.as_secs_f64() / t.as_secs_f64()
            );
        }
    }
}

/// A failed connection is no proof of death: rank 1's only replica is stopped before any
/// peer connected to it, and rank 2 dials it meanwhile, with a handshake timeout far
/// shorter than the stop. The connection setup times out, yet rank 1 is not lost: rank 2
/// asks again over a new connection after its ack timeout, and the job ends with the
/// result once rank 1 runs again (a `-n 300 -r 3` job on two cores, stalled as a whole,
/// once lost a rank that way; see `scale.rs`).
#[test]
fn a_rank_stalled_while_peers_dial_it_is_not_lost() {
    let expect = run(&["-n", "3"], &bin("late"), &[], DEADLINE)
        .ok()
        .to_string();
    let run = run(
        &[
            "-n",
            "3",
            "--heartbeat-timeout",
            "60",
            "-x",
            "VOLPEX_CONNECT_TIMEOUT_MS=300",
            "--fault",
            "1.0:stop@0.3",
            "--fault",
            "1.0:cont@3",
        ],
        &bin("late"),
        &["--sleep-ms", "800"],
        DEADLINE,
    );
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    assert!(run.elapsed >= Duration::from_secs(3), "rank 1 was stopped");
    run.assert_no_leftovers();
}

#[test]
fn losing_every_replica_of_a_rank_fails_clearly() {
    let faults = ["2.0:kill@0.2".to_string(), "2.1:exit@sends=20".to_string()];
    // Without regeneration (which may replace the first before the second goes: see
    // tests/regenerate.rs), rank 2 is lost.
    let run = with_faults_and("ring", RING, "2", &faults, &["--regenerate", "never"]);
    // Lost to failures, not to its program's exit code: volpexrun's own code for it.
    assert_eq!(run.code, Some(70), "{}", run.stderr);
    let error = run.the_error();
    assert!(error.contains("rank 2 lost"), "{error}");
    assert!(
        run.stdout.is_empty(),
        "no result from a failed job: {}",
        run.stdout
    );
    assert!(run.elapsed < DEADLINE);
}

#[test]
fn a_lost_rank_is_also_detected_at_r1() {
    let run = with_faults("ring", RING, "1", &["1.0:kill@0.2".to_string()]);
    assert_eq!(run.code, Some(70), "{}", run.stderr);
    assert!(run.stderr.contains("rank 1 lost"), "{}", run.stderr);
}

#[test]
fn large_messages_survive_kills_mid_transfer() {
    // 400 KB tokens land straight in the receive buffer; a kill mid-transfer must make the
    // receiver fail over and take a whole copy from the other replica.
    let args = &["--rounds", "60", "--work-ms", "3", "--payload", "400000"];
    let (expect, _) = reference("ring", args);
    assert!(expect.contains("bad_payload_words=0"), "{expect}");
    for fault in ["1.0:kill@0.15", "2.1:kill@0.1", "0.0:exit@sends=7"] {
        let run = with_kills("ring", args, "2", &[fault.to_string()], &[]);
        assert_eq!(run.ok(), expect, "ring with {fault}\n{}", run.stderr);
        if fault.contains("exit@") {
            assert_eq!(run.state(0, 0), "failed", "{fault}\n{}", run.stderr);
        }
    }
}

#[test]
fn messages_that_skip_the_log_arrive_whole_and_late_confirmations_fall_back() {
    // 3 MB tokens go out straight from the sender's buffer to every live replica of the
    // receiver; a sender that hears every one confirm keeps no copy (counter
    // `unlogged`), one that waits in vain copies after all. Both must deliver the same
    // bytes, also at r = 2 once one replica of a rank is dead (then its sibling is every
    // live replica) and when a replica dies mid-transfer. With regeneration on (the
    // default at r >= 2) nothing skips the log: a new incarnation replays from it.
    let args = &["--rounds", "20", "--work-ms", "3", "--payload", "3000000"];
    let (expect, _) = reference("ring", args);
    assert!(expect.contains("bad_payload_words=0"), "{expect}");
    let cases: [(&str, &str, &str, &str, bool); 5] = [
        ("1", "", "1000000", "spare", true),
        ("1", "", "0", "spare", false),
        ("2", "1.1:kill@0.02", "1000000", "never", true),
        ("2", "2.0:kill@0.1", "1000000", "never", true),
        ("2", "2.0:kill@0.1", "1000000", "spare", false),
    ];
    for (r, fault, wait, regenerate, skips) in cases {
        let wait = format!("VOLPEX_CONFIRM_WAIT_US={wait}");
        let mut la = vec!["-n", "4", "-r", r, "-x", &wait, "--regenerate", regenerate];
        if !fault.is_empty() {
            la.extend(["--fault", fault]);
        }
        let run = run(&la, &example("ring"), args, DEADLINE);
        run.assert_no_leftovers();
        let what = format!("r={r} fault={fault} {wait} --regenerate {regenerate}");
        assert_eq!(run.ok(), expect, "{what}\n{}", run.stderr);
        if let Some((rank, k, _)) = kill_of(fault) {
            assert!(
                run.killed(rank, k),
                "{what}: the kill never landed\n{}",
                run.stderr
            );
        }
        let unlogged = run.counter("unlogged");
        assert_eq!(unlogged > 0, skips, "{what}: unlogged={unlogged}");
    }
}

/// Issue 42 item 2: every replica of a rank killed at the same moment loses that rank
/// (exit 70), as kills apart do; no new incarnation is started from a sibling that was
/// killed with it (before the fix: replacements "caught up in 0.0 s" from nobody and the
/// job failed with "rank 0: no replica finished cleanly", exit 1).
#[test]
fn every_replica_of_a_rank_killed_at_once_loses_that_rank() {
    // At least 3 s of run: the kills at 1 s land while it runs.
    let args = &["--rounds", "1500", "--work-ms", "2"];
    for r in [2u32, 3] {
        let faults: Vec<String> = (0..r).map(|k| format!("1.{k}:kill@1")).collect();
        let run = with_faults("ring", args, &r.to_string(), &faults);
        assert_eq!(run.code, Some(70), "-r {r}\n{}", run.stderr);
        let error = run.the_error();
        assert!(error.contains("error: rank 1 lost"), "-r {r}: {error}");
        for never in ["starting incarnation", "caught up in"] {
            assert!(
                !run.stderr.contains(never),
                "-r {r}: {never}\n{}",
                run.stderr
            );
        }
    }
}

/// Issue 42 item 2: every replica of rank 1 of a C program dies of SIGSEGV at the same
/// point: their exits come one by one, the first may be regenerated from a sibling that
/// is dying too, but once none that holds the rank's state is left the rank is lost
/// (exit 70, naming SIGSEGV), and no newcomer catches up from nothing.
#[test]
fn every_replica_of_a_rank_segfaulting_loses_that_rank() {
    use volpex_tests::abi::{compile_c, TempDir};
    let dir = TempDir::new("misbehave");
    let exe = compile_c(&dir, "misbehave");
    for r in ["2", "3"] {
        let run = run(&["-n", "4", "-r", r], &exe, &["segv"], DEADLINE);
        run.assert_no_leftovers();
        assert_eq!(run.code, Some(70), "-r {r}\n{}", run.stderr);
        let error = run.the_error();
        assert!(error.contains("error: rank 1 lost"), "-r {r}: {error}");
        assert!(error.contains("SIGSEGV"), "-r {r}: {error}");
        assert!(
            !run.stderr.contains("caught up in"),
            "-r {r}\n{}",
            run.stderr
        );
    }
}
