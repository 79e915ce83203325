//! The launcher's side of the files: for every rank, which replica writes (one at a time,
//! its *epoch* raised at every change), how far it applied, the outcomes it decided, and
//! how far every live replica has come; what each replica must be told.
//!
//! A writer is replaced only once its process is known to be gone (`ended`: reaped by
//! volpexrun or reported by its host's agent), never on a death notice alone: a stopped
//! writer that wakes up after its replacement started writing would otherwise write
//! stale bytes over newer ones. The new writer is the lowest live replica; it applies
//! again what its predecessor may not have applied (from the last point it reported),
//! which changes nothing in what was (every operation is positional).
//!
//! A pure state machine like the job's: reports, membership and ends come in, `Effect`s
//! go out (messages to send, failures to report). Must never do I/O.

use std::collections::BTreeMap;

use crate::protocol::{self, errno_name, Down, Recorded, Seq, Up, Written};

/// What the launcher must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send `bytes` (a `protocol::Down`) on that replica's files connection.
    Send {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// Incarnation it is meant for.
        incarnation: u32,
        /// The message.
        bytes: Vec<u8>,
    },
    /// A file of the rank could not be written (a full disk, a read-only directory, a
    /// quota): the job must not end successfully. Said once per file.
    Damaged {
        /// Rank.
        rank: u32,
        /// What happened, naming the file and the reason.
        message: String,
    },
    /// Replicas of the rank wrote different bytes (`VOLPEX_VERIFY_OUTPUT=1`): the job
    /// fails now.
    Mismatch {
        /// Rank.
        rank: u32,
        /// The first mismatch: file, offset, replicas.
        message: String,
    },
    /// A replica cannot go on with its files and retires itself (it diverged from the
    /// writer, or cannot replay files rewritten since): print it.
    Note {
        /// Rank.
        rank: u32,
        /// Replica index.
        replica: u32,
        /// What it said.
        message: String,
    },
}

/// A live replica of a rank, as the job knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Live {
    /// Replica index.
    pub replica: u32,
    /// Its current incarnation.
    pub incarnation: u32,
    /// It is not a new incarnation still catching up (replaying its rank's program): it
    /// may be made writer before those.
    pub caught_up: bool,
}

/// Who writes a rank's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Nobody yet (no replica alive or heard of).
    Nobody,
    /// This incarnation of this replica.
    Active { replica: u32, inc: u32 },
    /// It died; its successor starts once its process is known to be gone.
    Lost { replica: u32, inc: u32 },
}

/// One replica's files connection.
#[derive(Debug, Clone)]
struct Link {
    inc: u32,
    produced: Seq,
    /// Recorded outcomes and mutated paths already sent.
    sent_recorded: usize,
    sent_mutated: usize,
    /// The last (epoch, you_write, applied, recorded_through, gate) sent.
    last: Option<(u32, bool, Seq, Seq, Seq)>,
}

/// A write's digest and who reported it.
#[derive(Debug, Clone)]
struct Digest {
    written: Written,
    first: u32,
    reported: Vec<u32>,
}

#[derive(Debug)]
struct Rank {
    epoch: u32,
    writer: Writer,
    applied: Seq,
    /// Recorded outcomes in the order they came (a close's comes when the writer applied
    /// it, after the opens decided since), each once; and the highest operation.
    recorded: Vec<Recorded>,
    recorded_seqs: std::collections::HashSet<Seq>,
    recorded_through: Seq,
    mutated: Vec<(String, Seq)>,
    links: Vec<Option<Link>>,
    /// Live replicas, as the job knows them.
    alive: Vec<Live>,
    digests: BTreeMap<Seq, Digest>,
    /// Files already reported damaged.
    damaged: Vec<String>,
    mismatched: bool,
}

/// Bound on the write digests waiting for the other replicas (verification): beyond it
/// the oldest are compared no more.
const DIGESTS_MAX: usize = 1 << 20;

/// Every rank's files.
#[derive(Debug)]
pub struct Coordinator {
    ranks: Vec<Rank>,
}

impl Coordinator {
    /// For `ranks` ranks of `replicas` replicas.
    pub fn new(ranks: u32, replicas: u32) -> Coordinator {
        Coordinator {
            ranks: (0..ranks)
                .map(|_| Rank {
                    epoch: 0,
                    writer: Writer::Nobody,
                    applied: 0,
                    recorded: Vec::new(),
                    recorded_seqs: std::collections::HashSet::new(),
                    recorded_through: 0,
                    mutated: Vec::new(),
                    links: vec![None; replicas as usize],
                    alive: Vec::new(),
                    digests: BTreeMap::new(),
                    damaged: Vec::new(),
                    mismatched: false,
                })
                .collect(),
        }
    }

    /// A report (`protocol::Up`) from incarnation `inc` of `rank.replica`; `alive` lists
    /// the rank's live replicas (replica, incarnation).
    pub fn report(
        &mut self,
        rank: u32,
        replica: u32,
        inc: u32,
        bytes: &[u8],
        alive: &[Live],
    ) -> Vec<Effect> {
        let mut out = Vec::new();
        let Some(r) = self.ranks.get_mut(rank as usize) else {
            return out;
        };
        let Some(up) = protocol::decode::<Up>(bytes) else {
            log::warn!("replica {rank}.{replica}: a files report that does not decode; ignored");
            return out;
        };
        if !alive
            .iter()
            .any(|l| (l.replica, l.incarnation) == (replica, inc))
        {
            log::debug!(
                "files report from {rank}.{replica} (incarnation {inc}), not alive; ignored"
            );
            return out;
        }
        r.alive = alive.to_vec();
        let Some(slot) = r.links.get_mut(replica as usize) else {
            return out;
        };
        if slot.as_ref().is_none_or(|l| l.inc != inc) {
            *slot = Some(Link {
                inc,
                produced: 0,
                sent_recorded: 0,
                sent_mutated: 0,
                last: None,
            });
        }
        if let Some(l) = slot.as_mut() {
            l.produced = l.produced.max(up.produced);
        }
        if let Some(w) = up.writer {
            let current = r.writer == Writer::Active { replica, inc } && w.epoch == r.epoch;
            if current {
                r.applied = r.applied.max(w.applied);
                for x in w.recorded {
                    if r.recorded_seqs.insert(x.seq) {
                        r.recorded_through = r.recorded_through.max(x.seq);
                        r.recorded.push(x);
                    }
                }
                r.mutated.extend(w.mutated);
                for f in w.failures {
                    if !r.damaged.contains(&f.path) {
                        r.damaged.push(f.path.clone());
                        out.push(Effect::Damaged {
                            rank,
                            message: format!(
                                "rank {rank}: {} of {} failed: {}",
                                f.what,
                                f.path,
                                errno_name(f.errno)
                            ),
                        });
                    }
                }
            } else {
                log::debug!(
                    "files report of {rank}.{replica} as writer of epoch {} (now {:?}, epoch {}); ignored",
                    w.epoch,
                    r.writer,
                    r.epoch
                );
            }
        }
        for f in up.unseen {
            if !r.damaged.contains(&f.path) {
                r.damaged.push(f.path.clone());
                out.push(Effect::Damaged {
                    rank,
                    message: format!(
                        "rank {rank}: replica {rank}.{replica} does not see {} as its writer wrote it ({}): the files of a job on several hosts must be on a file system they share",
                        f.path, f.what
                    ),
                });
            }
        }
        if let Some(p) = up.problem {
            out.push(Effect::Note {
                rank,
                replica,
                message: p,
            });
        }
        for w in up.written {
            r.compare(rank, replica, w, &mut out);
        }
        r.settle(rank, &mut out);
        out
    }

    /// The rank's live replicas changed (a death, a new incarnation).
    pub fn membership(&mut self, rank: u32, alive: &[Live]) -> Vec<Effect> {
        let mut out = Vec::new();
        if let Some(r) = self.ranks.get_mut(rank as usize) {
            r.alive = alive.to_vec();
            r.settle(rank, &mut out);
        }
        out
    }

    /// Incarnation `inc` of `rank.replica` is gone for sure (its exit seen): if it wrote,
    /// its successor may start.
    pub fn ended(&mut self, rank: u32, replica: u32, inc: u32, alive: &[Live]) -> Vec<Effect> {
        let mut out = Vec::new();
        let Some(r) = self.ranks.get_mut(rank as usize) else {
            return out;
        };
        r.alive = alive.to_vec();
        if r.writer == (Writer::Lost { replica, inc })
            || r.writer == (Writer::Active { replica, inc })
        {
            r.writer = Writer::Nobody;
        }
        if let Some(slot) = r.links.get_mut(replica as usize) {
            if slot.as_ref().is_some_and(|l| l.inc == inc) {
                *slot = None;
            }
        }
        r.settle(rank, &mut out);
        out
    }
}

impl Rank {
    /// How far a live replica has come (0 before its first report).
    fn produced(&self, replica: u32, inc: u32) -> Seq {
        self.links
            .get(replica as usize)
            .and_then(|l| l.as_ref())
            .filter(|l| l.inc == inc)
            .map_or(0, |l| l.produced)
    }

    /// The next writer: a live replica that is not catching up if there is one, the one
    /// furthest ahead (its followers then rarely wait for it), the lowest index on a tie.
    fn successor(&self) -> Option<(u32, u32)> {
        let ready = self.alive.iter().any(|l| l.caught_up);
        self.alive
            .iter()
            .filter(|l| l.caught_up || !ready)
            .map(|l| (l.replica, l.incarnation))
            .max_by_key(|&(k, inc)| (self.produced(k, inc), std::cmp::Reverse(k)))
    }

    /// Replaces a lost writer, then tells every live replica what changed for it.
    fn settle(&mut self, rank: u32, out: &mut Vec<Effect>) {
        if let Writer::Active { replica, inc } = self.writer {
            if !self
                .alive
                .iter()
                .any(|l| (l.replica, l.incarnation) == (replica, inc))
            {
                self.writer = Writer::Lost { replica, inc };
            }
        }
        if self.writer == Writer::Nobody {
            if let Some((replica, inc)) = self.successor() {
                self.epoch += 1;
                self.writer = Writer::Active { replica, inc };
                log::info!(
                    "rank {rank}: replica {rank}.{replica} (incarnation {inc}) writes its files from operation {} (epoch {})",
                    self.applied + 1,
                    self.epoch
                );
            }
        }
        let (writer, writer_inc) = match self.writer {
            Writer::Active { replica, inc } => (replica, Some(inc)),
            Writer::Lost { replica, .. } => (replica, None),
            Writer::Nobody => (u32::MAX, None),
        };
        let recorded_through = self.recorded_through;
        let alive: Vec<(u32, u32)> = self
            .alive
            .iter()
            .map(|l| (l.replica, l.incarnation))
            .collect();
        let produced: Vec<(u32, Seq)> = alive
            .iter()
            .map(|&(k, inc)| (k, self.produced(k, inc)))
            .collect();
        for &(k, inc) in &alive {
            let Some(l) = self
                .links
                .get_mut(k as usize)
                .and_then(|l| l.as_mut())
                .filter(|l| l.inc == inc)
            else {
                continue;
            };
            let you_write = writer == k && writer_inc == Some(inc);
            let gate = produced
                .iter()
                .filter(|(o, _)| *o != k)
                .map(|(_, p)| *p)
                .min()
                .unwrap_or(Seq::MAX);
            let now = (self.epoch, you_write, self.applied, recorded_through, gate);
            let fresh_recorded = self.recorded.len() > l.sent_recorded;
            let fresh_mutated = self.mutated.len() > l.sent_mutated;
            if l.last == Some(now) && !fresh_recorded && !fresh_mutated {
                continue;
            }
            let down = Down {
                epoch: self.epoch,
                you_write,
                writer,
                applied: self.applied,
                recorded_through,
                recorded: self.recorded[l.sent_recorded..].to_vec(),
                gate,
                mutated: self.mutated[l.sent_mutated..].to_vec(),
            };
            l.sent_recorded = self.recorded.len();
            l.sent_mutated = self.mutated.len();
            l.last = Some(now);
            out.push(Effect::Send {
                rank,
                replica: k,
                incarnation: inc,
                bytes: protocol::encode(&down),
            });
        }
        // Digests every live replica has passed are settled.
        let least = produced.iter().map(|(_, p)| *p).min().unwrap_or(0);
        while self
            .digests
            .first_key_value()
            .is_some_and(|(s, d)| *s <= least && d.reported.len() >= alive.len().min(2))
            || self.digests.len() > DIGESTS_MAX
        {
            self.digests.pop_first();
        }
    }

    /// Verification: compares a replica's digest of a write with the first one reported.
    fn compare(&mut self, rank: u32, replica: u32, w: Written, out: &mut Vec<Effect>) {
        if self.mismatched {
            return;
        }
        match self.digests.get_mut(&w.seq) {
            Some(d) => {
                if d.reported.contains(&replica) {
                    return;
                }
                d.reported.push(replica);
                let a = &d.written;
                if a.hash != w.hash || a.offset != w.offset || a.len != w.len || a.path != w.path {
                    self.mismatched = true;
                    let what = if a.path != w.path || a.offset != w.offset || a.len != w.len {
                        format!(
                            "replica {rank}.{} wrote {} bytes to {} at offset {}, replica {rank}.{replica} {} bytes to {} at offset {}",
                            d.first, a.len, a.path, a.offset, w.len, w.path, w.offset
                        )
                    } else {
                        format!(
                            "replicas {rank}.{} and {rank}.{replica} wrote different bytes to {} at offset {} ({} bytes)",
                            d.first, a.path, a.offset, a.len
                        )
                    };
                    out.push(Effect::Mismatch {
                        rank,
                        message: format!(
                            "output verification failed: rank {rank}, file operation {}: {what}",
                            w.seq
                        ),
                    });
                }
            }
            None => {
                // Keep it only if a live replica has yet to write it.
                let behind = self.alive.iter().any(|l| {
                    l.replica != replica && self.produced(l.replica, l.incarnation) < w.seq
                });
                if behind {
                    self.digests.insert(
                        w.seq,
                        Digest {
                            written: w,
                            first: replica,
                            reported: vec![replica],
                        },
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Failure, Outcome, WriterReport};

    fn live(v: &[(u32, u32)]) -> Vec<Live> {
        v.iter()
            .map(|&(replica, incarnation)| Live {
                replica,
                incarnation,
                caught_up: incarnation == 0,
            })
            .collect()
    }

    fn up(produced: Seq, writer: Option<WriterReport>) -> Vec<u8> {
        protocol::encode(&Up {
            produced,
            writer,
            ..Up::default()
        })
    }

    fn downs(effects: &[Effect]) -> Vec<(u32, u32, Down)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send {
                    replica,
                    incarnation,
                    bytes,
                    ..
                } => Some((
                    *replica,
                    *incarnation,
                    protocol::decode::<Down>(bytes).unwrap(),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_replica_furthest_ahead_writes_and_is_replaced_only_once_it_ended() {
        let mut c = Coordinator::new(1, 2);
        let alive = live(&[(0, 0), (1, 0)]);
        // Replica 1 reports first, ahead: it writes.
        let d = downs(&c.report(0, 1, 0, &up(3, None), &alive));
        assert_eq!(d.len(), 1);
        assert!(d[0].2.you_write && d[0].2.writer == 1 && d[0].2.epoch == 1);
        assert_eq!(d[0].2.gate, 0, "replica 0 has produced nothing yet");
        let d = downs(&c.report(0, 0, 0, &up(1, None), &alive));
        let other = d.iter().find(|x| x.0 == 0).unwrap();
        assert!(!other.2.you_write && other.2.writer == 1);
        let writer = d.iter().find(|x| x.0 == 1).unwrap();
        assert_eq!(
            writer.2.gate, 1,
            "the writer's gate is the other's progress"
        );
        // The writer records an outcome and applies: replica 0 hears it.
        let rec = Recorded {
            seq: 1,
            outcome: Outcome::Ok {
                existed: false,
                size: 0,
            },
            trace: 5,
        };
        let w = WriterReport {
            epoch: 1,
            applied: 1,
            recorded: vec![rec],
            ..WriterReport::default()
        };
        let d = downs(&c.report(0, 1, 0, &up(3, Some(w)), &alive));
        let other = d.iter().find(|x| x.0 == 0).unwrap();
        assert_eq!(
            (
                other.2.applied,
                other.2.recorded_through,
                other.2.recorded.clone()
            ),
            (1, 1, vec![rec])
        );
        // The writer dies: nobody writes until its process is gone.
        let d = downs(&c.membership(0, &live(&[(0, 0)])));
        assert!(d.iter().all(|x| !x.2.you_write));
        let d = downs(&c.ended(0, 1, 0, &live(&[(0, 0)])));
        assert_eq!(d.len(), 1);
        assert!(d[0].2.you_write && d[0].2.epoch == 2 && d[0].2.applied == 1);
        assert_eq!(d[0].2.gate, Seq::MAX, "alone");
        // A report from the old writer's epoch changes nothing.
        let stale = WriterReport {
            epoch: 1,
            applied: 9,
            ..WriterReport::default()
        };
        assert!(downs(&c.report(0, 1, 0, &up(9, Some(stale)), &live(&[(0, 0)]))).is_empty());
        // Its new incarnation joins: it hears everything recorded, from the start; it
        // holds the writer's gate back until it has produced as much, and is not made
        // writer while it catches up.
        let alive = live(&[(0, 0), (1, 1)]);
        let d = downs(&c.report(0, 1, 1, &up(0, None), &alive));
        let newcomer = d.iter().find(|x| x.0 == 1).unwrap();
        assert!(!newcomer.2.you_write);
        assert_eq!(newcomer.2.recorded, vec![rec]);
        let writer = d.iter().find(|x| x.0 == 0).unwrap();
        assert_eq!(writer.2.gate, 0);
        // The writer dies again: the newcomer, the only one left, writes.
        c.membership(0, &live(&[(1, 1)]));
        let d = downs(&c.ended(0, 0, 0, &live(&[(1, 1)])));
        assert!(d[0].2.you_write && d[0].0 == 1 && d[0].2.epoch == 3);
    }

    #[test]
    fn failures_are_reported_once_per_file() {
        let mut c = Coordinator::new(1, 1);
        let alive = live(&[(0, 0)]);
        c.report(0, 0, 0, &up(0, None), &alive);
        let f = || WriterReport {
            epoch: 1,
            applied: 0,
            failures: vec![Failure {
                path: "/full/out.dat".into(),
                what: "write".into(),
                errno: libc::ENOSPC,
            }],
            ..WriterReport::default()
        };
        let e = c.report(0, 0, 0, &up(1, Some(f())), &alive);
        let damaged: Vec<_> = e
            .iter()
            .filter_map(|e| match e {
                Effect::Damaged { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(damaged.len(), 1);
        assert!(damaged[0].contains("/full/out.dat") && damaged[0].contains("ENOSPC"));
        let e = c.report(0, 0, 0, &up(1, Some(f())), &alive);
        assert!(!e.iter().any(|e| matches!(e, Effect::Damaged { .. })));
    }

    #[test]
    fn verification_names_the_first_write_that_differs() {
        let mut c = Coordinator::new(1, 2);
        let alive = live(&[(0, 0), (1, 0)]);
        let wr = |seq, hash: u8| Written {
            seq,
            path: "/o".into(),
            offset: seq * 10,
            len: 10,
            hash: [hash; 16],
        };
        let report = |produced, written: Vec<Written>| {
            protocol::encode(&Up {
                produced,
                written,
                ..Up::default()
            })
        };
        c.report(0, 0, 0, &report(2, vec![wr(1, 1), wr(2, 2)]), &alive);
        let e = c.report(0, 1, 0, &report(1, vec![wr(1, 1)]), &alive);
        assert!(!e.iter().any(|e| matches!(e, Effect::Mismatch { .. })));
        let e = c.report(0, 1, 0, &report(2, vec![wr(2, 9)]), &alive);
        let m: Vec<_> = e
            .iter()
            .filter_map(|e| match e {
                Effect::Mismatch { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(m.len(), 1, "{e:?}");
        assert!(m[0].contains("/o at offset 20"), "{}", m[0]);
    }
}
