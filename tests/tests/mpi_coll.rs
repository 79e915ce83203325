//! Collectives and process topologies through the C and Fortran interfaces (MPI-3.1
//! chapters 5 and 7), what MPICH's test suite does not reach: every nonblocking
//! collective against its blocking twin, many outstanding at once and completed with
//! point-to-point requests (`coll_nonblocking`, section 5.12); user operations on a
//! struct datatype in MPI_Allreduce and on other derived types, non-commutative ones in
//! rank order, MPI_Reduce_local, MPI_Reduce_scatter_block and MPI_Alltoallw with a
//! datatype per rank (`coll_ops`, sections 5.8 to 5.10); graph and distributed graph
//! topologies with their queries and the neighbourhood collectives on Cartesian, graph
//! and distributed graph topologies, blocking and immediate (`coll_topo`, sections 7.5
//! and 7.6); send and receive buffers that interleave without sharing a byte in every
//! collective form, blocking and immediate, and MPI_ERR_BUFFER when they share one
//! (`coll_overlap`, sections 2.3 and 3.10); the immediate collectives and MPI_Alltoallw on
//! an inter-communicator, and MPI_ERR_COMM from those it does not have (`coll_inter`,
//! section 5.2.2). Each program checks its own results (it exits 1 on a wrong value) and
//! prints a checksum of what it received: alone, at `-n 4 -r 1`, at `-n 3 -r 2`, and at
//! `-r 2` with a replica killed or stopped mid-run, where the checksum must be the
//! failure-free run's.

use volpex_tests::abi::{
    compile_c, compile_fortran, faults_change_nothing, first_line, job, singleton, TempDir,
};

/// The C programs, with the arguments (rounds, milliseconds of work per round) of the
/// runs with a lost replica: long enough that the fault lands mid-run.
const C_PROGRAMS: &[(&str, [&str; 2])] = &[
    ("coll_nonblocking", ["6", "60"]),
    ("coll_ops", ["12", "40"]),
    ("coll_topo", ["12", "40"]),
    ("coll_overlap", ["12", "40"]),
    ("coll_inter", ["12", "40"]),
];

/// The Fortran programs (free form, `use mpi`).
const FORTRAN_PROGRAMS: &[(&str, [&str; 2])] = &[
    ("coll_nonblocking", ["6", "60"]),
    ("coll_topo", ["12", "40"]),
];

/// Runs `exe` (which prints `NAME: ok size N ...`) alone, at `-n 4 -r 1` and at
/// `-n 3 -r 2`.
fn runs_everywhere(exe: &std::path::Path, name: &str) {
    let alone = singleton(exe, &[]);
    let stdout = String::from_utf8_lossy(&alone.stdout);
    assert!(
        alone.status.success() && stdout.contains(&format!("{name}: ok size 1")),
        "{name} alone:\n{stdout}\n{}",
        String::from_utf8_lossy(&alone.stderr)
    );
    for args in [&["-n", "4", "-r", "1"][..], &["-n", "3", "-r", "2"][..]] {
        let out = job(args, exe, &[]);
        first_line(&out, &format!("{name}: ok size {}", args[1]));
    }
}

/// The C programs alone, at `-r 1` and at `-r 2`. Reference: MPI-3.1 sections 5.12,
/// 5.9.5, 7.6.
#[test]
fn c_programs_pass_with_and_without_replicas() {
    let dir = TempDir::new("coll-c");
    for (name, _) in C_PROGRAMS {
        runs_everywhere(&compile_c(&dir, name), name);
    }
}

/// A replica killed or stopped mid-run changes none of the C programs' results.
/// Reference: VolpexMPI section 3.
#[test]
fn c_programs_survive_a_lost_replica() {
    let dir = TempDir::new("coll-c-faults");
    for (name, args) in C_PROGRAMS {
        faults_change_nothing(&compile_c(&dir, name), name, args);
    }
}

/// The Fortran programs alone, at `-r 1` and at `-r 2` (the same functions through
/// `use mpi`: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the C sentinels' objects).
#[test]
fn fortran_programs_pass_with_and_without_replicas() {
    let dir = TempDir::new("coll-f");
    for (name, _) in FORTRAN_PROGRAMS {
        let exe = compile_fortran("volpexf90", &dir, &format!("{name}.f90"));
        runs_everywhere(&exe, name);
    }
}

/// A replica killed or stopped mid-run changes none of the Fortran programs' results.
#[test]
fn fortran_programs_survive_a_lost_replica() {
    let dir = TempDir::new("coll-f-faults");
    for (name, args) in FORTRAN_PROGRAMS {
        let exe = compile_fortran("volpexf90", &dir, &format!("{name}.f90"));
        faults_change_nothing(&exe, name, args);
    }
}
