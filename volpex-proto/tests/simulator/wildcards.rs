//! Wildcard receives (`ANY_SOURCE`, `ANY_TAG`, both) under kills of choice leaders and
//! silenced leaders.

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::message::ReplicaId;

use crate::harness::{cfg, seeds, Faults, Sim};

/// Wildcard receives (`ANY_SOURCE`, `ANY_TAG`, both) at every replication degree, with
/// and without kills: every replica of a rank matches the same message at every receive,
/// and every message is received exactly once. DESIGN.md "Message identity and matching".
#[test]
fn wildcards_match_alike_in_every_replica() {
    let (mut runs, mut fenced, mut hit) = (0usize, 0u64, 0usize);
    for seed in seeds(200, 6) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xd1ce);
        let ranks = rng.random_range(2..=5);
        let r = rng.random_range(1..=3);
        let mut faults = Faults::default();
        if r > 1 && rng.random_bool(0.6) {
            let notice = rng
                .random_bool(0.5)
                .then(|| Duration::from_micros(rng.random_range(0..20_000)));
            let at = Duration::from_micros(rng.random_range(0..30_000));
            // Replica 0 leads its rank's choices: kill it most of the time.
            let k = if rng.random_bool(0.7) { 0 } else { r - 1 };
            faults
                .kills
                .push((ReplicaId::new(rng.random_range(0..ranks), k), at, notice));
        } else if r > 1 && rng.random_bool(0.5) {
            // A leader that stops answering (SIGSTOP): its siblings must fence it.
            let at = Duration::from_micros(rng.random_range(0..30_000));
            faults
                .silences
                .push((ReplicaId::new(rng.random_range(0..ranks), 0), at, None));
        }
        let mut sim = Sim::new(seed, ranks, r, 150, 1000, cfg(), faults, true);
        sim.run(Duration::from_secs(120));
        runs += 1;
        fenced += sim.fenced;
        hit += usize::from(sim.cut_short() > 0);
    }
    eprintln!("wildcards: {runs} runs, {hit} lost a replica mid-run, {fenced} fenced");
    assert!(runs == 1 || (hit > 0 && fenced > 0));
}
