//! Cloud preemption notices (`volpexrun --preemption-notice`) with real parts: a fake
//! metadata server in the test (a thread speaking HTTP/1.1 on 127.0.0.1, an ephemeral
//! port, with the paths, headers and answers the clouds document) schedules a notice in
//! the middle of a replicated job; every replica on the noticed machine hands over to a
//! new incarnation before the notice's deadline, none is lost, and the job's output is
//! the failure-free run's. A server that answers garbage, or goes away, never stops the
//! job; `auto` with nothing answering watches nothing.
//! Reference: issue 46 items 1 and 4; docs/VOLPEXRUN.md "Preemption notices".

use std::net::TcpListener;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::Duration;

use volpex_tests::metadata::{Cloud, FakeMetadata, Mode};
use volpex_tests::{bin, run, spawn, LiveJob};

const DEADLINE: Duration = Duration::from_secs(180);
const WAIT: Duration = Duration::from_secs(60);
/// `regen`: 400 rounds, rank 0 works 20 ms each (about 8 s), a checkpoint every round.
const ARGS: &[&str] = &["400", "20", "checkpoint"];

/// The failure-free run's output (once per test binary).
fn failure_free() -> &'static Vec<String> {
    static BASE: OnceLock<Vec<String>> = OnceLock::new();
    BASE.get_or_init(|| {
        let run = run(&["-n", "3", "-r", "2"], &bin("regen"), ARGS, DEADLINE);
        let lines = run.regen_lines();
        assert_eq!(lines.len(), 3 * 40 + 1, "{}", run.stdout);
        lines
    })
}

/// Waits until the job is well into its run (rank 0 past round 100).
fn mid_run(job: &mut LiveJob) {
    let seen = job.wait_stderr(WAIT, |l| l.contains("regen: rank 0 round 100"));
    assert!(seen.is_some(), "the job never got going");
}

/// Starts `-n 3 -r 2 regen` watching `fake` as `kind`, schedules a notice mid-run and
/// checks that every replica handed over before the deadline, none was lost, and the
/// output is the failure-free run's.
fn a_notice_mid_run_hands_every_replica_over(cloud: Cloud, kind: &str, said: &str) {
    let base = failure_free();
    let fake = FakeMetadata::start(cloud);
    let flag = fake.flag(kind);
    let mut job = spawn(
        &["-n", "3", "-r", "2", "--preemption-notice", &flag],
        &bin("regen"),
        ARGS,
    );
    let watching = job.wait_stderr(WAIT, |l| l.contains("preemption notices at"));
    let name = cloud.name();
    assert!(
        watching
            .as_deref()
            .is_some_and(|l| l.contains(&format!("watching {name} "))),
        "{watching:?}"
    );
    mid_run(&mut job);
    fake.wait_asked(1);
    fake.set(Mode::Notice);
    let noticed = job.wait_stderr(WAIT, |l| {
        l.contains("preemption notice ") && l.contains(" for localhost at ")
    });
    assert!(noticed.is_some(), "no notice");
    let done = job.wait_stderr(WAIT, |l| l.contains("every replica handed over"));
    let run = job.wait(DEADLINE);
    assert!(
        done.is_some(),
        "the handovers never finished\n{}",
        run.stderr
    );
    assert_eq!(&run.regen_lines(), base, "{}", run.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        fake.refused.load(Ordering::Relaxed),
        0,
        "a request without the cloud's headers"
    );
    let notices = run.events("notice");
    assert_eq!(
        notices.len(),
        6,
        "every replica of the machine was noticed\n{}",
        run.stderr
    );
    for n in &notices {
        assert!(
            n["detail"].as_str().is_some_and(|d| d.contains(said)),
            "{n}"
        );
        assert_eq!(n["incarnation"], 0, "{n}");
        let (at, handed, deadline) = (
            n["t_s"].as_f64().unwrap_or(f64::NAN),
            n["handed_over_s"].as_f64().unwrap_or(f64::NAN),
            n["deadline_s"].as_f64().unwrap_or(f64::NAN),
        );
        assert!(
            at <= handed && handed < deadline,
            "handed over before the deadline: {n}"
        );
    }
    for kind in ["killed", "died", "retired"] {
        assert!(
            run.events(kind).is_empty(),
            "a replica was lost\n{}",
            run.stderr
        );
    }
    let report = run.report.as_ref().expect("a report");
    for p in report["processes"].as_array().expect("processes") {
        if p["incarnation"] == 0 {
            assert_eq!(p["state"], "drained", "{p}");
        } else {
            assert!(p["caught_up_after_s"].as_f64().is_some(), "{p}");
        }
    }
    run.assert_no_leftovers();
}

#[test]
fn a_gcp_notice_mid_run_hands_every_replica_over() {
    a_notice_mid_run_hands_every_replica_over(Cloud::Gcp, "gcp", "gcp (preempted");
}

#[test]
fn an_aws_notice_mid_run_hands_every_replica_over() {
    a_notice_mid_run_hands_every_replica_over(Cloud::Aws, "aws", "aws (terminate");
}

/// `auto` finds the Azure server by asking every cloud's paths in turn.
#[test]
fn an_azure_notice_found_by_auto_hands_every_replica_over() {
    a_notice_mid_run_hands_every_replica_over(Cloud::Azure, "auto", "azure (Preempt");
}

/// A server that answers garbage, then goes away, is said once and never stops the job.
#[test]
fn garbage_and_a_dead_server_do_not_stop_the_job() {
    let base = failure_free();
    for (cloud, kind) in [
        (Cloud::Gcp, "gcp"),
        (Cloud::Aws, "aws"),
        (Cloud::Azure, "azure"),
    ] {
        let mut fake = FakeMetadata::start(cloud);
        let flag = fake.flag(kind);
        let mut job = spawn(
            &["-n", "3", "-r", "2", "--preemption-notice", &flag],
            &bin("regen"),
            ARGS,
        );
        let watching = job.wait_stderr(WAIT, |l| l.contains("preemption notices at"));
        assert!(watching.is_some(), "{kind}: no watcher");
        fake.set(Mode::Garbage);
        fake.wait_asked(2);
        fake.die();
        let run = job.wait(DEADLINE);
        assert_eq!(&run.regen_lines(), base, "{kind}\n{}", run.stderr);
        let trouble: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("metadata server at") && l.contains("still watching"))
            .collect();
        assert_eq!(trouble.len(), 1, "{kind}: said once\n{}", run.stderr);
        assert!(run.events("notice").is_empty(), "{kind}");
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        run.assert_no_leftovers();
    }
}

/// `auto` where no metadata server answers: one line, no watcher, the job runs as usual.
#[test]
fn auto_with_nothing_answering_watches_nothing() {
    // A port that was free a moment ago: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let flag = format!("auto=http://127.0.0.1:{port}");
    let run = run(
        &["-n", "2", "--preemption-notice", &flag],
        &bin("regen"),
        &["50", "5"],
        DEADLINE,
    );
    run.ok();
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("--preemption-notice auto: no metadata server answered"))
        .collect();
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(!run.stderr.contains("watching"), "{}", run.stderr);
}

/// Over ssh to the project's test hosts (network namespaces, each with its own sshd and
/// a fake metadata server on the clouds' link-local address, 169.254.169.254:80):
/// `-n 2 -r 2` concentrated on h0 and h1, h2 spare. h0's agent watches h0's server, which
/// schedules a notice mid-run: both replicas on h0 hand over to new incarnations on h2
/// before the deadline; the other hosts are never noticed, and the result is right.
#[test]
#[cfg_attr(
    not(feature = "root-tests"),
    ignore = "needs root: test hosts in network namespaces"
)]
fn a_hosts_notice_is_watched_by_its_agent_and_its_replicas_move_to_a_spare_host() {
    use volpex_tests::testhosts::TestNet;
    let net = TestNet::new(3);
    let dir = TempDir(volpex_tests::TempPath::new("metadata").0.clone());
    std::fs::create_dir_all(&dir.0).expect("a directory");
    let mut servers = Vec::new();
    for i in 0..net.len() {
        let ns = net.ns(i);
        let ip = std::process::Command::new("ip")
            .args(["-n", &ns, "addr", "add", "169.254.169.254/32", "dev", "lo"])
            .status()
            .expect("ip");
        assert!(ip.success(), "link-local address on {ns}");
        let mode = dir.0.join(format!("mode{i}"));
        std::fs::write(&mode, "quiet").expect("mode file");
        let log = dir.0.join(format!("log{i}"));
        let server = bin("fake_metadata");
        let cmd = [
            server.to_str().expect("a path"),
            "gcp",
            "169.254.169.254:80",
            mode.to_str().expect("a path"),
        ];
        servers.push(Server(net.daemon(&ns, &net.name(i), &cmd, &log)));
    }
    let mut job = net.spawn_job(
        &[],
        &[
            "--map",
            "concentrate",
            "-n",
            "2",
            "-r",
            "2",
            "--preemption-notice",
            "gcp",
        ],
        &bin("regen"),
        &["300", "20", "checkpoint"],
    );
    let watching = job.wait_stderr(WAIT, |l| {
        l.contains("h0: watching gcp preemption notices at http://169.254.169.254")
    });
    assert!(watching.is_some(), "h0's agent does not watch");
    let seen = job.wait_stderr(WAIT, |l| l.contains("regen: rank 0 round 60"));
    assert!(seen.is_some(), "the job never got going");
    std::fs::write(dir.0.join("mode0"), "notice").expect("mode file");
    let done = job.wait_stderr(WAIT, |l| l.contains("for h0: every replica handed over"));
    let run = job.wait(DEADLINE);
    for s in &mut servers {
        let _ = s.0.kill();
        let _ = s.0.wait();
    }
    assert!(
        done.is_some(),
        "h0's replicas never handed over\n{}",
        run.stderr
    );
    let out = run.ok();
    for r in 0..2 {
        let mine: Vec<u32> = out
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("regen: rank {r} round ")))
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect();
        assert_eq!(
            mine,
            (1..=30).map(|i| i * 10).collect::<Vec<u32>>(),
            "{out}"
        );
    }
    assert_eq!(
        out.lines().filter(|l| l.ends_with(" ok")).count(),
        1,
        "{out}"
    );
    let notices = run.events("notice");
    assert_eq!(notices.len(), 2, "h0 held two replicas\n{}", run.stderr);
    for n in &notices {
        assert!(
            n["detail"].as_str().is_some_and(|d| d.ends_with(" for h0")),
            "{n}"
        );
        let handed = n["handed_over_s"].as_f64().unwrap_or(f64::NAN);
        assert!(handed < n["deadline_s"].as_f64().unwrap_or(f64::NAN), "{n}");
    }
    for kind in ["killed", "died", "retired"] {
        assert!(
            run.events(kind).is_empty(),
            "a replica was lost\n{}",
            run.stderr
        );
    }
    let report = run.report.as_ref().expect("a report");
    for p in report["processes"].as_array().expect("processes") {
        if p["incarnation"] != 0 {
            assert_eq!(
                p["host"], "h2",
                "the new incarnations go to the spare host: {p}"
            );
        }
    }
    drop(net);
}

/// A directory removed when the test ends.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fake metadata server started in a test host, killed when the test ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
