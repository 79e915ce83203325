//! Communicators, inter-communicators, attributes, errors and info through the MPI C and
//! Fortran interfaces (MPI-3.1 chapters 6, 8 and 9, and section 5.2.2 for the
//! collectives on inter-communicators), what MPICH's test suite does not reach: the
//! programs `tests/c/comm_*.c` and `tests/fortran/comm_*.f90` check their own results
//! (they exit 1 on a wrong value) and print a checksum, which must be the same at `-r 1`,
//! at `-r 2`, and at `-r 2` with a replica killed or stopped mid-run (the replicas of a
//! rank derive every new communicator's context alike, also a replacement replaying the
//! program from its start).

use volpex_tests::abi::{
    checkpoint_survives_two_losses, compile_c, compile_fortran, faults_change_nothing, first_line,
    job, singleton, TempDir,
};

/// The C programs, and the arguments that make them run long enough for a fault to
/// land mid-run.
const C_PROGRAMS: &[(&str, &[&str])] = &[
    ("comm_inter", &["40", "10"]),
    ("comm_groups", &["40", "10"]),
    ("comm_attrs", &[]),
    ("comm_errors", &[]),
];

/// Every C program alone (a singleton init), at `-n 4 -r 1`, and at `-n 3` with one and
/// with two replicas per rank: the same checksum both ways.
#[test]
fn c_programs_pass_with_and_without_replicas() {
    let dir = TempDir::new("mpi-comm");
    for (name, _) in C_PROGRAMS {
        let exe = compile_c(&dir, name);
        let alone = singleton(&exe, &[]);
        let stdout = String::from_utf8_lossy(&alone.stdout);
        assert!(
            alone.status.success() && stdout.contains(&format!("{name}: ok size 1")),
            "{name} alone:\n{stdout}\n{}",
            String::from_utf8_lossy(&alone.stderr)
        );
        first_line(
            &job(&["-n", "4", "-r", "1"], &exe, &[]),
            &format!("{name}: ok size 4"),
        );
        let one = first_line(&job(&["-n", "3", "-r", "1"], &exe, &[]), name);
        let two = first_line(&job(&["-n", "3", "-r", "2"], &exe, &[]), name);
        assert!(one.starts_with(&format!("{name}: ok size 3")), "{one}");
        assert_eq!(one, two, "{name}: -r 1 and -r 2 differ");
    }
}

/// Inter-communicators and the new ways to make communicators with a replica killed
/// (SIGKILL) or stopped (SIGSTOP) mid-run: the failure-free checksum. A killed replica's
/// replacement replays the program, making every communicator again.
#[test]
fn a_lost_replica_changes_nothing() {
    let dir = TempDir::new("mpi-comm-faults");
    for (name, args) in C_PROGRAMS.iter().filter(|(_, a)| !a.is_empty()) {
        faults_change_nothing(&compile_c(&dir, name), name, args);
    }
}

/// An inter-communicator and a communicator of MPI_Comm_create_group made before the
/// checkpoints: each replacement replica restored from its sibling's snapshot makes them
/// again without a message (the leaders' exchange is answered from the snapshot, like a
/// split) and the result is the failure-free run's. Reference: DESIGN.md,
/// "Regeneration".
#[test]
fn communicators_survive_restoring_a_checkpoint() {
    let dir = TempDir::new("mpi-comm-checkpoint");
    checkpoint_survives_two_losses(&compile_c(&dir, "comm_checkpoint"));
}

/// MPI_COMM_SELF's attributes are deleted at MPI_Finalize, the one set last first
/// (MPI-3.1 section 8.7.1), each delete function once, also with two replicas per rank.
#[test]
fn self_attributes_go_at_finalize_in_reverse_order() {
    let dir = TempDir::new("mpi-comm-self");
    let exe = compile_c(&dir, "comm_attrs");
    for args in [&["-n", "2", "-r", "1"][..], &["-n", "2", "-r", "2"][..]] {
        let out = job(args, &exe, &[]);
        let deletes: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("self delete"))
            .collect();
        assert_eq!(
            deletes,
            ["self delete 3", "self delete 2", "self delete 1"],
            "{out}"
        );
    }
}

/// The Fortran bindings that take procedures and strings (keyval callbacks, error
/// handlers, names, info keys, error strings) and the new communicator routines, alone,
/// at `-n 4 -r 1`, and at `-n 3 -r 2` with a replica lost mid-run.
#[test]
fn fortran_program_passes_with_a_lost_replica() {
    let dir = TempDir::new("mpi-comm-fortran");
    let exe = compile_fortran("volpexf90", &dir, "comm_fortran.f90");
    let alone = singleton(&exe, &[]);
    assert!(
        String::from_utf8_lossy(&alone.stdout).contains("comm_fortran: ok size 1"),
        "{}\n{}",
        String::from_utf8_lossy(&alone.stdout),
        String::from_utf8_lossy(&alone.stderr)
    );
    first_line(
        &job(&["-n", "4", "-r", "1"], &exe, &[]),
        "comm_fortran: ok size 4",
    );
    faults_change_nothing(&exe, "comm_fortran", &["40", "10"]);
}
