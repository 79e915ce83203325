//! The current incarnation of every replica, shared between the driver, which raises one
//! before it starts a new incarnation, and the control server, which refuses connections
//! of every other incarnation. Owns only the counters; must never decide which
//! incarnation is current (the job's state machine does).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// The current incarnation of every replica (rank-major), shared between the driver, which
/// raises one before it starts a new incarnation, and the control server, which refuses
/// connections of every other incarnation.
#[derive(Debug, Clone)]
pub struct Incarnations(Arc<Vec<AtomicU32>>);

impl Incarnations {
    /// All 0, for `slots` replicas.
    pub fn new(slots: usize) -> Incarnations {
        Incarnations(Arc::new((0..slots).map(|_| AtomicU32::new(0)).collect()))
    }

    /// The current incarnation of slot `i`.
    pub fn get(&self, i: usize) -> Option<u32> {
        self.0.get(i).map(|a| a.load(Ordering::SeqCst))
    }

    /// Slot `i` is now at incarnation `inc`.
    pub fn set(&self, i: usize, inc: u32) {
        if let Some(a) = self.0.get(i) {
            a.store(inc, Ordering::SeqCst);
        }
    }
}
