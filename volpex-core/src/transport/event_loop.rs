//! `Core`: the mio poll, every connection, and the engine they feed.
//!
//! Owns the sockets, the routing of the engine's frames and the decisions to end the
//! process the loop makes (orphaned, injected fault; `crate::exit` ends it). Must never
//! decide protocol questions (the engine does).

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use volpex_proto::handshake::{JobKey, PeerId, Step};
use volpex_proto::limits::{CONTROL_PAYLOAD_BYTES_MAX, FRAME_PAYLOAD_BYTES_MAX};
use volpex_proto::message::matching::{Matched, RecvId};
use volpex_proto::message::{Map, ReplicaId};
use volpex_proto::pull::{Engine, Resumed};
use volpex_proto::wire::header::WireError;
use volpex_proto::wire::stream::{Landing, ReadStatus};
use volpex_proto::wire::Frame;

use super::clock::TransportClock;
use super::connection::Conn;
use super::drain::Drain;
use super::spin::{BulkWindow, Spin};
use crate::config::Config;
use crate::exit::{self, End};

const LISTENER: Token = Token(0);

/// A waiting caller's deferred frames (speculative pulls) go after its turns found
/// nothing for this long: a small message on its way arrives within it, and a write
/// before it would delay reading that message by the write's cost.
const IDLE_FLUSH_AFTER: Duration = Duration::from_micros(20);
/// While a caller spins, its turns consult the protocol's timers (the engine's next
/// deadline, the stats report, handshakes to expire) only this often, and, when every
/// peer connection goes through shared memory, ask the kernel (epoll) only this often
/// too, reading the rings every turn: what only the kernel tells (the launcher's
/// messages, a new connection, a peer's death) and every timer tolerate far more, and
/// both cost more than the rest of a turn (the engine's next deadline looks at every
/// pending pull: with a TCP peer, 5% of a spinning 8 B ping-pong's samples).
const KERNEL_POLL_EVERY: Duration = Duration::from_micros(10);

/// `KERNEL_POLL_EVERY` on a host with fewer cores than the job's processes, whose waits
/// give the CPU away between polls: a turn after a yield came back from another
/// process's run, most often more than 10 us later, so each such turn polled the kernel
/// and read the timers (`-r 2` ping-pong: 0.7 `epoll_wait` per message, 6% of the
/// samples with the timers).
const KERNEL_POLL_EVERY_SHARED: Duration = Duration::from_micros(100);

/// Whether a turn starting at `now` consults the timers: every turn that may sleep, and
/// a spinning one once `every` passed since they were last consulted (`checked_at`).
fn timers_due(spinning: bool, now: Duration, checked_at: Duration, every: Duration) -> bool {
    !spinning || now.saturating_sub(checked_at) >= every
}
/// Token of the waker that kicks a thread out of `poll`.
pub const WAKER: Token = Token(1);
/// Token of the shared-memory listener (`colocated`).
pub(super) const SHM_LISTENER: Token = Token(2);
const FIRST_CONN: usize = 3;

/// Flags shared between the application thread and the background progress thread.
#[derive(Debug, Default)]
pub struct Signals {
    /// Number of application threads waiting for (or holding) the core.
    pub app_waiting: AtomicUsize,
    /// True while the background thread sleeps in `poll`.
    pub in_poll: AtomicBool,
}

/// Where peers reach this process.
#[derive(Default)]
pub struct Listeners {
    /// Peers on any host.
    pub tcp: Option<TcpListener>,
    /// Peers on this host (`VOLPEX_SHM`; bound before the process registers, so no
    /// peer finds it missing).
    pub shm: Option<super::shm::Listener>,
}

/// Who is in the job, as the launcher's table says when this process joins.
#[derive(Debug, Clone, Default)]
pub struct Membership {
    /// Peer listener of every replica, `[rank][replica]`; `None` for a dead one or one
    /// that is `starting`.
    pub addrs: Vec<Vec<Option<SocketAddr>>>,
    /// Replicas whose newest incarnation the launcher started and which had not
    /// registered: their rank is not lost, they are reached once they join.
    pub starting: Vec<ReplicaId>,
    /// Incarnation of every replica, `[rank][replica]`.
    pub incarnations: Vec<Vec<u32>>,
    /// This process's incarnation.
    pub incarnation: u32,
    /// `Some(n)`: a regenerated incarnation, caught up after receiving n messages.
    pub catch_up: Option<u64>,
    /// It takes its draining predecessor's state over before it runs (`VOLPEX_HANDOVER`):
    /// not catching up, and what the table says of its siblings is taken in only after
    /// that restore (`settle_after_handover`), as a caught-up replica takes it.
    pub handover: bool,
}

impl Membership {
    /// A job of one process.
    pub fn alone() -> Membership {
        Membership {
            addrs: vec![vec![None]],
            starting: Vec::new(),
            incarnations: vec![vec![0]],
            incarnation: 0,
            catch_up: None,
            handover: false,
        }
    }
}

/// The event loop state of one replica.
pub struct Core {
    /// The protocol engine this loop drives.
    pub engine: Engine,
    pub(super) me: ReplicaId,
    pub(super) key: JobKey,
    pub(super) cfg: Config,
    pub(super) poll: Poll,
    events: Events,
    pub(super) listener: Option<TcpListener>,
    pub(super) conns: Map<Token, Conn>,
    /// Connection our frames to a peer go on (dialing or established).
    pub(super) peers: Map<ReplicaId, Token>,
    pub(super) launcher: Option<Token>,
    /// Connections with frames queued since the last flush.
    pub(super) dirty: Vec<Token>,
    addrs: Vec<Vec<Option<SocketAddr>>>,
    /// This process's incarnation (see `ToProcess::Joining`).
    pub(super) incarnation: u32,
    /// The newest incarnation known of every replica, `[rank][replica]`: connections
    /// from older ones are closed, their handshakes refused.
    pub(super) incarnations: Vec<Vec<u32>>,
    /// Incarnations below these were declared dead: their connections are closed and
    /// their handshakes refused even before a successor joins.
    fenced_below: Map<ReplicaId, u32>,
    /// A regenerated incarnation: caught up once it received this many messages.
    pub(super) catch_up: Option<u64>,
    next_token: usize,
    /// The transport's one clock (see `clock`).
    clock: TransportClock,
    pub(super) shutdown: bool,
    signals: Arc<Signals>,
    /// Fault injection: exit right after making this many coordinated choices.
    pub exit_after_choices: Option<u64>,
    /// Scratch list of what one read produced (kept to avoid an allocation per read).
    steps: Vec<Step>,
    /// Since when the turns found no event (the caller waits): deferred frames go once
    /// that lasted `IDLE_FLUSH_AFTER`.
    idle_since: Option<Duration>,
    /// When a large message was last read or sent (it caps the spin for a while).
    bulk: BulkWindow,
    /// When the sockets were last polled (see `send::read_before_send`).
    pub(super) polled_at: Duration,
    /// When the timers were last consulted (`KERNEL_POLL_EVERY`; the kernel was polled
    /// then too).
    timers_at: Duration,
    /// The counters the launcher last got (see `stats`).
    pub(super) stats_sent: super::stats::StatsSent,
    /// Where this replica stands with draining (shared with the heartbeat threads).
    pub(super) drain: Arc<Drain>,
    /// Replicas the table gave no address and did not list as starting, kept for
    /// `settle_after_handover`.
    dead_at_start: Vec<ReplicaId>,
    /// Replicas the table listed as starting, kept for `settle_after_handover`.
    starting_at_start: Vec<ReplicaId>,
    /// Shared-memory connections to peers on this host.
    pub(super) colocated: super::colocated::Colocated,
}

impl Core {
    /// A core for `me`; `listener` accepts peers, `launcher` is the authenticated control
    /// connection (absent for a single-process run).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        me: ReplicaId,
        (ranks, replicas): (u32, u32),
        key: JobKey,
        cfg: Config,
        listeners: Listeners,
        launcher: Option<std::net::TcpStream>,
        table: Membership,
        clock: TransportClock,
        drain: Arc<Drain>,
    ) -> io::Result<(Core, Waker)> {
        let Membership {
            addrs,
            starting,
            incarnations,
            incarnation,
            catch_up,
            handover,
        } = table;
        let Listeners { tcp: listener, shm } = listeners;
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKER)?;
        super::keepalive::describe(cfg.peer_timeout);
        let mut core = Core {
            engine: Engine::joining(me, ranks, replicas, cfg.protocol.clone(), &incarnations),
            me,
            key,
            cfg,
            poll,
            events: Events::with_capacity(256),
            listener,
            conns: Map::default(),
            peers: Map::default(),
            launcher: None,
            dirty: Vec::new(),
            addrs,
            incarnation,
            incarnations,
            fenced_below: Map::default(),
            catch_up,
            next_token: FIRST_CONN,
            clock,
            shutdown: false,
            signals: Arc::new(Signals::default()),
            exit_after_choices: None,
            steps: Vec::new(),
            idle_since: None,
            bulk: BulkWindow::default(),
            polled_at: Duration::ZERO,
            timers_at: Duration::ZERO,
            stats_sent: Default::default(),
            drain,
            dead_at_start: Vec::new(),
            starting_at_start: Vec::new(),
            colocated: Default::default(),
        };
        if let Some(l) = core.listener.as_mut() {
            core.poll
                .registry()
                .register(l, LISTENER, Interest::READABLE)?;
        }
        if let Some(std_stream) = launcher {
            std_stream.set_nonblocking(true)?;
            let stream = TcpStream::from_std(std_stream);
            let token = core.token();
            let mut conn = Conn::incoming(stream, Duration::ZERO)?;
            conn.register(core.poll.registry(), token, Interest::READABLE)?;
            conn.link.establish(PeerId::Launcher);
            conn.reader.max_payload = CONTROL_PAYLOAD_BYTES_MAX;
            core.conns.insert(token, conn);
            core.launcher = Some(token);
        }
        core.start_colocated(shm);
        if core.catch_up.is_some() && !handover {
            core.engine.set_catching_up(true);
        }
        // Replicas that never registered are dead from the start, unless starting.
        core.dead_at_start = core
            .addrs
            .iter()
            .enumerate()
            .flat_map(|(r, reps)| {
                reps.iter()
                    .enumerate()
                    .filter(|(_, a)| a.is_none())
                    .map(move |(k, _)| ReplicaId::new(r as u32, k as u32))
            })
            .filter(|r| !starting.contains(r))
            .collect();
        core.starting_at_start = starting;
        if !handover {
            core.take_in_table_at_start(Duration::ZERO);
        }
        let now = core.now();
        core.engine.start(now);
        Ok((core, waker))
    }

    /// What the table said of the others: the dead are dead, the starting are waited
    /// for.
    fn take_in_table_at_start(&mut self, now: Duration) {
        let starting = std::mem::take(&mut self.starting_at_start);
        self.engine.handle_peers_starting(now, &starting);
        for d in std::mem::take(&mut self.dead_at_start) {
            self.engine.handle_peer_down(now, d, true);
        }
    }

    /// A new incarnation made with `Membership::handover`, once its predecessor's state is
    /// restored (`restored`) or could not be fetched: in the second case it catches up as
    /// any new incarnation; then the siblings the table gave no address are dead to it (a
    /// dead leader's choices are taken over by a replica holding its rank's state, and
    /// one catching up retires).
    pub fn settle_after_handover(&mut self, restored: bool) {
        if !restored && self.catch_up.is_some() {
            self.engine.set_catching_up(true);
        }
        let now = self.now();
        self.take_in_table_at_start(now);
    }

    /// The job key.
    pub fn key(&self) -> &JobKey {
        &self.key
    }

    /// This process's incarnation.
    pub fn incarnation(&self) -> u32 {
        self.incarnation
    }

    /// The tunables this loop runs with.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Flags shared with the progress thread.
    pub fn signals(&self) -> Arc<Signals> {
        self.signals.clone()
    }

    /// Time since the process joined, the engine's clock.
    pub fn now(&self) -> Duration {
        self.clock.now()
    }

    /// The transport's clock.
    pub fn clock(&self) -> TransportClock {
        self.clock.clone()
    }

    /// True once the launcher said the job is done (or is gone).
    pub fn shutdown_requested(&self) -> bool {
        self.shutdown
    }

    pub(super) fn token(&mut self) -> Token {
        let t = Token(self.next_token);
        self.next_token += 1;
        t
    }

    /// The outcome of a receive or probe, once complete (see `Engine::take_later`). The
    /// pulls an eager stream makes for its next messages leave before the application
    /// gets the message: it may compute next, and a pull that waited for its next call
    /// into the library would reach the sender after the send it was meant for (LU's
    /// pipeline: one step behind on every step). A lazy stream's pulls wait for a later
    /// write anyway: they are worked out at the next turn (`turn_with`), after the
    /// application's answer to the message is on its way.
    pub fn take(&mut self, id: RecvId) -> Option<Result<Matched, volpex_proto::pull::RecvError>> {
        // Asked after every turn of a wait: the clock is read once it is done.
        if !self.engine.is_done(id) {
            return None;
        }
        let clock = &self.clock;
        let r = self.engine.take_later(|| clock.now(), id);
        // A failed receive may have ended this replica (retired): `flush` tells the
        // launcher so before the process exits, as its exit code alone would not.
        if r.is_some() && (self.engine.has_transmit() || matches!(r, Some(Err(_)))) {
            self.flush();
        }
        r
    }

    /// `flush`, including every frame the engine lets wait (speculative pulls).
    pub fn flush_all(&mut self) {
        while let Some((to, frame)) = self.engine.poll_deferred() {
            self.route(to, frame);
        }
        self.flush();
    }

    /// Moves every frame the engine wants sent now onto its connection (the rests of
    /// frames direct writes began first, each on its link), and the deferred frames to
    /// peers that get a write anyway, then writes each connection that got frames once
    /// (one `writev` for all of them).
    pub fn flush(&mut self) {
        // Nothing routed, nothing of the engine's waiting (most turns of a wait).
        if self.dirty.is_empty() && !self.engine.has_output() && self.exit_after_choices.is_none() {
            return;
        }
        if let Some(n) = self.exit_after_choices {
            if self.engine.stats().choices >= n {
                eprintln!(
                    "volpex[{}] exits after choice {n} (fault injection)",
                    self.me
                );
                exit::end(End::Fault);
            }
        }
        while let Some(r) = self.engine.poll_resumed() {
            self.route_resumed(r);
        }
        while let Some((to, frame)) = self.engine.poll_transmit() {
            self.route(to, frame);
        }
        self.write_before_riders();
        while !self.dirty.is_empty() {
            let (peers, dirty) = (&self.peers, &self.dirty);
            let Some((to, frame)) = self
                .engine
                .poll_deferred_to(|to| peers.get(&to).is_some_and(|t| dirty.contains(t)))
            else {
                break;
            };
            self.route(to, frame);
        }
        // In the order the connections got frames: the first message routed goes first.
        let mut dirty = std::mem::take(&mut self.dirty);
        for t in dirty.drain(..) {
            self.flush_conn(t);
        }
        self.dirty = dirty;
        self.handle_engine_events();
    }

    /// A shared-memory connection that got frames to send now writes them before the
    /// deferred frames that ride along (speculative pulls) are routed, and those go in a
    /// second write: a peer spinning on the ring reads a message without the pulls
    /// behind it, and serves those pulls after its caller took the message rather than
    /// before (a pull half a window ahead is not needed sooner). Over TCP both go in one
    /// write: a second costs a system call.
    fn write_before_riders(&mut self) {
        if !self.has_colocated() {
            return; // TCP alone: nothing to look up per flush
        }
        let mut i = 0;
        while let Some(&t) = self.dirty.get(i) {
            i += 1;
            if self.conns.get(&t).is_some_and(Conn::is_shm) {
                self.flush_conn(t);
            }
        }
    }

    fn route(&mut self, to: ReplicaId, frame: Frame) {
        if !self.engine_knows_alive(to) {
            return;
        }
        let token = match self.peers.get(&to) {
            Some(t) => *t,
            None => {
                let now = self.now();
                match self.dial(now, to) {
                    Some(t) => t,
                    None => {
                        self.engine.handle_peer_down(now, to, false);
                        return;
                    }
                }
            }
        };
        if self.has_colocated() && self.publish_in_place(token, to, &frame) {
            return;
        }
        let (h, payload) = frame.to_parts();
        if let Some(c) = self.conns.get_mut(&token) {
            c.send(h, payload);
            self.mark_dirty(token);
        }
    }

    /// The rest of a frame a direct write began goes first on the link it began on
    /// (frames routed there since, such as a deferred speculative pull, must not land
    /// inside it on the wire), or nowhere if that connection is gone.
    fn route_resumed(&mut self, r: Resumed) {
        if !self.engine_knows_alive(r.to) {
            return;
        }
        let token = Token(r.link as usize);
        let (h, payload) = r.frame.to_parts();
        if let Some(c) = self.conns.get_mut(&token) {
            c.link.out.push_front_rest(&h, payload, r.written);
            self.mark_dirty(token);
        }
    }

    pub(super) fn mark_dirty(&mut self, token: Token) {
        if !self.dirty.contains(&token) {
            self.dirty.push(token);
        }
    }

    pub(super) fn engine_knows_alive(&self, to: ReplicaId) -> bool {
        self.engine.rank_alive(to.rank) && !self.dead_peer(to)
    }

    fn dead_peer(&self, to: ReplicaId) -> bool {
        self.addr_of(to).is_none()
    }

    /// The newest incarnation of `r` known here.
    pub(super) fn incarnation_of(&self, r: ReplicaId) -> u32 {
        r.entry(&self.incarnations).copied().unwrap_or(0)
    }

    /// Whether incarnation `inc` of `r` is older than the newest known or was declared
    /// dead: nothing from it is taken.
    pub(super) fn is_stale(&self, r: ReplicaId, inc: u32) -> bool {
        inc < self.incarnation_of(r) || self.fenced_below.get(&r).is_some_and(|&b| inc < b)
    }

    /// Incarnation `inc` of `r` was declared dead: close its connections, refuse it from
    /// now on.
    pub(super) fn fence_incarnation(&mut self, r: ReplicaId, inc: u32) {
        let below = inc.saturating_add(1);
        let slot = self.fenced_below.entry(r).or_insert(0);
        *slot = (*slot).max(below);
        self.close_incarnations_below(r, below, "declared dead (fenced)");
    }

    /// Closes every connection to an incarnation of `r` older than `below`.
    fn close_incarnations_below(&mut self, r: ReplicaId, below: u32, why: &str) {
        let old: Vec<Token> = self
            .conns
            .iter()
            .filter(|(_, c)| {
                matches!(c.intended_peer(), Some(PeerId::Replica(p, i)) if p == r && i < below)
            })
            .map(|(t, _)| *t)
            .collect();
        for t in old {
            self.close(t, why);
        }
    }

    /// A new incarnation of `r` joins (the launcher's JOINING notice, or its handshake
    /// arriving first): close every connection of older ones, route to the new one.
    /// `handover`: it takes its draining predecessor's state over.
    pub(super) fn on_joining(
        &mut self,
        r: ReplicaId,
        inc: u32,
        addr: Option<SocketAddr>,
        handover: bool,
    ) {
        let known = self.incarnation_of(r);
        // Our own successor (this replica drains and hands over): nothing to route.
        if r == self.me || self.is_stale(r, inc) {
            return;
        }
        if let (Some(a), Some(slot)) = (addr, r.entry_mut(&mut self.addrs)) {
            *slot = Some(a);
        }
        if inc == known {
            // One the table listed as starting registered (otherwise nothing new).
            let now = self.now();
            self.engine.handle_peer_joining(now, r, inc, handover);
            return;
        }
        if let Some(slot) = r.entry_mut(&mut self.incarnations) {
            *slot = inc;
        }
        self.close_incarnations_below(r, inc, "an old incarnation (fenced)");
        log::info!("{}: incarnation {inc} of {r} joins", self.me);
        let now = self.now();
        self.engine.handle_peer_joining(now, r, inc, handover);
    }

    pub(super) fn addr_of(&self, to: ReplicaId) -> Option<SocketAddr> {
        to.entry(&self.addrs).copied().flatten()
    }

    /// The peer listener of every replica of `rank` (`None`: dead).
    pub(super) fn addrs_of_rank(&self, rank: u32) -> &[Option<SocketAddr>] {
        self.addrs.get(rank as usize).map_or(&[], Vec::as_slice)
    }

    /// Writes what the connection can take; closes it on error.
    pub(super) fn flush_conn(&mut self, token: Token) {
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        if c.link.out.is_empty() {
            return;
        }
        match c.link.out.flush_to(&mut c.stream) {
            Ok(true) => {
                if c.want_write {
                    // Keep WRITABLE while a connect is pending (its completion shows there).
                    let connecting = c.peer().is_none() && c.intended_peer().is_some();
                    if !connecting {
                        c.want_write = false;
                        let _ = c.reregister(self.poll.registry(), token, Interest::READABLE);
                    }
                }
            }
            Ok(false) => {
                if !c.want_write {
                    c.want_write = true;
                    let _ = c.reregister(
                        self.poll.registry(),
                        token,
                        Interest::READABLE | Interest::WRITABLE,
                    );
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {}
            Err(e) => self.close(token, &format!("write failed: {e}")),
        }
    }

    /// Closes a connection. If it carried an authenticated replica (or the one we dialed),
    /// that replica is reported dead to the engine.
    pub(super) fn close(&mut self, token: Token, why: &str) {
        let Some(mut c) = self.conns.remove(&token) else {
            return;
        };
        let _ = c.deregister(self.poll.registry());
        let now = self.now();
        if self.colocated_closed(token, &mut c, now) {
            return;
        }
        let peer = c.intended_peer();
        match peer {
            Some(PeerId::Launcher) => {
                // A replica handing over is replaced: the grace bounds its life.
                if !self.shutdown && !self.drain.handing_over() {
                    log::error!(
                        "volpex: replica {}: connection to the launcher lost ({why}); exiting",
                        self.me
                    );
                    exit::end(End::Orphaned);
                }
            }
            Some(PeerId::Replica(r, inc)) if self.is_stale(r, inc) => {
                log::debug!(
                    "{}: connection to an old incarnation of {r} closed",
                    self.me
                );
                if self.peers.get(&r) == Some(&token) {
                    self.peers.remove(&r);
                }
            }
            Some(PeerId::Replica(r, inc)) => {
                log::debug!("{}: connection to {r} closed: {why}", self.me);
                // Another authenticated connection to it may still be open.
                let other = self
                    .conns
                    .iter()
                    .find(|(_, o)| o.peer() == Some(PeerId::Replica(r, inc)))
                    .map(|(t, _)| *t);
                if self.peers.get(&r) == Some(&token) {
                    match other {
                        Some(t) => self.peers.insert(r, t),
                        None => self.peers.remove(&r),
                    };
                }
                if other.is_none() {
                    let now = self.now();
                    self.engine.handle_peer_down(now, r, false);
                }
            }
            None => log::debug!("{}: unauthenticated connection dropped: {why}", self.me),
        }
    }

    /// Runs one round of the event loop: waits at most `timeout` (None = until something
    /// happens or a protocol timer fires), handles what happened, fires timers, writes.
    /// `background` marks the progress thread, which yields to a waiting application.
    pub fn turn(&mut self, timeout: Option<Duration>, background: bool) -> io::Result<()> {
        self.turn_with(timeout, background, &mut [])
    }

    /// `turn`, offering waiting receives' buffers for their messages to land in directly.
    pub fn turn_with(
        &mut self,
        timeout: Option<Duration>,
        background: bool,
        landings: &mut [Landing<'_>],
    ) -> io::Result<()> {
        // One clock reading for the turn, unless its poll may sleep.
        let before = self.now();
        // The pulls ahead of the message taken last (`take`).
        self.engine.speculate_pending(before);
        // Deferred frames go once the caller waits: before a turn that may sleep, and
        // after turns that found nothing for a while (so a message already in a socket,
        // or about to arrive, is read first: writing costs the receiver a few µs).
        let idle = self
            .idle_since
            .is_some_and(|t| before.saturating_sub(t) >= IDLE_FLUSH_AFTER);
        let spinning = timeout == Some(Duration::ZERO) && !background;
        if !spinning || idle {
            self.flush_all();
        } else {
            self.flush();
        }
        // A spinning caller consults its timers only now and then; one whose peers are
        // all on this host reads its rings every turn and asks the kernel only then too.
        let every = if self.cfg.shared_host {
            KERNEL_POLL_EVERY_SHARED
        } else {
            KERNEL_POLL_EVERY
        };
        let timers = timers_due(spinning, before, self.timers_at, every);
        let kernel = timers || !self.rings_only();
        let mut events = std::mem::replace(&mut self.events, Events::with_capacity(0));
        let (mut deadline, mut handshaking, mut slept) = (None, false, false);
        let now = if kernel {
            let mut wait = timeout;
            if timers {
                // Timers set during this turn fire on the next one.
                deadline = self.engine.poll_timeout();
                if let Some(at) = deadline {
                    let d = at.saturating_sub(before);
                    wait = Some(wait.map_or(d, |w| w.min(d)));
                }
                if let Some(d) = self.report_stats(before) {
                    wait = Some(wait.map_or(d, |w| w.min(d)));
                }
                handshaking = self.conns.values().any(|c| c.peer().is_none());
                if handshaking {
                    let d = self.cfg.connect_timeout.min(Duration::from_millis(100));
                    wait = Some(wait.map_or(d, |w| w.min(d)));
                }
            }
            // Whoever sleeps in poll holding the core is woken when an application thread
            // (other than itself) wants the core; it does not sleep if one already does.
            let others = usize::from(!background);
            slept = wait != Some(Duration::ZERO);
            let res = if slept {
                self.signals.in_poll.store(true, Ordering::SeqCst);
                if self.signals.app_waiting.load(Ordering::SeqCst) > others
                    || self.colocated_sleep()
                {
                    wait = Some(Duration::ZERO);
                }
                let r = self.poll.poll(&mut events, wait);
                self.signals.in_poll.store(false, Ordering::SeqCst);
                r
            } else {
                self.poll.poll(&mut events, wait)
            };
            match res {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.events = events;
                    return Err(e);
                }
            }
            // A poll that did not wait took a fraction of a microsecond.
            let now = if slept { self.now() } else { before };
            if timers {
                self.timers_at = now;
            }
            now
        } else {
            events.clear();
            before
        };
        self.polled_at = now;
        for ev in events.iter() {
            match ev.token() {
                LISTENER => self.accept(),
                WAKER => {}
                SHM_LISTENER => self.accept_colocated(),
                t => {
                    if !self.on_colocated_event(t) {
                        continue;
                    }
                    if ev.is_writable() {
                        self.on_writable(t);
                    }
                    if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                        self.on_readable(t, landings, now);
                    }
                }
            }
        }
        let came = !events.is_empty();
        self.events = events;
        let came = self.colocated_turn(now, slept, landings) || came;
        self.idle_since = match self.idle_since {
            _ if came => None,
            Some(t) => Some(t),
            None => Some(now),
        };
        if deadline.is_some() || handshaking {
            if deadline.is_some_and(|at| at <= now) {
                self.engine.handle_timeout(now);
            }
            if handshaking {
                self.expire_handshakes(now);
            }
        }
        if background {
            self.flush_all();
        } else {
            self.flush();
        }
        Ok(())
    }

    fn on_writable(&mut self, token: Token) {
        if let Some(c) = self.conns.get_mut(&token) {
            if let Ok(Some(e)) | Err(e) = c.take_error() {
                let why = format!("connect failed: {e}");
                self.close(token, &why);
                return;
            }
        }
        self.flush_conn(token);
    }

    pub(super) fn on_readable(
        &mut self,
        token: Token,
        landings: &mut [Landing<'_>],
        now: Duration,
    ) {
        let me = PeerId::Replica(self.me, self.incarnation);
        let key = self.key;
        let Some(c) = self.conns.get_mut(&token) else {
            return;
        };
        let mut steps = std::mem::take(&mut self.steps);
        let mut handshake_err = None;
        let Conn {
            stream,
            reader,
            link,
            ..
        } = c;
        // The handshake must advance frame by frame, so the link is updated inline.
        let result = reader.read_from(stream, landings, |h, p| {
            match link.on_frame(&key, me, h, p) {
                Ok(s) => {
                    // Frames right behind the one that ends the handshake may be large.
                    let limit = match s {
                        Step::Established(PeerId::Launcher) => Some(CONTROL_PAYLOAD_BYTES_MAX),
                        Step::Established(PeerId::Replica(..)) => Some(FRAME_PAYLOAD_BYTES_MAX),
                        Step::Nothing | Step::Frame(..) => None,
                    };
                    steps.push(s);
                    Ok(limit)
                }
                Err(e) => {
                    handshake_err = Some(e.to_string());
                    Err(WireError::Unexpected {
                        kind: h.kind,
                        context: "(handshake failed)",
                    })
                }
            }
        });
        if c.peer().is_some() {
            c.reader.max_payload = if c.peer() == Some(PeerId::Launcher) {
                CONTROL_PAYLOAD_BYTES_MAX
            } else {
                FRAME_PAYLOAD_BYTES_MAX
            };
        }
        for s in steps.drain(..) {
            match s {
                Step::Nothing => {}
                Step::Established(PeerId::Replica(r, inc)) => {
                    if self.is_stale(r, inc) {
                        self.close(token, "an old incarnation (fenced)");
                        return;
                    }
                    if inc > self.incarnation_of(r) {
                        // Its handshake outran the launcher's JOINING notice (which
                        // would have said whether it takes a handover over).
                        self.on_joining(r, inc, None, false);
                    }
                    log::debug!("{}: connection to {r} established", self.me);
                    self.settle_route(r, token);
                }
                Step::Established(PeerId::Launcher) => {
                    log::warn!("{}: a peer claimed to be the launcher", self.me);
                }
                // An old incarnation's connections are closed the moment it is fenced
                // (`fence_incarnation`, `on_joining`) and its handshakes refused: no
                // per-frame check.
                Step::Frame(PeerId::Replica(r, _), h, p) => match Frame::from_parts(&h, p) {
                    Ok(f) => {
                        self.note_bulk(h.len as usize, now);
                        if let Frame::Data { key, payload, .. } = &f {
                            if payload.is_empty() && h.len > 0 {
                                self.engine.note_landed(*key, h.len as usize);
                            }
                        }
                        self.engine.handle_frame(now, r, f)
                    }
                    Err(e) => {
                        self.close(token, &format!("bad frame from {r}: {e}"));
                        return;
                    }
                },
                Step::Frame(PeerId::Launcher, h, p) => self.on_control(&h, &p),
            }
        }
        self.steps = steps;
        match result {
            Ok(ReadStatus::Open) => self.flush_conn(token),
            Ok(ReadStatus::Closed) => self.close(token, "closed by peer"),
            Err(e) => {
                let why = handshake_err.unwrap_or_else(|| e.to_string());
                self.close(token, &why);
            }
        }
    }

    /// A message of `len` bytes was read or sent: a large one caps the spin for a while.
    pub(super) fn note_bulk(&mut self, len: usize, now: Duration) {
        self.bulk.note(len, now);
    }

    /// How a blocked call waits now (see `spin`).
    pub fn spin_config(&self) -> Spin {
        self.spin_config_at(self.now())
    }

    /// How a call blocked at `now` waits.
    pub fn spin_config_at(&self, now: Duration) -> Spin {
        self.bulk.spin(&self.cfg, now)
    }

    /// The clock reading of the latest turn (a spinning caller needs no fresher one).
    pub fn turned_at(&self) -> Duration {
        self.polled_at
    }

    /// Whether a large message is being read straight into a waiting receive's buffer
    /// (its reader must not change hands before the frame is complete).
    pub fn landing_in_progress(&self) -> bool {
        self.conns.values().any(|c| c.reader.is_landing())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use super::*;
    use crate::transport::clock::Clock;
    use volpex_proto::message::matching::{Mode, RecvSpec, Source, TagSel};

    /// A clock the test moves by hand.
    #[derive(Default)]
    struct Manual(AtomicU64);

    impl Clock for Manual {
        fn now(&self) -> Duration {
            Duration::from_micros(self.0.load(Ordering::SeqCst))
        }
    }

    /// A core of a one-process job with no peers, on a hand-moved clock reading 5 s.
    fn core_alone_at_5_s() -> (Core, Waker, Arc<Manual>) {
        let clock = Arc::new(Manual::default());
        clock.0.store(5_000_000, Ordering::SeqCst);
        let (core, waker) = Core::new(
            ReplicaId::new(0, 0),
            (1, 1),
            [0; 32],
            Config::default(),
            Listeners::default(),
            None,
            Membership::alone(),
            TransportClock::Given(clock.clone()),
            Arc::new(Drain::default()),
        )
        .expect("a core alone");
        (core, waker, clock)
    }

    /// Rank `rank` of a two-rank job whose peers are on this host, both listening.
    fn core_of_two(rank: u32, addrs: &[SocketAddr; 2], tcp: TcpListener) -> Core {
        let clock = Arc::new(Manual::default());
        clock.0.store(5_000_000, Ordering::SeqCst);
        let shm = crate::transport::shm::Listener::bind(addrs[rank as usize]).ok();
        assert!(shm.is_some(), "a shared-memory listener");
        let table = Membership {
            addrs: addrs.iter().map(|a| vec![Some(*a)]).collect(),
            incarnations: vec![vec![0], vec![0]],
            ..Membership::default()
        };
        let (core, _waker) = Core::new(
            ReplicaId::new(rank, 0),
            (2, 1),
            [0; 32],
            Config::default(),
            Listeners {
                tcp: Some(tcp),
                shm,
            },
            None,
            table,
            TransportClock::Given(clock),
            Arc::new(Drain::default()),
        )
        .expect("a core");
        core
    }

    /// Publishing writes of `core`'s shared-memory connections (each side may have
    /// dialed one).
    /// The payload of receive `id` of `core`, which a slot brings: turns until it is
    /// taken.
    fn slot_message(core: &mut Core, id: RecvId) -> bytes::Bytes {
        for _ in 0..20_000 {
            core.turn(Some(Duration::from_micros(100)), false)
                .expect("a turn");
            match core.take(id) {
                None => {}
                Some(Ok(Matched::Message { payload, .. })) => return payload,
                Some(other) => panic!("{other:?}"),
            }
        }
        panic!("the message in the slot never came");
    }

    fn ring_writes(core: &mut Core) -> usize {
        let tokens = core.colocated_tokens().to_vec();
        assert!(!tokens.is_empty(), "a connection through shared memory");
        tokens
            .iter()
            .filter_map(|t| core.conns.get_mut(t)?.shm().map(|p| p.writes))
            .sum()
    }

    /// A message to a peer through shared memory goes in a write of its own, and the
    /// speculative pulls that ride along (here: rank 1's, for rank 0's next messages,
    /// made after it took the first, as its next turn makes them) in a second one, so
    /// the peer reads the message without them (`Core::write_before_riders`).
    #[test]
    fn a_message_through_shared_memory_is_written_before_the_pulls_riding_along() {
        let any = "127.0.0.1:0".parse().expect("an address");
        let tcp =
            [TcpListener::bind(any), TcpListener::bind(any)].map(|l| l.expect("a TCP listener"));
        let addrs = [0, 1].map(|i| tcp[i].local_addr().expect("its address"));
        let [t0, t1] = tcp;
        let (mut c0, mut c1) = (core_of_two(0, &addrs, t0), core_of_two(1, &addrs, t1));
        let spec = |src, tag| RecvSpec {
            comm: 0,
            src: Source::Rank(src),
            tag: TagSel::Tag(tag),
        };
        // Rank 0 asks for rank 1's answer before it sends the first message (on the
        // same connection, so rank 1 has that pull parked when the message comes).
        let now = c0.now();
        c0.engine.post(now, spec(1, 8), Mode::Receive);
        c0.flush_all();
        let id = c1.engine.post(now, spec(0, 7), Mode::Receive);
        c1.flush_all();
        c0.send(0, 7, 1, b"first").expect("sent");
        let mut turns = 0;
        let got = loop {
            // Turns that may wait a little (the clocks stand still: a spinning turn
            // would consult the kernel, which sees the connections come, only once).
            for c in [&mut c0, &mut c1] {
                c.turn(Some(Duration::from_micros(100)), false)
                    .expect("a turn");
            }
            if let Some(r) = c1.take(id) {
                break r;
            }
            turns += 1;
            assert!(turns < 10_000, "the message never came");
        };
        assert!(matches!(got, Ok(Matched::Message { .. })), "{got:?}");
        // What the start of rank 1's next turn does (`Engine::take_later`).
        let now = c1.now();
        c1.engine.speculate_pending(now);
        // Larger than a slot: through the ring (a small one goes in a slot, below).
        let before = ring_writes(&mut c1);
        c1.send(0, 8, 0, &[7u8; 2048]).expect("sent");
        assert_eq!(
            ring_writes(&mut c1) - before,
            2,
            "the message, then the pulls riding along"
        );
        // Rank 1's pulls for rank 0's next messages are parked at rank 0 once it read
        // them: a small message answering one is published in a slot, not written into
        // the ring, and rank 1 reads it in place (docs/SHM.md, "Messages read in place").
        let id = park_a_pull(&mut c0, &mut c1);
        let (writes, slots) = (ring_writes(&mut c0), c0.colocated.in_place_sent);
        c0.send(0, 7, 1, b"second").expect("sent");
        assert_eq!(ring_writes(&mut c0), writes, "nothing through the ring");
        assert_eq!(c0.colocated.in_place_sent, slots + 1, "one slot published");
        assert_eq!(
            c0.colocated.published_ahead, 1,
            "published by the send before it logged it"
        );
        assert_eq!(&slot_message(&mut c1, id)[..], b"second");
        // The slot goes before the log (`Core::publish_ahead`): rank 1 takes the third
        // message while rank 0 has not logged it yet, and logging it then answers the
        // pull with nothing more (no second slot, no frame).
        let id = park_a_pull(&mut c0, &mut c1);
        let (writes, slots) = (ring_writes(&mut c0), c0.colocated.in_place_sent);
        c0.publish_ahead(0, 7, 1, b"third");
        assert_eq!(c0.colocated.in_place_sent, slots + 1, "published");
        assert_eq!(&slot_message(&mut c1, id)[..], b"third");
        let now = c0.now();
        c0.engine
            .send(now, 0, 7, 1, bytes::Bytes::from_static(b"third"))
            .expect("logged");
        c0.flush();
        assert_eq!(c0.colocated.in_place_sent, slots + 1, "no second slot");
        assert_eq!(ring_writes(&mut c0), writes, "no frame through the ring");
    }

    /// Rank 1 (`c1`) posts a receive for rank 0's next message on tag 7, and both turn
    /// until its pull is parked at rank 0 (`c0`). Returns the receive.
    fn park_a_pull(c0: &mut Core, c1: &mut Core) -> RecvId {
        let spec = RecvSpec {
            comm: 0,
            src: Source::Rank(0),
            tag: TagSel::Tag(7),
        };
        let id = c1.engine.post(c1.now(), spec, Mode::Receive);
        c1.flush_all();
        let mut turns = 0;
        while !c0.engine.next_send_awaited(0, 7, 1) {
            for c in [&mut *c0, &mut *c1] {
                c.turn(Some(Duration::from_micros(100)), false)
                    .expect("a turn");
            }
            turns += 1;
            assert!(turns < 30_000, "the pull never came");
        }
        id
    }

    /// Two cores of a two-rank job on this host, rank 1 with a receive posted for rank 0's
    /// first message on tag 7 whose pull is parked at rank 0: rank 0's send of it is
    /// published in a slot. Returns both cores and the receive.
    fn pair_with_a_pull_parked() -> (Core, Core, RecvId) {
        let any = "127.0.0.1:0".parse().expect("an address");
        let tcp =
            [TcpListener::bind(any), TcpListener::bind(any)].map(|l| l.expect("a TCP listener"));
        let addrs = [0, 1].map(|i| tcp[i].local_addr().expect("its address"));
        let [t0, t1] = tcp;
        let (mut c0, mut c1) = (core_of_two(0, &addrs, t0), core_of_two(1, &addrs, t1));
        let id = park_a_pull(&mut c0, &mut c1);
        (c0, c1, id)
    }

    /// A message in a slot whose receive waits with its buffer lent (`landing_for`) is
    /// copied straight into that buffer and handed to the engine as landed: the receive
    /// completes with an empty payload and its length in the landing (docs/SHM.md,
    /// "Messages read in place"). A slot for no landing still comes as a payload.
    #[test]
    fn a_slot_lands_in_the_waiting_receives_buffer() {
        let (mut c0, mut c1, id) = pair_with_a_pull_parked();
        let want = c1.engine.landing_for(id).expect("its message is known");
        let mut buf = [0u8; 16];
        let mut landings = [Landing {
            want,
            buf: &mut buf,
            landed: None,
        }];
        let slots = c0.colocated.in_place_sent;
        c0.send(0, 7, 1, b"landed").expect("sent");
        assert_eq!(c0.colocated.in_place_sent, slots + 1, "published in a slot");
        let mut turns = 0;
        let got = loop {
            c1.turn_with(Some(Duration::from_micros(100)), false, &mut landings)
                .expect("a turn");
            if let Some(r) = c1.take(id) {
                break r;
            }
            turns += 1;
            assert!(turns < 20_000, "the message never came");
        };
        match got {
            Ok(Matched::Message { payload, .. }) => assert!(payload.is_empty(), "{payload:?}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(landings[0].landed, Some(6));
        assert_eq!(c1.colocated.landed, 1);
        assert_eq!(&buf[..6], b"landed");
        // The next message, with no buffer lent, comes as a payload.
        let id = park_a_pull(&mut c0, &mut c1);
        c0.send(0, 7, 1, b"copied").expect("sent");
        assert_eq!(&slot_message(&mut c1, id)[..], b"copied");
        assert_eq!(c1.colocated.landed, 1);
    }

    /// A slot whose epoch moves while it is copied into the waiting receive's buffer (its
    /// producer rewrote it under the reader): not delivered, the landing not filled, and
    /// the connection closed as on a corrupt ring.
    #[test]
    fn a_slot_moved_during_its_copy_into_the_receives_buffer_is_not_delivered() {
        let (mut c0, mut c1, id) = pair_with_a_pull_parked();
        let want = c1.engine.landing_for(id).expect("its message is known");
        let mut buf = [0u8; 16];
        let mut landings = [Landing {
            want,
            buf: &mut buf,
            landed: None,
        }];
        let conns = c1.colocated_tokens().len();
        c0.send(0, 7, 1, b"moved").expect("sent");
        crate::transport::shm::during_copy::set(|s| {
            s[0].fetch_add(2, Ordering::Relaxed);
        });
        for _ in 0..2_000 {
            c1.turn_with(Some(Duration::from_micros(100)), false, &mut landings)
                .expect("a turn");
            assert!(c1.take(id).is_none(), "a moved slot was delivered");
            if c1.colocated_tokens().len() < conns {
                break;
            }
        }
        assert!(c1.colocated_tokens().len() < conns, "the connection closed");
        assert_eq!(landings[0].landed, None, "the landing is not filled");
        assert_eq!(c1.colocated.landed, 0);
    }

    /// The loop reads time from the clock it was given, never from the system: a turn
    /// that waits for nothing leaves it where it was, and moving it by hand is what the
    /// engine sees.
    #[test]
    fn the_core_runs_on_the_clock_it_is_given() {
        let (mut core, _waker, clock) = core_alone_at_5_s();
        assert_eq!(core.now(), Duration::from_secs(5));
        core.turn(Some(Duration::ZERO), false).expect("a turn");
        assert_eq!(core.now(), Duration::from_secs(5));
        clock.0.store(7_000_000, Ordering::SeqCst);
        assert_eq!(core.now(), Duration::from_secs(7));
        assert_eq!(core.clock().now(), Duration::from_secs(7));
    }

    /// A spinning caller of a core at 5 s whose host has fewer cores than processes
    /// (`shared`) or not: its turns consult the timers at 5 s, not again until `every`
    /// passed (but poll), then again. Returns the core, its clock and the last reading
    /// before `every` passed, in microseconds.
    fn timers_consulted_every(shared: bool, every: Duration) -> (Core, Waker, Arc<Manual>, u64) {
        let (mut core, waker, clock) = core_alone_at_5_s();
        core.cfg.shared_host = shared;
        let spin = Some(Duration::ZERO);
        let start = Duration::from_secs(5);
        core.turn(spin, false).expect("a turn");
        assert_eq!(core.timers_at, start);
        let soon = 5_000_000 + every.as_micros() as u64 - 1;
        clock.0.store(soon, Ordering::SeqCst);
        core.turn(spin, false).expect("a turn");
        assert_eq!(core.timers_at, start, "not consulted again so soon");
        assert_eq!(core.turned_at(), Duration::from_micros(soon), "but polled");
        clock.0.store(soon + 1, Ordering::SeqCst);
        core.turn(spin, false).expect("a turn");
        assert_eq!(core.timers_at, start + every);
        (core, waker, clock, soon)
    }

    /// A spinning caller with no peer on this host (every peer over TCP) polls the
    /// kernel every turn but consults the timers only once `KERNEL_POLL_EVERY` passed; a
    /// turn that may sleep consults them every time.
    #[test]
    fn a_spinning_caller_consults_its_timers_only_every_kernel_poll_interval() {
        let (mut core, _waker, clock, soon) = timers_consulted_every(false, KERNEL_POLL_EVERY);
        assert!(!core.rings_only());
        // A turn that may sleep (here: a background turn, or a wait) consults them.
        clock.0.store(soon + 2, Ordering::SeqCst);
        core.turn(Some(Duration::ZERO), true)
            .expect("a background turn");
        assert_eq!(core.timers_at, Duration::from_micros(soon + 2));
        let start = Duration::from_secs(5);
        assert!(timers_due(false, start, start, KERNEL_POLL_EVERY));
        assert!(!timers_due(true, start, start, KERNEL_POLL_EVERY));
    }

    /// On a host with fewer cores than processes, a spinning caller (whose polls yield)
    /// consults its timers only every `KERNEL_POLL_EVERY_SHARED`.
    #[test]
    fn a_caller_on_a_crowded_host_consults_its_timers_less_often() {
        timers_consulted_every(true, KERNEL_POLL_EVERY_SHARED);
    }
}
