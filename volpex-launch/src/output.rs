//! Output of a replicated job: each rank's lines appear once, in order, as soon as its
//! fastest replica prints them.
//!
//! Every replica's stdout and stderr are read line by line, numbered per replica. Line i
//! of rank x on a stream is printed the first time any replica of x produces it; later
//! copies are dropped. A new incarnation of a replica replays its rank's program and
//! numbers its lines from 0 like any replica: the lines its rank already printed are
//! copies. Owns only the deduplication and the printing; never touches
//! processes.

use std::io::{BufRead, BufReader, Read, Write};

use crossbeam_channel::Sender;

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

/// One line read from one replica.
#[derive(Debug)]
pub struct Line {
    /// Rank that printed it.
    pub rank: u32,
    /// Which of the rank's replicas printed it.
    pub replica: u32,
    /// Which incarnation of that replica (a new one replays, and prints, from line 0).
    pub incarnation: u32,
    /// Which stream.
    pub stream: Stream,
    /// Index of the line among that replica's program lines on this stream; `None` for a
    /// runtime diagnostic (`volpex[...]` prefix), which is printed as it comes.
    pub index: Option<u64>,
    /// The bytes, including the newline if there was one.
    pub text: Vec<u8>,
}

/// Reads a pipe line by line into `tx` until EOF, then sends `on_end`; `who` is (rank,
/// replica, incarnation).
pub fn pump<R: Read, E: Send + 'static>(
    pipe: R,
    (rank, replica, incarnation): (u32, u32, u32),
    stream: Stream,
    tx: Sender<E>,
    wrap: impl Fn(Line) -> E,
    on_end: E,
) {
    let mut r = BufReader::new(pipe);
    let mut index = 0;
    loop {
        let mut text = Vec::new();
        match r.read_until(b'\n', &mut text) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let diag = stream == Stream::Err
                    && text.starts_with(volpex::bootstrap::DIAG_PREFIX.as_bytes())
                    && text.get(volpex::bootstrap::DIAG_PREFIX.len()) == Some(&b'[');
                let line = Line {
                    rank,
                    replica,
                    incarnation,
                    stream,
                    index: (!diag).then_some(index),
                    text,
                };
                if !diag {
                    index += 1;
                }
                if tx.send(wrap(line)).is_err() {
                    return;
                }
            }
        }
    }
    let _ = tx.send(on_end);
}

/// Per-rank, per-stream count of lines already printed.
pub struct Dedup {
    printed: Vec<[u64; 2]>,
    tag: bool,
    muted: bool,
    /// While muted, this rank's standard error still prints.
    explains: Option<u32>,
}

impl Dedup {
    /// For `ranks` ranks; `tag` prefixes lines with "[rank] ".
    pub fn new(ranks: u32, tag: bool) -> Dedup {
        Dedup {
            printed: vec![[0; 2]; ranks as usize],
            tag,
            muted: false,
            explains: None,
        }
    }

    /// Stops printing (the job failed and its message must stand alone), except the
    /// standard error of rank `explains`: a lost rank's last words say why it failed,
    /// and may come after its exit was seen.
    pub fn mute(&mut self, explains: Option<u32>) {
        self.muted = true;
        self.explains = explains;
    }

    /// Prints the line if it is the next one of its rank and stream.
    pub fn offer(&mut self, line: &Line) {
        if !self.admit(line) {
            return;
        }
        let mut buf = Vec::with_capacity(line.text.len() + 12);
        if self.tag {
            buf.extend_from_slice(format!("[{}] ", line.rank).as_bytes());
        }
        buf.extend_from_slice(&line.text);
        if buf.last() != Some(&b'\n') {
            buf.push(b'\n');
        }
        let _ = match line.stream {
            Stream::Out => std::io::stdout().lock().write_all(&buf),
            Stream::Err => std::io::stderr().lock().write_all(&buf),
        };
    }

    /// Whether the line is to be printed (the next one of its rank and stream, or a
    /// diagnostic), counting it if so.
    fn admit(&mut self, line: &Line) -> bool {
        let Some(slot) = self.printed.get_mut(line.rank as usize) else {
            return false;
        };
        let i = match line.stream {
            Stream::Out => 0,
            Stream::Err => 1,
        };
        match line.index {
            Some(n) if n == slot[i] => slot[i] += 1,
            Some(_) => return false,
            None => {}
        }
        let explains = line.stream == Stream::Err && self.explains == Some(line.rank);
        !(self.muted && line.index.is_some() && !explains)
    }

    /// Flushes stdout.
    pub fn flush(&self) {
        let _ = std::io::stdout().flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(replica: u32, incarnation: u32, index: u64) -> Line {
        Line {
            rank: 1,
            replica,
            incarnation,
            stream: Stream::Out,
            index: Some(index),
            text: format!("line {index}\n").into_bytes(),
        }
    }

    #[test]
    fn a_new_incarnation_replaying_its_rank_prints_only_what_is_new() {
        let mut d = Dedup::new(2, false);
        // Replica 1.0 prints lines 0..3, its sibling 1.1 is behind at 0..2.
        let printed: Vec<bool> = [(0, 0, 0), (0, 0, 1), (1, 0, 0), (0, 0, 2), (1, 0, 1)]
            .iter()
            .map(|&(k, inc, i)| d.admit(&line(k, inc, i)))
            .collect();
        assert_eq!(printed, [true, true, false, true, false]);
        // 1.0 dies; its incarnation 1 replays from line 0: the repeats are dropped, the
        // first line nobody printed yet is printed once, whoever gets there first.
        for i in 0..3 {
            assert!(!d.admit(&line(0, 1, i)), "line {i} again");
        }
        assert!(d.admit(&line(0, 1, 3)));
        assert!(!d.admit(&line(1, 0, 2)));
        assert!(!d.admit(&line(1, 0, 3)));
        assert!(d.admit(&line(1, 0, 4)));
    }
}
