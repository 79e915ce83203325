//! 1-D Jacobi relaxation with halo exchange; prints the final residual.
//! The same line at every replication degree is the point.
//!
//! `volpexrun -n 4 -r 2 target/debug/examples/stencil --cells 1000 --iters 200`

use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Cells per rank.
    #[arg(long, default_value_t = 256)]
    cells: usize,
    /// Relaxation sweeps.
    #[arg(long, default_value_t = 100)]
    iters: u64,
    /// Milliseconds of extra work per sweep (to stretch the run for fault tests).
    #[arg(long, default_value_t = 0)]
    work_ms: u64,
}

const TAG_LEFT: i32 = 1;
const TAG_RIGHT: i32 = 2;
const TAG_SUM: i32 = 3;

fn main() -> Result<(), volpex::Error> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let args = Args::parse();
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let n = args.cells.max(1);
    let first = rank as usize * n;
    // u[0] and u[n+1] are ghost cells; the global boundary stays 0, the source is a bump.
    let mut u = vec![0.0f64; n + 2];
    let f: Vec<f64> = (0..n)
        .map(|i| {
            let x = (first + i) as f64 / (n * size as usize) as f64;
            (std::f64::consts::PI * x).sin()
        })
        .collect();
    let h2 = 1.0 / ((n * size as usize) as f64).powi(2);
    let mut next = u.clone();
    for _ in 0..args.iters {
        exchange(&world, &mut u, rank, size)?;
        for i in 1..=n {
            next[i] = 0.5 * (u[i - 1] + u[i + 1] + h2 * f[i - 1]);
        }
        std::mem::swap(&mut u, &mut next);
        if args.work_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(args.work_ms));
        }
    }
    exchange(&world, &mut u, rank, size)?;
    let local: f64 = (1..=n)
        .map(|i| {
            let r = (u[i - 1] - 2.0 * u[i] + u[i + 1]) / h2 + f[i - 1];
            r * r
        })
        .sum();
    // Deterministic reduction: rank 0 adds the partial sums in rank order.
    if rank == 0 {
        let mut total = local;
        for r in 1..size {
            let (part, _) = world.process_at_rank(r).receive_with_tag::<f64>(TAG_SUM)?;
            total += part;
        }
        println!(
            "stencil: ranks={size} cells={} iters={} residual={:.12e}",
            n * size as usize,
            args.iters,
            total.sqrt()
        );
    } else {
        world.process_at_rank(0).send_with_tag(&local, TAG_SUM)?;
    }
    Ok(())
}

/// Fills the ghost cells from the neighbours (global boundary cells stay 0).
fn exchange(
    world: &volpex::Communicator,
    u: &mut [f64],
    rank: i32,
    size: i32,
) -> Result<(), volpex::Error> {
    let n = u.len() - 2;
    if rank > 0 {
        world
            .process_at_rank(rank - 1)
            .send_with_tag(&u[1], TAG_LEFT)?;
    }
    if rank + 1 < size {
        world
            .process_at_rank(rank + 1)
            .send_with_tag(&u[n], TAG_RIGHT)?;
    }
    if rank > 0 {
        let (v, _) = world
            .process_at_rank(rank - 1)
            .receive_with_tag::<f64>(TAG_RIGHT)?;
        u[0] = v;
    }
    if rank + 1 < size {
        let (v, _) = world
            .process_at_rank(rank + 1)
            .receive_with_tag::<f64>(TAG_LEFT)?;
        u[n + 1] = v;
    }
    Ok(())
}
