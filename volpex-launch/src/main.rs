//! `volpexrun`: starts a replicated Volpex job and sees it through.
//!
//! Modules: `cli` (flags, fault specs), `job` (processes, rendezvous, exit policy),
//! `control` (authenticated control connections), `output` (each rank's output once),
//! `report` (summary). Local processes only so far; ssh and hostfiles come next.
#![deny(unsafe_code)]

mod cli;
mod control;
mod job;
mod output;
mod report;

use clap::Parser;

fn main() {
    let _ = env_logger::Builder::from_env(env_logger::Env::new().filter_or("VOLPEX_LOG", "warn"))
        .try_init();
    let args = cli::Args::parse();
    std::process::exit(job::run(&args));
}
