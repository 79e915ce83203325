//! The event loop's side of shared-memory connections to peers on this host
//! (docs/SHM.md): listening, dialing a co-located peer before trying TCP, accepting,
//! the turn's checks of every ring (bytes that came without an event, the announcement
//! before sleeping), small DATA messages through the connections' slot arenas instead
//! of the rings (published by `route`, read in place by the turn and handed to the
//! engine as the DATA frames they stand for), and the fall back to TCP. Must never touch
//! a ring's memory (`shm` does) nor decide protocol questions.

use std::net::SocketAddr;
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Interest, Token};

use super::connection::{Conn, Pipe};
use super::event_loop::{Core, SHM_LISTENER};
use super::shm::{
    unavailable, DialError, Listener, ShmPipe, SlotMeta, SlotTaken, SLOT_PAYLOAD_MAX,
};
use crate::config::{SHM_RING_BYTES, SHM_UNLOGGED_BYTES_MIN};
use bytes::Bytes;
use volpex_proto::handshake::PeerId;
use volpex_proto::limits::{HEADER_BYTES, UNLOGGED_BYTES_MIN};
use volpex_proto::message::{Key, ReplicaId, ReqId};
use volpex_proto::wire::stream::Landing;
use volpex_proto::wire::Frame;

/// A slot's flags: the DATA frame's `late` and `sync`.
const SLOT_LATE: u32 = 1;
const SLOT_SYNC: u32 = 2;

/// Most slots one turn reads from one connection (a slot arena holds 32).
const SLOTS_PER_TURN: usize = 32;

/// Shared-memory state of a core.
#[derive(Default)]
pub struct Colocated {
    /// Where peers on this host dial us; `None` when off (`VOLPEX_SHM=0`) or unavailable.
    listener: Option<Listener>,
    /// Whether we dial peers on this host through shared memory (off once making a
    /// segment failed).
    dial: bool,
    /// Connections through shared memory (checked every turn).
    tokens: Vec<Token>,
    /// Peers (by listener address: a new incarnation has another) whose shared-memory
    /// listener refused us or whose connection failed before its handshake: TCP.
    refused: Vec<SocketAddr>,
    /// DATA messages published in a slot arena instead of sent as frames.
    pub(super) in_place_sent: u64,
    /// Of those, the ones published by their send before it logged them
    /// (`publish_ahead`).
    pub(super) published_ahead: u64,
    /// Messages read from a slot straight into a waiting receive's buffer.
    pub(super) landed: u64,
}

/// The key of the DATA a slot holds.
fn slot_key(m: &SlotMeta) -> Key {
    Key {
        comm: m.comm,
        tag: m.tag,
        src: m.src,
        dst: m.dst,
        seq: m.seq,
    }
}

impl Core {
    /// Takes the shared-memory listener (`None`: off or unavailable, TCP only).
    pub(super) fn start_colocated(&mut self, listener: Option<Listener>) {
        let Some(l) = listener else {
            return;
        };
        let r =
            self.poll
                .registry()
                .register(&mut SourceFd(&l.fd()), SHM_LISTENER, Interest::READABLE);
        match r {
            Ok(()) => {
                self.colocated.listener = Some(l);
                self.colocated.dial = true;
            }
            Err(e) => unavailable(self.me, &e),
        }
    }

    /// Whether `to` is on this host: the launcher's table gives it our address.
    fn colocated_with(&self, to: ReplicaId) -> Option<SocketAddr> {
        let (mine, theirs) = (self.addr_of(self.me)?, self.addr_of(to)?);
        (mine.ip() == theirs.ip() && to != self.me).then_some(theirs)
    }

    /// Dials `to` through shared memory if it is on this host; `None`: use TCP.
    pub(super) fn dial_colocated(&mut self, now: Duration, to: ReplicaId) -> Option<Token> {
        let addr = self.colocated_with(to)?;
        if !self.colocated.dial || self.colocated.refused.contains(&addr) {
            return None;
        }
        let pipe = match ShmPipe::dial(addr, SHM_RING_BYTES) {
            Ok(p) => p,
            Err(DialError::Unavailable(e)) => {
                unavailable(self.me, &e);
                self.colocated.dial = false;
                return None;
            }
            Err(DialError::Peer(e)) => {
                log::debug!("{}: no shared memory to {to} ({e}): TCP", self.me);
                self.colocated.refused.push(addr);
                return None;
            }
        };
        let token = self.token();
        let (me, them) = (
            PeerId::Replica(self.me, self.incarnation),
            PeerId::Replica(to, self.incarnation_of(to)),
        );
        let conn = Conn::dialing(Pipe::Shm(pipe), me, them, now);
        if let Err(e) = conn.register(self.poll.registry(), token, Interest::READABLE) {
            log::warn!("{}: register failed: {e}", self.me);
            return None;
        }
        self.conns.insert(token, conn);
        self.peers.insert(to, token);
        self.colocated.tokens.push(token);
        self.mark_dirty(token);
        log::debug!("{}: dialing {to} through shared memory", self.me);
        Some(token)
    }

    /// Takes every shared-memory connection waiting on our listener.
    pub(super) fn accept_colocated(&mut self) {
        loop {
            let Some(l) = self.colocated.listener.as_ref() else {
                return;
            };
            match l.accept() {
                Ok(Some(pipe)) => {
                    let token = self.token();
                    let c = Conn::accepted(Pipe::Shm(pipe), self.now());
                    if c.register(self.poll.registry(), token, Interest::READABLE)
                        .is_ok()
                    {
                        self.conns.insert(token, c);
                        self.colocated.tokens.push(token);
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    log::warn!("{}: accepting a shared-memory connection: {e}", self.me);
                    return;
                }
            }
        }
    }

    /// An event on a shared-memory connection's descriptors: its setup message, its
    /// bell, or its peer's end closing. False when the connection was closed.
    pub(super) fn on_colocated_event(&mut self, token: Token) -> bool {
        let Some(c) = self.conns.get_mut(&token) else {
            return false;
        };
        let Some(pipe) = c.shm() else {
            return true;
        };
        match pipe.on_event(SHM_RING_BYTES) {
            Ok(false) => true,
            Ok(true) => {
                if let Err(e) = c.register_bell(self.poll.registry(), token) {
                    self.close(token, &format!("cannot poll a shared-memory bell: {e}"));
                    return false;
                }
                true
            }
            Err(e) => {
                self.close(token, &format!("shared-memory connection: {e}"));
                false
            }
        }
    }

    /// Before the poll sleeps: tells every shared-memory peer to ring our bell. True
    /// when something came meanwhile (then the poll must not sleep).
    pub(super) fn colocated_sleep(&mut self) -> bool {
        let mut woke = false;
        for t in &self.colocated.tokens {
            if let Some(c) = self.conns.get_mut(t) {
                let pending = !c.link.out.is_empty();
                if let Some(p) = c.shm() {
                    woke |= p.sleeps(pending);
                }
            }
        }
        woke
    }

    /// Whether any connection goes through shared memory.
    pub(crate) fn has_colocated(&self) -> bool {
        !self.colocated.tokens.is_empty()
    }

    /// The shared-memory connections.
    #[cfg(test)]
    pub(super) fn colocated_tokens(&self) -> &[Token] {
        &self.colocated.tokens
    }

    /// Whether every peer connection goes through shared memory (and there is one):
    /// then only the rings carry messages.
    pub(super) fn rings_only(&self) -> bool {
        let launcher = self.launcher.is_some_and(|t| self.conns.contains_key(&t));
        let tokens = self.colocated.tokens.len();
        tokens > 0 && self.conns.len() == tokens + usize::from(launcher)
    }

    /// From what size a send to `dst` may skip the log (`Core::send`):
    /// `SHM_UNLOGGED_BYTES_MIN` when this process reaches every live replica of `dst`
    /// through shared memory, else `UNLOGGED_BYTES_MIN` (over TCP the copy into the log
    /// hides behind the receiver's reading up to that size).
    pub(super) fn unlogged_from(&self, dst: u32) -> usize {
        let replicas = self.addrs_of_rank(dst);
        let mut live = replicas
            .iter()
            .enumerate()
            .filter(|(_, a)| a.is_some())
            .map(|(k, _)| ReplicaId::new(dst, k as u32))
            .peekable();
        let colocated = live.peek().is_some()
            && live.all(|r| {
                self.peers
                    .get(&r)
                    .is_some_and(|t| self.colocated.tokens.contains(t))
            });
        if colocated {
            SHM_UNLOGGED_BYTES_MIN
        } else {
            UNLOGGED_BYTES_MIN
        }
    }

    /// After the poll: reads every ring that got bytes and writes every one with bytes
    /// waiting for space (neither needs an event while both sides are awake). True when
    /// a ring had bytes.
    pub(super) fn colocated_turn(
        &mut self,
        now: Duration,
        slept: bool,
        landings: &mut [Landing<'_>],
    ) -> bool {
        let mut came = false;
        let mut i = 0;
        while let Some(&t) = self.colocated.tokens.get(i) {
            i += 1;
            let Some(c) = self.conns.get_mut(&t) else {
                continue;
            };
            let pending = !c.link.out.is_empty();
            let Some(p) = c.shm() else {
                continue;
            };
            if slept {
                p.awake();
            }
            if self.take_in_order(t, landings, now) {
                came = true;
            }
            if pending {
                self.flush_conn(t);
            }
        }
        came
    }

    /// Publishes a small DATA frame to `to` in the slot arena of its shared-memory
    /// connection `token` instead of queuing it there: true when it did (the frame is
    /// done with). Not when frames wait in the connection's queue (it would overtake
    /// them), the connection is not established with `to`, the message asks to be
    /// confirmed or is larger than a slot, or the arena is full (the peer has not read
    /// its slots yet): then the frame goes through the ring as ever.
    pub(super) fn publish_in_place(&mut self, token: Token, to: ReplicaId, frame: &Frame) -> bool {
        let Frame::Data {
            key,
            req,
            order,
            payload,
            confirm: false,
            late,
            sync,
        } = frame
        else {
            return false;
        };
        let meta = SlotMeta {
            comm: key.comm,
            tag: key.tag,
            src: key.src,
            dst: key.dst,
            seq: key.seq,
            req: req.0,
            order: *order,
            flags: if *late { SLOT_LATE } else { 0 } | if *sync { SLOT_SYNC } else { 0 },
            // Set where it is published (`ShmPipe::publish`).
            ring_at: 0,
        };
        self.publish_slot(token, to, &meta, payload)
    }

    /// A send of a small message (at most a slot's size) to `dst` on `comm` with `tag`,
    /// before it is logged: publishes it in the slot arena of each replica on this host
    /// whose pull for it is parked here, and tells the engine so (a direct write,
    /// `Engine::write_ahead` and `handle_written`, as a large message's), so that
    /// logging it answers only the other pulls. The receiver starts on the message
    /// while this process copies it into its log and does the log's bookkeeping (about
    /// half of a small send's instructions), instead of after. A pull that cannot be
    /// answered so (a TCP peer, a queue not empty, a full arena) is answered when the
    /// message is logged, as before. The engine offers no such writes while the message
    /// must carry choices (they go before its DATA).
    /// True when a pull for the message was parked here (published or not): nothing a
    /// poll before the send could bring changes what the send writes then.
    pub(super) fn publish_ahead(&mut self, comm: u32, tag: i32, dst: u32, bytes: &[u8]) -> bool {
        let ahead = self.engine.slots_ahead(comm, tag, dst);
        for &(to, req) in &ahead.to {
            let Some(&token) = self.peers.get(&to) else {
                continue;
            };
            if !self.colocated.tokens.contains(&token) || !self.engine_knows_alive(to) {
                continue;
            }
            let meta = SlotMeta {
                comm: ahead.key.comm,
                tag: ahead.key.tag,
                src: ahead.key.src,
                dst: ahead.key.dst,
                seq: ahead.key.seq,
                req: req.0,
                order: ahead.order,
                flags: if ahead.sync { SLOT_SYNC } else { 0 },
                ring_at: 0,
            };
            if self.publish_slot(token, to, &meta, bytes) {
                self.colocated.published_ahead += 1;
                // The whole frame went out: logging it answers this pull with nothing.
                let whole = HEADER_BYTES + bytes.len();
                self.engine
                    .handle_written(to, req, whole, token.0 as u64, false);
            }
        }
        !ahead.to.is_empty()
    }

    /// Publishes a message to `to` (`meta` and `payload`) in the slot arena of its
    /// shared-memory connection `token`: true when it did. Not when frames wait in the
    /// connection's queue (it would overtake them), the connection is not established
    /// with `to`, the message is larger than a slot, or the arena is full.
    fn publish_slot(
        &mut self,
        token: Token,
        to: ReplicaId,
        meta: &SlotMeta,
        payload: &[u8],
    ) -> bool {
        if payload.len() > SLOT_PAYLOAD_MAX {
            return false;
        }
        let Some(c) = self.conns.get_mut(&token) else {
            return false;
        };
        let established = matches!(c.peer(), Some(PeerId::Replica(p, _)) if p == to);
        if !established || !c.link.out.is_empty() {
            return false;
        }
        let Some(p) = c.shm() else {
            return false;
        };
        if !p.publish(meta, payload) {
            return false;
        }
        self.colocated.in_place_sent += 1;
        // The deferred frames to this peer (speculative pulls) ride along in the
        // ring, as they would behind a DATA frame (`Core::flush`).
        self.mark_dirty(token);
        true
    }

    /// Takes what connection `t` brought, its ring's frames and its arena's slots, in
    /// the order the peer sent them: a slot records how far the peer had written the
    /// ring when it published it (`ring_at`), so the ring is read up to there before the
    /// slot is taken. The ring's published position is read before the next slot is
    /// looked at, so a slot published before those bytes shows and nothing overtakes
    /// it. True when something came.
    fn take_in_order(&mut self, t: Token, landings: &mut [Landing<'_>], now: Duration) -> bool {
        let mut came = false;
        for slots in 0.. {
            let Some(p) = self.conns.get_mut(&t).and_then(|c| c.shm()) else {
                break;
            };
            let mark = p.inbound_mark();
            let next = match p.next_slot_at() {
                Ok(next) if slots < SLOTS_PER_TURN => next,
                Ok(_) => None,
                Err(e) => {
                    self.close(t, &format!("shared-memory connection: {e}"));
                    break;
                }
            };
            p.read_below(next.unwrap_or(mark));
            if p.readable() {
                came = true;
                self.on_readable(t, landings, now);
                // Reading may have closed the connection.
                let Some(p) = self.conns.get_mut(&t).and_then(|c| c.shm()) else {
                    break;
                };
                p.read_below(u64::MAX);
            } else {
                p.read_below(u64::MAX);
            }
            if next.is_none() {
                break;
            }
            came = true;
            self.take_in_place(t, landings, now);
        }
        came
    }

    /// Reads the next slot of connection `t`'s inbound arena and hands it to the
    /// engine as the DATA frame it stands for (the same checks as any DATA). A message
    /// one of `landings` (a waiting receive's buffer, offered because its message is
    /// known: `Engine::landing_for`) takes is copied straight into that buffer and
    /// handed over as landed (`Engine::note_landed`, an empty payload), as a large
    /// frame lands from a ring: no `Vec`, no second copy. Only from an established
    /// connection (a peer that has not authenticated is never read); a slot that
    /// cannot be proven whole (moved during the copy, into a buffer or not) is never
    /// delivered, the landing is not filled, and the connection closes as on a corrupt
    /// ring: the pulls it answered are asked again (`handle_peer_down`).
    fn take_in_place(&mut self, t: Token, landings: &mut [Landing<'_>], now: Duration) {
        let Some(c) = self.conns.get_mut(&t) else {
            return;
        };
        let Some(PeerId::Replica(from, _)) = c.peer() else {
            return;
        };
        let Some(p) = c.shm() else {
            return;
        };
        let first = p.slots_taken() == 0;
        let mut at = None;
        let got = p.take_slot_into(|m, len| {
            // An empty message has nothing to land.
            if len == 0 || landings.is_empty() {
                return None;
            }
            let key = slot_key(m);
            let i = landings.iter().position(|l| l.takes(&key, m.order, len))?;
            at = Some(i);
            Some(&mut *landings[i].buf)
        });
        match got {
            Ok(Some((m, taken))) => {
                if first {
                    log::debug!("{}: reading messages in place from {from}", self.me);
                }
                let key = slot_key(&m);
                let payload = match taken {
                    SlotTaken::Copied(v) => Bytes::from(v),
                    SlotTaken::Landed(len) => {
                        if let Some(l) = at.and_then(|i| landings.get_mut(i)) {
                            l.landed = Some(len);
                        }
                        self.colocated.landed += 1;
                        self.engine.note_landed(key, len);
                        Bytes::new()
                    }
                };
                let frame = Frame::Data {
                    key,
                    req: ReqId(m.req),
                    order: m.order,
                    payload,
                    confirm: false,
                    late: m.flags & SLOT_LATE != 0,
                    sync: m.flags & SLOT_SYNC != 0,
                };
                self.engine.handle_frame(now, from, frame);
            }
            Ok(None) => {}
            Err(e) => self.close(t, &format!("shared-memory connection: {e}")),
        }
    }

    /// A connection closes: forget it here. A shared-memory dial to a current
    /// incarnation whose handshake failed before its time ran out (the peer refused or
    /// dropped the setup) is dialed again over TCP with the frames it held; true when so
    /// (the peer is not down).
    pub(super) fn colocated_closed(&mut self, token: Token, c: &mut Conn, now: Duration) -> bool {
        self.colocated.tokens.retain(|t| *t != token);
        let retry = c.is_shm() && c.dialed && c.peer().is_none();
        let timed_out = now > c.opened_at + self.cfg.connect_timeout;
        let Some(PeerId::Replica(r, inc)) = c.intended_peer() else {
            return false;
        };
        // A fenced incarnation's connection closes as any other does.
        if !retry || timed_out || self.is_stale(r, inc) {
            return false;
        }
        log::info!(
            "{}: the shared-memory connection to {r} did not come up: TCP",
            self.me
        );
        if let Some(a) = self.addr_of(r) {
            self.colocated.refused.push(a);
        }
        if self.peers.get(&r) == Some(&token) {
            self.peers.remove(&r);
        }
        let Some(t) = self.dial(now, r) else {
            return false;
        };
        let held = std::mem::take(&mut c.link.held);
        if let Some(n) = self.conns.get_mut(&t) {
            for (h, p) in held {
                n.send(h, p);
            }
        }
        true
    }
}
