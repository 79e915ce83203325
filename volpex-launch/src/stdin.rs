//! volpexrun's standard input for the replicas of one rank (`--stdin`, rank 0 by
//! default), as mpirun forwards it to rank 0: every replica of that rank, and every new
//! incarnation of one, reads the same bytes from the start.
//!
//! Owns a buffer kept for the whole job (so a new incarnation that replays its rank reads
//! what the first ones read), filled by a reader thread (volpexrun's stdin) or by hand (an
//! agent, from volpexrun's `ToAgent::Stdin`), and one writer thread per sink: a replica's
//! pipe, or a remote host's agent (a replica that does not read its stdin blocks only its
//! own writer). Must never block the driver, and never decide who gets the bytes: the
//! driver and the agents attach the pipes of the rank `--stdin` names.

use std::io::{Read, Write};
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

    /// Adds bytes (an agent, from volpexrun).
    pub fn push(&self, bytes: &[u8]) {
        let (lock, ready) = &*self.shared;
        let mut buf = lock.lock().unwrap_or_else(|p| p.into_inner());
        buf.bytes.extend_from_slice(bytes);
        ready.notify_all();
    }

    /// The input ended (an agent, from volpexrun).
    pub fn end(&self) {
        let (lock, ready) = &*self.shared;
        let mut buf = lock.lock().unwrap_or_else(|p| p.into_inner());
        buf.ended = true;
        ready.notify_all();
    }

    /// Writes everything read so far, then everything to come, into `sink` (a replica's
    /// stdin, or a remote host's agent), from a thread of its own; drops it (the
    /// replica's end of file) once the input ended. A sink that fails (a replica that
    /// closed its stdin or exited) ends its writer.
    pub fn attach<W: Write + Send + 'static>(&self, mut sink: W) -> std::io::Result<()> {
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
                        if sink.write_all(&chunk).and_then(|()| sink.flush()).is_err() {
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

    #[test]
    fn bytes_pushed_by_hand_reach_a_sink_attached_before_and_after() {
        struct Chan(std::sync::mpsc::Sender<Vec<u8>>);
        impl Write for Chan {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                let _ = self.0.send(b.to_vec());
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let hub = StdinHub::default();
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        hub.attach(Chan(tx.clone())).expect("writer");
        hub.push(b"ab");
        hub.push(b"c");
        hub.end();
        hub.attach(Chan(tx)).expect("writer");
        let got: Vec<u8> = rx.iter().flatten().collect();
        assert_eq!(got, b"abcabc");
    }
}
