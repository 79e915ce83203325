//! Arbitrary well-formed but hostile frames, death notices, failed connections and clock
//! jumps, mixed with the job's own traffic, into the engines of `drive::Job`: no panic, no
//! endless exchange between engines, a bounded number of frames per input, a heap that
//! grows at most by a fixed amount per input beyond the payload bytes the inputs bring
//! (no amplification), and not at all when the same hostile frames come again.
//!
//! What this cannot bound: an authenticated peer that keeps sending PULLs for distinct
//! messages not sent yet parks one entry per PULL (parking does not expire, DESIGN.md
//! "Pull protocol"), so the engine's memory grows linearly in what such a peer sends,
//! with no cap; this test bounds the cost of each input, not their number.
//!
//! Reference: DESIGN.md "Transport": a bad frame never panics or allocates unbounded
//! memory; "Message identity and matching": a key that arrives twice is delivered once
//! (the replayed frames change nothing).

use proptest::prelude::*;

use super::alloc;
use super::drive::{Job, Raw, Step};

/// Heap the engines may take beyond the inputs' own cost: their tables' first
/// allocations.
const FIXED_BYTES: isize = 64 << 10;
/// Heap one input may add, beyond the payload bytes it brings (a parked pull, a posted
/// receive, a choice held, a peer heard from, a frame queued...).
const INPUT_BYTES: isize = 2 << 10;
/// Frames one input may set moving (answers and the answers to those included). The
/// job's own traffic is a few dozen at most: a pull answered by data, a consumption
/// notice to every replica, failovers of a handful of pending pulls.
const FRAMES_PER_INPUT_MAX: usize = 1000;
/// Heap the same hostile frames may add when they come again.
const REPLAY_BYTES: isize = 4 << 10;

fn raw() -> impl Strategy<Value = Raw> {
    (any::<(u8, u8, u8)>(), any::<[u64; 4]>(), any::<u16>()).prop_map(|((to, from, op), x, len)| {
        Raw {
            to,
            from,
            op,
            x,
            len,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any sequence of hostile inputs: no panic, bounded frames per input, heap growth
    /// bounded per input, and replaying every hostile frame twice grows nothing.
    #[test]
    fn hostile_frames_never_panic_and_memory_stays_bounded(
        raws in proptest::collection::vec(raw(), 1..200),
    ) {
        let mut job = Job::new();
        let mut steps: Vec<Step> = Vec::with_capacity(raws.len());
        let base = alloc::live();
        for (n, raw) in raws.iter().enumerate() {
            steps.push(job.step(raw));
            let grown = alloc::live() - base - (steps.capacity() * std::mem::size_of::<Step>()) as isize;
            let bound = FIXED_BYTES + (n as isize + 1) * INPUT_BYTES + job.counts.payload_bytes as isize;
            prop_assert!(
                grown <= bound,
                "after {} inputs the heap grew by {grown} bytes, more than {bound}: {steps:#?}",
                n + 1
            );
        }
        prop_assert!(
            job.counts.cascade_max <= FRAMES_PER_INPUT_MAX,
            "one input set {} frames moving: {steps:#?}",
            job.counts.cascade_max
        );
        let hostile: Vec<Step> = steps
            .iter()
            .filter(|s| matches!(s, Step::Frame { .. }))
            .cloned()
            .collect();
        for s in &hostile {
            job.apply(s.clone());
        }
        let once = alloc::live();
        for s in &hostile {
            job.apply(s.clone());
        }
        let twice = alloc::live();
        prop_assert!(
            twice - once <= REPLAY_BYTES,
            "the same hostile frames a third time took {} more bytes: {hostile:#?}",
            twice - once
        );
    }
}
