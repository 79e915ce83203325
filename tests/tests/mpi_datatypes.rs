//! Datatypes through the C and Fortran interfaces (MPI-3.1 chapter 4, and sections
//! 6.7.4, 6.8, 13.5.2 and 17.1.9), in programs built with `volpexcc` / `volpexf90`
//! that check their own results (exit 1 on a wrong value):
//!
//! - `tests/c/datatypes_envelope.c`: MPI_Type_get_envelope / get_contents for every
//!   combiner and types rebuilt from their contents (section 4.1.13), names (6.8),
//!   attributes with copy and delete callbacks (6.7.4), darray against a layout
//!   computed by hand (4.1.4), external32 bytes (13.5.2), match_size and the F90
//!   types (17.1.9), MPI_Get_elements on partial messages (4.1.11), the _x routines;
//! - `tests/c/datatypes_halo.c`: the overlap rule (sections 2.3 and 3.10): a halo
//!   exchange sending and receiving matrix columns within one array with MPI_Sendrecv,
//!   all-gather, all-to-all and all-reduce whose send and receive types interleave, and
//!   MPI_ERR_BUFFER where bytes are shared;
//! - `tests/fortran/datatypes_attrs.f90`: names with blank-padded strings, keyvals with
//!   Fortran callbacks (arguments by reference), external32, F90 types, and a halo
//!   exchange of strided rows.
//!
//! Each runs alone, at `-n 4 -r 1` and at `-n 3 -r 2`; the two that communicate also
//! with a replica killed or stopped mid-run, which must change nothing.

use volpex_tests::abi::{
    compile_c, compile_fortran, faults_change_nothing, first_line, job, singleton, TempDir,
};

/// The programs: (name, C or the Fortran wrapper and file).
const PROGRAMS: &[(&str, Option<&str>)] = &[
    ("datatypes_envelope", None),
    ("datatypes_halo", None),
    ("datatypes_attrs", Some("datatypes_attrs.f90")),
];

fn build(dir: &TempDir, name: &str, fortran: Option<&str>) -> std::path::PathBuf {
    match fortran {
        None => compile_c(dir, name),
        Some(file) => compile_fortran("volpexf90", dir, file),
    }
}

/// Every program alone (one rank), at `-n 4 -r 1` and at `-n 3 -r 2`.
#[test]
fn datatype_programs_pass_alone_and_replicated() {
    let dir = TempDir::new("datatypes");
    for &(name, fortran) in PROGRAMS {
        let exe = build(&dir, name, fortran);
        let out = singleton(&exe, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("{name}: ok size 1")),
            "{name} alone:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for args in [&["-n", "4", "-r", "1"][..], &["-n", "3", "-r", "2"][..]] {
            let out = job(args, &exe, &[]);
            first_line(&out, &format!("{name}: ok size {}", args[1]));
        }
    }
}

/// The halo exchanges (C and Fortran) with replica 1.0 killed, 0.1 killed or 2.0
/// stopped mid-run give the failure-free run's checksum. Reference: VolpexMPI
/// section 3.
#[test]
fn a_lost_replica_changes_no_halo_exchange() {
    let dir = TempDir::new("datatypes-faults");
    for &(name, fortran) in &PROGRAMS[1..] {
        faults_change_nothing(&build(&dir, name, fortran), name, &["60", "10"]);
    }
}
