//! volpexrun as the launcher of a Kubeflow MPI Operator `MPIJob` (v2beta1), tested
//! against the operator's contract on the project's test hosts (network namespaces, each
//! with a real sshd, standing for the worker pods): the launcher pod's environment as the
//! operator writes it (`OMPI_MCA_orte_default_hostfile` naming a hostfile of `name
//! slots=N` lines, `OMPI_MCA_plm_rsh_args`; or MPICH's `HYDRA_HOST_FILE` with `name:N`
//! lines and `HYDRA_LAUNCH_EXTRA_ARGS`), no volpexrun flag about hosts; a worker pod
//! deleted mid-run (every process of the pod SIGKILLed, sshd included) is a lost host whose
//! replicas a spare pod takes; a pod being deleted runs its `preStop` hook first, which
//! writes the notice file `--preemption-notice file=` watches, and its replicas hand over
//! before the grace period ends.
//!
//! What stands in for the cluster: the pods' DNS names are the test hosts' names (`h0`,
//! `h1`, ...), and the image's `/etc/ssh/ssh_config` (where the operator's images set the
//! sshd port) is the test net's ssh config, given with `-F` in the ssh arguments. No
//! Kubernetes cluster runs on the test machine (Debian packages none, and the kind and k3s
//! images would be fetched from the network), so `deploy/kubernetes/` is checked by these
//! tests of its contract, not run on a cluster. Reference: issue 46 item 3;
//! deploy/kubernetes/README.md.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use volpex_tests::testhosts::TestNet;
use volpex_tests::{bin, example, run, spawn_with, LiveJob, Run};

const DEADLINE: Duration = Duration::from_secs(180);
const WAIT: Duration = Duration::from_secs(60);
/// Heartbeats every 0.5 s; a host silent for 3 s is dead.
const BEATS: &[&str] = &[
    "--heartbeat-interval",
    "0.5",
    "--heartbeat-timeout",
    "3",
    "--peer-timeout",
    "3",
];
/// Long enough (several seconds) to delete a pod well inside it.
const LONG_RING: &[&str] = &["--rounds", "800", "--work-ms", "3", "--payload", "256"];
/// `regen`: 400 rounds, rank 0 works 20 ms each (about 8 s), a checkpoint every round.
const REGEN: &[&str] = &["400", "20", "checkpoint"];

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The ring's output run locally (the result every run must give).
fn ring_reference() -> &'static str {
    static OUT: OnceLock<String> = OnceLock::new();
    OUT.get_or_init(|| {
        run(
            &["-n", "2", "-r", "2"],
            &example("ring"),
            LONG_RING,
            DEADLINE,
        )
        .ok()
        .to_string()
    })
}

/// The launcher pod's environment for Open MPI (`hydra`: for MPICH) over `net`, its
/// hostfile written with `slots` per worker pod.
fn operator_env(net: &TestNet, slots: u32, hydra: bool) -> Vec<(String, String)> {
    let lines: Vec<String> = (0..net.len())
        .map(|i| match hydra {
            false => format!("{} slots={slots}", net.name(i)),
            true => format!("{}:{slots}", net.name(i)),
        })
        .collect();
    let hostfile = net.hostfile("hostfile", &lines).display().to_string();
    // The operator's ssh options, and the image's ssh_config (the port) with them.
    let ssh_args = format!(
        "-o ConnectionAttempts=10 -F {}",
        net.dir.join("ssh_config").display()
    );
    let (file_var, args_var) = match hydra {
        false => ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args"),
        true => ("HYDRA_HOST_FILE", "HYDRA_LAUNCH_EXTRA_ARGS"),
    };
    vec![
        ("K_MPI_JOB_ROLE".into(), "launcher".into()),
        ("OMPI_MCA_orte_keep_fqdn_hostnames".into(), "true".into()),
        (file_var.into(), hostfile),
        (args_var.into(), ssh_args),
        ("VOLPEX_LOG".into(), "volpexrun=info".into()),
    ]
}

/// Starts volpexrun in the launcher's place (the test net's head) with `env` and no
/// flag about hosts or ssh.
fn launch(
    net: &TestNet,
    env: &[(String, String)],
    flags: &[&str],
    program: &std::path::Path,
    args: &[&str],
) -> LiveJob {
    let head = net.head();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut la: Vec<&str> = BEATS.to_vec();
    la.extend_from_slice(flags);
    spawn_with(&["ip", "netns", "exec", &head], &env, &la, program, args)
}

/// The hosts the report puts the replicas of incarnation `inc` on.
fn hosts_of(run: &Run, inc: u64) -> Vec<String> {
    run.report
        .as_ref()
        .and_then(|r| r["processes"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter(|p| p["incarnation"].as_u64() == Some(inc))
        .map(|p| p["host"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The operator's environment alone runs the job on its worker pods, in Open MPI's and
/// in MPICH's form.
#[test]
fn an_mpijob_launcher_runs_over_the_operators_hostfile_and_environment() {
    let _one = serial();
    let expect = ring_reference();
    let net = TestNet::new(2);
    for hydra in [false, true] {
        let env = operator_env(&net, 2, hydra);
        let job = launch(
            &net,
            &env,
            &["-n", "2", "-r", "2"],
            &example("ring"),
            LONG_RING,
        );
        let run = job.wait(DEADLINE);
        assert_eq!(run.ok(), expect, "hydra {hydra}\n{}", run.stderr);
        let var = &env[2].0;
        assert!(
            run.stderr.contains(&format!(
                "running over the hostfile {} that {var} names",
                env[2].1
            )),
            "{}",
            run.stderr
        );
        let mut hosts = hosts_of(&run, 0);
        hosts.sort();
        assert_eq!(hosts, ["h0", "h0", "h1", "h1"], "{}", run.stderr);
        run.assert_no_leftovers();
    }
    net.assert_idle(&[]);
}

/// A hostfile the environment names that cannot be read is said with the variable's name,
/// before anything starts.
#[test]
fn a_missing_operator_hostfile_is_named_with_its_variable() {
    let _one = serial();
    let net = TestNet::new(1);
    let mut env = operator_env(&net, 1, false);
    env[2].1 = net.dir.join("no-such-hostfile").display().to_string();
    let run = launch(&net, &env, &["-n", "1"], &example("ring"), LONG_RING).wait(WAIT);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("OMPI_MCA_orte_default_hostfile names the hostfile (no --hosts given)"),
        "{}",
        run.stderr
    );
}

/// A worker pod deleted mid-run (all its processes SIGKILLed, sshd with them) is a lost
/// host: its replicas are regenerated on the spare pod and the result does not change.
#[test]
fn a_deleted_worker_pod_is_a_lost_host_and_the_spare_pod_takes_its_replicas() {
    let _one = serial();
    let expect = ring_reference();
    let mut net = TestNet::new(5);
    let env = operator_env(&net, 1, false);
    let mut job = launch(
        &net,
        &env,
        &["-n", "2", "-r", "2"],
        &example("ring"),
        LONG_RING,
    );
    let started = job.wait_stderr(WAIT, |l| l.contains("rendezvous complete"));
    assert!(started.is_some(), "the job's processes never registered");
    std::thread::sleep(Duration::from_millis(700));
    // One slot per pod, spread: h0 to h3 run 0.0, 1.0, 0.1, 1.1; h4 is the spare.
    let killed = net.kill_host(1);
    eprintln!("deleted pod h1: {killed} processes killed");
    let run = job.wait(DEADLINE);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(hosts_of(&run, 1), ["h4"], "{}", run.stderr);
    run.assert_no_leftovers();
    net.assert_idle(&[1]);
}

/// A pod being deleted runs its preStop hook before its SIGTERM: the hook writes the
/// notice file (`echo 30 > /notices/$(hostname)`), and every replica of the pod hands over
/// to the spare pod before the grace period ends; then the pod goes (SIGKILL), and nothing
/// is lost.
#[test]
fn a_terminating_pod_hands_its_replicas_over_through_the_prestop_file() {
    let _one = serial();
    let base = run(&["-n", "2", "-r", "2"], &bin("regen"), REGEN, DEADLINE).regen_lines();
    let mut net = TestNet::new(5);
    let env = operator_env(&net, 1, false);
    let notices = net.dir.join("notices");
    std::fs::create_dir_all(&notices).expect("notice directory");
    let flag = format!("file={}/{{host}}", notices.display());
    let mut job = launch(
        &net,
        &env,
        &["-n", "2", "-r", "2", "--preemption-notice", &flag],
        &bin("regen"),
        REGEN,
    );
    let watching = job.wait_stderr(WAIT, |l| l.contains("watching for preemption notices"));
    assert!(watching.is_some(), "no watcher");
    let going = job.wait_stderr(WAIT, |l| l.contains("regen: rank 0 round 100"));
    assert!(going.is_some(), "the job never got going");
    // The preStop hook of pod h1.
    std::fs::write(notices.join("h1"), "30\n").expect("write the notice");
    let done = job.wait_stderr(WAIT, |l| l.contains("every replica handed over"));
    assert!(done.is_some(), "the handovers never finished");
    // The grace period is over for the pod: everything in it is killed.
    net.kill_host(1);
    let run = job.wait(DEADLINE);
    assert_eq!(run.regen_lines(), base, "{}", run.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let noticed = run.events("notice");
    assert_eq!(noticed.len(), 1, "the replica on h1\n{}", run.stderr);
    for n in &noticed {
        assert!(
            n["detail"]
                .as_str()
                .is_some_and(|d| d.contains("deadline in 30.0 s")),
            "{n}"
        );
        let (at, handed, deadline) = (
            n["t_s"].as_f64().unwrap_or(f64::NAN),
            n["handed_over_s"].as_f64().unwrap_or(f64::NAN),
            n["deadline_s"].as_f64().unwrap_or(f64::NAN),
        );
        assert!(at <= handed && handed < deadline, "{n}");
    }
    for kind in ["killed", "died", "retired"] {
        assert!(
            run.events(kind).is_empty(),
            "a replica was lost\n{}",
            run.stderr
        );
    }
    assert_eq!(hosts_of(&run, 1), ["h4"], "{}", run.stderr);
    run.assert_no_leftovers();
    net.assert_idle(&[1]);
}

/// Issue 46's target: a job on 4 pods with 2 spares gets 8 notices over its run, one pod
/// at a time, each pod that runs a replica noticed in turn: the pod's replica hands over
/// to a free pod, the pod is deleted (its processes killed) and recreated under the same
/// name (sshd back, no notice file), and becomes a spare again (a lost host is tried
/// again). The output is the failure-free run's and no rank is lost.
#[test]
fn eight_notices_on_four_pods_with_spares_lose_nothing() {
    let _one = serial();
    const ROUNDS: &[&str] = &["1800", "20", "checkpoint"];
    let base = run(&["-n", "2", "-r", "2"], &bin("regen"), ROUNDS, DEADLINE).regen_lines();
    let mut net = TestNet::new(6);
    let env = operator_env(&net, 1, false);
    let notices = net.dir.join("notices");
    std::fs::create_dir_all(&notices).expect("notice directory");
    let flag = format!("file={}/{{host}}", notices.display());
    let mut job = launch(
        &net,
        &env,
        &["-n", "2", "-r", "2", "--preemption-notice", &flag],
        &bin("regen"),
        ROUNDS,
    );
    let going = job.wait_stderr(WAIT, |l| l.contains("regen: rank 0 round 100"));
    assert!(going.is_some(), "the job never got going");
    // Where each replica runs (rank-major: 0.0, 0.1, 1.0, 1.1), from the spread placement
    // of 4 processes on pods of one slot, then from the live lines.
    let mut at = [0usize, 2, 1, 3];
    let mut noticed = [0u32; 6];
    // When each pod may take a replica (none while it runs one): a recreated pod once its
    // notice's deadline passed and volpexrun tries a lost host again (5 s after the loss).
    let mut ready: [Option<Instant>; 6] = [
        None,
        None,
        None,
        None,
        Some(Instant::now()),
        Some(Instant::now()),
    ];
    for n in 0..8 {
        let free = ready
            .iter()
            .flatten()
            .min()
            .copied()
            .expect("a pod to move to");
        std::thread::sleep(free.saturating_duration_since(Instant::now()));
        // The pod with a replica noticed the fewest times so far.
        let (slot, pod) = at
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, h)| (noticed[h], h))
            .expect("four replicas");
        noticed[pod] += 1;
        let name = net.name(pod);
        std::fs::write(notices.join(&name), "4\n").expect("write the notice");
        let (rank, replica) = (slot / 2, slot % 2);
        let moved = job.wait_stderr(WAIT, |l| {
            l.contains(&format!(
                "rank {rank} replica {replica}: starting incarnation"
            ))
        });
        let to = moved
            .as_deref()
            .and_then(|l| l.split(" on ").nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|h| h.strip_prefix('h'))
            .and_then(|i| i.parse::<usize>().ok())
            .unwrap_or_else(|| {
                panic!(
                    "notice {n} on {name}: no new incarnation ({moved:?})\n{}",
                    job.stderr_so_far()
                )
            });
        let done = job.wait_stderr(WAIT, |l| {
            l.contains(&format!("for {name}: every replica handed over"))
        });
        assert!(
            done.is_some(),
            "notice {n} on {name}: the handover never finished\n{}",
            job.stderr_so_far()
        );
        at[slot] = to;
        ready[to] = None;
        // The pod goes, and comes back under its name without its notice file.
        net.kill_host(pod);
        std::fs::remove_file(notices.join(&name)).expect("remove the notice");
        net.restart_sshd(pod);
        ready[pod] = Some(Instant::now() + Duration::from_secs(6));
        eprintln!("notice {n}: {rank}.{replica} moved from {name} to h{to}");
    }
    let run = job.wait(DEADLINE);
    assert_eq!(run.regen_lines(), base, "{}", run.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.events("notice").len(), 8, "{}", run.stderr);
    for kind in ["killed", "died", "retired"] {
        assert!(
            run.events(kind).is_empty(),
            "a replica was lost\n{}",
            run.stderr
        );
    }
    run.assert_no_leftovers();
}
