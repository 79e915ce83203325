//! Test program: wildcard receives, probes and `wait_any`-style calls under replication
//! (MPI-3.1 sections 3.5, 3.7.5, 3.8; DESIGN.md "ANY_SOURCE"). Replicas run out of step on
//! purpose (per-replica random delays), so every choice that depends on timing must come
//! from the rank's leader to agree.
//!
//! `wildcards gather [--trace DIR] [--per-rank K]`: every rank but 0 sends K messages with
//! random tags in random order to rank 0, which receives them with `ANY_SOURCE` and
//! `ANY_TAG` and folds (source, tag, value) in arrival order into a digest; every eighth
//! receive it sends the digest so far to rank 1, and at the end the whole list, which
//! rank 1 checks against what it got. With `--trace DIR`, each replica of rank 0 writes
//! the sequence it matched to DIR/0.<replica>.
//!
//! `wildcards semantics`: a posted specific receive keeps its message against a later
//! wildcard; probe, immediate probe and matched probe; `wait_any`, `test_any`,
//! `test_some`, `wait_some` on wildcard and specific immediate receives.
//!
//! `wildcards cancel [--trace DIR] [--rounds N] [--work-us US]`: a ring in which every rank posts a
//! receive (from its left neighbour, then from `ANY_SOURCE`), the neighbour sends, and
//! the rank cancels the receive after a delay that differs between replicas: the
//! outcome (cancelled, or received) depends on timing, and every replica of a rank must
//! take the same one (`Request::cancel`). A cancelled receive's message must go to the
//! next receive. With `--trace DIR`, each replica writes its outcomes to
//! DIR/RANK.REPLICA; the test compares them. `--work-us`: a pause after every round.
//!
//! `wildcards sum`: rank 0 sums values from `ANY_SOURCE` (order does not matter: valid in
//! send-deterministic mode).

use std::io::Write;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex::{Communicator, Universe};

fn check(ok: bool, what: &str) {
    volpex_tests::check("wildcards", ok, what);
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn mix(d: u64, v: u64) -> u64 {
    (d ^ v).wrapping_mul(0x0100_0000_01b3)
}

/// Timing noise that differs between replicas (it never changes what is sent).
fn jitter(universe: &Universe, world: &Communicator) -> ChaCha8Rng {
    let seed = world.rank_seed(7) ^ (u64::from(universe.replica()) << 32) ^ 0x5eed;
    ChaCha8Rng::seed_from_u64(seed)
}

fn gather(
    universe: &Universe,
    world: &Communicator,
    args: &[String],
) -> Result<(), Box<dyn std::error::Error>> {
    let per: u64 = arg(args, "--per-rank", 40);
    let trace_dir: Option<String> = args
        .iter()
        .position(|a| a == "--trace")
        .and_then(|i| args.get(i + 1).cloned());
    let (rank, size) = (world.rank(), world.size());
    let mut noise = jitter(universe, world);
    if rank == 0 {
        let total = per * (size as u64 - 1);
        let mut digest = 0xcbf2_9ce4_8422_2325u64;
        let mut sent = Vec::new();
        // Written as it goes: a replica ended early leaves a prefix.
        let mut trace = match &trace_dir {
            Some(dir) => {
                let path = format!("{dir}/0.{}", universe.replica());
                Some(std::fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?)
            }
            None => None,
        };
        for i in 0..total {
            let (v, st) = world.any_process().receive::<u64>()?;
            check(
                v / 1000 == st.source_rank() as u64 && v % 1000 < per,
                "value matches its source",
            );
            check(st.tag() == (v % 7) as i32, "tag matches the value");
            digest = mix(
                mix(mix(digest, st.source_rank() as u64), st.tag() as u64),
                v,
            );
            if let Some(f) = trace.as_mut() {
                writeln!(f, "{} {} {v}", st.source_rank(), st.tag())
                    .map_err(|e| format!("trace: {e}"))?;
            }
            if i % 8 == 7 && size > 1 {
                world.process_at_rank(1).send_with_tag(&digest, 100)?;
                sent.push(digest);
            }
            if noise.random_bool(0.2) {
                std::thread::sleep(Duration::from_micros(noise.random_range(0..400)));
            }
        }
        if size > 1 {
            world.process_at_rank(1).send_with_tag(&sent[..], 101)?;
        }
        println!("wildcards gather: received {total} digest {digest:016x}");
    } else {
        let mut order: Vec<u64> = (0..per).collect();
        let mut shuffle = ChaCha8Rng::seed_from_u64(world.rank_seed(1));
        for i in (1..order.len()).rev() {
            order.swap(i, shuffle.random_range(0..=i));
        }
        for k in order {
            let v = rank as u64 * 1000 + k;
            world.process_at_rank(0).send_with_tag(&v, (v % 7) as i32)?;
            if noise.random_bool(0.3) {
                std::thread::sleep(Duration::from_micros(noise.random_range(0..600)));
            }
        }
        if rank == 1 {
            let expect = (per * (size as u64 - 1)) / 8;
            let mut got = Vec::new();
            for _ in 0..expect {
                got.push(world.process_at_rank(0).receive_with_tag::<u64>(100)?.0);
            }
            let (all, _) = world.process_at_rank(0).receive_vec_with_tag::<u64>(101)?;
            check(
                all == got,
                "the digests rank 0 sent agree with its final list",
            );
        }
    }
    Ok(())
}

fn semantics(universe: &Universe, world: &Communicator) -> Result<(), volpex::Error> {
    let (rank, size) = (world.rank(), world.size());
    check(size >= 4, "semantics needs at least 4 ranks");
    let mut noise = jitter(universe, world);
    let mut nap =
        |max_us: u64| std::thread::sleep(Duration::from_micros(noise.random_range(0..max_us)));
    let mut digest = 0u64;
    // 1. A posted specific receive keeps its message (MPI-3.1 section 3.5).
    match rank {
        0 => {
            let mut first = [0u64];
            let req = world
                .process_at_rank(1)
                .immediate_receive_into_with_tag(&mut first[..], 5)?;
            let (a, sa) = world.any_process().receive_with_tag::<u64>(5)?;
            let (b, sb) = world.any_process().receive_with_tag::<u64>(5)?;
            req.wait()?;
            check(
                first[0] == 100,
                "the posted receive from 1 got 1's first message",
            );
            let mut rest = [(sa.source_rank(), a), (sb.source_rank(), b)];
            rest.sort();
            check(rest == [(1, 101), (2, 200)], "the wildcards got the others");
            digest = mix(mix(digest, a), b);
        }
        1 => {
            world.process_at_rank(0).send_with_tag(&100u64, 5)?;
            world.process_at_rank(0).send_with_tag(&101u64, 5)?;
        }
        2 => {
            nap(2000);
            world.process_at_rank(0).send_with_tag(&200u64, 5)?;
        }
        _ => {}
    }
    // 2. Probe, immediate probe and matched probe (MPI-3.1 section 3.8).
    if rank == 0 {
        for _ in 1..size {
            let st = world.any_process().probe_with_tag(9)?;
            let (v, st2) = world
                .process_at_rank(st.source_rank())
                .receive_vec_with_tag::<u64>(9)?;
            check(
                st2 == st,
                "the receive after a probe gets the probed message",
            );
            check(v.len() == st.source_rank() as usize, "probed length");
            digest = mix(digest, st.source_rank() as u64);
        }
        let mut polls = 0u64;
        let mut seen = 0;
        while seen < size - 1 {
            match world.any_process().immediate_probe_with_tag(11)? {
                Some(st) => {
                    let (v, _) = world
                        .process_at_rank(st.source_rank())
                        .receive_with_tag::<u64>(11)?;
                    check(v == st.source_rank() as u64 * 11, "immediate probe value");
                    digest = mix(digest, v);
                    seen += 1;
                }
                None => polls += 1,
            }
        }
        // The number of empty polls is the leader's, in every replica.
        digest = mix(digest, polls);
        // One from any source with tag 12, then the rest with any tag from each other
        // source: the earliest unclaimed message of each is its tag-12 one.
        let (msg, first) = world.any_process().matched_probe_with_tag(12)?;
        let (v, st2) = msg.matched_receive_vec::<u32>()?;
        check(st2 == first, "matched probe status");
        check(
            v == vec![first.source_rank() as u32; 3],
            "matched probe data",
        );
        digest = mix(digest, first.source_rank() as u64);
        for src in (1..size).filter(|&s| s != first.source_rank()) {
            let (msg, st) = world.process_at_rank(src).matched_probe()?;
            let (v, st2) = msg.matched_receive_vec::<u32>()?;
            check(
                st2 == st && st.tag() == 12 && st.source_rank() == src,
                &format!("matched probe with any tag got {st:?}"),
            );
            check(v == vec![src as u32; 3], "matched probe data");
        }
    } else {
        nap(1500);
        world
            .process_at_rank(0)
            .send_with_tag(&vec![7u64; rank as usize][..], 9)?;
        nap(1500);
        world
            .process_at_rank(0)
            .send_with_tag(&(rank as u64 * 11), 11)?;
        nap(1500);
        world
            .process_at_rank(0)
            .send_with_tag(&[rank as u32; 3][..], 12)?;
    }
    // 3. wait_any / test_any / wait_some / test_some (MPI-3.1 section 3.7.5).
    if rank == 0 {
        let mut bufs = vec![[0u64]; size as usize - 1];
        let mut reqs = Vec::new();
        for (i, b) in bufs.iter_mut().enumerate() {
            reqs.push(
                world
                    .process_at_rank(i as i32 + 1)
                    .immediate_receive_into_with_tag(&mut b[..], 13)?,
            );
        }
        while let Some((i, st)) = volpex::wait_any(&mut reqs)? {
            digest = mix(mix(digest, i as u64), st.source_rank() as u64);
        }
        let mut wild = [[0u64]; 3];
        let mut reqs = Vec::new();
        for b in wild.iter_mut() {
            reqs.push(
                world
                    .any_process()
                    .immediate_receive_into_with_tag(&mut b[..], 14)?,
            );
        }
        let mut empty = 0u64;
        while !reqs.is_empty() {
            match volpex::test_any(&mut reqs)? {
                Some((i, st)) => digest = mix(mix(digest, i as u64), st.source_rank() as u64),
                None => empty += 1,
            }
        }
        digest = mix(digest, empty);
        let mut bufs = vec![[0u64]; size as usize - 1];
        let mut reqs = Vec::new();
        for (i, b) in bufs.iter_mut().enumerate() {
            reqs.push(
                world
                    .process_at_rank(i as i32 + 1)
                    .immediate_receive_into_with_tag(&mut b[..], 15)?,
            );
        }
        let mut rounds = 0u64;
        while !reqs.is_empty() {
            let done = if rounds.is_multiple_of(2) {
                volpex::wait_some(&mut reqs)?
            } else {
                volpex::test_some(&mut reqs)?
            };
            rounds += 1;
            digest = mix(digest, done.len() as u64);
        }
        digest = mix(digest, rounds);
        drop(reqs);
        check(
            bufs.iter()
                .enumerate()
                .all(|(i, b)| b[0] == (i as u64 + 1) * 15),
            "wait_some/test_some data",
        );
        println!("wildcards semantics: ok digest {digest:016x}");
    } else {
        for tag in [13, 14, 15] {
            nap(3000);
            if tag != 14 || rank <= 3 {
                world
                    .process_at_rank(0)
                    .send_with_tag(&(rank as u64 * tag as u64), tag)?;
            }
        }
    }
    // Rank 0 tells everyone what it saw: a replica that chose differently would differ.
    let mut d = [digest];
    world.process_at_rank(0).broadcast_into(&mut d[..])?;
    check(rank == 0 || d[0] != 0, "rank 0's digest reaches everyone");
    Ok(())
}

fn sum(world: &Communicator) -> Result<(), volpex::Error> {
    let (rank, size) = (world.rank(), world.size());
    if rank == 0 {
        let mut total = 0u64;
        for _ in 0..(size - 1) * 20 {
            total += world.any_process().receive::<u64>()?.0;
        }
        println!("wildcards sum: {total}");
    } else {
        for i in 0..20u64 {
            world.process_at_rank(0).send(&(rank as u64 * 100 + i))?;
        }
    }
    world.barrier()
}

fn cancel(
    universe: &Universe,
    world: &Communicator,
    args: &[String],
) -> Result<(), Box<dyn std::error::Error>> {
    let rounds: u64 = arg(args, "--rounds", 60);
    let work = Duration::from_micros(arg(args, "--work-us", 0));
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let mut noise = jitter(universe, world);
    let mut trace = match args
        .iter()
        .position(|a| a == "--trace")
        .and_then(|i| args.get(i + 1))
    {
        Some(dir) => {
            let path = format!("{dir}/{rank}.{}", universe.replica());
            Some(std::fs::File::create(&path).map_err(|e| format!("{path}: {e}"))?)
        }
        None => None,
    };
    let mut sum = 0u64;
    let mut cancels = 0u64;
    for round in 0..rounds {
        let v = rank as u64 * 1000 + round;
        for (k, tag) in [(0, 10), (1, 11)] {
            let mut got = [u64::MAX];
            let cancelled = {
                let mut r = if k == 0 {
                    world
                        .process_at_rank(prev)
                        .immediate_receive_into_with_tag(&mut got[..], tag)?
                } else {
                    world
                        .any_process()
                        .immediate_receive_into_with_tag(&mut got[..], tag)?
                };
                world.process_at_rank(next).send_with_tag(&v, tag)?;
                std::thread::sleep(Duration::from_micros(noise.random_range(0..300)));
                let c = r.cancel()?;
                let st = r.wait()?;
                check(st.is_cancelled() == c, "the status tells the cancel");
                c
            };
            if cancelled {
                cancels += 1;
                check(got[0] == u64::MAX, "a cancelled receive got nothing");
                let (w, st) = world.any_process().receive_with_tag::<u64>(tag)?;
                check(
                    st.source_rank() == prev,
                    "the message went to the next receive",
                );
                got[0] = w;
            }
            check(got[0] == prev as u64 * 1000 + round, "the value sent");
            sum += got[0];
            if let Some(f) = trace.as_mut() {
                writeln!(f, "{round} {tag} {}", u8::from(cancelled))
                    .map_err(|e| format!("trace: {e}"))?;
            }
        }
        std::thread::sleep(work);
    }
    let mut total = 0u64;
    world.all_reduce_into(&sum, &mut total, volpex::SystemOperation::sum())?;
    if rank == 0 {
        println!("wildcards cancel: ok sum {total}");
    }
    eprintln!(
        "rank {rank}: {cancels} of {} receives cancelled",
        2 * rounds
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    volpex_tests::without_file_layer();
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let universe = volpex::initialize()?;
    let world = universe.world();
    match args.first().map(String::as_str) {
        Some("gather") => gather(&universe, &world, &args)?,
        Some("semantics") => semantics(&universe, &world)?,
        Some("sum") => sum(&world)?,
        Some("cancel") => cancel(&universe, &world, &args)?,
        other => {
            eprintln!("usage: wildcards gather|semantics|sum|cancel (got {other:?})");
            std::process::exit(2);
        }
    }
    Ok(())
}
