//! Failure-free runs: exactly-once delivery at every replication degree, and the network
//! cost of a message (one copy per receiving replica).

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::config::Config;

use crate::harness::{cfg, seeds, Faults, Sim};

/// Failure-free runs at every replication degree deliver every message exactly once.
/// DESIGN.md "Message identity and matching": every replica gives a message the same
/// key, and a key is delivered once.
#[test]
fn failure_free_runs_deliver_exactly_once() {
    for seed in seeds(150, 1) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ranks = rng.random_range(1..=5);
        let r = rng.random_range(1..=3);
        let mut sim = Sim::new(seed, ranks, r, 120, 2000, cfg(), Faults::default(), false);
        sim.run(Duration::from_secs(60));
    }
}

/// Without faults and without hedging, each message crosses the network once per
/// receiving replica (r copies, never r x r). DESIGN.md "Pull protocol".
#[test]
fn one_copy_per_receiving_replica() {
    for seed in seeds(60, 2) {
        let cfg = Config {
            hedge_timeout: Duration::from_secs(3600),
            ack_timeout: Duration::from_secs(3600),
            ..Config::default()
        };
        let mut sim = Sim::new(seed, 4, 2, 150, 500, cfg, Faults::default(), false);
        sim.run(Duration::from_secs(60));
        let remote = sim.schedule.iter().filter(|m| m.src != m.dst).count() as u64;
        assert_eq!(sim.data_frames, remote * 2, "seed {seed}");
    }
}
