//! Output files under replication (`Universe::create_output`): every replica of a rank
//! writes the same file, and exactly one complete copy must appear at the path, from a
//! replica that finished writing it, whatever replicas die on the way.
//!
//! How: a replica writes into an anonymous file in the target's directory (`O_TMPFILE`:
//! it has no name, so a replica that dies mid-write leaves nothing behind; the kernel
//! frees it). `commit` flushes it to disk, gives it a name of its own next to the target
//! (`.NAME.volpex-JOB-RANK.REPLICA.INCARNATION.tmp`) and renames that over the target in
//! one atomic step: a reader sees the old file or a complete new one, never a part. A
//! sibling that commits later replaces the copy with an equal one (replicas compute the
//! same bytes). Where the file system has no `O_TMPFILE`, the replica writes that named
//! temporary from the start instead, and each commit removes the temporaries other
//! replicas of this job left for the same target (a replica killed mid-write).
//!
//! Owns the temporary file and its commit. Must never write at the target's path except
//! by that rename, and never leave a named temporary behind on any path it controls.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use std::net::SocketAddr;

use volpex_proto::message::ReplicaId;

/// Who writes: names the temporaries of one replica of one job.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    /// A short name of the job (a hash of the launcher's address; equal in every
    /// process of one job, different between jobs running at once).
    pub job: String,
    pub rank: u32,
    pub replica: u32,
    pub incarnation: u32,
}

impl Writer {
    /// Incarnation `incarnation` of replica `me` in the job of the launcher at
    /// `launcher` (`None`: a process alone).
    pub(crate) fn new(launcher: Option<SocketAddr>, me: ReplicaId, incarnation: u32) -> Writer {
        let launcher = launcher.map_or_else(
            || format!("alone-{}", std::process::id()),
            |a| a.to_string(),
        );
        let job = blake3::hash(launcher.as_bytes()).to_hex()[..12].to_string();
        Writer {
            job,
            rank: me.rank,
            replica: me.replica,
            incarnation,
        }
    }
}

/// How the data is held until the commit.
#[derive(Debug)]
enum Temp {
    /// An `O_TMPFILE` file: no name until the commit.
    Anonymous,
    /// A named temporary (file systems without `O_TMPFILE`).
    Named(PathBuf),
}

/// A file being written by every replica of a rank; see `Universe::create_output`.
/// Write to it like a `File`, then call `commit`: only then does the file appear at its
/// path. Dropped without `commit` (an error on the way, a panic), it is discarded.
pub struct OutputFile {
    out: Option<BufWriter<File>>,
    target: PathBuf,
    dir: PathBuf,
    /// The target's file name.
    name: String,
    temp: Temp,
    who: Writer,
}

/// The prefix of every temporary name of `name` made by job `job`.
fn temp_prefix(name: &str, job: &str) -> String {
    format!(".{name}.volpex-{job}-")
}

fn temp_name(name: &str, who: &Writer) -> String {
    format!(
        "{}{}.{}.{}.tmp",
        temp_prefix(name, &who.job),
        who.rank,
        who.replica,
        who.incarnation
    )
}

impl OutputFile {
    /// Starts writing the file at `path` (its directory must exist).
    pub(crate) fn create(path: &Path, who: Writer) -> io::Result<OutputFile> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("output path {} has no file name", path.display()),
                )
            })?
            .to_string();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let (file, temp) = match OpenOptions::new()
            .write(true)
            .custom_flags(nix::fcntl::OFlag::O_TMPFILE.bits())
            .mode(0o666)
            .open(&dir)
        {
            Ok(f) => (f, Temp::Anonymous),
            // No O_TMPFILE on this file system (or kernel): a named temporary.
            Err(e)
                if e.raw_os_error().is_some_and(|c| {
                    use nix::libc::{EINVAL, EISDIR, EOPNOTSUPP};
                    [EISDIR, EOPNOTSUPP, EINVAL].contains(&c)
                }) =>
            {
                Self::named(&dir, &name, &who)?
            }
            Err(e) => return Err(annotate(e, "cannot create output in", &dir)),
        };
        Ok(OutputFile {
            out: Some(BufWriter::with_capacity(1 << 16, file)),
            target: path.to_path_buf(),
            dir,
            name,
            temp,
            who,
        })
    }

    /// A named temporary from the start.
    fn named(dir: &Path, name: &str, who: &Writer) -> io::Result<(File, Temp)> {
        let tmp = dir.join(temp_name(name, who));
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o666)
            .open(&tmp)
            .map_err(|e| annotate(e, "cannot create temporary output", &tmp))?;
        Ok((f, Temp::Named(tmp)))
    }

    /// The path the file appears at when committed.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// A path at which other code of this process (C's `fopen`, a Fortran `OPEN`) can
    /// open the file being written, for as long as this `OutputFile` lives:
    /// `/proc/self/fd/N` of the anonymous file (opening it reaches the same unnamed
    /// file, so a replica killed mid-write still leaves nothing behind), or the named
    /// temporary where there is no `O_TMPFILE`. What is written there, flushed and
    /// closed before `commit`, is what `commit` puts at `path()`.
    pub fn writable_path(&self) -> PathBuf {
        match (&self.temp, &self.out) {
            (Temp::Named(p), _) => p.clone(),
            (Temp::Anonymous, Some(o)) => {
                PathBuf::from(format!("/proc/self/fd/{}", o.get_ref().as_raw_fd()))
            }
            // Committed: nothing is open any more.
            (Temp::Anonymous, None) => self.target.clone(),
        }
    }

    /// Finishes the file: flushes it to disk and puts it at its path in one atomic
    /// rename (replacing a copy a sibling replica committed before, which holds the same
    /// bytes). Then removes the temporaries other replicas of this job left for the same
    /// path.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_data()?;
        let tmp = match &self.temp {
            Temp::Named(p) => p.clone(),
            Temp::Anonymous => {
                let tmp = self.dir.join(temp_name(&self.name, &self.who));
                // A leftover of an earlier incarnation of this very replica: gone.
                let _ = std::fs::remove_file(&tmp);
                let fd = format!("/proc/self/fd/{}", file.as_raw_fd());
                nix::unistd::linkat(
                    nix::fcntl::AT_FDCWD,
                    fd.as_str(),
                    nix::fcntl::AT_FDCWD,
                    &tmp,
                    nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
                )
                .map_err(|e| annotate(io::Error::from(e), "cannot name output", &tmp))?;
                tmp
            }
        };
        drop(file);
        match std::fs::rename(&tmp, &self.target) {
            Ok(()) => {}
            // A sibling committed meanwhile and removed this temporary with the others of
            // the target: the path holds its complete copy.
            Err(e) if e.kind() == io::ErrorKind::NotFound && self.target.exists() => {
                return Ok(());
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(annotate(e, "cannot commit output", &self.target));
            }
        }
        self.remove_stale();
        Ok(())
    }

    /// Gives the file up without committing it (as dropping it does, without the
    /// warning): nothing appears at the path, no temporary stays.
    pub fn discard(mut self) {
        if self.out.take().is_some() {
            if let Temp::Named(p) = &self.temp {
                let _ = std::fs::remove_file(p);
            }
        }
    }

    /// Removes the named temporaries of the same target left by other replicas of this
    /// job (one killed mid-write, where there is no `O_TMPFILE`; or killed between
    /// naming its file and renaming it).
    fn remove_stale(&self) {
        let prefix = temp_prefix(&self.name, &self.who.job);
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.flatten() {
            let n = e.file_name();
            if n.to_str()
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".tmp"))
            {
                let _ = std::fs::remove_file(e.path());
            }
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
            if let Temp::Named(p) = &self.temp {
                let _ = std::fs::remove_file(p);
            }
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

    fn who(replica: u32) -> Writer {
        Writer {
            job: "testjob".into(),
            rank: 0,
            replica,
            incarnation: 0,
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
        let mut a = OutputFile::create(&path, who(0)).unwrap();
        let mut b = OutputFile::create(&path, who(1)).unwrap();
        a.write_all(b"hello ").unwrap();
        b.write_all(b"hello world\n").unwrap();
        assert!(!path.exists());
        b.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello world\n");
        a.write_all(b"world\n").unwrap();
        a.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello world\n");
        assert_eq!(names(dir), ["out.txt"]);
    }

    #[test]
    fn a_dropped_output_leaves_nothing() {
        let guard = scratch("drop");
        let dir = &guard.0;
        let path = dir.join("out.bin");
        let mut a = OutputFile::create(&path, who(0)).unwrap();
        a.write_all(&[1; 1000]).unwrap();
        drop(a);
        assert_eq!(names(dir), Vec::<String>::new());
    }

    /// Without O_TMPFILE: a replica killed mid-write leaves its named temporary; the
    /// next commit of the same target removes it, and leaves other jobs' alone.
    #[test]
    fn named_temporaries_of_dead_replicas_are_removed_by_the_commit() {
        let guard = scratch("named");
        let dir = &guard.0;
        let path = dir.join("r.dat");
        let (mut f, temp) = OutputFile::named(dir, "r.dat", &who(1)).unwrap();
        f.write_all(b"half").unwrap();
        let Temp::Named(dead) = temp else {
            panic!("named() makes a named temporary")
        };
        let other_job = dir.join(".r.dat.volpex-otherjob-0.1.0.tmp");
        std::fs::write(&other_job, b"x").unwrap();
        let (f0, t0) = OutputFile::named(dir, "r.dat", &who(0)).unwrap();
        let mut out = OutputFile {
            out: Some(BufWriter::new(f0)),
            target: path.clone(),
            dir: dir.clone(),
            name: "r.dat".into(),
            temp: t0,
            who: who(0),
        };
        out.write_all(b"whole").unwrap();
        out.commit().unwrap();
        assert!(!dead.exists());
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        // A sibling whose temporary that commit removed finds the sibling's copy there.
        let (f1, t1) = OutputFile::named(dir, "r.dat", &who(1)).unwrap();
        let (f2, t2) = OutputFile::named(dir, "r.dat", &who(2)).unwrap();
        let mk = |f, temp, w| OutputFile {
            out: Some(BufWriter::new(f)),
            target: path.clone(),
            dir: dir.clone(),
            name: "r.dat".into(),
            temp,
            who: w,
        };
        let (mut late, mut first) = (mk(f1, t1, who(1)), mk(f2, t2, who(2)));
        late.write_all(b"whole").unwrap();
        first.write_all(b"whole").unwrap();
        first.commit().unwrap();
        late.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        assert_eq!(names(dir), [".r.dat.volpex-otherjob-0.1.0.tmp", "r.dat"]);
    }

    /// What other code writes at `writable_path()` (here: another open of it, as C's
    /// fopen would) is what the commit puts at the path.
    #[test]
    fn bytes_written_through_the_writable_path_are_committed() {
        let guard = scratch("writable");
        let dir = &guard.0;
        let path = dir.join("c.txt");
        let a = OutputFile::create(&path, who(0)).unwrap();
        let w = a.writable_path();
        {
            let mut f = OpenOptions::new().write(true).open(&w).unwrap();
            f.write_all(b"from C\n").unwrap();
        }
        assert_eq!(names(dir), Vec::<String>::new());
        a.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"from C\n");
        assert_eq!(names(dir), ["c.txt"]);
    }

    #[test]
    fn a_path_without_a_file_name_is_refused() {
        assert!(OutputFile::create(Path::new("/"), who(0)).is_err());
    }
}
