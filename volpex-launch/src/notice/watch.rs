//! The watcher thread: asks the metadata server (plain HTTP, `ureq`) every
//! `POLL_INTERVAL` and reports what changed: the server it watches (`auto` probes them
//! once at start), a new notice, trouble reading the server (said once until it answers
//! again).
//!
//! Owns the HTTP requests and the AWS token. Must never panic on an answer, never wait
//! longer than `POLL_TIMEOUT` for one, and never decide what a notice does.

use std::time::{Duration, Instant};

use super::answers::{self, Answer};
use super::{Cloud, NoticeSpec, Seen};

/// How often the server is asked.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The longest one poll may take (a server that went away costs no more).
const POLL_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `auto` waits for each cloud's server at start (off the cloud, the
/// link-local address may not answer at all).
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// The most bytes of an answer read.
const BODY_MAX_BYTES: u64 = 64 * 1024;
/// The AWS token's life asked for, and when a new one is asked for.
const AWS_TOKEN_TTL: Duration = Duration::from_secs(6 * 3600);
const AWS_TOKEN_RENEW: Duration = Duration::from_secs(3600);

/// What the watcher tells the driver (from a host's agent: in a `FromAgent::Watcher`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Report {
    /// A line for the user: the server watched, none found, trouble or its end.
    Say(String),
    /// A new notice.
    Notice(Seen),
}

/// Starts the watcher for `spec` (none for `NoticeSpec::None`); `tell` hands its
/// reports to the driver and says false once nobody listens (the watcher then ends).
pub fn start(
    spec: NoticeSpec,
    tell: impl Fn(Report) -> bool + Send + 'static,
) -> std::io::Result<()> {
    if spec == NoticeSpec::None {
        return Ok(());
    }
    std::thread::Builder::new()
        .name("volpexrun-notice".into())
        .spawn(move || run(spec, tell))
        .map(|_| ())
}

fn run(spec: NoticeSpec, tell: impl Fn(Report) -> bool) {
    let mut server = match spec {
        NoticeSpec::None => return,
        NoticeSpec::File { path } => return super::file::run(path, tell),
        NoticeSpec::Cloud { cloud, base } => Server::new(cloud, base, POLL_TIMEOUT),
        NoticeSpec::Auto { base } => {
            let found = Cloud::ALL.into_iter().find_map(|cloud| {
                let mut s = Server::new(cloud, base.clone(), PROBE_TIMEOUT);
                s.poll().is_ok().then_some(s)
            });
            match found {
                Some(s) => Server::new(s.cloud, s.base, POLL_TIMEOUT),
                None => {
                    tell(Report::Say(format!(
                        "--preemption-notice auto: no metadata server answered at {base} (asked gcp, aws, azure); no notices will be watched"
                    )));
                    return;
                }
            }
        }
    };
    if !tell(Report::Say(format!(
        "watching {} preemption notices at {}",
        server.cloud.name(),
        server.base
    ))) {
        return;
    }
    let mut last: Option<String> = None;
    let mut troubled = false;
    loop {
        let began = Instant::now();
        let told = match server.poll() {
            Ok(answer) => {
                let mut ok = true;
                if troubled {
                    troubled = false;
                    ok = tell(Report::Say(format!(
                        "{} metadata server at {} answers again",
                        server.cloud.name(),
                        server.base
                    )));
                }
                match answer {
                    Some(n) if last.as_deref() != Some(n.key.as_str()) => {
                        last = Some(n.key.clone());
                        ok && tell(Report::Notice(n.seen(jiff::Timestamp::now())))
                    }
                    Some(_) => ok,
                    None => {
                        last = None;
                        ok
                    }
                }
            }
            Err(why) if !troubled => {
                troubled = true;
                tell(Report::Say(format!(
                    "cannot read the {} metadata server at {}: {why}; still watching",
                    server.cloud.name(),
                    server.base
                )))
            }
            Err(_) => true,
        };
        if !told {
            return;
        }
        std::thread::sleep(POLL_INTERVAL.saturating_sub(began.elapsed()));
    }
}

/// One cloud's metadata server.
struct Server {
    cloud: Cloud,
    base: String,
    agent: ureq::Agent,
    /// AWS: the IMDSv2 token and when it was had.
    token: Option<(String, Instant)>,
    /// Azure: this VM's name, once asked (`None` inside: the server did not say).
    vm_name: Option<Option<String>>,
}

impl Server {
    fn new(cloud: Cloud, base: String, timeout: Duration) -> Server {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            // The metadata server is on the link; never through a proxy from the
            // environment.
            .proxy(None)
            .max_redirects(0)
            .build()
            .into();
        Server {
            cloud,
            base,
            agent,
            token: None,
            vm_name: None,
        }
    }

    /// Asks once: no notice, a notice, or why the answer makes no sense.
    fn poll(&mut self) -> Answer {
        match self.cloud {
            Cloud::Gcp => {
                let url = format!("{}/computeMetadata/v1/instance/preempted", self.base);
                let (status, body) = read(
                    self.agent
                        .get(&url)
                        .header("Metadata-Flavor", "Google")
                        .call(),
                )?;
                answers::gcp(status, &body)
            }
            Cloud::Azure => {
                if self.vm_name.is_none() {
                    self.vm_name = Some(self.azure_vm_name());
                }
                let url = format!(
                    "{}/metadata/scheduledevents?api-version=2020-07-01",
                    self.base
                );
                let (status, body) = read(self.agent.get(&url).header("Metadata", "true").call())?;
                answers::azure(
                    status,
                    &body,
                    self.vm_name.as_ref().and_then(|n| n.as_deref()),
                )
            }
            Cloud::Aws => {
                let token = self.aws_token()?;
                let url = format!("{}/latest/meta-data/spot/instance-action", self.base);
                let (status, body) = read(
                    self.agent
                        .get(&url)
                        .header("X-aws-ec2-metadata-token", &token)
                        .call(),
                )?;
                if status == 401 {
                    // Expired or refused: a new one next time.
                    self.token = None;
                }
                answers::aws(status, &body)
            }
        }
    }

    /// Azure: this VM's name (`instance/compute/name`), to tell its scheduled events
    /// from its neighbours'; `None` if the server does not say (every `Preempt` counts).
    fn azure_vm_name(&self) -> Option<String> {
        let url = format!(
            "{}/metadata/instance/compute/name?api-version=2021-02-01&format=text",
            self.base
        );
        match read(self.agent.get(&url).header("Metadata", "true").call()) {
            Ok((200, name)) if !name.trim().is_empty() && name.len() < 256 => {
                Some(name.trim().to_string())
            }
            Ok(_) | Err(_) => None,
        }
    }

    /// The IMDSv2 session token, asked for anew when old.
    fn aws_token(&mut self) -> Result<String, String> {
        if let Some((t, at)) = &self.token {
            if at.elapsed() < AWS_TOKEN_RENEW {
                return Ok(t.clone());
            }
        }
        let url = format!("{}/latest/api/token", self.base);
        let (status, body) = read(
            self.agent
                .put(&url)
                .header(
                    "X-aws-ec2-metadata-token-ttl-seconds",
                    AWS_TOKEN_TTL.as_secs().to_string(),
                )
                .send_empty(),
        )?;
        let token = body.trim();
        if status != 200 || token.is_empty() || token.len() > 1024 {
            return Err(format!("no IMDSv2 token (HTTP status {status})"));
        }
        self.token = Some((token.to_string(), Instant::now()));
        Ok(token.to_string())
    }
}

/// The status and (at most `BODY_MAX_BYTES` of) the body of an answer.
fn read(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<(u16, String), String> {
    let mut resp = r.map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp
        .body_mut()
        .with_config()
        .limit(BODY_MAX_BYTES)
        .read_to_string()
        .map_err(|e| format!("reading the answer: {e}"))?;
    Ok((status, body))
}
