//! Seeded simulator for the pull engine: N ranks x R replicas of `volpex::pull::Engine`
//! in one process, a fake clock, and a network with random delays (FIFO per link, like
//! TCP), killed replicas (with or without a death notice), silenced replicas (SIGSTOP:
//! alive but mute) and cut links. A stand-in launcher fences the replicas engines ask it
//! to and announces every death. After every step it checks that every completed receive
//! got exactly the message a failure-free run delivers for it, exactly once; for ranks
//! that receive with wildcards, that every replica of the rank matched the same message
//! at every receive. At the end, that every replica still able to run finished.
//!
//! Reference: DESIGN.md "Pull protocol", "Sender log", "Failure detection", "Testing".
//! Replay one seed with `VOLPEX_SIM_SEED=<seed> cargo test -p volpex --test simulator`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::time::Duration;

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex::config::{Config, UNLOGGED_BYTES_MIN};
use volpex::message::matching::{Matched, Mode, RecvId, RecvSpec, Source, TagSel};
use volpex::message::{Key, ReplicaId, ReqId};
use volpex::pull::{ChoiceState, Engine, EngineEvent, WriteAhead};
use volpex::wire::Frame;

const COMM: u32 = 0;

/// One step of a rank's program. Every replica of the rank runs the same program.
#[derive(Debug, Clone)]
enum Op {
    /// Send global message `msg`.
    Send(usize),
    /// Post receives for these global messages (in this order), then wait for all.
    Recv(Vec<usize>),
}

/// How a rank receives: every receive of a wildcard rank uses the same kind, so any
/// choice of matches consumes exactly the messages sent to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recv {
    /// From the message's source with its tag.
    Exact,
    /// `ANY_SOURCE` with the message's tag.
    AnySource,
    /// The message's source with `ANY_TAG`.
    AnyTag,
    /// `ANY_SOURCE` and `ANY_TAG`.
    AnyBoth,
}

#[derive(Debug, Clone)]
struct Msg {
    src: u32,
    dst: u32,
    tag: i32,
    len: usize,
}

fn content(g: usize, m: &Msg) -> Vec<u8> {
    (0..m.len)
        .map(|i| (g as u64 * 31 + i as u64 * 7 + m.tag as u64) as u8)
        .collect()
}

/// What a sender's matches so far hash to; every message carries the digest of its
/// sender replica's matches, so effects of a choice that did not survive show up.
fn digest(keys: &[Key]) -> u64 {
    keys.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, k| {
        let x = (u64::from(k.src) << 40) ^ (u64::from(k.tag as u32) << 20) ^ k.seq;
        (h ^ x).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A random schedule of messages and, per rank, a program that cannot deadlock with
/// buffered sends: every rank sends and receives in global message order, except that
/// consecutive receives are sometimes posted together with their tags reordered.
fn programs(
    rng: &mut ChaCha8Rng,
    ranks: u32,
    msgs: usize,
    max_len: usize,
) -> (Vec<Msg>, Vec<Vec<Op>>) {
    let schedule: Vec<Msg> = (0..msgs)
        .map(|_| Msg {
            src: rng.random_range(0..ranks),
            dst: rng.random_range(0..ranks),
            tag: rng.random_range(0..3),
            len: if rng.random_bool(0.05) {
                max_len
            } else {
                rng.random_range(0..=max_len / 4)
            },
        })
        .collect();
    let mut progs = vec![Vec::new(); ranks as usize];
    for (g, m) in schedule.iter().enumerate() {
        progs[m.src as usize].push(Op::Send(g));
        let p = &mut progs[m.dst as usize];
        let batch = rng.random_bool(0.4);
        match p.last_mut() {
            Some(Op::Recv(list)) if batch && list.len() < 4 => list.push(g),
            _ => p.push(Op::Recv(vec![g])),
        }
    }
    // Post batched receives tag by tag, highest tag first: receives with different tags
    // complete out of send order; the same (src, tag) keeps its order.
    for p in progs.iter_mut() {
        for op in p.iter_mut() {
            if let Op::Recv(list) = op {
                list.sort_by_key(|g| Reverse(schedule[*g].tag));
            }
        }
    }
    (schedule, progs)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Life {
    Running,
    Killed,
    Silenced,
    Retired,
}

struct Replica {
    engine: Engine,
    pc: usize,
    /// Posted receives of the current op: id -> (receive ordinal, global message a
    /// failure-free exact run delivers).
    waiting: BTreeMap<RecvId, (usize, usize)>,
    posted: bool,
    /// Receives posted so far.
    receives: usize,
    life: Life,
    completed: HashSet<Key>,
    /// The key each receive matched, by ordinal.
    matched: HashMap<usize, Key>,
    /// (global message, sender digest) of every message received.
    digests: Vec<(usize, u64)>,
    slowness: u32,
}

#[derive(Default, Clone)]
struct Faults {
    /// (replica, at, death notice after) kills.
    kills: Vec<(ReplicaId, Duration, Option<Duration>)>,
    /// (replica, from, until) silences; `until` None = forever.
    silences: Vec<(ReplicaId, Duration, Option<Duration>)>,
    /// Cut links (both directions), from time zero.
    cuts: Vec<(ReplicaId, ReplicaId)>,
    may_retire: bool,
    /// Links do not keep order: each frame takes its own random delay (what a replica
    /// pair sees while its frames move from one connection to another).
    reorder: bool,
}

struct Sim {
    seed: u64,
    rng: ChaCha8Rng,
    now: Duration,
    r: u32,
    schedule: Vec<Msg>,
    progs: Vec<Vec<Op>>,
    reps: Vec<Replica>,
    net: BinaryHeap<Reverse<(Duration, u64)>>,
    frames: HashMap<u64, (ReplicaId, ReplicaId, Frame)>,
    next_frame: u64,
    link_free: HashMap<(ReplicaId, ReplicaId), Duration>,
    faults: Faults,
    notices: Vec<(Duration, ReplicaId)>,
    data_frames: u64,
    /// How each rank receives.
    modes: Vec<Recv>,
    /// Per global message: receives its sender completes before sending it.
    receives_before: Vec<usize>,
    /// Global message number of each key.
    by_key: HashMap<Key, usize>,
    fenced: u64,
}

impl Sim {
    #[allow(clippy::too_many_arguments)]
    fn new(
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
        let by_key = schedule
            .iter()
            .enumerate()
            .map(|(g, m)| {
                let seq = seqs.entry((m.tag, m.src, m.dst)).or_insert(0);
                let key = Key {
                    comm: COMM,
                    tag: m.tag,
                    src: m.src,
                    dst: m.dst,
                    seq: *seq,
                };
                *seq += 1;
                (key, g)
            })
            .collect();
        let reps = (0..ranks * r)
            .map(|i| Replica {
                engine: Engine::new(ReplicaId::new(i / r, i % r), ranks, r, cfg.clone()),
                pc: 0,
                waiting: BTreeMap::new(),
                posted: false,
                receives: 0,
                life: Life::Running,
                completed: HashSet::new(),
                matched: HashMap::new(),
                digests: Vec::new(),
                slowness: rng.random_range(1..=4),
            })
            .collect();
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
        }
    }

    fn idx(&self, id: ReplicaId) -> usize {
        (id.rank * self.r + id.replica) as usize
    }

    fn fail(&self, what: String) -> ! {
        panic!("seed {}: t={:?}: {what}", self.seed, self.now)
    }

    fn cut(&self, a: ReplicaId, b: ReplicaId) -> bool {
        self.faults
            .cuts
            .iter()
            .any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
    }

    /// Moves everything replica `i` wants to transmit onto the network.
    fn collect(&mut self, i: usize) {
        let from = self.reps[i].engine.me();
        // Deferred frames leave with the next write; here they simply go now, after the
        // urgent ones.
        let mut out = Vec::new();
        while let Some(f) = self.reps[i].engine.poll_transmit() {
            out.push(f);
        }
        while let Some(f) = self.reps[i].engine.poll_deferred() {
            out.push(f);
        }
        for (to, frame) in out {
            if self.cut(from, to) {
                continue;
            }
            if matches!(frame, Frame::Data { .. }) {
                self.data_frames += 1;
            }
            let delay = Duration::from_micros(self.rng.random_range(20..400));
            let free = match self.faults.reorder {
                true => Duration::ZERO,
                false => self.link_free.get(&(from, to)).copied().unwrap_or_default(),
            };
            let at = (self.now + delay).max(free);
            self.link_free.insert((from, to), at);
            let id = self.next_frame;
            self.next_frame += 1;
            self.frames.insert(id, (from, to, frame));
            self.net.push(Reverse((at, id)));
        }
        while let Some(ev) = self.reps[i].engine.poll_event() {
            match ev {
                EngineEvent::Retire { reason } => {
                    if !self.faults.may_retire {
                        self.fail(format!("unexpected retirement: {reason}"));
                    }
                    self.reps[i].life = Life::Retired;
                    // The launcher tells everyone, as for any replica that is gone.
                    self.notices.push((self.now, from));
                }
                EngineEvent::Fence { peer } => {
                    if peer == from {
                        self.fail(format!("{from} asked to fence itself"));
                    }
                    // The launcher ends it (if it still runs) and announces its death.
                    let j = self.idx(peer);
                    if matches!(self.reps[j].life, Life::Running | Life::Silenced) {
                        self.reps[j].life = Life::Killed;
                        self.fenced += 1;
                    }
                    self.notices.push((self.now, peer));
                }
            }
        }
    }

    /// Runs one program step of replica `i` if it can make progress.
    fn step(&mut self, i: usize) -> bool {
        let rank = (i as u32) / self.r;
        let Some(op) = self.progs[rank as usize].get(self.reps[i].pc).cloned() else {
            return false;
        };
        let now = self.now;
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

    fn check_completions(&mut self, i: usize) {
        let ids: Vec<RecvId> = self.reps[i].waiting.keys().copied().collect();
        let rank = i / self.r as usize;
        for id in ids {
            let Some(&(ordinal, g)) = self.reps[i].waiting.get(&id) else {
                continue;
            };
            let Some(res) = self.reps[i].engine.take(self.now, id) else {
                continue;
            };
            let who = self.reps[i].engine.me();
            match res {
                Ok(Matched::Message { key, payload }) => {
                    let Some(&got) = self.by_key.get(&key) else {
                        self.fail(format!("replica {who} matched {key}, which nobody sent"));
                    };
                    if self.modes[rank] == Recv::Exact && got != g {
                        self.fail(format!("replica {who} got message {got}, not {g}"));
                    }
                    let body = content(got, &self.schedule[got]);
                    let sent_digest = payload
                        .get(body.len()..)
                        .and_then(|d| <[u8; 8]>::try_from(d).ok())
                        .map(u64::from_le_bytes);
                    let (Some(sent_digest), true) = (sent_digest, payload.starts_with(&body))
                    else {
                        self.fail(format!(
                            "replica {who} got the wrong data for {key} (message {got})"
                        ));
                    };
                    self.reps[i].digests.push((got, sent_digest));
                    if !self.reps[i].completed.insert(key) {
                        self.fail(format!("replica {who} completed {key} twice"));
                    }
                    // Every live replica of the rank matches the same message at each
                    // receive (a dead one may have made a choice nobody saw).
                    for k in 0..self.r as usize {
                        let other = rank * self.r as usize + k;
                        if !self.runnable(other) {
                            continue;
                        }
                        if let Some(&theirs) = self.reps[other].matched.get(&ordinal) {
                            if theirs != key {
                                self.fail(format!(
                                    "replica {who} matched {key} at receive {ordinal}, a sibling {theirs}"
                                ));
                            }
                        }
                    }
                    self.reps[i].matched.insert(ordinal, key);
                    self.reps[i].waiting.remove(&id);
                }
                Ok(Matched::Nothing) => {
                    self.fail(format!("replica {who}: a receive matched nothing"))
                }
                Err(e) => {
                    if !(self.faults.may_retire && self.reps[i].life == Life::Retired) {
                        self.fail(format!("replica {who}: receive {ordinal} failed: {e}"));
                    }
                    self.reps[i].waiting.clear();
                }
            }
        }
    }

    fn runnable(&self, i: usize) -> bool {
        self.reps[i].life == Life::Running
    }

    fn done(&self, i: usize) -> bool {
        self.reps[i].pc >= self.progs[(i as u32 / self.r) as usize].len()
    }

    fn apply_faults(&mut self) {
        let now = self.now;
        for (id, at, notice) in self.faults.kills.clone() {
            let i = self.idx(id);
            if now >= at && self.reps[i].life == Life::Running {
                self.reps[i].life = Life::Killed;
                if let Some(d) = notice {
                    self.notices.push((now + d, id));
                }
            }
        }
        for (id, from, until) in self.faults.silences.clone() {
            let i = self.idx(id);
            let silenced = now >= from && until.is_none_or(|u| now < u);
            match (self.reps[i].life, silenced) {
                (Life::Running, true) => self.reps[i].life = Life::Silenced,
                (Life::Silenced, false) => self.reps[i].life = Life::Running,
                _ => {}
            }
        }
        let due: Vec<ReplicaId> = self
            .notices
            .iter()
            .filter(|(t, _)| *t <= now)
            .map(|(_, id)| *id)
            .collect();
        self.notices.retain(|(t, _)| *t > now);
        for dead in due {
            for i in 0..self.reps.len() {
                if self.runnable(i) {
                    self.reps[i].engine.handle_peer_down(now, dead, true);
                    self.collect(i);
                }
            }
        }
    }

    fn deliver_due(&mut self) {
        while let Some(&Reverse((at, id))) = self.net.peek() {
            if at > self.now {
                return;
            }
            self.net.pop();
            let Some((from, to, frame)) = self.frames.remove(&id) else {
                continue;
            };
            let i = self.idx(to);
            match self.reps[i].life {
                Life::Running => {
                    self.reps[i].engine.handle_frame(self.now, from, frame);
                    self.collect(i);
                    self.check_completions(i);
                }
                // A stopped process keeps its socket: the frame waits for it.
                Life::Silenced => {
                    let later = self.now + Duration::from_millis(1);
                    self.frames.insert(id, (from, to, frame));
                    self.net.push(Reverse((later, id)));
                    return;
                }
                Life::Killed | Life::Retired => {}
            }
        }
    }

    fn fire_timers(&mut self) {
        for i in 0..self.reps.len() {
            if self.runnable(i)
                && self.reps[i]
                    .engine
                    .poll_timeout()
                    .is_some_and(|t| t <= self.now)
            {
                self.reps[i].engine.handle_timeout(self.now);
                self.collect(i);
                self.check_completions(i);
            }
        }
    }

    fn finished(&self) -> bool {
        (0..self.reps.len()).all(|i| !self.runnable(i) || self.done(i))
    }

    /// Nothing may complete a second time: no result is left behind.
    fn check_no_leftovers(&mut self) {
        for i in 0..self.reps.len() {
            let ids: Vec<RecvId> = self.reps[i].waiting.keys().copied().collect();
            for id in ids {
                if self.runnable(i) && self.reps[i].engine.take(self.now, id).is_some() {
                    let who = self.reps[i].engine.me();
                    self.fail(format!("replica {who} completed {id:?} after the run"));
                }
            }
        }
    }

    /// Failovers all replicas made.
    fn failovers(&self) -> u64 {
        self.reps.iter().map(|r| r.engine.stats().failovers).sum()
    }

    /// Replicas that a fault stopped before they finished.
    fn cut_short(&self) -> usize {
        (0..self.reps.len())
            .filter(|&i| !self.done(i) && self.reps[i].life != Life::Running)
            .count()
    }

    /// Every message a surviving replica received carries the digest of the matches its
    /// sender rank made in the end (the replicas that finished agree on them).
    fn check_effects(&self) {
        let r = self.r as usize;
        let mut finals: Vec<Option<&HashMap<usize, Key>>> = vec![None; self.progs.len()];
        for (i, rep) in self.reps.iter().enumerate() {
            if self.runnable(i) && self.done(i) {
                let rank = i / r;
                if let Some(other) = finals[rank] {
                    if other != &rep.matched {
                        self.fail(format!(
                            "finished replicas of rank {rank} matched differently"
                        ));
                    }
                }
                finals[rank] = Some(&rep.matched);
            }
        }
        // A replica that died may have seen choices that died with it (the new leader may
        // decide those slots anew, see `pull::foreign`): only the survivors must agree.
        for rep in self.reps.iter().filter(|rep| rep.life == Life::Running) {
            for &(g, got) in &rep.digests {
                let src = self.schedule[g].src as usize;
                let Some(matched) = finals[src] else { continue };
                let keys: Vec<Key> = (0..self.receives_before[g])
                    .filter_map(|o| matched.get(&o).copied())
                    .collect();
                if digest(&keys) != got {
                    self.fail(format!(
                        "message {g} from rank {src} reflects choices its rank did not keep"
                    ));
                }
            }
        }
    }

    /// Runs to completion or fails with the seed.
    fn run(&mut self, limit: Duration) {
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
                            self.reps[i].waiting.values().collect::<Vec<_>>()
                        )
                    })
                    .collect();
                self.fail(format!("no progress: {stuck:?}"));
            }
            self.apply_faults();
            self.deliver_due();
            self.fire_timers();
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
            self.now += Duration::from_millis(1);
        }
        self.check_no_leftovers();
        self.check_effects();
    }
}

fn cfg() -> Config {
    Config {
        hedge_timeout: Duration::from_millis(50),
        ack_timeout: Duration::from_millis(500),
        ..Config::default()
    }
}

fn seeds(n: u64, salt: u64) -> Vec<u64> {
    match std::env::var("VOLPEX_SIM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(s) => vec![s],
        None => (0..n).map(|i| i * 1_000_003 + salt).collect(),
    }
}

fn any_replica(rng: &mut ChaCha8Rng, ranks: u32, r: u32) -> ReplicaId {
    ReplicaId::new(rng.random_range(0..ranks), rng.random_range(0..r))
}

/// Failure-free runs at every replication degree deliver every message exactly once.
#[test]
fn failure_free_runs_deliver_exactly_once() {
    for seed in seeds(150, 1) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ranks = rng.random_range(1..=5);
        let r = rng.random_range(1..=3);
        let mut sim = Sim::new(seed, ranks, r, 120, 2000, cfg(), Faults::default(), false);
        sim.run(Duration::from_secs(60));
    }
}

/// Without faults and without hedging, each message crosses the network once per
/// receiving replica (r copies, never r x r). DESIGN.md "Pull protocol".
#[test]
fn one_copy_per_receiving_replica() {
    for seed in seeds(60, 2) {
        let cfg = Config {
            hedge_timeout: Duration::from_secs(3600),
            ack_timeout: Duration::from_secs(3600),
            ..Config::default()
        };
        let mut sim = Sim::new(seed, 4, 2, 150, 500, cfg, Faults::default(), false);
        sim.run(Duration::from_secs(60));
        let remote = sim.schedule.iter().filter(|m| m.src != m.dst).count() as u64;
        assert_eq!(sim.data_frames, remote * 2, "seed {seed}");
    }
}

/// Frames between two replicas overtaking each other (the transport's switch from
/// one connection to another can do that) change nothing, with and without wildcards
/// and with a kill.
#[test]
fn reordered_links_change_nothing() {
    for seed in seeds(200, 9) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ranks = rng.random_range(2..=4);
        let r = rng.random_range(1..=3);
        let mut faults = Faults {
            reorder: true,
            ..Faults::default()
        };
        if r > 1 && rng.random_bool(0.5) {
            let at = Duration::from_micros(rng.random_range(0..20_000));
            faults.kills.push((
                any_replica(&mut rng, ranks, r),
                at,
                Some(Duration::from_millis(5)),
            ));
        }
        let wildcards = rng.random_bool(0.5);
        let mut sim = Sim::new(seed, ranks, r, 120, 2000, cfg(), faults, wildcards);
        sim.run(Duration::from_secs(60));
    }
}

/// Kills (with and without death notices), one per rank at most, at random times.
#[test]
fn kills_change_nothing() {
    let (mut runs, mut hit, mut failovers) = (0usize, 0usize, 0u64);
    for seed in seeds(200, 3) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xfeed);
        let ranks = rng.random_range(2..=5);
        let r = rng.random_range(2..=3);
        let mut faults = Faults::default();
        for rank in 0..ranks {
            if rng.random_bool(0.5) {
                // Up to r - 1 replicas of this rank.
                let victims = rng.random_range(1..r);
                for k in 0..victims {
                    let notice = rng
                        .random_bool(0.7)
                        .then(|| Duration::from_micros(rng.random_range(0..20_000)));
                    let at = Duration::from_micros(rng.random_range(0..30_000));
                    faults
                        .kills
                        .push((ReplicaId::new(rank, (k + seed as u32) % r), at, notice));
                }
            }
        }
        let mut sim = Sim::new(seed, ranks, r, 150, 2000, cfg(), faults, seed % 2 == 0);
        sim.run(Duration::from_secs(120));
        runs += 1;
        hit += usize::from(sim.cut_short() > 0);
        failovers += sim.failovers();
    }
    eprintln!("kills: {hit} of {runs} runs lost a replica mid-run; {failovers} failovers");
    assert!(
        runs == 1 || hit * 2 > runs,
        "faults must strike mid-run in most runs"
    );
    assert!(runs == 1 || failovers > 0);
}

/// Silenced (stopped, never continued) replicas and cut links: receivers fail over on
/// timeouts alone. DESIGN.md "Failure detection".
#[test]
fn silences_and_cut_links_change_nothing() {
    let (mut runs, mut hit, mut failovers) = (0usize, 0usize, 0u64);
    for seed in seeds(200, 4) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xbeef);
        let ranks = rng.random_range(2..=5);
        let r = rng.random_range(2..=3);
        let mut faults = Faults::default();
        let silenced = any_replica(&mut rng, ranks, r);
        faults.silences.push((
            silenced,
            Duration::from_micros(rng.random_range(0..20_000)),
            None,
        ));
        // A cut between two other replicas of different ranks.
        for _ in 0..10 {
            let a = any_replica(&mut rng, ranks, r);
            let b = any_replica(&mut rng, ranks, r);
            if a.rank != b.rank && a.rank != silenced.rank && b.rank != silenced.rank {
                faults.cuts.push((a, b));
                break;
            }
        }
        let mut sim = Sim::new(seed, ranks, r, 150, 2000, cfg(), faults, seed % 2 == 0);
        sim.run(Duration::from_secs(120));
        runs += 1;
        hit += usize::from(sim.cut_short() > 0);
        failovers += sim.failovers();
    }
    eprintln!("silences: {hit} of {runs} runs silenced a replica mid-run; {failovers} failovers");
    assert!(
        runs == 1 || hit * 2 > runs,
        "faults must strike mid-run in most runs"
    );
    assert!(runs == 1 || failovers > 0);
}

/// A tiny sender log: flow control and eviction let long runs complete; a replica
/// silenced for long and then resumed catches up or retires, and everyone else finishes.
/// DESIGN.md "Sender log".
#[test]
fn tiny_logs_complete_and_laggards_retire() {
    let (mut runs, mut retired, mut evicted) = (0usize, 0usize, 0u64);
    for seed in seeds(150, 5) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xcafe);
        let ranks = rng.random_range(2..=4);
        let r = 2;
        // Fast failover, so the rest of a silenced replica's team moves on without it
        // while it is stopped, and only it falls out of the logs.
        let cfg = Config {
            log_bytes_max: 4096,
            hedge_timeout: Duration::from_millis(1),
            ack_timeout: Duration::from_millis(5),
            ..cfg()
        };
        let mut faults = Faults {
            may_retire: true,
            ..Faults::default()
        };
        if rng.random_bool(0.6) {
            let from = Duration::from_micros(rng.random_range(0..10_000));
            let until = from + Duration::from_millis(rng.random_range(5..60));
            faults
                .silences
                .push((any_replica(&mut rng, ranks, r), from, Some(until)));
        }
        let mut sim = Sim::new(seed, ranks, r, 300, 600, cfg, faults, seed % 3 == 0);
        sim.run(Duration::from_secs(300));
        runs += 1;
        retired += sim.reps.iter().filter(|x| x.life == Life::Retired).count();
        evicted += sim
            .reps
            .iter()
            .map(|x| x.engine.stats().evicted)
            .sum::<u64>();
        // Some replica of every rank finished.
        for rank in 0..ranks {
            assert!(
                (0..r).any(|k| {
                    let i = (rank * r + k) as usize;
                    sim.reps[i].life != Life::Retired && sim.done(i)
                }),
                "seed {seed}: every replica of rank {rank} retired"
            );
        }
    }
    eprintln!("tiny logs: {runs} runs, {retired} replicas retired, {evicted} entries evicted");
    assert!(runs == 1 || (evicted > 0 && retired > 0));
}

/// Wildcard receives (`ANY_SOURCE`, `ANY_TAG`, both) at every replication degree, with
/// and without kills: every replica of a rank matches the same message at every receive,
/// and every message is received exactly once. DESIGN.md "Message identity and matching".
#[test]
fn wildcards_match_alike_in_every_replica() {
    let (mut runs, mut fenced, mut hit) = (0usize, 0u64, 0usize);
    for seed in seeds(200, 6) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xd1ce);
        let ranks = rng.random_range(2..=5);
        let r = rng.random_range(1..=3);
        let mut faults = Faults::default();
        if r > 1 && rng.random_bool(0.6) {
            let notice = rng
                .random_bool(0.5)
                .then(|| Duration::from_micros(rng.random_range(0..20_000)));
            let at = Duration::from_micros(rng.random_range(0..30_000));
            // Replica 0 leads its rank's choices: kill it most of the time.
            let k = if rng.random_bool(0.7) { 0 } else { r - 1 };
            faults
                .kills
                .push((ReplicaId::new(rng.random_range(0..ranks), k), at, notice));
        } else if r > 1 && rng.random_bool(0.5) {
            // A leader that stops answering (SIGSTOP): its siblings must fence it.
            let at = Duration::from_micros(rng.random_range(0..30_000));
            faults
                .silences
                .push((ReplicaId::new(rng.random_range(0..ranks), 0), at, None));
        }
        let mut sim = Sim::new(seed, ranks, r, 150, 1000, cfg(), faults, true);
        sim.run(Duration::from_secs(120));
        runs += 1;
        fenced += sim.fenced;
        hit += usize::from(sim.cut_short() > 0);
    }
    eprintln!("wildcards: {runs} runs, {hit} lost a replica mid-run, {fenced} fenced");
    assert!(runs == 1 || (hit > 0 && fenced > 0));
}

/// Replica 0 of rank 0 (sender) and of rank 1 (receiver), started, in a job of 2 ranks
/// with `replicas` each, and the receive rank 1 posts: tag 3 from rank 0.
fn sender_and_receiver(replicas: u32) -> (ReplicaId, ReplicaId, Engine, Engine, RecvSpec) {
    let (sender, receiver) = (ReplicaId::new(0, 0), ReplicaId::new(1, 0));
    let mut tx = Engine::new(sender, 2, replicas, cfg());
    let mut rx = Engine::new(receiver, 2, replicas, cfg());
    tx.start(Duration::ZERO);
    rx.start(Duration::ZERO);
    let spec = RecvSpec {
        comm: COMM,
        src: Source::Rank(0),
        tag: TagSel::Tag(3),
    };
    (sender, receiver, tx, rx, spec)
}

/// The sender side of an unlogged send: a receiver answers a DATA that asks for
/// confirmation with its watermark at once (not at the next CONSUMED tick), and the
/// sender counts the message delivered only once every live replica's watermark passed
/// it; the message then reads as evicted (GONE to anyone who asks).
#[test]
fn confirmed_data_is_acknowledged_at_once_and_not_kept() {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, spec) = sender_and_receiver(2);
    rx.post(now, spec, Mode::Receive);
    let pull = std::iter::from_fn(|| rx.poll_transmit().or_else(|| rx.poll_deferred()))
        .find(|(to, f)| *to == sender && matches!(f, Frame::Pull { .. }))
        .expect("the receive pulls from its own team's replica");
    tx.handle_frame(now, receiver, pull.1);
    let ahead = tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN, true);
    assert_eq!(ahead.waiters.len(), 1);
    // Replica 1.1 is alive and has not asked: not everyone can confirm.
    assert!(!ahead.confirm);
    tx.handle_peer_down(now, ReplicaId::new(1, 1), true);
    let WriteAhead {
        key,
        order,
        waiters,
        confirm,
    } = tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN, true);
    assert!(confirm);
    // Smaller messages, or a caller that keeps the copy, never skip the log.
    assert!(
        !tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN - 1, true)
            .confirm
    );
    assert!(
        !tx.write_ahead(COMM, 3, 1, UNLOGGED_BYTES_MIN, false)
            .confirm
    );
    assert!(!tx.delivered(COMM, 1, order));

    rx.handle_frame(
        now,
        sender,
        Frame::Data {
            key,
            req: waiters[0].req,
            order,
            payload: Bytes::from_static(b"payload"),
            confirm: true,
        },
    );
    let consumed = std::iter::from_fn(|| rx.poll_transmit())
        .find(|(to, f)| *to == sender && matches!(f, Frame::Consumed { .. }))
        .expect("a confirmed DATA is answered with CONSUMED at once");
    tx.handle_frame(now, receiver, consumed.1);
    assert!(tx.delivered(COMM, 1, order));
    tx.send_unlogged(COMM, 3, 1);
    assert_eq!(tx.stats().unlogged, 1);
    assert_eq!(tx.write_ahead(COMM, 3, 1, 0, false).key.seq, key.seq + 1);
    // Asked again, the unlogged message is GONE.
    tx.handle_frame(
        now,
        receiver,
        Frame::Pull {
            want: volpex::message::Want::Key(key),
            req: ReqId(99),
            consumed: 0,
        },
    );
    assert!(std::iter::from_fn(|| tx.poll_transmit())
        .any(|(to, f)| to == receiver && matches!(f, Frame::Gone { req: ReqId(99), .. })));
}

/// Taking a message leaves a speculative pull for the stream's next one that waits
/// for a write to its sender (or for the driver to idle); posting the receive that needs
/// that message sends the pull at once instead.
#[test]
fn a_deferred_pull_goes_at_once_when_its_receive_is_posted() {
    let now = Duration::ZERO;
    let (sender, receiver, mut tx, mut rx, spec) = sender_and_receiver(1);
    // The sender sends `payload` to rank 1; the receiver gets what it answers with.
    let deliver = |tx: &mut Engine, rx: &mut Engine, payload: &'static [u8]| {
        tx.send(now, COMM, 3, 1, Bytes::from_static(payload))
            .expect("the log has room");
        while let Some((to, f)) = tx.poll_transmit() {
            if to == receiver {
                rx.handle_frame(now, sender, f);
            }
        }
    };
    let pulls = |e: &mut Engine, deferred: bool| -> Vec<Frame> {
        std::iter::from_fn(|| {
            if deferred {
                e.poll_deferred()
            } else {
                e.poll_transmit()
            }
        })
        .filter(|(to, f)| *to == sender && matches!(f, Frame::Pull { .. }))
        .map(|(_, f)| f)
        .collect()
    };
    let first = rx.post(now, spec.clone(), Mode::Receive);
    for pull in pulls(&mut rx, false) {
        tx.handle_frame(now, receiver, pull);
    }
    deliver(&mut tx, &mut rx, b"one");
    assert!(matches!(rx.take(now, first), Some(Ok(_))));
    // The pull for the second message waits for a write.
    assert!(pulls(&mut rx, false).is_empty());
    let second = rx.post(now, spec, Mode::Receive);
    let sent = pulls(&mut rx, false);
    assert_eq!(sent.len(), 1, "the needed pull goes at once: {sent:?}");
    assert!(
        pulls(&mut rx, true).is_empty(),
        "and is not deferred any more"
    );
    for pull in sent {
        tx.handle_frame(now, receiver, pull);
    }
    deliver(&mut tx, &mut rx, b"two");
    assert!(matches!(rx.take(now, second), Some(Ok(_))));
}

/// A message that depends on a choice its siblings do not hold yet leaves at once,
/// carrying the choice; when the leader then dies, the replica taking over asks the
/// other ranks' replicas too and adopts the choice from the receiver of that message
/// instead of deciding the slot anew.
#[test]
fn a_message_carries_its_choices_and_the_takeover_finds_them() {
    let now = Duration::ZERO;
    let (leader, follower) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
    let (receiver, other) = (ReplicaId::new(1, 0), ReplicaId::new(1, 1));
    let mut l = Engine::new(leader, 2, 2, cfg());
    let mut f = Engine::new(follower, 2, 2, cfg());
    let mut q = Engine::new(receiver, 2, 2, cfg());
    let mut o = Engine::new(other, 2, 2, cfg());
    for e in [&mut l, &mut f, &mut q, &mut o] {
        e.start(now);
        while e.poll_transmit().is_some() {}
    }
    let slot = l.post_choice().expect("choices are coordinated at r = 2");
    assert!(matches!(l.choice(now, slot), ChoiceState::Yours));
    let chosen = Bytes::from_static(b"the choice");
    l.make_choice(now, slot, chosen.clone());
    while l.poll_transmit().is_some() {} // the choice to the follower is lost with `l`
    l.send(now, COMM, 3, 1, Bytes::from_static(b"depends on it"))
        .expect("room in the log");
    let spec = RecvSpec {
        comm: COMM,
        src: Source::Rank(0),
        tag: TagSel::Tag(3),
    };
    let id = q.post(now, spec, Mode::Receive);
    let pull = std::iter::from_fn(|| q.poll_transmit().or_else(|| q.poll_deferred()))
        .find(|(to, f)| *to == leader && matches!(f, Frame::Pull { .. }))
        .expect("the receive pulls from its own team's replica");
    l.handle_frame(now, receiver, pull.1);
    let answer: Vec<Frame> = std::iter::from_fn(|| l.poll_transmit())
        .filter(|(to, _)| *to == receiver)
        .map(|(_, f)| f)
        .collect();
    assert!(
        matches!(
            &answer[..],
            [
                Frame::Choices {
                    rank: 0,
                    term: 0,
                    stable: 0,
                    ..
                },
                Frame::Data { .. }
            ]
        ),
        "the message leaves at once, after the choice it depends on: {answer:?}"
    );
    for frame in answer {
        q.handle_frame(now, leader, frame);
    }
    assert!(matches!(q.take(now, id), Some(Ok(Matched::Message { .. }))));

    // The leader dies before the follower heard of the choice.
    for e in [&mut f, &mut q, &mut o] {
        e.handle_peer_down(now, leader, true);
    }
    let asked: Vec<(ReplicaId, Frame)> = std::iter::from_fn(|| f.poll_transmit())
        .filter(|(_, fr)| matches!(fr, Frame::Takeover { .. }))
        .collect();
    let asked_whom: HashSet<ReplicaId> = asked.iter().map(|(to, _)| *to).collect();
    assert_eq!(asked_whom, HashSet::from([receiver, other]));
    assert!(matches!(f.choice(now, slot), ChoiceState::Waiting));
    for (to, takeover) in asked {
        let e = if to == receiver { &mut q } else { &mut o };
        e.handle_frame(now, follower, takeover);
        let decided = std::iter::from_fn(|| e.poll_transmit())
            .find(|(to, fr)| *to == follower && matches!(fr, Frame::Decided { .. }))
            .expect("every replica answers a takeover");
        f.handle_frame(now, to, decided.1);
    }
    assert!(
        matches!(f.choice(now, slot), ChoiceState::Made(b) if b == chosen),
        "the new leader adopted the choice the receiver depends on"
    );
}

/// A receiver that got choices along with a message stops carrying them once it hears
/// they became stable: the sender tells it before its next message.
#[test]
fn carried_choices_are_settled_with_the_next_message() {
    let now = Duration::ZERO;
    let (leader, follower, receiver) = (
        ReplicaId::new(0, 0),
        ReplicaId::new(0, 1),
        ReplicaId::new(1, 0),
    );
    let mut l = Engine::new(leader, 2, 2, cfg());
    let slot = l.post_choice().expect("coordinated");
    l.make_choice(now, slot, Bytes::from_static(b"c"));
    let answer_to = |l: &mut Engine, req: u64, seq: u64| -> Vec<Frame> {
        l.handle_frame(
            now,
            receiver,
            Frame::Pull {
                want: volpex::message::Want::Key(Key {
                    comm: COMM,
                    tag: 3,
                    src: 0,
                    dst: 1,
                    seq,
                }),
                req: ReqId(req),
                consumed: seq,
            },
        );
        std::iter::from_fn(|| l.poll_transmit())
            .filter(|(to, _)| *to == receiver)
            .map(|(_, f)| f)
            .collect()
    };
    l.send(now, COMM, 3, 1, Bytes::from_static(b"one")).unwrap();
    let first = answer_to(&mut l, 1, 0);
    assert!(
        matches!(&first[..], [Frame::Choices { stable: 0, entries, .. }, Frame::Data { .. }] if !entries.is_empty())
    );
    // The follower reports it holds the slot: it is stable now.
    l.handle_frame(
        now,
        follower,
        Frame::Consumed {
            comm: u32::MAX,
            src: 0,
            dst: 0,
            watermark: slot + 1,
        },
    );
    l.send(now, COMM, 3, 1, Bytes::from_static(b"two")).unwrap();
    let second = answer_to(&mut l, 2, 1);
    assert!(
        matches!(&second[..], [Frame::Choices { stable, entries, .. }, Frame::Data { .. }] if *stable == slot + 1 && entries.is_empty()),
        "{second:?}"
    );
    l.send(now, COMM, 3, 1, Bytes::from_static(b"three"))
        .unwrap();
    let third = answer_to(&mut l, 3, 2);
    assert!(matches!(&third[..], [Frame::Data { .. }]), "{third:?}");
}

/// A leader sends its follower new choices in batches: the follower's standing pull is
/// answered once `CHOICES_BATCH` choices are made, or `CHOICES_BATCH_WAIT` after the
/// first of fewer (the leader's `poll_timeout` says when), each time with all of them.
#[test]
fn a_leader_sends_its_follower_choices_in_batches() {
    use volpex::config::{CHOICES_BATCH, CHOICES_BATCH_WAIT};
    let (leader, follower) = (ReplicaId::new(0, 0), ReplicaId::new(0, 1));
    let mut l = Engine::new(leader, 1, 2, cfg());
    let mut f = Engine::new(follower, 1, 2, cfg());
    let start = Duration::ZERO;
    l.start(start);
    f.start(start);
    // Frames between the two; returns the slots of the choices the follower got.
    let pump = |now: Duration, l: &mut Engine, f: &mut Engine| -> Vec<u64> {
        let mut got = Vec::new();
        loop {
            let mut moved = false;
            while let Some((to, fr)) = l.poll_transmit().or_else(|| l.poll_deferred()) {
                if to == follower {
                    if let Frame::Data { key, .. } = &fr {
                        got.push(key.seq);
                    }
                    f.handle_frame(now, leader, fr);
                    moved = true;
                }
            }
            while let Some((to, fr)) = f.poll_transmit().or_else(|| f.poll_deferred()) {
                if to == leader {
                    l.handle_frame(now, follower, fr);
                    moved = true;
                }
            }
            if !moved {
                return got;
            }
        }
    };
    // The follower waits for the first choice with a pull parked at the leader.
    let first = f.post_choice().expect("choices are coordinated at r = 2");
    assert!(matches!(f.choice(start, first), ChoiceState::Waiting));
    pump(start, &mut l, &mut f);
    let choose = |now: Duration, l: &mut Engine| {
        let slot = l.post_choice().expect("the leader chooses");
        assert!(matches!(l.choice(now, slot), ChoiceState::Yours));
        l.make_choice(now, slot, Bytes::from(slot.to_le_bytes().to_vec()));
    };
    // Fewer than a batch: nothing until the wait is over.
    let few = CHOICES_BATCH / 2;
    for _ in 0..few {
        choose(start, &mut l);
    }
    assert_eq!(pump(start, &mut l, &mut f), Vec::<u64>::new());
    let due = start + CHOICES_BATCH_WAIT;
    assert!(l.poll_timeout().is_some_and(|t| t <= due));
    l.handle_timeout(due);
    assert_eq!(pump(due, &mut l, &mut f), (0..few).collect::<Vec<_>>());
    assert!(matches!(f.choice(due, first), ChoiceState::Made(_)));
    // A full batch goes at once, in one answer to the pull standing for its first slot.
    for _ in 0..CHOICES_BATCH - 1 {
        choose(due, &mut l);
    }
    assert_eq!(pump(due, &mut l, &mut f), Vec::<u64>::new());
    choose(due, &mut l);
    assert_eq!(
        pump(due, &mut l, &mut f),
        (few..few + CHOICES_BATCH).collect::<Vec<_>>()
    );
}
