//! Regeneration in the job's state machine: when a replica lost during the run gets a new
//! incarnation, on which host, and the newcomer's life until it caught up (its own address
//! table, `Joining` and `Alive` to the others, the rendezvous deadline). Also the per-rank
//! limits: `--max-regenerations`, the crash-loop guard, and a newcomer's word that its
//! rank cannot be regenerated.
//!
//! A replica lost before the rendezvous (the address table has not gone out: nobody has
//! state yet) is started again the same way, from the beginning (`Origin::Restart`): the
//! table waits for it like for the first processes, and it has nothing to catch up.
//!
//! Incarnation numbers are per rank and monotone: a new one is 1 + the highest its rank
//! ever used, so the core's leadership order (incarnation, index) never lets a newcomer
//! lead while an older sibling lives. Must never do I/O: a new process is an
//! `Action::Spawn` the driver carries out.

use std::time::Duration;

use nix::sys::signal::Signal;
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::ToProcess;

use super::super::replica::{Host, HostState, Origin, Replica, ReplicaState};
use super::super::step::Action;
use super::{JobState, RENDEZVOUS_GRACE, RENDEZVOUS_TIMEOUT};
use crate::cli::Regenerate;

/// New incarnations of a rank that fail in a row (end before catching up, or retire),
/// after which the rank is no longer regenerated.
pub const CRASH_LOOP_LIMIT: u32 = 3;

/// A lost host is tried again for a new incarnation this long after it was lost, doubled
/// for every further loss (up to `HOST_RETRY_MAX`), and only where no host that was never
/// lost has room: a preempted machine's replacement or a recreated pod answers under the
/// same name, a host that stays down costs one failed start per period.
pub const HOST_RETRY_AFTER: Duration = Duration::from_secs(5);
/// The longest wait before a lost host is tried again.
const HOST_RETRY_MAX: Duration = Duration::from_secs(320);

/// When a host lost at `at`, for the `losses`-th time, may be tried again.
fn retry_at(at: Duration, losses: u32) -> Duration {
    let factor = 1u32 << losses.saturating_sub(1).min(6);
    at + (HOST_RETRY_AFTER * factor).min(HOST_RETRY_MAX)
}

/// Where a new incarnation gets its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// A live sibling's latest snapshot, or a replay from the start.
    Sibling,
    /// Its draining predecessor's handover.
    Handover,
}

/// Regeneration of one rank.
#[derive(Debug, Clone, Default)]
struct RankRegen {
    /// New incarnations started.
    started: u32,
    /// The highest incarnation any replica of the rank has had.
    highest: u32,
    /// New incarnations in a row whose life failed: ended before catching up, or retired.
    failed_in_row: u32,
    /// Why the rank is no longer regenerated.
    stopped: Option<String>,
}

/// Regeneration settings and bookkeeping.
#[derive(Debug, Clone)]
pub(super) struct Regen {
    mode: Regenerate,
    max: Option<u32>,
    ranks: Vec<RankRegen>,
    /// Slots of every host; `None`: as many as needed (this machine).
    capacity: Vec<Option<u32>>,
    /// A local job: every process on this machine, new incarnations too.
    local: bool,
    /// Hosts where a replica went silent or was fenced (unreachable to a sibling): maybe
    /// cut off, so no new incarnation goes there.
    suspect: Vec<bool>,
    /// No host had room once: said once.
    no_room_said: bool,
    /// Replicas not regenerated for want of room: tried again when a lost host may be
    /// tried again (`HOST_RETRY_AFTER`).
    waiting: Vec<usize>,
    /// They were tried again at this time: only a host that may be tried after it is a
    /// reason to try them again.
    retried_at: Duration,
    /// volpexrun itself stalled (frozen, or starved of CPU) longer than the heartbeat
    /// timeout: replicas that lost its heartbeat meanwhile are exiting, and their exits
    /// are still on their way. Until then no sibling is trusted as a source; the replicas
    /// lost meanwhile (`held`) are looked at again at the end of the hold.
    hold_until: Duration,
    held: Vec<usize>,
    /// Replicas lost while the only replica holding their rank's state was a new
    /// incarnation taking over its predecessor's handover, not caught up yet: regenerated
    /// from it once it has.
    after_handover: Vec<usize>,
    /// How long volpexrun's last stall lasted (what `hold_until` answers).
    stall: Duration,
    /// For the summary.
    notes: Vec<String>,
}

impl Regen {
    pub(super) fn new(mode: Regenerate, max: Option<u32>, ranks: u32, hosts: usize) -> Regen {
        Regen {
            mode,
            max,
            ranks: vec![RankRegen::default(); ranks as usize],
            capacity: vec![None; hosts],
            local: true,
            suspect: vec![false; hosts],
            no_room_said: false,
            waiting: Vec::new(),
            retried_at: Duration::ZERO,
            hold_until: Duration::ZERO,
            held: Vec::new(),
            after_handover: Vec::new(),
            stall: Duration::ZERO,
            notes: Vec::new(),
        }
    }

    /// Whether lost replicas are regenerated at all (`--regenerate` is not `never`).
    pub(super) fn on(&self) -> bool {
        self.mode != Regenerate::Never
    }

    pub(super) fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The rank is no longer regenerated, for this reason (kept for the summary).
    pub(super) fn stop(&mut self, rank: u32, why: String) {
        if let Some(r) = self.ranks.get_mut(rank as usize) {
            if r.stopped.is_none() {
                self.notes.push(why.clone());
                r.stopped = Some(why);
            }
        }
    }

    /// A replica on host `h` went silent or was fenced: the host may be cut off.
    pub(super) fn suspect(&mut self, h: usize) {
        if let Some(s) = self.suspect.get_mut(h) {
            *s = true;
        }
    }

    /// Whether a replica on host `h` went silent or was fenced.
    pub(super) fn is_suspect(&self, h: usize) -> bool {
        self.suspect.get(h).copied().unwrap_or(false)
    }

    /// A new incarnation of the rank ended; `failed`: before catching up, or by retiring.
    pub(super) fn ended(&mut self, rank: u32, failed: bool) {
        if let Some(r) = self.ranks.get_mut(rank as usize) {
            r.failed_in_row = if failed { r.failed_in_row + 1 } else { 0 };
        }
    }
}

impl JobState {
    /// Host `h` has `slots` slots (remote hosts; this machine has as many as needed).
    pub fn set_slots(&mut self, slots: Vec<u32>) {
        self.regen.local = false;
        for (c, s) in self.regen.capacity.iter_mut().zip(slots) {
            *c = Some(s);
        }
    }

    /// volpexrun's wait for its next input, due to end by `due`, ended at `now`. Much
    /// later (by more than half the heartbeat timeout) means volpexrun itself did not run
    /// (it was stopped, or starved of CPU): its replicas may have given it up and be
    /// exiting, their exits still on the way. Regeneration then waits one heartbeat
    /// timeout for them before it trusts a sibling as a source; a rank that lost every
    /// replica is lost, as without regeneration. Half: the lateness undercounts the stall
    /// by up to a tick (the wait began before `due`), and the replicas count their silence
    /// from the last heartbeat, up to an interval before it (a stop of 2.1 s at the
    /// default 2 s timeout made every replica exit, and showed 1.9 s late).
    pub fn woke(&mut self, due: Duration, now: Duration) {
        let late = now.saturating_sub(due);
        if late > self.heartbeat_timeout / 2 {
            log::info!(
                "volpexrun did not run for {:.1} s: no regeneration before its replicas' exits are in",
                late.as_secs_f64()
            );
            if now + self.heartbeat_timeout > self.regen.hold_until {
                self.regen.hold_until = now + self.heartbeat_timeout;
                self.regen.stall = late;
            }
        }
    }

    /// If volpexrun stalled (stopped, or starved of CPU) so recently that the exits of
    /// the replicas that gave it up are still coming in, the words that say so: a rank
    /// lost now was lost to volpexrun's own stall.
    pub(super) fn stall_note(&self) -> Option<String> {
        (self.now < self.regen.hold_until).then(|| {
            format!(
                "volpexrun itself did not run for {:.1} s (it was stopped, or starved of CPU), and its processes give it up after {:.1} s without its heartbeat",
                self.regen.stall.as_secs_f64(),
                self.heartbeat_timeout.as_secs_f64()
            )
        })
    }

    /// After a stall's hold: the replicas lost meanwhile are regenerated if a sibling
    /// still lives.
    pub(super) fn release_held(&mut self) {
        if self.now >= self.regen.hold_until && !self.regen.held.is_empty() {
            for i in std::mem::take(&mut self.regen.held) {
                self.regenerate(i);
            }
        }
    }

    /// When a lost host may next be tried again, while replicas wait for room.
    pub(super) fn next_host_retry(&self) -> Option<Duration> {
        if self.regen.waiting.is_empty() {
            return None;
        }
        self.hosts
            .iter()
            .filter(|h| matches!(h.state, HostState::Lost(_)))
            .filter_map(|h| h.lost_at.map(|t| retry_at(t, h.losses)))
            .filter(|&t| t > self.regen.retried_at)
            .min()
    }

    /// The replicas waiting for room are tried again once a lost host may be (a new
    /// agent is started there for them).
    pub(super) fn retry_waiting(&mut self) {
        if self.next_host_retry().is_some_and(|t| self.now >= t) {
            self.regen.retried_at = self.now;
            for i in std::mem::take(&mut self.regen.waiting) {
                self.regenerate(i);
            }
        }
    }

    /// How many new incarnations were started in all.
    pub fn regenerations(&self) -> u32 {
        self.regen.ranks.iter().map(|r| r.started).sum()
    }

    /// `procs[i]` was lost during the run to a cause that is not its program's: start a
    /// new incarnation of its replica, if the job runs, its rank still lives, the limits
    /// allow and a host has room.
    pub(super) fn regenerate(&mut self, i: usize) {
        if self.now < self.regen.hold_until {
            if !self.regen.held.contains(&i) {
                self.regen.held.push(i);
            }
            return;
        }
        if let Some(host) = self.regeneration_host(i, Source::Sibling) {
            self.start_incarnation(i, host, None);
        } else if self.rendezvous.waiting() && !self.regen.on() && self.running() {
            // Said, as the table will go out without it (after the rendezvous the loss
            // line says all).
            self.out.push(Action::Print(format!(
                "replica {} was lost before the rendezvous and is not started again (--regenerate never)",
                self.procs[i].id
            )));
        }
    }

    /// `procs[i]` got a preemption notice (SIGTERM: its machine goes away within
    /// `grace_ms`). A replica that has checkpointed (`checkpoints` > 0), or has no live
    /// sibling, runs on and serves until its next checkpoint, where it stops and hands
    /// over (`handover`). So does one that never checkpointed when a replay from the
    /// program's start can no longer be served (`replay_from_start_served`): a replacement
    /// would retire. Otherwise one that never checkpointed, with a live sibling, is
    /// replaced from that sibling at once and ended (the replacement replays meanwhile).
    pub(super) fn drain(&mut self, i: usize, grace_ms: u64, checkpoints: u64) {
        let id = self.procs[i].id;
        if !self.procs[i].state.computing() || self.procs[i].draining {
            return;
        }
        let grace = grace_ms as f64 / 1000.0;
        self.procs[i].draining = true;
        let sibling = self.sibling_alive(id);
        if checkpoints == 0 && !sibling {
            // Nothing to rebuild it from but a checkpoint its program has never taken.
            self.out.push(Action::Print(format!(
                "replica {id} got a preemption notice (SIGTERM): it hands over to its replacement only if its program checkpoints within {grace:.1} s (it has not so far), and no other replica of rank {} holds its state: if it does not, the rank is lost when the grace ends",
                id.rank
            )));
            return;
        }
        if checkpoints > 0 || !sibling || !self.replay_from_start_served() {
            self.out.push(Action::Print(format!(
                "replica {id} got a preemption notice (SIGTERM): it hands over to its replacement at its next checkpoint (within {grace:.1} s)"
            )));
            return;
        }
        match self.regeneration_host(i, Source::Sibling) {
            Some(host) => {
                self.out.push(Action::Print(format!(
                    "replica {id} got a preemption notice (SIGTERM): its replacement starts now"
                )));
                self.signal(i, Signal::SIGKILL);
                self.mark_dead(i, ReplicaState::Drained);
                self.start_incarnation(i, host, None);
            }
            None => self.out.push(Action::Print(format!(
                "replica {id} got a preemption notice (SIGTERM) but cannot be replaced now; it runs on for up to {grace:.1} s"
            ))),
        }
    }

    /// Draining `procs[i]` stopped at a checkpoint and serves its state on `addr`: its
    /// replacement starts now and takes over from it (the old one exits once it has).
    pub(super) fn handover(&mut self, i: usize, addr: String) {
        let id = self.procs[i].id;
        if !self.procs[i].draining || !self.procs[i].state.alive() {
            log::warn!("replica {id} offered a handover unasked");
            return;
        }
        match self.regeneration_host(i, Source::Handover) {
            Some(host) => {
                self.out.push(Action::Print(format!(
                    "replica {id} stopped at a checkpoint: its replacement starts now and takes over from it"
                )));
                self.start_incarnation(i, host, Some(addr));
            }
            None => self.out.push(Action::Print(format!(
                "replica {id} stopped at a checkpoint but cannot be replaced now; it serves until its grace ends"
            ))),
        }
    }

    /// Whether, as far as the replicas' latest counters tell, a new incarnation could
    /// still replay the program from its start: no live replica has evicted a log entry
    /// or sent a message it never logged. Without checkpoints a sender log keeps
    /// everything up to the replay budget (`VOLPEX_REPLAY_BYTES`), so an eviction means
    /// that budget ran out (NPB FT class B: its set-up's all-to-alls).
    fn replay_from_start_served(&self) -> bool {
        self.procs
            .iter()
            .filter(|p| p.state.alive())
            .filter_map(|p| p.stats.as_ref())
            .all(|s| s.evicted == 0 && s.unlogged == 0)
    }

    /// Whether a replica of `id`'s rank other than `id` is alive and holds the rank's
    /// state (see `Replica::caught_up`): a new incarnation still catching up has nothing
    /// to give.
    fn sibling_alive(&self, id: ReplicaId) -> bool {
        (0..self.replicas)
            .filter(|&k| k != id.replica)
            .map(|k| self.replica(ReplicaId::new(id.rank, k)))
            .any(|p| p.state.alive() && p.caught_up())
    }

    /// Whether a live new incarnation of `rank` is taking over its predecessor's
    /// handover and has not caught up yet: it will hold the rank's state.
    fn handover_under_way(&self, rank: u32) -> bool {
        (0..self.replicas)
            .map(|k| self.replica(ReplicaId::new(rank, k)))
            .any(|p| p.state.alive() && p.handover && !p.caught_up())
    }

    /// A replica of `rank` that held its state was lost: if none that does is left, the
    /// new incarnations of the rank still catching up from a sibling have nowhere to get
    /// it from. They are ended (their rank is lost), not left to count as its replicas.
    /// One taking over from its draining predecessor's handover needs no sibling, and
    /// holds the state (its predecessor's, with its sender log): while it lives, the
    /// others still catch up from it.
    pub(super) fn orphan_newcomers(&mut self, rank: u32) {
        let current: Vec<usize> = (0..self.replicas)
            .map(|k| self.idx(ReplicaId::new(rank, k)))
            .collect();
        if current.iter().any(|&j| {
            let p = &self.procs[j];
            p.state.alive() && (p.caught_up() || p.handover)
        }) {
            return;
        }
        for j in current {
            let p = &self.procs[j];
            if !p.state.alive() || p.caught_up() || p.handover {
                continue;
            }
            let (id, inc) = (p.id, p.incarnation);
            // It answered its predecessor's loss: that loss is the replica's story.
            let before = self.procs[..j]
                .iter()
                .rev()
                .find(|q| q.id == id)
                .and_then(|q| {
                    let why = match &q.state {
                        ReplicaState::Failed(w) | ReplicaState::Retired(w) => w.as_str(),
                        ReplicaState::Drained => "drained",
                        ReplicaState::Starting
                        | ReplicaState::Running
                        | ReplicaState::Finalized
                        | ReplicaState::Finished
                        | ReplicaState::Ended => return None,
                    };
                    Some(format!(" (incarnation {}: {why})", q.incarnation))
                })
                .unwrap_or_default();
            log::info!("incarnation {inc} of replica {id} has no source left; ending it");
            self.signal(j, Signal::SIGKILL);
            self.mark_dead(
                j,
                ReplicaState::Failed(format!(
                    "ended before catching up: no replica holding rank {rank}'s state was left{before}"
                )),
            );
        }
    }

    /// Where a new incarnation of `procs[i]`'s replica would go, if one may start now
    /// with its state from `source` (saying why not, where that is news).
    pub(super) fn regeneration_host(&mut self, i: usize, source: Source) -> Option<usize> {
        let id = self.procs[i].id;
        let rank = id.rank as usize;
        // Before the rendezvous too: the lost replica is started again in its place.
        let running = self.failure.is_none()
            && self.shutdown_at.is_none()
            && self.regen.mode != Regenerate::Never;
        // Only the current incarnation is replaced, once.
        if !running || self.idx(id) != i {
            return None;
        }
        let has_source = match source {
            Source::Sibling => self.sibling_alive(id),
            Source::Handover => true,
        };
        if !has_source && source == Source::Sibling && self.handover_under_way(id.rank) {
            // Its rank's state is on its way into a handover newcomer: from it, then.
            if !self.regen.after_handover.contains(&i) {
                self.regen.after_handover.push(i);
                self.out.push(Action::Live(format!(
                    "replica {id} is regenerated once its rank's handover is over (the replica taking it over holds rank {}'s state)",
                    id.rank
                )));
            }
            return None;
        }
        if !has_source || self.regen.ranks[rank].stopped.is_some() {
            return None;
        }
        if let Some(max) = self.regen.max {
            if self.regen.ranks[rank].started >= max {
                let why = format!(
                    "rank {} is not regenerated again: --max-regenerations {max} reached",
                    id.rank
                );
                self.out.push(Action::Print(why.clone()));
                self.regen.stop(id.rank, why);
                return None;
            }
        }
        if self.regen.ranks[rank].failed_in_row >= CRASH_LOOP_LIMIT {
            let why = format!(
                "rank {} is not regenerated again: its last {CRASH_LOOP_LIMIT} new incarnations failed (ended before catching up, or retired)",
                id.rank
            );
            self.out.push(Action::Print(why.clone()));
            self.regen.stop(id.rank, why);
            return None;
        }
        match self.choose_host(id) {
            Ok(h) => Some(h),
            Err(why) => {
                if !self.regen.waiting.contains(&i) {
                    self.regen.waiting.push(i);
                }
                if !self.regen.no_room_said {
                    self.regen.no_room_said = true;
                    let why = format!("replica {id} is not regenerated: {why}");
                    self.out.push(Action::Print(why.clone()));
                    self.regen.notes.push(why);
                }
                None
            }
        }
    }

    /// Starts a new incarnation of `procs[i]`'s replica on `host` (taking over from its
    /// predecessor's handover on `handover`, if given).
    fn start_incarnation(&mut self, i: usize, host: usize, handover: Option<String>) {
        let id = self.procs[i].id;
        let rank = id.rank as usize;
        let r = &mut self.regen.ranks[rank];
        r.highest = r.highest.max(self.procs[i].incarnation) + 1;
        r.started += 1;
        let inc = r.highest;
        let now = self.now;
        if let HostState::Idle | HostState::Lost(_) = self.hosts[host].state {
            // Its agent starts now (the driver reports `LinkOpened` or `HostLost`).
            self.hosts[host].state = HostState::Launching;
            self.hosts[host].launched_at = now;
        }
        let mut newcomer = Replica::newcomer(id, inc, host, now);
        newcomer.handover = handover.is_some();
        // Before the table went out nobody has state: it starts from the beginning and
        // joins the rendezvous (which waits for it) like the first processes.
        let restart = self.rendezvous.waiting() && handover.is_none();
        if restart {
            newcomer.origin = Origin::Restart;
        }
        self.procs.push(newcomer);
        let slot = self.slot(id);
        self.slots[slot] = self.procs.len() - 1;
        // From now on the writer of its rank's files waits for it too before changing
        // bytes already written: it will read them as they were.
        self.files_membership(id.rank);
        // The spawn first: the driver says what led to it (the loss it answers) before
        // it carries it out, and this line after.
        self.out.push(Action::Spawn {
            id,
            inc,
            host,
            handover,
        });
        self.out.push(Action::Live(format!(
            "rank {} replica {}: starting incarnation {inc} on {} at {:.1} s{}",
            id.rank,
            id.replica,
            self.hosts[host].name,
            now.as_secs_f64(),
            if restart {
                ", afresh: it was lost before the rendezvous, which waits for it"
            } else {
                ""
            }
        )));
    }

    /// Where a new incarnation of `id` goes: a host that is up (or idle: nothing was
    /// placed there) and holds no live replica of its rank, with a free slot (the least loaded first); with `--regenerate always`
    /// else the least loaded such host, else any host that is up.
    fn choose_host(&self, id: ReplicaId) -> Result<usize, String> {
        if self.regen.local {
            return match self.hosts.first().map(|h| &h.state) {
                Some(HostState::Up) => Ok(0),
                Some(HostState::Idle | HostState::Launching | HostState::Lost(_)) | None => {
                    Err("this machine is not up".into())
                }
            };
        }
        let load = |h: usize| {
            self.procs
                .iter()
                .filter(|p| p.host == h && p.state.alive())
                .count() as u64
        };
        let holds = |h: usize| {
            self.procs
                .iter()
                .any(|p| p.host == h && p.id.rank == id.rank && p.state.alive())
        };
        // Hosts whose agent runs or is starting (at the job's start, or for a new
        // incarnation: a `Spawn` waits in its link), hosts where no process was placed
        // (their agent starts with the new incarnation), and hosts lost at least
        // `HOST_RETRY_AFTER` ago (a new agent is tried: the machine, or a pod of the same
        // name, may be back); never one where a replica went silent (it may be cut off
        // and come back with its old processes), nor one whose preemption notice's
        // deadline is still ahead (it goes: what starts there would have to move again).
        let now = self.now;
        let usable = |h: &Host| match h.state {
            HostState::Up | HostState::Idle => true,
            HostState::Launching => h.agent || h.launched_at > Duration::ZERO,
            HostState::Lost(_) => h.lost_at.is_some_and(|t| now >= retry_at(t, h.losses)),
        };
        let up: Vec<usize> = (0..self.hosts.len())
            .filter(|&h| {
                usable(&self.hosts[h])
                    && !self.regen.suspect[h]
                    && !self.notices.iter().any(|n| n.host == h && now < n.deadline)
            })
            .collect();
        // Hosts lost before come last.
        let lost = |h: usize| matches!(self.hosts[h].state, HostState::Lost(_));
        let least = |hosts: Vec<usize>| hosts.into_iter().min_by_key(|&h| (lost(h), load(h), h));
        let apart: Vec<usize> = up.iter().copied().filter(|&h| !holds(h)).collect();
        let free: Vec<usize> = apart
            .iter()
            .copied()
            .filter(|&h| match self.regen.capacity[h] {
                None => true,
                Some(slots) => load(h) < u64::from(slots),
            })
            .collect();
        if let Some(h) = least(free) {
            return Ok(h);
        }
        match self.regen.mode {
            Regenerate::Always => least(apart)
                .or_else(|| least(up))
                .ok_or_else(|| "no host is up".to_string()),
            Regenerate::Spare | Regenerate::Never => Err(format!(
                "no free slot on a host that holds no other replica of rank {} (--regenerate always would oversubscribe)",
                id.rank
            )),
        }
    }

    /// A new incarnation registered: `Joining` to every other live replica, then its own
    /// table, with what it must receive to have caught up (the most its live caught-up
    /// siblings reported receiving). The notices go first so that they are on their way
    /// before the newcomer can ask anyone for anything.
    pub(super) fn newcomer_registered(&mut self, i: usize) {
        let (id, inc) = (self.procs[i].id, self.procs[i].incarnation);
        let Some(addr) = self.procs[i].addr.clone() else {
            return;
        };
        let catch_up = (0..self.replicas)
            .filter(|&k| k != id.replica)
            .map(|k| self.replica(ReplicaId::new(id.rank, k)))
            .filter(|p| p.state.alive() && p.caught_up())
            .filter_map(|p| p.stats.as_ref().map(|s| s.receives))
            .max()
            .unwrap_or(0);
        let joining = ToProcess::Joining {
            rank: id.rank,
            replica: id.replica,
            incarnation: inc,
            addr,
            handover: self.procs[i].handover,
        };
        for &j in &self.slots {
            if j != i && self.procs[j].state.alive() {
                self.out.push(Action::Send {
                    to: self.procs[j].id,
                    msg: joining.clone(),
                });
            }
        }
        let table = self.table(Some(catch_up));
        self.out.push(Action::Send { to: id, msg: table });
    }

    /// A new incarnation caught up: everyone hears it is an ordinary replica again.
    pub(super) fn caught_up(&mut self, i: usize) {
        let now = self.now;
        let p = &mut self.procs[i];
        p.caught_up_at = Some(now);
        let (id, inc) = (p.id, p.incarnation);
        let took = now.saturating_sub(p.started_at);
        self.out.push(Action::Live(format!(
            "rank {} replica {}: incarnation {inc} caught up in {:.1} s",
            id.rank,
            id.replica,
            took.as_secs_f64()
        )));
        let alive = ToProcess::Alive {
            rank: id.rank,
            replica: id.replica,
            incarnation: inc,
        };
        for &j in &self.slots {
            if self.procs[j].state.alive() {
                self.out.push(Action::Send {
                    to: self.procs[j].id,
                    msg: alive.clone(),
                });
            }
        }
        // Its siblings lost while it took its rank's state over have a source now.
        let (now_due, later) = std::mem::take(&mut self.regen.after_handover)
            .into_iter()
            .partition::<Vec<_>, _>(|&j| self.procs[j].id.rank == id.rank);
        self.regen.after_handover = later;
        for j in now_due {
            self.regenerate(j);
        }
    }

    /// New incarnations get the rendezvous deadline too: one that has not registered by
    /// then failed (and may be replaced).
    pub(super) fn check_newcomers(&mut self, now: Duration) {
        let deadline = RENDEZVOUS_TIMEOUT.max(self.launch_timeout + RENDEZVOUS_GRACE);
        let late: Vec<usize> = self
            .slots
            .iter()
            .copied()
            .filter(|&i| {
                let p = &self.procs[i];
                !p.caught_up()
                    && p.state == ReplicaState::Starting
                    && now >= p.started_at + deadline
            })
            .collect();
        for i in late {
            log::warn!(
                "incarnation {} of replica {} did not register in time; ending it",
                self.procs[i].incarnation,
                self.procs[i].id
            );
            self.signal(i, Signal::SIGKILL);
            self.lose(
                i,
                ReplicaState::Failed(format!(
                    "did not register within {:.0} s",
                    deadline.as_secs_f64()
                )),
            );
        }
    }
}
