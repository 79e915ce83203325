//! The events the launcher's driver loop takes from its threads: control connections,
//! process reapers, output pumps, the signal handler, the agent links of remote hosts and
//! the preemption notice watcher.
//!
//! Owns only the types: `control`, `remote` and the driver import them from here, so the
//! threads that produce events never depend on the driver. Must never do I/O or decide
//! anything about the job.

use std::net::TcpStream;
use std::time::Duration;

use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::ToLauncher;

use crate::agent::FromAgent;
use crate::output::Line;

/// Everything the main loop reacts to.
#[derive(Debug)]
pub enum Event {
    /// From a control connection.
    Control(ControlEvent),
    /// A process ended.
    Exited {
        /// Which replica.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// Its exit code, if it exited.
        code: Option<i32>,
        /// The signal that ended it, if one did.
        signal: Option<i32>,
    },
    /// An output line.
    Line(Line),
    /// An output pipe reached EOF.
    PipeEnd,
    /// volpexrun itself was asked to stop (SIGINT, SIGTERM, SIGHUP).
    Interrupted(i32),
    /// Bytes of volpexrun's stdin for the agent of `host` (`None`: it ended).
    Stdin {
        /// Index of the host.
        host: usize,
        /// The bytes.
        bytes: Option<Vec<u8>>,
    },
    /// From an agent link.
    Host(LinkId, HostEvent),
    /// From the `--preemption-notice` watcher of this machine.
    Notice(crate::notice::Report),
}

/// What a control connection reported.
#[derive(Debug)]
pub enum ControlEvent {
    /// A replica authenticated and registered its peer address.
    Registered {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// Its listener address.
        addr: String,
        /// Where to write to it.
        writer: TcpStream,
    },
    /// A replica opened its files connection (`ToLauncher::Files` first): where to
    /// write to it.
    FilesLink {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// Where to write to it.
        writer: TcpStream,
    },
    /// A message from a registered replica.
    Message {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// What.
        msg: ToLauncher,
    },
    /// The connection ended.
    Closed {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
    },
    /// The replica's heartbeat connection has been silent (or closed without the process
    /// being seen to exit) for longer than the heartbeat timeout.
    Silent {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// How long nothing came.
        silent_for: Duration,
    },
    /// The heartbeat of a replica on another host is overdue: its host's agent is to read
    /// its process's vitals (`ToAgent::Vitals`; the answer goes to `Incarnations`).
    Overdue {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
    },
    /// The control server cannot go on (out of file descriptors, poll failed): the job
    /// cannot gather its replicas and ends with this error.
    Fatal {
        /// What happened, for the user.
        why: String,
    },
}

/// Which agent link an event comes from: a host's links are numbered as they start, so
/// the end of a lost host's old link, read late, cannot end the link that replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkId {
    /// Index of the host.
    pub host: usize,
    /// The how-manieth link to that host (from 0).
    pub generation: u32,
}

/// What a host's link reported.
#[derive(Debug)]
pub enum HostEvent {
    /// A frame from the agent.
    Msg(FromAgent),
    /// The agent's stdout ended (agent exited, ssh failed or was cut).
    Gone {
        /// The last lines ssh/srun/the agent wrote on stderr.
        stderr: String,
    },
}
