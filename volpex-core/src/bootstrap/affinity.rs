//! Binding this process to the CPUs volpexrun chose for its team (`VOLPEX_CPUS`; the list
//! format is `volpex_proto::launch::parse_cpus`).
//!
//! Owns applying the binding. Must run before the runtime starts a thread (threads
//! inherit the binding of the thread that starts them). Never decides a placement: the
//! launcher does (`volpexrun --bind`).

use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;
use volpex_proto::launch::{format_cpus, vars};

use crate::error::Error;

/// Binds the calling thread (and so every thread it starts later) to `cpus`. A CPU the
/// kernel refuses is an error naming the variable.
pub fn bind_self(cpus: &[usize]) -> Result<(), Error> {
    let bad = |e: String| Error::Launch(format!("{}={}: {e}", vars::CPUS, format_cpus(cpus)));
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(|e| bad(e.to_string()))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set).map_err(|e| bad(format!("cannot bind: {e}")))?;
    log::debug!("bound to CPUs {}", format_cpus(cpus));
    Ok(())
}
