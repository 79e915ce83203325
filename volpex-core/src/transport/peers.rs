//! Opening peer connections: dialing a replica on first use, accepting, settling on one
//! connection when both sides dialed at once, and closing those whose handshake did not
//! finish in time. Must never read or route frames (the loop does) nor decide protocol
//! questions.

use std::io;
use std::time::Duration;

use mio::{Interest, Token};

use super::connection::Conn;
use super::event_loop::Core;
use volpex_proto::handshake::PeerId;
use volpex_proto::message::ReplicaId;

impl Core {
    pub(super) fn dial(&mut self, now: Duration, to: ReplicaId) -> Option<Token> {
        if let Some(t) = self.dial_colocated(now, to) {
            return Some(t);
        }
        let addr = self.addr_of(to)?;
        let stream = match super::tuning::connect(addr, &self.cfg) {
            Ok(s) => s,
            Err(e) => {
                if out_of_descriptors(&e) {
                    log::error!(
                        "{}: out of file descriptors connecting to {to} ({e}); raise `ulimit -n`",
                        self.me
                    );
                }
                log::info!("{}: connect to {to} at {addr} failed: {e}", self.me);
                return None;
            }
        };
        super::tuning::tune(&stream, &self.cfg);
        let token = self.token();
        let (me, them) = (
            PeerId::Replica(self.me, self.incarnation),
            PeerId::Replica(to, self.incarnation_of(to)),
        );
        let mut conn = match Conn::outgoing(stream, me, them, now) {
            Ok(c) => c,
            Err(e) => {
                log::warn!("{}: cannot set up a connection to {to}: {e}", self.me);
                return None;
            }
        };
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = conn.register(self.poll.registry(), token, interest) {
            log::warn!("{}: register failed: {e}", self.me);
            return None;
        }
        conn.want_write = true;
        self.conns.insert(token, conn);
        self.peers.insert(to, token);
        log::debug!("{}: dialing {to} at {addr}", self.me);
        Some(token)
    }

    pub(super) fn accept(&mut self) {
        loop {
            let Some(l) = self.listener.as_ref() else {
                return;
            };
            match l.accept() {
                Ok((stream, from)) => {
                    super::tuning::tune(&stream, &self.cfg);
                    let token = self.token();
                    let now = self.now();
                    match Conn::incoming(stream, now) {
                        Ok(c) => {
                            if c.register(self.poll.registry(), token, Interest::READABLE)
                                .is_ok()
                            {
                                log::trace!("{}: accepted connection from {from}", self.me);
                                self.conns.insert(token, c);
                            }
                        }
                        Err(e) => log::warn!("{}: cannot accept: {e}", self.me),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if out_of_descriptors(&e) => {
                    log::error!(
                        "{}: out of file descriptors accepting a peer ({e}); raise `ulimit -n`",
                        self.me
                    );
                    return;
                }
                Err(e) => {
                    log::warn!("{}: accept failed: {e}", self.me);
                    return;
                }
            }
        }
    }

    /// Picks the connection our frames to `r` go on once `token` (to `r`) is
    /// established. When both sides dialed at once there are two; both sides settle on
    /// the one the lower replica dialed, so each direction's frames carry the ACKs of
    /// the other's (two one-way sockets cost a pure ACK packet per round trip). Frames
    /// still held on an unfinished connection move with the route; frames already
    /// written may arrive after later ones, which the protocol tolerates (every frame is
    /// keyed and idempotent).
    pub(super) fn settle_route(&mut self, r: ReplicaId, token: Token) {
        let cur = match self.peers.get(&r) {
            None => {
                self.peers.insert(r, token);
                return;
            }
            Some(&cur) if cur == token => return,
            Some(&cur) => cur,
        };
        let dialed = self.conns.get(&token).is_some_and(|c| c.dialed);
        if dialed != (self.me < r) {
            return;
        }
        let held = self
            .conns
            .get_mut(&cur)
            .map(|c| std::mem::take(&mut c.link.held))
            .unwrap_or_default();
        if let Some(c) = self.conns.get_mut(&token) {
            for (h, p) in held {
                c.send(h, p);
            }
        }
        self.peers.insert(r, token);
        if !self.dirty.contains(&token) {
            self.dirty.push(token);
        }
        log::debug!(
            "{}: frames to {r} now go on the connection the lower replica dialed",
            self.me
        );
    }

    pub(super) fn expire_handshakes(&mut self, now: Duration) {
        let late: Vec<Token> = self
            .conns
            .iter()
            .filter(|(_, c)| c.peer().is_none() && now > c.opened_at + self.cfg.connect_timeout)
            .map(|(t, _)| *t)
            .collect();
        for t in late {
            let why = format!(
                "connection setup timed out after {:?}",
                self.cfg.connect_timeout
            );
            self.close(t, &why);
        }
    }
}

/// EMFILE (this process) or ENFILE (the system).
fn out_of_descriptors(e: &io::Error) -> bool {
    let code = e.raw_os_error();
    code == Some(nix::errno::Errno::EMFILE as i32) || code == Some(nix::errno::Errno::ENFILE as i32)
}
