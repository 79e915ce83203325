//! One direction of a shared-memory connection: a single-producer single-consumer byte
//! ring in a mapped segment, and the two words its sides sleep and wake by.
//!
//! Owns the index arithmetic and the memory ordering that make bytes visible only once
//! they are whole. Must never trust an index the other process wrote: every read of
//! `head` or `tail` is checked before it bounds a copy.

use std::io::IoSlice;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// A large write is published in pieces of this size (see `Ring::write`).
const PUBLISH_BYTES: usize = 64 << 10;

/// Once this far into a lap of the ring, a producer that finds the ring empty starts
/// its next bytes at the start of the data (`RingCtrl::skip`): traffic stays on memory
/// the caches hold (a few pages for small messages, one message's size for large ones)
/// instead of sweeping the whole ring, and the check costs one read of the consumer's
/// `head` per this many bytes while the consumer keeps up.
const REWIND_AFTER: u64 = 64 << 10;

/// A value on a cache line of its own, so the producer's and the consumer's words do
/// not share one.
#[repr(C, align(128))]
pub struct Padded<T>(pub T);

/// The control words of one ring, at the start of its part of the segment (zero bytes
/// are the empty ring).
#[repr(C)]
pub struct RingCtrl {
    /// Bytes the producer has published in all (written by the producer only, with
    /// release ordering after the bytes).
    tail: Padded<AtomicU64>,
    /// Bytes the consumer has copied out in all (written by the consumer only, with
    /// release ordering after the copy).
    head: Padded<AtomicU64>,
    /// Set by the consumer before it sleeps in its poll; the producer that finds it set
    /// clears it and rings the consumer's bell.
    reader_sleeping: Padded<AtomicU32>,
    /// Set by the producer before it sleeps with bytes it could not write; the consumer
    /// that frees space clears it and rings the producer's bell.
    writer_waiting: Padded<AtomicU32>,
    /// Where the producer skipped the rest of a lap (written by the producer only, with
    /// release ordering before the `tail` that follows): it found the ring empty there
    /// (`head` equal to it) and went on at the next multiple of the capacity, the start
    /// of the data. A consumer whose `head` equals it reads on from there.
    skip: Padded<AtomicU64>,
}

/// The ring's indices broke the rule (`head <= tail <= head + capacity`): the other
/// process wrote nonsense.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt {
    /// The head read.
    pub head: u64,
    /// The tail read.
    pub tail: u64,
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "shared-memory ring indices out of order (head {}, tail {})",
            self.head, self.tail
        )
    }
}

/// One ring, as one side sees it: its control words and its data, `cap` bytes (a power
/// of two). The segment that holds both outlives this value (`Segment::ring`).
pub struct Ring<'a> {
    ctrl: &'a RingCtrl,
    data: *mut u8,
    cap: usize,
}

// SAFETY: a ring is its control words (atomics) and a pointer into memory valid for
// `'a`; nothing in it belongs to one thread.
unsafe impl Send for Ring<'_> {}

impl<'a> Ring<'a> {
    /// The ring whose control words are `ctrl` and whose data starts at `data`.
    ///
    /// # Safety
    ///
    /// `data` must be valid for reads and writes of `cap` bytes for `'a` and `cap` a
    /// power of two; of all the `Ring`s over this memory (in any process) at most one
    /// calls the producer's methods and at most one the consumer's.
    pub unsafe fn from_raw(ctrl: &'a RingCtrl, data: *mut u8, cap: usize) -> Ring<'a> {
        debug_assert!(cap.is_power_of_two());
        Ring { ctrl, data, cap }
    }

    /// Bytes the ring holds (`Corrupt` if the indices say nonsense).
    fn filled(&self, head: u64, tail: u64) -> Result<usize, Corrupt> {
        match tail.checked_sub(head) {
            Some(n) if n <= self.cap as u64 => Ok(n as usize),
            _ => Err(Corrupt { head, tail }),
        }
    }

    /// Producer: copies as much of `bufs` as fits and publishes it. Returns how many
    /// bytes went in (0 when the ring is full).
    #[cfg(test)]
    pub fn write(&self, bufs: &[IoSlice<'_>]) -> Result<usize, Corrupt> {
        self.write_seen(bufs, &mut 0)
    }

    /// Producer: `write`, knowing that the consumer had freed the ring up to `head_seen`
    /// when we last looked (it only moves forward). While the room that leaves holds
    /// `bufs`, `head` is not read: the consumer's cache line stays where it is and the
    /// write costs the producer no miss. Otherwise `head` is read and `head_seen`
    /// updated.
    pub fn write_seen(&self, bufs: &[IoSlice<'_>], head_seen: &mut u64) -> Result<usize, Corrupt> {
        let mut tail = self.ctrl.tail.0.load(Ordering::Relaxed);
        let want: usize = bufs.iter().map(|b| b.len()).sum();
        let cap = self.cap as u64;
        if want > 0 && tail % cap >= REWIND_AFTER {
            let head = self.head()?;
            self.filled(head, tail)?;
            *head_seen = head;
            if head == tail {
                // Empty: start again at the start of the data. The consumer learns it
                // from `skip`, published before the bytes' `tail`.
                self.ctrl.skip.0.store(tail, Ordering::Release);
                tail = tail.next_multiple_of(cap);
                *head_seen = tail;
            }
        }
        let known = tail
            .checked_sub(*head_seen)
            .filter(|n| *n <= cap)
            .map(|n| self.cap - n as usize);
        let mut room = match known {
            Some(room) if room >= want => room,
            _ => {
                // Acquire (in `head`): the consumer's copy out of these bytes is done
                // before we overwrite (an earlier acquire covers the bytes below
                // `head_seen`).
                let head = self.head()?;
                let room = self.cap - self.filled(head, tail)?;
                *head_seen = head;
                room
            }
        };
        let mut at = tail;
        for b in bufs {
            let mut b: &[u8] = b;
            while room > 0 && !b.is_empty() {
                // Published piece by piece: a consumer that polls copies out the first
                // piece while we copy in the next.
                let n = b.len().min(room).min(PUBLISH_BYTES);
                self.copy_in(at, &b[..n]);
                at += n as u64;
                room -= n;
                b = &b[n..];
                self.ctrl.tail.0.store(at, Ordering::Release);
            }
        }
        Ok((at - tail) as usize)
    }

    /// How far the consumer has read, read with acquire ordering (its copy out is
    /// done), past a lap the producer skipped there.
    fn head(&self) -> Result<u64, Corrupt> {
        let head = self.ctrl.head.0.load(Ordering::Acquire);
        Ok(self.past_skip(head))
    }

    /// `head`, or the start of the next lap if the producer skipped the rest of this
    /// one at `head` (`RingCtrl::skip`).
    fn past_skip(&self, head: u64) -> u64 {
        let cap = self.cap as u64;
        if !head.is_multiple_of(cap) && self.ctrl.skip.0.load(Ordering::Acquire) == head {
            head.next_multiple_of(cap)
        } else {
            head
        }
    }

    /// Consumer: `head` and `tail` (acquire: the producer's bytes below it are written),
    /// past a skipped lap when bytes came after it.
    fn consumer_view(&self) -> (u64, u64) {
        let head = self.ctrl.head.0.load(Ordering::Relaxed);
        let tail = self.ctrl.tail.0.load(Ordering::Acquire);
        if tail == head {
            return (head, tail);
        }
        (self.past_skip(head), tail)
    }

    /// Consumer: copies out what the ring holds below stream position `below`, at most
    /// `out.len()` bytes, and frees their space. Returns how many bytes came out (0 when
    /// none).
    pub fn read(&self, out: &mut [u8], below: u64) -> Result<usize, Corrupt> {
        let (head, tail) = self.consumer_view_below(below);
        let n = self.filled(head, tail)?.min(out.len());
        if n == 0 {
            return Ok(0);
        }
        self.copy_out(head, &mut out[..n]);
        self.ctrl.head.0.store(head + n as u64, Ordering::Release);
        Ok(n)
    }

    /// Consumer: bytes waiting to be read.
    pub fn readable(&self) -> Result<usize, Corrupt> {
        let (head, tail) = self.consumer_view();
        self.filled(head, tail)
    }

    /// Consumer: bytes waiting to be read below stream position `below`.
    pub fn readable_below(&self, below: u64) -> Result<usize, Corrupt> {
        let (head, tail) = self.consumer_view_below(below);
        self.filled(head, tail)
    }

    /// Consumer: `consumer_view` with the tail held at `below` (the bytes from there on
    /// are left for later). A head at or past `below` reads nothing, even across a
    /// skipped lap.
    fn consumer_view_below(&self, below: u64) -> (u64, u64) {
        let raw = self.ctrl.head.0.load(Ordering::Relaxed);
        if raw >= below {
            return (raw, raw);
        }
        let (head, tail) = self.consumer_view();
        (head, tail.min(below.max(head)))
    }

    /// Consumer: the stream position the producer has published bytes up to (acquire:
    /// they, and whatever the producer did before them, are visible).
    pub fn published(&self) -> u64 {
        self.ctrl.tail.0.load(Ordering::Acquire)
    }

    /// Producer: the stream position it has written up to.
    pub fn written(&self) -> u64 {
        self.ctrl.tail.0.load(Ordering::Relaxed)
    }

    /// Producer: bytes that fit now.
    pub fn writable(&self) -> Result<usize, Corrupt> {
        let tail = self.ctrl.tail.0.load(Ordering::Relaxed);
        Ok(self.cap - self.filled(self.head()?, tail)?)
    }

    /// Consumer, before sleeping: announces it and says whether bytes came meanwhile
    /// (then it must not sleep). Pairs with `producer_must_wake`.
    pub fn reader_sleeps(&self) -> Result<bool, Corrupt> {
        self.ctrl.reader_sleeping.0.store(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        Ok(self.readable()? > 0)
    }

    /// Consumer, awake again.
    pub fn reader_awake(&self) {
        self.ctrl.reader_sleeping.0.store(0, Ordering::Relaxed);
    }

    /// Producer, after publishing: whether the consumer sleeps and must be woken (the
    /// word is cleared, so one bell per sleep).
    pub fn producer_must_wake(&self) -> bool {
        fence(Ordering::SeqCst);
        self.ctrl.reader_sleeping.0.load(Ordering::Relaxed) != 0
            && self.ctrl.reader_sleeping.0.swap(0, Ordering::SeqCst) != 0
    }

    /// Producer, before sleeping with bytes it could not write: announces it and says
    /// whether space came meanwhile (then it must not sleep). Pairs with
    /// `consumer_must_wake`.
    pub fn writer_waits(&self) -> Result<bool, Corrupt> {
        self.ctrl.writer_waiting.0.store(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        Ok(self.writable()? > 0)
    }

    /// Producer, awake again.
    pub fn writer_awake(&self) {
        self.ctrl.writer_waiting.0.store(0, Ordering::Relaxed);
    }

    /// Consumer, after freeing space: whether the producer sleeps waiting for it (the
    /// word is cleared).
    pub fn consumer_must_wake(&self) -> bool {
        fence(Ordering::SeqCst);
        self.ctrl.writer_waiting.0.load(Ordering::Relaxed) != 0
            && self.ctrl.writer_waiting.0.swap(0, Ordering::SeqCst) != 0
    }

    /// Copies `src` into the data at stream position `at` (wrapping).
    fn copy_in(&self, at: u64, src: &[u8]) {
        let start = (at % self.cap as u64) as usize;
        let first = src.len().min(self.cap - start);
        // SAFETY: `start + first <= cap` and `src.len() - first <= cap` (callers never
        // pass more than the free space, at most `cap`), so both copies stay inside the
        // `cap` bytes `from_raw` was given; `src` is our own memory, not the ring's.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.data.add(start), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), self.data, src.len() - first);
        }
    }

    /// Copies the data at stream position `at` (wrapping) into `dst`.
    fn copy_out(&self, at: u64, dst: &mut [u8]) {
        let start = (at % self.cap as u64) as usize;
        let first = dst.len().min(self.cap - start);
        // SAFETY: as in `copy_in`: both ranges lie inside the ring's `cap` bytes, and
        // `dst` is our own memory. The producer does not write these bytes until `head`
        // passes them (it reads `head` with acquire ordering before writing).
        unsafe {
            std::ptr::copy_nonoverlapping(self.data.add(start), dst.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(
                self.data,
                dst.as_mut_ptr().add(first),
                dst.len() - first,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring over plain memory (the segment tests map real shared memory).
    struct Owned {
        ctrl: Box<RingCtrl>,
        data: Vec<u8>,
    }

    impl Owned {
        fn new(cap: usize) -> Owned {
            Owned {
                ctrl: Box::new(RingCtrl {
                    tail: Padded(AtomicU64::new(0)),
                    head: Padded(AtomicU64::new(0)),
                    reader_sleeping: Padded(AtomicU32::new(0)),
                    writer_waiting: Padded(AtomicU32::new(0)),
                    skip: Padded(AtomicU64::new(0)),
                }),
                data: vec![0; cap],
            }
        }

        fn ring(&mut self) -> Ring<'_> {
            let cap = self.data.len();
            // SAFETY: `data` holds `cap` bytes and lives as long as the borrow.
            unsafe { Ring::from_raw(&self.ctrl, self.data.as_mut_ptr(), cap) }
        }
    }

    fn put(r: &Ring<'_>, b: &[u8]) -> usize {
        r.write(&[IoSlice::new(b)]).expect("sane indices")
    }

    fn take(r: &Ring<'_>, n: usize) -> Vec<u8> {
        let mut out = vec![0; n];
        let got = r.read(&mut out, u64::MAX).expect("sane indices");
        out.truncate(got);
        out
    }

    #[test]
    fn bytes_come_out_in_order_across_the_wrap() {
        let mut o = Owned::new(16);
        let r = o.ring();
        let mut next = 0u8;
        let mut expect = 0u8;
        // Chunks of 7 against a capacity of 16: every position of the wrap is crossed.
        for _ in 0..50 {
            let chunk: Vec<u8> = (0..7)
                .map(|_| {
                    next = next.wrapping_add(1);
                    next
                })
                .collect();
            assert_eq!(put(&r, &chunk), 7);
            for b in take(&r, 7) {
                expect = expect.wrapping_add(1);
                assert_eq!(b, expect);
            }
        }
        assert_eq!(r.readable(), Ok(0));
    }

    /// A write larger than a publishing piece, across the wrap: every piece lands in
    /// order and the call reports all of them.
    #[test]
    fn a_large_write_is_published_whole_in_pieces() {
        let cap = 4 * PUBLISH_BYTES;
        let mut o = Owned::new(cap);
        let r = o.ring();
        assert_eq!(put(&r, &vec![0; cap / 2]), cap / 2);
        assert_eq!(take(&r, cap / 2).len(), cap / 2);
        let big: Vec<u8> = (0..3 * PUBLISH_BYTES + 5)
            .map(|i| (i % 253) as u8)
            .collect();
        assert_eq!(put(&r, &big), big.len());
        assert_eq!(r.readable(), Ok(big.len()));
        assert_eq!(take(&r, cap), big);
    }

    #[test]
    fn a_full_ring_takes_nothing_until_the_reader_frees_space() {
        let mut o = Owned::new(8);
        let r = o.ring();
        let first: Vec<u8> = (1..=5).collect();
        let second: Vec<u8> = (6..=10).collect();
        // Two slices in one call: what fits of the second goes in after the first.
        let n = r
            .write(&[IoSlice::new(&first), IoSlice::new(&second)])
            .expect("sane indices");
        assert_eq!(n, 8);
        assert_eq!(r.writable(), Ok(0));
        assert_eq!(put(&r, &[11]), 0, "a full ring takes nothing");
        assert_eq!(take(&r, 3), vec![1, 2, 3]);
        assert_eq!(put(&r, &[9, 10, 11, 12]), 3, "only the freed space");
        assert_eq!(take(&r, 100), vec![4, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(take(&r, 100), Vec::<u8>::new());
    }

    /// A producer that trusts its last view of `head` never overwrites bytes the
    /// consumer has not copied out, and reads `head` again once that view leaves too
    /// little room.
    #[test]
    fn a_stale_view_of_the_head_is_safe_and_refreshed_when_short() {
        let mut o = Owned::new(16);
        let r = o.ring();
        let mut seen = 0;
        let put_seen = |seen: &mut u64, b: &[u8]| r.write_seen(&[IoSlice::new(b)], seen);
        assert_eq!(put_seen(&mut seen, &[1; 10]), Ok(10));
        assert_eq!(take(&r, 4), vec![1; 4]);
        assert_eq!(put_seen(&mut seen, &[2; 6]), Ok(6), "fits the stale view");
        assert_eq!(seen, 0, "head not read");
        assert_eq!(
            put_seen(&mut seen, &[3; 8]),
            Ok(4),
            "the freed 4 bytes only"
        );
        assert_eq!(seen, 4, "head read again");
        assert_eq!(put_seen(&mut seen, &[4]), Ok(0), "full");
        let mut expect = vec![1; 6];
        expect.extend([2; 6]);
        expect.extend([3; 4]);
        assert_eq!(take(&r, 16), expect);
    }

    /// Bytes written into the data but not published (a producer that died mid-copy, or
    /// is still copying) are never read: only `tail` makes bytes visible.
    #[test]
    fn unpublished_bytes_are_never_read() {
        let mut o = Owned::new(16);
        o.data[..4].copy_from_slice(&[1, 2, 3, 4]);
        let r = o.ring();
        assert_eq!(r.readable(), Ok(0));
        assert_eq!(take(&r, 16), Vec::<u8>::new());
        assert_eq!(put(&r, &[9]), 1);
        assert_eq!(
            take(&r, 16),
            vec![9],
            "the unpublished bytes were overwritten"
        );
    }

    #[test]
    fn indices_out_of_order_are_refused_not_followed() {
        let mut o = Owned::new(16);
        o.ctrl.tail.0.store(100, Ordering::Relaxed);
        o.ctrl.head.0.store(50, Ordering::Relaxed);
        let r = o.ring();
        let bad = Corrupt {
            head: 50,
            tail: 100,
        };
        assert_eq!(r.readable(), Err(bad));
        assert_eq!(r.read(&mut [0; 64], u64::MAX), Err(bad));
        assert_eq!(r.write(&[IoSlice::new(&[1])]), Err(bad));
        o.ctrl.head.0.store(101, Ordering::Relaxed);
        let r = o.ring();
        assert!(r.writable().is_err(), "head beyond tail");
    }

    /// The sleep handshake: a sleeper that announced itself is woken by the next
    /// publish once, and one that finds bytes already there does not sleep.
    #[test]
    fn a_sleeping_reader_is_woken_once_per_sleep() {
        let mut o = Owned::new(16);
        let r = o.ring();
        assert!(!r.producer_must_wake(), "nobody sleeps");
        assert_eq!(r.reader_sleeps(), Ok(false));
        put(&r, &[1]);
        assert!(r.producer_must_wake());
        assert!(!r.producer_must_wake(), "one bell per sleep");
        assert_eq!(r.reader_sleeps(), Ok(true), "bytes are there: do not sleep");
        r.reader_awake();
        assert!(!r.producer_must_wake());
        put(&r, &[2; 15]);
        assert_eq!(r.writer_waits(), Ok(false), "the ring is full");
        take(&r, 4);
        assert!(r.consumer_must_wake());
        assert!(!r.consumer_must_wake());
        r.writer_awake();
    }

    /// A producer and a consumer thread: every byte arrives once, in order, whatever the
    /// interleaving (the release/acquire pairs at work), in a small ring and in one
    /// large enough for the producer to skip laps when it finds the ring empty.
    #[test]
    fn a_producer_and_a_consumer_thread_agree_on_every_byte() {
        agree(64, 200_000, 37, 29);
        agree(4 * REWIND_AFTER as usize, 3_000_000, 3001, 1999);
    }

    /// `total` bytes through a ring of `cap`, written in chunks of 1 to `chunk` bytes and
    /// read `read` at a time.
    fn agree(cap: usize, total: usize, chunk: usize, read: usize) {
        let mut o = Owned::new(cap);
        let (ctrl, data) = (&*o.ctrl, o.data.as_mut_ptr());
        // SAFETY: `data` holds `cap` bytes for the scope; one ring produces, one consumes.
        let (w, r) = unsafe {
            (
                Ring::from_raw(ctrl, data, cap),
                Ring::from_raw(ctrl, data, cap),
            )
        };
        std::thread::scope(|s| {
            s.spawn(move || {
                let r = w;
                let mut seen = 0;
                let mut sent = 0usize;
                let mut len = 1;
                while sent < total {
                    let piece: Vec<u8> = (sent..(sent + len).min(total))
                        .map(|i| (i % 251) as u8)
                        .collect();
                    let n = r
                        .write_seen(&[IoSlice::new(&piece)], &mut seen)
                        .expect("sane indices");
                    sent += n;
                    len = len % chunk + 1;
                    if n == 0 {
                        std::thread::yield_now();
                    }
                }
            });
            let mut got = 0usize;
            let mut buf = vec![0u8; read];
            while got < total {
                let n = r.read(&mut buf, u64::MAX).expect("sane indices");
                for (i, b) in buf[..n].iter().enumerate() {
                    assert_eq!(*b, ((got + i) % 251) as u8, "byte {}", got + i);
                }
                got += n;
                if n == 0 {
                    std::thread::yield_now();
                }
            }
        });
    }

    /// Far enough into a lap, a producer that finds the ring empty goes on at the start
    /// of the data, and the consumer follows; one that finds bytes unread goes on where
    /// it was.
    #[test]
    fn an_empty_ring_starts_the_next_bytes_at_the_start_of_the_data() {
        let cap = 4 * REWIND_AFTER as usize;
        let first = REWIND_AFTER as usize + 10;
        let mut o = Owned::new(cap);
        {
            let r = o.ring();
            assert_eq!(put(&r, &vec![7; first]), first);
            assert_eq!(take(&r, first - 1).len(), first - 1);
            assert_eq!(put(&r, b"kept"), 4, "one byte unread: no skip");
            assert_eq!(take(&r, 5), b"\x07kept".to_vec());
            assert_eq!(put(&r, b"rewound"), 7);
            assert_eq!(
                r.readable(),
                Ok(7),
                "the skipped rest of the lap is not data"
            );
            assert_eq!(take(&r, 100), b"rewound".to_vec());
            assert_eq!(r.readable(), Ok(0));
        }
        assert_eq!(&o.data[first..first + 4], b"kept");
        assert_eq!(&o.data[..7], b"rewound");
    }
}
