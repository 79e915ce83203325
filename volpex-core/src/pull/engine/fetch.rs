//! The receiver side of the pull protocol: asking the best replica for what the matcher
//! needs, taking DATA, failing over on deaths, silence and GONE, hedging against lagging
//! replicas, and speculative pulls. Must never serve other replicas.

use super::*;

impl Engine {
    /// This process did not run for a while (stopped, or starved of CPU): what looked
    /// like silence was ours. Every silence clock starts over now.
    pub(super) fn resync(&mut self, now: Duration) {
        log::debug!(
            "{}: no timer ran for {:?}; restarting silence clocks",
            self.me,
            now.saturating_sub(self.last_tick)
        );
        for t in self.heard.values_mut() {
            *t = now;
        }
        self.pinged.clear();
        for p in self.pending.values_mut() {
            for a in p.asks.iter_mut() {
                if let AskState::Sent { at } = &mut a.state {
                    *at = now;
                }
            }
        }
        if self.blocked_since.is_some() {
            self.blocked_since = Some(now);
        }
        self.decisions.restart_clock(now);
    }

    /// `peer` did not answer the ask for `want` in time: fence it if it is the leader of
    /// our choices, otherwise suspect it and ask another replica.
    pub(super) fn on_silent(&mut self, now: Duration, want: Want, peer: ReplicaId) {
        if let Some(a) = self
            .pending
            .get_mut(&want)
            .and_then(|p| p.asks.iter_mut().find(|a| a.replica == peer.replica))
        {
            a.state = AskState::Silent;
        }
        if want.comm() == DECISION_CTX {
            // Only fence a leader this replica is waiting on; a standing pull just waits.
            if self.pending.get(&want).is_some_and(|p| p.needed) {
                log::info!(
                    "{}: leader {peer} silent for {:?}; fencing it",
                    self.me,
                    self.cfg.ack_timeout
                );
                self.fence(peer);
            }
            return;
        }
        if self.liveness.suspect(peer, now) {
            log::info!(
                "{}: replica {peer} silent for {:?} (ack timeout); failing over",
                self.me,
                self.cfg.ack_timeout
            );
            self.stats.failovers += 1;
        }
        let others = self
            .pending
            .get(&want)
            .is_some_and(|p| p.asks.iter().any(Ask::outstanding));
        if !others {
            self.ask_next(now, want);
        }
    }

    /// Asks ahead for the next message of a stream (see the module doc), unless it is a
    /// message to ourselves, a choice, or already asked for.
    pub(super) fn speculate(&mut self, now: Duration, want: Want) {
        if want.src() == self.me.rank
            || want.comm() == DECISION_CTX
            || self.pending.contains_key(&want)
        {
            return;
        }
        self.pending.insert(
            want,
            Pending {
                asks: Vec::new(),
                hedge_at: Duration::MAX,
                needed: false,
                defer: true,
            },
        );
        self.ask_next(now, want);
    }

    pub(super) fn on_data(
        &mut self,
        now: Duration,
        from: ReplicaId,
        key: Key,
        order: u64,
        payload: Bytes,
    ) {
        if from.rank != key.src || key.dst != self.me.rank {
            log::warn!("{}: DATA {key} from {from} is not for us; dropped", self.me);
            return;
        }
        if self.refused.remove(&from) || self.foreign.is_fenced(from) {
            // It may depend on a choice the new leader of a rank decides differently;
            // the pull stays out and fails over or is asked again.
            log::info!(
                "{}: DATA {key} from {from} dropped (stale choices)",
                self.me
            );
            return;
        }
        if self.consumed.has(key.comm, key.src, order) {
            log::trace!("{}: duplicate DATA {key} from {from} dropped", self.me);
            return;
        }
        if key.comm == DECISION_CTX {
            let adopted = self.decisions.adopt(key.seq, payload, from.replica);
            if let Slot::Held(_) = self.decisions.slot(key.seq) {
                self.complete(now, from, &[Want::Key(key)]);
            }
            if adopted {
                self.after_record(now, key.seq);
            }
            return;
        }
        let by_order = Want::Order {
            comm: key.comm,
            src: key.src,
            dst: key.dst,
            order,
        };
        self.complete(now, from, &[Want::Key(key), by_order]);
        self.stats.receives += 1;
        let first_missing = self.consumed.watermark(key.comm, key.src);
        if self.consumed.record(key.comm, key.src, order) {
            self.consumed_dirty = true;
        }
        self.matcher.arrive(key, order, payload, first_missing);
        self.rematch(now);
    }

    /// `wants` arrived from `from`: forget them, withdraw the other asks, and mark the
    /// replicas that were asked first but answered later as lagging.
    pub(super) fn complete(&mut self, now: Duration, from: ReplicaId, wants: &[Want]) {
        self.liveness.clear_suspicion(from);
        let mut lagging = Vec::new();
        for want in wants {
            let Some(p) = self.pending.remove(want) else {
                continue;
            };
            for a in p.asks.iter().filter(|a| a.outstanding()) {
                if a.replica == from.replica {
                    continue;
                }
                let other = ReplicaId::new(from.rank, a.replica);
                // The sibling we asked first is behind the one that answered.
                if other.rank != self.me.rank && self.liveness.suspect(other, now) {
                    log::info!(
                        "{}: replica {other} lags behind {from} for {want}; preferring others",
                        self.me
                    );
                    self.stats.failovers += 1;
                    lagging.push(other);
                }
                self.out(
                    other,
                    Frame::Cancel {
                        want: *want,
                        req: a.req,
                    },
                );
            }
        }
        for other in lagging {
            self.fail_over(now, other);
        }
    }

    /// A sender parked our pull. If another replica already parked one for the same
    /// message, that one is alive and simply has not sent yet: withdraw this (hedge) ask
    /// at once, so the message crosses the network only once.
    pub(super) fn on_ack(&mut self, from: ReplicaId, want: Want, req: u64) {
        if from.rank != want.src() {
            return;
        }
        let Some(p) = self.pending.get_mut(&want) else {
            return;
        };
        let other_parked = p
            .asks
            .iter()
            .any(|a| a.replica != from.replica && a.state == AskState::Parked);
        let Some(a) = p
            .asks
            .iter_mut()
            .find(|a| a.replica == from.replica && a.req == req)
        else {
            return;
        };
        if let AskState::Sent { .. } | AskState::Silent = a.state {
            if other_parked {
                a.state = AskState::Dropped;
                self.out(from, Frame::Cancel { want, req });
            } else {
                a.state = AskState::Parked;
            }
        }
    }

    pub(super) fn on_gone(&mut self, now: Duration, from: ReplicaId, want: Want, req: u64) {
        if from.rank != want.src() {
            return;
        }
        let Some(a) = self.pending.get_mut(&want).and_then(|p| {
            p.asks
                .iter_mut()
                .find(|a| a.replica == from.replica && a.req == req)
        }) else {
            return;
        };
        a.state = AskState::Gone;
        log::debug!("{}: {from} evicted {want}", self.me);
        self.ask_next(now, want);
    }

    /// The replica to ask for `want` next: the leader for a choice, otherwise the best
    /// replica of the sender not asked yet (own team first).
    pub(super) fn choose_replica(&self, want: &Want, p: &Pending) -> Option<u32> {
        let asked = |k: u32| {
            p.asks
                .iter()
                .any(|a| a.replica == k && a.state != AskState::Dropped)
        };
        if want.comm() == DECISION_CTX {
            return match self.decisions.authority() {
                Authority::Follower { leader } if !asked(*leader) => Some(*leader),
                Authority::Follower { .. } | Authority::TakingOver { .. } | Authority::Leader => {
                    None
                }
            };
        }
        self.liveness.choose(want.src(), self.me.replica, asked)
    }

    /// Sends the pull for `want` to the best replica not asked yet. If none is left, the
    /// receive fails: rank lost when every replica is dead, retirement when the live ones
    /// all evicted it; otherwise it keeps waiting on the outstanding asks.
    pub(super) fn ask_next(&mut self, now: Duration, want: Want) -> bool {
        let Some(p) = self.pending.get(&want) else {
            return false;
        };
        if let Some(k) = self.choose_replica(&want, p) {
            let req = self.next_req;
            self.next_req += 1;
            let consumed = self.consumed.watermark(want.comm(), want.src());
            let mut defer = false;
            if let Some(p) = self.pending.get_mut(&want) {
                if p.asks.iter().any(|a| a.state != AskState::Dropped) {
                    self.stats.failovers += 1;
                }
                p.asks.retain(|a| a.replica != k);
                p.asks.push(Ask {
                    replica: k,
                    req,
                    state: AskState::Sent { at: now },
                });
                defer = p.defer;
                p.defer = false;
            }
            let to = ReplicaId::new(want.src(), k);
            let pull = Frame::Pull {
                want,
                req,
                consumed,
            };
            if defer && to != self.me {
                self.deferred.push_back((to, pull));
            } else {
                self.out(to, pull);
            }
            return true;
        }
        if want.comm() == DECISION_CTX {
            // A choice is never lost: the leader (maybe this replica, after a takeover)
            // makes it; a GONE means we fell behind.
            if p.asks.iter().any(|a| a.state == AskState::Gone) {
                let reason = format!(
                    "replica {} fell too far behind: choice {} evicted",
                    self.me, want
                );
                self.retire(reason);
            }
            return false;
        }
        if !p.needed {
            // Nobody waits for it yet; whoever does will ask again and report.
            if !p.asks.iter().any(Ask::outstanding) {
                self.pending.remove(&want);
            }
            return false;
        }
        if p.asks.iter().any(Ask::outstanding) {
            return false;
        }
        let err = if !self.liveness.rank_alive(want.src()) {
            RecvError::RankLost { rank: want.src() }
        } else if p.asks.iter().any(|a| a.state == AskState::Gone) {
            let reason = format!(
                "replica {} fell too far behind: message {want} evicted",
                self.me
            );
            self.retire(reason.clone());
            RecvError::Retired { reason }
        } else {
            // Every live replica was dropped (cancelled); ask them all again.
            if let Some(p) = self.pending.get_mut(&want) {
                p.asks.clear();
            }
            return self.ask_next(now, want);
        };
        self.pending.remove(&want);
        match want {
            Want::Key(key) => self.matcher.fail_key(&key, err),
            Want::Order { comm, src, .. } => self.matcher.fail_unresolved(|spec| {
                (spec.comm == comm && spec.ranks() == [src]).then(|| err.clone())
            }),
        }
        false
    }

    pub(super) fn retire(&mut self, reason: String) {
        if !self.retired {
            self.retired = true;
            self.events.push_back(EngineEvent::Retire { reason });
        }
    }

    /// Re-posts every pull outstanding at `peer` to another replica of its rank.
    pub(super) fn fail_over(&mut self, now: Duration, peer: ReplicaId) {
        let dead = !self.liveness.is_usable(peer);
        let wants: Vec<Want> = self
            .pending
            .iter()
            .filter(|(w, p)| {
                w.src() == peer.rank
                    && p.asks
                        .iter()
                        .any(|a| a.replica == peer.replica && a.outstanding())
            })
            .map(|(w, _)| *w)
            .collect();
        for want in wants {
            if dead {
                if let Some(p) = self.pending.get_mut(&want) {
                    for a in p.asks.iter_mut().filter(|a| a.replica == peer.replica) {
                        a.state = AskState::Dropped;
                    }
                }
            }
            let others_outstanding = self.pending.get(&want).is_some_and(|p| {
                p.asks
                    .iter()
                    .any(|a| a.replica != peer.replica && a.outstanding())
            });
            if !others_outstanding {
                self.ask_next(now, want);
            }
        }
    }

    /// Asks one more replica whether it already has the message the current asks are
    /// still waiting for; the first DATA wins and the rest are cancelled.
    pub(super) fn hedge(&mut self, now: Duration, want: Want) {
        let Some(p) = self.pending.get_mut(&want) else {
            return;
        };
        p.hedge_at = now + self.cfg.hedge_timeout;
        if want.comm() == DECISION_CTX {
            return;
        }
        // Withdraw earlier hedges that were only parked too, keeping the first ask.
        let mut cancels = Vec::new();
        let mut seen_outstanding = false;
        for a in p.asks.iter_mut() {
            if a.state == AskState::Parked {
                if seen_outstanding {
                    cancels.push((a.replica, a.req));
                    a.state = AskState::Dropped;
                }
                seen_outstanding = true;
            } else if a.outstanding() {
                seen_outstanding = true;
            }
        }
        let outstanding = p.replicas(Ask::outstanding);
        let gone = p.replicas(|a| a.state == AskState::Gone);
        let last_hedged = p.asks.last().map(|a| a.replica);
        let src = want.src();
        for (k, req) in cancels {
            self.out(ReplicaId::new(src, k), Frame::Cancel { want, req });
        }
        if self.replicas < 2 {
            return;
        }
        // Rotate through the siblings not currently asked, starting after the last one.
        let start = last_hedged.map_or(self.me.replica, |k| k + 1);
        let candidate = (0..self.replicas)
            .map(|i| (start + i) % self.replicas)
            .find(|&k| {
                !outstanding.contains(&k)
                    && !gone.contains(&k)
                    && self.liveness.is_usable(ReplicaId::new(src, k))
            });
        if let Some(k) = candidate {
            let req = self.next_req;
            self.next_req += 1;
            let consumed = self.consumed.watermark(want.comm(), src);
            if let Some(p) = self.pending.get_mut(&want) {
                p.asks.retain(|a| a.replica != k || a.outstanding());
                p.asks.push(Ask {
                    replica: k,
                    req,
                    state: AskState::Sent { at: now },
                });
            }
            log::trace!("{}: hedging {want} at replica {k}", self.me);
            self.out(
                ReplicaId::new(src, k),
                Frame::Pull {
                    want,
                    req,
                    consumed,
                },
            );
        }
    }
}
