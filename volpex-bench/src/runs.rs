//! What every benchmark driver needs to run jobs: finding `volpexrun` and other
//! programs, and the median of repeated runs.
//!
//! Owns only these helpers. Must never run a benchmark itself.

use std::path::PathBuf;

/// The first `name` on `PATH`.
pub(crate) fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The volpexrun launcher: $VOLPEX_RUN, next to this executable, or on PATH.
pub(crate) fn volpexrun() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("VOLPEX_RUN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let beside = exe.with_file_name("volpexrun");
    if beside.is_file() {
        return Ok(beside);
    }
    on_path("volpexrun").ok_or_else(|| {
        "volpexrun not found next to volpex-bench or on PATH (build it: cargo build --release -p volpex-launch, or set VOLPEX_RUN)".into()
    })
}

/// The median of `v` (NaN when empty).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
