//! Communication while the sender computes, on Volpex; `c/overlap.c` is the same method
//! on MPI. Compute phases are busy spins on the monotonic clock that never call the
//! library, as an application's loops do.
//!
//! Parts (each run as a job of its own):
//! - `arrival` (2 ranks): for each message size S and compute time C, after a barrier
//!   rank 0 starts an immediate send of S bytes, spins for C µs, then waits for the
//!   send; rank 1, after waiting `--recv-delay-us` D µs (busy, as well), receives the
//!   message and records how long after its barrier exit the data was in its buffer.
//!   With D = 0 rank 1 is in its receive before the message leaves; with D > 0 the
//!   message was sent before rank 1 asked for it, so it must already be on its way (an
//!   eager send) or be fetched from a sender that is busy computing. A library that
//!   delivers without the sender's help gives the same time for every C; one that needs
//!   the sender's CPU gives about C. The row's time is the median over iterations.
//! - `pipeline` (N ranks, LU's wavefront): K times, every rank but the first receives S
//!   bytes from its left neighbour, spins for W µs, and every rank but the last sends S
//!   bytes to its right. The row's time is the slowest rank's, from a barrier to its
//!   last step; the ideal is (K + N - 1) W.
//!
//! Output rows (CSV, or a table): `test,size_bytes,compute_us,delay_us,time_us`, where
//! `test` is `arrival` or `pipeline`; for `pipeline` the compute time is W and the delay 0.

use std::time::{Duration, Instant};

use volpex::SystemOperation;

/// Options (the C program takes the same ones).
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `arrival` (2 ranks) or `pipeline` (any number of ranks).
    #[arg(long, value_enum, default_value_t = Part::Arrival)]
    pub part: Part,
    /// Print CSV (`test,size_bytes,compute_us,delay_us,time_us`) instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Arrival: message sizes in bytes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_SIZES)]
    pub sizes: Vec<usize>,
    /// Arrival: the sender's compute times C in µs, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_COMPUTE_US)]
    pub compute_us: Vec<u64>,
    /// Arrival: how long rank 1 spins after the barrier before it receives, in µs,
    /// comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_DELAY_US)]
    pub recv_delay_us: Vec<u64>,
    /// Arrival: timed messages per (size, C, delay), after a few untimed ones.
    #[arg(long, default_value_t = 30)]
    pub iters: u64,
    /// Pipeline: bytes each rank sends to its right neighbour per step.
    #[arg(long, default_value_t = 1024)]
    pub bytes: usize,
    /// Pipeline: compute time W per step, µs.
    #[arg(long, default_value_t = 100)]
    pub work_us: u64,
    /// Pipeline: steps K.
    #[arg(long, default_value_t = 1000)]
    pub steps: u64,
}

/// Default arrival message sizes: a small (eager in Open MPI) and a 64 KiB message.
pub const DEFAULT_SIZES: [usize; 2] = [8, 65536];
/// Default arrival compute times, µs.
pub const DEFAULT_COMPUTE_US: [u64; 4] = [0, 100, 1000, 10000];
/// Default receive delays, µs: receive posted at once, and posted after the send left.
pub const DEFAULT_DELAY_US: [u64; 2] = [0, 50];

/// Untimed messages before each timed series.
const WARMUP_ITERS: u64 = 3;

/// Which part of the benchmark a job runs.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Rank 0 sends, then computes; when does rank 1 have the data?
    Arrival,
    /// Receive, compute, send along a chain of ranks.
    Pipeline,
}

impl Part {
    /// The name on the command line and in output rows.
    pub fn name(self) -> &'static str {
        match self {
            Part::Arrival => "arrival",
            Part::Pipeline => "pipeline",
        }
    }
}

/// The CSV header both programs print.
pub const CSV_HEADER: &str = "test,size_bytes,compute_us,delay_us,time_us";

/// Spins on the monotonic clock for `us` microseconds without calling the library.
fn spin(us: u64) {
    let end = Instant::now() + Duration::from_micros(us);
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

fn print_row(csv: bool, test: &str, size: usize, compute_us: u64, delay_us: u64, time_us: f64) {
    if csv {
        println!("{test},{size},{compute_us},{delay_us},{time_us:.3}");
    } else {
        println!("{test:<10} {size:>10} {compute_us:>12} {delay_us:>10} {time_us:>14.3}");
    }
}

fn print_header(csv: bool) {
    if csv {
        println!("{CSV_HEADER}");
    } else {
        println!(
            "{:<10} {:>10} {:>12} {:>10} {:>14}",
            "test", "bytes", "compute_us", "delay_us", "time_us"
        );
    }
}

/// Runs one part; rank 1 prints the arrival rows, rank 0 the pipeline row.
pub fn run(a: &Args) -> Result<(), String> {
    let universe = volpex::initialize().map_err(|e| e.to_string())?;
    let world = universe.world();
    if a.part == Part::Arrival && world.size() != 2 {
        return Err(format!(
            "overlap --part arrival needs exactly 2 ranks (got {}): volpexrun -n 2 ...",
            world.size()
        ));
    }
    match a.part {
        Part::Arrival => arrival(&world, a),
        Part::Pipeline => pipeline(&world, a),
    }
    .map_err(|e| e.to_string())
}

fn arrival(world: &volpex::Communicator, a: &Args) -> Result<(), volpex::Error> {
    let rank = world.rank();
    let other = world.process_at_rank(1 - rank);
    let mut buf = vec![0u8; a.sizes.iter().copied().max().unwrap_or(1).max(1)];
    if rank == 1 {
        print_header(a.csv);
    }
    for &size in &a.sizes {
        for &c in &a.compute_us {
            for &d in &a.recv_delay_us {
                let mut samples = Vec::new();
                for i in 0..a.iters + WARMUP_ITERS {
                    world.barrier()?;
                    if rank == 0 {
                        let req = other.immediate_send(&buf[..size])?;
                        spin(c);
                        req.wait()?;
                    } else {
                        let t0 = Instant::now();
                        spin(d);
                        other.receive_into(&mut buf[..size])?;
                        if i >= WARMUP_ITERS {
                            samples.push(t0.elapsed().as_secs_f64() * 1e6);
                        }
                    }
                }
                if rank == 1 {
                    print_row(a.csv, "arrival", size, c, d, median(samples));
                }
            }
        }
    }
    Ok(())
}

fn pipeline(world: &volpex::Communicator, a: &Args) -> Result<(), volpex::Error> {
    let (rank, size) = (world.rank(), world.size());
    let mut buf = vec![0u8; a.bytes];
    world.barrier()?;
    let t0 = Instant::now();
    for _ in 0..a.steps {
        if rank > 0 {
            world.process_at_rank(rank - 1).receive_into(&mut buf[..])?;
        }
        spin(a.work_us);
        if rank + 1 < size {
            world.process_at_rank(rank + 1).send(&buf[..])?;
        }
    }
    let mine = [t0.elapsed().as_secs_f64() * 1e6];
    let root = world.process_at_rank(0);
    if rank == 0 {
        let mut worst = [0.0f64];
        root.reduce_into_root(&mine, &mut worst, SystemOperation::max())?;
        print_header(a.csv);
        print_row(a.csv, "pipeline", a.bytes, a.work_us, 0, worst[0]);
    } else {
        root.reduce_into(&mine, SystemOperation::max())?;
    }
    Ok(())
}

/// The median of `v` (NaN when empty).
fn median(v: Vec<f64>) -> f64 {
    crate::compare::median(v)
}
