//! The one place the process's environment is read: every `VOLPEX_*` variable of the
//! registry (`volpex_proto::launch::vars`, documented in docs/VOLPEXRUN.md) becomes a
//! typed value here, once, when the program initializes (`read`) or installs the
//! runtime's logger (`log_settings`).
//!
//! Owns the parsing of each variable and the errors naming a bad one. Must never be
//! bypassed: no other module reads the environment, they get these values.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use volpex_proto::handshake::JobKey;
use volpex_proto::launch::{parse_cpus, parse_key, vars};
use volpex_proto::message::ReplicaId;

use crate::config::Config;
use crate::error::Error;

/// Everything the environment says, read once at `initialize`.
pub(crate) struct Environment {
    /// The tunables, defaults overridden by the variables set.
    pub config: Config,
    /// What volpexrun passed; `None` when it did not start this process (a job of one).
    pub launch: Option<Launch>,
}

/// What volpexrun passes a replica it starts.
pub(crate) struct Launch {
    /// This process.
    pub me: ReplicaId,
    /// Number of ranks.
    pub ranks: u32,
    /// Replicas per rank.
    pub replicas: u32,
    /// The job key.
    pub key: JobKey,
    /// The launcher's control address.
    pub launcher: SocketAddr,
    /// Where to listen for peers; `None`: `auto`, the interface that reaches the
    /// launcher.
    pub bind: Option<IpAddr>,
    /// Heartbeat timing and the drain grace.
    pub heartbeat: Heartbeat,
    /// Fault injection: exit after this many sends.
    pub exit_after_sends: Option<u64>,
    /// Fault injection: exit after making this many coordinated choices.
    pub exit_after_choices: Option<u64>,
    /// How long to wait for the address table.
    pub rendezvous_timeout: Duration,
    /// Which incarnation of its replica this process is.
    pub incarnation: u32,
    /// The CPUs to bind this process to; `None`: any.
    pub cpus: Option<Vec<usize>>,
    /// The address a draining predecessor serves its handover on.
    pub handover: Option<SocketAddr>,
}

/// Heartbeat timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Heartbeat {
    /// How often each side sends a beat (`VOLPEX_HEARTBEAT_MS`).
    pub interval: Duration,
    /// Silence after which the other side counts as gone (`VOLPEX_HEARTBEAT_TIMEOUT_MS`).
    pub timeout: Duration,
    /// How long the replica runs on after SIGTERM (`VOLPEX_DRAIN_GRACE_MS`); `None`:
    /// SIGTERM ends it at once, as usual.
    pub drain_grace: Option<Duration>,
}

impl Default for Heartbeat {
    fn default() -> Self {
        Heartbeat {
            interval: Duration::from_millis(250),
            timeout: Duration::from_millis(2_000),
            drain_grace: None,
        }
    }
}

/// Reads the whole environment. A variable that does not parse is an error naming it.
pub(crate) fn read() -> Result<Environment, Error> {
    let config = config().map_err(Error::Launch)?;
    let launch = if std::env::var_os(vars::RANK).is_some() {
        Some(launch()?)
    } else {
        None
    };
    Ok(Environment { config, launch })
}

/// Who this process is and which diagnostics it prints, for `log_to_stderr` (called
/// before `initialize`): `(rank, replica, filter)`.
pub(crate) fn log_settings() -> (String, String, String) {
    let get = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let level = std::env::var(vars::LOG)
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn".into());
    (get(vars::RANK, "0"), get(vars::REPLICA, "0"), level)
}

/// The tunables: defaults overridden by the variables set.
fn config() -> Result<Config, String> {
    let mut c = Config::default();
    let p = &mut c.protocol;
    if let Some(v) = u64_var(vars::LOG_BYTES)? {
        p.log_bytes_max =
            usize::try_from(v).map_err(|_| format!("{} too large", vars::LOG_BYTES))?;
    }
    if let Some(v) = u64_var(vars::ACK_TIMEOUT_MS)? {
        p.ack_timeout = Duration::from_millis(v.max(1));
    }
    if let Some(v) = u64_var(vars::HEDGE_MS)? {
        p.hedge_timeout = Duration::from_millis(v.max(1));
    }
    if let Some(v) = u64_var(vars::LAG_MS)? {
        p.lag_timeout = Duration::from_millis(v);
    }
    if let Some(v) = u64_var(vars::CONSUMED_MS)? {
        p.consumed_interval = Duration::from_millis(v.max(1));
    }
    if let Some(v) = u64_var(vars::ACK_DELAY_US)? {
        p.ack_delay = Duration::from_micros(v);
    }
    if let Some(v) = u64_var(vars::SEND_DETERMINISTIC)? {
        p.send_deterministic = v != 0;
    }
    if let Some(v) = u64_var(vars::REGENERATE)? {
        p.regenerate = v != 0;
    }
    if let Some(v) = u64_var(vars::REPLAY_BYTES)? {
        p.replay_bytes_max =
            usize::try_from(v).map_err(|_| format!("{} too large", vars::REPLAY_BYTES))?;
    }
    if let Some(v) = u64_var(vars::CONNECT_TIMEOUT_MS)? {
        c.connect_timeout = Duration::from_millis(v.max(1));
    }
    if let Some(v) = u64_var(vars::SPIN_US)? {
        c.spin = Some(Duration::from_micros(v));
    }
    if let Some(v) = u64_var(vars::HARD_SPIN_US)? {
        c.hard_spin = Some(Duration::from_micros(v));
    }
    if let Some(v) = u64_var(vars::YIELD)? {
        c.yield_when_idle = v != 0;
    }
    if let Some(v) = u64_var(vars::SHM)? {
        c.shm = v != 0;
    }
    if let Some(v) = u64_var(vars::PEER_TIMEOUT_MS)? {
        c.peer_timeout = (v > 0).then(|| Duration::from_millis(v));
    }
    if let Some(v) = u64_var(vars::CONFIRM_WAIT_US)? {
        c.confirm_wait = Some(Duration::from_micros(v));
    }
    if let Some(v) = string_var(vars::TCP_CONGESTION)? {
        c.tcp_congestion = parse_congestion(&v)?;
    }
    Ok(c)
}

/// What volpexrun passed (`VOLPEX_RANK` is set).
fn launch() -> Result<Launch, Error> {
    let launch_err = |e: String| Error::Launch(e);
    let num = |name: &str| match u64_var(name).map_err(launch_err)? {
        Some(v) => u32::try_from(v).map_err(|_| Error::Launch(format!("{name} too large"))),
        None => Err(Error::Launch(format!("{name} is not set"))),
    };
    let set = |name: &str| {
        string_var(name)
            .map_err(launch_err)?
            .ok_or_else(|| Error::Launch(format!("{name} is not set")))
    };
    let rank = num(vars::RANK)?;
    let replica = num(vars::REPLICA)?;
    let ranks = num(vars::SIZE)?;
    let replicas = num(vars::REPLICAS)?;
    if rank >= ranks || replica >= replicas || ranks == 0 || replicas == 0 {
        return Err(Error::Launch(format!(
            "replica {rank}.{replica} does not fit a job of {ranks} x {replicas}"
        )));
    }
    let key = parse_key(&set(vars::JOB_KEY)?)
        .map_err(|e| Error::Launch(format!("{}: {e}", vars::JOB_KEY)))?;
    let launcher: SocketAddr = set(vars::LAUNCHER)?
        .parse()
        .map_err(|e| Error::Launch(format!("{}: {e}", vars::LAUNCHER)))?;
    let bind = match string_var(vars::BIND).map_err(launch_err)? {
        Some(s) if s == "auto" => None,
        Some(s) => Some(
            s.parse()
                .map_err(|e| Error::Launch(format!("{}={s:?}: {e}", vars::BIND)))?,
        ),
        None => Some(IpAddr::from([127, 0, 0, 1])),
    };
    let incarnation = match u64_var(vars::INCARNATION).map_err(launch_err)? {
        None => 0,
        Some(v) => u32::try_from(v)
            .map_err(|_| Error::Launch(format!("{} too large", vars::INCARNATION)))?,
    };
    let cpus = match string_var(vars::CPUS).map_err(launch_err)? {
        None => None,
        Some(list) => Some(
            parse_cpus(&list)
                .map_err(|e| Error::Launch(format!("{}={list:?}: {e}", vars::CPUS)))?,
        ),
    };
    let handover = match string_var(vars::HANDOVER).map_err(launch_err)? {
        None => None,
        Some(a) => Some(
            a.parse()
                .map_err(|e| Error::Launch(format!("{}={a}: {e}", vars::HANDOVER)))?,
        ),
    };
    Ok(Launch {
        me: ReplicaId::new(rank, replica),
        ranks,
        replicas,
        key,
        launcher,
        bind,
        heartbeat: heartbeat()?,
        exit_after_sends: u64_var(vars::FAULT_EXIT_AFTER_SENDS).map_err(launch_err)?,
        exit_after_choices: u64_var(vars::FAULT_EXIT_AFTER_CHOICES).map_err(launch_err)?,
        rendezvous_timeout: Duration::from_millis(
            u64_var(vars::RENDEZVOUS_TIMEOUT_MS)
                .map_err(launch_err)?
                .unwrap_or(120_000),
        ),
        incarnation,
        cpus,
        handover,
    })
}

/// Heartbeat defaults overridden by `VOLPEX_HEARTBEAT_MS`, `VOLPEX_HEARTBEAT_TIMEOUT_MS`
/// and `VOLPEX_DRAIN_GRACE_MS`.
fn heartbeat() -> Result<Heartbeat, Error> {
    let mut c = Heartbeat::default();
    if let Some(v) = u64_var(vars::HEARTBEAT_MS).map_err(Error::Launch)? {
        c.interval = Duration::from_millis(v.max(10));
    }
    if let Some(v) = u64_var(vars::HEARTBEAT_TIMEOUT_MS).map_err(Error::Launch)? {
        c.timeout = Duration::from_millis(v.max(1));
    }
    if let Some(v) = u64_var(vars::DRAIN_GRACE_MS).map_err(Error::Launch)? {
        c.drain_grace = Some(Duration::from_millis(v));
    }
    if c.timeout <= c.interval {
        return Err(Error::Launch(format!(
            "heartbeat timeout ({:?}) must be longer than the interval ({:?})",
            c.timeout, c.interval
        )));
    }
    Ok(c)
}

/// A congestion control name as the kernel takes it (`TCP_CA_NAME_MAX` is 16 with the
/// terminating zero), or `system` for none.
fn parse_congestion(v: &str) -> Result<Option<String>, String> {
    let v = v.trim();
    if v == "system" {
        return Ok(None);
    }
    if v.is_empty() || v.len() > 15 || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "{}={v:?} is not a congestion control name (e.g. cubic, reno, bbr) or `system`",
            vars::TCP_CONGESTION
        ));
    }
    Ok(Some(v.to_string()))
}

/// Reads a string variable.
fn string_var(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(s) => Ok(Some(s)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not valid UTF-8")),
    }
}

/// Reads an unsigned integer variable (`_` separators allowed).
fn u64_var(name: &str) -> Result<Option<u64>, String> {
    string_var(name)?
        .map(|s| {
            s.replace('_', "")
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{name}={s:?} is not a non-negative integer"))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn congestion_control_names() {
        assert_eq!(parse_congestion("cubic"), Ok(Some("cubic".into())));
        assert_eq!(parse_congestion(" bbr "), Ok(Some("bbr".into())));
        assert_eq!(parse_congestion("system"), Ok(None));
        for bad in ["", "cu bic", "a_name_too_long_", "cubic;reno"] {
            let e = parse_congestion(bad).unwrap_err();
            assert!(e.contains("VOLPEX_TCP_CONGESTION"), "{e}");
        }
    }
}
