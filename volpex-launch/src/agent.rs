//! `volpexrun agent`: the per-host helper that volpexrun starts on every remote host (over
//! ssh or srun), and the framed messages it exchanges with volpexrun over its stdin and
//! stdout.
//!
//! volpexrun writes one `ToAgent::Start` (program, working directory, environment
//! including the job key, the replicas of this host) on the agent's stdin: the key travels
//! inside the ssh channel, never on a command line. The agent starts the processes, sends
//! their pids, their output lines (numbered per replica, as `output::pump` does locally)
//! and their exits back on stdout, obeys `Signal` and `EndAll`, and answers `Vitals` (what
//! `/proc` says of a process whose heartbeat is overdue). When its stdin closes
//! (volpexrun or the ssh connection is gone) it kills its processes and exits; it also
//! exits once all of them have ended, unless volpexrun may still send `Spawn` (a new
//! incarnation of a replica, with `--regenerate`): then it waits for its stdin to close
//! or for `EndAll`. Every process is (rank, replica, incarnation) in every message. Owns the processes of one host; must never decide
//! anything about the job.
//!
//! Frames: 4-byte little-endian length, then a postcard body; at most `FRAME_BYTES_MAX`.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use crossbeam_channel::Sender;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use crate::output::{pump, Line, Mark, Stream};
use crate::vitals::{self, Vitals};

/// Largest frame either side accepts.
pub const FRAME_BYTES_MAX: usize = 64 << 20;

/// One process the agent starts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProcSpec {
    /// Rank.
    pub rank: u32,
    /// Replica index.
    pub replica: u32,
    /// Incarnation (0 for the job's first processes).
    pub incarnation: u32,
    /// Variables for this process only (rank, replica, incarnation, fault injection).
    pub env: Vec<(String, String)>,
}

/// Everything an agent needs to start its host's processes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StartSpec {
    /// The host's name as volpexrun knows it (for messages).
    pub host: String,
    /// Program path (relative paths are taken from `wdir`).
    pub program: String,
    /// Program arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub wdir: String,
    /// Variables for every process (VOLPEX_*, -x exports, the job key).
    pub env: Vec<(String, String)>,
    /// volpexrun's control port.
    pub launcher_port: u16,
    /// volpexrun's address; `None`: the client address of this ssh connection.
    pub launcher_ip: Option<String>,
    /// A staging directory to remove once every process has ended.
    pub stage_dir: Option<String>,
    /// CPU binding of this host's processes (`--bind`).
    pub bind: crate::binding::Bind,
    /// The processes.
    pub procs: Vec<ProcSpec>,
    /// volpexrun may send `Spawn` later (`--regenerate`): the agent stays until its stdin
    /// closes or `EndAll` comes, even when every process of its host has ended.
    pub regenerate: bool,
    /// `--stdin RANK`: this rank's processes read the bytes of `ToAgent::Stdin`; every
    /// other process (and all with `None`) reads /dev/null.
    pub stdin_rank: Option<u32>,
    /// `--preemption-notice`: the agent watches its host's metadata server and reports
    /// what it sees (`FromAgent::Watcher`).
    pub preemption_notice: crate::notice::NoticeSpec,
}

/// volpexrun -> agent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum ToAgent {
    /// Start the processes (first message, exactly once).
    Start(Box<StartSpec>),
    /// Start one more process (a new incarnation), like `Start`'s.
    Spawn(ProcSpec),
    /// Send a signal to one incarnation of a replica.
    Signal {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation.
        incarnation: u32,
        /// Signal number.
        signal: i32,
    },
    /// Kill every process and exit.
    EndAll,
    /// Bytes of volpexrun's standard input, for the processes of `StartSpec::stdin_rank`.
    Stdin(Vec<u8>),
    /// volpexrun's standard input ended.
    StdinEnd,
    /// A replica of this host died: bind the living ones, `(rank, replica)`, again (see
    /// `binding::rebind`), if this agent bound them at start.
    Rebind {
        /// The host's replicas still alive, as volpexrun knows them.
        living: Vec<(u32, u32)>,
        /// The team the job's other teams follow (`binding::lead_team`).
        #[serde(default)]
        lead: Option<u32>,
    },
    /// The heartbeat of this incarnation is overdue: read its process's vitals (see
    /// `vitals`) and answer with `FromAgent::Vitals`.
    Vitals {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation.
        incarnation: u32,
    },
}

/// agent -> volpexrun.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum FromAgent {
    /// The agent runs (the remote shell worked).
    Hello {
        /// The host's own name.
        hostname: String,
        /// The agent's pid.
        pid: u32,
    },
    /// A process started.
    Started {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation.
        incarnation: u32,
        /// Its pid on that host.
        pid: u32,
    },
    /// A process could not be started.
    StartFailed {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation.
        incarnation: u32,
        /// Why.
        error: String,
    },
    /// Nothing could be started on this host.
    Fatal {
        /// Why.
        error: String,
    },
    /// An output line (see `output::Line`).
    Line {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation.
        incarnation: u32,
        /// 0 stdout, 1 stderr.
        stream: u8,
        /// Line index among the replica's program lines; `None` for a diagnostic or a mark.
        index: Option<u64>,
        /// The checkpoint its numbering starts from (see `output::Line`).
        segment: Option<u64>,
        /// An output mark (see `output::Mark`).
        mark: Option<Mark>,
        /// The bytes.
        text: Vec<u8>,
    },
    /// One output pipe ended.
    PipeEnd,
    /// The host's preemption notice watcher reports (`--preemption-notice`).
    Watcher(crate::notice::Report),
    /// A process ended.
    Exited {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation.
        incarnation: u32,
        /// Exit code, if it exited.
        code: Option<i32>,
        /// Signal, if one ended it.
        signal: Option<i32>,
    },
    /// What `/proc` says of a process's threads (the answer to `ToAgent::Vitals`; `Idle`
    /// for one that has ended).
    Vitals {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation.
        incarnation: u32,
        /// Its vitals.
        vitals: Vitals,
    },
}

impl FromAgent {
    /// The output line this message carries, if any.
    pub fn into_line(self) -> Option<Line> {
        match self {
            FromAgent::Line {
                rank,
                replica,
                incarnation,
                stream,
                index,
                segment,
                mark,
                text,
            } => Some(Line {
                rank,
                replica,
                incarnation,
                segment,
                mark,
                stream: if stream == 0 {
                    Stream::Out
                } else {
                    Stream::Err
                },
                index,
                text,
            }),
            FromAgent::Hello { .. }
            | FromAgent::Started { .. }
            | FromAgent::StartFailed { .. }
            | FromAgent::Fatal { .. }
            | FromAgent::PipeEnd
            | FromAgent::Watcher(_)
            | FromAgent::Exited { .. }
            | FromAgent::Vitals { .. } => None,
        }
    }
}

/// Writes one frame.
pub fn write_frame<T: Serialize>(w: &mut impl Write, msg: &T) -> std::io::Result<()> {
    let body = postcard::to_stdvec(msg).map_err(std::io::Error::other)?;
    let len = u32::try_from(body.len()).map_err(std::io::Error::other)?;
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
pub fn read_frame<T: for<'de> Deserialize<'de>>(r: &mut impl Read) -> std::io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > FRAME_BYTES_MAX {
        return Err(std::io::Error::other(format!(
            "frame of {len} bytes is over the limit"
        )));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    postcard::from_bytes(&body)
        .map(Some)
        .map_err(|e| std::io::Error::other(format!("bad frame: {e}")))
}

enum AgentEvent {
    Out(FromAgent),
    Command(ToAgent),
    StdinClosed,
}

struct Child {
    rank: u32,
    replica: u32,
    incarnation: u32,
    pid: u32,
    exited: bool,
}

/// Entry point of `volpexrun agent`; returns the exit code.
pub fn main() -> i32 {
    let (tx, rx) = crossbeam_channel::unbounded::<AgentEvent>();
    let mut out = std::io::stdout().lock();
    let hostname = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned())
        .unwrap_or_default();
    if write_frame(
        &mut out,
        &FromAgent::Hello {
            hostname,
            pid: std::process::id(),
        },
    )
    .is_err()
    {
        return 1;
    }
    let mut stdin = std::io::stdin();
    let spec = match read_frame::<ToAgent>(&mut stdin) {
        Ok(Some(ToAgent::Start(spec))) => spec,
        Ok(Some(
            other @ (ToAgent::Signal { .. }
            | ToAgent::Spawn(_)
            | ToAgent::EndAll
            | ToAgent::Stdin(_)
            | ToAgent::StdinEnd
            | ToAgent::Rebind { .. }
            | ToAgent::Vitals { .. }),
        )) => {
            let _ = write_frame(
                &mut out,
                &FromAgent::Fatal {
                    error: format!("expected Start, got {other:?}"),
                },
            );
            return 1;
        }
        Ok(None) => return 0,
        Err(e) => {
            let _ = write_frame(
                &mut out,
                &FromAgent::Fatal {
                    error: format!("reading the job description: {e}"),
                },
            );
            return 1;
        }
    };
    {
        let tx = tx.clone();
        let _ = std::thread::Builder::new()
            .name("agent-stdin".into())
            .spawn(move || loop {
                match read_frame::<ToAgent>(&mut stdin) {
                    Ok(Some(cmd)) => {
                        if tx.send(AgentEvent::Command(cmd)).is_err() {
                            return;
                        }
                    }
                    Ok(None) | Err(_) => {
                        let _ = tx.send(AgentEvent::StdinClosed);
                        return;
                    }
                }
            });
    }
    {
        let tx = tx.clone();
        if let Err(e) = crate::notice::start(spec.preemption_notice.clone(), move |r| {
            tx.send(AgentEvent::Out(FromAgent::Watcher(r))).is_ok()
        }) {
            let _ = write_frame(
                &mut out,
                &FromAgent::Watcher(crate::notice::Report::Say(format!(
                    "cannot start the preemption notice watcher: {e}"
                ))),
            );
        }
    }
    let fatal = |out: &mut std::io::StdoutLock<'_>, error: String| {
        let _ = write_frame(out, &FromAgent::Fatal { error });
        1
    };
    let launcher_ip = match spec.launcher_ip.clone() {
        Some(ip) => ip,
        None => match std::env::var("SSH_CONNECTION")
            .ok()
            .and_then(|c| c.split_whitespace().next().map(str::to_string))
        {
            Some(ip) => ip,
            None => {
                return fatal(
                    &mut out,
                    format!(
                        "{}: no launcher address given and SSH_CONNECTION is not set; use --launcher-addr",
                        spec.host
                    ),
                )
            }
        },
    };
    let launcher = match launcher_ip.parse::<std::net::IpAddr>() {
        Ok(ip) => std::net::SocketAddr::new(ip, spec.launcher_port).to_string(),
        Err(e) => return fatal(&mut out, format!("launcher address {launcher_ip:?}: {e}")),
    };
    if let Err(e) = std::env::set_current_dir(&spec.wdir) {
        return fatal(
            &mut out,
            format!(
                "cannot enter working directory {} on {}: {e}",
                spec.wdir, spec.host
            ),
        );
    }
    let procs: Vec<(u32, u32)> = spec.procs.iter().map(|p| (p.rank, p.replica)).collect();
    let cpus = match crate::binding::cpus_env(spec.bind, &procs, &spec.env) {
        Ok(c) => c,
        Err(e) => return fatal(&mut out, format!("{e} on {}", spec.host)),
    };
    let mut children = Vec::new();
    let input = crate::stdin::StdinHub::default();
    for p in &spec.procs {
        start_one(
            &spec,
            p,
            &launcher,
            &cpus,
            &input,
            &tx,
            &mut out,
            &mut children,
        );
    }
    let mut pipes = children.len() * 2;
    let mut launcher_gone = false;
    // Until volpexrun closes stdin or ends everything, it may send `Spawn`.
    let mut may_spawn = spec.regenerate;
    let kill_all = |children: &[Child]| {
        for c in children.iter().filter(|c| !c.exited) {
            if let Ok(pid) = i32::try_from(c.pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
    };
    // With regeneration, a host whose processes all ended may get a new one: wait for
    // volpexrun to close stdin.
    while children.iter().any(|c| !c.exited) || pipes > 0 || may_spawn {
        let Ok(ev) = rx.recv() else { break };
        match ev {
            AgentEvent::Out(msg) => {
                match &msg {
                    FromAgent::Exited {
                        rank,
                        replica,
                        incarnation,
                        ..
                    } => {
                        if let Some(c) = children.iter_mut().find(|c| {
                            c.rank == *rank
                                && c.replica == *replica
                                && c.incarnation == *incarnation
                        }) {
                            c.exited = true;
                        }
                    }
                    FromAgent::PipeEnd => pipes = pipes.saturating_sub(1),
                    FromAgent::Hello { .. }
                    | FromAgent::Started { .. }
                    | FromAgent::StartFailed { .. }
                    | FromAgent::Fatal { .. }
                    | FromAgent::Watcher(_)
                    | FromAgent::Vitals { .. }
                    | FromAgent::Line { .. } => {}
                }
                if !launcher_gone && write_frame(&mut out, &msg).is_err() {
                    launcher_gone = true;
                    kill_all(&children);
                }
            }
            AgentEvent::Command(ToAgent::Signal {
                rank,
                replica,
                incarnation,
                signal,
            }) => {
                let target = children.iter().find(|c| {
                    c.rank == rank
                        && c.replica == replica
                        && c.incarnation == incarnation
                        && !c.exited
                });
                if let (Some(c), Ok(sig)) = (target, Signal::try_from(signal)) {
                    if let Ok(pid) = i32::try_from(c.pid) {
                        let _ = kill(Pid::from_raw(pid), sig);
                    }
                }
            }
            AgentEvent::Command(ToAgent::Vitals {
                rank,
                replica,
                incarnation,
            }) => {
                let vitals = children
                    .iter()
                    .find(|c| {
                        c.rank == rank
                            && c.replica == replica
                            && c.incarnation == incarnation
                            && !c.exited
                    })
                    .map_or(Vitals::Idle, |c| vitals::of(c.pid));
                let _ = tx.send(AgentEvent::Out(FromAgent::Vitals {
                    rank,
                    replica,
                    incarnation,
                    vitals,
                }));
            }
            AgentEvent::Command(ToAgent::Rebind { living, lead }) => {
                if !cpus.is_empty() {
                    let teams: Vec<(u32, u32, u32)> = children
                        .iter()
                        .filter(|c| !c.exited && living.contains(&(c.rank, c.replica)))
                        .map(|c| (c.replica, c.rank, c.pid))
                        .collect();
                    if let Err(e) = crate::binding::rebind(spec.bind, &teams, lead) {
                        log::warn!("cannot bind the survivors again on {}: {e}", spec.host);
                    }
                }
            }
            AgentEvent::Command(ToAgent::Spawn(p)) => {
                if may_spawn && !launcher_gone {
                    let before = children.len();
                    start_one(
                        &spec,
                        &p,
                        &launcher,
                        &cpus,
                        &input,
                        &tx,
                        &mut out,
                        &mut children,
                    );
                    pipes += (children.len() - before) * 2;
                }
            }
            AgentEvent::Command(ToAgent::Start(_)) => {}
            AgentEvent::Command(ToAgent::Stdin(bytes)) => input.push(&bytes),
            AgentEvent::Command(ToAgent::StdinEnd) => input.end(),
            AgentEvent::Command(ToAgent::EndAll) | AgentEvent::StdinClosed => {
                may_spawn = false;
                kill_all(&children);
            }
        }
    }
    if let Some(dir) = &spec.stage_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    0
}

/// Starts one process of the host and reports it (`Started` or `StartFailed`); its pipes
/// and its exit are watched by threads that report on `tx`.
#[allow(clippy::too_many_arguments)]
fn start_one(
    spec: &StartSpec,
    p: &ProcSpec,
    launcher: &str,
    cpus: &crate::binding::CpuPlan,
    input: &crate::stdin::StdinHub,
    tx: &Sender<AgentEvent>,
    out: &mut std::io::StdoutLock<'_>,
    children: &mut Vec<Child>,
) {
    let mut cmd = Command::new(&spec.program);
    if let Some(list) = cpus.cpus_of(p.replica, p.rank) {
        cmd.env(
            volpex_proto::launch::vars::CPUS,
            volpex_proto::launch::format_cpus(&list),
        );
    }
    let reads_input = spec.stdin_rank == Some(p.rank);
    cmd.args(&spec.args)
        .stdin(if reads_input {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .envs(p.env.iter().map(|(k, v)| (k, v)))
        .env(volpex_proto::launch::vars::LAUNCHER, launcher)
        .env(volpex_proto::launch::vars::BIND, "auto");
    let (rank, replica, incarnation) = (p.rank, p.replica, p.incarnation);
    match cmd.spawn() {
        Ok(mut child) => {
            let pid = child.id();
            if let Some(pipe) = child.stdin.take() {
                if let Err(e) = input.attach(pipe) {
                    log::warn!("replica {rank}.{replica}: no thread for its standard input: {e}");
                }
            }
            let _ = write_frame(
                out,
                &FromAgent::Started {
                    rank,
                    replica,
                    incarnation,
                    pid,
                },
            );
            let who = (rank, replica, incarnation);
            if let Some(o) = child.stdout.take() {
                spawn_pump(o, who, Stream::Out, tx.clone());
            }
            if let Some(e) = child.stderr.take() {
                spawn_pump(e, who, Stream::Err, tx.clone());
            }
            let tx = tx.clone();
            let _ = std::thread::Builder::new()
                .name("agent-reaper".into())
                .spawn(move || {
                    let (code, signal) = match child.wait() {
                        Ok(st) => (st.code(), st.signal()),
                        Err(_) => (None, None),
                    };
                    let _ = tx.send(AgentEvent::Out(FromAgent::Exited {
                        rank,
                        replica,
                        incarnation,
                        code,
                        signal,
                    }));
                });
            children.push(Child {
                rank,
                replica,
                incarnation,
                pid,
                exited: false,
            });
        }
        Err(e) => {
            let _ = write_frame(
                out,
                &FromAgent::StartFailed {
                    rank,
                    replica,
                    incarnation,
                    error: format!("cannot start {} on {}: {e}", spec.program, spec.host),
                },
            );
        }
    }
}

fn spawn_pump<R: Read + Send + 'static>(
    pipe: R,
    who: (u32, u32, u32),
    stream: Stream,
    tx: Sender<AgentEvent>,
) {
    let _ = std::thread::Builder::new()
        .name("agent-output".into())
        .spawn(move || {
            pump(
                pipe,
                who,
                stream,
                tx,
                |l: Line| {
                    AgentEvent::Out(FromAgent::Line {
                        rank: l.rank,
                        replica: l.replica,
                        incarnation: l.incarnation,
                        stream: match l.stream {
                            Stream::Out => 0,
                            Stream::Err => 1,
                        },
                        index: l.index,
                        segment: l.segment,
                        mark: l.mark,
                        text: l.text,
                    })
                },
                AgentEvent::Out(FromAgent::PipeEnd),
            )
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_bad_input_is_an_error() {
        let mut buf = Vec::new();
        let msg = ToAgent::Signal {
            rank: 3,
            replica: 1,
            incarnation: 2,
            signal: 9,
        };
        write_frame(&mut buf, &msg).unwrap();
        write_frame(&mut buf, &ToAgent::EndAll).unwrap();
        let mut r = &buf[..];
        assert_eq!(read_frame::<ToAgent>(&mut r).unwrap(), Some(msg));
        assert_eq!(
            read_frame::<ToAgent>(&mut r).unwrap(),
            Some(ToAgent::EndAll)
        );
        assert_eq!(read_frame::<ToAgent>(&mut r).unwrap(), None);
        // Over the limit, truncated, garbage.
        let big = (FRAME_BYTES_MAX as u32 + 1).to_le_bytes();
        assert!(read_frame::<ToAgent>(&mut &big[..]).is_err());
        assert!(read_frame::<ToAgent>(&mut &[5, 0, 0, 0, 1][..]).is_err());
        assert!(read_frame::<ToAgent>(&mut &[2, 0, 0, 0, 0xff, 0xff][..]).is_err());
    }
}
