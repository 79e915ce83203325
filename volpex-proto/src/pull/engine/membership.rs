//! Membership as the engine sees it: replicas that die, new incarnations that join and
//! catch up, incarnation numbers and each replica's ordinal (its place in its rank's order
//! of leadership). It updates liveness, the log's view of consumers and the coordination
//! state, and hands what was asked of a lost incarnation to `receive` to ask again; it
//! never moves a message itself.

use std::time::Duration;

use super::{Engine, RecvError};
use crate::message::ReplicaId;
use crate::pull::decision::ordinal;
use crate::wire::Frame;

impl Engine {
    /// This engine is a regenerated incarnation that replays its program until it
    /// caught up (`false`: it has).
    pub fn set_catching_up(&mut self, catching_up: bool) {
        self.catching_up = catching_up;
    }

    /// The newest incarnation of `r` known here.
    pub(super) fn incarnation_of(&self, r: ReplicaId) -> u32 {
        r.entry(&self.incarnations).copied().unwrap_or(0)
    }

    /// `r`'s place in its rank's order of leadership (see `decision::ordinal`).
    pub(super) fn ordinal_of(&self, r: ReplicaId) -> u32 {
        ordinal(self.incarnation_of(r), r.replica, self.replicas)
    }

    /// A replica is gone: `confirmed` when the launcher said so (it ended the process),
    /// otherwise its connection failed (which leaves the last replica of a rank suspect,
    /// not dead).
    pub fn handle_peer_down(&mut self, now: Duration, peer: ReplicaId, confirmed: bool) {
        self.peer_gone(now, peer, confirmed, false);
    }

    /// `handle_peer_down`; with `successor`, a new incarnation of `peer` takes its place
    /// at once (joining): its rank stays alive even if it had no other replica, and what
    /// was asked of the old one waits for the new one.
    fn peer_gone(&mut self, now: Duration, peer: ReplicaId, confirmed: bool, successor: bool) {
        if peer == self.me {
            return;
        }
        if peer.rank == self.me.rank && self.coord.decisions.enabled() {
            if confirmed {
                self.sibling_dead(now, peer);
            } else {
                self.fence(peer);
            }
        } else if confirmed && self.coord.decisions.forget(peer) {
            self.on_authority_change(now);
        }
        if !confirmed && self.liveness.is_last_usable(peer) {
            // A failed connection is no proof of death: after a stall of the whole
            // machine (or of `peer`) its connections time out while it lives on. The
            // launcher, which sees processes exit, says when a rank's last replica is
            // gone; until then `peer` stays suspect, and what waits for it asks it again
            // over a new connection when its ack timeout or keepalive comes.
            if self.liveness.suspect(peer, now) {
                log::info!(
                    "{}: connection to {peer}, the last replica of its rank, failed; \
                     suspecting it until the launcher says it is gone",
                    self.me
                );
            }
        } else if self.liveness.mark_dead(peer) {
            log::info!("{}: replica {peer} is dead", self.me);
            if successor {
                self.liveness.mark_joining(peer);
            }
            self.log.note_dead(peer.rank, peer.replica);
            self.service.forget(peer);
            self.fail_over(now, peer, true);
            if !self.liveness.rank_alive(peer.rank) {
                self.retry_idle(now, peer.rank);
            }
            let liveness = &self.liveness;
            self.matcher.fail_unresolved(|spec| {
                let ranks = spec.ranks();
                let lost = !ranks.is_empty() && ranks.iter().all(|&r| !liveness.rank_alive(r));
                lost.then(|| RecvError::RankLost { rank: ranks[0] })
            });
        }
        self.rematch(now);
        self.drain_loopback(now);
    }

    /// A new incarnation `inc` of `peer` registered and replays its program: it may pull
    /// from here and is sent consumption notices, but is not asked for messages nor
    /// waited for before evicting log entries until `handle_peer_alive`.
    pub fn handle_peer_joining(&mut self, now: Duration, peer: ReplicaId, inc: u32) {
        if peer == self.me || inc <= self.incarnation_of(peer) {
            return;
        }
        // Whatever the older incarnation was doing, it is gone.
        self.peer_gone(now, peer, true, true);
        if let Some(slot) = peer.entry_mut(&mut self.incarnations) {
            *slot = inc;
        }
        self.liveness.mark_joining(peer);
        self.log.note_joining(peer.rank, peer.replica);
        if peer.rank == self.me.rank {
            self.coord.decisions.on_joining(peer.replica, inc);
        }
        // Tell it at once how far this replica received its rank's streams, so its log
        // lets go of what it sends again.
        for (comm, watermark) in self.consumed.from_source(peer.rank) {
            self.out.send(
                peer,
                Frame::Consumed {
                    comm,
                    src: peer.rank,
                    dst: self.me.rank,
                    watermark,
                },
            );
        }
        self.rematch(now);
        self.drain_loopback(now);
    }

    /// A joining incarnation of `peer` caught up: an ordinary live replica again. For
    /// this replica itself: it tells every sender how far it received.
    pub fn handle_peer_alive(&mut self, now: Duration, peer: ReplicaId) {
        if peer == self.me {
            self.catching_up = false;
            self.consumed.mark_all_dirty();
            self.tell_consumed();
            self.tell_checkpoint();
            return;
        }
        if self.liveness.mark_caught_up(peer) {
            log::info!("{}: {peer} caught up", self.me);
            self.log.note_caught_up(peer.rank, peer.replica);
            self.retry_idle(now, peer.rank);
        }
        self.rematch(now);
        self.drain_loopback(now);
    }
}
