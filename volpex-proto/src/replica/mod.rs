//! Replica choice and failure knowledge.
//!
//! Owns what this process believes about every other replica (alive, suspect, dead) and
//! the order in which to ask the replicas of a sender (own team first, suspects last).
//! Must never do I/O or keep time itself: the engine passes `now` in.

pub mod liveness;

pub use liveness::{Liveness, PeerState};
