//! Glue between the engine and `decision`: recording choices, the followers' standing
//! pull, leadership changes and fencing.

use super::*;
use crate::pull::foreign::decode_entries;

impl Engine {
    /// A choice was recorded here: followers waiting for it get it, and it counts as
    /// received for eviction.
    pub(super) fn after_record(&mut self, now: Duration, slot: u64) {
        let key = slot_key(self.me.rank, slot);
        if let (Some(waiting), Slot::Held(value)) = (
            self.parked.remove(&Want::Key(key)),
            self.decisions.slot(slot),
        ) {
            for (to, req) in waiting {
                if self.liveness.is_usable(to) {
                    self.out(
                        to,
                        Frame::Data {
                            key,
                            req,
                            order: slot,
                            payload: value.clone(),
                            confirm: false,
                        },
                    );
                }
            }
        }
        if self.consumed.record(DECISION_CTX, self.me.rank, slot) {
            // Siblings need this to settle what their messages carry (and to let out a
            // message held by the output commit): tell them now.
            let watermark = self.consumed.watermark(DECISION_CTX, self.me.rank);
            for k in 0..self.replicas {
                let to = ReplicaId::new(self.me.rank, k);
                if to != self.me && self.liveness.is_usable(to) {
                    self.out(
                        to,
                        Frame::Consumed {
                            comm: DECISION_CTX,
                            src: self.me.rank,
                            dst: self.me.rank,
                            watermark,
                        },
                    );
                }
            }
        }
        self.pending.remove(&Want::Key(key));
        self.stand(now);
        self.rematch(now);
    }

    /// Choices of this rank carried by a sibling's message to us (see `foreign`).
    pub(super) fn adopt_carried(&mut self, now: Duration, from: ReplicaId, entries: &Bytes) {
        if from == self.me || !self.decisions.enabled() {
            return;
        }
        match decode_entries(entries) {
            Ok(list) => {
                for (slot, v) in list {
                    if self.decisions.adopt(slot, v, from.replica) {
                        self.after_record(now, slot);
                    }
                }
            }
            Err(e) => {
                log::error!("{}: bad CHOICES from {from}: {e}", self.me);
                self.refused.insert(from);
            }
        }
    }

    /// A follower keeps a pull for the first choice it does not hold standing at the
    /// leader (see `decision`).
    pub(super) fn stand(&mut self, now: Duration) {
        if !self.decisions.enabled() || self.decisions.is_leader() {
            return;
        }
        let next = self.consumed.watermark(DECISION_CTX, self.me.rank);
        if let Slot::Unknown = self.decisions.slot(next) {
            self.want(now, Want::Key(slot_key(self.me.rank, next)), false);
        }
    }

    /// Leadership may have changed: a new leader drops its pulls for choices (it makes or
    /// adopted them), a follower re-asks the new leader.
    pub(super) fn on_authority_change(&mut self, now: Duration) {
        let choice_wants: Vec<Want> = self
            .pending
            .keys()
            .filter(|w| w.comm() == DECISION_CTX)
            .copied()
            .collect();
        for want in choice_wants {
            match self.decisions.authority() {
                Authority::Leader => {
                    self.pending.remove(&want);
                }
                Authority::Follower { leader } => {
                    let leader = *leader;
                    let asked = self.pending.get(&want).is_some_and(|p| {
                        p.asks
                            .iter()
                            .any(|a| a.replica == leader && a.outstanding())
                    });
                    if !asked {
                        self.ask_next(now, want);
                    }
                }
                Authority::TakingOver { .. } => {}
            }
        }
        self.stand(now);
        self.rematch(now);
    }

    pub(super) fn fence(&mut self, peer: ReplicaId) {
        if self.fenced.insert(peer) {
            log::info!("{}: asking the launcher to fence {peer}", self.me);
            self.events.push_back(EngineEvent::Fence { peer });
        }
    }
}
