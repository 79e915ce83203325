//! One-sided communication's races (docs/PROTOCOL.md "One-sided communication"), driven
//! with the engine operations `volpex-mpi/src/rma` makes: an epoch's batch is a logged
//! send on the window's communicator that each target replica pulls from one replica of
//! the origin, its answer a send back; a passive-target serving call posts one receive per
//! origin and takes choice slots, in which the leader records the order it applies
//! requests in and a follower reads it. A small seeded world of its own (the `Sim`
//! harness runs fixed message programs): FIFO links delivered in random order, timers,
//! kills with death notices after a random delay, fences the engines ask for.
//!
//! Must never reach into an engine: everything goes through its public commands.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::config::Config;
use volpex_proto::message::matching::{Matched, Mode, RecvId, RecvSpec, Source, TagSel};
use volpex_proto::message::ReplicaId;
use volpex_proto::pull::{ChoiceState, Engine, EngineEvent};
use volpex_proto::wire::Frame;

use crate::harness::{cfg, seeds};

/// The window's communicator (a duplicate of the program's: no program tag matches).
const WIN: u32 = 7;
/// Tags as volpex-mpi's rma uses them: post/start/complete/wait batch and answer, passive
/// request and answer.
const BATCH: i32 = 3;
const BATCH_ANSWER: i32 = 4;
const REQUEST: i32 = 5;
const ANSWER: i32 = 6;

/// Replicas of `ranks` ranks, each `r` times, and the network between them.
struct World {
    seed: u64,
    rng: ChaCha8Rng,
    now: Duration,
    r: u32,
    engines: Vec<Engine>,
    alive: Vec<bool>,
    /// Frames in flight per (from, to) link, in order.
    links: BTreeMap<(usize, usize), VecDeque<Frame>>,
    /// Death notices still to come: (when, dead replica).
    notices: Vec<(Duration, usize)>,
    /// Replicas killed (by the test or fenced at an engine's request).
    kills: usize,
    /// Each slot's incarnation (0: the first).
    incs: Vec<u32>,
    /// Deaths announced to the others.
    announced: Vec<bool>,
    /// New incarnations to start: (when, slot).
    restarts: Vec<(Duration, usize)>,
    /// A new incarnation replaying its program: the receives at which it caught up.
    catch_up: Vec<Option<u64>>,
    /// The launcher's ALIVE notices still to come: (when, slot, incarnation).
    alive_notices: Vec<(Duration, usize, u32)>,
    /// New incarnations that caught up.
    caught_up: usize,
    cfg: Config,
}

impl World {
    /// `regenerate`: the launcher regenerates lost replicas (`Config::regenerate`).
    fn new(seed: u64, ranks: u32, r: u32, regenerate: bool) -> World {
        let cfg = Config {
            regenerate,
            ..cfg()
        };
        let engines: Vec<Engine> = (0..ranks * r)
            .map(|i| {
                let mut e = Engine::new(ReplicaId::new(i / r, i % r), ranks, r, cfg.clone());
                e.start(Duration::ZERO);
                e
            })
            .collect();
        let mut w = World {
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
            now: Duration::ZERO,
            r,
            alive: vec![true; engines.len()],
            engines,
            links: BTreeMap::new(),
            notices: Vec::new(),
            kills: 0,
            incs: vec![0; (ranks * r) as usize],
            announced: vec![false; (ranks * r) as usize],
            restarts: Vec::new(),
            catch_up: vec![None; (ranks * r) as usize],
            alive_notices: Vec::new(),
            caught_up: 0,
            cfg,
        };
        for i in 0..w.engines.len() {
            w.flush(i);
        }
        w
    }

    fn fail(&self, what: String) -> ! {
        panic!("seed {}: t={:?}: {what}", self.seed, self.now)
    }

    fn idx(&self, id: ReplicaId) -> usize {
        (id.rank * self.r + id.replica) as usize
    }

    /// Puts everything replica `i` made on the network; handles its events.
    fn flush(&mut self, i: usize) {
        self.flush_some(i, usize::MAX);
    }

    /// Puts at most `n` of replica `i`'s frames on the network (the rest is lost if it
    /// dies now); handles its events.
    fn flush_some(&mut self, i: usize, mut n: usize) {
        while n > 0 {
            let Some((to, f)) = self.engines[i]
                .poll_transmit()
                .or_else(|| self.engines[i].poll_deferred())
            else {
                break;
            };
            let to = self.idx(to);
            self.links.entry((i, to)).or_default().push_back(f);
            n -= 1;
        }
        while let Some(ev) = self.engines[i].poll_event() {
            match ev {
                EngineEvent::Retire { reason } => {
                    self.fail(format!("{} retires: {reason}", self.engines[i].me()))
                }
                EngineEvent::Fence { peer } => {
                    let p = self.idx(peer);
                    self.kill(p);
                }
            }
        }
    }

    /// Ends replica `i`: what it has not sent is lost, frames to it are dropped, and the
    /// others hear of it after a random delay.
    fn kill(&mut self, i: usize) {
        if !self.alive[i] {
            return;
        }
        self.alive[i] = false;
        self.kills += 1;
        while self.engines[i].poll_transmit().is_some() {}
        while self.engines[i].poll_deferred().is_some() {}
        self.links.retain(|&(from, to), _| from != i && to != i);
        let at = self.now + Duration::from_micros(self.rng.random_range(0..5_000));
        self.notices.push((at, i));
    }

    /// One step of the network and the clock: a few frames delivered (a random link's
    /// first each), due death notices, due timers.
    fn tick(&mut self) {
        for _ in 0..self.rng.random_range(1..=4) {
            let busy: Vec<(usize, usize)> = self
                .links
                .iter()
                .filter(|(_, q)| !q.is_empty())
                .map(|(k, _)| *k)
                .collect();
            if busy.is_empty() {
                break;
            }
            let (from, to) = busy[self.rng.random_range(0..busy.len())];
            let Some(f) = self
                .links
                .get_mut(&(from, to))
                .and_then(VecDeque::pop_front)
            else {
                continue;
            };
            // A dead replica's connections are closed: nothing reaches it.
            if !self.alive[to] {
                continue;
            }
            let me = self.engines[from].me();
            self.engines[to].handle_frame(self.now, me, f);
            self.flush(to);
        }
        let now = self.now;
        let due: Vec<usize> = self
            .notices
            .iter()
            .filter(|&&(at, _)| at <= now)
            .map(|&(_, i)| i)
            .collect();
        self.notices.retain(|&(at, _)| at > now);
        for dead in due {
            self.announced[dead] = true;
            let id = self.engines[dead].me();
            for i in 0..self.engines.len() {
                if self.alive[i] {
                    self.engines[i].handle_peer_down(now, id, true);
                    self.flush(i);
                }
            }
        }
        let restarts: Vec<usize> = self
            .restarts
            .iter()
            .filter(|&&(at, i)| at <= now && self.announced[i])
            .map(|&(_, i)| i)
            .collect();
        self.restarts
            .retain(|&(at, i)| !(at <= now && self.announced[i]));
        for i in restarts {
            self.start_incarnation(i);
        }
        self.check_catch_up();
        for i in 0..self.engines.len() {
            if self.alive[i] && self.engines[i].poll_timeout().is_some_and(|t| t <= now) {
                self.engines[i].handle_timeout(now);
                self.flush(i);
            }
        }
        self.now += Duration::from_micros(self.rng.random_range(10..300));
    }

    /// Kills replica `i` and has the launcher start a new incarnation in its slot a
    /// little after its death is announced.
    fn regenerate(&mut self, i: usize) {
        self.kill(i);
        let at = self.now + Duration::from_micros(self.rng.random_range(0..8_000));
        self.restarts.push((at, i));
    }

    /// The launcher starts a new incarnation in slot `i`, which replays its program from
    /// the start, pulling again what it received (as `harness::regen` does).
    fn start_incarnation(&mut self, i: usize) {
        let r = self.r as usize;
        let (rank, ranks) = (i / r, self.engines.len() / r);
        let inc = 1 + (0..r).map(|k| self.incs[rank * r + k]).max().unwrap_or(0);
        self.incs[i] = inc;
        let table: Vec<Vec<u32>> = (0..ranks)
            .map(|x| self.incs[x * r..(x + 1) * r].to_vec())
            .collect();
        let id = self.engines[i].me();
        let target = (0..r)
            .map(|k| rank * r + k)
            .filter(|&j| j != i && self.alive[j] && self.catch_up[j].is_none())
            .map(|j| self.engines[j].stats().receives)
            .max()
            .unwrap_or(0);
        let mut e = Engine::joining(id, ranks as u32, self.r, self.cfg.clone(), &table);
        e.set_catching_up(true);
        for j in 0..self.engines.len() {
            if j != i && !self.alive[j] && self.announced[j] {
                e.handle_peer_down(self.now, self.engines[j].me(), true);
            }
        }
        e.start(self.now);
        self.engines[i] = e;
        self.alive[i] = true;
        self.announced[i] = false;
        self.catch_up[i] = Some(target);
        self.links.retain(|&(from, to), _| from != i && to != i);
        for j in 0..self.engines.len() {
            if j != i && self.alive[j] {
                self.engines[j].handle_peer_joining(self.now, id, inc, false);
                self.flush(j);
            }
        }
        self.flush(i);
    }

    /// New incarnations that reached their siblings' receives and hold every choice stop
    /// catching up; the launcher's ALIVE reaches everyone a little later.
    fn check_catch_up(&mut self) {
        for i in 0..self.engines.len() {
            let Some(target) = self.catch_up[i] else {
                continue;
            };
            if !self.alive[i] {
                self.catch_up[i] = None;
                continue;
            }
            if self.engines[i].stats().receives < target || !self.engines[i].holds_all_choices() {
                continue;
            }
            self.engines[i].set_catching_up(false);
            self.catch_up[i] = None;
            self.caught_up += 1;
            let at = self.now + Duration::from_micros(self.rng.random_range(0..2_000));
            self.alive_notices.push((at, i, self.incs[i]));
        }
        let now = self.now;
        let due: Vec<(usize, u32)> = self
            .alive_notices
            .iter()
            .filter(|&&(at, _, _)| at <= now)
            .map(|&(_, i, inc)| (i, inc))
            .collect();
        self.alive_notices.retain(|&(at, _, _)| at > now);
        for (i, inc) in due {
            if self.incs[i] != inc || !self.alive[i] {
                continue;
            }
            let id = self.engines[i].me();
            for j in 0..self.engines.len() {
                if self.alive[j] {
                    self.engines[j].handle_peer_alive(now, id);
                    self.flush(j);
                }
            }
        }
    }

    /// The payload of a completed receive, if it completed.
    fn take(&mut self, i: usize, id: RecvId) -> Option<Bytes> {
        match self.engines[i].take(self.now, id)? {
            Ok(Matched::Message { payload, .. }) => Some(payload),
            other => self.fail(format!(
                "{}: a receive on the window ended with {other:?}",
                self.engines[i].me()
            )),
        }
    }

    fn post(&mut self, i: usize, src: u32, tag: i32) -> RecvId {
        let spec = RecvSpec {
            comm: WIN,
            src: Source::Rank(src),
            tag: TagSel::Tag(tag),
        };
        self.engines[i].post(self.now, spec, Mode::Receive)
    }

    fn send(&mut self, i: usize, tag: i32, dst: u32, payload: Vec<u8>) {
        if let Err(e) = self.engines[i].send(self.now, WIN, tag, dst, Bytes::from(payload)) {
            self.fail(format!("{}: send failed: {e:?}", self.engines[i].me()));
        }
    }

    /// Runs `step` for every live replica in random order, as long as it progresses,
    /// and ticks, until every live replica's program is done.
    fn run(&mut self, what: &str, mut step: impl FnMut(&mut World, usize) -> Step) {
        let limit = Duration::from_secs(60);
        loop {
            let mut order: Vec<usize> = (0..self.engines.len()).collect();
            for k in (1..order.len()).rev() {
                order.swap(k, self.rng.random_range(0..=k));
            }
            let mut all_done = true;
            for i in order {
                let mut last = Step::Done;
                while self.alive[i] {
                    last = step(self, i);
                    if last != Step::Progress {
                        break;
                    }
                }
                if self.alive[i] {
                    self.flush(i);
                    all_done &= last == Step::Done;
                }
            }
            if all_done {
                return;
            }
            if self.now > limit {
                self.fail(format!("{what}: no progress"));
            }
            self.tick();
        }
    }
}

/// What one step of a replica's program did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Progress,
    Blocked,
    Done,
}

// ---- Active target: an origin's epochs pulled by the target's replicas ----

/// One operation of a batch on a window of `WINDOW` bytes: a put of bytes, or an
/// accumulate (wrapping add) that may fetch what was there.
#[derive(Debug, Clone)]
enum Op {
    Put { off: usize, data: Vec<u8> },
    Acc { off: usize, add: u8, fetch: bool },
}

const WINDOW: usize = 32;

/// A batch's bytes (the test's own format; the engine carries them opaque).
fn encode(ops: &[Op]) -> Vec<u8> {
    let mut v = vec![ops.len() as u8];
    for op in ops {
        match op {
            Op::Put { off, data } => {
                v.extend_from_slice(&[1, *off as u8, data.len() as u8]);
                v.extend_from_slice(data);
            }
            Op::Acc { off, add, fetch } => {
                v.extend_from_slice(&[2, *off as u8, *add, *fetch as u8])
            }
        }
    }
    v
}

/// Applies `ops` to `window` in order; the answer: each fetching accumulate's old byte.
fn apply(window: &mut [u8], ops: &[Op]) -> Vec<u8> {
    let mut answer = Vec::new();
    for op in ops {
        match op {
            Op::Put { off, data } => window[*off..*off + data.len()].copy_from_slice(data),
            Op::Acc { off, add, fetch } => {
                if *fetch {
                    answer.push(window[*off]);
                }
                window[*off] = window[*off].wrapping_add(*add);
            }
        }
    }
    answer
}

fn answers(ops: &[Op]) -> bool {
    ops.iter()
        .any(|op| matches!(op, Op::Acc { fetch: true, .. }))
}

/// The origin's epochs: every replica of it issues the same operations (its program is
/// deterministic), so any of them can serve a target replica's pull.
fn epochs(rng: &mut ChaCha8Rng, n: usize) -> Vec<Vec<Op>> {
    (0..n)
        .map(|_| {
            (0..rng.random_range(0..5))
                .map(|_| {
                    let off = rng.random_range(0..WINDOW - 4);
                    if rng.random_bool(0.4) {
                        let len = rng.random_range(1..=4);
                        Op::Put {
                            off,
                            data: (0..len).map(|_| rng.random()).collect(),
                        }
                    } else {
                        Op::Acc {
                            off,
                            add: rng.random_range(1..=255),
                            fetch: rng.random_bool(0.5),
                        }
                    }
                })
                .collect()
        })
        .collect()
}

/// Where one replica is in the epoch program: rank 0 (origin) sends epoch `epoch`'s
/// batch at `MPI_Win_complete` and waits for its answer if it has one; rank 1 (target)
/// receives the batch at `MPI_Win_wait`, applies it and answers.
#[derive(Debug, Default)]
struct EpochState {
    epoch: usize,
    waiting: Option<RecvId>,
    window: Vec<u8>,
    /// (epoch, operation) applied, in order (target replicas).
    applied: Vec<(usize, usize)>,
}

fn epoch_step(w: &mut World, i: usize, st: &mut EpochState, model: &EpochModel) -> Step {
    let origin = i < w.r as usize;
    let e = st.epoch;
    if e == model.batches.len() {
        return Step::Done;
    }
    let ops = &model.batches[e];
    match (origin, st.waiting) {
        (true, None) => {
            w.send(i, BATCH, 1, encode(ops));
            if answers(ops) {
                st.waiting = Some(w.post(i, 1, BATCH_ANSWER));
            } else {
                st.epoch += 1;
            }
        }
        (true, Some(id)) => {
            let Some(got) = w.take(i, id) else {
                return Step::Blocked;
            };
            if got[..] != model.answers[e][..] {
                w.fail(format!(
                    "{} got answer {got:?} for epoch {e}, a failure-free run {:?}",
                    w.engines[i].me(),
                    model.answers[e]
                ));
            }
            st.waiting = None;
            st.epoch += 1;
        }
        (false, None) => st.waiting = Some(w.post(i, 0, BATCH)),
        (false, Some(id)) => {
            let Some(got) = w.take(i, id) else {
                return Step::Blocked;
            };
            // The batch the target replica pulled, from whichever origin replica served
            // it, is byte for byte the one the program issued for this epoch.
            if got[..] != encode(ops)[..] {
                w.fail(format!(
                    "{} got batch {got:?} for epoch {e}, the origin issued {:?}",
                    w.engines[i].me(),
                    encode(ops)
                ));
            }
            let answer = apply(&mut st.window, ops);
            st.applied.extend((0..ops.len()).map(|k| (e, k)));
            if st.window != model.windows[e] {
                w.fail(format!(
                    "{}: window after epoch {e} is {:?}, a failure-free run's {:?}",
                    w.engines[i].me(),
                    st.window,
                    model.windows[e]
                ));
            }
            if answers(ops) {
                w.send(i, BATCH_ANSWER, 0, answer);
            }
            st.waiting = None;
            st.epoch += 1;
        }
    }
    Step::Progress
}

/// A failure-free run of the epochs: the batches, each epoch's answer and the window
/// after it.
struct EpochModel {
    batches: Vec<Vec<Op>>,
    answers: Vec<Vec<u8>>,
    windows: Vec<Vec<u8>>,
}

impl EpochModel {
    fn new(batches: Vec<Vec<Op>>) -> EpochModel {
        let mut window = vec![0u8; WINDOW];
        let (mut answers, mut windows) = (Vec::new(), Vec::new());
        for ops in &batches {
            answers.push(apply(&mut window, ops));
            windows.push(window.clone());
        }
        EpochModel {
            batches,
            answers,
            windows,
        }
    }
}

/// An origin's epochs of puts and accumulates pulled by two or three target replicas,
/// while the origin replica they pull from is killed at a random point of an epoch
/// (sometimes a target replica too), half the time replaced by a new incarnation that
/// replays the origin's program: every target replica gets each epoch's batch once, byte
/// for byte as issued (by whichever incarnation served it), applies every operation
/// exactly once and in issue order (its window equals a failure-free run's after every
/// epoch), and every surviving origin replica, the new incarnation included, gets the
/// failure-free answers. docs/PROTOCOL.md "One-sided communication".
#[test]
fn an_epoch_s_operations_apply_once_in_order_in_every_target_replica_across_failovers() {
    let (mut runs, mut failovers, mut kills) = (0usize, 0u64, 0usize);
    let (mut regenerated, mut caught_up) = (0usize, 0usize);
    for seed in seeds(150, 45) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0e5c);
        let r = rng.random_range(2..=3);
        let model = EpochModel::new(epochs(&mut rng, 30));
        let regenerate = rng.random_bool(0.5);
        let mut w = World::new(seed, 2, r, regenerate);
        let mut states: Vec<EpochState> = (0..2 * r)
            .map(|_| EpochState {
                window: vec![0; WINDOW],
                ..EpochState::default()
            })
            .collect();
        // Kill origin replica 0.0 (the one target replica 1.0 pulls from) when it has
        // issued `at` epochs, half the time with a new incarnation replaying the origin's
        // program in its place; now and then a target replica as well.
        let at = rng.random_range(0..model.batches.len());
        let kill_origin = rng.random_bool(0.85);
        let target_too = rng
            .random_bool(0.2)
            .then(|| rng.random_range(0..r) as usize);
        let (mut struck, mut incs) = (false, vec![0; 2 * r as usize]);
        w.run("epochs", |w, i| {
            if w.incs[i] != incs[i] {
                // A new incarnation runs the program from its start.
                incs[i] = w.incs[i];
                states[i] = EpochState {
                    window: vec![0; WINDOW],
                    ..EpochState::default()
                };
            }
            if kill_origin && !struck && i == 0 && states[0].epoch == at {
                // Mid-epoch: part of what it made left, the rest is lost with it.
                struck = true;
                let n = w.rng.random_range(0..3);
                w.flush_some(0, n);
                match regenerate {
                    true => w.regenerate(0),
                    false => w.kill(0),
                }
                if let Some(t) = target_too {
                    w.kill(r as usize + t);
                }
                return Step::Blocked;
            }
            epoch_step(w, i, &mut states[i], &model)
        });
        regenerated += usize::from(w.incs[0] > 0);
        caught_up += w.caught_up;
        for (i, st) in states.iter().enumerate().skip(r as usize) {
            if !w.alive[i] {
                continue;
            }
            let all: Vec<(usize, usize)> = model
                .batches
                .iter()
                .enumerate()
                .flat_map(|(e, ops)| (0..ops.len()).map(move |k| (e, k)))
                .collect();
            if st.applied != all {
                w.fail(format!("target replica {i} applied {:?}", st.applied));
            }
        }
        runs += 1;
        kills += w.kills;
        failovers += w.engines.iter().map(|e| e.stats().failovers).sum::<u64>();
    }
    eprintln!(
        "one-sided epochs: {runs} runs, {kills} kills, {failovers} failovers, \
         {regenerated} regenerated origin replicas, {caught_up} caught up"
    );
    assert!(runs == 1 || (kills > 0 && failovers > 0 && caught_up > 0));
}

// ---- Passive target: lock order decided in choice slots ----

/// Requests each origin sends (each one a lock, a fetch-and-op, the release).
const REQUESTS: u8 = 8;

/// What a request does to the target's counter: a fetch-and-op that does not commute,
/// so the values the origins fetch show the order the target applied them in.
fn fetch_and_op(counter: &mut u64, add: u8) -> u64 {
    let old = *counter;
    *counter = counter.wrapping_mul(3).wrapping_add(u64::from(add));
    old
}

fn add_of(origin: u8, e: u8) -> u8 {
    origin
        .wrapping_mul(101)
        .wrapping_add(e.wrapping_mul(7))
        .wrapping_add(1)
}

/// A replica in the lock program: ranks 0 and 1 are origins, each sending `REQUESTS`
/// exclusive-lock requests to rank 2 one after the other (each waits for the answer);
/// rank 2 is the target, whose replicas serve them in one serving call.
#[derive(Debug, Default)]
struct LockState {
    // Origin side.
    sent: u8,
    waiting: Option<RecvId>,
    /// What each request fetched.
    fetched: Vec<u64>,
    // Target side: a receive of the next request posted per origin, what arrived and
    // waits, the choice slot, the list being applied, the window.
    posted: [Option<RecvId>; 2],
    received: [u8; 2],
    pending: [VecDeque<(u8, u8)>; 2],
    slot: Option<u64>,
    list: Option<(Bytes, usize)>,
    counter: u64,
    /// (origin, request) applied, in order.
    log: Vec<(u8, u8)>,
    /// Non-empty lists this replica recorded as the leader.
    chosen: usize,
    done: bool,
}

fn origin_step(w: &mut World, i: usize, st: &mut LockState) -> Step {
    let me = w.engines[i].me().rank as u8;
    match st.waiting {
        None if st.sent == REQUESTS => Step::Done,
        None => {
            w.send(i, REQUEST, 2, vec![me, st.sent, add_of(me, st.sent)]);
            st.waiting = Some(w.post(i, 2, ANSWER));
            Step::Progress
        }
        Some(id) => {
            let Some(got) = w.take(i, id) else {
                return Step::Blocked;
            };
            let Ok(v) = <[u8; 8]>::try_from(&got[..]) else {
                w.fail(format!("{}: answer {got:?}", w.engines[i].me()));
            };
            st.fetched.push(u64::from_le_bytes(v));
            st.waiting = None;
            st.sent += 1;
            Step::Progress
        }
    }
}

/// Applies origin `o`'s next request at a target replica: exactly once and in the order
/// the origin sent them, else the run fails.
fn apply_request(w: &mut World, i: usize, st: &mut LockState, o: u8) -> bool {
    let Some((from, e)) = st.pending[o as usize].pop_front() else {
        return false;
    };
    let next = st.log.iter().filter(|&&(x, _)| x == o).count() as u8;
    if (from, e) != (o, next) {
        w.fail(format!(
            "{} applies request {e} of origin {from} where {next} of {o} is due: {:?}",
            w.engines[i].me(),
            st.log
        ));
    }
    let old = fetch_and_op(&mut st.counter, add_of(o, e));
    st.log.push((o, e));
    w.send(i, ANSWER, u32::from(o), old.to_le_bytes().to_vec());
    true
}

/// One step of a target replica's serving call (volpex-mpi `rma::passive::step`/`end`).
fn target_step(w: &mut World, i: usize, st: &mut LockState) -> Step {
    if st.done {
        return Step::Done;
    }
    let mut moved = false;
    for o in 0..2u8 {
        match st.posted[o as usize] {
            None if st.received[o as usize] < REQUESTS => {
                st.posted[o as usize] = Some(w.post(i, u32::from(o), REQUEST));
                moved = true;
            }
            None => {}
            Some(id) => {
                if let Some(b) = w.take(i, id) {
                    if b.len() != 3 || b[0] != o {
                        w.fail(format!("{}: request {b:?} from {o}", w.engines[i].me()));
                    }
                    st.pending[o as usize].push_back((b[0], b[1]));
                    st.received[o as usize] += 1;
                    st.posted[o as usize] = None;
                    moved = true;
                }
            }
        }
    }
    let progress = |moved| if moved { Step::Progress } else { Step::Blocked };
    // A follower applying the leader's list waits for each request it names.
    if let Some((list, mut k)) = st.list.take() {
        while k < list.len() {
            if !apply_request(w, i, st, list[k]) {
                st.list = Some((list, k));
                return progress(moved);
            }
            k += 1;
        }
        st.slot = None;
        return Step::Progress;
    }
    let Some(slot) = st.slot.or_else(|| w.engines[i].post_choice()) else {
        w.fail("choices are coordinated at r > 1".into());
    };
    st.slot = Some(slot);
    let all = 2 * usize::from(REQUESTS);
    match w.engines[i].choice(w.now, slot) {
        ChoiceState::Yours if st.log.len() == all => {
            w.engines[i].make_choice(w.now, slot, Bytes::new());
            st.done = true;
            Step::Done
        }
        ChoiceState::Yours => {
            let list: Vec<u8> = (0..2u8)
                .flat_map(|o| std::iter::repeat_n(o, st.pending[o as usize].len()))
                .collect();
            if list.is_empty() {
                return progress(moved);
            }
            // Recorded before anything that depends on it leaves (the answers).
            w.engines[i].make_choice(w.now, slot, Bytes::from(list.clone()));
            st.chosen += 1;
            for o in list {
                apply_request(w, i, st, o);
            }
            st.slot = None;
            Step::Progress
        }
        ChoiceState::Made(v) if v.is_empty() => {
            if st.log.len() != all {
                w.fail(format!(
                    "{}: the serving call ended after {} of {all} requests",
                    w.engines[i].me(),
                    st.log.len()
                ));
            }
            st.done = true;
            Step::Done
        }
        ChoiceState::Made(v) => {
            st.list = Some((v, 0));
            Step::Progress
        }
        ChoiceState::Waiting => progress(moved),
    }
}

/// Two origins' exclusive-lock requests served by two or three target replicas, the
/// order decided in choice slots by the leader (replica 0), which is killed right after
/// it recorded a choice and applied it, with a random part of what it made (answers to
/// origins carrying the choice, choices to its followers) gone out, sometimes with the
/// origin replica most likely to hold that choice: every surviving
/// target replica applies every request exactly once, all in the same order, and every
/// value an origin replica fetched (from whichever target replica answered it) is the
/// one that order gives. docs/PROTOCOL.md "Passive target".
#[test]
fn a_lock_order_survives_the_death_of_the_leader_that_chose_it() {
    let (mut runs, mut kills, mut took_over, mut redecided) = (0usize, 0, 0, 0);
    let (mut regenerated, mut caught_up) = (0usize, 0usize);
    for seed in seeds(200, 4545) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x10c4);
        let r = rng.random_range(2..=3);
        let regenerate = rng.random_bool(0.4);
        let mut w = World::new(seed, 3, r, regenerate);
        let mut states: Vec<LockState> = (0..3 * r).map(|_| LockState::default()).collect();
        let leader = 2 * r as usize;
        let kill_at = rng.random_bool(0.8).then(|| rng.random_range(1..=4));
        let origin_too = !regenerate && rng.random_bool(0.25);
        let (mut struck, mut incs) = (false, vec![0; 3 * r as usize]);
        w.run("locks", |w, i| {
            if w.incs[i] != incs[i] {
                // A new incarnation runs the program from its start.
                incs[i] = w.incs[i];
                states[i] = LockState::default();
            }
            let st = &mut states[i];
            if i < leader {
                return origin_step(w, i, st);
            }
            let step = target_step(w, i, st);
            if i == leader && !struck && Some(st.chosen) == kill_at {
                struck = true;
                let n = w.rng.random_range(0..4);
                w.flush_some(i, n);
                match regenerate {
                    true => w.regenerate(i),
                    false => w.kill(i),
                }
                if origin_too {
                    // The origin replica most likely to hold the choice (its answers come
                    // from the leader's team) dies with it: the choice may be lost.
                    w.kill(0);
                }
            }
            step
        });
        let survivors: Vec<usize> = (leader..3 * r as usize).filter(|&i| w.alive[i]).collect();
        let Some(&first) = survivors.first() else {
            w.fail("no target replica survived".into());
        };
        let log = &states[first].log;
        for &i in &survivors[1..] {
            if states[i].log != *log {
                w.fail(format!(
                    "target replicas applied different orders: {log:?} and {:?}",
                    states[i].log
                ));
            }
        }
        // Replay the survivors' order: what each request fetched.
        let mut counter = 0;
        let mut fetched = BTreeMap::new();
        for &(o, e) in log {
            fetched.insert((o, e), fetch_and_op(&mut counter, add_of(o, e)));
        }
        // A dead origin replica may have fetched by a choice that died with it.
        for (i, st) in states.iter().enumerate().take(leader) {
            if !w.alive[i] {
                continue;
            }
            let o = (i / r as usize) as u8;
            for (e, got) in st.fetched.iter().enumerate() {
                if fetched.get(&(o, e as u8)) != Some(got) {
                    w.fail(format!(
                        "{} fetched {got} with request {e}, the targets' order {log:?} gives {:?}",
                        w.engines[i].me(),
                        fetched.get(&(o, e as u8))
                    ));
                }
            }
        }
        runs += 1;
        kills += w.kills;
        // A follower that recorded choices led after a takeover; a dead leader whose
        // order is no prefix of the survivors' had choices nobody depended on, decided
        // anew.
        took_over += usize::from(
            survivors
                .iter()
                .any(|&i| i != leader && states[i].chosen > 0),
        );
        redecided += usize::from(!w.alive[leader] && !log.starts_with(&states[leader].log));
        regenerated += usize::from(w.incs[leader] > 0);
        caught_up += w.caught_up;
    }
    eprintln!(
        "one-sided locks: {runs} runs, {kills} kills, {took_over} taken over, \
         {redecided} with a dead leader's order decided anew, {regenerated} leaders \
         regenerated, {caught_up} caught up"
    );
    assert!(runs == 1 || (kills > 0 && took_over > 0 && redecided > 0 && caught_up > 0));
}
