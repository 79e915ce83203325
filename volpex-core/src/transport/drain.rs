//! Draining: a replica that got a preemption notice (SIGTERM) runs on until its next
//! checkpoint, stops there and hands its state to its next incarnation (the handover
//! itself is `bootstrap::handover`'s), serving its log to peers until it exits.
//!
//! Owns `Drain`, the drain state the heartbeat threads, the event loop and the
//! communicators share (one per process, held by `Core`), and the loop's part of a
//! handover. Must never decide when a replica drains (SIGTERM does).

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use volpex_proto::checkpoint::Handover;
use volpex_proto::wire::control::ToLauncher;

use super::event_loop::Core;
use crate::exit::{self, End};

/// How long one loop turn waits while a draining replica serves.
const SERVE_TURN: Duration = Duration::from_millis(100);

/// Where this replica stands with draining.
#[derive(Debug, Default)]
pub struct Drain {
    /// SIGTERM arrived and the launcher was told: the next checkpoint hands over.
    draining: AtomicBool,
    /// The handover is offered: the launcher closes this incarnation's connections when
    /// its replacement starts, which is then no reason to exit.
    handing_over: AtomicBool,
    /// Checkpoints this process has taken or restored.
    checkpoints: AtomicU64,
}

impl Drain {
    /// Whether this replica drains (got SIGTERM and told the launcher).
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// SIGTERM arrived and the launcher was told.
    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Whether this replica offers its handover (its launcher connections may close: it
    /// exits once the handover is taken, or when its grace ends).
    pub fn handing_over(&self) -> bool {
        self.handing_over.load(Ordering::Relaxed)
    }

    /// The handover is offered.
    pub fn set_handing_over(&self) {
        self.handing_over.store(true, Ordering::Relaxed);
    }

    /// Counts a checkpoint taken or restored here.
    pub fn checkpointed(&self) {
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
    }

    /// Checkpoints taken or restored in this process.
    pub fn checkpoints(&self) -> u64 {
        self.checkpoints.load(Ordering::Relaxed)
    }
}

impl Core {
    /// The drain state of this process.
    pub fn drain(&self) -> &Arc<Drain> {
        &self.drain
    }

    /// What this draining replica, stopped at checkpoint `number` (`snapshot`), hands its
    /// next incarnation, and the address to serve it on (this replica's own).
    pub fn handover(&mut self, number: u64, snapshot: Bytes) -> Result<(IpAddr, Handover), String> {
        // What arrives from now on is the successor's to pull again.
        self.engine.hand_over();
        let log = self.engine.export_log()?;
        let ip = match self.addr_of(self.me) {
            Some(a) => a.ip(),
            None => self
                .listener
                .as_ref()
                .and_then(|l| l.local_addr().ok())
                .map(|a| a.ip())
                .ok_or("no address to serve the handover on")?,
        };
        let h = Handover {
            number,
            receives: self.engine.stats().receives,
            snapshot,
            log: Bytes::from(log),
        };
        Ok((ip, h))
    }

    /// The handover of checkpoint `number` is served on `addr`: tells the launcher where,
    /// then serves peers until the process exits (the handover confirmed, the grace over,
    /// or the job ended).
    pub fn serve_handed_over(&mut self, number: u64, addr: SocketAddr) -> ! {
        self.flush_all();
        self.tell_launcher(&ToLauncher::Handover {
            addr: addr.to_string(),
        });
        log::info!(
            "{}: draining: stopped at checkpoint {number}, handover on {addr}",
            self.me
        );
        while !self.shutdown_requested() {
            if let Err(e) = self.turn(Some(SERVE_TURN), false) {
                log::error!("event loop failed while draining: {e}");
                break;
            }
        }
        exit::end(End::Drained);
    }
}
