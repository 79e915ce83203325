//! Many processes on one machine: `-n 500` and `-n 300 -r 3` (900 processes on the test
//! machine's CPUs) start, run and give the failure-free result, and a crowded machine's
//! starved heartbeat threads are not taken for dead processes (issue 16: both held before
//! the 2 s detection default, and `-n 300 -r 3` lost ranks to it until the default
//! timeout grew with the processes per CPU).

use std::sync::Mutex;
use std::time::Duration;
use volpex_tests::{example, run};

const DEADLINE: Duration = Duration::from_secs(300);

/// One crowd at a time: both at once (1,400 processes) measure something else.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}
const RING: &[&str] = &["--rounds", "5"];

#[test]
fn five_hundred_ranks_run() {
    let _one = serial();
    let r = run(&["-n", "500"], &example("ring"), RING, DEADLINE);
    assert!(r.ok().contains("ranks=500"), "{}", r.stdout);
    assert!(r.stdout.contains("bad_payload_words=0"), "{}", r.stdout);
    r.assert_no_leftovers();
}

#[test]
fn three_hundred_ranks_of_three_replicas_give_the_single_result() {
    let _one = serial();
    let expect = run(&["-n", "300"], &example("ring"), RING, DEADLINE)
        .ok()
        .to_string();
    let r = run(&["-n", "300", "-r", "3"], &example("ring"), RING, DEADLINE);
    assert_eq!(r.ok(), expect, "{}", r.stderr);
    r.assert_no_leftovers();
}
