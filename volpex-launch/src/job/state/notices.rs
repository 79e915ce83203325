//! Preemption notices in the job's state machine (`--preemption-notice`): a host's
//! notice makes every replica living there a preempted one, as `--fault R.K:term@T` does
//! (SIGTERM: it drains and hands over to a new incarnation, see `regen`), one replica of
//! a rank at a time: the next gets its SIGTERM once the replacement of the one before
//! caught up, so the rank always keeps a caught-up replica that is not handing over
//! (siblings handing over at once can leave a newcomer without the rank's choices: it
//! retires, or the job stalls). The notice's deadline bounds the drain: a noticed process still there at the deadline is
//! ended, and, if it was not replaced yet, regenerated from a sibling like any lost
//! replica. Keeps each notice with when every handover finished (its replica's next
//! incarnation caught up), for the live line and the report.
//!
//! Must never do I/O or read a clock: the driver turns the notice's deadline into a time
//! since the job started.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;

use super::super::replica::ReplicaState;
use super::super::step::Action;
use super::JobState;

/// A preemption notice for a host and what became of its replicas.
#[derive(Debug, Clone, PartialEq)]
pub struct HostNotice {
    /// Index of the host.
    pub host: usize,
    /// Which notice, in the watcher's words (cloud, what, the server's deadline).
    pub said: String,
    /// When it came, since the job started.
    pub at: Duration,
    /// When the host goes, since the job started.
    pub deadline: Duration,
    /// The incarnations living on the host when it was acted on.
    pub noticed: Vec<(ReplicaId, u32)>,
    /// Which of `noticed` got their SIGTERM.
    signalled: Vec<bool>,
    /// Acted on (the job's replicas know each other's addresses by then).
    applied: bool,
    /// Every handover finished, and it was said.
    done: bool,
    /// The deadline passed.
    expired: bool,
}

impl JobState {
    /// Every preemption notice, in the order they came.
    pub fn notices(&self) -> &[HostNotice] {
        &self.notices
    }

    /// When the replacement of noticed incarnation `inc` of `id` caught up: its
    /// handover finished.
    pub fn handed_over_at(&self, id: ReplicaId, inc: u32) -> Option<Duration> {
        self.procs
            .iter()
            .filter(|p| p.id == id && p.incarnation > inc)
            .filter_map(|p| p.caught_up_at)
            .min()
    }

    /// A preemption notice (`said`) for `host`, whose machine goes at `deadline`.
    pub(super) fn notice(&mut self, host: usize, said: String, deadline: Duration) {
        let now = self.now;
        let name = self.hosts[host].name.clone();
        self.out.push(Action::Live(format!(
            "preemption notice {said} for {name} at {:.1} s: it goes at {:.1} s (in {:.1} s)",
            now.as_secs_f64(),
            deadline.as_secs_f64(),
            deadline.saturating_sub(now).as_secs_f64()
        )));
        self.notices.push(HostNotice {
            host,
            said,
            at: now,
            deadline,
            noticed: Vec::new(),
            signalled: Vec::new(),
            applied: false,
            done: false,
            expired: false,
        });
        self.apply_notices();
    }

    /// Acts on the notices not acted on yet, once the address table went out (before,
    /// a new incarnation could not be placed): every replica living on the host is to
    /// hand over (`signal_noticed` sends the SIGTERMs).
    fn apply_notices(&mut self) {
        if self.rendezvous.waiting() || !self.running() {
            return;
        }
        for n in 0..self.notices.len() {
            if self.notices[n].applied {
                continue;
            }
            self.notices[n].applied = true;
            let host = self.notices[n].host;
            if !self.regen.on() {
                self.out.push(Action::Print(format!(
                    "regeneration is off (--regenerate never): the replicas on {} are not handed over",
                    self.hosts[host].name
                )));
                continue;
            }
            let living: Vec<usize> = self
                .slots
                .iter()
                .copied()
                .filter(|&i| {
                    let p = &self.procs[i];
                    p.host == host && p.state.computing() && !p.exited && !p.draining
                })
                .collect();
            let mut names = Vec::new();
            for i in living {
                let p = &self.procs[i];
                names.push(p.id.to_string());
                self.notices[n].noticed.push((p.id, p.incarnation));
                self.notices[n].signalled.push(false);
            }
            self.out.push(Action::Live(format!(
                "replicas on {} hand over before the deadline, one of a rank at a time: {}",
                self.hosts[host].name,
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
    }

    /// Whether the handover of noticed incarnation `inc` of `id` (once signalled) is
    /// still under way: it lives, or a newer incarnation does, and none caught up yet.
    fn handing_over(&self, id: ReplicaId, inc: u32) -> bool {
        self.handed_over_at(id, inc).is_none()
            && self
                .procs
                .iter()
                .any(|p| p.id == id && p.incarnation >= inc && p.state.alive())
    }

    /// SIGTERM to every noticed replica whose rank has no other replica handing over.
    fn signal_noticed(&mut self) {
        for n in 0..self.notices.len() {
            if self.notices[n].expired {
                continue;
            }
            for j in 0..self.notices[n].noticed.len() {
                if self.notices[n].signalled[j] {
                    continue;
                }
                let (id, inc) = self.notices[n].noticed[j];
                let busy = self.notices.iter().any(|m| {
                    m.noticed.iter().zip(&m.signalled).any(|(&(o, oi), &sig)| {
                        sig && o.rank == id.rank && self.handing_over(o, oi)
                    })
                });
                if busy {
                    continue;
                }
                self.notices[n].signalled[j] = true;
                let Some(i) = self.find(id, inc) else {
                    continue;
                };
                if !self.procs[i].state.computing() || self.procs[i].exited {
                    continue;
                }
                log::info!("preemption notice: SIGTERM to replica {id} (incarnation {inc})");
                self.signal(i, Signal::SIGTERM);
            }
        }
    }

    /// The notices' progress at `now`: the next replicas to hand over, every handover
    /// finished (said once), or the deadline passed (the noticed processes still there
    /// are ended).
    pub(super) fn check_notices(&mut self, now: Duration) {
        self.apply_notices();
        if self.running() {
            self.signal_noticed();
        }
        for n in 0..self.notices.len() {
            let notice = &self.notices[n];
            if !notice.applied || notice.noticed.is_empty() {
                continue;
            }
            if !notice.done && self.running() {
                let times: Option<Vec<(ReplicaId, Duration)>> = notice
                    .noticed
                    .iter()
                    .map(|&(id, inc)| self.handed_over_at(id, inc).map(|t| (id, t)))
                    .collect();
                if let Some(times) = times {
                    let last = times.iter().map(|(_, t)| *t).max().unwrap_or(now);
                    let each: Vec<String> = times
                        .iter()
                        .map(|(id, t)| format!("{id} at {:.1} s", t.as_secs_f64()))
                        .collect();
                    let line = format!(
                        "preemption notice {} for {}: every replica handed over ({}), {:.1} s after the notice, {:.1} s before the deadline",
                        notice.said,
                        self.hosts[notice.host].name,
                        each.join(", "),
                        last.saturating_sub(notice.at).as_secs_f64(),
                        notice.deadline.saturating_sub(last).as_secs_f64()
                    );
                    self.notices[n].done = true;
                    self.out.push(Action::Live(line));
                }
            }
            let notice = &self.notices[n];
            if !notice.expired && now >= notice.deadline {
                self.notices[n].expired = true;
                self.deadline_passed(n);
            }
        }
    }

    /// The deadline of notice `n` passed: its host is gone. Noticed processes still
    /// there are ended; one not replaced yet is lost and regenerated from a sibling.
    fn deadline_passed(&mut self, n: usize) {
        let mut ended = Vec::new();
        for (id, inc) in self.notices[n].noticed.clone() {
            let Some(i) = self.find(id, inc) else {
                continue;
            };
            if self.procs[i].exited {
                continue;
            }
            self.signal(i, Signal::SIGKILL);
            if self.procs[i].state.alive() && self.idx(id) == i {
                ended.push(id.to_string());
                self.lose(
                    i,
                    ReplicaState::Failed(
                        "its host's preemption deadline passed before it handed over".into(),
                    ),
                );
            }
        }
        if !ended.is_empty() && self.running() {
            self.out.push(Action::Print(format!(
                "the deadline of preemption notice {} passed: replicas not handed over were ended: {}",
                self.notices[n].said,
                ended.join(", ")
            )));
        }
    }

    /// The earliest deadline of a notice still to pass.
    pub(super) fn next_notice_deadline(&self) -> Option<Duration> {
        self.notices
            .iter()
            .filter(|n| n.applied && !n.expired && !n.noticed.is_empty())
            .map(|n| n.deadline)
            .min()
    }
}
