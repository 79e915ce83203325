//! One TCP connection: its handshake state machine, reader and output queue.

use std::os::fd::AsRawFd;
use std::time::Duration;

use bytes::Bytes;
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

use super::auth::{AuthError, ClientHandshake, JobKey, PeerId, ServerHandshake};
use crate::wire::header::{Header, Kind, WireError};
use crate::wire::stream::{FrameReader, OutQueue};

/// Handshake progress of a connection.
pub enum ConnState {
    /// We connected (TCP may still be in progress) and sent HELLO; waiting for CHALLENGE.
    AwaitChallenge {
        /// Whom we meant to reach.
        expect: PeerId,
        /// Our side of the handshake.
        hs: ClientHandshake,
    },
    /// They connected; waiting for HELLO. Nothing is ever sent in this state.
    AwaitHello,
    /// We sent CHALLENGE; waiting for AUTH.
    AwaitAuth(ServerHandshake),
    /// Both sides proved the key.
    Established(PeerId),
}

/// What one frame did to the connection.
pub enum Step {
    /// Nothing visible to the outside.
    Nothing,
    /// The handshake completed with this peer.
    Established(PeerId),
    /// A frame for the layer above (protocol or control).
    Frame(PeerId, Header, Bytes),
}

/// The part of a connection the handshake changes: its state and outgoing frames.
pub struct Link {
    /// Handshake progress.
    pub state: ConnState,
    /// Frames waiting for the socket.
    pub out: OutQueue,
    /// Frames for the peer held back until the handshake completes.
    pub held: Vec<(Header, Bytes)>,
}

/// A connection and its buffers.
pub struct Conn {
    /// The socket (non-blocking), registered with the poll by its descriptor. A std
    /// stream, not mio's: std reads into spare capacity without zero-filling it first,
    /// which matters for megabyte payloads; one descriptor per connection.
    pub stream: std::net::TcpStream,
    /// Incoming frame decoder.
    pub reader: FrameReader,
    /// Handshake state and output.
    pub link: Link,
    /// When it was opened (for the setup timeout).
    pub opened_at: Duration,
    /// Whether WRITABLE interest is registered.
    pub want_write: bool,
    /// True when we dialed it, false when we accepted it.
    pub dialed: bool,
}

impl Conn {
    /// An outgoing connection to `expect`, HELLO queued.
    pub fn outgoing(
        stream: TcpStream,
        me: PeerId,
        expect: PeerId,
        now: Duration,
    ) -> std::io::Result<Conn> {
        let (hs, h, p) = ClientHandshake::start(me);
        let mut out = OutQueue::default();
        out.push(&h, p);
        Ok(Conn {
            stream: stream.into(),
            reader: FrameReader::new(),
            link: Link {
                state: ConnState::AwaitChallenge { expect, hs },
                out,
                held: Vec::new(),
            },
            opened_at: now,
            want_write: false,
            dialed: true,
        })
    }

    /// An accepted connection.
    pub fn incoming(stream: TcpStream, now: Duration) -> std::io::Result<Conn> {
        Ok(Conn {
            stream: stream.into(),
            reader: FrameReader::new(),
            link: Link {
                state: ConnState::AwaitHello,
                out: OutQueue::default(),
                held: Vec::new(),
            },
            opened_at: now,
            want_write: false,
            dialed: false,
        })
    }

    /// The authenticated peer, if any.
    pub fn peer(&self) -> Option<PeerId> {
        match self.link.state {
            ConnState::Established(p) => Some(p),
            ConnState::AwaitChallenge { .. } | ConnState::AwaitHello | ConnState::AwaitAuth(_) => {
                None
            }
        }
    }

    /// The peer we talk to: proven, or the one we dialed.
    pub fn intended_peer(&self) -> Option<PeerId> {
        match &self.link.state {
            ConnState::Established(p) => Some(*p),
            ConnState::AwaitChallenge { expect, .. } => Some(*expect),
            ConnState::AwaitHello | ConnState::AwaitAuth(_) => None,
        }
    }

    /// Queues a frame, holding it back until the handshake is done.
    pub fn send(&mut self, h: Header, payload: Bytes) {
        match self.link.state {
            ConnState::Established(_) => self.link.out.push(&h, payload),
            ConnState::AwaitChallenge { .. } | ConnState::AwaitHello | ConnState::AwaitAuth(_) => {
                self.link.held.push((h, payload))
            }
        }
    }
}

impl Conn {
    /// Registers the socket with the poll.
    pub fn register(&self, r: &Registry, token: Token, interest: Interest) -> std::io::Result<()> {
        r.register(&mut SourceFd(&self.stream.as_raw_fd()), token, interest)
    }

    /// Changes the socket's interest.
    pub fn reregister(
        &self,
        r: &Registry,
        token: Token,
        interest: Interest,
    ) -> std::io::Result<()> {
        r.reregister(&mut SourceFd(&self.stream.as_raw_fd()), token, interest)
    }

    /// Removes the socket from the poll.
    pub fn deregister(&self, r: &Registry) -> std::io::Result<()> {
        r.deregister(&mut SourceFd(&self.stream.as_raw_fd()))
    }
}

impl Link {
    /// Advances the handshake with one incoming frame, or passes the frame up.
    pub fn on_frame(
        &mut self,
        key: &JobKey,
        me: PeerId,
        h: Header,
        payload: Bytes,
    ) -> Result<Step, AuthError> {
        match &self.state {
            ConnState::Established(peer) => {
                if matches!(h.kind, Kind::Hello | Kind::Challenge | Kind::Auth) {
                    return Err(WireError::Unexpected {
                        kind: h.kind,
                        context: "after the handshake",
                    }
                    .into());
                }
                Ok(Step::Frame(*peer, h, payload))
            }
            ConnState::AwaitHello => {
                let (hs, ch, cp) = ServerHandshake::on_hello(key, me, &h, &payload)?;
                self.out.push(&ch, cp);
                self.state = ConnState::AwaitAuth(hs);
                Ok(Step::Nothing)
            }
            ConnState::AwaitAuth(hs) => {
                let peer = hs.on_auth(key, &h, &payload)?;
                self.establish(peer);
                Ok(Step::Established(peer))
            }
            ConnState::AwaitChallenge { expect, hs } => {
                let expect = *expect;
                let (peer, ah, ap) = hs.on_challenge(key, &h, &payload)?;
                if peer != expect {
                    return Err(AuthError::WrongPeer);
                }
                self.out.push(&ah, ap);
                self.establish(peer);
                Ok(Step::Established(peer))
            }
        }
    }

    /// Marks the handshake done and releases held frames.
    pub fn establish(&mut self, peer: PeerId) {
        self.state = ConnState::Established(peer);
        for (h, p) in self.held.drain(..) {
            self.out.push(&h, p);
        }
    }
}
