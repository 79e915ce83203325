//! Point-to-point and requests over the C and Fortran interfaces (MPI-3.1 chapter 3,
//! sections 12.2 and 12.3), for what MPICH's suite does not reach: receives into derived
//! datatypes of every kind (immediate, persistent, matched), synchronous sends that wait
//! for their receive (also when pulled ahead), generalized requests with C and Fortran
//! callbacks, statuses set by the program, the buffered mode's buffer rules. The
//! programs are `tests/c/p2p_*.c` and `tests/fortran/p2p_*.f90`; each checks its own
//! results (it exits 1 on a wrong value) and rank 0 prints a checksum line, which every
//! run here compares with the failure-free one: alone, at `-r 1`, at `-r 2`, and at
//! `-r 2` with a replica killed or stopped mid-run (also while synchronous sends wait).

use std::path::PathBuf;

use volpex_tests::abi::{
    compile_c, compile_fortran, faults_change_nothing, first_line, job, singleton, TempDir,
    DEADLINE,
};
use volpex_tests::run;

/// The C programs, and their arguments in the fault runs (rounds, work per round in ms,
/// and, for the synchronous sends, 0: see `STRICT` in `p2p_ssend.c`).
const C_PROGRAMS: &[(&str, &[&str])] = &[
    ("p2p_dtypes", &["60", "10"]),
    ("p2p_ssend", &["40", "10", "0"]),
    ("p2p_grequest", &["60", "10"]),
    ("p2p_bsend", &["60", "10"]),
];

/// The Fortran program (`tests/fortran/p2p_requests.f90`) and its fault-run arguments.
const FORTRAN: (&str, &[&str]) = ("p2p_requests", &["60", "10", "0"]);

/// Every program compiled into `dir`: (name, executable, fault-run arguments).
fn programs(dir: &TempDir) -> Vec<(&'static str, PathBuf, &'static [&'static str])> {
    let mut all: Vec<_> = C_PROGRAMS
        .iter()
        .map(|&(name, args)| (name, compile_c(dir, name), args))
        .collect();
    let exe = compile_fortran("volpexf90", dir, &format!("{}.f90", FORTRAN.0));
    all.push((FORTRAN.0, exe, FORTRAN.1));
    all
}

/// Each program alone is MPI_COMM_WORLD of one rank: every message goes to itself
/// (a synchronous send to itself included).
#[test]
fn p2p_programs_run_alone() {
    let dir = TempDir::new("p2p-alone");
    for (name, exe, _) in programs(&dir) {
        let out = singleton(&exe, &["5"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("{name}: ok size 1")),
            "{name} alone:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// At `-n 3 -r 1` every check holds, the ones that a synchronous send is not complete
/// before its receive is posted included; at `-n 3 -r 2` the result is the same (without
/// those checks: a replica behind its sibling may see its send complete early, see
/// `p2p_ssend.c`).
#[test]
fn p2p_programs_pass_with_and_without_replicas() {
    let dir = TempDir::new("p2p-replicas");
    for (name, exe, _) in programs(&dir) {
        let reference = first_line(&job(&["-n", "3", "-r", "1"], &exe, &["10"]), name);
        assert!(reference.starts_with(&format!("{name}: ok size 3 ")));
        let replicated = first_line(&job(&["-n", "3", "-r", "2"], &exe, &["10", "0", "0"]), name);
        assert_eq!(replicated, reference, "{name} at -r 2");
    }
}

/// A replica killed (SIGKILL) or stopped (SIGSTOP) mid-run changes nothing. Reference:
/// VolpexMPI section 3.
#[test]
fn a_lost_replica_changes_nothing_in_p2p_programs() {
    let dir = TempDir::new("p2p-faults");
    for (name, exe, args) in programs(&dir) {
        faults_change_nothing(&exe, name, args);
    }
}

/// Replicas killed while synchronous sends wait for their receive (every rank's waits
/// for a receiver that computes 30 ms each round first, so a kill almost always lands in
/// such a wait): the receiver's replica whose team's sender waits, the sender's replica
/// itself (a regenerated one replays sends whose receives were posted before it
/// existed), with and without regeneration. Each run must give the failure-free result,
/// with the killed replica not finished. Reference: MPI-3.1 section 3.4.
#[test]
fn a_replica_killed_while_a_synchronous_send_waits() {
    let dir = TempDir::new("p2p-ssend-kill");
    let exe = compile_c(&dir, "p2p_ssend");
    let args = ["30", "30", "0"];
    let reference = first_line(&job(&["-n", "3", "-r", "1"], &exe, &args), "p2p_ssend");
    for (fault, regenerate) in [
        ("1.0:kill@0.5", "spare"),
        ("0.1:kill@0.5", "spare"),
        ("1.0:kill@0.5", "never"),
        ("2.1:kill@0.4", "never"),
    ] {
        let la = [
            "-n",
            "3",
            "-r",
            "2",
            "--regenerate",
            regenerate,
            "--fault",
            fault,
        ];
        let r = run(&la, &exe, &args, DEADLINE);
        r.assert_no_leftovers();
        assert_eq!(
            first_line(r.ok(), "p2p_ssend"),
            reference,
            "{fault} --regenerate {regenerate}\n{}",
            r.stderr
        );
        let (rank, replica) = (fault.as_bytes()[0] - b'0', fault.as_bytes()[2] - b'0');
        assert_ne!(
            r.state(rank.into(), replica.into()),
            "finished",
            "{fault}: landed after the replica finished\n{}",
            r.stderr
        );
    }
}
