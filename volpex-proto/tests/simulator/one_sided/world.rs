//! The one-sided scenarios' world: replicas of a few ranks, FIFO links delivered in
//! random order, a clock with timers, kills with death notices after a random delay,
//! fences the engines ask for, and a stand-in launcher starting new incarnations that
//! replay their program (as `harness::regen` does for the `Sim`).
//!
//! Must never reach into an engine nor know a scenario's program: it runs each
//! replica's `step` and restarts its state when a new incarnation takes the slot.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::config::Config;
use volpex_proto::message::matching::{Matched, Mode, RecvId, RecvSpec, Source, TagSel};
use volpex_proto::message::{Key, ReplicaId};
use volpex_proto::pull::{Engine, EngineEvent};
use volpex_proto::wire::Frame;

use super::WIN;
use crate::harness::cfg;

/// Replicas of `ranks` ranks, each `r` times, and the network between them.
pub struct World {
    pub seed: u64,
    pub rng: ChaCha8Rng,
    pub now: Duration,
    pub r: u32,
    pub engines: Vec<Engine>,
    pub alive: Vec<bool>,
    /// Frames in flight per (from, to) link, in order.
    pub links: BTreeMap<(usize, usize), VecDeque<Frame>>,
    /// Death notices still to come: (when, dead replica).
    pub notices: Vec<(Duration, usize)>,
    /// Replicas killed (by the test or fenced at an engine's request).
    pub kills: usize,
    /// Each slot's incarnation (0: the first).
    pub incs: Vec<u32>,
    /// Deaths announced to the others.
    pub announced: Vec<bool>,
    /// New incarnations to start: (when, slot).
    pub restarts: Vec<(Duration, usize)>,
    /// A new incarnation replaying its program: the receives at which it caught up.
    pub catch_up: Vec<Option<u64>>,
    /// The launcher's ALIVE notices still to come: (when, slot, incarnation).
    pub alive_notices: Vec<(Duration, usize, u32)>,
    /// New incarnations that caught up.
    pub caught_up: usize,
    pub cfg: Config,
}

impl World {
    /// `regenerate`: the launcher regenerates lost replicas (`Config::regenerate`).
    pub fn new(seed: u64, ranks: u32, r: u32, regenerate: bool) -> World {
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

    pub fn fail(&self, what: String) -> ! {
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
    pub fn flush_some(&mut self, i: usize, mut n: usize) {
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

    /// Ends replica `i`: what it has not sent is lost, what it sent still arrives (the
    /// kernel sends what its sockets hold), frames to it are dropped, and the others hear
    /// of it after a random delay.
    pub fn kill(&mut self, i: usize) {
        if !self.alive[i] {
            return;
        }
        self.alive[i] = false;
        self.kills += 1;
        while self.engines[i].poll_transmit().is_some() {}
        while self.engines[i].poll_deferred().is_some() {}
        self.links.retain(|&(_, to), _| to != i);
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
    pub fn regenerate(&mut self, i: usize) {
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
    pub fn take(&mut self, i: usize, id: RecvId) -> Option<Bytes> {
        match self.engines[i].take(self.now, id)? {
            Ok(Matched::Message { payload, .. }) => Some(payload),
            other => self.fail(format!(
                "{}: a receive on the window ended with {other:?}",
                self.engines[i].me()
            )),
        }
    }

    pub fn post(&mut self, i: usize, src: u32, tag: i32) -> RecvId {
        self.post_on(i, WIN, src, tag)
    }

    pub fn post_on(&mut self, i: usize, comm: u32, src: u32, tag: i32) -> RecvId {
        let spec = RecvSpec {
            comm,
            src: Source::Rank(src),
            tag: TagSel::Tag(tag),
        };
        self.engines[i].post(self.now, spec, Mode::Receive)
    }

    pub fn send(&mut self, i: usize, tag: i32, dst: u32, payload: Vec<u8>) {
        self.send_on(i, WIN, tag, dst, payload);
    }

    pub fn send_on(&mut self, i: usize, comm: u32, tag: i32, dst: u32, payload: Vec<u8>) -> Key {
        match self.engines[i].send(self.now, comm, tag, dst, Bytes::from(payload)) {
            Ok(key) => key,
            Err(e) => self.fail(format!("{}: send failed: {e:?}", self.engines[i].me())),
        }
    }

    /// Runs `step` on each live replica's program state (from `states`, one per
    /// replica) in random order, as long as it progresses, and ticks, until every live
    /// replica's program is done and no new incarnation is still to start. A new
    /// incarnation starts from a fresh state.
    pub fn run<S: Default>(
        &mut self,
        what: &str,
        states: &mut [S],
        mut step: impl FnMut(&mut World, usize, &mut S) -> Step,
    ) {
        let limit = Duration::from_secs(60);
        let mut incs = self.incs.clone();
        loop {
            let mut order: Vec<usize> = (0..self.engines.len()).collect();
            for k in (1..order.len()).rev() {
                order.swap(k, self.rng.random_range(0..=k));
            }
            let mut all_done = true;
            for i in order {
                if self.incs[i] != incs[i] {
                    incs[i] = self.incs[i];
                    states[i] = S::default();
                }
                let mut last = Step::Done;
                while self.alive[i] {
                    last = step(self, i, &mut states[i]);
                    if last != Step::Progress {
                        break;
                    }
                }
                if self.alive[i] {
                    self.flush(i);
                    all_done &= last == Step::Done;
                }
            }
            // A new incarnation still to start runs its program too.
            if all_done && self.restarts.is_empty() {
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
pub enum Step {
    Progress,
    Blocked,
    Done,
}
