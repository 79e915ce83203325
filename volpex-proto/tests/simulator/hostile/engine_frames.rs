//! Arbitrary well-formed but hostile frames, death notices, failed connections, clock
//! jumps and the application's own sends, receives and choices, into the engines of a
//! 3 x 2 job (`drive::Job`), through `engine_check::check_inputs` (see there for the
//! bounds).
//!
//! Reference: DESIGN.md "Transport": a bad frame never panics or allocates unbounded
//! memory.

use proptest::prelude::*;

use super::drive::Raw;
use super::engine_check::check_inputs;

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

    /// Any sequence of hostile inputs: no panic, frames per input bounded, heap growth
    /// per input bounded, and hostile frames that come again grow nothing.
    #[test]
    fn hostile_frames_never_panic_and_memory_stays_bounded(
        raws in proptest::collection::vec(raw(), 1..200),
    ) {
        if let Err(e) = check_inputs(&raws) {
            return Err(TestCaseError::fail(e));
        }
    }
}
