//! The properties of the frame decoder under hostile bytes, as one function the property
//! test (`wire_decode`) and the fuzz target `fuzz/fuzz_targets/wire_decode.rs` (which
//! includes this file and `alloc` by path) both call: no panic; every frame handed over
//! is within the reader's payload limit, whole, and builds a protocol frame or a
//! `WireError`; the heap never holds more than the read buffer plus one payload buffer
//! of at most the limit (rounded up to a power of two by the payload pool) plus small
//! change.
//!
//! Reference: DESIGN.md "Transport": every field read from the network is checked; a bad
//! frame closes that connection and never panics or allocates unbounded memory.

use std::io::{self, Read};

use bytes::Bytes;
use volpex_proto::limits::HEADER_BYTES;
use volpex_proto::wire::stream::{FrameReader, ReadStatus};
use volpex_proto::wire::Frame;

use super::alloc;

pub use volpex_proto::limits::READ_BUFFER_BYTES;
/// Allocations besides the two buffers: the copy of a small payload handed to the
/// callback (at most the read buffer), errors' strings, the frame built from it.
pub const SLACK_BYTES: usize = READ_BUFFER_BYTES + (8 << 10);

/// A source that hands out `data` in reads of at most `step` bytes, says `WouldBlock`
/// on every `burst`-th read (a drained socket), and ends with EOF.
struct Chunks<'a> {
    data: &'a [u8],
    at: usize,
    step: usize,
    burst: usize,
    reads: usize,
}

impl Read for Chunks<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.reads += 1;
        if self.reads.is_multiple_of(self.burst) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = out.len().min(self.step).min(self.data.len() - self.at);
        out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Feeds `data` to a reader with payload limit `limit` in reads of at most `step` bytes
/// (`burst` >= 2), one readiness event after another until the stream ends or a frame is
/// refused; `Err` says which property broke. Returns the frames handed over.
pub fn check_stream(data: &[u8], limit: usize, step: usize, burst: usize) -> Result<usize, String> {
    let mut src = Chunks {
        data,
        at: 0,
        step: step.max(1),
        burst: burst.max(2),
        reads: 0,
    };
    let mut reader = FrameReader::new();
    reader.max_payload = limit;
    let (mut frames, mut bad) = (0usize, None);
    alloc::reset_peak();
    let base = alloc::live();
    // The stream is finite and every call reads from it or ends: this ends.
    loop {
        let status = reader.read_from(&mut src, &mut [], |h, payload: Bytes| {
            if h.len as usize > limit || payload.len() != h.len as usize {
                bad = Some((h, payload.len()));
            }
            frames += 1;
            let _ = Frame::from_parts(&h, payload);
            Ok(None)
        });
        match status {
            Ok(ReadStatus::Open) => {}
            Ok(ReadStatus::Closed) | Err(_) => break,
        }
    }
    let grown = (alloc::peak() - base).max(0) as usize;
    drop(reader);
    if let Some((h, got)) = bad {
        return Err(format!(
            "a frame over the limit {limit} or with a short payload ({got} bytes): {h:?}"
        ));
    }
    let bound = READ_BUFFER_BYTES + limit.next_power_of_two() + SLACK_BYTES;
    if grown > bound {
        return Err(format!(
            "the decoder held {grown} bytes at its peak, more than {bound} (limit {limit})"
        ));
    }
    // Every frame takes a header's worth of the stream at least.
    if frames > data.len() / HEADER_BYTES {
        return Err(format!("{frames} frames out of {} bytes", data.len()));
    }
    Ok(frames)
}
