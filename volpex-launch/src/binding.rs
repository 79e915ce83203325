//! Which CPUs each team runs on in a local job (`--bind`).
//!
//! Owns the policy only: the processes bind themselves to the list they are given
//! (`VOLPEX_CPUS`, see `volpex::bootstrap::affinity`). Never used for processes on
//! other hosts, whose cores volpexrun does not know.

/// `--bind`: how a local job's processes are placed on this machine's CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Bind {
    /// `team` when the job has more processes than this machine has CPUs, else `none`.
    Auto,
    /// Each team on its own share of the CPUs (teams share CPUs only when there are
    /// more teams than CPUs).
    Team,
    /// Let the kernel place every process.
    None,
}

/// The CPU list of every team (indexed by replica), or `None` when the processes are
/// left to the kernel. `allowed` are the CPUs volpexrun itself may use, ascending.
pub fn team_cpus(
    bind: Bind,
    ranks: u32,
    replicas: u32,
    allowed: &[usize],
) -> Option<Vec<Vec<usize>>> {
    let procs = u64::from(ranks) * u64::from(replicas);
    let by_team = match bind {
        Bind::None => false,
        Bind::Team => true,
        Bind::Auto => procs > allowed.len() as u64,
    };
    // One team would get every CPU: nothing to bind.
    if !by_team || replicas < 2 || allowed.is_empty() {
        return None;
    }
    let (c, r) = (allowed.len(), replicas as usize);
    Some(
        (0..r)
            .map(|t| {
                if r <= c {
                    allowed[t * c / r..(t + 1) * c / r].to_vec()
                } else {
                    vec![allowed[t % c]]
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teams_get_disjoint_shares_or_take_turns() {
        let two = [0, 1];
        assert_eq!(
            team_cpus(Bind::Auto, 2, 2, &two),
            Some(vec![vec![0], vec![1]])
        );
        // A core for every process, or a single team: left to the kernel.
        assert_eq!(team_cpus(Bind::Auto, 1, 2, &two), None);
        assert_eq!(team_cpus(Bind::Auto, 8, 1, &two), None);
        assert_eq!(team_cpus(Bind::None, 4, 2, &two), None);
        // Asked for, teams are bound even with a core for every process.
        assert_eq!(
            team_cpus(Bind::Team, 1, 2, &[2, 3, 5, 7, 8]),
            Some(vec![vec![2, 3], vec![5, 7, 8]])
        );
        // More teams than CPUs: they take turns.
        assert_eq!(
            team_cpus(Bind::Auto, 2, 3, &two),
            Some(vec![vec![0], vec![1], vec![0]])
        );
    }
}
