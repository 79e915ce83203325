//! The CPUs this process may use and binding other processes of this machine to CPUs:
//! the launcher's only `sched_*affinity` calls (the list format is
//! `volpex_proto::launch::parse_cpus`).
//!
//! Owns the system calls only. Must never decide a placement (`binding` does).

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

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
