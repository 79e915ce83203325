//! MPI message matching at one receiving rank (MPI-3.1 sections 3.5, 3.8): posted
//! receives and probes in posting order, the message each one matches, and the messages
//! that arrived before anyone matched them (the unexpected queue).
//!
//! A message is named by its key, so matching is claiming keys: the k-th receive that
//! matches stream (comm, tag, src) claims seq k. A receive is *resolved* once its key is
//! known. A specific receive resolves as soon as no earlier unresolved receive could match
//! the same messages (receives match in the order posted). A receive with `ANY_TAG` from
//! one source takes the earliest unclaimed message by order number, which every replica
//! computes alike. A receive with `ANY_SOURCE` needs a choice that must be equal in every
//! replica of the rank: the caller's `Chooser` says whether this replica makes it now
//! (then it takes the first candidate that arrived) or supplies the one a sibling
//! recorded. Owns no I/O and no replica choice: what must be fetched comes out as `Need`s.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Key, Map, Set, Want};

/// One message that had arrived and was not yet received by the program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreceived {
    /// Key fields: communicator, tag, source, destination, sequence number.
    pub key: (u32, i32, u32, u32, u64),
    /// Its order number among the sends from its source on its communicator.
    pub order: u64,
    /// Its bytes.
    pub payload: Vec<u8>,
}

/// Handle of a posted receive or probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecvId(pub u64);

/// Which sources a receive accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// One rank (world rank).
    Rank(u32),
    /// Any of these ranks (the communicator's members, as world ranks): `ANY_SOURCE`.
    Any(Arc<[u32]>),
}

/// Which tags a receive accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSel {
    /// Exactly this tag.
    Tag(i32),
    /// Any tag: `ANY_TAG`.
    Any,
}

/// What a receive or probe matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvSpec {
    /// Communicator context id.
    pub comm: u32,
    /// Accepted sources.
    pub src: Source,
    /// Accepted tags.
    pub tag: TagSel,
}

impl RecvSpec {
    /// A receive from one source with one tag.
    pub fn exact(comm: u32, src: u32, tag: i32) -> RecvSpec {
        RecvSpec {
            comm,
            src: Source::Rank(src),
            tag: TagSel::Tag(tag),
        }
    }

    /// True for `ANY_SOURCE`: the match depends on timing and must be coordinated.
    pub fn any_source(&self) -> bool {
        matches!(self.src, Source::Any(_))
    }

    /// The ranks it accepts.
    pub fn ranks(&self) -> &[u32] {
        match &self.src {
            Source::Rank(r) => std::slice::from_ref(r),
            Source::Any(m) => m,
        }
    }

    fn exact_stream(&self) -> Option<(u32, i32)> {
        match (&self.src, self.tag) {
            (Source::Rank(s), TagSel::Tag(t)) => Some((*s, t)),
            _ => None,
        }
    }

    /// Whether some message could match both.
    fn overlaps(&self, other: &RecvSpec) -> bool {
        let tags = match (self.tag, other.tag) {
            (TagSel::Tag(a), TagSel::Tag(b)) => a == b,
            _ => true,
        };
        let srcs = match (&self.src, &other.src) {
            (Source::Rank(a), Source::Rank(b)) => a == b,
            (Source::Rank(a), Source::Any(m)) | (Source::Any(m), Source::Rank(a)) => m.contains(a),
            (Source::Any(_), Source::Any(_)) => true,
        };
        self.comm == other.comm && tags && srcs
    }
}

/// How a posted operation treats the message it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Claims the message (MPI_Recv, MPI_Irecv, MPI_Mprobe).
    Receive,
    /// Waits for a matching message and leaves it unclaimed (MPI_Probe).
    Probe,
    /// Reports at once whether a matching message is here, leaving it unclaimed
    /// (MPI_Iprobe).
    ImmediateProbe,
}

/// A choice for one coordinated operation: the (source, tag) it matched, or nothing (an
/// immediate probe that found no message).
pub type Choice = Option<(u32, i32)>;

/// Where choices come from (see `pull::decision`).
pub trait Chooser {
    /// The choice recorded for `slot`, if this replica knows it.
    fn recorded(&mut self, slot: u64) -> Option<Choice>;
    /// Whether this replica makes the choice for `slot` now (it must then `record` it).
    fn may_choose(&mut self, slot: u64) -> bool;
    /// Whether the leader cancelled the receive of `slot` before choosing its match: the
    /// receive then stays unresolved (fetching nothing) until this replica's application
    /// cancels it too (see `Matcher::cancel`).
    fn cancelled(&mut self, _slot: u64) -> bool {
        false
    }
    /// Records this replica's choice for `slot`.
    fn record(&mut self, slot: u64, choice: Choice);
}

/// Something the matcher needs from the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Pull this message. `needed`: a resolved receive waits for it; otherwise it is a
    /// candidate of an unresolved wildcard, fetched ahead.
    Message {
        /// What to pull.
        want: Want,
        /// A receive waits for exactly this.
        needed: bool,
    },
    /// Fetch the choice recorded for `slot` from the sibling that makes them.
    Choice(u64),
}

/// What a completed receive or probe yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matched {
    /// The message it matched.
    Message {
        /// Its key (source and tag for the status).
        key: Key,
        /// Its bytes (shared with the unexpected queue for a probe).
        payload: Bytes,
    },
    /// An immediate probe found no message.
    Nothing,
}

#[derive(Debug)]
struct Posted {
    id: RecvId,
    spec: RecvSpec,
    mode: Mode,
    slot: Option<u64>,
}

#[derive(Debug)]
struct Arrival {
    order: u64,
    payload: Bytes,
    /// Arrival count, for "first come" among candidates.
    nth: u64,
}

#[derive(Debug, Default)]
struct Waiters {
    receive: Option<RecvId>,
    probes: Vec<RecvId>,
}

/// A finished operation: its result, and (comm, src) when it was a receive from one
/// source with `ANY_TAG` (the next such receive will want that source's next order).
pub type Finished<E> = (Result<Matched, E>, Option<(u32, u32)>);

/// Matching state of one replica; `E` is the error a failed receive completes with.
#[derive(Debug)]
pub struct Matcher<E> {
    me: u32,
    /// Posted, not resolved yet, in posting order.
    unresolved: VecDeque<Posted>,
    /// Next seq to claim per (comm, tag, src).
    claimed: Map<(u32, i32, u32), u64>,
    /// Arrived and unclaimed.
    arrived: Map<Key, Arrival>,
    /// Arrived and unclaimed, per (comm, src), by order number.
    by_order: Map<(u32, u32), BTreeMap<u64, Key>>,
    /// Resolved, waiting for their message.
    waiting: Map<Key, Waiters>,
    /// The key each waiting operation resolved to.
    keys: Map<RecvId, Key>,
    done: Map<RecvId, Done<E>>,
    /// Resolved receives from one source with `ANY_TAG`: (comm, src).
    any_tag: Map<RecvId, (u32, u32)>,
    detached: Set<RecvId>,
    /// Coordination slot of each posted receive that has one, until it is taken.
    slots: Map<RecvId, u64>,
    next_id: u64,
    arrivals: u64,
}

/// A completed operation, until it is taken.
#[derive(Debug)]
struct Done<E> {
    result: Result<Matched, E>,
    /// The `ANY_TAG` source (comm, src) of a receive that had one.
    any_tag: Option<(u32, u32)>,
    /// The order number of the message a receive got: a cancel may have to put it back.
    order: Option<u64>,
}

/// A cancel this replica cannot carry out as the replica that decided it did (see
/// `Matcher::cancel`): following it would make the replicas diverge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CancelDiverged;

impl<E: Clone> Matcher<E> {
    /// Matching for rank `me`.
    pub fn new(me: u32) -> Matcher<E> {
        Matcher {
            me,
            unresolved: VecDeque::new(),
            claimed: Map::default(),
            arrived: Map::default(),
            by_order: Map::default(),
            waiting: Map::default(),
            keys: Map::default(),
            done: Map::default(),
            any_tag: Map::default(),
            detached: Set::default(),
            slots: Map::default(),
            next_id: 1,
            arrivals: 0,
        }
    }

    /// Posts a receive or probe; `slot` is its coordination slot when its match must be
    /// equal in every replica. Call `resolve` afterwards.
    pub fn post(&mut self, spec: RecvSpec, mode: Mode, slot: Option<u64>) -> RecvId {
        let id = RecvId(self.next_id);
        self.next_id += 1;
        if let (Some(s), Mode::Receive) = (slot, mode) {
            self.slots.insert(id, s);
        }
        self.unresolved.push_back(Posted {
            id,
            spec,
            mode,
            slot,
        });
        id
    }

    /// Whether nothing is posted, waiting or finished and not taken: a point where a
    /// checkpoint may be taken.
    pub fn is_quiet(&self) -> bool {
        self.unresolved.is_empty()
            && self.waiting.is_empty()
            && self.keys.is_empty()
            && self.done.is_empty()
    }

    /// Receive progress and the messages arrived but not received, for a snapshot.
    #[allow(clippy::type_complexity)]
    pub fn checkpoint(&self) -> (Vec<((u32, i32, u32), u64)>, Vec<Unreceived>) {
        let mut claimed: Vec<_> = self.claimed.iter().map(|(k, v)| (*k, *v)).collect();
        claimed.sort_unstable();
        let mut arrived: Vec<(u64, Unreceived)> = self
            .arrived
            .iter()
            .map(|(k, a)| {
                (
                    a.nth,
                    Unreceived {
                        key: (k.comm, k.tag, k.src, k.dst, k.seq),
                        order: a.order,
                        payload: a.payload.to_vec(),
                    },
                )
            })
            .collect();
        arrived.sort_unstable_by_key(|(nth, _)| *nth);
        (claimed, arrived.into_iter().map(|(_, u)| u).collect())
    }

    /// Restores what `checkpoint` returned into a quiet matcher.
    pub fn restore(&mut self, claimed: &[((u32, i32, u32), u64)], unreceived: &[Unreceived]) {
        self.claimed = claimed.iter().copied().collect();
        for u in unreceived {
            let (comm, tag, src, dst, seq) = u.key;
            let key = Key {
                comm,
                tag,
                src,
                dst,
                seq,
            };
            self.arrivals += 1;
            self.by_order
                .entry((comm, src))
                .or_default()
                .insert(u.order, key);
            self.arrived.insert(
                key,
                Arrival {
                    order: u.order,
                    payload: Bytes::copy_from_slice(&u.payload),
                    nth: self.arrivals,
                },
            );
        }
    }

    /// True while some posted operation is not resolved.
    pub fn has_unresolved(&self) -> bool {
        !self.unresolved.is_empty()
    }

    /// Resolves what can be resolved, in posting order; `watermark(comm, src)` is the
    /// first order number from src not yet arrived here. Appends what must be fetched.
    pub fn resolve(
        &mut self,
        watermark: &dyn Fn(u32, u32) -> u64,
        chooser: &mut dyn Chooser,
        needs: &mut Vec<Need>,
    ) {
        let mut i = 0;
        while i < self.unresolved.len() {
            let p = &self.unresolved[i];
            let blocked = self
                .unresolved
                .iter()
                .take(i)
                .any(|e| e.spec.overlaps(&p.spec));
            let choice = if blocked {
                None
            } else {
                match (p.spec.exact_stream(), p.slot) {
                    // An immediate probe reports what is here now, even on one stream.
                    (Some(stream), None) if p.mode != Mode::ImmediateProbe => Some(Some(stream)),
                    _ => self.choose(p, watermark, chooser, needs),
                }
            };
            match choice {
                Some(c) => {
                    if let Some(p) = self.unresolved.remove(i) {
                        self.settle(p, c, needs);
                    }
                }
                None => i += 1,
            }
        }
    }

    fn choose(
        &self,
        p: &Posted,
        watermark: &dyn Fn(u32, u32) -> u64,
        chooser: &mut dyn Chooser,
        needs: &mut Vec<Need>,
    ) -> Option<Choice> {
        if let Some(slot) = p.slot {
            if chooser.cancelled(slot) {
                return None;
            }
            if let Some(c) = chooser.recorded(slot) {
                return Some(c);
            }
            if !chooser.may_choose(slot) {
                needs.push(Need::Choice(slot));
                // Fetch the candidates meanwhile: the chosen one is usually among them.
                self.first_candidate(p, watermark, needs);
                return None;
            }
        }
        let c = match self.first_candidate(p, watermark, needs) {
            Some(c) => Some(c),
            None if p.mode == Mode::ImmediateProbe => None,
            None => return None,
        };
        if let Some(slot) = p.slot {
            chooser.record(slot, c);
        }
        Some(c)
    }

    /// The candidate that arrived first, as (src, tag); asks for the missing ones.
    fn first_candidate(
        &self,
        p: &Posted,
        watermark: &dyn Fn(u32, u32) -> u64,
        needs: &mut Vec<Need>,
    ) -> Option<(u32, i32)> {
        let comm = p.spec.comm;
        // A receive from one source with ANY_TAG must see that source's messages.
        let needed = !p.spec.any_source();
        let mut best: Option<(u64, u32, i32)> = None;
        let mut consider = |nth: u64, src: u32, tag: i32| {
            if best.is_none_or(|(n, ..)| nth < n) {
                best = Some((nth, src, tag));
            }
        };
        for &src in p.spec.ranks() {
            match p.spec.tag {
                TagSel::Tag(tag) => {
                    let key = self.next_key(comm, tag, src);
                    match self.arrived.get(&key) {
                        Some(a) => consider(a.nth, src, tag),
                        None => needs.push(Need::Message {
                            want: Want::Key(key),
                            needed,
                        }),
                    }
                }
                TagSel::Any => {
                    // Every order below the watermark arrived, so the earliest unclaimed
                    // arrival below it is the earliest unclaimed message of the source.
                    let below = watermark(comm, src);
                    let first = self
                        .by_order
                        .get(&(comm, src))
                        .and_then(|m| m.range(..below).next())
                        .and_then(|(_, k)| self.arrived.get(k).map(|a| (a.nth, k.tag)));
                    match first {
                        Some((nth, tag)) => consider(nth, src, tag),
                        None => needs.push(Need::Message {
                            want: Want::Order {
                                comm,
                                src,
                                dst: self.me,
                                order: below,
                            },
                            needed,
                        }),
                    }
                }
            }
        }
        best.map(|(_, src, tag)| (src, tag))
    }

    fn next_key(&self, comm: u32, tag: i32, src: u32) -> Key {
        Key {
            comm,
            tag,
            src,
            dst: self.me,
            seq: self.claimed.get(&(comm, tag, src)).copied().unwrap_or(0),
        }
    }

    fn settle(&mut self, p: Posted, choice: Choice, needs: &mut Vec<Need>) {
        let Some((src, tag)) = choice else {
            self.finish(p.id, Ok(Matched::Nothing));
            return;
        };
        let key = self.next_key(p.spec.comm, tag, src);
        let claims = p.mode == Mode::Receive;
        if let (true, Source::Rank(_), TagSel::Any) = (claims, &p.spec.src, p.spec.tag) {
            self.any_tag.insert(p.id, (p.spec.comm, src));
        }
        if claims {
            *self.claimed.entry((key.comm, tag, src)).or_insert(0) += 1;
        }
        if claims {
            if let Some(a) = self.arrived.remove(&key) {
                self.forget_order(&key, a.order);
                self.finish_at(
                    p.id,
                    Ok(Matched::Message {
                        key,
                        payload: a.payload,
                    }),
                    Some(a.order),
                );
                return;
            }
        } else if let Some(a) = self.arrived.get(&key) {
            let payload = a.payload.clone();
            self.finish(p.id, Ok(Matched::Message { key, payload }));
            return;
        }
        self.keys.insert(p.id, key);
        let w = self.waiting.entry(key).or_default();
        if claims {
            w.receive = Some(p.id);
        } else {
            w.probes.push(p.id);
        }
        needs.push(Need::Message {
            want: Want::Key(key),
            needed: true,
        });
    }

    fn forget_order(&mut self, key: &Key, order: u64) {
        if let Some(m) = self.by_order.get_mut(&(key.comm, key.src)) {
            m.remove(&order);
            if m.is_empty() {
                self.by_order.remove(&(key.comm, key.src));
            }
        }
    }

    fn finish(&mut self, id: RecvId, r: Result<Matched, E>) {
        self.finish_at(id, r, None);
    }

    /// `finish` of a receive that got the message of order number `order`.
    fn finish_at(&mut self, id: RecvId, result: Result<Matched, E>, order: Option<u64>) {
        self.keys.remove(&id);
        let any_tag = self.any_tag.remove(&id);
        if self.detached.remove(&id) {
            self.slots.remove(&id);
        } else {
            self.done.insert(
                id,
                Done {
                    result,
                    any_tag,
                    order,
                },
            );
        }
    }

    /// A message arrived (each key once): it completes the operations waiting for it, or
    /// joins the unexpected queue. Call `resolve` afterwards if anything is unresolved.
    /// `first_missing` is the first order number from the source that had not arrived
    /// before this message.
    pub fn arrive(&mut self, key: Key, order: u64, payload: Bytes, first_missing: u64) {
        if let Some(w) = self.waiting.remove(&key) {
            for probe in w.probes {
                let payload = payload.clone();
                self.finish(probe, Ok(Matched::Message { key, payload }));
            }
            if let Some(r) = w.receive {
                self.finish_at(r, Ok(Matched::Message { key, payload }), Some(order));
                return;
            }
        }
        // The common untagged receive: the earliest posted operation takes any tag from
        // this source, and this is the source's earliest unclaimed message (everything
        // before it arrived and was claimed). It matches at once, as `resolve` would.
        let takes_it = self.unresolved.front().is_some_and(|p| {
            p.mode == Mode::Receive
                && p.slot.is_none()
                && p.spec.comm == key.comm
                && p.spec.tag == TagSel::Any
                && p.spec.src == Source::Rank(key.src)
        }) && order == first_missing
            && !self.has_unexpected_below(key.comm, key.src, order)
            && self.next_claim(key.comm, key.tag, key.src) == key.seq;
        if takes_it {
            if let Some(p) = self.unresolved.pop_front() {
                *self
                    .claimed
                    .entry((key.comm, key.tag, key.src))
                    .or_insert(0) += 1;
                self.any_tag.insert(p.id, (key.comm, key.src));
                self.finish_at(p.id, Ok(Matched::Message { key, payload }), Some(order));
                return;
            }
        }
        self.arrivals += 1;
        let earlier = self
            .by_order
            .entry((key.comm, key.src))
            .or_default()
            .insert(order, key);
        // Exactly once: the engine hands each order number over once (`Consumed` drops a
        // second copy). (Not so each key: a faulty sender may send one key under two
        // order numbers; the later copy then replaces the earlier.)
        debug_assert!(earlier.is_none(), "order {order} of {key} arrived twice");
        let nth = self.arrivals;
        self.arrived.insert(
            key,
            Arrival {
                order,
                payload,
                nth,
            },
        );
    }

    /// For an unresolved receive from one source with `ANY_TAG` that no other posted
    /// operation competes with: the order number its message will have (the first not
    /// arrived from that source), so it can be recognized on the wire before it matches.
    pub fn sole_order(&self, id: RecvId, watermark: &dyn Fn(u32, u32) -> u64) -> Option<Want> {
        if self.unresolved.len() != 1 {
            return None;
        }
        let p = self.unresolved.front()?;
        let (Source::Rank(src), TagSel::Any, Mode::Receive) = (&p.spec.src, p.spec.tag, p.mode)
        else {
            return None;
        };
        let comm = p.spec.comm;
        let competing = self.waiting.keys().any(|k| k.comm == comm && k.src == *src);
        (p.id == id && !competing).then(|| Want::Order {
            comm,
            src: *src,
            dst: self.me,
            order: watermark(comm, *src),
        })
    }

    /// The key a resolved operation waits for.
    pub fn resolved_key(&self, id: RecvId) -> Option<Key> {
        self.keys.get(&id).copied()
    }

    /// Whether `key` arrived and nobody claimed it yet.
    pub fn is_unexpected(&self, key: &Key) -> bool {
        self.arrived.contains_key(key)
    }

    /// Seq the next receive of (comm, tag, src) will claim.
    pub fn next_claim(&self, comm: u32, tag: i32, src: u32) -> u64 {
        self.next_key(comm, tag, src).seq
    }

    /// Claims the next message of stream (comm, `tag`, src) for a receive that will
    /// not wait for it now (a deferred receive, `Engine::defer`): the next receive of the
    /// stream gets the message after it. `None` while an earlier posted receive that
    /// could match the stream is unresolved (it must claim first, receives match in
    /// posting order).
    pub fn claim(&mut self, comm: u32, tag: i32, src: u32) -> Option<Key> {
        let spec = RecvSpec::exact(comm, src, tag);
        if self.unresolved.iter().any(|p| p.spec.overlaps(&spec)) {
            return None;
        }
        let key = self.next_key(comm, tag, src);
        *self.claimed.entry((comm, tag, src)).or_insert(0) += 1;
        Some(key)
    }

    /// Posts a receive of `key`, a message `claim` claimed: it completes like any
    /// receive (at once when the message is here). Appends what must be fetched.
    pub fn post_claimed(&mut self, key: Key, needs: &mut Vec<Need>) -> RecvId {
        let id = RecvId(self.next_id);
        self.next_id += 1;
        self.receive_key(id, key, needs);
        id
    }

    /// Receive `id` gets message `key`: at once if it arrived, else it waits for it and
    /// `needs` asks for it.
    fn receive_key(&mut self, id: RecvId, key: Key, needs: &mut Vec<Need>) {
        if let Some(a) = self.arrived.remove(&key) {
            self.forget_order(&key, a.order);
            self.finish_at(
                id,
                Ok(Matched::Message {
                    key,
                    payload: a.payload,
                }),
                Some(a.order),
            );
            return;
        }
        self.keys.insert(id, key);
        self.waiting.entry(key).or_default().receive = Some(id);
        needs.push(Need::Message {
            want: Want::Key(key),
            needed: true,
        });
    }

    /// Drops `key`, a message `claim` claimed that its receiver will not take, if it
    /// arrived (it was pulled ahead).
    pub fn drop_claimed(&mut self, key: &Key) {
        if let Some(a) = self.arrived.remove(key) {
            self.forget_order(key, a.order);
        }
    }

    /// Whether `id` completed (`take` would return it).
    #[inline]
    pub fn is_done(&self, id: RecvId) -> bool {
        self.done.contains_key(&id)
    }

    /// The result of a completed operation (once).
    pub fn take(&mut self, id: RecvId) -> Option<Finished<E>> {
        let d = self.done.remove(&id)?;
        self.slots.remove(&id);
        Some((d.result, d.any_tag))
    }

    /// Whether an unclaimed message from `src` on `comm` with order below `bound` is here.
    pub fn has_unexpected_below(&self, comm: u32, src: u32, bound: u64) -> bool {
        self.by_order
            .get(&(comm, src))
            .is_some_and(|m| m.range(..bound).next().is_some())
    }

    /// How many unclaimed messages from `src` on `comm` are here.
    pub fn unexpected_from(&self, comm: u32, src: u32) -> usize {
        self.by_order.get(&(comm, src)).map_or(0, BTreeMap::len)
    }

    /// The caller will not take this result: drop it now or on completion. A receive still
    /// claims its message, in order.
    pub fn detach(&mut self, id: RecvId) {
        if self.done.remove(&id).is_none() {
            self.detached.insert(id);
        } else {
            self.slots.remove(&id);
        }
    }
}

mod cancel;

mod failing;
#[cfg(test)]
mod tests;
