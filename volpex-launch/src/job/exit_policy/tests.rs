//! Table tests of the exit policy, then every combination of replica states for small
//! jobs against a counting oracle.

use super::*;

/// One letter per replica state: S starting, R running, Z finalized, F finished,
/// X failed, T retired, E ended (and D drained, for the messages).
const LETTERS: [char; 7] = ['S', 'R', 'Z', 'F', 'X', 'T', 'E'];

fn state(c: char) -> ReplicaState {
    match c {
        'S' => ReplicaState::Starting,
        'R' => ReplicaState::Running,
        'Z' => ReplicaState::Finalized,
        'F' => ReplicaState::Finished,
        'X' => ReplicaState::Failed("exited with code 3".into()),
        'T' => ReplicaState::Retired("fell behind".into()),
        'E' => ReplicaState::Ended,
        'D' => ReplicaState::Drained,
        other => panic!("no state for {other:?}"),
    }
}

/// "RF XX" is two ranks of two replicas each.
fn parse(grid: &str) -> (u32, Vec<ReplicaState>) {
    let ranks: Vec<&str> = grid.split_whitespace().collect();
    let replicas = ranks[0].len() as u32;
    assert!(ranks.iter().all(|r| r.len() as u32 == replicas), "{grid}");
    (
        replicas,
        ranks.iter().flat_map(|r| r.chars()).map(state).collect(),
    )
}

fn with_grid<T>(grid: &str, f: impl FnOnce(Grid<'_>) -> T) -> T {
    let (replicas, states) = parse(grid);
    let refs: Vec<&ReplicaState> = states.iter().collect();
    f(Grid::new(replicas, &refs))
}

const NO_CLEAN_0: &str = "rank 0: no replica finished cleanly";
const NO_CLEAN_1: &str = "rank 1: no replica finished cleanly";

/// grid, progress while running, verdict once every process is gone (no earlier failure).
const TABLE: &[(&str, Progress, Option<&str>)] = &[
    ("S", Progress::Running, Some(NO_CLEAN_0)),
    ("R", Progress::Running, Some(NO_CLEAN_0)),
    ("Z", Progress::Done, Some(NO_CLEAN_0)),
    ("F", Progress::Done, None),
    ("X", Progress::Lost { rank: 0 }, Some(NO_CLEAN_0)),
    ("T", Progress::Lost { rank: 0 }, Some(NO_CLEAN_0)),
    ("E", Progress::Lost { rank: 0 }, Some(NO_CLEAN_0)),
    // One good replica is enough for its rank.
    ("XF", Progress::Done, None),
    ("XR", Progress::Running, Some(NO_CLEAN_0)),
    ("TZ", Progress::Done, Some(NO_CLEAN_0)),
    ("XTE", Progress::Lost { rank: 0 }, Some(NO_CLEAN_0)),
    // The first lost rank is named, whatever the others do.
    ("RF XX", Progress::Lost { rank: 1 }, Some(NO_CLEAN_1)),
    ("XX XX", Progress::Lost { rank: 0 }, Some(NO_CLEAN_0)),
    ("FF EX", Progress::Lost { rank: 1 }, Some(NO_CLEAN_1)),
    // Done needs every rank completed; success needs every rank finished.
    ("FX XF", Progress::Done, None),
    ("ZR RR", Progress::Running, Some(NO_CLEAN_0)),
    ("ZE FE", Progress::Done, Some(NO_CLEAN_0)),
    ("FZ ZZ", Progress::Done, Some(NO_CLEAN_1)),
    ("FE TF", Progress::Done, None),
    ("SS SS", Progress::Running, Some(NO_CLEAN_0)),
];

#[test]
fn table() {
    for &(grid, want_progress, want_failure) in TABLE {
        with_grid(grid, |g| {
            assert_eq!(progress(g), want_progress, "progress of {grid}");
            let v = verdict(None, g, |_| None);
            assert_eq!(v.failure(), want_failure, "verdict of {grid}");
            let want_code = if want_failure.is_some() {
                EXIT_RANK_LOST
            } else {
                0
            };
            assert_eq!(v.exit_code(), want_code, "{grid}");
            // A rank whose program exited with its own code fails with that code.
            let v = verdict(None, g, |_| Some(3));
            assert_eq!(v.exit_code(), if want_failure.is_some() { 3 } else { 0 });
        });
    }
}

#[test]
fn an_earlier_failure_wins() {
    with_grid("FF FF", |g| {
        let why = "interrupted by SIGINT; ended every process";
        let v = verdict(Some((why, interrupted_code(2))), g, |_| Some(3));
        assert_eq!(
            v,
            Verdict::Failed {
                why: why.into(),
                code: 130
            }
        );
        assert_eq!(v.exit_code(), 130);
        assert_eq!(verdict(None, g, |_| Some(3)), Verdict::Succeeded);
        assert_eq!(verdict(None, g, |_| None).exit_code(), 0);
    });
}

#[test]
fn lost_message_names_every_replica() {
    with_grid("FR XE", |g| {
        assert_eq!(
            lost_message(g, 1),
            "rank 1 lost: all 2 replicas failed (1.0: exited with code 3; 1.1: ended)"
        );
    });
    with_grid("T", |g| {
        assert_eq!(
            lost_message(g, 0),
            "rank 0 lost: its only replica failed (0.0: fell behind)"
        );
    });
    // Issue 42 item 3: a drained replica still current was not replaced; its state is
    // said in words.
    with_grid("D", |g| {
        assert_eq!(
            lost_message(g, 0),
            "rank 0 lost: its only replica failed (0.0: ended after a preemption notice (SIGTERM), and its drain grace ran out before it could be replaced)"
        );
    });
}

#[test]
fn what_each_state_gets() {
    let want = [
        ('S', AtShutdown::End, true),
        ('R', AtShutdown::End, true),
        ('Z', AtShutdown::AskToExit, true),
        ('F', AtShutdown::Leave, false),
        ('X', AtShutdown::Leave, false),
        ('T', AtShutdown::Leave, false),
        ('E', AtShutdown::Leave, false),
    ];
    assert_eq!(want.len(), LETTERS.len());
    for (c, shutdown, ends) in want {
        assert_eq!(at_shutdown(&state(c)), shutdown, "{c}");
        assert_eq!(ends_on_failure(&state(c)), ends, "{c}");
    }
}

/// Every grid of `ranks` x `replicas` states, as strings like "RF XX".
fn every_grid(ranks: u32, replicas: u32) -> Vec<String> {
    let cells = (ranks * replicas) as usize;
    let total = LETTERS.len().pow(cells as u32);
    (0..total)
        .map(|mut n| {
            let mut s = String::new();
            for cell in 0..cells {
                if cell > 0 && cell % replicas as usize == 0 {
                    s.push(' ');
                }
                s.push(LETTERS[n % LETTERS.len()]);
                n /= LETTERS.len();
            }
            s
        })
        .collect()
}

/// The policy restated by counting letters.
fn oracle(grid: &str) -> (Progress, Option<String>) {
    let ranks: Vec<&str> = grid.split_whitespace().collect();
    let count = |r: &str, set: &str| r.chars().filter(|c| set.contains(*c)).count();
    let lost = ranks.iter().position(|r| count(r, "XTE") == r.len());
    let progress = match lost {
        Some(rank) => Progress::Lost { rank: rank as u32 },
        None if ranks.iter().all(|r| count(r, "ZF") > 0) => Progress::Done,
        None => Progress::Running,
    };
    let failure = ranks
        .iter()
        .position(|r| count(r, "F") == 0)
        .map(|rank| format!("rank {rank}: no replica finished cleanly"));
    (progress, failure)
}

#[test]
fn every_combination_of_outcomes() {
    let mut seen = 0;
    for (ranks, replicas) in [
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 1),
        (2, 2),
        (3, 1),
        (2, 3),
        (3, 2),
    ] {
        let grids = every_grid(ranks, replicas);
        assert_eq!(grids.len(), 7usize.pow(ranks * replicas));
        for grid in grids {
            let (want_progress, want_failure) = oracle(&grid);
            with_grid(&grid, |g| {
                assert_eq!(g.ranks(), ranks);
                let got = progress(g);
                assert_eq!(got, want_progress, "progress of {grid}");
                let v = verdict(None, g, |_| None);
                assert_eq!(v.failure(), want_failure.as_deref(), "verdict of {grid}");
                // A job that is done has no lost rank, and a success was done first.
                if v == Verdict::Succeeded {
                    assert_eq!(got, Progress::Done, "{grid}");
                }
            });
            seen += 1;
        }
    }
    assert_eq!(seen, 7 + 49 + 343 + 49 + 2401 + 343 + 117_649 + 117_649);
}

/// Issue 42 item 3: a command line wrong in itself exits 2, as clap's usage errors do;
/// what it could not have known (files, hosts, the system) exits 1.
#[test]
fn start_errors_exit_2_for_the_command_line_and_1_for_the_rest() {
    use crate::error::{CliError, HostProblem, HostsError, StartError};
    let usage = [
        StartError::FaultOutsideJob {
            rank: 5,
            replica: 0,
            ranks: 2,
            replicas: 1,
        },
        StartError::Cli(CliError::StdinOutsideJob { rank: 7, ranks: 2 }),
        StartError::Cli(CliError::ExportEmptyName { spec: "".into() }),
        StartError::Hosts(HostsError::List {
            list: "".into(),
            problem: HostProblem::EmptyName,
        }),
        StartError::Hosts(HostsError::Empty {
            origin: "hosts.txt".into(),
        }),
        StartError::Hosts(HostsError::Read {
            path: "/nonexistent".into(),
            source: std::io::ErrorKind::NotFound.into(),
        }),
        StartError::Hosts(HostsError::Line {
            origin: "hosts.txt".into(),
            line: 1,
            problem: HostProblem::EmptyName,
        }),
        StartError::Cli(CliError::HeartbeatTimeoutTooShort {
            timeout: 0.1,
            interval: 0.25,
        }),
    ];
    for e in &usage {
        assert_eq!(start_error_code(e), EXIT_USAGE, "{e}");
    }
    let other = [
        StartError::Wdir {
            path: "/nonexistent".into(),
            source: std::io::ErrorKind::NotFound.into(),
        },
        StartError::ProgramIsDirectory {
            program: "/tmp".into(),
        },
        StartError::Report {
            path: "/proc/x".into(),
            source: std::io::ErrorKind::NotFound.into(),
        },
    ];
    for e in &other {
        assert_eq!(start_error_code(e), EXIT_LAUNCHER, "{e}");
    }
}
