//! Checkpoints in the engine: taking the runtime's state at a quiet point, restoring a
//! sibling's, telling senders how far a checkpoint reaches (CHECKPOINTED, so their logs
//! let go of what no restored replica will ask for), and moving snapshots between
//! siblings (SNAPSHOT_ASK, SNAPSHOT). Never decides when a checkpoint is taken nor what the
//! application's part holds (`checkpoint`, `comm`).

use std::time::Duration;

use bytes::Bytes;

use super::Engine;
use crate::checkpoint::RuntimeState;
use crate::message::{ReplicaId, ReqId};
use crate::pull::decision::DECISION_CTX;
use crate::wire::Frame;

/// A sibling's answer to SNAPSHOT_ASK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotAnswer {
    /// Not answered yet, and the sibling asked is alive.
    Waiting,
    /// The sibling asked died first: ask another.
    Lost,
    /// The sibling has taken no checkpoint.
    None,
    /// Checkpoint `number`, encoded.
    Got {
        /// Which checkpoint.
        number: u64,
        /// The encoded snapshot.
        bytes: Bytes,
    },
}

/// Snapshot traffic of one replica.
#[derive(Debug, Default)]
pub(super) struct Snapshots {
    /// The latest checkpoint taken (or restored) here: its number and encoding.
    latest: Option<(u64, Bytes)>,
    /// Checkpoint watermarks of the latest checkpoint, (comm, src, watermark), told to
    /// senders again when this replica becomes an ordinary live one.
    marks: Vec<(u32, u32, u64)>,
    /// The SNAPSHOT_ASK this replica has out: to whom, its id, and the answer once in.
    asked: Option<(ReplicaId, ReqId, Option<(u64, Bytes)>)>,
}

impl Engine {
    /// The runtime's state for a checkpoint, or why none may be taken here.
    pub fn checkpoint_state(&self) -> Result<RuntimeState, &'static str> {
        if !self.matcher.is_quiet() {
            return Err("a checkpoint needs a point with no request outstanding");
        }
        let (next_seq, next_order) = self.log.progress();
        let (claimed, unreceived) = self.matcher.checkpoint();
        let (next_choice, choices_used_below, choices_used_above) = self.coord.decisions.counters();
        Ok(RuntimeState {
            next_seq,
            next_order,
            claimed,
            unreceived,
            received: self.consumed.tracks(),
            next_choice,
            choices_used_below,
            choices_used_above,
            stats: self.stats(),
        })
    }

    /// Checkpoint `number` (encoded: `bytes`) was taken here with `state`: keep it for
    /// regenerated siblings and tell every sender how far it reaches.
    pub fn checkpoint_taken(&mut self, number: u64, bytes: Bytes, state: &RuntimeState) {
        self.snapshots.latest = Some((number, bytes));
        self.snapshots.marks = state
            .received
            .iter()
            .filter(|r| r.comm != DECISION_CTX)
            .map(|r| (r.comm, r.src, r.watermark))
            .collect();
        self.tell_checkpoint();
    }

    /// Restores a sibling's checkpoint `number` into this fresh engine: numbering,
    /// receive progress, arrived messages, choices used, counters. Senders learn how far
    /// it reaches at once.
    pub fn restore(&mut self, now: Duration, number: u64, bytes: Bytes, state: &RuntimeState) {
        self.log
            .restore_progress(&state.next_seq, &state.next_order);
        self.matcher.restore(&state.claimed, &state.unreceived);
        self.consumed.restore(&state.received);
        self.coord.decisions.restore_counters(
            state.next_choice,
            state.choices_used_below,
            &state.choices_used_above,
        );
        self.stats = state.stats.clone();
        // Pulls made before the restore (the standing one for the next choice) are stale.
        for want in self.fetches.wants(|_, _| true) {
            self.fetches.remove(&want);
        }
        self.checkpoint_taken(number, bytes, state);
        self.tell_consumed();
        self.stand(now);
        self.drain_loopback(now);
    }

    /// Asks the oldest caught-up live sibling for its latest snapshot; false if there is
    /// none to ask.
    pub fn ask_snapshot(&mut self) -> bool {
        let rank = self.me.rank;
        let sibling = (0..self.replicas)
            .map(|k| ReplicaId::new(rank, k))
            .filter(|&r| r != self.me && self.liveness.is_candidate(r))
            .min_by_key(|&r| self.ordinal_of(r));
        let Some(to) = sibling else {
            return false;
        };
        let req = self.fetches.new_req();
        self.snapshots.asked = Some((to, req, None));
        self.out.send(to, Frame::SnapshotAsk { req });
        true
    }

    /// Where the snapshot asked for stands (see `SnapshotAnswer`).
    pub fn snapshot_answer(&mut self) -> SnapshotAnswer {
        match &self.snapshots.asked {
            None => SnapshotAnswer::Lost,
            Some((_, _, Some((0, _)))) => SnapshotAnswer::None,
            Some((_, _, Some((number, bytes)))) => SnapshotAnswer::Got {
                number: *number,
                bytes: bytes.clone(),
            },
            Some((to, _, None)) if !self.liveness.is_usable(*to) => SnapshotAnswer::Lost,
            Some((_, _, None)) => SnapshotAnswer::Waiting,
        }
    }

    /// Tells the senders of every stream the latest checkpoint reaches how far it does.
    fn tell_checkpoint(&mut self) {
        for i in 0..self.snapshots.marks.len() {
            let (comm, src, watermark) = self.snapshots.marks[i];
            for k in 0..self.replicas {
                let to = ReplicaId::new(src, k);
                if to != self.me && self.liveness.is_usable(to) {
                    self.out.send(
                        to,
                        Frame::Checkpointed {
                            comm,
                            src,
                            dst: self.me.rank,
                            watermark,
                        },
                    );
                }
            }
        }
    }

    /// This replica became an ordinary live one: senders hear its checkpoint again (they
    /// counted it from nothing while it caught up).
    pub(super) fn retell_checkpoint(&mut self) {
        self.tell_checkpoint();
    }

    pub(super) fn on_snapshot_frame(&mut self, from: ReplicaId, frame: Frame) {
        match frame {
            Frame::SnapshotAsk { req } => {
                if from.rank != self.me.rank {
                    log::warn!("{}: SNAPSHOT_ASK from {from} ignored", self.me);
                    return;
                }
                let (number, payload) = self.snapshots.latest.clone().unwrap_or_default();
                self.out.send(
                    from,
                    Frame::Snapshot {
                        req,
                        number,
                        payload,
                    },
                );
            }
            Frame::Snapshot {
                req,
                number,
                payload,
            } => match &mut self.snapshots.asked {
                Some((to, r, answer @ None)) if *to == from && *r == req => {
                    *answer = Some((number, payload));
                }
                _ => log::debug!("{}: unexpected SNAPSHOT from {from}", self.me),
            },
            Frame::Checkpointed {
                comm,
                src,
                dst,
                watermark,
            } => {
                if src == self.me.rank && dst == from.rank {
                    self.log.note_checkpoint(comm, dst, from.replica, watermark);
                } else {
                    log::debug!(
                        "{}: CHECKPOINTED from {from} for {src}->{dst} ignored",
                        self.me
                    );
                }
            }
            other => log::warn!("{}: {other:?} is not a snapshot frame", self.me),
        }
    }
}
