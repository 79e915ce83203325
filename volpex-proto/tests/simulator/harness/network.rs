//! The simulated network and the world around the engines: frames travel with random
//! delays (FIFO per link, like TCP, unless `Faults::reorder`), cut links drop them, a
//! silenced replica's frames wait in its socket, a killed one's are lost; a stand-in
//! launcher fences the replicas engines ask it to and announces every death and
//! retirement (DESIGN.md "Failure detection"). Frames carry the incarnations of both ends:
//! once a new incarnation of a replica joined, frames in flight from or to its older ones
//! are dropped, as the transport closes their connections (DESIGN.md "Regeneration").

use std::cmp::Reverse;
use std::time::Duration;

use rand::Rng;
use volpex_proto::message::{ReplicaId, Want};
use volpex_proto::pull::EngineEvent;
use volpex_proto::wire::Frame;

use super::{Life, Sim};

impl Sim {
    pub fn cut(&self, a: ReplicaId, b: ReplicaId) -> bool {
        self.faults
            .cuts
            .iter()
            .any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
    }

    /// Moves everything replica `i` wants to transmit onto the network.
    pub fn collect(&mut self, i: usize) {
        let from = self.reps[i].engine.me();
        // Deferred frames leave with the next write; here they simply go now, after the
        // urgent ones.
        let mut out = Vec::new();
        while let Some(f) = self.reps[i].engine.poll_transmit() {
            out.push(f);
        }
        while let Some(f) = self.reps[i].engine.poll_deferred() {
            out.push(f);
        }
        let from_inc = self.reps[i].inc;
        for (to, frame) in out {
            if self.cut(from, to) {
                continue;
            }
            self.check_outgoing(i, to, &frame);
            if matches!(frame, Frame::Data { .. }) {
                self.data_frames += 1;
            }
            let delay = Duration::from_micros(self.rng.random_range(20..400));
            let free = match self.faults.reorder {
                true => Duration::ZERO,
                false => self.link_free.get(&(from, to)).copied().unwrap_or_default(),
            };
            let at = (self.now + delay).max(free);
            self.link_free.insert((from, to), at);
            let id = self.next_frame;
            self.next_frame += 1;
            let to_inc = self.reps[self.idx(to)].inc;
            self.frames.insert(id, (from, from_inc, to, to_inc, frame));
            self.net.push(Reverse((at, id)));
        }
        while let Some(ev) = self.reps[i].engine.poll_event() {
            match ev {
                EngineEvent::Retire { reason } => {
                    if !self.faults.may_retire && !self.regeneration_may_fail_here(i, &reason) {
                        self.fail(format!("unexpected retirement of {from}: {reason}"));
                    }
                    self.trace(|| format!("{from} retires: {reason}"));
                    self.tally.retired.push((from, self.reps[i].inc, reason));
                    self.reps[i].life = Life::Retired;
                    // The launcher tells everyone, as for any replica that is gone.
                    self.notices.push((self.now, from, from_inc));
                }
                EngineEvent::Fence { peer } => {
                    if peer == from {
                        self.fail(format!("{from} asked to fence itself"));
                    }
                    // The launcher ends it (if it still runs) and announces its death.
                    let j = self.idx(peer);
                    if matches!(self.reps[j].life, Life::Running | Life::Silenced) {
                        self.reps[j].life = Life::Killed;
                        self.fenced += 1;
                    }
                    self.trace(|| format!("launcher: {from} fences {peer}"));
                    self.notices.push((self.now, peer, self.reps[j].inc));
                }
            }
        }
    }

    pub fn apply_faults(&mut self) {
        let now = self.now;
        // A kill strikes once: the first time its replica runs at or after its time.
        for (n, (id, at, notice)) in self.faults.kills.clone().into_iter().enumerate() {
            let i = self.idx(id);
            if !self.kills_done[n] && now >= at && self.reps[i].life == Life::Running {
                self.kills_done[n] = true;
                self.reps[i].life = Life::Killed;
                if let Some(d) = notice {
                    self.notices.push((now + d, id, self.reps[i].inc));
                }
            }
        }
        for (id, from, until) in self.faults.silences.clone() {
            let i = self.idx(id);
            let silenced = now >= from && until.is_none_or(|u| now < u);
            match (self.reps[i].life, silenced) {
                (Life::Running, true) => self.reps[i].life = Life::Silenced,
                (Life::Silenced, false) => self.reps[i].life = Life::Running,
                _ => {}
            }
        }
        let due: Vec<(ReplicaId, u32)> = self
            .notices
            .iter()
            .filter(|(t, _, _)| *t <= now)
            .map(|(_, id, inc)| (*id, *inc))
            .collect();
        self.notices.retain(|(t, _, _)| *t > now);
        for (dead, inc) in due {
            let d = self.idx(dead);
            // The death of an incarnation already replaced is old news.
            if inc < self.reps[d].inc || self.reps[d].announced {
                continue;
            }
            self.reps[d].announced = true;
            self.trace(|| format!("launcher: {dead} incarnation {inc} is dead"));
            for i in 0..self.reps.len() {
                if self.runnable(i) {
                    self.reps[i].engine.handle_peer_down(now, dead, true);
                    self.collect(i);
                }
            }
        }
        self.apply_regenerations();
    }

    pub fn deliver_due(&mut self) {
        while let Some(&Reverse((at, id))) = self.net.peek() {
            if at > self.now {
                return;
            }
            self.net.pop();
            let Some((from, from_inc, to, to_inc, frame)) = self.frames.remove(&id) else {
                continue;
            };
            let i = self.idx(to);
            if from_inc != self.reps[self.idx(from)].inc || to_inc != self.reps[i].inc {
                self.tally.stale_frames += 1;
                continue;
            }
            match self.reps[i].life {
                Life::Running => {
                    if let Frame::Data { key, .. } = &frame {
                        self.servers.insert((i, *key), (from, from_inc));
                    }
                    self.reps[i].engine.speculate_pending(self.now);
                    self.reps[i].engine.handle_frame(self.now, from, frame);
                    self.collect(i);
                    self.check_completions(i);
                }
                // A stopped process keeps its socket: the frame waits for it.
                Life::Silenced => {
                    let later = self.now + Duration::from_millis(1);
                    self.frames.insert(id, (from, from_inc, to, to_inc, frame));
                    self.net.push(Reverse((later, id)));
                    return;
                }
                Life::Killed | Life::Retired => {}
            }
        }
    }
}

impl Sim {
    /// What the network sees leave replica `i` for `to`: nobody pulls a message it already
    /// received (DESIGN.md "Pull protocol": data already received is never asked again;
    /// "Regeneration": a new incarnation's re-sends are never pulled again), and nobody
    /// asks a new incarnation for messages before it caught up (it sends no DATA then).
    fn check_outgoing(&mut self, i: usize, to: ReplicaId, frame: &Frame) {
        let from = self.reps[i].engine.me();
        match frame {
            Frame::Pull { want, .. } => {
                let key = match *want {
                    Want::Key(k) => Some(k),
                    Want::Order {
                        comm,
                        src,
                        dst,
                        order,
                    } if comm == super::COMM => self.by_order.get(&(src, dst, order)).copied(),
                    Want::Order { .. } => None,
                };
                if let Some(k) = key {
                    if self.reps[i].completed.contains(&k) {
                        self.fail(format!(
                            "{from} (incarnation {}) pulls {k} from {to}, which it already received",
                            self.reps[i].inc
                        ));
                    }
                }
            }
            Frame::Data { key, order, .. } if key.comm == super::COMM => {
                if self.by_order.get(&(key.src, key.dst, *order)) != Some(key) {
                    self.fail(format!("{from} sends {key} as order {order}"));
                }
                if to != from && self.reps[i].catch_up.is_some() {
                    self.fail(format!(
                        "{from} (incarnation {}, catching up) was asked for {key} by {to}",
                        self.reps[i].inc
                    ));
                }
                let j = self.idx(to);
                if self.reps[i].inc > 0 && self.reps[j].completed.contains(key) {
                    self.tally.data_already_received += 1;
                }
            }
            _ => {}
        }
    }
}
