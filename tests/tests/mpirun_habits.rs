//! volpexrun behaves like mpirun (issue 20, items 1-4): mpirun's spellings, any program
//! runs (one that never calls `initialize()` too), the exit code is the failing rank's
//! own, signals are forwarded with a grace before SIGKILL, stdin reaches rank 0's
//! replicas, and the run says what happens to its replicas as it happens (unless
//! `--quiet`), with counters that survive the replicas' ends. Real jobs of real
//! processes on loopback.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use volpex_tests::{example, run, spawn, spawn_with, volpexrun, Run, TempPath};

const DEADLINE: Duration = Duration::from_secs(120);
/// A ring that runs until it is ended.
const LONG_RING: &[&str] = &["--rounds", "100000", "--work-ms", "1"];

/// volpexrun with `args`, no report, stdin closed: (exit code, stdout, stderr).
fn volpexrun_output(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(volpexrun())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run volpexrun");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn sh() -> std::path::PathBuf {
    "/bin/sh".into()
}

fn signal(pid: u32, sig: Signal) {
    kill(Pid::from_raw(pid as i32), sig).expect("signal volpexrun");
}

/// The pid of replica `rank.replica`, a child of volpexrun `parent` on this machine.
fn replica_pid(parent: u32, rank: u32, replica: u32) -> Option<u32> {
    let want = [
        format!("VOLPEX_RANK={rank}"),
        format!("VOLPEX_REPLICA={replica}"),
    ];
    let tasks = std::fs::read_dir(format!("/proc/{parent}/task")).ok()?;
    for task in tasks.flatten() {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for pid in children
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let vars: Vec<String> = env
                .split(|b| *b == 0)
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect();
            if want.iter().all(|w| vars.contains(w)) {
                return Some(pid);
            }
        }
    }
    None
}

/// Starts a long ring of 3 ranks x 2 replicas (`more` flags too) with volpexrun's log at
/// `info`, waits until the address table went out (the ring runs: its team 0 pulls from
/// replica 1.0), and SIGKILLs replica 1.0 by its pid.
fn ring_with_a_kill(more: &[&str]) -> volpex_tests::LiveJob {
    let mut flags = vec!["-n", "3", "-r", "2", "--regenerate", "never"];
    flags.extend_from_slice(more);
    let env = [("VOLPEX_LOG", "info")];
    // Killed once the ring turns (rank 0 says every 20th round): rank 2's replicas then
    // have their pulls parked at rank 1's, so the kill makes one of them fail over.
    // Killed at the rendezvous, the death notice could reach every peer before any
    // pull was parked at 1.0, and nobody would fail over.
    let args: Vec<&str> = LONG_RING
        .iter()
        .copied()
        .chain(["--progress", "20"])
        .collect();
    let mut job = spawn_with(&[], &env, &flags, &example("ring"), &args);
    job.wait_stderr(DEADLINE, |l| l.contains("ring: round 20"))
        .expect("the ring turns");
    let pid = replica_pid(job.pid(), 1, 0).expect("replica 1.0 is a child of volpexrun");
    signal(pid, Signal::SIGKILL);
    job
}

#[test]
fn np_and_double_dash_are_mpiruns() {
    let r = run(
        &["-np", "3", "--tag-output"],
        &example("ring"),
        &["--rounds", "3"],
        DEADLINE,
    );
    assert!(r.ok().starts_with("[0] ring: ranks=3"), "{}", r.stdout);
    r.assert_no_leftovers();
    let (code, out, err) = volpexrun_output(&["-np", "1", "--", "/bin/echo", "-n", "5"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim_end(), "5", "the program's own -n: {err}");
}

#[test]
fn an_unknown_option_before_the_program_is_an_error_naming_it() {
    for bad in ["--map-byx", "--bogus", "-Z"] {
        let (code, _, err) = volpexrun_output(&["-n", "2", bad, "node", "/bin/true"]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(err.contains(&format!("'{bad}'")), "{bad}: {err}");
        assert!(!err.contains("cannot start"), "{bad}: {err}");
    }
    // After the program, options are the program's.
    let (code, out, err) = volpexrun_output(&["-n", "1", "/bin/echo", "--bogus"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "--bogus");
}

#[test]
fn hostfiles_in_hydras_format_and_host_lists_place_as_mpirun_would() {
    let hf = TempPath::new("hydra-hosts");
    std::fs::write(&hf.0, "# Hydra\nnodea:2\nnodeb:2\n").expect("write hostfile");
    let file = hf.0.to_string_lossy().into_owned();
    for flag in ["--hostfile", "--machinefile", "-hostfile", "--hosts"] {
        let (code, out, err) = volpexrun_output(&[
            "-np",
            "2",
            "-r",
            "2",
            flag,
            &file,
            "--map-by",
            "slot",
            "--print-map",
            "/bin/true",
        ]);
        assert_eq!(code, Some(0), "{flag}: {err}");
        assert!(
            out.contains("2 ranks x 2 replicas on 2 of 2 hosts (map concentrate)"),
            "{flag}: {out}"
        );
        assert!(out.contains("nodea      2"), "{flag}: {out}");
    }
    let (code, out, err) = volpexrun_output(&[
        "-H",
        "nodea,nodeb,nodec",
        "-N",
        "2",
        "-r",
        "2",
        "--print-map",
        "/bin/true",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("3 ranks x 2 replicas on 3 of 3 hosts (map concentrate)"),
        "{out}"
    );
    let (code, out, err) = volpexrun_output(&[
        "-n",
        "2",
        "-H",
        "nodea,nodeb",
        "--map-by",
        "node",
        "--bind-to",
        "none",
        "--print-map",
        "/bin/true",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("(map spread)"), "{out}");
    // A bad line is one error naming the file and the line.
    std::fs::write(&hf.0, "nodea:2\nnodeb:x\n").expect("write hostfile");
    let (code, _, err) =
        volpexrun_output(&["-n", "2", "--hostfile", &file, "--print-map", "/bin/true"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("{file}:2:")), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // A file that is not there, a directory, an empty file: command-line errors too (2).
    std::fs::write(&hf.0, "# no hosts\n").expect("write hostfile");
    let dir = std::env::temp_dir().display().to_string();
    for bad in ["/nonexistent/hosts", dir.as_str(), file.as_str()] {
        let (code, _, err) = volpexrun_output(&["-n", "2", "--hosts", bad, "/bin/true"]);
        assert_eq!(code, Some(2), "--hosts {bad}: {err}");
        assert!(err.contains(bad), "{err}");
    }
}

#[test]
fn a_program_that_never_initializes_runs_as_under_mpirun() {
    // Output once per rank, as many ranks as asked, replicated or not.
    for r in ["1", "2"] {
        let run = run(
            &["-n", "2", "-r", r, "--tag-output"],
            &sh(),
            &["-c", "echo hello from $VOLPEX_RANK"],
            DEADLINE,
        );
        let mut lines: Vec<&str> = run.ok().lines().collect();
        lines.sort();
        assert_eq!(
            lines,
            ["[0] hello from 0", "[1] hello from 1"],
            "-r {r}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("succeeded"), "{}", run.stderr);
        run.assert_no_leftovers();
    }
}

#[test]
fn the_exit_code_is_the_failing_ranks_own() {
    let r = run(&["-n", "2"], &sh(), &["-c", "exit 3"], DEADLINE);
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    r.assert_no_leftovers();
    // Only rank 2 fails, in both its replicas.
    let r = run(
        &["-n", "3", "-r", "2"],
        &sh(),
        &["-c", "if [ \"$VOLPEX_RANK\" = 2 ]; then exit 4; fi; exit 0"],
        DEADLINE,
    );
    assert_eq!(r.code, Some(4), "{}", r.stderr);
    assert!(r.stderr.contains("rank 2 lost"), "{}", r.stderr);
    r.assert_no_leftovers();
    // 99 is also the code of an injected `exit@sends` fault; from a program in which no
    // such fault was armed it is the program's own, not a crash to regenerate.
    let r = run(
        &["-n", "2", "-r", "2"],
        &sh(),
        &[
            "-c",
            "if [ \"$VOLPEX_RANK\" = 1 ]; then exit 99; fi; exit 0",
        ],
        DEADLINE,
    );
    assert_eq!(r.code, Some(99), "{}", r.stderr);
    assert!(!r.stderr.contains("starting incarnation"), "{}", r.stderr);
    r.assert_no_leftovers();
    // So are 75, 76 and 77 (the codes of a retired, orphaned or drained replica) from a
    // program that never said it retired or drains.
    for code in [75, 76, 77] {
        let script = format!("if [ \"$VOLPEX_RANK\" = 1 ]; then exit {code}; fi; exit 0");
        let r = run(&["-n", "2", "-r", "2"], &sh(), &["-c", &script], DEADLINE);
        assert_eq!(r.code, Some(code), "{}", r.stderr);
        assert!(!r.stderr.contains("starting incarnation"), "{}", r.stderr);
        r.assert_no_leftovers();
    }
    // A rank lost to failures, not to its program: its own documented code, 70.
    let r = run(
        &["-n", "2", "--fault", "1.0:kill@0.3"],
        &example("ring"),
        LONG_RING,
        DEADLINE,
    );
    assert_eq!(r.code, Some(70), "{}", r.stderr);
    assert!(r.stderr.contains("rank 1 lost"), "{}", r.stderr);
    r.assert_no_leftovers();
}

/// A program that says it is ready on stderr, then waits for signals.
const WAITER: &str = "trap 'echo got-term; exit 7' TERM; trap 'echo got-hup; exit 7' HUP; \
                      echo ready >&2; while :; do sleep 0.05; done";

fn wait_ready(job: &mut volpex_tests::LiveJob, ranks: usize) {
    for _ in 0..ranks {
        job.wait_stderr(Duration::from_secs(60), |l| l == "ready")
            .expect("every rank ready");
    }
}

#[test]
fn sigterm_and_sighup_are_forwarded_and_give_143_and_129() {
    for (sig, code, said) in [
        (Signal::SIGTERM, 143, "got-term"),
        (Signal::SIGHUP, 129, "got-hup"),
    ] {
        let mut job = spawn(&["-n", "2", "-r", "2"], &sh(), &["-c", WAITER]);
        wait_ready(&mut job, 2);
        signal(job.pid(), sig);
        let r = job.wait(DEADLINE);
        assert_eq!(r.code, Some(code), "{sig}: {}", r.stderr);
        assert_eq!(
            r.stdout.lines().filter(|l| *l == said).count(),
            2,
            "{sig}: the program got the signal, once per rank\n{}\n{}",
            r.stdout,
            r.stderr
        );
        assert!(
            r.stderr.contains(&format!("interrupted by {sig}")),
            "{}",
            r.stderr
        );
        r.assert_no_leftovers();
    }
}

/// SIGUSR1 and SIGUSR2 reach every process and the job goes on, as under mpirun; by
/// default they ended volpexrun alone, exit 138, and left its processes running.
#[test]
fn sigusr1_and_sigusr2_are_forwarded_and_the_job_goes_on() {
    let program =
        "n=0; trap 'echo got-usr1; n=$((n+1))' USR1; trap 'echo got-usr2; n=$((n+1))' USR2; \
                   echo ready >&2; while [ $n -lt 2 ]; do sleep 0.05; done";
    let mut job = spawn(&["-n", "2", "-r", "2"], &sh(), &["-c", program]);
    wait_ready(&mut job, 2);
    signal(job.pid(), Signal::SIGUSR1);
    job.wait_stderr(Duration::from_secs(60), |l| {
        l.ends_with("SIGUSR1: forwarded to every process")
    })
    .expect("SIGUSR1 forwarded");
    signal(job.pid(), Signal::SIGUSR2);
    let r = job.wait(DEADLINE);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for said in ["got-usr1", "got-usr2"] {
        assert_eq!(
            r.stdout.lines().filter(|l| *l == said).count(),
            2,
            "{said} once per rank\n{}\n{}",
            r.stdout,
            r.stderr
        );
    }
    r.assert_no_leftovers();
}

/// A program that does not handle SIGUSR1 dies of it in every replica, as under mpirun
/// (138 = 128 + 10): no replica is regenerated, and no line says its rank goes on.
#[test]
fn sigusr1_that_the_program_does_not_handle_ends_the_job_with_138() {
    let program = "echo ready >&2; while :; do sleep 0.05; done";
    let mut job = spawn(&["-n", "2", "-r", "2"], &sh(), &["-c", program]);
    wait_ready(&mut job, 2);
    signal(job.pid(), Signal::SIGUSR1);
    let r = job.wait(DEADLINE);
    assert_eq!(r.code, Some(138), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("killed by SIGUSR1, which volpexrun forwarded"),
        "{}",
        r.stderr
    );
    for untrue in ["goes on with", "starting incarnation"] {
        assert!(!r.stderr.contains(untrue), "{untrue}: {}", r.stderr);
    }
    r.assert_no_leftovers();
}

#[test]
fn sigint_ends_a_program_that_ignores_it_after_the_kill_grace() {
    let mut job = spawn(
        &["-n", "2", "--kill-grace", "0.5"],
        &sh(),
        &[
            "-c",
            "trap '' INT; echo ready >&2; while :; do sleep 0.05; done",
        ],
    );
    wait_ready(&mut job, 2);
    signal(job.pid(), Signal::SIGINT);
    let r = job.wait(DEADLINE);
    assert_eq!(r.code, Some(130), "{}", r.stderr);
    assert!(
        r.stderr.contains("kill grace (0.5 s) is over"),
        "{}",
        r.stderr
    );
    r.assert_no_leftovers();
}

#[test]
fn sigterm_to_volpexrun_is_no_preemption_notice_for_the_replicas() {
    // Regeneration is on (the default), so a replica takes SIGTERM for a preemption
    // notice; the job ends all the same, and nothing is regenerated.
    let mut job = spawn(
        &["-n", "2", "-r", "2", "-x", "VOLPEX_LOG=info"],
        &example("ring"),
        LONG_RING,
    );
    for _ in 0..4 {
        job.wait_stderr(Duration::from_secs(60), |l| l.contains("listening on"))
            .expect("replica up");
    }
    signal(job.pid(), Signal::SIGTERM);
    let r = job.wait(DEADLINE);
    assert_eq!(r.code, Some(143), "{}", r.stderr);
    assert!(!r.stderr.contains("starting incarnation"), "{}", r.stderr);
    assert!(!r.stderr.contains("preemption notice"), "{}", r.stderr);
    assert_eq!(
        r.report.as_ref().map(|j| j["regenerations"].clone()),
        Some(0.into())
    );
    r.assert_no_leftovers();
}

#[test]
fn stdin_reaches_every_replica_of_rank_0_and_nobody_else() {
    let seen = TempPath::new("stdin-seen");
    let file = seen.0.to_string_lossy().into_owned();
    // Each replica records what it read, then waits for every replica's record, so none
    // is ended by the job's end before it wrote.
    let script = format!(
        "read line; echo \"$VOLPEX_RANK.$VOLPEX_REPLICA [$line]\" >> {file}; \
         while [ $(wc -l < {file}) -lt 4 ]; do sleep 0.05; done"
    );
    // Remote: two "hosts" reached by a remote shell that runs the agent here.
    let remote: &[&str] = &[
        "-H",
        "ha:2,hb:2",
        "--launcher-addr",
        "127.0.0.1",
        "--ssh-cmd",
        "/bin/sh -c 'exec /bin/sh -c \"$3\"' fakessh",
    ];
    for (target, hosts) in [(None, &[][..]), (Some("none"), &[][..]), (None, remote)] {
        let _ = std::fs::remove_file(&seen.0);
        let mut cmd = Command::new(volpexrun());
        cmd.args(["-n", "2", "-r", "2"]).args(hosts);
        if let Some(t) = target {
            cmd.args(["--stdin", t]);
        }
        let mut child = cmd
            .args(["/bin/sh", "-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start volpexrun");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"hello\nsecond line\n")
            .expect("write stdin");
        let out = child.wait_with_output().expect("volpexrun ends");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        let mut lines: Vec<String> = std::fs::read_to_string(&seen.0)
            .expect("records")
            .lines()
            .map(str::to_string)
            .collect();
        lines.sort();
        let want: &[&str] = match target {
            None => &["0.0 [hello]", "0.1 [hello]", "1.0 []", "1.1 []"],
            Some(_) => &["0.0 []", "0.1 []", "1.0 []", "1.1 []"],
        };
        assert_eq!(lines, want, "--stdin {target:?} {hosts:?}: {err}");
    }
}

#[test]
fn deaths_and_failovers_are_said_as_they_happen_and_their_counts_survive() {
    let mut job = ring_with_a_kill(&[]);
    let death = job.wait_stderr(DEADLINE, |l| l.starts_with("volpexrun: replica 1.0 lost:"));
    let death = death.expect("a line when the replica is killed");
    // Seen by its exit (killed by SIGKILL) or first by its sibling (fenced).
    assert!(
        death.ends_with("; rank 1 goes on with 1 of 2 replicas"),
        "{death}"
    );
    job.wait_stderr(DEADLINE, |l| l.contains("failed over:"))
        .expect("a line when a replica fails over");
    // Ended by volpexrun now: the failovers counted so far stay in the summary.
    signal(job.pid(), Signal::SIGTERM);
    let r = job.wait(DEADLINE);
    assert_eq!(r.code, Some(143), "{}", r.stderr);
    let failovers = r.report.as_ref().and_then(|j| j["failovers"].as_u64());
    assert!(failovers >= Some(1), "{failovers:?}\n{}", r.stderr);
    assert!(
        !r.stderr.contains(" 0 failovers"),
        "the summary keeps them: {}",
        r.stderr
    );
    r.assert_no_leftovers();
}

#[test]
fn quiet_says_nothing_while_the_job_runs() {
    // With --quiet, the live lines go to volpexrun's log (at info) only.
    let mut job = ring_with_a_kill(&["--quiet"]);
    let logged = job
        .wait_stderr(DEADLINE, |l| l.contains("replica 1.0 lost:"))
        .expect("volpexrun saw the death");
    assert!(logged.contains(" INFO "), "{logged}");
    signal(job.pid(), Signal::SIGTERM);
    let r: Run = job.wait(DEADLINE);
    assert_eq!(r.code, Some(143), "{}", r.stderr);
    for line in r.stderr.lines() {
        assert!(
            !line.starts_with("volpexrun: replica"),
            "a live line with --quiet: {line}"
        );
    }
    r.assert_no_leftovers();
}

#[test]
fn help_names_plan_and_completions_and_a_man_page_are_generated() {
    let (code, out, _) = volpexrun_output(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("volpexrun plan"), "{out}");
    for flag in [
        "--hostfile",
        "--machinefile",
        "--map-by",
        "--kill-grace",
        "--stdin",
    ] {
        assert!(out.contains(flag), "{flag}: {out}");
    }
    let (code, out, err) = volpexrun_output(&["completions", "bash"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("_volpexrun") && out.contains("--machinefile"),
        "{out}"
    );
    let (code, _, err) = volpexrun_output(&["completions", "tcsh"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("bash, zsh, fish"), "{err}");
    let (code, out, err) = volpexrun_output(&["man"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(".TH volpexrun"), "{out}");
}

#[test]
fn a_terminal_gets_a_status_line_unless_quiet() {
    // `script` gives volpexrun a terminal (a pseudo-terminal) for its stderr.
    let ring = example("ring");
    for quiet in [false, true] {
        let cmdline = format!(
            "{} -n 2 -r 2 {} {} --rounds 300 --work-ms 2",
            volpexrun().display(),
            if quiet { "--quiet" } else { "" },
            ring.display()
        );
        let out = Command::new("script")
            .args(["-qec", &cmdline, "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .expect("util-linux script runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains("ring: ranks=2"), "{text}");
        assert_eq!(
            text.contains("volpexrun: ranks 2 | replicas alive 4/4 | failovers 0"),
            !quiet,
            "quiet {quiet}: {text}"
        );
    }
}

#[test]
fn ctrl_c_on_a_terminal_ends_the_job_without_regenerating() {
    // A terminal's Ctrl-C is SIGINT to volpexrun's whole process group: started in a
    // group of its own here, as a shell's foreground job is.
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    let report = TempPath::new("ctrl-c-report.json");
    let start = std::time::Instant::now();
    let mut child = Command::new(volpexrun())
        .args(["-n", "2", "-r", "2", "--report"])
        .arg(&report.0)
        .arg(example("ring"))
        .args(LONG_RING)
        .env("VOLPEX_LOG", "info")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start volpexrun");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    let mut lines = Vec::new();
    loop {
        let l = rx
            .recv_timeout(DEADLINE)
            .expect("the address table went out");
        let up = l.contains("rendezvous complete");
        lines.push(l);
        if up {
            break;
        }
    }
    let group = Pid::from_raw(-(child.id() as i32));
    kill(group, Signal::SIGINT).expect("SIGINT to the group");
    let out = child.wait_with_output().expect("volpexrun ends");
    // Every line, to the end of volpexrun's stderr.
    lines.extend(rx.iter());
    let r = Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: lines.join("\n"),
        report: std::fs::read_to_string(&report.0)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok()),
        elapsed: start.elapsed(),
    };
    assert_eq!(r.code, Some(130), "{}", r.stderr);
    assert!(!r.stderr.contains("starting incarnation"), "{}", r.stderr);
    assert!(r.report.is_some(), "{}", r.stderr);
    r.assert_no_leftovers();
}
