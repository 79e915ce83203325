//! Passes a token around all ranks for `--rounds` rounds; rank 0 prints a checksum.
//! The same line at every replication degree is the point.
//!
//! `volpexrun -n 4 -r 2 target/debug/examples/ring --rounds 100`

use clap::Parser;

#[derive(Parser)]
struct Args {
    /// Times the token goes around.
    #[arg(long, default_value_t = 10)]
    rounds: u64,
    /// Milliseconds each rank works before passing the token on.
    #[arg(long, default_value_t = 0)]
    work_ms: u64,
    /// Extra payload bytes carried with the token.
    #[arg(long, default_value_t = 0)]
    payload: usize,
    /// Every this many rounds rank 0 says on stderr how far it got (`ring: round N`), so
    /// that a test can act on the job's progress; 0: never.
    #[arg(long, default_value_t = 0)]
    progress: u64,
}

fn mix(token: u64, rank: i32, round: u64) -> u64 {
    token.wrapping_mul(6364136223846793005).wrapping_add(
        (rank as u64 + 1)
            .wrapping_mul(1442695040888963407)
            .wrapping_add(round),
    )
}

fn main() -> Result<(), volpex::Error> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let args = Args::parse();
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    // msg[0] is the token; the other words are a payload rank 0 fills and checks.
    let mut msg = vec![0u64; 1 + args.payload.div_ceil(8)];
    let mut token = 17u64;
    let mut bad_payload = 0u64;
    for round in 0..args.rounds {
        if rank == 0 {
            token = mix(token, rank, round);
            msg[0] = token;
            let seal = token;
            for (i, w) in msg.iter_mut().enumerate().skip(1) {
                *w = seal ^ i as u64;
            }
            next.send(&msg[..])?;
            prev.receive_into(&mut msg[..])?;
            token = msg[0];
            bad_payload += msg
                .iter()
                .enumerate()
                .skip(1)
                .filter(|(i, w)| **w != seal ^ *i as u64)
                .count() as u64;
            if args.progress > 0 && (round + 1) % args.progress == 0 {
                eprintln!("ring: round {}", round + 1);
            }
        } else {
            prev.receive_into(&mut msg[..])?;
            msg[0] = mix(msg[0], rank, round);
            if args.work_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(args.work_ms));
            }
            next.send(&msg[..])?;
        }
    }
    world.barrier()?;
    if rank == 0 {
        println!(
            "ring: ranks={size} rounds={} checksum={token:016x} bad_payload_words={bad_payload}",
            args.rounds
        );
    }
    Ok(())
}
