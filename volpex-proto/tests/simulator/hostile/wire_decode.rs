//! Arbitrary byte streams into the frame decoder, through `decode_check::check_stream`
//! (see there for the properties): pieces of any bytes and, mostly, headers that pass
//! `Header::decode` with lengths around the reader's limit, so that streams go on past
//! their first frame, large payloads get buffered, and the stream ends or turns to
//! garbage in the middle of one.
//!
//! Reference: DESIGN.md "Transport": every field read from the network is checked; a bad
//! frame closes that connection and never panics or allocates unbounded memory.

use proptest::prelude::*;
use volpex_proto::limits::CONTROL_PAYLOAD_BYTES_MAX;
use volpex_proto::wire::header::{
    Header, Kind, AUTH_BYTES, CHALLENGE_BYTES, FLAG_BY_ORDER, FLAG_CONFIRM, HELLO_BYTES,
};

use super::decode_check::check_stream;

/// A piece of a hostile stream.
#[derive(Debug, Clone)]
enum Piece {
    /// Bytes of any kind.
    Raw(Vec<u8>),
    /// A header with the right magic and version and any other field, then `body` bytes
    /// of its payload: all of them, or fewer (the stream ends or goes on with the next
    /// piece in the middle of the payload).
    Frame {
        kind: u8,
        flags: u8,
        len: u32,
        fields: (u32, i32, u32, u32, u64, u64, u64),
        reserved: Option<(u8, u32)>,
        body: usize,
        fill: u8,
    },
}

impl Piece {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Piece::Raw(b) => out.extend_from_slice(b),
            Piece::Frame {
                kind,
                flags,
                len,
                fields: (comm, tag, src, dst, seq, req, aux),
                reserved,
                body,
                fill,
            } => {
                let h = Header {
                    comm: *comm,
                    tag: *tag,
                    src: *src,
                    dst: *dst,
                    seq: *seq,
                    req: *req,
                    aux: *aux,
                    ..Header::new(Kind::Data, 0)
                };
                let mut b = h.encode();
                b[5] = *kind;
                b[6] = *flags;
                b[8..12].copy_from_slice(&len.to_le_bytes());
                if let Some((r8, r32)) = reserved {
                    b[7] = *r8;
                    b[28..32].copy_from_slice(&r32.to_le_bytes());
                }
                out.extend_from_slice(&b);
                // Payloads of up to 300 KiB arrive whole; longer ones are cut short.
                let n = (*len as usize).min(*body).min(300 << 10);
                out.extend(std::iter::repeat_n(*fill, n));
            }
        }
    }
}

/// Kinds with the flags and payload lengths they allow: (kind, flags, exact length).
const KINDS: [(u8, u8, Option<u32>); 13] = [
    (1, 0, Some(HELLO_BYTES as u32)),
    (2, 0, Some(CHALLENGE_BYTES as u32)),
    (3, 0, Some(AUTH_BYTES as u32)),
    (4, FLAG_BY_ORDER, Some(0)),
    (5, FLAG_CONFIRM, None),
    (6, FLAG_BY_ORDER, Some(0)),
    (7, FLAG_BY_ORDER, Some(0)),
    (8, FLAG_BY_ORDER, Some(0)),
    (9, 0, Some(0)),
    (10, 0, None),
    (11, 0, Some(0)),
    (12, 0, None),
    (13, 0, None),
];

/// Pieces for a reader whose payload limit is `limit`: mostly headers that pass
/// `Header::decode` with lengths around the limit, so streams go on past their first
/// frame and large payloads get buffered, and now and then anything.
fn piece(limit: usize) -> impl Strategy<Value = Piece> {
    let limit = limit.min(u32::MAX as usize - 1) as u32;
    let len = prop_oneof![
        10 => 0u32..=limit.min(256),
        8 => 0u32..=limit,
        1 => limit..=limit + 1,
        1 => any::<u32>(),
    ];
    let head = prop_oneof![
        20 => (0..KINDS.len(), any::<u8>(), len.clone(), 0u8..32).prop_map(
            |(k, f, len, wrong)| {
                let (kind, flags, fixed) = KINDS[k];
                // A fixed-size kind gets its size, but once in a while.
                let len = match (fixed, wrong) {
                    (Some(n), 1..) => n,
                    _ => len,
                };
                (kind, flags & f, len)
            }
        ),
        1 => (0u8..16, any::<u8>(), len),
    ];
    let frame = (
        head,
        any::<(u32, i32, u32, u32, u64, u64, u64)>(),
        proptest::option::weighted(0.05, any::<(u8, u32)>()),
        (
            prop_oneof![
                12 => Just(usize::MAX),
                1 => 0usize..4096,
                1 => 0usize..(300 << 10)
            ],
            any::<u8>(),
        ),
    )
        .prop_map(
            |((kind, flags, len), fields, reserved, (body, fill))| Piece::Frame {
                kind,
                flags,
                len,
                fields,
                reserved,
                body,
                fill,
            },
        );
    prop_oneof![
        1 => proptest::collection::vec(any::<u8>(), 0..80).prop_map(Piece::Raw),
        30 => frame,
    ]
}

/// A stream: a payload limit and the pieces sent to a reader that has it.
fn stream() -> impl Strategy<Value = (usize, Vec<Piece>)> {
    prop_oneof![
        Just(CHALLENGE_BYTES),
        0usize..4096,
        0usize..(1 << 20),
        Just(CONTROL_PAYLOAD_BYTES_MAX),
    ]
    .prop_flat_map(|limit| (Just(limit), proptest::collection::vec(piece(limit), 0..16)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any stream, cut into any reads, under any payload limit: no panic; every frame
    /// handed over is within the limit and builds a protocol frame or a `WireError`; the
    /// heap grows by at most the read buffer and one payload buffer.
    #[test]
    fn any_stream_decodes_within_the_payload_limit(
        (limit, pieces) in stream(),
        step in prop_oneof![1usize..64, 64usize..(128 << 10)],
        burst in 2usize..16,
    ) {
        let mut data = Vec::new();
        for p in &pieces {
            p.write(&mut data);
        }
        // At most about 2,000 reads per stream, so a case takes milliseconds.
        let step = step.max(data.len() / 2000);
        if let Err(e) = check_stream(&data, limit, step, burst) {
            return Err(TestCaseError::fail(e));
        }
    }
}
