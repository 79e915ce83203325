//! Wildcard receives (`ANY_SOURCE`, `ANY_TAG`), probes and `wait_any`-style calls under
//! replication: every replica of a rank makes the same choices, also when the replica
//! that made them dies right after. Reference: MPI-3.1 sections 3.5, 3.7.5, 3.8;
//! DESIGN.md "Message identity and matching" (ANY_SOURCE).

use std::path::{Path, PathBuf};
use std::time::Duration;
use volpex_tests::{bin, run, Run};

const DEADLINE: Duration = Duration::from_secs(180);

/// A temporary directory removed on drop, also when the test fails.
struct TempDir(PathBuf);

impl TempDir {
    fn new(stem: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("volpex-test-{}-{stem}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn traces(dir: &Path, replicas: u32) -> Vec<Option<String>> {
    (0..replicas)
        .map(|k| std::fs::read_to_string(dir.join(format!("0.{k}"))).ok())
        .collect()
}

/// Messages each of ranks 1..3 sends rank 0 in `gather` (ranks 1..3 of 4: 3x as many
/// choices at rank 0), unless a test needs a longer run.
const PER_RANK: u32 = 40;

fn gather(launcher: &[&str], dir: &Path) -> Run {
    gather_per(launcher, dir, PER_RANK)
}

fn gather_per(launcher: &[&str], dir: &Path, per: u32) -> Run {
    let d = dir.to_string_lossy().to_string();
    let per = per.to_string();
    run(
        launcher,
        &bin("wildcards"),
        &["gather", "--trace", &d, "--per-rank", &per],
        DEADLINE,
    )
}

/// Asserts the job succeeded and the replicas of rank 0 matched the same sequence of
/// (source, tag, value): every trace of a replica that did not fail is a prefix of a
/// complete one of those (the launcher ends the slower replicas once every rank
/// finished).
/// Returns how many replicas wrote a complete trace.
fn agree(r: &Run, dir: &Path, replicas: u32) -> usize {
    agree_per(r, dir, replicas, PER_RANK)
}

fn agree_per(r: &Run, dir: &Path, replicas: u32, per: u32) -> usize {
    let total = 3 * per as usize;
    let out = r.ok();
    assert!(
        out.contains(&format!("wildcards gather: received {total} digest")),
        "{out}"
    );
    // A replica that died may have made choices nobody else saw: only the live ones count.
    let live: Vec<(usize, String)> = traces(dir, replicas)
        .into_iter()
        .enumerate()
        .filter(|(k, _)| r.state(0, *k as u64) != "failed")
        .filter_map(|(k, t)| t.map(|t| (k, t)))
        .collect();
    let complete: Vec<&String> = live
        .iter()
        .map(|(_, t)| t)
        .filter(|t| t.lines().count() == total)
        .collect();
    assert!(
        !complete.is_empty(),
        "no live replica of rank 0 completed its trace"
    );
    for (k, t) in &live {
        assert!(
            complete[0].starts_with(t.as_str()),
            "replica 0.{k} matched differently:\n{t}\n--- vs\n{}",
            complete[0]
        );
    }
    r.assert_no_leftovers();
    complete.len()
}

/// N = 4, r = 3, every rank sends to rank 0 in random order with random delays per
/// replica: all three replicas of rank 0 observe the same sequence of (source, tag).
#[test]
fn any_source_choices_agree_in_every_replica() {
    let dir = TempDir::new("wild-r3");
    let r = gather(&["-n", "4", "-r", "3"], &dir.0);
    agree(&r, &dir.0, 3);
}

/// The same when the replica that decided is killed right after deciding (before it
/// told anyone), and when it is killed by SIGKILL mid-run: the others take over.
#[test]
fn choices_survive_the_death_of_the_replica_that_made_them() {
    // The SIGKILL must land mid-run: 40 messages per rank can be over in 50 ms.
    for (fault, per) in [
        ("0.0:exit@choices=5", PER_RANK),
        ("0.0:exit@choices=61", PER_RANK),
        ("0.0:kill@0.05", 20 * PER_RANK),
    ] {
        let dir = TempDir::new("wild-kill");
        let r = gather_per(&["-n", "4", "-r", "3", "--fault", fault], &dir.0, per);
        agree_per(&r, &dir.0, 3, per);
        assert_eq!(r.state(0, 0), "failed", "{fault}: {}", r.stderr);
    }
    // Two of three leaders in a row.
    let dir = TempDir::new("wild-kill2");
    let r = gather(
        &[
            "-n",
            "4",
            "-r",
            "3",
            "--fault",
            "0.0:exit@choices=3",
            "--fault",
            "0.1:exit@choices=9",
        ],
        &dir.0,
    );
    agree(&r, &dir.0, 3);
    assert_eq!(r.state(0, 1), "failed", "{}", r.stderr);
}

/// MPI matching with wildcards and posted immediate receives, probes, matched probes,
/// wait_any / test_any / wait_some / test_some: the same digest of choices in every
/// replica (rank 0 broadcasts it; a replica that chose differently would fail its own
/// checks), at r = 1, 2 and 3 with a kill.
#[test]
fn matching_probes_and_wait_any_agree() {
    let prog = bin("wildcards");
    for launcher in [
        &["-n", "4"][..],
        &["-n", "5", "-r", "2"][..],
        &["-n", "4", "-r", "3", "--fault", "0.0:exit@choices=4"][..],
    ] {
        let r = run(launcher, &prog, &["semantics"], DEADLINE);
        assert!(
            r.ok().starts_with("wildcards semantics: ok"),
            "{launcher:?}: {}",
            r.stderr
        );
        r.assert_no_leftovers();
    }
}

/// A send-deterministic program (order of wildcard matches does not change its sends)
/// may skip the coordination: `VOLPEX_SEND_DETERMINISTIC=1`.
#[test]
fn send_deterministic_mode_skips_coordination() {
    let prog = bin("wildcards");
    let expect = "wildcards sum: 12570";
    let r1 = run(&["-n", "4"], &prog, &["sum"], DEADLINE);
    assert_eq!(r1.ok(), expect);
    let r2 = run(
        &["-n", "4", "-r", "2", "-x", "VOLPEX_SEND_DETERMINISTIC=1"],
        &prog,
        &["sum"],
        DEADLINE,
    );
    assert_eq!(r2.ok(), expect, "{}", r2.stderr);
}

/// `Request::cancel` under replication: receives cancelled while their message races
/// them, after delays that differ between replicas; every replica of a rank records the
/// same outcomes (the leader decides), the values add up (a cancelled receive's message
/// goes to the next receive), at r = 1, r = 2, and r = 2 with a replica killed (a leader
/// among them) and one stopped.
#[test]
fn cancel_outcomes_agree_in_every_replica() {
    let prog = bin("wildcards");
    let rounds: u64 = 60;
    // Every rank receives from its left neighbour, value prev * 1000 + round, twice.
    let expect: u64 = (0..3u64)
        .map(|prev| (0..rounds).map(|r| 2 * (prev * 1000 + r)).sum::<u64>())
        .sum();
    for launcher in [
        &["-n", "3"][..],
        &["-n", "3", "-r", "2"][..],
        &[
            "-n",
            "3",
            "-r",
            "2",
            "--fault",
            "0.0:kill@0.2",
            "--fault",
            "2.1:stop@0.1",
        ][..],
    ] {
        let dir = TempDir::new("cancel");
        let d = dir.0.to_string_lossy().to_string();
        let r = run(
            launcher,
            &prog,
            &["cancel", "--trace", &d, "--rounds", &rounds.to_string()],
            DEADLINE,
        );
        r.assert_no_leftovers();
        assert_eq!(
            r.ok().trim(),
            format!("wildcards cancel: ok sum {expect}"),
            "{launcher:?}: {}",
            r.stderr
        );
        for rank in 0..3 {
            let full: Vec<String> = (0..2)
                .filter_map(|k| std::fs::read_to_string(dir.0.join(format!("{rank}.{k}"))).ok())
                .collect();
            let longest = full
                .iter()
                .max_by_key(|t| t.len())
                .cloned()
                .unwrap_or_default();
            assert_eq!(
                longest.lines().count() as u64,
                2 * rounds,
                "{launcher:?} rank {rank}"
            );
            for t in &full {
                assert!(
                    longest.starts_with(t.as_str()),
                    "{launcher:?}: replicas of rank {rank} took different outcomes:\n{t}\n---\n{longest}"
                );
            }
        }
    }
}
