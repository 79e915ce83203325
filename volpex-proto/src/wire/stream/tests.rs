//! Unit tests of `stream`.

use super::*;
use crate::wire::header::Kind;
use proptest::prelude::*;

/// A reader that yields its bytes in chunks, then WouldBlock, then EOF when told.
struct Chunks {
    data: Vec<u8>,
    at: usize,
    step: usize,
    eof: bool,
}

impl Read for Chunks {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.data.len() {
            return if self.eof {
                Ok(0)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            };
        }
        let n = out.len().min(self.step).min(self.data.len() - self.at);
        out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn data_frame(len: usize, fill: u8) -> Vec<u8> {
    let mut v = Header::new(Kind::Data, len).encode().to_vec();
    v.extend(std::iter::repeat_n(fill, len));
    v
}

#[test]
fn a_raised_limit_applies_to_frames_already_read() {
    // The frame that ends a handshake and a data frame right behind it, in one read.
    let mut data = data_frame(8, 1);
    data.extend(data_frame(5000, 2));
    let mut src = Chunks {
        data,
        at: 0,
        step: 1 << 16,
        eof: false,
    };
    let mut r = FrameReader::new();
    r.max_payload = 8;
    let mut got = Vec::new();
    let st = r
        .read_from(&mut src, &mut [], |h, _| {
            got.push(h.len);
            Ok(Some(1 << 20))
        })
        .unwrap();
    assert_eq!(st, ReadStatus::Open);
    assert_eq!(got, vec![8, 5000]);
}

#[test]
fn small_and_large_frames_arrive_whole_in_any_chunking() {
    // With reads of 1 MiB, the large frame of LARGE_PAYLOAD_BYTES + 1 comes whole in the
    // first read with the small one behind it (its read buffer goes with it).
    let sizes = [0usize, 1, 100, LARGE_PAYLOAD_BYTES + 1, 5, 3 << 20, 5];
    let mut data = Vec::new();
    for (i, s) in sizes.iter().enumerate() {
        data.extend(data_frame(*s, i as u8));
    }
    for step in [1usize, 7, 4096, 1 << 20] {
        let mut src = Chunks {
            data: data.clone(),
            at: 0,
            step,
            eof: true,
        };
        let mut got = Vec::new();
        let mut r = FrameReader::new();
        r.max_payload = usize::MAX;
        // Each call is one readiness event; a short read ends it.
        loop {
            let st = r
                .read_from(&mut src, &mut [], |h, p| {
                    got.push((h.len as usize, p));
                    Ok(None)
                })
                .unwrap();
            if st == ReadStatus::Closed {
                break;
            }
        }
        assert_eq!(got.len(), sizes.len(), "step {step}");
        for (i, (len, p)) in got.iter().enumerate() {
            assert_eq!(*len, sizes[i]);
            assert!(p.iter().all(|b| *b == i as u8));
        }
    }
}

#[test]
fn the_rest_of_a_direct_write_goes_out_before_frames_queued_after_it() {
    let big = data_frame(100, 7);
    let mut q = OutQueue::default();
    // A small frame was queued while the big one was half written straight to the
    // socket; the big one's rest must come first.
    q.push(&Header::new(Kind::Data, 3), Bytes::from(vec![1u8; 3]));
    q.push_front_rest(
        &Header::new(Kind::Data, 100),
        Bytes::from(vec![7u8; 100]),
        50,
    );
    let mut w = Vec::new();
    assert!(q.flush_to(&mut w).unwrap());
    let mut expect = big[50..].to_vec();
    expect.extend(data_frame(3, 1));
    assert_eq!(w, expect);
}

#[test]
fn out_queue_writes_everything_through_partial_writes() {
    struct Slow(Vec<u8>, usize);
    impl Write for Slow {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            let n = b.len().min(self.1);
            self.0.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut q = OutQueue::default();
    let mut expect = Vec::new();
    for i in 0..5u8 {
        let f = data_frame(i as usize * 10, i);
        expect.extend_from_slice(&f);
        q.push(
            &Header::new(Kind::Data, i as usize * 10),
            Bytes::from(vec![i; i as usize * 10]),
        );
    }
    let mut w = Slow(Vec::new(), 13);
    assert!(q.flush_to(&mut w).unwrap());
    assert_eq!(w.0, expect);
}

#[test]
fn queued_frames_go_out_whole_in_one_call() {
    /// Takes everything it is given, recording each call's size.
    struct Calls(Vec<u8>, Vec<usize>);
    impl Write for Calls {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.write_vectored(&[IoSlice::new(b)])
        }
        fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
            let n = bufs.iter().map(|b| b.len()).sum();
            bufs.iter().for_each(|b| self.0.extend_from_slice(b));
            self.1.push(n);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let sizes = [3usize, 3 << 20, 0, 7];
    let mut q = OutQueue::default();
    let mut expect = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        expect.extend(data_frame(n, i as u8));
        q.push(&Header::new(Kind::Data, n), Bytes::from(vec![i as u8; n]));
    }
    let mut w = Calls(Vec::new(), Vec::new());
    assert!(q.flush_to(&mut w).unwrap());
    assert_eq!(w.0, expect);
    assert_eq!(w.1, [expect.len()], "one call for all four frames");
}

proptest! {
    /// Random bytes never panic the decoder. (Uniform bytes rarely pass the magic check:
    /// streams of well-formed, truncated and corrupted frames, with the heap bound
    /// checked, are `tests/simulator/hostile/wire_decode.rs`.)
    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512), step in 1usize..64) {
        let mut src = Chunks { data, at: 0, step, eof: true };
        let mut r = FrameReader::new();
        for _ in 0..1000 {
            match r.read_from(&mut src, &mut [], |_, _| Ok(None)) {
                Ok(ReadStatus::Open) => {}
                Ok(ReadStatus::Closed) | Err(_) => break,
            }
        }
    }

    /// A valid frame followed by garbage: the valid frame is delivered, then an error.
    #[test]
    fn garbage_after_valid_frame(garbage in proptest::collection::vec(any::<u8>(), 56..200)) {
        let mut data = data_frame(3, 1);
        data.extend(garbage);
        let mut src = Chunks { data, at: 0, step: 5, eof: true };
        let mut r = FrameReader::new();
        r.max_payload = 1 << 20;
        let mut n = 0;
        for _ in 0..1000 {
            match r.read_from(&mut src, &mut [], |_, _| { n += 1; Ok(None) }) {
                Ok(ReadStatus::Open) => {}
                Ok(ReadStatus::Closed) | Err(_) => break,
            }
        }
        prop_assert!(n >= 1);
    }
}

#[test]
fn each_large_frame_lands_once_in_the_landing_that_wants_it() {
    lands_once_read_in_chunks_of(4096);
}

#[test]
fn a_large_frame_read_whole_with_its_header_lands_too() {
    // The first frame and its header come in one read, the second's start with it.
    lands_once_read_in_chunks_of(READ_BUFFER_BYTES);
}

/// Three large frames (the message of seq 2, then seq 1's, then another replica's copy
/// of seq 1) read `step` bytes at a time, with landings for seq 1 and 2: each lands once.
fn lands_once_read_in_chunks_of(step: usize) {
    let len = LARGE_PAYLOAD_BYTES + 100;
    let frame = |seq: u64, fill: u8| {
        let mut h = Header::new(Kind::Data, len);
        h.seq = seq;
        let mut v = h.encode().to_vec();
        v.extend(std::iter::repeat_n(fill, len));
        v
    };
    let mut data = frame(2, 2);
    data.extend(frame(1, 1));
    data.extend(frame(1, 9));
    let key = |seq| crate::message::Key {
        comm: 0,
        tag: 0,
        src: 0,
        dst: 0,
        seq,
    };
    let (mut first, mut second) = (vec![0u8; len], vec![0u8; len]);
    let mut landings = [
        Landing {
            want: Want::Key(key(1)),
            buf: &mut first,
            landed: None,
        },
        Landing {
            want: Want::Key(key(2)),
            buf: &mut second,
            landed: None,
        },
    ];
    let mut src = Chunks {
        data,
        at: 0,
        step,
        eof: true,
    };
    let mut r = FrameReader::new();
    r.max_payload = usize::MAX;
    let mut got = Vec::new();
    while r
        .read_from(&mut src, &mut landings, |h, p| {
            got.push((h.seq, p.len(), p.first().copied()));
            Ok(None)
        })
        .unwrap()
        == ReadStatus::Open
    {}
    // Landed frames come without their payload; the second copy of seq 1 finds its
    // landing filled and is read on its own.
    assert_eq!(got, vec![(2, 0, None), (1, 0, None), (1, len, Some(9))]);
    assert!(landings.iter().all(|l| l.landed == Some(len)));
    assert!(first.iter().all(|&b| b == 1));
    assert!(second.iter().all(|&b| b == 2));
}

/// A large payload whose last user is the out queue (its log entry went while the frame
/// was still going out) goes back to the pool once written, not to the OS.
#[test]
fn a_written_large_payload_goes_back_to_the_pool() {
    let _serial = crate::message::pool::TEST_SERIAL.lock();
    // A size no other test pools (an 8 MiB buffer), so the pool's next one is this one.
    let len = 5_000_001;
    let payload = crate::message::pool::copy(&vec![9u8; len]);
    let ptr = payload.as_ptr();
    let logged = payload.clone();
    let mut q = OutQueue::default();
    q.push(&Header::new(Kind::Data, len), payload);
    // The log lets go of its copy first.
    crate::message::pool::recycle(logged);
    let mut w = Vec::new();
    assert!(q.flush_to(&mut w).unwrap());
    assert_eq!(w.len(), HEADER_BYTES + len);
    let again = crate::message::pool::take(len);
    assert_eq!(
        again.as_ptr(),
        ptr,
        "the written payload's buffer is reused"
    );
}

/// A reader that hands out `Chunks`' bytes and notes, from its second read on, whether
/// it was given a buffer with a zero byte in it.
struct ZeroWatch {
    inner: Chunks,
    reads: usize,
    saw_zeros: bool,
}

impl Read for ZeroWatch {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.inner.at < self.inner.data.len() {
            self.reads += 1;
            // The first read goes to the reader's own (zeroed) buffer.
            if self.reads > 1 && out.contains(&0) {
                self.saw_zeros = true;
            }
        }
        self.inner.read(out)
    }
}

/// A large payload read in pieces goes into a pooled buffer over its stale bytes: the
/// reader does not zero it first (`read_to_end` did: a `memset` of every large payload).
#[test]
fn a_large_payload_is_read_over_its_pooled_buffers_stale_bytes() {
    let _serial = crate::message::pool::TEST_SERIAL.lock();
    // A size no other test pools (a 4 MiB buffer), so the pool's next one is this one.
    let len = 3_333_333;
    let stale = crate::message::pool::copy(&vec![0xab; len]);
    let ptr = stale.as_ptr();
    crate::message::pool::recycle(stale);
    let mut src = ZeroWatch {
        inner: Chunks {
            data: data_frame(len, 0x11),
            at: 0,
            step: 1 << 16,
            eof: false,
        },
        reads: 0,
        saw_zeros: false,
    };
    let mut r = FrameReader::new();
    r.max_payload = 1 << 30;
    let mut got = Vec::new();
    while got.is_empty() {
        r.read_from(&mut src, &mut [], |_, p| {
            got.push(p);
            Ok(None)
        })
        .unwrap();
    }
    assert!(src.reads > 2, "the payload came in pieces");
    assert!(
        !src.saw_zeros,
        "the payload's buffer was zeroed before the read"
    );
    assert_eq!(got[0].as_ptr(), ptr, "the pooled buffer is reused");
    assert_eq!(got[0].len(), len);
    assert!(got[0].iter().all(|&b| b == 0x11));
}
