//! Which CPUs each team runs on, on one host (`--bind`).
//!
//! Owns the policy only: volpexrun applies it to a local job, an agent to its own host's
//! processes, and the processes bind themselves to the list they are given
//! (`VOLPEX_CPUS`, see `volpex::bootstrap::affinity`). Never starts or signals processes.

use serde::{Deserialize, Serialize};
use volpex::bootstrap::affinity::{allowed_cpus, bind_process, format_cpus};
use volpex::bootstrap::vars;

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

/// The CPUs of each team in `teams` (the distinct teams a host runs, ascending), when
/// the host runs `procs` processes and may use `allowed` CPUs (ascending); empty when
/// the processes are left to the kernel.
pub fn team_cpus(
    bind: Bind,
    procs: usize,
    teams: &[u32],
    allowed: &[usize],
) -> Vec<(u32, Vec<usize>)> {
    let by_team = match bind {
        Bind::None => false,
        Bind::Team => true,
        Bind::Auto => procs > allowed.len(),
    };
    // One team would get every CPU: nothing to bind.
    if !by_team || teams.len() < 2 || allowed.is_empty() {
        return Vec::new();
    }
    let (c, r) = (allowed.len(), teams.len());
    teams
        .iter()
        .enumerate()
        .map(|(t, &team)| {
            let cpus = if r <= c {
                allowed[t * c / r..(t + 1) * c / r].to_vec()
            } else {
                vec![allowed[t % c]]
            };
            (team, cpus)
        })
        .collect()
}

/// `VOLPEX_CPUS` for each team this host runs, from the CPUs this process may use; none
/// when `env` (what every process gets) already sets it: the user's binding wins.
pub fn cpus_env(
    bind: Bind,
    procs: usize,
    teams: &[u32],
    env: &[(String, String)],
) -> Result<Vec<(u32, String)>, BindError> {
    if bind == Bind::None || env.iter().any(|(k, _)| k == vars::CPUS) {
        return Ok(Vec::new());
    }
    let allowed = allowed_cpus().map_err(BindError::Affinity)?;
    let teams = team_cpus(bind, procs, teams, &allowed);
    if !teams.is_empty() {
        log::info!(
            "binding teams to CPUs: {}",
            teams
                .iter()
                .map(|(t, c)| format!("team {t}: {}", format_cpus(c)))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(teams
        .into_iter()
        .map(|(t, c)| (t, format_cpus(&c)))
        .collect())
}

/// Binds the living processes of one host, `(team, pid)`, again as `bind` would bind
/// them had they been the only ones started, so the CPUs of a dead team go to the
/// survivors (with a single team left, each may use every allowed CPU). Returns the CPU
/// list each pid now runs on; a process that is gone meanwhile is skipped.
pub fn rebind(bind: Bind, living: &[(u32, u32)]) -> Result<Vec<(u32, String)>, BindError> {
    let allowed = allowed_cpus().map_err(BindError::Affinity)?;
    let mut teams: Vec<u32> = living.iter().map(|&(t, _)| t).collect();
    teams.sort_unstable();
    teams.dedup();
    let split = team_cpus(bind, living.len(), &teams, &allowed);
    let mut bound = Vec::new();
    for &(team, pid) in living {
        let cpus = split
            .iter()
            .find(|(t, _)| *t == team)
            .map_or(allowed.as_slice(), |(_, c)| c.as_slice());
        match bind_process(pid, cpus) {
            Ok(()) => bound.push((pid, format_cpus(cpus))),
            Err(e) => log::debug!("cannot bind process {pid} again: {e}"),
        }
    }
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teams_get_disjoint_shares_or_take_turns() {
        let two = [0, 1];
        assert_eq!(
            team_cpus(Bind::Auto, 4, &[0, 1], &two),
            vec![(0, vec![0]), (1, vec![1])]
        );
        // A core for every process, or a single team: left to the kernel.
        assert!(team_cpus(Bind::Auto, 2, &[0, 1], &two).is_empty());
        assert!(team_cpus(Bind::Auto, 8, &[0], &two).is_empty());
        assert!(team_cpus(Bind::None, 8, &[0, 1], &two).is_empty());
        // Asked for, teams are bound even with a core for every process; a host that
        // runs teams 1 and 2 only splits its CPUs between those.
        assert_eq!(
            team_cpus(Bind::Team, 2, &[1, 2], &[2, 3, 5, 7, 8]),
            vec![(1, vec![2, 3]), (2, vec![5, 7, 8])]
        );
        // More teams than CPUs: they take turns.
        assert_eq!(
            team_cpus(Bind::Auto, 6, &[0, 1, 2], &two),
            vec![(0, vec![0]), (1, vec![1]), (2, vec![0])]
        );
    }
}
