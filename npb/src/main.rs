//! `npb`: the NAS Parallel Benchmarks (NPB 3.x MPI versions) on Volpex.
//!
//! `volpexrun -n 4 -r 2 target/release/npb cg --class A`; without volpexrun it runs as a
//! single process. Rank 0 prints the standard NPB report block; the exit code is 0 only
//! when the run verified against the official values.
#![deny(unsafe_code)]

mod bt;
mod cfd;
mod cg;
mod common;
mod ep;
mod ft;
mod is;
mod lu;
mod mg;
mod sp;

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
}

fn run(bench: Bench, world: &volpex::Communicator, class: Class) -> Result<Report, NpbError> {
    match bench {
        Bench::Bt => bt::run(world, class),
        Bench::Sp => sp::run(world, class),
        Bench::Lu => lu::run(world, class),
        Bench::Ep => ep::run(world, class),
        Bench::Is => is::run(world, class),
        Bench::Cg => cg::run(world, class),
        Bench::Mg => mg::run(world, class),
        Bench::Ft => ft::run(world, class),
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let outcome = volpex::initialize()
        .map_err(NpbError::from)
        .and_then(|universe| {
            let world = universe.world();
            let report = run(args.bench, &world, args.class)?;
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
