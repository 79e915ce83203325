//! The sender side of the pull protocol: answering pulls from the log (or the choice
//! log), parking pulls for messages not sent yet, acknowledging them, and holding back
//! messages that depend on more unstable choices than they may carry (output commit).
//! The state is `service`; this file is the logic that also needs the log and the
//! choices. Must never ask other replicas for anything.

use std::time::Duration;

use bytes::Bytes;

use super::service::Waiter;
use super::timers::Timer;
use super::Engine;
use crate::message::log::Lookup;
use crate::message::{Key, Want};
use crate::pull::decision::{slot_key, Slot, DECISION_CTX};
use crate::wire::Frame;

/// A logged message as it is served: key, order number, payload, and how many of this
/// rank's choices it may depend on.
struct Logged {
    key: Key,
    order: u64,
    payload: Bytes,
    choices: u64,
}

impl Engine {
    /// Parks `want` until its message may leave (output commit).
    pub(super) fn block(&mut self, now: Duration, want: Want) {
        self.service.block(want);
        self.timers
            .set_if_idle(Timer::OutputCommit, now + self.cfg.ack_timeout);
    }

    /// The logged message `want` names, if it is here.
    fn logged(&self, want: &Want) -> Option<Logged> {
        let key = match *want {
            Want::Key(k) => k,
            Want::Order {
                comm, dst, order, ..
            } => self.log.key_at_order(comm, dst, order)?,
        };
        match self.log.lookup(&key) {
            Lookup::Present(e) => Some(Logged {
                key,
                order: e.order,
                payload: e.payload.clone(),
                choices: e.choices,
            }),
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
        for w in self.service.take(&want) {
            if self.liveness.is_usable(w.from) {
                self.stats.served += 1;
                self.data_to(w, key, order, payload.clone(), choices);
            }
        }
    }

    /// Lets out the blocked messages that may leave now.
    pub(super) fn release_blocked(&mut self, now: Duration) {
        if !self.service.any_blocked() {
            return;
        }
        for want in self.service.blocked() {
            match self.logged(&want) {
                Some(m) if self.coord.may_leave(m.choices) => {
                    self.service.unblock(&want);
                    self.serve_parked(want, m.key, m.order, &m.payload, m.choices);
                }
                Some(_) => {}
                None => self.service.unblock(&want),
            }
        }
        if self.service.any_blocked() {
            self.timers
                .set(Timer::OutputCommit, now + self.cfg.ack_timeout);
        } else {
            self.timers.stop(Timer::OutputCommit);
        }
    }

    pub(super) fn on_pull(&mut self, now: Duration, w: Waiter, want: Want, consumed: u64) {
        let from = w.from;
        if want.src() != self.me.rank || want.dst() != from.rank {
            log::warn!(
                "{}: PULL {want} from {from} is not for us; dropped",
                self.me
            );
            return;
        }
        if self.service.is_parked(&want, w) {
            // Asked again (keepalive): still parked.
            self.ack(want, w);
            return;
        }
        let found = if want.comm() == DECISION_CTX {
            let slot = match want {
                Want::Key(k) => k.seq,
                Want::Order { order, .. } => order,
            };
            match self.coord.decisions.slot(slot) {
                Slot::Held(payload) => {
                    self.out_choices_after(from, slot);
                    Some(Logged {
                        key: slot_key(self.me.rank, slot),
                        order: slot,
                        payload,
                        choices: 0,
                    })
                }
                Slot::Evicted => {
                    self.out.send(from, Frame::Gone { want, req: w.req });
                    return;
                }
                Slot::Unknown => None,
            }
        } else {
            self.log
                .note_consumed(want.comm(), want.dst(), from.replica, consumed);
            match self.logged(&want) {
                Some(m) if self.coord.may_leave(m.choices) => Some(m),
                Some(_) => {
                    self.block(now, want);
                    None
                }
                None => {
                    let sent = match want {
                        Want::Key(k) => !matches!(self.log.lookup(&k), Lookup::NotYetSent),
                        Want::Order {
                            comm, dst, order, ..
                        } => order < self.log.sent_to(comm, dst),
                    };
                    if sent {
                        self.out.send(from, Frame::Gone { want, req: w.req });
                        return;
                    }
                    None
                }
            }
        };
        match found {
            Some(m) => {
                self.stats.served += 1;
                self.data_to(w, m.key, m.order, m.payload, m.choices);
            }
            None => {
                self.service.park(want, w);
                if self.cfg.ack_delay.is_zero() {
                    self.ack(want, w);
                } else {
                    self.service.ack_later(now + self.cfg.ack_delay, want, w);
                }
            }
        }
    }

    pub(super) fn ack(&mut self, want: Want, w: Waiter) {
        let progress = self.log.sent_to(want.comm(), want.dst());
        self.out.send(
            w.from,
            Frame::Ack {
                want,
                req: w.req,
                progress,
            },
        );
    }

    /// Sends a logged message to `w`, preceded by the choices it must carry (see
    /// `carry_choices`).
    fn data_to(&mut self, w: Waiter, key: Key, order: u64, payload: Bytes, choices: u64) {
        self.carry_choices(w.from, choices);
        self.out.send(
            w.from,
            Frame::Data {
                key,
                req: w.req,
                order,
                payload,
                confirm: false,
            },
        );
    }
}
