//! Errors of the public API, typed by what the caller can do about them.

use crate::pull::RecvError;

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
    /// The runtime's connection to the launcher or its event loop failed.
    #[error("runtime failure: {0}")]
    Runtime(String),
}

impl From<RecvError> for Error {
    fn from(e: RecvError) -> Self {
        match e {
            RecvError::RankLost { rank } => Error::RankLost { rank },
            RecvError::Retired { reason } => Error::Retired(reason),
        }
    }
}
