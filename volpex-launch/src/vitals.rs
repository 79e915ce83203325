//! What this machine's `/proc` says about a replica whose heartbeat is overdue: stopped,
//! runnable (starved of CPU on a loaded machine, or waiting for the disk), or neither.
//! volpexrun reads it for a replica on its own machine, a host's agent for one it started
//! (`ToAgent::Vitals`). Owns reading and parsing `/proc/PID/task/*/stat`; must never decide
//! whether a replica is dead (the control server does, see `Server::beat`).

/// The state of a process's threads, as far as a silent heartbeat is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Vitals {
    /// A thread is stopped (SIGSTOP, `--fault X:stop@T`, a debugger): silent for good.
    Stopped,
    /// No thread is stopped and one is running, waiting for a CPU or for the disk (states
    /// R, D, W): the machine starves it; it is not dead.
    Runnable,
    /// Every thread sleeps, or `/proc` says nothing (gone, another pid namespace): its
    /// silence means what it says.
    Idle,
}

/// The vitals of process `pid` on this machine.
pub fn of(pid: u32) -> Vitals {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vitals::Idle;
    };
    judge(tasks.flatten().filter_map(|t| {
        let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
        state(&stat)
    }))
}

/// The state letter of one `/proc/.../stat` line: `pid (comm) S ...`, where `comm` may
/// hold spaces and parentheses but nothing after the last `)` does.
fn state(stat: &str) -> Option<char> {
    let (_, after) = stat.rsplit_once(')')?;
    after.split_whitespace().next()?.chars().next()
}

/// The vitals of a process whose threads are in `states` (proc(5) letters).
fn judge(states: impl Iterator<Item = char>) -> Vitals {
    let mut runnable = false;
    for s in states {
        match s {
            'T' | 't' => return Vitals::Stopped,
            'R' | 'D' | 'W' => runnable = true,
            _ => {}
        }
    }
    if runnable {
        Vitals::Runnable
    } else {
        Vitals::Idle
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_last_parenthesis() {
        assert_eq!(state("12 (a b) R 1 2 3"), Some('R'));
        assert_eq!(state("12 (x) (y)) T 1"), Some('T'));
        assert_eq!(state("12 (x"), None);
        assert_eq!(state("12 (x)"), None);
    }

    #[test]
    fn a_stopped_thread_wins_over_runnable_ones() {
        let cases: [(&str, Vitals); 7] = [
            ("RS", Vitals::Runnable),
            ("SSD", Vitals::Runnable),
            ("SS", Vitals::Idle),
            ("", Vitals::Idle),
            ("RT", Vitals::Stopped),
            ("tR", Vitals::Stopped),
            ("ZS", Vitals::Idle),
        ];
        for (states, want) in cases {
            assert_eq!(judge(states.chars()), want, "{states}");
        }
    }

    #[test]
    fn this_test_is_runnable_and_a_missing_pid_is_idle() {
        assert_eq!(of(std::process::id()), Vitals::Runnable);
        assert_eq!(of(u32::MAX), Vitals::Idle);
    }
}
