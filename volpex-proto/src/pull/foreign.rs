//! Choices of *other* ranks that this replica may depend on while not every replica of
//! their rank holds them yet (causal piggyback). Owns what it heard, what it tells the
//! next receiver, and what it answers when a replica of such a rank takes over. Must
//! never do I/O: the engine moves its frames.
//!
//! A leader does not hold back a message that depends on its latest choices until its
//! siblings hold them (the output commit of `decision`): it sends the choices along, in a
//! CHOICES frame just before the DATA. Whoever receives them keeps them until it hears
//! that every replica of the deciding rank holds them (the `stable` watermark every
//! CHOICES frame carries), and sends them on before every DATA it serves meanwhile, so
//! every replica whose state may depend on a choice holds it: every replica but their
//! author, the leader that sent them here itself, which holds them (`vouched_by`). A
//! replica taking over a rank's choices asks every live replica of the job (TAKEOVER)
//! and adopts what they hold before choosing anything itself.
//!
//! Every CHOICES frame names the *term* that vouches for its entries: the leader whose
//! choices they are (the sender's leader for its own rank's choices). Answering a
//! takeover re-vouches what a replica holds for the new leader, which adopts all of it.
//! From its answer on, a replica drops choices from replicas of that rank below the new
//! leader, and any CHOICES of an older term naming a slot from the takeover's base on
//! that it did not report (it was in flight from a replica that died before answering,
//! and the new leader may decide that slot differently), together with the DATA that
//! follows it; the receiver then pulls that message again.

use std::collections::BTreeMap;

use bytes::{BufMut, Bytes, BytesMut};

use crate::message::{Map, ReplicaId};

/// What one rank's choices look like from here.
#[derive(Debug, Default)]
struct Heard {
    /// Every live replica of the rank held every slot below this.
    stable: u64,
    /// Unstable choices this replica may depend on: slot -> (term, choice).
    entries: BTreeMap<u64, (u32, Bytes)>,
    /// The last takeover answered: replicas of the rank whose ordinal (see
    /// `decision::ordinal`) is below this are ignored, and so
    /// are older terms' choices from `answered_base` on that were not part of the answer.
    fenced_below: u32,
    answered_base: Option<u64>,
    /// The replica of the rank that vouches for the choices of term `.0` itself (it sent
    /// them as its rank's leader: the frame's term is its own ordinal), while it is not
    /// known gone: it holds every choice of that term, so they are not carried back to it.
    author: Option<(u32, ReplicaId)>,
}

/// Why a CHOICES frame was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Its entries do not decode.
    Malformed(String),
    /// It comes from a replica fenced by a takeover, or names a slot the new leader may
    /// decide differently: the DATA it goes with must be dropped too.
    Stale,
}

/// The CHOICES frames to send before a DATA frame: (rank, term, stable, entries).
pub type Carried = Vec<(u32, u32, u64, Bytes)>;

/// Choices of other ranks this replica heard of.
#[derive(Debug, Default)]
pub struct Foreign {
    ranks: Map<u32, Heard>,
    /// Entries held, over all ranks (a cheap "anything to send along?").
    held: usize,
    /// `carried()` as last encoded; `None` once anything it depends on changed (every
    /// DATA served while carrying sends the same frames until then).
    encoded: Option<Carried>,
}

impl Foreign {
    /// Nothing to send along.
    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    /// Unstable choices of `rank` held here, and the watermark known for it.
    pub fn of_rank(&self, rank: u32) -> (bool, u64) {
        self.ranks
            .get(&rank)
            .map_or((false, 0), |h| (!h.entries.is_empty(), h.stable))
    }

    /// Whether `from`, of ordinal `ord` in its rank, was fenced by a takeover of its rank
    /// (its frames are dropped).
    pub fn is_fenced(&self, from: ReplicaId, ord: u32) -> bool {
        self.ranks
            .get(&from.rank)
            .is_some_and(|h| ord < h.fenced_below)
    }

    /// A CHOICES frame about `rank` from `from` (of ordinal `ord` in its rank), vouched
    /// for by the replica of ordinal `term` of it.
    pub fn note(
        &mut self,
        from: ReplicaId,
        ord: u32,
        rank: u32,
        term: u32,
        stable: u64,
        entries: &Bytes,
    ) -> Result<(), Refused> {
        let entries = decode_entries(entries).map_err(Refused::Malformed)?;
        let h = self.ranks.entry(rank).or_default();
        if from.rank == rank && ord < h.fenced_below {
            return Err(Refused::Stale);
        }
        if let (Some(base), true) = (h.answered_base, term < h.fenced_below) {
            let reported = |slot: u64, v: &Bytes| {
                slot < base.max(h.stable) || h.entries.get(&slot).is_some_and(|e| e.1 == *v)
            };
            if !entries.iter().all(|(slot, v)| reported(*slot, v)) {
                return Err(Refused::Stale);
            }
        }
        if from.rank == rank && ord == term {
            h.author = Some((term, from));
        }
        let before = h.entries.len();
        let mut changed = false;
        if stable > h.stable {
            h.stable = stable;
            h.entries = h.entries.split_off(&stable);
            changed = true;
        }
        for (slot, v) in entries {
            if slot < h.stable {
                continue;
            }
            match h.entries.get_mut(&slot) {
                Some((_, old)) if *old != v => {
                    log::error!(
                        "choice {slot} of rank {rank} heard with two values; kept the first"
                    )
                }
                Some((t, _)) if *t < term => {
                    *t = term;
                    changed = true;
                }
                Some(_) => {}
                None => {
                    h.entries.insert(slot, (term, v));
                    changed = true;
                }
            }
        }
        self.held = self.held - before + h.entries.len();
        if changed {
            self.encoded = None;
        }
        Ok(())
    }

    /// Replica `from` takes over its rank's choices: fence the replicas below it, vouch
    /// what is held for it, and return the entries to answer with (from slot `base` on).
    pub fn on_takeover(&mut self, from: ReplicaId, ord: u32, base: u64) -> Bytes {
        let h = self.ranks.entry(from.rank).or_default();
        // An older takeover than one already answered changes nothing.
        if ord >= h.fenced_below {
            h.fenced_below = ord;
            h.answered_base = Some(base);
            // Re-vouched for the new leader: only a frame of its own makes it the author.
            h.author = None;
            for (t, _) in h.entries.values_mut() {
                *t = (*t).max(ord);
            }
            self.encoded = None;
        }
        encode_entries(h.entries.range(base..).map(|(s, (_, v))| (s, v)))
    }

    /// The term whose choices `to` vouches for itself as its rank's leader (it sent them
    /// here as their author), if any: `to` holds every one of them (it made them, or
    /// adopted them when it took over, from DECIDED answers that reached it before any
    /// frame vouched for by it was sent), so a frame of that rank and term is not carried
    /// to it (a replica adopts its own rank's carried choices, and these it holds).
    pub fn vouched_by(&self, to: ReplicaId) -> Option<u32> {
        let (term, author) = self.ranks.get(&to.rank)?.author?;
        (author == to).then_some(term)
    }

    /// `peer` is gone (dead, fenced, or replaced by a new incarnation): it no longer
    /// counts as the author of its rank's choices (a new incarnation at its place holds
    /// none of them).
    pub fn forget_author(&mut self, peer: ReplicaId) {
        if let Some(h) = self.ranks.get_mut(&peer.rank) {
            if h.author.is_some_and(|(_, a)| a == peer) {
                h.author = None;
            }
        }
    }

    /// The CHOICES frames to send before a DATA frame: one for every rank and term with
    /// unstable entries held here (encoded once until they change).
    pub fn carried(&mut self) -> &[(u32, u32, u64, Bytes)] {
        let ranks = &self.ranks;
        self.encoded.get_or_insert_with(|| Self::encode(ranks))
    }

    fn encode(ranks: &Map<u32, Heard>) -> Carried {
        let mut out = Vec::new();
        for (&rank, h) in ranks.iter().filter(|(_, h)| !h.entries.is_empty()) {
            let mut terms: Vec<u32> = h.entries.values().map(|e| e.0).collect();
            terms.sort_unstable();
            terms.dedup();
            for term in terms {
                let of_term = h
                    .entries
                    .iter()
                    .filter(|(_, e)| e.0 == term)
                    .map(|(s, (_, v))| (s, v));
                out.push((rank, term, h.stable, encode_entries(of_term)));
            }
        }
        out
    }
}

/// Encodes (slot, choice) entries: per entry slot u64, length u32, bytes (little-endian).
pub fn encode_entries<'a>(entries: impl Iterator<Item = (&'a u64, &'a Bytes)>) -> Bytes {
    let mut b = BytesMut::new();
    for (slot, v) in entries {
        b.put_u64_le(*slot);
        b.put_u32_le(v.len() as u32);
        b.put_slice(v);
    }
    b.freeze()
}

/// Decodes `encode_entries`; the choices are slices of `b` (no copy).
pub fn decode_entries(b: &Bytes) -> Result<Vec<(u64, Bytes)>, String> {
    let mut out = Vec::new();
    let mut b = b.clone();
    while !b.is_empty() {
        let (Some(slot), Some(len)) = (
            b.get(..8)
                .and_then(|s| s.try_into().ok())
                .map(u64::from_le_bytes),
            b.get(8..12)
                .and_then(|s| s.try_into().ok())
                .map(u32::from_le_bytes),
        ) else {
            return Err("truncated choice entry header".into());
        };
        let Some(v) = b.get(12..12 + len as usize) else {
            return Err(format!(
                "choice entry {slot} claims {len} bytes past the end"
            ));
        };
        let end = 12 + v.len();
        out.push((slot, b.slice(12..end)));
        b = b.slice(end..);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(list: &[(u64, &'static [u8])]) -> Bytes {
        let m: BTreeMap<u64, Bytes> = list
            .iter()
            .map(|&(s, v)| (s, Bytes::from_static(v)))
            .collect();
        encode_entries(m.iter())
    }

    #[test]
    fn choices_are_kept_until_stable_and_carried_meanwhile() {
        let mut f = Foreign::default();
        let leader = ReplicaId::new(2, 0);
        assert!(f.is_empty());
        f.note(leader, 0, 2, 0, 3, &entries(&[(3, b"a"), (4, b"b")]))
            .unwrap();
        let both = entries(&[(3, b"a"), (4, b"b")]);
        assert_eq!(f.carried(), vec![(2, 0, 3, both.clone())]);
        let first = f.carried()[0].3.as_ptr();
        // Heard again from someone else (transitively), with an older watermark: nothing
        // changes, and the frame is not encoded again.
        f.note(
            ReplicaId::new(1, 1),
            1,
            2,
            0,
            1,
            &entries(&[(2, b"z"), (4, b"b")]),
        )
        .unwrap();
        assert_eq!(f.carried(), vec![(2, 0, 3, both)]);
        assert_eq!(f.carried()[0].3.as_ptr(), first);
        f.note(leader, 0, 2, 0, 5, &Bytes::new()).unwrap();
        assert!(f.is_empty());
        assert_eq!(f.carried(), Vec::new());
        assert_eq!(
            f.note(leader, 0, 2, 0, 0, &Bytes::from_static(&[1, 2, 3])),
            Err(Refused::Malformed("truncated choice entry header".into()))
        );
    }

    #[test]
    fn only_the_leader_that_sent_its_own_choices_is_their_author() {
        let mut f = Foreign::default();
        let (leader, follower) = (ReplicaId::new(2, 0), ReplicaId::new(2, 1));
        // A follower passing its leader's choices on (term 0, its ordinal 1) is not their
        // author, nor is a replica of another rank.
        f.note(follower, 1, 2, 0, 0, &entries(&[(0, b"a")]))
            .unwrap();
        f.note(ReplicaId::new(1, 0), 0, 2, 0, 0, &entries(&[(0, b"a")]))
            .unwrap();
        assert_eq!(f.vouched_by(leader), None);
        assert_eq!(f.vouched_by(follower), None);
        f.note(leader, 0, 2, 0, 0, &entries(&[(0, b"a"), (1, b"b")]))
            .unwrap();
        assert_eq!(f.vouched_by(leader), Some(0));
        assert_eq!(f.vouched_by(follower), None);
        assert_eq!(f.vouched_by(ReplicaId::new(3, 0)), None);
        // Gone (and perhaps replaced by an incarnation that holds nothing): no longer.
        f.forget_author(follower);
        assert_eq!(f.vouched_by(leader), Some(0));
        f.forget_author(leader);
        assert_eq!(f.vouched_by(leader), None);
        // A takeover re-vouches for the new leader, which is their author only once a
        // frame of its own says so.
        f.note(leader, 0, 2, 0, 0, &entries(&[(2, b"c")])).unwrap();
        f.on_takeover(follower, 1, 0);
        assert_eq!(f.vouched_by(leader), None);
        assert_eq!(f.vouched_by(follower), None);
        f.note(follower, 1, 2, 1, 0, &entries(&[(3, b"d")]))
            .unwrap();
        assert_eq!(f.vouched_by(follower), Some(1));
    }

    #[test]
    fn a_takeover_is_answered_and_fences_what_it_did_not_see() {
        let mut f = Foreign::default();
        f.note(
            ReplicaId::new(0, 0),
            0,
            0,
            0,
            0,
            &entries(&[(0, b"a"), (1, b"b")]),
        )
        .unwrap();
        let answer = f.on_takeover(ReplicaId::new(0, 1), 1, 1);
        assert_eq!(answer, entries(&[(1, b"b")]));
        assert!(f.is_fenced(ReplicaId::new(0, 0), 0));
        assert!(!f.is_fenced(ReplicaId::new(0, 1), 1));
        assert_eq!(
            f.carried(),
            vec![(0, 1, 0, entries(&[(0, b"a"), (1, b"b")]))],
            "vouched for by the new leader now"
        );
        assert_eq!(
            f.note(ReplicaId::new(0, 0), 0, 0, 0, 0, &Bytes::new()),
            Err(Refused::Stale),
            "the old leader is fenced"
        );
        // An old term's choice that was reported may come again, one that was not
        // may not; the new leader's choices may.
        let other = ReplicaId::new(3, 0);
        assert_eq!(f.note(other, 0, 0, 0, 0, &entries(&[(1, b"b")])), Ok(()));
        assert_eq!(
            f.note(other, 0, 0, 0, 0, &entries(&[(2, b"c")])),
            Err(Refused::Stale)
        );
        assert_eq!(f.note(other, 0, 0, 1, 0, &entries(&[(2, b"d")])), Ok(()));
        assert_eq!(
            f.note(ReplicaId::new(0, 1), 1, 0, 1, 3, &Bytes::new()),
            Ok(())
        );
        assert!(f.is_empty());
    }
}
