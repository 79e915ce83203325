//! The module layering of every crate of the workspace, checked against
//! `docs/ARCHITECTURE.md`: for each crate the document lists its top-level modules in
//! layers, top first (a `layers` block); this test reads every non-test source line that
//! names another module of the same crate (`crate::x`, `crate::{x, ..}`, a `super::`
//! that climbs to the crate root) and fails when a module is not listed, when a listed
//! module does not exist, when an arrow points to the same or a higher layer, or when
//! the arrows form a cycle. So the document cannot drift from the code.
//!
//! Reference: the issue "A house a newcomer can read", item 3; STYLE.md "Dependencies
//! point one way".

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Each crate's layers as `docs/ARCHITECTURE.md` lists them: between
/// `<!-- layers CRATE -->` and `<!-- end layers -->`, one layer per line, top first,
/// modules separated by spaces (text after `#` is a comment).
fn documented() -> BTreeMap<String, Vec<Vec<String>>> {
    let doc =
        std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).expect("docs/ARCHITECTURE.md");
    let mut out = BTreeMap::new();
    let mut current: Option<(String, Vec<Vec<String>>)> = None;
    for line in doc.lines() {
        let t = line.trim();
        if let Some(name) = t
            .strip_prefix("<!-- layers ")
            .and_then(|r| r.strip_suffix("-->"))
        {
            current = Some((name.trim().to_string(), Vec::new()));
        } else if t == "<!-- end layers -->" {
            let (name, layers) = current.take().expect("an end without a start");
            out.insert(name, layers);
        } else if let Some((_, layers)) = current.as_mut() {
            let words: Vec<String> = t
                .split('#')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .filter(|w| !w.starts_with("```"))
                .map(str::to_string)
                .collect();
            if !words.is_empty() {
                layers.push(words);
            }
        }
    }
    assert!(current.is_none(), "a layers block without its end");
    out
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("a source directory") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file below `src` (`a/b.rs` and `a/b/mod.rs`: [a, b];
/// `lib.rs` and `main.rs`: []).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("below src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Whether a file is test code: a `tests.rs`, or below a `tests` directory.
fn is_test_file(path: &[String]) -> bool {
    path.iter().any(|p| p == "tests")
}

/// The first path segments of a `{...}` group (top level only).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item = String::new();
    for ch in group.chars() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(ch);
    }
    heads.push(item);
    heads
        .iter()
        .filter_map(|i| {
            let head: String = i
                .trim()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (!head.is_empty() && head != "self").then_some(head)
        })
        .collect()
}

/// The top-level modules a line of code names, as seen from the module at `path`.
fn named(line: &str, path: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let prev_ident = i > 0 && {
            let b = bytes[i - 1];
            b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
        };
        if !prev_ident && rest.starts_with("crate::") {
            let after = &rest["crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                let end = matching_brace(group);
                out.extend(group_heads(&group[..end]));
            } else {
                let head: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    out.push(head);
                }
            }
            i += "crate::".len();
            continue;
        }
        if !prev_ident && rest.starts_with("super::") {
            let mut ups = 0;
            let mut r = rest;
            while let Some(x) = r.strip_prefix("super::") {
                ups += 1;
                r = x;
            }
            // `super` of a file module is its parent; climbing to the crate root
            // names a top-level module.
            if ups == path.len() {
                if let Some(group) = r.strip_prefix('{') {
                    let end = matching_brace(group);
                    out.extend(group_heads(&group[..end]));
                } else {
                    let head: String = r
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !head.is_empty() {
                        out.push(head);
                    }
                }
            }
            i += "super::".len() * ups;
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    out
}

/// Where the group that `s` opens ends (its closing brace, or the end of `s`).
fn matching_brace(s: &str) -> usize {
    let mut depth = 1;
    for (i, ch) in s.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// The arrows between the top-level modules of the crate at `dir`, each with a file
/// that draws it.
fn arrows(dir: &Path) -> (BTreeSet<String>, BTreeMap<(String, String), String>) {
    let src = dir.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut modules = BTreeSet::new();
    let mut edges = BTreeMap::new();
    for f in files {
        let path = module_path(&src, &f);
        let Some(top) = path.first().cloned() else {
            continue; // the crate root may use everything
        };
        if path.len() == 1 && dir.join("src/bin").exists() && top == "bin" {
            continue;
        }
        if top == "bin" {
            continue; // binaries are crates of their own
        }
        modules.insert(top.clone());
        if is_test_file(&path) {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("a source file");
        let mut pending_cfg_test = false;
        for line in text.lines() {
            let t = line.trim_start();
            if t.starts_with("#[cfg(test)]") {
                pending_cfg_test = true;
                continue;
            }
            if pending_cfg_test {
                if t.starts_with("mod tests {") {
                    break; // test code from here to the end of the file
                }
                pending_cfg_test = t.starts_with("#[");
            }
            if t.starts_with("//") {
                continue;
            }
            for to in named(line, &path) {
                if to != top {
                    let rel = f.strip_prefix(root()).unwrap_or(&f).display().to_string();
                    edges.entry((top.clone(), to)).or_insert(rel);
                }
            }
        }
    }
    (modules, edges)
}

/// A cycle among `edges`, as the modules along it, if there is one.
fn cycle(edges: &BTreeMap<(String, String), String>) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    // Depth-first search; `on` holds the path being explored.
    fn visit<'a>(
        m: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        on: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(i) = on.iter().position(|x| *x == m) {
            let mut c: Vec<String> = on[i..].iter().map(|s| s.to_string()).collect();
            c.push(m.to_string());
            return Some(c);
        }
        if !done.insert(m) {
            return None;
        }
        on.push(m);
        for &n in next.get(m).map_or(&[][..], Vec::as_slice) {
            if let Some(c) = visit(n, next, on, done) {
                return Some(c);
            }
        }
        on.pop();
        None
    }
    let mut done = BTreeSet::new();
    let starts: Vec<&str> = next.keys().copied().collect();
    starts
        .into_iter()
        .find_map(|m| visit(m, &next, &mut Vec::new(), &mut done))
}

#[test]
fn every_crate_follows_its_documented_layers() {
    let doc = documented();
    let crates = [
        "volpex-proto",
        "volpex-core",
        "volpex-launch",
        "volpex-bench",
        "npb",
        "volpex-mpi",
        "volpex-files",
        "tests",
    ];
    let mut problems = Vec::new();
    for krate in crates {
        let Some(layers) = doc.get(krate) else {
            problems.push(format!("{krate}: no layers block in docs/ARCHITECTURE.md"));
            continue;
        };
        let level: BTreeMap<&str, usize> = layers
            .iter()
            .enumerate()
            .flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i)))
            .collect();
        let (modules, edges) = arrows(&root().join(krate));
        if let Some(c) = cycle(&edges) {
            problems.push(format!("{krate}: import cycle {}", c.join(" -> ")));
        }
        for m in &modules {
            if !level.contains_key(m.as_str()) {
                problems.push(format!("{krate}: module `{m}` is in no layer"));
            }
        }
        for m in level.keys() {
            if !modules.contains(*m) {
                problems.push(format!("{krate}: layer lists `{m}`, which does not exist"));
            }
        }
        for ((from, to), file) in &edges {
            let (Some(&a), Some(&b)) = (level.get(from.as_str()), level.get(to.as_str())) else {
                continue;
            };
            if a >= b {
                problems.push(format!(
                    "{krate}: `{from}` uses `{to}` ({file}), which is not in a lower layer"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_cycle_is_found_and_named() {
    let e = |a: &str, b: &str| ((a.to_string(), b.to_string()), String::new());
    let acyclic: BTreeMap<_, _> = [e("a", "b"), e("b", "c"), e("a", "c")].into();
    assert_eq!(cycle(&acyclic), None);
    let knot: BTreeMap<_, _> = [e("a", "b"), e("b", "c"), e("c", "a")].into();
    assert_eq!(cycle(&knot).expect("a cycle"), ["a", "b", "c", "a"]);
}

#[test]
fn the_reader_sees_grouped_and_climbing_imports() {
    let top = vec!["a".to_string()];
    assert_eq!(named("use crate::{x::Y, z, self};", &top), ["x", "z"]);
    assert_eq!(named("let v = crate::w::f();", &top), ["w"]);
    assert_eq!(named("use super::q;", &top), ["q"]);
    let deep = vec!["a".to_string(), "b".to_string()];
    assert!(named("use super::q;", &deep).is_empty(), "a sibling in `a`");
    assert_eq!(named("use super::super::{r, s::T};", &deep), ["r", "s"]);
    assert!(named("$crate::m::f()", &top).is_empty());
}
