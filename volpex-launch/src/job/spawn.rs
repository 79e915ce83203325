//! Starting a job: checking the command line against the hosts, the control server and
//! signal threads, then the processes: children of volpexrun on this machine, or a
//! `volpexrun agent` per host over ssh or srun (after staging the binaries if asked).
//!
//! Owns the child processes it starts until it hands them to the driver: on failure it
//! ends what it started. Must never decide about replicas: a host that cannot be reached
//! is an input to the state machine, which decides whether the job can start.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use volpex_proto::handshake::new_job_key;
use volpex_proto::launch::{key_hex, vars};
use volpex_proto::message::ReplicaId;

use super::env::{self, Var};
use super::replica::HostState;
use super::state::{Config, JobState};
use super::step::Input;
use super::{HostIo, HostLink, Job, LocalLaunch, RemoteLaunch};
use crate::agent::{ProcSpec, StartSpec, ToAgent};
use crate::chaos::Chaos;
use crate::cli::{Args, LauncherKind, SSH_DEFAULT};
use crate::control::{self, Beats, Incarnations};
use crate::error::StartError;
use crate::event::Event;
use crate::hostfile::HostSpec;
use crate::output::{pump, Dedup, Stream};
use crate::placement::{place, Placement};
use crate::remote::{start_agent, Shell};

/// `--print-map`: prints where every replica would run; returns the exit code.
pub fn print_map(args: &Args) -> i32 {
    match args
        .validate()
        .map_err(StartError::from)
        .and_then(|()| placement_for(args))
    {
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
            super::exit_policy::start_error_code(&e)
        }
    }
}

/// Which launcher applies: the flag, else ssh with hosts, else Slurm inside an allocation,
/// else ssh over a hostfile the environment names (`operator`: what an MPI Operator's
/// launcher pod, or a site's `mpirun` setup, gives), else local.
fn launcher_kind(args: &Args) -> LauncherKind {
    match args.launcher {
        Some(k) => k,
        None if args.hostfile.is_some() || args.host.is_some() => LauncherKind::Ssh,
        None if crate::slurm::in_allocation() => LauncherKind::Slurm,
        None if crate::operator::hostfile().is_some() => LauncherKind::Ssh,
        None => LauncherKind::Local,
    }
}

/// Hosts from --hosts or --host, if given, else (with `from_env`) from the hostfile the
/// environment names; with `-N`, each gets exactly that many slots.
fn given_hosts(args: &Args, from_env: bool) -> Result<Option<Vec<HostSpec>>, StartError> {
    let mut hosts = match (&args.hostfile, &args.host) {
        (Some(f), _) => crate::hostfile::read_hostfile(f)?,
        (None, Some(list)) => crate::hostfile::parse_host_list(list)?,
        (None, None) => match crate::operator::hostfile().filter(|_| from_env) {
            Some(f) => {
                let hosts = crate::hostfile::read_hostfile(&f.value)
                    .map_err(|source| StartError::EnvHostfile { var: f.var, source })?;
                eprintln!(
                    "volpexrun: no --hosts given: running over the hostfile {} that {} names",
                    f.value.display(),
                    f.var
                );
                hosts
            }
            None => return Ok(None),
        },
    };
    if let Some(per_host) = args.npernode {
        for h in &mut hosts {
            h.slots = per_host;
        }
    }
    Ok(Some(hosts))
}

/// The launcher kind and, for remote launchers, the placement (checked before anything
/// starts).
fn placement_for(args: &Args) -> Result<(LauncherKind, Option<Placement>), StartError> {
    let kind = launcher_kind(args);
    let hosts = match kind {
        LauncherKind::Local => {
            if args.hostfile.is_some() || args.host.is_some() {
                return Err(StartError::LocalWithHosts);
            }
            return Ok((kind, None));
        }
        LauncherKind::Ssh => given_hosts(args, true)?.ok_or(StartError::SshWithoutHosts)?,
        LauncherKind::Slurm => match given_hosts(args, false)? {
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

/// The remote shell when neither `--ssh-cmd` nor `VOLPEX_SSH` says: `SSH_DEFAULT`, with
/// the arguments the environment gives an `mpirun` for it (`operator`), if any.
fn default_ssh() -> String {
    match crate::operator::ssh_args() {
        Some(extra) => format!("{SSH_DEFAULT} {}", extra.value),
        None => SSH_DEFAULT.to_string(),
    }
}

/// Before a local job starts: `--wdir` is a directory, and the program, given as a path
/// (taken from `--wdir`, as the processes will), is not one (exec would only say
/// "Permission denied").
fn check_local_start(program: &str, wdir: Option<&Path>) -> Result<(), StartError> {
    if let Some(dir) = wdir {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(StartError::Wdir {
                    path: dir.to_path_buf(),
                    source: std::io::ErrorKind::NotADirectory.into(),
                })
            }
            Err(source) => {
                return Err(StartError::Wdir {
                    path: dir.to_path_buf(),
                    source,
                })
            }
        }
    }
    if program.contains('/') && wdir.unwrap_or(Path::new(".")).join(program).is_dir() {
        return Err(StartError::ProgramIsDirectory {
            program: program.into(),
        });
    }
    Ok(())
}

/// The program as a path that exists here (for staging): a name without a slash is
/// looked up in PATH, a relative path is taken from the working directory.
fn resolve_program(program: &str, wdir: &Path) -> Result<PathBuf, StartError> {
    let found = if program.contains('/') {
        let p = Path::new(program);
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
        _ => Err(StartError::ProgramNotFound {
            program: program.into(),
        }),
    }
}

/// A sink for volpexrun's stdin bound for a remote host's agent: the bytes go through the
/// driver, which alone writes on the agent's link (`Event::Stdin`); dropping it says the
/// input ended.
struct ToAgentStdin {
    host: usize,
    tx: Sender<Event>,
}

impl std::io::Write for ToAgentStdin {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tx
            .send(Event::Stdin {
                host: self.host,
                bytes: Some(buf.to_vec()),
            })
            .map_err(|_| std::io::Error::other("the job is over"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for ToAgentStdin {
    fn drop(&mut self) {
        let _ = self.tx.send(Event::Stdin {
            host: self.host,
            bytes: None,
        });
    }
}

/// The status line on a terminal: a spinner whose message the driver keeps up to date;
/// `None` with `--quiet` or when stderr is not a terminal.
fn status_line(quiet: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        None,
        indicatif::ProgressDrawTarget::stderr_with_hz(4),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} volpexrun: {msg}") {
        bar.set_style(style);
    }
    Some(bar)
}

fn spawn_pump<R: std::io::Read + Send + 'static>(
    pipe: R,
    id: ReplicaId,
    inc: u32,
    stream: Stream,
    tx: Sender<Event>,
) {
    let who = (id.rank, id.replica, inc);
    let _ = std::thread::Builder::new()
        .name("volpexrun-output".into())
        .spawn(move || pump(pipe, who, stream, tx, Event::Line, Event::PipeEnd));
}

impl Job {
    /// Checks the command line, opens the control port and starts every process.
    /// `chaos` is `--chaos`'s generator, its exit faults already among `args.faults`.
    pub(super) fn start(args: &Args, chaos: Option<Chaos>) -> Result<Job, StartError> {
        args.validate()?;
        let exports = args
            .export
            .iter()
            .map(|s| crate::cli::parse_export(s))
            .collect::<Result<Vec<_>, _>>()?;
        for f in &args.faults {
            if f.rank >= args.ranks || f.replica >= args.replicas {
                return Err(StartError::FaultOutsideJob {
                    rank: f.rank,
                    replica: f.replica,
                    ranks: args.ranks,
                    replicas: args.replicas,
                });
            }
        }
        let (program, prog_args) = args.command.split_first().ok_or(StartError::NoProgram)?;
        let (kind, placement) = placement_for(args)?;
        if placement.is_none() {
            check_local_start(program, args.wdir.as_deref())?;
        }
        if let Some(path) = &args.report {
            super::report::Report::check_writable(path).map_err(|source| StartError::Report {
                path: path.clone(),
                source,
            })?;
        }
        let key = new_job_key();
        let bind_ip = match (&placement, args.launcher_addr) {
            (_, Some(ip)) => ip,
            (None, None) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (Some(_), None) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        };
        let listener = TcpListener::bind(SocketAddr::new(bind_ip, 0)).map_err(|source| {
            StartError::ControlPort {
                ip: bind_ip,
                source,
            }
        })?;
        let control_addr = listener.local_addr().map_err(StartError::ControlAddr)?;
        // A local job crowds this machine: its heartbeat threads may starve.
        let per_cpu = match &placement {
            None => {
                let cpus = crate::affinity::allowed_cpus().map_or(1, |c| c.len());
                f64::from(args.ranks) * f64::from(args.replicas) / cpus.max(1) as f64
            }
            Some(_) => 1.0,
        };
        let beats = Beats {
            interval: Duration::from_secs_f64(args.heartbeat_interval),
            timeout: Duration::from_secs_f64(args.heartbeat_timeout_for(per_cpu)),
        };
        if args.heartbeat_timeout.is_none() && per_cpu > 4.0 {
            log::info!(
                "{per_cpu:.0} processes per CPU: a process is declared dead after {:?} of silence",
                beats.timeout
            );
        }
        log::debug!(
            "heartbeat every {:?}, a silent process is dead after {:?}; peer TCP timeout {} s; launch timeout {} s",
            beats.interval,
            beats.timeout,
            args.peer_timeout,
            args.launch_timeout
        );
        let (tx, rx) = crossbeam_channel::unbounded();
        let current = Incarnations::new(args.ranks as usize * args.replicas as usize);
        {
            let tx = tx.clone();
            let current = current.clone();
            let (ranks, replicas) = (args.ranks, args.replicas);
            std::thread::Builder::new()
                .name("volpexrun-accept".into())
                .spawn(move || control::serve(listener, key, ranks, replicas, beats, current, tx))
                .map_err(StartError::Thread)?;
        }
        {
            use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
            // SIGUSR1 and SIGUSR2 are forwarded and the job goes on (as mpirun does);
            // left at their default, they ended volpexrun alone and orphaned the job.
            let mut signals =
                signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2])
                    .map_err(StartError::Signals)?;
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
                .map_err(StartError::Thread)?;
        }
        // A local job's machine is watched here; a remote host's by its agent.
        if placement.is_none() {
            let tx = tx.clone();
            crate::notice::start(args.preemption_notice.for_host("localhost"), move |r| {
                tx.send(Event::Notice(r)).is_ok()
            })
            .map_err(StartError::Thread)?;
        }
        let config = Config {
            ranks: args.ranks,
            replicas: args.replicas,
            launch_timeout: Duration::from_secs_f64(args.launch_timeout),
            heartbeat_timeout: beats.timeout,
            job_timeout: args.timeout.map(Duration::from_secs_f64),
            faults: args.faults.clone(),
            chaos,
            regenerate: args.regenerate,
            max_regenerations: args.max_regenerations,
            kill_grace: Duration::from_secs_f64(args.kill_grace),
        };
        let state = match &placement {
            None => JobState::new(config, vec![("localhost".into(), HostState::Up)], |_, _| 0),
            Some(p) => {
                // A host where nothing is placed may take new incarnations later: its
                // agent starts then (not with --stage, whose copies are made at start).
                let spare = args.regenerate != crate::cli::Regenerate::Never && !args.stage;
                let mut st = JobState::new(
                    config,
                    (0..p.hosts.len())
                        .map(|h| {
                            let idle = spare && p.on_host(h).is_empty();
                            let state = if idle {
                                HostState::Idle
                            } else {
                                HostState::Launching
                            };
                            (p.hosts[h].name.clone(), state)
                        })
                        .collect(),
                    |x, k| p.host(x, k),
                );
                st.set_slots(p.hosts.iter().map(|h| h.slots).collect());
                st
            }
        };
        let procs = args.ranks as usize * args.replicas as usize;
        let start = Instant::now();
        let mut job = Job {
            hosts: (0..state.hosts().len())
                .map(|_| HostIo {
                    link: HostLink::Local,
                    links: 0,
                    open_pipes: 0,
                })
                .collect(),
            state,
            start,
            rx,
            writers: (0..procs).map(|_| None).collect(),
            files: (0..procs).map(|_| None).collect(),
            current,
            tx: tx.clone(),
            local: None,
            remote: None,
            dedup: Dedup::new(args.ranks, args.tag_output),
            open_pipes: 0,
            ranks: args.ranks,
            replicas: args.replicas,
            rebind: None,
            stdin: None,
            feedback: Default::default(),
            quiet: args.quiet,
            status: status_line(args.quiet),
            watchdog: super::watchdog::Watchdog::start(start),
        };
        if let crate::cli::StdinTarget::Rank(r) = args.stdin {
            let hub =
                crate::stdin::StdinHub::start(std::io::stdin()).map_err(StartError::Thread)?;
            job.stdin = Some((r, hub));
        }
        let mut common = env::common(args, beats);
        match &placement {
            None => {
                env::add_job(&mut common, Some(control_addr), &key, &exports);
                let all: Vec<(u32, u32)> = (0..args.ranks)
                    .flat_map(|k| (0..args.replicas).map(move |t| (k, t)))
                    .collect();
                let cpus = crate::binding::cpus_env(args.bind, &all, &common)?;
                if !cpus.is_empty() {
                    job.rebind = Some(args.bind);
                    job.state.rebind_on_deaths();
                }
                job.local = Some(LocalLaunch {
                    program: program.clone(),
                    args: prog_args.to_vec(),
                    wdir: args.wdir.clone(),
                    common,
                    cpus,
                });
                for rank in 0..args.ranks {
                    for replica in 0..args.replicas {
                        let id = ReplicaId::new(rank, replica);
                        let env = env::per_proc(&args.faults, rank, replica);
                        if let Err(e) = job.spawn_local(id, 0, env) {
                            job.kill_all();
                            return Err(e);
                        }
                    }
                }
            }
            Some(p) => {
                // Each agent knows whether it bound its host's teams; it binds them again
                // after a death on its host (`ToAgent::Rebind`).
                if args.bind != crate::binding::Bind::None {
                    job.state.rebind_on_deaths();
                }
                let shell = Shell::new(
                    kind,
                    &args
                        .ssh_cmd
                        .clone()
                        .or_else(|| std::env::var("VOLPEX_SSH").ok())
                        .unwrap_or_else(default_ssh),
                )?;
                let launcher_ip = match (args.launcher_addr, kind) {
                    (Some(ip), _) => Some(ip.to_string()),
                    (None, LauncherKind::Slurm) => Some(crate::slurm::route_to(&p.hosts)?),
                    (None, LauncherKind::Ssh | LauncherKind::Local) => None,
                };
                env::add_job(&mut common, None, &key, &exports);
                job.start_remote(
                    args,
                    p,
                    &shell,
                    control_addr.port(),
                    launcher_ip,
                    &common,
                    &tx,
                )?;
            }
        }
        Ok(job)
    }

    /// Starts incarnation `inc` of replica `id` on this machine with its own variables
    /// `env` (besides the common ones and its team's CPUs), its pipes and its reaper
    /// reporting to the driver.
    pub(super) fn spawn_local(
        &mut self,
        id: ReplicaId,
        inc: u32,
        env: Vec<Var>,
    ) -> Result<(), StartError> {
        let Some(l) = self.local.as_ref() else {
            return Err(StartError::NoProgram);
        };
        let hub = self
            .stdin
            .as_ref()
            .filter(|(rank, _)| *rank == id.rank)
            .map(|(_, hub)| hub.clone());
        let mut cmd = Command::new(&l.program);
        cmd.args(&l.args)
            .stdin(if hub.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .envs(l.common.iter().map(|(k, v)| (k, v)))
            .envs(env);
        if let Some(list) = l.cpus.cpus_of(id.replica, id.rank) {
            cmd.env(vars::CPUS, volpex_proto::launch::format_cpus(&list));
        }
        if let Some(d) = &l.wdir {
            cmd.current_dir(d);
        }
        // Its own process group, as a remote host's agent has: a Ctrl-C on the terminal
        // reaches volpexrun only, which forwards it to every process once the job is
        // marked as ending (a replica killed by the terminal's SIGINT before volpexrun
        // heard of it would look like a failure to regenerate).
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| StartError::Spawn {
            program: l.program.clone(),
            source: e,
        })?;
        let pid = child.id();
        self.current.set_local_pid(self.idx(id), inc, pid);
        let tx = self.tx.clone();
        if let (Some(hub), Some(pipe)) = (hub, child.stdin.take()) {
            if let Err(e) = hub.attach(pipe) {
                log::warn!("replica {id}: no thread for its standard input: {e}");
            }
        }
        if let Some(out) = child.stdout.take() {
            self.open_pipes += 1;
            spawn_pump(out, id, inc, Stream::Out, tx.clone());
        }
        if let Some(err) = child.stderr.take() {
            self.open_pipes += 1;
            spawn_pump(err, id, inc, Stream::Err, tx.clone());
        }
        let spawned = std::thread::Builder::new()
            .name("volpexrun-reaper".into())
            .spawn(move || {
                let (code, signal) = match child.wait() {
                    Ok(st) => (st.code(), st.signal()),
                    Err(_) => (None, None),
                };
                let _ = tx.send(Event::Exited {
                    id,
                    inc,
                    code,
                    signal,
                });
            });
        self.input(Input::Spawned { id, inc, pid });
        spawned.map_err(|e| StartError::Watch { pid, source: e })?;
        Ok(())
    }

    /// volpexrun's stdin (`--stdin`) goes to the agent of `host` too, from the start: the
    /// agent hands it to its replicas of that rank.
    pub(super) fn stdin_to_agent(&mut self, host: usize) {
        if let Some((_, hub)) = &self.stdin {
            let sink = ToAgentStdin {
                host,
                tx: self.tx.clone(),
            };
            if let Err(e) = hub.attach(sink) {
                log::warn!("no thread for the standard input of host {host}: {e}");
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn start_remote(
        &mut self,
        args: &Args,
        p: &Placement,
        shell: &Shell,
        port: u16,
        launcher_ip: Option<String>,
        common: &[Var],
        tx: &Sender<Event>,
    ) -> Result<(), StartError> {
        let (program, prog_args) = args.command.split_first().ok_or(StartError::NoProgram)?;
        let wdir = match &args.wdir {
            Some(d) => d.clone(),
            None => std::env::current_dir().map_err(StartError::CurrentDir)?,
        };
        let me = std::env::current_exe().map_err(StartError::CurrentExe)?;
        let launch_timeout = Duration::from_secs_f64(args.launch_timeout);
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
            let name = |path: &Path| {
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
                launch_timeout,
            );
            for (&h, r) in used.iter().zip(results) {
                if let Err(e) = r {
                    let why = format!("cannot stage the program: {e}");
                    self.input(Input::HostLost { host: h, why });
                }
            }
        }
        for &h in &used {
            if self.state.hosts()[h].state != HostState::Launching {
                continue;
            }
            let procs: Vec<ProcSpec> = p
                .on_host(h)
                .into_iter()
                .map(|(rank, replica)| ProcSpec {
                    rank,
                    replica,
                    incarnation: 0,
                    env: env::per_proc(&args.faults, rank, replica),
                })
                .collect();
            let host_procs = procs.len();
            let spec = StartSpec {
                host: p.hosts[h].name.clone(),
                program: staged_program.clone(),
                args: prog_args.to_vec(),
                wdir: wdir.to_string_lossy().into_owned(),
                env: common.to_vec(),
                launcher_port: port,
                launcher_ip: launcher_ip.clone(),
                stage_dir: stage_dir.clone(),
                bind: args.bind,
                procs,
                regenerate: args.regenerate != crate::cli::Regenerate::Never,
                stdin_rank: self.stdin.as_ref().map(|(r, _)| *r),
                preemption_notice: args.preemption_notice.for_host(&p.hosts[h].name),
            };
            match start_agent(
                shell,
                &p.hosts[h].name,
                self.next_link(h),
                &agent_path,
                ToAgent::Start(Box::new(spec)),
                tx.clone(),
            ) {
                Ok(link) => {
                    self.hosts[h].link = HostLink::Agent(link);
                    self.stdin_to_agent(h);
                    self.hosts[h].open_pipes = 2 * host_procs;
                    self.open_pipes += 2 * host_procs;
                    self.input(Input::LinkOpened { host: h });
                }
                Err(e) => self.input(Input::HostLost {
                    host: h,
                    why: e.to_string(),
                }),
            }
        }
        self.remote = Some(RemoteLaunch {
            shell: shell.clone(),
            agent_path: agent_path.clone(),
            template: StartSpec {
                host: String::new(),
                program: staged_program.clone(),
                args: prog_args.to_vec(),
                wdir: wdir.to_string_lossy().into_owned(),
                env: common.to_vec(),
                launcher_port: port,
                launcher_ip: launcher_ip.clone(),
                stage_dir: None,
                bind: args.bind,
                procs: Vec::new(),
                regenerate: true,
                stdin_rank: self.stdin.as_ref().map(|(r, _)| *r),
                preemption_notice: args.preemption_notice.clone(),
            },
        });
        self.input(Input::Launched);
        match self.state.failure() {
            Some(f) => {
                let f = f.to_string();
                self.end_remote_now();
                Err(StartError::NoReachableReplica(f))
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42 item 3: a bad `--wdir` names the directory, a directory given as the
    /// program says so.
    #[test]
    fn a_local_start_names_a_bad_wdir_and_a_program_that_is_a_directory() {
        let tmp = std::env::temp_dir();
        let missing = tmp.join(format!("volpex-no-such-dir-{}", std::process::id()));
        assert!(matches!(
            check_local_start("true", Some(&missing)),
            Err(StartError::Wdir { path, .. }) if path == missing
        ));
        let exe = std::env::current_exe().expect("the test binary");
        let not_dir = check_local_start("true", Some(&exe));
        assert!(
            matches!(&not_dir, Err(StartError::Wdir { source, .. }) if source.kind() == std::io::ErrorKind::NotADirectory),
            "{not_dir:?}"
        );
        let dir = tmp.to_string_lossy().into_owned();
        assert!(matches!(
            check_local_start(&dir, None),
            Err(StartError::ProgramIsDirectory { .. })
        ));
        // Taken from --wdir, as the processes will.
        assert!(matches!(
            check_local_start("./", Some(&tmp)),
            Err(StartError::ProgramIsDirectory { .. })
        ));
        assert!(check_local_start("true", Some(&tmp)).is_ok());
        assert!(check_local_start(&exe.to_string_lossy(), None).is_ok());
    }
}
