//! A whole small job (3 ranks x 2 replicas of `volpex_proto::pull::Engine`) under attack: its
//! engines talk to each other over an instant, ordered network, run programs of sends,
//! receives and coordinated choices, and get frames that are well formed but hostile
//! (wrong ranks, keys for other destinations, absurd sequence, order and request numbers,
//! wants in the choices' context, CHOICES and DECIDED with garbage entries, TAKEOVER for
//! other ranks, ACK, GONE and CANCEL for what nobody asked, DATA nobody pulled or
//! answering a real pull from the wrong replica), death notices for live replicas, lost
//! connections, and jumps of the clock. Every output is polled after every input.
//!
//! The driver itself asserts what holds for any input: nothing panics, and one input sets
//! at most `CASCADE_MAX` frames moving (no endless exchange between engines). Callers add
//! their own checks between steps (the heap bound in `engine_frames`).
//!
//! Shared with the fuzz target `fuzz/fuzz_targets/engine_frames.rs` (included there by
//! path), so it depends on `volpex` and `bytes` only. Inputs are raw numbers (`Raw`),
//! which `step` maps to plausible but hostile values: the generators stay trivial (any
//! integers from proptest, or from `arbitrary`), and both see the same mix.

use std::collections::VecDeque;
use std::time::Duration;

use volpex_proto::config::Config;
use volpex_proto::message::matching::{Mode, RecvId, RecvSpec, Source, TagSel};
use volpex_proto::message::{Key, ReplicaId, ReqId, Want};
use volpex_proto::pull::decision::encode_match;
use volpex_proto::pull::{ChoiceState, Engine, EngineEvent};
use volpex_proto::wire::Frame;

use super::pick::{bytes, comm, entries, num, rank, tag, want};

/// Ranks of the job under attack.
pub const RANKS: u32 = 3;
/// Replicas of each rank (two, so choices are coordinated and siblings can take over).
pub const REPLICAS: u32 = 2;
/// Largest payload of a hostile DATA frame or of a send.
pub const PAYLOAD_MAX: usize = 4096;
/// The engines' sender log bound: small, so sends fill it.
pub const LOG_BYTES: usize = 32 << 10;
/// Most frames one input may set moving among the engines, answers included.
pub const CASCADE_MAX: usize = 20_000;
/// Most receives and choices one replica keeps posted (the application's side, which a
/// hostile peer does not control).
const POSTED_MAX: usize = 16;

/// One input, as raw numbers; `Job::step` maps it to a `Step`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Raw {
    /// Which engine (modulo their number).
    pub to: u8,
    /// Which peer it comes from or concerns (another engine, modulo their number; from
    /// 248 on, the engine itself or a replica outside the job).
    pub from: u8,
    /// What happens (see `Job::step`).
    pub op: u8,
    /// Field material.
    pub x: [u64; 4],
    /// A length (payloads, entries).
    pub len: u16,
}

/// What an input did, in words the failure message shows.
#[derive(Debug, Clone)]
pub enum Step {
    /// A frame from an authenticated peer.
    Frame {
        to: ReplicaId,
        from: ReplicaId,
        frame: Frame,
    },
    /// A death notice (`confirmed`, to every engine: the launcher ended `peer`) or one
    /// engine's connection to `peer` failing.
    PeerDown {
        to: ReplicaId,
        peer: ReplicaId,
        confirmed: bool,
    },
    /// The clock moves on; every engine with a due timer handles it.
    Tick { by: Duration },
    /// Every live replica of `rank` sends (the same program runs in every replica).
    Send {
        rank: u32,
        tag: i32,
        dst: u32,
        len: usize,
    },
    /// Every live replica of `rank` posts a receive.
    Post { rank: u32, spec: RecvSpec },
    /// Every live replica of `rank` asks for a coordinated choice.
    Choose { rank: u32 },
}

/// What the driver counted; callers may bound more of it.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    /// Frames moved between engines, answers to hostile frames included.
    pub frames: usize,
    /// Most frames one input set moving.
    pub cascade_max: usize,
    /// Hostile frames delivered.
    pub hostile: usize,
    /// Fence and retire events.
    pub events: usize,
    /// Receives and choices completed.
    pub completed: usize,
    /// Payload bytes the inputs brought in (hostile DATA, sends).
    pub payload_bytes: usize,
}

struct Replica {
    engine: Engine,
    alive: bool,
    posted: Vec<RecvId>,
    choices: Vec<u64>,
}

/// The job under attack.
pub struct Job {
    now: Duration,
    reps: Vec<Replica>,
    /// Pulls the engines sent lately: (asker, sender asked, want, req), for DATA, ACK,
    /// GONE and CANCEL that hit something real.
    recent: VecDeque<(ReplicaId, ReplicaId, Want, ReqId)>,
    /// Frames in flight between engines.
    wire: VecDeque<(ReplicaId, ReplicaId, Frame)>,
    /// Replicas outside the job the launcher announced dead (at most once each).
    outsiders_gone: Vec<ReplicaId>,
    /// What happened so far.
    pub counts: Counts,
}

impl Job {
    /// The job, every engine started and its first frames delivered.
    pub fn new() -> Job {
        let cfg = Config {
            log_bytes_max: LOG_BYTES,
            hedge_timeout: Duration::from_millis(5),
            ack_timeout: Duration::from_millis(50),
            ack_delay: Duration::from_micros(100),
            consumed_interval: Duration::from_millis(2),
            ..Config::default()
        };
        let reps = (0..RANKS * REPLICAS)
            .map(|i| Replica {
                engine: Engine::new(
                    ReplicaId::new(i / REPLICAS, i % REPLICAS),
                    RANKS,
                    REPLICAS,
                    cfg.clone(),
                ),
                alive: true,
                posted: Vec::new(),
                choices: Vec::new(),
            })
            .collect();
        let mut job = Job {
            now: Duration::ZERO,
            reps,
            recent: VecDeque::new(),
            wire: VecDeque::new(),
            outsiders_gone: Vec::new(),
            counts: Counts::default(),
        };
        for i in 0..job.reps.len() {
            job.reps[i].engine.start(Duration::ZERO);
        }
        job.settle();
        job
    }

    fn id(i: usize) -> ReplicaId {
        ReplicaId::new(i as u32 / REPLICAS, i as u32 % REPLICAS)
    }

    fn idx(id: ReplicaId) -> usize {
        (id.rank * REPLICAS + id.replica) as usize
    }

    /// Where `id` is, if it is one of the job's replicas.
    fn index(id: ReplicaId) -> Option<usize> {
        (id.rank < RANKS && id.replica < REPLICAS).then(|| Job::idx(id))
    }

    /// The step `raw` stands for, in this job's current state.
    pub fn step_of(&self, raw: &Raw) -> Step {
        let n = self.reps.len();
        let to_i = usize::from(raw.to) % n;
        let from_i = (to_i + 1 + usize::from(raw.from) % (n - 1)) % n;
        let to = Job::id(to_i);
        // Now and then a peer the transport would never name: the engine itself, a rank
        // or replica outside the job.
        let from = match raw.from {
            0..=247 => Job::id(from_i),
            248 | 249 => to,
            250 | 251 => ReplicaId::new(RANKS + u32::from(raw.from % 2), 0),
            252 | 253 => ReplicaId::new(to.rank, REPLICAS + u32::from(raw.from % 2)),
            _ => ReplicaId::new(u32::MAX, u32::MAX),
        };
        let x = &raw.x;
        // A pull an engine really sent, to answer or withdraw in the wrong way.
        let real = (x[3].is_multiple_of(3) && !self.recent.is_empty())
            .then(|| self.recent[(x[3] >> 2) as usize % self.recent.len()]);
        let (want, req) = match real {
            Some((_, _, w, r)) if x[3] & 8 != 0 => (w, r),
            Some((_, _, w, _)) => (w, ReqId(num(x[3] >> 4))),
            None => (want(x), ReqId(num(x[3] >> 4))),
        };
        // Frames about a real pull go to its asker (answers) or its sender (CANCEL).
        let (answer_to, cancel_to) = match real {
            Some((asker, sender, ..)) => (asker, sender),
            None => (to, to),
        };
        let answer_from = if from == answer_to { to } else { from };
        let frame = |to: ReplicaId, from: ReplicaId, frame: Frame| Step::Frame { to, from, frame };
        match raw.op % 16 {
            0 => frame(
                to,
                from,
                Frame::Pull {
                    want,
                    req,
                    consumed: num(x[2] >> 3),
                },
            ),
            1 => {
                let key = match want {
                    Want::Key(k) => k,
                    Want::Order {
                        comm,
                        src,
                        dst,
                        order,
                    } => Key {
                        comm,
                        tag: tag(x[0] >> 16),
                        src,
                        dst,
                        seq: order,
                    },
                };
                frame(
                    answer_to,
                    answer_from,
                    Frame::Data {
                        key,
                        req,
                        order: num(x[2] >> 5),
                        payload: bytes(x[1], usize::from(raw.len) % (PAYLOAD_MAX + 1)),
                        confirm: x[0] & (1 << 41) != 0,
                        late: x[0] & (1 << 42) != 0,
                        sync: x[0] & (1 << 43) != 0,
                    },
                )
            }
            2 => frame(
                answer_to,
                answer_from,
                Frame::Ack {
                    want,
                    req,
                    progress: num(x[2] >> 7),
                },
            ),
            3 if x[2] & 1 == 0 => frame(answer_to, answer_from, Frame::Gone { want, req }),
            3 => frame(answer_to, answer_from, Frame::Ended { want, req }),
            4 if x[2] & 1 == 0 => {
                let from = if from == cancel_to { to } else { from };
                frame(cancel_to, from, Frame::Cancel { want, req })
            }
            4 => {
                // A receiver's MATCHED for one of the sender's messages, real or not.
                let key = match want {
                    Want::Key(k) => k,
                    Want::Order { comm, src, dst, .. } => Key {
                        comm,
                        tag: tag(x[0] >> 16),
                        src,
                        dst,
                        seq: num(x[2] >> 9),
                    },
                };
                frame(cancel_to, from, Frame::Matched { key })
            }
            5 => frame(
                to,
                from,
                Frame::Consumed {
                    comm: comm(x[0]),
                    src: rank(x[1]),
                    dst: rank(x[1] >> 32),
                    watermark: num(x[2]),
                },
            ),
            6 => frame(
                to,
                from,
                Frame::Takeover {
                    rank: rank(x[1]),
                    base: num(x[2]),
                },
            ),
            7 => frame(
                to,
                from,
                Frame::Decided {
                    rank: rank(x[1]),
                    entries: entries(x, raw.len),
                },
            ),
            8 => frame(
                to,
                from,
                Frame::Choices {
                    rank: rank(x[1]),
                    term: num(x[2]) as u32,
                    stable: num(x[2] >> 7),
                    entries: entries(x, raw.len),
                },
            ),
            9 => Step::PeerDown {
                to,
                peer: from,
                confirmed: x[0].is_multiple_of(4),
            },
            10 | 11 => Step::Tick {
                by: Duration::from_micros(match x[0] % 4 {
                    0 => x[1] % 200,
                    1 | 2 => x[1] % 20_000,
                    _ => x[1] % 3_000_000,
                }),
            },
            12 | 13 => Step::Send {
                rank: to.rank,
                tag: (x[0] % 3) as i32,
                dst: (x[1] % u64::from(RANKS)) as u32,
                len: usize::from(raw.len) % (PAYLOAD_MAX + 1),
            },
            14 => {
                let src = match x[0] % 3 {
                    0 => Source::Any((0..RANKS).collect::<Vec<u32>>().into()),
                    _ => Source::Rank((x[1] % u64::from(RANKS)) as u32),
                };
                let tag = match x[2] % 3 {
                    0 => TagSel::Any,
                    _ => TagSel::Tag((x[3] % 3) as i32),
                };
                Step::Post {
                    rank: to.rank,
                    spec: RecvSpec { comm: 0, src, tag },
                }
            }
            _ => Step::Choose { rank: to.rank },
        }
    }

    /// Applies `raw`, then delivers every frame it set moving and polls every output.
    pub fn step(&mut self, raw: &Raw) -> Step {
        let step = self.step_of(raw);
        self.apply(step.clone());
        step
    }

    /// Applies `step`, then delivers every frame it set moving and polls every output.
    pub fn apply(&mut self, step: Step) {
        let before = self.counts.frames;
        let now = self.now;
        match step {
            Step::Frame { to, from, frame } => {
                let i = Job::idx(to);
                if self.reps[i].alive {
                    if let Frame::Data { payload, .. } = &frame {
                        self.counts.payload_bytes += payload.len();
                    }
                    self.counts.hostile += 1;
                    self.reps[i].engine.handle_frame(now, from, frame);
                    self.collect(i);
                }
            }
            Step::PeerDown {
                to,
                peer,
                confirmed,
            } => {
                if confirmed {
                    self.kill(peer);
                } else {
                    let i = Job::idx(to);
                    if self.reps[i].alive {
                        self.reps[i].engine.handle_peer_down(now, peer, false);
                        self.collect(i);
                    }
                }
            }
            Step::Tick { by } => {
                self.now += by;
                for i in 0..self.reps.len() {
                    let due = self.reps[i]
                        .engine
                        .poll_timeout()
                        .is_some_and(|t| t <= self.now);
                    if self.reps[i].alive && due {
                        self.reps[i].engine.handle_timeout(self.now);
                        self.collect(i);
                    }
                }
            }
            Step::Send {
                rank,
                tag,
                dst,
                len,
            } => {
                let payload = bytes(u64::from(rank) << 32 | len as u64, len);
                for i in self.live_of(rank) {
                    // A full log refuses the send (flow control); the program moves on.
                    if self.reps[i]
                        .engine
                        .send(now, 0, tag, dst, payload.clone())
                        .is_ok()
                    {
                        self.counts.payload_bytes += len;
                    }
                    self.collect(i);
                }
            }
            Step::Post { rank, spec } => {
                for i in self.live_of(rank) {
                    if self.reps[i].posted.len() < POSTED_MAX {
                        let id = self.reps[i].engine.post(now, spec.clone(), Mode::Receive);
                        self.reps[i].posted.push(id);
                        self.collect(i);
                    }
                }
            }
            Step::Choose { rank } => {
                for i in self.live_of(rank) {
                    if self.reps[i].choices.len() < POSTED_MAX {
                        if let Some(slot) = self.reps[i].engine.post_choice() {
                            self.reps[i].choices.push(slot);
                        }
                    }
                }
            }
        }
        self.settle();
        let moved = self.counts.frames - before;
        self.counts.cascade_max = self.counts.cascade_max.max(moved);
    }

    fn live_of(&self, rank: u32) -> Vec<usize> {
        (0..REPLICAS)
            .map(|k| Job::idx(ReplicaId::new(rank, k)))
            .filter(|&i| self.reps[i].alive)
            .collect()
    }

    /// The launcher ended `peer`: every engine hears of it.
    fn kill(&mut self, peer: ReplicaId) {
        match Job::index(peer) {
            Some(j) if !self.reps[j].alive => return,
            Some(j) => self.reps[j].alive = false,
            None if self.outsiders_gone.contains(&peer) => return,
            None => self.outsiders_gone.push(peer),
        }
        for i in 0..self.reps.len() {
            if self.reps[i].alive {
                self.reps[i].engine.handle_peer_down(self.now, peer, true);
                self.collect(i);
            }
        }
    }

    /// Polls every output of engine `i`: frames onto the wire, events acted on.
    fn collect(&mut self, i: usize) {
        let me = Job::id(i);
        let e = &mut self.reps[i].engine;
        while let Some((to, f)) = e.poll_transmit().or_else(|| e.poll_deferred()) {
            if let Frame::Pull { want, req, .. } = &f {
                if self.recent.len() == 16 {
                    self.recent.pop_front();
                }
                self.recent.push_back((me, to, *want, *req));
            }
            self.wire.push_back((me, to, f));
        }
        let mut fence = Vec::new();
        while let Some(ev) = e.poll_event() {
            self.counts.events += 1;
            match ev {
                EngineEvent::Retire { .. } => fence.push(me),
                EngineEvent::Fence { peer } => fence.push(peer),
            }
        }
        // A getter, but its code runs on every state this way too.
        let _ = e.poll_timeout();
        for peer in fence {
            self.kill(peer);
        }
    }

    /// Delivers frames until none moves, taking every completed receive and choice on
    /// the way; panics past `CASCADE_MAX` frames.
    fn settle(&mut self) {
        let mut moved = 0usize;
        loop {
            while let Some((from, to, f)) = self.wire.pop_front() {
                moved += 1;
                assert!(
                    moved <= CASCADE_MAX,
                    "one input set more than {CASCADE_MAX} frames moving"
                );
                // Frames to a replica outside the job (one that wrote to an engine) have
                // no connection to go on: dropped.
                let Some(j) = Job::index(to) else { continue };
                if self.reps[Job::idx(from)].alive && self.reps[j].alive {
                    self.reps[j].engine.handle_frame(self.now, from, f);
                    self.collect(j);
                }
            }
            if !self.take_results() {
                break;
            }
        }
        self.counts.frames += moved;
    }

    /// Takes what completed and makes the choices a leader owes; true if that sent
    /// anything.
    fn take_results(&mut self) -> bool {
        let now = self.now;
        for i in 0..self.reps.len() {
            if !self.reps[i].alive {
                continue;
            }
            let rep = &mut self.reps[i];
            let before = rep.posted.len() + rep.choices.len();
            rep.posted.retain(|&id| rep.engine.take(now, id).is_none());
            let mut made = Vec::new();
            rep.choices
                .retain(|&slot| match rep.engine.choice(now, slot) {
                    ChoiceState::Made(_) => false,
                    ChoiceState::Yours => {
                        made.push(slot);
                        false
                    }
                    ChoiceState::Waiting => true,
                });
            for slot in made {
                rep.engine
                    .make_choice(now, slot, encode_match(Some((0, slot as i32 % 3))));
            }
            self.counts.completed += before - rep.posted.len() - rep.choices.len();
            self.collect(i);
        }
        !self.wire.is_empty()
    }
}
