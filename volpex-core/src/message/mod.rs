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

pub use key::{Key, ReplicaId, Want};

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// Hash map of protocol state with a fixed hasher: iteration order, and every decision
/// that follows it, is the same in every run, so the simulator replays a failure from its
/// seed. Keys come from authenticated peers only.
pub type Map<K, V> = HashMap<K, V, BuildHasherDefault<DefaultHasher>>;

/// Hash set with a fixed hasher (see `Map`).
pub type Set<K> = HashSet<K, BuildHasherDefault<DefaultHasher>>;
pub use log::{LogEntry, SendLog};
pub use watermark::Consumed;
