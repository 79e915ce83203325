//! The messages between a replica's file layer and the launcher's coordinator (postcard,
//! carried as opaque bytes in the `Files` control messages of the files connection).
//!
//! Every replica of a rank numbers its file operations 1, 2, 3, ... (`Seq`); a
//! deterministic program gives the same operation the same number in every replica. One
//! replica per rank, the *writer*, applies them to the file system; the others keep the
//! ones it has not applied yet. Up: what a replica produced and, from the writer, what it
//! applied and the outcomes of the operations whose result depends on the file system
//! (`Recorded`). Down: who writes, how far it applied, those outcomes, and for the writer
//! how far the others have come (`Down::gate`).
//!
//! Owns only the message types and their encoding; must never decide anything.

use serde::{Deserialize, Serialize};

/// The number of a file operation in its rank's sequence (1 for the first).
pub type Seq = u64;

/// The result of an operation that depends on the file system (an open, a rename, a
/// close that reports what the disk said), decided once by the writer and taken by every
/// replica, so all of them return the same thing to their program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// It succeeded; for an open or a rename, whether the file existed and its size then.
    Ok {
        /// The file (the source of a rename) existed.
        existed: bool,
        /// Its size, when it existed.
        size: u64,
    },
    /// It failed with this errno.
    Failed {
        /// The errno the program gets.
        errno: i32,
    },
}

/// An outcome as the writer recorded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    /// Which operation.
    pub seq: Seq,
    /// Its outcome.
    pub outcome: Outcome,
    /// A digest of every operation up to this one (kinds, paths, offsets, lengths): a
    /// replica whose own differs did not do what the writer did.
    pub trace: u64,
}

/// The writer could not apply an operation to a file: the file is incomplete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The file's path.
    pub path: String,
    /// What was done (`write`, `create`, `rename`, ...).
    pub what: String,
    /// The errno.
    pub errno: i32,
}

/// A digest of the bytes one write put in a file (`VOLPEX_VERIFY_OUTPUT=1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// Which operation.
    pub seq: Seq,
    /// The file's path when written.
    pub path: String,
    /// Where in the file.
    pub offset: u64,
    /// How many bytes.
    pub len: u64,
    /// blake3 of the bytes, first 16 bytes.
    pub hash: [u8; 16],
}

/// From a replica.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Up {
    /// Operations produced so far.
    pub produced: Seq,
    /// The program is done with files (finalized): nothing more comes.
    pub finished: bool,
    /// What the writer reports; `None` from the others.
    pub writer: Option<WriterReport>,
    /// Digests of its writes not reported yet (only with verification on).
    pub written: Vec<Written>,
    /// This replica cannot go on with its files (it diverged, or cannot replay them):
    /// said once, then it exits.
    pub problem: Option<String>,
    /// Files this replica does not see as its writer wrote them, at its end (its host
    /// does not share the file system): the job must fail.
    pub unseen: Vec<Failure>,
}

/// What the writer applied and decided since its last report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriterReport {
    /// The epoch the launcher made it writer in.
    pub epoch: u32,
    /// Every operation up to this one is applied.
    pub applied: Seq,
    /// Outcomes it decided, in order.
    pub recorded: Vec<Recorded>,
    /// Paths whose content or name an applied operation changed other than by appending
    /// (a truncation, a rewrite, a rename, a removal), with that operation: a replica that
    /// replays from before it cannot read them as they were.
    pub mutated: Vec<(String, Seq)>,
    /// Files it could not write.
    pub failures: Vec<Failure>,
}

/// To a replica.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Down {
    /// Raised every time the writer changes.
    pub epoch: u32,
    /// The receiver is the writer.
    pub you_write: bool,
    /// The writer's replica index (for messages).
    pub writer: u32,
    /// Every operation up to this one is applied.
    pub applied: Seq,
    /// Every outcome up to this operation is recorded (the writer applies an operation
    /// with an outcome only once it is).
    pub recorded_through: Seq,
    /// Outcomes this replica has not been sent yet, in order.
    pub recorded: Vec<Recorded>,
    /// For the writer: the fewest operations any other live replica has produced (an
    /// operation that changes what is already in a file waits until every live replica
    /// produced it, so none reads the file changed under it); `Seq::MAX` when alone.
    pub gate: Seq,
    /// Mutated paths this replica has not been sent yet (see `WriterReport::mutated`).
    pub mutated: Vec<(String, Seq)>,
}

/// Encodes a message.
pub fn encode<T: Serialize>(m: &T) -> Vec<u8> {
    postcard::to_stdvec(m).unwrap_or_default()
}

/// Decodes a message; `None` if the bytes are not one.
pub fn decode<T: for<'de> Deserialize<'de>>(b: &[u8]) -> Option<T> {
    postcard::from_bytes(b).ok()
}

/// The name of an errno, for messages (`ENOSPC (No space left on device)`).
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::ENOSPC => "ENOSPC",
        libc::EDQUOT => "EDQUOT",
        libc::EROFS => "EROFS",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EIO => "EIO",
        libc::ENOENT => "ENOENT",
        libc::EEXIST => "EEXIST",
        libc::EISDIR => "EISDIR",
        libc::ENOTDIR => "ENOTDIR",
        libc::EFBIG => "EFBIG",
        libc::EBADF => "EBADF",
        _ => "errno",
    };
    format!("{name} ({})", std::io::Error::from_raw_os_error(errno))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_garbage_is_refused() {
        let up = Up {
            produced: 7,
            finished: false,
            writer: Some(WriterReport {
                epoch: 1,
                applied: 5,
                recorded: vec![Recorded {
                    seq: 3,
                    outcome: Outcome::Failed { errno: 28 },
                    trace: 99,
                }],
                mutated: vec![("/a".into(), 4)],
                failures: vec![],
            }),
            written: vec![],
            problem: None,
            unseen: vec![],
        };
        assert_eq!(decode::<Up>(&encode(&up)), Some(up));
        assert_eq!(decode::<Down>(&[0xff; 3]), None);
        assert!(errno_name(libc::ENOSPC).starts_with("ENOSPC (No space left"));
    }
}
