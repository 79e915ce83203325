//! Host lists: Open MPI's and MPICH Hydra's hostfile formats (`--hosts FILE`) and the
//! `--host a,b:2,c` list.
//!
//! Owns parsing and validation only: a line is `host`, `host slots=N` (Open MPI), `host:N`
//! (Hydra), a comment (`#` to the end of the line) or blank. A host
//! named twice gets the sum of its slots, in the order of first appearance (as in Open
//! MPI). Must never resolve names, touch the network or guess: anything else is one error
//! naming the file and line.

use std::io::Read;
use std::path::Path;

use crate::error::{HostProblem, HostsError};

/// One host and how many processes it may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    /// Name as given (passed to ssh / srun unchanged).
    pub name: String,
    /// Process slots; a host given without `slots=` has 1.
    pub slots: u32,
}

/// Largest `slots=` value accepted (a typo guard, not a limit of the runtime).
pub const SLOTS_MAX: u32 = 100_000;

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '@' | ':' | '[' | ']')
        })
}

fn add(hosts: &mut Vec<HostSpec>, name: &str, slots: u32) {
    match hosts.iter_mut().find(|h| h.name == name) {
        Some(h) => h.slots = h.slots.saturating_add(slots),
        None => hosts.push(HostSpec {
            name: name.to_string(),
            slots,
        }),
    }
}

fn parse_slots(v: &str) -> Option<u32> {
    v.parse::<u32>()
        .ok()
        .filter(|&n| (1..=SLOTS_MAX).contains(&n))
}

/// Parses hostfile text; `origin` names the file in errors.
pub fn parse_hostfile(text: &str, origin: &str) -> Result<Vec<HostSpec>, HostsError> {
    let mut hosts = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let err = |problem: HostProblem| HostsError::Line {
            origin: origin.into(),
            line: line_no,
            problem,
        };
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        // `slots = 4` is read as `slots=4`, as Open MPI does.
        let line = line
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace(" = ", "=")
            .replace(" =", "=")
            .replace("= ", "=");
        let mut words = line.split_whitespace();
        let Some(word) = words.next() else { continue };
        // Hydra's `host:N`: one `:`, then the slots (a name with more, an IPv6 address,
        // is a name).
        let (name, hydra_slots) = match word.split_once(':') {
            Some((n, s)) if !s.contains(':') => (
                n,
                Some(parse_slots(s).ok_or_else(|| {
                    err(HostProblem::BadSlots {
                        given: s.into(),
                        max: SLOTS_MAX,
                    })
                })?),
            ),
            Some(_) | None => (word, None),
        };
        if !valid_name(name) {
            return Err(err(HostProblem::BadName(name.into())));
        }
        let mut slots = hydra_slots;
        for w in words {
            match w.split_once('=') {
                Some(("slots", v)) => {
                    if slots.is_some() {
                        return Err(err(HostProblem::SlotsTwice));
                    }
                    slots = Some(parse_slots(v).ok_or_else(|| {
                        err(HostProblem::BadSlots {
                            given: v.into(),
                            max: SLOTS_MAX,
                        })
                    })?);
                }
                Some((k, _)) => return Err(err(HostProblem::UnknownAttribute(k.into()))),
                None => return Err(err(HostProblem::Unexpected(w.into()))),
            }
        }
        add(&mut hosts, name, slots.unwrap_or(1));
    }
    if hosts.is_empty() {
        return Err(HostsError::Empty {
            origin: origin.into(),
        });
    }
    Ok(hosts)
}

/// The largest hostfile read: room for a line of comment per slot of the largest host
/// list we accept, far beyond any real one. A larger "file" (`/dev/zero`, a log given by
/// mistake) is refused rather than read until memory runs out.
pub const HOSTFILE_BYTES_MAX: u64 = 16 << 20;

/// Reads and parses a hostfile (at most `HOSTFILE_BYTES_MAX` bytes).
pub fn read_hostfile(path: &Path) -> Result<Vec<HostSpec>, HostsError> {
    let read_err = |source| HostsError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(HOSTFILE_BYTES_MAX + 1).read_to_string(&mut text))
        .map_err(read_err)?;
    if text.len() as u64 > HOSTFILE_BYTES_MAX {
        return Err(HostsError::TooLarge {
            path: path.to_path_buf(),
            max: HOSTFILE_BYTES_MAX,
        });
    }
    parse_hostfile(&text, &path.display().to_string())
}

/// Parses `--host a,b:2,c` (a name, optionally `:SLOTS`).
pub fn parse_host_list(list: &str) -> Result<Vec<HostSpec>, HostsError> {
    let mut hosts = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        let err = |problem: HostProblem| HostsError::List {
            list: list.into(),
            problem,
        };
        if item.is_empty() {
            return Err(err(HostProblem::EmptyName));
        }
        let (name, slots) = match item.rsplit_once(':') {
            Some((n, s)) if s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() => (
                n,
                parse_slots(s).ok_or_else(|| {
                    err(HostProblem::SlotsOutOfRange {
                        given: s.into(),
                        max: SLOTS_MAX,
                    })
                })?,
            ),
            _ => (item, 1),
        };
        if !valid_name(name) || name.contains(':') {
            return Err(err(HostProblem::BadName(name.into())));
        }
        add(&mut hosts, name, slots);
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, slots: u32) -> HostSpec {
        HostSpec {
            name: name.into(),
            slots,
        }
    }

    /// A hostfile that never ends (`/dev/zero`) is refused with an error naming it; it was
    /// read until memory ran out (volpexrun hung, growing). Only what the bound lets
    /// through is read: an endless file behaves as a long one.
    #[test]
    fn an_endless_hostfile_is_refused_not_read_forever() {
        let e = read_hostfile(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e, HostsError::TooLarge { .. }), "{e:?}");
        assert!(e.to_string().contains("/dev/zero"), "{e}");
    }

    #[test]
    fn open_mpi_hostfile_lines() {
        let text = "# cluster\n\nnode1 slots=4\n  node2   # one slot\nnode3 slots = 2 # two\nnode1\tslots=1\n10.0.0.7\n";
        assert_eq!(
            parse_hostfile(text, "hosts.txt").unwrap(),
            vec![
                h("node1", 5),
                h("node2", 1),
                h("node3", 2),
                h("10.0.0.7", 1)
            ]
        );
    }

    #[test]
    fn hydra_hostfile_lines() {
        let text = "# hydra\na:4\nb\nc:2 # two\n10.0.0.7:3\na:1\n";
        assert_eq!(
            parse_hostfile(text, "hosts.txt").unwrap(),
            vec![h("a", 5), h("b", 1), h("c", 2), h("10.0.0.7", 3)]
        );
        for (text, place) in [
            ("a\nb:0\n", "hosts.txt:2:"),
            ("a:\n", "hosts.txt:1:"),
            ("a:2 slots=3\n", "hosts.txt:1:"),
            ("a:99999999999\n", "hosts.txt:1:"),
            ("a:x\n", "hosts.txt:1:"),
        ] {
            let e = parse_hostfile(text, "hosts.txt").unwrap_err().to_string();
            assert!(e.starts_with(place), "{text:?}: {e}");
        }
    }

    #[test]
    fn hostfile_errors_name_the_line() {
        let cases = [
            ("a\nb slots=x\n", "hosts.txt:2:", "slots=\"x\""),
            ("a slots=0\n", "hosts.txt:1:", "slots=\"0\""),
            (
                "a\n\nb max_slots=3\n",
                "hosts.txt:3:",
                "unknown attribute \"max_slots\"",
            ),
            ("a b\n", "hosts.txt:1:", "unexpected \"b\""),
            ("a slots=1 slots=2\n", "hosts.txt:1:", "slots given twice"),
            ("-oProxyCommand=x\n", "hosts.txt:1:", "bad host name"),
            ("a slots=4x\n", "hosts.txt:1:", "slots="),
            ("# only comments\n\n", "hosts.txt:", "no hosts"),
        ];
        for (text, place, what) in cases {
            let e = parse_hostfile(text, "hosts.txt").unwrap_err().to_string();
            assert!(e.starts_with(place), "{text:?}: {e}");
            assert!(e.contains(what), "{text:?}: {e}");
        }
    }

    #[test]
    fn host_lists() {
        assert_eq!(
            parse_host_list("a,b:2,c").unwrap(),
            vec![h("a", 1), h("b", 2), h("c", 1)]
        );
        assert_eq!(parse_host_list("a:2,a").unwrap(), vec![h("a", 3)]);
        for bad in ["", "a,,b", "a:0", "-x", "a:b:c", "a,b:99999999999"] {
            assert!(parse_host_list(bad).is_err(), "{bad}");
        }
    }
}
