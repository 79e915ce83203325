//! Class W of all eight NAS Parallel Benchmarks (the same runs as
//! `scripts/npb-class-w.sh`) as Volpex jobs of four ranks: each must verify against the
//! official class W values (npb-verification.md). About half a minute in all, so it
//! stays in the suite; class A is for `volpex-bench npb`.

use std::time::Duration;
use volpex_tests::{bin, run};

const DEADLINE: Duration = Duration::from_secs(300);
const SUCCESS: &str = "Verification    =               SUCCESSFUL";

/// One job at a time (a single test): four processes per job already share the cores.
#[test]
fn all_eight_verify_at_class_w_on_four_ranks() {
    for bench in ["bt", "sp", "lu", "ep", "is", "cg", "mg", "ft"] {
        let run = run(
            &["-n", "4"],
            &bin("npb"),
            &[bench, "--class", "W"],
            DEADLINE,
        );
        run.assert_no_leftovers();
        let out = run.ok();
        assert_eq!(
            out.matches(SUCCESS).count(),
            1,
            "{bench} class W on 4 ranks: expected one successful verification\n--- stdout\n{out}\n--- stderr\n{}",
            run.stderr
        );
        let class = out
            .lines()
            .find(|l| l.trim_start().starts_with("Class "))
            .and_then(|l| l.split('=').nth(1))
            .map(str::trim);
        assert_eq!(class, Some("W"), "{bench}: report block class\n{out}");
    }
}
