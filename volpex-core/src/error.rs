//! Errors of the public API, typed by what the caller can do about them.
//!
//! Owns `Error`, every failure a Volpex call returns, each a variant a caller can match,
//! and the conversion from the engine's receive errors. Must never grow a catch-all
//! variant ("anything else", with only a text): a new failure gets a variant of its own.
//! Broken invariants that only a bug in Volpex can cause are assertions, not errors,
//! except in the send path (`LogRefused`), where the program gets an error to report.

use std::io;

use volpex_proto::message::log::LogFull;
use volpex_proto::pull::RecvError;

/// Everything a Volpex call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The process was not started in a way Volpex understands (bad `VOLPEX_*` variable).
    #[error("bad launch environment: {0}")]
    Launch(String),
    /// Could not join the job (launcher unreachable, handshake or rendezvous failed).
    #[error("joining the job failed: {0}")]
    Bootstrap(String),
    /// Every replica of `rank` is gone; the job cannot finish.
    #[error("rank {rank} lost: all its replicas failed")]
    RankLost {
        /// The lost rank.
        rank: u32,
    },
    /// Every replica of `rank` ended its program (it finished, or returned an error from
    /// `main`) without sending a message this process waits for: the job cannot finish.
    #[error("rank {rank} ended without sending a message this rank waits for")]
    SenderEnded {
        /// The rank that ended.
        rank: u32,
    },
    /// This replica fell too far behind and retired.
    #[error("{0}")]
    Retired(String),
    /// A rank outside the communicator.
    #[error("rank {rank} out of range (communicator size {size})")]
    RankOutOfRange {
        /// Rank asked for.
        rank: i64,
        /// Communicator size.
        size: u32,
    },
    /// A tag outside 0..=TAG_UB.
    #[error("tag {0} out of range (0..={ub})", ub = crate::config::TAG_UB)]
    BadTag(i32),
    /// The message is longer than the receive buffer.
    #[error("message of {message_bytes} bytes truncated into a {buffer_bytes}-byte buffer")]
    Truncated {
        /// Message length.
        message_bytes: usize,
        /// Buffer length.
        buffer_bytes: usize,
    },
    /// The message length is not a whole number of elements of the receive type.
    #[error(
        "message of {message_bytes} bytes is not a whole number of {elem_bytes}-byte elements"
    )]
    BadLength {
        /// Message length.
        message_bytes: usize,
        /// Element size.
        elem_bytes: usize,
    },
    /// An operation called the wrong way (say, a root-only call on another rank).
    #[error("{0}")]
    Usage(&'static str),
    /// A collective got a buffer of the wrong length.
    #[error("{what}: expected {expected} elements, got {got}")]
    BufferSize {
        /// Which buffer.
        what: &'static str,
        /// Elements expected.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// The event loop could not be set up (its poll, waker, listener or the launcher
    /// connection's registration failed): the process cannot take part in the job.
    #[error("runtime failure: {0}")]
    EventLoopStart(io::Error),
    /// A turn of the event loop failed (an error of `poll` itself, not of a peer's
    /// connection, which the loop handles): the process cannot go on communicating.
    #[error("runtime failure: {0}")]
    EventLoop(io::Error),
    /// The operating system refused the thread an immediate collective runs on.
    #[error("runtime failure: cannot start an immediate collective: {0}")]
    ImmediateCollectiveStart(io::Error),
    /// An immediate collective's thread panicked (say, in a user operation); its request
    /// is spent.
    #[error("runtime failure: an immediate collective panicked")]
    ImmediateCollectivePanicked,
    /// The request was used after it completed or failed (`wait` or `test` again after
    /// an error).
    #[error("runtime failure: request already completed")]
    RequestCompleted,
    /// A blocking receive or probe was answered "no message", an answer only an immediate
    /// probe may get (the leader replica recorded a choice this replica cannot follow).
    #[error("runtime failure: a blocking receive completed without a message")]
    NoMessage,
    /// The leader replica cancelled a receive this replica cannot cancel the same way
    /// (a receive after it on the same stream completed here and was taken or freed): the
    /// replicas of this rank would diverge, so this one stops.
    #[error("runtime failure: cannot follow the leader replica's cancel of a receive")]
    CancelDiverged,
    /// The leader replica's record of which requests completed does not fit this
    /// replica's requests: the replicas of this rank passed different request lists
    /// (a program that is not replica-deterministic), or the record is damaged.
    #[error(
        "runtime failure: recorded request choice {choice:?} does not fit {requests} requests"
    )]
    RequestChoiceMismatch {
        /// The recorded choice as it came (little-endian `u32` indices).
        choice: Vec<u8>,
        /// How many requests this replica passed.
        requests: usize,
    },
    /// The sender log refused a message after the sender made room for it under the same
    /// lock: a bug in Volpex, not in the program.
    #[error("runtime failure: sender log refused a message it had room for: {0:?}")]
    LogRefused(LogFull),
    /// The application's state given to `checkpoint` could not be serialized.
    #[error("checkpoint: cannot serialize the application's state: {0}")]
    CheckpointState(String),
    /// The state of the checkpoint this replica was restored from does not deserialize
    /// into the type `restored` asked for (or the snapshot is damaged).
    #[error("restore: {0}")]
    RestoreState(String),
    /// A regenerated replica restored from a checkpoint communicated before it called
    /// `Universe::restored`: its counters are the checkpoint's, its program is not.
    #[error("a replica restored from a checkpoint must call Universe::restored() before it communicates")]
    NotRestored,
}

impl From<RecvError> for Error {
    fn from(e: RecvError) -> Self {
        match e {
            RecvError::RankLost { rank } => Error::RankLost { rank },
            RecvError::Retired { reason } => Error::Retired(reason),
            RecvError::SenderEnded { rank } => Error::SenderEnded { rank },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variants that replaced `Runtime(String)` print what it printed.
    #[test]
    fn former_runtime_failures_keep_their_text() {
        let io = || io::Error::other("boom");
        let cases = [
            (Error::EventLoopStart(io()), "runtime failure: boom"),
            (Error::EventLoop(io()), "runtime failure: boom"),
            (
                Error::ImmediateCollectiveStart(io()),
                "runtime failure: cannot start an immediate collective: boom",
            ),
            (
                Error::ImmediateCollectivePanicked,
                "runtime failure: an immediate collective panicked",
            ),
            (
                Error::RequestCompleted,
                "runtime failure: request already completed",
            ),
            (
                Error::NoMessage,
                "runtime failure: a blocking receive completed without a message",
            ),
            (
                Error::RequestChoiceMismatch {
                    choice: vec![1, 0, 0, 0],
                    requests: 1,
                },
                "runtime failure: recorded request choice [1, 0, 0, 0] does not fit 1 requests",
            ),
            (
                Error::LogRefused(LogFull {
                    used_bytes: 10,
                    need_bytes: 20,
                }),
                "runtime failure: sender log refused a message it had room for: \
                 LogFull { used_bytes: 10, need_bytes: 20 }",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }
}
