//! Command line of `volpexrun` and the fault-injection spec parser. Owns parsing and
//! the checks clap cannot do alone (mpirun's spellings: `-np`, single-dash long options,
//! an unknown option before the program is an error, not the program); must never start
//! anything.

use std::path::PathBuf;

use clap::Parser;

use crate::binding::Bind;
use crate::chaos::ChaosSpec;
use crate::error::CliError;
use crate::fault::{parse_fault, Fault, SECONDS_MAX};
use crate::placement::MapStrategy;

/// How processes are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LauncherKind {
    /// Every process on this machine (the default without hosts).
    Local,
    /// On the hosts given, over ssh (the default with --hosts or --host).
    Ssh,
    /// Inside a Slurm allocation, with srun (the default inside one, without hosts).
    Slurm,
}

/// When volpexrun starts a new incarnation of a lost replica (`--regenerate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Regenerate {
    /// Never: a lost replica stays lost (the job goes on with fewer replicas).
    Never,
    /// Only into a free slot of a host that holds no other replica of its rank (on a
    /// local job: this machine).
    Spare,
    /// Like spare, else on the least loaded host holding no replica of its rank, else on
    /// any host (oversubscribing it).
    Always,
}

/// The default remote shell (`--ssh-cmd`, `VOLPEX_SSH`).
pub const SSH_DEFAULT: &str = "ssh -o BatchMode=yes";

/// What `--map-by` takes (mpirun's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MapBy {
    /// One process per host in turn: `--map spread`.
    Node,
    /// Fill each host's slots in order: `--map concentrate`.
    Slot,
    /// As slot: `--map concentrate`.
    Core,
}

/// What `--bind-to` takes (mpirun's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BindTo {
    /// Processes bound to CPUs, each team to its own share: `--bind team`.
    Core,
    /// No binding: `--bind none`.
    None,
}

/// Start a replicated Volpex job: N ranks, each run as R replicas (copies) in teams.
///
/// Everything after PROGRAM belongs to the program (`--` before it also works). The job
/// succeeds when every rank has a replica that exited 0; it goes on while at least one
/// replica of every rank is alive. Each rank's output is printed once, as soon as its
/// fastest replica prints it. mpirun's spellings work: -np, -H, --hostfile,
/// --machinefile, --map-by, --bind-to, -N.
///
/// Also: `volpexrun plan` (replication degree against host failures), `volpexrun
/// completions SHELL` (shell completions), `volpexrun man` (the man page).
#[derive(Debug, Clone, Parser)]
#[command(name = "volpexrun", version, about, long_about)]
pub struct Args {
    /// Number of ranks (MPI processes) to run (also -np). Without it, -N PER_HOST times
    /// the hosts, divided by the replicas.
    #[arg(short = 'n', long = "np", value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=100_000), required_unless_present = "npernode")]
    pub np: Option<u32>,

    /// Ranks in the job: `-n`, or what `-N` makes of the hosts (`Args::resolve`).
    #[arg(skip)]
    pub ranks: u32,

    /// Processes per host, as mpirun's -N: every host gets exactly this many slots,
    /// filled in order (--map concentrate).
    #[arg(short = 'N', long = "npernode", value_name = "PER_HOST", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub npernode: Option<u32>,

    /// Replicas (copies) of every rank; replica k of every rank forms team k.
    #[arg(short = 'r', long = "replicas", value_name = "R", default_value_t = 1, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub replicas: u32,

    /// Prefix every output line with the rank that printed it, as "[rank] ".
    #[arg(long)]
    pub tag_output: bool,

    /// Give up after this many seconds: end every process and exit non-zero.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = parse_seconds)]
    pub timeout: Option<f64>,

    /// Export an environment variable to every process: VAR=VALUE, or VAR to pass this
    /// launcher's value on. Repeatable.
    #[arg(short = 'x', value_name = "VAR[=VALUE]")]
    pub export: Vec<String>,

    /// Where volpexrun's standard input goes: every replica of rank RANK gets the same
    /// bytes (default: rank 0), or none (every process reads /dev/null).
    #[arg(long = "stdin", value_name = "none|RANK", default_value = "0", value_parser = parse_stdin)]
    pub stdin: StdinTarget,

    /// Once volpexrun is interrupted (SIGINT, SIGTERM, SIGHUP) and has forwarded the
    /// signal to every process, how long they get to exit before SIGKILL.
    #[arg(long, value_name = "S", default_value_t = 2.0, allow_negative_numbers = true, value_parser = parse_seconds)]
    pub kill_grace: f64,

    /// No live feedback: neither the lines about deaths, failovers and regenerations
    /// while the job runs, nor the status line on a terminal.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Write the end-of-job summary as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub report: Option<std::path::PathBuf>,

    /// Inject a fault (repeatable). R.K:kill@T sends SIGKILL to replica K of rank R T
    /// seconds after start; R.K:stop@T sends SIGSTOP (never continued unless a cont@ spec
    /// says so); R.K:cont@T sends SIGCONT; R.K:term@T sends SIGTERM (a preemption notice,
    /// see --drain-grace); R.K:exit@sends=N makes that replica exit
    /// abruptly right after its N-th send; R.K:exit@choices=N right after it made its
    /// N-th coordinated choice (wildcard match, wait_any) as its rank's leader, before
    /// telling anyone.
    #[arg(long = "fault", value_name = "SPEC", allow_negative_numbers = true, value_parser = parse_fault)]
    pub faults: Vec<Fault>,

    /// Inject random faults drawn from SEED: SEED:kill=RATE,stop=RATE,stop-for=S,exit=P,
    /// exit-sends=N,from=S,until=S,max=N,last=yes|no (rates per second over the job; exit
    /// P per replica). Never takes the last live replica of a rank unless last=yes; prints
    /// the schedule as --fault specs to replay it.
    #[arg(long = "chaos", value_name = "SEED:SPEC", allow_hyphen_values = true, value_parser = crate::chaos::parse_chaos)]
    pub chaos: Option<ChaosSpec>,

    /// Regenerate lost replicas: start a new incarnation of a replica lost during the run
    /// (killed, silent, its host lost, retired) that restores its sibling's latest
    /// checkpoint or replays its rank from the start; one lost before the rendezvous
    /// starts again afresh and joins it. spare: only into a free slot
    /// (locally: this machine); always: oversubscribe if needed; never: a lost replica
    /// stays lost. Sets VOLPEX_REGENERATE=1 (unless never; at -r 1 too, for handovers).
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = Regenerate::Spare)]
    pub regenerate: Regenerate,

    /// At most N new incarnations per rank (default: unlimited). A rank whose last 3 new
    /// incarnations in a row failed (ended before catching up, or retired) is not
    /// regenerated again.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub max_regenerations: Option<u32>,

    /// Preemption notices: with regeneration on, a replica that gets SIGTERM (what spot
    /// and preemptible instances get before they go) tells volpexrun instead of dying,
    /// which starts its replacement at once and ends it; one that cannot be replaced runs
    /// on for at most S seconds. Sets VOLPEX_DRAIN_GRACE_MS.
    #[arg(long, value_name = "S", default_value_t = 30.0, allow_negative_numbers = true, value_parser = parse_seconds)]
    pub drain_grace: f64,

    /// Watch the cloud's metadata server for the notice that this machine is taken back
    /// (aws: spot instance-action; gcp: instance/preempted; azure: a Preempt scheduled
    /// event; auto: the one that answers at start; none). Without hosts volpexrun watches
    /// this machine, with hosts each host's agent its host. On a notice every replica on
    /// the host hands over to a new incarnation before the notice's deadline, one of a
    /// rank at a time. `KIND=http://HOST:PORT` replaces the metadata server's address.
    /// `file=PATH`: the notice is the file PATH appearing (a Kubernetes preStop hook
    /// writes it), holding the seconds left or nothing (30 s); `{host}` in PATH is the
    /// host's name.
    #[arg(long = "preemption-notice", value_name = "aws|gcp|azure|auto|none[=URL]|file=PATH", default_value = "none", value_parser = crate::notice::parse_spec)]
    pub preemption_notice: crate::notice::NoticeSpec,

    /// Hostfile (also --hostfile, --machinefile): Open MPI's `host` or `host slots=N`,
    /// or Hydra's `host:N`, per line; `#` comments.
    #[arg(long = "hosts", visible_aliases = ["hostfile", "machinefile"], value_name = "FILE", conflicts_with = "host")]
    pub hostfile: Option<PathBuf>,

    /// Hosts as a list: `a,b:2,c` (`:N` gives N slots; default 1).
    #[arg(short = 'H', long = "host", value_name = "HOST[:SLOTS],...")]
    pub host: Option<String>,

    /// Placement: spread (one process per host in turn) or concentrate (fill each host's
    /// slots in order). Two replicas of one rank never share a host.
    #[arg(long = "map", value_enum, default_value_t = MapStrategy::Spread)]
    pub map: MapStrategy,

    /// mpirun's placement words: node (= --map spread), slot or core (= --map
    /// concentrate).
    #[arg(
        long = "map-by",
        value_enum,
        value_name = "node|slot|core",
        conflicts_with = "map"
    )]
    pub map_by: Option<MapBy>,

    /// mpirun's binding words: core (= --bind team), none (= --bind none).
    #[arg(
        long = "bind-to",
        value_enum,
        value_name = "core|none",
        conflicts_with = "bind"
    )]
    pub bind_to: Option<BindTo>,

    /// Let a host run up to N processes whatever its slots (never two replicas of a rank).
    #[arg(long)]
    pub oversubscribe: bool,

    /// CPU binding on each host: team (the host's CPUs split between the teams it runs,
    /// so teams do not slow each other down), none (the kernel places processes), or auto
    /// (team on a host that runs more of the job's processes than it has CPUs). Sets
    /// VOLPEX_CPUS; an exported one wins.
    #[arg(long, value_enum, default_value_t = Bind::Auto)]
    pub bind: Bind,

    /// Print the placement (hosts, replicas, teams) and exit without starting anything.
    #[arg(long)]
    pub print_map: bool,

    /// How to start processes: local, ssh or slurm. Default: slurm inside an allocation
    /// when no hosts are given, ssh with hosts, local otherwise.
    #[arg(long = "launcher", value_enum)]
    pub launcher: Option<LauncherKind>,

    /// Remote shell command, split like a shell would (default "ssh -o BatchMode=yes", or
    /// VOLPEX_SSH). volpexrun appends the host and the remote command.
    #[arg(long = "ssh-cmd", value_name = "CMD")]
    pub ssh_cmd: Option<String>,

    /// Working directory of the processes on every host (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub wdir: Option<PathBuf>,

    /// Copy the program and volpexrun to each host first (rsync over the remote shell),
    /// into a job directory under /tmp removed when the host's processes end.
    #[arg(long)]
    pub stage: bool,

    /// A host whose processes have not started this many seconds after its ssh/srun began
    /// counts as unreachable.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, allow_negative_numbers = true, value_parser = parse_seconds)]
    pub launch_timeout: f64,

    /// Heartbeat interval between volpexrun and every process, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.25, allow_negative_numbers = true, value_parser = parse_seconds)]
    pub heartbeat_interval: f64,

    /// A process silent this long (no heartbeat) is declared dead and its peers fail over;
    /// a process that hears nothing from volpexrun this long exits. Default 2 s, longer on
    /// a machine that runs more than 4 of the job's processes per CPU (see
    /// `heartbeat_timeout_for`).
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = parse_seconds)]
    pub heartbeat_timeout: Option<f64>,

    /// TCP user timeout and keepalive bound on connections between processes, in seconds
    /// (0: kernel defaults). Sets VOLPEX_PEER_TIMEOUT_MS.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, allow_negative_numbers = true, value_parser = parse_seconds_or_zero)]
    pub peer_timeout: f64,

    /// Address remote processes use to reach volpexrun (default: the address their ssh
    /// connection came from; with Slurm, the one that routes to the first node).
    #[arg(long, value_name = "IP")]
    pub launcher_addr: Option<std::net::IpAddr>,

    /// The program to run, then its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM [ARGS]..."
    )]
    pub command: Vec<String>,
}

/// A `SECONDS` flag: a finite number in [`SECONDS_MIN`, `SECONDS_MAX`] (a timeout or
/// period below a millisecond means nothing to a clock that ticks in them, and `1e-300`
/// would print as 300 digits).
pub fn parse_seconds(s: &str) -> Result<f64, CliError> {
    match s.trim().parse::<f64>() {
        Ok(v) if (SECONDS_MIN..=SECONDS_MAX).contains(&v) => Ok(v),
        _ => Err(CliError::NotSeconds { input: s.into() }),
    }
}

/// The shortest time a `SECONDS` flag takes: a millisecond.
pub const SECONDS_MIN: f64 = 0.001;

/// A `SECONDS` flag where 0 means "off": 0, or a number as `parse_seconds` takes.
pub fn parse_seconds_or_zero(s: &str) -> Result<f64, CliError> {
    match s.trim().parse::<f64>() {
        Ok(v) if v == 0.0 || (SECONDS_MIN..=SECONDS_MAX).contains(&v) => Ok(v),
        _ => Err(CliError::NotSecondsOrZero { input: s.into() }),
    }
}

/// The heartbeat timeout when `--heartbeat-timeout` is not given, in seconds.
pub const HEARTBEAT_TIMEOUT_DEFAULT: f64 = 2.0;
/// Seconds of heartbeat timeout per process per CPU on a crowded machine: 2 s gave no
/// false positives at 4 processes per CPU (`scripts/detection.sh`), but `-n 300 -r 3` on
/// 2 CPUs (450 per CPU) declared starved replicas dead within 2 s of starting.
pub const HEARTBEAT_TIMEOUT_PER_PROCESS_PER_CPU: f64 = 0.5;

/// `--stdin`: who gets volpexrun's standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinTarget {
    /// Nobody: every process reads /dev/null.
    None,
    /// Every replica of this rank, the same bytes to each.
    Rank(u32),
}

/// Parses `--stdin`: `none` or a rank number.
pub fn parse_stdin(s: &str) -> Result<StdinTarget, CliError> {
    match s.trim() {
        "none" => Ok(StdinTarget::None),
        r => r
            .parse::<u32>()
            .map(StdinTarget::Rank)
            .map_err(|_| CliError::BadStdin { input: s.into() }),
    }
}

/// Parses volpexrun's command line (`argv[0]` first) as mpirun users write it: `-np 4`
/// and single-dash long options (`-hostfile f`) are the long ones, the first word that is
/// not an option (or a value of one) is the program, and an unknown option before it is
/// an error naming it, not the program. Then `resolve` fills in what depends on several
/// flags.
pub fn parse_argv<I, T>(argv: I) -> Result<Args, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let argv: Vec<std::ffi::OsString> = argv.into_iter().map(Into::into).collect();
    let mut cmd = <Args as clap::CommandFactory>::command();
    cmd.build();
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(argv.len() + 1);
    let mut i = 0;
    if let Some(first) = argv.first() {
        out.push(first.clone());
        i = 1;
    }
    let takes_value =
        |a: &clap::Arg| a.get_num_args().is_some_and(|n| n.takes_values()) && !a.is_positional();
    while i < argv.len() {
        let word = argv[i].to_string_lossy().into_owned();
        i += 1;
        if word == "--" {
            out.push(word.into());
            break;
        }
        let long_name = word
            .strip_prefix("--")
            .or_else(|| {
                word.strip_prefix('-')
                    .filter(|w| w.len() > 1 && !w.starts_with('-'))
            })
            .map(|w| w.split_once('=').map_or(w, |(n, _)| n));
        let long = long_name.and_then(|name| {
            cmd.get_arguments().find(|a| {
                a.get_long() == Some(name)
                    || a.get_all_aliases().is_some_and(|al| al.contains(&name))
            })
        });
        match long {
            Some(a) => {
                // `-np 4`, `-hostfile f`: the long option.
                let w = if word.starts_with("--") {
                    word.clone()
                } else {
                    format!("-{word}")
                };
                let inline = w.contains('=');
                out.push(w.into());
                if takes_value(a) && !inline && i < argv.len() {
                    out.push(argv[i].clone());
                    i += 1;
                }
                continue;
            }
            None if word.starts_with("--") => return Err(unknown_option(&mut cmd, &word)),
            None => {}
        }
        let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) else {
            // The program: everything from here is its.
            out.push("--".into());
            out.push(word.into());
            break;
        };
        // A cluster of short options (`-qn2`): each a flag until one takes a value.
        let mut needs_value = false;
        for (at, c) in shorts.char_indices() {
            let Some(a) = cmd.get_arguments().find(|a| a.get_short() == Some(c)) else {
                return Err(unknown_option(&mut cmd, &word));
            };
            if takes_value(a) {
                needs_value = at + c.len_utf8() == shorts.len();
                break;
            }
        }
        out.push(word.into());
        if needs_value && i < argv.len() {
            out.push(argv[i].clone());
            i += 1;
        }
    }
    out.extend(argv[i..].iter().cloned());
    let mut args = Args::try_parse_from(out)?;
    args.resolve()
        .map_err(|e| cmd.error(clap::error::ErrorKind::ArgumentConflict, e))?;
    Ok(args)
}

fn unknown_option(cmd: &mut clap::Command, word: &str) -> clap::Error {
    cmd.error(
        clap::error::ErrorKind::UnknownArgument,
        format!(
            "unknown option '{word}' before the program (volpexrun's options come first, then the program and its own arguments; `--` before a program whose name starts with '-')"
        ),
    )
}

impl Args {
    /// Fills in what depends on several flags: `--map-by` and `--bind-to` become `--map`
    /// and `--bind`; `-N` makes the placement concentrate, and gives the ranks when `-n`
    /// is not given (the hosts times `-N`, divided by the replicas).
    pub fn resolve(&mut self) -> Result<(), String> {
        if let Some(m) = self.map_by {
            self.map = match m {
                MapBy::Node => MapStrategy::Spread,
                MapBy::Slot | MapBy::Core => MapStrategy::Concentrate,
            };
        }
        if let Some(b) = self.bind_to {
            self.bind = match b {
                BindTo::Core => Bind::Team,
                BindTo::None => Bind::None,
            };
        }
        if self.npernode.is_some() && self.map_by.is_none() {
            self.map = MapStrategy::Concentrate;
        }
        self.ranks = match (self.np, self.npernode) {
            (Some(n), _) => n,
            (None, Some(per_host)) => {
                let hosts = match (&self.hostfile, &self.host) {
                    (Some(f), _) => crate::hostfile::read_hostfile(f)
                        .map_err(|e| e.to_string())?
                        .len(),
                    (None, Some(list)) => crate::hostfile::parse_host_list(list)
                        .map_err(|e| e.to_string())?
                        .len(),
                    (None, None) => 1,
                };
                let procs = u64::from(per_host) * hosts as u64;
                let ranks = procs / u64::from(self.replicas);
                if ranks == 0 {
                    return Err(format!(
                        "-N {per_host} on {hosts} host(s) runs {procs} process(es), fewer than one rank of {} replicas: give -n",
                        self.replicas
                    ));
                }
                u32::try_from(ranks.min(100_000)).unwrap_or(100_000)
            }
            (None, None) => return Err("the number of ranks: give -n N (or -N PER_HOST)".into()),
        };
        Ok(())
    }

    /// Checks across flags that clap does not express.
    pub fn validate(&self) -> Result<(), CliError> {
        let timeout = self.heartbeat_timeout.unwrap_or(HEARTBEAT_TIMEOUT_DEFAULT);
        if timeout <= self.heartbeat_interval {
            return Err(CliError::HeartbeatTimeoutTooShort {
                timeout,
                interval: self.heartbeat_interval,
            });
        }
        if let StdinTarget::Rank(r) = self.stdin {
            if r >= self.ranks {
                return Err(CliError::StdinOutsideJob {
                    rank: r,
                    ranks: self.ranks,
                });
            }
        }
        Ok(())
    }

    /// The heartbeat timeout for a job that runs `per_cpu` of its processes per CPU on
    /// its most crowded machine: `--heartbeat-timeout` if given, else 2 s, or 0.5 s per
    /// process per CPU where that is longer (a starved heartbeat thread is not a dead
    /// process).
    pub fn heartbeat_timeout_for(&self, per_cpu: f64) -> f64 {
        self.heartbeat_timeout.unwrap_or_else(|| {
            HEARTBEAT_TIMEOUT_DEFAULT.max(per_cpu * HEARTBEAT_TIMEOUT_PER_PROCESS_PER_CPU)
        })
    }
}

/// Splits `VAR=VALUE` / `VAR` into a pair, taking the launcher's value for a bare name.
pub fn parse_export(s: &str) -> Result<(String, String), CliError> {
    if s.is_empty() {
        return Err(CliError::ExportEmptyName { spec: s.into() });
    }
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        Some(_) => Err(CliError::ExportEmptyName { spec: s.into() }),
        None => std::env::var(s)
            .map(|v| (s.to_string(), v))
            .map_err(|_| CliError::ExportNotSet { name: s.into() }),
    }
}

/// `volpexrun completions SHELL`: prints the completion script of `SHELL` (bash, zsh,
/// fish, elvish, powershell) generated from the flags; returns the exit code.
pub fn completions(shell: Option<&std::ffi::OsStr>) -> i32 {
    use clap::ValueEnum;
    let name = shell.map(|s| s.to_string_lossy().into_owned());
    let Some(shell) = name
        .as_deref()
        .and_then(|n| clap_complete::Shell::from_str(n, true).ok())
    else {
        eprintln!(
            "volpexrun completions: expected one of bash, zsh, fish, elvish, powershell; got {:?}",
            name.unwrap_or_default()
        );
        return 2;
    };
    let mut cmd = <Args as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut cmd, "volpexrun", &mut std::io::stdout());
    0
}

/// `volpexrun man`: prints the man page (roff) generated from the flags; returns the exit
/// code.
pub fn man_page() -> i32 {
    let cmd = <Args as clap::CommandFactory>::command();
    match clap_mangen::Man::new(cmd).render(&mut std::io::stdout()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("volpexrun man: cannot write the man page: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::fault::FaultAction;

    #[test]
    fn the_heartbeat_timeout_grows_with_crowding_unless_given() {
        let args = |extra: &[&str]| {
            let mut v = vec!["volpexrun", "-n", "2"];
            v.extend_from_slice(extra);
            v.push("prog");
            parse_argv(v).expect("valid arguments")
        };
        let a = args(&[]);
        assert_eq!(a.heartbeat_timeout_for(1.0), 2.0);
        assert_eq!(a.heartbeat_timeout_for(4.0), 2.0);
        assert_eq!(a.heartbeat_timeout_for(450.0), 225.0);
        let given = args(&["--heartbeat-timeout", "3"]);
        assert_eq!(given.heartbeat_timeout_for(450.0), 3.0);
    }

    #[test]
    fn fault_specs_parse() {
        assert_eq!(
            parse_fault("2.1:kill@0.5").unwrap(),
            Fault {
                rank: 2,
                replica: 1,
                action: FaultAction::Kill(Duration::from_millis(500))
            }
        );
        assert_eq!(
            parse_fault("0.0:exit@sends=7").unwrap().action,
            FaultAction::ExitAfterSends(7)
        );
        assert!(matches!(
            parse_fault("1.0:stop@2").unwrap().action,
            FaultAction::Stop(_)
        ));
        for bad in [
            "1:kill@1",
            "1.0kill@1",
            "1.0:kill",
            "1.0:nuke@1",
            "1.0:kill@-1",
            "a.0:kill@1",
            "1.0:exit@3",
            "1.0:exit@sends=0",
        ] {
            assert!(parse_fault(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_numeric_flag_refuses_what_is_out_of_range() {
        let bad: [(&str, &[&str]); 11] = [
            ("--regenerate", &["sometimes", "1", ""]),
            ("--max-regenerations", &["-1", "1.5", "nan", "1000001"]),
            ("--np", &["0", "-1", "100001", "nan", "1.5"]),
            ("--replicas", &["0", "17", "-1", "nan"]),
            ("--timeout", &["-1", "0", "nan", "inf", "1e300", "1000001"]),
            ("--launch-timeout", &["-1", "0", "nan", "1e300"]),
            ("--heartbeat-interval", &["-1", "0", "nan", "1e300"]),
            ("--heartbeat-timeout", &["-1", "0", "nan", "1e300"]),
            ("--peer-timeout", &["-1", "nan", "inf", "1e300"]),
            (
                "--fault",
                &[
                    "0.0:kill@1e300",
                    "0.0:stop@nan",
                    "0.0:cont@-1",
                    "0.0:exit@sends=1e3",
                ],
            ),
            (
                "--chaos",
                &["x:kill=1", "1:kill=-1", "1:kill=nan", "1:stop-for=1e300"],
            ),
        ];
        for (flag, values) in bad {
            for v in values {
                let mut argv = vec!["volpexrun"];
                if flag != "--np" {
                    argv.extend(["-n", "2"]);
                }
                argv.extend([flag, v, "/bin/true"]);
                let e = parse_argv(&argv).expect_err(&format!("{flag} {v}"));
                let text = e.to_string();
                assert!(text.contains(flag), "{flag} {v}: {text}");
                assert!(text.contains(v), "{flag} {v}: {text}");
            }
        }
        for (flag, good) in [
            ("--timeout", "1000000"),
            ("--timeout", "0.5"),
            ("--peer-timeout", "0"),
            ("--fault", "0.0:kill@1000000"),
            ("--regenerate", "always"),
            ("--max-regenerations", "0"),
        ] {
            let a = parse_argv(["volpexrun", "-n", "2", flag, good, "/bin/true"]);
            assert!(a.is_ok(), "{flag} {good}: {a:?}");
        }
    }

    #[test]
    fn regeneration_is_on_by_default_into_spare_slots() {
        let a = parse_argv(["volpexrun", "-n", "2", "prog"]).expect("parses");
        assert_eq!(a.regenerate, Regenerate::Spare);
        assert_eq!(a.max_regenerations, None);
        let a = parse_argv([
            "volpexrun",
            "-n",
            "2",
            "--regenerate",
            "never",
            "--max-regenerations",
            "3",
            "prog",
        ])
        .expect("parses");
        assert_eq!(a.regenerate, Regenerate::Never);
        assert_eq!(a.max_regenerations, Some(3));
    }

    #[test]
    fn faults_print_as_they_parse() {
        for spec in [
            "2.1:kill@0.5",
            "0.0:stop@1.234",
            "3.2:cont@12",
            "1.1:term@2",
            "1.0:exit@sends=7",
            "0.1:exit@choices=3",
        ] {
            let f = parse_fault(spec).unwrap();
            assert_eq!(f.to_string(), spec);
            assert_eq!(parse_fault(&f.to_string()).unwrap(), f);
        }
    }

    #[test]
    fn program_arguments_are_not_ours() {
        let a = parse_argv([
            "volpexrun",
            "-n",
            "2",
            "-r",
            "2",
            "prog",
            "-n",
            "5",
            "--fault",
            "x",
        ])
        .unwrap();
        assert_eq!(a.ranks, 2);
        assert_eq!(a.command, ["prog", "-n", "5", "--fault", "x"]);
    }
}
