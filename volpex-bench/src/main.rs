//! `volpex-bench`: benchmarks of the Volpex runtime, and side-by-side runs against
//! Open MPI over TCP. Benchmarks are measurements, never tests.
#![deny(unsafe_code)]

mod chaos;
mod collectives;
mod compare;
mod npb;
mod overlap;
mod pingpong;
mod plot;
mod regen;
mod runs;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "volpex-bench", version, about = "Volpex benchmarks")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Ping-pong between ranks 0 and 1 (run under `volpexrun -n 2`): one-way latency
    /// (half the round trip) and bandwidth for message sizes 1 B .. 4 MiB.
    Pingpong(pingpong::Args),
    /// All-reduce, broadcast and all-to-all times for 8 B .. 1 MiB (run under
    /// `volpexrun -n N`).
    Collectives(collectives::Args),
    /// Run a benchmark under Volpex and under Open MPI (over TCP) alternately, several
    /// rounds, and print the medians side by side.
    Compare {
        #[command(subcommand)]
        what: compare::What,
    },
    /// Communication while the sender computes (run under `volpexrun`): `--part arrival`
    /// (2 ranks) times when a message sent before a compute phase arrives; `--part
    /// pipeline` a receive-compute-send chain (LU's pattern).
    Overlap(overlap::Args),
    /// Run NAS Parallel Benchmark jobs under volpexrun (benchmark x class x ranks x
    /// replicas, optionally with a replica killed) and write CSV and Markdown results.
    Npb(npb::Args),
    /// Soak run: loop jobs under `volpexrun --chaos` (ring, stencil, NPB CG, MG, LU), each
    /// paired with a failure-free run; report runs, faults injected, failures and the time
    /// ratio to failure-free.
    Chaos(chaos::Args),
    /// What regenerating lost replicas costs: NPB jobs failure-free and with a replica
    /// killed every few seconds, alternately; medians, cost per regeneration, catch-up
    /// times.
    Regen(regen::Args),
    /// Draw a figure (SVG) again from a saved file: `pingpong` and `npb` from `compare
    /// pingpong --csv` / `compare npb --csv`, `npb-runs` from `volpex-bench npb --csv`,
    /// `timeline` from `volpexrun --report`. Runs nothing.
    Plot(plot::Args),
}

fn main() {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Pingpong(a) => pingpong::run(&a),
        Cmd::Collectives(a) => collectives::run(&a),
        Cmd::Compare { what } => compare::run(&what),
        Cmd::Overlap(a) => overlap::run(&a),
        Cmd::Npb(a) => npb::run(&a),
        Cmd::Chaos(a) => chaos::run(&a),
        Cmd::Regen(a) => regen::run(&a),
        Cmd::Plot(a) => plot::run(&a),
    };
    if let Err(e) = res {
        eprintln!("volpex-bench: {e}");
        std::process::exit(1);
    }
}
