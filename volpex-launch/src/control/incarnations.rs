//! The current incarnation of every replica, shared between the driver, which raises one
//! before it starts a new incarnation, and the control server, which refuses connections
//! of every other incarnation; and the pid of an incarnation started on this machine, which
//! the driver records and the control server looks at before it calls a silent replica
//! dead (`vitals`); and the latest vitals a host's agent reported of a replica it started,
//! which the driver records and the control server takes. Owns only the counters; must
//! never decide which incarnation is current (the job's state machine does).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::vitals::Vitals;

/// The current incarnation of every replica (rank-major), shared between the driver, which
/// raises one before it starts a new incarnation, and the control server, which refuses
/// connections of every other incarnation.
#[derive(Debug, Clone)]
pub struct Incarnations(Arc<Vec<Slot>>);

#[derive(Debug, Default)]
struct Slot {
    current: AtomicU32,
    /// `incarnation << 32 | pid` of the latest incarnation started on this machine; 0: none.
    local: AtomicU64,
    /// `incarnation << 32 | code` of the latest vitals of it a host's agent reported, not
    /// yet taken (`vitals_code`); 0: none.
    host_said: AtomicU64,
}

impl Incarnations {
    /// All 0, for `slots` replicas.
    pub fn new(slots: usize) -> Incarnations {
        Incarnations(Arc::new((0..slots).map(|_| Slot::default()).collect()))
    }

    /// The current incarnation of slot `i`.
    pub fn get(&self, i: usize) -> Option<u32> {
        self.0.get(i).map(|a| a.current.load(Ordering::SeqCst))
    }

    /// Slot `i` is now at incarnation `inc`.
    pub fn set(&self, i: usize, inc: u32) {
        if let Some(a) = self.0.get(i) {
            a.current.store(inc, Ordering::SeqCst);
        }
    }

    /// Incarnation `inc` of slot `i` runs on this machine as process `pid`.
    pub fn set_local_pid(&self, i: usize, inc: u32, pid: u32) {
        if let Some(a) = self.0.get(i) {
            a.local
                .store(u64::from(inc) << 32 | u64::from(pid), Ordering::SeqCst);
        }
    }

    /// The pid of incarnation `inc` of slot `i`, if it was started on this machine.
    pub fn local_pid(&self, i: usize, inc: u32) -> Option<u32> {
        let v = self.0.get(i)?.local.load(Ordering::SeqCst);
        let (at, pid) = ((v >> 32) as u32, v as u32);
        (pid != 0 && at == inc).then_some(pid)
    }

    /// The agent of its host reports the vitals of incarnation `inc` of slot `i`.
    pub fn set_host_said(&self, i: usize, inc: u32, vitals: Vitals) {
        if let Some(a) = self.0.get(i) {
            a.host_said
                .store(u64::from(inc) << 32 | vitals_code(vitals), Ordering::SeqCst);
        }
    }

    /// Takes what the agent of its host last reported of incarnation `inc` of slot `i`,
    /// if it reported since the last take.
    pub fn take_host_said(&self, i: usize, inc: u32) -> Option<Vitals> {
        let v = self.0.get(i)?.host_said.swap(0, Ordering::SeqCst);
        if (v >> 32) as u32 != inc {
            return None;
        }
        match v & 0xff {
            1 => Some(Vitals::Stopped),
            2 => Some(Vitals::Runnable),
            3 => Some(Vitals::Idle),
            _ => None,
        }
    }
}

/// `Vitals` in `Slot::host_said` (never 0).
fn vitals_code(vitals: Vitals) -> u64 {
    match vitals {
        Vitals::Stopped => 1,
        Vitals::Runnable => 2,
        Vitals::Idle => 3,
    }
}
