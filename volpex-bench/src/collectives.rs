//! Collective timings on Volpex; `c/collectives.c` is the same method on MPI.
//! All-reduce of f64 with sum, broadcast of bytes from rank 0, all-to-all of bytes
//! (the size is the bytes each rank sends in all); rank 0 reports the mean time of one
//! operation after a warm-up.

use volpex::SystemOperation;

/// Options (the C program takes the same ones).
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Print CSV (`op,size_bytes,time_us`) instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Operations per size up to 8 KiB; larger sizes do proportionally fewer (at least 10).
    #[arg(long, default_value_t = 500)]
    pub iters: u64,
    /// Smallest size in bytes (sizes grow by 4x).
    #[arg(long, default_value_t = 8)]
    pub min_bytes: usize,
    /// Largest size in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_bytes: usize,
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
    for op in ["allreduce", "broadcast", "alltoall"] {
        let mut size = a.min_bytes.max(1);
        while size <= a.max_bytes {
            let floats = vec![1.0f64; (size / 8).max(1)];
            let mut fout = floats.clone();
            let block = (size / n).max(1);
            let bytes = vec![7u8; block * n];
            let mut bout = bytes.clone();
            let mut bcast = vec![0u8; size];
            let iters = crate::pingpong::iters_for(size, a.iters, 10);
            let warm = (iters / 10).max(2);
            world.barrier().map_err(err)?;
            let mut t0 = 0.0;
            for i in 0..iters + warm {
                if i == warm {
                    t0 = volpex::wtime();
                }
                match op {
                    "allreduce" => world
                        .all_reduce_into(&floats, &mut fout, SystemOperation::sum())
                        .map_err(err)?,
                    "broadcast" => world
                        .process_at_rank(0)
                        .broadcast_into(&mut bcast[..])
                        .map_err(err)?,
                    _ => world.all_to_all_into(&bytes, &mut bout).map_err(err)?,
                }
            }
            let t = (volpex::wtime() - t0) / iters as f64 * 1e6;
            if world.rank() == 0 {
                if a.csv {
                    println!("{op},{size},{t:.3}");
                } else {
                    println!("{op:<10} {size:>12} {t:>12.3}");
                }
            }
            size *= 4;
        }
    }
    Ok(())
}
