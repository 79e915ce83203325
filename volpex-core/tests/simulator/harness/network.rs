//! The simulated network and the world around the engines: frames travel with random
//! delays (FIFO per link, like TCP, unless `Faults::reorder`), cut links drop them, a
//! silenced replica's frames wait in its socket, a killed one's are lost; a stand-in
//! launcher fences the replicas engines ask it to and announces every death and
//! retirement (DESIGN.md "Failure detection").

use std::cmp::Reverse;
use std::time::Duration;

use rand::Rng;
use volpex::message::ReplicaId;
use volpex::pull::EngineEvent;
use volpex::wire::Frame;

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
        for (to, frame) in out {
            if self.cut(from, to) {
                continue;
            }
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
            self.frames.insert(id, (from, to, frame));
            self.net.push(Reverse((at, id)));
        }
        while let Some(ev) = self.reps[i].engine.poll_event() {
            match ev {
                EngineEvent::Retire { reason } => {
                    if !self.faults.may_retire {
                        self.fail(format!("unexpected retirement: {reason}"));
                    }
                    self.reps[i].life = Life::Retired;
                    // The launcher tells everyone, as for any replica that is gone.
                    self.notices.push((self.now, from));
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
                    self.notices.push((self.now, peer));
                }
            }
        }
    }

    pub fn apply_faults(&mut self) {
        let now = self.now;
        for (id, at, notice) in self.faults.kills.clone() {
            let i = self.idx(id);
            if now >= at && self.reps[i].life == Life::Running {
                self.reps[i].life = Life::Killed;
                if let Some(d) = notice {
                    self.notices.push((now + d, id));
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
        let due: Vec<ReplicaId> = self
            .notices
            .iter()
            .filter(|(t, _)| *t <= now)
            .map(|(_, id)| *id)
            .collect();
        self.notices.retain(|(t, _)| *t > now);
        for dead in due {
            for i in 0..self.reps.len() {
                if self.runnable(i) {
                    self.reps[i].engine.handle_peer_down(now, dead, true);
                    self.collect(i);
                }
            }
        }
    }

    pub fn deliver_due(&mut self) {
        while let Some(&Reverse((at, id))) = self.net.peek() {
            if at > self.now {
                return;
            }
            self.net.pop();
            let Some((from, to, frame)) = self.frames.remove(&id) else {
                continue;
            };
            let i = self.idx(to);
            match self.reps[i].life {
                Life::Running => {
                    self.reps[i].engine.handle_frame(self.now, from, frame);
                    self.collect(i);
                    self.check_completions(i);
                }
                // A stopped process keeps its socket: the frame waits for it.
                Life::Silenced => {
                    let later = self.now + Duration::from_millis(1);
                    self.frames.insert(id, (from, to, frame));
                    self.net.push(Reverse((later, id)));
                    return;
                }
                Life::Killed | Life::Retired => {}
            }
        }
    }
}
