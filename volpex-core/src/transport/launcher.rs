//! The replica's end of its control connection to the launcher: control messages out
//! (registration is `bootstrap`'s; here: finalized, retired, fence requests), death
//! notices and shutdown in, and what the engine asks of the launcher. Must never decide
//! protocol questions nor talk to peers.

use std::time::Duration;

use bytes::Bytes;

use super::event_loop::Core;
use crate::exit::{self, End};
use volpex_proto::message::ReplicaId;
use volpex_proto::pull::EngineEvent;
use volpex_proto::wire::control::{self, ToLauncher, ToProcess};
use volpex_proto::wire::header::{Header, Kind};

/// How long one loop turn waits while a finalized replica serves its log.
const SERVE_AFTER_FINALIZE_TURN: Duration = Duration::from_millis(100);

impl Core {
    /// Sends a control message to the launcher (best effort, flushed now).
    pub fn tell_launcher(&mut self, msg: &ToLauncher) {
        let (h, p) = control::encode(msg);
        if let Some(t) = self.launcher {
            if let Some(c) = self.conns.get_mut(&t) {
                c.send(h, Bytes::from(p));
            }
            self.flush_conn(t);
        }
    }

    /// The application finalized: tell the launcher (with this replica's counters), then
    /// keep serving the log to replicas that still pull from it until the launcher says
    /// the job is done (DESIGN, "Sender log").
    pub fn finalize_and_serve(&mut self) {
        let now = self.now();
        self.engine.finalize(now);
        let stats = self.engine.stats();
        self.flush_all();
        self.tell_launcher(&ToLauncher::Finalized { stats });
        while !self.shutdown_requested() {
            if let Err(e) = self.turn(Some(SERVE_AFTER_FINALIZE_TURN), false) {
                log::error!("event loop failed while serving after finalize: {e}");
                break;
            }
        }
    }

    pub(super) fn on_control(&mut self, h: &Header, p: &[u8]) {
        if h.kind != Kind::Control {
            log::warn!("{}: launcher sent a {:?} frame", self.me, h.kind);
            return;
        }
        match control::decode::<ToProcess>(h, p) {
            Ok(ToProcess::Death {
                rank,
                replica,
                incarnation,
            }) => {
                let r = ReplicaId::new(rank, replica);
                if incarnation < self.incarnation_of(r) {
                    log::debug!("{}: stale death notice of {r} ignored", self.me);
                    return;
                }
                let now = self.now();
                self.engine.handle_peer_down(now, r, true);
                self.fence_incarnation(r, incarnation);
            }
            Ok(ToProcess::Joining {
                rank,
                replica,
                incarnation,
                addr,
                handover,
            }) => match addr.parse() {
                Ok(a) => self.on_joining(
                    ReplicaId::new(rank, replica),
                    incarnation,
                    Some(a),
                    handover,
                ),
                Err(e) => log::warn!("{}: bad address {addr:?} in JOINING: {e}", self.me),
            },
            Ok(ToProcess::Alive {
                rank,
                replica,
                incarnation,
            }) => {
                let r = ReplicaId::new(rank, replica);
                if incarnation == self.incarnation_of(r) {
                    let now = self.now();
                    self.engine.handle_peer_alive(now, r);
                }
            }
            Ok(ToProcess::Shutdown) => self.shutdown = true,
            Ok(ToProcess::Files { .. }) => {
                log::warn!("{}: a files message on the control connection", self.me)
            }
            Ok(ToProcess::Table { .. }) => {
                log::warn!("{}: unexpected second address table", self.me)
            }
            Err(e) => log::warn!("{}: bad control message: {e}", self.me),
        }
    }

    pub(super) fn handle_engine_events(&mut self) {
        while let Some(ev) = self.engine.poll_event() {
            match ev {
                EngineEvent::Retire { reason } => {
                    eprintln!("volpex[{}] {reason}; retiring", self.me);
                    self.tell_launcher(&ToLauncher::Retired { reason });
                    exit::end(End::Retired);
                }
                EngineEvent::Fence { peer } => {
                    if self.launcher.is_some() {
                        self.tell_launcher(&ToLauncher::Fence {
                            rank: peer.rank,
                            replica: peer.replica,
                            incarnation: self.incarnation_of(peer),
                        });
                    } else {
                        log::warn!("{}: no launcher to fence {peer}", self.me);
                    }
                }
            }
        }
    }
}
