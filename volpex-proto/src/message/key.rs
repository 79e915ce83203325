//! The message key and process identities.

use std::fmt;

/// Identity of one logical message: (communicator, tag, source rank, destination rank,
/// seq). `seq` counts earlier sends with the same (comm, tag, src, dst), so every replica of
/// a deterministic program gives the same message the same key, and the k-th receive a
/// rank posts for (comm, tag, src) names the k-th such send (MPI non-overtaking, MPI-3.1
/// section 3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// Communicator context id.
    pub comm: u32,
    /// Message tag.
    pub tag: i32,
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// Number of earlier messages with the same (comm, tag, src, dst).
    pub seq: u64,
}

impl Key {
    /// A message of a communicator's point-to-point context: those ids are even
    /// (`comm::group::derive_id`); a communicator's collectives use `id + 1` and the
    /// coordinated choices `u32::MAX`, both odd.
    #[inline]
    pub fn is_point_to_point(&self) -> bool {
        self.comm.is_multiple_of(2)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "(comm {}, tag {}, src {}, dst {}, seq {})",
            self.comm, self.tag, self.src, self.dst, self.seq
        )
    }
}

/// What a pull asks a sender replica for: one message by key, or, for a receive with
/// `ANY_TAG`, whatever message has a given order number among the sends from `src` to
/// `dst` on `comm` (order numbers are the same in every replica of a deterministic
/// sender, like keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Want {
    /// The message with this key.
    Key(Key),
    /// The `order`-th message from `src` to `dst` on `comm`, whatever its tag.
    Order {
        /// Communicator context id.
        comm: u32,
        /// Sending rank.
        src: u32,
        /// Receiving rank.
        dst: u32,
        /// Order number among all sends from src to dst on comm.
        order: u64,
    },
}

impl Want {
    /// Sending rank.
    #[inline]
    pub fn src(&self) -> u32 {
        match self {
            Want::Key(k) => k.src,
            Want::Order { src, .. } => *src,
        }
    }

    /// Receiving rank.
    #[inline]
    pub fn dst(&self) -> u32 {
        match self {
            Want::Key(k) => k.dst,
            Want::Order { dst, .. } => *dst,
        }
    }

    /// Communicator context id.
    #[inline]
    pub fn comm(&self) -> u32 {
        match self {
            Want::Key(k) => k.comm,
            Want::Order { comm, .. } => *comm,
        }
    }
}

impl fmt::Display for Want {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Want::Key(k) => k.fmt(f),
            Want::Order {
                comm,
                src,
                dst,
                order,
            } => write!(f, "(comm {comm}, src {src}, dst {dst}, order {order})"),
        }
    }
}

/// One OS process of the job: replica `replica` of rank `rank`. Replica k of every rank
/// forms team k.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaId {
    /// The MPI rank this process runs.
    pub rank: u32,
    /// Which copy of the rank (also its team).
    pub replica: u32,
}

impl ReplicaId {
    /// Shorthand constructor.
    #[inline]
    pub fn new(rank: u32, replica: u32) -> Self {
        ReplicaId { rank, replica }
    }

    /// This replica's entry in a `[rank][replica]` table.
    pub fn entry<T>(self, table: &[Vec<T>]) -> Option<&T> {
        table.get(self.rank as usize)?.get(self.replica as usize)
    }

    /// This replica's entry in a `[rank][replica]` table, to change.
    pub fn entry_mut<T>(self, table: &mut [Vec<T>]) -> Option<&mut T> {
        table
            .get_mut(self.rank as usize)?
            .get_mut(self.replica as usize)
    }
}

impl fmt::Display for ReplicaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.rank, self.replica)
    }
}

/// Id a receiver gives one pull it sends, echoed in every answer to that pull (ACK, DATA,
/// GONE) and named by its CANCEL, so an answer is matched to the ask it answers. Unique
/// per receiving replica; 0 marks an answer nobody asked for (choices sent unasked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReqId(pub u64);

impl ReqId {
    /// The id of frames sent without a pull to answer.
    pub const UNASKED: ReqId = ReqId(0);

    /// The id after this one.
    #[inline]
    pub fn next(self) -> ReqId {
        ReqId(self.0 + 1)
    }
}

impl fmt::Display for ReqId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "req {}", self.0)
    }
}
