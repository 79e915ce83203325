//! Test program for regeneration: a token goes around the ring `ROUNDS` times; rank 0
//! works `WORK_MS` milliseconds per round and sets the pace, so the job runs for seconds
//! and replicas can be killed (and regenerated) in the middle, while a new incarnation of
//! another rank replays quickly from the logs. Every rank prints a progress line every 10
//! rounds on stdout and on stderr (a new incarnation replays them: they must appear
//! once); rank 0 checks the final token against the value computed locally and prints one
//! result line.
//!
//! With `checkpoint`, every rank checkpoints (round, token) after every round, and a new
//! incarnation restored from its sibling's checkpoint resumes there.
//!
//! With `REGEN_INIT_DELAY_MS=N` in its environment, every process sleeps N ms before it
//! initializes: a fault timed before that lands before the rendezvous (the launcher
//! cannot send its address table before every replica registered, or its stragglers'
//! grace of 3 s is over). With `REGEN_LATE=R.K:N` as well, only replica K of rank R
//! sleeps N ms, in its first incarnation: a straggler the launcher ends when its grace is
//! over.
//!
//! `volpexrun -n 3 -r 2 regen ROUNDS WORK_MS [checkpoint]`

use std::time::Duration;

fn mix(token: u64, rank: u64, round: u64) -> u64 {
    token.wrapping_mul(6364136223846793005).wrapping_add(
        (rank + 1)
            .wrapping_mul(1442695040888963407)
            .wrapping_add(round),
    )
}

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// The sleep `REGEN_LATE=R.K:N` asks of this process (0 unless it is replica K of rank R
/// in its first incarnation), from the variables volpexrun sets.
fn late_ms() -> u64 {
    let var = |name: &str| std::env::var(name).ok();
    let Some(late) = var("REGEN_LATE") else {
        return 0;
    };
    let me = format!(
        "{}.{}",
        var("VOLPEX_RANK").unwrap_or_default(),
        var("VOLPEX_REPLICA").unwrap_or_default()
    );
    let first = var("VOLPEX_INCARNATION").is_none_or(|i| i == "0");
    match late.split_once(':') {
        Some((who, ms)) if who == me && first => ms.parse().unwrap_or(0),
        _ => 0,
    }
}

fn main() -> Result<(), volpex::Error> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let (rounds, work_ms) = (arg(1, 100), arg(2, 20));
    let checkpoints = std::env::args().nth(3).is_some_and(|a| a == "checkpoint");
    let delay_ms = std::env::var("REGEN_INIT_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    std::thread::sleep(Duration::from_millis(delay_ms + late_ms()));
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let me = rank as u64;
    let (first, mut token) = universe.restored::<(u64, u64)>()?.unwrap_or((0, 17));
    for round in first..rounds {
        if rank == 0 {
            token = mix(token, me, round);
            next.send(&token)?;
            token = prev.receive::<u64>()?.0;
        } else {
            token = mix(prev.receive::<u64>()?.0, me, round);
            next.send(&token)?;
        }
        if rank == 0 {
            std::thread::sleep(Duration::from_millis(work_ms));
        }
        if round % 10 == 9 {
            println!("regen: rank {rank} round {} token {token:016x}", round + 1);
            eprintln!("regen: rank {rank} round {}", round + 1);
        }
        if checkpoints {
            world.checkpoint(&(round + 1, token))?;
        }
    }
    world.barrier()?;
    if rank == 0 {
        let mut expect = 17u64;
        for round in 0..rounds {
            for r in 0..size as u64 {
                expect = mix(expect, r, round);
            }
        }
        volpex_tests::check("regen", token == expect, "final token");
        println!("regen: ranks={size} rounds={rounds} checksum={token:016x} ok");
    }
    Ok(())
}
