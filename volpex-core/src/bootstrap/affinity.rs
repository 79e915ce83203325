//! Binding this process to the CPUs volpexrun chose for its team (`VOLPEX_CPUS`).
//!
//! Owns the CPU list format (as `taskset -c` takes and `Cpus_allowed_list` shows it:
//! `0,2-3`) and applying it. Must run before the runtime starts a thread (threads inherit
//! the binding of the thread that starts them). Never decides a placement: the launcher
//! does (`volpexrun --bind`).

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

use super::vars;
use crate::error::Error;

/// Parses a CPU list such as `0,2-3` (ascending, no duplicates in the result).
pub fn parse_cpus(s: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in s.split(',').map(str::trim) {
        let num = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("{t:?} is not a CPU number"))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if lo > hi {
            return Err(format!("{part:?} is a descending range"));
        }
        if hi >= CpuSet::count() {
            return Err(format!(
                "CPU {hi} is beyond the {} this system can name",
                CpuSet::count()
            ));
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats CPUs (ascending) as a list `parse_cpus` reads, with ranges: `0-3,6`.
pub fn format_cpus(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// The CPUs the calling thread may run on.
pub fn allowed_cpus() -> Result<Vec<usize>, String> {
    let set = sched_getaffinity(Pid::from_raw(0)).map_err(|e| e.to_string())?;
    Ok((0..CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect())
}

/// Binds every thread of process `pid` (of this machine) to `cpus`: the launcher moves a
/// team onto the CPUs a dead team left (see `volpexrun`'s `--bind`). A thread that ends
/// meanwhile is skipped; the process itself gone is an error.
pub fn bind_process(pid: u32, cpus: &[usize]) -> Result<(), String> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(|e| format!("CPU {c}: {e}"))?;
    }
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map_err(|e| format!("process {pid}: {e}"))?;
    for task in tasks.flatten() {
        let Some(tid) = task
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        if let Err(e) = sched_setaffinity(Pid::from_raw(tid), &set) {
            log::debug!("cannot bind thread {tid} of process {pid}: {e}");
        }
    }
    Ok(())
}

/// Binds the calling thread (and so every thread it starts later) to `VOLPEX_CPUS`, if
/// set. A list that does not parse or that the kernel refuses is an error naming it.
pub fn apply_from_env() -> Result<(), Error> {
    let Ok(list) = std::env::var(vars::CPUS) else {
        return Ok(());
    };
    let bad = |e: String| Error::Launch(format!("{}={list:?}: {e}", vars::CPUS));
    let cpus = parse_cpus(&list).map_err(bad)?;
    let mut set = CpuSet::new();
    for &c in &cpus {
        set.set(c).map_err(|e| bad(e.to_string()))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| bad(format!("cannot bind: {e}")))?;
    log::debug!("bound to CPUs {}", format_cpus(&cpus));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_format_alike() {
        assert_eq!(parse_cpus("0"), Ok(vec![0]));
        assert_eq!(parse_cpus("3,0-2, 2"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(format_cpus(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(parse_cpus(&format_cpus(&[1, 4, 5])), Ok(vec![1, 4, 5]));
        for bad in ["", "a", "1-", "3-1", "1,,2", "99999"] {
            assert!(parse_cpus(bad).is_err(), "{bad:?}");
        }
    }
}
