//! The rendezvous part of the job's state machine: when the address table goes out, and
//! ending the replicas that did not register in time.
//!
//! Must never do I/O; the table is an `Action::Send` to every replica.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::ToProcess;

use super::super::replica::{Origin, ReplicaState};
use super::super::step::Action;
use super::{JobState, Rendezvous, RENDEZVOUS_GRACE, RENDEZVOUS_TIMEOUT};

impl JobState {
    fn rank_registered(&self, rank: u32) -> bool {
        (0..self.replicas).any(|k| {
            let p = &self.procs[self.idx(ReplicaId::new(rank, k))];
            p.addr.is_some() && p.state.alive()
        })
    }

    /// Sends the address table once everyone registered, or the stragglers' grace or the
    /// rendezvous deadline is over.
    pub(super) fn rendezvous(&mut self, now: Duration) {
        let covered_at = match self.rendezvous {
            Rendezvous::Waiting { covered_at: None }
                if (0..self.ranks).all(|r| self.rank_registered(r)) =>
            {
                Some(now)
            }
            Rendezvous::Waiting { covered_at } => covered_at,
            Rendezvous::TableSent => return,
        };
        self.rendezvous = Rendezvous::Waiting { covered_at };
        let everyone = self
            .procs
            .iter()
            .all(|p| p.addr.is_some() || !p.state.alive());
        // Remote hosts may take their launch timeout to come up.
        let grace = if self.hosts.iter().any(|h| h.agent) {
            RENDEZVOUS_GRACE.max(self.launch_timeout)
        } else {
            RENDEZVOUS_GRACE
        };
        // A replica started again in a lost one's place gets the grace from its start.
        let restarted = self
            .slots
            .iter()
            .map(|&i| &self.procs[i])
            .filter(|p| p.origin == Origin::Restart && p.state.alive() && p.addr.is_none())
            .map(|p| p.started_at)
            .max();
        let grace_over = covered_at.is_some_and(|t| now >= t.max(restarted.unwrap_or(t)) + grace);
        // A long --launch-timeout stretches the rendezvous with it.
        let deadline = RENDEZVOUS_TIMEOUT.max(self.launch_timeout + RENDEZVOUS_GRACE);
        // No replica registered at all: a program that does not use the library (`hostname`)
        // runs as long as it likes.
        let anyone = self.procs.iter().any(|p| p.addr.is_some());
        if everyone || grace_over || (now >= deadline && anyone) {
            self.send_table(now);
        }
    }

    fn send_table(&mut self, now: Duration) {
        self.rendezvous = Rendezvous::TableSent;
        log::info!(
            "rendezvous complete after {:.3} s: {} of {} replicas registered",
            now.as_secs_f64(),
            self.procs.iter().filter(|p| p.addr.is_some()).count(),
            self.procs.len()
        );
        let mut late = Vec::new();
        for i in 0..self.procs.len() {
            if self.procs[i].addr.is_none() && self.procs[i].state.alive() {
                log::warn!(
                    "replica {} did not register in time; ending it",
                    self.procs[i].id
                );
                if self.procs[i].state.computing() {
                    late.push(i);
                }
                self.mark_dead(i, ReplicaState::Failed("did not register in time".into()));
                self.signal(i, Signal::SIGKILL);
            }
        }
        // After the marking: a replica ended here is dead in the table, not starting.
        let table = self.table(None);
        // Once to every replica (its current incarnation), however many it had.
        for &i in &self.slots {
            self.out.push(Action::Send {
                to: self.procs[i].id,
                msg: table.clone(),
            });
        }
        // A late replica is lost as one lost right after the table would be (a slow host
        // is no fault of its program): a new incarnation takes its state from a sibling
        // that registered, within the limits and the crash-loop guard (`regenerate`).
        for i in late {
            self.regenerate(i);
        }
    }

    /// The address table: every live replica's address (dead ones `None`; new
    /// incarnations still catching up included), the live ones that have not registered
    /// yet (new incarnations starting) and the current incarnations. `catch_up` is
    /// `Some` for a new incarnation's own table.
    pub(super) fn table(&self, catch_up: Option<u64>) -> ToProcess {
        let addrs: Vec<Vec<Option<String>>> = (0..self.ranks)
            .map(|r| {
                (0..self.replicas)
                    .map(|k| {
                        let p = &self.procs[self.idx(ReplicaId::new(r, k))];
                        if p.state.alive() {
                            p.addr.clone()
                        } else {
                            None
                        }
                    })
                    .collect()
            })
            .collect();
        let starting = (0..self.ranks)
            .flat_map(|r| (0..self.replicas).map(move |k| ReplicaId::new(r, k)))
            .filter(|&id| {
                let p = &self.procs[self.idx(id)];
                p.state.alive() && p.addr.is_none()
            })
            .map(|id| (id.rank, id.replica))
            .collect();
        let incarnations = (0..self.ranks)
            .map(|r| {
                (0..self.replicas)
                    .map(|k| self.procs[self.idx(ReplicaId::new(r, k))].incarnation)
                    .collect()
            })
            .collect();
        ToProcess::Table {
            addrs,
            starting,
            incarnations,
            catch_up,
        }
    }
}
