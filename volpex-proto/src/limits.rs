//! Every limit of the protocol, in one place, units last in names.
//!
//! Sizes of frames and payloads, the bounds on what a peer can make this replica hold,
//! the defaults of the sender log and the thresholds the engine decides by. The runtime's
//! own limits (spins, socket buffers, the progress thread) are `volpex`'s `config`.
//! Owns constants only: must never read the environment nor hold state.

use std::time::Duration;

/// Size of the fixed wire header in bytes (asserted at compile time against the field
/// layout in `wire::header`).
pub const HEADER_BYTES: usize = 56;

/// Largest payload one frame may carry. Anything larger is a protocol error that closes
/// the connection, so a hostile length field can never make us allocate without bound.
pub const FRAME_PAYLOAD_BYTES_MAX: usize = 1 << 30;

/// Largest control-message payload (launcher <-> process).
pub const CONTROL_PAYLOAD_BYTES_MAX: usize = 16 << 20;

/// Default bound on the sender log.
pub const LOG_BYTES_DEFAULT: usize = 256 << 20;

/// Default bound on the log entries kept only for regenerated replicas (every live replica
/// of their destination has them; see `message::log`).
pub const REPLAY_BYTES_DEFAULT: usize = 64 << 20;

/// Bookkeeping bytes charged per log entry on top of its payload.
pub const LOG_ENTRY_OVERHEAD_BYTES: usize = 64;

/// Most unstable choices of its own rank a message carries along (see `pull::foreign`);
/// one that depends on more waits until every live sibling holds them.
pub const CHOICES_CARRIED_MAX: usize = 64;

/// A leader sends its followers new choices (see `pull::decision`) this many at a time,
/// or `CHOICES_BATCH_WAIT` after the first of them, whichever comes first. Below
/// `CHOICES_CARRIED_MAX`, so followers lagging a batch behind never hold back a message
/// (output commit).
pub const CHOICES_BATCH: u64 = 8;
/// See `CHOICES_BATCH`.
pub const CHOICES_BATCH_WAIT: Duration = Duration::from_micros(1000);

/// Most choices (see `pull::decision`) a replica keeps for siblings that lag behind.
pub const DECISIONS_HELD_MAX: usize = 1 << 20;

/// Most choices one pull for a choice is answered with (the asked one and those after).
pub const CHOICES_PER_ANSWER: u64 = 64;

/// Messages at least this large start going out to the replicas whose pulls wait for
/// them before they are copied into the log (see `Engine::write_ahead`).
pub const DIRECT_WRITE_BYTES_MIN: usize = 64 << 10;

/// Messages at least this large skip the log when every live replica of the destination
/// confirms them at once. Below it the copy hides behind the receiver's reading
/// (skipping it gained nothing at 1 MiB, 15% at 4 MiB).
pub const UNLOGGED_BYTES_MIN: usize = 2 << 20;

/// A pull answered from a log entry older than this came late: the DATA says so
/// (`FLAG_LATE`) and the receiver pulls that stream ahead from then on.
pub const LATE_PULL: Duration = Duration::from_micros(50);

/// Payloads smaller than this come from the ordinary allocator, larger ones from
/// `message::pool`.
pub const POOLED_BYTES_MIN: usize = 64 << 10;
/// Payloads of at most this many bytes are copied (`message::pool::copy`) into one
/// allocation with their reference count, so that handing the copy to a frame does not
/// allocate again (an 8-byte message's log entry and its DATA frame: one allocation,
/// not two).
pub const INLINE_PAYLOAD_BYTES_MAX: usize = 64;
/// Most bytes `message::pool` keeps.
pub const POOL_BYTES_MAX: usize = 256 << 20;

/// Received payloads larger than this are read straight into their own allocation.
pub const LARGE_PAYLOAD_BYTES: usize = 32 << 10;
/// Size of a connection's read buffer for small frames.
pub const READ_BUFFER_BYTES: usize = 64 << 10;
