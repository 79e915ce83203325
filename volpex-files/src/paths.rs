//! Paths as the layer compares them: absolute and lexically normal (`.` and `..` taken
//! out, repeated slashes merged), and which of them the layer leaves to the system.
//!
//! Owns only these pure functions; must never touch the file system.

use std::path::{Component, Path, PathBuf};

/// `path` made absolute against `base` (the working directory, or the directory an
/// `openat` names) and normalized without following links: `a/./b/../c` is `a/c`.
pub fn absolute(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// Paths the layer never replicates: the kernel's pseudo file systems (`/proc`,
/// `/sys`, `/dev`: a replica's own process, devices, shared memory).
pub fn system(path: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|p| path.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_absolute_and_normal() {
        let cwd = Path::new("/work/run");
        assert_eq!(
            absolute(cwd, Path::new("out.txt")),
            Path::new("/work/run/out.txt")
        );
        assert_eq!(
            absolute(cwd, Path::new("./a//b/../c")),
            Path::new("/work/run/a/c")
        );
        assert_eq!(absolute(cwd, Path::new("/x/../../y")), Path::new("/y"));
        assert_eq!(absolute(cwd, Path::new("../up")), Path::new("/work/up"));
        assert!(system(Path::new("/proc/self/fd/3")));
        assert!(system(Path::new("/dev/shm/x")));
        assert!(!system(Path::new("/devices/x")));
    }
}
