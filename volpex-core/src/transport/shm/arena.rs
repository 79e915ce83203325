//! One direction of a shared-memory connection's slot arena (docs/SHM.md, "Messages read
//! in place"): fixed slots, each a header and a small message, that the producer
//! publishes one by one and the consumer reads in the order they were published,
//! beside the byte ring (`ring`).
//!
//! Owns the publication protocol: a slot's first word holds its epoch, odd while the
//! slot is written and even once it is whole, written last with release ordering; the
//! consumer checks it before and again after its copy (acquire), so a slot rewritten
//! under it or left half-written by a producer that died is detected and never read.
//! The same word carries the message's length and flags, and the message follows the
//! six header words at once: a message of up to 8 bytes lies in the slot's first cache
//! line with its epoch and header, so it crosses from the producer's core to the
//! consumer's as one line.
//! Must never trust what the other process wrote: a length out of bounds or an epoch
//! that moved past the reader is an error, never a copy.

use std::sync::atomic::{fence, AtomicU64, Ordering};

use super::ring::Padded;

/// Slots in one direction's arena.
pub const SLOTS: usize = 32;
/// Bytes of one slot (17 cache lines): the header and the largest message it holds.
pub const SLOT_BYTES: usize = 1088;
const SLOT_WORDS: usize = SLOT_BYTES / 8;
/// Words of a slot's header: the epoch word (epoch, length, flags), then the rest of
/// `Meta` in six words; the message follows.
const HEADER_WORDS: usize = 7;
/// The header word holding `Meta::ring_at`.
const RING_AT_WORD: usize = 6;
/// Bits of the epoch word holding the epoch (the low ones); the length and the flags
/// are above. Epochs compare modulo 2^48: the producer is never more than `SLOTS`
/// slots ahead of the consumer, so the half of the circle ahead of the expected epoch
/// is "rewritten past the reader" and the other half "not yet".
const EPOCH_BITS: u32 = 48;
const EPOCH_MASK: u64 = (1 << EPOCH_BITS) - 1;
/// Where the length (11 bits: at most `SLOT_PAYLOAD_MAX`, checked) and the flags (5
/// bits) sit in the epoch word.
const LEN_SHIFT: u32 = 48;
const LEN_MASK: u64 = (1 << 11) - 1;
const FLAGS_SHIFT: u32 = 59;
/// The flags a slot carries (`Meta::flags` above them are not carried).
pub const SLOT_FLAGS_MAX: u32 = (1 << 5) - 1;
/// The largest message a slot holds (larger ones go through the ring as frames).
pub const SLOT_PAYLOAD_MAX: usize = 1024;
const _: () = assert!(HEADER_WORDS * 8 + SLOT_PAYLOAD_MAX <= SLOT_BYTES);
const _: () = assert!(SLOT_PAYLOAD_MAX as u64 <= LEN_MASK && LEN_SHIFT + 11 == FLAGS_SHIFT);

/// Bytes of one direction's arena in the segment: its control line and its slots.
pub const ARENA_BYTES: usize = size_of::<ArenaCtrl>() + SLOTS * SLOT_BYTES;

/// The arena's control words (zero bytes: nothing published, nothing read).
#[repr(C)]
pub struct ArenaCtrl {
    /// Slots the consumer has copied out in all (written by the consumer only, with
    /// release ordering after the copy): the producer reuses a slot only below it.
    head: Padded<AtomicU64>,
}

/// What a slot says of its message besides the bytes: a DATA frame's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meta {
    /// Communicator context id.
    pub comm: u32,
    /// Tag.
    pub tag: i32,
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// The key's sequence number.
    pub seq: u64,
    /// The pull it answers.
    pub req: u64,
    /// Order number on its (comm, src, dst) stream.
    pub order: u64,
    /// The DATA frame's flags the receiver needs (`late`, `sync`; at most
    /// `SLOT_FLAGS_MAX`).
    pub flags: u32,
    /// How many bytes the producer had written into the connection's byte ring when it
    /// published the slot: the consumer takes the ring's frames up to there first, so
    /// the connection's frames keep the order they were sent in.
    pub ring_at: u64,
}

/// A slot that broke the protocol: rewritten while it was read (or past the reader),
/// or holding a length no slot can.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotError {
    /// The epoch moved during the copy, or is ahead of the reader's position.
    Reused {
        /// The epoch the reader expected.
        expected: u64,
        /// The one it found.
        found: u64,
    },
    /// The header's length exceeds a slot.
    TooLong(u64),
}

impl std::fmt::Display for SlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SlotError::Reused { expected, found } => write!(
                f,
                "shared-memory slot rewritten under its reader (epoch {found}, expected {expected})"
            ),
            SlotError::TooLong(n) => write!(f, "shared-memory slot of {n} bytes"),
        }
    }
}

/// The first `len` bytes of a slot's payload `words`, copied into a `Vec`.
fn copy_out(words: &[AtomicU64], len: usize) -> Vec<u8> {
    let mut payload = Vec::with_capacity(len.next_multiple_of(8));
    for w in words {
        payload.extend_from_slice(&w.load(Ordering::Relaxed).to_le_bytes());
    }
    payload.truncate(len);
    payload
}

/// Where `Arena::read_into` put a slot's message.
#[derive(Debug, PartialEq, Eq)]
pub enum Taken {
    /// Into the buffer offered, this many bytes.
    Landed(usize),
    /// Into a `Vec` of its own.
    Copied(Vec<u8>),
}

/// Tests only: something to do to a slot between the copy out of it and the check of
/// its epoch (a producer rewriting it under the reader), once.
#[cfg(test)]
pub mod during_copy {
    use std::cell::RefCell;
    use std::sync::atomic::AtomicU64;

    type Hook = Box<dyn FnOnce(&[AtomicU64])>;

    thread_local! {
        static HOOK: RefCell<Option<Hook>> = RefCell::new(None);
    }

    /// Runs `f` on the words of the next slot this thread copies, after the copy.
    pub fn set(f: impl FnOnce(&[AtomicU64]) + 'static) {
        HOOK.with(|h| *h.borrow_mut() = Some(Box::new(f)));
    }

    pub(super) fn run(slot: &[AtomicU64]) {
        if let Some(f) = HOOK.with(|h| h.borrow_mut().take()) {
            f(slot);
        }
    }
}

/// The epoch of the `p`-th slot published, once whole (odd, one less, while written),
/// modulo 2^48.
fn published(p: u64) -> u64 {
    p.wrapping_mul(2).wrapping_add(2) & EPOCH_MASK
}

/// The epoch an epoch word holds.
fn epoch_of(word: u64) -> u64 {
    word & EPOCH_MASK
}

/// One direction's arena as one side sees it: its control words and its slots' words.
pub struct Arena<'a> {
    ctrl: &'a ArenaCtrl,
    words: &'a [AtomicU64],
}

impl<'a> Arena<'a> {
    /// The arena of `ctrl` and `words` (`SLOTS * SLOT_BYTES / 8` of them). Of all the
    /// arenas over this memory (in any process) one publishes and one reads.
    pub fn new(ctrl: &'a ArenaCtrl, words: &'a [AtomicU64]) -> Arena<'a> {
        assert_eq!(words.len(), SLOTS * SLOT_WORDS, "an arena's slots");
        Arena { ctrl, words }
    }

    fn slot(&self, p: u64) -> &'a [AtomicU64] {
        let i = (p % SLOTS as u64) as usize * SLOT_WORDS;
        &self.words[i..i + SLOT_WORDS]
    }

    /// Producer: publishes the `p`-th slot (the producer counts them) with `meta` and
    /// `payload`, when the consumer copied out the slot's previous message (it had when
    /// we last looked, `head_seen`, or has now). False when the arena is full or the
    /// payload too long: send it as a frame.
    pub fn publish(&self, p: u64, head_seen: &mut u64, meta: &Meta, payload: &[u8]) -> bool {
        if payload.len() > SLOT_PAYLOAD_MAX {
            return false;
        }
        if p.saturating_sub(*head_seen) >= SLOTS as u64 {
            // Acquire: the consumer's copy out of the slots below `head` is done.
            *head_seen = self.ctrl.head.0.load(Ordering::Acquire);
            if p.saturating_sub(*head_seen) >= SLOTS as u64 {
                return false;
            }
        }
        self.write(p, meta, payload);
        true
    }

    /// Writes slot `p` whatever the consumer's position (`publish` checks it).
    fn write(&self, p: u64, meta: &Meta, payload: &[u8]) {
        debug_assert!(meta.flags <= SLOT_FLAGS_MAX && payload.len() <= SLOT_PAYLOAD_MAX);
        let s = self.slot(p);
        let writing = published(p).wrapping_sub(1) & EPOCH_MASK;
        s[0].store(writing, Ordering::Relaxed);
        // The odd epoch is visible before any word of the new contents.
        fence(Ordering::Release);
        let header = [
            u64::from(meta.comm) | (u64::from(meta.tag as u32) << 32),
            u64::from(meta.src) | (u64::from(meta.dst) << 32),
            meta.seq,
            meta.req,
            meta.order,
            meta.ring_at,
        ];
        for (w, v) in s[1..HEADER_WORDS].iter().zip(header) {
            w.store(v, Ordering::Relaxed);
        }
        let mut chunks = payload.chunks_exact(8);
        let mut w = HEADER_WORDS;
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            s[w].store(u64::from_le_bytes(b), Ordering::Relaxed);
            w += 1;
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 8];
            b[..rest.len()].copy_from_slice(rest);
            s[w].store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
        let whole = published(p)
            | ((payload.len() as u64 & LEN_MASK) << LEN_SHIFT)
            | (u64::from(meta.flags & SLOT_FLAGS_MAX) << FLAGS_SHIFT);
        // Release: every word above is written before the even epoch is seen.
        s[0].store(whole, Ordering::Release);
    }

    /// Consumer: whether the `c`-th slot is published (`Err`: it was rewritten past us).
    pub fn ready(&self, c: u64) -> Result<bool, SlotError> {
        let word = self.slot(c)[0].load(Ordering::Acquire);
        Self::word_ready(c, word)
    }

    /// Whether epoch word `word` says the `c`-th slot is published.
    fn word_ready(c: u64, word: u64) -> Result<bool, SlotError> {
        let (found, expected) = (epoch_of(word), published(c));
        if found == expected {
            return Ok(true);
        }
        // Ahead of the expected epoch (modulo 2^48): rewritten past the reader.
        if found.wrapping_sub(expected) & EPOCH_MASK < 1 << (EPOCH_BITS - 1) {
            return Err(SlotError::Reused { expected, found });
        }
        Ok(false)
    }

    /// Consumer: where in the byte ring the `c`-th slot was published (`Meta::ring_at`),
    /// if it is published. A slot rewritten meanwhile is caught when it is read.
    pub fn ring_at(&self, c: u64) -> Result<Option<u64>, SlotError> {
        if !self.ready(c)? {
            return Ok(None);
        }
        Ok(Some(self.slot(c)[RING_AT_WORD].load(Ordering::Relaxed)))
    }

    /// Consumer: the `c`-th slot's message if it is published (`Ok(None)`: not yet, or
    /// half-written), its copy proven whole, and its space given back (the tests' view of
    /// `read_into`).
    #[cfg(test)]
    pub fn read(&self, c: u64) -> Result<Option<(Meta, Vec<u8>)>, SlotError> {
        let taken = self.read_into(c, |_, _| None)?;
        Ok(taken.map(|(meta, t)| match t {
            Taken::Copied(payload) => (meta, payload),
            Taken::Landed(_) => unreachable!("no buffer was offered"),
        }))
    }

    /// Consumer: `read`, except that a message `into` offers a buffer for (given its
    /// header and length; the buffer at least that long) is copied straight there
    /// instead of into a `Vec`. An `Err` (the slot moved during the copy) means the
    /// buffer holds nothing: whatever was written there must not count as a message.
    pub fn read_into<'b>(
        &self,
        c: u64,
        into: impl FnOnce(&Meta, usize) -> Option<&'b mut [u8]>,
    ) -> Result<Option<(Meta, Taken)>, SlotError> {
        let Some((epoch, meta, len)) = self.header(c)? else {
            return Ok(None);
        };
        let s = self.slot(c);
        let words = &s[HEADER_WORDS..HEADER_WORDS + len.div_ceil(8)];
        let taken = match into(&meta, len) {
            Some(buf) if buf.len() >= len => {
                let mut chunks = buf[..len].chunks_mut(8);
                for (w, b) in words.iter().zip(&mut chunks) {
                    let v = w.load(Ordering::Relaxed).to_le_bytes();
                    b.copy_from_slice(&v[..b.len()]);
                }
                Taken::Landed(len)
            }
            _ => Taken::Copied(copy_out(words, len)),
        };
        #[cfg(test)]
        during_copy::run(s);
        self.check(c, epoch)?;
        self.ctrl.head.0.store(c + 1, Ordering::Release);
        Ok(Some((meta, taken)))
    }

    /// Consumer: the `c`-th slot's epoch word, header and length if its epoch says
    /// published (the first half of `read_into`; `check` proves what was read).
    fn header(&self, c: u64) -> Result<Option<(u64, Meta, usize)>, SlotError> {
        let s = self.slot(c);
        let epoch = s[0].load(Ordering::Acquire);
        if !Self::word_ready(c, epoch)? {
            return Ok(None);
        }
        let h: [u64; HEADER_WORDS - 1] = std::array::from_fn(|i| s[1 + i].load(Ordering::Relaxed));
        let len = (epoch >> LEN_SHIFT) & LEN_MASK;
        if len > SLOT_PAYLOAD_MAX as u64 {
            // A length read from a slot being rewritten may be anything: check first.
            self.check(c, epoch)?;
            return Err(SlotError::TooLong(len));
        }
        let meta = Meta {
            comm: h[0] as u32,
            tag: (h[0] >> 32) as u32 as i32,
            src: h[1] as u32,
            dst: (h[1] >> 32) as u32,
            seq: h[2],
            req: h[3],
            order: h[4],
            flags: (epoch >> FLAGS_SHIFT) as u32,
            ring_at: h[RING_AT_WORD - 1],
        };
        Ok(Some((epoch, meta, len as usize)))
    }

    /// Consumer: copies the `c`-th slot out if its epoch says published (`read` without
    /// its check, for the tests that move the slot in between).
    #[cfg(test)]
    fn copy(&self, c: u64) -> Result<Option<(u64, Meta, Vec<u8>)>, SlotError> {
        let Some((epoch, meta, len)) = self.header(c)? else {
            return Ok(None);
        };
        let words = &self.slot(c)[HEADER_WORDS..HEADER_WORDS + len.div_ceil(8)];
        Ok(Some((epoch, meta, copy_out(words, len))))
    }

    /// Consumer: whether the `c`-th slot still holds what was copied at `epoch`.
    fn check(&self, c: u64, epoch: u64) -> Result<(), SlotError> {
        // Acquire: the copy's loads are done before the epoch is read again, so a
        // rewrite that began during the copy shows here.
        fence(Ordering::Acquire);
        let found = self.slot(c)[0].load(Ordering::Relaxed);
        // The whole word: a slot rewritten with the same epoch would be a peer
        // breaking the protocol, and its length and flags must not have moved either.
        if found != epoch {
            return Err(SlotError::Reused {
                expected: epoch_of(epoch),
                found: epoch_of(found),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Owned {
        ctrl: Box<ArenaCtrl>,
        words: Vec<AtomicU64>,
    }

    impl Owned {
        fn new() -> Owned {
            Owned {
                ctrl: Box::new(ArenaCtrl {
                    head: Padded(AtomicU64::new(0)),
                }),
                words: (0..SLOTS * SLOT_WORDS).map(|_| AtomicU64::new(0)).collect(),
            }
        }

        fn arena(&self) -> Arena<'_> {
            Arena::new(&self.ctrl, &self.words)
        }
    }

    fn meta(order: u64) -> Meta {
        Meta {
            comm: 4,
            tag: -7,
            src: 1,
            dst: 2,
            seq: order + 100,
            req: 9,
            order,
            flags: 3,
            ring_at: order * 10,
        }
    }

    #[test]
    fn slots_come_out_in_order_whole_and_their_space_comes_back() {
        let o = Owned::new();
        let a = o.arena();
        let mut seen = 0;
        // Three laps of the arena, each message read before the next is published.
        let mut head_seen = 0;
        for p in 0..3 * SLOTS as u64 {
            let len = (p as usize * 37) % (SLOT_PAYLOAD_MAX + 1);
            let bytes: Vec<u8> = (0..len).map(|i| (i as u64 + p) as u8).collect();
            assert!(!a.ready(p).expect("sane"), "not published yet");
            assert!(a.publish(p, &mut head_seen, &meta(p), &bytes));
            let (m, got) = a.read(p).expect("whole").expect("published");
            assert_eq!((m, got), (meta(p), bytes));
            seen += 1;
        }
        assert_eq!(seen, 3 * SLOTS);
        assert!(!a.publish(
            3 * SLOTS as u64,
            &mut head_seen,
            &meta(0),
            &[0; SLOT_PAYLOAD_MAX + 1]
        ));
    }

    #[test]
    fn a_full_arena_refuses_until_the_reader_copied_out() {
        let o = Owned::new();
        let a = o.arena();
        let mut head_seen = 0;
        for p in 0..SLOTS as u64 {
            assert!(a.publish(p, &mut head_seen, &meta(p), b"x"));
        }
        let full = SLOTS as u64;
        assert!(!a.publish(full, &mut head_seen, &meta(full), b"x"), "full");
        assert!(!a.ready(full).expect("sane"));
        assert!(a.read(0).expect("whole").is_some());
        assert!(a.publish(full, &mut head_seen, &meta(full), b"x"));
        // Slot 0 now holds message SLOTS: a reader still at 0 would find it moved on.
        assert_eq!(
            a.read(0).err(),
            Some(SlotError::Reused {
                expected: published(0),
                found: published(full)
            })
        );
    }

    /// The producer began a slot and never finished (it died mid-write): the slot is
    /// never read.
    #[test]
    fn a_half_written_slot_is_not_read() {
        let o = Owned::new();
        let a = o.arena();
        let s = a.slot(0);
        s[0].store((published(0) - 1) | (8 << LEN_SHIFT), Ordering::Release);
        assert_eq!(a.ready(0), Ok(false));
        assert_eq!(a.read(0), Ok(None));
        assert_eq!(
            o.ctrl.head.0.load(Ordering::Relaxed),
            0,
            "nothing given back"
        );
    }

    /// A slot rewritten while the reader copies it (the producer reused it too early,
    /// or began a new message in it): the copy is refused, never delivered.
    #[test]
    fn a_slot_reused_during_the_copy_is_detected() {
        let o = Owned::new();
        let a = o.arena();
        let mut head_seen = 0;
        assert!(a.publish(0, &mut head_seen, &meta(0), b"first"));
        let (epoch, m, got) = a.copy(0).expect("sane").expect("published");
        assert_eq!((m, got.as_slice()), (meta(0), &b"first"[..]));
        // Reused under the reader: the message one lap later lands in slot 0.
        a.write(SLOTS as u64, &meta(1), b"other");
        assert!(a.check(0, epoch).is_err());
        // Begun but not finished: odd epoch.
        let s = a.slot(0);
        s[0].store(published(SLOTS as u64 * 2) - 1, Ordering::Release);
        assert!(a.check(0, epoch).is_err());
        assert!(a.read(0).is_err(), "an epoch past the reader is an error");
        assert_eq!(
            o.ctrl.head.0.load(Ordering::Relaxed),
            0,
            "nothing given back"
        );
    }

    /// A message read into a buffer offered for it lands there whole (only its own
    /// bytes written), and one the offer declines is copied out as before.
    #[test]
    fn a_slot_lands_in_the_buffer_offered_for_it() {
        let o = Owned::new();
        let a = o.arena();
        let mut head_seen = 0;
        assert!(a.publish(0, &mut head_seen, &meta(0), b"eleven byte"));
        assert!(a.publish(1, &mut head_seen, &meta(1), b"declined"));
        let mut buf = [0xaau8; 16];
        let got = a
            .read_into(0, |m, len| {
                assert_eq!((*m, len), (meta(0), 11));
                Some(&mut buf[..])
            })
            .expect("whole");
        assert_eq!(got, Some((meta(0), Taken::Landed(11))));
        assert_eq!(&buf[..11], b"eleven byte");
        assert_eq!(&buf[11..], &[0xaa; 5], "nothing past the message");
        let got = a.read_into(1, |_, _| None).expect("whole");
        assert_eq!(got, Some((meta(1), Taken::Copied(b"declined".to_vec()))));
        // A buffer too short is not written: the message is copied out instead.
        assert!(a.publish(2, &mut head_seen, &meta(2), b"too long"));
        let mut short = [0u8; 4];
        let got = a.read_into(2, |_, _| Some(&mut short[..])).expect("whole");
        assert_eq!(got, Some((meta(2), Taken::Copied(b"too long".to_vec()))));
        assert_eq!(short, [0; 4]);
    }

    /// A slot rewritten while it is copied into the buffer offered for it: an error (the
    /// buffer's bytes are no message), and its space is not given back.
    #[test]
    fn a_slot_moved_during_its_copy_into_a_buffer_is_refused() {
        let o = Owned::new();
        let a = o.arena();
        let mut head_seen = 0;
        assert!(a.publish(0, &mut head_seen, &meta(0), b"first"));
        during_copy::set(|s| {
            s[0].fetch_add(2, Ordering::Relaxed);
        });
        let mut buf = [0u8; 8];
        let got = a.read_into(0, |_, _| Some(&mut buf[..]));
        assert!(
            matches!(got, Err(SlotError::Reused { .. })),
            "moved: {got:?}"
        );
        assert_eq!(
            o.ctrl.head.0.load(Ordering::Relaxed),
            0,
            "nothing given back"
        );
    }

    /// A header whose length no slot holds is refused (after checking the epoch).
    #[test]
    fn a_length_out_of_bounds_is_refused() {
        let o = Owned::new();
        let a = o.arena();
        let mut head_seen = 0;
        assert!(a.publish(0, &mut head_seen, &meta(0), b"x"));
        let s = a.slot(0);
        let word = s[0].load(Ordering::Relaxed);
        s[0].store(epoch_of(word) | (2000 << LEN_SHIFT), Ordering::Relaxed);
        assert_eq!(a.read(0).err(), Some(SlotError::TooLong(2000)));
    }

    /// A message of up to 8 bytes lies in its slot's first cache line, with the epoch and
    /// the header: it crosses between the cores as one line.
    #[test]
    fn a_message_of_eight_bytes_shares_the_epochs_cache_line() {
        const { assert!((HEADER_WORDS + 1) * 8 <= 64 && SLOT_BYTES.is_multiple_of(64)) };
        let o = Owned::new();
        let a = o.arena();
        let mut head_seen = 0;
        assert!(a.publish(0, &mut head_seen, &meta(0), b"8 bytes!"));
        assert_eq!(
            a.slot(0)[HEADER_WORDS]
                .load(Ordering::Relaxed)
                .to_le_bytes(),
            *b"8 bytes!"
        );
        let (m, got) = a.read(0).expect("whole").expect("published");
        assert_eq!((m, got.as_slice()), (meta(0), &b"8 bytes!"[..]));
    }

    /// Epochs compare modulo 2^48: a reader past the wrap still tells a slot not yet
    /// published from one rewritten past it.
    #[test]
    fn epochs_wrap_around() {
        let o = Owned::new();
        let a = o.arena();
        let start = (1u64 << (EPOCH_BITS - 1)) - 3;
        // The lap before, as a reader at `start` finds it.
        for p in start - SLOTS as u64..start {
            a.write(p, &meta(p), b"w");
        }
        let mut head_seen = start;
        for p in start..start + 3 * SLOTS as u64 {
            assert_eq!(a.ready(p), Ok(false), "slot {p} not yet");
            assert!(a.publish(p, &mut head_seen, &meta(p), b"x"));
            assert_eq!(a.ready(p), Ok(true));
            assert!(a.read(p).expect("whole").is_some());
        }
        let p = start + 3 * SLOTS as u64;
        a.write(p + SLOTS as u64, &meta(0), b"y");
        assert!(a.ready(p).is_err(), "a lap ahead of the reader");
    }

    /// A producer and a consumer thread over one arena: every message arrives once, in
    /// order, whole.
    #[test]
    fn a_producer_and_a_consumer_thread() {
        let o = Owned::new();
        const N: u64 = 20_000;
        std::thread::scope(|s| {
            s.spawn(|| {
                let a = o.arena();
                let mut head_seen = 0;
                let mut p = 0;
                while p < N {
                    let bytes = [(p % 251) as u8; 24];
                    if a.publish(p, &mut head_seen, &meta(p), &bytes[..(p % 25) as usize]) {
                        p += 1;
                    } else {
                        std::thread::yield_now();
                    }
                }
            });
            let a = o.arena();
            let mut c = 0;
            while c < N {
                match a.read(c).expect("never torn") {
                    Some((m, got)) => {
                        assert_eq!(m, meta(c));
                        assert_eq!(got, vec![(c % 251) as u8; (c % 25) as usize]);
                        c += 1;
                    }
                    None => std::thread::yield_now(),
                }
            }
        });
    }
}
