//! Message identity, matching and the sender log.
//!
//! Owns what a message *is* (its key, the per-pair order number) and where a sent message
//! lives until some replica of its destination has it. Must never do I/O or know about
//! replicas' liveness.

pub mod key;
pub mod log;
pub mod matching;
pub mod pool;
pub mod watermark;

pub use key::{Key, ReplicaId, ReqId, Want};

/// Hash map of protocol state: FxHash, fast on the small integer keys every message
/// looks up several times (SipHash cost half of the instructions per message), and fixed,
/// so iteration order, and every decision that follows it, is the same in every run and
/// the simulator replays a failure from its seed. Keys come from authenticated peers only.
pub type Map<K, V> = rustc_hash::FxHashMap<K, V>;

/// Hash set with the same hasher (see `Map`).
pub type Set<K> = rustc_hash::FxHashSet<K>;
pub use log::{Lend, LogEntry, SendLog, ACK_TAG};
pub use watermark::Consumed;
