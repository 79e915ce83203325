//! How a job ends, in its state machine: once every rank completed, finished replicas
//! are asked to exit and the others are ended; those that do not exit are ended once, and
//! remote hosts get a grace to report it before their links are cut. Also ending every
//! process when the job failed. Must never do I/O; an ended process is an
//! `Action::Signal`.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::wire::control::ToProcess;

use super::super::exit_policy::{self, AtShutdown, Grid, Progress};
use super::super::replica::ReplicaState;
use super::super::step::Action;
use super::{JobState, REMOTE_END_GRACE, SHUTDOWN_GRACE, STRAGGLER_GRACE};

impl JobState {
    pub(super) fn kill_all(&mut self, now: Duration) {
        for p in &self.procs {
            if !p.exited && !self.hosts[p.host].agent {
                self.out.push(Action::Signal {
                    id: p.id,
                    inc: p.incarnation,
                    signal: Signal::SIGKILL,
                });
            }
        }
        self.out.push(Action::EndAgents);
        self.cut_remote_at.get_or_insert(now + REMOTE_END_GRACE);
    }

    pub(super) fn end_remote_now(&mut self) {
        for h in 0..self.hosts.len() {
            if self.hosts[h].agent {
                self.out.push(Action::CutHost(h));
                for p in self.procs.iter_mut().filter(|p| p.host == h) {
                    p.exited = true;
                    self.out.push(Action::CloseControl(p.id, p.incarnation));
                }
            }
        }
    }

    pub(super) fn check_progress(&mut self, now: Duration) {
        if self.failure.is_some() {
            return;
        }
        match self.shutdown_at {
            // Once every rank has finished, the verdict waits for the exits (`verdict`):
            // the replicas ended on purpose do not make a rank lost.
            None => {
                let states = self.grid_states();
                let grid = Grid::new(self.replicas, &states);
                match exit_policy::progress(grid) {
                    Progress::Running => {}
                    Progress::Lost { rank } => {
                        let mut why = exit_policy::lost_message(grid, rank);
                        if let Some(note) = self.stall_note() {
                            why = format!("{why}; {note}");
                        }
                        let code = exit_policy::rank_code(self.program_codes[rank as usize]);
                        self.fail(why, code, Some(rank), now);
                    }
                    Progress::Done => self.begin_shutdown(now),
                }
            }
            Some(t) => {
                let states = self.grid_states();
                let grid = Grid::new(self.replicas, &states);
                let all_finished =
                    (0..self.ranks).all(|r| exit_policy::rank_finished(grid.rank(r)));
                if all_finished {
                    self.all_finished_at.get_or_insert(now);
                }
                // The job succeeded: the rest need not be waited for long.
                let (due, wait) = match self.all_finished_at {
                    Some(f) => (f + STRAGGLER_GRACE, STRAGGLER_GRACE),
                    None => (t + SHUTDOWN_GRACE, REMOTE_END_GRACE),
                };
                if now >= due {
                    self.end_stragglers(now, wait);
                }
            }
        }
    }

    /// The processes that did not exit after SHUTDOWN are ended, once each; remote hosts
    /// get `wait` to report it. One that had finalized but never exited did not hear the
    /// SHUTDOWN (its host is cut off, or it hangs): it counts as failed, not as ended on
    /// purpose.
    pub(super) fn end_stragglers(&mut self, now: Duration, wait: Duration) {
        for i in 0..self.procs.len() {
            let p = &self.procs[i];
            if p.exited || p.state == ReplicaState::Ended || !p.state.alive() {
                continue;
            }
            let id = p.id;
            self.procs[i].state = match p.state {
                ReplicaState::Finalized => {
                    log::warn!("replica {id} did not exit after SHUTDOWN; ending it");
                    ReplicaState::Failed(
                        "did not exit after SHUTDOWN (unreachable, or hung after finishing)".into(),
                    )
                }
                ReplicaState::Starting
                | ReplicaState::Running
                | ReplicaState::Finished
                | ReplicaState::Failed(_)
                | ReplicaState::Retired(_)
                | ReplicaState::Ended
                | ReplicaState::Drained => ReplicaState::Ended,
            };
            self.signal(i, Signal::SIGKILL);
            if self.hosts[self.procs[i].host].agent {
                self.procs[i].give_up_at = Some(now + wait);
            }
        }
        self.cut_remote_at.get_or_insert(now + wait);
    }

    /// Every rank completed: finished replicas are asked to exit, the others are ended:
    /// all of them stopped (SIGSTOP) before any is killed, so that none sees another's
    /// connections close and fails over from it (in the moment before its own SIGKILL
    /// it would count failovers in a job where nothing failed: `-r 2` runs of the MPI-IO
    /// benchmark reported 3 so, their slower team's receivers moving their pulls off the
    /// sender replica killed first).
    pub(super) fn begin_shutdown(&mut self, now: Duration) {
        self.shutdown_at = Some(now);
        // Faults are for the run; the job is done.
        self.end_faults();
        let mut ended = Vec::new();
        for i in 0..self.procs.len() {
            let id = self.procs[i].id;
            match exit_policy::at_shutdown(&self.procs[i].state) {
                AtShutdown::AskToExit => self.out.push(Action::Send {
                    to: id,
                    msg: ToProcess::Shutdown,
                }),
                AtShutdown::End => {
                    self.procs[i].state = ReplicaState::Ended;
                    self.signal(i, Signal::SIGSTOP);
                    ended.push(i);
                    if self.hosts[self.procs[i].host].agent {
                        self.procs[i].give_up_at = Some(now + REMOTE_END_GRACE);
                    }
                }
                AtShutdown::Leave => {}
            }
        }
        for i in ended {
            self.signal(i, Signal::SIGKILL);
        }
    }
}
