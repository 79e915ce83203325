//! How a passive-target request's answer travels and lands: the pieces a large one is
//! cut into (the target sends them, the origin posts a receive per piece; both cut
//! alike from the answer's length), and where the origin puts it (copied to its
//! operations' places, or received straight into their memory when it is one slice).
//!
//! Owns the cutting and the landing; must never send, receive or serve (`passive` does,
//! with these).

use volpex::{PostedMessage, ReceiveInto};

use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::window::Landing;

/// A target answers a request whose answer has at least this many bytes in pieces of
/// `ANSWER_PIECE_BYTES` (the last one possibly shorter), each a message of its own: a
/// piece goes out whole from the window into a socket that holds it, and one its origin
/// confirmed at once needs no copy in the target's log (docs/PROTOCOL.md, "Unlogged
/// sends"), where a larger answer does not fit the socket and is copied into the log
/// while its origin waits. Both sides know the answer's length (the origin from its
/// operations), so they agree on the pieces.
pub(super) const ANSWER_PIECED_FROM: usize = 4 << 20;
/// See `ANSWER_PIECED_FROM`: the size of an unlogged send (`volpex_proto::limits`).
const ANSWER_PIECE_BYTES: usize = 2 << 20;

/// How many messages an answer of `len` bytes travels in.
pub(super) fn pieces_of(len: usize) -> usize {
    match len >= ANSWER_PIECED_FROM {
        true => len.div_ceil(ANSWER_PIECE_BYTES),
        false => 1,
    }
}

/// The pieces an answer travels in (`pieces_of`): the whole of it, or its
/// `ANSWER_PIECE_BYTES` pieces.
pub(super) fn answer_pieces(answer: &[u8]) -> impl Iterator<Item = &[u8]> {
    let piece = match answer.len() >= ANSWER_PIECED_FROM {
        true => ANSWER_PIECE_BYTES,
        false => answer.len().max(1),
    };
    let whole = answer.is_empty().then_some(answer);
    whole.into_iter().chain(answer.chunks(piece))
}

/// `buf` cut where an answer of its length is (`answer_pieces`).
pub(super) fn split_pieces(buf: &'static mut [u8]) -> Vec<&'static mut [u8]> {
    match buf.len() >= ANSWER_PIECED_FROM {
        true => buf.chunks_mut(ANSWER_PIECE_BYTES).collect(),
        false => vec![buf],
    }
}

pub(super) fn short_answer() -> MpiError {
    MpiError::new(
        class::INTERN,
        "a one-sided answer shorter than its operations",
    )
}

/// How an origin receives a target's answer.
pub(super) enum Answer {
    /// Whole (its pieces, `pieces_of`), then copied to where it goes.
    Posted(Vec<PostedMessage>, Places),
    /// Into the landings' memory, one slice of this many bytes (`in_place`).
    InPlace(ReceiveInto<'static>, usize),
}

/// Where an answer goes at the origin.
pub(super) enum Places {
    /// The landings of its operations, in order.
    Landings(Vec<Landing>),
    /// Their memory, contiguous pieces in order.
    Parts(Vec<&'static mut [u8]>),
    /// Their memory, one slice.
    One(&'static mut [u8]),
}

impl Places {
    /// Copies `answer` to its places, in order.
    pub(super) fn land(self, mut answer: &[u8]) -> Result<()> {
        match self {
            Places::Landings(l) => super::sync::land(l, answer),
            Places::Parts(parts) => {
                for p in parts {
                    if p.len() > answer.len() {
                        return Err(short_answer());
                    }
                    let (a, rest) = answer.split_at(p.len());
                    p.copy_from_slice(a);
                    answer = rest;
                }
                Ok(())
            }
            Places::One(p) => Places::Parts(vec![p]).land(answer),
        }
    }
}

/// Answers of at least this many bytes land in place when they can (`in_place`).
const IN_PLACE_BYTES: u64 = 64 << 10;

/// The memory of `landings` as one slice the answer fills in place (a large one straight
/// from the socket, no copy of it at all): when each is contiguous bytes starting where
/// the one before ends (a flush's gets into consecutive places of one array, as
/// `osu_get_bw`'s 32 gets of 1 MiB) and together at least `IN_PLACE_BYTES`; else the
/// landings back, or their contiguous pieces when they do not follow each other.
pub(super) fn in_place(landings: Vec<Landing>) -> Result<Places> {
    let total: u64 = landings.iter().map(|l| l.len).sum();
    let whole = |l: &Landing| {
        l.buf.dt.contiguous && l.buf.dt.bytes_of(l.count).ok().map(|b| b as u64) == Some(l.len)
    };
    if total < IN_PLACE_BYTES || !landings.iter().all(whole) {
        return Ok(Places::Landings(landings));
    }
    let mut parts = Vec::with_capacity(landings.len());
    for l in landings {
        let count = l.count;
        parts.push(
            l.buf
                .into_place(count)?
                .ok_or_else(|| MpiError::new(class::INTERN, "a contiguous landing that is not"))?,
        );
    }
    Ok(match crate::raw::adjacent(parts) {
        Ok(one) => Places::One(one),
        Err(parts) => Places::Parts(parts),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target's pieces of an answer (`answer_pieces`) and the origin's (`pieces_of`,
    /// `split_pieces`) agree for every length: one message below `ANSWER_PIECED_FROM`
    /// (also for no bytes), else pieces of `ANSWER_PIECE_BYTES` and a shorter last one.
    #[test]
    fn both_sides_cut_an_answer_alike() {
        for len in [
            0,
            1,
            ANSWER_PIECED_FROM - 1,
            ANSWER_PIECED_FROM,
            ANSWER_PIECED_FROM + 1,
            5 * ANSWER_PIECE_BYTES + 3,
        ] {
            let answer = vec![7u8; len];
            let sent: Vec<usize> = answer_pieces(&answer).map(<[u8]>::len).collect();
            assert_eq!(sent.len(), pieces_of(len), "{len} bytes");
            assert_eq!(sent.iter().sum::<usize>(), len);
            let buf: &'static mut [u8] = Box::leak(vec![0u8; len].into_boxed_slice());
            let landed: Vec<usize> = split_pieces(buf).iter().map(|p| p.len()).collect();
            match len {
                0 => assert_eq!(landed, [0]),
                _ => assert_eq!(landed, sent, "{len} bytes"),
            }
        }
        assert_eq!(pieces_of(ANSWER_PIECED_FROM), 2);
        assert_eq!(pieces_of(5 * ANSWER_PIECE_BYTES + 3), 6);
    }
}
