//! Figures: `volpexrun --report` records when every incarnation ended and what happened
//! during the run (a kill, the new incarnation), and `volpex-bench plot` turns a report
//! and the benchmark CSVs into SVG, saying clearly (exit 1, no panic) when a file does
//! not parse. No timing is asserted; every file made here is removed, also on failure.
//! Reference: issue 20 item 7 ("Pictures").

use std::process::{Command, Output};
use std::time::Duration;

use volpex_tests::{bin, run, TempPath};

/// The contents of the SVG's text elements, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let (_, rest) = t.split_once('>')?;
            Some(rest.split_once("</text>")?.0.trim().to_string())
        })
        .collect()
}

fn plot(kind: &str, input_flag: &str, input: &TempPath, svg: &TempPath) -> Output {
    Command::new(bin("volpex-bench"))
        .args(["plot", kind, input_flag])
        .arg(&input.0)
        .arg("--svg")
        .arg(&svg.0)
        .output()
        .expect("run volpex-bench plot")
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_report_with_a_killed_replica_has_its_times_and_draws_as_a_timeline() {
    // About 4 s of run at -n 3 -r 2; replica 1.0 is killed 1.5 s in and regenerated.
    let r = run(
        &["-n", "3", "-r", "2", "--fault", "1.0:kill@1.5"],
        &bin("regen"),
        &["200", "20"],
        Duration::from_secs(180),
    );
    r.ok();
    let report = r.report.clone().expect("a report");
    let procs = report["processes"].as_array().expect("processes");
    assert_eq!(
        procs.len(),
        7,
        "six replicas and one new incarnation: {report}"
    );
    for p in procs {
        let (start, end) = (p["started_s"].as_f64(), p["ended_s"].as_f64());
        assert!(
            start.zip(end).is_some_and(|(s, e)| e >= s),
            "every incarnation ended after it started: {p}"
        );
    }
    let events = report["events"].as_array().expect("events");
    let times: Vec<f64> = events.iter().filter_map(|e| e["t_s"].as_f64()).collect();
    assert_eq!(times.len(), events.len(), "{report}");
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "by time: {report}");
    let about = |kind: &str, inc: u64| {
        events.iter().find(|e| {
            e["kind"] == kind && e["rank"] == 1 && e["replica"] == 0 && e["incarnation"] == inc
        })
    };
    let killed = about("killed", 0).expect("a killed event");
    assert!(
        killed["t_s"].as_f64().is_some_and(|t| t >= 1.5),
        "not before its --fault: {killed}"
    );
    assert!(
        killed["detail"]
            .as_str()
            .is_some_and(|d| d.contains("SIGKILL")),
        "{killed}"
    );
    assert!(about("regenerated", 1).is_some(), "{report}");

    let json = TempPath::new("timeline.json");
    std::fs::write(&json.0, report.to_string()).expect("write the report");
    let svg = TempPath::new("timeline.svg");
    ok(&plot("timeline", "--report", &json, &svg));
    let figure = std::fs::read_to_string(&svg.0).expect("svg written");
    assert!(figure.starts_with("<svg"), "{figure}");
    let texts = texts(&figure);
    let bars = texts
        .iter()
        .filter(|t| {
            t.strip_prefix('#')
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .count();
    assert_eq!(
        bars,
        procs.len(),
        "one labelled bar per incarnation: {texts:?}"
    );
    assert_eq!(texts.iter().filter(|t| *t == "#1").count(), 1, "{texts:?}");
    for row in ["0.0", "0.1", "1.0", "1.1", "2.0", "2.1"] {
        assert!(texts.iter().any(|t| t == row), "row {row}: {texts:?}");
    }
    assert!(texts.iter().any(|t| t == "killed"), "{texts:?}");
    // The kill's cross (two strokes) besides the legend's.
    assert!(
        figure.matches(r##"stroke="#D62728""##).count() >= 4,
        "a death marker: {figure}"
    );
}

const PINGPONG: &str =
    "size_bytes,volpex_lat_us,openmpi_lat_us,lat_ratio,volpex_mbps,openmpi_mbps,bw_ratio\n\
     1,5.000,4.000,1.250,0.2,0.3,0.800\n\
     1024,6.000,5.000,1.200,170.7,204.8,0.833\n\
     1048576,200.000,300.000,0.667,5242.9,3495.3,1.500\n";

/// Three sides, as `compare npb --sides openmpi,volpex,volpex-official` writes them.
const NPB: &str = "bench,class,np,openmpi_s,openmpi_verified,volpex_s,volpex_verified,volpex-official_s,volpex-official_verified,volpex_ratio,volpex_paired,volpex-official_ratio,volpex-official_paired\n\
     cg,W,2,0.500,yes,0.600,yes,0.550,yes,1.200,1.200,1.100,1.100\n\
     mg,W,2,1.000,yes,0.900,yes,1.100,no,0.900,0.900,1.100,1.100\n\
     cg,W,4,0.400,yes,,failed,0.440,yes,,,1.100,1.100\n";

#[test]
fn saved_csvs_draw_and_malformed_ones_are_refused_clearly() {
    let csv = TempPath::new("pingpong.csv");
    let svg = TempPath::new("pingpong.svg");
    std::fs::write(&csv.0, PINGPONG).expect("write csv");
    ok(&plot("pingpong", "--csv", &csv, &svg));
    let t = texts(&std::fs::read_to_string(&svg.0).expect("svg written"));
    for s in [
        "one-way latency",
        "bandwidth",
        "Volpex",
        "Open MPI",
        "microseconds",
        "MB/s",
    ] {
        assert!(t.iter().any(|x| x == s), "{s}: {t:?}");
    }

    let csv = TempPath::new("npb.csv");
    let svg = TempPath::new("npb.svg");
    std::fs::write(&csv.0, NPB).expect("write csv");
    ok(&plot("npb", "--csv", &csv, &svg));
    let t = texts(&std::fs::read_to_string(&svg.0).expect("svg written"));
    for s in [
        "2 ranks",
        "4 ranks",
        "CG",
        "MG",
        "Volpex",
        "volpex-official",
        "Open MPI = 1.0",
        "1.20",
        "0.90",
        "1.10*",
        "n/a",
    ] {
        assert!(t.iter().any(|x| x == s), "{s}: {t:?}");
    }

    // A field that is no number, a short row, a missing column, a CSV for a report.
    let bad = TempPath::new("bad.csv");
    let svg = TempPath::new("bad.svg");
    for (kind, flag, text, says) in [
        (
            "pingpong",
            "--csv",
            PINGPONG.replace("6.000", "fast"),
            "line 3, column volpex_lat_us: \"fast\" is not a number",
        ),
        (
            "npb",
            "--csv",
            NPB.replace(",0.440,yes", ",0.440"),
            "line 4: 12 fields where the header has 13",
        ),
        (
            "npb",
            "--csv",
            "bench,class,np\ncg,W,2\n".to_string(),
            "fewer than two sides",
        ),
        (
            "timeline",
            "--report",
            PINGPONG.to_string(),
            "not a volpexrun --report JSON",
        ),
        (
            "timeline",
            "--csv",
            PINGPONG.to_string(),
            "plot timeline needs --report",
        ),
    ] {
        std::fs::write(&bad.0, &text).expect("write input");
        let out = plot(kind, flag, &bad, &svg);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kind} {flag}: {err}");
        assert!(err.contains(says), "{kind}: {says}\n{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!svg.0.exists(), "no figure from a bad file");
    }
}
