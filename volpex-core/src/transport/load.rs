//! Whether other work crowds this host's CPUs: the number of runnable tasks of the whole
//! machine (the fourth field of `/proc/loadavg`, the kernel's instantaneous count),
//! sampled at most every `SAMPLE_EVERY` when a blocked call starts its wait, against what
//! this job alone can run (the larger of the machine's CPUs and the job's processes
//! here). The count is the whole machine's, so it is held against the whole machine's
//! CPUs, not the ones this process may use (a container pinned to a few CPUs of a large
//! machine would otherwise count the other containers' work as its own host's).
//!
//! Why a wait cares (docs/SHM.md, "Waits on a host others load"): a wait that polls (and
//! yields between polls) is, to the kernel's fair scheduler, a process that wants the
//! CPU all the time; once it lost the CPU to other jobs' processes it waits its turn
//! behind them, where a wait that sleeps is woken as soon as its message comes and runs
//! at once (a woken sleeper preempts). On a quiet host polling is what is fast.
//!
//! Owns the sampling and its smoothing. Must never decide how a wait goes (`spin` does)
//! and never reads anything but `/proc/loadavg` and, once, this process's policy.

use std::cell::Cell;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Duration;

/// How often at most the count is read (one `pread` each).
const SAMPLE_EVERY: Duration = Duration::from_millis(10);

/// Of the last 4 samples, at least this many must have found the host crowded by others
/// for a wait to count it so: a kernel thread or a launcher's heartbeat runnable at the
/// moment of one sample does not turn a quiet host's waits into sleeps.
const CROWDED_OF_4: u32 = 3;

/// The host's load as a blocked call sees it.
#[derive(Debug)]
pub(super) struct HostLoad {
    /// `/proc/loadavg`, open; `None`: never crowded (not Linux, no procfs, a real-time
    /// process, or the user chose the waits' spins).
    file: Option<File>,
    /// Runnable tasks this job alone may account for.
    own: usize,
    /// When the count was last read.
    sampled_at: Cell<Option<Duration>>,
    /// The last samples, newest in bit 0: 1 = crowded by others.
    history: Cell<u8>,
}

impl HostLoad {
    /// Watches the host for a job that runs `here` processes on it with `cpus` CPUs;
    /// `watch` false (the user set the spins, or this process runs at a real-time
    /// priority, where other jobs' processes cannot take its CPU) never counts it
    /// crowded.
    pub(super) fn new(watch: bool, here: usize, cpus: usize) -> HostLoad {
        let file = if watch && !real_time() {
            File::open("/proc/loadavg").ok()
        } else {
            None
        };
        HostLoad {
            file,
            own: here.max(cpus),
            sampled_at: Cell::new(None),
            history: Cell::new(0),
        }
    }

    /// One that never counts the host crowded.
    #[cfg(test)]
    pub(super) fn never() -> HostLoad {
        HostLoad::new(false, 0, 0)
    }

    /// Whether it reads the host's load at all.
    #[cfg(test)]
    pub(super) fn watches(&self) -> bool {
        self.file.is_some()
    }

    /// Whether other work crowds the host's CPUs at `now` (reads the count if the last
    /// reading is `SAMPLE_EVERY` old).
    pub(super) fn crowded(&self, now: Duration) -> bool {
        let Some(file) = &self.file else {
            return false;
        };
        let due = self
            .sampled_at
            .get()
            .is_none_or(|t| now.saturating_sub(t) >= SAMPLE_EVERY);
        if due {
            self.sampled_at.set(Some(now));
            let mut buf = [0u8; 128];
            let runnable = file
                .read_at(&mut buf, 0)
                .ok()
                .and_then(|n| runnable(&buf[..n]));
            if let Some(r) = runnable {
                let before = self.counts();
                self.note(r > self.own);
                if self.counts() != before {
                    log::debug!(
                        "{r} runnable tasks on this host for {} of ours: blocked calls {}",
                        self.own,
                        if before {
                            "poll again before sleeping"
                        } else {
                            "sleep at once"
                        }
                    );
                }
            }
        }
        self.counts()
    }

    /// Records one sample.
    fn note(&self, crowded: bool) {
        self.history
            .set((self.history.get() << 1) | u8::from(crowded));
    }

    /// Whether the recent samples say crowded.
    fn counts(&self) -> bool {
        (self.history.get() & 0b1111).count_ones() >= CROWDED_OF_4
    }
}

/// The machine's online CPUs (`/sys/devices/system/cpu/online`, ranges such as
/// "0-3,8-11"); if unreadable, the CPUs this process may use.
pub(super) fn online_cpus() -> usize {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| cpu_count(&t))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The number of CPUs in a kernel CPU list ("0-3,8,10-11").
fn cpu_count(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.trim().split(',') {
        n += match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)? + 1
            }
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

/// The number of runnable tasks in `/proc/loadavg`'s text ("0.50 0.40 0.30 3/456 789").
fn runnable(text: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(text).ok()?;
    let field = text.split_ascii_whitespace().nth(3)?;
    field.split('/').next()?.parse().ok()
}

/// Whether this process runs under a real-time policy (`chrt`): field 41 of
/// `/proc/self/stat` is 1 (FIFO) or 2 (RR).
fn real_time() -> bool {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return false;
    };
    // The command name (field 2) may hold spaces: count from the closing parenthesis.
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return false;
    };
    matches!(rest.split_ascii_whitespace().nth(38), Some("1" | "2"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runnable_count_is_the_fourth_field() {
        assert_eq!(runnable(b"0.50 0.40 0.30 3/456 789\n"), Some(3));
        assert_eq!(runnable(b"12.02 9.11 7.00 17/1024 31337"), Some(17));
        assert_eq!(runnable(b"0.50 0.40"), None);
        assert_eq!(runnable(b"a b c x/y z"), None);
    }

    #[test]
    fn a_cpu_list_counts_its_ranges_and_single_cpus() {
        assert_eq!(cpu_count("0-1\n"), Some(2));
        assert_eq!(cpu_count("0"), Some(1));
        assert_eq!(cpu_count("0-3,8-11"), Some(8));
        assert_eq!(cpu_count("0,2,4-5"), Some(4));
        assert_eq!(cpu_count(""), None);
        assert_eq!(cpu_count("3-1"), None);
        assert_eq!(cpu_count("x"), None);
        assert!(online_cpus() >= 1);
    }

    /// A sample that found others' work counts only with the next ones: three of the
    /// last four decide.
    #[test]
    fn three_crowded_samples_of_the_last_four_make_a_crowded_host() {
        let l = HostLoad::never();
        for (crowded, then) in [
            (true, false),
            (false, false),
            (true, false),
            (true, true),
            (true, true),
            (false, true),
            (false, false),
        ] {
            l.note(crowded);
            assert_eq!(l.counts(), then);
        }
    }

    #[test]
    fn a_load_it_does_not_watch_is_never_crowded_and_reads_nothing() {
        let l = HostLoad::never();
        for ms in 0..100 {
            assert!(!l.crowded(Duration::from_millis(ms * 10)));
        }
        assert_eq!(l.sampled_at.get(), None);
    }

    /// On this machine: the file parses, and a job that may account for more tasks than
    /// any machine runs is never crowded by others.
    #[test]
    fn the_host_is_read_every_sample_period_at_most() {
        let l = HostLoad::new(true, usize::MAX, 1);
        if l.file.is_none() {
            return; // no procfs here (or a real-time test runner)
        }
        let t = Duration::from_secs(5);
        assert!(!l.crowded(t));
        assert_eq!(l.sampled_at.get(), Some(t));
        assert!(!l.crowded(t + SAMPLE_EVERY / 2));
        assert_eq!(l.sampled_at.get(), Some(t), "not read again so soon");
        assert!(!l.crowded(t + SAMPLE_EVERY));
        assert_eq!(l.sampled_at.get(), Some(t + SAMPLE_EVERY));
        let text = std::fs::read("/proc/loadavg").expect("/proc/loadavg");
        assert!(runnable(&text).is_some_and(|r| r >= 1), "this test runs");
    }
}
