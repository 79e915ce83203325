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
pub use log::{LogEntry, SendLog};
pub use watermark::Consumed;
