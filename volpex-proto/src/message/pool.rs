//! Reusable buffers for large payloads, and copies of small ones.
//!
//! A megabyte-sized allocation that goes back to the OS costs a page fault per 4 KiB the
//! next time one is made, which on a virtual machine costs more than the copy itself.
//! Large payload buffers (received frames, sender-log copies) are therefore returned here
//! when their last user drops them and handed out again for the next large payload.
//! Bounded in total bytes; owns no other state and never blocks beyond a short lock.
//!
//! A buffer keeps what it held: `take_filled` hands one out with its bytes already
//! initialized (stale contents), so a reader that overwrites them need not zero it first
//! (`read_to_end` initializes its spare room: 768 MiB of `memset` per aggregator replica
//! per GiB of a collective write, docs/conformance/io.md).
//!
//! A small copy (`copy`, at most `INLINE_PAYLOAD_BYTES_MAX`) holds its bytes in the
//! allocation of its reference count: sharing it with a frame allocates nothing.

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;

use crate::limits::{INLINE_PAYLOAD_BYTES_MAX, POOLED_BYTES_MIN, POOL_BYTES_MAX};

struct Pool {
    /// Free buffers, each with capacity (counted from where it starts) a power of two;
    /// their length is how many bytes are initialized.
    free: Vec<BytesMut>,
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    free: Vec::new(),
    bytes: 0,
});

/// An empty vector with room for at least `len` bytes, reused when possible.
#[inline]
pub fn take(len: usize) -> Vec<u8> {
    if len < POOLED_BYTES_MIN {
        return Vec::with_capacity(len);
    }
    let cap = len.next_power_of_two();
    match take_free(cap) {
        Some(mut m) => {
            // Emptied first: the conversion moves the bytes to the start (a copy).
            m.clear();
            m.into()
        }
        None => Vec::with_capacity(cap),
    }
}

/// A buffer of exactly `len` bytes, reused when possible, whose contents are
/// unspecified (what its last user left, zeros where nobody wrote): for a reader that
/// overwrites all of them. Zeroes only what was never initialized.
#[inline]
pub fn take_filled(len: usize) -> BytesMut {
    if len < POOLED_BYTES_MIN {
        return BytesMut::zeroed(len);
    }
    let cap = len.next_power_of_two();
    let mut m = take_free(cap).unwrap_or_else(|| BytesMut::with_capacity(cap));
    if m.len() >= len {
        m.truncate(len);
    } else {
        m.resize(len, 0);
    }
    m
}

/// A free buffer of capacity `cap`, if the pool has one.
fn take_free(cap: usize) -> Option<BytesMut> {
    let mut pool = POOL.lock();
    let i = pool.free.iter().rposition(|v| v.capacity() == cap)?;
    let v = pool.free.swap_remove(i);
    pool.bytes -= v.capacity();
    Some(v)
}

/// A small payload's bytes, held in the allocation of its `Bytes`'s reference count.
struct Inline {
    len: u8,
    bytes: [u8; INLINE_PAYLOAD_BYTES_MAX],
}

const _: () = assert!(INLINE_PAYLOAD_BYTES_MAX <= u8::MAX as usize);

impl AsRef<[u8]> for Inline {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

/// A copy of `data` in a pooled buffer. A small one goes into a single allocation whose
/// clones only count references (`Bytes::copy_from_slice` makes a buffer whose first
/// clone, the sender log's copy going into a DATA frame, allocates its reference count).
#[inline]
pub fn copy(data: &[u8]) -> Bytes {
    if data.len() <= INLINE_PAYLOAD_BYTES_MAX {
        if data.is_empty() {
            return Bytes::new();
        }
        let mut bytes = [0u8; INLINE_PAYLOAD_BYTES_MAX];
        bytes[..data.len()].copy_from_slice(data);
        let len = data.len() as u8; // at most INLINE_PAYLOAD_BYTES_MAX (checked below)
        return Bytes::from_owner(Inline { len, bytes });
    }
    if data.len() < POOLED_BYTES_MIN {
        return Bytes::copy_from_slice(data);
    }
    let mut v = take(data.len());
    v.extend_from_slice(data);
    Bytes::from(v)
}

/// Gives a payload's buffer back if this was its last user.
#[inline]
pub fn recycle(b: Bytes) {
    if b.len() < POOLED_BYTES_MIN {
        return;
    }
    let Ok(mut m) = b.try_into_mut() else {
        return;
    };
    if !m.capacity().is_power_of_two() {
        // A slice that does not start at its allocation's start (its capacity counts
        // from where it starts): the whole allocation, emptied first, as the conversion
        // moves the bytes to the start of the buffer, a copy of the whole payload
        // otherwise (`bytes` 1.12 `From<BytesMut> for Vec`).
        m.clear();
        let v: Vec<u8> = m.into();
        m = BytesMut::from(Bytes::from(v));
    }
    if !m.capacity().is_power_of_two() || m.capacity() > POOL_BYTES_MAX {
        return;
    }
    let mut pool = POOL.lock();
    // The newest buffer goes in, the oldest ones go out to make room: a program whose
    // message sizes grow (OSU's bandwidth tests) would otherwise fill the pool with
    // sizes it no longer sends, and allocate afresh each of its larger messages (a
    // 32 MiB one-sided answer per flush, page-faulted anew each time).
    pool.bytes += m.capacity();
    pool.free.push(m);
    while pool.bytes > POOL_BYTES_MAX {
        let old = pool.free.remove(0);
        pool.bytes -= old.capacity();
    }
}

/// Held by the tests that fill or read the pool (it is one for the whole process).
#[cfg(test)]
pub(crate) static TEST_SERIAL: Mutex<()> = Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_copy_holds_its_bytes_and_clones_share_them() {
        for len in [
            0,
            1,
            8,
            INLINE_PAYLOAD_BYTES_MAX,
            INLINE_PAYLOAD_BYTES_MAX + 1,
        ] {
            let data: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
            let b = copy(&data);
            assert_eq!(&b[..], &data[..], "{len} bytes");
            let c = b.clone();
            assert_eq!(c.as_ptr(), b.as_ptr(), "a clone shares the bytes");
            drop(b);
            assert_eq!(&c[..], &data[..]);
            assert_eq!(&c.slice(1.min(len)..)[..], &data[1.min(len)..]);
            recycle(c);
        }
    }

    #[test]
    fn large_buffers_come_back() {
        let _serial = TEST_SERIAL.lock();
        let b = copy(&vec![3u8; 100_000]);
        let ptr = b.as_ptr();
        recycle(b);
        let v = take(100_000);
        assert_eq!(v.as_ptr(), ptr, "the same allocation is reused");
        assert!(v.is_empty() && v.capacity() >= 100_000);
    }

    #[test]
    fn a_filled_buffer_keeps_its_bytes_and_zeroes_only_the_new_ones() {
        let _serial = TEST_SERIAL.lock();
        // A size no other test pools (a 1 MiB buffer).
        let b = copy(&vec![7u8; 700_000]);
        let ptr = b.as_ptr();
        recycle(b);
        let m = take_filled(600_000);
        assert_eq!(m.as_ptr(), ptr, "the same allocation is reused");
        assert_eq!(m.len(), 600_000);
        assert!(m.iter().all(|&b| b == 7), "reused bytes are not zeroed");
        recycle(m.freeze());
        let m = take_filled(800_000);
        assert_eq!(m.as_ptr(), ptr);
        assert!(m[..600_000].iter().all(|&b| b == 7));
        assert!(
            m[600_000..].iter().all(|&b| b == 0),
            "the rest is initialized"
        );
        assert!(take_filled(1000).iter().all(|&b| b == 0));
    }

    #[test]
    fn a_full_pool_makes_room_for_the_newest_size() {
        let _serial = TEST_SERIAL.lock();
        // Enough buffers of a size nothing else pools (16 MiB) to fill the pool, then one
        // of another (32 MiB): it is kept, the oldest go.
        let filler: Vec<Bytes> = (0..POOL_BYTES_MAX / (16 << 20))
            .map(|_| copy(&vec![1u8; (12 << 20) + 1]))
            .collect();
        for b in filler {
            recycle(b);
        }
        let big = copy(&vec![2u8; (24 << 20) + 1]);
        let ptr = big.as_ptr();
        recycle(big);
        let v = take((24 << 20) + 1);
        assert_eq!(v.as_ptr(), ptr, "the newest size was pooled");
    }

    #[test]
    fn shared_or_small_buffers_are_left_alone() {
        let b = copy(&vec![1u8; 100_000]);
        let c = b.clone();
        recycle(b);
        assert_eq!(c.len(), 100_000);
        recycle(Bytes::from_static(b"tiny"));
    }
}
