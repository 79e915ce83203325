//! Frame streams over byte pipes: an incremental reader for non-blocking sockets, an output
//! queue that writes header and payload without copying the payload, and blocking helpers
//! for simple control connections.

use std::collections::VecDeque;
use std::io::{self, IoSlice, Read, Write};
use std::ops::Range;

use bytes::{Bytes, BytesMut};

use super::header::{Header, Kind, WireError};
use crate::limits::{HEADER_BYTES, LARGE_PAYLOAD_BYTES, READ_BUFFER_BYTES};
use crate::message::{Key, Want};

/// Why reading stopped for good.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The socket failed.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    /// The peer sent a bad frame.
    #[error("bad frame: {0}")]
    Wire(#[from] WireError),
}

/// State of the connection after draining the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadStatus {
    /// Everything available was read; more may come.
    Open,
    /// The peer closed its side.
    Closed,
}

/// Where a waiting receive wants one large message put: straight into its buffer, with
/// no intermediate copy. Only a caller that keeps driving until that receive completes may
/// offer one (a blocking wait), because a frame half-landed when the offer is withdrawn can
/// only be discarded. A caller waiting for several receives offers one each; a landing
/// that was filled takes no other frame.
pub struct Landing<'a> {
    /// The message wanted: by key, or (a receive with `ANY_TAG` nothing else competes
    /// with) by order number.
    pub want: Want,
    /// The receive buffer.
    pub buf: &'a mut [u8],
    /// Set to the message length once a frame has landed.
    pub landed: Option<usize>,
}

impl Landing<'_> {
    /// Whether the DATA of `key`, `order`-th on its stream, of `len` bytes, may land
    /// here (a driver reading a message other than from a frame: a shared-memory slot).
    pub fn takes(&self, key: &Key, order: u64, len: usize) -> bool {
        let same = match self.want {
            Want::Key(k) => k == *key,
            Want::Order {
                comm,
                src,
                dst,
                order: o,
            } => key.comm == comm && key.src == src && key.dst == dst && order == o,
        };
        same && len <= self.buf.len() && self.landed.is_none()
    }

    fn wants(&self, h: &Header) -> bool {
        let same = match self.want {
            Want::Key(k) => {
                h.comm == k.comm
                    && h.tag == k.tag
                    && h.src == k.src
                    && h.dst == k.dst
                    && h.seq == k.seq
            }
            Want::Order {
                comm,
                src,
                dst,
                order,
            } => h.comm == comm && h.src == src && h.dst == dst && h.aux == order,
        };
        h.kind == Kind::Data && same && h.len as usize <= self.buf.len() && self.landed.is_none()
    }
}

/// The landing among `landings` that wants the frame `h` heads.
fn landing_for<'l, 'b>(landings: &'l mut [Landing<'b>], h: &Header) -> Option<&'l mut Landing<'b>> {
    landings.iter_mut().find(|l| l.wants(h))
}

/// A large payload in progress.
#[derive(Debug)]
enum Partial {
    /// Read into its own buffer (of the payload's length, from the pool: initialized,
    /// not zeroed); `filled` bytes are there.
    Buffered(Header, BytesMut, usize),
    /// Read into the receive buffer of a `Landing`; `filled` bytes are there.
    Direct(Header, usize),
    /// The rest of a frame whose landing was withdrawn: read and dropped.
    Discard(usize),
}

/// Incremental frame decoder for a non-blocking byte stream.
///
/// Small frames are read in bulk into one reusable buffer; a large payload is read
/// straight into its own (pooled) allocation, or into a waiting receive's buffer, and one
/// that came whole in a bulk read goes to that receive's buffer or keeps the read buffer
/// (a fresh one replaces it). A read
/// that returns less than was asked for means the socket is drained: with edge-triggered
/// readiness, new data raises a new event, so no extra read just to see `WouldBlock` is
/// needed.
#[derive(Debug)]
pub struct FrameReader {
    buf: Vec<u8>,
    start: usize,
    end: usize,
    partial: Option<Partial>,
    /// Largest payload accepted now; an unauthenticated peer gets only handshake sizes.
    pub max_payload: usize,
}

impl Default for FrameReader {
    fn default() -> Self {
        FrameReader {
            buf: Vec::new(),
            start: 0,
            end: 0,
            partial: None,
            max_payload: crate::wire::header::CHALLENGE_BYTES,
        }
    }
}

/// What one read into a large payload did.
enum Step {
    Progress,
    Drained,
    Closed,
}

fn read_some<R: Read>(r: &mut R, into: &mut [u8]) -> Result<(usize, Step), ReadError> {
    loop {
        return match r.read(into) {
            Ok(0) => Ok((0, Step::Closed)),
            Ok(n) if n < into.len() => Ok((n, Step::Drained)),
            Ok(n) => Ok((n, Step::Progress)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok((0, Step::Drained)),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e.into()),
        };
    }
}

impl FrameReader {
    /// An empty reader accepting only handshake-sized payloads until told otherwise.
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads until the source is drained or ends, handing each complete frame to
    /// `on_frame`. A frame that landed in one of `landings` is handed over with an empty
    /// payload (its bytes are in that landing's buffer). An error from `on_frame` stops reading;
    /// `Some(limit)` from it sets `max_payload` for the frames after it, also those
    /// already read (a peer may send data right behind the frame that ends the handshake).
    pub fn read_from<R: Read>(
        &mut self,
        r: &mut R,
        landings: &mut [Landing<'_>],
        mut on_frame: impl FnMut(Header, Bytes) -> Result<Option<usize>, WireError>,
    ) -> Result<ReadStatus, ReadError> {
        loop {
            match self.partial.take() {
                Some(Partial::Buffered(h, mut payload, filled)) => {
                    // Read over the buffer's stale bytes: `read_to_end` would zero its
                    // spare room first, a `memset` of each large payload.
                    let len = payload.len();
                    let (n, step) = read_some(r, &mut payload[filled..])?;
                    let filled = filled + n;
                    if filled == len {
                        self.limit(on_frame(h, payload.freeze())?);
                    } else {
                        self.partial = Some(Partial::Buffered(h, payload, filled));
                    }
                    match step {
                        Step::Progress => {}
                        Step::Drained => return Ok(ReadStatus::Open),
                        Step::Closed => return Ok(ReadStatus::Closed),
                    }
                }
                Some(Partial::Direct(h, filled)) => {
                    let len = h.len as usize;
                    let Some(l) = landing_for(landings, &h) else {
                        // The receive that offered the buffer is gone (it completed from
                        // another copy, or failed): drop the rest of this copy.
                        self.partial = Some(Partial::Discard(len - filled));
                        continue;
                    };
                    let (n, step) = read_some(r, &mut l.buf[filled..len])?;
                    let filled = filled + n;
                    if filled == len {
                        l.landed = Some(len);
                        self.limit(on_frame(h, Bytes::new())?);
                    } else {
                        self.partial = Some(Partial::Direct(h, filled));
                    }
                    match step {
                        Step::Progress => {}
                        Step::Drained => return Ok(ReadStatus::Open),
                        Step::Closed => return Ok(ReadStatus::Closed),
                    }
                }
                Some(Partial::Discard(left)) => {
                    self.ensure_buf();
                    let room = left.min(self.buf.len());
                    let (n, step) = read_some(r, &mut self.buf[..room])?;
                    if n < left {
                        self.partial = Some(Partial::Discard(left - n));
                    }
                    match step {
                        Step::Progress => {}
                        Step::Drained => return Ok(ReadStatus::Open),
                        Step::Closed => return Ok(ReadStatus::Closed),
                    }
                }
                None => {
                    self.ensure_buf();
                    if self.start == self.end {
                        self.start = 0;
                        self.end = 0;
                    } else if self.start > 0 {
                        self.buf.copy_within(self.start..self.end, 0);
                        self.end -= self.start;
                        self.start = 0;
                    }
                    let space = self.buf.len() - self.end;
                    match r.read(&mut self.buf[self.end..]) {
                        Ok(0) => return Ok(ReadStatus::Closed),
                        Ok(n) => {
                            self.end += n;
                            self.parse(landings, &mut on_frame)?;
                            if n < space && self.partial.is_none() {
                                return Ok(ReadStatus::Open);
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            return Ok(ReadStatus::Open)
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
    }

    /// Whether a frame is being read straight into a `Landing` buffer.
    #[inline]
    pub fn is_landing(&self) -> bool {
        matches!(self.partial, Some(Partial::Direct(..)))
    }

    fn limit(&mut self, max_payload: Option<usize>) {
        if let Some(m) = max_payload {
            self.max_payload = m;
        }
    }

    /// The read buffer itself as the payload at `range` (a large frame no landing
    /// wants), instead of a copy: a fresh buffer takes the bytes read after it, at the
    /// same place. Zeroing the fresh one costs less than copying the payload out.
    fn hand_over(&mut self, range: Range<usize>) -> Bytes {
        let mut fresh = vec![0; self.buf.len()];
        fresh[range.end..self.end].copy_from_slice(&self.buf[range.end..self.end]);
        Bytes::from(std::mem::replace(&mut self.buf, fresh)).slice(range)
    }

    fn ensure_buf(&mut self) {
        if self.buf.is_empty() {
            self.buf = vec![0; READ_BUFFER_BYTES];
        }
    }

    fn parse(
        &mut self,
        landings: &mut [Landing<'_>],
        on_frame: &mut impl FnMut(Header, Bytes) -> Result<Option<usize>, WireError>,
    ) -> Result<(), WireError> {
        while self.partial.is_none() {
            let avail = self.end - self.start;
            if avail < HEADER_BYTES {
                return Ok(());
            }
            let mut hb = [0u8; HEADER_BYTES];
            hb.copy_from_slice(&self.buf[self.start..self.start + HEADER_BYTES]);
            let h = Header::decode(&hb)?;
            let len = h.len as usize;
            if len > self.max_payload {
                return Err(WireError::BadLength {
                    kind: h.kind,
                    len: len as u64,
                    rule: format!("at most {} on this connection now", self.max_payload),
                });
            }
            let body = self.start + HEADER_BYTES;
            if avail - HEADER_BYTES >= len {
                let end = body + len;
                // A large payload read whole with its header is not copied out of the
                // read buffer as a small one is: it goes to its landing as the rest of a
                // larger one would, or takes the read buffer with it.
                let payload = if len <= LARGE_PAYLOAD_BYTES {
                    Bytes::copy_from_slice(&self.buf[body..end])
                } else if let Some(l) = landing_for(landings, &h) {
                    l.buf[..len].copy_from_slice(&self.buf[body..end]);
                    l.landed = Some(len);
                    Bytes::new()
                } else {
                    self.hand_over(body..end)
                };
                self.start = end;
                self.limit(on_frame(h, payload)?);
            } else if len > LARGE_PAYLOAD_BYTES {
                let have = self.end - body;
                match landing_for(landings, &h) {
                    Some(l) => {
                        l.buf[..have].copy_from_slice(&self.buf[body..self.end]);
                        self.partial = Some(Partial::Direct(h, have));
                    }
                    None => {
                        let mut p = crate::message::pool::take_filled(len);
                        p[..have].copy_from_slice(&self.buf[body..self.end]);
                        self.partial = Some(Partial::Buffered(h, p, have));
                    }
                }
                self.start = self.end;
            } else {
                return Ok(());
            }
        }
        Ok(())
    }
}

struct Out {
    header: [u8; HEADER_BYTES],
    payload: Bytes,
    written: usize,
}

/// Frames waiting to be written to one connection.
#[derive(Default)]
pub struct OutQueue {
    frames: VecDeque<Out>,
}

impl OutQueue {
    /// Appends a frame; the payload is shared, not copied.
    #[inline]
    pub fn push(&mut self, h: &Header, payload: Bytes) {
        self.push_rest(h, payload, 0);
    }

    /// Appends a frame whose first `written` bytes (header included) are already out.
    #[inline]
    pub fn push_rest(&mut self, h: &Header, payload: Bytes, written: usize) {
        if written < HEADER_BYTES + payload.len() {
            self.frames.push_back(Out {
                header: h.encode(),
                payload,
                written,
            });
        }
    }

    /// Puts first a frame whose first `written` bytes already went out ahead of the
    /// queue (a direct write): its rest must follow them on the wire before anything
    /// queued since. Nothing queued may have started going out.
    pub fn push_front_rest(&mut self, h: &Header, payload: Bytes, written: usize) {
        debug_assert_eq!(self.frames.front().map_or(0, |f| f.written), 0);
        if written < HEADER_BYTES + payload.len() {
            self.frames.push_front(Out {
                header: h.encode(),
                payload,
                written,
            });
        }
    }

    /// True when nothing is waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Writes as much as the sink takes. `Ok(true)` when everything went out, `Ok(false)`
    /// when the sink would block.
    pub fn flush_to<W: Write>(&mut self, w: &mut W) -> io::Result<bool> {
        while !self.frames.is_empty() {
            // Up to 16 frames per call, whole: the kernel takes what the socket buffer
            // holds. (Calls of at most 512 KiB were faster only under BBR congestion
            // control, which `transport::tuning` replaces; under CUBIC one call per 1 MiB
            // message took 0.85x the ping-pong time.)
            let mut slices = [IoSlice::new(&[]); 32];
            let mut count = 0;
            for f in self.frames.iter().take(16) {
                if f.written < HEADER_BYTES {
                    slices[count] = IoSlice::new(&f.header[f.written..]);
                    count += 1;
                }
                let rest = &f.payload[f.written.saturating_sub(HEADER_BYTES)..];
                if !rest.is_empty() {
                    slices[count] = IoSlice::new(rest);
                    count += 1;
                }
            }
            let n = match w.write_vectored(&slices[..count]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.advance(n);
        }
        Ok(true)
    }

    fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let Some(f) = self.frames.front_mut() else {
                return;
            };
            let left = HEADER_BYTES + f.payload.len() - f.written;
            if n >= left {
                n -= left;
                // A large payload whose log entry went first (confirmed, or evicted
                // while its frame was still going out) has its last user here: its
                // buffer goes back to the pool, else the next large message of this
                // size page-faults in a fresh one (a 32 MiB one-sided answer per flush).
                if let Some(f) = self.frames.pop_front() {
                    crate::message::pool::recycle(f.payload);
                }
            } else {
                f.written += n;
                n = 0;
            }
        }
    }
}

/// Reads one whole frame from a blocking source.
pub fn read_one<R: Read>(r: &mut R) -> Result<(Header, Vec<u8>), ReadError> {
    let mut hb = [0u8; HEADER_BYTES];
    r.read_exact(&mut hb)?;
    let h = Header::decode(&hb)?;
    let mut payload = vec![0u8; h.len as usize];
    r.read_exact(&mut payload)?;
    Ok((h, payload))
}

/// Writes one whole frame to a blocking sink.
pub fn write_one<W: Write>(w: &mut W, h: &Header, payload: &[u8]) -> io::Result<()> {
    let mut v = Vec::with_capacity(HEADER_BYTES + payload.len());
    v.extend_from_slice(&h.encode());
    v.extend_from_slice(payload);
    w.write_all(&v)?;
    w.flush()
}

#[cfg(test)]
mod tests;
