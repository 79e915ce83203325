//! The NAS Parallel Benchmark kernels (NPB 3.3 MPI: EP, IS, CG, MG, FT) ported to Volpex
//! must reproduce the official class S verification values: on one process with and
//! without volpexrun, on four ranks, and (EP, CG, MG) on four ranks of two replicas with
//! one replica lost or stopped mid-run. Rank 0 alone prints the report block.
//! Reference: NPB 3.3 MPI sources and the official values in npb-verification.md.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use volpex_tests::{bin, run, Run};

const DEADLINE: Duration = Duration::from_secs(120);
/// The report line of a verified run (NPB's print_results layout).
const VERIFIED: &str = "Verification    =               SUCCESSFUL";

/// One job at a time: up to eight processes per job already share the machine's cores,
/// and a replica that falls far behind its partner would be ended before its injected
/// fault fires.
static ONE_JOB: Mutex<()> = Mutex::new(());

/// Runs `npb BENCH --class S` under volpexrun with `n` ranks of `r` replicas.
fn npb_job(bench: &str, n: usize, r: usize, faults: &[&str]) -> Run {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let (n, r) = (n.to_string(), r.to_string());
    let mut la: Vec<&str> = vec!["-n", &n, "-r", &r];
    for f in faults {
        la.push("--fault");
        la.push(f);
    }
    let run = run(&la, &bin("npb"), &[bench, "--class", "S"], DEADLINE);
    run.assert_no_leftovers();
    run
}

/// Runs `npb BENCH --class CLASS` under volpexrun with the launcher arguments `la`.
fn npb_job_with(bench: &str, class: &str, la: &[&str]) -> Run {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let run = run(la, &bin("npb"), &[bench, "--class", class], DEADLINE);
    run.assert_no_leftovers();
    run
}

/// Exit 0 and exactly one report verdict, the successful one.
fn assert_verified_once(run: &Run, what: &str) {
    let out = run.ok();
    assert_eq!(
        out.matches(VERIFIED).count(),
        1,
        "{what}: one verified report expected\n--- stdout\n{out}\n--- stderr\n{}",
        run.stderr
    );
    assert!(!out.contains("UNSUCCESSFUL"), "{what}\n{out}");
}

fn verifies_on_1_and_4_ranks(bench: &str) {
    for n in [1, 4] {
        let run = npb_job(bench, n, 1, &[]);
        assert_verified_once(&run, &format!("{bench} class S, N = {n}"));
    }
}

/// A replica that exits abruptly after its `sends`-th send (deterministically inside the
/// run) and a replica SIGSTOPped at `stop_at` seconds: rank 2 and rank 1 keep their
/// other replica, and the run still verifies.
fn survives_lost_and_stopped_replicas(bench: &str, sends: u32, stop_at: f64) {
    let exit = format!("2.1:exit@sends={sends}");
    let run = npb_job(bench, 4, 2, &[&exit]);
    assert_verified_once(&run, &format!("{bench} class S, N = 4, r = 2, {exit}"));
    assert_eq!(run.state(2, 1), "failed", "{exit}\n{}", run.stderr);

    let stop = format!("1.1:stop@{stop_at}");
    let run = npb_job(bench, 4, 2, &[&stop]);
    assert_verified_once(&run, &format!("{bench} class S, N = 4, r = 2, {stop}"));
}

/// EP (NPB `EP/ep.f`): class S Gaussian-pair sums sx, sy within 1e-8 of the official
/// values; the batches split over ranks and all-reduced.
#[test]
fn ep_class_s_verifies_on_1_and_4_ranks() {
    verifies_on_1_and_4_ranks("ep");
}

/// IS (NPB `IS/is.c`): class S partial verification of five test keys in each of the
/// ten iterations and the full sort check, with the keys redistributed by all-to-all-v.
#[test]
fn is_class_s_verifies_on_1_and_4_ranks() {
    verifies_on_1_and_4_ranks("is");
}

/// IS class W on 4 ranks exchanges blocks of about 256 KiB in each all-to-all-v: they
/// go out straight from the sender's buffer and are copied into its log only when their
/// receivers have not confirmed them by the end of the exchange (counter `unlogged`
/// counts those never copied). The run verifies with one replica, with two when one is
/// lost early in the run, and with regeneration on, where nothing skips the log. With
/// both teams alive a block rarely skips (the other team's confirmations come late), so
/// rank 2's second replica dies at its 10th of 58 sends, early: from then on rank 2.0 is
/// every live replica of rank 2, and most blocks sent to it skip (6 to 10 from each
/// sender in six trial runs). At its 40th send it died too late in one run, after the
/// faster team's last exchange, and nothing skipped.
#[test]
fn is_all_to_all_blocks_skip_the_log_when_confirmed() {
    let cases: [(&[&str], bool); 3] = [
        (&["-n", "4", "-r", "1"], true),
        (
            &[
                "-n",
                "4",
                "-r",
                "2",
                "--regenerate",
                "never",
                "--fault",
                "2.1:exit@sends=10",
            ],
            true,
        ),
        (&["-n", "4", "-r", "2", "--regenerate", "spare"], false),
    ];
    for (la, skips) in cases {
        let run = npb_job_with("is", "W", la);
        let what = format!("is class W, {la:?}");
        assert_verified_once(&run, &what);
        let unlogged = run.counter("unlogged");
        assert_eq!(unlogged > 0, skips, "{what}: unlogged={unlogged}");
    }
}

/// CG (NPB `CG/cg.f`): class S zeta within 1e-10 of 8.5971775078648, on a 1x1 and a
/// 2x2 process grid (row sums and transpose exchanges).
#[test]
fn cg_class_s_verifies_on_1_and_4_ranks() {
    verifies_on_1_and_4_ranks("cg");
}

/// MG (NPB `MG/mg.f`): class S residual L2 norm within 1e-8 of 0.5307707005734e-4,
/// with periodic copies on one rank and comm3 halo exchanges on four.
#[test]
fn mg_class_s_verifies_on_1_and_4_ranks() {
    verifies_on_1_and_4_ranks("mg");
}

/// FT (NPB `FT/ft.f`): the six class S checksums within 1e-12, in the 0-D layout on one
/// rank and the 1-D layout with all-to-all transposes on four.
#[test]
fn ft_class_s_verifies_on_1_and_4_ranks() {
    verifies_on_1_and_4_ranks("ft");
}

/// All five kernels (NPB EP, IS, CG, MG, FT) run as a plain single process, without
/// volpexrun, and verify at class S.
#[test]
fn kernels_verify_as_a_plain_single_process() {
    for bench in ["ep", "is", "cg", "mg", "ft"] {
        let (code, out) = run_alone(&bin("npb"), &[bench, "--class", "S"]);
        assert_eq!(code, Some(0), "{bench} alone\n{out}");
        assert_eq!(out.matches(VERIFIED).count(), 1, "{bench} alone\n{out}");
    }
}

/// EP (NPB `EP/ep.f`) at N = 4, r = 2: losing a replica just as the computation starts
/// (right after its one start-up broadcast send; its next sends are the final
/// all-reduces, which can come after the other team already finished) or stopping one
/// leaves the sums unchanged.
#[test]
fn ep_survives_a_lost_and_a_stopped_replica() {
    survives_lost_and_stopped_replicas("ep", 1, 0.3);
}

/// CG (NPB `CG/cg.f`) at N = 4, r = 2: a replica lost a tenth of the way through its
/// ~1700 row-sum and transpose sends, or stopped mid-run, leaves zeta unchanged. (Early:
/// the job ends when the faster team finishes, and with teams bound to their own CPUs
/// the other was seen not yet 35% through an NPB run.)
#[test]
fn cg_survives_a_lost_and_a_stopped_replica() {
    survives_lost_and_stopped_replicas("cg", 170, 0.3);
}

/// MG (NPB `MG/mg.f`) at N = 4, r = 2: a replica lost a tenth of the way through its
/// ~540 halo and reduction sends (early, as for CG), or stopped mid-run, leaves the
/// residual norm unchanged.
#[test]
fn mg_survives_a_lost_and_a_stopped_replica() {
    survives_lost_and_stopped_replicas("mg", 55, 0.1);
}

/// CG (NPB `CG/cg.f`, setup_proc_info) accepts only powers of two: three ranks end with
/// a clear error and a non-zero exit, and no report.
#[test]
fn a_bad_process_count_is_a_clear_error() {
    let run = npb_job("cg", 3, 1, &[]);
    assert_ne!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("CG needs a power-of-two number of processes, got 3"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("Verification"), "{}", run.stdout);
}

/// Runs `program` directly (a job of one rank), ending it at the deadline; returns its
/// exit code and stdout.
fn run_alone(program: &Path, args: &[&str]) -> (Option<i32>, String) {
    let _one = ONE_JOB.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start npb");
    let end = Instant::now() + DEADLINE;
    while Instant::now() < end {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().expect("collect npb output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
