//! Control messages between the launcher and a replica (postcard in a CONTROL frame).

use serde::{Deserialize, Serialize};

use super::header::{Header, Kind, WireError};

/// Counters a replica reports while it runs (`ToLauncher::Stats`) and when it finishes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReplicaStats {
    /// Pulls that moved to another replica of the sender (death, silence, lag).
    pub failovers: u64,
    /// Messages sent.
    pub sends: u64,
    /// Of those, large ones never copied into the log: every live replica of the
    /// destination confirmed the direct write before the send returned.
    pub unlogged: u64,
    /// Large blocks of an exchange (an all-to-all) that waited for their receiver's pull
    /// before going out, instead of being copied into the log at once.
    pub held: u64,
    /// Messages received.
    pub receives: u64,
    /// Pulls this replica answered with DATA.
    pub served: u64,
    /// Log entries evicted.
    pub evicted: u64,
    /// Coordinated choices this replica made as its rank's leader.
    pub choices: u64,
}

/// Process -> launcher.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum ToLauncher {
    /// First message: where this replica listens for peers.
    Register {
        /// Peer listener address, `ip:port`.
        addr: String,
    },
    /// The application finished (finalize); the replica keeps serving its log.
    Finalized {
        /// What it did.
        stats: ReplicaStats,
    },
    /// The replica gives up (fell behind the logs); it exits after this.
    Retired {
        /// Human-readable reason.
        reason: String,
    },
    /// A sibling that leads or holds this rank's choices is unreachable or silent: end
    /// it and announce its death (see `pull::decision`).
    Fence {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// The incarnation meant; a request about an older one than the launcher's
        /// current is stale and ignored.
        incarnation: u32,
    },
    /// A regenerated incarnation has received as many messages as its sibling had when
    /// it started (`Table::catch_up`): it is an ordinary replica again. The launcher
    /// announces it to everyone with `ToProcess::Alive`.
    CaughtUp {
        /// Messages it has received so far.
        receives: u64,
    },
    /// The replica got SIGTERM (its machine goes away soon). It runs on for `grace_ms`
    /// at most; at its next checkpoint it stops and sends `Handover`. Without a
    /// checkpoint so far, the launcher may start its replacement from a sibling at once.
    /// Sent on the heartbeat connection.
    Draining {
        /// How long it runs on.
        grace_ms: u64,
        /// Checkpoints it has taken or restored so far.
        checkpoints: u64,
    },
    /// A draining replica stopped at a checkpoint and serves its state on `addr` to its
    /// next incarnation (`bootstrap::handover`): start it there, with `VOLPEX_HANDOVER`.
    Handover {
        /// Where the handover is served.
        addr: String,
    },
    /// Liveness, on the replica's second (heartbeat) connection only: the first message
    /// there says what the connection is, then one every heartbeat interval.
    Heartbeat,
    /// The file layer's report (`volpex_files::protocol::Up`, encoded), on the replica's
    /// files connection only: the first message there says what the connection is.
    Files {
        /// The report.
        bytes: Vec<u8>,
    },
    /// The replica's counters so far, on the control connection whenever they changed
    /// (at most every `config::STATS_INTERVAL`), so the launcher keeps the latest ones
    /// however the replica ends (killed, failed, ended by the launcher).
    Stats {
        /// The counters.
        stats: ReplicaStats,
    },
}

/// Launcher -> process.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum ToProcess {
    /// Listener address of every replica, `[rank][replica]`; `None` for one that is dead
    /// or has not registered yet (`starting`).
    Table {
        /// The addresses.
        addrs: Vec<Vec<Option<String>>>,
        /// `(rank, replica)` of every replica whose newest incarnation the launcher
        /// started but which had not registered yet: not dead (its rank is not lost), but
        /// unreachable until it joins (`Joining`, with its address and this incarnation).
        starting: Vec<(u32, u32)>,
        /// Incarnation of every replica, `[rank][replica]` (0 for the first process of
        /// each; see `Incarnation`).
        incarnations: Vec<Vec<u32>>,
        /// `Some(n)` when the receiving process is a regenerated incarnation: it replays
        /// its rank's program and has caught up once it has received `n` messages (what
        /// its most advanced live sibling had received when it started); then it sends
        /// `ToLauncher::CaughtUp`.
        catch_up: Option<u64>,
    },
    /// That incarnation of that replica is gone.
    Death {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Which incarnation died; a notice about an older one than the receiver knows
        /// is stale and ignored.
        incarnation: u32,
    },
    /// A new incarnation of (rank, replica) registered at `addr` and replays its rank's
    /// program: fence every older incarnation (close their connections, refuse their
    /// handshakes), accept its connections, serve its pulls and send it CONSUMED
    /// notices; it is not yet asked for messages nor counted before evicting log entries.
    Joining {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Its incarnation (greater than every earlier one of this rank).
        incarnation: u32,
        /// Its listener address, `ip:port`.
        addr: String,
        /// It takes its draining predecessor's state over (a handover): it goes on from
        /// where that one stopped, so senders keep what that one had not consumed
        /// (its consumption and checkpoint marks stand) instead of treating it as a
        /// replica replaying from a checkpoint.
        handover: bool,
    },
    /// That incarnation caught up: it is an ordinary live replica again (asked for
    /// messages, counted before evicting log entries).
    Alive {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Its incarnation.
        incarnation: u32,
    },
    /// The job is done: stop serving and exit 0.
    Shutdown,
    /// For the file layer (`volpex_files::protocol::Down`, encoded), on the files
    /// connection.
    Files {
        /// The message.
        bytes: Vec<u8>,
    },
}

/// Launcher -> process on the heartbeat connection. Read by the bootstrap heartbeat
/// thread, never by the transport.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum Liveness {
    /// The launcher is alive; sent every heartbeat interval.
    Beat,
}

/// Encodes a control message into header and payload.
pub fn encode<T: Serialize>(msg: &T) -> (Header, Vec<u8>) {
    let payload = postcard::to_stdvec(msg).unwrap_or_default();
    (Header::new(Kind::Control, payload.len()), payload)
}

/// Decodes a control payload.
pub fn decode<T: for<'de> Deserialize<'de>>(h: &Header, payload: &[u8]) -> Result<T, WireError> {
    if h.kind != Kind::Control {
        return Err(WireError::Unexpected {
            kind: h.kind,
            context: "on a control connection",
        });
    }
    postcard::from_bytes(payload).map_err(|e| WireError::BadControl(e.to_string()))
}
