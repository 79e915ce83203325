//! Collective timings on Volpex; `c/collectives.c` is the same method on MPI.
//!
//! Operations: all-reduce of f64 with sum, broadcast of bytes, all-to-all of bytes (the
//! size is the bytes each rank sends in all), and on request all-gather of bytes (the
//! bytes each rank receives in all), inclusive scan of f64 with sum, and barrier (the
//! size is ignored). Sizes grow by 4x from `--min-bytes`, and
//! `--max-bytes` itself is always the last size. The root of the i-th broadcast of a
//! size is rank i mod N (as in the Intel MPI Benchmarks): with one root, the root of a
//! loop of broadcasts would only fill its send buffers (or log) and race ahead, and the
//! loop would time the receivers' throughput rather than broadcasts.
//!
//! Methods (the same in both programs), after a warm-up of `iters / 10` (at least 2)
//! operations and a barrier, for each operation and size:
//! - `loop`: every rank times a loop of `iters` operations followed by a barrier and
//!   divides by `iters`; the reported time is the maximum of the ranks' times. The
//!   closing barrier makes the time cover the whole operation on every rank (a root
//!   whose sends are buffered cannot stop its clock before the last rank has its data);
//!   operations may overlap one another, so this is the time per operation of a stream
//!   of them (throughput).
//! - `single`: every operation starts after a barrier and is timed alone on every rank;
//!   the reported time is the mean over operations of the maximum over ranks (the
//!   barrier is not timed): the time of one operation from a common start until the
//!   last rank has finished (latency).
//!
//! In both, the ranks' times are reduced to rank 0 after the clocks stopped.

use volpex::SystemOperation;

/// Options (the C program takes the same ones).
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Print CSV (`op,size_bytes,time_us`) instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Operations per size up to 8 KiB; larger sizes do proportionally fewer (at least 20).
    #[arg(long, default_value_t = 500)]
    pub iters: u64,
    /// Smallest size in bytes (sizes grow by 4x).
    #[arg(long, default_value_t = 8)]
    pub min_bytes: usize,
    /// Largest size in bytes (always measured).
    #[arg(long, default_value_t = 1 << 20)]
    pub max_bytes: usize,
    /// `loop` (a stream of operations; time per operation) or `single` (one operation
    /// at a time from a barrier; slowest rank).
    #[arg(long, value_enum, default_value_t = Method::Loop)]
    pub method: Method,
    /// Operations to time, comma-separated, of allreduce, broadcast, alltoall,
    /// allgather, scan, barrier.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_OPS.map(String::from))]
    pub ops: Vec<String>,
}

/// How operations are timed (see the module documentation).
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// A loop of operations closed by a barrier; the slowest rank's time per operation.
    Loop,
    /// Each operation alone, from a barrier; the mean over operations of the slowest
    /// rank's time.
    Single,
}

impl Method {
    /// The name both programs take on their command line.
    pub fn name(self) -> &'static str {
        match self {
            Method::Loop => "loop",
            Method::Single => "single",
        }
    }
}

/// Fewest timed operations per size (`c/collectives.c` uses the same).
pub const MIN_ITERS: u64 = 20;

/// The operations both programs know, in the order they run them.
pub const OPS: [&str; 6] = [
    "allreduce",
    "broadcast",
    "alltoall",
    "allgather",
    "scan",
    "barrier",
];

/// The operations timed unless `--ops` says otherwise (issue 3's comparison).
pub const DEFAULT_OPS: [&str; 3] = ["allreduce", "broadcast", "alltoall"];

/// Sizes from `min` growing by 4x while below `max`, then `max` (the C program uses the
/// same rule).
pub fn sizes(min: usize, max: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut s = min.max(1);
    while s < max {
        v.push(s);
        s *= 4;
    }
    v.push(max.max(1));
    v
}

/// Runs the timings; rank 0 prints them.
pub fn run(a: &Args) -> Result<(), String> {
    let universe = volpex::initialize().map_err(|e| e.to_string())?;
    let world = universe.world();
    let n = world.size() as usize;
    let err = |e: volpex::Error| e.to_string();
    if world.rank() == 0 {
        if a.csv {
            println!("op,size_bytes,time_us");
        } else {
            println!("{:<10} {:>12} {:>12}", "op", "bytes", "time_us");
        }
    }
    for op in OPS.into_iter().filter(|o| a.ops.iter().any(|x| x == o)) {
        for size in sizes(a.min_bytes, a.max_bytes) {
            let floats = vec![1.0f64; (size / 8).max(1)];
            let mut fout = floats.clone();
            let block = (size / n).max(1);
            let bytes = vec![7u8; block * n];
            let mut bout = bytes.clone();
            let mut bcast = vec![0u8; size];
            let iters = crate::pingpong::iters_for(size, a.iters, MIN_ITERS);
            let warm = (iters / 10).max(2);
            let mut nth = 0usize;
            let mut once = || {
                nth += 1;
                match op {
                    "allreduce" => {
                        world.all_reduce_into(&floats, &mut fout, SystemOperation::sum())
                    }
                    "broadcast" => world
                        .process_at_rank((nth % n) as i32)
                        .broadcast_into(&mut bcast[..]),
                    "allgather" => world.all_gather_into(&bytes[..block], &mut bout),
                    "barrier" => world.barrier(),
                    "scan" => world.scan_into(&floats, &mut fout, SystemOperation::sum()),
                    _ => world.all_to_all_into(&bytes, &mut bout),
                }
            };
            for _ in 0..warm {
                once().map_err(err)?;
            }
            world.barrier().map_err(err)?;
            // Per-rank times: one per operation (`single`) or one for the loop.
            let mine: Vec<f64> = match a.method {
                Method::Loop => {
                    let t0 = volpex::wtime();
                    for _ in 0..iters {
                        once().map_err(err)?;
                    }
                    world.barrier().map_err(err)?;
                    vec![(volpex::wtime() - t0) / iters as f64 * 1e6]
                }
                Method::Single => {
                    let mut ts = Vec::with_capacity(iters as usize);
                    for _ in 0..iters {
                        world.barrier().map_err(err)?;
                        let t0 = volpex::wtime();
                        once().map_err(err)?;
                        ts.push((volpex::wtime() - t0) * 1e6);
                    }
                    ts
                }
            };
            let root = world.process_at_rank(0);
            if world.rank() == 0 {
                let mut worst = vec![0.0f64; mine.len()];
                root.reduce_into_root(&mine, &mut worst, SystemOperation::max())
                    .map_err(err)?;
                let t = worst.iter().sum::<f64>() / worst.len() as f64;
                if a.csv {
                    println!("{op},{size},{t:.3}");
                } else {
                    println!("{op:<10} {size:>12} {t:>12.3}");
                }
            } else {
                root.reduce_into(&mine, SystemOperation::max())
                    .map_err(err)?;
            }
        }
    }
    Ok(())
}
