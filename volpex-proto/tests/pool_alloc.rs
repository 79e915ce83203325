//! Allocations of the sender log's copies (`message::pool::copy`), counted by a global
//! allocator of this test binary alone: sharing a small copy with a DATA frame (a clone)
//! must allocate nothing (docs/SHM.md, "Instructions per message").

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use volpex_proto::limits::INLINE_PAYLOAD_BYTES_MAX;
use volpex_proto::message::pool;

/// Counts the allocations of the thread that asks (the tests run on many threads).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call goes to the system allocator unchanged; the count is a const
// thread-local cell, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn a_small_copy_is_one_allocation_and_its_clones_none() {
    for len in [1, 8, INLINE_PAYLOAD_BYTES_MAX] {
        let data = vec![7u8; len];
        let before = allocations();
        let b = pool::copy(&data);
        let c = b.clone();
        let d = c.clone();
        assert_eq!(
            allocations() - before,
            1,
            "{len} bytes: copy and two clones"
        );
        drop((b, c));
        assert_eq!(&d[..], &data[..]);
    }
}
