//! The serving side of the pull protocol, `Serving`: the send commands (`write_ahead`,
//! `handle_written`, `send`, `send_unlogged`), answering pulls from the log (or the
//! choice log), parking pulls for messages not sent yet, acknowledging them, and holding
//! back messages that depend on more unstable choices than they may carry (output
//! commit). A type over the engine's parts it uses (`Engine::serving` makes it); its
//! own state is `service` and the log. Must never ask other replicas for anything.

use std::time::Duration;

use bytes::Bytes;
use smallvec::SmallVec;

use super::choices::{Announce, Coordination};
use super::outbox::{Outbox, Resumed};
use super::service::{Service, Waiter, Waiters, Written};
use super::synchronous::Synchronous;
use super::timers::{Timer, TimerTable};
use super::{order_want, DirectWrite, WriteAhead};
use crate::config::Config;
use crate::limits::{HEADER_BYTES, LATE_PULL};
use crate::message::log::{Lend, LogFull, Lookup};
use crate::message::{Consumed, Key, ReplicaId, ReqId, SendLog, Want, ACK_TAG};
use crate::pull::decision::{slot_key, Slot, DECISION_CTX};
use crate::replica::Liveness;
use crate::wire::control::ReplicaStats;
use crate::wire::frame::data_header;
use crate::wire::Frame;

/// A logged message as it is served: key, order number, payload, how many of this
/// rank's choices it may depend on, and whether it was sent synchronously.
struct Logged {
    key: Key,
    order: u64,
    payload: Bytes,
    choices: u64,
    logged_at: Duration,
    sync: bool,
    /// Lent by the application (`LogEntry::lent`): its DATA asks for confirmation.
    lent: bool,
}

/// What a DATA frame says of its message besides its bytes.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct DataFlags {
    /// It waited in the log before this pull came (`FLAG_LATE`).
    late: bool,
    /// It was sent synchronously (`FLAG_SYNC`).
    sync: bool,
    /// Its payload is lent by the application: the receiver confirms it at once
    /// (`FLAG_CONFIRM`), so that the send's request can complete without copying it.
    confirm: bool,
}

/// The serving side of one replica, over the engine's parts it uses.
pub(super) struct Serving<'e> {
    pub(super) me: ReplicaId,
    pub(super) replicas: u32,
    pub(super) cfg: &'e Config,
    pub(super) log: &'e mut SendLog,
    pub(super) service: &'e mut Service,
    pub(super) coord: &'e mut Coordination,
    pub(super) liveness: &'e Liveness,
    pub(super) consumed: &'e Consumed,
    pub(super) timers: &'e mut TimerTable,
    pub(super) out: &'e mut Outbox,
    pub(super) stats: &'e mut ReplicaStats,
    /// Which sends are synchronous (their DATA frames carry `FLAG_SYNC`).
    pub(super) sync: &'e Synchronous,
    /// The application finalized: a pull for a message not sent yet is answered ENDED.
    pub(super) finalized: &'e mut bool,
}

/// What `Engine::slots_ahead` gives a driver: a small message's key, order number and
/// whether it is synchronous, and the pulls for it parked here (the replica and the
/// pull's id; one per replica, inline: there are seldom more than two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotsAhead {
    /// Its key.
    pub key: Key,
    /// Its order number among the sends to the destination on its communicator.
    pub order: u64,
    /// It is sent synchronously (its DATA carries `sync`).
    pub sync: bool,
    /// The live replicas whose pulls for it are parked here, and those pulls' ids.
    pub to: SmallVec<[(ReplicaId, ReqId); 2]>,
}

impl Serving<'_> {
    /// The outgoing side of the choices, over the same parts.
    fn announce(&mut self) -> Announce<'_> {
        Announce {
            me: self.me,
            replicas: self.replicas,
            coord: self.coord,
            service: self.service,
            liveness: self.liveness,
            consumed: self.consumed,
            timers: self.timers,
            out: self.out,
        }
    }

    /// The want naming the `order`-th message from this replica's rank to `dst` on `comm`.
    fn order_want(&self, comm: u32, dst: u32, order: u64) -> Want {
        order_want(self.me.rank, comm, dst, order)
    }

    // ---- commands and getters of the send path (see `transport::send`) ----

    /// What a driver may write before the next `send` to (comm, tag, dst) logs it: the
    /// message's key and order number, the DATA frames to write straight from the
    /// sender's buffer to the live replicas whose pulls for it are parked here (the driver
    /// reports what went out with `handle_written`), and whether a message of `len` bytes
    /// may skip the log (it is at least `skip_log_from` long and every live replica of
    /// `dst` waits for it, so all of them can confirm it at once; `None`: never). No
    /// writes when the message must carry choices: those frames go before its DATA.
    pub(super) fn write_ahead(
        &self,
        comm: u32,
        tag: i32,
        dst: u32,
        len: usize,
        skip_log_from: Option<usize>,
    ) -> WriteAhead {
        let (key, order) = self.log.peek_next(comm, tag, self.me.rank, dst);
        let waiters: Waiters = if self.coord.must_carry() {
            Waiters::new()
        } else {
            [Want::Key(key), self.order_want(comm, dst, order)]
                .iter()
                .flat_map(|w| self.service.waiters(w))
                .copied()
                .filter(|w| w.from != self.me && self.liveness.is_usable(w.from))
                .collect()
        };
        // A regenerated replica replays from the log: nothing may skip it then.
        let confirm = skip_log_from.is_some_and(|min| len >= min)
            && !self.cfg.regenerates_from_siblings(self.replicas)
            && self.all_replicas_waiting(dst, &waiters);
        let sync = self.sync.is_made(&key);
        // One direct write per replica: one that pulled the message twice (by its key and
        // by its order number) would get two DATA frames written straight to its link,
        // and the second's bytes would follow the first's on the wire even when the first
        // went out only in part (NPB FT's all-to-all over shared memory: a corrupt
        // stream). The other pull is answered when the message is logged, after the rest.
        let writes = waiters
            .iter()
            .enumerate()
            .filter(|&(i, w)| !waiters[..i].iter().any(|p| p.from == w.from))
            .map(|(_, w)| DirectWrite {
                to: w.from,
                req: w.req,
                header: data_header(&key, w.req, order, len, confirm, sync).encode(),
            })
            .collect();
        WriteAhead {
            key,
            order,
            writes,
            confirm,
            sync,
        }
    }

    /// `write_ahead` for the slots of replicas on this host alone (a small message, which
    /// is always logged: no confirmation asked, so no frame header to build and no
    /// question of skipping the log): the message's key, order number and whether it is
    /// synchronous, and the live replicas whose pulls for it are parked here, one pull
    /// each (the other, by key or by order number, is answered when the message is
    /// logged, as after `write_ahead`). None while the message must carry choices.
    pub(super) fn slots_ahead(&self, comm: u32, tag: i32, dst: u32) -> SlotsAhead {
        let (key, order) = self.log.peek_next(comm, tag, self.me.rank, dst);
        let mut to = SmallVec::new();
        if !self.coord.must_carry() {
            for want in [Want::Key(key), self.order_want(comm, dst, order)] {
                for w in self.service.waiters(&want) {
                    let first = !to.iter().any(|(r, _)| *r == w.from);
                    if first && w.from != self.me && self.liveness.is_usable(w.from) {
                        to.push((w.from, w.req));
                    }
                }
            }
        }
        let sync = !to.is_empty() && self.sync.is_made(&key);
        SlotsAhead {
            key,
            order,
            sync,
            to,
        }
    }

    /// The driver wrote the first `written` bytes (header included) of a DATA frame
    /// `write_ahead` gave it, the answer to `to`'s pull `req`, on its link `link`: when
    /// the message is logged, the engine issues the rest (`poll_resumed`), or nothing if
    /// it went out whole. `confirm` is the `write_ahead` it came from's.
    pub(super) fn handle_written(
        &mut self,
        to: ReplicaId,
        req: ReqId,
        written: usize,
        link: u64,
        confirm: bool,
    ) {
        let w = Waiter { from: to, req };
        debug_assert!(
            self.service
                .parked_wants()
                .any(|want| self.service.is_parked(want, w)),
            "{}: a direct write to {to} answers no parked pull",
            self.me
        );
        if written > 0 {
            self.service.note_written(
                w,
                Written {
                    bytes: written,
                    link,
                    confirm,
                },
            );
        }
    }

    /// Counts a send that waits for its pull before going out (`ReplicaStats::held`).
    pub(super) fn note_held(&mut self) {
        self.stats.held += 1;
    }

    /// Whether every live replica of `dst` is among `waiters`.
    fn all_replicas_waiting(&self, dst: u32, waiters: &[Waiter]) -> bool {
        dst != self.me.rank
            && (0..self.replicas).all(|k| {
                let r = ReplicaId::new(dst, k);
                !self.liveness.is_usable(r) || waiters.iter().any(|w| w.from == r)
            })
    }

    /// Appends a message to the log and answers any pull parked for it. `Err(LogFull)`
    /// means the caller must wait (drive the engine) and try again.
    /// `lent`: the payload is the application's memory until then (`SendLog::mark_lent`);
    /// its DATA frames ask for confirmation.
    pub(super) fn send(
        &mut self,
        now: Duration,
        (comm, tag, dst): (u32, i32, u32),
        payload: Bytes,
        lent: Option<Lend>,
    ) -> Result<Key, LogFull> {
        let choices = self.coord.decisions.used_bound();
        // An acknowledgement stays out of the log (`ACK_TAG`), unless its stream holds
        // other messages.
        assert!(
            tag != ACK_TAG || payload.is_empty() && lent.is_none(),
            "an acknowledgement carries no bytes"
        );
        let ack = if tag == ACK_TAG {
            self.log.append_ack(comm, self.me.rank, dst)
        } else {
            None
        };
        let (key, order) = match ack {
            Some(numbered) => numbered,
            None => self
                .log
                .append(comm, tag, self.me.rank, dst, payload.clone(), choices, now)?,
        };
        self.stats.sends += 1;
        let sync = self.sync.is_made(&key);
        if sync {
            self.log.mark_synchronous(&key);
        }
        if let Some(lend) = lent {
            self.log.mark_lent(&key, lend);
        }
        let may_leave = self.coord.may_leave(choices);
        for want in [Want::Key(key), self.order_want(comm, dst, order)] {
            if may_leave {
                // Takes the pulls parked for `want`, if any (one lookup).
                let flags = DataFlags {
                    late: false,
                    sync,
                    confirm: lent.is_some(),
                };
                self.serve_parked(want, (key, order, flags), &payload, choices);
            } else if self.service.has_waiters(&want) {
                self.block(now, want);
            }
        }
        Ok(key)
    }

    /// Records the send `write_ahead` announced without logging its payload: every live
    /// replica of `dst` already confirmed it (`delivered`), so no one can ask for it
    /// again; a pull for it is answered GONE. The pulls parked for it were answered by
    /// the caller's direct writes.
    pub(super) fn send_unlogged(&mut self, comm: u32, tag: i32, dst: u32) {
        let (key, order) = self.log.append_unlogged(comm, tag, self.me.rank, dst);
        self.stats.sends += 1;
        self.stats.unlogged += 1;
        self.service.take(&Want::Key(key));
        self.service.take(&self.order_want(comm, dst, order));
    }

    // ---- internals ----

    /// The application finalized: it makes no more sends. Pulls parked for a message it
    /// did not send are answered ENDED, and so is every later one (see `on_pull`), so a
    /// receiver whose sender's program ended early (an error returned from `main`) fails
    /// instead of waiting forever. Choices are not messages: a follower's pull for the
    /// next choice stays parked.
    pub(super) fn finalize(&mut self) {
        *self.finalized = true;
        // A lent payload of a request the program never completed (erroneous: MPI-3.1
        // section 8.7) must not be read after the program frees its memory.
        self.log.give_back_all();
        let unsent: Vec<Want> = self
            .service
            .parked_wants()
            .filter(|w| w.comm() != DECISION_CTX)
            .copied()
            .collect();
        for want in unsent {
            if self.logged(&want).is_some() {
                continue;
            }
            for w in self.service.take(&want) {
                if self.liveness.is_usable(w.from) {
                    self.out.send(w.from, Frame::Ended { want, req: w.req });
                }
            }
        }
    }

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
                logged_at: e.logged_at,
                sync: e.sync,
                lent: e.lent.is_some(),
            }),
            // An acknowledgement kept out of the log: the numbering tells it was sent.
            // It carries every choice made so far (at least those it was sent after).
            Lookup::Evicted => self.log.ack_order(&key).map(|order| Logged {
                key,
                order,
                payload: Bytes::new(),
                choices: self.coord.decisions.used_bound(),
                logged_at: Duration::ZERO,
                sync: false,
                lent: false,
            }),
            Lookup::NotYetSent => None,
        }
    }

    /// Answers every pull parked for `want` with the message (key, order number, sent
    /// synchronously). An answer a direct write began goes on as the rest of that write,
    /// on its link (nothing, when it went out whole).
    pub(super) fn serve_parked(
        &mut self,
        want: Want,
        (key, order, flags): (Key, u64, DataFlags),
        payload: &Bytes,
        choices: u64,
    ) {
        for w in self.service.take_answering(&want) {
            let written = self.service.take_written(w);
            if !self.liveness.is_usable(w.from) {
                continue;
            }
            self.stats.served += 1;
            let Some(written) = written else {
                self.data_to(w, (key, order), payload.clone(), choices, flags);
                continue;
            };
            // `write_ahead` offers no direct write of a message that carries choices.
            debug_assert!(self.coord.may_leave(choices));
            debug_assert!(written.bytes <= HEADER_BYTES + payload.len());
            if written.bytes < HEADER_BYTES + payload.len() {
                self.out.resume(Resumed {
                    to: w.from,
                    frame: Frame::Data {
                        key,
                        req: w.req,
                        order,
                        payload: payload.clone(),
                        confirm: written.confirm,
                        late: false,
                        sync: flags.sync,
                    },
                    written: written.bytes,
                    link: written.link,
                });
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
                    let flags = DataFlags {
                        late: false,
                        sync: m.sync,
                        confirm: m.lent,
                    };
                    self.serve_parked(want, (m.key, m.order, flags), &m.payload, m.choices);
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
                    // Every choice goes behind the ones before it (see `send_choices`):
                    // first the batch the standing pulls wait for, then this one, then
                    // the ones after it.
                    self.announce().flush_choices();
                    self.stats.served += 1;
                    let key = slot_key(self.me.rank, slot);
                    self.data_to(w, (key, slot), payload, 0, DataFlags::default());
                    self.announce().out_choices_after(from, slot);
                    return;
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
                    if *self.finalized {
                        self.out.send(from, Frame::Ended { want, req: w.req });
                        return;
                    }
                    None
                }
            }
        };
        match found {
            Some(m) => {
                self.stats.served += 1;
                // It waited in the log: the receiver could have had it sooner by pulling
                // ahead (see `receive::on_data`).
                let late = !m.logged_at.is_zero() && now.saturating_sub(m.logged_at) >= LATE_PULL;
                let flags = DataFlags {
                    late,
                    sync: m.sync,
                    confirm: m.lent,
                };
                self.data_to(w, (m.key, m.order), m.payload, m.choices, flags);
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

    /// Sends a logged message (key, order number) to `w`, preceded by the choices it
    /// must carry (see `carry_choices`).
    fn data_to(
        &mut self,
        w: Waiter,
        (key, order): (Key, u64),
        payload: Bytes,
        choices: u64,
        DataFlags {
            late,
            sync,
            confirm,
        }: DataFlags,
    ) {
        self.announce().carry_choices(w.from, choices);
        self.out.send(
            w.from,
            Frame::Data {
                key,
                req: w.req,
                order,
                payload,
                confirm,
                late,
                sync,
            },
        );
    }
}
