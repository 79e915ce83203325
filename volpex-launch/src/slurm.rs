//! Running inside a Slurm allocation: detecting one, its hosts and slots, and which local
//! address the nodes reach volpexrun at.
//!
//! Hosts come from `SLURM_JOB_NODELIST`, expanded with `scontrol show hostnames`; slots
//! per host from `SLURM_JOB_CPUS_PER_NODE` or `SLURM_TASKS_PER_NODE` (the larger), both in
//! Slurm's compressed form `4(x2),2`. Processes are started by `remote::Shell::Slurm`
//! (one `srun --no-kill` step per host). Owns only reading the allocation; must never
//! start anything.

use std::net::{ToSocketAddrs, UdpSocket};
use std::process::Command;

use crate::error::SlurmError;
use crate::hostfile::HostSpec;

fn env_any(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.trim().is_empty()))
}

/// True inside an allocation (salloc, sbatch).
pub fn in_allocation() -> bool {
    env_any(&["SLURM_JOB_ID", "SLURM_JOBID"]).is_some()
        && env_any(&["SLURM_JOB_NODELIST", "SLURM_NODELIST"]).is_some()
}

/// Expands Slurm's per-node counts: `4(x2),2` -> [4, 4, 2].
pub fn expand_counts(s: &str) -> Result<Vec<u32>, SlurmError> {
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let bad = || SlurmError::BadCounts {
            list: s.into(),
            part: part.into(),
        };
        let (n, times) = match part.split_once("(x") {
            Some((n, rest)) => (
                n,
                rest.strip_suffix(')')
                    .and_then(|t| t.parse::<u32>().ok())
                    .ok_or_else(bad)?,
            ),
            None => (part, 1),
        };
        let n = n.parse::<u32>().map_err(|_| bad())?;
        if times > 100_000 {
            return Err(bad());
        }
        out.extend(std::iter::repeat_n(n, times as usize));
    }
    Ok(out)
}

/// The allocation's hosts with their slots.
pub fn allocation_hosts() -> Result<Vec<HostSpec>, SlurmError> {
    let list =
        env_any(&["SLURM_JOB_NODELIST", "SLURM_NODELIST"]).ok_or(SlurmError::NotInAllocation)?;
    let out = Command::new("scontrol")
        .args(["show", "hostnames", &list])
        .output()
        .map_err(|source| SlurmError::Scontrol {
            list: list.clone(),
            source,
        })?;
    if !out.status.success() {
        return Err(SlurmError::ScontrolFailed {
            list,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if names.is_empty() {
        return Err(SlurmError::NoHosts { list });
    }
    let counts = |var: &[&str]| {
        env_any(var)
            .and_then(|v| expand_counts(&v).ok())
            .filter(|c| c.len() == names.len())
    };
    let cpus = counts(&["SLURM_JOB_CPUS_PER_NODE"]);
    let tasks = counts(&["SLURM_TASKS_PER_NODE"]);
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let c = cpus.as_ref().map_or(0, |c| c[i]);
            let t = tasks.as_ref().map_or(0, |t| t[i]);
            HostSpec {
                name,
                slots: c.max(t).max(1),
            }
        })
        .collect())
}

/// The local address that routes to the first host (no packet is sent: a UDP socket is
/// only connected, which picks the source address).
pub fn route_to(hosts: &[HostSpec]) -> Result<String, SlurmError> {
    let first = hosts.first().ok_or(SlurmError::NothingToReach)?;
    let addr = (first.name.as_str(), 9)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(|| SlurmError::Unresolved {
            host: first.name.clone(),
        })?;
    let unspecified: std::net::IpAddr = if addr.is_ipv4() {
        std::net::Ipv4Addr::UNSPECIFIED.into()
    } else {
        std::net::Ipv6Addr::UNSPECIFIED.into()
    };
    let sock = UdpSocket::bind((unspecified, 0)).map_err(SlurmError::Socket)?;
    sock.connect(addr).map_err(|source| SlurmError::NoRoute {
        host: first.name.clone(),
        addr,
        source,
    })?;
    Ok(sock
        .local_addr()
        .map_err(SlurmError::Socket)?
        .ip()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_count_lists() {
        assert_eq!(expand_counts("4(x2),2").unwrap(), vec![4, 4, 2]);
        assert_eq!(expand_counts("1").unwrap(), vec![1]);
        assert_eq!(expand_counts("2,3(x1)").unwrap(), vec![2, 3]);
        for bad in ["", "x", "4(x", "4(xa)", "4(x2", "-1"] {
            assert!(expand_counts(bad).is_err(), "{bad}");
        }
    }
}
