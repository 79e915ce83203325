//! The launcher's errors: one enum per family of operations, every failure a variant a
//! caller can match, with the words volpexrun prints for it.
//!
//! Owns only the types and their text (tests match on some of it: change neither lightly).
//! Must never print, exit or decide what to do about an error.

use std::ffi::OsString;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

/// A command-line value or combination that is not valid (`cli`).
#[derive(Debug, Error)]
pub enum CliError {
    /// A `SECONDS` flag that is not a number from 0.001 to 10^6.
    #[error("{input:?} is not a number of seconds (allowed: 0.001 <= SECONDS <= 1000000)")]
    NotSeconds {
        /// What was given.
        input: String,
    },
    /// A `SECONDS` flag that takes 0, given something else not in [0.001, 10^6].
    #[error(
        "{input:?} is not a number of seconds (allowed: 0 = off, or 0.001 <= SECONDS <= 1000000)"
    )]
    NotSecondsOrZero {
        /// What was given.
        input: String,
    },
    /// The heartbeat timeout must exceed the beat interval.
    #[error(
        "--heartbeat-timeout ({timeout} s) must be longer than --heartbeat-interval ({interval} s)"
    )]
    HeartbeatTimeoutTooShort {
        /// `--heartbeat-timeout`, seconds.
        timeout: f64,
        /// `--heartbeat-interval`, seconds.
        interval: f64,
    },
    /// A `--fault` spec that does not parse.
    #[error(
        "fault {spec:?}: {problem} (expected R.K:kill@T, R.K:stop@T, R.K:cont@T, R.K:term@T, R.K:exit@sends=N or R.K:exit@choices=N)"
    )]
    Fault {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        problem: FaultProblem,
    },
    /// A `--preemption-notice` value that does not parse.
    #[error("--preemption-notice {spec:?}: {problem}")]
    Notice {
        /// The value as given.
        spec: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A `--chaos` spec that does not parse.
    #[error(
        "chaos {spec:?}: {problem} (expected SEED:kill=RATE,stop=RATE,stop-for=S,exit=P,exit-sends=N,from=S,until=S,max=N,last=yes|no)"
    )]
    Chaos {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        problem: ChaosProblem,
    },
    /// `-x =VALUE`.
    #[error("-x {spec:?}: empty variable name")]
    ExportEmptyName {
        /// The spec as given.
        spec: String,
    },
    /// `--stdin` neither `none` nor a rank number.
    #[error("--stdin {input:?}: expected none or a rank number")]
    BadStdin {
        /// What was given.
        input: String,
    },
    /// `--stdin RANK` for a rank the job does not have.
    #[error("--stdin {rank}: the job has ranks 0..{ranks}")]
    StdinOutsideJob {
        /// The rank given.
        rank: u32,
        /// Ranks in the job.
        ranks: u32,
    },
    /// `-x VAR` for a variable volpexrun does not have.
    #[error("-x {name}: not set in volpexrun's environment")]
    ExportNotSet {
        /// The variable.
        name: String,
    },
}

/// What is wrong with a `--fault` spec.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum FaultProblem {
    /// No `:` between replica and action.
    #[error("missing ':'")]
    MissingColon,
    /// The replica is not `RANK.REPLICA`.
    #[error("replica must be RANK.REPLICA")]
    NotRankReplica,
    /// The rank is not a number.
    #[error("bad rank")]
    BadRank,
    /// The replica index is not a number.
    #[error("bad replica")]
    BadReplica,
    /// No `@` between action and argument.
    #[error("missing '@'")]
    MissingAt,
    /// The time is not a number.
    #[error("bad time")]
    BadTime,
    /// The time is negative, not finite or above 10^6 seconds.
    #[error("time must be a number of seconds from 0 to 1000000")]
    TimeOutOfRange,
    /// `exit@` without `sends=N` or `choices=N`.
    #[error("exit takes sends=N or choices=N")]
    ExitForm,
    /// The count is not a whole number that fits 64 bits.
    #[error("count must be a whole number from 1 to 18446744073709551615")]
    BadCount,
    /// The count is zero.
    #[error("count must be at least 1")]
    ZeroCount,
    /// Not kill, stop, cont or exit.
    #[error("unknown action")]
    UnknownAction,
}

/// What is wrong with a `--chaos` spec.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ChaosProblem {
    /// No `:` after the seed.
    #[error("missing ':' after the seed")]
    MissingColon,
    /// The seed is not a whole number that fits 64 bits.
    #[error("the seed must be a whole number from 0 to 18446744073709551615")]
    BadSeed,
    /// A value outside its range (or not a number).
    #[error("{key} must be a number from {lo} to {hi}")]
    OutOfRange {
        /// The item.
        key: &'static str,
        /// Smallest allowed.
        lo: f64,
        /// Largest allowed.
        hi: f64,
    },
    /// `last=` neither yes nor no.
    #[error("last takes yes or no")]
    BadLast,
    /// An item that is not one of ours.
    #[error("unknown item {key:?}")]
    UnknownKey {
        /// The item's name.
        key: String,
    },
    /// `until` before `from`.
    #[error("until must not be before from")]
    EmptyWindow,
    /// Every rate zero.
    #[error("nothing to inject: give kill=, stop= or exit= above 0")]
    Nothing,
}

/// A host list (`--hosts FILE` or `--host a,b:2`) that cannot be used (`hostfile`).
#[derive(Debug, Error)]
pub enum HostsError {
    /// A line of a hostfile that does not parse.
    #[error(
        "{origin}:{line}: {problem} (expected `host` or `host slots=N`, `#` comments, blank lines)"
    )]
    Line {
        /// The file.
        origin: String,
        /// Line number, from 1.
        line: usize,
        /// What is wrong with it.
        problem: HostProblem,
    },
    /// A hostfile without hosts.
    #[error("{origin}: no hosts in the file")]
    Empty {
        /// The file.
        origin: String,
    },
    /// The hostfile is larger than any host list (`hostfile::HOSTFILE_BYTES_MAX`).
    #[error("hostfile {} is larger than {max} bytes: not a host list", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The bound, in bytes.
        max: u64,
    },
    /// The hostfile cannot be read.
    #[error("cannot read hostfile {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// An entry of `--host` that does not parse.
    #[error("--host {list:?}: {problem} (expected host[:slots],...)")]
    List {
        /// The list as given.
        list: String,
        /// What is wrong with it.
        problem: HostProblem,
    },
}

/// What is wrong with one host entry.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum HostProblem {
    /// Not a host name.
    #[error("bad host name {0:?}")]
    BadName(String),
    /// An empty entry in `--host`.
    #[error("empty host name")]
    EmptyName,
    /// `slots=` twice on one line.
    #[error("slots given twice")]
    SlotsTwice,
    /// A hostfile's `slots=` value out of range.
    #[error("slots={given:?} is not a number in 1..={max}")]
    BadSlots {
        /// What the line gave.
        given: String,
        /// The most slots a host may have (`hostfile::SLOTS_MAX`).
        max: u32,
    },
    /// A `--host` entry's `:slots` out of range.
    #[error("slots {given:?} not in 1..={max}")]
    SlotsOutOfRange {
        /// What the entry gave.
        given: String,
        /// The most slots a host may have (`hostfile::SLOTS_MAX`).
        max: u32,
    },
    /// An attribute other than `slots`.
    #[error("unknown attribute {0:?}")]
    UnknownAttribute(String),
    /// A word that is no attribute.
    #[error("unexpected {0:?}")]
    Unexpected(String),
}

/// The processes do not fit on the hosts (`placement`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PlacementError {
    /// Zero ranks or replicas.
    #[error("a job needs at least one rank and one replica")]
    NoProcesses,
    /// Fewer hosts than replicas per rank (two replicas of a rank never share a host).
    #[error(
        "cannot place {ranks} ranks x {replicas} replicas: two replicas of one rank never \
         share a host, so at least {replicas} hosts are needed; {given} given ({names}): \
         {missing} more host(s) missing"
    )]
    TooFewHosts {
        /// Ranks.
        ranks: u32,
        /// Replicas per rank.
        replicas: u32,
        /// Hosts given.
        given: usize,
        /// Their names, comma-separated.
        names: String,
        /// How many more are needed.
        missing: u64,
    },
    /// Fewer usable slots than processes.
    #[error(
        "cannot place {ranks} ranks x {replicas} replicas = {total} processes: the hosts \
         offer {have} usable slots{}, {missing} slot(s) missing (add hosts or slots, or use \
         --oversubscribe)",
        if *capped { format!(" (a host counts at most {ranks}, one per rank)") } else { String::new() }
    )]
    TooFewSlots {
        /// Ranks.
        ranks: u32,
        /// Replicas per rank.
        replicas: u32,
        /// Processes.
        total: u64,
        /// Usable slots.
        have: u64,
        /// How many slots are missing.
        missing: u64,
        /// A host has more slots than ranks (it counts at most one per rank).
        capped: bool,
    },
}

/// The Slurm allocation cannot be read or reached (`slurm`).
#[derive(Debug, Error)]
pub enum SlurmError {
    /// A `SLURM_*_PER_NODE` list that does not parse.
    #[error("cannot read Slurm count list {list:?} at {part:?}")]
    BadCounts {
        /// The list.
        list: String,
        /// The part that does not parse.
        part: String,
    },
    /// `--launcher slurm` outside an allocation.
    #[error(
        "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_NODELIST is not set); \
         run under salloc or sbatch, or give --hosts"
    )]
    NotInAllocation,
    /// `scontrol` cannot run.
    #[error("cannot run scontrol to expand {list:?}: {source}")]
    Scontrol {
        /// The node list.
        list: String,
        /// Why.
        source: io::Error,
    },
    /// `scontrol` failed.
    #[error("scontrol show hostnames {list:?} failed: {stderr}")]
    ScontrolFailed {
        /// The node list.
        list: String,
        /// What it said.
        stderr: String,
    },
    /// The node list expands to nothing.
    #[error("the Slurm node list {list:?} names no hosts")]
    NoHosts {
        /// The node list.
        list: String,
    },
    /// No host to find a route to.
    #[error("no hosts to reach")]
    NothingToReach,
    /// The first host's name does not resolve.
    #[error(
        "cannot resolve {host} to find the address the nodes reach volpexrun at; give --launcher-addr"
    )]
    Unresolved {
        /// The host.
        host: String,
    },
    /// A socket to find the route cannot be made.
    #[error("{0}")]
    Socket(io::Error),
    /// No route to the first host.
    #[error("no route to {host} ({addr}): {source}; give --launcher-addr")]
    NoRoute {
        /// The host.
        host: String,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
}

/// CPU binding cannot be worked out (`binding`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BindError {
    /// The launcher's own affinity cannot be read.
    #[error("cannot read this process's CPU affinity: {0}")]
    Affinity(String),
}

/// A remote host cannot be reached or staged to (`remote`).
#[derive(Debug, Error)]
pub enum RemoteError {
    /// `--ssh-cmd` that does not split into words.
    #[error("--ssh-cmd {cmd:?}: cannot split into words")]
    SshCmd {
        /// The command as given.
        cmd: String,
    },
    /// The remote shell cannot run.
    #[error("cannot run {program:?}: {source}")]
    Shell {
        /// ssh or srun.
        program: OsString,
        /// Why.
        source: io::Error,
    },
    /// `--stage` with Slurm.
    #[error("--stage is for ssh hosts; with Slurm the allocation shares files")]
    StageWithSlurm,
    /// rsync cannot run.
    #[error("cannot run rsync for --stage: {0}")]
    Rsync(io::Error),
    /// rsync failed.
    #[error("staging to {host}:{dir} failed: {stderr}")]
    StageFailed {
        /// The host.
        host: String,
        /// The job directory there.
        dir: String,
        /// What rsync said, one line.
        stderr: String,
    },
    /// rsync took too long and was killed.
    #[error("staging to {host}:{dir} took longer than {:.1} s", timeout.as_secs_f64())]
    StageTimeout {
        /// The host.
        host: String,
        /// The job directory there.
        dir: String,
        /// The limit.
        timeout: Duration,
    },
    /// No thread for a copy.
    #[error("cannot start a staging thread")]
    StageThread,
    /// A copy's thread ended without a result.
    #[error("staging thread ended")]
    StageThreadEnded,
}

/// A `volpexrun plan` question that cannot be answered (`plan`).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PlanError {
    /// Neither --mtbf nor the Weibull parameters.
    #[error("give a failure model: --mtbf DURATION, or --weibull-shape and --weibull-rate")]
    NoModel,
    /// Not a duration.
    #[error("{input:?} is not a duration (90, 90s, 30m, 2h, 1d)")]
    NotDuration {
        /// What was given.
        input: String,
    },
    /// Not a rate.
    #[error("{input:?} is not a rate (0.01/h, 2e-6/s, 0.2/d)")]
    NotRate {
        /// What was given.
        input: String,
    },
    /// A unit other than s, m, h, d.
    #[error("{input:?}: unknown unit {unit:?} (s, m, h, d)")]
    UnknownUnit {
        /// What was given.
        input: String,
        /// The unit.
        unit: String,
    },
    /// A duration or rate that is zero or negative.
    #[error("{input:?}: must be positive")]
    MustBePositive {
        /// What was given.
        input: String,
    },
    /// A duration or rate above what the model takes.
    #[error("{input:?}: must be at most {max}")]
    TooLarge {
        /// What was given.
        input: String,
        /// The largest value allowed, in words.
        max: &'static str,
    },
    /// Not a Weibull shape.
    #[error("{input:?} is not a Weibull shape (allowed: 0 < DELTA <= 100)")]
    NotPositive {
        /// What was given.
        input: String,
    },
    /// Not an overhead fraction.
    #[error("{input:?} is not an overhead fraction (allowed: 0 <= FRACTION <= 100)")]
    NotNonNegative {
        /// What was given.
        input: String,
    },
    /// Not strictly between 0 and 1.
    #[error("{input:?} is not a probability (allowed: 0 < P < 1)")]
    NotProbability {
        /// What was given.
        input: String,
    },
    /// A duration that may be zero (`--regen-time`) but was negative.
    #[error("{input:?}: must be zero or more")]
    MustNotBeNegative {
        /// What was given.
        input: String,
    },
}

/// The job cannot start (`job`): nothing runs; volpexrun exits with 2 or 1 (`job::exit_policy::start_error_code`).
#[derive(Debug, Error)]
pub enum StartError {
    /// A bad flag.
    #[error(transparent)]
    Cli(#[from] CliError),
    /// A `--fault` for a replica outside the job.
    #[error(
        "--fault names replica {rank}.{replica}, but the job has {ranks} ranks x {replicas} replicas"
    )]
    FaultOutsideJob {
        /// The fault's rank.
        rank: u32,
        /// The fault's replica.
        replica: u32,
        /// Ranks in the job.
        ranks: u32,
        /// Replicas per rank.
        replicas: u32,
    },
    /// No program after the flags.
    #[error("no program given")]
    NoProgram,
    /// `--launcher local` with hosts.
    #[error("--launcher local runs everything on this machine; drop --hosts/--host")]
    LocalWithHosts,
    /// `--launcher ssh` without hosts.
    #[error("--launcher ssh needs hosts: --hosts FILE or --host a,b,c")]
    SshWithoutHosts,
    /// The hostfile an `mpirun` variable names (no `--hosts` given) is bad.
    #[error("{var} names the hostfile (no --hosts given): {source}")]
    EnvHostfile {
        /// The variable.
        var: &'static str,
        /// What is wrong with the file.
        source: HostsError,
    },
    /// A bad host list.
    #[error(transparent)]
    Hosts(#[from] HostsError),
    /// The Slurm allocation.
    #[error(transparent)]
    Slurm(#[from] SlurmError),
    /// The processes do not fit.
    #[error(transparent)]
    Placement(#[from] PlacementError),
    /// CPU binding.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// The remote shell.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// The control port cannot be opened.
    #[error("cannot open the control port on {ip}: {source}")]
    ControlPort {
        /// The address asked for.
        ip: IpAddr,
        /// Why.
        source: io::Error,
    },
    /// The control port's address cannot be read.
    #[error("{0}")]
    ControlAddr(io::Error),
    /// A thread of the launcher cannot start.
    #[error("{0}")]
    Thread(io::Error),
    /// SIGINT, SIGTERM and SIGHUP cannot be caught.
    #[error("cannot install signal handlers: {0}")]
    Signals(io::Error),
    /// A local process cannot start.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: io::Error,
    },
    /// A local process cannot be waited for.
    #[error("cannot watch process {pid}: {source}")]
    Watch {
        /// Its pid.
        pid: u32,
        /// Why.
        source: io::Error,
    },
    /// The working directory cannot be told.
    #[error("cannot tell the current directory: {0}")]
    CurrentDir(io::Error),
    /// volpexrun's own path cannot be told.
    #[error("cannot tell where volpexrun is: {0}")]
    CurrentExe(io::Error),
    /// `--stage` of a program that is not here.
    #[error("--stage: cannot find {program} here to copy it")]
    ProgramNotFound {
        /// The program.
        program: String,
    },
    /// `--wdir DIR` cannot be the processes' working directory.
    #[error("--wdir {}: {source}", path.display())]
    Wdir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The program is a directory.
    #[error("cannot start {program}: it is a directory")]
    ProgramIsDirectory {
        /// The program.
        program: String,
    },
    /// `--report FILE` cannot be written.
    #[error("--report {}: cannot write the report there: {source}", path.display())]
    Report {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Hosts were lost at start and some rank has no replica left (the state machine's
    /// message names them).
    #[error("{0}")]
    NoReachableReplica(String),
}

#[cfg(test)]
mod tests;
