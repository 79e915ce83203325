//! One step of the job's state machine: the inputs the driver reports and the actions it
//! must carry out.
//!
//! Owns only these two types. Must never do I/O: an action names what to do (a signal to
//! a replica, a message on its control connection), the driver does it.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{ToLauncher, ToProcess};

/// What the driver reports to the state machine.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A local process started with this pid.
    Spawned {
        /// Which replica.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// Its pid.
        pid: u32,
    },
    /// The remote shell of `host` runs: its processes are the agent's from now on.
    LinkOpened {
        /// Index of the host.
        host: usize,
    },
    /// Every host was asked to start its processes: check that every rank has a replica.
    Launched,
    /// A replica authenticated and registered its peer address.
    Registered {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// Its listener address.
        addr: String,
    },
    /// A message on a replica's control connection.
    Message {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// What.
        msg: ToLauncher,
    },
    /// A replica's control connection ended.
    ControlClosed {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
    },
    /// The control server cannot go on (see `ControlEvent::Fatal`).
    ControlFailed {
        /// What happened.
        why: String,
    },
    /// A replica's heartbeat connection has been silent for the heartbeat timeout.
    Silent {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// How long nothing came.
        silent_for: Duration,
    },
    /// A local process ended.
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
    /// volpexrun itself was asked to stop by this signal.
    Interrupted(i32),
    /// A replica's program wrote this line to its standard error (not a runtime
    /// diagnostic): what a failing program said last goes into the summary.
    LastWords {
        /// Who.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// The line, without its newline.
        text: String,
    },
    /// A new incarnation was restored from its sibling's checkpoint (its output says so).
    Restored {
        /// Which replica.
        id: ReplicaId,
        /// Which incarnation of it.
        inc: u32,
        /// The checkpoint's number.
        checkpoint: u64,
    },
    /// The agent of `host` said hello.
    Hello {
        /// Index of the host.
        host: usize,
        /// The host's own name.
        hostname: String,
        /// The agent's pid.
        pid: u32,
    },
    /// The agent of `host` started a process.
    Started {
        /// Index of the host.
        host: usize,
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Which incarnation of it.
        inc: u32,
        /// Its pid there.
        pid: u32,
    },
    /// The agent of `host` could not start a process.
    StartFailed {
        /// Index of the host.
        host: usize,
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Which incarnation of it.
        inc: u32,
        /// Why.
        error: String,
    },
    /// The agent of `host` reports a process ended.
    RemoteExited {
        /// Index of the host.
        host: usize,
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Which incarnation of it.
        inc: u32,
        /// Exit code, if it exited.
        code: Option<i32>,
        /// Signal, if one ended it.
        signal: Option<i32>,
    },
    /// `host` is gone: unreachable at start (staging, remote shell) or a fatal agent error.
    HostLost {
        /// Index of the host.
        host: usize,
        /// Why.
        why: String,
    },
    /// A preemption notice for `host` (`--preemption-notice`): its machine goes in
    /// `deadline_in`.
    Notice {
        /// Index of the host.
        host: usize,
        /// Which notice, in the watcher's words.
        said: String,
        /// How long until the machine goes.
        deadline_in: Duration,
    },
    /// The link of `host` ended; `code` is the remote shell's exit code if known.
    LinkEnded {
        /// Index of the host.
        host: usize,
        /// The remote shell's exit code.
        code: Option<i32>,
        /// The last lines the remote side wrote on stderr.
        stderr: String,
    },
}

/// What the driver must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send a message on the control connection of the replica's current incarnation, if
    /// it is open.
    Send {
        /// To whom.
        to: ReplicaId,
        /// What.
        msg: ToProcess,
    },
    /// Send `bytes` (`ToProcess::Files`) on the files connection of this incarnation of
    /// the replica, if it is open.
    SendFiles {
        /// To whom.
        to: ReplicaId,
        /// Which incarnation.
        inc: u32,
        /// The message.
        bytes: Vec<u8>,
    },
    /// Keep the control connection that came with this incarnation's registration.
    KeepControl(ReplicaId, u32),
    /// Drop this incarnation's control connection (not a newer one's).
    CloseControl(ReplicaId, u32),
    /// Start incarnation `inc` of replica `id` on `host`, over the host's launcher path
    /// (a child here, the host's agent elsewhere), with `VOLPEX_INCARNATION`. The live
    /// lines about what led to it print first; its own `Live` line follows it.
    Spawn {
        /// Which replica.
        id: ReplicaId,
        /// Its new incarnation.
        inc: u32,
        /// Index of the host.
        host: usize,
        /// Where its draining predecessor serves the handover (`VOLPEX_HANDOVER`).
        handover: Option<String>,
    },
    /// Deliver a signal to the replica's process: by pid on this machine, through the
    /// agent on a remote host.
    Signal {
        /// Which replica.
        id: ReplicaId,
        /// Which incarnation of it (never another one's process).
        inc: u32,
        /// Which signal.
        signal: Signal,
    },
    /// Tell every agent to kill its processes and exit.
    EndAgents,
    /// Kill the remote shell of a host (if it runs one) and stop waiting for its pipes.
    CutHost(usize),
    /// `count` output pipes of `host` will never report their end.
    ForgetPipes {
        /// Index of the host.
        host: usize,
        /// How many pipes.
        count: usize,
    },
    /// A replica on `host` died during the run: the host's living processes may move onto
    /// the CPUs it used (`--bind`).
    Rebind {
        /// Index of the host.
        host: usize,
    },
    /// Print `volpexrun: <text>` on stderr.
    Print(String),
    /// A live line about the run (a regeneration): printed like `Print` unless
    /// `--quiet`.
    Live(String),
    /// Silence the standard error, except this rank's (whose errors explain a failure).
    Mute(Option<u32>),
}
