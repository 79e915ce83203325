//! The fixed frame header (56 bytes, little-endian). See `docs/PROTOCOL.md`.

use crate::limits::{CONTROL_PAYLOAD_BYTES_MAX, FRAME_PAYLOAD_BYTES_MAX, HEADER_BYTES};

/// First four bytes of every frame: "VPX1".
pub const MAGIC: u32 = u32::from_le_bytes(*b"VPX1");
/// Wire version; bumped on any incompatible change, of a frame or of a control message's
/// encoding (4: `ToProcess::Table::starting` and `ToProcess::Joining`'s handover flag;
/// 5: SNAPSHOT carries the sibling's sender-log entries after the snapshot).
pub const VERSION: u8 = 5;

/// Bit of `flags`: the key fields of a PULL, ACK, GONE or CANCEL name
/// (comm, src, dst, order) with the order number in `seq` and `tag` 0, instead of a key.
pub const FLAG_BY_ORDER: u8 = 1;
/// Bit of `flags`, DATA only: the sender did not log this message and waits for the
/// receiver to confirm it arrived; the receiver answers with CONSUMED at once.
pub const FLAG_CONFIRM: u8 = 2;
/// Bit of `flags`, DATA only: the message waited in the sender's log at least
/// `config::LATE_PULL` before this pull for it came (the receiver may pull ahead).
pub const FLAG_LATE: u8 = 4;

/// Bit of `flags`, DATA only: the message was sent synchronously (MPI_Ssend): once a
/// receive of the receiver's claims it, the receiver tells every replica of the sender
/// with MATCHED.
pub const FLAG_SYNC: u8 = 8;

/// Handshake payload sizes.
pub const NONCE_BYTES: usize = 32;
/// HELLO: nonce, rank, replica, incarnation.
pub const HELLO_BYTES: usize = NONCE_BYTES + 12;
/// CHALLENGE: nonce, MAC, rank, replica, incarnation.
pub const CHALLENGE_BYTES: usize = NONCE_BYTES + 32 + 12;
/// AUTH: MAC.
pub const AUTH_BYTES: usize = 32;

/// Frame kinds. Numbers are part of the protocol: a retired number stays reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Client opens a connection: its nonce and identity.
    Hello = 1,
    /// Server proves it holds the job key and sends its nonce.
    Challenge = 2,
    /// Client proves it holds the job key.
    Auth = 3,
    /// Receiver asks a sender replica for one message.
    Pull = 4,
    /// A logged message, answering a pull.
    Data = 5,
    /// Pull parked at the sender (not sent yet); carries the sender's progress.
    Ack = 6,
    /// The message was evicted from this sender's log.
    Gone = 7,
    /// Receiver withdraws a parked pull.
    Cancel = 8,
    /// Receiver's consumption watermark, so sender logs can evict.
    Consumed = 9,
    /// Launcher <-> process control message (postcard payload).
    Control = 10,
    /// A replica becoming the leader of its rank's choices asks a sibling for the
    /// choices it holds from `seq` on.
    Takeover = 11,
    /// The answer to TAKEOVER: the choices of that rank the answering replica holds.
    Decided = 12,
    /// Choices of a rank that the DATA frame following on the same connection may depend
    /// on and not every replica of that rank holds yet (see `pull::foreign`).
    Choices = 13,
    /// The sender replica's program ended without making the send a pull asks for (it
    /// finalized, or returned an error): no message will ever answer it there.
    Ended = 14,
    /// Receiver's watermark at its latest checkpoint: sender logs may drop what is below
    /// it once every live replica of the receiver received it (see `message::log`).
    Checkpointed = 15,
    /// A regenerated replica asks a sibling for its latest snapshot.
    SnapshotAsk = 16,
    /// The answer to SNAPSHOT_ASK: the latest snapshot (empty payload: none yet).
    Snapshot = 17,
    /// A receive claimed the synchronous message named by the key fields: the sender's
    /// synchronous send may complete.
    Matched = 18,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Hello,
            2 => Kind::Challenge,
            3 => Kind::Auth,
            4 => Kind::Pull,
            5 => Kind::Data,
            6 => Kind::Ack,
            7 => Kind::Gone,
            8 => Kind::Cancel,
            9 => Kind::Consumed,
            10 => Kind::Control,
            11 => Kind::Takeover,
            12 => Kind::Decided,
            13 => Kind::Choices,
            14 => Kind::Ended,
            15 => Kind::Checkpointed,
            16 => Kind::SnapshotAsk,
            17 => Kind::Snapshot,
            18 => Kind::Matched,
            _ => return None,
        })
    }

    /// The payload length this kind allows: exact size or an upper bound.
    fn payload_rule(self) -> PayloadRule {
        match self {
            Kind::Hello => PayloadRule::Exactly(HELLO_BYTES),
            Kind::Challenge => PayloadRule::Exactly(CHALLENGE_BYTES),
            Kind::Auth => PayloadRule::Exactly(AUTH_BYTES),
            Kind::Pull
            | Kind::Ack
            | Kind::Gone
            | Kind::Ended
            | Kind::Cancel
            | Kind::Consumed
            | Kind::Checkpointed
            | Kind::SnapshotAsk
            | Kind::Takeover
            | Kind::Matched => PayloadRule::Exactly(0),
            Kind::Data | Kind::Decided | Kind::Choices | Kind::Snapshot => {
                PayloadRule::AtMost(FRAME_PAYLOAD_BYTES_MAX)
            }
            Kind::Control => PayloadRule::AtMost(CONTROL_PAYLOAD_BYTES_MAX),
        }
    }
}

enum PayloadRule {
    Exactly(usize),
    AtMost(usize),
}

/// Why a frame was rejected. The connection it came on is closed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Field `magic` is not "VPX1".
    #[error("bad magic {0:#010x}")]
    BadMagic(u32),
    /// Field `version` is not ours: the peer was built from another Volpex.
    #[error(
        "wire version {0}, not {VERSION}: the other side was built from another version of \
         Volpex (build volpexrun and the program from the same one)"
    )]
    BadVersion(u8),
    /// Field `kind` is not a known frame kind.
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    /// A reserved field is not zero.
    #[error("reserved field {field} is {value}, must be 0")]
    Reserved {
        /// Which field.
        field: &'static str,
        /// What it held.
        value: u64,
    },
    /// Field `length` is wrong for the kind.
    #[error("{kind:?} frame with payload length {len} (allowed: {rule})")]
    BadLength {
        /// Frame kind.
        kind: Kind,
        /// Length read.
        len: u64,
        /// What was allowed, in words.
        rule: String,
    },
    /// A frame kind that is not allowed at this point of the conversation.
    #[error("{kind:?} frame not allowed {context}")]
    Unexpected {
        /// Frame kind.
        kind: Kind,
        /// Where it came.
        context: &'static str,
    },
    /// Field `flags` has a bit that is unknown or not allowed on this kind.
    #[error("{kind:?} frame with flags {flags:#04x}")]
    BadFlags {
        /// Frame kind.
        kind: Kind,
        /// Flags read.
        flags: u8,
    },
    /// Control payload did not decode.
    #[error("control payload does not decode: {0}")]
    BadControl(String),
}

/// The header's fields in wire order. `LAYOUT` gives each one's width; offsets follow
/// from it, and a compile-time assertion checks that the fields tile the header exactly
/// (`HEADER_BYTES`, no gap, no overlap), so `encode` and `decode` cannot disagree with the
/// table in `docs/PROTOCOL.md` about where a field sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Magic,
    Version,
    Kind,
    Flags,
    Reserved8,
    Len,
    Comm,
    Tag,
    Src,
    Dst,
    Reserved32,
    Seq,
    Req,
    Aux,
}

/// Width in bytes of every `Field`, in order.
const LAYOUT: [(Field, usize); 14] = [
    (Field::Magic, 4),
    (Field::Version, 1),
    (Field::Kind, 1),
    (Field::Flags, 1),
    (Field::Reserved8, 1),
    (Field::Len, 4),
    (Field::Comm, 4),
    (Field::Tag, 4),
    (Field::Src, 4),
    (Field::Dst, 4),
    (Field::Reserved32, 4),
    (Field::Seq, 8),
    (Field::Req, 8),
    (Field::Aux, 8),
];

const _: () = {
    let mut end = 0;
    let mut i = 0;
    while i < LAYOUT.len() {
        // Listed in declaration order, so `Field as usize` indexes `LAYOUT`.
        assert!(LAYOUT[i].0 as usize == i);
        end += LAYOUT[i].1;
        i += 1;
    }
    assert!(
        end == HEADER_BYTES,
        "the header fields must fill HEADER_BYTES exactly"
    );
};

/// Offset in bytes of every `Field`, in order: `LAYOUT`'s widths summed once, at compile
/// time, so encoding and decoding a header index a table (summing the widths on every
/// access cost a frame about 500 instructions).
const STARTS: [usize; LAYOUT.len()] = {
    let mut starts = [0; LAYOUT.len()];
    let mut i = 1;
    while i < LAYOUT.len() {
        starts[i] = starts[i - 1] + LAYOUT[i - 1].1;
        i += 1;
    }
    starts
};

/// The `N` bytes of field `f` (`N` its width) in the encoded header `b`.
#[inline(always)]
fn field_bytes<const N: usize>(b: &[u8; HEADER_BYTES], f: Field) -> [u8; N] {
    debug_assert_eq!(LAYOUT[f as usize].1, N);
    let start = STARTS[f as usize];
    let mut a = [0u8; N];
    a.copy_from_slice(&b[start..start + N]);
    a
}

impl Field {
    /// Where the field sits in the encoded header.
    #[inline(always)]
    const fn range(self) -> std::ops::Range<usize> {
        let start = STARTS[self as usize];
        start..start + LAYOUT[self as usize].1
    }
}

/// The decoded fixed header. Field meaning depends on `kind`; see `docs/PROTOCOL.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Frame kind.
    pub kind: Kind,
    /// `FLAG_BY_ORDER`, `FLAG_CONFIRM`, `FLAG_LATE` or 0.
    pub flags: u8,
    /// Payload length in bytes following the header.
    pub len: u32,
    /// Communicator id of the key.
    pub comm: u32,
    /// Tag of the key.
    pub tag: i32,
    /// Source rank of the key.
    pub src: u32,
    /// Destination rank of the key.
    pub dst: u32,
    /// Seq of the key.
    pub seq: u64,
    /// Request id chosen by the receiver, echoed in answers.
    pub req: u64,
    /// Kind-specific number: watermark (PULL, CONSUMED), order (DATA), progress (ACK).
    pub aux: u64,
}

impl Header {
    /// A header of `kind` with every other field zero.
    #[inline]
    pub fn new(kind: Kind, len: usize) -> Header {
        Header {
            kind,
            flags: 0,
            len: u32::try_from(len).unwrap_or(u32::MAX),
            comm: 0,
            tag: 0,
            src: 0,
            dst: 0,
            seq: 0,
            req: 0,
            aux: 0,
        }
    }

    /// Encodes into the fixed 56-byte form (the layout is `Field`'s).
    #[inline]
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        let mut put = |f: Field, v: &[u8]| b[f.range()].copy_from_slice(v);
        put(Field::Magic, &MAGIC.to_le_bytes());
        put(Field::Version, &[VERSION]);
        put(Field::Kind, &[self.kind as u8]);
        put(Field::Flags, &[self.flags]);
        put(Field::Len, &self.len.to_le_bytes());
        put(Field::Comm, &self.comm.to_le_bytes());
        put(Field::Tag, &self.tag.to_le_bytes());
        put(Field::Src, &self.src.to_le_bytes());
        put(Field::Dst, &self.dst.to_le_bytes());
        put(Field::Seq, &self.seq.to_le_bytes());
        put(Field::Req, &self.req.to_le_bytes());
        put(Field::Aux, &self.aux.to_le_bytes());
        b
    }

    /// Decodes and validates every field; the error names the bad one.
    #[inline]
    pub fn decode(b: &[u8; HEADER_BYTES]) -> Result<Header, WireError> {
        let u32_at = |f: Field| u32::from_le_bytes(field_bytes(b, f));
        let u64_at = |f: Field| u64::from_le_bytes(field_bytes(b, f));
        let u8_at = |f: Field| b[STARTS[f as usize]];
        let magic = u32_at(Field::Magic);
        if magic != MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        let version = u8_at(Field::Version);
        if version != VERSION {
            return Err(WireError::BadVersion(version));
        }
        let kind_byte = u8_at(Field::Kind);
        let kind = Kind::from_u8(kind_byte).ok_or(WireError::UnknownKind(kind_byte))?;
        let r1 = u8_at(Field::Reserved8);
        if r1 != 0 {
            return Err(WireError::Reserved {
                field: "reserved8",
                value: r1.into(),
            });
        }
        let flags = u8_at(Field::Flags);
        let allowed = match kind {
            Kind::Pull | Kind::Ack | Kind::Gone | Kind::Ended | Kind::Cancel => FLAG_BY_ORDER,
            Kind::Data => FLAG_CONFIRM | FLAG_LATE | FLAG_SYNC,
            Kind::Hello
            | Kind::Challenge
            | Kind::Auth
            | Kind::Consumed
            | Kind::Checkpointed
            | Kind::SnapshotAsk
            | Kind::Snapshot
            | Kind::Control
            | Kind::Takeover
            | Kind::Decided
            | Kind::Choices
            | Kind::Matched => 0,
        };
        if flags & !allowed != 0 {
            return Err(WireError::BadFlags { kind, flags });
        }
        let r2 = u32_at(Field::Reserved32);
        if r2 != 0 {
            return Err(WireError::Reserved {
                field: "reserved32",
                value: r2.into(),
            });
        }
        let len = u32_at(Field::Len);
        let ok = match kind.payload_rule() {
            PayloadRule::Exactly(n) => len as usize == n,
            PayloadRule::AtMost(n) => len as usize <= n,
        };
        if !ok {
            let rule = match kind.payload_rule() {
                PayloadRule::Exactly(n) => format!("exactly {n}"),
                PayloadRule::AtMost(n) => format!("at most {n}"),
            };
            return Err(WireError::BadLength {
                kind,
                len: len.into(),
                rule,
            });
        }
        Ok(Header {
            kind,
            flags,
            len,
            comm: u32_at(Field::Comm),
            tag: u32_at(Field::Tag) as i32,
            src: u32_at(Field::Src),
            dst: u32_at(Field::Dst),
            seq: u64_at(Field::Seq),
            req: u64_at(Field::Req),
            aux: u64_at(Field::Aux),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn header_round_trips() {
        let h = Header {
            kind: Kind::Pull,
            flags: FLAG_BY_ORDER,
            len: 0,
            comm: 3,
            tag: -4,
            src: 5,
            dst: 6,
            seq: 7,
            req: 8,
            aux: 9,
        };
        assert_eq!(Header::decode(&h.encode()), Ok(h));
    }

    #[test]
    fn flags_are_checked() {
        let mut h = Header::new(Kind::Data, 0).encode();
        h[6] = FLAG_BY_ORDER;
        assert!(matches!(
            Header::decode(&h),
            Err(WireError::BadFlags { .. })
        ));
        let mut h = Header::new(Kind::Pull, 0).encode();
        h[6] = FLAG_CONFIRM;
        assert!(matches!(
            Header::decode(&h),
            Err(WireError::BadFlags { .. })
        ));
        let mut h = Header::new(Kind::Data, 0).encode();
        h[6] = FLAG_CONFIRM | FLAG_LATE | FLAG_SYNC;
        assert!(Header::decode(&h).is_ok());
        h[6] = 16;
        assert!(matches!(
            Header::decode(&h),
            Err(WireError::BadFlags { .. })
        ));
        let mut h = Header::new(Kind::Matched, 0).encode();
        h[6] = FLAG_SYNC;
        assert!(matches!(
            Header::decode(&h),
            Err(WireError::BadFlags { .. })
        ));
    }

    /// A frame from a build of another wire version (volpexrun and a program built from
    /// different Volpex versions) is refused with an error that says so and what to do,
    /// and 3 is such a version: its `ToProcess::Table` and `Joining` decode differently
    /// (a program of version 3 under a volpexrun of today failed with "control payload
    /// does not decode: Found an Option discriminant that wasn't 0 or 1").
    #[test]
    fn another_wire_version_is_named_with_what_to_do() {
        for other in [3, VERSION + 1] {
            let mut h = Header::new(Kind::Data, 0).encode();
            h[4] = other;
            let err = Header::decode(&h).expect_err("another version");
            assert_eq!(err, WireError::BadVersion(other));
            let text = err.to_string();
            assert!(
                text.contains(&format!("wire version {other}, not {VERSION}"))
                    && text.contains("build volpexrun and the program from the same one"),
                "{text}"
            );
        }
    }

    #[test]
    fn oversized_length_is_rejected() {
        let mut h = Header::new(Kind::Data, 0).encode();
        h[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            Header::decode(&h),
            Err(WireError::BadLength { .. })
        ));
    }

    proptest! {
        #[test]
        fn random_headers_never_panic(bytes in proptest::collection::vec(any::<u8>(), HEADER_BYTES)) {
            let mut a = [0u8; HEADER_BYTES];
            a.copy_from_slice(&bytes);
            let _ = Header::decode(&a);
        }
    }
}
