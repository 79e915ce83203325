//! volpexrun across real hosts: network namespaces with their own addresses, each running
//! a real sshd, reached over ssh. Results must equal the local run; hosts cut off silently,
//! killed whole, or unreachable at start must not change them while every rank keeps a
//! replica. Reference: DESIGN.md "Launcher" and "Failure detection"; P2P-MPI (IPDPS 2008)
//! section 4.3 for placement.
//!
//! Needs root, iproute2, openssh-server and rsync (`.ci/run` installs them); without them
//! the tests fail with what is missing. They run one at a time (a lock), so the timeouts
//! they use are not stretched by each other's load.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use volpex_tests::testhosts::TestNet;
use volpex_tests::{example, run, spawn_with, LiveJob, Run};

const DEADLINE: Duration = Duration::from_secs(180);
/// Heartbeats every 0.5 s; a host silent for 3 s is dead (peers' TCP bound: 3 s too).
const BEATS: &[&str] = &[
    "--heartbeat-interval",
    "0.5",
    "--heartbeat-timeout",
    "3",
    "--peer-timeout",
    "3",
];
const RING: &[&str] = &["--rounds", "200", "--work-ms", "2", "--payload", "256"];
/// Long enough (several seconds) to cut a host well inside it.
const LONG_RING: &[&str] = &["--rounds", "800", "--work-ms", "3", "--payload", "256"];
const STENCIL: &[&str] = &["--cells", "300", "--iters", "150", "--work-ms", "2"];

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The local run's output (computed once per program and arguments).
fn local_reference(name: &str, args: &[&str]) -> String {
    static CACHE: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
    let key = format!("{name} {args:?}");
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, out)) = cache.iter().find(|(k, _)| *k == key) {
        return out.clone();
    }
    let out = run(&["-n", "4", "-r", "2"], &example(name), args, DEADLINE)
        .ok()
        .to_string();
    cache.push((key, out.clone()));
    out
}

/// Starts volpexrun in the head namespace over `net`'s hosts.
fn spawn_on(net: &TestNet, extra: &[&str], name: &str, args: &[&str]) -> LiveJob {
    spawn_beating(net, BEATS, extra, name, args)
}

/// `spawn_on` with heartbeat options `beats`.
fn spawn_beating(
    net: &TestNet,
    beats: &[&str],
    extra: &[&str],
    name: &str,
    args: &[&str],
) -> LiveJob {
    let head = net.head();
    let ssh = net.ssh_cmd();
    let mut la: Vec<&str> = vec!["--ssh-cmd", &ssh];
    la.extend_from_slice(beats);
    la.extend_from_slice(extra);
    spawn_with(
        &["ip", "netns", "exec", &head],
        &[("VOLPEX_LOG", "volpexrun=info")],
        &la,
        &example(name),
        args,
    )
}

fn hostfile(net: &TestNet, slots: u32) -> String {
    let lines: Vec<String> = (0..net.len())
        .map(|i| format!("{} slots={slots}  # test host {}", net.name(i), net.addr(i)))
        .collect();
    net.hostfile("hosts.txt", &lines)
        .to_string_lossy()
        .into_owned()
}

fn report_procs(run: &Run) -> Vec<serde_json::Value> {
    run.report
        .as_ref()
        .and_then(|r| r["processes"].as_array().cloned())
        .unwrap_or_default()
}

/// The replicas the report puts on `host`, with their states.
fn on_host(run: &Run, host: &str) -> Vec<(u64, u64, String, String)> {
    report_procs(run)
        .iter()
        .filter(|p| p["host"] == host)
        .map(|p| {
            (
                p["rank"].as_u64().unwrap_or(99),
                p["replica"].as_u64().unwrap_or(99),
                p["state"].as_str().unwrap_or("?").to_string(),
                p["detail"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Prints volpexrun's own lines (summary, host reports) into the test log.
fn show_summary(run: &Run) {
    for l in run.stderr.lines().filter(|l| l.starts_with("volpexrun:")) {
        eprintln!("  {l}");
    }
}

fn wait_rendezvous(job: &mut LiveJob) -> Duration {
    let t0 = Instant::now();
    job.wait_stderr(Duration::from_secs(60), |l| {
        l.contains("rendezvous complete")
    })
    .expect("the job's processes registered");
    t0.elapsed()
}

#[test]
fn four_hosts_give_the_local_result_with_anti_affinity() {
    let _one = serial();
    let net = TestNet::new(4);
    let hf = hostfile(&net, 2);
    for (name, args) in [("ring", RING), ("stencil", STENCIL)] {
        let expect = local_reference(name, args);
        let t0 = Instant::now();
        let run =
            spawn_on(&net, &["-n", "4", "-r", "2", "--hosts", &hf], name, args).wait(DEADLINE);
        assert_eq!(run.ok(), expect, "{name} across 4 hosts\n{}", run.stderr);
        eprintln!(
            "{name}: n=4 r=2 over 4 ssh hosts in {:.2} s",
            t0.elapsed().as_secs_f64()
        );
        let procs = report_procs(&run);
        assert_eq!(procs.len(), 8);
        for rank in 0..4u64 {
            let hosts: Vec<&str> = procs
                .iter()
                .filter(|p| p["rank"] == rank)
                .filter_map(|p| p["host"].as_str())
                .collect();
            assert_eq!(hosts.len(), 2);
            assert_ne!(hosts[0], hosts[1], "rank {rank}: replicas share a host");
        }
        // spread over 2 slots each: team 0 on h0 h1, team 1 on h2 h3.
        assert_eq!(
            on_host(&run, "h0")
                .iter()
                .map(|p| (p.0, p.1))
                .collect::<Vec<_>>(),
            [(0, 0), (1, 0)]
        );
        run.assert_no_leftovers();
        net.assert_idle(&[]);
    }
    // Fault injection reaches remote replicas through their host's agent.
    let expect = local_reference("ring", RING);
    let run = spawn_on(
        &net,
        &[
            "-n",
            "4",
            "-r",
            "2",
            "--hosts",
            &hf,
            "--fault",
            "3.1:kill@0.3",
            "--fault",
            "0.0:exit@sends=20",
        ],
        "ring",
        RING,
    )
    .wait(DEADLINE);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    assert_eq!(run.state(3, 1), "failed", "{}", run.stderr);
    assert_eq!(run.state(0, 0), "failed", "{}", run.stderr);
    assert!(
        run.stderr.contains("on h3) failed: killed by SIGKILL"),
        "{}",
        run.stderr
    );
    run.assert_no_leftovers();
    net.assert_idle(&[]);
}

#[test]
fn a_host_cut_off_silently_is_declared_dead_and_the_job_finishes() {
    let _one = serial();
    let net = TestNet::new(4);
    let hf = hostfile(&net, 2);
    let expect = local_reference("ring", LONG_RING);
    let mut job = spawn_on(
        &net,
        &["-n", "4", "-r", "2", "--hosts", &hf],
        "ring",
        LONG_RING,
    );
    wait_rendezvous(&mut job);
    std::thread::sleep(Duration::from_millis(700));
    // h1 runs 2.0 and 3.0: their link goes down, the processes stay alive.
    let cut_at = Instant::now();
    net.cut(1);
    let declared = job.wait_stderr(Duration::from_secs(60), |l| {
        l.contains("silent on host h1") && l.contains("declared dead")
    });
    let detection = cut_at.elapsed();
    if declared.is_none() {
        panic!(
            "no replica of h1 was declared dead\n{}",
            job.wait(DEADLINE).stderr
        );
    }
    eprintln!(
        "silent host detected {:.2} s after the cut (heartbeat 0.5 s, timeout 3 s, peer timeout 3 s)",
        detection.as_secs_f64()
    );
    let run = job.wait(DEADLINE);
    show_summary(&run);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    let h1 = on_host(&run, "h1");
    assert_eq!(h1.len(), 2, "{h1:?}");
    for (rank, replica, state, detail) in &h1 {
        assert_eq!(state, "failed", "{rank}.{replica}: {detail}");
        assert!(detail.contains("silent"), "{rank}.{replica}: {detail}");
    }
    assert!(
        run.stderr.contains("on h1) failed: silent"),
        "{}",
        run.stderr
    );
    // The processes on the cut host end themselves: they stop hearing the launcher.
    if let Err(left) = net.wait_idle(1, Duration::from_secs(30)) {
        panic!("processes left on the cut host: {left:?}");
    }
    net.assert_idle(&[1]);
}

#[test]
fn killing_every_process_on_a_host_changes_nothing() {
    let _one = serial();
    let mut net = TestNet::new(4);
    let hf = hostfile(&net, 2);
    let expect = local_reference("ring", LONG_RING);
    let mut job = spawn_on(
        &net,
        &["-n", "4", "-r", "2", "--hosts", &hf],
        "ring",
        LONG_RING,
    );
    wait_rendezvous(&mut job);
    std::thread::sleep(Duration::from_millis(700));
    // h2 runs 0.1 and 1.1 (and its sshd, the session, the agent).
    let killed = net.kill_host(2);
    eprintln!("killed {killed} processes on h2");
    let run = job.wait(DEADLINE);
    show_summary(&run);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    for (rank, replica, state, detail) in on_host(&run, "h2") {
        assert_eq!(state, "failed", "{rank}.{replica}: {detail}");
    }
    run.assert_no_leftovers();
    net.assert_idle(&[2]);
}

#[test]
fn unreachable_hosts_at_start_are_reported_and_covered_ranks_run() {
    let _one = serial();
    let mut net = TestNet::new(4);
    let hf = hostfile(&net, 2);
    let expect = local_reference("ring", RING);
    // h3 (2.1, 3.1) refuses ssh; h2 (0.1, 1.1) is silent: its SYNs are dropped.
    net.stop_sshd(3);
    net.cut(2);
    let run = spawn_on(
        &net,
        &[
            "-n",
            "4",
            "-r",
            "2",
            "--hosts",
            &hf,
            "--launch-timeout",
            "4",
        ],
        "ring",
        RING,
    )
    .wait(DEADLINE);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    assert!(run.stderr.contains("host h3 unreachable"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("host h2 unreachable: no answer within --launch-timeout 4.0 s"),
        "{}",
        run.stderr
    );
    for h in ["h2", "h3"] {
        for (rank, replica, state, detail) in on_host(&run, h) {
            assert_eq!(state, "failed", "{rank}.{replica}");
            assert!(
                detail.contains(&format!("host {h} unreachable")),
                "{detail}"
            );
        }
    }
    run.assert_no_leftovers();
    net.assert_idle(&[2, 3]);
}

#[test]
fn unreachable_hosts_that_leave_a_rank_uncovered_are_refused() {
    let _one = serial();
    let mut net = TestNet::new(4);
    let hf = hostfile(&net, 2);
    // h0 has 0.0 and 1.0, h2 has 0.1 and 1.1: ranks 0 and 1 have nowhere to run.
    net.stop_sshd(0);
    net.stop_sshd(2);
    let run = spawn_on(&net, &["-n", "4", "-r", "2", "--hosts", &hf], "ring", RING).wait(DEADLINE);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let error = run.the_error();
    assert!(
        error.contains("cannot start the job: ranks 0, 1 have no replica on a reachable host"),
        "{}",
        error
    );
    assert!(
        error.contains("h0 (") && error.contains("h2 ("),
        "{}",
        error
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    run.assert_no_leftovers();
    net.assert_idle(&[0, 2]);
}

#[test]
fn sixteen_ranks_times_three_start_across_the_hosts() {
    let _one = serial();
    let net = TestNet::new(6);
    let hf = hostfile(&net, 8);
    // stencil: the ring example's checksum overflows (debug build) from rank 12 on.
    let args = &["--cells", "64", "--iters", "3"];
    let expect = run(&["-n", "16"], &example("stencil"), args, DEADLINE)
        .ok()
        .to_string();
    let t0 = Instant::now();
    let mut job = spawn_on(
        &net,
        &["-n", "16", "-r", "3", "--hosts", &hf],
        "stencil",
        args,
    );
    let rendezvous = wait_rendezvous(&mut job);
    let run = job.wait(DEADLINE);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("rendezvous complete"))
        .unwrap_or("");
    eprintln!(
        "16 x 3 over 6 ssh hosts: all 48 processes registered after {:.2} s (seen by the test), \
         whole job {:.2} s; volpexrun: {line}",
        rendezvous.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    assert!(line.contains("48 of 48 replicas registered"), "{line}");
    run.assert_no_leftovers();
    net.assert_idle(&[]);
}

#[test]
fn stage_copies_the_program_and_removes_it() {
    let _one = serial();
    let net = TestNet::new(2);
    let hf = hostfile(&net, 2);
    let expect = run(&["-n", "2", "-r", "2"], &example("ring"), RING, DEADLINE)
        .ok()
        .to_string();
    let run = spawn_on(
        &net,
        &[
            "-n",
            "2",
            "-r",
            "2",
            "--hosts",
            &hf,
            "--stage",
            "-x",
            "VOLPEX_LOG=info",
        ],
        "ring",
        RING,
    )
    .wait(DEADLINE);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    // The processes ran the staged copies (their pids are in the report).
    let staged: Vec<String> = std::fs::read_dir("/tmp")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("volpex-stage-"))
                .collect()
        })
        .unwrap_or_default();
    run.assert_no_leftovers();
    net.assert_idle(&[]);
    let after: Vec<String> = std::fs::read_dir("/tmp")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("volpex-stage-"))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        after.is_empty(),
        "staging directories left: {after:?} (before: {staged:?})"
    );
}

#[test]
fn bad_host_input_is_refused_before_anything_starts() {
    let dir = volpex_tests::TempPath::new("hosts.txt");
    std::fs::write(&dir.0, "h0 slots=2\nh1 slots=two\n").expect("write");
    let hf = dir.0.to_string_lossy().into_owned();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["-n", "2", "-r", "2", "--hosts", &hf, "true"],
            format!("{hf}:2: slots=\"two\""),
        ),
        (
            vec!["-n", "4", "-r", "3", "--host", "a:8,b:8", "true"],
            "at least 3 hosts are needed; 2 given (a, b)".into(),
        ),
        (
            vec!["-n", "4", "-r", "2", "--host", "a:2,b:1,c:1", "true"],
            "offer 4 usable slots, 4 slot(s) missing".into(),
        ),
        (
            vec!["-n", "2", "--hosts", "/nonexistent/hosts", "true"],
            "cannot read hostfile /nonexistent/hosts".into(),
        ),
        (
            vec![
                "-n",
                "2",
                "--host",
                "a",
                "--heartbeat-timeout",
                "0.2",
                "true",
            ],
            "must be longer than --heartbeat-interval".into(),
        ),
    ];
    for (args, want) in cases {
        let out = std::process::Command::new(volpex_tests::volpexrun())
            .args(&args)
            .output()
            .expect("run volpexrun");
        let err = String::from_utf8_lossy(&out.stderr);
        // A command line wrong in itself, or a hostfile that cannot be read or parsed,
        // is a usage error (2); hosts that do not fit the job, 1.
        let usage = want.contains("--heartbeat-interval")
            || want.contains("hostfile")
            || want.starts_with(&hf);
        assert_eq!(
            out.status.code(),
            Some(if usage { 2 } else { 1 }),
            "{args:?}: {err}"
        );
        assert!(err.contains(&want), "{args:?}: expected {want:?} in\n{err}");
        assert_eq!(err.lines().count(), 1, "one clear error: {err}");
    }
    let out = std::process::Command::new(volpex_tests::volpexrun())
        .args([
            "-n",
            "4",
            "-r",
            "2",
            "--host",
            "a:4,b:4,c:4",
            "--map",
            "concentrate",
            "--print-map",
            "true",
        ])
        .output()
        .expect("run volpexrun");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("team 0: a\nteam 1: b\n"), "{text}");
}

#[test]
fn bind_team_splits_a_hosts_cpus_between_the_teams_it_runs() {
    let _one = serial();
    let net = TestNet::new(3);
    let hf = hostfile(&net, 2);
    let allowed = volpex_tests::allowed_cpus().expect("our CPU affinity");
    let base = volpex_tests::TempPath::new("cpus");
    // Spread: h0 runs 0.0 1.0 (team 0 only), h1 runs 0.1 and 2.0 (both teams).
    // Every replica writes its file (and, until renamed, a `.part`).
    let all: Vec<(u32, u32)> = (0..3).flat_map(|r| (0..2).map(move |k| (r, k))).collect();
    let files: Vec<((u32, u32), volpex_tests::TempPath)> = all
        .iter()
        .map(|&(r, k)| {
            let f = volpex_tests::TempPath(format!("{}.{r}.{k}", base.0.display()).into());
            ((r, k), f)
        })
        .collect();
    let _parts: Vec<volpex_tests::TempPath> = files
        .iter()
        .map(|(_, f)| volpex_tests::TempPath(format!("{}.part", f.0.display()).into()))
        .collect();
    let head = net.head();
    let ssh = net.ssh_cmd();
    let mut la: Vec<&str> = vec!["--ssh-cmd", &ssh];
    la.extend_from_slice(BEATS);
    la.extend_from_slice(&["-n", "3", "-r", "2", "--hosts", &hf, "--bind", "team"]);
    let base_arg = base.0.display().to_string();
    let run = spawn_with(
        &["ip", "netns", "exec", &head],
        &[("VOLPEX_LOG", "volpexrun=info")],
        &la,
        &volpex_tests::bin("cpus"),
        &[&base_arg],
    )
    .wait(DEADLINE);
    run.ok();
    assert_eq!(on_host(&run, "h1").len(), 2, "{}", run.stderr);
    let cpus = |who: (u32, u32)| -> Vec<usize> {
        let f = &files.iter().find(|(w, _)| *w == who).expect("listed").1;
        let text = std::fs::read_to_string(&f.0).expect("the replica wrote its CPUs");
        let first = text.lines().next().expect("a line");
        volpex_proto::launch::parse_cpus(first).expect("a CPU list")
    };
    // One team on h0: left alone.
    assert_eq!(cpus((0, 0)), allowed);
    assert_eq!(cpus((1, 0)), allowed);
    // Two teams on h1: their own CPUs each.
    let (t1, t0) = (cpus((0, 1)), cpus((2, 0)));
    if allowed.len() >= 2 {
        assert!(t1.iter().all(|c| !t0.contains(c)), "{t0:?} / {t1:?}");
    }
    run.assert_no_leftovers();
    net.assert_idle(&[]);
}

/// Binding follows the living processes on remote hosts too: h1 runs 0.1 and 2.0 (two
/// teams, a share of the CPUs each); once 2.0 dies, its agent lets 0.1 use every CPU
/// (issue 16, item 2).
#[test]
fn a_hosts_agent_gives_a_dead_teams_cpus_to_the_survivors() {
    let _one = serial();
    let net = TestNet::new(3);
    let hf = hostfile(&net, 2);
    let allowed = volpex_tests::allowed_cpus().expect("our CPU affinity");
    let base = volpex_tests::TempPath::new("rebind");
    let files: Vec<volpex_tests::TempPath> = (0..3)
        .map(|r| volpex_tests::TempPath(format!("{}.{r}.1", base.0.display()).into()))
        .collect();
    // Team 0's replicas write theirs too: removed as well.
    let _team0: Vec<volpex_tests::TempPath> = (0..3)
        .flat_map(|r| {
            let f = format!("{}.{r}.0", base.0.display());
            [format!("{f}.part"), f].map(|p| volpex_tests::TempPath(p.into()))
        })
        .collect();
    let _parts: Vec<volpex_tests::TempPath> = files
        .iter()
        .map(|f| volpex_tests::TempPath(format!("{}.part", f.0.display()).into()))
        .collect();
    let head = net.head();
    let ssh = net.ssh_cmd();
    let mut la: Vec<&str> = vec!["--ssh-cmd", &ssh];
    la.extend_from_slice(BEATS);
    la.extend_from_slice(&[
        "-n",
        "3",
        "-r",
        "2",
        "--hosts",
        &hf,
        "--bind",
        "team",
        // A new incarnation of 2.0 would take the freed slot and its CPUs back.
        "--regenerate",
        "never",
        "--fault",
        "2.0:kill@0.5",
    ]);
    let base_arg = base.0.display().to_string();
    // 0.1 waits until it may use every CPU, whether 2.0 dies before or after it starts.
    let expect = format!("0.1={}", volpex_proto::launch::format_cpus(&allowed));
    let run = spawn_with(
        &["ip", "netns", "exec", &head],
        &[("VOLPEX_LOG", "volpexrun=info")],
        &la,
        &volpex_tests::bin("rebind"),
        &[&base_arg, "--teams", "1", "--expect", &expect],
    )
    .wait(DEADLINE);
    run.ok();
    let on_h1: Vec<(u64, u64)> = on_host(&run, "h1").iter().map(|p| (p.0, p.1)).collect();
    assert!(
        on_h1.contains(&(0, 1)) && on_h1.contains(&(2, 0)),
        "{on_h1:?}"
    );
    let text = std::fs::read_to_string(&files[0].0).expect("0.1 wrote its CPUs");
    for line in text.lines() {
        let cpus = volpex_proto::launch::parse_cpus(line).expect("a CPU list");
        assert_eq!(
            cpus, allowed,
            "every thread of 0.1 may use every CPU: {text}"
        );
    }
    run.assert_no_leftovers();
    net.assert_idle(&[]);
}

/// Heartbeats every 0.1 s, a 0.5 s timeout: a CPU cgroup (whose period is 1 s at most)
/// can starve a process past it.
const FAST_BEATS: &[&str] = &["--heartbeat-interval", "0.1", "--heartbeat-timeout", "0.5"];

/// The pid of the first incarnation of replica `rank.replica`, on whichever host of `net`.
fn replica_pid(net: &TestNet, rank: u32, replica: u32) -> Option<i32> {
    (0..net.len())
        .flat_map(|i| net.pids(i))
        .find(|&p| volpex_tests::is_replica(p, rank, replica, 0))
}

/// The long ring at `-n 4 -r 2` over `net`'s hosts with `FAST_BEATS`, once its
/// rendezvous is complete: the failure-free output, the job, and the pid of replica 1.1.
fn fast_beating_ring(net: &TestNet) -> (String, LiveJob, i32) {
    let hf = hostfile(net, 4);
    let expect = local_reference("ring", LONG_RING);
    let mut job = spawn_beating(
        net,
        FAST_BEATS,
        &["-n", "4", "-r", "2", "--hosts", &hf],
        "ring",
        LONG_RING,
    );
    wait_rendezvous(&mut job);
    let pid = replica_pid(net, 1, 1).expect("1.1 runs on a test host");
    (expect, job, pid)
}

/// Issue 42: a replica on another host that its machine starves (runnable, but its
/// heartbeat thread gets no CPU past the heartbeat timeout) is not declared dead: volpexrun
/// asks that host's agent, which finds it runnable, and waits for it; the job ends with
/// every replica finished. (The test hosts share the machine's cgroups.)
#[test]
fn a_starved_replica_on_a_host_is_not_declared_dead() {
    let _one = serial();
    let net = TestNet::new(2);
    let (expect, mut job, pid) = fast_beating_ring(&net);
    let Some(throttle) = volpex_tests::Throttle::new(pid) else {
        volpex_tests::prerequisite(false, "a writable CPU cgroup (root)");
        return;
    };
    // Starved past the 0.5 s timeout: either waited for, or (the defect) declared dead.
    let seen = job.wait_stderr(DEADLINE, |l| {
        l.contains("starved of CPU, not dead") || l.contains("declared dead")
    });
    drop(throttle);
    let run = job.wait(DEADLINE);
    show_summary(&run);
    let seen = seen.unwrap_or_else(|| panic!("1.1 was never silent\n{}", run.stderr));
    assert!(
        seen.contains("replica 1.1") && seen.contains("starved of CPU, not dead"),
        "a starved replica was declared dead: {seen}\n{}",
        run.stderr
    );
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    for p in report_procs(&run) {
        let state = p["state"].as_str().unwrap_or("?");
        assert!(
            state == "finished" || state == "ended",
            "{p}\n{}",
            run.stderr
        );
    }
    run.assert_no_leftovers();
    net.assert_idle(&[]);
}

/// Issue 42: a stopped replica on another host is declared dead at the heartbeat timeout,
/// not waited for as a starved one: its host's agent finds it stopped.
#[test]
fn a_stopped_replica_on_a_host_is_declared_dead() {
    let _one = serial();
    let net = TestNet::new(2);
    let (expect, job, pid) = fast_beating_ring(&net);
    // volpexrun ends it (by its agent) once it is declared dead.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .expect("stop 1.1");
    let run = job.wait(DEADLINE);
    show_summary(&run);
    assert_eq!(run.ok(), expect, "{}", run.stderr);
    let stopped: Vec<serde_json::Value> = report_procs(&run)
        .into_iter()
        .filter(|p| p["rank"] == 1 && p["replica"] == 1)
        .collect();
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    let detail = stopped[0]["detail"].as_str().unwrap_or("");
    assert_eq!(stopped[0]["state"], "failed", "{detail}");
    // Declared at its timeout (0.5 s) give or take the agent's answer, before the 5 s a
    // starved replica is waited for. (Other replicas may be found starved on a loaded
    // machine, and so may 1.1 before it was stopped.)
    let silent_for: f64 = detail
        .split("no heartbeat for ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("1.1: {detail}"));
    assert!(silent_for < 5.0, "1.1 waited for as starved: {detail}");
    run.assert_no_leftovers();
    net.assert_idle(&[]);
}
