//! A counting global allocator for the memory bounds of the hostile-input tests: it
//! counts, per thread, the bytes live on the heap and the most that were live since the
//! last `reset_peak`. Tests run one per thread, so a test sees its own allocations only
//! (a buffer one thread allocates and another frees moves bytes between their counts).
//! Every other test of this binary pays one thread-local add per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

#[global_allocator]
static COUNTING: Counting = Counting;

thread_local! {
    // `const` and without a destructor: reading them never allocates.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(bytes: isize) {
    // `try_with`: the thread may be past its thread-locals while it exits.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + bytes;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call goes to `System` with the caller's arguments unchanged; the counting
// only touches thread-locals of plain integers, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as ours.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes this thread has live on the heap (allocated minus freed).
pub fn live() -> isize {
    LIVE.with(Cell::get)
}

/// The most bytes live on this thread's heap since the last `reset_peak`.
pub fn peak() -> isize {
    PEAK.with(Cell::get)
}

/// Starts a new peak measurement at what is live now.
pub fn reset_peak() {
    PEAK.with(|p| p.set(live()));
}
