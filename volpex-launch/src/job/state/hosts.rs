//! The hosts' part of the job's state machine: agents saying hello, starting processes
//! and reporting exits, hosts lost at start or during the run, and the launch timeout.
//!
//! Must never do I/O; a lost host's remote shell is cut by `Action::CutHost`.

use std::time::Duration;

use volpex_proto::message::ReplicaId;

use super::super::replica::{HostState, ReplicaState};
use super::super::step::Action;
use super::JobState;

impl JobState {
    pub(super) fn hello(&mut self, host: usize, hostname: &str, pid: u32, now: Duration) {
        log::debug!(
            "host {}: agent up as {hostname} (pid {pid}) after {:.2} s",
            self.hosts[host].name,
            now.as_secs_f64()
        );
        if self.hosts[host].state == HostState::Launching {
            self.hosts[host].state = HostState::Up;
        }
    }

    pub(super) fn started(&mut self, host: usize, id: ReplicaId, inc: u32, pid: u32) {
        if let Some(i) = self.remote_idx(host, id, inc) {
            self.procs[i].pid = pid;
        }
    }

    pub(super) fn start_failed(
        &mut self,
        host: usize,
        id: ReplicaId,
        inc: u32,
        error: String,
        now: Duration,
    ) {
        if let Some(i) = self.remote_idx(host, id, inc) {
            self.out.push(Action::Print(error.clone()));
            self.procs[i].exited = true;
            if inc == 0 {
                self.mark_dead(i, ReplicaState::Failed(error));
            } else {
                // A failed regeneration: another host may do.
                self.lose(i, ReplicaState::Failed(error));
            }
            self.out.push(Action::ForgetPipes { host, count: 2 });
            if self.rendezvous.waiting() {
                self.check_start_coverage(now);
            }
        }
    }

    pub(super) fn remote_exited(
        &mut self,
        host: usize,
        id: ReplicaId,
        inc: u32,
        code: Option<i32>,
        signal: Option<i32>,
    ) {
        if self.remote_idx(host, id, inc).is_some() {
            self.exited(id, inc, code, signal);
        }
    }

    /// The link of a host ended: unless the job is over and nothing of it runs, the host
    /// is lost.
    pub(super) fn link_ended(
        &mut self,
        host: usize,
        code: Option<i32>,
        stderr: &str,
        now: Duration,
    ) {
        let ended = self.failure.is_some() || self.shutdown_at.is_some();
        let running =
            self.hosts[host].agent && self.procs.iter().any(|p| p.host == host && !p.exited);
        if !running && ended {
            return;
        }
        let mut why = match code {
            Some(c) => format!("remote shell exited with code {c}"),
            None => "remote shell ended".to_string(),
        };
        if !stderr.is_empty() {
            why.push_str(&format!(" ({stderr})"));
        }
        self.host_lost(host, why, now);
    }

    /// The incarnation an agent names, if it really runs on that host.
    fn remote_idx(&self, h: usize, id: ReplicaId, inc: u32) -> Option<usize> {
        self.find(id, inc).filter(|&i| self.procs[i].host == h)
    }

    /// A host is gone (unreachable at start, or its agent link ended): its replicas that
    /// were still alive failed.
    pub(super) fn host_lost(&mut self, h: usize, why: String, now: Duration) {
        if matches!(self.hosts[h].state, HostState::Lost(_)) {
            return;
        }
        let starting = self.hosts[h].state == HostState::Launching;
        self.hosts[h].state = HostState::Lost(why.clone());
        self.hosts[h].lost_at = Some(now);
        self.hosts[h].losses += 1;
        // Its agent is gone: a new one starts if the host is tried again.
        self.hosts[h].agent = false;
        self.out.push(Action::CutHost(h));
        let name = self.hosts[h].name.clone();
        let mut lost = Vec::new();
        let mut dead = Vec::new();
        for i in 0..self.procs.len() {
            if self.procs[i].host != h {
                continue;
            }
            if self.procs[i].state.alive() {
                dead.push(i);
                lost.push(self.procs[i].id.to_string());
                let detail = if starting {
                    format!("host {name} unreachable: {why}")
                } else {
                    format!("host {name} lost: {why}")
                };
                self.mark_dead(i, ReplicaState::Failed(detail));
            }
            self.procs[i].exited = true;
            self.out.push(Action::CloseControl(
                self.procs[i].id,
                self.procs[i].incarnation,
            ));
        }
        if self.failure.is_none() && self.shutdown_at.is_none() && !lost.is_empty() {
            self.out.push(Action::Print(format!(
                "host {name} {}: {why}; its replicas {} are lost",
                if starting { "unreachable" } else { "lost" },
                lost.join(" ")
            )));
        }
        // Their new incarnations go elsewhere (the host is lost: never a candidate).
        for i in dead {
            self.regenerate(i);
        }
        if self.rendezvous.waiting() {
            self.check_start_coverage(now);
        }
    }

    /// Before the job runs: every rank needs a replica on a host that is not lost.
    pub(super) fn check_start_coverage(&mut self, now: Duration) {
        if self.failure.is_some() {
            return;
        }
        let missing: Vec<String> = (0..self.ranks)
            .filter(|&r| !self.rank_alive(r))
            .map(|r| r.to_string())
            .collect();
        if missing.is_empty() {
            return;
        }
        let lost: Vec<String> = self
            .hosts
            .iter()
            .filter_map(|h| match &h.state {
                HostState::Lost(why) => Some(format!("{} ({why})", h.name)),
                HostState::Idle | HostState::Launching | HostState::Up => None,
            })
            .collect();
        self.fail(
            format!(
            "cannot start the job: rank{} {} ha{} no replica on a reachable host; unreachable: {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "s" } else { "ve" },
            lost.join("; ")
        ),
            super::super::exit_policy::EXIT_LAUNCHER,
            None,
            now,
        );
    }

    /// Hosts whose agent has not said hello within the launch timeout are unreachable.
    pub(super) fn check_launch_timeouts(&mut self, now: Duration) {
        for h in 0..self.hosts.len() {
            if self.hosts[h].state == HostState::Launching
                && self.hosts[h].agent
                && now >= self.hosts[h].launched_at + self.launch_timeout
            {
                let why = format!(
                    "no answer within --launch-timeout {:.1} s",
                    self.launch_timeout.as_secs_f64()
                );
                self.host_lost(h, why, now);
            }
        }
    }
}
