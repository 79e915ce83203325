//! Cloud preemption notices (`volpexrun --preemption-notice`) with real parts: a fake
//! metadata server in the test (a thread speaking HTTP/1.1 on 127.0.0.1, an ephemeral
//! port, with the paths, headers and answers the clouds document) schedules a notice in
//! the middle of a replicated job; every replica on the noticed machine hands over to a
//! new incarnation before the notice's deadline, none is lost, and the job's output is
//! the failure-free run's. A server that answers garbage, or goes away, never stops the
//! job; `auto` with nothing answering watches nothing.
//! Reference: issue 46 items 1 and 4; docs/VOLPEXRUN.md "Preemption notices".

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use volpex_tests::{bin, run, spawn, LiveJob, Run};

const DEADLINE: Duration = Duration::from_secs(180);
const WAIT: Duration = Duration::from_secs(60);
/// `regen`: 400 rounds, rank 0 works 20 ms each (about 8 s), a checkpoint every round.
const ARGS: &[&str] = &["400", "20", "checkpoint"];
/// How far ahead the fake servers put the deadline.
const NOTICE_AHEAD_S: i64 = 90;

/// What the fake metadata server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing scheduled.
    Quiet,
    /// A preemption is scheduled.
    Notice,
    /// 200 with a body that is no answer at all.
    Garbage,
}

/// Which metadata server the fake plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cloud {
    Aws,
    Gcp,
    Azure,
}

/// A metadata server on 127.0.0.1: one thread, one connection at a time, `Connection:
/// close`. Dropping it (or `die`) closes its port: connections are refused from then on.
struct FakeMetadata {
    addr: SocketAddr,
    mode: Arc<Mutex<Mode>>,
    /// Well-formed requests answered in the current mode (headers as the cloud wants).
    asked: Arc<AtomicU64>,
    /// Requests that lacked the cloud's header or token.
    refused: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeMetadata {
    fn start(cloud: Cloud) -> FakeMetadata {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake metadata server");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("address");
        let mode = Arc::new(Mutex::new(Mode::Quiet));
        let asked = Arc::new(AtomicU64::new(0));
        let refused = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let deadline =
            jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() + NOTICE_AHEAD_S)
                .expect("a time");
        let thread = {
            let (mode, asked, refused, stop) =
                (mode.clone(), asked.clone(), refused.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((conn, _)) => {
                            let m = *mode.lock().unwrap();
                            match serve(conn, cloud, m, deadline) {
                                Some(true) => asked.fetch_add(1, Ordering::Relaxed),
                                Some(false) => refused.fetch_add(1, Ordering::Relaxed),
                                None => 0,
                            };
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
        };
        FakeMetadata {
            addr,
            mode,
            asked,
            refused,
            stop,
            thread: Some(thread),
        }
    }

    /// `--preemption-notice KIND=URL` for this server.
    fn flag(&self, kind: &str) -> String {
        format!("{kind}=http://{}", self.addr)
    }

    /// Answers `mode` from now on (and counts the requests in it from 0).
    fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
        self.asked.store(0, Ordering::Relaxed);
    }

    /// Waits until `n` well-formed requests were answered in the current mode.
    fn wait_asked(&self, n: u64) {
        let until = Instant::now() + WAIT;
        while self.asked.load(Ordering::Relaxed) < n {
            assert!(Instant::now() < until, "the watcher never asked");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the port: the server is gone.
    fn die(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for FakeMetadata {
    fn drop(&mut self) {
        self.die();
    }
}

/// Reads one request from `conn` and answers it as `cloud`'s metadata server in `mode`.
/// Some(true): a well-formed request answered; Some(false): refused (missing header or
/// token); None: not a request, or not for this cloud.
fn serve(conn: TcpStream, cloud: Cloud, mode: Mode, deadline: jiff::Timestamp) -> Option<bool> {
    conn.set_nonblocking(false).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let mut reader = BufReader::new(conn.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let (method, path) = (words.next()?.to_string(), words.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    const TOKEN: &str = "AQAEAFAKE-TOKEN==";
    let (status, body, ok) = match (cloud, method.as_str(), path.as_str()) {
        (Cloud::Gcp, "GET", "/computeMetadata/v1/instance/preempted") => {
            if header("metadata-flavor") != Some("Google") {
                (403, "missing Metadata-Flavor".to_string(), Some(false))
            } else {
                let body = match mode {
                    Mode::Quiet => "FALSE",
                    Mode::Notice => "TRUE",
                    Mode::Garbage => "<html><body>Service Unavailable</body></html>",
                };
                (200, body.to_string(), Some(true))
            }
        }
        (Cloud::Aws, "PUT", "/latest/api/token") => {
            if header("x-aws-ec2-metadata-token-ttl-seconds").is_none() {
                (400, String::new(), Some(false))
            } else {
                (200, TOKEN.to_string(), Some(true))
            }
        }
        (Cloud::Aws, "GET", "/latest/meta-data/spot/instance-action") => {
            if header("x-aws-ec2-metadata-token") != Some(TOKEN) {
                (401, String::new(), Some(false))
            } else {
                match mode {
                    Mode::Quiet => (404, "Not Found".to_string(), Some(true)),
                    Mode::Notice => (
                        200,
                        format!(r#"{{"action": "terminate", "time": "{deadline}"}}"#),
                        Some(true),
                    ),
                    Mode::Garbage => (200, "{\"action\": [1, 2".to_string(), Some(true)),
                }
            }
        }
        (Cloud::Azure, "GET", "/metadata/scheduledevents?api-version=2020-07-01") => {
            if header("metadata") != Some("true") {
                (400, "missing Metadata: true".to_string(), Some(false))
            } else {
                let body = match mode {
                    Mode::Quiet => r#"{"DocumentIncarnation": 1, "Events": []}"#.to_string(),
                    Mode::Notice => format!(
                        r#"{{"DocumentIncarnation": 2, "Events": [{{"EventId": "602d9444-d2cd-49c7-8624-8643e7171297", "EventType": "Preempt", "ResourceType": "VirtualMachine", "Resources": ["vm0"], "EventStatus": "Scheduled", "NotBefore": "{}", "Description": "", "EventSource": "Platform", "DurationInSeconds": -1}}]}}"#,
                        jiff::fmt::rfc2822::DateTimePrinter::new()
                            .timestamp_to_rfc9110_string(&deadline)
                            .ok()?
                    ),
                    Mode::Garbage => "\u{1}\u{2} not json".to_string(),
                };
                (200, body, Some(true))
            }
        }
        // Another cloud's path (`auto` asks them all): not this server's.
        _ => (404, "Not Found".to_string(), None),
    };
    let mut w = conn;
    let flavor = match cloud {
        Cloud::Gcp => "Metadata-Flavor: Google\r\n",
        Cloud::Aws | Cloud::Azure => "",
    };
    let _ = write!(
        w,
        "HTTP/1.1 {status} X\r\nContent-Length: {}\r\n{flavor}Connection: close\r\n\r\n{body}",
        body.len()
    );
    ok
}

/// Every line a rank printed, in order, and the result line: what must not change.
fn output_of(run: &Run) -> Vec<String> {
    let out = run.ok();
    let mut lines: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with("regen: "))
        .map(str::to_string)
        .collect();
    // Ranks interleave at will; each rank's own lines keep their order.
    lines.sort_by_key(|l| {
        l.split_whitespace()
            .nth(2)
            .and_then(|r| r.parse::<u32>().ok())
            .unwrap_or(u32::MAX)
    });
    lines
}

/// The failure-free run's output (once per test binary).
fn failure_free() -> &'static Vec<String> {
    static BASE: OnceLock<Vec<String>> = OnceLock::new();
    BASE.get_or_init(|| {
        let run = run(&["-n", "3", "-r", "2"], &bin("regen"), ARGS, DEADLINE);
        let lines = output_of(&run);
        assert_eq!(lines.len(), 3 * 40 + 1, "{}", run.stdout);
        lines
    })
}

/// The report's events of `kind`.
fn events<'a>(run: &'a Run, kind: &str) -> Vec<&'a serde_json::Value> {
    run.report
        .as_ref()
        .and_then(|r| r["events"].as_array())
        .map(|es| es.iter().filter(|e| e["kind"] == kind).collect())
        .unwrap_or_default()
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
    let name = match cloud {
        Cloud::Aws => "aws",
        Cloud::Gcp => "gcp",
        Cloud::Azure => "azure",
    };
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
    assert_eq!(&output_of(&run), base, "{}", run.stderr);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        fake.refused.load(Ordering::Relaxed),
        0,
        "a request without the cloud's headers"
    );
    let notices = events(&run, "notice");
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
            events(&run, kind).is_empty(),
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
        assert_eq!(&output_of(&run), base, "{kind}\n{}", run.stderr);
        let trouble: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains("metadata server at") && l.contains("still watching"))
            .collect();
        assert_eq!(trouble.len(), 1, "{kind}: said once\n{}", run.stderr);
        assert!(events(&run, "notice").is_empty(), "{kind}");
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

/// With remote hosts the notice is not watched (yet): a clear error before anything
/// starts.
#[test]
fn a_notice_with_hosts_is_refused_before_anything_starts() {
    let run = run(
        &[
            "-n",
            "1",
            "--host",
            "localhost",
            "--preemption-notice",
            "gcp",
        ],
        &bin("regen"),
        &["10", "1"],
        DEADLINE,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("--preemption-notice watches this machine only"),
        "{}",
        run.stderr
    );
}
