//! What a test needs from outside the workspace (Open MPI, gfortran, the official NPB
//! sources in `../shared`, enough CPUs), and the checks of results that more than one
//! test makes.
//!
//! A missing prerequisite skips the test with a line saying so on a developer's machine,
//! and fails it where `VOLPEX_TEST_PREREQUISITES=required` (as `.ci/run` sets it): there
//! a test that cannot run must not pass.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable that makes a missing prerequisite a failure.
pub const REQUIRED_VAR: &str = "VOLPEX_TEST_PREREQUISITES";

/// Whether the test can go on: `present`, or (when it is not) a skip on a developer's
/// machine and a panic naming `what` under `VOLPEX_TEST_PREREQUISITES=required`.
pub fn prerequisite(present: bool, what: &str) -> bool {
    if present {
        return true;
    }
    if std::env::var(REQUIRED_VAR).is_ok_and(|v| v == "required") {
        panic!("{what} is missing, and {REQUIRED_VAR}=required (CI installs every prerequisite)");
    }
    eprintln!("skipped: {what} is missing");
    false
}

/// Whether `command --version` runs (Open MPI's `mpicc`, `mpirun`, `gfortran`...).
pub fn has_command(command: &str) -> bool {
    Command::new(command)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The official NPB 3.4 MPI sources (`../shared/npb3.4-mpi` beside the repository).
pub fn official_npb() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/npb3.4-mpi")
}

/// Whether an NAS benchmark's output says it verified: a line that reads, up to
/// spacing, `Verification = SUCCESSFUL` (`UNSUCCESSFUL` is the other answer, and the
/// official binaries exit 0 either way).
pub fn npb_verified(out: &str) -> bool {
    out.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        words == ["Verification", "=", "SUCCESSFUL"]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_successful_verification_counts() {
        assert!(npb_verified(
            " Verification    =               SUCCESSFUL\n"
        ));
        assert!(!npb_verified(
            " Verification    =             UNSUCCESSFUL\n"
        ));
        assert!(!npb_verified(
            " Verification being performed\n SUCCESSFUL\n"
        ));
        assert!(!npb_verified(""));
    }
}
