//! volpexrun's own behaviour: flags, bad input, timeouts, being interrupted.
//! Reference: DESIGN.md "Launcher".

use std::process::Command;
use std::time::Duration;
use volpex_proto::launch::parse_cpus;
use volpex_tests::allowed_cpus;
use volpex_tests::{bin, example, run, spawn, volpexrun, TempPath};

const LONG_RING: &[&str] = &["--rounds", "100000", "--work-ms", "1"];

#[test]
fn tag_output_prefixes_the_rank() {
    let r = run(
        &["-n", "3", "-r", "2", "--tag-output"],
        &example("ring"),
        &["--rounds", "3"],
        Duration::from_secs(60),
    );
    assert!(r.ok().starts_with("[0] ring: ranks=3"), "{}", r.stdout);
}

#[test]
fn timeout_ends_every_process_and_says_so() {
    let r = run(
        &["-n", "3", "-r", "2", "--timeout", "1"],
        &example("ring"),
        LONG_RING,
        Duration::from_secs(60),
    );
    // As timeout(1).
    assert_eq!(r.code, Some(124), "{}", r.stderr);
    assert!(r.stderr.contains("timed out after 1.0 s"), "{}", r.stderr);
    assert!(r.elapsed < Duration::from_secs(30));
    r.assert_no_leftovers();
}

#[test]
fn sigterm_to_volpexrun_ends_every_process() {
    let mut job = spawn(
        &["-n", "2", "-r", "2", "-x", "VOLPEX_LOG=info"],
        &example("ring"),
        LONG_RING,
    );
    // Wait until every replica is up.
    for _ in 0..4 {
        job.wait_stderr(Duration::from_secs(30), |l| l.contains("listening on"))
            .expect("replica up");
    }
    let pid = nix::unistd::Pid::from_raw(job.pid() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("signal");
    let r = job.wait(Duration::from_secs(60));
    // As a shell: 128 + 15.
    assert_eq!(r.code, Some(143), "{}", r.stderr);
    assert!(r.stderr.contains("interrupted by SIGTERM"), "{}", r.stderr);
    r.assert_no_leftovers();
}

#[test]
fn bad_input_gets_a_clear_error() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-n", "2", "/nonexistent/program"],
            "cannot start /nonexistent/program",
        ),
        (
            &["-n", "2", "--fault", "5.0:kill@1", "true"],
            "--fault names replica 5.0",
        ),
        (
            &["-n", "2", "--fault", "1.0:explode@1", "true"],
            "unknown action",
        ),
        (&["-n", "0", "true"], "0 is not in 1..=100000"),
        (
            &["-n", "2", "-x", "VOLPEX_SURELY_UNSET_VAR", "true"],
            "not set",
        ),
        (&["-n", "2"], "PROGRAM"),
    ];
    for (args, want) in cases {
        let out = Command::new(volpexrun())
            .args(*args)
            .output()
            .expect("run volpexrun");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(err.contains(want), "{args:?}: expected {want:?} in\n{err}");
    }
}

/// What `cpus` wrote for every replica of a `ranks` x `replicas` job: per replica, the
/// CPU list every one of its threads may use (asserted to be the same for all threads).
fn cpus_of_job(launcher_args: &[&str], ranks: u32, replicas: u32) -> Vec<Vec<Vec<usize>>> {
    let base = TempPath::new("cpus");
    let files: Vec<Vec<TempPath>> = (0..ranks)
        .map(|r| {
            (0..replicas)
                .map(|k| TempPath(format!("{}.{r}.{k}", base.0.display()).into()))
                .collect()
        })
        .collect();
    // What a replica ended half-way through writing would leave.
    let _parts: Vec<TempPath> = files
        .iter()
        .flatten()
        .map(|f| TempPath(format!("{}.part", f.0.display()).into()))
        .collect();
    let n = ranks.to_string();
    let r = replicas.to_string();
    let mut args = vec!["-n", n.as_str(), "-r", r.as_str()];
    args.extend_from_slice(launcher_args);
    let base_arg = base.0.display().to_string();
    run(&args, &bin("cpus"), &[&base_arg], Duration::from_secs(60)).ok();
    files
        .iter()
        .map(|rank| {
            rank.iter()
                .map(|f| {
                    let text = std::fs::read_to_string(&f.0).expect("the replica wrote its CPUs");
                    let lists: Vec<Vec<usize>> = text
                        .lines()
                        .map(|l| parse_cpus(l).expect("a CPU list"))
                        .collect();
                    assert!(lists.len() >= 2, "the runtime's threads are listed: {text}");
                    assert!(
                        lists.windows(2).all(|w| w[0] == w[1]),
                        "one list for all threads: {text}"
                    );
                    lists[0].clone()
                })
                .collect()
        })
        .collect()
}

#[test]
fn bind_team_gives_each_team_its_own_cpus() {
    let allowed = allowed_cpus().expect("our own CPU affinity");
    let got = cpus_of_job(&["--bind", "team"], 2, 2);
    for team in 0..2 {
        assert_eq!(got[0][team], got[1][team], "one list per team: {got:?}");
        assert!(
            got[0][team].iter().all(|c| allowed.contains(c)),
            "{got:?} within {allowed:?}"
        );
    }
    if allowed.len() >= 2 {
        assert!(
            got[0][0].iter().all(|c| !got[0][1].contains(c)),
            "teams on disjoint CPUs: {got:?}"
        );
    }
    let free = cpus_of_job(&["--bind", "none"], 2, 2);
    assert!(
        free.iter().flatten().all(|l| *l == allowed),
        "{free:?} vs {allowed:?}"
    );
}

/// More processes than CPUs in one team (`-n 4 -r 1` on the 2-CPU VM): each process
/// runs on one CPU, the ranks taking the CPUs in turn, as `mpirun --bind-to core` places
/// them; with a CPU for each, the kernel places them.
#[test]
fn a_crowded_host_gives_each_rank_one_cpu_in_turn() {
    let allowed = allowed_cpus().expect("our own CPU affinity");
    let got = cpus_of_job(&[], 4, 1);
    for (rank, lists) in got.iter().enumerate() {
        let want = if allowed.len() < 4 {
            vec![allowed[rank % allowed.len()]]
        } else {
            allowed.clone()
        };
        assert_eq!(lists[0], want, "rank {rank}: {got:?} on {allowed:?}");
    }
}

/// Binding follows the living processes: three teams on two CPUs (teams 0 and 2 share
/// one), and when team 1 dies team 2 moves to the CPU it left, so the survivors no longer
/// share a CPU while another idles (issue 16, item 2). Without regeneration: a new
/// incarnation of team 1 would take its CPU back.
#[test]
fn the_cpus_of_a_dead_team_go_to_the_survivors() {
    let Some(allowed) = pinned_to_two_cpus() else {
        return;
    };
    let files = CpuFiles::new("rebind");
    let base_arg = files.base();
    // Team 2 moves to team 1's CPU, whether team 1 dies before or after it starts looking.
    let expect = format!("0.2={c};1.2={c}", c = allowed[1]);
    let r = run(
        &[
            "-n",
            "2",
            "-r",
            "3",
            "--regenerate",
            "never",
            "--bind",
            "team",
            "--fault",
            "0.1:kill@0.3",
            "--fault",
            "1.1:kill@0.3",
        ],
        &bin("rebind"),
        &[&base_arg, "--teams", "0,2", "--expect", &expect],
        Duration::from_secs(60),
    );
    r.ok();
    r.assert_no_leftovers();
    for rank in 0..2 {
        assert_eq!(files.cpus(rank, 0), [allowed[0]], "team 0 keeps its CPU");
        assert_eq!(
            files.cpus(rank, 2),
            [allowed[1]],
            "team 2 takes team 1's CPU"
        );
    }
}

/// The first two CPUs this process may use, this test's thread pinned to them (a child
/// inherits the affinity of the thread that starts it, and each test runs on a thread of
/// its own), so the layout checked is the one of 2 CPUs; None (skipped, or failed under
/// `VOLPEX_TEST_PREREQUISITES=required`) with fewer.
fn pinned_to_two_cpus() -> Option<Vec<usize>> {
    let allowed = allowed_cpus().expect("our own CPU affinity");
    if !volpex_tests::prerequisite(allowed.len() >= 2, "a second CPU") {
        return None;
    }
    let allowed = allowed[..2].to_vec();
    let mut two = nix::sched::CpuSet::new();
    for &c in &allowed {
        two.set(c).expect("a CPU number the kernel gave us");
    }
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &two)
        .expect("pin this test's thread to two CPUs");
    Some(allowed)
}

/// The files the `rebind` program writes for 2 ranks of 3 teams (`BASE.RANK.TEAM`, and
/// their `.part`s), removed when dropped.
struct CpuFiles {
    base: TempPath,
    _files: Vec<TempPath>,
}

impl CpuFiles {
    fn new(name: &str) -> CpuFiles {
        let base = TempPath::new(name);
        let _files = (0..2)
            .flat_map(|r| [0, 1, 2].map(|k| format!("{}.{r}.{k}", base.0.display())))
            .flat_map(|f| {
                [
                    TempPath(f.clone().into()),
                    TempPath(format!("{f}.part").into()),
                ]
            })
            .collect();
        CpuFiles { base, _files }
    }

    /// BASE, the program's first argument.
    fn base(&self) -> String {
        self.base.0.display().to_string()
    }

    /// The CPUs replica `rank.team` last ran on, the same for every one of its threads.
    fn cpus(&self, rank: u32, team: u32) -> Vec<usize> {
        let f = format!("{}.{rank}.{team}", self.base.0.display());
        let text = std::fs::read_to_string(&f).expect("the replica wrote its CPUs");
        let lists: Vec<Vec<usize>> = text
            .lines()
            .map(|l| parse_cpus(l).expect("a CPU list"))
            .collect();
        assert!(
            lists.windows(2).all(|w| w[0] == w[1]),
            "every thread of {rank}.{team} on the same CPUs: {text}"
        );
        lists[0].clone()
    }
}

/// Once losses leave a single team whole, the other teams follow it and the job moves at
/// its pace: on a crowded host the lead team gets a CPU of its own and the teams that
/// follow share the other, where the plain rule would have team 2 take turns with
/// team 0 (docs/REGENERATION.md, "Losses that couple teams"). Without regeneration: a
/// new incarnation would make its team whole again.
#[test]
fn the_team_the_others_follow_gets_cpus_of_its_own() {
    let Some(allowed) = pinned_to_two_cpus() else {
        return;
    };
    let files = CpuFiles::new("lead");
    let base_arg = files.base();
    let (own, rest) = (allowed[0], allowed[1]);
    let expect = format!("0.2={own};1.2={own};0.0={rest};0.1={rest}");
    let r = run(
        &[
            "-n",
            "2",
            "-r",
            "3",
            "--regenerate",
            "never",
            "--bind",
            "team",
            "--fault",
            "1.0:kill@0.3",
            "--fault",
            "1.1:kill@0.3",
        ],
        &bin("rebind"),
        &[
            &base_arg,
            "--teams",
            "2",
            "--wait-for",
            "0.0,0.1",
            "--expect",
            &expect,
        ],
        Duration::from_secs(120),
    );
    r.ok();
    r.assert_no_leftovers();
    for (rank, team) in [(0, 0), (0, 1), (0, 2), (1, 2)] {
        let want = if team == 2 { own } else { rest };
        assert_eq!(files.cpus(rank, team), [want], "replica {rank}.{team}");
    }
}

#[test]
fn a_bad_cpu_list_is_a_clear_error() {
    let r = run(
        &["-n", "2", "-x", "VOLPEX_CPUS=1-x"],
        &bin("cpus"),
        &["/nonexistent/never-written"],
        Duration::from_secs(60),
    );
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("VOLPEX_CPUS=") && r.stderr.contains("is not a CPU number"),
        "{}",
        r.stderr
    );
    r.assert_no_leftovers();
}
