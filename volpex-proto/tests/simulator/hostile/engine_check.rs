//! The properties of the engines under hostile input, as one function the property test
//! (`engine_frames`) and the fuzz target `fuzz/fuzz_targets/engine_frames.rs` (which
//! includes this file, `drive`, `pick` and `alloc` by path) both call: for any sequence of inputs
//! to `drive::Job`, no panic and no endless exchange (the driver asserts both), at most
//! `FRAMES_PER_INPUT_MAX` frames set moving by one input, a heap that grows by at most
//! `INPUT_BYTES` per input beyond the payload bytes the inputs bring (no amplification),
//! and by at most `REPLAY_BYTES` when every hostile frame comes a third time.
//!
//! What this cannot bound: an authenticated peer that keeps sending PULLs for distinct
//! messages not sent yet parks one entry per PULL (parking does not expire, DESIGN.md
//! "Pull protocol"), so an engine's memory grows linearly in what such a peer sends, with
//! no cap; this bounds the cost of each input, not their number.
//!
//! Reference: DESIGN.md "Transport": a bad frame never panics or allocates unbounded
//! memory; "Message identity and matching": a key that arrives twice is delivered once
//! (frames that come again change nothing).

use super::alloc;
use super::drive::{Counts, Job, Raw, Step};

/// Heap the engines may take beyond the inputs' own cost: their tables' first
/// allocations.
pub const FIXED_BYTES: isize = 64 << 10;
/// Heap one input may add, beyond the payload bytes it brings (a parked pull, a posted
/// receive, a choice held, a peer heard from, a frame queued...).
pub const INPUT_BYTES: isize = 2 << 10;
/// Frames one input may set moving (answers and the answers to those included). The
/// job's own traffic is a few dozen at most: a pull answered by data, a consumption
/// notice to every replica, failovers of a handful of pending pulls.
pub const FRAMES_PER_INPUT_MAX: usize = 1000;
/// Heap the same hostile frames may add when they come a third time.
pub const REPLAY_BYTES: isize = 4 << 10;

/// Runs `raws` through a fresh job, then every hostile frame among them twice more;
/// `Err` says which bound broke, with the steps that led there.
pub fn check_inputs(raws: &[Raw]) -> Result<Counts, String> {
    let mut job = Job::new();
    let mut steps: Vec<Step> = Vec::with_capacity(raws.len());
    let base = alloc::live();
    for (n, raw) in raws.iter().enumerate() {
        steps.push(job.step(raw));
        let own = (steps.capacity() * std::mem::size_of::<Step>()) as isize;
        let grown = alloc::live() - base - own;
        let bound =
            FIXED_BYTES + (n as isize + 1) * INPUT_BYTES + job.counts.payload_bytes as isize;
        if grown > bound {
            return Err(format!(
                "after {} inputs the heap grew by {grown} bytes, more than {bound}: {steps:#?}",
                n + 1
            ));
        }
    }
    if job.counts.cascade_max > FRAMES_PER_INPUT_MAX {
        return Err(format!(
            "one input set {} frames moving: {steps:#?}",
            job.counts.cascade_max
        ));
    }
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
    if twice - once > REPLAY_BYTES {
        return Err(format!(
            "the same hostile frames a third time took {} more bytes: {hostile:#?}",
            twice - once
        ));
    }
    Ok(job.counts)
}
