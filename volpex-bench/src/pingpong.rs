//! The ping-pong benchmark on Volpex; `c/pingpong.c` is the same method on MPI.

/// Ping-pong options (the C program takes the same ones).
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Print CSV (`size_bytes,lat_us,mbps`) instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Round trips per size up to 8 KiB; larger sizes do proportionally fewer (at least 100).
    #[arg(long, default_value_t = 2000)]
    pub iters: u64,
    /// Smallest message size in bytes.
    #[arg(long, default_value_t = 1)]
    pub min_bytes: usize,
    /// Largest message size in bytes (sizes double from the smallest).
    #[arg(long, default_value_t = 4 << 20)]
    pub max_bytes: usize,
    /// How the receives name their message: `tag` (source and tag 0), `any-tag` (source,
    /// any tag: the `mpi` crate's untagged receive, the default) or `any-source` (any
    /// source, tag 0: a coordinated choice under replication).
    #[arg(long, value_enum, default_value_t = Match::AnyTag)]
    pub matching: Match,
}

/// How the ping-pong's receives match.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// `process_at_rank(other).receive_into_with_tag(buf, 0)`.
    Tag,
    /// `process_at_rank(other).receive_into(buf)`.
    AnyTag,
    /// `any_process().receive_into_with_tag(buf, 0)`.
    AnySource,
}

/// Fewest round trips timed for one size: 20 round trips of 1 MiB last 5 ms, and one
/// scheduler hiccup moved such an average by 20% (`c/pingpong.c` uses the same floor).
const MIN_ITERS: u64 = 100;

/// Repetitions for one size: `base` up to 8 KiB, proportionally fewer above, at least
/// `min` (the C programs use the same rule).
pub fn iters_for(size: usize, base: u64, min: u64) -> u64 {
    let n = if size <= 8192 {
        base
    } else {
        base * 8192 / size as u64
    };
    n.max(min)
}

/// Runs the ping-pong; rank 0 prints the results.
pub fn run(a: &Args) -> Result<(), String> {
    let universe = volpex::initialize().map_err(|e| e.to_string())?;
    let world = universe.world();
    if world.size() != 2 {
        return Err(format!(
            "pingpong needs exactly 2 ranks (got {}): volpexrun -n 2 ...",
            world.size()
        ));
    }
    let (rank, other) = (world.rank(), world.process_at_rank(1 - world.rank()));
    let from = match a.matching {
        Match::Tag | Match::AnyTag => other,
        Match::AnySource => world.any_process(),
    };
    let receive = |msg: &mut [u8]| match a.matching {
        Match::AnyTag => from.receive_into(msg),
        Match::Tag | Match::AnySource => from.receive_into_with_tag(msg, 0),
    };
    let mut buf = vec![0u8; a.max_bytes.max(1)];
    if rank == 0 {
        if a.csv {
            println!("size_bytes,lat_us,mbps");
        } else {
            println!("{:>12} {:>12} {:>12}", "bytes", "latency_us", "MB/s");
        }
    }
    let mut size = a.min_bytes.max(1);
    while size <= a.max_bytes {
        let iters = iters_for(size, a.iters, MIN_ITERS);
        let warm = (iters / 10).max(2);
        world.barrier().map_err(|e| e.to_string())?;
        let mut t0 = 0.0;
        for i in 0..iters + warm {
            if i == warm {
                t0 = volpex::wtime();
            }
            let msg = &mut buf[..size];
            let step = if rank == 0 {
                other.send(&msg[..]).and_then(|()| receive(msg).map(drop))
            } else {
                receive(&mut msg[..]).and_then(|_| other.send(&msg[..]))
            };
            step.map_err(|e| e.to_string())?;
        }
        let one_way = (volpex::wtime() - t0) / iters as f64 / 2.0;
        if rank == 0 {
            let (lat, mbps) = (one_way * 1e6, size as f64 / one_way / 1e6);
            if a.csv {
                println!("{size},{lat:.3},{mbps:.1}");
            } else {
                println!("{size:>12} {lat:>12.3} {mbps:>12.1}");
            }
        }
        size *= 2;
    }
    Ok(())
}
