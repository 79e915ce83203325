//! Placement: which host runs which replica, as P2P-MPI's co-allocation describes it
//! (Genaud and Rattanapoka, IPDPS 2008, section 4.2 step 6 and section 4.3).
//!
//! 1. The capacity of host i is `c_i = min(slots_i, n)`: a host never runs more than n
//!    processes, since two copies of one rank would then share it.
//! 2. Feasible when `sum c_i >= n * r` (which implies at least r hosts). Otherwise we
//!    refuse before starting anything and say what is missing.
//! 3. `spread` gives one process per host in turn (round robin over the hosts, skipping
//!    full ones); `concentrate` fills each host up to its capacity before the next.
//! 4. Ranks are numbered host by host in order, cycling 0..n-1; the k-th copy of a rank
//!    is replica k. Consecutive numbers on one host are distinct (a host has at most n),
//!    so no two replicas of a rank share a host, and team k (replica k of every rank)
//!    sits on as few, adjacent hosts as the strategy allows.
//!
//! Pure: owns the algorithm and the `--print-map` text; must never start, resolve or
//! contact anything.

use std::fmt::Write as _;

use crate::error::PlacementError;
use crate::hostfile::HostSpec;

/// How processes are spread over hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MapStrategy {
    /// One process per host in turn (round robin), as many hosts as possible.
    Spread,
    /// Fill each host's slots in order, as few hosts as possible.
    Concentrate,
}

impl MapStrategy {
    /// Name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            MapStrategy::Spread => "spread",
            MapStrategy::Concentrate => "concentrate",
        }
    }
}

/// Where every replica runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Ranks.
    pub ranks: u32,
    /// Replicas per rank.
    pub replicas: u32,
    /// The hosts given, in order (some may run nothing).
    pub hosts: Vec<HostSpec>,
    /// Host index of replica k of rank x at `x * replicas + k`.
    pub host_of: Vec<usize>,
    /// The strategy used.
    pub strategy: MapStrategy,
}

impl Placement {
    /// Host index of one replica.
    pub fn host(&self, rank: u32, replica: u32) -> usize {
        self.host_of[(rank * self.replicas + replica) as usize]
    }

    /// Replicas on host `h`, as (rank, replica), in rank order.
    pub fn on_host(&self, h: usize) -> Vec<(u32, u32)> {
        (0..self.ranks)
            .flat_map(|x| (0..self.replicas).map(move |k| (x, k)))
            .filter(|&(x, k)| self.host(x, k) == h)
            .collect()
    }

    /// The `--print-map` text.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let used = (0..self.hosts.len())
            .filter(|&h| !self.on_host(h).is_empty())
            .count();
        let _ = writeln!(
            s,
            "{} ranks x {} replicas on {} of {} hosts (map {})",
            self.ranks,
            self.replicas,
            used,
            self.hosts.len(),
            self.strategy.name()
        );
        let w = self
            .hosts
            .iter()
            .map(|h| h.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let _ = writeln!(s, "{:w$}  slots  replicas (rank.replica)", "host");
        for (i, h) in self.hosts.iter().enumerate() {
            let procs: Vec<String> = self
                .on_host(i)
                .iter()
                .map(|(x, k)| format!("{x}.{k}"))
                .collect();
            let list = if procs.is_empty() {
                "(unused)".to_string()
            } else {
                procs.join(" ")
            };
            let _ = writeln!(s, "{:w$}  {:>5}  {list}", h.name, h.slots);
        }
        for k in 0..self.replicas {
            let mut names: Vec<&str> = Vec::new();
            for x in 0..self.ranks {
                let n = self.hosts[self.host(x, k)].name.as_str();
                if !names.contains(&n) {
                    names.push(n);
                }
            }
            let _ = writeln!(s, "team {k}: {}", names.join(" "));
        }
        s
    }
}

/// Places `ranks` x `replicas` processes on `hosts`. `oversubscribe` lets every host take
/// up to `ranks` processes whatever its slots say (anti-affinity still holds).
pub fn place(
    hosts: &[HostSpec],
    ranks: u32,
    replicas: u32,
    strategy: MapStrategy,
    oversubscribe: bool,
) -> Result<Placement, PlacementError> {
    if ranks == 0 || replicas == 0 {
        return Err(PlacementError::NoProcesses);
    }
    let total = u64::from(ranks) * u64::from(replicas);
    if (hosts.len() as u64) < u64::from(replicas) {
        let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
        return Err(PlacementError::TooFewHosts {
            ranks,
            replicas,
            given: hosts.len(),
            names: names.join(", "),
            missing: u64::from(replicas) - hosts.len() as u64,
        });
    }
    let cap: Vec<u64> = hosts
        .iter()
        .map(|h| {
            if oversubscribe {
                u64::from(ranks)
            } else {
                u64::from(h.slots.min(ranks))
            }
        })
        .collect();
    let have: u64 = cap.iter().sum();
    if have < total {
        return Err(PlacementError::TooFewSlots {
            ranks,
            replicas,
            total,
            have,
            missing: total - have,
            capped: hosts.iter().any(|h| h.slots > ranks),
        });
    }
    // P2P-MPI uses at most n*r hosts (slist).
    let slist = hosts
        .len()
        .min(usize::try_from(total).unwrap_or(usize::MAX));
    let mut used = vec![0u64; hosts.len()];
    let mut d = 0u64;
    match strategy {
        MapStrategy::Spread => {
            while d < total {
                for i in 0..slist {
                    if d == total {
                        break;
                    }
                    if used[i] < cap[i] {
                        used[i] += 1;
                        d += 1;
                    }
                }
            }
        }
        MapStrategy::Concentrate => {
            for i in 0..slist {
                let u = cap[i].min(total - d);
                used[i] = u;
                d += u;
            }
        }
    }
    assert_eq!(
        d, total,
        "feasibility check passed, so every process has a slot"
    );
    let mut host_of = vec![usize::MAX; total as usize];
    let mut copies = vec![0u32; ranks as usize];
    let mut rank = 0u32;
    for (i, &u) in used.iter().enumerate() {
        for _ in 0..u {
            let k = copies[rank as usize];
            copies[rank as usize] += 1;
            host_of[(rank * replicas + k) as usize] = i;
            rank = (rank + 1) % ranks;
        }
    }
    let p = Placement {
        ranks,
        replicas,
        hosts: hosts.to_vec(),
        host_of,
        strategy,
    };
    for x in 0..ranks {
        for k in 0..replicas {
            for j in 0..k {
                assert_ne!(p.host(x, k), p.host(x, j), "anti-affinity of rank {x}");
            }
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostfile::parse_host_list;

    /// Runs `testdata/placement.txt`: `hosts | n r map [oversubscribe] | expected`, where
    /// expected is `host=rank.replica,...` per used host (space separated), or
    /// `error: text` that the message must contain.
    #[test]
    fn placement_table() {
        let table = include_str!("../testdata/placement.txt");
        let mut cases = 0;
        for (i, line) in table.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            cases += 1;
            let at = format!("testdata/placement.txt:{}", i + 1);
            let parts: Vec<&str> = line.split('|').map(str::trim).collect();
            assert_eq!(parts.len(), 3, "{at}: three fields");
            let hosts = parse_host_list(&parts[0].replace(' ', ",")).expect(&at);
            let job: Vec<&str> = parts[1].split_whitespace().collect();
            let n: u32 = job[0].parse().expect(&at);
            let r: u32 = job[1].parse().expect(&at);
            let map = match job[2] {
                "spread" => MapStrategy::Spread,
                "concentrate" => MapStrategy::Concentrate,
                other => panic!("{at}: map {other}"),
            };
            let over = job.get(3) == Some(&"oversubscribe");
            let got = place(&hosts, n, r, map, over);
            if let Some(want) = parts[2].strip_prefix("error:") {
                let e = got.expect_err(&at).to_string();
                assert!(e.contains(want.trim()), "{at}: {e}");
                continue;
            }
            let p = got.unwrap_or_else(|e| panic!("{at}: {e}"));
            let mut shown = Vec::new();
            for (h, spec) in p.hosts.iter().enumerate() {
                let on = p.on_host(h);
                if on.is_empty() {
                    continue;
                }
                let mut on: Vec<String> = on.iter().map(|(x, k)| format!("{x}.{k}")).collect();
                on.sort();
                shown.push(format!("{}={}", spec.name, on.join(",")));
            }
            let mut want: Vec<String> = parts[2].split_whitespace().map(String::from).collect();
            for w in &mut want {
                let (h, l) = w.split_once('=').expect(&at);
                let mut l: Vec<&str> = l.split(',').collect();
                l.sort();
                *w = format!("{h}={}", l.join(","));
            }
            assert_eq!(shown, want, "{at}");
        }
        assert!(cases >= 10, "the table has {cases} cases");
    }

    #[test]
    fn anti_affinity_and_counts_hold_for_many_shapes() {
        for hosts in 1..7u32 {
            for slots in 1..5u32 {
                for n in 1..7u32 {
                    for r in 1..4u32 {
                        for map in [MapStrategy::Spread, MapStrategy::Concentrate] {
                            let hs: Vec<HostSpec> = (0..hosts)
                                .map(|i| HostSpec {
                                    name: format!("h{i}"),
                                    slots: slots + i % 2,
                                })
                                .collect();
                            let feasible = hosts >= r
                                && hs.iter().map(|h| h.slots.min(n)).sum::<u32>() >= n * r;
                            match place(&hs, n, r, map, false) {
                                Ok(p) => {
                                    assert!(feasible);
                                    for (i, h) in hs.iter().enumerate() {
                                        assert!(p.on_host(i).len() as u32 <= h.slots);
                                    }
                                }
                                Err(_) => assert!(!feasible),
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn print_map_names_hosts_and_teams() {
        let hosts = parse_host_list("a:2,b:2,c:2,d:2").unwrap();
        let p = place(&hosts, 4, 2, MapStrategy::Spread, false).unwrap();
        let s = p.describe();
        assert!(
            s.starts_with("4 ranks x 2 replicas on 4 of 4 hosts (map spread)"),
            "{s}"
        );
        assert!(s.contains("a         2  0.0 1.0"), "{s}");
        assert!(s.contains("team 0: a b\nteam 1: c d\n"), "{s}");
    }
}
