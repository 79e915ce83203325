//! The spec parser over a table of good and bad specs, and the generator against live
//! states: same seed same schedule, never the last replica unless asked, the window,
//! the cap, and a schedule that prints as `--fault` specs that parse back.

use super::*;
use crate::fault::parse_fault;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn specs_parse() {
    let s = parse_chaos(
        "42:kill=0.5,stop=2,stop-for=0.25,exit=0.1,exit-sends=50,from=1,until=9,max=3,last",
    )
    .unwrap();
    assert_eq!(
        s,
        ChaosSpec {
            seed: 42,
            kill_per_s: 0.5,
            stop_per_s: 2.0,
            stop_for: ms(250),
            exit_p: 0.1,
            exit_sends: 50,
            from: ms(1000),
            until: Some(ms(9000)),
            max: Some(3),
            last: true,
        }
    );
    let d = parse_chaos("7:kill=1").unwrap();
    assert_eq!(
        (d.stop_for, d.exit_sends, d.last),
        (STOP_FOR_DEFAULT, 200, false)
    );
    assert!(!parse_chaos("7:kill=1,last=no").unwrap().last);
    // The printed form parses back to the same spec.
    assert_eq!(parse_chaos(&s.to_string()).unwrap(), s);
    assert_eq!(parse_chaos(&d.to_string()).unwrap(), d);
}

#[test]
fn bad_specs_name_their_problem() {
    let range = |key| ChaosProblem::OutOfRange {
        key,
        lo: 0.0,
        hi: 0.0,
    };
    let cases: [(&str, ChaosProblem); 18] = [
        ("kill=1", ChaosProblem::MissingColon),
        ("x:kill=1", ChaosProblem::BadSeed),
        ("-1:kill=1", ChaosProblem::BadSeed),
        ("1:kill=-1", range("kill")),
        ("1:kill=nan", range("kill")),
        ("1:kill=inf", range("kill")),
        ("1:kill=1e300", range("kill")),
        ("1:stop=x", range("stop")),
        ("1:kill=1,stop-for=0", range("stop-for")),
        ("1:kill=1,stop-for=1e300", range("stop-for")),
        ("1:exit=1.5", range("exit")),
        ("1:exit=0.5,exit-sends=0", range("exit-sends")),
        ("1:kill=1,from=-1", range("from")),
        ("1:kill=1,max=-1", range("max")),
        ("1:kill=1,last=maybe", ChaosProblem::BadLast),
        (
            "1:kill=1,boom=2",
            ChaosProblem::UnknownKey { key: "boom".into() },
        ),
        ("1:kill=1,from=5,until=2", ChaosProblem::EmptyWindow),
        ("1:stop-for=1", ChaosProblem::Nothing),
    ];
    for (spec, want) in cases {
        match parse_chaos(spec) {
            Err(CliError::Chaos { spec: s, problem }) => {
                assert_eq!(s, spec);
                match (&problem, &want) {
                    (
                        ChaosProblem::OutOfRange { key: a, .. },
                        ChaosProblem::OutOfRange { key: b, .. },
                    ) => assert_eq!(a, b, "{spec}"),
                    _ => assert_eq!(problem, want, "{spec}"),
                }
                let text = CliError::Chaos {
                    spec: spec.into(),
                    problem,
                }
                .to_string();
                assert!(text.contains(spec), "{text}");
            }
            other => panic!("{spec}: {other:?}"),
        }
    }
}

/// Runs a generator for `secs` seconds in 10 ms ticks, with every replica running unless
/// a fault took it: a kill makes it gone for good, a stop keeps it running (stopped
/// replicas are the generator's own business).
fn drive(spec: &str, ranks: u32, replicas: u32, secs: u64) -> (Chaos, Vec<Vec<Live>>) {
    let mut c = Chaos::new(parse_chaos(spec).unwrap(), ranks, replicas);
    let mut live = vec![Live::Running; (ranks * replicas) as usize];
    let mut seen = Vec::new();
    for t in (0..secs * 1000).step_by(10) {
        for f in c.decide(ms(t), &live) {
            if let FaultAction::Kill(_) = f.action {
                live[(f.rank * replicas + f.replica) as usize] = Live::Gone;
            }
        }
        seen.push(live.clone());
    }
    (c, seen)
}

#[test]
fn one_seed_one_schedule() {
    let spec = "9:kill=2,stop=2,exit=0.3";
    let (a, _) = drive(spec, 8, 3, 5);
    let (b, _) = drive(spec, 8, 3, 5);
    assert_eq!(a.schedule(), b.schedule());
    assert!(a.timed_count() > 0);
    let (c, _) = drive("10:kill=2,stop=2,exit=0.3", 8, 3, 5);
    assert_ne!(a.schedule(), c.schedule());
}

#[test]
fn never_the_last_replica_unless_asked() {
    for seed in 0..50 {
        for r in [1, 2, 3] {
            let spec = format!("{seed}:kill=20,stop=5,stop-for=0.05,exit=0.5");
            let (c, seen) = drive(&spec, 4, r, 3);
            for live in &seen {
                for rank in 0..4usize {
                    let rank_live = &live[rank * r as usize..(rank + 1) * r as usize];
                    assert!(rank_live.iter().any(|l| *l != Live::Gone), "{spec} r={r}");
                }
            }
            // At most r - 1 replicas of a rank armed to exit.
            for rank in 0..4 {
                let armed = c.start_faults().iter().filter(|f| f.rank == rank).count();
                assert!(armed < r as usize, "{spec} r={r}");
            }
            if r == 1 {
                assert!(c.schedule().is_empty(), "{spec}: {:?}", c.schedule());
            }
        }
    }
    // With last=yes, a high kill rate takes whole ranks.
    let (_, seen) = drive("1:kill=50,last=yes", 4, 2, 3);
    let last = seen.last().unwrap();
    assert!(last.iter().all(|l| *l == Live::Gone), "{last:?}");
}

#[test]
fn a_stopped_replica_is_neither_taken_nor_counted_until_continued() {
    // Two replicas, stops only, for a long time each: while one is stopped the other is
    // the last one running, so at most one of a rank is stopped at any moment.
    let mut c = Chaos::new(parse_chaos("3:stop=50,stop-for=1").unwrap(), 1, 2);
    let live = [Live::Running; 2];
    let mut stopped: Vec<(u32, Duration, Duration)> = Vec::new();
    for t in (0..5000).step_by(10) {
        let fs = c.decide(ms(t), &live);
        for pair in fs.chunks(2) {
            match (pair[0].action, pair[1].action) {
                (FaultAction::Stop(a), FaultAction::Cont(b)) => {
                    assert_eq!(b - a, ms(1000));
                    stopped.push((pair[0].replica, a, b));
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert!(stopped.len() >= 3, "{stopped:?}");
    for w in stopped.windows(2) {
        assert!(w[1].1 >= w[0].2, "overlapping stops: {stopped:?}");
    }
}

#[test]
fn window_and_cap() {
    let (c, _) = drive("5:kill=10,stop=10,stop-for=0.01,from=1,until=2", 16, 3, 4);
    for f in c.schedule() {
        match f.action {
            FaultAction::Kill(t) | FaultAction::Stop(t) => {
                assert!(t >= ms(1000) && t <= ms(2010), "{f}")
            }
            FaultAction::Cont(_) | FaultAction::ExitAfterSends(_) => {}
            FaultAction::ExitAfterChoices(_) | FaultAction::Term(_) => panic!("{f}"),
        }
    }
    assert!(c.timed_count() > 0);
    let (c, _) = drive("5:kill=10,stop=10,stop-for=0.01,max=3", 16, 3, 4);
    assert_eq!(c.timed_count(), 3);
    assert_eq!(c.next_at(), None);
}

#[test]
fn the_schedule_replays_as_fault_specs() {
    let (c, _) = drive("11:kill=3,stop=3,exit=0.2,exit-sends=40", 4, 3, 4);
    assert!(!c.schedule().is_empty());
    for f in c.schedule() {
        let back = parse_fault(&f.to_string()).unwrap();
        assert_eq!(&back, f);
        if let FaultAction::ExitAfterSends(n) = f.action {
            assert!((1..=40).contains(&n), "{f}");
        }
    }
}
