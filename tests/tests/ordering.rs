//! MPI ordering under replication with one replica delayed: non-overtaking per pair and
//! tag, receives with different tags completing out of send order, immediate receives,
//! send_receive cycles. Reference: MPI-3.1 section 3.5; DESIGN.md "Message identity and
//! matching".

use std::time::Duration;
use volpex_tests::{bin, run};

#[test]
fn ordering_rules_hold_at_r1_and_r2_with_a_slow_replica() {
    let prog = bin("ordering");
    let r1 = run(&["-n", "4"], &prog, &[], Duration::from_secs(120));
    let expect = r1.ok().to_string();
    assert!(expect.starts_with("ordering: ok"), "{expect}");
    let r2 = run(
        &["-n", "4", "-r", "2"],
        &prog,
        &[],
        Duration::from_secs(120),
    );
    assert_eq!(r2.ok(), expect, "{}", r2.stderr);
    r2.assert_no_leftovers();
    let r3 = run(
        &["-n", "3", "-r", "3", "--fault", "0.0:kill@0.05"],
        &prog,
        &[],
        Duration::from_secs(120),
    );
    assert!(r3.ok().starts_with("ordering: ok ranks=3"), "{}", r3.stderr);
}
