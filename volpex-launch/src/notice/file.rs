//! The file watcher: looks for a file every `POLL_INTERVAL` and reports a notice when it
//! appears. What writes it is the machine's own warning, in whatever form a site has: a
//! Kubernetes pod's `preStop` hook (run before the pod's SIGTERM, within its
//! `terminationGracePeriodSeconds`), a cron job reading a provider's API, an operator's
//! script. The file may hold the seconds left until the machine goes; otherwise the
//! deadline is `NOTICE_PERIOD` away.
//!
//! Owns reading the file; must never write or remove it, never panic on what it holds,
//! and never decide what a notice does.

use std::io::Read;
use std::time::Duration;

use super::{Report, Seen};

/// The deadline of a notice whose file names none: Kubernetes' default
/// `terminationGracePeriodSeconds`.
pub const NOTICE_PERIOD: Duration = Duration::from_secs(30);
/// How often the file is looked for (a local stat: cheap).
const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// The most bytes of the file read.
const CONTENT_MAX_BYTES: u64 = 4096;
/// The longest deadline a file may give (a typo guard): a day.
const DEADLINE_MAX: Duration = Duration::from_secs(24 * 3600);

/// Watches `path` until `tell` says nobody listens. A file that goes away and comes back
/// is a new notice.
pub(super) fn run(path: String, tell: impl Fn(Report) -> bool) {
    if !tell(Report::Say(format!(
        "watching for preemption notices in the file {path}"
    ))) {
        return;
    }
    let mut noticed = false;
    let mut troubled = false;
    loop {
        let told = match read(&path) {
            Ok(text) if !noticed => {
                noticed = true;
                troubled = false;
                tell(Report::Notice(seen(&path, &text)))
            }
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                noticed = false;
                troubled = false;
                true
            }
            Err(e) if !troubled => {
                troubled = true;
                tell(Report::Say(format!(
                    "cannot read the preemption notice file {path}: {e}; still watching"
                )))
            }
            Err(_) => true,
        };
        if !told {
            return;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

fn read(path: &str) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(CONTENT_MAX_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The notice a file holding `text` gives: its seconds, if it holds a number of them.
fn seen(path: &str, text: &str) -> Seen {
    let t = text.trim();
    let given = t
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s).min(DEADLINE_MAX));
    let default = NOTICE_PERIOD.as_secs();
    match given {
        Some(d) => Seen {
            said: format!(
                "file {path} (deadline in {:.1} s, as it says)",
                d.as_secs_f64()
            ),
            deadline_in: d,
        },
        None if t.is_empty() => Seen {
            said: format!("file {path} (no time given: deadline in {default} s)"),
            deadline_in: NOTICE_PERIOD,
        },
        None => Seen {
            said: format!(
                "file {path} (not a number of seconds: {:?}; deadline in {default} s)",
                t.chars().take(40).collect::<String>()
            ),
            deadline_in: NOTICE_PERIOD,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_may_give_the_seconds_left_and_anything_else_means_the_default() {
        assert_eq!(seen("/n", "25\n").deadline_in, Duration::from_secs(25));
        assert_eq!(seen("/n", " 2.5 ").deadline_in, Duration::from_millis(2500));
        assert_eq!(seen("/n", "").deadline_in, NOTICE_PERIOD);
        assert_eq!(
            seen("/n", "").said,
            "file /n (no time given: deadline in 30 s)"
        );
        for odd in ["soon", "-3", "NaN", "inf", "\u{fffd}\u{fffd}"] {
            let s = seen("/n", odd);
            assert_eq!(s.deadline_in, NOTICE_PERIOD, "{odd}");
            assert!(
                s.said.contains("not a number of seconds"),
                "{odd}: {}",
                s.said
            );
        }
        assert_eq!(seen("/n", "1e9").deadline_in, DEADLINE_MAX);
    }

    #[test]
    fn a_notice_is_told_once_per_appearance() {
        let dir = std::env::temp_dir().join(format!("volpex-notice-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("notice");
        let _ = std::fs::remove_file(&path);
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.display().to_string();
        std::thread::spawn(move || run(p, move |r| tx.send(r).is_ok()));
        let next = || rx.recv_timeout(Duration::from_secs(10)).expect("a report");
        assert!(matches!(next(), Report::Say(s) if s.contains("watching")));
        std::fs::write(&path, "12").expect("write the notice");
        assert!(matches!(next(), Report::Notice(s) if s.deadline_in == Duration::from_secs(12)));
        // Still there: nothing new.
        assert!(rx.recv_timeout(POLL_INTERVAL * 3).is_err());
        std::fs::remove_file(&path).expect("remove the notice");
        std::thread::sleep(POLL_INTERVAL * 3);
        std::fs::write(&path, "").expect("write the notice again");
        assert!(matches!(next(), Report::Notice(s) if s.deadline_in == NOTICE_PERIOD));
        drop(rx);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
