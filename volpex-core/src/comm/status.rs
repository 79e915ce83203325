//! `Status`: what a completed receive got.

/// Source, tag and length of a received message (MPI_Status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub(crate) source: i32,
    pub(crate) tag: i32,
    pub(crate) bytes: usize,
    pub(crate) cancelled: bool,
}

impl Status {
    /// Rank the message came from.
    pub fn source_rank(&self) -> i32 {
        self.source
    }

    /// The message's tag.
    pub fn tag(&self) -> i32 {
        self.tag
    }

    /// Number of `T` elements in the message (MPI_Get_count).
    pub fn count<T>(&self) -> usize {
        self.bytes / std::mem::size_of::<T>().max(1)
    }

    /// Message length in bytes.
    pub fn count_bytes(&self) -> usize {
        self.bytes
    }

    /// Whether the operation was cancelled (`Request::cancel`) instead of completing
    /// (MPI_Test_cancelled); source and tag are then -1 and the length 0.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled
    }

    /// The status of a cancelled request.
    pub(crate) fn cancelled() -> Status {
        Status {
            source: -1,
            tag: -1,
            bytes: 0,
            cancelled: true,
        }
    }
}
