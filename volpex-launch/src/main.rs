//! `volpexrun`: starts a replicated Volpex job and sees it through.
//!
//! Modules: `cli` (flags, fault specs), `chaos` (`--chaos`: random faults from a seed), `hostfile` (host lists), `notice` (`--preemption-notice`: the clouds' preemption notices), `placement` (which host
//! runs which replica), `job` (the job: its driver loop, `job::event` the events the
//! threads report, `job::state` the pure state machine, `job::exit_policy` when the job
//! is done or lost and its exit code, `job::env` and `job::spawn` starting processes),
//! `control` (authenticated control and heartbeat connections), `remote` (ssh / srun to a
//! host's agent), `agent` (`volpexrun agent`, run on every remote host), `slurm` (the
//! allocation), `output` (each rank's output once), `stdin` (`--stdin`: volpexrun's
//! standard input to every replica of one rank), `report` (summary), `plan`
//! (`volpexrun plan`, replication degree against host failures), `error` (every failure
//! as a typed error). `volpexrun completions SHELL` and `volpexrun man` print what
//! `clap_complete` and `clap_mangen` make of `cli`.
//!
//! Dependencies point down: `job` uses `control`, `remote`, `report` and the parsers;
//! those use only `job::event` and `job::replica`, never the driver. This file only
//! dispatches to a subcommand; it must never decide anything about a job.
#![deny(unsafe_code)]

mod affinity;
mod agent;
mod binding;
mod chaos;
mod cli;
mod control;
mod error;
mod event;
mod fault;
mod hostfile;
mod job;
mod notice;
mod operator;
mod output;
mod placement;
mod plan;
mod remote;
mod slurm;
mod stdin;
mod vitals;

fn main() {
    // The binary, not the library, sets up logging: VOLPEX_LOG (else RUST_LOG) names the
    // level, warnings by default.
    let level = std::env::var("VOLPEX_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn".into());
    let _ = env_logger::Builder::new().parse_filters(&level).try_init();
    // Subcommands are recognised only as the first word, so a program called `plan` still
    // runs as `volpexrun -n 2 plan`.
    let mut argv = std::env::args_os();
    let first = argv.nth(1);
    match first.as_ref().and_then(|a| a.to_str()) {
        Some("plan") => std::process::exit(plan::main(
            std::iter::once("volpexrun plan".into()).chain(argv),
        )),
        // Internal: started by volpexrun on remote hosts, speaks frames on stdin/stdout.
        Some("agent") if argv.len() == 0 => std::process::exit(agent::main()),
        Some("completions") if argv.len() == 1 => {
            std::process::exit(cli::completions(argv.next().as_deref()))
        }
        Some("man") if argv.len() == 0 => std::process::exit(cli::man_page()),
        _ => {}
    }
    let args = match cli::parse_argv(std::env::args_os()) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
    std::process::exit(job::run(&args));
}
