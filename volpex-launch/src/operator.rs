//! Running where an `mpirun` is expected: the hostfile and the remote shell's arguments that
//! a job manager hands the MPI launcher through its environment, read as they are.
//!
//! The Kubeflow MPI Operator (`MPIJob` v2beta1) mounts a hostfile at `/etc/mpi/hostfile`
//! (`name slots=N` lines for Open MPI, `name:N` for MPICH and Intel MPI, one per worker
//! pod) and names it, with the ssh options it wants, in the launcher pod's environment:
//! `OMPI_MCA_orte_default_hostfile` and `OMPI_MCA_plm_rsh_args` for Open MPI,
//! `HYDRA_HOST_FILE` and `HYDRA_LAUNCH_EXTRA_ARGS` for MPICH,
//! `I_MPI_HYDRA_HOST_FILE` and `I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS` for Intel MPI. Open
//! MPI's `mpirun` reads its two variables anywhere, not only under the operator, and so
//! does volpexrun: without `--hosts`, `--host` or a Slurm allocation, a hostfile named
//! there runs the job over ssh on its hosts, and the ssh options are added to the default
//! remote shell.
//!
//! Owns reading these variables; must never read the hostfile itself (`hostfile` does)
//! or start anything.

use std::path::PathBuf;

/// The variables that name a default hostfile, in the order they are read.
const HOSTFILE_VARS: [&str; 3] = [
    "OMPI_MCA_orte_default_hostfile",
    "HYDRA_HOST_FILE",
    "I_MPI_HYDRA_HOST_FILE",
];

/// The variables that carry extra arguments for the remote shell, in the order read.
const SSH_ARGS_VARS: [&str; 3] = [
    "OMPI_MCA_plm_rsh_args",
    "HYDRA_LAUNCH_EXTRA_ARGS",
    "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS",
];

/// A value read from the environment, with the variable it came from (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromEnv<T> {
    /// The variable.
    pub var: &'static str,
    /// Its value.
    pub value: T,
}

fn first_set(
    vars: &[&'static str],
    get: &impl Fn(&str) -> Option<String>,
) -> Option<FromEnv<String>> {
    vars.iter().find_map(|&var| {
        get(var)
            .filter(|v| !v.trim().is_empty())
            .map(|value| FromEnv { var, value })
    })
}

fn from_process(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// The default hostfile the environment names, if any.
pub fn hostfile() -> Option<FromEnv<PathBuf>> {
    hostfile_in(&from_process)
}

fn hostfile_in(get: &impl Fn(&str) -> Option<String>) -> Option<FromEnv<PathBuf>> {
    first_set(&HOSTFILE_VARS, get).map(|f| FromEnv {
        var: f.var,
        value: PathBuf::from(f.value.trim()),
    })
}

/// Extra arguments for the remote shell the environment gives, if any.
pub fn ssh_args() -> Option<FromEnv<String>> {
    first_set(&SSH_ARGS_VARS, &from_process)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_variable_set_wins_and_blank_ones_do_not_count() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |var: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == var)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(hostfile_in(&env(&[])), None);
        let hydra = env(&[
            ("I_MPI_HYDRA_HOST_FILE", "/etc/mpi/hostfile"),
            ("OMPI_MCA_orte_default_hostfile", "  "),
        ]);
        assert_eq!(
            hostfile_in(&hydra),
            Some(FromEnv {
                var: "I_MPI_HYDRA_HOST_FILE",
                value: PathBuf::from("/etc/mpi/hostfile")
            })
        );
        let both = env(&[
            ("I_MPI_HYDRA_HOST_FILE", "/etc/mpi/hostfile"),
            ("OMPI_MCA_orte_default_hostfile", "/a/hostfile "),
        ]);
        assert_eq!(
            hostfile_in(&both).map(|h| (h.var, h.value)),
            Some((
                "OMPI_MCA_orte_default_hostfile",
                PathBuf::from("/a/hostfile")
            ))
        );
        let args = env(&[("HYDRA_LAUNCH_EXTRA_ARGS", "-o ConnectionAttempts=10")]);
        assert_eq!(
            first_set(&SSH_ARGS_VARS, &args).map(|a| (a.var, a.value)),
            Some((
                "HYDRA_LAUNCH_EXTRA_ARGS",
                "-o ConnectionAttempts=10".to_string()
            ))
        );
    }
}
