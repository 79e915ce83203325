//! `npb`: the NAS Parallel Benchmarks (NPB 3.x MPI versions) on Volpex.
//!
//! `volpexrun -n 4 -r 2 target/release/npb cg --class A`; without volpexrun it runs as a
//! single process. Rank 0 prints the standard NPB report block; the exit code is 0 only
//! when the run verified against the official values.
#![deny(unsafe_code)]

mod bt;
mod cfd;
mod cg;
mod checkpoint;
mod common;
mod ep;
mod ft;
mod is;
mod lu;
mod mg;
mod sp;

use checkpoint::Checkpoints;
use clap::{Parser, ValueEnum};
use common::{Class, NpbError, Report};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Bench {
    Bt,
    Sp,
    Lu,
    Ep,
    Is,
    Cg,
    Mg,
    Ft,
}

/// NAS Parallel Benchmarks on Volpex.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Which benchmark.
    #[arg(value_enum)]
    bench: Bench,
    /// Problem class: S, W, A, B or C.
    #[arg(long, default_value = "S")]
    class: Class,
    /// Checkpoint every K iterations (never after the last one), so that a regenerated
    /// replica restarts from its sibling's latest checkpoint and sender logs stay
    /// bounded; 0 turns checkpoints off. Units and defaults: BT, SP, LU: time steps,
    /// default 10; CG: iterations, default 1; MG: V-cycles, FT: iterations (FT also
    /// after its set-up), default 1 up to 2 MiB of state per process (class S), else 5
    /// (MG) and 2 (FT); IS: before ranking iterations, default 1; EP: batches of 2^16
    /// pairs, default 1/16 of a process's batches.
    #[arg(long, value_name = "K")]
    checkpoint_every: Option<u64>,
}

fn run(
    bench: Bench,
    world: &volpex::Communicator,
    class: Class,
    ck: &Checkpoints,
) -> Result<Report, NpbError> {
    match bench {
        Bench::Bt => bt::run(world, class, ck),
        Bench::Sp => sp::run(world, class, ck),
        Bench::Lu => lu::run(world, class, ck),
        Bench::Ep => ep::run(world, class, ck),
        Bench::Is => is::run(world, class, ck),
        Bench::Cg => cg::run(world, class, ck),
        Bench::Mg => mg::run(world, class, ck),
        Bench::Ft => ft::run(world, class, ck),
    }
}

fn main() -> std::process::ExitCode {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let args = Args::parse();
    let outcome = volpex::initialize()
        .map_err(NpbError::from)
        .and_then(|universe| {
            let world = universe.world();
            let ck = Checkpoints::new(&universe, world.rank(), args.checkpoint_every);
            let report = run(args.bench, &world, args.class, &ck)?;
            ck.report(&format!("{:?}", args.bench), world.rank(), &report.checks);
            if world.rank() == 0 {
                print!("{}", report.render());
            }
            Ok(report.verified)
        });
    match outcome {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::from(2),
        Err(e) => {
            eprintln!("npb: error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
