//! Glue between the engine and `decision`: recording choices, the followers' standing
//! pull, leadership changes and fencing.

use super::*;
use crate::pull::foreign::decode_entries;

impl Engine {
    /// A choice was recorded here: it counts as received for eviction, and followers
    /// waiting for it get it. A leader sends its followers new choices `CHOICES_BATCH` at a
    /// time, or `CHOICES_BATCH_WAIT` after the first: one write (and one answer from each
    /// follower) per choice was most of what an `ANY_SOURCE` receive cost over a specific
    /// one at r = 2. A replica that adopted a choice passes it on at once.
    pub(super) fn after_record(&mut self, now: Duration, slot: u64) {
        let advanced = self.consumed.record(DECISION_CTX, self.me.rank, slot);
        if self.decisions.is_leader() {
            self.choices_unsent += 1;
            if self.choices_unsent >= CHOICES_BATCH {
                self.send_choices();
            } else if self.choices_due.is_none() {
                self.choices_due = Some(now + CHOICES_BATCH_WAIT);
            }
        } else {
            self.answer_choice_pull(slot);
            if advanced {
                self.report_choices();
            }
        }
        self.pending
            .remove(&Want::Key(slot_key(self.me.rank, slot)));
        self.stand(now);
        self.rematch(now);
    }

    /// Sends the followers the choices made since the last batch: parked pulls for them
    /// are answered, and siblings learn how far this replica holds them.
    pub(super) fn send_choices(&mut self) {
        self.choices_unsent = 0;
        self.choices_due = None;
        let me = self.me.rank;
        let asked: Vec<u64> = self
            .parked
            .keys()
            .filter_map(|w| match w {
                Want::Key(k) if *k == slot_key(me, k.seq) => Some(k.seq),
                _ => None,
            })
            .collect();
        for slot in asked {
            self.answer_choice_pull(slot);
        }
        self.report_choices();
    }

    /// Answers the pulls parked for choice `slot` of this rank if it is held here, each
    /// with the held choices after it too (see `out_choices_after`).
    fn answer_choice_pull(&mut self, slot: u64) {
        let key = slot_key(self.me.rank, slot);
        let Slot::Held(value) = self.decisions.slot(slot) else {
            return;
        };
        let Some(waiting) = self.parked.remove(&Want::Key(key)) else {
            return;
        };
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
                self.out_choices_after(to, slot);
            }
        }
    }

    /// Sends `to` the held choices after `slot`, unasked (a follower far behind catches up
    /// in one write; its standing pull then asks past them).
    pub(super) fn out_choices_after(&mut self, to: ReplicaId, slot: u64) {
        for next in slot + 1..slot + CHOICES_PER_ANSWER {
            let Slot::Held(more) = self.decisions.slot(next) else {
                break;
            };
            self.out(
                to,
                Frame::Data {
                    key: slot_key(self.me.rank, next),
                    req: 0,
                    order: next,
                    payload: more,
                    confirm: false,
                },
            );
        }
    }

    /// Tells the siblings how far this replica holds its rank's choices: they need it to
    /// settle what their messages carry (and to let out a message held by the output
    /// commit).
    fn report_choices(&mut self) {
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
        if self.choices_unsent > 0 {
            self.send_choices();
        }
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
