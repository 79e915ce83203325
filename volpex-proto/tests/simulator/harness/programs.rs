//! Random message schedules and the per-rank programs that run them: every rank sends
//! and receives in global message order (so no program can deadlock with buffered sends),
//! consecutive receives sometimes posted together with their tags reordered; the payload of
//! every message is a function of its number plus a digest of its sender's matches.

use std::cmp::Reverse;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use volpex_proto::message::Key;

pub const COMM: u32 = 0;

/// One step of a rank's program. Every replica of the rank runs the same program.
#[derive(Debug, Clone)]
pub enum Op {
    /// Send global message `msg`.
    Send(usize),
    /// Post receives for these global messages (in this order), then wait for all.
    Recv(Vec<usize>),
}

/// How a rank receives: every receive of a wildcard rank uses the same kind, so any
/// choice of matches consumes exactly the messages sent to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recv {
    /// From the message's source with its tag.
    Exact,
    /// `ANY_SOURCE` with the message's tag.
    AnySource,
    /// The message's source with `ANY_TAG`.
    AnyTag,
    /// `ANY_SOURCE` and `ANY_TAG`.
    AnyBoth,
}

#[derive(Debug, Clone)]
pub struct Msg {
    pub src: u32,
    pub dst: u32,
    pub tag: i32,
    pub len: usize,
}

pub fn content(g: usize, m: &Msg) -> Vec<u8> {
    (0..m.len)
        .map(|i| (g as u64 * 31 + i as u64 * 7 + m.tag as u64) as u8)
        .collect()
}

/// What a sender's matches so far hash to; every message carries the digest of its
/// sender replica's matches, so effects of a choice that did not survive show up.
pub fn digest(keys: &[Key]) -> u64 {
    keys.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, k| {
        let x = (u64::from(k.src) << 40) ^ (u64::from(k.tag as u32) << 20) ^ k.seq;
        (h ^ x).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A random schedule of messages and, per rank, a program that cannot deadlock with
/// buffered sends: every rank sends and receives in global message order, except that
/// consecutive receives are sometimes posted together with their tags reordered.
pub fn programs(
    rng: &mut ChaCha8Rng,
    ranks: u32,
    msgs: usize,
    max_len: usize,
) -> (Vec<Msg>, Vec<Vec<Op>>) {
    let schedule: Vec<Msg> = (0..msgs)
        .map(|_| Msg {
            src: rng.random_range(0..ranks),
            dst: rng.random_range(0..ranks),
            tag: rng.random_range(0..3),
            len: if rng.random_bool(0.05) {
                max_len
            } else {
                rng.random_range(0..=max_len / 4)
            },
        })
        .collect();
    let mut progs = vec![Vec::new(); ranks as usize];
    for (g, m) in schedule.iter().enumerate() {
        progs[m.src as usize].push(Op::Send(g));
        let p = &mut progs[m.dst as usize];
        let batch = rng.random_bool(0.4);
        match p.last_mut() {
            Some(Op::Recv(list)) if batch && list.len() < 4 => list.push(g),
            _ => p.push(Op::Recv(vec![g])),
        }
    }
    // Post batched receives tag by tag, highest tag first: receives with different tags
    // complete out of send order; the same (src, tag) keeps its order.
    for p in progs.iter_mut() {
        for op in p.iter_mut() {
            if let Op::Recv(list) = op {
                list.sort_by_key(|g| Reverse(schedule[*g].tag));
            }
        }
    }
    (schedule, progs)
}
