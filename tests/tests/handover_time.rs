//! A measurement, not a test of the suite (ignored; no timed assertion): the time from a
//! preemption notice to every replica of the noticed host handed over, for an NPB code at
//! class B, 4 ranks x 2 replicas on five test hosts (network namespaces over ssh, two
//! slots each, filled in order so that h4 is the spare), the notice a file for h1 written
//! `HANDOVER_NOTICE_AT` seconds in. Prints volpexrun's `every replica handed over` line;
//! fails only if the job did not succeed with verified output.
//!
//! ```sh
//! HANDOVER_BENCH=bt HANDOVER_NOTICE_AT=35 VOLPEX_TEST_PREREQUISITES=required \
//!   cargo test -p volpex-tests --test handover_time -- --ignored --nocapture
//! ```
//!
//! `scripts/handover-time.sh` measures the other case: every replica on this machine,
//! the whole machine noticed.

use std::time::Duration;

use volpex_tests::bin;
use volpex_tests::testhosts::TestNet;

#[test]
#[ignore = "a measurement: run it by name with --ignored"]
fn notice_to_handed_over_for_npb_class_b_on_test_hosts() {
    let bench = std::env::var("HANDOVER_BENCH").unwrap_or_else(|_| "cg".into());
    let at: u64 = std::env::var("HANDOVER_NOTICE_AT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let net = TestNet::new(5);
    let notices = net.dir.join("notices");
    std::fs::create_dir_all(&notices).expect("notice directory");
    let flag = format!("file={}/{{host}}", notices.display());
    let mut job = net.spawn_job(
        &[],
        &[
            "--map",
            "concentrate",
            "-n",
            "4",
            "-r",
            "2",
            "--preemption-notice",
            &flag,
        ],
        &bin("npb"),
        &[&bench, "--class", "B"],
    );
    std::thread::sleep(Duration::from_secs(at));
    std::fs::write(notices.join("h1"), "30\n").expect("write the notice");
    let handed = job.wait_stderr(Duration::from_secs(600), |l| {
        l.contains("every replica handed over")
    });
    let run = job.wait(Duration::from_secs(1200));
    println!("{bench} class B, notice at {at} s: {handed:?}");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("SUCCESSFUL"), "{}", run.stdout);
    run.assert_no_leftovers();
}
