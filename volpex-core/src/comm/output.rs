//! Output files under replication (`Universe::create_output`, `MPIX_Output_open`): a
//! file that appears at its path whole, once committed, and never in part.
//!
//! How: the rank writes a temporary next to the target, named for the job and the rank
//! (`.NAME.volpex-JOB-RANK.tmp`, the same in every replica), and `commit` syncs it and
//! renames it over the target in one atomic step: a reader sees the old file or a
//! complete new one. Under replication the file layer (`volpex_files`) makes every one of
//! these calls the rank's: one replica writes the temporary (one copy on disk, not one
//! per replica), a killed one's successor goes on with it, and a temporary that could
//! not be written whole (a full disk, a quota) is never renamed: `commit` returns the
//! error (in the replica that writes; the job fails naming the file in any case).
//!
//! Owns the temporary and its commit. Must never write at the target's path except by
//! that rename.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use std::net::SocketAddr;

/// Who writes: names the temporary of one rank of one job.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    /// A short name of the job (a hash of the launcher's address; equal in every
    /// process of one job, different between jobs running at once).
    pub job: String,
    pub rank: u32,
}

impl Writer {
    /// Rank `rank` in the job of the launcher at `launcher` (`None`: a process alone).
    pub(crate) fn new(launcher: Option<SocketAddr>, rank: u32) -> Writer {
        let launcher = launcher.map_or_else(
            || format!("alone-{}", std::process::id()),
            |a| a.to_string(),
        );
        let job = blake3::hash(launcher.as_bytes()).to_hex()[..12].to_string();
        Writer { job, rank }
    }
}

/// A file being written by every replica of a rank; see `Universe::create_output`.
/// Write to it like a `File`, then call `commit`: only then does the file appear at its
/// path. Dropped without `commit` (an error on the way, a panic), it is discarded.
pub struct OutputFile {
    out: Option<BufWriter<File>>,
    target: PathBuf,
    tmp: PathBuf,
}

impl OutputFile {
    /// Starts writing the file at `path` (its directory must exist).
    pub(crate) fn create(path: &Path, who: Writer) -> io::Result<OutputFile> {
        let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("output path {} has no file name", path.display()),
            )
        })?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = dir.join(format!(".{name}.volpex-{}-{}.tmp", who.job, who.rank));
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)
            .map_err(|e| annotate(e, "cannot create output", &tmp))?;
        Ok(OutputFile {
            out: Some(BufWriter::with_capacity(1 << 16, f)),
            target: path.to_path_buf(),
            tmp,
        })
    }

    /// The path the file appears at when committed.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// A path at which other code of this process (C's `fopen`, a Fortran `OPEN`) can
    /// write the file, for as long as this `OutputFile` lives: the temporary. What is
    /// written there, flushed and closed before `commit`, is what `commit` puts at
    /// `path()`.
    pub fn writable_path(&self) -> PathBuf {
        self.tmp.clone()
    }

    /// Finishes the file: syncs it to disk (an error the disk gave any write to it comes
    /// back here: ENOSPC, EDQUOT) and renames it over its path in one atomic step.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let file = out.into_inner().map_err(|e| e.into_error())?;
        let synced = file.sync_data();
        drop(file);
        if let Err(e) = synced {
            let _ = std::fs::remove_file(&self.tmp);
            return Err(annotate(e, "cannot write output", &self.target));
        }
        std::fs::rename(&self.tmp, &self.target).map_err(|e| {
            let _ = std::fs::remove_file(&self.tmp);
            annotate(e, "cannot commit output", &self.target)
        })
    }

    /// Gives the file up without committing it (as dropping it does, without the
    /// warning): nothing appears at the path, the temporary goes.
    pub fn discard(mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn annotate(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.out {
            Some(o) => o.write(buf),
            None => Err(io::Error::other("output file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Some(o) => o.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
            if !std::thread::panicking() {
                log::warn!(
                    "output {} dropped without commit(): discarded",
                    self.target.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Writer {
        Writer {
            job: "testjob".into(),
            rank: 0,
        }
    }

    /// A directory removed with its contents when dropped, also when a test fails.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(what: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("volpex-output-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn nothing_appears_before_commit_and_one_file_after() {
        let guard = scratch("commit");
        let dir = &guard.0;
        let path = dir.join("out.txt");
        let mut a = OutputFile::create(&path, who()).unwrap();
        a.write_all(b"hello world\n").unwrap();
        a.flush().unwrap();
        assert!(!path.exists());
        a.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello world\n");
        assert_eq!(names(dir), ["out.txt"]);
    }

    #[test]
    fn a_dropped_output_leaves_nothing() {
        let guard = scratch("drop");
        let dir = &guard.0;
        let path = dir.join("out.bin");
        let mut a = OutputFile::create(&path, who()).unwrap();
        a.write_all(&[1; 1000]).unwrap();
        drop(a);
        assert_eq!(names(dir), Vec::<String>::new());
        OutputFile::create(&path, who()).unwrap().discard();
        assert_eq!(names(dir), Vec::<String>::new());
    }

    /// What other code writes at `writable_path()` (here: another open of it, as C's
    /// fopen would) is what the commit puts at the path.
    #[test]
    fn bytes_written_through_the_writable_path_are_committed() {
        let guard = scratch("writable");
        let dir = &guard.0;
        let path = dir.join("c.txt");
        let a = OutputFile::create(&path, who()).unwrap();
        let w = a.writable_path();
        {
            let mut f = OpenOptions::new().write(true).open(&w).unwrap();
            f.write_all(b"from C\n").unwrap();
        }
        assert!(!path.exists());
        a.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"from C\n");
        assert_eq!(names(dir), ["c.txt"]);
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        assert!(OutputFile::create(Path::new("/"), who()).is_err());
    }
}
