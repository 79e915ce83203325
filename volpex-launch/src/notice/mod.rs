//! `--preemption-notice`: watching for the notice that a machine is about to be taken
//! back (volpexrun for its own machine, a host's agent for its host), so that its replicas
//! hand over to new incarnations before it goes: a cloud's metadata server (AWS spot,
//! Google Cloud spot and preemptible VMs, Azure spot), or a file that appears (what a
//! Kubernetes pod's `preStop` hook, or any site's script, writes before the machine goes).
//!
//! Parts: this file (the flag's value, and what a watcher reports), `answers` (what
//! each cloud's metadata server answers, parsed: pure functions), `watch` (the thread
//! that asks over plain HTTP, with `ureq`), `file` (the thread that looks for the file).
//! The job's state machine decides what a notice does (`job::state`'s notices). Owns the
//! watchers and their HTTP; must never touch a process or decide anything about the job,
//! and never panic or block the launcher on a bad answer: a watcher that cannot read its
//! server says so once and keeps watching.

mod answers;
mod file;
mod watch;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use watch::{start, Report};

use crate::error::CliError;

/// The clouds whose notices volpexrun reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cloud {
    /// AWS EC2 spot: IMDSv2 `spot/instance-action`.
    Aws,
    /// Google Cloud spot and preemptible VMs: `instance/preempted`.
    Gcp,
    /// Azure spot: Scheduled Events, a `Preempt` event.
    Azure,
}

impl Cloud {
    /// Every cloud, in the order `auto` probes them.
    pub const ALL: [Cloud; 3] = [Cloud::Gcp, Cloud::Aws, Cloud::Azure];

    /// The flag's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Cloud::Aws => "aws",
            Cloud::Gcp => "gcp",
            Cloud::Azure => "azure",
        }
    }

    /// How long before the machine goes the cloud promises its notice, for a notice that
    /// names no time (Google's never does): AWS two minutes, Google and Azure 30 s.
    pub fn notice_period(self) -> Duration {
        match self {
            Cloud::Aws => Duration::from_secs(120),
            Cloud::Gcp | Cloud::Azure => Duration::from_secs(30),
        }
    }
}

/// The metadata servers' address on every cloud (link-local; Google's
/// `metadata.google.internal` resolves to it).
pub const METADATA_BASE: &str = "http://169.254.169.254";

/// What `--preemption-notice` asks for (also what volpexrun hands every host's agent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum NoticeSpec {
    /// No watcher (the default).
    #[default]
    None,
    /// Probe every cloud's metadata server once at start, watch the one that answers.
    Auto {
        /// The metadata servers' base address (`auto=URL`), else `METADATA_BASE`.
        base: String,
    },
    /// Watch this cloud's metadata server.
    Cloud {
        /// Which.
        cloud: Cloud,
        /// Its base address (`KIND=URL`), else `METADATA_BASE`.
        base: String,
    },
    /// Watch for this file to appear (`file=PATH`; `{host}` in it is the host's name).
    File {
        /// Where.
        path: String,
    },
}

/// The placeholder for the host's name in `file=PATH`.
pub const HOST_PLACEHOLDER: &str = "{host}";

impl NoticeSpec {
    /// The spec as the watcher of host `name` runs it: `{host}` in a file's path becomes
    /// `name` (one notice directory shared by the hosts, one file each).
    pub fn for_host(&self, name: &str) -> NoticeSpec {
        match self {
            NoticeSpec::File { path } => NoticeSpec::File {
                path: path.replace(HOST_PLACEHOLDER, name),
            },
            NoticeSpec::None | NoticeSpec::Auto { .. } | NoticeSpec::Cloud { .. } => self.clone(),
        }
    }
}

/// Parses `--preemption-notice`: `none`, `auto`, `aws`, `gcp`, `azure`, each but `none`
/// optionally `=URL` (an `http://` base address replacing the metadata server's); or
/// `file=PATH` (an absolute path).
pub fn parse_spec(s: &str) -> Result<NoticeSpec, CliError> {
    let bad = |why: &str| CliError::Notice {
        spec: s.into(),
        problem: why.into(),
    };
    if let Some(path) = s.strip_prefix("file=") {
        if !path.starts_with('/') {
            return Err(bad(
                "file=PATH needs an absolute path (the agents on other hosts run elsewhere)",
            ));
        }
        return Ok(NoticeSpec::File { path: path.into() });
    }
    let (kind, base) = match s.split_once('=') {
        Some((k, url)) => {
            let url = url.trim_end_matches('/');
            match url.strip_prefix("http://") {
                Some(rest) if !rest.is_empty() => {}
                Some(_) | None => return Err(bad(
                    "the address must be http://HOST[:PORT] (metadata servers speak plain HTTP)",
                )),
            }
            (k, url.to_string())
        }
        None => (s, METADATA_BASE.to_string()),
    };
    match kind {
        "none" if base == METADATA_BASE => Ok(NoticeSpec::None),
        "none" => Err(bad("none takes no address")),
        "auto" => Ok(NoticeSpec::Auto { base }),
        k => Cloud::ALL
            .into_iter()
            .find(|c| c.name() == k)
            .map(|cloud| NoticeSpec::Cloud { cloud, base })
            .ok_or_else(|| {
                bad("expected aws, gcp, azure, auto or none, optionally =http://HOST[:PORT], or file=PATH")
            }),
    }
}

/// A notice a watcher read: the machine goes away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Whose metadata server said it.
    pub cloud: Cloud,
    /// What it said, in its own words (`terminate`, `Preempt`, `preempted`).
    pub what: String,
    /// When the machine goes, as the server said it (UTC), if it did.
    pub deadline: Option<jiff::Timestamp>,
    /// Tells one notice from another (the same one is read at every poll).
    pub key: String,
}

/// What the watcher hands the job's driver: a notice, its deadline made relative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seen {
    /// Its words and deadline, for the live line and the report.
    pub said: String,
    /// How long from now the machine goes: the server's deadline (0 if already past),
    /// else the cloud's `notice_period` (a file's: its own, else `file::NOTICE_PERIOD`).
    pub deadline_in: Duration,
}

impl Notice {
    /// The notice as the driver takes it, read at wall-clock time `now`.
    pub fn seen(&self, now: jiff::Timestamp) -> Seen {
        let (deadline_in, when) = match self.deadline {
            Some(t) => {
                let left = now.duration_until(t).try_into().unwrap_or(Duration::ZERO);
                (left, format!("deadline {t}"))
            }
            None => (
                self.cloud.notice_period(),
                format!(
                    "no time given: deadline in {} s",
                    self.cloud.notice_period().as_secs()
                ),
            ),
        };
        Seen {
            said: format!("{} ({}, {when})", self.cloud.name(), self.what),
            deadline_in,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_takes_a_kind_and_an_address() {
        assert_eq!(parse_spec("none").unwrap(), NoticeSpec::None);
        assert_eq!(
            parse_spec("auto").unwrap(),
            NoticeSpec::Auto {
                base: METADATA_BASE.into()
            }
        );
        assert_eq!(
            parse_spec("gcp=http://127.0.0.1:8080/").unwrap(),
            NoticeSpec::Cloud {
                cloud: Cloud::Gcp,
                base: "http://127.0.0.1:8080".into()
            }
        );
        assert_eq!(
            parse_spec("aws").unwrap(),
            NoticeSpec::Cloud {
                cloud: Cloud::Aws,
                base: METADATA_BASE.into()
            }
        );
        assert_eq!(
            parse_spec("file=/tmp/notice-{host}").unwrap(),
            NoticeSpec::File {
                path: "/tmp/notice-{host}".into()
            }
        );
        assert_eq!(
            parse_spec("file=/n/{host}/{host}").unwrap().for_host("h1"),
            NoticeSpec::File {
                path: "/n/h1/h1".into()
            }
        );
        for bad in [
            "",
            "file=",
            "file=notice",
            "ibm",
            "gcp=",
            "gcp=https://x",
            "gcp=127.0.0.1:80",
            "none=http://x",
            "GCP",
        ] {
            assert!(parse_spec(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_notice_without_a_time_gets_the_clouds_period_and_a_past_one_none() {
        let now: jiff::Timestamp = "2026-12-06T12:00:00Z".parse().unwrap();
        let gcp = Notice {
            cloud: Cloud::Gcp,
            what: "preempted".into(),
            deadline: None,
            key: "TRUE".into(),
        };
        assert_eq!(gcp.seen(now).deadline_in, Duration::from_secs(30));
        assert_eq!(
            gcp.seen(now).said,
            "gcp (preempted, no time given: deadline in 30 s)"
        );
        let aws = Notice {
            cloud: Cloud::Aws,
            what: "terminate".into(),
            deadline: Some("2026-12-06T12:01:30Z".parse().unwrap()),
            key: String::new(),
        };
        let seen = aws.seen(now);
        assert_eq!(seen.deadline_in, Duration::from_secs(90));
        assert_eq!(seen.said, "aws (terminate, deadline 2026-12-06T12:01:30Z)");
        let late = Notice {
            deadline: Some("2026-12-06T11:59:00Z".parse().unwrap()),
            ..aws
        };
        assert_eq!(late.seen(now).deadline_in, Duration::ZERO);
    }
}
