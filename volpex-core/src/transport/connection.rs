//! One TCP connection: its socket, reader and `Link` (the handshake state and output
//! queue, `volpex_proto::handshake`). Must never decide what a frame means.

use std::os::fd::AsRawFd;
use std::time::Duration;

use bytes::Bytes;
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use volpex_proto::handshake::{Link, PeerId};
use volpex_proto::wire::header::Header;
use volpex_proto::wire::stream::FrameReader;

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
        Ok(Conn {
            stream: stream.into(),
            reader: FrameReader::new(),
            link: Link::dialing(me, expect),
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
            link: Link::accepting(),
            opened_at: now,
            want_write: false,
            dialed: false,
        })
    }

    /// The authenticated peer, if any.
    pub fn peer(&self) -> Option<PeerId> {
        self.link.peer()
    }

    /// The peer we talk to: proven, or the one we dialed.
    pub fn intended_peer(&self) -> Option<PeerId> {
        self.link.intended_peer()
    }

    /// Queues a frame, holding it back until the handshake is done.
    pub fn send(&mut self, h: Header, payload: Bytes) {
        self.link.send(h, payload)
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
