//! A fake cloud metadata server for the preemption notice tests: HTTP/1.1 over a real
//! socket, with the paths, headers and answers that AWS (IMDSv2), Google Cloud and Azure
//! (Scheduled Events) document, and a mode the test sets (nothing scheduled, a notice,
//! garbage). `FakeMetadata` runs one in a thread of the test on 127.0.0.1; the
//! `fake_metadata` program runs one inside a test host's network namespace, on the
//! link-local address the clouds use, its mode read from a file.
//!
//! Owns only the server's side of the protocol; never starts a job.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How far ahead the fake servers put the deadline.
pub const NOTICE_AHEAD_S: i64 = 90;
/// The Azure VM the fake server answers for, and a neighbour in its availability set.
pub const AZURE_VM: &str = "vm0";
const AZURE_NEIGHBOUR: &str = "vm7";
/// How long `FakeMetadata::wait_asked` waits.
const WAIT: Duration = Duration::from_secs(60);

/// What the fake metadata server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Nothing scheduled.
    Quiet,
    /// A preemption is scheduled.
    Notice,
    /// 200 with a body that is no answer at all.
    Garbage,
}

/// Which metadata server the fake plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// AWS IMDSv2.
    Aws,
    /// Google Cloud's metadata server.
    Gcp,
    /// Azure's Instance Metadata Service (Scheduled Events).
    Azure,
}

impl Cloud {
    /// `--preemption-notice`'s word for it.
    pub fn name(self) -> &'static str {
        match self {
            Cloud::Aws => "aws",
            Cloud::Gcp => "gcp",
            Cloud::Azure => "azure",
        }
    }

    /// The cloud `name` names.
    pub fn named(name: &str) -> Option<Cloud> {
        [Cloud::Aws, Cloud::Gcp, Cloud::Azure]
            .into_iter()
            .find(|c| c.name() == name)
    }
}

impl Mode {
    /// The mode a mode file names (`quiet`, `notice`, `garbage`).
    pub fn named(name: &str) -> Option<Mode> {
        match name.trim() {
            "quiet" => Some(Mode::Quiet),
            "notice" => Some(Mode::Notice),
            "garbage" => Some(Mode::Garbage),
            _ => None,
        }
    }
}

/// The deadline a server started now announces.
pub fn deadline() -> jiff::Timestamp {
    jiff::Timestamp::from_second(jiff::Timestamp::now().as_second() + NOTICE_AHEAD_S)
        .expect("a time")
}

/// A metadata server on 127.0.0.1: one thread, one connection at a time, `Connection:
/// close`. Dropping it (or `die`) closes its port: connections are refused from then on.
pub struct FakeMetadata {
    addr: SocketAddr,
    mode: Arc<Mutex<Mode>>,
    /// Well-formed requests answered in the current mode (headers as the cloud wants).
    asked: Arc<AtomicU64>,
    /// Requests that lacked the cloud's header or token.
    pub refused: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeMetadata {
    pub fn start(cloud: Cloud) -> FakeMetadata {
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
    pub fn flag(&self, kind: &str) -> String {
        format!("{kind}=http://{}", self.addr)
    }

    /// Answers `mode` from now on (and counts the requests in it from 0).
    pub fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
        self.asked.store(0, Ordering::Relaxed);
    }

    /// Waits until `n` well-formed requests were answered in the current mode.
    pub fn wait_asked(&self, n: u64) {
        let until = Instant::now() + WAIT;
        while self.asked.load(Ordering::Relaxed) < n {
            assert!(Instant::now() < until, "the watcher never asked");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes the port: the server is gone.
    pub fn die(&mut self) {
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
pub fn serve(conn: TcpStream, cloud: Cloud, mode: Mode, deadline: jiff::Timestamp) -> Option<bool> {
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
                let http_date = |t: &jiff::Timestamp| {
                    jiff::fmt::rfc2822::DateTimePrinter::new().timestamp_to_rfc9110_string(t)
                };
                // A neighbour in the availability set is preempted sooner: its event is
                // in the answer too, and must not be taken for this VM's.
                let sooner =
                    jiff::Timestamp::from_second(deadline.as_second() - NOTICE_AHEAD_S).ok()?;
                let body = match mode {
                    Mode::Quiet => r#"{"DocumentIncarnation": 1, "Events": []}"#.to_string(),
                    Mode::Notice => format!(
                        r#"{{"DocumentIncarnation": 2, "Events": [{{"EventId": "0d3a7a51-neighbour", "EventType": "Preempt", "ResourceType": "VirtualMachine", "Resources": ["{AZURE_NEIGHBOUR}"], "EventStatus": "Scheduled", "NotBefore": "{}", "Description": "", "EventSource": "Platform", "DurationInSeconds": -1}}, {{"EventId": "602d9444-d2cd-49c7-8624-8643e7171297", "EventType": "Preempt", "ResourceType": "VirtualMachine", "Resources": ["{AZURE_VM}"], "EventStatus": "Scheduled", "NotBefore": "{}", "Description": "", "EventSource": "Platform", "DurationInSeconds": -1}}]}}"#,
                        http_date(&sooner).ok()?,
                        http_date(&deadline).ok()?
                    ),
                    Mode::Garbage => "\u{1}\u{2} not json".to_string(),
                };
                (200, body, Some(true))
            }
        }
        (
            Cloud::Azure,
            "GET",
            "/metadata/instance/compute/name?api-version=2021-02-01&format=text",
        ) => {
            if header("metadata") != Some("true") {
                (400, "missing Metadata: true".to_string(), Some(false))
            } else {
                (200, AZURE_VM.to_string(), None)
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
