//! What the launcher knows about each replica and each host: plain records and the enums
//! of their lives.
//!
//! Owns the data only, no behaviour beyond small predicates. Must never do I/O: pids are
//! numbers here, connections and child processes live in the driver (`job::mod`).

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::ReplicaStats;

/// Life of one replica as the launcher sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplicaState {
    /// Started, not registered yet.
    Starting,
    /// Registered and computing.
    Running,
    /// The application finished; the replica serves its log until SHUTDOWN.
    Finalized,
    /// Exited cleanly after finishing.
    Finished,
    /// Died or exited badly before finishing.
    Failed(String),
    /// Gave up: fell behind the sender logs.
    Retired(String),
    /// Ended by the launcher (job done without it, or job failed).
    Ended,
    /// Got a preemption notice (SIGTERM: its machine goes away soon) and was ended once
    /// its replacement started.
    Drained,
}

impl ReplicaState {
    /// Its process is (as far as the launcher knows) still doing the job's work.
    pub fn alive(&self) -> bool {
        match self {
            ReplicaState::Starting | ReplicaState::Running | ReplicaState::Finalized => true,
            ReplicaState::Finished
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended
            | ReplicaState::Drained => false,
        }
    }

    /// Its application is still computing: lost now, it is worth a new incarnation.
    pub fn computing(&self) -> bool {
        match self {
            ReplicaState::Starting | ReplicaState::Running => true,
            ReplicaState::Finalized
            | ReplicaState::Finished
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended
            | ReplicaState::Drained => false,
        }
    }

    /// How a replica in this state ended, in words (for one that is no longer alive).
    pub fn words(&self) -> String {
        match self {
            ReplicaState::Failed(w) | ReplicaState::Retired(w) => w.clone(),
            ReplicaState::Drained => "ended after a preemption notice (SIGTERM)".into(),
            ReplicaState::Finished => "finished".into(),
            ReplicaState::Ended => "ended".into(),
            ReplicaState::Starting | ReplicaState::Running | ReplicaState::Finalized => {
                "alive".into()
            }
        }
    }

    /// Its application finished (it may still serve its log).
    pub fn completed(&self) -> bool {
        match self {
            ReplicaState::Finalized | ReplicaState::Finished => true,
            ReplicaState::Starting
            | ReplicaState::Running
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended
            | ReplicaState::Drained => false,
        }
    }
}

/// Where an incarnation's state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// One of the job's first processes (incarnation 0).
    Start,
    /// A new incarnation started before the rendezvous (the address table had not gone
    /// out: nobody had state yet): it starts from the beginning like the first processes
    /// and takes part in the rendezvous in its lost predecessor's place.
    Restart,
    /// A new incarnation that replays its rank's program from the start (until its
    /// output says it was restored from a checkpoint).
    Replay,
    /// A new incarnation restored from its sibling's checkpoint of this number.
    Snapshot(u64),
}

impl Origin {
    /// The words in the report (`from`): `start`, `restart`, `replay` or `snapshot N`.
    pub fn word(self) -> String {
        match self {
            Origin::Start => "start".into(),
            Origin::Restart => "restart".into(),
            Origin::Replay => "replay".into(),
            Origin::Snapshot(n) => format!("snapshot {n}"),
        }
    }
}

/// One incarnation of a replica as the launcher sees it.
#[derive(Debug, Clone)]
pub struct Replica {
    /// Which one.
    pub id: ReplicaId,
    /// Which incarnation of it: 0 for the job's first processes; a new one gets 1 + the
    /// highest incarnation its rank ever used.
    pub incarnation: u32,
    /// When it was started, since the job started.
    pub started_at: Duration,
    /// Where its state came from.
    pub origin: Origin,
    /// When it caught up with its siblings (a new incarnation), since the job started.
    pub caught_up_at: Option<Duration>,
    /// Index into the job's hosts.
    pub host: usize,
    /// OS pid on its host; 0 until known.
    pub pid: u32,
    /// For a remote replica the launcher ended: when to stop waiting for its exit report
    /// (its host may be cut off).
    pub give_up_at: Option<Duration>,
    /// Where it is in its life.
    pub state: ReplicaState,
    /// Its process is gone (or no longer waited for).
    pub exited: bool,
    /// Its peer address, once registered.
    pub addr: Option<String>,
    /// Counters it reported when it finished.
    pub stats: Option<ReplicaStats>,
    /// What its program last wrote to standard error, for a failure's summary.
    pub last_words: LastWords,
    /// The launcher ended it on a sibling's request (see `state::deaths::fence`).
    pub fenced: bool,
    /// It got a preemption notice and hands over at its next checkpoint
    /// (`ToLauncher::Handover`).
    pub draining: bool,
    /// A new incarnation that takes its state over from its draining predecessor, not
    /// from a sibling: it needs no sibling to catch up.
    pub handover: bool,
    /// A fault stopped it (SIGSTOP) and it has not been continued since.
    pub stopped: bool,
    /// The user signals (SIGUSR1, SIGUSR2) volpexrun forwarded to it: killed by one of
    /// these, it died of its program's own choice, as under mpirun, not of a failure.
    pub forwarded: Vec<i32>,
    /// It died of one of `forwarded`: its siblings got the same signal, so its end says
    /// nothing of how its rank goes on.
    pub ended_by_forwarded: bool,
    /// Its control connection is open: it registered, and the connection has not closed
    /// yet. What it said there last may still be on its way when its exit is seen.
    pub control_open: bool,
    /// Its exit, seen while `control_open`, with a code that is the runtime's only if the
    /// replica said so first (retired, drained): judged once the connection closed, when
    /// every word it sent is in (`state::exits`).
    pub held_exit: Option<HeldExit>,
}

/// An exit whose judgement waits for the replica's last control messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldExit {
    /// Its exit code.
    pub code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// When the exit was seen, since the job started.
    pub seen_at: Duration,
}

/// What a replica's program last wrote to standard error, for its failure's summary: the
/// last line (a `main` that returns an error prints `Error: ...` last), or, once it
/// panicked, the panic's place and message (the backtrace and notes after them say
/// less).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LastWords {
    /// Nothing yet.
    #[default]
    Silent,
    /// Its last line.
    Said(String),
    /// It printed a panic's heading (`thread 'main' panicked at FILE:LINE:COL:`); its
    /// message is the next line.
    Panicking(String),
    /// The panic's place and message; later lines are ignored.
    Panicked(String),
}

impl LastWords {
    /// Whether the program printed a panic's heading.
    pub fn panicked(&self) -> bool {
        matches!(self, LastWords::Panicking(_) | LastWords::Panicked(_))
    }

    /// Takes one more line of standard error.
    pub fn heed(&mut self, line: &str) {
        *self = match std::mem::take(self) {
            LastWords::Panicked(w) => LastWords::Panicked(w),
            LastWords::Panicking(place) => LastWords::Panicked(format!("{place}: {line}")),
            LastWords::Silent | LastWords::Said(_) => match line.find(" panicked at ") {
                Some(at) if line.starts_with("thread '") => {
                    LastWords::Panicking(line[at + 1..].trim_end_matches(':').to_string())
                }
                Some(_) | None => LastWords::Said(line.to_string()),
            },
        };
    }

    /// The words to quote, if any.
    pub fn text(&self) -> Option<&str> {
        match self {
            LastWords::Silent => None,
            LastWords::Said(w) | LastWords::Panicking(w) | LastWords::Panicked(w) => Some(w),
        }
    }
}

impl Replica {
    /// A replica about to start on host `host` (pid 0 until known).
    pub fn starting(id: ReplicaId, host: usize) -> Replica {
        Replica {
            id,
            incarnation: 0,
            started_at: Duration::ZERO,
            origin: Origin::Start,
            caught_up_at: None,
            host,
            pid: 0,
            give_up_at: None,
            state: ReplicaState::Starting,
            exited: false,
            addr: None,
            stats: None,
            last_words: LastWords::Silent,
            fenced: false,
            draining: false,
            handover: false,
            stopped: false,
            forwarded: Vec::new(),
            ended_by_forwarded: false,
            control_open: false,
            held_exit: None,
        }
    }

    /// A new incarnation `incarnation` of replica `id`, started at `now` on host `host`.
    pub fn newcomer(id: ReplicaId, incarnation: u32, host: usize, now: Duration) -> Replica {
        Replica {
            incarnation,
            started_at: now,
            origin: Origin::Replay,
            ..Replica::starting(id, host)
        }
    }

    /// It holds its rank's state: one of the first processes (or one started again before
    /// the rendezvous in a lost one's place), or a new incarnation that caught up. Only
    /// such a replica is a source for a new incarnation of a sibling.
    pub fn caught_up(&self) -> bool {
        match self.origin {
            Origin::Start | Origin::Restart => true,
            Origin::Replay | Origin::Snapshot(_) => self.caught_up_at.is_some(),
        }
    }
}

/// Life of a host as the launcher sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum HostState {
    /// No process of the job was placed here: its agent starts when a new incarnation of
    /// a lost replica goes there (`--regenerate`).
    Idle,
    /// The remote shell runs; the agent has not said hello yet.
    Launching,
    /// The agent runs (or the host is this machine).
    Up,
    /// Unreachable at start, or its link ended during the run (tried again later for a
    /// new incarnation, see `Host::lost_at`).
    Lost(String),
}

/// One host as the launcher sees it.
#[derive(Debug, Clone)]
pub struct Host {
    /// Its name (`localhost` for this machine).
    pub name: String,
    /// Where it is in its life.
    pub state: HostState,
    /// Its processes are started and signalled by a `volpexrun agent` (once the remote
    /// shell runs); false for this machine and for a remote host whose shell never ran.
    pub agent: bool,
    /// When its remote shell was started, since the job started (the launch timeout
    /// counts from then).
    pub launched_at: Duration,
    /// When it was last lost, since the job started: a lost host is tried again for a new
    /// incarnation `HOST_RETRY_AFTER` later (a preempted machine's replacement, a pod
    /// recreated under the same name).
    pub lost_at: Option<Duration>,
    /// How many times it was lost.
    pub losses: u32,
}

/// How a process ended, in words (`killed by SIGKILL`, `exited with code 3`).
pub fn describe_exit(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(s)) => match Signal::try_from(s) {
            Ok(sig) => format!("killed by {sig}"),
            Err(_) => format!("killed by signal {s}"),
        },
        (Some(c), None) => format!("exited with code {c}"),
        (None, None) => "ended".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_words_keep_a_panics_place_and_message() {
        let mut w = LastWords::default();
        assert_eq!(w.text(), None);
        w.heed("working");
        w.heed("Error: BadInput");
        assert_eq!(w.text(), Some("Error: BadInput"));
        w.heed("thread 'main' (4242) panicked at src/main.rs:3:5:");
        w.heed("rank 0 gives up");
        w.heed("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace");
        assert_eq!(
            w.text(),
            Some("panicked at src/main.rs:3:5: rank 0 gives up")
        );
        // A line that only mentions a panic is just a line.
        let mut w = LastWords::default();
        w.heed("the solver panicked at step 3");
        assert_eq!(w.text(), Some("the solver panicked at step 3"));
    }

    #[test]
    fn exits_in_words() {
        assert_eq!(describe_exit(Some(3), None), "exited with code 3");
        assert_eq!(describe_exit(None, Some(9)), "killed by SIGKILL");
        assert_eq!(describe_exit(Some(0), Some(15)), "killed by SIGTERM");
        assert_eq!(describe_exit(None, Some(1000)), "killed by signal 1000");
        // The runtime's own codes are judged with what the replica said (`state::exits`).
        assert_eq!(describe_exit(Some(75), None), "exited with code 75");
        assert_eq!(describe_exit(None, None), "ended");
    }
}
