//! Output of a replicated job: each rank's lines appear once, in order, as soon as its
//! fastest replica prints them.
//!
//! Every replica's stdout and stderr are read line by line, numbered per replica. Line i
//! of rank x on a stream is printed the first time any replica of x produces it; later
//! copies are dropped. A new incarnation of a replica that replays its rank's program
//! numbers its lines from 0 like any replica: the lines its rank already printed are
//! copies. Output marks (`volpex_proto::launch::OUTPUT_MARK`) are never printed: a replica
//! writes `checkpoint:N` where it took checkpoint N, and a new incarnation restored from
//! checkpoint N writes `restored:N` first; its later lines are numbered from where its
//! rank's lines stood at checkpoint N (known from a sibling's mark; until then they wait).
//! Owns only the deduplication and the printing; never touches processes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};

use crossbeam_channel::Sender;
use serde::{Deserialize, Serialize};

/// Which stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

/// An output mark a replica wrote (never printed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mark {
    /// It took checkpoint `number` after `at` lines of its current numbering.
    Checkpoint {
        /// The checkpoint's number.
        number: u64,
        /// Lines of the stream before it, counted like `Line::index`.
        at: u64,
    },
    /// It was restored from checkpoint `number`: its later lines are numbered from 0
    /// after that checkpoint (`Line::segment`).
    Restored {
        /// The checkpoint's number.
        number: u64,
    },
}

/// One line read from one replica.
#[derive(Debug, Clone)]
pub struct Line {
    /// Rank that printed it.
    pub rank: u32,
    /// Which of the rank's replicas printed it.
    pub replica: u32,
    /// Which incarnation of that replica (a new one replays, and prints, from line 0).
    pub incarnation: u32,
    /// Which stream.
    pub stream: Stream,
    /// Index of the line among that replica's program lines on this stream (since its
    /// `segment` began); `None` for a runtime diagnostic (`volpex[...]` prefix), which is
    /// printed as it comes, and for a mark.
    pub index: Option<u64>,
    /// The checkpoint the replica was restored from (its lines are numbered from there);
    /// `None`: from the program's start.
    pub segment: Option<u64>,
    /// An output mark, not a line to print.
    pub mark: Option<Mark>,
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
    let mut segment = None;
    loop {
        let mut text = Vec::new();
        match r.read_until(b'\n', &mut text) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let mark = match volpex_proto::launch::parse_output_mark(&text) {
                    Some(("checkpoint", number)) => Some(Mark::Checkpoint { number, at: index }),
                    Some(("restored", number)) => {
                        segment = Some(number);
                        index = 0;
                        Some(Mark::Restored { number })
                    }
                    Some(_) | None => None,
                };
                let diag = mark.is_some()
                    || stream == Stream::Err
                        && text.starts_with(volpex_proto::launch::DIAG_PREFIX.as_bytes())
                        && text.get(volpex_proto::launch::DIAG_PREFIX.len()) == Some(&b'[');
                let line = Line {
                    rank,
                    replica,
                    incarnation,
                    stream,
                    index: (!diag).then_some(index),
                    segment,
                    mark,
                    text: if mark.is_some() { Vec::new() } else { text },
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

/// Lines of restored replicas waiting for their checkpoint's place, at most (beyond, the
/// oldest are dropped: their rank printed them long ago or never will).
const PENDING_MAX: usize = 100_000;

/// Where a line goes.
enum Place {
    /// A diagnostic: printed as it comes.
    Diagnostic,
    /// Line `n` of its rank's stream.
    At(u64),
    /// A restored replica's line whose checkpoint's place is not known yet.
    Unknown,
}

/// Per-rank, per-stream count of lines already printed.
pub struct Dedup {
    printed: Vec<[u64; 2]>,
    /// Per rank and stream: where the rank's lines stood at each checkpoint.
    checkpoints: Vec<[HashMap<u64, u64>; 2]>,
    /// Restored replicas' lines waiting for their checkpoint's place, in arrival order.
    pending: Vec<Line>,
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
            checkpoints: (0..ranks).map(|_| Default::default()).collect(),
            pending: Vec::new(),
            tag,
            muted: false,
            explains: None,
        }
    }

    /// Stops printing standard error (the job failed: the other ranks' errors about the
    /// loss would bury its message), except rank `explains`'s: a lost rank's last words
    /// say why it failed, and may come after its exit was seen. Standard output still
    /// prints: what the processes wrote before they were ended is the program's output,
    /// as under mpirun (a rank's last result line may arrive after another rank's exit
    /// failed the job).
    pub fn mute(&mut self, explains: Option<u32>) {
        self.muted = true;
        self.explains = explains;
    }

    /// Prints the line if it is the next one of its rank and stream; takes note of a
    /// mark.
    pub fn offer(&mut self, line: Line) {
        if let Some(mark) = line.mark {
            self.note(&line, mark);
            return;
        }
        if self.admit(&line) {
            self.print(&line);
        }
    }

    /// A checkpoint's place becomes known from its first mark; lines waiting for it go.
    fn note(&mut self, line: &Line, mark: Mark) {
        let Mark::Checkpoint { number, at } = mark else {
            return;
        };
        let base = match line.segment {
            None => Some(0),
            Some(n) => self.base(line.rank, line.stream, n),
        };
        let Some(base) = base else {
            // Restored from a checkpoint whose place is still unknown: wait with it.
            self.hold(line.clone());
            return;
        };
        let Some(slot) = self.checkpoints.get_mut(line.rank as usize) else {
            return;
        };
        let known = &mut slot[stream_index(line.stream)];
        if known.contains_key(&number) {
            return;
        }
        known.insert(number, base + at);
        for l in std::mem::take(&mut self.pending) {
            self.offer(l);
        }
    }

    fn hold(&mut self, line: Line) {
        if self.pending.len() >= PENDING_MAX {
            self.pending.remove(0);
        }
        self.pending.push(line);
    }

    fn base(&self, rank: u32, stream: Stream, checkpoint: u64) -> Option<u64> {
        self.checkpoints
            .get(rank as usize)
            .and_then(|c| c[stream_index(stream)].get(&checkpoint).copied())
    }

    fn place(&self, line: &Line) -> Place {
        match (line.index, line.segment) {
            (None, _) => Place::Diagnostic,
            (Some(i), None) => Place::At(i),
            (Some(i), Some(n)) => match self.base(line.rank, line.stream, n) {
                Some(b) => Place::At(b + i),
                None => Place::Unknown,
            },
        }
    }

    fn print(&self, line: &Line) {
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
    /// diagnostic), counting it if so; a restored replica's line whose place is not known
    /// yet waits.
    fn admit(&mut self, line: &Line) -> bool {
        let place = self.place(line);
        let Some(slot) = self.printed.get_mut(line.rank as usize) else {
            return false;
        };
        let i = stream_index(line.stream);
        match place {
            Place::At(n) if n == slot[i] => slot[i] += 1,
            Place::At(_) => return false,
            Place::Diagnostic => {}
            Place::Unknown => {
                self.hold(line.clone());
                return false;
            }
        }
        let heard = match line.stream {
            Stream::Out => true,
            Stream::Err => self.explains == Some(line.rank),
        };
        !(self.muted && line.index.is_some() && !heard)
    }

    /// Flushes stdout.
    pub fn flush(&self) {
        let _ = std::io::stdout().flush();
    }
}

fn stream_index(s: Stream) -> usize {
    match s {
        Stream::Out => 0,
        Stream::Err => 1,
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
            segment: None,
            mark: None,
            text: format!("line {index}\n").into_bytes(),
        }
    }

    /// What `pump` makes of these lines of one replica.
    fn pumped(text: &str, incarnation: u32) -> Vec<Line> {
        let (tx, rx) = crossbeam_channel::unbounded();
        pump(
            text.as_bytes(),
            (1, 0, incarnation),
            Stream::Out,
            tx,
            Some,
            None,
        );
        rx.try_iter().flatten().collect()
    }

    /// Offers lines; the texts printed.
    fn offer_all(d: &mut Dedup, lines: Vec<Line>) -> Vec<String> {
        let mut printed = Vec::new();
        for l in lines {
            if let Some(mark) = l.mark {
                // What `offer` does with a mark (lines it releases print themselves).
                d.note(&l, mark);
                continue;
            }
            if d.admit(&l) {
                printed.push(String::from_utf8_lossy(&l.text).trim_end().to_string());
            }
        }
        printed
    }

    #[test]
    fn marks_are_never_printed_and_a_restored_replica_continues_its_ranks_numbering() {
        let m = |what: &str, n: u64| volpex_proto::launch::output_mark(what, n);
        let sibling = pumped(
            &format!(
                "a\nb\n{}\nc\n{}\nd\n",
                m("checkpoint", 1),
                m("checkpoint", 2)
            ),
            0,
        );
        assert_eq!(sibling[2].mark, Some(Mark::Checkpoint { number: 1, at: 2 }));
        assert_eq!(sibling[4].mark, Some(Mark::Checkpoint { number: 2, at: 3 }));
        assert!(sibling
            .iter()
            .all(|l| l.mark.is_none() || l.text.is_empty()));
        // A new incarnation restored from checkpoint 2 prints "d" (again) then "e".
        let restored = pumped(&format!("{}\nd\ne\n", m("restored", 2)), 1);
        assert_eq!(restored[0].mark, Some(Mark::Restored { number: 2 }));
        assert_eq!((restored[1].segment, restored[1].index), (Some(2), Some(0)));

        let mut d = Dedup::new(2, false);
        // Its lines come before the sibling's mark: they wait for it.
        assert_eq!(offer_all(&mut d, restored.clone()), Vec::<String>::new());
        assert_eq!(d.pending.len(), 2);
        // The sibling's lines and marks: a, b, c print; the mark of checkpoint 2 releases
        // the waiting lines, and "d" (line 3) prints once, then "e".
        let mut printed = offer_all(&mut d, sibling[..5].to_vec());
        // The released lines went through `offer`, which printed them: the rank's counter
        // shows them.
        assert_eq!(printed, ["a", "b", "c"]);
        assert_eq!(d.printed[1][0], 5, "d and e released and printed");
        printed = offer_all(&mut d, sibling[5..].to_vec());
        assert_eq!(printed, Vec::<String>::new(), "the sibling's d is a copy");
        assert!(d.pending.is_empty());
    }

    #[test]
    fn a_failed_job_keeps_standard_output_and_the_lost_ranks_standard_error() {
        let mut d = Dedup::new(3, false);
        d.mute(Some(1));
        let mut out = line(0, 0, 0);
        out.rank = 2;
        assert!(d.admit(&out), "another rank's result line still prints");
        let mut err = Line {
            stream: Stream::Err,
            ..out.clone()
        };
        assert!(
            !d.admit(&err),
            "another rank's error about the loss does not"
        );
        err.rank = 1;
        assert!(d.admit(&err), "the lost rank's last words do");
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
