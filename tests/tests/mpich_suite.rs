//! MPICH's own test suite (`../shared/mpich-tests`: its pt2pt, coll, comm, datatype, group,
//! init and topo directories), built with `volpexcc` and run under `volpexrun -r 2`: the
//! fixed half of it that `scripts/mpich-suite.sh --half` selects (every other program of
//! each directory), each of whose entries that pass under Open MPI 4.1.4 must pass here.
//! The whole suite, and the pass with a replica lost mid-run, are the script's other modes
//! (README, "MPI 3.1 conformance"). Then its `io` directory, whole (`tests/mpich-io`).
//! Reference: the MPI 3.1 standard, as MPICH's tests read it.

use std::path::Path;
use std::process::Command;

/// Runs `scripts/mpich-suite.sh ARGS` with this build's wrappers; panics with the entries
/// that pass under Open MPI and failed here, each with the end of its log.
fn suite(args: &[&str], suite: &Path, stem: &str) {
    let bin = volpex_tests::bin("volpexcc");
    let dir = bin.parent().expect("the build profile's directory");
    let out = volpex_tests::abi::TempDir::new(stem);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let run = Command::new(root.join("scripts/mpich-suite.sh"))
        .args(args)
        .arg("--bin")
        .arg(dir)
        .env("MPICHTESTS_OUT", &out.0)
        .env("MPICHTESTS_HOME_DIR", suite)
        .output()
        .expect("run scripts/mpich-suite.sh");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains(" entries that pass under Open MPI pass here"),
        "{args:?}: entries that pass under Open MPI failed here:\n{}\n{}",
        failures(&stdout, &out.0),
        String::from_utf8_lossy(&run.stderr)
    );
}

/// The fixed half at `-r 2`, then the whole `io` directory (vendored in
/// `tests/mpich-io`, the same harness; MPI-3.1 chapter 13), one after the other: two
/// suites at once on a 2-core machine time entries out.
#[test]
fn mpichs_suite_passes_at_r2() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/mpich-tests");
    let what = format!("MPICH's test suite ({})", dir.display());
    if !volpex_tests::prerequisite(dir.join("run").is_file(), &what) {
        return;
    }
    suite(&["--half", "-r", "2"], &dir, "mpich-suite");
    suite(&["--io", "-r", "2"], &dir, "mpich-io");
}

/// The suite's lines that are not passes, each failed entry with the end of its log
/// (the logs go with the temporary directory).
fn failures(stdout: &str, out: &Path) -> String {
    let mut text = String::new();
    for line in stdout.lines().filter(|l| !l.starts_with("PASS ")) {
        text.push_str(line);
        text.push('\n');
        let Some(id) = ["FAIL ", "TIMEOUT "]
            .iter()
            .find_map(|p| line.strip_prefix(p))
        else {
            continue;
        };
        // The run script names a log after its entry, with every other character `_`.
        let name: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_.=+-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let log = std::fs::read_to_string(out.join("volpexcc/out").join(format!("{name}.log")))
            .unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        for l in &lines[lines.len().saturating_sub(40)..] {
            text.push_str("    ");
            text.push_str(l);
            text.push('\n');
        }
    }
    text
}
