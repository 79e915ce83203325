//! How `drive` turns raw numbers into plausible but hostile values: numbers that are
//! small, huge or anything; ranks of the job or not; the communicators a replica uses, the
//! choices' context, or any; keys and order numbers; choice entries well formed with any
//! slots and values, or garbage. Shared with the fuzz target `engine_frames` like `drive`.

use bytes::Bytes;
use volpex_proto::message::{Key, Want};
use volpex_proto::pull::decision::{encode_match, DECISION_CTX};
use volpex_proto::pull::foreign::encode_entries;

use super::drive::RANKS;

/// A number that is small, huge or anything.
pub fn num(v: u64) -> u64 {
    match v % 4 {
        0 | 1 => (v >> 2) % 8,
        2 => u64::MAX - (v >> 2) % 4,
        _ => v >> 2,
    }
}

/// A rank of the job most of the time, else anything.
pub fn rank(v: u64) -> u32 {
    match v % 4 {
        3 => (v >> 2) as u32,
        _ => ((v >> 2) % u64::from(RANKS)) as u32,
    }
}

pub fn comm(v: u64) -> u32 {
    match v % 8 {
        0..=3 => 0,
        4 => 1,
        5 | 6 => DECISION_CTX,
        _ => (v >> 3) as u32,
    }
}

pub fn tag(v: u64) -> i32 {
    match v % 8 {
        0..=5 => (v % 3) as i32,
        6 => -1,
        _ => (v >> 3) as i32,
    }
}

/// Bytes from a seed: a small linear congruential stream.
pub fn bytes(seed: u64, len: usize) -> Bytes {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (s >> 56) as u8
        })
        .collect::<Vec<u8>>()
        .into()
}

pub fn want(x: &[u64; 4]) -> Want {
    let (comm, tag, src, dst, seq) = (
        comm(x[0]),
        tag(x[0] >> 8),
        rank(x[1]),
        rank(x[1] >> 32),
        num(x[2]),
    );
    if x[0] & (1 << 40) != 0 {
        Want::Order {
            comm,
            src,
            dst,
            order: seq,
        }
    } else {
        Want::Key(Key {
            comm,
            tag,
            src,
            dst,
            seq,
        })
    }
}

/// Choice entries: well formed with any slots and values (a match, or anything), or
/// garbage.
pub fn entries(x: &[u64; 4], len: u16) -> Bytes {
    if len % 4 == 3 {
        return bytes(x[3], usize::from(len) % 64);
    }
    let list: Vec<(u64, Bytes)> = (0..usize::from(len % 4) + usize::from(len % 3))
        .map(|i| {
            let v = x[i % 4].rotate_left(i as u32 * 13);
            let value = match v % 3 {
                0 => encode_match(Some((rank(v >> 2), tag(v >> 8)))),
                1 => encode_match(None),
                _ => bytes(v, (v >> 4) as usize % 24),
            };
            (num(v >> 1), value)
        })
        .collect();
    encode_entries(list.iter().map(|(s, v)| (s, v)))
}
