//! Communication while the sender computes, on Volpex; `c/overlap.c` is the same method
//! on MPI. Compute phases are busy spins on the monotonic clock that never call the
//! library, as an application's loops do.
//!
//! Parts (each run as a job of its own):
//! - `arrival` (2 ranks on one host): for each message size S, burst length M and
//!   compute time C, after a barrier rank 0 reads the host's monotonic clock, starts M
//!   immediate sends of S bytes to rank 1, spins for C µs, then waits for the sends;
//!   rank 1 receives the M messages and reads the clock when the last one is in its
//!   buffer. Rank 0 then sends its clock reading, and the row's time is the median over
//!   iterations of the difference: how long after it was sent the data was there. Both
//!   ranks read one clock (CLOCK_MONOTONIC is the host's), so no barrier skew enters. A
//!   library that delivers without the sender's help gives the same time for every C;
//!   one that needs the sender's CPU to answer a request gives about C more. M = 2 is
//!   LU's pattern of several messages to one neighbour in a row.
//! - `pipeline` (N ranks, LU's wavefront): K times, every rank but the first receives S
//!   bytes from its left neighbour, spins for W µs, and every rank but the last sends S
//!   bytes to its right. The row's time is the slowest rank's, from a barrier to its
//!   last step; the ideal is (K + N - 1) W.
//!
//! Output rows (CSV, or a table): `test,size_bytes,messages,compute_us,time_us`, where
//! `test` is `arrival` or `pipeline`; for `pipeline` the compute time is W and the
//! messages are K.

use std::time::{Duration, Instant};

use volpex::SystemOperation;

/// Options (the C program takes the same ones).
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// `arrival` (2 ranks) or `pipeline` (any number of ranks).
    #[arg(long, value_enum, default_value_t = Part::Arrival)]
    pub part: Part,
    /// Print CSV (`test,size_bytes,messages,compute_us,time_us`) instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Arrival: message sizes in bytes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_SIZES)]
    pub sizes: Vec<usize>,
    /// Arrival: the sender's compute times C in µs, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_COMPUTE_US)]
    pub compute_us: Vec<u64>,
    /// Arrival: messages rank 0 sends in a row before it computes, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_MESSAGES)]
    pub messages: Vec<u64>,
    /// Arrival: timed iterations per (size, messages, C), after a few untimed ones.
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
/// Default burst lengths: one message, and two in a row (the second finds no request
/// of the receiver's waiting for it).
pub const DEFAULT_MESSAGES: [u64; 2] = [1, 2];

/// Untimed messages before each timed series.
const WARMUP_ITERS: u64 = 3;

/// Arrival: rank 0 waits this long after the barrier before it sends, so that rank 1
/// has left the barrier too (a barrier's ranks leave up to a message's latency apart,
/// in a different order in each library) and waits in its receive.
const SETTLE_US: u64 = 100;

/// Tag of rank 0's clock reading, after the timed messages (tag 0).
const CLOCK_TAG: i32 = 1;

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
pub const CSV_HEADER: &str = "test,size_bytes,messages,compute_us,time_us";

/// Spins on the monotonic clock for `us` microseconds without calling the library.
fn spin(us: u64) {
    let end = Instant::now() + Duration::from_micros(us);
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

/// The host's monotonic clock in µs: the same clock for every process on the host.
fn host_clock_us() -> f64 {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) {
        Ok(t) => t.tv_sec() as f64 * 1e6 + t.tv_nsec() as f64 / 1e3,
        // CLOCK_MONOTONIC exists on every Linux; a failure here is a broken invariant.
        Err(e) => panic!("clock_gettime(CLOCK_MONOTONIC): {e}"),
    }
}

fn print_row(csv: bool, test: &str, size: usize, messages: u64, compute_us: u64, time_us: f64) {
    if csv {
        println!("{test},{size},{messages},{compute_us},{time_us:.3}");
    } else {
        println!("{test:<10} {size:>10} {messages:>10} {compute_us:>12} {time_us:>14.3}");
    }
}

fn print_header(csv: bool) {
    if csv {
        println!("{CSV_HEADER}");
    } else {
        println!(
            "{:<10} {:>10} {:>10} {:>12} {:>14}",
            "test", "bytes", "messages", "compute_us", "time_us"
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
        for &m in &a.messages {
            for &c in &a.compute_us {
                let mut samples = Vec::new();
                for i in 0..a.iters + WARMUP_ITERS {
                    world.barrier()?;
                    if rank == 0 {
                        spin(SETTLE_US);
                        let sent = [host_clock_us()];
                        let reqs = (0..m)
                            .map(|_| other.immediate_send(&buf[..size]))
                            .collect::<Result<Vec<_>, _>>()?;
                        spin(c);
                        volpex::wait_all(reqs)?;
                        other.send_with_tag(&sent[..], CLOCK_TAG)?;
                    } else {
                        for _ in 0..m {
                            other.receive_into_with_tag(&mut buf[..size], 0)?;
                        }
                        let arrived = host_clock_us();
                        let mut sent = [0.0f64];
                        other.receive_into_with_tag(&mut sent[..], CLOCK_TAG)?;
                        if i >= WARMUP_ITERS {
                            samples.push(arrived - sent[0]);
                        }
                    }
                }
                if rank == 1 {
                    print_row(a.csv, "arrival", size, m, c, median(samples));
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
        print_row(a.csv, "pipeline", a.bytes, a.steps, a.work_us, worst[0]);
    } else {
        root.reduce_into(&mine, SystemOperation::max())?;
    }
    Ok(())
}

/// The median of `v` (NaN when empty).
fn median(v: Vec<f64>) -> f64 {
    crate::runs::median(v)
}
