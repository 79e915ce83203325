//! Membership as the engine sees it, `Roster`: replicas that die, new incarnations that
//! join and catch up, incarnation numbers and each replica's ordinal (its place in its
//! rank's order of leadership). A type over the engine's parts it changes (liveness, the
//! log's and the service's view of consumers, the incarnation table); `Engine::roster`
//! makes it, and the engine's `handle_peer_*` inputs carry out what its answers ask of
//! the other sides (asking again what a lost replica was asked, coordination). Never
//! moves a message itself.

use super::outbox::Outbox;
use super::service::Service;
use crate::message::{Consumed, ReplicaId, SendLog};
use crate::replica::Liveness;
use crate::wire::Frame;

/// What a replica's loss did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Gone {
    /// Nothing new (it was known dead, or it is this replica).
    Known,
    /// Its connection failed and it is the last replica of its rank: suspect until the
    /// launcher says it is gone.
    Suspect,
    /// It is dead now; `rank_lost`: its rank has no live replica left.
    Dead {
        /// Its rank has no live replica left.
        rank_lost: bool,
    },
}

/// What takes a lost replica's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Successor {
    /// Nothing (yet): it died.
    None,
    /// A new incarnation that replays its program (from the start or from a checkpoint):
    /// it holds nothing back in this replica's sender log until it caught up, and the
    /// log retains what a replay from its checkpoint needs.
    Replays,
    /// A new incarnation that goes on from where its draining predecessor stopped (a
    /// handover): the log keeps the predecessor's consumption and checkpoint marks, so
    /// what that one had not consumed is kept for its successor, however far beyond the
    /// replay budget (NPB FT class B sends more than the budget between checkpoints).
    TakesOver,
}

/// Who is in the job, over the engine's parts that record it.
pub(super) struct Roster<'e> {
    pub(super) me: ReplicaId,
    pub(super) liveness: &'e mut Liveness,
    pub(super) log: &'e mut SendLog,
    pub(super) service: &'e mut Service,
    pub(super) incarnations: &'e mut Vec<Vec<u32>>,
    pub(super) consumed: &'e Consumed,
    pub(super) out: &'e mut Outbox,
}

/// The newest incarnation of `r` in `incarnations`.
pub(super) fn incarnation_of(incarnations: &[Vec<u32>], r: ReplicaId) -> u32 {
    r.entry(incarnations).copied().unwrap_or(0)
}

impl Roster<'_> {
    /// `peer` is gone: `confirmed` when the launcher said so (it ended the process),
    /// otherwise its connection failed (which leaves the last replica of a rank suspect,
    /// not dead). `successor`: a new incarnation taking its place at once (joining) keeps
    /// its rank alive even if it had no other replica.
    pub(super) fn gone(
        &mut self,
        now: std::time::Duration,
        peer: ReplicaId,
        confirmed: bool,
        successor: Successor,
    ) -> Gone {
        debug_assert_ne!(peer, self.me);
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
            return Gone::Suspect;
        }
        if !self.liveness.mark_dead(peer) {
            return Gone::Known;
        }
        log::info!("{}: replica {peer} is dead", self.me);
        match successor {
            Successor::None => self.log.note_dead(peer.rank, peer.replica),
            Successor::Replays => {
                self.liveness.mark_joining(peer);
                self.log.note_dead(peer.rank, peer.replica);
            }
            Successor::TakesOver => {
                self.liveness.mark_joining(peer);
            }
        }
        self.service.forget(peer);
        Gone::Dead {
            rank_lost: !self.liveness.rank_alive(peer.rank),
        }
    }

    /// A new incarnation of `peer` was started and has not registered: unreachable and
    /// not asked, its rank not lost. Its slot's marks in the sender log stay as its
    /// predecessor left them (holding back more, never less) until it joins: it may take
    /// that one's state over. True if that is news.
    pub(super) fn starting(&mut self, peer: ReplicaId) -> bool {
        if !self.liveness.mark_starting(peer) {
            return false;
        }
        log::info!("{}: replica {peer} is starting", self.me);
        self.service.forget(peer);
        true
    }

    /// Incarnation `inc` of `peer` registered (its predecessor is gone already) and
    /// replays its program or takes its predecessor's state over (`successor`): it may
    /// pull from here and is told at once how far this replica received its rank's
    /// streams (so its log lets go of what it sends again), but is not asked for
    /// messages until it caught up, nor, replaying, waited for before evicting log
    /// entries.
    pub(super) fn join(&mut self, peer: ReplicaId, inc: u32, successor: Successor) {
        if let Some(slot) = peer.entry_mut(self.incarnations) {
            *slot = inc;
        }
        self.liveness.mark_joining(peer);
        match successor {
            Successor::TakesOver => {}
            Successor::None | Successor::Replays => self.log.note_joining(peer.rank, peer.replica),
        }
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
    }

    /// A joining incarnation of `peer` caught up: an ordinary live replica again. True
    /// if that is news.
    pub(super) fn caught_up(&mut self, peer: ReplicaId) -> bool {
        if !self.liveness.mark_caught_up(peer) {
            return false;
        }
        log::info!("{}: {peer} caught up", self.me);
        self.log.note_caught_up(peer.rank, peer.replica);
        true
    }
}
