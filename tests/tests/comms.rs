//! Communicators under replication: duplicate and split give the same ids and ranks in
//! every replica, messages on different communicators never match. Reference: MPI-3.1
//! chapter 6; DESIGN.md "Message identity and matching".

use std::time::Duration;
use volpex_tests::{bin, run};

#[test]
fn communicators_agree_across_replicas_and_survive_a_kill() {
    for n in ["1", "2", "5"] {
        let base = run(&["-n", n], &bin("comms"), &[], Duration::from_secs(120));
        let expect = base.ok().to_string();
        assert!(
            expect.starts_with(&format!("comms: ok ranks={n} ")),
            "{expect}"
        );
        for extra in [
            &["-r", "2"][..],
            &["-r", "3"],
            &["-r", "2", "--fault", "0.0:exit@sends=3"],
        ] {
            let mut args = vec!["-n", n];
            args.extend_from_slice(extra);
            let r = run(&args, &bin("comms"), &[], Duration::from_secs(120));
            assert_eq!(r.ok(), expect, "{args:?}\n{}", r.stderr);
            r.assert_no_leftovers();
        }
    }
}
