//! The sender side of the pull protocol: answering pulls from the log (or the choice
//! log), parking pulls for messages not sent yet, acknowledging them, and holding back
//! messages that depend on more unstable choices than they may carry (output commit).
//! Must never ask other replicas for anything.

use super::*;

impl Engine {
    /// Parks `want` until its message may leave (output commit).
    pub(super) fn block(&mut self, now: Duration, want: Want) {
        self.blocked.insert(want);
        self.blocked_since.get_or_insert(now);
    }

    /// The logged message `want` names, if it is here: (key, order, payload, choices).
    pub(super) fn logged(&self, want: &Want) -> Option<(Key, u64, Bytes, u64)> {
        let key = match *want {
            Want::Key(k) => k,
            Want::Order {
                comm, dst, order, ..
            } => self.log.key_at_order(comm, dst, order)?,
        };
        match self.log.lookup(&key) {
            Lookup::Present(e) => Some((key, e.order, e.payload.clone(), e.choices)),
            Lookup::Evicted | Lookup::NotYetSent => None,
        }
    }

    /// Answers every pull parked for `want` with the message.
    pub(super) fn serve_parked(
        &mut self,
        want: Want,
        key: Key,
        order: u64,
        payload: &Bytes,
        choices: u64,
    ) {
        for (to, req) in self.parked.remove(&want).unwrap_or_default() {
            if self.liveness.is_usable(to) {
                self.stats.served += 1;
                self.data_to(to, key, req, order, payload.clone(), choices);
            }
        }
    }

    /// Lets out the blocked messages that may leave now.
    pub(super) fn release_blocked(&mut self, now: Duration) {
        if self.blocked.is_empty() {
            return;
        }
        let wants: Vec<Want> = self.blocked.iter().copied().collect();
        for want in wants {
            match self.logged(&want) {
                Some((key, order, payload, choices)) if self.may_leave(choices) => {
                    self.blocked.remove(&want);
                    self.serve_parked(want, key, order, &payload, choices);
                }
                Some(_) => {}
                None => {
                    self.blocked.remove(&want);
                }
            }
        }
        self.blocked_since = if self.blocked.is_empty() {
            None
        } else {
            Some(now)
        };
    }

    pub(super) fn on_pull(
        &mut self,
        now: Duration,
        from: ReplicaId,
        want: Want,
        req: u64,
        consumed: u64,
    ) {
        if want.src() != self.me.rank || want.dst() != from.rank {
            log::warn!(
                "{}: PULL {want} from {from} is not for us; dropped",
                self.me
            );
            return;
        }
        if let Some(list) = self.parked.get(&want) {
            if list.contains(&(from, req)) {
                // Asked again (keepalive): still parked.
                self.ack(want, from, req);
                return;
            }
        }
        let found = if want.comm() == DECISION_CTX {
            let slot = match want {
                Want::Key(k) => k.seq,
                Want::Order { order, .. } => order,
            };
            match self.decisions.slot(slot) {
                Slot::Held(payload) => {
                    self.out_choices_after(from, slot);
                    Some((slot_key(self.me.rank, slot), slot, payload, 0))
                }
                Slot::Evicted => {
                    self.out(from, Frame::Gone { want, req });
                    return;
                }
                Slot::Unknown => None,
            }
        } else {
            self.log
                .note_consumed(want.comm(), want.dst(), from.replica, consumed);
            match self.logged(&want) {
                Some((key, order, payload, choices)) => {
                    if self.may_leave(choices) {
                        Some((key, order, payload, choices))
                    } else {
                        self.block(now, want);
                        None
                    }
                }
                None => {
                    let sent = match want {
                        Want::Key(k) => !matches!(self.log.lookup(&k), Lookup::NotYetSent),
                        Want::Order {
                            comm, dst, order, ..
                        } => order < self.log.sent_to(comm, dst),
                    };
                    if sent {
                        self.out(from, Frame::Gone { want, req });
                        return;
                    }
                    None
                }
            }
        };
        match found {
            Some((key, order, payload, choices)) => {
                self.stats.served += 1;
                self.data_to(from, key, req, order, payload, choices);
            }
            None => {
                self.parked.entry(want).or_default().push((from, req));
                if self.cfg.ack_delay.is_zero() {
                    self.ack(want, from, req);
                } else {
                    self.unacked
                        .push_back((now + self.cfg.ack_delay, want, from, req));
                }
            }
        }
    }

    pub(super) fn ack(&mut self, want: Want, to: ReplicaId, req: u64) {
        let progress = self.log.sent_to(want.comm(), want.dst());
        self.out(
            to,
            Frame::Ack {
                want,
                req,
                progress,
            },
        );
    }
}
