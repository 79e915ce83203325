//! Sender logs far smaller than the traffic: flow control, eviction, and the retirement
//! of a replica that fell behind every log.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::config::Config;

use crate::harness::{any_replica, cfg, seeds, Faults, Life, Sim};

/// A tiny sender log: flow control and eviction let long runs complete; a replica
/// silenced for long and then resumed catches up or retires, and everyone else finishes.
/// DESIGN.md "Sender log".
#[test]
fn tiny_logs_complete_and_laggards_retire() {
    let (mut runs, mut retired, mut evicted) = (0usize, 0usize, 0u64);
    for seed in seeds(150, 5) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xcafe);
        let ranks = rng.random_range(2..=4);
        let r = 2;
        // Fast failover, so the rest of a silenced replica's team moves on without it
        // while it is stopped, and only it falls out of the logs.
        let cfg = Config {
            log_bytes_max: 4096,
            hedge_timeout: Duration::from_millis(1),
            ack_timeout: Duration::from_millis(5),
            ..cfg()
        };
        let mut faults = Faults {
            may_retire: true,
            ..Faults::default()
        };
        if rng.random_bool(0.6) {
            let from = Duration::from_micros(rng.random_range(0..10_000));
            let until = from + Duration::from_millis(rng.random_range(5..60));
            faults
                .silences
                .push((any_replica(&mut rng, ranks, r), from, Some(until)));
        }
        let mut sim = Sim::new(seed, ranks, r, 300, 600, cfg, faults, seed % 3 == 0);
        sim.run(Duration::from_secs(300));
        runs += 1;
        retired += sim.reps.iter().filter(|x| x.life == Life::Retired).count();
        evicted += sim
            .reps
            .iter()
            .map(|x| x.engine.stats().evicted)
            .sum::<u64>();
        // Some replica of every rank finished.
        for rank in 0..ranks {
            assert!(
                (0..r).any(|k| {
                    let i = (rank * r + k) as usize;
                    sim.reps[i].life != Life::Retired && sim.done(i)
                }),
                "seed {seed}: every replica of rank {rank} retired"
            );
        }
    }
    eprintln!("tiny logs: {runs} runs, {retired} replicas retired, {evicted} entries evicted");
    assert!(runs == 1 || (evicted > 0 && retired > 0));
}
