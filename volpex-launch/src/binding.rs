//! Which CPUs each team runs on, on one host (`--bind`).
//!
//! Owns the policy only: volpexrun applies it to a local job, an agent to its own host's
//! processes, and the processes bind themselves to the list they are given
//! (`VOLPEX_CPUS`; the system calls are `affinity`). Never starts or signals processes.

use serde::{Deserialize, Serialize};
use volpex_proto::launch::format_cpus;
use volpex_proto::launch::vars;

use crate::affinity::{allowed_cpus, bind_process};

use crate::error::BindError;

/// `--bind`: how a host's processes are placed on its CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
pub enum Bind {
    /// `team` when the host runs more of the job's processes than it has CPUs, else
    /// `none`.
    Auto,
    /// Each team on its own share of the CPUs (teams share CPUs only when there are
    /// more teams than CPUs).
    Team,
    /// Let the kernel place every process.
    None,
}

/// Where one host's processes run: each team on its share of the CPUs the host may use
/// (teams share CPUs only when there are more teams than CPUs) and, when the host runs
/// more processes than it may use CPUs, each process on one CPU of its team's share,
/// taken in turn by rank (as `mpirun --bind-to core` places more processes than cores:
/// NPB IS class A at `-n 4` on 2 CPUs 1.05x faster, CG 1.2x, MG 1.06x than with the
/// kernel moving them). Empty when the processes are left to the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuPlan {
    /// Each team's CPUs.
    teams: Vec<(u32, Vec<usize>)>,
    /// Each team's ranks on the host, ascending, when every process gets one CPU.
    each: Vec<(u32, Vec<u32>)>,
}

impl CpuPlan {
    /// The plan for a host that runs `procs` (rank, team) and may use `allowed` CPUs
    /// (ascending), every team on an equal footing (see `following` for a job whose
    /// teams follow one).
    pub fn new(bind: Bind, procs: &[(u32, u32)], allowed: &[usize]) -> CpuPlan {
        CpuPlan::following(bind, procs, allowed, None)
    }

    /// The plan when the other teams follow team `lead` (`lead_team`): on a host that runs
    /// more processes than it may use CPUs, the lead team gets CPUs of its own (one per
    /// process, all but one at most; its plain share if that already is its own and as
    /// large) and the teams that follow it share the rest. They
    /// only follow (each of their ranks has a replica in the lead team, which they could
    /// pull from), and the job moves at the lead team's pace: sharing its CPUs with them
    /// slowed NPB CG class A at `-n 4 -r 3` on 2 CPUs by 1.7x (docs/REGENERATION.md,
    /// "Losses that couple teams").
    pub fn following(
        bind: Bind,
        procs: &[(u32, u32)],
        allowed: &[usize],
        lead: Option<u32>,
    ) -> CpuPlan {
        let crowded = procs.len() > allowed.len();
        let by_team = match bind {
            Bind::None => false,
            Bind::Team => true,
            Bind::Auto => crowded,
        };
        let mut teams: Vec<u32> = procs.iter().map(|&(_, t)| t).collect();
        teams.sort_unstable();
        teams.dedup();
        // One team would get every CPU and each process could have one of its own:
        // nothing to bind.
        if !by_team || allowed.is_empty() || (teams.len() < 2 && !crowded) {
            return CpuPlan::default();
        }
        let plain = split(&teams, allowed);
        let lead = lead.filter(|l| crowded && allowed.len() > 1 && teams.contains(l));
        let shares = match lead {
            Some(lead) => {
                let mine = procs.iter().filter(|&&(_, t)| t == lead).count();
                let want = mine.clamp(1, allowed.len() - 1);
                let (own, rest) = allowed.split_at(want);
                let others: Vec<u32> = teams.iter().copied().filter(|&t| t != lead).collect();
                if has_own(&plain, lead, want) {
                    // Its share already is its own and large enough: nothing moves.
                    plain
                } else {
                    let mut shares = vec![(lead, own.to_vec())];
                    shares.extend(split(&others, rest));
                    shares
                }
            }
            None => plain,
        };
        let each = if crowded {
            teams
                .iter()
                .map(|&team| {
                    let mut ranks: Vec<u32> = procs
                        .iter()
                        .filter(|&&(_, t)| t == team)
                        .map(|&(rank, _)| rank)
                        .collect();
                    ranks.sort_unstable();
                    (team, ranks)
                })
                .collect()
        } else {
            Vec::new()
        };
        CpuPlan {
            teams: shares,
            each,
        }
    }

    /// Whether every process is left to the kernel.
    pub fn is_empty(&self) -> bool {
        self.teams.is_empty()
    }

    /// The CPUs of process `rank` of `team`, if it is bound (a rank the plan was not
    /// made with, such as a replacement started elsewhere, takes the next turn).
    pub fn cpus_of(&self, team: u32, rank: u32) -> Option<Vec<usize>> {
        let (_, share) = self.teams.iter().find(|(t, _)| *t == team)?;
        match self.each.iter().find(|(t, _)| *t == team) {
            Some((_, ranks)) => {
                let turn = ranks.iter().position(|&r| r == rank).unwrap_or(ranks.len());
                Some(vec![share[turn % share.len()]])
            }
            None => Some(share.clone()),
        }
    }
}

/// The team every other team follows, if there is one: the only team with a live
/// replica of every rank, while some replica outside it lives. A team that lost a
/// replica pulls that rank's messages from another team and so moves in step with it;
/// once a single team is whole, every team that still runs follows it, and the job ends
/// when it finishes. `living` is (rank, team) of every live replica of the job (on any
/// host); `ranks` and `teams` the job's shape.
pub fn lead_team(living: &[(u32, u32)], ranks: u32, teams: u32) -> Option<u32> {
    let whole = |team: u32| (0..ranks).all(|rank| living.contains(&(rank, team)));
    let mut whole_teams = (0..teams).filter(|&t| whole(t));
    let lead = whole_teams.next()?;
    if whole_teams.next().is_some() {
        return None;
    }
    living.iter().any(|&(_, t)| t != lead).then_some(lead)
}

/// Whether `team`'s share in `shares` is at least `want` CPUs that no other team shares.
fn has_own(shares: &[(u32, Vec<usize>)], team: u32, want: usize) -> bool {
    let Some((_, mine)) = shares.iter().find(|(t, _)| *t == team) else {
        return false;
    };
    let shared = |c: &usize| {
        shares
            .iter()
            .any(|(t, cpus)| *t != team && cpus.contains(c))
    };
    mine.len() >= want && !mine.iter().any(shared)
}

/// `cpus` (ascending) split between `teams`: each its own share, or one CPU each in turn
/// when there are more teams than CPUs.
fn split(teams: &[u32], cpus: &[usize]) -> Vec<(u32, Vec<usize>)> {
    let (c, r) = (cpus.len(), teams.len());
    teams
        .iter()
        .enumerate()
        .map(|(t, &team)| {
            let share = if r <= c {
                cpus[t * c / r..(t + 1) * c / r].to_vec()
            } else {
                vec![cpus[t % c]]
            };
            (team, share)
        })
        .collect()
}

/// The plan for the processes `procs` (rank, team) this host runs, from the CPUs this
/// process may use; empty when `env` (what every process gets) sets `VOLPEX_CPUS`: the
/// user's binding wins.
pub fn cpus_env(
    bind: Bind,
    procs: &[(u32, u32)],
    env: &[(String, String)],
) -> Result<CpuPlan, BindError> {
    if bind == Bind::None || env.iter().any(|(k, _)| k == vars::CPUS) {
        return Ok(CpuPlan::default());
    }
    let allowed = allowed_cpus().map_err(BindError::Affinity)?;
    let plan = CpuPlan::new(bind, procs, &allowed);
    if !plan.is_empty() {
        log::info!(
            "binding teams to CPUs: {}{}",
            plan.teams
                .iter()
                .map(|(t, c)| format!("team {t}: {}", format_cpus(c)))
                .collect::<Vec<_>>()
                .join(", "),
            if plan.each.is_empty() {
                ""
            } else {
                ", one CPU for each process"
            }
        );
    }
    Ok(plan)
}

/// Binds the living processes of one host, `(team, rank, pid)`, again as `bind` would
/// bind them had they been the only ones started, so the CPUs of a dead team go to the
/// survivors (with a single team left that fits, each may use every allowed CPU), and
/// the team the others follow, `lead`, gets CPUs of its own (`CpuPlan::following`).
/// Returns the CPU list each pid now runs on; a process that is gone meanwhile is
/// skipped.
pub fn rebind(
    bind: Bind,
    living: &[(u32, u32, u32)],
    lead: Option<u32>,
) -> Result<Vec<(u32, String)>, BindError> {
    let allowed = allowed_cpus().map_err(BindError::Affinity)?;
    let procs: Vec<(u32, u32)> = living.iter().map(|&(t, r, _)| (r, t)).collect();
    let plan = CpuPlan::following(bind, &procs, &allowed, lead);
    let mut bound = Vec::new();
    for &(team, rank, pid) in living {
        let cpus = plan.cpus_of(team, rank).unwrap_or_else(|| allowed.clone());
        match bind_process(pid, &cpus) {
            Ok(()) => bound.push((pid, format_cpus(&cpus))),
            Err(e) => log::debug!("cannot bind process {pid} again: {e}"),
        }
    }
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (rank, team) of `n` ranks of `r` replicas.
    fn job(n: u32, r: u32) -> Vec<(u32, u32)> {
        (0..n).flat_map(|k| (0..r).map(move |t| (k, t))).collect()
    }

    fn cpus(plan: &CpuPlan, procs: &[(u32, u32)]) -> Vec<Option<Vec<usize>>> {
        procs.iter().map(|&(k, t)| plan.cpus_of(t, k)).collect()
    }

    #[test]
    fn teams_get_disjoint_shares_or_take_turns() {
        let two = [0, 1];
        let p = job(2, 2);
        assert_eq!(
            cpus(&CpuPlan::new(Bind::Auto, &p, &two), &p),
            vec![Some(vec![0]), Some(vec![1]), Some(vec![0]), Some(vec![1])]
        );
        // A core for every process: left to the kernel.
        assert!(CpuPlan::new(Bind::Auto, &job(1, 2), &two).is_empty());
        assert!(CpuPlan::new(Bind::None, &job(4, 2), &two).is_empty());
        // Asked for, teams are bound even with a core for every process; a host that
        // runs teams 1 and 2 only splits its CPUs between those.
        let p = [(0, 1), (0, 2)];
        assert_eq!(
            cpus(&CpuPlan::new(Bind::Team, &p, &[2, 3, 5, 7, 8]), &p),
            vec![Some(vec![2, 3]), Some(vec![5, 7, 8])]
        );
        // More teams than CPUs: they take turns.
        let p = job(2, 3);
        let plan = CpuPlan::new(Bind::Auto, &p, &two);
        assert_eq!(plan.cpus_of(0, 1), Some(vec![0]));
        assert_eq!(plan.cpus_of(1, 1), Some(vec![1]));
        assert_eq!(plan.cpus_of(2, 1), Some(vec![0]));
    }

    #[test]
    fn the_only_whole_team_leads_while_others_run() {
        let all = job(4, 3);
        let without = |gone: &[(u32, u32)]| -> Vec<(u32, u32)> {
            all.iter().copied().filter(|p| !gone.contains(p)).collect()
        };
        // Every team whole, or two whole: nobody follows one team.
        assert_eq!(lead_team(&all, 4, 3), None);
        assert_eq!(lead_team(&without(&[(1, 0)]), 4, 3), None);
        // Both replicas of rank 1 outside team 2 lost, or one replica each of two ranks:
        // team 2 is the only whole one.
        assert_eq!(lead_team(&without(&[(1, 0), (1, 1)]), 4, 3), Some(2));
        assert_eq!(lead_team(&without(&[(1, 0), (2, 1)]), 4, 3), Some(2));
        // At -r 2, one loss.
        let two = job(4, 2);
        let one_lost: Vec<(u32, u32)> = two.iter().copied().filter(|&p| p != (3, 1)).collect();
        assert_eq!(lead_team(&one_lost, 4, 2), Some(0));
        // No whole team (cross losses), or nothing outside the whole team (a team lost
        // every replica): nobody follows.
        let cross: Vec<(u32, u32)> = two
            .iter()
            .copied()
            .filter(|&p| p != (0, 0) && p != (1, 1))
            .collect();
        assert_eq!(lead_team(&cross, 4, 2), None);
        let team_gone: Vec<(u32, u32)> = two.iter().copied().filter(|&(_, t)| t == 0).collect();
        assert_eq!(lead_team(&team_gone, 4, 2), None);
    }

    #[test]
    fn the_lead_team_gets_cpus_of_its_own_on_a_crowded_host() {
        // -n 4 -r 3 on 2 CPUs, rank 1 left only in team 2: team 2 alone on the first
        // CPU, teams 0 and 1 (ranks 0, 2, 3) share the second.
        let p: Vec<(u32, u32)> = job(4, 3)
            .into_iter()
            .filter(|&(k, t)| k != 1 || t == 2)
            .collect();
        let plan = CpuPlan::following(Bind::Auto, &p, &[0, 1], Some(2));
        for k in 0..4 {
            assert_eq!(plan.cpus_of(2, k), Some(vec![0]), "rank {k} of team 2");
        }
        for k in [0, 2, 3] {
            assert_eq!(plan.cpus_of(0, k), Some(vec![1]), "rank {k} of team 0");
            assert_eq!(plan.cpus_of(1, k), Some(vec![1]), "rank {k} of team 1");
        }
        // Without a lead, team 2 takes its turn on the first CPU with team 0.
        assert_eq!(
            CpuPlan::new(Bind::Auto, &p, &[0, 1]).cpus_of(0, 0),
            Some(vec![0])
        );
        // 8 CPUs, 10 processes: one CPU for each of the lead's 4, the other 4 CPUs for
        // the two teams that follow.
        let plan = CpuPlan::following(Bind::Auto, &p, &[0, 1, 2, 3, 4, 5, 6, 7], Some(2));
        let lead: Vec<usize> = (0..4)
            .filter_map(|k| plan.cpus_of(2, k))
            .map(|c| c[0])
            .collect();
        assert_eq!(lead, vec![0, 1, 2, 3]);
        assert_eq!(plan.cpus_of(0, 0), Some(vec![4]));
        assert_eq!(plan.cpus_of(1, 0), Some(vec![6]));
        // Two teams on 2 CPUs already have a CPU each: the lead keeps its own.
        let p: Vec<(u32, u32)> = job(4, 2).into_iter().filter(|&p| p != (1, 0)).collect();
        assert_eq!(
            CpuPlan::following(Bind::Auto, &p, &[0, 1], Some(1)),
            CpuPlan::new(Bind::Auto, &p, &[0, 1])
        );
        // A host with a CPU for every process, a host without the lead team, or one CPU:
        // as without a lead.
        let p: Vec<(u32, u32)> = job(4, 3)
            .into_iter()
            .filter(|&(k, t)| k != 1 || t == 2)
            .collect();
        let roomy: Vec<usize> = (0..16).collect();
        assert!(CpuPlan::following(Bind::Auto, &p, &roomy, Some(2)).is_empty());
        let q: Vec<(u32, u32)> = p.iter().copied().filter(|&(_, t)| t != 2).collect();
        assert_eq!(
            CpuPlan::following(Bind::Auto, &q, &[0, 1], Some(2)),
            CpuPlan::new(Bind::Auto, &q, &[0, 1])
        );
        assert_eq!(
            CpuPlan::following(Bind::Auto, &p, &[5], Some(2)),
            CpuPlan::new(Bind::Auto, &p, &[5])
        );
    }

    #[test]
    fn a_crowded_host_gives_each_process_one_cpu_of_its_team_in_turn() {
        // One team, 4 ranks on 2 CPUs: ranks 0 and 2 on CPU 0, 1 and 3 on CPU 1.
        let p = job(4, 1);
        assert_eq!(
            cpus(&CpuPlan::new(Bind::Auto, &p, &[0, 1]), &p),
            vec![Some(vec![0]), Some(vec![1]), Some(vec![0]), Some(vec![1])]
        );
        // Two teams, 6 ranks on 4 CPUs: each team's ranks take turns on its two CPUs.
        let p = job(6, 2);
        let plan = CpuPlan::new(Bind::Auto, &p, &[0, 1, 2, 3]);
        let team = |t: u32| -> Vec<usize> {
            (0..6)
                .map(|k| plan.cpus_of(t, k).map_or(99, |c| c[0]))
                .collect()
        };
        assert_eq!(team(0), vec![0, 1, 0, 1, 0, 1]);
        assert_eq!(team(1), vec![2, 3, 2, 3, 2, 3]);
        // A host that runs ranks 5, 7 and 9 of one team: they take its CPUs in turn.
        let p = [(9, 0), (5, 0), (7, 0)];
        let plan = CpuPlan::new(Bind::Auto, &p, &[4, 6]);
        assert_eq!(
            cpus(&plan, &p),
            vec![Some(vec![4]), Some(vec![4]), Some(vec![6])]
        );
    }
}
