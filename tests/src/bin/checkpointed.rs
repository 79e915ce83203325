//! Test program: an iterative computation that checkpoints, for regeneration tests.
//!
//! `checkpointed ITERS PAUSE_MS EVERY [any]`: every rank holds a vector; each iteration
//! it exchanges a value with its ring neighbours (with `any`: both are received from
//! `ANY_SOURCE` with the iteration's tag, which makes the rank's choices coordinated), mixes
//! it in, and the ranks of each parity sum a value over a split communicator. Every
//! `EVERY` iterations (0: never) it checkpoints its state. A regenerated replica restored
//! from a checkpoint resumes from it. Rank 0 prints a line every 10 iterations and at the
//! end recomputes the whole run serially: the job's result must equal it.

use serde::{Deserialize, Serialize};

const LEN: usize = 64;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    iter: u64,
    x: Vec<u64>,
    parity_sums: u64,
}

fn start(rank: u64) -> State {
    State {
        iter: 0,
        x: (0..LEN as u64).map(|i| rank * 1000 + i).collect(),
        parity_sums: 0,
    }
}

fn mix(x: &mut [u64], from_left: u64, from_right: u64, iter: u64) {
    for (i, v) in x.iter_mut().enumerate() {
        *v = v
            .wrapping_mul(6364136223846793005)
            .wrapping_add(from_left ^ (from_right << 1) ^ (i as u64) ^ iter);
    }
}

fn step_all(states: &mut [State], iter: u64) {
    let n = states.len();
    let firsts: Vec<u64> = states.iter().map(|s| s.x[0]).collect();
    let parity: [u64; 2] = [0, 1].map(|p| {
        firsts
            .iter()
            .enumerate()
            .filter(|(r, _)| r % 2 == p)
            .fold(0u64, |a, (_, v)| a.wrapping_add(*v))
    });
    for (r, s) in states.iter_mut().enumerate() {
        let left = firsts[(r + n - 1) % n];
        let right = firsts[(r + 1) % n];
        mix(&mut s.x, left, right, iter);
        s.parity_sums = s.parity_sums.wrapping_add(parity[r % 2]);
        s.iter = iter + 1;
    }
}

fn digest(s: &State) -> u64 {
    s.x.iter().fold(s.parity_sums, |a, v| {
        a.wrapping_mul(1_000_003).wrapping_add(*v)
    })
}

fn main() -> Result<(), volpex::Error> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (iters, pause_ms, every) = (arg(1, 40), arg(2, 50), arg(3, 1));
    let any = args.get(4).is_some_and(|a| a == "any");
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let half = world
        .split_by_color(Some(rank % 2))?
        .ok_or(volpex::Error::Usage("split left this rank out"))?;
    let mut s = match universe.restored::<State>()? {
        Some(s) => {
            eprintln!("rank {rank} restored at iteration {}", s.iter);
            s
        }
        None => start(rank as u64),
    };
    let (left, right) = ((rank + size - 1) % size, (rank + 1) % size);
    while s.iter < iters {
        let mine = s.x[0];
        // A neighbour is at most one iteration ahead: four tags keep iterations apart.
        let tag = if any { 10 + (s.iter % 4) as i32 } else { 1 };
        world.process_at_rank(right).send_with_tag(&mine, tag)?;
        world
            .process_at_rank(left)
            .send_with_tag(&mine, if any { tag } else { 2 })?;
        let (from_left, from_right) = if any && size > 2 {
            let (a, sa) = world.any_process().receive_with_tag::<u64>(tag)?;
            let (b, _) = world.any_process().receive_with_tag::<u64>(tag)?;
            if sa.source_rank() == left {
                (a, b)
            } else {
                (b, a)
            }
        } else {
            let (a, _) = world.process_at_rank(left).receive_with_tag::<u64>(1)?;
            let (b, _) = world.process_at_rank(right).receive_with_tag::<u64>(2)?;
            (a, b)
        };
        let mut sum = [0u64];
        half.all_reduce_into(&[mine], &mut sum, volpex::SystemOperation::sum())?;
        mix(&mut s.x, from_left, from_right, s.iter);
        s.parity_sums = s.parity_sums.wrapping_add(sum[0]);
        s.iter += 1;
        if rank == 0 && s.iter % 10 == 0 {
            println!("iteration {} x0 {}", s.iter, s.x[0]);
        }
        std::thread::sleep(std::time::Duration::from_millis(pause_ms));
        if every > 0 && s.iter % every == 0 {
            world.checkpoint(&s)?;
        }
    }
    let mine = [digest(&s)];
    let mut all = vec![0u64; size as usize];
    world.all_gather_into(&mine[..], &mut all[..])?;
    if rank == 0 {
        let mut serial: Vec<State> = (0..size as u64).map(start).collect();
        for it in 0..iters {
            step_all(&mut serial, it);
        }
        let want: Vec<u64> = serial.iter().map(digest).collect();
        volpex_tests::check("checkpointed", all == want, "result equals the serial run");
        println!(
            "checkpointed: {iters} iterations, result {:016x}",
            all.iter().fold(0u64, |a, v| a ^ v)
        );
    }
    Ok(())
}
