//! One job: starting the processes, the rendezvous, death notices, fault injection, the
//! exit policy and the summary.
//!
//! Every replica is a state machine (`ReplicaState`); the launcher's main loop takes
//! events (registrations, control messages, process exits, output lines, timers) and
//! moves replicas between states. The job succeeds when every rank has a replica that
//! finished; it fails, with one message naming the rank, when every replica of a rank is
//! gone. Owns the child processes: ends every process it started, by pid, on every path.

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use volpex::bootstrap::{key_hex, vars};
use volpex::message::ReplicaId;
use volpex::transport::auth::new_job_key;
use volpex::transport::EXIT_RETIRED;
use volpex::wire::control::{ReplicaStats, ToLauncher, ToProcess};

use crate::cli::{Args, Fault, FaultAction};
use crate::control::{self, ControlEvent};
use crate::output::{pump, Dedup, Line, Stream};
use crate::report::{ReplicaReport, Report};

/// How long every replica has to register before the table goes out without it.
const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);
/// Once every rank has a registered replica, how long the stragglers get.
const RENDEZVOUS_GRACE: Duration = Duration::from_secs(3);
/// How long finished replicas have to exit after SHUTDOWN before they are killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// How long to wait for output pipes to drain after the last process exited.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Everything the main loop reacts to.
#[derive(Debug)]
pub enum Event {
    /// From a control connection.
    Control(ControlEvent),
    /// A process ended.
    Exited {
        /// Which replica.
        id: ReplicaId,
        /// Its exit code, if it exited.
        code: Option<i32>,
        /// The signal that ended it, if one did.
        signal: Option<i32>,
    },
    /// An output line.
    Line(Line),
    /// An output pipe reached EOF.
    PipeEnd,
    /// volpexrun itself was asked to stop (SIGINT, SIGTERM, SIGHUP).
    Interrupted(i32),
}

/// Life of one replica as the launcher sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplicaState {
    /// Started, not registered yet.
    Starting,
    /// Registered and computing.
    Running,
    /// The application finished; the replica serves its log until SHUTDOWN.
    Finalized,
    /// Exited cleanly after finishing.
    Finished,
    /// Died or exited badly before finishing.
    Failed(String),
    /// Gave up: fell behind the sender logs.
    Retired(String),
    /// Ended by the launcher (job done without it, or job failed).
    Ended,
}

impl ReplicaState {
    fn alive(&self) -> bool {
        match self {
            ReplicaState::Starting | ReplicaState::Running | ReplicaState::Finalized => true,
            ReplicaState::Finished
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended => false,
        }
    }

    fn completed(&self) -> bool {
        match self {
            ReplicaState::Finalized | ReplicaState::Finished => true,
            ReplicaState::Starting
            | ReplicaState::Running
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended => false,
        }
    }
}

struct Replica {
    id: ReplicaId,
    pid: u32,
    state: ReplicaState,
    exited: bool,
    addr: Option<String>,
    writer: Option<TcpStream>,
    stats: Option<ReplicaStats>,
}

struct Timer {
    at: Duration,
    fault: Fault,
}

/// Runs the job described by `args`; returns the process exit code.
pub fn run(args: &Args) -> i32 {
    let mut job = match Job::start(args) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("volpexrun: {e}");
            return 1;
        }
    };
    job.main_loop(args);
    job.finish(args)
}

struct Job {
    ranks: u32,
    replicas: u32,
    procs: Vec<Replica>,
    rx: Receiver<Event>,
    start: Instant,
    timers: Vec<Timer>,
    table_sent: bool,
    /// When every rank first had a registered replica.
    covered_at: Option<Duration>,
    shutdown_at: Option<Duration>,
    failure: Option<String>,
    dedup: Dedup,
    open_pipes: usize,
}

fn describe_exit(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(s)) => match Signal::try_from(s) {
            Ok(sig) => format!("killed by {sig}"),
            Err(_) => format!("killed by signal {s}"),
        },
        (Some(EXIT_RETIRED), None) => format!("retired (exit code {EXIT_RETIRED})"),
        (Some(c), None) => format!("exited with code {c}"),
        (None, None) => "ended".into(),
    }
}

impl Job {
    fn start(args: &Args) -> Result<Job, String> {
        let exports = args
            .export
            .iter()
            .map(|s| crate::cli::parse_export(s))
            .collect::<Result<Vec<_>, _>>()?;
        for f in &args.faults {
            if f.rank >= args.ranks || f.replica >= args.replicas {
                return Err(format!(
                    "--fault names replica {}.{}, but the job has {} ranks x {} replicas",
                    f.rank, f.replica, args.ranks, args.replicas
                ));
            }
        }
        let key = new_job_key();
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot open the control port: {e}"))?;
        let control_addr = listener.local_addr().map_err(|e| e.to_string())?;
        let (tx, rx) = crossbeam_channel::unbounded();
        {
            let tx = tx.clone();
            let (ranks, replicas) = (args.ranks, args.replicas);
            std::thread::Builder::new()
                .name("volpexrun-accept".into())
                .spawn(move || control::serve(listener, key, ranks, replicas, tx))
                .map_err(|e| e.to_string())?;
        }
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
            let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
                .map_err(|e| format!("cannot install signal handlers: {e}"))?;
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("volpexrun-signals".into())
                .spawn(move || {
                    for s in signals.forever() {
                        if tx.send(Event::Interrupted(s)).is_err() {
                            return;
                        }
                    }
                })
                .map_err(|e| e.to_string())?;
        }
        let mut job = Job {
            ranks: args.ranks,
            replicas: args.replicas,
            procs: Vec::new(),
            rx,
            start: Instant::now(),
            timers: Vec::new(),
            table_sent: false,
            covered_at: None,
            shutdown_at: None,
            failure: None,
            dedup: Dedup::new(args.ranks, args.tag_output),
            open_pipes: 0,
        };
        // Spinning processes need not give the CPU away when each has a core of its own.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let oversubscribed = (args.ranks * args.replicas) as usize > cores;
        let (program, prog_args) = args
            .command
            .split_first()
            .ok_or_else(|| "no program given".to_string())?;
        for rank in 0..args.ranks {
            for replica in 0..args.replicas {
                let id = ReplicaId::new(rank, replica);
                let mut cmd = Command::new(program);
                cmd.args(prog_args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .env(vars::RANK, rank.to_string())
                    .env(vars::REPLICA, replica.to_string())
                    .env(vars::SIZE, args.ranks.to_string())
                    .env(vars::REPLICAS, args.replicas.to_string())
                    .env(vars::LAUNCHER, control_addr.to_string())
                    .env(vars::JOB_KEY, key_hex(&key))
                    .env("VOLPEX_YIELD", if oversubscribed { "1" } else { "0" })
                    .envs(exports.iter().map(|(k, v)| (k, v)));
                for f in args
                    .faults
                    .iter()
                    .filter(|f| f.rank == rank && f.replica == replica)
                {
                    match f.action {
                        FaultAction::ExitAfterSends(n) => {
                            cmd.env(vars::FAULT_EXIT_AFTER_SENDS, n.to_string());
                        }
                        FaultAction::ExitAfterChoices(n) => {
                            cmd.env(vars::FAULT_EXIT_AFTER_CHOICES, n.to_string());
                        }
                        FaultAction::Kill(_) | FaultAction::Stop(_) | FaultAction::Cont(_) => {}
                    }
                }
                let mut child = match cmd.spawn() {
                    Ok(c) => c,
                    Err(e) => {
                        job.kill_all();
                        return Err(format!("cannot start {program}: {e}"));
                    }
                };
                let pid = child.id();
                if let Some(out) = child.stdout.take() {
                    job.open_pipes += 1;
                    spawn_pump(out, rank, Stream::Out, tx.clone());
                }
                if let Some(err) = child.stderr.take() {
                    job.open_pipes += 1;
                    spawn_pump(err, rank, Stream::Err, tx.clone());
                }
                let reaper_tx: Sender<Event> = tx.clone();
                let spawned = std::thread::Builder::new()
                    .name("volpexrun-reaper".into())
                    .spawn(move || {
                        let (code, signal) = match child.wait() {
                            Ok(st) => (st.code(), st.signal()),
                            Err(_) => (None, None),
                        };
                        let _ = reaper_tx.send(Event::Exited { id, code, signal });
                    });
                job.procs.push(Replica {
                    id,
                    pid,
                    state: ReplicaState::Starting,
                    exited: false,
                    addr: None,
                    writer: None,
                    stats: None,
                });
                if let Err(e) = spawned {
                    job.kill_all();
                    return Err(format!("cannot watch process {pid}: {e}"));
                }
            }
        }
        for f in &args.faults {
            let at = match f.action {
                FaultAction::Kill(t) | FaultAction::Stop(t) | FaultAction::Cont(t) => t,
                FaultAction::ExitAfterSends(_) | FaultAction::ExitAfterChoices(_) => continue,
            };
            job.timers.push(Timer { at, fault: *f });
        }
        Ok(job)
    }

    fn idx(&self, id: ReplicaId) -> usize {
        (id.rank * self.replicas + id.replica) as usize
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn signal(&self, id: ReplicaId, sig: Signal) {
        let p = &self.procs[self.idx(id)];
        if !p.exited {
            if let Ok(pid) = i32::try_from(p.pid) {
                let _ = kill(Pid::from_raw(pid), sig);
            }
        }
    }

    fn kill_all(&mut self) {
        for p in &self.procs {
            if !p.exited {
                if let Ok(pid) = i32::try_from(p.pid) {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
            }
        }
    }

    fn main_loop(&mut self, args: &Args) {
        let job_timeout = args.timeout.map(Duration::from_secs_f64);
        loop {
            let now = self.now();
            if self.procs.iter().all(|p| p.exited) {
                break;
            }
            let mut next = now + Duration::from_millis(200);
            for t in &self.timers {
                next = next.min(t.at);
            }
            if let Some(t) = job_timeout {
                next = next.min(t);
            }
            match self.rx.recv_timeout(next.saturating_sub(now)) {
                Ok(ev) => self.on_event(ev),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
            let now = self.now();
            self.fire_timers(now);
            if let Some(t) = job_timeout {
                if now >= t && self.failure.is_none() && self.shutdown_at.is_none() {
                    let waiting: Vec<String> = (0..self.ranks)
                        .filter(|&r| !self.rank_completed(r))
                        .map(|r| r.to_string())
                        .collect();
                    self.fail(format!(
                        "job timed out after {:.1} s (ranks not finished: {})",
                        t.as_secs_f64(),
                        waiting.join(", ")
                    ));
                }
            }
            if !self.table_sent {
                if self.covered_at.is_none() && (0..self.ranks).all(|r| self.rank_registered(r)) {
                    self.covered_at = Some(now);
                }
                let everyone = self
                    .procs
                    .iter()
                    .all(|p| p.addr.is_some() || !p.state.alive());
                let grace_over = self.covered_at.is_some_and(|t| now >= t + RENDEZVOUS_GRACE);
                if everyone || grace_over || now >= RENDEZVOUS_TIMEOUT {
                    self.send_table();
                }
            }
            self.check_progress(now);
        }
        // Drain what the pipes still hold.
        let until = Instant::now() + DRAIN_GRACE;
        while self.open_pipes > 0 {
            let left = until.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(ev) => self.on_event(ev),
                Err(_) => break,
            }
        }
        self.dedup.flush();
    }

    fn rank_registered(&self, rank: u32) -> bool {
        (0..self.replicas).any(|k| {
            let p = &self.procs[self.idx(ReplicaId::new(rank, k))];
            p.addr.is_some() && p.state.alive()
        })
    }

    fn rank_completed(&self, rank: u32) -> bool {
        (0..self.replicas).any(|k| {
            self.procs[self.idx(ReplicaId::new(rank, k))]
                .state
                .completed()
        })
    }

    fn rank_alive(&self, rank: u32) -> bool {
        (0..self.replicas).any(|k| {
            let s = &self.procs[self.idx(ReplicaId::new(rank, k))].state;
            s.alive() || s.completed()
        })
    }

    fn check_progress(&mut self, now: Duration) {
        if self.failure.is_some() {
            return;
        }
        // Once every rank has finished, the verdict waits for the exits (`finish`): the
        // replicas ended on purpose do not make a rank lost.
        let lost = if self.shutdown_at.is_none() {
            (0..self.ranks).find(|&r| !self.rank_alive(r))
        } else {
            None
        };
        if let Some(rank) = lost {
            let why: Vec<String> = (0..self.replicas)
                .map(|k| {
                    let p = &self.procs[self.idx(ReplicaId::new(rank, k))];
                    match &p.state {
                        ReplicaState::Failed(w) | ReplicaState::Retired(w) => {
                            format!("{}: {w}", p.id)
                        }
                        other => format!("{}: {other:?}", p.id),
                    }
                })
                .collect();
            self.fail(format!(
                "rank {rank} lost: all {} replicas failed ({})",
                self.replicas,
                why.join("; ")
            ));
            return;
        }
        match self.shutdown_at {
            None => {
                if (0..self.ranks).all(|r| self.rank_completed(r)) {
                    self.shutdown_at = Some(now);
                    // Faults are for the run; the job is done.
                    self.timers.clear();
                    for i in 0..self.procs.len() {
                        let id = self.procs[i].id;
                        match self.procs[i].state {
                            ReplicaState::Finalized => {
                                if let Some(w) = self.procs[i].writer.as_mut() {
                                    control::send(w, &ToProcess::Shutdown);
                                }
                            }
                            ReplicaState::Starting | ReplicaState::Running => {
                                self.procs[i].state = ReplicaState::Ended;
                                self.signal(id, Signal::SIGKILL);
                            }
                            ReplicaState::Finished
                            | ReplicaState::Failed(_)
                            | ReplicaState::Retired(_)
                            | ReplicaState::Ended => {}
                        }
                    }
                }
            }
            Some(t) => {
                if now >= t + SHUTDOWN_GRACE {
                    for i in 0..self.procs.len() {
                        if !self.procs[i].exited {
                            let id = self.procs[i].id;
                            log::warn!("replica {id} did not exit after shutdown; killing it");
                            self.procs[i].state = ReplicaState::Ended;
                            self.signal(id, Signal::SIGKILL);
                        }
                    }
                }
            }
        }
    }

    fn fail(&mut self, why: String) {
        self.failure = Some(why);
        self.dedup.mute();
        for i in 0..self.procs.len() {
            if self.procs[i].state.alive() {
                self.procs[i].state = ReplicaState::Ended;
            }
        }
        self.kill_all();
    }

    fn fire_timers(&mut self, now: Duration) {
        let (due, later): (Vec<Timer>, Vec<Timer>) = std::mem::take(&mut self.timers)
            .into_iter()
            .partition(|t| t.at <= now);
        self.timers = later;
        for t in due {
            let id = ReplicaId::new(t.fault.rank, t.fault.replica);
            let sig = match t.fault.action {
                FaultAction::Kill(_) => Signal::SIGKILL,
                FaultAction::Stop(_) => Signal::SIGSTOP,
                FaultAction::Cont(_) => Signal::SIGCONT,
                FaultAction::ExitAfterSends(_) | FaultAction::ExitAfterChoices(_) => continue,
            };
            log::info!("fault injection: {sig} to replica {id}");
            self.signal(id, sig);
        }
    }

    fn send_table(&mut self) {
        self.table_sent = true;
        let table = self.table();
        for i in 0..self.procs.len() {
            if self.procs[i].addr.is_none() && self.procs[i].state.alive() {
                log::warn!(
                    "replica {} did not register in time; ending it",
                    self.procs[i].id
                );
                self.mark_dead(i, ReplicaState::Failed("did not register in time".into()));
                let id = self.procs[i].id;
                self.signal(id, Signal::SIGKILL);
            }
        }
        for p in self.procs.iter_mut() {
            if let Some(w) = p.writer.as_mut() {
                control::send(w, &table);
            }
        }
    }

    fn table(&self) -> ToProcess {
        let addrs = (0..self.ranks)
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
        ToProcess::Table { addrs }
    }

    /// Moves a replica to a dead state and tells every other replica.
    fn mark_dead(&mut self, i: usize, state: ReplicaState) {
        let was_alive = self.procs[i].state.alive();
        let id = self.procs[i].id;
        if was_alive || matches!(self.procs[i].state, ReplicaState::Finished) {
            self.procs[i].state = state;
        }
        if !was_alive {
            return;
        }
        let notice = ToProcess::Death {
            rank: id.rank,
            replica: id.replica,
        };
        for (j, p) in self.procs.iter_mut().enumerate() {
            if j != i && p.state.alive() {
                if let Some(w) = p.writer.as_mut() {
                    control::send(w, &notice);
                }
            }
        }
    }

    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::Line(line) => self.dedup.offer(&line),
            Event::PipeEnd => self.open_pipes = self.open_pipes.saturating_sub(1),
            Event::Interrupted(sig) => {
                if self.failure.is_none() {
                    let name = Signal::try_from(sig)
                        .map(|s| s.to_string())
                        .unwrap_or_default();
                    self.fail(format!("interrupted by {name}; ended every process"));
                }
            }
            Event::Exited { id, code, signal } => {
                let i = self.idx(id);
                self.procs[i].exited = true;
                self.procs[i].writer = None;
                let state = self.procs[i].state.clone();
                match state {
                    ReplicaState::Finalized if code == Some(0) && self.shutdown_at.is_some() => {
                        self.procs[i].state = ReplicaState::Finished;
                    }
                    ReplicaState::Starting | ReplicaState::Running | ReplicaState::Finalized => {
                        let why = describe_exit(code, signal);
                        log::info!("replica {id} {why}");
                        // Its RETIRED message may still be on its way: it brings the reason.
                        let state = if (code, signal) == (Some(EXIT_RETIRED), None) {
                            ReplicaState::Retired(why)
                        } else {
                            ReplicaState::Failed(why)
                        };
                        self.mark_dead(i, state);
                    }
                    ReplicaState::Finished
                    | ReplicaState::Failed(_)
                    | ReplicaState::Retired(_)
                    | ReplicaState::Ended => {}
                }
            }
            Event::Control(ControlEvent::Registered { id, addr, writer }) => {
                let i = self.idx(id);
                if self.procs[i].state != ReplicaState::Starting || self.procs[i].addr.is_some() {
                    log::warn!("replica {id} registered twice; ignored");
                    return;
                }
                self.procs[i].state = ReplicaState::Running;
                self.procs[i].addr = Some(addr);
                self.procs[i].writer = Some(writer);
            }
            Event::Control(ControlEvent::Message { id, msg }) => {
                let i = self.idx(id);
                match msg {
                    ToLauncher::Finalized { stats } => {
                        self.procs[i].stats = Some(stats);
                        if self.procs[i].state == ReplicaState::Running {
                            self.procs[i].state = ReplicaState::Finalized;
                            if self.shutdown_at.is_some() {
                                if let Some(w) = self.procs[i].writer.as_mut() {
                                    control::send(w, &ToProcess::Shutdown);
                                }
                            }
                        }
                    }
                    ToLauncher::Retired { reason } => {
                        eprintln!("volpexrun: {reason}; the job goes on without it");
                        if let ReplicaState::Retired(_) = self.procs[i].state {
                            self.procs[i].state = ReplicaState::Retired(reason);
                        } else {
                            self.mark_dead(i, ReplicaState::Retired(reason));
                        }
                    }
                    ToLauncher::Fence { rank, replica } => self.fence(id, rank, replica),
                    ToLauncher::Register { .. } => log::warn!("replica {id} registered twice"),
                }
            }
            Event::Control(ControlEvent::Closed { id }) => {
                let i = self.idx(id);
                self.procs[i].writer = None;
            }
        }
    }

    /// Replica `by` found its sibling `rank.replica` unreachable or silent while it
    /// needed its choices: end it and announce its death, so that only one replica of the
    /// rank ever makes choices. Only siblings may ask; a replica that already finished is
    /// left alone.
    fn fence(&mut self, by: ReplicaId, rank: u32, replica: u32) {
        if rank != by.rank || replica >= self.replicas || replica == by.replica {
            log::warn!("replica {by} asked to fence {rank}.{replica}; refused");
            return;
        }
        let target = ReplicaId::new(rank, replica);
        let i = self.idx(target);
        match self.procs[i].state {
            ReplicaState::Starting | ReplicaState::Running => {
                eprintln!("volpexrun: replica {target} is unresponsive to {by}; ending it");
                self.signal(target, Signal::SIGKILL);
                self.mark_dead(
                    i,
                    ReplicaState::Failed(format!("fenced: unresponsive to replica {by}")),
                );
            }
            ReplicaState::Finalized
            | ReplicaState::Finished
            | ReplicaState::Failed(_)
            | ReplicaState::Retired(_)
            | ReplicaState::Ended => {}
        }
    }

    fn finish(&mut self, args: &Args) -> i32 {
        let elapsed = self.now();
        if self.failure.is_none() {
            if let Some(rank) = (0..self.ranks).find(|&r| {
                !(0..self.replicas).any(|k| {
                    self.procs[self.idx(ReplicaId::new(r, k))].state == ReplicaState::Finished
                })
            }) {
                self.failure = Some(format!("rank {rank}: no replica finished cleanly"));
            }
        }
        let report = Report {
            ranks: self.ranks,
            replicas: self.replicas,
            success: self.failure.is_none(),
            exit_code: if self.failure.is_none() { 0 } else { 1 },
            elapsed_s: elapsed.as_secs_f64(),
            error: self.failure.clone(),
            failovers: self
                .procs
                .iter()
                .filter_map(|p| p.stats.as_ref())
                .map(|s| s.failovers)
                .sum(),
            processes: self
                .procs
                .iter()
                .map(|p| ReplicaReport::new(p.id, p.pid, &p.state, p.stats.clone()))
                .collect(),
        };
        eprint!("{}", report.text());
        if let Some(path) = &args.report {
            if let Err(e) = report.write(path) {
                eprintln!("volpexrun: cannot write report {}: {e}", path.display());
            }
        }
        if let Some(f) = &self.failure {
            eprintln!("volpexrun: error: {f}");
        }
        report.exit_code
    }
}

fn spawn_pump<R: std::io::Read + Send + 'static>(
    pipe: R,
    rank: u32,
    stream: Stream,
    tx: Sender<Event>,
) {
    let _ = std::thread::Builder::new()
        .name("volpexrun-output".into())
        .spawn(move || pump(pipe, rank, stream, tx, Event::Line, Event::PipeEnd));
}

impl Drop for Job {
    fn drop(&mut self) {
        self.kill_all();
    }
}
