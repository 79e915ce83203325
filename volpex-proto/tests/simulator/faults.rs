//! Faults: killed replicas (with and without death notices), silenced replicas, cut
//! links, and links that reorder frames. Every run must deliver exactly what a
//! failure-free run delivers, exactly once, and most runs must actually lose a replica
//! mid-run (a fault that strikes after the end tests nothing).

use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::message::ReplicaId;

use crate::harness::{any_replica, cfg, seeds, Faults, Sim};

/// Frames between two replicas overtaking each other (the transport's switch from
/// one connection to another can do that) change nothing, with and without wildcards
/// and with a kill. DESIGN.md "Message identity and matching": messages between a pair
/// do not overtake each other for receives that match both.
#[test]
fn reordered_links_change_nothing() {
    for seed in seeds(200, 9) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ranks = rng.random_range(2..=4);
        let r = rng.random_range(1..=3);
        let mut faults = Faults {
            reorder: true,
            ..Faults::default()
        };
        if r > 1 && rng.random_bool(0.5) {
            let at = Duration::from_micros(rng.random_range(0..20_000));
            faults.kills.push((
                any_replica(&mut rng, ranks, r),
                at,
                Some(Duration::from_millis(5)),
            ));
        }
        let wildcards = rng.random_bool(0.5);
        let mut sim = Sim::new(seed, ranks, r, 120, 2000, cfg(), faults, wildcards);
        sim.run(Duration::from_secs(60));
    }
}

/// Kills (with and without death notices), one per rank at most, at random times.
/// DESIGN.md "Pull protocol": fail over to another replica of the sender when the chosen
/// one is dead; data already received is never asked again.
#[test]
fn kills_change_nothing() {
    let (mut runs, mut hit, mut failovers) = (0usize, 0usize, 0u64);
    for seed in seeds(200, 3) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xfeed);
        let ranks = rng.random_range(2..=5);
        let r = rng.random_range(2..=3);
        let mut faults = Faults::default();
        for rank in 0..ranks {
            if rng.random_bool(0.5) {
                // Up to r - 1 replicas of this rank.
                let victims = rng.random_range(1..r);
                for k in 0..victims {
                    let notice = rng
                        .random_bool(0.7)
                        .then(|| Duration::from_micros(rng.random_range(0..20_000)));
                    let at = Duration::from_micros(rng.random_range(0..30_000));
                    faults
                        .kills
                        .push((ReplicaId::new(rank, (k + seed as u32) % r), at, notice));
                }
            }
        }
        let mut sim = Sim::new(seed, ranks, r, 150, 2000, cfg(), faults, seed % 2 == 0);
        sim.run(Duration::from_secs(120));
        runs += 1;
        hit += usize::from(sim.cut_short() > 0);
        failovers += sim.failovers();
    }
    eprintln!("kills: {hit} of {runs} runs lost a replica mid-run; {failovers} failovers");
    assert!(
        runs == 1 || hit * 2 > runs,
        "faults must strike mid-run in most runs"
    );
    assert!(runs == 1 || failovers > 0);
}

/// Silenced (stopped, never continued) replicas and cut links: receivers fail over on
/// timeouts alone. DESIGN.md "Failure detection".
#[test]
fn silences_and_cut_links_change_nothing() {
    let (mut runs, mut hit, mut failovers) = (0usize, 0usize, 0u64);
    for seed in seeds(200, 4) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xbeef);
        let ranks = rng.random_range(2..=5);
        let r = rng.random_range(2..=3);
        let mut faults = Faults::default();
        let silenced = any_replica(&mut rng, ranks, r);
        faults.silences.push((
            silenced,
            Duration::from_micros(rng.random_range(0..20_000)),
            None,
        ));
        // A cut between two other replicas of different ranks.
        for _ in 0..10 {
            let a = any_replica(&mut rng, ranks, r);
            let b = any_replica(&mut rng, ranks, r);
            if a.rank != b.rank && a.rank != silenced.rank && b.rank != silenced.rank {
                faults.cuts.push((a, b));
                break;
            }
        }
        let mut sim = Sim::new(seed, ranks, r, 150, 2000, cfg(), faults, seed % 2 == 0);
        sim.run(Duration::from_secs(120));
        runs += 1;
        hit += usize::from(sim.cut_short() > 0);
        failovers += sim.failovers();
    }
    eprintln!("silences: {hit} of {runs} runs silenced a replica mid-run; {failovers} failovers");
    assert!(
        runs == 1 || hit * 2 > runs,
        "faults must strike mid-run in most runs"
    );
    assert!(runs == 1 || failovers > 0);
}
