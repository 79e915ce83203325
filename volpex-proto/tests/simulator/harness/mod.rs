//! The seeded simulator: N ranks x R replicas of `volpex_proto::pull::Engine` in one process,
//! a fake clock, and the programs they run. After every step it checks that every
//! completed receive got exactly the message a failure-free run delivers for it, exactly
//! once (`checks`); for ranks that receive with wildcards, that every replica of the rank
//! matched the same message at every receive. At the end, that every replica still able
//! to run finished.
//!
//! Parts: `programs` (random message schedules and the per-rank programs that run them),
//! `network` (links with random delays, FIFO per link like TCP unless told to reorder;
//! killed, silenced and fenced replicas, cut links, a stand-in launcher), `regen` (the
//! launcher's regenerations: kill, death notice, a new incarnation replaying the program,
//! JOINING and ALIVE), `checks` (the exactly-once, in-order and same-choices checks). This file holds the `Sim` type, its
//! step loop, and the helpers scenarios share (`cfg`, `seeds`, `any_replica`).
//!
//! Everything random comes from one `ChaCha8Rng` seeded by the run's seed, so a failing
//! run replays from the seed its panic message names.

mod checks;
mod network;
mod programs;
mod regen;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::time::Duration;

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::config::Config;
use volpex_proto::message::matching::{Mode, RecvId, RecvSpec, Source, TagSel};
use volpex_proto::message::{Key, ReplicaId};
use volpex_proto::pull::Engine;
use volpex_proto::wire::Frame;

use programs::{content, digest, programs, Op, Recv};
pub use programs::{Msg, COMM};
pub use regen::{Regeneration, When};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Life {
    Running,
    Killed,
    Silenced,
    Retired,
}

pub struct Replica {
    pub engine: Engine,
    pub pc: usize,
    /// Posted receives of the current op: id -> (receive ordinal, global message a
    /// failure-free exact run delivers).
    pub waiting: BTreeMap<RecvId, (usize, usize)>,
    pub posted: bool,
    /// Receives posted so far.
    pub receives: usize,
    pub life: Life,
    pub completed: HashSet<Key>,
    /// The key each receive matched, by ordinal.
    pub matched: HashMap<usize, Key>,
    /// (global message, sender digest) of every message received.
    pub digests: Vec<(usize, u64)>,
    pub slowness: u32,
    /// Its incarnation (0: the first; see `regen`).
    pub inc: u32,
    /// A new incarnation replaying the program: the receives (engine `stats().receives`)
    /// at which it has caught up (the stand-in launcher's rule, see `regen`).
    pub catch_up: Option<u64>,
    /// The death of this incarnation was announced to the others.
    pub announced: bool,
}

impl Replica {
    fn new(engine: Engine, inc: u32, slowness: u32) -> Replica {
        Replica {
            engine,
            pc: 0,
            waiting: BTreeMap::new(),
            posted: false,
            receives: 0,
            life: Life::Running,
            completed: HashSet::new(),
            matched: HashMap::new(),
            digests: Vec::new(),
            slowness,
            inc,
            catch_up: None,
            announced: false,
        }
    }
}

#[derive(Default, Clone)]
pub struct Faults {
    /// (replica, at, death notice after) kills.
    pub kills: Vec<(ReplicaId, Duration, Option<Duration>)>,
    /// (replica, from, until) silences; `until` None = forever.
    pub silences: Vec<(ReplicaId, Duration, Option<Duration>)>,
    /// Cut links (both directions), from time zero.
    pub cuts: Vec<(ReplicaId, ReplicaId)>,
    pub may_retire: bool,
    /// Links do not keep order: each frame takes its own random delay (what a replica
    /// pair sees while its frames move from one connection to another).
    pub reorder: bool,
    /// Kills followed by new incarnations in the same slot, in order per slot (`regen`).
    pub regenerations: Vec<Regeneration>,
    /// A new incarnation may retire with "rank N cannot be regenerated" while it catches
    /// up (a replay log too small, a sibling killed during catch-up); no other retirement.
    pub regeneration_may_fail: bool,
}

pub struct Sim {
    pub seed: u64,
    pub rng: ChaCha8Rng,
    pub now: Duration,
    pub r: u32,
    pub schedule: Vec<Msg>,
    pub progs: Vec<Vec<Op>>,
    pub reps: Vec<Replica>,
    pub net: BinaryHeap<Reverse<(Duration, u64)>>,
    /// Frames in flight: (from, its incarnation, to, the incarnation it was meant for,
    /// frame). Frames from or to a replaced incarnation are dropped (the transport
    /// closes their connections).
    pub frames: HashMap<u64, InFlight>,
    pub next_frame: u64,
    pub link_free: HashMap<(ReplicaId, ReplicaId), Duration>,
    pub faults: Faults,
    /// Death notices: (when, replica, incarnation).
    pub notices: Vec<(Duration, ReplicaId, u32)>,
    pub data_frames: u64,
    /// How each rank receives.
    pub modes: Vec<Recv>,
    /// Per global message: receives its sender completes before sending it.
    pub receives_before: Vec<usize>,
    /// Global message number of each key.
    pub by_key: HashMap<Key, usize>,
    pub fenced: u64,
    /// `faults.kills` that struck.
    pub kills_done: Vec<bool>,
    /// The launcher's progress through `faults.regenerations`.
    pub regen: Vec<regen::Progress>,
    /// ALIVE notices: (when, replica, incarnation).
    pub alive: Vec<(Duration, ReplicaId, u32)>,
    pub cfg: Config,
    /// Key of every global message.
    pub keys: Vec<Key>,
    /// Key of the `order`-th message from `src` to `dst`: (src, dst, order).
    pub by_order: HashMap<(u32, u32, u64), Key>,
    /// Regeneration outcomes and counters (see `regen::Tally`).
    pub tally: regen::Tally,
    /// Who served the DATA each replica took for a key: (replica index, key) -> (server,
    /// its incarnation). For failure messages.
    pub servers: HashMap<(usize, Key), (ReplicaId, u32)>,
    /// `VOLPEX_SIM_TRACE` set: print the launcher's doings.
    pub trace: bool,
}

pub type InFlight = (ReplicaId, u32, ReplicaId, u32, Frame);

impl Sim {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        seed: u64,
        ranks: u32,
        r: u32,
        msgs: usize,
        max_len: usize,
        cfg: Config,
        faults: Faults,
        wildcards: bool,
    ) -> Sim {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (schedule, progs) = programs(&mut rng, ranks, msgs, max_len);
        let modes = (0..ranks)
            .map(|_| match (wildcards, rng.random_range(0..4)) {
                (false, _) | (true, 0) => Recv::Exact,
                (true, 1) => Recv::AnySource,
                (true, 2) => Recv::AnyTag,
                (true, _) => Recv::AnyBoth,
            })
            .collect();
        let mut receives_before = vec![0; schedule.len()];
        for p in &progs {
            let mut n = 0;
            for op in p {
                match op {
                    Op::Send(g) => receives_before[*g] = n,
                    Op::Recv(list) => n += list.len(),
                }
            }
        }
        let mut seqs: HashMap<(i32, u32, u32), u64> = HashMap::new();
        let keys: Vec<Key> = schedule
            .iter()
            .map(|m| {
                let seq = seqs.entry((m.tag, m.src, m.dst)).or_insert(0);
                let key = Key {
                    comm: COMM,
                    tag: m.tag,
                    src: m.src,
                    dst: m.dst,
                    seq: *seq,
                };
                *seq += 1;
                key
            })
            .collect();
        let by_key = keys.iter().enumerate().map(|(g, k)| (*k, g)).collect();
        let mut orders: HashMap<(u32, u32), u64> = HashMap::new();
        let by_order = keys
            .iter()
            .map(|k| {
                let o = orders.entry((k.src, k.dst)).or_insert(0);
                *o += 1;
                ((k.src, k.dst, *o - 1), *k)
            })
            .collect();
        let reps = (0..ranks * r)
            .map(|i| {
                let engine = Engine::new(ReplicaId::new(i / r, i % r), ranks, r, cfg.clone());
                Replica::new(engine, 0, rng.random_range(1..=4))
            })
            .collect();
        let kills_done = vec![false; faults.kills.len()];
        let regen = vec![regen::Progress::default(); faults.regenerations.len()];
        Sim {
            seed,
            rng,
            now: Duration::ZERO,
            r,
            schedule,
            progs,
            reps,
            net: BinaryHeap::new(),
            frames: HashMap::new(),
            next_frame: 0,
            link_free: HashMap::new(),
            faults,
            notices: Vec::new(),
            data_frames: 0,
            modes,
            receives_before,
            by_key,
            fenced: 0,
            kills_done,
            regen,
            alive: Vec::new(),
            cfg,
            keys,
            by_order,
            tally: regen::Tally::default(),
            servers: HashMap::new(),
            trace: std::env::var_os("VOLPEX_SIM_TRACE").is_some(),
        }
        .with_engine_log()
    }

    pub fn idx(&self, id: ReplicaId) -> usize {
        (id.rank * self.r + id.replica) as usize
    }

    /// `VOLPEX_SIM_LOG=<filter>` prints the engines' own log (replaying one seed).
    fn with_engine_log(self) -> Sim {
        if std::env::var_os("VOLPEX_SIM_LOG").is_some() {
            let _ = env_logger::Builder::from_env(env_logger::Env::new().filter("VOLPEX_SIM_LOG"))
                .is_test(true)
                .try_init();
        }
        self
    }

    pub fn trace(&self, what: impl FnOnce() -> String) {
        if self.trace {
            eprintln!("t={:?}: {}", self.now, what());
        }
    }

    pub fn fail(&self, what: String) -> ! {
        panic!("seed {}: t={:?}: {what}", self.seed, self.now)
    }

    /// Runs one program step of replica `i` if it can make progress.
    pub fn step(&mut self, i: usize) -> bool {
        let rank = (i as u32) / self.r;
        let Some(op) = self.progs[rank as usize].get(self.reps[i].pc).cloned() else {
            return false;
        };
        let now = self.now;
        // A turn of the driver starts with the pulls ahead of the message taken last.
        self.reps[i].engine.speculate_pending(now);
        let progressed = match op {
            Op::Send(g) => {
                let m = self.schedule[g].clone();
                let before = self.receives_before[g];
                let keys: Vec<Key> = (0..before)
                    .filter_map(|o| self.reps[i].matched.get(&o).copied())
                    .collect();
                if keys.len() != before {
                    self.fail(format!(
                        "sending message {g} before its {before} receives completed"
                    ));
                }
                let mut payload = content(g, &m);
                payload.extend_from_slice(&digest(&keys).to_le_bytes());
                let payload = Bytes::from(payload);
                match self.reps[i].engine.send(now, COMM, m.tag, m.dst, payload) {
                    Ok(_) => {
                        self.reps[i].pc += 1;
                        if self.reps[i].inc > 0 {
                            self.count_resend(g);
                        }
                        true
                    }
                    Err(_) => false, // log full: try again later
                }
            }
            Op::Recv(list) => {
                if !self.reps[i].posted {
                    for g in list {
                        let m = &self.schedule[g];
                        let all: Vec<u32> = (0..self.progs.len() as u32).collect();
                        let (src, tag) = match self.modes[rank as usize] {
                            Recv::Exact => (Source::Rank(m.src), TagSel::Tag(m.tag)),
                            Recv::AnySource => (Source::Any(all.into()), TagSel::Tag(m.tag)),
                            Recv::AnyTag => (Source::Rank(m.src), TagSel::Any),
                            Recv::AnyBoth => (Source::Any(all.into()), TagSel::Any),
                        };
                        let spec = RecvSpec {
                            comm: COMM,
                            src,
                            tag,
                        };
                        let id = self.reps[i].engine.post(now, spec, Mode::Receive);
                        let ordinal = self.reps[i].receives;
                        self.reps[i].receives += 1;
                        self.reps[i].waiting.insert(id, (ordinal, g));
                    }
                    self.reps[i].posted = true;
                }
                self.check_completions(i);
                if self.reps[i].waiting.is_empty() {
                    self.reps[i].posted = false;
                    self.reps[i].pc += 1;
                    true
                } else {
                    false
                }
            }
        };
        self.collect(i);
        progressed
    }

    pub fn runnable(&self, i: usize) -> bool {
        self.reps[i].life == Life::Running
    }

    pub fn done(&self, i: usize) -> bool {
        self.reps[i].pc >= self.progs[(i as u32 / self.r) as usize].len()
    }

    pub fn fire_timers(&mut self) {
        for i in 0..self.reps.len() {
            if self.runnable(i)
                && self.reps[i]
                    .engine
                    .poll_timeout()
                    .is_some_and(|t| t <= self.now)
            {
                self.reps[i].engine.speculate_pending(self.now);
                self.reps[i].engine.handle_timeout(self.now);
                self.collect(i);
                self.check_completions(i);
            }
        }
    }

    pub fn finished(&self) -> bool {
        (0..self.reps.len()).all(|i| !self.runnable(i) || self.done(i)) && self.regen_settled()
    }

    /// Failovers all replicas made.
    pub fn failovers(&self) -> u64 {
        self.reps.iter().map(|r| r.engine.stats().failovers).sum()
    }

    /// Replicas that a fault stopped before they finished.
    pub fn cut_short(&self) -> usize {
        (0..self.reps.len())
            .filter(|&i| !self.done(i) && self.reps[i].life != Life::Running)
            .count()
    }

    /// Runs to completion or fails with the seed.
    pub fn run(&mut self, limit: Duration) {
        for i in 0..self.reps.len() {
            self.reps[i].engine.start(Duration::ZERO);
            self.collect(i);
        }
        let mut steps = 0u64;
        while !self.finished() {
            steps += 1;
            if self.now > limit || steps > 5_000_000 {
                let stuck: Vec<String> = (0..self.reps.len())
                    .filter(|&i| self.runnable(i) && !self.done(i))
                    .map(|i| {
                        format!(
                            "{} at op {} of {} waiting {:?}",
                            self.reps[i].engine.me(),
                            self.reps[i].pc,
                            self.progs[i / self.r as usize].len(),
                            self.reps[i]
                                .waiting
                                .values()
                                .map(|&(o, g)| (o, g, self.keys[g]))
                                .collect::<Vec<_>>()
                        )
                    })
                    .collect();
                self.fail(format!("no progress: {stuck:?}"));
            }
            self.apply_faults();
            self.deliver_due();
            self.fire_timers();
            self.check_catch_up();
            // Let a few random replicas run; slow ones run less often.
            let mut progressed = false;
            for _ in 0..self.reps.len() {
                let i = self.rng.random_range(0..self.reps.len());
                if self.runnable(i) && self.rng.random_range(0..self.reps[i].slowness) == 0 {
                    while self.step(i) {
                        progressed = true;
                    }
                }
            }
            if !progressed {
                // Jump to the next thing that can happen.
                let mut next = self.now + Duration::from_micros(self.rng.random_range(10..200));
                if let Some(&Reverse((at, _))) = self.net.peek() {
                    next = next.min(at.max(self.now));
                }
                for i in 0..self.reps.len() {
                    if self.runnable(i) {
                        if let Some(t) = self.reps[i].engine.poll_timeout() {
                            next = next.min(t.max(self.now));
                        }
                    }
                }
                self.now = next.max(self.now + Duration::from_micros(1));
            }
        }
        // Let the network drain, then look for results delivered twice.
        let end = self.now + Duration::from_secs(1);
        while self.now < end {
            self.apply_faults();
            self.deliver_due();
            self.fire_timers();
            self.check_catch_up();
            self.now += Duration::from_millis(1);
        }
        self.check_no_leftovers();
        self.check_effects();
    }
}

pub fn cfg() -> Config {
    Config {
        hedge_timeout: Duration::from_millis(50),
        ack_timeout: Duration::from_millis(500),
        ..Config::default()
    }
}

pub fn seeds(n: u64, salt: u64) -> Vec<u64> {
    match std::env::var("VOLPEX_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(s) => vec![s],
        None => (0..n).map(|i| i * 1_000_003 + salt).collect(),
    }
}

pub fn any_replica(rng: &mut ChaCha8Rng, ranks: u32, r: u32) -> ReplicaId {
    ReplicaId::new(rng.random_range(0..ranks), rng.random_range(0..r))
}
