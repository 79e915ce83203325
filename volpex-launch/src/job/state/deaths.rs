//! How replicas die, in the job's state machine: silent heartbeats, fencing on a
//! sibling's request, and the death notices every living replica gets (process exits
//! are judged in `exits`).
//! Events name an incarnation: one about an incarnation that is not the current one of
//! its replica changes that incarnation's record only.
//!
//! Must never do I/O; an ended process is an `Action::Signal`, a notice an `Action::Send`.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::ToProcess;

use super::super::replica::{Origin, Replica, ReplicaState};
use super::super::step::Action;
use super::JobState;

/// How long the fence of a replica on this machine waits for its exit. A sibling asks
/// for a fence when the replica's connections close, and a process that exited by itself
/// closes them a moment before volpexrun sees its exit: that exit, not a fence (and a
/// needless new incarnation), tells what happened.
const FENCE_HOLD: Duration = Duration::from_millis(200);

/// A fence asked for, carried out at `due` unless the replica's exit came first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct HeldFence {
    pub(super) due: Duration,
    by: ReplicaId,
    target: ReplicaId,
    incarnation: u32,
}

impl JobState {
    /// Moves a replica lost to a cause that is not its program's (a signal, silence, a
    /// fence, its host, retirement) to a dead state, and starts a new incarnation of it
    /// if it was computing (see `regen`).
    pub(super) fn lose(&mut self, i: usize, state: ReplicaState) {
        let computing = self.procs[i].state.computing();
        self.mark_dead(i, state);
        if computing {
            self.regenerate(i);
        }
    }

    /// Whether a death now asks to bind the survivors of its host again: the teams were
    /// bound at start and the job is neither failed nor shutting down.
    pub(super) fn rebinds(&self) -> bool {
        self.rebind && self.failure.is_none() && self.shutdown_at.is_none()
    }

    /// After a death or a new incarnation: if the team the others follow changed, every
    /// host with a live replica binds its processes again (`Action::Rebind`), so that
    /// the lead team gets CPUs of its own where it shares a crowded host.
    pub(super) fn follow_lead(&mut self) {
        let living: Vec<&Replica> = self
            .slots
            .iter()
            .map(|&i| &self.procs[i])
            .filter(|p| p.state.alive())
            .collect();
        let teams: Vec<(u32, u32)> = living.iter().map(|p| (p.id.rank, p.id.replica)).collect();
        let lead = crate::binding::lead_team(&teams, self.ranks, self.replicas);
        if lead == self.lead {
            return;
        }
        let mut hosts: Vec<usize> = living.iter().map(|p| p.host).collect();
        self.lead = lead;
        hosts.sort_unstable();
        hosts.dedup();
        for host in hosts {
            let rebind = Action::Rebind { host };
            if !self.out.contains(&rebind) {
                self.out.push(rebind);
            }
        }
    }

    /// Moves a replica to a dead state and tells every other replica.
    pub(super) fn mark_dead(&mut self, i: usize, state: ReplicaState) {
        let was_alive = self.procs[i].state.alive();
        let id = self.procs[i].id;
        let inc = self.procs[i].incarnation;
        if was_alive || matches!(self.procs[i].state, ReplicaState::Finished) {
            self.procs[i].state = state;
        }
        if !was_alive {
            return;
        }
        self.files_membership(id.rank);
        // A new incarnation's life failed if it ended before catching up (one started
        // again before the rendezvous: before it took part in it) or gave up (retired)
        // even after: a systemic cause the next one would meet too.
        let retired = matches!(self.procs[i].state, ReplicaState::Retired(_));
        match self.procs[i].origin {
            Origin::Start => {}
            Origin::Restart => {
                let failed = retired || self.procs[i].addr.is_none() || self.rendezvous.waiting();
                self.regen.ended(id.rank, failed);
            }
            Origin::Replay | Origin::Snapshot(_) => {
                let failed = retired || !self.procs[i].caught_up();
                self.regen.ended(id.rank, failed);
            }
        }
        if self.rebinds() {
            self.out.push(Action::Rebind {
                host: self.procs[i].host,
            });
            self.follow_lead();
        }
        let notice = ToProcess::Death {
            rank: id.rank,
            replica: id.replica,
            incarnation: inc,
        };
        for (j, p) in self.procs.iter().enumerate() {
            if j != i && p.state.alive() {
                self.out.push(Action::Send {
                    to: p.id,
                    msg: notice.clone(),
                });
            }
        }
        if self.procs[i].caught_up() {
            self.orphan_newcomers(id.rank);
        }
    }

    pub(super) fn silent(&mut self, id: ReplicaId, inc: u32, silent_for: Duration) {
        let Some(i) = self.find(id, inc) else {
            return;
        };
        if !self.procs[i].state.alive() {
            return;
        }
        let h = self.procs[i].host;
        let why = format!(
            "silent on host {}: no heartbeat for {:.1} s (--heartbeat-timeout {:.1} s), declared dead",
            self.hosts[h].name,
            silent_for.as_secs_f64(),
            self.heartbeat_timeout.as_secs_f64()
        );
        // Said once, by the line of its loss (and the summary).
        log::info!("replica {id} {why}");
        self.regen.suspect(h);
        self.lose(i, ReplicaState::Failed(why));
        self.signal(i, Signal::SIGKILL);
        if self.hosts[h].agent {
            // A host cut off never reports the exit: stop waiting for it.
            self.procs[i].exited = true;
            self.out.push(Action::CloseControl(id, inc));
            // Its process ends itself a heartbeat timeout after it last heard volpexrun.
            let wait = self.heartbeat_timeout * 2;
            self.files_ended_later(i, wait);
        }
    }

    /// Replica `by` found replica `rank.replica` unreachable or silent while it needed it
    /// for choices (its rank's silent leader, a sibling that does not take its choices, or
    /// any replica that does not answer its takeover, see `volpex_proto::pull::foreign`): end it
    /// and announce its death, so that only one replica of a rank ever makes choices and
    /// no takeover waits forever. A replica that already finished is left alone.
    pub(super) fn fence(&mut self, by: ReplicaId, rank: u32, replica: u32, incarnation: u32) {
        self.fence_when(by, rank, replica, incarnation, false)
    }

    /// The held fences that came due (from `tick`): each is checked again.
    pub(super) fn fences_due(&mut self, now: Duration) {
        let (due, later) = std::mem::take(&mut self.fences)
            .into_iter()
            .partition::<Vec<_>, _>(|f| f.due <= now);
        self.fences = later;
        for f in due {
            let t = f.target;
            self.fence_when(f.by, t.rank, t.replica, f.incarnation, true);
        }
    }

    /// `fence`; `waited`: the hold for a replica on this machine is over.
    fn fence_when(
        &mut self,
        by: ReplicaId,
        rank: u32,
        replica: u32,
        incarnation: u32,
        waited: bool,
    ) {
        if rank >= self.ranks || replica >= self.replicas || ReplicaId::new(rank, replica) == by {
            log::warn!("replica {by} asked to fence {rank}.{replica}; refused");
            return;
        }
        let target = ReplicaId::new(rank, replica);
        if !self.procs[self.idx(by)].state.alive() {
            // Declared dead itself (silent, cut off): what it found unreachable says
            // more about it than about the others.
            log::info!("replica {by}, declared dead, asked to fence {target}; ignored");
            return;
        }
        if self.procs[self.idx(by)].last_words.panicked() {
            // Its program panicked: its connections are closing under it, so its sibling
            // looks unresponsive to it, and that sibling may be dying of the same panic
            // (which its own exit will tell better than a fence).
            log::info!("replica {by}, whose program panicked, asked to fence {target}; ignored");
            return;
        }
        let i = self.idx(target);
        if self.procs[i].exited {
            // Its process is gone (its exit waits for its last words): the exit decides.
            log::info!("replica {by} asked to fence {target}, which exited; its exit decides");
            return;
        }
        if incarnation != self.procs[i].incarnation {
            log::info!(
                "replica {by} asked to fence incarnation {incarnation} of {target}, now {}; ignored",
                self.procs[i].incarnation
            );
            return;
        }
        let siblings_alive = (0..self.replicas)
            .filter(|&k| k != replica)
            .any(|k| self.procs[self.idx(ReplicaId::new(rank, k))].state.alive());
        if !siblings_alive {
            // Ending it would lose its rank, and the job, for sure. Fencing keeps two
            // replicas from choosing at once and a takeover from waiting forever: the
            // last replica of a rank never chooses alongside a sibling, and one that is
            // really gone is declared dead by its heartbeat; one that is only slow
            // answers in the end.
            log::info!("replica {by} asked to fence {target}, the last of its rank; refused");
            return;
        }
        if !self.procs[i].caught_up() {
            // A new incarnation still catching up is neither asked for messages nor
            // leads: the request (which names no incarnation) was about the one it
            // replaced.
            log::info!(
                "replica {by} asked to fence {target}, whose incarnation {} is catching up; ignored",
                self.procs[i].incarnation
            );
            return;
        }
        if !waited && !self.hosts[self.procs[i].host].agent && self.procs[i].state.alive() {
            // Here its exit, if it exited, is a moment away.
            let f = HeldFence {
                due: self.now + FENCE_HOLD,
                by,
                target,
                incarnation,
            };
            if !self.fences.iter().any(|h| h.target == target) {
                self.fences.push(f);
            }
            return;
        }
        match self.procs[i].state {
            ReplicaState::Starting | ReplicaState::Running => {
                self.out.push(Action::Live(format!(
                    "replica {target} is unresponsive to {by}; ending it"
                )));
                self.signal(i, Signal::SIGKILL);
                self.procs[i].fenced = true;
                // Unreachable to a sibling: its host may be cut off or gone.
                self.regen.suspect(self.procs[i].host);
                self.lose(
                    i,
                    ReplicaState::Failed(format!("fenced: unresponsive to replica {by}")),
                );
            }
            ReplicaState::Finalized
            | ReplicaState::Finished
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended
            | ReplicaState::Drained => {}
        }
    }
}
