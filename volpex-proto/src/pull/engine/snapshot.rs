//! Checkpoints in the engine: taking the runtime's state at a quiet point, restoring a
//! sibling's, telling senders how far a checkpoint reaches (CHECKPOINTED, so their logs
//! let go of what no restored replica will ask for), and moving snapshots between
//! siblings (SNAPSHOT_ASK, SNAPSHOT) with the sender-log entries sent before them. Never
//! decides when a checkpoint is taken nor what the application's part holds
//! (`checkpoint`, `comm`).

use std::time::Duration;

use bytes::Bytes;

use super::outbox::Outbox;
use super::receive::to_replicas_of;
use super::Engine;
use crate::checkpoint::RuntimeState;
use crate::limits::FRAME_PAYLOAD_BYTES_MAX;
use crate::message::{ReplicaId, ReqId, SendLog};
use crate::pull::decision::DECISION_CTX;
use crate::replica::Liveness;
use crate::wire::Frame;

/// A sibling's answer to SNAPSHOT_ASK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotAnswer {
    /// Not answered yet, and the sibling asked is alive.
    Waiting,
    /// The sibling asked died first: ask another.
    Lost,
    /// The sibling has taken no checkpoint; it has received `receives` messages.
    None {
        /// Messages the sibling has received so far.
        receives: u64,
    },
    /// Checkpoint `number`, encoded.
    Got {
        /// Which checkpoint.
        number: u64,
        /// The encoded snapshot.
        bytes: Bytes,
        /// Messages the sibling has received so far.
        receives: u64,
        /// The sibling's sender-log entries sent before the checkpoint (for
        /// `Engine::adopt_log`).
        log: Bytes,
    },
}

/// A SNAPSHOT_ASK out: to whom, its id, and the answer (number, sibling's receives,
/// bytes, log entries) once in.
type Asked = (ReplicaId, ReqId, Option<(u64, u64, Bytes, Bytes)>);

/// Snapshot traffic of one replica.
#[derive(Debug, Default)]
pub(super) struct Snapshots {
    /// The latest checkpoint taken (or restored) here: its number and encoding.
    latest: Option<(u64, Bytes)>,
    /// Checkpoint watermarks of the latest checkpoint, (comm, src, watermark), told to
    /// senders again when this replica becomes an ordinary live one.
    marks: Vec<(u32, u32, u64)>,
    /// Next order number per (comm, dst) at the latest checkpoint: the log entries below
    /// go with the snapshot to a sibling restored from it.
    sent: Vec<((u32, u32), u64)>,
    /// The SNAPSHOT_ASK this replica has out.
    asked: Option<Asked>,
}

impl Snapshots {
    /// Tells the senders of every stream the latest checkpoint reaches how far it does
    /// (again when this replica becomes an ordinary live one: senders counted it from
    /// nothing while it caught up): CHECKPOINTED to every usable replica of each sender.
    pub(super) fn tell_checkpoint(
        &self,
        me: ReplicaId,
        replicas: u32,
        liveness: &Liveness,
        out: &mut Outbox,
    ) {
        for &(comm, src, watermark) in &self.marks {
            let dst = me.rank;
            to_replicas_of(me, replicas, liveness, out, src, || Frame::Checkpointed {
                comm,
                src,
                dst,
                watermark,
            });
        }
    }

    /// What this replica sent before its latest checkpoint and still holds, for a sibling
    /// restored from it (`SendLog::export_sent_before`); empty when there is no checkpoint,
    /// or when it would not fit in one frame with the snapshot's `snapshot_bytes`.
    fn sent_before(&self, me: ReplicaId, log: &SendLog, snapshot_bytes: usize) -> Bytes {
        if self.latest.is_none() {
            return Bytes::new();
        }
        match log.export_sent_before(&self.sent) {
            Ok(b) if snapshot_bytes + b.len() <= FRAME_PAYLOAD_BYTES_MAX => Bytes::from(b),
            Ok(b) => {
                log::warn!(
                    "{me}: the {} bytes sent before the checkpoint do not fit in the snapshot answer; a restored sibling will not serve them",
                    b.len()
                );
                Bytes::new()
            }
            Err(e) => {
                log::warn!("{me}: the log entries sent before the checkpoint did not encode: {e}");
                Bytes::new()
            }
        }
    }

    /// A snapshot frame from `from`: SNAPSHOT_ASK is answered with the latest
    /// checkpoint, the log entries sent before it and how many messages this replica
    /// received (`receives`), SNAPSHOT answers ours, CHECKPOINTED tells the log how far a
    /// receiver's checkpoint reaches.
    pub(super) fn handle(
        &mut self,
        me: ReplicaId,
        from: ReplicaId,
        frame: Frame,
        receives: u64,
        log: &mut SendLog,
        out: &mut Outbox,
    ) {
        match frame {
            Frame::SnapshotAsk { req } => {
                if from.rank != me.rank {
                    log::warn!("{me}: SNAPSHOT_ASK from {from} ignored");
                    return;
                }
                let (number, payload) = self.latest.clone().unwrap_or_default();
                let log = self.sent_before(me, log, payload.len());
                out.send(
                    from,
                    Frame::Snapshot {
                        req,
                        number,
                        receives,
                        payload,
                        log,
                    },
                );
            }
            Frame::Snapshot {
                req,
                number,
                receives,
                payload,
                log,
            } => match &mut self.asked {
                Some((to, r, answer @ None)) if *to == from && *r == req => {
                    *answer = Some((number, receives, payload, log));
                }
                _ => log::debug!("{me}: unexpected SNAPSHOT from {from}"),
            },
            Frame::Checkpointed {
                comm,
                src,
                dst,
                watermark,
            } => {
                if src == me.rank && dst == from.rank {
                    log.note_checkpoint(comm, dst, from.replica, watermark);
                } else {
                    log::debug!("{me}: CHECKPOINTED from {from} for {src}->{dst} ignored");
                }
            }
            other => log::warn!("{me}: {other:?} is not a snapshot frame"),
        }
    }
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
        self.snapshots.sent = state.next_order.clone();
        self.snapshots
            .tell_checkpoint(self.me, self.replicas, &self.liveness, &mut self.out);
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
        self.receiving().tell_consumed();
        self.stand(now);
        self.drain_loopback(now);
    }

    /// The sender log encoded for a handover (`SendLog::export`).
    pub fn export_log(&self) -> Result<Vec<u8>, String> {
        self.log.export()
    }

    /// Takes over a draining predecessor's sender log (`SendLog::import`), after
    /// `restore` of the snapshot it stopped at.
    pub fn import_log(&mut self, bytes: Bytes) -> Result<(), String> {
        self.log.import(bytes)
    }

    /// Takes the log entries a sibling sent before the checkpoint restored here
    /// (`SnapshotAnswer::Got::log`, `SendLog::adopt`), after `restore`: this replica then
    /// serves them as its sibling does, should the sibling die before their destinations
    /// received them.
    pub fn adopt_log(&mut self, bytes: Bytes) -> Result<(), String> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.log.adopt(bytes)
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
            Some((_, _, Some((0, receives, _, _)))) => SnapshotAnswer::None {
                receives: *receives,
            },
            Some((_, _, Some((number, receives, bytes, log)))) => SnapshotAnswer::Got {
                number: *number,
                bytes: bytes.clone(),
                receives: *receives,
                log: log.clone(),
            },
            Some((to, _, None)) if !self.liveness.is_usable(*to) => SnapshotAnswer::Lost,
            Some((_, _, None)) => SnapshotAnswer::Waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::SnapshotAnswer;
    use crate::checkpoint::Snapshot;
    use crate::config::Config;
    use crate::message::matching::{Matched, Mode, RecvSpec, Source, TagSel};
    use crate::message::ReplicaId;
    use crate::pull::Engine;
    use crate::wire::Frame;

    const COMM: u32 = 8;

    /// Moves every frame between the engines until none is left, then lets a tenth of a
    /// second pass (timers: consumption notices) and moves those.
    fn settle(engines: &mut [(ReplicaId, Engine)], now: &mut Duration) {
        deliver(engines, *now);
        *now += Duration::from_millis(100);
        for (_, e) in engines.iter_mut() {
            e.handle_timeout(*now);
        }
        deliver(engines, *now);
    }

    fn deliver(engines: &mut [(ReplicaId, Engine)], now: Duration) {
        loop {
            let mut frames = Vec::new();
            for (from, e) in engines.iter_mut() {
                while let Some((to, f)) = e.poll_transmit().or_else(|| e.poll_deferred()) {
                    frames.push((*from, to, f));
                }
            }
            if frames.is_empty() {
                return;
            }
            for (from, to, f) in frames {
                if let Some((_, e)) = engines.iter_mut().find(|(id, _)| *id == to) {
                    e.handle_frame(now, from, f);
                }
            }
        }
    }

    fn receive(engines: &mut [(ReplicaId, Engine)], at: usize, now: &mut Duration) -> Bytes {
        let spec = RecvSpec {
            comm: COMM,
            src: Source::Rank(0),
            tag: TagSel::Tag(3),
        };
        let id = engines[at].1.post(*now, spec, Mode::Receive);
        settle(engines, now);
        match engines[at].1.take(*now, id) {
            Some(Ok(Matched::Message { payload, .. })) => payload,
            other => panic!("receive at {} did not complete: {other:?}", engines[at].0),
        }
    }

    /// The configuration with regeneration on, and the ids and started engines of a
    /// 2-rank, 2-replica job under it.
    fn two_ranks_of_two_regenerating(
        now: Duration,
    ) -> (Config, [ReplicaId; 4], Vec<(ReplicaId, Engine)>) {
        let cfg = Config {
            regenerate: true,
            ..Config::default()
        };
        let ids = [(0, 0), (0, 1), (1, 0), (1, 1)].map(|(r, k)| ReplicaId::new(r, k));
        let engines = ids
            .map(|id| {
                let mut e = Engine::new(id, 2, 2, cfg.clone());
                e.start(now);
                (id, e)
            })
            .into();
        (cfg, ids, engines)
    }

    /// A regenerated replica restores its sibling's checkpoint and receives exactly the
    /// messages after it. Senders keep what every live replica received until the
    /// checkpoints of all replicas are past it (then the entries below go), so what the
    /// new incarnation needs after the checkpoint is still there.
    #[test]
    fn a_restored_incarnation_goes_on_from_its_siblings_checkpoint() {
        let mut now = Duration::from_secs(1);
        let (cfg, ids, mut engines) = two_ranks_of_two_regenerating(now);
        for i in 0..5u8 {
            for (_, sender) in engines.iter_mut().take(2) {
                sender
                    .send(now, COMM, 3, 1, Bytes::from(vec![i; 4]))
                    .expect("room in the log");
            }
        }
        for _ in 0..3 {
            receive(&mut engines, 2, &mut now);
            receive(&mut engines, 3, &mut now);
        }
        let state = engines[3].1.checkpoint_state().expect("quiet point");
        // What the checkpoint covers from rank 0: the 3 messages received, and those of
        // the next ones that arrived already (pulled ahead), which it carries.
        let covered = state
            .received
            .iter()
            .find(|r| r.comm == COMM && r.src == 0)
            .map_or(0, |r| r.watermark);
        assert!((3..=5).contains(&covered), "{covered}");
        let snapshot = Snapshot {
            number: 1,
            runtime: state.clone(),
            ..Default::default()
        };
        let bytes = snapshot.encode().expect("encodes");
        engines[3].1.checkpoint_taken(1, bytes, &state);
        settle(&mut engines, &mut now);

        // Replica 1.0 dies; its new incarnation joins.
        let dead = ids[2];
        for (_, e) in engines.iter_mut() {
            e.handle_peer_down(now, dead, true);
        }
        let incs = vec![vec![0, 0], vec![1, 0]];
        let mut fresh = Engine::joining(dead, 2, 2, cfg.clone(), &incs);
        fresh.set_catching_up(true);
        fresh.start(now);
        engines[2] = (dead, fresh);
        for (id, e) in engines.iter_mut() {
            if *id != dead {
                e.handle_peer_joining(now, dead, 1, false);
            }
        }
        assert!(engines[2].1.ask_snapshot(), "its sibling is asked");
        settle(&mut engines, &mut now);
        let SnapshotAnswer::Got { number, bytes, .. } = engines[2].1.snapshot_answer() else {
            panic!("no snapshot came");
        };
        let restored = Snapshot::decode(&bytes).expect("decodes");
        assert_eq!(
            engines[0].1.stats().evicted,
            0,
            "held until the new incarnation says where it restored"
        );
        engines[2].1.restore(now, number, bytes, &restored.runtime);
        settle(&mut engines, &mut now);
        // What the checkpoint covers goes, and nothing past it.
        assert_eq!(engines[0].1.stats().evicted, covered);
        assert_eq!(engines[2].1.stats().receives, covered);
        for i in 3..5u8 {
            assert_eq!(receive(&mut engines, 2, &mut now), Bytes::from(vec![i; 4]));
            assert_eq!(receive(&mut engines, 3, &mut now), Bytes::from(vec![i; 4]));
        }
        assert_eq!(engines[2].1.stats().receives, 5);
        // Past the checkpoint: kept for the next regeneration.
        assert_eq!(engines[0].1.stats().evicted, covered);
    }

    /// A replica restored from its sibling's checkpoint serves what its rank sent before
    /// that checkpoint (issue 42): rank 0 sends three messages, replica 0.1 checkpoints,
    /// 0.0 dies and its new incarnation restores 0.1's checkpoint, then 0.1 dies before
    /// either replica of rank 1 received anything. Both receive all three from 0.0's new
    /// incarnation (without the entries in the snapshot answer: GONE, evicted).
    #[test]
    fn a_restored_sender_serves_what_its_sibling_sent_before_the_checkpoint() {
        let mut now = Duration::from_secs(1);
        let (cfg, ids, mut engines) = two_ranks_of_two_regenerating(now);
        for i in 0..3u8 {
            for (_, sender) in engines.iter_mut().take(2) {
                sender
                    .send(now, COMM, 3, 1, Bytes::from(vec![i; 4]))
                    .expect("room in the log");
            }
        }
        let state = engines[1].1.checkpoint_state().expect("quiet point");
        let snapshot = Snapshot {
            number: 1,
            runtime: state.clone(),
            ..Default::default()
        };
        let bytes = snapshot.encode().expect("encodes");
        engines[1].1.checkpoint_taken(1, bytes, &state);
        // One more after the checkpoint: the restored replica sends it again itself.
        engines[1]
            .1
            .send(now, COMM, 3, 1, Bytes::from(vec![3; 4]))
            .expect("room in the log");
        settle(&mut engines, &mut now);

        // Replica 0.0 dies; its new incarnation restores 0.1's checkpoint.
        let dead = ids[0];
        for (_, e) in engines.iter_mut() {
            e.handle_peer_down(now, dead, true);
        }
        let incs = vec![vec![1, 0], vec![0, 0]];
        let mut fresh = Engine::joining(dead, 2, 2, cfg.clone(), &incs);
        fresh.set_catching_up(true);
        fresh.start(now);
        engines[0] = (dead, fresh);
        for (id, e) in engines.iter_mut() {
            if *id != dead {
                e.handle_peer_joining(now, dead, 1, false);
            }
        }
        assert!(engines[0].1.ask_snapshot(), "its sibling is asked");
        settle(&mut engines, &mut now);
        let SnapshotAnswer::Got {
            number, bytes, log, ..
        } = engines[0].1.snapshot_answer()
        else {
            panic!("no snapshot came");
        };
        let restored = Snapshot::decode(&bytes).expect("decodes");
        engines[0].1.restore(now, number, bytes, &restored.runtime);
        engines[0].1.adopt_log(log).expect("the sibling's entries");
        for (_, e) in engines.iter_mut() {
            e.handle_peer_alive(now, dead);
        }
        engines[0]
            .1
            .send(now, COMM, 3, 1, Bytes::from(vec![3; 4]))
            .expect("room in the log");
        settle(&mut engines, &mut now);

        // Replica 0.1 dies before rank 1 received anything.
        let sibling = ids[1];
        engines.remove(1);
        for (_, e) in engines.iter_mut() {
            e.handle_peer_down(now, sibling, true);
        }
        for i in 0..4u8 {
            assert_eq!(receive(&mut engines, 1, &mut now), Bytes::from(vec![i; 4]));
            assert_eq!(receive(&mut engines, 2, &mut now), Bytes::from(vec![i; 4]));
        }
    }

    /// At `-r 1` a draining replica hands its checkpoint over: after `hand_over` it
    /// pulls nothing and reports no receipt, so its sender keeps every message past the
    /// checkpoint (also one the old replica pulled ahead), and the successor restored
    /// from the snapshot receives them all.
    #[test]
    fn a_handed_over_checkpoint_keeps_what_came_after_it() {
        let cfg = Config {
            regenerate: true,
            ..Config::default()
        };
        let mut now = Duration::from_secs(1);
        let ids = [ReplicaId::new(0, 0), ReplicaId::new(1, 0)];
        let mut engines: Vec<(ReplicaId, Engine)> = ids
            .iter()
            .map(|&id| (id, Engine::new(id, 2, 1, cfg.clone())))
            .collect();
        for (_, e) in engines.iter_mut() {
            e.start(now);
        }
        let send = |engines: &mut Vec<(ReplicaId, Engine)>, i: u8, now: Duration| {
            engines[0]
                .1
                .send(now, COMM, 3, 1, Bytes::from(vec![i; 4]))
                .expect("room in the log");
        };
        for i in 0..2u8 {
            send(&mut engines, i, now);
        }
        receive(&mut engines, 1, &mut now);
        let state = engines[1].1.checkpoint_state().expect("quiet point");
        let covered = state
            .received
            .iter()
            .find(|r| r.comm == COMM && r.src == 0)
            .map_or(0, |r| r.watermark);
        let snapshot = Snapshot {
            number: 1,
            runtime: state.clone(),
            ..Default::default()
        };
        let bytes = snapshot.encode().expect("encodes");
        engines[1].1.checkpoint_taken(1, bytes.clone(), &state);
        engines[1].1.hand_over();
        // The old replica stays and would pull ahead; nothing it does reaches rank 0.
        for i in 2..5u8 {
            send(&mut engines, i, now);
        }
        settle(&mut engines, &mut now);
        while let Some((_, f)) = engines[1].1.poll_transmit() {
            assert!(
                !matches!(f, Frame::Pull { .. } | Frame::Consumed { .. }),
                "{f:?} after the handover"
            );
        }
        assert!(engines[0].1.stats().evicted <= covered);
        // Nor may a large one skip the log on its word (`delivered` is what lets it).
        for order in covered..5 {
            assert!(!engines[0].1.delivered(COMM, 1, order), "{order} delivered");
        }

        // Its successor takes over from the snapshot.
        let old = ids[1];
        engines[0].1.handle_peer_down(now, old, true);
        let incs = vec![vec![0], vec![1]];
        let mut fresh = Engine::joining(old, 2, 1, cfg.clone(), &incs);
        fresh.set_catching_up(true);
        fresh.start(now);
        engines[1] = (old, fresh);
        engines[0].1.handle_peer_joining(now, old, 1, false);
        let restored = Snapshot::decode(&bytes).expect("decodes");
        engines[1].1.restore(now, 1, bytes, &restored.runtime);
        settle(&mut engines, &mut now);
        for i in 1..5u8 {
            assert_eq!(receive(&mut engines, 1, &mut now), Bytes::from(vec![i; 4]));
        }
    }
}
