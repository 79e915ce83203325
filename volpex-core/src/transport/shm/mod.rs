//! Shared-memory connections between replicas on one host (docs/SHM.md): a pair of
//! rings in a memfd segment carries the bytes a TCP connection would carry, a slot
//! arena per direction carries small DATA messages beside them (read in place, no
//! frame), an abstract
//! Unix socket carries the segment and the bells once and then stands for the peer's
//! life, and eventfd bells wake a side that sleeps in its poll.
//!
//! Owns setting a connection up (dialing, accepting, checking what the peer sent), the
//! byte stream over the rings (`Read`, `Write`), publishing and reading the arena's
//! slots (`publish`, `take_slot`) and the sleep and wake handshake. Must never
//! interpret the bytes (the connection's reader and link do; a slot's fields are handed
//! out as they are), and holds all of the transport's `unsafe` code (`ring`,
//! `segment`, `shared`), each block with a `// SAFETY:` line.

mod arena;
mod ring;
mod segment;
pub mod shared;

use std::fs::File;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr as UnixAddr, UnixListener, UnixStream};

use nix::sys::eventfd::{EfdFlags, EventFd};
use nix::sys::socket::sockopt::PeerCredentials;
use nix::sys::socket::{
    getsockopt, recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags,
};
use nix::unistd::getuid;

#[cfg(test)]
pub use arena::during_copy;
pub use arena::{Meta as SlotMeta, Taken as SlotTaken, SLOT_PAYLOAD_MAX};
use ring::{Corrupt, Ring};
use segment::Segment;

/// The one message on a connection's Unix socket, with the segment and both bells.
const SETUP: [u8; 8] = *b"VPXSHMup";

/// The abstract socket name of the replica whose TCP listener is `addr`: unique on the
/// host while that listener lives, and nothing left in the file system.
fn socket_name(addr: SocketAddr) -> String {
    format!("volpex-shm/{addr}")
}

/// Says that shared memory is unavailable here, the one line of the fall back to TCP.
pub fn unavailable(me: impl std::fmt::Display, e: &io::Error) {
    log::warn!("{me}: shared memory unavailable ({e}): peers on this host use TCP");
}

/// This replica's listener for shared-memory connections.
pub struct Listener {
    sock: UnixListener,
}

impl Listener {
    /// Listens under the name of the TCP listener `addr`.
    pub fn bind(addr: SocketAddr) -> io::Result<Listener> {
        let name = UnixAddr::from_abstract_name(socket_name(addr))?;
        let sock = UnixListener::bind_addr(&name)?;
        sock.set_nonblocking(true)?;
        Ok(Listener { sock })
    }

    /// The descriptor to poll.
    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// The next connection waiting, if any (its setup message may still be coming).
    /// Connections from processes of another user are dropped at once: they could send
    /// descriptors we would hold until the handshake timed out.
    pub fn accept(&self) -> io::Result<Option<ShmPipe>> {
        loop {
            let sock = match self.sock.accept() {
                Ok((sock, _)) => sock,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) => return Err(e),
            };
            let uid = getsockopt(&sock, PeerCredentials).map(|c| c.uid());
            if uid != Ok(getuid().as_raw()) {
                log::debug!("a shared-memory connection from another user ({uid:?}) dropped");
                continue;
            }
            sock.set_nonblocking(true)?;
            return Ok(Some(ShmPipe {
                sock,
                linked: None,
                peer_gone: false,
                read_below: u64::MAX,
                #[cfg(test)]
                writes: 0,
            }));
        }
    }
}

/// Why a shared-memory dial did not happen.
#[derive(Debug)]
pub enum DialError {
    /// This process cannot make segments or bells: shared memory is unavailable here.
    Unavailable(io::Error),
    /// The peer's listener did not take the connection (none there, or full).
    Peer(io::Error),
}

/// Connects to the listener of the replica whose TCP listener is `addr` without ever
/// blocking: a full backlog (a peer that does not accept, stopped) is an error, and the
/// caller dials TCP instead.
fn connect(addr: SocketAddr) -> io::Result<UnixStream> {
    use socket2::{Domain, SockAddr, Socket, Type};
    // An abstract name: a NUL byte, then the name (as `UnixAddr::from_abstract_name`).
    let name = SockAddr::unix(format!("\0{}", socket_name(addr)))?;
    let sock = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    sock.set_nonblocking(true)?;
    sock.connect(&name)?;
    Ok(UnixStream::from(OwnedFd::from(sock)))
}

/// The linked state of a connection: the segment, which side we are, the bells.
struct Linked {
    seg: Segment,
    /// 0: we dialed (we produce into ring 0), 1: we accepted.
    side: usize,
    /// Our bell: the peer writes it to wake us; registered with our poll.
    mine: File,
    /// The peer's bell.
    theirs: File,
    /// How far the peer had read our outbound ring when we last looked
    /// (`Ring::write_seen`).
    head_seen: u64,
    /// Slots we published in our outbound arena.
    published: u64,
    /// How far the peer had read our outbound arena when we last looked.
    slots_seen: u64,
    /// Slots we read from the inbound arena.
    taken: u64,
}

impl Linked {
    fn new(seg: Segment, side: usize, mine: OwnedFd, theirs: OwnedFd) -> Linked {
        Linked {
            seg,
            side,
            mine: File::from(mine),
            theirs: File::from(theirs),
            head_seen: 0,
            published: 0,
            slots_seen: 0,
            taken: 0,
        }
    }

    fn inbound(&self) -> Ring<'_> {
        self.seg.ring(1 - self.side)
    }

    fn outbound(&self) -> Ring<'_> {
        self.seg.ring(self.side)
    }

    fn ring_theirs(&self) {
        let _ = (&self.theirs).write(&1u64.to_ne_bytes());
    }
}

/// One shared-memory connection, as a byte stream.
pub struct ShmPipe {
    /// Carries the setup message, then stands for the peer's life: its end closes when
    /// the peer exits, however it exits.
    sock: UnixStream,
    /// `None` for an accepted connection whose setup message has not come yet.
    linked: Option<Linked>,
    /// The peer's end of the socket closed: once the inbound ring is empty, the stream
    /// reads as closed.
    peer_gone: bool,
    /// Reads take the inbound ring's bytes only below this stream position
    /// (`read_below`): the frames sent before a slot are taken before it.
    read_below: u64,
    /// Writes that published bytes (the tests count how a flush writes).
    #[cfg(test)]
    pub(crate) writes: usize,
}

fn corrupt(c: Corrupt) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, c.to_string())
}

impl ShmPipe {
    /// Dials the replica whose TCP listener is `addr`: makes the segment and both bells
    /// and hands them over.
    pub fn dial(addr: SocketAddr, ring_bytes: usize) -> Result<ShmPipe, DialError> {
        let (seg, fd) = Segment::create(ring_bytes).map_err(DialError::Unavailable)?;
        let bell = || {
            EventFd::from_value_and_flags(0, EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK)
                .map(OwnedFd::from)
                .map_err(|e| DialError::Unavailable(e.into()))
        };
        let (mine, theirs) = (bell()?, bell()?);
        let sock = connect(addr).map_err(DialError::Peer)?;
        let fds = [fd.as_raw_fd(), theirs.as_raw_fd(), mine.as_raw_fd()];
        let sent = sendmsg::<()>(
            sock.as_raw_fd(),
            &[IoSlice::new(&SETUP)],
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::MSG_NOSIGNAL,
            None,
        )
        .map_err(|e| DialError::Peer(e.into()))?;
        if sent != SETUP.len() {
            return Err(DialError::Peer(io::ErrorKind::WriteZero.into()));
        }
        Ok(ShmPipe {
            sock,
            linked: Some(Linked::new(seg, 0, mine, theirs)),
            peer_gone: false,
            read_below: u64::MAX,
            #[cfg(test)]
            writes: 0,
        })
    }

    /// The descriptors to poll: the socket, and our bell once linked.
    pub fn fds(&self) -> (RawFd, Option<RawFd>) {
        (
            self.sock.as_raw_fd(),
            self.linked.as_ref().map(|l| l.mine.as_raw_fd()),
        )
    }

    /// Something happened on the connection's descriptors: an accepted connection takes
    /// its setup message (`Ok(true)` the moment it does: register the bell); a linked
    /// one resets its bell and learns whether the peer's end closed. Errors: the setup
    /// message was bad or never comes (the peer closed first).
    pub fn on_event(&mut self, ring_bytes: usize) -> io::Result<bool> {
        let Some(l) = &self.linked else {
            return self.take_setup(ring_bytes);
        };
        let mut count = [0u8; 8];
        let _ = (&l.mine).read(&mut count);
        let mut byte = [0u8; 1];
        match (&self.sock).read(&mut byte) {
            Ok(0) => self.peer_gone = true,
            // Nothing else ever comes on the socket.
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "unexpected bytes on a shared-memory connection's socket",
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.peer_gone = true,
        }
        Ok(false)
    }

    fn take_setup(&mut self, ring_bytes: usize) -> io::Result<bool> {
        let mut buf = [0u8; SETUP.len()];
        let mut cmsg = nix::cmsg_space!([RawFd; 3]);
        let mut iov = [IoSliceMut::new(&mut buf)];
        let msg = match recvmsg::<()>(
            self.sock.as_raw_fd(),
            &mut iov,
            Some(&mut cmsg),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(m) => m,
            Err(nix::errno::Errno::EAGAIN) => return Ok(false),
            Err(nix::errno::Errno::EINTR) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let bytes = msg.bytes;
        let mut fds: Vec<OwnedFd> = Vec::new();
        for c in msg.cmsgs()? {
            if let ControlMessageOwned::ScmRights(raw) = c {
                for fd in raw {
                    // SAFETY: the kernel just installed this descriptor in our table for
                    // this message; nothing else owns it.
                    fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
        }
        if bytes == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if bytes != SETUP.len() || buf != SETUP || fds.len() != 3 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a bad shared-memory setup message",
            ));
        }
        let mut fds = fds.into_iter();
        let (Some(seg), Some(mine), Some(theirs)) = (fds.next(), fds.next(), fds.next()) else {
            return Err(io::ErrorKind::InvalidData.into());
        };
        self.linked = Some(Linked::new(
            Segment::open(seg, ring_bytes)?,
            1,
            mine,
            theirs,
        ));
        Ok(true)
    }

    /// Whether a read would find bytes (or the end).
    pub fn readable(&self) -> bool {
        match &self.linked {
            Some(l) => {
                l.inbound()
                    .readable_below(self.read_below)
                    .map_or(true, |n| n > 0)
                    || self.peer_gone
            }
            None => false,
        }
    }

    /// Reads take the inbound ring's bytes only below stream position `at` from now on
    /// (`u64::MAX`: all of them).
    pub fn read_below(&mut self, at: u64) {
        self.read_below = at;
    }

    /// How far the peer has published bytes into the inbound ring (acquire: whatever it
    /// did before, a slot it published too, is visible afterwards).
    pub fn inbound_mark(&self) -> u64 {
        self.linked.as_ref().map_or(0, |l| l.inbound().published())
    }

    /// Before the poll sleeps: announces it to the peer (in the inbound ring, and in the
    /// outbound one when `pending` bytes wait for space). True when something came
    /// meanwhile: then the poll must not sleep.
    pub fn sleeps(&self, pending: bool) -> bool {
        let Some(l) = &self.linked else {
            return false;
        };
        // `reader_sleeps` fences (sequentially consistent) before it looks: a producer
        // publishing a slot fences before it looks at our word (`publish`).
        let came = l.inbound().reader_sleeps().unwrap_or(true)
            || l.seg.arena(1 - l.side).ready(l.taken).unwrap_or(true);
        let room = pending && l.outbound().writer_waits().unwrap_or(true);
        came || room || self.peer_gone
    }

    /// After the poll: awake again.
    pub fn awake(&self) {
        if let Some(l) = &self.linked {
            l.inbound().reader_awake();
            l.outbound().writer_awake();
        }
    }
}

impl ShmPipe {
    /// Publishes a small DATA message in our outbound arena, for the peer to read in
    /// place, and wakes the peer if it sleeps. False when it does not fit (too long,
    /// the arena full, the connection not up or the peer gone): send it as a frame.
    pub fn publish(&mut self, meta: &SlotMeta, payload: &[u8]) -> bool {
        let Some(l) = &mut self.linked else {
            return false;
        };
        if self.peer_gone {
            return false;
        }
        let arena = l.seg.arena(l.side);
        let meta = SlotMeta {
            ring_at: l.outbound().written(),
            ..*meta
        };
        if !arena.publish(l.published, &mut l.slots_seen, &meta, payload) {
            return false;
        }
        l.published += 1;
        if l.outbound().producer_must_wake() {
            l.ring_theirs();
        }
        true
    }

    /// Where in the inbound ring the next slot of the inbound arena was published
    /// (`SlotMeta::ring_at`), if it is. Err: a slot was rewritten past the reader.
    pub fn next_slot_at(&self) -> io::Result<Option<u64>> {
        let Some(l) = &self.linked else {
            return Ok(None);
        };
        l.seg.arena(1 - l.side).ring_at(l.taken).map_err(slot_error)
    }

    /// The next slot of the inbound arena, copied out and proven whole (`None`: none is
    /// published). Err: it was rewritten under the copy or holds nonsense; it is not
    /// delivered, and the caller closes the connection as for a corrupt ring.
    #[cfg(test)]
    pub fn take_slot(&mut self) -> io::Result<Option<(SlotMeta, Vec<u8>)>> {
        let got = self.take_slot_into(|_, _| None)?;
        Ok(got.map(|(meta, t)| match t {
            SlotTaken::Copied(payload) => (meta, payload),
            SlotTaken::Landed(_) => unreachable!("no buffer was offered"),
        }))
    }

    /// `take_slot`, except that a message `into` offers a buffer for (given its header
    /// and length) is copied straight into it (`SlotTaken::Landed`). An `Err` (the slot
    /// moved during the copy) leaves nothing in that buffer that counts.
    pub fn take_slot_into<'b>(
        &mut self,
        into: impl FnOnce(&SlotMeta, usize) -> Option<&'b mut [u8]>,
    ) -> io::Result<Option<(SlotMeta, SlotTaken)>> {
        let Some(l) = &mut self.linked else {
            return Ok(None);
        };
        let got = l
            .seg
            .arena(1 - l.side)
            .read_into(l.taken, into)
            .map_err(slot_error)?;
        if got.is_some() {
            l.taken += 1;
        }
        Ok(got)
    }

    /// Slots read from the inbound arena so far.
    pub fn slots_taken(&self) -> u64 {
        self.linked.as_ref().map_or(0, |l| l.taken)
    }
}

fn slot_error(e: arena::SlotError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

impl Read for ShmPipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(l) = &self.linked else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let ring = l.inbound();
        let n = ring.read(buf, self.read_below).map_err(corrupt)?;
        if n > 0 {
            if ring.consumer_must_wake() {
                l.ring_theirs();
            }
            return Ok(n);
        }
        if buf.is_empty() || (self.peer_gone && ring.readable().map_err(corrupt)? == 0) {
            return Ok(0);
        }
        Err(io::ErrorKind::WouldBlock.into())
    }
}

impl Write for ShmPipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let Some(l) = &mut self.linked else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        if self.peer_gone {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let ring = l.seg.ring(l.side);
        let n = ring.write_seen(bufs, &mut l.head_seen).map_err(corrupt)?;
        if n > 0 {
            #[cfg(test)]
            {
                self.writes += 1;
            }
            if ring.producer_must_wake() {
                l.ring_theirs();
            }
            return Ok(n);
        }
        if bufs.iter().all(|b| b.is_empty()) {
            return Ok(0);
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name no replica uses (replicas listen on real addresses), one per test.
    fn addr(test: u8) -> SocketAddr {
        SocketAddr::from(([127, 77, 0, test], std::process::id() as u16))
    }

    /// A dialed and an accepted pipe in one process (the fault tests run them across
    /// processes): bytes both ways, a bell for a sleeper, and the end seen when one side
    /// goes away, after the bytes it had published.
    #[test]
    fn a_pipe_carries_bytes_and_reports_the_peer_gone() {
        let name = addr(1);
        let l = Listener::bind(name).expect("a listener");
        let mut d = ShmPipe::dial(name, 4096).expect("dialed");
        let mut a = l.accept().expect("accept").expect("a connection");
        assert!(a.linked.is_none());
        assert!(a.on_event(4096).expect("the setup message"));
        assert!(a.linked.is_some());

        assert!(!a.sleeps(false), "nothing came yet");
        d.write_all(b"ping").expect("written");
        a.awake();
        let mut buf = [0u8; 8];
        assert_eq!(a.read(&mut buf).expect("read"), 4);
        assert_eq!(&buf[..4], b"ping");
        // The sleeper's bell was rung: its descriptor is readable.
        let mut count = [0u8; 8];
        let mine = &a.linked.as_ref().expect("linked").mine;
        assert_eq!((&*mine).read(&mut count).expect("the bell rang"), 8);
        assert_eq!(
            a.read(&mut buf).err().map(|e| e.kind()),
            Some(io::ErrorKind::WouldBlock)
        );

        a.write_all(b"pong").expect("written");
        assert_eq!(d.read(&mut buf).expect("read"), 4);

        d.write_all(b"last").expect("written");
        drop(d);
        a.on_event(4096).expect("an event");
        assert_eq!(
            a.read(&mut buf).expect("read"),
            4,
            "published bytes still come"
        );
        assert_eq!(a.read(&mut buf).expect("the end"), 0);
        assert_eq!(
            a.write(b"x").err().map(|e| e.kind()),
            Some(io::ErrorKind::BrokenPipe)
        );
    }

    /// A slot records how far its producer had written the ring: the consumer reads the
    /// ring up to there, takes the slot, then reads what was written after it, so the
    /// connection's frames keep their order; and a peer gone with bytes left beyond the
    /// limit is not the end yet.
    #[test]
    fn a_slot_is_taken_between_the_bytes_written_before_and_after_it() {
        let name = addr(4);
        let l = Listener::bind(name).expect("a listener");
        let mut d = ShmPipe::dial(name, 4096).expect("dialed");
        let mut a = l.accept().expect("accept").expect("a connection");
        assert!(a.on_event(4096).expect("the setup message"));

        d.write_all(b"before").expect("written");
        assert!(d.publish(&SlotMeta::default(), b"slot"));
        d.write_all(b"after").expect("written");

        let mark = a.inbound_mark();
        assert_eq!(mark, 11, "the ring holds both writes");
        let at = a
            .next_slot_at()
            .expect("sane")
            .expect("the slot is published");
        assert_eq!(at, 6);
        a.read_below(at);
        let mut buf = [0u8; 16];
        assert_eq!(a.read(&mut buf).expect("read"), 6);
        assert_eq!(&buf[..6], b"before");
        assert_eq!(
            a.read(&mut buf).err().map(|e| e.kind()),
            Some(io::ErrorKind::WouldBlock),
            "the bytes after the slot wait"
        );
        assert!(!a.readable());
        let (meta, payload) = a.take_slot().expect("whole").expect("published");
        assert_eq!((meta.ring_at, &payload[..]), (6, &b"slot"[..]));
        drop(d);
        a.on_event(4096).expect("an event");
        a.read_below(at);
        assert_eq!(
            a.read(&mut buf).err().map(|e| e.kind()),
            Some(io::ErrorKind::WouldBlock),
            "bytes are left beyond the limit: not the end"
        );
        a.read_below(u64::MAX);
        assert_eq!(a.read(&mut buf).expect("read"), 5);
        assert_eq!(&buf[..5], b"after");
        assert_eq!(a.read(&mut buf).expect("the end"), 0);
    }

    #[test]
    fn a_bad_setup_message_is_refused() {
        let name = addr(2);
        let l = Listener::bind(name).expect("a listener");
        let sock = UnixStream::connect_addr(
            &UnixAddr::from_abstract_name(socket_name(name)).expect("name"),
        )
        .expect("connected");
        (&sock).write_all(b"VPXSHMup").expect("sent");
        let mut a = l.accept().expect("accept").expect("a connection");
        let e = a.on_event(4096).expect_err("refused");
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn dialing_where_nobody_listens_is_a_peer_error() {
        match ShmPipe::dial(addr(3), 4096) {
            Err(DialError::Peer(_)) => {}
            Err(DialError::Unavailable(e)) => panic!("shared memory unavailable: {e}"),
            Ok(_) => panic!("dialed nobody"),
        }
    }
}
