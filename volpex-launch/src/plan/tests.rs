//! Tests of `volpexrun plan`: the classic P2P-MPI figures, and the regeneration model checked
//! against a seeded simulation of replica slots.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
}

#[test]
fn exponential_case_matches_the_closed_form() {
    // MTBF 10 h, 1 h run: f = 1 - e^-0.1.
    let m = Weibull {
        shape: 1.0,
        rate_per_s: 1.0 / 36_000.0,
    };
    let f = 1.0 - (-0.1f64).exp();
    assert!(close(m.fail_by(3600.0), f));
    for r in 1..=6 {
        let want = (1.0 - f.powi(r)).powi(16);
        assert!(close(survival(m, 16, r as u32, 3600.0), want), "r={r}");
    }
}

#[test]
fn weibull_formula_of_section_4_5() {
    // Pappr(p, r) = 1 - (1 - (1 - e^-(t lambda)^delta)^r)^p
    let (p, t, lambda, delta) = (10u32, 7200.0, 1e-4, 0.7);
    let m = Weibull {
        shape: delta,
        rate_per_s: lambda,
    };
    for r in 1..=6 {
        let f: f64 = 1.0 - (-(t * lambda).powf(delta)).exp();
        let fail = 1.0 - (1.0 - f.powi(r)).powi(p as i32);
        assert!(
            (1.0 - survival(m, p, r as u32, t) - fail).abs() < 1e-12,
            "r={r}"
        );
    }
}

#[test]
fn more_replicas_help_without_overhead() {
    let m = Weibull {
        shape: 0.5,
        rate_per_s: 1e-5,
    };
    let mut last = 0.0;
    for r in 1..=6 {
        let s = survival(m, 64, r, 86_400.0);
        assert!(s > last, "r={r}: {s} <= {last}");
        last = s;
    }
}

#[test]
fn printout_names_the_smallest_r() {
    let a = PlanArgs::try_parse_from([
        "plan",
        "-n",
        "16",
        "--time",
        "2h",
        "--mtbf",
        "1d",
        "--target",
        "0.99",
        "--no-regen",
    ])
    .unwrap();
    let s = report(&a).unwrap();
    // f = 1 - e^(-1/12) = 0.07996; r=2: (1-f^2)^16 = 0.9028; r=3: 0.99186.
    assert!(
        s.contains("smallest r reaching P(survive) >= 0.99: 3"),
        "{s}"
    );
    assert_eq!(
        s.lines()
            .filter(|l| l.trim_start().starts_with(char::is_numeric))
            .count(),
        6,
        "{s}"
    );
}

#[test]
fn every_numeric_flag_refuses_what_is_out_of_range() {
    let base = ["plan", "-n", "4", "--time", "1h", "--mtbf", "1d"];
    let bad: [(&str, &[&str]); 9] = [
        ("-n", &["0", "-1", "100001", "nan", "1e3"]),
        ("--time", &["0", "-1h", "nan", "1e300", "inf"]),
        ("--mtbf", &["0", "1e300d", "nan"]),
        ("--target", &["0", "1", "1.5", "nan", "-0.5"]),
        ("--overhead", &["-0.1", "nan", "inf", "1e300", "101"]),
        ("--max-r", &["0", "65", "-1", "2.5"]),
        ("--weibull-shape", &["0", "-1", "nan", "inf", "101"]),
        ("--weibull-rate", &["0", "-1/h", "nan", "1e300/s"]),
        (
            "--regen-time",
            &["-1", "-0.5s", "nan", "inf", "1e300", "2w", "", "5ms"],
        ),
    ];
    for (flag, values) in bad {
        for v in values {
            let mut argv: Vec<&str> = match flag {
                "--weibull-shape" => {
                    vec!["plan", "-n", "4", "--time", "1h", "--weibull-rate", "1/h"]
                }
                "--weibull-rate" => {
                    vec!["plan", "-n", "4", "--time", "1h", "--weibull-shape", "1"]
                }
                "--mtbf" => vec!["plan", "-n", "4", "--time", "1h"],
                _ => base.to_vec(),
            };
            if let Some(i) = argv.iter().position(|a| *a == flag) {
                argv.remove(i + 1);
                argv.remove(i);
            }
            argv.extend([flag, v]);
            let e = PlanArgs::try_parse_from(&argv).expect_err(&format!("{flag} {v}"));
            let text = e.to_string();
            assert!(text.contains(flag), "{flag} {v}: {text}");
        }
    }
}

#[test]
fn units_and_bad_values() {
    assert_eq!(parse_duration_s("90").unwrap(), 90.0);
    assert_eq!(parse_duration_s("30m").unwrap(), 1800.0);
    assert_eq!(parse_duration_s("2h").unwrap(), 7200.0);
    assert_eq!(parse_duration_s("1.5d").unwrap(), 129_600.0);
    assert!(close(parse_rate_per_s("0.36").unwrap(), 1e-4));
    assert!(close(parse_rate_per_s("2/d").unwrap(), 2.0 / 86_400.0));
    for bad in ["", "x", "-1h", "0", "2w", "nan"] {
        assert!(parse_duration_s(bad).is_err(), "{bad}");
    }
    for bad in ["1/w", "0/h", "abc", "1/", "nan/h", "1e300/s", "inf"] {
        assert!(parse_rate_per_s(bad).is_err(), "{bad}");
    }
    for bad in ["1e300", "101y", "36501d", "inf", "-0"] {
        assert!(parse_duration_s(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_duration_s("36500d").unwrap(), DURATION_MAX_S);
    assert!(
        PlanArgs::try_parse_from(["plan", "-n", "4", "--time", "1h"])
            .map(|a| report(&a).is_err())
            .unwrap()
    );
    assert!(PlanArgs::try_parse_from([
        "plan",
        "-n",
        "4",
        "--time",
        "1h",
        "--weibull-shape",
        "0.7"
    ])
    .is_err());
}

// ---- regeneration ----

fn exp_model(mtbf_s: f64) -> Weibull {
    Weibull {
        shape: 1.0,
        rate_per_s: 1.0 / mtbf_s,
    }
}

/// How long a simulated slot stays down.
#[derive(Debug, Clone, Copy)]
enum Repair {
    /// Exactly the regeneration time (the model's assumption).
    Fixed,
    /// Exponential with the regeneration time as its mean.
    Exponential,
}

/// An exponential draw of the given mean.
fn draw_exp(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    -mean * (1.0 - rng.random::<f64>()).ln()
}

/// One rank's `r` slots, all up at time 0: each is up for an exponential time of rate
/// `lambda`, then down for `regen` (fixed or exponential of that mean), and so on.
/// `on_loss(t)` is called at each failure that strikes while every other slot is down;
/// it returns whether to go on. Runs until `horizon` or until `on_loss` says stop.
fn simulate_slots(
    rng: &mut ChaCha8Rng,
    r: usize,
    lambda: f64,
    regen: f64,
    repair: Repair,
    horizon: f64,
    mut on_loss: impl FnMut(f64) -> bool,
) {
    let mut up = vec![true; r];
    let mut next: Vec<f64> = (0..r).map(|_| draw_exp(rng, 1.0 / lambda)).collect();
    loop {
        let (i, t) = next
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        if t > horizon {
            return;
        }
        if up[i] {
            up[i] = false;
            next[i] = t + match repair {
                Repair::Fixed => regen,
                Repair::Exponential => draw_exp(rng, regen),
            };
            if up.iter().all(|u| !u) && !on_loss(t) {
                return;
            }
        } else {
            up[i] = true;
            next[i] = t + draw_exp(rng, 1.0 / lambda);
        }
    }
}

#[test]
fn loss_rate_matches_a_simulation_of_slots() {
    // (r, lambda*R, repair law, seed); time in units of the MTBF (lambda = 1). Each row runs
    // long enough for about 4000 losses, so the simulated rate is within a few percent.
    let rows: [(u32, f64, Repair, u64); 7] = [
        (2, 0.001, Repair::Fixed, 1),
        (2, 0.02, Repair::Fixed, 2),
        (3, 0.05, Repair::Fixed, 3),
        (4, 0.1, Repair::Fixed, 4),
        (2, 0.02, Repair::Exponential, 5),
        (3, 0.05, Repair::Exponential, 6),
        (4, 0.1, Repair::Exponential, 7),
    ];
    for (r, load, repair, seed) in rows {
        let closed = rank_loss_rate(1.0, r, load);
        let horizon = 4000.0 / closed;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut losses = 0u64;
        simulate_slots(&mut rng, r as usize, 1.0, load, repair, horizon, |_| {
            losses += 1;
            true
        });
        let simulated = losses as f64 / horizon;
        // Relative standard error of a count of about `losses` events (losses cluster a
        // little, hence 5 of them).
        let tol = 5.0 / (losses as f64).sqrt();
        // Exact for independent slots in steady state, whatever the repair law's shape.
        let steady = closed / (1.0 + load).powi(r as i32);
        assert!(
            (simulated / steady - 1.0).abs() < tol,
            "r={r} load={load} {repair:?}: simulated {simulated:.4e}, steady state {steady:.4e}"
        );
        // The printed closed form errs on the pessimistic side by at most (1 + lambda*R)^r.
        assert!(
            closed >= simulated * (1.0 - tol)
                && closed <= simulated * (1.0 + load).powi(r as i32) * (1.0 + tol),
            "r={r} load={load} {repair:?}: closed {closed:.4e}, simulated {simulated:.4e}"
        );
    }
}

#[test]
fn job_survival_matches_a_simulation_of_jobs() {
    // (ranks, r, MTBF s, regen s, run s, seed)
    let rows: [(u32, u32, f64, f64, f64, u64); 3] = [
        (2, 2, 3600.0, 36.0, 36_000.0, 11),
        (4, 2, 86_400.0, 600.0, 20.0 * 86_400.0, 12),
        (2, 3, 3600.0, 108.0, 360_000.0, 13),
    ];
    let trials = 10_000;
    for (ranks, r, mtbf, regen, run, seed) in rows {
        let lambda = 1.0 / mtbf;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut survived = 0u32;
        for _ in 0..trials {
            let mut alive = true;
            for _ in 0..ranks {
                simulate_slots(
                    &mut rng,
                    r as usize,
                    lambda,
                    regen,
                    Repair::Fixed,
                    run,
                    |_| {
                        alive = false;
                        false
                    },
                );
                if !alive {
                    break;
                }
            }
            survived += u32::from(alive);
        }
        let simulated = f64::from(survived) / f64::from(trials);
        let model = survival_regen(exp_model(mtbf), ranks, r, run, regen);
        let load = lambda * regen;
        let steady = (-(f64::from(ranks) * run * rank_loss_rate(lambda, r, regen))
            / (1.0 + load).powi(r as i32))
        .exp();
        let sd = (simulated * (1.0 - simulated) / f64::from(trials)).sqrt();
        assert!(
            model <= simulated + 4.0 * sd && simulated <= steady + 4.0 * sd + 0.005,
            "ranks={ranks} r={r}: model {model:.4}, simulated {simulated:.4}, steady {steady:.4}"
        );
        assert!(
            model > 0.3 && model < 0.9,
            "a row that tests nothing: {model}"
        );
    }
}

/// Models, sizes and times the table-driven properties run over, extreme ones included.
fn cases() -> Vec<(Weibull, u32, f64)> {
    let mut v = Vec::new();
    for model in [
        exp_model(86_400.0),
        exp_model(600.0),
        Weibull {
            shape: 0.5,
            rate_per_s: 1e-5,
        },
        Weibull {
            shape: 2.0,
            rate_per_s: 1e-4,
        },
        Weibull {
            shape: 100.0,
            rate_per_s: 1000.0,
        },
    ] {
        for ranks in [1, 16, 100_000] {
            for t in [1.0, 3600.0, 30.0 * 86_400.0] {
                v.push((model, ranks, t));
            }
        }
    }
    v
}

const REGEN_TIMES: [f64; 7] = [0.0, 0.5, 5.0, 60.0, 3600.0, 86_400.0, DURATION_MAX_S];

#[test]
fn more_replicas_never_lower_survival_with_regeneration() {
    for (m, ranks, t) in cases() {
        for regen in REGEN_TIMES {
            let mut last = 0.0;
            for r in 1..=64 {
                let s = survival_regen(m, ranks, r, t, regen);
                assert!(
                    (0.0..=1.0).contains(&s) && s >= last,
                    "{m:?} p={ranks} t={t} R={regen} r={r}: {s} < {last}"
                );
                last = s;
            }
        }
    }
}

#[test]
fn longer_regeneration_never_raises_survival() {
    for (m, ranks, t) in cases() {
        for r in 1..=8 {
            let mut last = 1.0;
            for regen in REGEN_TIMES {
                let s = survival_regen(m, ranks, r, t, regen);
                assert!(
                    s <= last,
                    "{m:?} p={ranks} t={t} r={r} R={regen}: {s} > {last}"
                );
                last = s;
            }
        }
    }
}

#[test]
fn regeneration_never_loses_to_no_regeneration() {
    for (m, ranks, t) in cases() {
        for regen in REGEN_TIMES {
            for r in 1..=8 {
                assert!(
                    survival_regen(m, ranks, r, t, regen) >= survival(m, ranks, r, t),
                    "{m:?} p={ranks} t={t} r={r} R={regen}"
                );
            }
        }
    }
}

#[test]
fn instant_regeneration_never_loses_a_rank_of_two_or_more() {
    for (m, ranks, t) in cases() {
        for r in 2..=64 {
            assert_eq!(
                survival_regen(m, ranks, r, t, 0.0),
                1.0,
                "{m:?} p={ranks} t={t} r={r}"
            );
        }
    }
}

#[test]
fn one_replica_cannot_be_regenerated() {
    // No sibling to take a snapshot from: the figure is the one without regeneration.
    for (m, ranks, t) in cases() {
        for regen in REGEN_TIMES {
            assert_eq!(
                survival_regen(m, ranks, 1, t, regen),
                survival(m, ranks, 1, t),
                "{m:?} p={ranks} t={t} R={regen}"
            );
        }
    }
}

#[test]
fn closed_form_values() {
    // (lambda, r, R, L(r) = r lambda (lambda R)^(r-1))
    let rows: [(f64, u32, f64, f64); 5] = [
        (1e-3, 1, 5.0, 1e-3),
        (1e-3, 2, 5.0, 2.0 * 1e-3 * 5e-3),
        (1e-3, 3, 5.0, 3.0 * 1e-3 * 25e-6),
        (1.0 / 86_400.0, 2, 0.0, 0.0),
        (2.0, 4, 0.5, 4.0 * 2.0),
    ];
    for (lambda, r, regen, want) in rows {
        assert!(
            close(rank_loss_rate(lambda, r, regen), want),
            "{lambda} {r} {regen}"
        );
    }
    // MTBF 1 d, 2 h, 16 ranks, 5 s, r = 2: exp(-16 * 7200 * 2 lambda (lambda 5 s)).
    let lambda = 1.0 / 86_400.0;
    let want = (-16.0 * 7200.0 * 2.0 * lambda * lambda * 5.0f64).exp();
    assert!(close(
        survival_regen(exp_model(86_400.0), 16, 2, 7200.0, 5.0),
        want
    ));
}

#[test]
fn weibull_rate_for_regeneration() {
    // (shape, lambda, t, rate used): the mean over the run up to shape 1, the end-of-run
    // hazard above.
    let rows: [(f64, f64, f64, f64); 4] = [
        (1.0, 1e-4, 7200.0, 1e-4),
        (0.5, 1e-4, 10_000.0, 1.0 / 10_000.0),
        (0.7, 2e-5, 50_000.0, 1.0 / 50_000.0),
        (2.0, 1e-4, 10_000.0, 2.0 / 10_000.0),
    ];
    for (shape, rate_per_s, t, want) in rows {
        let m = Weibull { shape, rate_per_s };
        assert!(close(regen_host_rate_per_s(m, t), want), "shape {shape}");
        // The exponential case is exact, and no shape uses less than the mean rate.
        assert!(regen_host_rate_per_s(m, t) * t >= -(1.0 - m.fail_by(t)).ln() * (1.0 - 1e-12));
    }
}

#[test]
fn printout_shows_both_columns_and_both_answers() {
    let a = PlanArgs::try_parse_from(["plan", "-n", "16", "--time", "2h", "--mtbf", "1d"]).unwrap();
    assert_eq!(a.regen_time_s, 1.0);
    let s = report(&a).unwrap();
    // Without: r = 3 (see printout_names_the_smallest_r). With 1 s: r = 2 fails with
    // 16 * 7200 * 2 lambda^2 * 1 = 3.1e-5.
    assert!(
        s.contains(
            "smallest r reaching P(survive) >= 0.99: without regeneration: r = 3; \
             with regeneration (1 s to regenerate): r = 2"
        ),
        "{s}"
    );
    assert!(s.contains("without regeneration"), "{s}");
    let rows: Vec<Vec<&str>> = s
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 6, "{s}");
    // r = 1: both columns agree; r = 2: 3.086e-5.
    assert_eq!(rows[0][3..5], rows[0][5..7], "{s}");
    assert_eq!(rows[1][6], "3.086e-5", "{s}");
    assert!(!s.contains("note:"), "{s}");

    // A regeneration time that is not short against the MTBF is flagged, and no r found
    // reads plainly.
    let a = PlanArgs::try_parse_from([
        "plan",
        "-n",
        "1000",
        "--time",
        "30d",
        "--mtbf",
        "2h",
        "--regen-time",
        "1h",
        "--max-r",
        "2",
        "--target",
        "0.999",
    ])
    .unwrap();
    let s = report(&a).unwrap();
    assert!(s.contains("note: regeneration is not short"), "{s}");
    assert!(
        s.contains("without regeneration: no r in 1..=2; with regeneration (1.00 h to regenerate): no r in 1..=2"),
        "{s}"
    );
}

#[test]
fn no_regen_prints_the_classic_table_only() {
    let base = ["plan", "-n", "16", "--time", "2h", "--mtbf", "1d"];
    let a = PlanArgs::try_parse_from(base.iter().chain(&["--no-regen"])).unwrap();
    let s = report(&a).unwrap();
    assert!(!s.contains("regeneration"), "{s}");
    assert!(
        s.contains(" r    run time    P(survive)       P(fail)\n"),
        "{s}"
    );
    assert!(
        s.contains(" 2      2.00 h      0.902475      9.753e-2\n"),
        "{s}"
    );
    // --regen-time with --no-regen contradicts itself.
    let e = PlanArgs::try_parse_from(base.iter().chain(&["--no-regen", "--regen-time", "5"]))
        .unwrap_err();
    assert!(e.to_string().contains("--regen-time"), "{e}");
}

#[test]
fn regen_time_values() {
    let good: [(&str, f64); 6] = [
        ("5", 5.0),
        ("0", 0.0),
        ("0s", 0.0),
        ("0.25s", 0.25),
        ("2m", 120.0),
        ("36500d", DURATION_MAX_S),
    ];
    for (input, want) in good {
        assert_eq!(parse_regen_time_s(input), Ok(want), "{input}");
    }
    let bad: [(&str, PlanError); 6] = [
        ("-1", PlanError::MustNotBeNegative { input: "-1".into() }),
        (
            "-0.5m",
            PlanError::MustNotBeNegative {
                input: "-0.5m".into(),
            },
        ),
        (
            "nan",
            PlanError::NotDuration {
                input: "nan".into(),
            },
        ),
        ("", PlanError::NotDuration { input: "".into() }),
        (
            "5ms",
            PlanError::UnknownUnit {
                input: "5ms".into(),
                unit: "ms".into(),
            },
        ),
        (
            "36501d",
            PlanError::TooLarge {
                input: "36501d".into(),
                max: "100 years (36500d)",
            },
        ),
    ];
    for (input, want) in bad {
        assert_eq!(parse_regen_time_s(input), Err(want), "{input}");
    }
    assert_eq!(
        PlanError::MustNotBeNegative { input: "-1".into() }.to_string(),
        "\"-1\": must be zero or more"
    );
}
