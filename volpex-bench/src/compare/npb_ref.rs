//! Building the official NPB 3.4 MPI code (`../shared/npb3.4-mpi`, never copied into the
//! repository) with a toolchain of MPI compiler wrappers, outside the source tree.
//!
//! NPB 3.4 fixes the problem class at compile time and takes the number of processes at
//! run time, so there is one build per toolchain and class: the source tree is copied to
//! `<build root>/<toolchain>/<CLASS>/`, our own `config/make.def` is written there, and
//! `make <bench> CLASS=<CLASS>` leaves `bin/<bench>.<CLASS>.x`. A benchmark whose binary
//! exists is not built again (unless the generated `make.def` changed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The MPI compiler wrappers a reference build uses.
#[derive(Debug, Clone)]
pub(crate) struct Toolchain {
    /// Directory name of its builds (`openmpi`, `volpex`).
    pub name: &'static str,
    /// The Fortran wrapper (`mpif90`).
    pub fc: PathBuf,
    /// The C wrapper (`mpicc`).
    pub cc: PathBuf,
    /// Extra Fortran flags the compiler behind `fc` needs for NPB's code.
    pub fflags_extra: &'static str,
}

impl Toolchain {
    /// Open MPI's `mpif90` and `mpicc` from PATH; `Err` names what is missing.
    pub fn open_mpi() -> Result<Toolchain, String> {
        let missing = |what: &str, package: &str| {
            format!("{what} is not installed (apt-get install {package})")
        };
        let fc = crate::runs::on_path("mpif90")
            .ok_or_else(|| missing("Open MPI's mpif90", "openmpi-bin libopenmpi-dev"))?;
        let cc = crate::runs::on_path("mpicc")
            .ok_or_else(|| missing("Open MPI's mpicc", "openmpi-bin libopenmpi-dev"))?;
        crate::runs::on_path("gfortran").ok_or_else(|| missing("gfortran", "gfortran"))?;
        crate::runs::on_path("make").ok_or_else(|| missing("make", "make"))?;
        // mpif90 without a Fortran compiler behind it fails here.
        let version = dump_version(&fc)
            .ok_or_else(|| missing("a Fortran compiler behind mpif90", "gfortran"))?;
        Ok(Toolchain {
            name: "openmpi",
            fc,
            cc,
            fflags_extra: gfortran_extra_flags(&version),
        })
    }

    /// Our own wrappers `volpexf90` and `volpexcc`, next to this executable (where the
    /// README's build command leaves them); `Err` names what is missing.
    pub fn volpex() -> Result<Toolchain, String> {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let beside = |name: &str| {
            let p = exe.with_file_name(name);
            if p.is_file() {
                Ok(p)
            } else {
                Err(format!(
                    "{} is not built (cargo build --release -p volpex-mpi)",
                    p.display()
                ))
            }
        };
        let fc = beside("volpexf90")?;
        let cc = beside("volpexcc")?;
        crate::runs::on_path("make").ok_or("make is not installed (apt-get install make)")?;
        // volpexf90 runs gfortran (or $VOLPEX_FC); its version decides the flags.
        let gfortran = std::env::var_os("VOLPEX_FC")
            .map(PathBuf::from)
            .or_else(|| crate::runs::on_path("gfortran"))
            .ok_or("gfortran is not installed (apt-get install gfortran)")?;
        let version = dump_version(&gfortran)
            .ok_or_else(|| format!("{} -dumpversion failed", gfortran.display()))?;
        Ok(Toolchain {
            name: "volpex",
            fc,
            cc,
            fflags_extra: gfortran_extra_flags(&version),
        })
    }
}

/// What `compiler -dumpversion` prints, if it runs and succeeds.
fn dump_version(compiler: &Path) -> Option<String> {
    Command::new(compiler)
        .arg("-dumpversion")
        .stdin(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Flags gfortran `version` (as `-dumpversion` prints it) needs for NPB 3.4's MPI calls:
/// from gfortran 10 on, calls that pass different types to one MPI routine are errors
/// unless allowed.
pub(crate) fn gfortran_extra_flags(version: &str) -> &'static str {
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(0);
    if major >= 10 {
        "-fallow-argument-mismatch -fallow-invalid-boz"
    } else {
        ""
    }
}

/// The `config/make.def` of a build with `tc` (NPB's template, reduced to what it uses).
pub(crate) fn make_def(tc: &Toolchain) -> String {
    let fflags = format!("-O3 {}", tc.fflags_extra);
    format!(
        "# Written by volpex-bench compare npb; rewritten on every run.\n\
         MPIFC = {fc}\n\
         FLINK = $(MPIFC)\n\
         FMPI_LIB =\n\
         FMPI_INC =\n\
         FFLAGS = {fflags}\n\
         FLINKFLAGS = $(FFLAGS)\n\
         MPICC = {cc}\n\
         CLINK = $(MPICC)\n\
         CMPI_LIB =\n\
         CMPI_INC =\n\
         CFLAGS = -O3\n\
         CLINKFLAGS = $(CFLAGS)\n\
         CC = gcc -g\n\
         BINDIR = ../bin\n\
         CONVERTFLAG = -DFORTRAN_REC_SIZE=1\n\
         RAND = randi8\n",
        fc = tc.fc.display(),
        cc = tc.cc.display(),
        fflags = fflags.trim_end(),
    )
}

/// Copies the directory tree `from` to `to` (which must not exist).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst)?;
        }
        // Symbolic links and other kinds: NPB has none that the build needs.
    }
    Ok(())
}

/// One toolchain's build of one class.
pub(crate) struct RefBuild {
    /// `<build root>/<toolchain>/<CLASS>`: the copied tree.
    dir: PathBuf,
    class: String,
}

impl RefBuild {
    /// Copies `src` (once) and writes the make.def for `tc`.
    pub fn prepare(
        src: &Path,
        build_root: &Path,
        tc: &Toolchain,
        class: &str,
    ) -> Result<RefBuild, String> {
        if !src.join("Makefile").is_file() || !src.join("sys").is_dir() {
            return Err(format!(
                "{} is not the NPB 3.4 MPI source (no Makefile and sys/); pass --npb-src",
                src.display()
            ));
        }
        let dir = build_root.join(tc.name).join(class);
        let done = dir.join(".volpex-copied");
        if !done.is_file() {
            // Copy next to the final place, then rename: an interrupted copy never looks
            // complete, and what it left is removed here.
            let partial = build_root
                .join(tc.name)
                .join(format!(".{class}.partial-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&partial);
            let _ = std::fs::remove_dir_all(&dir);
            let copied = copy_tree(src, &partial)
                .and_then(|()| std::fs::create_dir_all(partial.join("bin")))
                .and_then(|()| std::fs::write(partial.join(".volpex-copied"), ""))
                .and_then(|()| std::fs::rename(&partial, &dir));
            if let Err(e) = copied {
                let _ = std::fs::remove_dir_all(&partial);
                return Err(format!(
                    "cannot copy {} to {}: {e}",
                    src.display(),
                    dir.display()
                ));
            }
        }
        let def_path = dir.join("config").join("make.def");
        let def = make_def(tc);
        if std::fs::read_to_string(&def_path).ok().as_deref() != Some(def.as_str()) {
            // New flags or compilers: every binary of this build is stale.
            if let Ok(entries) = std::fs::read_dir(dir.join("bin")) {
                for e in entries.flatten() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
            std::fs::write(&def_path, def)
                .map_err(|e| format!("cannot write {}: {e}", def_path.display()))?;
        }
        Ok(RefBuild {
            dir,
            class: class.to_string(),
        })
    }

    /// Where `bench`'s binary is (or will be).
    pub fn binary(&self, bench: &str) -> PathBuf {
        self.dir
            .join("bin")
            .join(format!("{bench}.{}.x", self.class))
    }

    /// Builds `bench` unless its binary exists; the compiler output goes to
    /// `build-<bench>.log` in the build directory.
    pub fn ensure(&self, bench: &str) -> Result<PathBuf, String> {
        let bin = self.binary(bench);
        if bin.is_file() {
            return Ok(bin);
        }
        let log_path = self.dir.join(format!("build-{bench}.log"));
        let log = std::fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let log2 = log
            .try_clone()
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        eprintln!(
            "volpex-bench: building the official {} class {} in {} (log: {})",
            bench.to_uppercase(),
            self.class,
            self.dir.display(),
            log_path.display()
        );
        let status = Command::new("make")
            .arg(bench)
            .arg(format!("CLASS={}", self.class))
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .status()
            .map_err(|e| format!("cannot run make: {e}"))?;
        if !status.success() || !bin.is_file() {
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(8).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "building the official {bench} class {} failed ({status}); end of {}:\n{}",
                self.class,
                log_path.display(),
                tail.join("\n")
            ));
        }
        Ok(bin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_flags_from_gfortran_10() {
        assert_eq!(gfortran_extra_flags("9.4.0"), "");
        assert_eq!(gfortran_extra_flags("9"), "");
        assert_eq!(
            gfortran_extra_flags("12"),
            "-fallow-argument-mismatch -fallow-invalid-boz"
        );
        assert_eq!(
            gfortran_extra_flags("10.2.1"),
            "-fallow-argument-mismatch -fallow-invalid-boz"
        );
        assert_eq!(gfortran_extra_flags("garbage"), "");
    }

    #[test]
    fn make_def_names_the_toolchain() {
        let tc = Toolchain {
            name: "openmpi",
            fc: "/usr/bin/mpif90".into(),
            cc: "/usr/bin/mpicc".into(),
            fflags_extra: "-fallow-argument-mismatch",
        };
        let def = make_def(&tc);
        assert!(def.contains("\nMPIFC = /usr/bin/mpif90\n"));
        assert!(def.contains("\nMPICC = /usr/bin/mpicc\n"));
        assert!(def.contains("\nFFLAGS = -O3 -fallow-argument-mismatch\n"));
        assert!(def.contains("\nBINDIR = ../bin\n"));
        let plain = make_def(&Toolchain {
            fflags_extra: "",
            ..tc
        });
        assert!(plain.contains("\nFFLAGS = -O3\n"));
    }
}
