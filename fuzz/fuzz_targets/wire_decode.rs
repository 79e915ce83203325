//! Arbitrary bytes into the frame decoder, with the checks of the property test
//! `volpex-proto/tests/simulator/hostile/wire_decode.rs` (`decode_check::check_stream`):
//! no panic, no frame over the reader's payload limit, heap within the read buffer plus
//! one payload buffer of the limit.
//!
//! The first bytes choose the limit (the handshake's, a small one, the launcher's, the
//! peers' `FRAME_PAYLOAD_BYTES_MAX`) and how the stream is cut into reads; the rest is
//! the stream.

#![no_main]

use libfuzzer_sys::fuzz_target;
use volpex_proto::limits::{CONTROL_PAYLOAD_BYTES_MAX, FRAME_PAYLOAD_BYTES_MAX};
use volpex_proto::wire::header::CHALLENGE_BYTES;

#[path = "../../volpex-proto/tests/simulator/hostile/alloc.rs"]
#[allow(dead_code)]
mod alloc;
#[path = "../../volpex-proto/tests/simulator/hostile/decode_check.rs"]
mod decode_check;

fuzz_target!(|data: &[u8]| {
    let [pick, step_lo, step_hi, burst, rest @ ..] = data else {
        return;
    };
    let small = usize::from(*step_lo) << 4 | usize::from(*step_hi) << 12;
    let limit = match pick % 8 {
        0 | 1 => CHALLENGE_BYTES,
        2 | 3 => small,
        4 | 5 => usize::from(*step_hi) << 12,
        6 => CONTROL_PAYLOAD_BYTES_MAX,
        _ => FRAME_PAYLOAD_BYTES_MAX,
    };
    let step = 1 + (usize::from(*step_lo) | usize::from(*step_hi) << 8) % (128 << 10);
    if let Err(e) = decode_check::check_stream(rest, limit, step, 2 + usize::from(*burst % 16)) {
        panic!("{e}");
    }
});
