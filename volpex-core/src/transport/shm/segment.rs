//! The memory two processes share for one connection: an anonymous memfd, sealed
//! against resizing, mapped by both, holding a header, two rings (`ring`) and two slot
//! arenas (`arena`), one of each per direction.
//!
//! Owns the layout, the mapping and its checks (size, seals, header) before a peer's
//! segment is used. Must never hand out memory outside the mapping nor map a segment
//! whose size the other process could still change.

use std::fs::File;
use std::io;
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::{fcntl, FcntlArg, SealFlag};
use nix::sys::memfd::{memfd_create, MFdFlags};
use nix::sys::mman::{mmap, munmap, MapFlags, ProtFlags};

use super::arena::{Arena, ArenaCtrl, ARENA_BYTES};
use super::ring::{Padded, Ring, RingCtrl};

/// First word of a segment: "VPXSHM" and the layout's version.
const MAGIC: u64 = u64::from_le_bytes(*b"VPXSHM03");

/// The segment's first cache line.
#[repr(C)]
struct Head {
    /// `MAGIC`, written last by the creator.
    magic: AtomicU64,
    /// Each ring's capacity in bytes.
    ring_bytes: AtomicU64,
}

/// Where things are: the header, the two rings' control words, their data, the two
/// arenas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    ctrl: [usize; 2],
    data: [usize; 2],
    arena: [usize; 2],
    total: usize,
}

impl Layout {
    fn new(ring_bytes: usize) -> Layout {
        let head = size_of::<Padded<Head>>();
        let ctrl = size_of::<RingCtrl>();
        // Data starts on a page, so a ring never shares a page with control words.
        let data0 = (head + 2 * ctrl).next_multiple_of(4096);
        // Each arena starts on a page of its own, after the rings.
        let arena_bytes = ARENA_BYTES.next_multiple_of(4096);
        let arena0 = data0 + 2 * ring_bytes;
        Layout {
            ctrl: [head, head + ctrl],
            data: [data0, data0 + ring_bytes],
            arena: [arena0, arena0 + arena_bytes],
            total: arena0 + 2 * arena_bytes,
        }
    }
}

/// One mapped segment. Ring 0 carries the dialer's bytes, ring 1 the acceptor's.
pub struct Segment {
    ptr: NonNull<u8>,
    ring_bytes: usize,
    layout: Layout,
}

// SAFETY: the mapping belongs to this value alone (unmapped once, in `drop`); nothing in
// it is tied to the thread that made it.
unsafe impl Send for Segment {}

impl Segment {
    /// A new segment with rings of `ring_bytes` (a power of two) each, and the
    /// descriptor to pass to the peer.
    pub fn create(ring_bytes: usize) -> io::Result<(Segment, OwnedFd)> {
        assert!(ring_bytes.is_power_of_two());
        let layout = Layout::new(ring_bytes);
        let fd = memfd_create(
            c"volpex-shm",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )?;
        let file = File::from(fd);
        file.set_len(layout.total as u64)?;
        fcntl(
            &file,
            FcntlArg::F_ADD_SEALS(
                SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_SEAL,
            ),
        )?;
        let seg = Segment::map_fd(&file, ring_bytes, layout)?;
        seg.head()
            .ring_bytes
            .store(ring_bytes as u64, Ordering::Relaxed);
        seg.head().magic.store(MAGIC, Ordering::Release);
        Ok((seg, OwnedFd::from(file)))
    }

    /// Maps a segment the peer made, once its seals, size and header say it is one of
    /// ours with rings of `ring_bytes`.
    pub fn open(fd: OwnedFd, ring_bytes: usize) -> io::Result<Segment> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        let layout = Layout::new(ring_bytes);
        let seals = SealFlag::from_bits_truncate(fcntl(&fd, FcntlArg::F_GET_SEALS)?);
        if !seals.contains(SealFlag::F_SEAL_SHRINK) {
            return Err(bad("the peer's segment can shrink (not sealed)"));
        }
        let file = File::from(fd);
        if file.metadata()?.len() != layout.total as u64 {
            return Err(bad("the peer's segment has the wrong size"));
        }
        let seg = Segment::map_fd(&file, ring_bytes, layout)?;
        if seg.head().magic.load(Ordering::Acquire) != MAGIC
            || seg.head().ring_bytes.load(Ordering::Relaxed) != ring_bytes as u64
        {
            return Err(bad("the peer's segment has another layout"));
        }
        Ok(seg)
    }

    fn map_fd(fd: impl AsFd, ring_bytes: usize, layout: Layout) -> io::Result<Segment> {
        let len = NonZeroUsize::new(layout.total).ok_or(io::ErrorKind::InvalidInput)?;
        // SAFETY: a fresh shared mapping of the whole file (its size checked or set by
        // the caller, and sealed against shrinking), at an address the kernel picks: it
        // aliases no Rust memory.
        let ptr = unsafe {
            mmap(
                None,
                len,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                fd,
                0,
            )?
        };
        Ok(Segment {
            ptr: ptr.cast(),
            ring_bytes,
            layout,
        })
    }

    fn head(&self) -> &Head {
        // SAFETY: the mapping starts with a `Padded<Head>` (page aligned, zero or
        // written by the creator), lives as long as `self`, and is only accessed
        // through atomics.
        unsafe { &self.ptr.cast::<Padded<Head>>().as_ref().0 }
    }

    /// Ring `i` (0: the dialer's bytes, 1: the acceptor's).
    pub fn ring(&self, i: usize) -> Ring<'_> {
        let (ctrl, data) = (self.layout.ctrl[i], self.layout.data[i]);
        // SAFETY: `ctrl` and `data` are inside the mapping (`Layout`), aligned for
        // `RingCtrl` (offsets are multiples of its 128-byte alignment on a page-aligned
        // mapping) and `data + ring_bytes <= total`; the mapping outlives the borrow.
        // Each side produces into one ring and consumes from the other (`ShmPipe`).
        unsafe {
            let ctrl = &*self.ptr.as_ptr().add(ctrl).cast::<RingCtrl>();
            Ring::from_raw(ctrl, self.ptr.as_ptr().add(data), self.ring_bytes)
        }
    }
}

impl Segment {
    /// Arena `i` (0: the dialer's messages, 1: the acceptor's).
    pub fn arena(&self, i: usize) -> Arena<'_> {
        let at = self.layout.arena[i];
        let words = (ARENA_BYTES - size_of::<ArenaCtrl>()) / 8;
        // SAFETY: `at` is page aligned inside the mapping and `at + ARENA_BYTES <= total`
        // (`Layout`), so the control line (128-byte aligned) and the `words` 8-byte
        // words after it lie inside it; the mapping outlives the borrow, and every
        // process accesses these bytes only through atomics.
        unsafe {
            let base = self.ptr.as_ptr().add(at);
            let ctrl = &*base.cast::<ArenaCtrl>();
            let slots = std::slice::from_raw_parts(
                base.add(size_of::<ArenaCtrl>()).cast::<AtomicU64>(),
                words,
            );
            Arena::new(ctrl, slots)
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map_fd`, of this length, unmapped only here; no
        // `Ring` borrowed from it outlives `self`.
        let _ = unsafe { munmap(self.ptr.cast(), self.layout.total) };
    }
}

#[cfg(test)]
mod tests {
    use std::io::IoSlice;

    use super::*;

    /// Two mappings of one memfd (as the two processes have): what one side writes
    /// into its ring, the other reads, both ways.
    #[test]
    fn two_mappings_of_one_segment_talk_both_ways() {
        let (dialer, fd) = Segment::create(4096).expect("a segment");
        let acceptor = Segment::open(fd, 4096).expect("the peer's mapping");
        assert_eq!(dialer.ring(0).write(&[IoSlice::new(b"hello")]), Ok(5));
        let mut buf = [0u8; 16];
        assert_eq!(acceptor.ring(0).read(&mut buf, u64::MAX), Ok(5));
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(acceptor.ring(1).write(&[IoSlice::new(b"back")]), Ok(4));
        assert_eq!(dialer.ring(1).read(&mut buf, u64::MAX), Ok(4));
        assert_eq!(&buf[..4], b"back");
    }

    #[test]
    fn a_segment_of_another_layout_is_refused() {
        let (_seg, fd) = Segment::create(4096).expect("a segment");
        let e = Segment::open(fd, 8192).err().expect("refused");
        assert!(e.to_string().contains("wrong size"), "{e}");
    }

    /// An unsealed memfd could shrink under the reader (a SIGBUS): refused.
    #[test]
    fn an_unsealed_segment_is_refused() {
        let fd = memfd_create(c"test", MFdFlags::MFD_CLOEXEC).expect("a memfd");
        let file = File::from(fd);
        file.set_len(Layout::new(4096).total as u64).expect("sized");
        let e = Segment::open(OwnedFd::from(file), 4096)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("not sealed"), "{e}");
    }

    #[test]
    fn a_sealed_segment_cannot_be_resized() {
        let (_seg, fd) = Segment::create(4096).expect("a segment");
        let file = File::from(fd);
        assert!(file.set_len(1).is_err());
        assert!(file.set_len(1 << 20).is_err());
    }
}
