//! The benchmark harness runs and prints what it promises (no timing is asserted:
//! benchmarks are not tests).

use std::process::Command;
use std::time::Duration;
use volpex_tests::{bin, run};

/// Runs `cmd` (a `volpex-bench` command) and returns its standard output; fails the
/// test with both outputs if it did not succeed.
fn volpex_bench(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run volpex-bench");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn pingpong_prints_one_csv_row_per_size() {
    let r = run(
        &["-n", "2", "-r", "2"],
        &bin("volpex-bench"),
        &["pingpong", "--csv", "--max-bytes", "65536", "--iters", "30"],
        Duration::from_secs(120),
    );
    let out = r.ok();
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("size_bytes,lat_us,mbps"));
    let sizes: Vec<u64> = lines
        .map(|l| {
            l.split(',')
                .next()
                .and_then(|s| s.parse().ok())
                .expect("row")
        })
        .collect();
    assert_eq!(sizes, (0..=16).map(|i| 1u64 << i).collect::<Vec<_>>());
}

#[test]
fn compare_with_open_mpi_has_the_promised_csv() {
    if !volpex_tests::prerequisite(volpex_tests::has_command("mpicc"), "Open MPI (mpicc)") {
        return;
    }
    let svg = volpex_tests::TempPath::new("pingpong.svg");
    let stdout = volpex_bench(
        Command::new(bin("volpex-bench"))
            .args(["compare", "pingpong", "--rounds", "1", "--csv"])
            .args(["--max-bytes", "1024", "--iters", "30", "--svg"])
            .arg(&svg.0),
    );
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "size_bytes,volpex_lat_us,openmpi-sm_lat_us,openmpi-tcp_lat_us,\
             volpex_mbps,openmpi-sm_mbps,openmpi-tcp_mbps,openmpi-sm_lat_ratio,openmpi-tcp_lat_ratio"
        )
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|f| f.parse().expect("a number")).collect())
        .collect();
    assert_eq!(rows.len(), 11, "1 B to 1 KiB: {stdout}");
    for r in &rows {
        assert_eq!(r.len(), 9, "{stdout}");
        // Latencies and their ratios (the rates of 1 B round to 0.0 MB/s).
        let (lat, ratios) = (&r[1..4], &r[7..]);
        assert!(
            lat.iter().chain(ratios).all(|v| *v > 0.0),
            "every side measured: {stdout}"
        );
    }
    let figure = std::fs::read_to_string(&svg.0).expect("svg written");
    for side in [
        "Volpex",
        "Open MPI (shared memory)",
        "Open MPI (TCP)",
        "bandwidth",
    ] {
        assert!(figure.contains(side), "{side}: {figure}");
    }
}

#[test]
fn compare_pingpong_measures_from_the_smallest_size_asked() {
    if !volpex_tests::prerequisite(volpex_tests::has_command("mpicc"), "Open MPI (mpicc)") {
        return;
    }
    let stdout = volpex_bench(
        Command::new(bin("volpex-bench"))
            .args(["compare", "pingpong", "--rounds", "1", "--csv"])
            .args(["--sides", "volpex,openmpi-sm", "--min-bytes", "8"])
            .args(["--max-bytes", "64", "--iters", "30"]),
    );
    let sizes: Vec<&str> = stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next())
        .collect();
    assert_eq!(sizes, ["8", "16", "32", "64"], "{stdout}");

    let out = Command::new(bin("volpex-bench"))
        .args([
            "compare",
            "pingpong",
            "--min-bytes",
            "128",
            "--max-bytes",
            "64",
        ])
        .output()
        .expect("run volpex-bench");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--min-bytes 128 is larger than --max-bytes 64"),
        "{stderr}"
    );
}

#[test]
fn compare_collectives_with_open_mpi_has_the_promised_csv() {
    if !volpex_tests::prerequisite(volpex_tests::has_command("mpicc"), "Open MPI (mpicc)") {
        return;
    }
    let stdout = volpex_bench(
        Command::new(bin("volpex-bench"))
            .args([
                "compare",
                "collectives",
                "--rounds",
                "1",
                "--csv",
                "-r",
                "2",
            ])
            .args(["--max-bytes", "512", "--iters", "20"]),
    );
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some("op,size_bytes,volpex_us,openmpi_us,ratio,openmpi-sm_us,openmpi-sm_ratio"),
        "Open MPI over TCP and its shared memory, both by default"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(
        rows.len(),
        12,
        "3 operations x sizes 8, 32, 128, 512: {rows:?}"
    );
    for r in &rows {
        let fields: Vec<&str> = r.split(',').collect();
        assert_eq!(fields.len(), 7, "{r}");
        for f in &fields[2..] {
            let x: f64 = f.parse().unwrap_or(-1.0);
            assert!(x > 0.0, "{r}");
        }
    }
    for op in ["allreduce", "broadcast", "alltoall"] {
        assert_eq!(rows.iter().filter(|r| r.starts_with(op)).count(), 4);
    }
}

#[test]
fn npb_subcommand_writes_one_csv_row_per_job_and_a_ratio_for_each_kill() {
    let csv = volpex_tests::TempPath::new("npb.csv");
    let md = volpex_tests::TempPath::new("npb.md");
    let svg = volpex_tests::TempPath::new("npb.svg");
    volpex_bench(
        Command::new(bin("volpex-bench"))
            .args(["npb", "--bench", "ep", "--class", "S", "--np", "1,2"])
            .args(["--replicas", "1,2", "--kill", "--timeout", "120"])
            .arg("--csv")
            .arg(&csv.0)
            .arg("--markdown")
            .arg(&md.0)
            .arg("--svg")
            .arg(&svg.0),
    );
    let text = std::fs::read_to_string(&csv.0).expect("csv written");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("bench,class,np,replicas,fault,seconds,mops,verified,ratio")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // Per rank count: r = 1, r = 2, and r = 2 with replica 1 of the last rank killed.
    assert_eq!(rows.len(), 6, "{text}");
    for (i, row) in rows.iter().enumerate() {
        let (np, r) = (["1", "2"][i / 3], ["1", "2", "2"][i % 3]);
        assert_eq!(row.len(), 9, "{text}");
        assert_eq!(row[..4], ["ep", "S", np, r], "{text}");
        assert!(row[5].parse::<f64>().is_ok() && row[6].parse::<f64>().is_ok());
        assert_eq!(row[7], "yes", "{text}");
        if i % 3 == 2 {
            let last = np.parse::<u32>().expect("np") - 1;
            assert!(row[4].starts_with(&format!("{last}.1:kill@")), "{text}");
            // With-fault over failure-free: given whenever the failure-free run's time
            // (two decimals) is not 0.00.
            let free: f64 = rows[i - 1][5].parse().expect("seconds");
            let with: f64 = row[5].parse().expect("seconds");
            if free > 0.0 {
                let ratio: f64 = row[8].parse().expect("a ratio");
                assert!((ratio - with / free).abs() < 1e-3, "{text}");
            } else {
                assert_eq!(row[8], "", "{text}");
            }
        } else {
            assert_eq!(row[4], "none", "{text}");
            assert_eq!(row[8], "", "no ratio without a fault: {text}");
        }
    }
    let table = std::fs::read_to_string(&md.0).expect("markdown written");
    assert_eq!(table.lines().filter(|l| l.starts_with("| ep |")).count(), 6);
    assert!(table.contains("with fault / failure-free"), "{table}");
    let figure = std::fs::read_to_string(&svg.0).expect("svg written");
    assert!(
        figure.starts_with("<svg") && figure.contains("EP S 2x2"),
        "{figure}"
    );
}

#[test]
fn compare_overlap_with_open_mpi_has_a_row_per_case() {
    if !volpex_tests::prerequisite(volpex_tests::has_command("mpicc"), "Open MPI (mpicc)") {
        return;
    }
    let stdout = volpex_bench(
        Command::new(bin("volpex-bench"))
            .args(["compare", "overlap", "--rounds", "1", "--csv"])
            .args(["--sides", "openmpi,volpex,volpex-official"])
            .args([
                "--sizes",
                "8,4096",
                "--messages",
                "1,2",
                "--compute-us",
                "0,200",
            ])
            .args([
                "--iters",
                "3",
                "--np",
                "3",
                "--steps",
                "20",
                "--work-us",
                "50",
            ]),
    );
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "test,size_bytes,messages,compute_us,openmpi_us,volpex_us,volpex-official_us,\
             volpex_ratio,volpex-official_ratio"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let keys: Vec<String> = rows.iter().map(|r| r[..4].join(",")).collect();
    let mut expected = Vec::new();
    for size in [8, 4096] {
        for m in [1, 2] {
            for c in [0, 200] {
                expected.push(format!("arrival,{size},{m},{c}"));
            }
        }
    }
    expected.push("pipeline,1024,20,50".to_string());
    assert_eq!(keys, expected, "{stdout}");
    for r in &rows {
        assert_eq!(r.len(), 9, "{stdout}");
        assert!(
            r[4..].iter().all(|v| v.parse::<f64>().is_ok()),
            "every row has the three sides and two ratios: {stdout}"
        );
    }
}

/// The three sides of `compare npb`: the official code under Open MPI, our port, and the
/// official code built with our own wrappers (Fortran EP, C IS) under volpexrun.
#[test]
fn compare_npb_runs_the_official_code_over_open_mpi_and_over_volpex() {
    let npb = volpex_tests::official_npb();
    let sources = format!("the official NPB sources ({})", npb.display());
    if !volpex_tests::prerequisite(npb.join("Makefile").is_file(), &sources)
        || !volpex_tests::prerequisite(volpex_tests::has_command("mpif90"), "Open MPI (mpif90)")
    {
        return;
    }
    let build = volpex_tests::abi::TempDir::new("compare-npb");
    let stdout = volpex_bench(
        Command::new(bin("volpex-bench"))
            .args(["compare", "npb", "--class", "S", "--np", "1", "--runs", "1"])
            .args(["--benches", "ep,is", "--csv"])
            .args([
                "--sides",
                "openmpi,openmpi-sm,volpex,volpex-official",
                "--npb-src",
            ])
            .arg(&npb)
            .arg("--build-dir")
            .arg(&build.0),
    );
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "bench,class,np,openmpi_s,openmpi_verified,openmpi-sm_s,openmpi-sm_verified,\
             volpex_s,volpex_verified,volpex-official_s,volpex-official_verified,\
             openmpi-sm_ratio,openmpi-sm_paired,openmpi-sm_best,\
             volpex_ratio,volpex_paired,volpex_best,\
             volpex-official_ratio,volpex-official_paired,volpex-official_best"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{stdout}");
    for (row, bench) in rows.iter().zip(["ep", "is"]) {
        assert_eq!(&row[..3], [bench, "S", "1"], "{stdout}");
        // Each side ran and verified (Open MPI's two transports, ours, the official
        // code through our wrappers).
        assert_eq!([row[4], row[6], row[8], row[10]], ["yes"; 4], "{stdout}");
    }
    // EP runs long enough to print a time and a rate on every side (IS class S may print
    // 0.00 s and no rate, and then has no ratio): all nine ratios are there.
    assert!(
        rows[0][11..20]
            .iter()
            .all(|r| r.parse::<f64>().is_ok_and(|r| r > 0.0)),
        "{stdout}"
    );
    for toolchain in ["openmpi", "volpex"] {
        assert!(
            build.0.join(toolchain).join("S/bin/ep.S.x").is_file(),
            "built with {toolchain}"
        );
    }
}

/// Stand-ins of ours for two OSU one-sided benchmarks (OSU's code is never part of this
/// repository): each gets or puts through a window and prints OSU's output format, in
/// OSU 5.3's layout (`mpi/one-sided/osu_NAME.c` beside `osu_1sc.c` and `osu_1sc.h`).
const OSU_STAND_IN: &[(&str, &str)] = &[
    (
        "osu_1sc.h",
        "#include <mpi.h>\ndouble transfer(int put, int n);\n",
    ),
    (
        "osu_1sc.c",
        r##"#include <stdio.h>
#include <stdlib.h>
#include "osu_1sc.h"
/* One lock epoch on rank 1's window: a put or a get of n bytes, flushed; the time. */
double transfer(int put, int n) {
    int rank;
    char *base, *buf = calloc(n, 1);
    MPI_Win win;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    double t = MPI_Wtime();
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        if (put) MPI_Put(buf, n, MPI_CHAR, 1, 0, n, MPI_CHAR, win);
        else MPI_Get(buf, n, MPI_CHAR, 1, 0, n, MPI_CHAR, win);
        MPI_Win_flush(1, win);
        MPI_Win_unlock(1, win);
    }
    t = MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(buf);
    return t;
}
"##,
    ),
    (
        "osu_put_latency.c",
        r##"#include <stdio.h>
#include "osu_1sc.h"
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("# OSU MPI_Put Latency Test (stand-in)\n# Size          Latency (us)\n");
    for (int n = 1; n <= 4; n *= 2) {
        double t = transfer(1, n);
        if (rank == 0) printf("%-10d%18.2f\n", n, t * 1e6 + 1.0);
    }
    MPI_Finalize();
    return 0;
}
"##,
    ),
    (
        "osu_get_bw.c",
        r##"#include <stdio.h>
#include "osu_1sc.h"
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) printf("# OSU MPI_Get Bandwidth Test (stand-in)\n# Size      Bandwidth (MB/s)\n");
    for (int n = 1024; n <= 4096; n *= 2) {
        double t = transfer(0, n);
        if (rank == 0) printf("%-10d%18.2f\n", n, n / (t * 1e6 + 1.0));
    }
    MPI_Finalize();
    return 0;
}
"##,
    ),
];

/// `compare osu` builds both benchmarks with both compilers and prints, per benchmark and
/// size, Open MPI's median, Volpex's at -r 1 and -r 2, and the ratios.
#[test]
fn compare_osu_runs_one_sided_benchmarks_under_open_mpi_and_volpex() {
    if !volpex_tests::prerequisite(volpex_tests::has_command("mpicc"), "Open MPI (mpicc)") {
        return;
    }
    let osu = volpex_tests::abi::TempDir::new("compare-osu");
    let dir = osu.0.join("mpi/one-sided");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for (name, text) in OSU_STAND_IN {
        std::fs::write(dir.join(name), text).expect("write stand-in");
    }
    let stdout = volpex_bench(
        Command::new(bin("volpex-bench"))
            .args(["compare", "osu", "--rounds", "1", "--csv", "-r", "1,2"])
            .args(["--benches", "put_latency,get_bw", "--osu-dir"])
            .arg(&osu.0),
    );
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "bench,size_bytes,unit,openmpi,volpex-r1,volpex-r2,\
             volpex-r1_ratio,volpex-r2_ratio,volpex-r2_over_volpex-r1"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let keys: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[1], r[2])).collect();
    assert_eq!(
        keys,
        [
            ("put_latency", "1", "us"),
            ("put_latency", "2", "us"),
            ("put_latency", "4", "us"),
            ("get_bw", "1024", "MB/s"),
            ("get_bw", "2048", "MB/s"),
            ("get_bw", "4096", "MB/s"),
        ],
        "{stdout}"
    );
    for r in &rows {
        assert!(
            r.len() == 9
                && r[3..]
                    .iter()
                    .all(|v| v.parse::<f64>().is_ok_and(|v| v > 0.0)),
            "every side measured, three ratios: {stdout}"
        );
    }
}

/// A stand-in for HPCG (HPCG's code is never part of this repository), in HPCG's layout
/// (`src/*.cpp`, `main.cpp` among them): it takes HPCG's options, sums over the ranks and
/// writes HPCG's report, valid with a rating of 1.5 + nx / 1000, or invalid when told to.
const HPCG_STAND_IN: &[(&str, &str)] = &[
    (
        "src/rating.cpp",
        "double rating(int nx) { return 1.5 + nx / 1000.0; }\n",
    ),
    (
        "src/main.cpp",
        r##"#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
double rating(int nx);
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, nx = 0, rt = -1, one = 1, ranks = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--nx=", 5)) nx = atoi(argv[i] + 5);
        if (!strncmp(argv[i], "--rt=", 5)) rt = atoi(argv[i] + 5);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&one, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen("HPCG-Benchmark_3.1_2026-12-07_12-00-00.txt", "w");
        fprintf(f, "HPCG-Benchmark\nversion=3.1\nMachine Summary::Distributed Processes=%d\n", ranks);
        fprintf(f, "Final Summary=\n");
        if (getenv("HPCG_STAND_IN_INVALID") || rt < 0)
            fprintf(f, "Final Summary::HPCG result is=INVALID.\n");
        else
            fprintf(f, "Final Summary::HPCG result is VALID with a GFLOP/s rating of=%g\n", rating(nx));
        fclose(f);
    }
    MPI_Finalize();
    return 0;
}
"##,
    ),
];

/// `compare hpcg` builds HPCG with both compilers out of its source tree, runs it on every
/// side and reports each valid run's rating; a run HPCG calls invalid is an error, never
/// a figure.
#[test]
fn compare_hpcg_builds_both_sides_and_reports_only_valid_ratings() {
    if !volpex_tests::prerequisite(volpex_tests::has_command("mpicxx"), "Open MPI (mpicxx)") {
        return;
    }
    let hpcg = volpex_tests::abi::TempDir::new("compare-hpcg");
    let src = hpcg.0.join("hpcg");
    std::fs::create_dir_all(src.join("src")).expect("mkdir");
    for (name, text) in HPCG_STAND_IN {
        std::fs::write(src.join(name), text).expect("write stand-in");
    }
    let build = hpcg.0.join("build");
    let compare = || {
        let mut c = Command::new(bin("volpex-bench"));
        c.args(["compare", "hpcg", "--rounds", "2", "--csv", "-n", "2"])
            .args(["--local", "24", "--rt", "1"])
            .args(["--sides", "openmpi-sm,openmpi-tcp,volpex,volpex-tcp"])
            .arg("--hpcg-dir")
            .arg(&src)
            .arg("--build-dir")
            .arg(&build);
        c
    };
    let stdout = volpex_bench(&mut compare());
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..5],
        [
            "side,gflops,ratio",
            "openmpi-sm,1.5240,1.000",
            "openmpi-tcp,1.5240,1.000",
            "volpex,1.5240,1.000",
            "volpex-tcp,1.5240,1.000",
        ],
        "{stdout}"
    );
    assert_eq!(lines[5], "run,side,gflops", "{stdout}");
    assert_eq!(lines.len(), 6 + 2 * 4, "two rounds of four sides: {stdout}");
    for toolchain in ["openmpi", "volpex"] {
        assert!(build.join(toolchain).join("xhpcg").is_file(), "{toolchain}");
    }
    assert!(
        !src.join("xhpcg").exists() && !src.join("src/main.o").exists(),
        "nothing written into HPCG's source"
    );
    // An invalid run gives no figure: the comparison fails and says why.
    let out = compare()
        .env("HPCG_STAND_IN_INVALID", "1")
        .output()
        .expect("run volpex-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("INVALID"), "{stderr}");
}
