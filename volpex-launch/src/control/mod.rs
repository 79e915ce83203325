//! The launcher's control server: one thread running a mio event loop that accepts replica
//! connections, authenticates them with the job key (the sans-I/O handshake of
//! `volpex_proto::handshake`), takes their registration and forwards their control
//! messages as events.
//!
//! A replica opens two connections: the control connection (`Register` first) and the
//! heartbeat connection (`Heartbeat` first), on which the loop sends a beat every interval
//! and reports `Silent` when the replica has sent nothing for the timeout and its process
//! is not found starved (`vitals`, read here or by its host's agent); and, once its
//! program writes a file the file layer replicates, a third, the files connection
//! (`Files` first, see `volpex_files`). Connections that
//! have not yet said who they are are bounded in number (`PENDING_MAX`, the oldest goes
//! first) and in time (`HANDSHAKE_TIMEOUT`), so strangers cost neither threads nor more
//! than a fixed number of descriptors. A turn of the loop that comes much later than its
//! timer asked means volpexrun itself did not run (SIGSTOP, starved of CPU): every silence
//! clock restarts, so replicas are judged by what they did while we watched, and what they
//! said meanwhile reaches the job `STALL_GRACE` later, after the exits. Running out
//! of descriptors is reported to the job (`ControlEvent::Fatal`) with the limit.
//!
//! A connection names an incarnation of a replica (`PeerId::Replica(id, incarnation)`):
//! one from another incarnation than the current one of that replica (`Incarnations`,
//! which the driver raises before it starts a new incarnation) is closed at once, and
//! every event carries the incarnation it came from, so nothing an old incarnation does is
//! taken for the new one's.
//!
//! Must never decide anything about the job (`job` does) and never block on one replica.

use std::collections::HashMap;
use std::io;
use std::net::TcpStream as StdStream;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use volpex_proto::handshake::{JobKey, PeerId};
use volpex_proto::handshake::{Link, Step};
use volpex_proto::message::ReplicaId;
use volpex_proto::wire::control::{self, Liveness, ToLauncher};
use volpex_proto::wire::header::WireError;
use volpex_proto::wire::stream::{FrameReader, ReadError, ReadStatus};

use crate::event::{ControlEvent, Event};
use crate::vitals;

mod incarnations;
mod send;
pub use incarnations::Incarnations;
pub use send::send;

/// How long a new connection may take to authenticate and say what it is.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections not yet authenticated and identified, at most; a new one beyond this
/// closes the oldest (a replica's handshake takes a round trip, a stranger's forever).
pub const PENDING_MAX: usize = 64;
/// Largest control message a replica may send.
const CONTROL_PAYLOAD_BYTES_MAX: usize = volpex_proto::limits::CONTROL_PAYLOAD_BYTES_MAX;
const LISTENER: Token = Token(0);
/// After volpexrun itself stalled, what its replicas said meanwhile (a fence request
/// against a sibling that has since exited, say) waits this long, so that the exits the
/// process reapers report on waking reach the job first and failures are diagnosed by
/// their causes.
const STALL_GRACE: Duration = Duration::from_millis(300);
/// A replica whose heartbeat is overdue but whose process is runnable
/// (`vitals::Vitals::Runnable`: its machine starves it, it is not stopped; read here for a
/// replica on this machine, by its host's agent for one on another, see
/// `ControlEvent::Overdue`) is waited for up to this many heartbeat timeouts before it is
/// declared dead.
const STARVED_TIMEOUTS_MAX: u32 = 10;

/// Heartbeat timing on the launcher side.
#[derive(Debug, Clone, Copy)]
pub struct Beats {
    /// Beat interval.
    pub interval: Duration,
    /// Silence after which a replica is reported.
    pub timeout: Duration,
}

/// What a connection is.
enum Role {
    /// Handshake or first message not done; counts against `PENDING_MAX`.
    Pending { since: Instant },
    /// A replica's control connection, of this incarnation.
    Control(ReplicaId, u32),
    /// A replica's heartbeat connection, of this incarnation.
    Heartbeat(ReplicaId, u32),
    /// A replica's files connection, of this incarnation.
    Files(ReplicaId, u32),
}

struct Conn {
    stream: TcpStream,
    reader: FrameReader,
    link: Link,
    role: Role,
}

/// Silence clock of one replica's heartbeat connection.
struct Watch {
    /// Whose: the incarnation of its replica.
    inc: u32,
    heard: Instant,
    /// When its heartbeat came back after a gap (its host was cut off, or it was
    /// stopped): for a heartbeat timeout after that, what it says about others is doubtful.
    back_at: Option<Instant>,
    /// The connection, while open.
    token: Option<Token>,
    /// Its process was found runnable (starved, not dead) since it was last heard.
    starved: bool,
    /// On another host: when its host's agent was first asked about it since it was last
    /// heard, and the latest answer, with when it came.
    asked: Option<Instant>,
    host_said: Option<(Instant, vitals::Vitals)>,
}

/// What is known of the process of a replica whose heartbeat is overdue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Its vitals, read now here, or by its host's agent within `Beats::agent_window`.
    Vitals(vitals::Vitals),
    /// Its host's agent was asked less than `Beats::agent_window` ago and has not answered.
    Asked,
    /// Nothing: not on this machine, and its host's agent did not answer within
    /// `Beats::agent_window` (the host is gone, or the agent is).
    Nothing,
}

/// The loop's state.
struct Server {
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<Token, Conn>,
    next_token: usize,
    key: JobKey,
    ranks: u32,
    replicas: u32,
    beats: Beats,
    tx: Sender<Event>,
    /// The current incarnation of every replica.
    current: Incarnations,
    /// Heartbeat watch of every replica (rank-major), once its connection came.
    watches: Vec<Option<Watch>>,
    last_turn: Instant,
    next_beat: Instant,
    /// Accepting paused after running out of descriptors.
    accept_retry: Option<Instant>,
    fatal_sent: bool,
    /// A connection spoke another wire version and was told about (once: anyone may
    /// connect, so this must not flood the output or end the job).
    version_warned: bool,
    /// After a stall, events wait until then (see `STALL_GRACE`), in order.
    hold_until: Option<Instant>,
    held: Vec<ControlEvent>,
}

/// Serves control and heartbeat connections until the job's receiver is gone.
pub fn serve(
    listener: std::net::TcpListener,
    key: JobKey,
    ranks: u32,
    replicas: u32,
    beats: Beats,
    current: Incarnations,
    tx: Sender<Event>,
) {
    let fail = |tx: &Sender<Event>, e: io::Error| {
        let _ = tx.send(Event::Control(ControlEvent::Fatal {
            why: format!("control server: {e}"),
        }));
    };
    let setup = listener.set_nonblocking(true).and_then(|()| {
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        Ok((poll, listener))
    });
    let (poll, listener) = match setup {
        Ok(x) => x,
        Err(e) => return fail(&tx, e),
    };
    let now = Instant::now();
    let mut server = Server {
        poll,
        listener,
        conns: HashMap::new(),
        next_token: 1,
        key,
        ranks,
        replicas,
        beats,
        tx,
        current,
        watches: (0..ranks as usize * replicas as usize)
            .map(|_| None)
            .collect(),
        last_turn: now,
        next_beat: now + beats.interval,
        accept_retry: None,
        fatal_sent: false,
        version_warned: false,
        hold_until: None,
        held: Vec::new(),
    };
    if let Err(e) = server.run() {
        fail(&server.tx, e);
    }
}

/// EMFILE (this process) or ENFILE (the system).
fn out_of_descriptors(e: &io::Error) -> bool {
    let code = e.raw_os_error();
    code == Some(nix::errno::Errno::EMFILE as i32) || code == Some(nix::errno::Errno::ENFILE as i32)
}

impl Beats {
    /// A silence longer than this is a gap: two beats missed, and some slack.
    fn gap(&self) -> Duration {
        self.interval * 2 + Duration::from_millis(200)
    }

    /// A host's agent asked about a silent replica (from half the timeout on) answers
    /// within this, or its host is taken for gone: at the timeout, unless the gap is
    /// longer.
    fn agent_window(&self) -> Duration {
        (self.timeout / 2).max(self.gap())
    }
}

impl Server {
    fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(256);
        loop {
            let now = Instant::now();
            let mut wake = self.next_beat;
            if let Some(t) = self.accept_retry {
                wake = wake.min(t);
            }
            if let Some(t) = self.oldest_pending() {
                wake = wake.min(t + HANDSHAKE_TIMEOUT);
            }
            if let Some(t) = self.hold_until {
                wake = wake.min(t);
            }
            match self
                .poll
                .poll(&mut events, Some(wake.saturating_duration_since(now)))
            {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            let now = Instant::now();
            self.check_stall(now);
            if self.hold_until.is_some_and(|t| now >= t) {
                self.hold_until = None;
                for ev in std::mem::take(&mut self.held) {
                    let _ = self.tx.send(Event::Control(ev));
                }
            }
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(now),
                    t => self.on_readable(t, now),
                }
            }
            if self.accept_retry.is_some_and(|t| now >= t) {
                self.accept_retry = None;
                self.accept(now);
            }
            self.expire_pending(now);
            if now >= self.next_beat {
                self.beat(now);
                self.next_beat = now + self.beats.interval;
            }
        }
    }

    /// A turn far later than the timer asked: volpexrun did not run, and what looks like
    /// silence of its replicas is its own. Every silence clock restarts now.
    fn check_stall(&mut self, now: Instant) {
        let gap = now.saturating_duration_since(self.last_turn);
        self.last_turn = now;
        if gap <= self.beats.gap() {
            return;
        }
        log::info!(
            "volpexrun did not run for {gap:?} (stopped or starved); heartbeat silence clocks restart"
        );
        for w in self.watches.iter_mut().flatten() {
            w.heard = now;
        }
        self.hold_until = Some(now + STALL_GRACE);
        for c in self.conns.values_mut() {
            if let Role::Pending { ref mut since } = c.role {
                *since = now;
            }
        }
    }

    /// Passes an event to the job, or holds it while a stall's grace lasts.
    fn emit(&mut self, ev: ControlEvent) {
        if self.hold_until.is_some() {
            self.held.push(ev);
        } else {
            let _ = self.tx.send(Event::Control(ev));
        }
    }

    fn oldest_pending(&self) -> Option<Instant> {
        self.conns
            .values()
            .filter_map(|c| match c.role {
                Role::Pending { since } => Some(since),
                Role::Control(..) | Role::Heartbeat(..) | Role::Files(..) => None,
            })
            .min()
    }

    fn accept(&mut self, now: Instant) {
        if self.accept_retry.is_some() {
            return;
        }
        loop {
            match self.listener.accept() {
                Ok((mut stream, from)) => {
                    let _ = stream.set_nodelay(true);
                    let pending = self
                        .conns
                        .values()
                        .filter(|c| matches!(c.role, Role::Pending { .. }))
                        .count();
                    if pending >= PENDING_MAX {
                        if let Some(t) = self.oldest_pending_token() {
                            log::debug!(
                                "too many unauthenticated control connections; closing the oldest"
                            );
                            self.close(t);
                        }
                    }
                    let token = Token(self.next_token);
                    self.next_token += 1;
                    if let Err(e) =
                        self.poll
                            .registry()
                            .register(&mut stream, token, Interest::READABLE)
                    {
                        log::debug!("cannot register the connection from {from}: {e}");
                        continue;
                    }
                    let reader = FrameReader::new();
                    self.conns.insert(
                        token,
                        Conn {
                            stream,
                            reader,
                            link: Link::accepting(),
                            role: Role::Pending { since: now },
                        },
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if out_of_descriptors(&e) => {
                    self.descriptors_exhausted(&e);
                    // The connection waits in the backlog; try again shortly.
                    self.accept_retry = Some(now + Duration::from_millis(100));
                    return;
                }
                Err(e) => {
                    log::warn!("accepting a control connection failed: {e}");
                    self.accept_retry = Some(now + Duration::from_millis(100));
                    return;
                }
            }
        }
    }

    fn oldest_pending_token(&self) -> Option<Token> {
        self.conns
            .iter()
            .filter_map(|(t, c)| match c.role {
                Role::Pending { since } => Some((since, *t)),
                Role::Control(..) | Role::Heartbeat(..) | Role::Files(..) => None,
            })
            .min()
            .map(|(_, t)| t)
    }

    /// Out of descriptors: tell the job once, with the limit, so it ends with a clear error
    /// instead of replicas waiting for a registration that cannot happen.
    fn descriptors_exhausted(&mut self, e: &io::Error) {
        if self.fatal_sent {
            return;
        }
        self.fatal_sent = true;
        let limit = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
            .map(|(soft, _)| soft.to_string())
            .unwrap_or_else(|_| "?".into());
        let _ = self.tx.send(Event::Control(ControlEvent::Fatal {
            why: format!(
                "volpexrun ran out of file descriptors ({e}; ulimit -n is {limit}): it needs \
                 about 5 per process of the job; raise the limit with `ulimit -n`"
            ),
        }));
    }

    fn expire_pending(&mut self, now: Instant) {
        let late: Vec<Token> = self
            .conns
            .iter()
            .filter(|(_, c)| {
                matches!(c.role, Role::Pending { since } if now > since + HANDSHAKE_TIMEOUT)
            })
            .map(|(t, _)| *t)
            .collect();
        for t in late {
            log::debug!("control connection did not authenticate within {HANDSHAKE_TIMEOUT:?}");
            self.close(t);
        }
    }

    /// Closes a connection; a control connection's end is reported, a heartbeat
    /// connection's leaves its watch running (silence decides, or the process's exit).
    fn close(&mut self, t: Token) {
        let Some(mut c) = self.conns.remove(&t) else {
            return;
        };
        let _ = self.poll.registry().deregister(&mut c.stream);
        match c.role {
            Role::Control(id, inc) => {
                self.emit(ControlEvent::Closed { id, inc });
            }
            Role::Heartbeat(id, inc) => {
                let i = self.idx(id);
                if let Some(w) = self.watches[i].as_mut().filter(|w| w.inc == inc) {
                    w.token = None;
                }
            }
            Role::Files(..) | Role::Pending { .. } => {}
        }
    }

    fn idx(&self, id: ReplicaId) -> usize {
        (id.rank * self.replicas + id.replica) as usize
    }

    fn on_readable(&mut self, t: Token, now: Instant) {
        let key = self.key;
        let Some(c) = self.conns.get_mut(&t) else {
            return;
        };
        let mut frames = Vec::new();
        let mut failed = None;
        let Conn {
            stream,
            reader,
            link,
            ..
        } = c;
        let status = reader.read_from(stream, &mut [], |h, p| {
            match link.on_frame(&key, PeerId::Launcher, h, p) {
                Ok(Step::Nothing) => Ok(None),
                Ok(Step::Established(_)) => Ok(Some(CONTROL_PAYLOAD_BYTES_MAX)),
                Ok(Step::Frame(peer, h, p)) => {
                    frames.push((peer, h, p));
                    Ok(None)
                }
                Err(e) => {
                    failed = Some(e.to_string());
                    Err(volpex_proto::wire::header::WireError::Unexpected {
                        kind: h.kind,
                        context: "(handshake failed)",
                    })
                }
            }
        });
        // The CHALLENGE (if the handshake moved) goes out now; it is small.
        let _ = link.out.flush_to(stream);
        let closed = match status {
            Ok(ReadStatus::Open) => false,
            Ok(ReadStatus::Closed) => true,
            Err(ReadError::Wire(e @ WireError::BadVersion(_))) if !self.version_warned => {
                self.version_warned = true;
                log::warn!("a connection to volpexrun was refused: {e}");
                true
            }
            Err(e) => {
                log::debug!("control connection: {}", failed.unwrap_or(e.to_string()));
                true
            }
        };
        for (peer, h, p) in frames {
            if !self.on_frame(t, peer, &h, &p, now) {
                self.close(t);
                return;
            }
        }
        if closed {
            self.close(t);
        }
    }

    /// One frame from an authenticated peer; false closes the connection.
    fn on_frame(
        &mut self,
        t: Token,
        peer: PeerId,
        h: &volpex_proto::wire::header::Header,
        p: &[u8],
        now: Instant,
    ) -> bool {
        let (id, inc) = match peer {
            PeerId::Replica(id, inc) if id.rank < self.ranks && id.replica < self.replicas => {
                (id, inc)
            }
            other => {
                log::debug!("unexpected peer {other:?} on the control port");
                return false;
            }
        };
        let i = self.idx(id);
        let current = self.current.get(i);
        if current != Some(inc) {
            // An older incarnation (stopped, then woken after its replacement started),
            // or one volpexrun never started: fenced.
            log::info!("{id}: a connection of incarnation {inc} (current {current:?}) refused");
            return false;
        }
        let msg = match control::decode::<ToLauncher>(h, p) {
            Ok(m) => m,
            Err(e) => {
                log::debug!("{id}: bad control frame: {e}");
                return false;
            }
        };
        let doubtful = self.out_of_touch(i, inc, now);
        let Some(c) = self.conns.get_mut(&t) else {
            return false;
        };
        match (&c.role, msg) {
            (Role::Pending { .. }, ToLauncher::Register { addr }) => {
                let writer = match c.stream.as_fd().try_clone_to_owned() {
                    Ok(fd) => StdStream::from(fd),
                    Err(e) => {
                        if out_of_descriptors(&e) {
                            self.descriptors_exhausted(&e);
                        }
                        log::debug!("{id}: cannot keep the control connection: {e}");
                        return false;
                    }
                };
                c.role = Role::Control(id, inc);
                self.emit(ControlEvent::Registered {
                    id,
                    inc,
                    addr,
                    writer,
                });
                true
            }
            (Role::Pending { .. }, ToLauncher::Heartbeat) => {
                c.role = Role::Heartbeat(id, inc);
                if let Some(w) = self.watches[i].as_ref() {
                    if let Some(old) = w.token {
                        if w.inc == inc {
                            log::warn!("{id}: a second heartbeat connection; the first is closed");
                        } else {
                            log::debug!("{id}: incarnation {inc}'s heartbeat replaces {}'s", w.inc);
                        }
                        self.close(old);
                    }
                }
                self.watches[i] = Some(Watch {
                    inc,
                    heard: now,
                    back_at: None,
                    token: Some(t),
                    starved: false,
                    asked: None,
                    host_said: None,
                });
                true
            }
            (Role::Pending { .. }, msg @ ToLauncher::Files { .. }) => {
                let writer = match c.stream.as_fd().try_clone_to_owned() {
                    Ok(fd) => StdStream::from(fd),
                    Err(e) => {
                        if out_of_descriptors(&e) {
                            self.descriptors_exhausted(&e);
                        }
                        log::debug!("{id}: cannot keep the files connection: {e}");
                        return false;
                    }
                };
                c.role = Role::Files(id, inc);
                self.emit(ControlEvent::FilesLink { id, inc, writer });
                self.emit(ControlEvent::Message { id, inc, msg });
                true
            }
            (Role::Files(..), msg @ ToLauncher::Files { .. }) => {
                self.emit(ControlEvent::Message { id, inc, msg });
                true
            }
            (Role::Files(..), other) => {
                log::warn!("{id}: {other:?} on the files connection");
                true
            }
            (Role::Pending { .. }, other) => {
                log::debug!("{id}: expected Register, Heartbeat or Files first, got {other:?}");
                false
            }
            (Role::Heartbeat(..), ToLauncher::Heartbeat) => {
                let gap = self.beats.gap();
                if let Some(w) = self.watches[i].as_mut().filter(|w| w.inc == inc) {
                    if now.saturating_duration_since(w.heard) > gap {
                        w.back_at = Some(now);
                    }
                    w.heard = now;
                    w.starved = false;
                    if w.asked.take().is_some() {
                        // An answer to an ask of this silence is old news at the next.
                        self.current.take_host_said(i, inc);
                    }
                    w.host_said = None;
                }
                true
            }
            (Role::Heartbeat(..), msg @ ToLauncher::Draining { .. }) => {
                self.emit(ControlEvent::Message { id, inc, msg });
                true
            }
            (Role::Heartbeat(..), other) => {
                log::warn!("{id}: {other:?} on the heartbeat connection");
                true
            }
            (
                Role::Control(..),
                ToLauncher::Fence {
                    rank,
                    replica,
                    incarnation,
                },
            ) if doubtful => {
                // Cut off itself, it found the others unreachable: its request, queued
                // while the link was down, must not end a healthy sibling.
                log::warn!(
                    "{id} asked to fence {rank}.{replica} (incarnation {incarnation}) while it was out of touch itself; ignored"
                );
                true
            }
            (Role::Control(..), msg) => {
                self.emit(ControlEvent::Message { id, inc, msg });
                true
            }
        }
    }

    /// Whether incarnation `inc` of replica `i` is, or was until lately, out of touch: its
    /// heartbeat is overdue, or came back after a gap less than a heartbeat timeout ago.
    fn out_of_touch(&self, i: usize, inc: u32, now: Instant) -> bool {
        let Some(w) = self.watches[i].as_ref().filter(|w| w.inc == inc) else {
            return false;
        };
        now.saturating_duration_since(w.heard) > self.beats.gap()
            || w.back_at
                .is_some_and(|t| now.saturating_duration_since(t) < self.beats.timeout)
    }

    /// Sends a beat on every heartbeat connection and reports the replicas silent for the
    /// timeout (whose connection then closes).
    fn beat(&mut self, now: Instant) {
        // Connections of incarnations that are no longer current go.
        let stale: Vec<Token> = self
            .conns
            .iter()
            .filter_map(|(t, c)| match c.role {
                Role::Control(id, inc) | Role::Heartbeat(id, inc) | Role::Files(id, inc) => {
                    (self.current.get(self.idx(id)) != Some(inc)).then_some(*t)
                }
                Role::Pending { .. } => None,
            })
            .collect();
        for t in stale {
            log::debug!("closing a connection of a replaced incarnation");
            self.close(t);
        }
        // A replaced incarnation's silence is no longer judged here: its connections just
        // went, so it could only look silent. One handing over to its replacement runs on
        // until the replacement took over (its drain grace bounds its life), and its end
        // comes as its exit; the replacement's heartbeat brings a watch of its own.
        for (i, w) in self.watches.iter_mut().enumerate() {
            if w.as_ref()
                .is_some_and(|w| self.current.get(i) != Some(w.inc))
            {
                *w = None;
            }
        }
        let (bh, bp) = control::encode(&Liveness::Beat);
        let mut silent = Vec::new();
        let mut ask = Vec::new();
        for (i, w) in self.watches.iter_mut().enumerate() {
            let Some(w) = w else { continue };
            if let Some(c) = w.token.and_then(|t| self.conns.get_mut(&t)) {
                // A beat that does not fit the socket buffer is dropped: a failed write
                // is not a verdict, silence is.
                if c.link.out.is_empty() {
                    c.link.out.push(&bh, bp.clone().into());
                }
                let _ = c.link.out.flush_to(&mut c.stream);
            }
            let silent_for = now.saturating_duration_since(w.heard);
            // A process its machine starves (every CPU busy, its heartbeat thread waiting
            // its turn) is not dead; a stopped one is. Found runnable once in this
            // silence, it stays starved while it sleeps between its turns.
            let local = self.current.local_pid(i, w.inc);
            let waited = if silent_for <= self.beats.timeout {
                true
            } else {
                let seen = match local {
                    Some(pid) => Seen::Vitals(vitals::of(pid)),
                    None => host_says(&self.current, i, w, now, self.beats.agent_window()),
                };
                let starved = silent_for <= self.beats.timeout * STARVED_TIMEOUTS_MAX
                    && match seen {
                        Seen::Vitals(vitals::Vitals::Runnable) | Seen::Asked => true,
                        Seen::Vitals(vitals::Vitals::Idle) => w.starved,
                        Seen::Vitals(vitals::Vitals::Stopped) | Seen::Nothing => false,
                    };
                if starved && !w.starved && seen == Seen::Vitals(vitals::Vitals::Runnable) {
                    w.starved = true;
                    log::info!(
                        "replica {}: no heartbeat for {silent_for:.1?}, but its process is runnable (starved of CPU, not dead): waiting up to {:?}",
                        ReplicaId::new(i as u32 / self.replicas, i as u32 % self.replicas),
                        self.beats.timeout * STARVED_TIMEOUTS_MAX
                    );
                }
                starved
            };
            if !waited {
                silent.push((i, w.inc, silent_for));
            } else if local.is_none() && silent_for > self.beats.timeout / 2 {
                // Its host's agent is asked from half the timeout on, so that its answer
                // is in when the verdict is due; again every beat: each answer is a fresh
                // reading.
                w.asked.get_or_insert(now);
                ask.push((i, w.inc));
            }
        }
        for (i, inc, silent_for) in silent {
            let id = ReplicaId::new(i as u32 / self.replicas, i as u32 % self.replicas);
            log::debug!(
                "{id}: no heartbeat for {silent_for:?} (timeout {:?})",
                self.beats.timeout
            );
            if let Some(t) = self.watches[i].take().and_then(|w| w.token) {
                if let Some(c) = self.conns.get(&t) {
                    let _ = c.stream.shutdown(std::net::Shutdown::Both);
                }
                self.close(t);
            }
            self.emit(ControlEvent::Silent {
                id,
                inc,
                silent_for,
            });
        }
        for (i, inc) in ask {
            let id = ReplicaId::new(i as u32 / self.replicas, i as u32 % self.replicas);
            self.emit(ControlEvent::Overdue { id, inc });
        }
    }
}

/// What the agent of its host said of slot `i`'s process (watched by `w`, silent past
/// the heartbeat timeout, not on this machine), taking its latest answer; an agent that
/// has not answered for `window` since it was asked says `Nothing`.
fn host_says(
    current: &Incarnations,
    i: usize,
    w: &mut Watch,
    now: Instant,
    window: Duration,
) -> Seen {
    if let Some(v) = current.take_host_said(i, w.inc) {
        w.host_said = Some((now, v));
    }
    let asked = w.asked.unwrap_or(now);
    let last_word = w.host_said.map_or(asked, |(at, _)| at);
    if now.saturating_duration_since(last_word) > window {
        return Seen::Nothing;
    }
    match w.host_said {
        Some((_, v)) => Seen::Vitals(v),
        None => Seen::Asked,
    }
}

#[cfg(test)]
mod tests;
