//! The documentation keeps up with the code: every environment variable of the registry
//! (`volpex_proto::launch::vars`) and every flag of `volpexrun` and `volpexrun plan` is
//! documented in `docs/VOLPEXRUN.md` or `docs/REGENERATION.md`, and the README stays a
//! front door (at most 400 lines, with the command that runs a replicated job, the one
//! that runs the tests, and a pointer to every document it names).

use std::path::{Path, PathBuf};
use std::process::Command;

use volpex_tests::volpexrun;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The long flags `volpexrun ARGS --help` lists.
fn flags(args: &[&str]) -> Vec<String> {
    let out = Command::new(volpexrun())
        .args(args)
        .arg("--help")
        .output()
        .expect("volpexrun --help runs");
    assert!(out.status.success(), "volpexrun {args:?} --help failed");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut flags: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_string)
        .filter(|f| f != "--help" && f != "--version")
        .collect();
    flags.sort();
    flags.dedup();
    assert!(!flags.is_empty(), "no flags in volpexrun {args:?} --help");
    flags
}

#[test]
fn every_environment_variable_is_documented() {
    let doc = read("docs/VOLPEXRUN.md");
    let missing: Vec<&str> = volpex_proto::launch::vars::ALL
        .iter()
        .copied()
        .filter(|v| !doc.contains(&format!("`{v}`")) && !doc.contains(&format!("`{v}=")))
        .collect();
    assert!(missing.is_empty(), "not in docs/VOLPEXRUN.md: {missing:?}");
}

#[test]
fn every_volpexrun_flag_is_documented() {
    let doc = read("docs/VOLPEXRUN.md") + &read("docs/REGENERATION.md");
    let mut missing = Vec::new();
    for args in [&[][..], &["plan"][..]] {
        for f in flags(args) {
            if !doc.contains(&format!("`{f}")) && !doc.contains(&format!("{f} ")) {
                missing.push(f);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "not in docs/VOLPEXRUN.md nor docs/REGENERATION.md: {missing:?}"
    );
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = read("README.md");
    let lines = readme.lines().count();
    assert!(lines <= 400, "README.md has {lines} lines");
    assert!(
        readme.contains("cargo test --workspace"),
        "the test command"
    );
    assert!(
        readme.contains("volpexrun -n 4 -r 2"),
        "a command that runs a replicated job"
    );
    assert!(readme.contains("## C and Fortran") && readme.contains("docs/C-FORTRAN.md"));
    for word in readme.split(|c: char| c.is_whitespace() || "`()[],;:".contains(c)) {
        if let Some(rest) = word.strip_prefix("docs/") {
            let path = format!("docs/{}", rest.trim_end_matches('.'));
            assert!(
                root().join(&path).exists(),
                "README names {path}, which is missing"
            );
        }
    }
}
