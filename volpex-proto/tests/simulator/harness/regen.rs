//! Regeneration in the fault menu: a stand-in launcher that kills a replica, announces
//! its death, and starts a new incarnation in the same slot (DESIGN.md "Regeneration",
//! issue 17).
//!
//! A new incarnation of replica k of rank x gets 1 + the highest incarnation used in rank
//! x. It is a fresh `Engine::joining` given every replica's incarnation, marked as
//! catching up, told which replicas are known dead and which are joining themselves, and
//! runs its rank's program from the start (it replays it: the senders' logs hold what it
//! pulls again). Every other live engine gets the JOINING notice at once. The newcomer is
//! caught up when its `stats().receives` reaches the highest `receives` of its caught-up
//! live siblings at its start (the production rule); then every engine, itself included,
//! gets ALIVE after a random launcher delay.
//!
//! `Faults::regenerations` lists the steps; the steps of one slot run in list order, each
//! armed by the previous one of its slot (`When`).

use std::time::Duration;

use rand::Rng;
use volpex_proto::message::ReplicaId;
use volpex_proto::pull::Engine;

use super::{Life, Replica, Sim};

/// When a regeneration step kills the slot's current incarnation.
#[derive(Debug, Clone, Copy)]
pub enum When {
    /// At this time (but not before the slot's previous step started its incarnation).
    At(Duration),
    /// This long after the slot's previous new incarnation started (to kill it during its
    /// catch-up); from time zero for a slot's first step.
    AfterStart(Duration),
    /// This long after the slot's previous new incarnation caught up (skipped if it never
    /// does); from time zero for a slot's first step.
    AfterCaughtUp(Duration),
    /// This long after the new incarnation of the step just before this one in the list
    /// (whatever its slot) caught up: kills of siblings in turn.
    AfterPreviousCaughtUp(Duration),
    /// This long after the new incarnation of the step just before this one reached its
    /// target, before the launcher's ALIVE notices (up to 2 ms later) reach everyone: the
    /// kill races the end of the catch-up.
    AfterPreviousReached(Duration),
}

/// Kill the incarnation of `slot` alive at `kill`, announce its death `notice` later, and
/// start a new incarnation `restart` after the notice.
#[derive(Debug, Clone)]
pub struct Regeneration {
    pub slot: ReplicaId,
    pub kill: When,
    pub notice: Duration,
    pub restart: Duration,
}

/// Where the launcher is in one step.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// When it killed the old incarnation, and whether that one was still catching up.
    pub killed: Option<(Duration, bool)>,
    /// When it started the new incarnation, and which.
    pub started: Option<(Duration, u32)>,
    /// When the new incarnation reached its target (it stops catching up).
    pub reached: Option<Duration>,
    /// When the launcher announced it caught up (ALIVE reached every engine).
    pub caught_up: Option<Duration>,
    /// Never armed: the previous step's incarnation never caught up.
    pub skipped: bool,
}

/// What happened to regenerations in one run.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// New incarnations started.
    pub started: usize,
    /// New incarnations that caught up.
    pub caught_up: usize,
    /// Kills that hit an incarnation still catching up.
    pub killed_catching_up: usize,
    /// Kills that hit a replica before its whole rank finished (a kill after the end
    /// tests little).
    pub killed_mid_run: usize,
    /// Retirements: (replica, incarnation, reason).
    pub retired: Vec<(ReplicaId, u32, String)>,
    /// Frames dropped in flight because an end was replaced.
    pub stale_frames: u64,
    /// Sends a new incarnation made again of messages a replica of the destination had
    /// already received (each must never be delivered to it again).
    pub resent_received: u64,
    /// DATA frames from a regenerated incarnation for a message the receiving replica
    /// already had (hedges racing; the receiver drops them).
    pub data_already_received: u64,
}

impl Sim {
    fn previous_step(&self, n: usize) -> Option<usize> {
        let slot = self.faults.regenerations[n].slot;
        (0..n)
            .rev()
            .find(|&p| self.faults.regenerations[p].slot == slot)
    }

    /// Every step either started its incarnation or was skipped.
    pub fn regen_settled(&self) -> bool {
        self.regen.iter().all(|p| p.skipped || p.started.is_some())
    }

    /// Whether replica `i` may retire with `reason`: a new incarnation still catching up,
    /// "rank N cannot be regenerated", when the scenario allows it.
    pub fn regeneration_may_fail_here(&self, i: usize, reason: &str) -> bool {
        let rank = i / self.r as usize;
        let me = self.reps[i].engine.me();
        // Its receive count may reach the target while an older message is still missing
        // (pulled ahead, arrived out of order): it finds it evicted after it caught up.
        let after = reason.starts_with(&format!("replica {me} fell too far behind: message"));
        self.faults.regeneration_may_fail
            && self.reps[i].inc > 0
            && (after
                || (self.reps[i].catch_up.is_some()
                    && reason.starts_with(&format!("rank {rank} cannot be regenerated"))))
    }

    /// The launcher's part: kills, starts of new incarnations, ALIVE notices.
    pub fn apply_regenerations(&mut self) {
        let now = self.now;
        for n in 0..self.regen.len() {
            let step = self.faults.regenerations[n].clone();
            let p = self.regen[n].clone();
            if p.skipped || p.started.is_some() {
                continue;
            }
            if let Some((killed, _)) = p.killed {
                if now >= killed + step.notice + step.restart {
                    self.start_incarnation(n);
                }
                continue;
            }
            let prev = self.previous_step(n).map(|q| self.regen[q].clone());
            let due = match (step.kill, &prev) {
                (_, Some(q)) if q.skipped => {
                    self.regen[n].skipped = true;
                    continue;
                }
                (_, Some(q)) if q.started.is_none() => continue,
                (When::At(t), _) => Some(t),
                (When::AfterStart(d), None) | (When::AfterCaughtUp(d), None) => Some(d),
                (When::AfterStart(d), Some(q)) => q.started.map(|(t, _)| t + d),
                (When::AfterCaughtUp(d), Some(_)) => {
                    self.caught_up_after(n, self.previous_step(n), d, false)
                }
                (When::AfterPreviousCaughtUp(d), _) => {
                    self.caught_up_after(n, n.checked_sub(1), d, false)
                }
                (When::AfterPreviousReached(d), _) => {
                    self.caught_up_after(n, n.checked_sub(1), d, true)
                }
            };
            if self.regen[n].skipped {
                continue;
            }
            if due.is_some_and(|t| now >= t) {
                self.kill_for_regeneration(n);
            }
        }
        let due: Vec<(ReplicaId, u32)> = self
            .alive
            .iter()
            .filter(|(t, _, _)| *t <= now)
            .map(|(_, id, inc)| (*id, *inc))
            .collect();
        self.alive.retain(|(t, _, _)| *t > now);
        for (id, inc) in due {
            if self.reps[self.idx(id)].inc != inc {
                continue;
            }
            if let Some(n) = self.step_of(id, inc) {
                self.regen[n].caught_up = Some(now);
            }
            self.trace(|| format!("launcher: ALIVE {id} incarnation {inc}"));
            for j in 0..self.reps.len() {
                if self.runnable(j) {
                    self.reps[j].engine.handle_peer_alive(now, id);
                    self.collect(j);
                }
            }
        }
    }

    /// `d` after step `q`'s incarnation caught up; marks step `n` skipped if that
    /// incarnation is gone without catching up (or never started).
    /// (`reached`: after it reached its target, not after ALIVE.)
    fn caught_up_after(
        &mut self,
        n: usize,
        q: Option<usize>,
        d: Duration,
        reached: bool,
    ) -> Option<Duration> {
        let Some(q) = q else {
            return Some(d);
        };
        let p = &self.regen[q];
        if let Some(t) = if reached { p.reached } else { p.caught_up } {
            return Some(t + d);
        }
        match p.started {
            Some((_, inc)) => {
                let i = self.idx(self.faults.regenerations[q].slot);
                if self.reps[i].inc != inc || !self.runnable(i) {
                    self.regen[n].skipped = true;
                }
            }
            None => self.regen[n].skipped |= p.skipped,
        }
        None
    }

    fn kill_for_regeneration(&mut self, n: usize) {
        let step = self.faults.regenerations[n].clone();
        let i = self.idx(step.slot);
        let catching_up = self.reps[i].catch_up.is_some();
        let rank = step.slot.rank as usize;
        let r = self.r as usize;
        if (0..r).any(|k| !self.done(rank * r + k)) {
            self.tally.killed_mid_run += 1;
        }
        if matches!(self.reps[i].life, Life::Running | Life::Silenced) {
            self.reps[i].life = Life::Killed;
            if catching_up {
                self.tally.killed_catching_up += 1;
            }
        }
        // Its death is announced unless it already was (fenced or retired before).
        if !self.reps[i].announced {
            self.notices
                .push((self.now + step.notice, step.slot, self.reps[i].inc));
        }
        self.regen[n].killed = Some((self.now, catching_up));
        self.trace(|| {
            format!(
                "launcher: kill {} incarnation {} (catching up: {catching_up})",
                step.slot, self.reps[i].inc
            )
        });
    }

    /// Starts the new incarnation of step `n`'s slot and announces it.
    fn start_incarnation(&mut self, n: usize) {
        let now = self.now;
        let slot = self.faults.regenerations[n].slot;
        let i = self.idx(slot);
        let r = self.r as usize;
        let rank = slot.rank as usize;
        let ranks = self.progs.len();
        let inc = 1
            + (0..r)
                .map(|k| self.reps[rank * r + k].inc)
                .max()
                .unwrap_or(0);
        // Catching-up replicas appear in an older incarnation, then join: the newcomer
        // answers them but does not ask them (what the launcher's JOINING notices do).
        let joining: Vec<usize> = (0..self.reps.len())
            .filter(|&j| j != i && self.runnable(j) && self.reps[j].catch_up.is_some())
            .collect();
        let mut table: Vec<Vec<u32>> = (0..ranks)
            .map(|x| (0..r).map(|k| self.reps[x * r + k].inc).collect())
            .collect();
        for &j in &joining {
            table[j / r][j % r] -= 1;
        }
        table[rank][slot.replica as usize] = inc;
        let target = (0..r)
            .map(|k| rank * r + k)
            .filter(|&j| j != i && self.runnable(j) && self.reps[j].catch_up.is_none())
            .map(|j| self.reps[j].engine.stats().receives)
            .max()
            .unwrap_or(0);
        let mut engine = Engine::joining(slot, ranks as u32, self.r, self.cfg.clone(), &table);
        engine.set_catching_up(true);
        for j in 0..self.reps.len() {
            let id = ReplicaId::new((j / r) as u32, (j % r) as u32);
            if j == i {
                continue;
            }
            if !self.runnable(j) && self.reps[j].announced {
                engine.handle_peer_down(now, id, true);
            } else if joining.contains(&j) {
                engine.handle_peer_joining(now, id, self.reps[j].inc, false);
            }
        }
        engine.start(now);
        let slowness = self.rng.random_range(1..=4);
        self.reps[i] = Replica::new(engine, inc, slowness);
        self.reps[i].catch_up = Some(target);
        self.regen[n].started = Some((now, inc));
        self.trace(|| format!("launcher: start {slot} incarnation {inc}, target {target}"));
        self.tally.started += 1;
        for j in 0..self.reps.len() {
            if j != i && self.runnable(j) {
                self.reps[j]
                    .engine
                    .handle_peer_joining(now, slot, inc, false);
                self.collect(j);
            }
        }
        self.collect(i);
    }

    /// A new incarnation sent message `g` again: count it if a replica of its destination
    /// already received it (the checks make sure it never gets it twice).
    pub fn count_resend(&mut self, g: usize) {
        let key = self.keys[g];
        let r = self.r as usize;
        let dst = key.dst as usize;
        if (0..r).any(|k| self.reps[dst * r + k].completed.contains(&key)) {
            self.tally.resent_received += 1;
        }
    }

    /// New incarnations that reached their target: they stop catching up at once, and the
    /// launcher tells everyone (ALIVE) a little later.
    pub fn check_catch_up(&mut self) {
        for i in 0..self.reps.len() {
            let Some(target) = self.reps[i].catch_up else {
                continue;
            };
            if !self.runnable(i)
                || self.reps[i].engine.stats().receives < target
                || !self.reps[i].engine.holds_all_choices()
            {
                continue;
            }
            self.reps[i].engine.set_catching_up(false);
            self.reps[i].catch_up = None;
            self.tally.caught_up += 1;
            let id = self.reps[i].engine.me();
            let inc = self.reps[i].inc;
            let delay = Duration::from_micros(self.rng.random_range(0..2_000));
            self.alive.push((self.now + delay, id, inc));
            if let Some(n) = self.step_of(id, inc) {
                self.regen[n].reached = Some(self.now);
            }
            self.trace(|| format!("{id} incarnation {inc} reached {target}"));
        }
    }

    /// The step that started incarnation `inc` of `id`.
    fn step_of(&self, id: ReplicaId, inc: u32) -> Option<usize> {
        (0..self.regen.len()).find(|&n| {
            self.faults.regenerations[n].slot == id
                && self.regen[n].started.is_some_and(|(_, x)| x == inc)
        })
    }
}
