//! The application's side of regeneration: `Communicator::checkpoint` marks a point of
//! the program and hands over its state; `Universe::restored` gives a regenerated
//! replica that state back. A regenerated replica's runtime is restored from its
//! sibling's latest snapshot during `initialize`, before the program runs.
//!
//! Owns the application's part of snapshots (its state, the record of communicator
//! splits, the output marks that keep a restored replica's output lines numbered like its
//! siblings'). Must never decide which sibling serves a snapshot (the engine does) nor
//! touch sockets. Keeps one spare allocation of a snapshot's size for the next
//! checkpoint (at most one more copy of the latest snapshot in memory), never a
//! snapshot the engine still holds.

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde::Serialize;

use volpex_proto::checkpoint::Snapshot;
use volpex_proto::handshake::JobKey;
use volpex_proto::pull::SnapshotAnswer;

use super::universe::Inner;
use super::{Communicator, Universe};
use crate::bootstrap::handover;
use crate::error::Error;
use crate::transport::{Core, Runtime};

impl Communicator {
    /// Marks a consistent point of the program and hands over its state: a replica of
    /// this rank regenerated later starts from here (`Universe::restored`) instead of
    /// replaying the program from its start, and sender logs may drop what it will never
    /// ask for again. Call it at the same point in every replica (it is part of the
    /// program, like a send), with no request outstanding; it does not communicate.
    /// `state` is everything the program needs to go on from here. Without regeneration
    /// (`-r 1`, `--regenerate never`) nothing restores it but a handover, so it is encoded
    /// only after a preemption notice.
    pub fn checkpoint<T: Serialize>(&self, state: &T) -> Result<(), Error> {
        let inner = &self.inner;
        let number = inner.checkpoints.load(Ordering::Relaxed) + 1;
        {
            let mut core = inner.rt.lock();
            let runtime = core.engine.checkpoint_state().map_err(Error::Usage)?;
            // A preemption notice came: this checkpoint is handed over (see
            // `bootstrap::handover`).
            let draining = core.drain().draining() && inner.launched;
            // The mark goes out before any sibling can restore this checkpoint (and
            // mark the restore in its own output).
            if inner.launched {
                output_mark("checkpoint", number);
            }
            // Without regeneration only a handover restores a snapshot, so the state is
            // encoded (a copy of all of it) only for one: NPB FT class A on one process
            // ran 5% faster without its three.
            let kept = if core.engine.regenerates_from_siblings() || draining {
                let snapshot = Snapshot {
                    number,
                    runtime,
                    splits: inner.splits.lock().clone(),
                    sends: inner.sends.load(Ordering::Relaxed),
                    files: volpex_files::snapshot(),
                    app: Vec::new(),
                };
                let bytes = snapshot
                    .encode_with(state, SPARE.take_free())
                    .map_err(Error::CheckpointState)?;
                core.engine
                    .checkpoint_taken(number, bytes.clone(), &snapshot.runtime);
                SPARE.handed(bytes.clone());
                core.flush();
                Some(bytes)
            } else {
                None
            };
            core.drain().checkpointed();
            // Draining, the snapshot was kept; handing it over returns only if that is
            // impossible.
            if let Some(bytes) = kept.filter(|_| draining) {
                let Err(e) = hand_over(&mut core, number, bytes);
                log::warn!("cannot hand over at checkpoint {number}: {e}");
            }
        }
        inner.checkpoints.store(number, Ordering::Relaxed);
        Ok(())
    }
}

/// This draining replica took checkpoint `number` (`snapshot`) and stops here: its
/// snapshot and log are served to its next incarnation (`bootstrap::handover`), the
/// launcher is told where, and the loop serves peers until the process exits. Returns
/// only if the handover cannot be offered.
fn hand_over(core: &mut Core, number: u64, snapshot: Bytes) -> Result<Infallible, String> {
    let (ip, h) = core.handover(number, snapshot)?;
    let addr = handover::serve(
        ip,
        *core.key(),
        (core.engine.me(), core.incarnation()),
        h,
        core.config().tcp_congestion.as_deref(),
        core.drain(),
    )
    .map_err(|e| format!("cannot serve the handover: {e}"))?;
    core.serve_handed_over(number, addr)
}

/// The allocation the next checkpoint encodes into (a fresh one of tens of megabytes
/// costs a page fault per page, more than the encoding itself): the previous snapshot's,
/// once the engine has let go of it and nothing else holds it (a sibling's transfer).
static SPARE: Spare = Spare(Mutex::new((None, Vec::new())));

/// The snapshot handed to the engine last, and a free buffer.
struct Spare(Mutex<(Option<Bytes>, Vec<u8>)>);

impl Spare {
    /// The free buffer (empty when there is none).
    fn take_free(&self) -> Vec<u8> {
        std::mem::take(&mut self.0.lock().1)
    }

    /// `bytes` was just handed to the engine, which let go of the snapshot handed before:
    /// that one's allocation becomes the free buffer if nothing else holds it.
    fn handed(&self, bytes: Bytes) {
        let mut spare = self.0.lock();
        if let Some(Ok(free)) = spare.0.replace(bytes).map(Bytes::try_into_mut) {
            spare.1 = Vec::from(free);
        }
    }
}

impl Universe {
    /// The state this replica's rank handed over at its latest checkpoint, when this
    /// process is a regenerated replica restored from it; `None` in every other process
    /// (a first incarnation, or one that replays the program from its start). A restored
    /// replica must call it before it communicates, then go on from the checkpointed
    /// point; communicators made before the checkpoint are made again by the same calls
    /// (they are answered from the snapshot, without communicating).
    pub fn restored<T: DeserializeOwned>(&self) -> Result<Option<T>, Error> {
        let Some(app) = self.inner.restored_state.lock().take() else {
            return Ok(None);
        };
        self.inner.awaiting_restore.store(false, Ordering::Relaxed);
        postcard::from_bytes(&app)
            .map(Some)
            .map_err(|e| Error::RestoreState(e.to_string()))
    }

    /// Whether this process is a regenerated replica (restored from a checkpoint, or
    /// replaying the program from its start).
    pub fn regenerated(&self) -> bool {
        self.inner.regenerated
    }
}

impl Inner {
    /// A regenerated replica that got its sibling's snapshot must call `restored` before
    /// it communicates: its counters are the snapshot's already.
    pub(crate) fn check_restored(&self) -> Result<(), Error> {
        if self.awaiting_restore.load(Ordering::Relaxed) {
            return Err(Error::NotRestored);
        }
        Ok(())
    }
}

/// A new incarnation started to take over from a draining predecessor
/// (`VOLPEX_HANDOVER`): fetches the snapshot it stopped at and its sender log, restores
/// both into `core` (before the event loop runs: no pull is served from the empty log)
/// and confirms, so the predecessor exits. `None` without a handover, or when it cannot
/// be fetched (the predecessor is gone): the caller restores from a sibling instead.
pub(crate) fn take_handover(
    core: &mut Core,
    addr: SocketAddr,
    key: &JobKey,
    incarnation: u32,
    timeout: Duration,
) -> Result<Option<Snapshot>, Error> {
    let me = core.engine.me();
    let (h, stream) = match handover::fetch(addr, key, me, incarnation, timeout) {
        Ok(got) => got,
        Err(e) => {
            log::warn!("no handover from the draining predecessor at {addr} ({e}); restoring from a sibling");
            return Ok(None);
        }
    };
    let snapshot = Snapshot::decode(&h.snapshot).map_err(Error::RestoreState)?;
    core.catch_up_at_least(h.receives);
    let now = core.now();
    core.engine
        .restore(now, h.number, h.snapshot.clone(), &snapshot.runtime);
    core.engine.import_log(h.log).map_err(Error::RestoreState)?;
    core.drain().checkpointed();
    if let Err(e) = handover::confirm(stream) {
        log::warn!("could not confirm the handover to {addr}: {e}");
    }
    log::info!(
        "took over from the draining predecessor at checkpoint {}",
        h.number
    );
    Ok(Some(snapshot))
}

/// Fetches the latest snapshot from the oldest caught-up live sibling and restores the
/// runtime from it; returns it (`None`: no sibling has one, the program replays from its
/// start).
pub(crate) fn fetch_and_restore(rt: &Runtime) -> Result<Option<Snapshot>, Error> {
    let mut core = rt.lock();
    loop {
        if !core.engine.ask_snapshot() {
            log::info!("no live sibling to restore from: replaying from the start");
            return Ok(None);
        }
        core.flush();
        let answer = core
            .drive_until(
                |c| match c.engine.snapshot_answer() {
                    SnapshotAnswer::Waiting => None,
                    other => Some(other),
                },
                &mut [],
            )
            .map_err(Error::EventLoop)?;
        match answer {
            SnapshotAnswer::Waiting | SnapshotAnswer::Lost => continue,
            SnapshotAnswer::None { receives } => {
                // The launcher's target may predate the sibling's first counter report.
                core.catch_up_at_least(receives);
                return Ok(None);
            }
            SnapshotAnswer::Got {
                number,
                bytes,
                receives,
                log,
            } => {
                core.catch_up_at_least(receives);
                let snapshot = Snapshot::decode(&bytes).map_err(Error::RestoreState)?;
                let now = core.now();
                core.engine.restore(now, number, bytes, &snapshot.runtime);
                core.engine.adopt_log(log).map_err(Error::RestoreState)?;
                core.flush();
                core.drain().checkpointed();
                log::info!("restored checkpoint {number}");
                return Ok(Some(snapshot));
            }
        }
    }
}

/// Marks the point of a checkpoint (or of a restore) in the output streams, so the
/// launcher numbers a restored replica's lines like its siblings' (see
/// `volpex_proto::launch::output_mark`).
pub(crate) fn output_mark(what: &str, number: u64) {
    let mark = volpex_proto::launch::output_mark(what, number);
    let mut out = std::io::stdout().lock();
    let _ = out.flush();
    let _ = writeln!(out, "{mark}");
    let _ = out.flush();
    let _ = writeln!(std::io::stderr().lock(), "{mark}");
}
