//! C programs over the MPI C interface (`volpex-mpi`: `mpi.h`, `libvolpexmpi`), built
//! with `volpexcc` and run as they would be by a user: alone (singleton, MPI-3.1 section
//! 10.5.2's "singleton MPI_INIT"), under `volpexrun -n 4 -r 1`, and at `-r 2` with a
//! replica killed or stopped mid-run, each program checking its own results (it exits 1
//! on a wrong value). The programs are in `tests/c/`; they cover point-to-point
//! (chapter 3, wildcards included), collectives (chapter 5), communicators and groups
//! (chapter 6), Cartesian topologies (chapter 7), error handling (section 8.3) and
//! MPI_Cancel of receives (section 3.8.4, `cancel.c`: every replica of a rank must reach
//! the same outcome, so a killed or stopped replica changes nothing there either).

use std::path::Path;
use std::process::Command;

use volpex_tests::abi::{compile_c, first_line, job, singleton, TempDir, DEADLINE};
use volpex_tests::{bin, run};

/// Every function `mpi.h` declares links (stubs included): a program taking the address
/// of each one builds with volpexcc.
#[test]
fn every_declared_function_links() {
    let header = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../volpex-mpi/include/mpi.h"),
    )
    .expect("read mpi.h");
    let names: Vec<&str> = header
        .lines()
        .filter_map(|l| {
            let rest = l.split_once(' ')?.1;
            let name = rest.split_once('(')?.0;
            (name.starts_with("MPI_") && !l.starts_with('#') && !l.starts_with("typedef"))
                .then_some(name)
        })
        .collect();
    assert!(names.len() > 150, "found only {} functions", names.len());
    let mut c = String::from("#include <mpi.h>\n#include <stdio.h>\nint main(void) {\n");
    c.push_str("    void *fns[] = {\n");
    for n in &names {
        c.push_str(&format!("        (void *){n},\n"));
    }
    c.push_str(
        "    };\n    printf(\"%d\\n\", (int)(sizeof fns / sizeof fns[0]));\n    return 0;\n}\n",
    );
    let dir = TempDir::new("links");
    let src = dir.0.join("links.c");
    std::fs::write(&src, c).expect("write links.c");
    let exe = dir.0.join("links");
    let st = Command::new(bin("volpexcc"))
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("run volpexcc");
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let out = Command::new(&exe).output().expect("run links");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        names.len().to_string()
    );
}

/// The profiling interface (MPI-3.1 chapter 14): every `MPI_` function `mpi.h` declares
/// is also exported as `PMPI_` by the shared library (`tests/c/pmpi.c` uses them as a
/// tool would: its own `MPI_Send` calls `PMPI_Send`).
#[test]
fn every_function_has_a_pmpi_name() {
    let header = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../volpex-mpi/include/mpi.h"),
    )
    .expect("read mpi.h");
    bin("volpexcc");
    let lib = volpex_tests::profile_dir().join("libvolpexmpi.so");
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
    let names: Vec<&str> = header
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("typedef"))
        .filter_map(|l| l.split_once(' ')?.1.split_once('(').map(|(n, _)| n))
        .filter(|n| n.starts_with("MPI_"))
        .collect();
    assert!(names.len() > 150, "found only {} functions", names.len());
    let missing: Vec<String> = names
        .iter()
        .map(|n| format!("P{n}"))
        .filter(|p| !symbols.contains(p))
        .collect();
    assert!(missing.is_empty(), "no profiling name: {missing:?}");
}

/// `volpexcc -show` prints the compiler command like `mpicc -show`: include and library
/// directories next to the build, rpath, -lvolpexmpi; `-c` compiles without link flags.
#[test]
fn volpexcc_show() {
    let show = |args: &[&str]| {
        let out = Command::new(bin("volpexcc"))
            .args(args)
            .output()
            .expect("volpexcc -show");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let line = show(&["-show", "-O2", "x.c"]);
    let lib = volpex_tests::profile_dir();
    assert!(line.starts_with("cc -I"), "{line}");
    assert!(line.contains("volpex-mpi/include"), "{line}");
    assert!(line.contains(" -O2 x.c "), "{line}");
    assert!(line.ends_with("-lvolpexmpi"), "{line}");
    assert!(
        line.contains(&format!(
            "-Wl,-rpath,{}",
            lib.canonicalize().unwrap_or(lib).display()
        )),
        "{line}"
    );
    let compile_only = show(&["-show", "-c", "x.c"]);
    assert!(!compile_only.contains("-lvolpexmpi"), "{compile_only}");
    let cxx = Command::new(bin("volpexcxx"))
        .args(["-show", "x.cc"])
        .output()
        .expect("volpexcxx -show");
    assert!(String::from_utf8_lossy(&cxx.stdout).starts_with("c++ -I"));
}

/// The C layout of MPI_Status and the sizes of the predefined datatypes.
#[test]
fn datatype_sizes_match_c() {
    let dir = TempDir::new("abi");
    let abi = compile_c(&dir, "abi");
    let out = singleton(&abi, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A program started without volpexrun runs as a single rank (MPI_COMM_WORLD of size 1).
#[test]
fn singleton_runs_as_one_rank() {
    let dir = TempDir::new("singleton");
    for (name, expect) in [
        ("p2p", "p2p: ok size 1"),
        ("collectives", "collectives: ok size 1"),
        ("comms", "comms: ok size 1"),
        ("errors", "errors: ok size 1"),
        ("topo", "topo: ok size 1"),
        ("cancel", "cancel: ok size 1"),
        ("pmpi", "pmpi: ok size 1"),
    ] {
        let exe = compile_c(&dir, name);
        let out = singleton(&exe, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(expect),
            "{name} alone:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Every program at `-n 4 -r 1` and at `-n 3 -r 2`.
#[test]
fn programs_pass_with_and_without_replicas() {
    let dir = TempDir::new("programs");
    for name in [
        "p2p",
        "collectives",
        "comms",
        "errors",
        "topo",
        "cancel",
        "pmpi",
        "rma",
        "rma_passive",
        "rma_dynamic",
        "rma_shared",
        "rma_serving",
    ] {
        let exe = compile_c(&dir, name);
        for args in [&["-n", "4", "-r", "1"][..], &["-n", "3", "-r", "2"][..]] {
            let out = job(args, &exe, &[]);
            let n = args[1];
            first_line(&out, &format!("{name}: ok size {n}"));
        }
    }
}

/// Large `MPI_Isend` buffers are lent to the sender log, not copied (docs/TCP.md): the
/// program changes each buffer as soon as its request completes (by `MPI_Waitall`,
/// `MPI_Test`, or `MPI_Request_free`), and every message still arrives as sent, to
/// receives posted before the sends (confirmed at once: the counter `unlogged` counts
/// the sends never copied) and to receives posted after the requests completed (copied
/// then). Over TCP and shared memory, at `-r 1` and at `-r 2` without regeneration
/// (a replica killed, or stopped and never continued, mid-run changes nothing: frames
/// queued to it go with its connection); with regeneration from siblings (the
/// default at `-r 2`) every send is copied, as their logs must keep it.
#[test]
fn lent_isend_buffers_arrive_as_sent() {
    let dir = TempDir::new("lent");
    let exe = compile_c(&dir, "p2p_lent");
    let cases: [(&str, &str, &str, &str, bool); 6] = [
        ("0", "1", "spare", "", true),
        ("1", "1", "spare", "", true),
        ("0", "2", "never", "", true),
        ("0", "2", "never", "1.1:kill@0.1", true),
        ("0", "2", "never", "1.1:stop@0.1", true),
        ("0", "2", "spare", "", false),
    ];
    for (shm, r, regenerate, fault, lends) in cases {
        let shm = format!("VOLPEX_SHM={shm}");
        let mut args = vec!["-n", "4", "-r", r, "-x", &shm, "--regenerate", regenerate];
        if !fault.is_empty() {
            args.extend(["--fault", fault]);
        }
        let what = args.join(" ");
        let run = run(&args, &exe, &["10", "20"], DEADLINE);
        run.assert_no_leftovers();
        assert_eq!(
            first_line(run.ok(), "p2p_lent"),
            "p2p_lent: ok size 4",
            "{what}\n{}",
            run.stderr
        );
        let unlogged = run.counter("unlogged");
        assert_eq!(unlogged > 0, lends, "{what}: unlogged={unlogged}");
    }
}

/// A replica killed (SIGKILL) or stopped (SIGSTOP, never continued) mid-run changes
/// nothing: the checksum is the failure-free run's. Reference: VolpexMPI section 3.
#[test]
fn a_lost_replica_changes_nothing() {
    let dir = TempDir::new("faults");
    for (name, args) in [
        ("p2p", ["60", "10"]),
        ("collectives", ["40", "10"]),
        ("cancel", ["60", "10"]),
        ("rma", ["60", "10"]),
        ("rma_passive", ["60", "10"]),
        ("rma_dynamic", ["60", "10"]),
    ] {
        volpex_tests::abi::faults_change_nothing(&compile_c(&dir, name), name, &args);
    }
}

/// The same for passive-target serving inside collectives and MPI_Finalize, with the
/// leader replica of a target stopped mid-run (its sibling serves on from the slot the
/// stopped one last recorded). `rma_serving.c` checks what MPI guarantees and no more:
/// an origin that waits for nobody in a round's collective may lock the target for a
/// later round before the target's own lock (it did, 1 run in 4, while 2.1 waited for
/// the takeover of 2.0), so the target checks that this round's put applied and that
/// its window holds one round's put and count, never a mix.
#[test]
fn a_lost_replica_changes_nothing_for_serving_collectives() {
    let dir = TempDir::new("faults");
    let exe = compile_c(&dir, "rma_serving");
    volpex_tests::abi::faults_change_nothing(&exe, "rma_serving", &["60", "10"]);
}

/// A passive target's serving call and its origin's flush wait as a blocking receive
/// does, spinning before they sleep: with a spin longer than any wait of the run
/// (`VOLPEX_SPIN_US`), neither the origin nor the target (in `MPI_Barrier`) of 200
/// put-and-flush pairs sleeps in the kernel, over TCP or shared memory. Before, each
/// flush slept on both sides (the target until the request came, the origin until the
/// answer did), and every wake-up of an idle core cost tens of microseconds
/// (`tests/c/rma_sleeps.c` counts the voluntary context switches of each side's thread;
/// a count, not a time: a few are allowed for what else may take a thread off its core).
#[test]
fn a_passive_target_and_its_origin_wait_without_sleeping() {
    let dir = TempDir::new("sleeps");
    let exe = compile_c(&dir, "rma_sleeps");
    for shm in ["VOLPEX_SHM=0", "VOLPEX_SHM=1"] {
        let args = [
            "-n",
            "2",
            "-r",
            "1",
            "-x",
            "VOLPEX_SPIN_US=30000000",
            "-x",
            shm,
        ];
        let line = first_line(&job(&args, &exe, &["200"]), "rma_sleeps");
        let count = |what: &str| -> u64 {
            let at = line.split_whitespace().skip_while(|w| *w != what).nth(1);
            at.and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what} in {line}"))
        };
        assert_eq!(count("flushes"), 200, "{line}");
        assert!(count("origin") < 20, "{shm}: {line}");
        assert!(count("target") < 20, "{shm}: {line}");
    }
}

/// A shared-memory window's team (replica k of every rank, sharing one memory by load
/// and store) is one failure unit: a member killed, or stopped until volpexrun ends it,
/// mid-run ends every member of its team with a message naming the window, never a
/// wrong value, and the other team finishes with the failure-free checksum (the new
/// incarnation cannot rejoin the window its team made). At `-r 1` the job fails. (A
/// replica lost before a shared window exists changes nothing: `fortran_abi.rs`'s
/// lost-replica test, whose `rma.f90` makes its shared window last.) Reference:
/// MPI-3.1 section 11.2.3; docs/PROTOCOL.md, "Shared-memory windows".
#[test]
fn a_lost_member_of_a_shared_window_ends_its_team() {
    let dir = TempDir::new("shared");
    let exe = compile_c(&dir, "rma_shared");
    let args = ["100", "10"];
    let reference = first_line(&job(&["-n", "3", "-r", "1"], &exe, &args), "rma_shared");
    for fault in ["1.0:kill@0.4", "0.1:kill@0.4", "2.0:stop@0.4"] {
        let r = run(
            &["-n", "3", "-r", "2", "--fault", fault],
            &exe,
            &args,
            DEADLINE,
        );
        r.assert_no_leftovers();
        assert_eq!(
            first_line(r.ok(), "rma_shared"),
            reference,
            "{fault}\n{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("replica in this replica's team was lost")
                && r.stderr
                    .contains("so this replica ends and the other teams go on"),
            "{fault}\n{}",
            r.stderr
        );
        let team = u64::from(fault.as_bytes()[2] - b'0');
        for rank in 0..3 {
            assert_ne!(
                r.state(rank, team),
                "finished",
                "{fault}: {rank}.{team}\n{}",
                r.stderr
            );
            assert_eq!(
                r.state(rank, 1 - team),
                "finished",
                "{fault}: {rank}.{}",
                1 - team
            );
        }
    }
    let r = run(
        &["-n", "3", "-r", "1", "--fault", "1.0:kill@0.4"],
        &exe,
        &args,
        DEADLINE,
    );
    r.assert_no_leftovers();
    assert_ne!(r.code, Some(0), "{}", r.stderr);
    assert!(!r.stdout.contains("rma_shared: ok"), "{}", r.stdout);
}

/// MPIX_Output_open / MPIX_Output_commit: one complete copy of each rank's file, from a
/// replica that finished, with replicas killed mid-write, and no temporary left.
#[test]
fn mpix_output_leaves_one_complete_copy() {
    let dir = TempDir::new("coutput");
    volpex_tests::abi::output_survives_lost_replicas(&compile_c(&dir, "output"));
}

/// Under the default MPI_ERRORS_ARE_FATAL a send to a rank that does not exist ends the
/// program with a message naming MPI_Send and the error class, and the job fails.
#[test]
fn errors_are_fatal_by_default() {
    let dir = TempDir::new("fatal");
    let exe = compile_c(&dir, "errors");
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
    let alone = singleton(&exe, &["fatal"]);
    assert_eq!(alone.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&alone.stderr).contains("MPI_Send"));
}

/// The official NPB 3.4 IS (the suite's C benchmark), unmodified, built by its own
/// Makefile with `MPICC=volpexcc`, verifies at `-n 4 -r 1` (class S) and at `-n 4 -r 2`
/// with a replica killed mid-run (class A). Needs `../shared/npb3.4-mpi` (see
/// `volpex_tests::prerequisite`).
#[test]
fn official_npb_is_builds_and_verifies() {
    let npb = volpex_tests::official_npb();
    let sources = format!("the official NPB sources ({})", npb.display());
    if !volpex_tests::prerequisite(npb.join("IS/is.c").is_file(), &sources) {
        return;
    }
    let dir = TempDir::new("npb");
    let copy = Command::new("cp")
        .arg("-r")
        .arg(format!("{}/.", npb.display()))
        .arg(&dir.0)
        .status()
        .expect("cp");
    assert!(copy.success());
    let template = std::fs::read_to_string(dir.0.join("config/make.def.template"))
        .expect("read make.def.template");
    let def: String = template
        .lines()
        .map(|l| {
            if l.starts_with("MPICC") {
                format!("MPICC = {}", bin("volpexcc").display())
            } else if l.starts_with("CMPI_LIB") || l.starts_with("CMPI_INC") {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.0.join("config/make.def"), def).expect("write make.def");
    std::fs::create_dir_all(dir.0.join("bin")).expect("mkdir bin");
    for class in ["S", "A"] {
        let out = Command::new("make")
            .current_dir(&dir.0)
            .args(["IS", &format!("CLASS={class}")])
            .output()
            .expect("run make");
        assert!(
            out.status.success(),
            "make IS CLASS={class}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let verified = volpex_tests::npb_verified;
    let s = job(&["-n", "4"], &dir.0.join("bin/is.S.x"), &[]);
    assert!(verified(&s), "{s}");
    let r = run(
        &["-n", "4", "-r", "2", "--fault", "2.1:kill@0.1"],
        &dir.0.join("bin/is.A.x"),
        &[],
        DEADLINE,
    );
    r.assert_no_leftovers();
    assert!(verified(r.ok()), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.killed(2, 1),
        "the kill of 2.1 landed mid-run\n{}",
        r.stderr
    );
}

/// The MPIX_ fault-tolerance extensions (docs/C-FORTRAN.md): a C program
/// that checkpoints its state (a plain struct) with MPIX_Checkpoint every iteration
/// loses replica 1.0 and then replica 0.1 mid-run; each comes back as a new incarnation
/// restored from its sibling's latest checkpoint (MPIX_Restored; the report says
/// `from snapshot N`), each progress line appears once, and the result is the
/// failure-free run's, which rank 0 also checks against a serial recomputation from
/// every rank's MPIX_Seed. Reference: DESIGN.md, "Regeneration".
#[test]
fn mpix_checkpoint_restores_a_regenerated_c_replica() {
    let dir = TempDir::new("mpix");
    let exe = compile_c(&dir, "checkpoint");
    let r = volpex_tests::abi::checkpoint_survives_two_losses(&exe);
    assert!(r.stderr.contains("restored at iteration"), "{}", r.stderr);
}

/// A passive target at `-r 2` lends its gets' answers to its log straight from the
/// window (`rma::passive`'s `Loans`) and changes the window after each (`rma_lent.c`);
/// origin replica 0.1 is killed mid-run and regenerated, and its new incarnation replays
/// every get from the start, pulling the answers from the target's retained log entries
/// long after the window changed: each must hold the bytes of its round (the program
/// checks every byte, and exits 1 on a wrong one), so the target must have copied each
/// lent answer before changing the window. Failed without the copy (`Loans::take_back`
/// skipped): the new incarnation got a later round's bytes.
#[test]
fn a_replayed_origin_gets_what_the_window_held() {
    let dir = TempDir::new("rma_lent");
    let exe = compile_c(&dir, "rma_lent");
    let args = ["60", "10"];
    let reference = first_line(&job(&["-n", "2", "-r", "1"], &exe, &args), "rma_lent");
    let r = run(
        &["-n", "2", "-r", "2", "--fault", "0.1:kill@0.3"],
        &exe,
        &args,
        DEADLINE,
    );
    r.assert_no_leftovers();
    assert_eq!(first_line(r.ok(), "rma_lent"), reference, "{}", r.stderr);
    assert!(
        r.killed(0, 1),
        "the kill landed while the job ran\n{}",
        r.stderr
    );
    let replayed: Vec<&serde_json::Value> = r
        .processes()
        .into_iter()
        .filter(|p| p["rank"] == 0 && p["replica"] == 1 && p["incarnation"] != 0)
        .collect();
    // Caught up: it replayed (and checked) every get made before it started.
    assert!(
        !replayed.is_empty()
            && replayed
                .iter()
                .all(|p| p["caught_up_after_s"].is_number() && p["state"] != "failed"),
        "0.1's new incarnation caught up: {replayed:?}\n{}",
        r.stderr
    );
}
