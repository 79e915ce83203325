//! volpexrun's standard input for the replicas of one rank (`--stdin`, rank 0 by
//! default), as mpirun forwards it to rank 0: every replica of that rank, and every new
//! incarnation of one, reads the same bytes from the start.
//!
//! Owns one reader thread (volpexrun's stdin into a buffer kept for the whole job, so a
//! new incarnation that replays its rank reads what the first ones read) and one writer
//! thread per replica's pipe (a replica that does not read its stdin blocks only its own
//! writer). Must never block the driver, and never decide who gets the bytes: the driver
//! attaches the pipes of the rank `--stdin` names.

use std::io::{Read, Write};
use std::process::ChildStdin;
use std::sync::{Arc, Condvar, Mutex};

/// What was read so far.
#[derive(Debug, Default)]
struct Buffer {
    bytes: Vec<u8>,
    /// volpexrun's stdin ended (or could not be read).
    ended: bool,
}

/// The bytes of volpexrun's standard input, for any number of pipes.
#[derive(Debug, Clone, Default)]
pub struct StdinHub {
    shared: Arc<(Mutex<Buffer>, Condvar)>,
}

impl StdinHub {
    /// Starts reading `source` (volpexrun's stdin) in a thread of its own.
    pub fn start<R: Read + Send + 'static>(mut source: R) -> std::io::Result<StdinHub> {
        let hub = StdinHub::default();
        let shared = hub.shared.clone();
        std::thread::Builder::new()
            .name("volpexrun-stdin".into())
            .spawn(move || {
                let mut chunk = [0u8; 64 * 1024];
                loop {
                    let got = match source.read(&mut chunk) {
                        Ok(0) => None,
                        Ok(n) => Some(n),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            log::warn!("cannot read standard input: {e}");
                            None
                        }
                    };
                    let (lock, ready) = &*shared;
                    let mut buf = lock.lock().unwrap_or_else(|p| p.into_inner());
                    match got {
                        Some(n) => buf.bytes.extend_from_slice(&chunk[..n]),
                        None => buf.ended = true,
                    }
                    ready.notify_all();
                    if buf.ended {
                        return;
                    }
                }
            })?;
        Ok(hub)
    }

    /// Writes everything read so far, then everything to come, into `sink` (a replica's
    /// stdin), from a thread of its own; closes it once volpexrun's stdin ended. A replica
    /// that closes its stdin or exits ends its writer.
    pub fn attach(&self, mut sink: ChildStdin) -> std::io::Result<()> {
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name("volpexrun-stdin-writer".into())
            .spawn(move || {
                let mut sent = 0usize;
                loop {
                    let (chunk, ended) = {
                        let (lock, ready) = &*shared;
                        let mut buf = lock.lock().unwrap_or_else(|p| p.into_inner());
                        while buf.bytes.len() == sent && !buf.ended {
                            buf = ready.wait(buf).unwrap_or_else(|p| p.into_inner());
                        }
                        (buf.bytes[sent..].to_vec(), buf.ended)
                    };
                    if !chunk.is_empty() {
                        if sink.write_all(&chunk).is_err() {
                            return;
                        }
                        sent += chunk.len();
                    } else if ended {
                        // Dropping the pipe is the replica's end of file.
                        return;
                    }
                }
            })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn every_pipe_gets_every_byte_also_one_attached_late() {
        let hub = StdinHub::start(&b"one\ntwo\n"[..]).expect("reader");
        let mut children = Vec::new();
        for _ in 0..3 {
            let mut c = Command::new("cat")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("cat");
            hub.attach(c.stdin.take().expect("pipe")).expect("writer");
            children.push(c);
        }
        for c in children {
            let out = c
                .wait_with_output()
                .expect("cat ends at the end of its input");
            assert_eq!(out.stdout, b"one\ntwo\n");
        }
    }
}
