//! One job: starting the processes, the rendezvous, death notices, fault injection, the
//! exit policy and the summary.
//!
//! Every replica is a state machine (`ReplicaState`); the launcher's main loop takes
//! events (registrations, control messages, process exits, output lines, timers) and
//! moves replicas between states. The job succeeds when every rank has a replica that
//! finished; it fails, with one message naming the rank, when every replica of a rank is
//! gone. Owns the child processes: ends every process it started, by pid, on every path.
//!
//! Processes run on hosts (`HostRt`): this machine (the embedded default), or remote hosts
//! reached by ssh or srun, where a `volpexrun agent` starts them and reports their pids,
//! output and exits. A host that fails at start (ssh error, `--launch-timeout`) loses its
//! replicas; the job starts when every rank still has one. During the run a replica is
//! declared dead when its process exits, when its host's agent link ends, or when its
//! heartbeat connection has been silent for the heartbeat timeout (a host cut off).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
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

use crate::agent::{FromAgent, ProcSpec, StartSpec, ToAgent};
use crate::cli::{Args, Fault, FaultAction, LauncherKind, SSH_DEFAULT};
use crate::control::{self, Beats, ControlEvent};
use crate::hostfile::HostSpec;
use crate::output::{pump, Dedup, Line, Stream};
use crate::placement::{place, Placement};
use crate::remote::{start_agent, AgentLink, HostEvent, Shell};
use crate::report::{ReplicaReport, Report};

/// How long every replica has to register before the table goes out without it.
const RENDEZVOUS_TIMEOUT: Duration = Duration::from_secs(60);
/// Once every rank has a registered replica, how long the stragglers get.
const RENDEZVOUS_GRACE: Duration = Duration::from_secs(3);
/// How long finished replicas have to exit after SHUTDOWN before they are killed.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// How long to wait for output pipes to drain after the last process exited.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long remote hosts get to report the exits of processes they were told to end
/// before the launcher stops waiting for them (a host cut off never answers).
const REMOTE_END_GRACE: Duration = Duration::from_secs(5);

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
    /// From the agent link of host `.0`.
    Host(usize, HostEvent),
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
    /// Index into `Job::hosts`.
    host: usize,
    /// OS pid on its host; 0 until known.
    pid: u32,
    /// For a remote replica the launcher ended: when to stop waiting for its exit report
    /// (its host may be cut off).
    give_up_at: Option<Duration>,
    state: ReplicaState,
    exited: bool,
    addr: Option<String>,
    writer: Option<TcpStream>,
    stats: Option<ReplicaStats>,
}

impl Replica {
    /// A replica about to start on host `host` (pid 0 until known).
    fn starting(id: ReplicaId, host: usize, pid: u32) -> Replica {
        Replica {
            id,
            host,
            pid,
            give_up_at: None,
            state: ReplicaState::Starting,
            exited: false,
            addr: None,
            writer: None,
            stats: None,
        }
    }
}

struct Timer {
    at: Duration,
    fault: Fault,
}

/// How a host's processes are started.
enum HostLink {
    /// Children of volpexrun on this machine.
    Local,
    /// A `volpexrun agent` over ssh or srun.
    Agent(AgentLink),
}

/// Life of a host as the launcher sees it.
#[derive(Debug, Clone, PartialEq)]
enum HostState {
    /// The remote shell runs; the agent has not said hello yet.
    Launching,
    /// The agent runs (or the host is this machine).
    Up,
    /// Unreachable at start, or its link ended during the run.
    Lost(String),
}

struct HostRt {
    name: String,
    link: HostLink,
    state: HostState,
    /// Output pipes of this host not yet at EOF.
    open_pipes: usize,
}

/// Which launcher applies: the flag, else Slurm inside an allocation without hosts, else
/// ssh with hosts, else local.
fn launcher_kind(args: &Args) -> LauncherKind {
    match args.launcher {
        Some(k) => k,
        None if args.hostfile.is_some() || args.host.is_some() => LauncherKind::Ssh,
        None if crate::slurm::in_allocation() => LauncherKind::Slurm,
        None => LauncherKind::Local,
    }
}

/// Hosts from --hosts or --host, if given.
fn given_hosts(args: &Args) -> Result<Option<Vec<HostSpec>>, String> {
    match (&args.hostfile, &args.host) {
        (Some(f), _) => crate::hostfile::read_hostfile(f).map(Some),
        (None, Some(list)) => crate::hostfile::parse_host_list(list).map(Some),
        (None, None) => Ok(None),
    }
}

/// The launcher kind and, for remote launchers, the placement (checked before anything
/// starts).
fn placement_for(args: &Args) -> Result<(LauncherKind, Option<Placement>), String> {
    let kind = launcher_kind(args);
    let hosts = match kind {
        LauncherKind::Local => {
            if args.hostfile.is_some() || args.host.is_some() {
                return Err(
                    "--launcher local runs everything on this machine; drop --hosts/--host".into(),
                );
            }
            return Ok((kind, None));
        }
        LauncherKind::Ssh => given_hosts(args)?.ok_or_else(|| {
            "--launcher ssh needs hosts: --hosts FILE or --host a,b,c".to_string()
        })?,
        LauncherKind::Slurm => match given_hosts(args)? {
            Some(h) => h,
            None => crate::slurm::allocation_hosts()?,
        },
    };
    let p = place(
        &hosts,
        args.ranks,
        args.replicas,
        args.map,
        args.oversubscribe,
    )?;
    Ok((kind, Some(p)))
}

/// The program as a path that exists here (for staging): a name without a slash is
/// looked up in PATH, a relative path is taken from the working directory.
fn resolve_program(program: &str, wdir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let found = if program.contains('/') {
        let p = std::path::Path::new(program);
        Some(if p.is_absolute() {
            p.to_path_buf()
        } else {
            wdir.join(p)
        })
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(program))
                .find(|c| c.is_file())
        })
    };
    match found {
        Some(p) if p.is_file() => Ok(p),
        _ => Err(format!("--stage: cannot find {program} here to copy it")),
    }
}

/// Runs the job described by `args`; returns the process exit code.
pub fn run(args: &Args) -> i32 {
    if args.print_map {
        return match args.validate().and_then(|()| placement_for(args)) {
            Ok((_, Some(p))) => {
                print!("{}", p.describe());
                0
            }
            Ok((_, None)) => {
                println!(
                    "{} ranks x {} replicas, all on this machine (no hosts given)",
                    args.ranks, args.replicas
                );
                0
            }
            Err(e) => {
                eprintln!("volpexrun: {e}");
                1
            }
        };
    }
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
    hosts: Vec<HostRt>,
    launch_timeout: Duration,
    heartbeat_timeout: Duration,
    /// When the launcher started ending remote processes (job over or failed).
    ending_at: Option<Duration>,
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
        args.validate()?;
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
        let (program, prog_args) = args
            .command
            .split_first()
            .ok_or_else(|| "no program given".to_string())?;
        let (kind, placement) = placement_for(args)?;
        let key = new_job_key();
        let bind_ip = match (&placement, args.launcher_addr) {
            (_, Some(ip)) => ip,
            (None, None) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (Some(_), None) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        };
        let listener = TcpListener::bind(SocketAddr::new(bind_ip, 0))
            .map_err(|e| format!("cannot open the control port on {bind_ip}: {e}"))?;
        let control_addr = listener.local_addr().map_err(|e| e.to_string())?;
        let beats = Beats {
            interval: Duration::from_secs_f64(args.heartbeat_interval),
            timeout: Duration::from_secs_f64(args.heartbeat_timeout),
        };
        log::debug!(
            "heartbeat every {:?}, a silent process is dead after {:?}; peer TCP timeout {} s; launch timeout {} s",
            beats.interval,
            beats.timeout,
            args.peer_timeout,
            args.launch_timeout
        );
        let (tx, rx) = crossbeam_channel::unbounded();
        {
            let tx = tx.clone();
            let (ranks, replicas) = (args.ranks, args.replicas);
            std::thread::Builder::new()
                .name("volpexrun-accept".into())
                .spawn(move || control::serve(listener, key, ranks, replicas, beats, tx))
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
            hosts: Vec::new(),
            launch_timeout: Duration::from_secs_f64(args.launch_timeout),
            heartbeat_timeout: beats.timeout,
            ending_at: None,
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
        // Variables every process gets, wherever it runs.
        let mut common: Vec<(String, String)> = vec![
            (vars::SIZE.into(), args.ranks.to_string()),
            (vars::REPLICAS.into(), args.replicas.to_string()),
            (
                vars::HEARTBEAT_MS.into(),
                beats.interval.as_millis().to_string(),
            ),
            (
                vars::HEARTBEAT_TIMEOUT_MS.into(),
                beats.timeout.as_millis().to_string(),
            ),
            (
                volpex::transport::keepalive::PEER_TIMEOUT_VAR.into(),
                ((args.peer_timeout * 1000.0).round() as u64).to_string(),
            ),
        ];
        // Replicas wait for the address table at least as long as the launcher may take
        // to send it (see the rendezvous deadline in `main_loop`).
        let table_wait = RENDEZVOUS_TIMEOUT
            .max(Duration::from_secs_f64(args.launch_timeout) + RENDEZVOUS_GRACE)
            + Duration::from_secs(60);
        if table_wait > Duration::from_secs(120) {
            common.push((
                vars::RENDEZVOUS_TIMEOUT_MS.into(),
                table_wait.as_millis().to_string(),
            ));
        }
        let per_proc = |rank: u32, replica: u32| {
            let mut env = vec![
                (vars::RANK.to_string(), rank.to_string()),
                (vars::REPLICA.to_string(), replica.to_string()),
            ];
            for f in args
                .faults
                .iter()
                .filter(|f| f.rank == rank && f.replica == replica)
            {
                match f.action {
                    FaultAction::ExitAfterSends(n) => {
                        env.push((vars::FAULT_EXIT_AFTER_SENDS.into(), n.to_string()));
                    }
                    FaultAction::ExitAfterChoices(n) => {
                        env.push((vars::FAULT_EXIT_AFTER_CHOICES.into(), n.to_string()));
                    }
                    FaultAction::Kill(_) | FaultAction::Stop(_) | FaultAction::Cont(_) => {}
                }
            }
            env
        };
        match &placement {
            None => {
                common.push((vars::LAUNCHER.into(), control_addr.to_string()));
                common.push((vars::JOB_KEY.into(), key_hex(&key)));
                common.extend(exports.iter().cloned());
                job.hosts.push(HostRt {
                    name: "localhost".into(),
                    link: HostLink::Local,
                    state: HostState::Up,
                    open_pipes: 0,
                });
                let teams: Vec<u32> = (0..args.replicas).collect();
                let procs = args.ranks as usize * args.replicas as usize;
                let cpus = crate::binding::cpus_env(args.bind, procs, &teams, &common)?;
                let local_proc = |rank: u32, replica: u32| {
                    let mut env = per_proc(rank, replica);
                    if let Some((_, list)) = cpus.iter().find(|(t, _)| *t == replica) {
                        env.push((vars::CPUS.into(), list.clone()));
                    }
                    env
                };
                job.start_local(
                    program,
                    prog_args,
                    args.wdir.as_deref(),
                    &common,
                    &local_proc,
                    &tx,
                )?;
            }
            Some(p) => {
                let shell = Shell::new(
                    kind,
                    &args
                        .ssh_cmd
                        .clone()
                        .or_else(|| std::env::var("VOLPEX_SSH").ok())
                        .unwrap_or_else(|| SSH_DEFAULT.to_string()),
                )?;
                let launcher_ip = match (args.launcher_addr, kind) {
                    (Some(ip), _) => Some(ip.to_string()),
                    (None, LauncherKind::Slurm) => Some(crate::slurm::route_to(&p.hosts)?),
                    (None, LauncherKind::Ssh | LauncherKind::Local) => None,
                };
                common.push((vars::JOB_KEY.into(), key_hex(&key)));
                common.extend(exports.iter().cloned());
                job.start_remote(
                    args,
                    p,
                    &shell,
                    control_addr.port(),
                    launcher_ip,
                    &common,
                    &per_proc,
                    &tx,
                )?;
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

    fn start_local(
        &mut self,
        program: &str,
        prog_args: &[String],
        wdir: Option<&std::path::Path>,
        common: &[(String, String)],
        per_proc: &dyn Fn(u32, u32) -> Vec<(String, String)>,
        tx: &Sender<Event>,
    ) -> Result<(), String> {
        for rank in 0..self.ranks {
            for replica in 0..self.replicas {
                let id = ReplicaId::new(rank, replica);
                let mut cmd = Command::new(program);
                cmd.args(prog_args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .envs(common.iter().map(|(k, v)| (k, v)))
                    .envs(per_proc(rank, replica));
                if let Some(d) = wdir {
                    cmd.current_dir(d);
                }
                let mut child = match cmd.spawn() {
                    Ok(c) => c,
                    Err(e) => {
                        self.kill_all();
                        return Err(format!("cannot start {program}: {e}"));
                    }
                };
                let pid = child.id();
                if let Some(out) = child.stdout.take() {
                    self.open_pipes += 1;
                    spawn_pump(out, rank, Stream::Out, tx.clone());
                }
                if let Some(err) = child.stderr.take() {
                    self.open_pipes += 1;
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
                self.procs.push(Replica::starting(id, 0, pid));
                if let Err(e) = spawned {
                    self.kill_all();
                    return Err(format!("cannot watch process {pid}: {e}"));
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn start_remote(
        &mut self,
        args: &Args,
        p: &Placement,
        shell: &Shell,
        port: u16,
        launcher_ip: Option<String>,
        common: &[(String, String)],
        per_proc: &dyn Fn(u32, u32) -> Vec<(String, String)>,
        tx: &Sender<Event>,
    ) -> Result<(), String> {
        let (program, prog_args) = args
            .command
            .split_first()
            .ok_or_else(|| "no program given".to_string())?;
        let wdir = match &args.wdir {
            Some(d) => d.clone(),
            None => std::env::current_dir()
                .map_err(|e| format!("cannot tell the current directory: {e}"))?,
        };
        let me =
            std::env::current_exe().map_err(|e| format!("cannot tell where volpexrun is: {e}"))?;
        for x in 0..self.ranks {
            for k in 0..self.replicas {
                self.procs
                    .push(Replica::starting(ReplicaId::new(x, k), p.host(x, k), 0));
            }
        }
        for h in &p.hosts {
            self.hosts.push(HostRt {
                name: h.name.clone(),
                link: HostLink::Local,
                state: HostState::Launching,
                open_pipes: 0,
            });
        }
        // Staging: copies of the program and of volpexrun in a job directory per host.
        let stage_dir = args
            .stage
            .then(|| format!("/tmp/volpex-stage-{}", &key_hex(&new_job_key())[..16]));
        let used: Vec<usize> = (0..p.hosts.len())
            .filter(|&h| !p.on_host(h).is_empty())
            .collect();
        let mut staged_program = program.clone();
        let mut agent_path = me.to_string_lossy().into_owned();
        if let Some(dir) = &stage_dir {
            let prog_path = resolve_program(program, &wdir)?;
            let name = |path: &std::path::Path| {
                path.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            staged_program = format!("{dir}/{}", name(&prog_path));
            agent_path = format!("{dir}/{}", name(&me));
            let files = [me.as_path(), prog_path.as_path()];
            let results = crate::remote::stage_all(
                shell,
                &used
                    .iter()
                    .map(|&h| p.hosts[h].name.clone())
                    .collect::<Vec<_>>(),
                &files,
                dir,
                self.launch_timeout,
            );
            for (&h, r) in used.iter().zip(results) {
                if let Err(e) = r {
                    self.host_lost(h, format!("cannot stage the program: {e}"));
                }
            }
        }
        for &h in &used {
            if self.hosts[h].state != HostState::Launching {
                continue;
            }
            let procs: Vec<ProcSpec> = p
                .on_host(h)
                .into_iter()
                .map(|(rank, replica)| ProcSpec {
                    rank,
                    replica,
                    env: per_proc(rank, replica),
                })
                .collect();
            let host_procs = procs.len();
            let env = common.to_vec();
            let spec = StartSpec {
                host: p.hosts[h].name.clone(),
                program: staged_program.clone(),
                args: prog_args.to_vec(),
                wdir: wdir.to_string_lossy().into_owned(),
                env,
                launcher_port: port,
                launcher_ip: launcher_ip.clone(),
                stage_dir: stage_dir.clone(),
                bind: args.bind,
                procs,
            };
            match start_agent(
                shell,
                &p.hosts[h].name,
                h,
                &agent_path,
                ToAgent::Start(Box::new(spec)),
                tx.clone(),
            ) {
                Ok(link) => {
                    self.hosts[h].link = HostLink::Agent(link);
                    self.hosts[h].open_pipes = 2 * host_procs;
                    self.open_pipes += 2 * host_procs;
                }
                Err(e) => self.host_lost(h, e),
            }
        }
        self.check_start_coverage();
        match &self.failure {
            Some(f) => {
                let f = f.clone();
                self.end_remote_now();
                Err(f)
            }
            None => Ok(()),
        }
    }

    fn idx(&self, id: ReplicaId) -> usize {
        (id.rank * self.replicas + id.replica) as usize
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn signal(&mut self, id: ReplicaId, sig: Signal) {
        let i = self.idx(id);
        let (host, pid, exited) = (self.procs[i].host, self.procs[i].pid, self.procs[i].exited);
        if exited {
            return;
        }
        match &mut self.hosts[host].link {
            HostLink::Local => {
                if let Ok(pid) = i32::try_from(pid) {
                    if pid > 0 {
                        let _ = kill(Pid::from_raw(pid), sig);
                    }
                }
            }
            HostLink::Agent(link) => {
                link.send(&ToAgent::Signal {
                    rank: id.rank,
                    replica: id.replica,
                    signal: sig as i32,
                });
            }
        }
    }

    /// Kills every process: local ones by pid, remote ones through their agent (which
    /// then exits); remote hosts get `REMOTE_END_GRACE` to report the exits.
    fn kill_all(&mut self) {
        for p in &self.procs {
            if !p.exited && matches!(self.hosts[p.host].link, HostLink::Local) {
                if let Ok(pid) = i32::try_from(p.pid) {
                    if pid > 0 {
                        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                    }
                }
            }
        }
        for h in &mut self.hosts {
            if let HostLink::Agent(link) = &mut h.link {
                link.send(&ToAgent::EndAll);
            }
        }
        if self.ending_at.is_none() {
            self.ending_at = Some(self.now());
        }
    }

    /// Stops waiting for remote hosts: kills every remote-shell process (our children,
    /// by pid) and counts their replicas as gone.
    fn end_remote_now(&mut self) {
        for h in 0..self.hosts.len() {
            if let HostLink::Agent(link) = &mut self.hosts[h].link {
                link.kill();
                self.open_pipes = self.open_pipes.saturating_sub(self.hosts[h].open_pipes);
                self.hosts[h].open_pipes = 0;
                for p in self.procs.iter_mut().filter(|p| p.host == h) {
                    p.exited = true;
                    p.writer = None;
                }
            }
        }
    }

    /// A host is gone (unreachable at start, or its agent link ended): its replicas that
    /// were still alive failed.
    fn host_lost(&mut self, h: usize, why: String) {
        if matches!(self.hosts[h].state, HostState::Lost(_)) {
            return;
        }
        let starting = self.hosts[h].state == HostState::Launching;
        self.hosts[h].state = HostState::Lost(why.clone());
        if let HostLink::Agent(link) = &mut self.hosts[h].link {
            link.kill();
        }
        self.open_pipes = self.open_pipes.saturating_sub(self.hosts[h].open_pipes);
        self.hosts[h].open_pipes = 0;
        let name = self.hosts[h].name.clone();
        let mut lost = Vec::new();
        for i in 0..self.procs.len() {
            if self.procs[i].host != h {
                continue;
            }
            if self.procs[i].state.alive() {
                lost.push(self.procs[i].id.to_string());
                let detail = if starting {
                    format!("host {name} unreachable: {why}")
                } else {
                    format!("host {name} lost: {why}")
                };
                self.mark_dead(i, ReplicaState::Failed(detail));
            }
            self.procs[i].exited = true;
            self.procs[i].writer = None;
        }
        if self.failure.is_none() && self.shutdown_at.is_none() && !lost.is_empty() {
            eprintln!(
                "volpexrun: host {name} {}: {why}; its replicas {} are lost",
                if starting { "unreachable" } else { "lost" },
                lost.join(" ")
            );
        }
        if !self.table_sent {
            self.check_start_coverage();
        }
    }

    /// Before the job runs: every rank needs a replica on a host that is not lost.
    fn check_start_coverage(&mut self) {
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
                HostState::Launching | HostState::Up => None,
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
            None,
        );
    }

    /// Hosts whose agent has not said hello within the launch timeout are unreachable.
    fn check_launch_timeouts(&mut self, now: Duration) {
        if now < self.launch_timeout {
            return;
        }
        for h in 0..self.hosts.len() {
            if self.hosts[h].state == HostState::Launching
                && matches!(self.hosts[h].link, HostLink::Agent(_))
            {
                let why = format!(
                    "no answer within --launch-timeout {:.1} s",
                    self.launch_timeout.as_secs_f64()
                );
                self.host_lost(h, why);
            }
        }
    }

    fn on_host_event(&mut self, h: usize, ev: HostEvent) {
        match ev {
            HostEvent::Gone { stderr } => {
                let ended = self.failure.is_some() || self.shutdown_at.is_some();
                let (code, running) = match &mut self.hosts[h].link {
                    HostLink::Agent(link) => {
                        // Give the remote shell a moment to exit so its status is known.
                        let until = Instant::now() + Duration::from_millis(500);
                        while !link.exited() && Instant::now() < until {
                            std::thread::sleep(Duration::from_millis(10));
                        }
                        (
                            link.child.try_wait().ok().flatten().and_then(|s| s.code()),
                            self.procs.iter().any(|p| p.host == h && !p.exited),
                        )
                    }
                    HostLink::Local => (None, false),
                };
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
                self.host_lost(h, why);
            }
            HostEvent::Msg(msg) => match msg {
                FromAgent::Hello { hostname, pid } => {
                    log::debug!(
                        "host {}: agent up as {hostname} (pid {pid}) after {:.2} s",
                        self.hosts[h].name,
                        self.now().as_secs_f64()
                    );
                    if self.hosts[h].state == HostState::Launching {
                        self.hosts[h].state = HostState::Up;
                    }
                }
                FromAgent::Started { rank, replica, pid } => {
                    if let Some(i) = self.remote_idx(h, rank, replica) {
                        self.procs[i].pid = pid;
                    }
                }
                FromAgent::StartFailed {
                    rank,
                    replica,
                    error,
                } => {
                    if let Some(i) = self.remote_idx(h, rank, replica) {
                        eprintln!("volpexrun: {error}");
                        self.procs[i].exited = true;
                        self.mark_dead(i, ReplicaState::Failed(error));
                        self.hosts[h].open_pipes = self.hosts[h].open_pipes.saturating_sub(2);
                        self.open_pipes = self.open_pipes.saturating_sub(2);
                        if !self.table_sent {
                            self.check_start_coverage();
                        }
                    }
                }
                FromAgent::Fatal { error } => self.host_lost(h, error),
                FromAgent::PipeEnd => {
                    self.hosts[h].open_pipes = self.hosts[h].open_pipes.saturating_sub(1);
                    self.open_pipes = self.open_pipes.saturating_sub(1);
                }
                FromAgent::Exited {
                    rank,
                    replica,
                    code,
                    signal,
                } => {
                    if self.remote_idx(h, rank, replica).is_some() {
                        self.on_event(Event::Exited {
                            id: ReplicaId::new(rank, replica),
                            code,
                            signal,
                        });
                    }
                }
                line @ FromAgent::Line { .. } => {
                    if let Some(l) = line.into_line() {
                        if l.rank < self.ranks {
                            self.dedup.offer(&l);
                        }
                    }
                }
            },
        }
    }

    /// The replica an agent names, if it really runs on that host.
    fn remote_idx(&self, h: usize, rank: u32, replica: u32) -> Option<usize> {
        if rank >= self.ranks || replica >= self.replicas {
            return None;
        }
        let i = self.idx(ReplicaId::new(rank, replica));
        (self.procs[i].host == h).then_some(i)
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
            self.check_launch_timeouts(now);
            if self.ending_at.is_some_and(|t| now >= t + REMOTE_END_GRACE) {
                self.end_remote_now();
            }
            for p in self.procs.iter_mut() {
                if !p.exited && p.give_up_at.is_some_and(|t| now >= t) {
                    log::info!(
                        "replica {} did not report its end; not waiting for it",
                        p.id
                    );
                    p.exited = true;
                    p.writer = None;
                }
            }
            if let Some(t) = job_timeout {
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
                        None,
                    );
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
                // Remote hosts may take their launch timeout to come up.
                let grace = if self
                    .hosts
                    .iter()
                    .any(|h| matches!(h.link, HostLink::Agent(_)))
                {
                    RENDEZVOUS_GRACE.max(self.launch_timeout)
                } else {
                    RENDEZVOUS_GRACE
                };
                let grace_over = self.covered_at.is_some_and(|t| now >= t + grace);
                // A long --launch-timeout stretches the rendezvous with it.
                let deadline = RENDEZVOUS_TIMEOUT.max(self.launch_timeout + RENDEZVOUS_GRACE);
                if everyone || grace_over || now >= deadline {
                    self.send_table();
                }
            }
            self.check_progress(now);
        }
        // Every process is gone: agents exit on their own once their processes have;
        // closing their stdin makes sure.
        for h in &mut self.hosts {
            if let HostLink::Agent(link) = &mut h.link {
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
            self.fail(
                format!(
                    "rank {rank} lost: all {} replicas failed ({})",
                    self.replicas,
                    why.join("; ")
                ),
                Some(rank),
            );
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
                                let h = self.procs[i].host;
                                if matches!(self.hosts[h].link, HostLink::Agent(_)) {
                                    self.procs[i].give_up_at = Some(now + REMOTE_END_GRACE);
                                }
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
                    if self.ending_at.is_none() {
                        self.ending_at = Some(now);
                    }
                }
            }
        }
    }

    /// Ends the job as failed; `explains` is a lost rank whose errors still print.
    fn fail(&mut self, why: String, explains: Option<u32>) {
        self.failure = Some(why);
        self.dedup.mute(explains);
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
            if sig == Signal::SIGKILL {
                // Dead from now on, whatever it reported before its exit shows: a replica
                // that had just finalized must not complete its rank (and end the
                // slower siblings) while the signal is on its way.
                let i = self.idx(id);
                self.mark_dead(
                    i,
                    ReplicaState::Failed("killed by SIGKILL (fault injection)".into()),
                );
            }
        }
    }

    fn send_table(&mut self) {
        self.table_sent = true;
        log::info!(
            "rendezvous complete after {:.3} s: {} of {} replicas registered",
            self.now().as_secs_f64(),
            self.procs.iter().filter(|p| p.addr.is_some()).count(),
            self.procs.len()
        );
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
                    self.fail(format!("interrupted by {name}; ended every process"), None);
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
                    ToLauncher::Heartbeat => {
                        log::warn!("replica {id} sent a heartbeat on its control connection")
                    }
                }
            }
            Event::Control(ControlEvent::Closed { id }) => {
                let i = self.idx(id);
                self.procs[i].writer = None;
            }
            Event::Control(ControlEvent::Silent { id, silent_for }) => {
                let i = self.idx(id);
                if self.procs[i].state.alive() {
                    let h = self.procs[i].host;
                    let why = format!(
                        "silent on host {}: no heartbeat for {:.1} s (--heartbeat-timeout {:.1} s)",
                        self.hosts[h].name,
                        silent_for.as_secs_f64(),
                        self.heartbeat_timeout.as_secs_f64()
                    );
                    log::warn!("replica {id} {why}; declared dead");
                    self.mark_dead(i, ReplicaState::Failed(why));
                    self.signal(id, Signal::SIGKILL);
                    if matches!(self.hosts[h].link, HostLink::Agent(_)) {
                        // A host cut off never reports the exit: stop waiting for it.
                        self.procs[i].exited = true;
                        self.procs[i].writer = None;
                    }
                }
            }
            Event::Host(h, ev) => self.on_host_event(h, ev),
        }
    }

    /// Replica `by` found replica `rank.replica` unreachable or silent while it needed it
    /// for choices (its rank's silent leader, a sibling that does not take its choices, or
    /// any replica that does not answer its takeover, see `volpex::pull::foreign`): end it
    /// and announce its death, so that only one replica of a rank ever makes choices and
    /// no takeover waits forever. A replica that already finished is left alone.
    fn fence(&mut self, by: ReplicaId, rank: u32, replica: u32) {
        if rank >= self.ranks || replica >= self.replicas || ReplicaId::new(rank, replica) == by {
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
                .map(|p| {
                    ReplicaReport::new(
                        p.id,
                        &self.hosts[p.host].name,
                        p.pid,
                        &p.state,
                        p.stats.clone(),
                    )
                })
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
