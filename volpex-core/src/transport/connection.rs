//! One connection to a peer or the launcher: its byte stream (a TCP socket, or a pair
//! of shared-memory rings to a peer on this host, `shm`), reader and `Link` (the
//! handshake state and output queue, `volpex_proto::handshake`). Must never decide what
//! a frame means.

use std::io::{self, IoSlice, Read, Write};
use std::os::fd::AsRawFd;
use std::time::Duration;

use bytes::Bytes;
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use volpex_proto::handshake::{Link, PeerId};
use volpex_proto::wire::header::Header;
use volpex_proto::wire::stream::FrameReader;

use super::shm::ShmPipe;

/// What a connection's bytes go through.
pub enum Pipe {
    /// A TCP socket (non-blocking), registered with the poll by its descriptor. A std
    /// stream, not mio's: std reads into spare capacity without zero-filling it first,
    /// which matters for megabyte payloads; one descriptor per connection.
    Tcp(std::net::TcpStream),
    /// Shared-memory rings to a peer on this host: its socket (the peer's life) and its
    /// bell are registered with the poll.
    Shm(ShmPipe),
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Pipe::Tcp(s) => s.read(buf),
            Pipe::Shm(p) => p.read(buf),
        }
    }
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Pipe::Tcp(s) => s.write(buf),
            Pipe::Shm(p) => p.write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Pipe::Tcp(s) => s.write_vectored(bufs),
            Pipe::Shm(p) => p.write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Pipe::Tcp(s) => s.flush(),
            Pipe::Shm(p) => p.flush(),
        }
    }
}

/// A connection and its buffers.
pub struct Conn {
    /// Where its bytes go.
    pub stream: Pipe,
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
        Ok(Conn::dialing(Pipe::Tcp(stream.into()), me, expect, now))
    }

    /// An accepted connection.
    pub fn incoming(stream: TcpStream, now: Duration) -> std::io::Result<Conn> {
        Ok(Conn::accepted(Pipe::Tcp(stream.into()), now))
    }

    /// A connection we dial through `stream`, HELLO queued.
    pub fn dialing(stream: Pipe, me: PeerId, expect: PeerId, now: Duration) -> Conn {
        Conn {
            stream,
            reader: FrameReader::new(),
            link: Link::dialing(me, expect),
            opened_at: now,
            want_write: false,
            dialed: true,
        }
    }

    /// A connection accepted on `stream`.
    pub fn accepted(stream: Pipe, now: Duration) -> Conn {
        Conn {
            stream,
            reader: FrameReader::new(),
            link: Link::accepting(),
            opened_at: now,
            want_write: false,
            dialed: false,
        }
    }

    /// The shared-memory pipe, if the connection is one.
    pub fn shm(&mut self) -> Option<&mut ShmPipe> {
        match &mut self.stream {
            Pipe::Shm(p) => Some(p),
            Pipe::Tcp(_) => None,
        }
    }

    /// Whether the connection goes through shared memory.
    pub fn is_shm(&self) -> bool {
        matches!(self.stream, Pipe::Shm(_))
    }

    /// A socket error pending on a TCP connection (a connect that failed).
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        match &self.stream {
            Pipe::Tcp(s) => s.take_error(),
            Pipe::Shm(_) => Ok(None),
        }
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
    /// Registers the socket with the poll (a shared-memory connection: its socket and,
    /// once linked, its bell, both for reading only: a ring has room again when the
    /// peer's bell or a turn of the loop says so, `Core::turn`).
    pub fn register(&self, r: &Registry, token: Token, interest: Interest) -> std::io::Result<()> {
        match &self.stream {
            Pipe::Tcp(s) => r.register(&mut SourceFd(&s.as_raw_fd()), token, interest),
            Pipe::Shm(p) => {
                let (sock, bell) = p.fds();
                r.register(&mut SourceFd(&sock), token, Interest::READABLE)?;
                match bell {
                    Some(b) => r.register(&mut SourceFd(&b), token, Interest::READABLE),
                    None => Ok(()),
                }
            }
        }
    }

    /// Registers a shared-memory connection's bell once the setup message brought it.
    pub fn register_bell(&self, r: &Registry, token: Token) -> std::io::Result<()> {
        match &self.stream {
            Pipe::Shm(p) => match p.fds().1 {
                Some(b) => r.register(&mut SourceFd(&b), token, Interest::READABLE),
                None => Ok(()),
            },
            Pipe::Tcp(_) => Ok(()),
        }
    }

    /// Changes the socket's interest (a shared-memory connection's never changes).
    pub fn reregister(
        &self,
        r: &Registry,
        token: Token,
        interest: Interest,
    ) -> std::io::Result<()> {
        match &self.stream {
            Pipe::Tcp(s) => r.reregister(&mut SourceFd(&s.as_raw_fd()), token, interest),
            Pipe::Shm(_) => Ok(()),
        }
    }

    /// Removes the connection's descriptors from the poll.
    pub fn deregister(&self, r: &Registry) -> std::io::Result<()> {
        match &self.stream {
            Pipe::Tcp(s) => r.deregister(&mut SourceFd(&s.as_raw_fd())),
            Pipe::Shm(p) => {
                let (sock, bell) = p.fds();
                let first = r.deregister(&mut SourceFd(&sock));
                match bell {
                    Some(b) => first.and(r.deregister(&mut SourceFd(&b))),
                    None => first,
                }
            }
        }
    }
}
