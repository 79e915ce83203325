//! What replicas say, in the job's state machine: their registration and the messages on
//! their control connection (finalized, retired, fence requests, counters, a new
//! incarnation's catch-up). Only the current incarnation of a replica is heard; an older
//! one's counters are kept as its own, nothing else it says counts.
//!
//! Must never do I/O; an answer is an `Action::Send`.

use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{ToLauncher, ToProcess};

use super::super::replica::{Replica, ReplicaState};
use super::super::step::Action;
use super::JobState;

impl JobState {
    pub(super) fn registered(&mut self, id: ReplicaId, inc: u32, addr: String) {
        let Some(i) = self.find(id, inc) else {
            log::debug!("replica {id} registered as unknown incarnation {inc}; ignored");
            return;
        };
        if i != self.idx(id) {
            log::debug!("replica {id} registered as stale incarnation {inc}; ignored");
            return;
        }
        if self.procs[i].addr.is_some() {
            log::warn!("replica {id} registered twice; ignored");
            return;
        }
        if self.procs[i].state != ReplicaState::Starting {
            // Killed (a fault at time 0, a timeout) or lost while its registration was on
            // its way: nothing to do, and nothing wrong with it.
            log::debug!("replica {id} registered after it was declared dead; ignored");
            return;
        }
        self.procs[i].state = ReplicaState::Running;
        self.procs[i].addr = Some(addr);
        self.procs[i].control_open = true;
        self.out.push(Action::KeepControl(id, inc));
        let host = self.procs[i].host;
        let died_there =
            |p: &Replica| p.host == host && !p.state.alive() && p.state != ReplicaState::Finished;
        if self.rebinds() && self.procs.iter().any(died_there) {
            // It bound itself to its start's CPUs (`VOLPEX_CPUS`) on joining, maybe after
            // a death had its host's survivors bound again: bind them (it among them)
            // once more, so the survivors' binding wins.
            self.out.push(Action::Rebind { host });
        }
        if self.rebinds() {
            // Its team may be whole again: then nobody follows one team any more.
            self.follow_lead();
        }
        if !self.procs[i].caught_up() {
            self.newcomer_registered(i);
        }
    }

    pub(super) fn message(&mut self, id: ReplicaId, inc: u32, msg: ToLauncher) {
        let Some(i) = self.find(id, inc) else {
            log::debug!("a message from unknown incarnation {inc} of replica {id}; ignored");
            return;
        };
        if i != self.idx(id) {
            // Its counters are its own; nothing else it says counts any more.
            match msg {
                ToLauncher::Stats { stats } | ToLauncher::Finalized { stats } => {
                    self.procs[i].stats = Some(stats)
                }
                other => {
                    log::debug!("stale incarnation {inc} of replica {id} said {other:?}; ignored")
                }
            }
            return;
        }
        match msg {
            ToLauncher::Finalized { stats } => {
                self.procs[i].stats = Some(stats);
                if self.procs[i].state == ReplicaState::Running && !self.procs[i].caught_up() {
                    // Replayed to the end without saying it caught up: it has.
                    self.caught_up(i);
                }
                if self.procs[i].state == ReplicaState::Running {
                    self.procs[i].state = ReplicaState::Finalized;
                    if self.shutdown_at.is_some() {
                        self.out.push(Action::Send {
                            to: id,
                            msg: ToProcess::Shutdown,
                        });
                    }
                }
            }
            ToLauncher::Retired { reason }
                if !self.procs[i].state.alive()
                    && !matches!(self.procs[i].state, ReplicaState::Retired(_)) =>
            {
                // Ended already (a newcomer whose rank lost its last replica holding its
                // state): the launcher's reason stands.
                log::debug!("replica {id}, already ended, retired: {reason}");
            }
            ToLauncher::Retired { reason } => {
                self.out.push(Action::Print(format!(
                    "{reason}; the job goes on without it"
                )));
                if reason.contains("cannot be regenerated") {
                    self.regen.stop(id.rank, reason.clone());
                }
                if let ReplicaState::Retired(_) = self.procs[i].state {
                    self.procs[i].state = ReplicaState::Retired(reason);
                } else {
                    self.lose(i, ReplicaState::Retired(reason));
                }
            }
            ToLauncher::Fence {
                rank,
                replica,
                incarnation,
            } => self.fence(id, rank, replica, incarnation),
            ToLauncher::Stats { stats } => self.procs[i].stats = Some(stats),
            ToLauncher::Register { .. } => log::warn!("replica {id} registered twice"),
            ToLauncher::CaughtUp { receives } => {
                if self.procs[i].caught_up() {
                    log::warn!("replica {id} caught up unasked");
                } else if self.procs[i].state == ReplicaState::Running {
                    log::info!("replica {id} caught up after {receives} receives");
                    self.caught_up(i);
                }
            }
            // The SIGTERM volpexrun forwarded on its own interruption: the job ends, the
            // replica is not replaced.
            ToLauncher::Draining { .. } if self.interrupting() => {
                self.signal(i, nix::sys::signal::Signal::SIGKILL)
            }
            ToLauncher::Draining {
                grace_ms,
                checkpoints,
            } => self.drain(i, grace_ms, checkpoints),
            ToLauncher::Handover { addr } => self.handover(i, addr),
            ToLauncher::Files { bytes } => self.files_report(i, &bytes),
            ToLauncher::Heartbeat => {
                log::warn!("replica {id} sent a heartbeat on its control connection")
            }
        }
    }
}
