//! Shared memory between replicas on one host (docs/SHM.md, issue 41): it is used when
//! the launcher's table puts two replicas on one address and off with `VOLPEX_SHM=0`,
//! results are the same either way, small messages are read in place from the slot
//! arenas (also while a sender is killed), and a killed job leaves nothing behind.

use std::time::{Duration, Instant};
use volpex_tests::{example, run, spawn};

const DEADLINE: Duration = Duration::from_secs(120);
const RING: &[&str] = &["--rounds", "150", "--work-ms", "1", "--payload", "70000"];

/// The same job with shared memory on (the default) and off: the same result, and the
/// debug log says which way the replicas dialed each other.
#[test]
fn shm_is_used_on_one_host_and_off_with_volpex_shm_0() {
    let mut results = Vec::new();
    for (shm, used) in [("1", true), ("0", false)] {
        let on = format!("VOLPEX_SHM={shm}");
        let la = [
            "-n",
            "3",
            "-r",
            "2",
            "-x",
            &on,
            "-x",
            "VOLPEX_LOG=volpex::transport=debug",
        ];
        let r = run(&la, &example("ring"), RING, DEADLINE);
        r.assert_no_leftovers();
        results.push(r.ok().to_string());
        assert_eq!(
            r.stderr.contains("through shared memory"),
            used,
            "{on}\n{}",
            r.stderr
        );
        assert!(
            !r.stderr.contains("shared memory unavailable"),
            "{}",
            r.stderr
        );
    }
    assert_eq!(results[0], results[1]);
}

/// Small messages (256 B, below a slot's 1 KiB) of many rounds: read in place.
const SMALL: &[&str] = &["--rounds", "300", "--work-ms", "0", "--payload", "256"];

/// The debug line a receiver writes when it first reads a message in place from a
/// sender (docs/SHM.md, "Messages read in place").
const IN_PLACE: &str = "reading messages in place from";

/// Small messages for longer (at least 1.5 s of work between the rounds), so that a
/// kill at 1 s lands while the job runs, after its rendezvous.
const SMALL_LONG: &[&str] = &["--rounds", "1500", "--work-ms", "1", "--payload", "256"];

fn small_ring(r: &str, shm: &str) -> volpex_tests::Run {
    small_ring_with(r, shm, SMALL)
}

fn small_ring_with(r: &str, shm: &str, args: &[&str]) -> volpex_tests::Run {
    let on = format!("VOLPEX_SHM={shm}");
    let la = [
        "-n",
        "3",
        "-r",
        r,
        "-x",
        &on,
        "-x",
        "VOLPEX_LOG=volpex::transport=debug",
    ];
    let run = run(&la, &example("ring"), args, DEADLINE);
    run.assert_no_leftovers();
    run
}

/// Small messages between replicas on one host go through the slot arenas, read in
/// place, at `-r 1` and `-r 2`: the same result as over TCP (`VOLPEX_SHM=0`, where no
/// message is read in place).
#[test]
fn small_messages_are_read_in_place_at_r1_and_r2() {
    let tcp = small_ring("1", "0");
    assert!(!tcp.stderr.contains(IN_PLACE), "{}", tcp.stderr);
    let expect = tcp.ok().to_string();
    for r in ["1", "2"] {
        let run = small_ring(r, "1");
        assert_eq!(run.ok(), expect, "-r {r}\n{}", run.stderr);
        let readers = run.stderr.matches(IN_PLACE).count();
        // Every rank receives from its left neighbour in the ring.
        assert!(
            readers >= 3,
            "-r {r}: {readers} readers in place\n{}",
            run.stderr
        );
    }
}

/// A sender replica killed while its receivers read its slots in place (`-r 2`): they
/// fail over to its sibling and the result is the failure-free one. A kill that lands
/// after the job ended is tried again earlier.
#[test]
fn a_sender_killed_while_receivers_read_in_place_changes_nothing() {
    let expect = small_ring_with("2", "1", SMALL_LONG);
    let mut at = 1.0_f64.min(expect.elapsed.as_secs_f64() * 0.5);
    for _ in 0..4 {
        let fault = format!("0.0:kill@{at:.3}");
        let la = [
            "-n",
            "3",
            "-r",
            "2",
            "--fault",
            &fault,
            "-x",
            "VOLPEX_LOG=volpex::transport=debug",
        ];
        let run = run(&la, &example("ring"), SMALL_LONG, DEADLINE);
        run.assert_no_leftovers();
        if !run.killed(0, 0) {
            at /= 2.0;
            continue;
        }
        assert_eq!(run.ok(), expect.ok(), "{fault}\n{}", run.stderr);
        assert!(run.stderr.contains(IN_PLACE), "{}", run.stderr);
        return;
    }
    panic!("the kill never landed while the job ran");
}

/// The processes whose parent is `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // pid (comm) state ppid ...: the comm may hold spaces, so count from its end.
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after.split_whitespace().nth(1) == Some(&parent.to_string())
        })
        .collect()
}

/// Whether `pid` maps a shared-memory segment of ours (docs/SHM.md: a memfd).
fn maps_a_segment(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .is_ok_and(|m| m.contains("memfd:volpex-shm"))
}

/// Whether `pid` still runs (gone or a zombie: no).
fn running(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    matches!(state, Some(s) if s != "Z")
}

fn shm_entries() -> std::collections::BTreeSet<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Issue 41: replicas on one host talk through shared memory (the job's processes map
/// segments while it runs), and a job killed mid-run (a replica, then volpexrun itself,
/// by SIGKILL) ends every process and leaves nothing in `/dev/shm`. Reference:
/// docs/SHM.md, "A peer that dies".
#[test]
fn shm_leaves_nothing_after_a_killed_job() {
    let before = shm_entries();
    let args = &["--rounds", "100000", "--work-ms", "1"];
    let job = spawn(&["-n", "3", "-r", "2"], &example("ring"), args);
    let launcher = job.pid();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mapped = loop {
        let mapped: Vec<u32> = children_of(launcher)
            .into_iter()
            .filter(|&p| maps_a_segment(p))
            .collect();
        if mapped.len() >= 2 || Instant::now() > deadline {
            break mapped;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let replicas = children_of(launcher);
    assert!(
        mapped.len() >= 2,
        "no replica maps a shared-memory segment: {replicas:?}"
    );
    let kill = |pid: u32| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    };
    kill(mapped[0]);
    kill(launcher);
    let run = job.wait(Duration::from_secs(30));
    let deadline = Instant::now() + Duration::from_secs(30);
    while replicas.iter().any(|&p| running(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = replicas.iter().copied().filter(|&p| running(p)).collect();
    for &p in &left {
        kill(p);
    }
    assert!(
        left.is_empty(),
        "replicas {left:?} outlived their job\n{}",
        run.stderr
    );
    let new: Vec<String> = shm_entries()
        .difference(&before)
        .filter(|n| n.contains("volpex"))
        .cloned()
        .collect();
    assert!(new.is_empty(), "left in /dev/shm: {new:?}");
}
