//! The job as a pure state machine: inputs (registrations, control messages, exits,
//! agent reports, the clock) in, actions (messages to replicas, signals, prints) out.
//!
//! `JobState::handle(input, now)` takes one input, `JobState::tick(now)` runs the
//! deadlines (fault timers, launch timeout, rendezvous, job timeout, shutdown grace);
//! both return the actions for the driver to carry out, in order. Time comes in as an
//! argument (time since the job started). The decisions on when the job is done or lost
//! are `exit_policy`'s. Must never do I/O, read a clock or touch a process: a SIGKILL is
//! an `Action::Signal` the driver delivers.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;

use super::exit_policy::{self, Grid, Verdict};
use super::replica::{Host, HostState, Origin, Replica, ReplicaState};
use super::step::{Action, Input};
use crate::chaos::Chaos;
use crate::cli::Regenerate;
use crate::fault::{Fault, FaultAction};

mod chaos;
mod deaths;
mod exits;
mod files;
mod hosts;
mod messages;
mod notices;
mod regen;
mod rendezvous;
mod shutdown;

pub use notices::HostNotice;
use regen::Regen;

/// How long every replica has to register before the table goes out without it.
pub const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);
/// Once every rank has a registered replica, how long the stragglers get.
pub const RENDEZVOUS_GRACE: Duration = Duration::from_secs(3);
/// How long finished replicas have to exit after SHUTDOWN before they are killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// How long remote hosts get to report the exits of processes they were told to end
/// before the launcher stops waiting for them (a host cut off never answers).
const REMOTE_END_GRACE: Duration = Duration::from_secs(5);
/// Once every rank has a replica that finished and exited cleanly, how long the other
/// processes get to exit, and remote hosts to report it, before they are ended and no
/// longer waited for (a host that hears nothing, say its inbound traffic dropped, would
/// otherwise hold the end for `SHUTDOWN_GRACE` plus `REMOTE_END_GRACE`).
const STRAGGLER_GRACE: Duration = Duration::from_secs(1);
/// The longest the driver waits for an input before ticking.
const TICK_MAX: Duration = Duration::from_millis(200);

/// Settings of the state machine.
#[derive(Debug, Clone)]
pub struct Config {
    /// Ranks in the job.
    pub ranks: u32,
    /// Replicas per rank.
    pub replicas: u32,
    /// `--launch-timeout`.
    pub launch_timeout: Duration,
    /// `--heartbeat-timeout` (for messages).
    pub heartbeat_timeout: Duration,
    /// `--timeout`, if any.
    pub job_timeout: Option<Duration>,
    /// `--fault` specs; the timed ones become timers.
    pub faults: Vec<Fault>,
    /// `--chaos`: its timed faults become timers as they are decided.
    pub chaos: Option<Chaos>,
    /// `--regenerate`.
    pub regenerate: Regenerate,
    /// `--max-regenerations`.
    pub max_regenerations: Option<u32>,
    /// `--kill-grace`: once volpexrun is interrupted and forwarded the signal, how long
    /// the processes get to exit before SIGKILL.
    pub kill_grace: Duration,
}

/// Where the rendezvous is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rendezvous {
    /// Replicas register; the address table has not gone out.
    Waiting {
        /// When every rank first had a registered replica.
        covered_at: Option<Duration>,
    },
    /// The address table went out (once): registrations after it change nothing.
    TableSent,
}

impl Rendezvous {
    /// Before the table goes out, a lost host may leave a rank without replicas: the job
    /// cannot start.
    fn waiting(self) -> bool {
        match self {
            Rendezvous::Waiting { .. } => true,
            Rendezvous::TableSent => false,
        }
    }
}

/// A fault to inject at a time.
#[derive(Debug, Clone)]
struct Timer {
    at: Duration,
    fault: Fault,
}

/// The job: every replica and host, the rendezvous, the shutdown and the failure.
///
/// Methods of three kinds: getters (`replicas`, `hosts`, `failure`, `all_exited`,
/// `next_tick`, `verdict`); inputs (`handle` for what happened, `tick` for the time);
/// commands (`end_all`, `give_up_remote`). Inputs and commands return the actions to carry
/// out, in order. The driver calls `tick` after every input and at the latest at
/// `next_tick`.
#[derive(Debug)]
pub struct JobState {
    ranks: u32,
    replicas: u32,
    hosts: Vec<Host>,
    /// Every incarnation of every replica, in the order they were started (the first
    /// processes rank-major).
    procs: Vec<Replica>,
    /// Index into `procs` of the current incarnation of every replica (rank-major).
    slots: Vec<usize>,
    /// Regeneration: settings, per-rank counts, host capacities.
    regen: Regen,
    /// The time of the input or tick being handled.
    now: Duration,
    launch_timeout: Duration,
    heartbeat_timeout: Duration,
    job_timeout: Option<Duration>,
    /// When the launcher stops waiting for remote hosts to report the ends of the
    /// processes it ended (job over or failed), and cuts their links.
    cut_remote_at: Option<Duration>,
    /// When every rank first had a replica that finished cleanly (after SHUTDOWN).
    all_finished_at: Option<Duration>,
    timers: Vec<Timer>,
    chaos: Option<Chaos>,
    rendezvous: Rendezvous,
    shutdown_at: Option<Duration>,
    /// Why the job failed, and volpexrun's exit code for it.
    failure: Option<(String, i32)>,
    /// The first non-zero exit code a program of each rank ended with by itself (not
    /// killed, not a runtime code): a failed rank's exit code.
    program_codes: Vec<Option<i32>>,
    /// `--kill-grace`.
    kill_grace: Duration,
    /// Interrupted: when the processes that got the forwarded signal are killed.
    kill_at: Option<Duration>,
    /// Teams were bound to CPUs at start: a death during the run asks for `Rebind`.
    rebind: bool,
    /// The team every other running team follows (`binding::lead_team`), as the hosts
    /// were last asked to bind for.
    lead: Option<u32>,
    /// The exit faults armed in first incarnations (`exit@sends`, `exit@choices`): exit
    /// code `EXIT_FAULT` means such a fault only from one of these; from anyone else it is
    /// its program's own code.
    exit_faults: Vec<Fault>,
    /// Who writes every rank's files (see `files`).
    files: volpex_files::coordinator::Coordinator,
    /// Files that could not be written: the job fails with the first.
    files_damaged: Vec<String>,
    /// Processes counted gone for the files at a later time (on hosts cut off).
    files_ends: Vec<(Duration, usize)>,
    /// Preemption notices (`--preemption-notice`), in the order they came.
    notices: Vec<HostNotice>,
    /// Fences of replicas on this machine asked for, carried out when due unless the
    /// replica's exit came first (`deaths::fence`).
    fences: Vec<deaths::HeldFence>,
    /// Actions decided so far by the input being handled.
    out: Vec<Action>,
}

impl JobState {
    /// A job whose hosts are `hosts` (name and whether they are still to be reached), with
    /// replica `rank.replica` on host `host_of(rank, replica)`.
    pub fn new(
        config: Config,
        hosts: Vec<(String, HostState)>,
        host_of: impl Fn(u32, u32) -> usize,
    ) -> JobState {
        let mut procs = Vec::new();
        for x in 0..config.ranks {
            for k in 0..config.replicas {
                let h = host_of(x, k);
                assert!(h < hosts.len(), "replica {x}.{k} on an unknown host {h}");
                procs.push(Replica::starting(ReplicaId::new(x, k), h));
            }
        }
        let timers = config
            .faults
            .iter()
            .filter_map(|f| match f.action {
                FaultAction::Kill(at)
                | FaultAction::Stop(at)
                | FaultAction::Cont(at)
                | FaultAction::Term(at) => Some(Timer { at, fault: *f }),
                FaultAction::ExitAfterSends(_) | FaultAction::ExitAfterChoices(_) => None,
            })
            .collect();
        let slots = (0..procs.len()).collect();
        JobState {
            slots,
            regen: Regen::new(
                config.regenerate,
                config.max_regenerations,
                config.ranks,
                hosts.len(),
            ),
            now: Duration::ZERO,
            ranks: config.ranks,
            replicas: config.replicas,
            hosts: hosts
                .into_iter()
                .map(|(name, state)| Host {
                    name,
                    state,
                    agent: false,
                    launched_at: Duration::ZERO,
                    lost_at: None,
                    losses: 0,
                })
                .collect(),
            procs,
            launch_timeout: config.launch_timeout,
            heartbeat_timeout: config.heartbeat_timeout,
            job_timeout: config.job_timeout,
            cut_remote_at: None,
            all_finished_at: None,
            timers,
            chaos: config.chaos,
            rendezvous: Rendezvous::Waiting { covered_at: None },
            shutdown_at: None,
            failure: None,
            program_codes: vec![None; config.ranks as usize],
            kill_grace: config.kill_grace,
            kill_at: None,
            rebind: false,
            lead: None,
            exit_faults: config
                .faults
                .iter()
                .filter(|f| {
                    matches!(
                        f.action,
                        FaultAction::ExitAfterSends(_) | FaultAction::ExitAfterChoices(_)
                    )
                })
                .copied()
                .collect(),
            files: volpex_files::coordinator::Coordinator::new(config.ranks, config.replicas),
            files_damaged: Vec::new(),
            files_ends: Vec::new(),
            notices: Vec::new(),
            fences: Vec::new(),
            out: Vec::new(),
        }
    }

    /// The teams were bound to CPUs at start (`--bind`): from now on, a death during the
    /// run asks the driver to bind the survivors of its host again (`Action::Rebind`).
    pub fn rebind_on_deaths(&mut self) {
        self.rebind = true;
    }

    // Getters.

    /// The team every other running team follows, if any (`binding::lead_team`): a host
    /// binds it to CPUs of its own (`binding::rebind`).
    pub fn lead_team(&self) -> Option<u32> {
        self.lead
    }

    /// Every incarnation of every replica: the first processes rank-major, then the new
    /// incarnations in the order they started.
    pub fn replicas(&self) -> &[Replica] {
        &self.procs
    }

    /// The current incarnation of a replica.
    pub fn replica(&self, id: ReplicaId) -> &Replica {
        &self.procs[self.idx(id)]
    }

    /// Incarnation `inc` of replica `id`, if it was started.
    pub fn incarnation(&self, id: ReplicaId, inc: u32) -> Option<&Replica> {
        self.find(id, inc).map(|i| &self.procs[i])
    }

    /// What the summary says about regeneration besides the incarnations (ranks no
    /// longer regenerated, and why; no room for a new incarnation).
    pub fn regen_notes(&self) -> &[String] {
        self.regen.notes()
    }

    /// Every host.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// Why the job failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_ref().map(|(why, _)| why.as_str())
    }

    /// `--chaos`'s generator, with the schedule it decided.
    pub fn chaos(&self) -> Option<&Chaos> {
        self.chaos.as_ref()
    }

    /// The job runs: neither done, nor failed, nor interrupted.
    pub fn running(&self) -> bool {
        self.failure.is_none() && self.shutdown_at.is_none()
    }

    /// Every process is gone (or no longer waited for) and every exit judged: the
    /// driver's loop ends.
    pub fn all_exited(&self) -> bool {
        self.procs.iter().all(|p| p.exited && p.held_exit.is_none())
    }

    /// The latest time the driver should call `tick` at, given that it is `now`.
    pub fn next_tick(&self, now: Duration) -> Duration {
        let mut next = now + TICK_MAX;
        for t in &self.timers {
            next = next.min(t.at);
        }
        for f in &self.fences {
            next = next.min(f.due);
        }
        if let Some(t) = self.chaos.as_ref().and_then(Chaos::next_at) {
            next = next.min(t);
        }
        if let Some(t) = self.job_timeout {
            next = next.min(t);
        }
        if let Some(t) = self.kill_at {
            next = next.min(t);
        }
        if let Some(t) = self.next_notice_deadline() {
            next = next.min(t);
        }
        if let Some(t) = self.next_host_retry() {
            next = next.min(t.max(now));
        }
        next
    }

    /// The verdict once every process is gone.
    pub fn verdict(&self) -> Verdict {
        let states = self.grid_states();
        let v = exit_policy::verdict(
            self.failure
                .as_ref()
                .map(|(why, code)| (why.as_str(), *code)),
            Grid::new(self.replicas, &states),
            |rank| self.program_codes[rank as usize],
        );
        match (v, self.files_failure()) {
            // Every rank finished, but a file is incomplete.
            (Verdict::Succeeded, Some(why)) => Verdict::Failed {
                why: why.to_string(),
                code: files::EXIT_FILES,
            },
            (v, _) => v,
        }
    }

    // Inputs.

    /// Takes one input at time `now`; returns what to do.
    pub fn handle(&mut self, input: Input, now: Duration) -> Vec<Action> {
        self.now = now;
        match input {
            Input::Spawned { id, inc, pid } => {
                if let Some(i) = self.find(id, inc) {
                    self.procs[i].pid = pid;
                }
            }
            Input::LinkOpened { host } => self.hosts[host].agent = true,
            Input::Launched => self.check_start_coverage(now),
            Input::Registered { id, inc, addr } => self.registered(id, inc, addr),
            Input::Message { id, inc, msg } => self.message(id, inc, msg),
            Input::ControlClosed { id, inc } => self.control_closed(id, inc),
            Input::Silent {
                id,
                inc,
                silent_for,
            } => self.silent(id, inc, silent_for),
            Input::ControlFailed { why } => {
                if self.failure.is_none() {
                    self.fail(why, exit_policy::EXIT_LAUNCHER, None, now);
                }
            }
            Input::Exited {
                id,
                inc,
                code,
                signal,
            } => self.exited(id, inc, code, signal),
            Input::Restored {
                id,
                inc,
                checkpoint,
            } => {
                if let Some(i) = self.find(id, inc) {
                    // Only one that catches up restores a snapshot.
                    if let Origin::Replay | Origin::Snapshot(_) = self.procs[i].origin {
                        self.procs[i].origin = Origin::Snapshot(checkpoint);
                    }
                }
            }
            Input::LastWords { id, inc, text } => {
                if let Some(i) = self.find(id, inc) {
                    self.procs[i].last_words.heed(&text);
                }
            }
            Input::Interrupted(sig) => self.interrupted(sig, now),
            Input::Hello {
                host,
                hostname,
                pid,
            } => self.hello(host, &hostname, pid, now),
            Input::Started {
                host,
                rank,
                replica,
                inc,
                pid,
            } => self.started(host, ReplicaId::new(rank, replica), inc, pid),
            Input::StartFailed {
                host,
                rank,
                replica,
                inc,
                error,
            } => self.start_failed(host, ReplicaId::new(rank, replica), inc, error, now),
            Input::RemoteExited {
                host,
                rank,
                replica,
                inc,
                code,
                signal,
            } => self.remote_exited(host, ReplicaId::new(rank, replica), inc, code, signal),
            Input::HostLost { host, why } => self.host_lost(host, why, now),
            Input::LinkEnded { host, code, stderr } => self.link_ended(host, code, &stderr, now),
            Input::Notice {
                host,
                said,
                deadline_in,
            } => self.notice(host, said, now + deadline_in),
        }
        std::mem::take(&mut self.out)
    }

    /// Runs every deadline due at `now`: fault timers, the launch timeout, the wait for
    /// remote exits, the job timeout, the rendezvous and the exit policy.
    pub fn tick(&mut self, now: Duration) -> Vec<Action> {
        self.now = now;
        self.judge_held_exits(now);
        self.fences_due(now);
        self.release_held();
        self.retry_waiting();
        self.run_chaos(now);
        self.fire_timers(now);
        self.check_launch_timeouts(now);
        if self.kill_at.is_some_and(|t| now >= t) {
            self.kill_at = None;
            self.out.push(Action::Print(format!(
                "the kill grace ({:.1} s) is over: SIGKILL to every process left",
                self.kill_grace.as_secs_f64()
            )));
            self.kill_all(now);
        }
        if self.cut_remote_at.is_some_and(|t| now >= t) {
            self.end_remote_now();
        }
        for i in 0..self.procs.len() {
            let p = &mut self.procs[i];
            if !p.exited && p.give_up_at.is_some_and(|t| now >= t) {
                log::info!(
                    "replica {} did not report its end; not waiting for it",
                    p.id
                );
                p.exited = true;
                self.out.push(Action::CloseControl(p.id, p.incarnation));
                self.files_ended(i);
            }
        }
        self.files_due(now);
        self.check_newcomers(now);
        if let Some(t) = self.job_timeout {
            if now >= t && self.failure.is_none() && self.shutdown_at.is_none() {
                let waiting: Vec<String> = (0..self.ranks)
                    .filter(|&r| !self.rank_completed(r))
                    .map(|r| r.to_string())
                    .collect();
                self.fail(
                    format!(
                        "job timed out after {:.1} s (ranks not finished: {})",
                        t.as_secs_f64(),
                        waiting.join(", ")
                    ),
                    exit_policy::EXIT_TIMEOUT,
                    None,
                    now,
                );
            }
        }
        match self.rendezvous {
            Rendezvous::Waiting { .. } => self.rendezvous(now),
            Rendezvous::TableSent => {}
        }
        self.check_notices(now);
        self.check_progress(now);
        std::mem::take(&mut self.out)
    }

    // Commands.

    /// Ends every process: local ones by signal, remote ones through their agent (which
    /// then exits); remote hosts get `REMOTE_END_GRACE` to report the exits.
    pub fn end_all(&mut self, now: Duration) -> Vec<Action> {
        self.now = now;
        self.kill_all(now);
        std::mem::take(&mut self.out)
    }

    /// Stops waiting for remote hosts: cuts every remote shell and counts their replicas
    /// as gone.
    pub fn give_up_remote(&mut self) -> Vec<Action> {
        self.end_remote_now();
        std::mem::take(&mut self.out)
    }

    // The machine.

    /// Index of a replica among the slots (rank-major).
    fn slot(&self, id: ReplicaId) -> usize {
        (id.rank * self.replicas + id.replica) as usize
    }

    /// Index into `procs` of the current incarnation of a replica.
    fn idx(&self, id: ReplicaId) -> usize {
        self.slots[self.slot(id)]
    }

    /// Index into `procs` of incarnation `inc` of replica `id`, if it was started.
    fn find(&self, id: ReplicaId, inc: u32) -> Option<usize> {
        if id.rank >= self.ranks || id.replica >= self.replicas {
            return None;
        }
        // The current one first: nearly every event is its.
        let cur = self.idx(id);
        if self.procs[cur].incarnation == inc {
            return Some(cur);
        }
        self.procs
            .iter()
            .position(|p| p.id == id && p.incarnation == inc)
    }

    /// The states of the current incarnations, rank-major.
    fn grid_states(&self) -> Vec<&ReplicaState> {
        self.slots.iter().map(|&i| &self.procs[i].state).collect()
    }

    fn rank_states(&self, rank: u32) -> Vec<&ReplicaState> {
        (0..self.replicas)
            .map(|k| &self.procs[self.idx(ReplicaId::new(rank, k))].state)
            .collect()
    }

    fn rank_completed(&self, rank: u32) -> bool {
        exit_policy::rank_completed(&self.rank_states(rank))
    }

    fn rank_alive(&self, rank: u32) -> bool {
        exit_policy::rank_alive(&self.rank_states(rank))
    }

    /// A signal to the process of `procs[i]`, unless it has been seen to exit.
    fn signal(&mut self, i: usize, signal: Signal) {
        let p = &self.procs[i];
        if !p.exited {
            self.out.push(Action::Signal {
                id: p.id,
                inc: p.incarnation,
                signal,
            });
        }
    }

    /// Ends the job as failed with exit code `code`; `explains` is a lost rank whose
    /// errors still print.
    fn fail(&mut self, why: String, code: i32, explains: Option<u32>, now: Duration) {
        self.failure = Some((why, code));
        self.out.push(Action::Mute(explains));
        for p in self.procs.iter_mut() {
            if exit_policy::ends_on_failure(&p.state) {
                p.state = ReplicaState::Ended;
            }
        }
        self.kill_all(now);
    }

    /// volpexrun got `sig` (SIGINT, SIGTERM, SIGHUP): the job ends as mpirun's does. The
    /// signal goes to every process (by pid here, through the agents elsewhere); those
    /// left after `kill_grace` get SIGKILL. The replicas are marked ended first, so that
    /// their exits and the preemption notices a SIGTERM makes them send are endings, never
    /// reasons to regenerate. A second signal during the grace kills at once.
    fn interrupted(&mut self, sig: i32, now: Duration) {
        let name = Signal::try_from(sig)
            .map(|s| s.to_string())
            .unwrap_or_else(|_| format!("signal {sig}"));
        if let Ok(user @ (Signal::SIGUSR1 | Signal::SIGUSR2)) = Signal::try_from(sig) {
            // The program's to handle, as under mpirun: forwarded, and the job goes on.
            for i in 0..self.procs.len() {
                let p = &mut self.procs[i];
                if !p.exited && !p.forwarded.contains(&sig) {
                    p.forwarded.push(sig);
                }
                self.signal(i, user);
            }
            self.out
                .push(Action::Print(format!("{name}: forwarded to every process")));
            return;
        }
        if self.kill_at.is_some() {
            self.kill_at = None;
            self.out.push(Action::Print(format!(
                "interrupted again by {name}: SIGKILL to every process"
            )));
            self.kill_all(now);
            return;
        }
        if self.failure.is_some() {
            return;
        }
        let Ok(signal) = Signal::try_from(sig) else {
            return;
        };
        self.failure = Some((
            format!("interrupted by {name}; forwarded it to every process"),
            exit_policy::interrupted_code(sig),
        ));
        self.end_faults();
        for p in self.procs.iter_mut() {
            if exit_policy::ends_on_failure(&p.state) {
                p.state = ReplicaState::Ended;
            }
        }
        for i in 0..self.procs.len() {
            self.signal(i, signal);
        }
        self.out.push(Action::Print(format!(
            "interrupted by {name}: forwarded to every process; SIGKILL to those left in {:.1} s (--kill-grace)",
            self.kill_grace.as_secs_f64()
        )));
        self.kill_at = Some(now + self.kill_grace);
    }

    /// The job is ending on volpexrun's interruption (its kill grace runs).
    pub(super) fn interrupting(&self) -> bool {
        self.kill_at.is_some()
    }

    fn fire_timers(&mut self, now: Duration) {
        let (due, later): (Vec<Timer>, Vec<Timer>) = std::mem::take(&mut self.timers)
            .into_iter()
            .partition(|t| t.at <= now);
        self.timers = later;
        // Replicas killed at the same moment are all dead before any is regenerated: a
        // sibling killed with it is no source.
        let mut killed = Vec::new();
        for t in due {
            let id = ReplicaId::new(t.fault.rank, t.fault.replica);
            let sig = match t.fault.action {
                FaultAction::Kill(_) => Signal::SIGKILL,
                FaultAction::Stop(_) => Signal::SIGSTOP,
                FaultAction::Cont(_) => Signal::SIGCONT,
                FaultAction::Term(_) => Signal::SIGTERM,
                FaultAction::ExitAfterSends(_) | FaultAction::ExitAfterChoices(_) => continue,
            };
            // Whichever incarnation of the replica is current at this moment.
            let i = self.idx(id);
            log::info!(
                "fault injection: {sig} to replica {id} (incarnation {})",
                self.procs[i].incarnation
            );
            self.signal(i, sig);
            match sig {
                Signal::SIGSTOP => self.procs[i].stopped = true,
                Signal::SIGCONT => self.procs[i].stopped = false,
                _ => {}
            }
            if sig == Signal::SIGKILL {
                // Dead from now on, whatever it reported before its exit shows: a replica
                // that had just finalized must not complete its rank (and end the
                // slower siblings) while the signal is on its way.
                if self.procs[i].state.computing() {
                    killed.push(i);
                }
                self.mark_dead(
                    i,
                    ReplicaState::Failed("killed by SIGKILL (fault injection)".into()),
                );
            }
        }
        for i in killed {
            self.regenerate(i);
        }
    }

    /// The run is over (every rank completed, or volpexrun was interrupted): no fault
    /// fires any more, and every replica a fault stopped is continued now, so that it can
    /// exit (a stopped process neither hears SHUTDOWN nor acts on SIGTERM; a pending
    /// `cont@` dropped with the timers left it stopped until its heartbeat timed out).
    fn end_faults(&mut self) {
        self.timers.clear();
        for i in 0..self.procs.len() {
            if self.procs[i].stopped {
                self.procs[i].stopped = false;
                self.signal(i, Signal::SIGCONT);
            }
        }
    }
}

#[cfg(test)]
mod tests;
