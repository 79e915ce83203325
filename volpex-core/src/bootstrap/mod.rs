//! Joining a job: what the launcher passes in the environment, the authenticated
//! control connection, registration and the rendezvous (address table).
//!
//! Owns the `VOLPEX_*` launch variables and the heartbeat connection (`heartbeat`). Must
//! never carry protocol traffic between replicas; after the rendezvous the control
//! connection belongs to the transport.

pub mod affinity;
pub mod files;
pub mod handover;
pub mod heartbeat;

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use crate::config::env_u64;
use crate::error::Error;
use crate::message::ReplicaId;
use crate::transport::auth::{self, JobKey, PeerId};
use crate::wire::control::{self, ToLauncher, ToProcess};
use crate::wire::stream::{read_one, write_one};

/// Environment variable names the launcher sets.
pub mod vars {
    /// Rank of this process.
    pub const RANK: &str = "VOLPEX_RANK";
    /// Replica index (= team) of this process.
    pub const REPLICA: &str = "VOLPEX_REPLICA";
    /// Number of ranks.
    pub const SIZE: &str = "VOLPEX_SIZE";
    /// Replicas per rank.
    pub const REPLICAS: &str = "VOLPEX_REPLICAS";
    /// Launcher control address, `ip:port`.
    pub const LAUNCHER: &str = "VOLPEX_LAUNCHER";
    /// Job key, 64 hex digits. Never put on a command line.
    pub const JOB_KEY: &str = "VOLPEX_JOB_KEY";
    /// Address to listen on for peers and advertise (default 127.0.0.1); `auto` takes
    /// the local address of the connection to the launcher (the interface that reaches
    /// it), which is what a replica started on another host needs.
    pub const BIND: &str = "VOLPEX_BIND";
    /// Heartbeat interval on the launcher connection, in ms.
    pub const HEARTBEAT_MS: &str = "VOLPEX_HEARTBEAT_MS";
    /// Silence on the heartbeat connection after which the other side is gone, in ms.
    pub const HEARTBEAT_TIMEOUT_MS: &str = "VOLPEX_HEARTBEAT_TIMEOUT_MS";
    /// Fault injection: exit abruptly right after this many sends.
    pub const FAULT_EXIT_AFTER_SENDS: &str = "VOLPEX_FAULT_EXIT_AFTER_SENDS";
    /// Fault injection: exit abruptly right after making this many coordinated choices.
    pub const FAULT_EXIT_AFTER_CHOICES: &str = "VOLPEX_FAULT_EXIT_AFTER_CHOICES";
    /// How long to wait for the address table, in ms.
    pub const RENDEZVOUS_TIMEOUT_MS: &str = "VOLPEX_RENDEZVOUS_TIMEOUT_MS";
    /// CPUs this process runs on (`0,2-3`; see `affinity`); unset: any.
    pub const CPUS: &str = "VOLPEX_CPUS";
    /// Which incarnation of its replica this process is (0 for the first; see
    /// `ToProcess::Joining`).
    pub const INCARNATION: &str = "VOLPEX_INCARNATION";
    /// `1` when the launcher regenerates lost replicas: senders then keep what a new
    /// incarnation replaying the program needs while their log has room.
    pub const REGENERATE: &str = "VOLPEX_REGENERATE";
    /// How long a replica runs on after SIGTERM, in milliseconds (from `--drain-grace`);
    /// unset: SIGTERM ends it at once.
    pub const DRAIN_GRACE_MS: &str = "VOLPEX_DRAIN_GRACE_MS";
    /// A new incarnation that takes over from a draining predecessor: the address its
    /// predecessor serves the handover on (see `handover`).
    pub const HANDOVER: &str = "VOLPEX_HANDOVER";
}

/// Stderr lines a replica's runtime prints start with this (then `[rank.replica]`), so the
/// launcher can tell diagnostics from program output.
pub const DIAG_PREFIX: &str = "volpex";

/// Start of an output mark: a line a replica writes on stdout and stderr at a checkpoint
/// (`\x01volpex:checkpoint:N`) or where it was restored from one
/// (`\x01volpex:restored:N`). The launcher swallows these lines and numbers a restored
/// replica's later lines from where its sibling's stood at that checkpoint.
pub const OUTPUT_MARK: &str = "\x01volpex:";

/// The output mark `what` (`checkpoint` or `restored`) of checkpoint `number`.
pub fn output_mark(what: &str, number: u64) -> String {
    format!("{OUTPUT_MARK}{what}:{number}")
}

/// Parses a line (without its newline) as an output mark: (`what`, number).
pub fn parse_output_mark(line: &[u8]) -> Option<(&str, u64)> {
    let rest = line.strip_prefix(OUTPUT_MARK.as_bytes())?;
    let text = std::str::from_utf8(rest).ok()?;
    let (what, n) = text.trim_end_matches(['\r', '\n']).split_once(':')?;
    Some((what, n.parse().ok()?))
}

/// Everything a process learns when it joins a job.
pub struct Joined {
    /// This process.
    pub me: ReplicaId,
    /// Number of ranks.
    pub ranks: u32,
    /// Replicas per rank.
    pub replicas: u32,
    /// The job key.
    pub key: JobKey,
    /// Where peers reach us.
    pub listener: mio::net::TcpListener,
    /// The launcher's control address.
    pub launcher_addr: SocketAddr,
    /// Authenticated control connection to the launcher.
    pub launcher: TcpStream,
    /// Every replica's address, `None` if it never registered.
    pub addrs: Vec<Vec<Option<SocketAddr>>>,
    /// Fault injection: exit after this many sends.
    pub exit_after_sends: Option<u64>,
    /// Fault injection: exit after making this many coordinated choices.
    pub exit_after_choices: Option<u64>,
    /// This process's incarnation.
    pub incarnation: u32,
    /// Incarnation of every replica, `[rank][replica]`.
    pub incarnations: Vec<Vec<u32>>,
    /// `Some(n)`: this is a regenerated incarnation, caught up once it received n
    /// messages (see `ToProcess::Table`).
    pub catch_up: Option<u64>,
}

fn var(name: &str) -> Result<String, Error> {
    std::env::var(name).map_err(|_| Error::Launch(format!("{name} is not set")))
}

fn num(name: &str) -> Result<u32, Error> {
    match env_u64(name).map_err(Error::Launch)? {
        Some(v) => u32::try_from(v).map_err(|_| Error::Launch(format!("{name} too large"))),
        None => Err(Error::Launch(format!("{name} is not set"))),
    }
}

/// Parses a 64-hex-digit key.
pub fn parse_key(hex: &str) -> Result<JobKey, String> {
    let hex = hex.trim();
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("job key must be 64 hex digits".into());
    }
    let mut k = [0u8; 32];
    for (i, slot) in k.iter_mut().enumerate() {
        *slot = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
    }
    Ok(k)
}

/// Formats a key as hex.
pub fn key_hex(k: &JobKey) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

/// True when the launcher started this process.
pub fn launched() -> bool {
    std::env::var_os(vars::RANK).is_some()
}

/// Joins the job the launcher described in the environment. The peer listener gets the
/// TCP congestion control `congestion` before any peer can dial it (`tuning::tune_listener`).
pub fn join(connect_timeout: Duration, congestion: Option<&str>) -> Result<Joined, Error> {
    // Before any thread starts: they inherit the binding.
    affinity::apply_from_env()?;
    let rank = num(vars::RANK)?;
    let replica = num(vars::REPLICA)?;
    let ranks = num(vars::SIZE)?;
    let replicas = num(vars::REPLICAS)?;
    if rank >= ranks || replica >= replicas || ranks == 0 || replicas == 0 {
        return Err(Error::Launch(format!(
            "replica {rank}.{replica} does not fit a job of {ranks} x {replicas}"
        )));
    }
    let key = parse_key(&var(vars::JOB_KEY)?)
        .map_err(|e| Error::Launch(format!("{}: {e}", vars::JOB_KEY)))?;
    let launcher_addr: SocketAddr = var(vars::LAUNCHER)?
        .parse()
        .map_err(|e| Error::Launch(format!("{}: {e}", vars::LAUNCHER)))?;
    // None: `auto`, decided once the launcher connection shows which interface reaches it.
    let bind_ip: Option<IpAddr> = match std::env::var(vars::BIND) {
        Ok(s) if s == "auto" => None,
        Ok(s) => Some(
            s.parse()
                .map_err(|e| Error::Launch(format!("{}={s:?}: {e}", vars::BIND)))?,
        ),
        Err(_) => Some(IpAddr::from([127, 0, 0, 1])),
    };
    let beat = heartbeat::HeartbeatConfig::from_env()?;
    let exit_after_sends = env_u64(vars::FAULT_EXIT_AFTER_SENDS).map_err(Error::Launch)?;
    let exit_after_choices = env_u64(vars::FAULT_EXIT_AFTER_CHOICES).map_err(Error::Launch)?;
    let rendezvous = Duration::from_millis(
        env_u64(vars::RENDEZVOUS_TIMEOUT_MS)
            .map_err(Error::Launch)?
            .unwrap_or(120_000),
    );
    let me = ReplicaId::new(rank, replica);
    let incarnation = match env_u64(vars::INCARNATION).map_err(Error::Launch)? {
        None => 0,
        Some(v) => u32::try_from(v)
            .map_err(|_| Error::Launch(format!("{} too large", vars::INCARNATION)))?,
    };

    let listen = |ip: IpAddr| {
        let l = mio::net::TcpListener::bind(SocketAddr::new(ip, 0))
            .map_err(|e| Error::Bootstrap(format!("cannot listen on {ip}: {e}")))?;
        crate::transport::tuning::tune_listener(&l, congestion);
        let a = l
            .local_addr()
            .map_err(|e| Error::Bootstrap(e.to_string()))?;
        log::info!("replica {me} listening on {a}");
        Ok::<_, Error>((l, a))
    };
    let early = match bind_ip {
        Some(ip) => Some(listen(ip)?),
        None => None,
    };
    let mut s = TcpStream::connect_timeout(&launcher_addr, connect_timeout)
        .map_err(|e| Error::Bootstrap(format!("launcher {launcher_addr}: {e}")))?;
    let (listener, my_addr) = match early {
        Some(l) => l,
        None => listen(
            s.local_addr()
                .map_err(|e| Error::Bootstrap(e.to_string()))?
                .ip(),
        )?,
    };
    let _ = s.set_nodelay(true);
    s.set_read_timeout(Some(rendezvous))
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    let server = auth::client_blocking(&mut s, &key, PeerId::Replica(me, incarnation))
        .map_err(|e| Error::Bootstrap(format!("launcher handshake: {e}")))?;
    if server != PeerId::Launcher {
        return Err(Error::Bootstrap(
            "the control address is not a launcher".into(),
        ));
    }
    let (h, p) = control::encode(&ToLauncher::Register {
        addr: my_addr.to_string(),
    });
    write_one(&mut s, &h, &p).map_err(|e| Error::Bootstrap(e.to_string()))?;
    heartbeat::start(launcher_addr, &key, me, incarnation, beat, connect_timeout)?;
    // Death notices for replicas that never registered may come first; the table
    // leaves those out anyway.
    let (table, incarnations, catch_up) = loop {
        let (h, p) = read_one(&mut s).map_err(|e| Error::Bootstrap(format!("rendezvous: {e}")))?;
        match control::decode::<ToProcess>(&h, &p) {
            Ok(ToProcess::Table {
                addrs,
                incarnations,
                catch_up,
            }) => break (addrs, incarnations, catch_up),
            Ok(ToProcess::Death { rank, replica, .. }) => {
                log::debug!("replica {rank}.{replica} died before the rendezvous")
            }
            Ok(ToProcess::Joining { .. } | ToProcess::Alive { .. }) => {
                log::debug!("a regenerated replica joined before the rendezvous")
            }
            Ok(ToProcess::Shutdown) => {
                return Err(Error::Bootstrap("the launcher ended the job".into()))
            }
            Ok(ToProcess::Files { .. }) => {
                log::warn!("a files message on the control connection; ignored")
            }
            Err(e) => return Err(Error::Bootstrap(e.to_string())),
        }
    };
    let shape_ok = |lens: Vec<usize>| {
        lens.len() == ranks as usize && lens.iter().all(|&r| r == replicas as usize)
    };
    if !shape_ok(table.iter().map(Vec::len).collect())
        || !shape_ok(incarnations.iter().map(Vec::len).collect())
    {
        return Err(Error::Bootstrap("address table has the wrong shape".into()));
    }
    let addrs = table
        .into_iter()
        .map(|reps| {
            reps.into_iter()
                .map(|a| a.and_then(|s| s.parse::<SocketAddr>().ok()))
                .collect()
        })
        .collect();
    s.set_read_timeout(None)
        .map_err(|e| Error::Bootstrap(e.to_string()))?;
    s.flush().map_err(|e| Error::Bootstrap(e.to_string()))?;
    Ok(Joined {
        me,
        ranks,
        replicas,
        key,
        listener,
        launcher_addr,
        launcher: s,
        addrs,
        exit_after_sends,
        exit_after_choices,
        incarnation,
        incarnations,
        catch_up,
    })
}
