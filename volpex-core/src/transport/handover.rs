//! The transport's part of a handover (see `bootstrap::handover`): a draining replica
//! stopped at a checkpoint serves its state to its next incarnation and its log to peers
//! until it exits. Must never decide when a replica drains.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;

use super::event_loop::Core;
use crate::bootstrap::handover::{self, Handover};
use crate::exit::EXIT_DRAINED;
use crate::wire::control::ToLauncher;

/// How long one loop turn waits while a draining replica serves.
const SERVE_TURN: Duration = Duration::from_millis(100);

impl Core {
    /// This draining replica took checkpoint `number` (`snapshot`) and stops here: its
    /// snapshot and log are served to its next incarnation, the launcher is told where,
    /// and the loop serves peers until the process exits (the handover confirmed, the
    /// grace over, or the job ended). Returns only if the handover cannot be offered.
    pub fn hand_over(&mut self, number: u64, snapshot: Bytes) -> Result<Infallible, String> {
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
        let addr = handover::serve(
            ip,
            self.key,
            self.me,
            self.incarnation,
            h,
            self.cfg.tcp_congestion.as_deref(),
        )
        .map_err(|e| format!("cannot serve the handover: {e}"))?;
        self.flush_all();
        self.to_launcher(&ToLauncher::Handover {
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
        std::process::exit(EXIT_DRAINED);
    }
}
