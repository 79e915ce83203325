//! Arbitrary inputs into the engines of a 3 x 2 job, with the checks of the property
//! test `volpex-proto/tests/simulator/hostile/engine_frames.rs`
//! (`engine_check::check_inputs`): no panic, no endless exchange between engines, frames
//! per input bounded, heap growth per input bounded, hostile frames that come again grow
//! nothing. Bytes become inputs through the `arbitrary` crate; `drive::Job::step_of`
//! maps each to a hostile frame, a death notice, a clock jump or a command.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[path = "../../volpex-proto/tests/simulator/hostile/alloc.rs"]
#[allow(dead_code)]
mod alloc;
#[path = "../../volpex-proto/tests/simulator/hostile/drive.rs"]
#[allow(dead_code)]
mod drive;
#[path = "../../volpex-proto/tests/simulator/hostile/engine_check.rs"]
mod engine_check;
#[path = "../../volpex-proto/tests/simulator/hostile/pick.rs"]
mod pick;

/// One input as the fuzzer makes it; becomes a `drive::Raw`.
#[derive(Debug, Arbitrary)]
struct Input {
    to: u8,
    from: u8,
    op: u8,
    x: [u64; 4],
    len: u16,
}

/// Most inputs of one run: longer runs find nothing new and slow the fuzzer down.
const INPUTS_MAX: usize = 1000;

fuzz_target!(|inputs: Vec<Input>| {
    let raws: Vec<drive::Raw> = inputs
        .iter()
        .take(INPUTS_MAX)
        .map(|i| drive::Raw {
            to: i.to,
            from: i.from,
            op: i.op,
            x: i.x,
            len: i.len,
        })
        .collect();
    if let Err(e) = engine_check::check_inputs(&raws) {
        panic!("{e}");
    }
});
