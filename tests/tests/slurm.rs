//! volpexrun inside a Slurm allocation: hosts from SLURM_JOB_NODELIST, one `srun --no-kill`
//! step per host. A Slurm cluster from Debian's packages (munged, slurmctld, one slurmd
//! per test host in its own network namespace, all on this machine) is started by the
//! harness; `salloc` gives the allocation. Reference: DESIGN.md "Launcher".
//!
//! Needs root, slurm-wlm and munge (`.ci/run` installs them); fails loudly without.

use std::time::Duration;

use volpex_tests::testhosts::TestSlurm;
use volpex_tests::{example, run, spawn_with};

const DEADLINE: Duration = Duration::from_secs(180);
const RING: &[&str] = &["--rounds", "200", "--work-ms", "1", "--payload", "64"];

#[test]
fn ring_runs_under_salloc_with_the_slurm_launcher() {
    let slurm = TestSlurm::new(2, 4);
    let expect = run(&["-n", "4", "-r", "2"], &example("ring"), RING, DEADLINE)
        .ok()
        .to_string();
    let head = slurm.net.head();
    let conf = slurm.conf.to_string_lossy().into_owned();
    let salloc = [
        "ip",
        "netns",
        "exec",
        head.as_str(),
        "salloc",
        "--quiet",
        "-N",
        "2",
        "--ntasks-per-node=4",
        "--no-kill",
    ];
    // Explicit launcher, then auto-detection (inside an allocation, no hosts given).
    for launcher in [&["--launcher", "slurm"][..], &[][..]] {
        let mut la = launcher.to_vec();
        la.extend_from_slice(&["-n", "4", "-r", "2"]);
        let r = spawn_with(
            &salloc,
            &[("SLURM_CONF", conf.as_str())],
            &la,
            &example("ring"),
            RING,
        )
        .wait(DEADLINE);
        assert_eq!(r.ok(), expect, "{launcher:?}\n{}", r.stderr);
        let procs = r
            .report
            .as_ref()
            .and_then(|j| j["processes"].as_array().cloned())
            .unwrap_or_default();
        for rank in 0..4u64 {
            let hosts: Vec<&str> = procs
                .iter()
                .filter(|p| p["rank"] == rank)
                .filter_map(|p| p["host"].as_str())
                .collect();
            assert_eq!(hosts.len(), 2, "{procs:?}");
            assert_ne!(hosts[0], hosts[1], "rank {rank} on one node: {procs:?}");
        }
        r.assert_no_leftovers();
        eprintln!(
            "slurm {launcher:?}: n=4 r=2 on 2 nodes in {:.2} s",
            r.elapsed.as_secs_f64()
        );
    }
    // Too few slots in the allocation: refused before anything starts, saying why.
    let r = spawn_with(
        &[
            "ip",
            "netns",
            "exec",
            &head,
            "salloc",
            "--quiet",
            "-N",
            "2",
            "--no-kill",
        ],
        &[("SLURM_CONF", conf.as_str())],
        &["--launcher", "slurm", "-n", "4", "-r", "2"],
        &example("ring"),
        RING,
    )
    .wait(DEADLINE);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("offer 2 usable slots, 6 slot(s) missing"),
        "{}",
        r.stderr
    );
}
