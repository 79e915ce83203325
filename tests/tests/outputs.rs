//! Output files under replication (`Universe::create_output`): with every rank run as two
//! replicas and one of them killed mid-write, the file at the path is complete and
//! correct, and no temporary file stays in its directory. While the job runs, a watcher
//! reads the directory over and over: a file at the path is always a complete one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use volpex_tests::{bin, run, TempPath};

/// A directory removed with everything in it when dropped (also when the test fails).
struct TempDir(PathBuf);

impl TempDir {
    fn new(stem: &str) -> TempDir {
        let p = TempPath::new(stem);
        let dir = p.0.clone();
        drop(p);
        std::fs::create_dir_all(&dir).expect("create the test directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What `outputs` writes for `rank`.
fn expected(rank: usize, chunks: usize, kib: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(chunks * kib * 1024);
    for c in 0..chunks {
        v.extend((0..kib * 1024).map(|i| ((rank * 31 + c * 7 + i) % 251) as u8));
    }
    v
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read the test directory")
        .map(|e| {
            e.expect("directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    v.sort();
    v
}

/// Watches `dir` until `done`: every `out-RANK.dat` seen must have its full length.
/// Returns the first few things it saw wrong.
fn watch(dir: PathBuf, len: usize, done: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut wrong = Vec::new();
        while !done.load(Ordering::Relaxed) {
            for rank in 0..2 {
                let p = dir.join(format!("out-{rank}.dat"));
                if let Ok(m) = std::fs::metadata(&p) {
                    if m.len() != len as u64 && wrong.len() < 5 {
                        wrong.push(format!("{} had {} bytes", p.display(), m.len()));
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        wrong
    })
}

#[test]
fn one_complete_copy_appears_when_a_replica_dies_mid_write() {
    let (chunks, kib) = (24usize, 512usize);
    // exit@sends: the replica exits after its 8th send, a third of the way through its
    // file (one barrier per chunk); kill@: SIGKILL while the file is being written.
    for fault in ["0.1:exit@sends=8", "1.0:exit@sends=8", "1.1:kill@0.6"] {
        let dir = TempDir::new("outputs");
        let dir_arg = dir.0.to_string_lossy().into_owned();
        let done = Arc::new(AtomicBool::new(false));
        let watcher = watch(dir.0.clone(), chunks * kib * 1024, done.clone());
        let r = run(
            &["-n", "2", "-r", "2", "--fault", fault],
            &bin("outputs"),
            &[
                "--dir",
                &dir_arg,
                "--chunks",
                &chunks.to_string(),
                "--chunk-kib",
                &kib.to_string(),
                "--work-ms",
                "40",
            ],
            Duration::from_secs(120),
        );
        done.store(true, Ordering::Relaxed);
        let wrong = watcher.join().expect("the watcher");
        assert!(
            wrong.is_empty(),
            "{fault}: partial files at the path: {wrong:?}"
        );
        let out = r.ok();
        for rank in 0..2 {
            assert!(
                out.contains(&format!(
                    "outputs: rank {rank} wrote {} bytes",
                    chunks * kib * 1024
                )),
                "{fault}: {out}"
            );
            let got = std::fs::read(dir.0.join(format!("out-{rank}.dat"))).expect("the output");
            assert!(
                got == expected(rank, chunks, kib),
                "{fault}: out-{rank}.dat is not what rank {rank} wrote ({} bytes)",
                got.len()
            );
        }
        assert_eq!(names(&dir.0), ["out-0.dat", "out-1.dat"], "{fault}");
        r.assert_no_leftovers();
    }
}
