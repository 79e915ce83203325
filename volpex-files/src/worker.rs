//! The files thread of a replica: opens the files connection to the launcher, applies
//! the journal while this replica is its rank's writer, and reports.
//!
//! The writer applies entries in order, as far as they may go: one that changes bytes
//! already in a file waits until every live replica has produced it (`Down::gate`), one
//! whose outcome was decided from the file system waits until the launcher recorded that
//! outcome (`Down::recorded_through`). Reports go out at once when someone waits for
//! them (an outcome, a full journal, a send), else at most every millisecond from the
//! writer and every 5 ms from the others.
//!
//! Owns the thread and the connection's sender (the writer's `Applier` is the layer's:
//! the program's thread applies a write itself when nothing is pending); must never
//! hold the state while it does I/O.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::apply::Applied;
use crate::journal::{Entry, Gate};
use crate::layer::{shared, Link, State};
use crate::protocol::{self, Seq, Up, WriterReport};
use crate::real;

/// Entries applied in one batch, at most (and bytes).
const BATCH_ENTRIES: usize = 1024;
const BATCH_BYTES: usize = 8 << 20;
/// How often reports go out when nothing waits for them.
const REPORT_WRITER: Duration = Duration::from_millis(1);
const REPORT_OTHERS: Duration = Duration::from_millis(5);
/// The longest the thread sleeps.
const IDLE: Duration = Duration::from_millis(100);

/// Starts the thread.
pub(crate) fn start() {
    let spawned = std::thread::Builder::new()
        .name("volpex-files".into())
        .spawn(|| crate::layer::inside_thread(run));
    if let Err(e) = spawned {
        log::error!("cannot start the files thread: {e}");
        crate::layer::link_lost(&format!("no files thread: {e}"));
    }
}

fn run() {
    let Some(sh) = shared() else { return };
    loop {
        let mut g = sh.state.lock();
        if let Link::Idle(c) = &mut g.link {
            if let Some(connect) = c.take() {
                drop(g);
                let r = connect();
                let mut g = sh.state.lock();
                match r {
                    Ok(s) => g.link = Link::Up(Arc::new(s)),
                    Err(e) => {
                        g.link = Link::Down;
                        g.problem = Some(format!(
                            "cannot open the files connection to volpexrun: {e}"
                        ));
                        log::error!(
                            "replica {}.{}: cannot open the files connection to volpexrun: {e}",
                            g.id.rank,
                            g.id.replica
                        );
                    }
                }
                sh.cond.notify_all();
                continue;
            }
        }
        let batch = if g.role.writing && g.problem.is_none() {
            batch(&g)
        } else {
            Vec::new()
        };
        // A name changes (rename, unlink, mkdir, rmdir) under the state's lock: a read
        // of the file system's copy of a file then never finds it moved while the
        // journal says it is not.
        if let [e] = batch.as_slice() {
            if e.op.renames() {
                let a = sh.applier.lock().apply(e);
                g.note_applied(vec![(e.seq, e.trace, a)]);
                sh.cond.notify_all();
                continue;
            }
        }
        let now = Instant::now();
        let (report, wake) = report(&mut g, now);
        if batch.is_empty() && report.is_none() {
            if g.outbox.problem_sent {
                // Said why: this replica retires.
                let code = g.id.retire_code;
                sh.applier.lock().close_all();
                real::exit_now(code);
            }
            sh.cond.wait_for(&mut g, wake.unwrap_or(IDLE).min(IDLE));
            continue;
        }
        let sender = match &g.link {
            Link::Up(s) => Some(s.clone()),
            Link::Idle(_) | Link::Down => None,
        };
        drop(g);
        if let (Some(bytes), Some(s)) = (report, sender) {
            if let Err(e) = s(&bytes) {
                crate::layer::link_lost(&e.to_string());
            }
        }
        if batch.is_empty() {
            continue;
        }
        let done: Vec<(Seq, u64, Applied)> = {
            let mut applier = sh.applier.lock();
            batch
                .iter()
                .map(|e| (e.seq, e.trace, applier.apply(e)))
                .collect()
        };
        let mut g = sh.state.lock();
        g.note_applied(done);
        sh.cond.notify_all();
    }
}

/// The entries the writer may apply now, in order.
fn batch(g: &State) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut bytes = 0;
    let hole = g.deferred.keys().next().copied();
    for e in g.journal.after(g.own_applied) {
        // A write made without its bytes (`layer::write_deferred`) comes first.
        if hole.is_some_and(|h| e.seq > h) {
            break;
        }
        if e.gate == Gate::Everyone && g.role.gate < e.seq {
            break;
        }
        if e.recorded_first && g.role.recorded_through < e.seq {
            break;
        }
        // A name change goes alone (see `run`).
        if e.op.renames() && !out.is_empty() {
            break;
        }
        bytes += e.bytes();
        out.push(e.clone());
        if out.len() >= BATCH_ENTRIES || bytes >= BATCH_BYTES || e.op.renames() {
            break;
        }
    }
    out
}

/// The report to send now, if one is due; else when the next one will be.
fn report(g: &mut State, now: Instant) -> (Option<Vec<u8>>, Option<Duration>) {
    if !matches!(g.link, Link::Up(_)) {
        return (None, None);
    }
    if g.role.writing && !g.pending() {
        g.own_applied = g.own_applied.max(g.applied_through());
        g.retain();
    }
    let applied = if g.role.writing { g.own_applied } else { 0 };
    // An operation still deciding its outcome is not produced yet for the others: the
    // writer applies a creation, a truncation or a removal only once every live replica
    // has produced it, and a replica that decided after that would read the change.
    let produced = g.done_through();
    let state = (produced, applied, g.finished);
    if !g.outbox.dirty && state == g.outbox.sent {
        return (None, None);
    }
    let every = if g.outbox.urgent
        || (g.problem.is_some() && !g.outbox.problem_sent)
        || g.outbox.last_sent.is_none()
    {
        Duration::ZERO
    } else if g.role.writing && applied != g.outbox.sent.1 {
        REPORT_WRITER
    } else {
        REPORT_OTHERS
    };
    if let Some(last) = g.outbox.last_sent {
        let due = last + every;
        if due > now {
            return (None, Some(due - now));
        }
    }
    let writer = g.role.writing.then(|| WriterReport {
        epoch: g.role.epoch,
        applied,
        recorded: std::mem::take(&mut g.outbox.recorded),
        mutated: std::mem::take(&mut g.outbox.mutated),
        failures: std::mem::take(&mut g.outbox.failures),
    });
    let up = Up {
        produced,
        finished: g.finished,
        writer,
        written: std::mem::take(&mut g.outbox.written),
        unseen: std::mem::take(&mut g.outbox.unseen),
        problem: if g.outbox.problem_sent {
            None
        } else {
            g.problem.clone()
        },
    };
    g.outbox.problem_sent = up.problem.is_some();
    g.outbox.dirty = false;
    g.outbox.urgent = false;
    g.outbox.last_sent = Some(now);
    g.outbox.sent = state;
    (Some(protocol::encode(&up)), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::{Config, Identity, Link, State};

    fn follower() -> State {
        let id = Identity {
            rank: 0,
            replica: 1,
            incarnation: 0,
            retire_code: 75,
        };
        let cfg = Config {
            journal_bytes_max: 1 << 16,
            verify: false,
        };
        State::new(
            id,
            cfg,
            Link::Up(std::sync::Arc::new(Box::new(|_| Ok(())))),
            || {},
        )
    }

    fn produced(g: &mut State) -> Option<Seq> {
        let (bytes, _) = report(g, Instant::now());
        bytes
            .and_then(|b| protocol::decode::<Up>(&b))
            .map(|up| up.produced)
    }

    /// A writer that took over holding a write it made without its bytes
    /// (`layer::write_deferred`) applies nothing after it and reports nothing from it on
    /// as applied, until its program gives the bytes (`layer::fill`).
    #[test]
    fn a_write_made_without_its_bytes_holds_back_what_comes_after_it() {
        let mut g = follower();
        g.role.heard = true;
        g.role.writing = true;
        g.role.gate = Seq::MAX;
        // Operation 1 made without its bytes; operation 2 an ordinary write, kept.
        g.produced = 2;
        g.deferred.insert(
            1,
            crate::layer::Ticket {
                trace: 0,
                file: 7,
                offset: 0,
                len: 4,
                gate: Gate::Free,
            },
        );
        let e = g
            .model
            .write_entry(2, 7, 4, Arc::new(vec![1; 4]), Gate::Free);
        g.journal.push(e);
        assert!(batch(&g).is_empty());
        let applied = |g: &mut State| {
            g.outbox.dirty = true;
            g.outbox.last_sent = None;
            let (bytes, _) = report(g, Instant::now());
            bytes
                .and_then(|b| protocol::decode::<Up>(&b))
                .and_then(|up| up.writer)
                .map(|w| w.applied)
        };
        assert_eq!(applied(&mut g), Some(0));
        // Resolved (its writer's report came after all), what follows goes.
        g.deferred.clear();
        assert_eq!(batch(&g).iter().map(|e| e.seq).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn an_operation_deciding_its_outcome_is_not_reported_produced() {
        let mut g = follower();
        // Operation 1 numbered, its outcome not decided yet (waiting for the launcher's
        // first answer): the writer must not apply it yet.
        g.produced = 1;
        g.in_flight = true;
        g.outbox.dirty = true;
        assert_eq!(produced(&mut g), Some(0));
        // Decided: now it is produced, and reported even though nothing else changed.
        g.in_flight = false;
        g.outbox.last_sent = None;
        assert_eq!(produced(&mut g), Some(1));
    }
}
