//! The wrapper compilers `volpexcc`, `volpexcxx` and `volpexf90` / `volpexf77`: the
//! system C, C++ or Fortran compiler with the flags that find `mpi.h` (`mpif.h`, the
//! `mpi` module) and link `libvolpexmpi`, like `mpicc` and `mpif90`.
//!
//! All find the library next to their own executable (`target/release`,
//! `target/debug`: `cargo build` puts them together) and the headers in the source tree's
//! `volpex-mpi/include` (two levels above `target/<profile>`), or in `include/` next to
//! the executable for an installed layout.
//!
//! The Fortran `mpi` module is compiled at first use, not by `cargo build`: a `.mod` file
//! belongs to one compiler (and version), which is only known when the wrapper runs
//! (`VOLPEX_FC`), and the build must work on a machine without gfortran. `volpexf90`
//! compiles `include/mpi.f90` into `fortran/<key>/mpi.mod` next to the library, `<key>`
//! naming the compiler, its version and the sources, so a new compiler or a changed
//! `mpif.h` gets its own; concurrent first uses (`make -j`) each build in a private
//! directory and the first rename wins.
#![allow(dead_code)] // each wrapper binary uses its part

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the header and the library are.
pub struct Paths {
    /// Directory holding `mpi.h`.
    pub include: PathBuf,
    /// Directory holding `libvolpexmpi.so` / `.a`.
    pub lib: PathBuf,
}

/// Finds the header and the library relative to the running executable.
pub fn find() -> Result<Paths, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find my own executable: {e}"))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no directory", exe.display()))?
        .to_path_buf();
    let candidates = [
        dir.join("include"),
        dir.join("../../volpex-mpi/include"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("include"),
    ];
    let include = candidates
        .iter()
        .find(|d| d.join("mpi.h").is_file())
        .map(|d| d.canonicalize().unwrap_or_else(|_| d.clone()))
        .ok_or_else(|| {
            format!(
                "mpi.h not found (looked in {})",
                candidates
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    let lib = [dir.clone(), dir.join("../lib")]
        .into_iter()
        .find(|d| d.join("libvolpexmpi.so").is_file() || d.join("libvolpexmpi.a").is_file())
        .ok_or_else(|| {
            format!(
                "libvolpexmpi.so not found next to {} (build it with cargo build)",
                exe.display()
            )
        })?;
    Ok(Paths { include, lib })
}

/// Whether the arguments ask only to compile or preprocess (no link step).
fn compile_only(args: &[String]) -> bool {
    args.iter()
        .any(|a| matches!(a.as_str(), "-c" | "-E" | "-S" | "-M" | "-MM"))
}

/// The full command line: compiler, user arguments, include and link flags.
pub fn command(compiler: &str, paths: &Paths, args: &[String]) -> Vec<String> {
    let mut cmd = vec![
        compiler.to_string(),
        format!("-I{}", paths.include.display()),
    ];
    cmd.extend(args.iter().cloned());
    if !compile_only(args) {
        let lib = paths.lib.display();
        cmd.push(format!("-L{lib}"));
        cmd.push(format!("-Wl,-rpath,{lib}"));
        cmd.push("-lvolpexmpi".into());
    }
    cmd
}

/// Runs the wrapper: `-show` / `--showme` print the command instead of running it.
/// `env_var` (`VOLPEX_CC`, `VOLPEX_CXX`) overrides `default` as the compiler.
pub fn main(name: &str, env_var: &str, default: &str) -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args
        .iter()
        .any(|a| a == "-show" || a == "--showme" || a == "-showme");
    let args: Vec<String> = args
        .into_iter()
        .filter(|a| a != "-show" && a != "--showme" && a != "-showme")
        .collect();
    let paths = match find() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::exit(1);
        }
    };
    let compiler = std::env::var(env_var).unwrap_or_else(|_| default.to_string());
    let cmd = command(&compiler, &paths, &args);
    if show {
        println!("{}", cmd.join(" "));
        std::process::exit(0);
    }
    if args.is_empty() {
        eprintln!("{name}: no input files (try {name} -show)");
        std::process::exit(1);
    }
    match Command::new(&cmd[0]).args(&cmd[1..]).status() {
        Ok(st) => std::process::exit(st.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("{name}: cannot run {}: {e}", cmd[0]);
            std::process::exit(1);
        }
    }
}

/// The Fortran compiler's identity: its `--version` first line (an error naming the
/// compiler when it cannot be run, e.g. gfortran is not installed).
fn fortran_version(compiler: &str) -> Result<String, String> {
    let out = Command::new(compiler)
        .arg("--version")
        .output()
        .map_err(|e| {
            format!(
                "cannot run the Fortran compiler {compiler:?} ({e}); install gfortran \
                 (apt-get install gfortran) or set VOLPEX_FC"
            )
        })?;
    if !out.status.success() {
        return Err(format!("{compiler} --version failed"));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string())
}

/// gfortran 10 and later refuse calls of one external procedure with different
/// argument types in a file, which every `mpif.h` program does (MPI_SEND of a REAL
/// array, then of an INTEGER one): the wrapper allows them, as the MPI standard needs.
fn allows_mismatch_flag(version: &str) -> bool {
    version.contains("GNU Fortran")
        && version
            .split(|c: char| !c.is_ascii_digit() && c != '.')
            .filter_map(|w| w.split('.').next()?.parse::<u32>().ok())
            .find(|_| true)
            .is_some_and(|major| major >= 10)
}

/// The directory holding `mpi.mod` for this compiler, built if missing.
fn module_dir(
    compiler: &str,
    version: &str,
    paths: &Paths,
    build: bool,
) -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let src = paths.include.join("mpi.f90");
    let header = paths.include.join("mpif.h");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    compiler.hash(&mut h);
    version.hash(&mut h);
    for f in [&src, &header] {
        std::fs::read(f)
            .map_err(|e| format!("cannot read {}: {e}", f.display()))?
            .hash(&mut h);
    }
    let dir = paths
        .lib
        .join("fortran")
        .join(format!("{:016x}", h.finish()));
    if !build || dir.join("mpi.mod").is_file() {
        return Ok(dir);
    }
    let parent = paths.lib.join("fortran");
    std::fs::create_dir_all(&parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let tmp = parent.join(format!(".build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let out = Command::new(compiler)
        .arg("-c")
        .arg(format!("-I{}", paths.include.display()))
        .arg(format!("-J{}", tmp.display()))
        .arg("-o")
        .arg(tmp.join("mpi.o"))
        .arg(&src)
        .output();
    let built = match out {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "compiling the mpi module ({}) failed:\n{}",
            src.display(),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Err(format!("cannot run {compiler}: {e}")),
    };
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another wrapper got there first; its module is the same.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join("mpi.mod").is_file() {
        Ok(dir)
    } else {
        Err(format!(
            "the mpi module did not appear in {}",
            dir.display()
        ))
    }
}

/// The Fortran command line: compiler, flags for mpif.h and the mpi module, user
/// arguments, link flags.
pub fn fortran_command(
    compiler: &str,
    version: &str,
    module: &Path,
    paths: &Paths,
    args: &[String],
) -> Vec<String> {
    let mut cmd = command(compiler, paths, args);
    let mut extra = vec![format!("-I{}", module.display())];
    if allows_mismatch_flag(version) {
        extra.push("-fallow-argument-mismatch".into());
    }
    cmd.splice(2..2, extra);
    cmd
}

/// Runs the Fortran wrapper (`VOLPEX_FC` overrides `gfortran`); `-show` prints the
/// command (without building the module).
pub fn fortran_main(name: &str) -> ! {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args
        .iter()
        .any(|a| a == "-show" || a == "--showme" || a == "-showme");
    let args: Vec<String> = args
        .into_iter()
        .filter(|a| a != "-show" && a != "--showme" && a != "-showme")
        .collect();
    let fail = |e: String| -> ! {
        eprintln!("{name}: {e}");
        std::process::exit(1);
    };
    let paths = find().unwrap_or_else(|e| fail(e));
    let compiler = std::env::var("VOLPEX_FC").unwrap_or_else(|_| "gfortran".to_string());
    let version = fortran_version(&compiler).unwrap_or_else(|e| fail(e));
    if !show && args.is_empty() {
        fail(format!("no input files (try {name} -show)"));
    }
    let module = module_dir(&compiler, &version, &paths, !show).unwrap_or_else(|e| fail(e));
    let cmd = fortran_command(&compiler, &version, &module, &paths, &args);
    if show {
        println!("{}", cmd.join(" "));
        std::process::exit(0);
    }
    match Command::new(&cmd[0]).args(&cmd[1..]).status() {
        Ok(st) => std::process::exit(st.code().unwrap_or(1)),
        Err(e) => fail(format!("cannot run {}: {e}", cmd[0])),
    }
}
