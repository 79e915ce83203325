//! The pull protocol engine: sender log service, receiver-initiated transfers, replica
//! choice with failover, hedging against lagging replicas, and log eviction feedback.
//!
//! The engine has no I/O and no clock: time and events come in as arguments (`handle_*`),
//! commands (`send`, `post_receive`) change state, and frames to transmit, the next
//! deadline and completed receives are polled out (`poll_*`, `take_received`). The mio
//! transport drives it in production; a seeded simulator drives it in tests.

pub mod decision;
pub mod engine;
pub mod foreign;

pub use engine::{
    ChoiceState, DirectWrite, Engine, EngineEvent, MatchState, RecvError, Resumed, SlotsAhead,
    SnapshotAnswer, WriteAhead,
};
