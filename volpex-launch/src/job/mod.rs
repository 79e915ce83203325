//! One job, the driver: the loop that takes events from the launcher's threads, feeds
//! them to the pure state machine (`state`) and carries out its actions (messages on
//! control connections, signals by pid or through a host's agent), then drains the
//! output and prints the summary.
//!
//! Parts: `event` (what the threads report), `step` (the state machine's inputs and
//! actions), `state` (the state machine: rendezvous, deaths, faults, shutdown),
//! `exit_policy` (when the job is done or lost, and its exit code), `replica` (the
//! records), `feedback` (the live lines and the status line), `env` (each process's
//! environment), `spawn` (starting processes here, over ssh or with srun). volpexrun's
//! SIGINT, SIGTERM and SIGHUP go to every process, SIGKILL after `--kill-grace`. The job succeeds when every rank has a replica that finished; it
//! fails, with one message naming the rank, when every replica of a rank is gone. A
//! replica lost during the run gets a new incarnation (`Action::Spawn`, decided by
//! `state`'s regeneration) over its host's own path; processes, connections and output are
//! kept per incarnation, so nothing an old one does is taken for the new one's.
//!
//! Processes run on hosts: this machine (the embedded default), or remote hosts reached by
//! ssh or srun, where a `volpexrun agent` starts them and reports their pids, output and
//! exits. Owns the child processes, the control connections and the agent links: ends
//! every process it started, by pid, on every path. Must never decide anything itself:
//! every decision is the state machine's.

mod env;
mod exit_policy;
pub mod feedback;
pub mod replica;
mod report;
mod respawn;
mod spawn;
mod state;
mod step;
mod watchdog;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use nix::sys::signal::kill;
use nix::unistd::Pid;
use volpex_proto::message::ReplicaId;

use self::state::JobState;
use self::step::{Action, Input};
use crate::agent::{FromAgent, ToAgent};
use crate::binding::{self, Bind};
use crate::chaos::Chaos;
use crate::cli::Args;
use crate::control::{self, Incarnations};
use crate::event::{ControlEvent, Event, HostEvent, LinkId};
use crate::fault::FaultAction;
use crate::output::{Dedup, Line, Mark, Stream};
use crate::remote::AgentLink;
use report::{EventReport, ReplicaReport, Report};

/// How long to wait for output pipes to drain after the last process exited.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// Runs the job described by `args`; returns the process exit code.
pub fn run(args: &Args) -> i32 {
    if args.print_map {
        return spawn::print_map(args);
    }
    // `--chaos` arms its exit faults before anything starts: they go into the
    // processes' environment like `--fault`'s.
    let chaos = args
        .chaos
        .clone()
        .map(|spec| Chaos::new(spec, args.ranks, args.replicas));
    let mut with_exits = args.clone();
    if let Some(c) = &chaos {
        eprintln!("volpexrun: chaos {}", c.spec());
        with_exits.faults.extend(c.start_faults());
    }
    let mut job = match Job::start(&with_exits, chaos) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("volpexrun: {e}");
            return exit_policy::start_error_code(&e);
        }
    };
    job.main_loop();
    job.finish(args)
}

/// What starting a process on this machine takes (kept for new incarnations).
struct LocalLaunch {
    program: String,
    args: Vec<String>,
    wdir: Option<std::path::PathBuf>,
    /// Variables every process gets.
    common: Vec<env::Var>,
    /// `VOLPEX_CPUS` of each team (`--bind`).
    cpus: crate::binding::CpuPlan,
}

/// What starting an agent on a host where nothing was placed takes (a new incarnation
/// goes there).
struct RemoteLaunch {
    shell: crate::remote::Shell,
    agent_path: String,
    /// The job's `Start`, without host name and processes.
    template: crate::agent::StartSpec,
}

/// How a host's processes are started and signalled.
enum HostLink {
    /// Children of volpexrun on this machine; for a remote host, no agent now (its shell
    /// never ran, or the host was lost and its shell cut): one starts with its next new
    /// incarnation.
    Local,
    /// A `volpexrun agent` over ssh or srun.
    Agent(AgentLink),
}

/// The I/O side of a host.
struct HostIo {
    link: HostLink,
    /// Agent links started to this host so far; the current one's events carry
    /// `links - 1` as their generation, an older one's are stale.
    links: u32,
    /// Output pipes of this host not yet at EOF.
    open_pipes: usize,
}

impl HostIo {
    /// The id of a new agent link to this host (`host`), which makes every earlier one's
    /// stale.
    fn next_link(&mut self, host: usize) -> LinkId {
        self.links += 1;
        LinkId {
            host,
            generation: self.links - 1,
        }
    }

    /// Whether `link` is this host's newest link.
    fn is_current(&self, link: LinkId) -> bool {
        self.links.checked_sub(1) == Some(link.generation)
    }
}

struct Job {
    state: JobState,
    start: Instant,
    rx: Receiver<Event>,
    /// Indexed like the state's hosts.
    hosts: Vec<HostIo>,
    /// Control connection of every replica (rank-major), once registered, with the
    /// incarnation that opened it.
    writers: Vec<Option<(u32, TcpStream)>>,
    /// Files connection of every replica, once opened, with its incarnation.
    files: Vec<Option<(u32, TcpStream)>>,
    /// The current incarnation of every replica, shared with the control server.
    current: Incarnations,
    /// Where processes report (new incarnations' pipes and reapers).
    tx: Sender<Event>,
    /// How to start a process on this machine (a local job).
    local: Option<LocalLaunch>,
    /// How to start an agent on a remote host (a remote job).
    remote: Option<RemoteLaunch>,
    dedup: Dedup,
    /// Output pipes not yet at EOF, on every host.
    open_pipes: usize,
    ranks: u32,
    replicas: u32,
    /// The policy that bound this machine's teams to CPUs at start (`--bind`), if it
    /// did: deaths move the survivors onto the CPUs the dead left.
    rebind: Option<Bind>,
    /// `--stdin`: the rank whose replicas read volpexrun's stdin, and its bytes.
    stdin: Option<(u32, crate::stdin::StdinHub)>,
    /// What the live lines said so far.
    feedback: feedback::Feedback,
    /// `--quiet`: no live lines, no status line.
    quiet: bool,
    /// The status line, on a terminal (not with `--quiet`).
    status: Option<indicatif::ProgressBar>,
    /// Notes that volpexrun runs, to tell a stall of its own (`watchdog`).
    watchdog: Option<watchdog::Watchdog>,
}

impl Job {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn idx(&self, id: ReplicaId) -> usize {
        (id.rank * self.replicas + id.replica) as usize
    }

    /// Hands one input to the state machine and carries out what it decides.
    fn input(&mut self, input: Input) {
        let actions = self.state.handle(input, self.now());
        self.apply(actions);
    }

    fn tick(&mut self) {
        let actions = self.state.tick(self.now());
        self.apply(actions);
    }

    /// Kills every process: local ones by pid, remote ones through their agent.
    fn kill_all(&mut self) {
        let actions = self.state.end_all(self.now());
        self.apply(actions);
    }

    /// Stops waiting for remote hosts (see `JobState::give_up_remote`).
    fn end_remote_now(&mut self) {
        let actions = self.state.give_up_remote();
        self.apply(actions);
    }

    fn apply(&mut self, actions: Vec<Action>) {
        for a in actions {
            self.act(a, None);
        }
    }

    /// Carries out one action; `registering` is the connection of a registration being
    /// handled.
    fn act(&mut self, action: Action, registering: Option<&mut Option<TcpStream>>) {
        match action {
            Action::Send { to, msg } => {
                let i = self.idx(to);
                let current = self.state.replica(to).incarnation;
                if let Some((inc, w)) = self.writers[i].as_mut() {
                    if *inc == current {
                        control::send(w, &msg);
                    }
                }
            }
            Action::SendFiles { to, inc, bytes } => {
                let i = self.idx(to);
                if let Some((c, w)) = self.files[i].as_mut() {
                    if *c == inc {
                        control::send(w, &volpex_proto::wire::control::ToProcess::Files { bytes });
                    }
                }
            }
            Action::KeepControl(id, inc) => {
                let i = self.idx(id);
                if let Some(w) = registering.and_then(|w| w.take()) {
                    self.writers[i] = Some((inc, w));
                }
            }
            Action::CloseControl(id, inc) => {
                let i = self.idx(id);
                if self.writers[i].as_ref().is_some_and(|(c, _)| *c == inc) {
                    self.writers[i] = None;
                }
                if self.files[i].as_ref().is_some_and(|(c, _)| *c == inc) {
                    self.files[i] = None;
                }
            }
            Action::Spawn {
                id,
                inc,
                host,
                handover,
            } => {
                // The live lines about what led to it (the loss it answers) come before
                // the line about the new incarnation.
                self.live();
                self.spawn(id, inc, host, handover)
            }
            Action::Signal { id, inc, signal } => {
                let Some(p) = self.state.incarnation(id, inc) else {
                    return;
                };
                let (host, pid) = (p.host, p.pid);
                match &mut self.hosts[host].link {
                    HostLink::Local => {
                        if let Ok(pid) = i32::try_from(pid) {
                            if pid > 0 {
                                let _ = kill(Pid::from_raw(pid), signal);
                            }
                        }
                    }
                    HostLink::Agent(link) => {
                        link.send(&ToAgent::Signal {
                            rank: id.rank,
                            replica: id.replica,
                            incarnation: inc,
                            signal: signal as i32,
                        });
                    }
                }
            }
            Action::EndAgents => {
                for h in &mut self.hosts {
                    if let HostLink::Agent(link) = &mut h.link {
                        link.send(&ToAgent::EndAll);
                    }
                }
            }
            Action::CutHost(h) => {
                if let HostLink::Agent(link) = &mut self.hosts[h].link {
                    link.kill();
                    // No agent there now: one starts if the host is tried again.
                    self.hosts[h].link = HostLink::Local;
                }
                self.open_pipes = self.open_pipes.saturating_sub(self.hosts[h].open_pipes);
                self.hosts[h].open_pipes = 0;
            }
            Action::ForgetPipes { host, count } => {
                self.hosts[host].open_pipes = self.hosts[host].open_pipes.saturating_sub(count);
                self.open_pipes = self.open_pipes.saturating_sub(count);
            }
            Action::Rebind { host } => self.rebind(host),
            Action::Print(text) => self.say(&text),
            Action::Live(text) => self.say_live(&text),
            Action::Mute(explains) => self.dedup.mute(explains),
        }
    }

    /// Binding follows the living processes: after a death on a host, its living
    /// processes are bound again as `--bind` would bind them had they been the only ones
    /// started, so the CPUs of a dead team go to the survivors (with 3 teams on 2 CPUs,
    /// teams 0 and 2 shared CPU 0; with team 1 gone, team 2 moves to CPU 1). volpexrun
    /// does it on this machine, a host's agent on its own (`ToAgent::Rebind`).
    fn rebind(&mut self, host: usize) {
        let living: Vec<(ReplicaId, u32)> = self
            .state
            .replicas()
            .iter()
            .filter(|p| p.host == host && p.state.alive() && !p.exited)
            .map(|p| (p.id, p.pid))
            .collect();
        match &mut self.hosts[host].link {
            HostLink::Local => {
                let Some(bind) = self.rebind else {
                    return;
                };
                let teams: Vec<(u32, u32, u32)> = living
                    .iter()
                    .filter(|(_, pid)| *pid > 0)
                    .map(|(id, pid)| (id.replica, id.rank, *pid))
                    .collect();
                match binding::rebind(bind, &teams, self.state.lead_team()) {
                    Ok(bound) => {
                        for (pid, cpus) in bound {
                            log::info!("process {pid} now runs on CPUs {cpus}");
                        }
                    }
                    Err(e) => log::warn!("cannot bind the survivors again: {e}"),
                }
            }
            HostLink::Agent(link) => {
                // The agent knows the pids of its children, also of those whose pid has
                // not reached volpexrun yet (a death before the rendezvous).
                link.send(&ToAgent::Rebind {
                    living: living.iter().map(|(id, _)| (id.rank, id.replica)).collect(),
                    lead: self.state.lead_team(),
                });
            }
        }
    }

    /// Prints `volpexrun: <text>` on stderr, above the status line if there is one.
    fn say(&self, text: &str) {
        match &self.status {
            Some(bar) => bar.println(format!("volpexrun: {text}")),
            None => eprintln!("volpexrun: {text}"),
        }
    }

    /// A live line: printed, or with `--quiet` only logged (at info).
    fn say_live(&self, text: &str) {
        if self.quiet {
            log::info!("{text}");
        } else {
            self.say(text);
        }
    }

    /// The live lines about what changed since the last look (deaths, failovers, lags)
    /// and the status line.
    fn live(&mut self) {
        let now = self.now();
        let lines = self.feedback.observe(
            self.state.replicas(),
            self.replicas,
            self.state.running(),
            now,
        );
        for l in lines {
            self.say_live(&l);
        }
        if let Some(bar) = &self.status {
            bar.set_message(feedback::status_line(
                self.state.replicas(),
                self.ranks,
                self.replicas,
                self.state.regenerations(),
                self.now(),
            ));
            bar.tick();
        }
    }

    /// Prints a replica's line (once per rank) and remembers what its program last
    /// wrote to standard error.
    fn offer_line(&mut self, line: Line) {
        if let Some(Mark::Restored { number }) = line.mark {
            if line.stream == Stream::Out {
                self.input(Input::Restored {
                    id: ReplicaId::new(line.rank, line.replica),
                    inc: line.incarnation,
                    checkpoint: number,
                });
            }
        }
        if line.stream == Stream::Err && line.index.is_some() {
            let text = String::from_utf8_lossy(&line.text).trim_end().to_string();
            if !text.is_empty() {
                self.input(Input::LastWords {
                    id: ReplicaId::new(line.rank, line.replica),
                    inc: line.incarnation,
                    text,
                });
            }
        }
        match &self.status {
            Some(bar) => bar.suspend(|| self.dedup.offer(line)),
            None => self.dedup.offer(line),
        }
    }

    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::Line(line) => self.offer_line(line),
            Event::PipeEnd => self.open_pipes = self.open_pipes.saturating_sub(1),
            Event::Stdin { host, bytes } => {
                if let HostLink::Agent(link) = &mut self.hosts[host].link {
                    link.send(&match bytes {
                        Some(b) => ToAgent::Stdin(b),
                        None => ToAgent::StdinEnd,
                    });
                }
            }
            Event::Interrupted(sig) => self.input(Input::Interrupted(sig)),
            Event::Exited {
                id,
                inc,
                code,
                signal,
            } => self.input(Input::Exited {
                id,
                inc,
                code,
                signal,
            }),
            Event::Control(ControlEvent::Registered {
                id,
                inc,
                addr,
                writer,
            }) => {
                let actions = self
                    .state
                    .handle(Input::Registered { id, inc, addr }, self.now());
                let mut writer = Some(writer);
                for a in actions {
                    self.act(a, Some(&mut writer));
                }
            }
            Event::Control(ControlEvent::FilesLink { id, inc, writer }) => {
                let i = self.idx(id);
                self.files[i] = Some((inc, writer));
            }
            Event::Control(ControlEvent::Message { id, inc, msg }) => {
                self.input(Input::Message { id, inc, msg })
            }
            Event::Control(ControlEvent::Closed { id, inc }) => {
                self.input(Input::ControlClosed { id, inc })
            }
            Event::Control(ControlEvent::Silent {
                id,
                inc,
                silent_for,
            }) => self.input(Input::Silent {
                id,
                inc,
                silent_for,
            }),
            Event::Control(ControlEvent::Overdue { id, inc }) => self.ask_vitals(id, inc),
            Event::Control(ControlEvent::Fatal { why }) => self.input(Input::ControlFailed { why }),
            Event::Host(link, ev) => {
                if self.hosts[link.host].is_current(link) {
                    self.on_host_event(link.host, ev);
                } else {
                    log::debug!(
                        "host {}: an event of an old link ignored: {ev:?}",
                        link.host
                    );
                }
            }
            // volpexrun's own watcher watches this machine: host 0 of a local job.
            Event::Notice(report) => self.on_watcher(0, report),
        }
    }

    /// What the preemption notice watcher of `host` (volpexrun's own, or the host's
    /// agent's) reports.
    fn on_watcher(&mut self, host: usize, report: crate::notice::Report) {
        match report {
            crate::notice::Report::Say(text) => {
                let name = &self.state.hosts()[host].name;
                self.say(&format!("{name}: {text}"))
            }
            crate::notice::Report::Notice(seen) => self.input(Input::Notice {
                host,
                said: seen.said,
                deadline_in: seen.deadline_in,
            }),
        }
    }

    /// Asks the agent of the host of incarnation `inc` of `id`, whose heartbeat is overdue,
    /// what its process is doing (the control server takes the answer, see
    /// `control::Incarnations::take_host_said`).
    fn ask_vitals(&mut self, id: ReplicaId, inc: u32) {
        let Some(host) = self.state.incarnation(id, inc).map(|p| p.host) else {
            return;
        };
        if let HostLink::Agent(link) = &mut self.hosts[host].link {
            link.send(&ToAgent::Vitals {
                rank: id.rank,
                replica: id.replica,
                incarnation: inc,
            });
        }
    }

    /// The id of a new agent link to `host`: the events of every earlier link are stale
    /// from now on.
    fn next_link(&mut self, host: usize) -> LinkId {
        self.hosts[host].next_link(host)
    }

    fn on_host_event(&mut self, host: usize, ev: HostEvent) {
        match ev {
            HostEvent::Gone { stderr } => {
                let code = match &mut self.hosts[host].link {
                    HostLink::Agent(link) => {
                        // Give the remote shell a moment to exit so its status is known.
                        let until = Instant::now() + Duration::from_millis(500);
                        while !link.exited() && Instant::now() < until {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        link.child.try_wait().ok().flatten().and_then(|s| s.code())
                    }
                    HostLink::Local => None,
                };
                self.input(Input::LinkEnded { host, code, stderr });
            }
            HostEvent::Msg(msg) => match msg {
                FromAgent::Hello { hostname, pid } => self.input(Input::Hello {
                    host,
                    hostname,
                    pid,
                }),
                FromAgent::Started {
                    rank,
                    replica,
                    incarnation,
                    pid,
                } => self.input(Input::Started {
                    host,
                    rank,
                    replica,
                    inc: incarnation,
                    pid,
                }),
                FromAgent::StartFailed {
                    rank,
                    replica,
                    incarnation,
                    error,
                } => self.input(Input::StartFailed {
                    host,
                    rank,
                    replica,
                    inc: incarnation,
                    error,
                }),
                FromAgent::Fatal { error } => self.input(Input::HostLost { host, why: error }),
                FromAgent::PipeEnd => self.act(Action::ForgetPipes { host, count: 1 }, None),
                FromAgent::Watcher(report) => self.on_watcher(host, report),
                FromAgent::Exited {
                    rank,
                    replica,
                    incarnation,
                    code,
                    signal,
                } => self.input(Input::RemoteExited {
                    host,
                    rank,
                    replica,
                    inc: incarnation,
                    code,
                    signal,
                }),
                FromAgent::Vitals {
                    rank,
                    replica,
                    incarnation,
                    vitals,
                } => {
                    if rank < self.ranks && replica < self.replicas {
                        let i = self.idx(ReplicaId::new(rank, replica));
                        self.current.set_host_said(i, incarnation, vitals);
                    }
                }
                line @ FromAgent::Line { .. } => {
                    if let Some(l) = line.into_line() {
                        if l.rank < self.ranks {
                            self.offer_line(l);
                        }
                    }
                }
            },
        }
    }

    fn main_loop(&mut self) {
        loop {
            let now = self.now();
            if self.state.all_exited() {
                break;
            }
            let next = self.state.next_tick(now);
            let got = self.rx.recv_timeout(next.saturating_sub(now));
            // The wait ends by `next` at the latest, and the watchdog notes every tenth
            // of a second; much later than either means this process did not run
            // (SIGSTOP, a starved CPU), and its replicas may have given it up.
            let due = self.watchdog.as_ref().map_or(next, |w| next.min(w.due()));
            self.state.woke(due, self.now());
            if let Some((began, ended)) = self.watchdog.as_mut().and_then(|w| w.take_gap()) {
                self.state.woke(began, ended);
            }
            match got {
                Ok(ev) => self.on_event(ev),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
            self.tick();
            self.live();
        }
        self.live();
        if let Some(bar) = self.status.take() {
            bar.finish_and_clear();
        }
        // Every process is gone: agents exit on their own once their processes have and
        // no new incarnation may come (`EndAll` says so: a closed stdin may not reach an
        // agent run by srun); closing their stdin makes sure.
        for h in &mut self.hosts {
            if let HostLink::Agent(link) = &mut h.link {
                link.send(&ToAgent::EndAll);
                link.close();
            }
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
        // A final report handled while draining may bring failovers not said yet.
        self.live();
        let until = Instant::now() + DRAIN_GRACE;
        for h in &mut self.hosts {
            if let HostLink::Agent(link) = &mut h.link {
                while !link.exited() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(10));
                }
                link.kill();
            }
        }
    }

    fn finish(&mut self, args: &Args) -> i32 {
        let elapsed = self.now();
        let verdict = self.state.verdict();
        let hosts = self.state.hosts();
        let replicas = self.state.replicas();
        let report = Report {
            ranks: self.ranks,
            replicas: self.replicas,
            success: verdict.failure().is_none(),
            exit_code: verdict.exit_code(),
            elapsed_s: elapsed.as_secs_f64(),
            error: verdict.failure().map(str::to_string),
            failovers: replicas
                .iter()
                .filter_map(|p| p.stats.as_ref())
                .map(|s| s.failovers)
                .sum(),
            regenerations: self.state.regenerations(),
            regeneration_notes: self.state.regen_notes().to_vec(),
            processes: replicas
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let ended = self.feedback.ended_at(i);
                    let replaced = replicas
                        .iter()
                        .any(|q| q.id == p.id && q.incarnation > p.incarnation);
                    ReplicaReport::new(p, &hosts[p.host].name, ended, replaced)
                })
                .collect(),
            events: EventReport::by_time(
                self.feedback.records(),
                self.state
                    .notices()
                    .iter()
                    .flat_map(|n| {
                        n.noticed.iter().map(|&(id, inc)| {
                            EventReport::notice(
                                n,
                                &hosts[n.host].name,
                                (id, inc),
                                self.state.handed_over_at(id, inc),
                            )
                        })
                    })
                    .collect(),
            ),
        };
        eprint!("{}", report.text());
        if let Some(c) = self.state.chaos() {
            eprintln!("volpexrun: {}", chaos_summary(c));
        }
        if let Some(f) = verdict.failure() {
            eprintln!("volpexrun: error: {f}");
        }
        match args.report.as_ref().map(|path| (path, report.write(path))) {
            // The job's result is lost to whoever reads the report: the job fails.
            Some((path, Err(e))) => {
                eprintln!(
                    "volpexrun: error: --report {}: cannot write the report: {e}",
                    path.display()
                );
                match report.exit_code {
                    0 => exit_policy::EXIT_LAUNCHER,
                    code => code,
                }
            }
            Some((_, Ok(()))) | None => report.exit_code,
        }
    }
}

/// The line that ends a chaos run: what was injected, and the flags that replay it.
fn chaos_summary(c: &Chaos) -> String {
    let replay: Vec<String> = c
        .schedule()
        .iter()
        .map(|f| format!("--fault {f}"))
        .collect();
    let count =
        |pick: fn(&FaultAction) -> bool| c.schedule().iter().filter(|f| pick(&f.action)).count();
    format!(
        "chaos {}: injected {} kills, {} stops, {} exits armed; replay: {}",
        c.spec().seed,
        count(|a| matches!(a, FaultAction::Kill(_))),
        count(|a| matches!(a, FaultAction::Stop(_))),
        count(|a| matches!(a, FaultAction::ExitAfterSends(_))),
        if replay.is_empty() {
            "(nothing)".to_string()
        } else {
            replay.join(" ")
        }
    )
}

impl Drop for Job {
    fn drop(&mut self) {
        self.kill_all();
    }
}

#[cfg(test)]
mod tests {
    use super::{HostIo, HostLink};

    /// A lost host's old link ends late (its reader thread reports the ssh channel's end
    /// after the host was tried again): only the newest link's events count.
    #[test]
    fn only_the_newest_link_of_a_host_is_heard() {
        let mut io = HostIo {
            link: HostLink::Local,
            links: 0,
            open_pipes: 0,
        };
        let first = io.next_link(3);
        assert!(io.is_current(first));
        let second = io.next_link(3);
        assert_eq!((second.host, second.generation), (3, 1));
        assert!(!io.is_current(first), "the lost host's old link");
        assert!(io.is_current(second));
    }
}
