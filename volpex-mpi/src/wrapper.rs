//! The wrapper compilers `volpexcc` and `volpexcxx`: the system C or C++ compiler with
//! the flags that find `mpi.h` and link `libvolpexmpi`, like `mpicc`.
//!
//! Both find the library next to their own executable (`target/release`,
//! `target/debug`: `cargo build` puts them together) and the header in the source tree's
//! `volpex-mpi/include` (two levels above `target/<profile>`), or in `include/` next to
//! the executable for an installed layout.

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
