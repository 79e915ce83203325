//! Fortran programs over the MPI Fortran interface (`volpex-mpi`: `mpif.h`, the `mpi`
//! module, the `mpi_*_` entry points of `libvolpexmpi`), built with `volpexf90` /
//! `volpexf77` (gfortran) and run as a user would: alone (singleton init), under
//! `volpexrun -n 4 -r 1`, at `-n 3 -r 2`, and at `-r 2` with a replica killed or
//! stopped mid-run, each program checking its own results (it stops with code 1 on a
//! wrong value). The programs are in `tests/fortran/`: point-to-point (MPI-3.1 chapter
//! 3, wildcards included), collectives (chapter 5), communicators, groups and Cartesian
//! topologies (chapters 6 and 7), derived datatypes (chapter 4, fixed form with
//! `mpif.h`), error handling (section 8.3). Then the unmodified official NPB 3.4 MPI
//! codes, all eight, built by their own Makefile with our wrappers, verify at `-n 4
//! -r 2` with replicas lost mid-run. Reference: MPI-3.1 chapter 17 (language bindings).

use std::path::{Path, PathBuf};
use std::process::Command;

use volpex_tests::abi::{compile_fortran, first_line, job, singleton, TempDir, DEADLINE};
use volpex_tests::{bin, run};

fn include() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../volpex-mpi/include")
}

/// The test programs: (source, wrapper).
const PROGRAMS: &[(&str, &str)] = &[
    ("p2p.f90", "volpexf90"),
    ("collectives.f90", "volpexf90"),
    ("comms.f90", "volpexf90"),
    ("datatypes.f", "volpexf77"),
    ("errors.f90", "volpexf90"),
    ("cancel.f90", "volpexf90"),
    ("rma.f90", "volpexf90"),
];

/// `volpexf90 -show` prints the compiler command like `mpif90 -show`: gfortran, the
/// include directory (mpif.h), the mpi module's directory, the flag that lets one MPI
/// routine take buffers of different types, the link flags; `volpexf77` answers too,
/// and without a Fortran compiler the wrapper says what to install.
#[test]
fn volpexf90_show_and_a_missing_compiler() {
    let show = |wrapper: &str, args: &[&str]| {
        let out = Command::new(bin(wrapper))
            .args(args)
            .output()
            .expect("volpexf90 -show");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let line = show("volpexf90", &["-show", "-O2", "x.f90"]);
    assert!(line.starts_with("gfortran -I"), "{line}");
    assert!(line.contains("volpex-mpi/include"), "{line}");
    assert!(line.contains("/fortran/"), "{line}");
    assert!(line.contains("-fallow-argument-mismatch"), "{line}");
    assert!(line.contains(" -O2 x.f90 "), "{line}");
    assert!(line.ends_with("-lvolpexmpi"), "{line}");
    let compile_only = show("volpexf77", &["-show", "-c", "x.f"]);
    assert!(compile_only.starts_with("gfortran -I"), "{compile_only}");
    assert!(!compile_only.contains("-lvolpexmpi"), "{compile_only}");

    let missing = Command::new(bin("volpexf90"))
        .env("VOLPEX_FC", "/nonexistent/gfortran")
        .args(["-c", "x.f90"])
        .output()
        .expect("volpexf90 without a compiler");
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(1), "{err}");
    assert!(
        err.contains("/nonexistent/gfortran") && err.contains("install gfortran"),
        "{err}"
    );
}

/// `mpif.h` has the values of `mpi.h` (handles are the same integers in C and Fortran)
/// and is valid in both source forms: `!` comments in column 1, statements in columns
/// 7 to 72, no continuation lines, no tabs.
#[test]
fn mpif_h_matches_mpi_h() {
    let c = std::fs::read_to_string(include().join("mpi.h")).expect("read mpi.h");
    let f = std::fs::read_to_string(include().join("mpif.h")).expect("read mpif.h");
    let mut values = std::collections::HashMap::new();
    for l in c.lines() {
        let Some(rest) = l.strip_prefix("#define ") else {
            continue;
        };
        let Some((name, v)) = rest.split_once(' ') else {
            continue;
        };
        let v = v.trim().trim_start_matches("((MPI_");
        let v = v
            .split_once(')')
            .map_or(v, |(_, v)| v)
            .trim_end_matches(')');
        let v = v.trim_start_matches('(');
        let n = if let Some(h) = v.strip_prefix("0x") {
            i64::from_str_radix(h, 16).ok()
        } else {
            v.parse::<i64>().ok()
        };
        if let Some(n) = n {
            values.insert(name.to_string(), n);
        }
    }
    let mut checked = 0;
    for (i, l) in f.lines().enumerate() {
        assert!(!l.contains('\t'), "mpif.h line {}: a tab", i + 1);
        assert!(
            l.len() <= 72,
            "mpif.h line {}: longer than 72 columns",
            i + 1
        );
        if l.starts_with('!') || l.trim().is_empty() {
            continue;
        }
        assert!(
            l.starts_with("      ") && !l[6..].starts_with(' '),
            "mpif.h line {}: a statement must start in column 7: {l}",
            i + 1
        );
        assert!(
            !l.trim_end().ends_with('&'),
            "mpif.h line {}: continued",
            i + 1
        );
        if let Some(p) = l.trim().strip_prefix("parameter (") {
            let (name, v) = p.trim_end_matches(')').split_once('=').expect("NAME=VALUE");
            if let Some(c) = values.get(name) {
                assert_eq!(v.parse::<i64>().ok(), Some(*c), "{name} differs from mpi.h");
                checked += 1;
            }
        }
    }
    assert!(checked > 150, "only {checked} constants compared");
    for name in [
        "MPI_COMM_WORLD",
        "MPI_DOUBLE_PRECISION",
        "MPI_2INTEGER",
        "MPI_SUM",
    ] {
        assert!(f.contains(&format!("parameter ({name}=")), "{name}");
    }
}

/// Every C function of `mpi.h` has its gfortran twin in the library (`MPI_Send` ->
/// `mpi_send_`), except those that have no Fortran binding (the handle conversions,
/// the attribute copy function, memory allocation).
#[test]
fn every_c_function_has_a_fortran_twin() {
    let header = std::fs::read_to_string(include().join("mpi.h")).expect("read mpi.h");
    let lib = volpex_tests::profile_dir().join("libvolpexmpi.so");
    bin("volpexf90");
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .expect("run nm");
    assert!(nm.status.success(), "nm {}", lib.display());
    let symbols: std::collections::HashSet<String> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    let mut missing = Vec::new();
    let mut count = 0;
    for l in header.lines() {
        let Some(name) = l
            .split_once(' ')
            .and_then(|(_, r)| r.split_once('('))
            .map(|(n, _)| n.trim_start_matches('*'))
        else {
            continue;
        };
        if !(name.starts_with("MPI_") || name.starts_with("MPIX_"))
            || l.starts_with('#')
            || l.starts_with("typedef")
        {
            continue;
        }
        // The tool information interface has no Fortran binding (MPI-3.1 section 14.3);
        // the predefined copy functions are Fortran's own externals.
        let c_only = name.ends_with("_f2c")
            || name.ends_with("_c2f")
            || name.starts_with("MPI_T_")
            || name.ends_with("_DUP_FN")
            || matches!(name, "MPI_Alloc_mem" | "MPI_Free_mem");
        if c_only {
            continue;
        }
        count += 1;
        let fortran = format!("{}_", name.to_lowercase());
        if !symbols.contains(&fortran) {
            missing.push(fortran);
        }
    }
    assert!(count > 150, "found only {count} functions");
    assert!(missing.is_empty(), "no Fortran entry point: {missing:?}");
}

/// A program started without volpexrun runs as a single rank.
#[test]
fn fortran_singleton_runs_as_one_rank() {
    let dir = TempDir::new("fsingleton");
    for (file, wrapper) in PROGRAMS {
        let exe = compile_fortran(wrapper, &dir, file);
        let out = singleton(&exe, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let name = file.split('.').next().unwrap_or(file);
        assert!(
            out.status.success() && stdout.contains(&format!("{name}: ok size 1")),
            "{file} alone:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Every program at `-n 4 -r 1` and at `-n 3 -r 2`.
#[test]
fn fortran_programs_pass_with_and_without_replicas() {
    let dir = TempDir::new("fprograms");
    for (file, wrapper) in PROGRAMS {
        let exe = compile_fortran(wrapper, &dir, file);
        let name = file.split('.').next().unwrap_or(file);
        for args in [&["-n", "4", "-r", "1"][..], &["-n", "3", "-r", "2"][..]] {
            let out = job(args, &exe, &[]);
            first_line(&out, &format!("{name}: ok size {}", args[1]));
        }
    }
}

/// A replica killed (SIGKILL) or stopped (SIGSTOP, never continued) mid-run changes
/// nothing: the checksum is the failure-free run's. Reference: VolpexMPI section 3.
#[test]
fn fortran_a_lost_replica_changes_nothing() {
    let dir = TempDir::new("ffaults");
    for (file, args) in [
        ("p2p.f90", ["60", "10"]),
        ("collectives.f90", ["40", "10"]),
        ("cancel.f90", ["60", "10"]),
        ("rma.f90", ["60", "10"]),
    ] {
        let exe = compile_fortran("volpexf90", &dir, file);
        let name = file.split('.').next().unwrap_or(file);
        volpex_tests::abi::faults_change_nothing(&exe, name, &args);
    }
}

/// MPIX_OUTPUT_OPEN / MPIX_OUTPUT_COMMIT: one complete copy of each rank's file with
/// replicas killed mid-write, and no temporary left.
#[test]
fn fortran_mpix_output_leaves_one_complete_copy() {
    let dir = TempDir::new("foutput");
    let exe = compile_fortran("volpexf90", &dir, "output.f90");
    volpex_tests::abi::output_survives_lost_replicas(&exe);
}

/// Under the default MPI_ERRORS_ARE_FATAL a send to a rank that does not exist ends the
/// Fortran program with a message naming MPI_Send and the error class.
#[test]
fn fortran_errors_are_fatal_by_default() {
    let dir = TempDir::new("ffatal");
    let exe = compile_fortran("volpexf90", &dir, "errors.f90");
    let r = run(&["-n", "3", "-r", "2"], &exe, &["fatal"], DEADLINE);
    r.assert_no_leftovers();
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("MPI_Send: rank 8 out of range")
            && r.stderr.contains("MPI_ERR_RANK")
            && !r.stdout.contains("not reached"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}

/// The MPIX_ extensions from Fortran: `checkpoint.f90` checkpoints its state every
/// iteration (MPIX_CHECKPOINT) and loses replica 1.0, then replica 0.1, mid-run; each
/// new incarnation is restored from its sibling's latest checkpoint (MPIX_RESTORED,
/// the report's `from snapshot N`), each progress line appears once (the checkpoint
/// flushes gfortran's output first) and the result is the failure-free run's.
#[test]
fn fortran_mpix_checkpoint_restores_a_regenerated_replica() {
    let dir = TempDir::new("fmpix");
    let exe = compile_fortran("volpexf90", &dir, "checkpoint.f90");
    volpex_tests::abi::checkpoint_survives_two_losses(&exe);
}

/// The official NPB 3.4 MPI codes, all eight (BT SP LU MG CG FT EP in Fortran, IS in
/// C), unmodified, built by their own Makefile from a copy of `../shared/npb3.4-mpi`
/// with `MPIFC = volpexf90` and `MPICC = volpexcc` in `config/make.def` (and the
/// `-fallow-invalid-boz` the suite's randi8.f needs with gfortran 10 or later), class S,
/// each at `-n 4 -r 2` losing two replicas mid-run: replica 1.0 exits abruptly after a
/// number of its sends (a point inside the run whatever the machine's speed) and
/// replica 2.1 is killed with SIGKILL 0.5 s in. Each verifies. Needs the sources
/// (see `volpex_tests::prerequisite`).
#[test]
fn official_npb_fortran_codes_verify_with_lost_replicas() {
    let npb = volpex_tests::official_npb();
    let sources = format!("the official NPB sources ({})", npb.display());
    if !volpex_tests::prerequisite(npb.join("BT/bt.f").is_file(), &sources) {
        return;
    }
    let dir = TempDir::new("npbf");
    volpex_tests::abi::official_npb_copy(&npb, &dir);
    // (benchmark, sends after which replica 1.0 exits): early in each run, so that
    // replica is still running then, but after it took part.
    let benchmarks = [
        ("BT", 100),
        ("SP", 100),
        ("LU", 100),
        ("MG", 20),
        ("CG", 20),
        ("FT", 8),
        ("EP", 1),
        ("IS", 1),
    ];
    for (b, _) in benchmarks {
        let out = Command::new("make")
            .current_dir(&dir.0)
            .args([b, "CLASS=S"])
            .output()
            .expect("run make");
        assert!(
            out.status.success(),
            "make {b} CLASS=S:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (b, sends) in benchmarks {
        let exe = dir.0.join(format!("bin/{}.S.x", b.to_lowercase()));
        let exit = format!("1.0:exit@sends={sends}");
        // The exit cannot fire when team 1 finishes the whole job before replica 1.0
        // makes that many sends (volpexrun then ends it): on a loaded machine a team
        // may be starved. Every run must verify; a run where the fault did not land is
        // run again, at most three times.
        let mut fired = false;
        for _attempt in 0..3 {
            let r = run(
                &[
                    "-n",
                    "4",
                    "-r",
                    "2",
                    "--fault",
                    &exit,
                    "--fault",
                    "2.1:kill@0.5",
                ],
                &exe,
                &[],
                DEADLINE,
            );
            r.assert_no_leftovers();
            let out = r.ok();
            assert!(volpex_tests::npb_verified(out), "{b}:\n{out}\n{}", r.stderr);
            if r.state(1, 0) == "failed" {
                fired = true;
                break;
            }
            eprintln!(
                "{b}: {exit} did not land (replica 1.0: {}), again",
                r.state(1, 0)
            );
        }
        assert!(fired, "{b}: {exit} never landed in three runs");
    }
}
