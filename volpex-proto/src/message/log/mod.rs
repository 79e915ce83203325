//! The sender-based message log (VolpexMPI section 3, "buffer management").
//!
//! Every send is appended here and served from here to whichever replica of the
//! destination pulls it. The log is bounded in bytes; when full it evicts the oldest
//! entries that some replica of their destination has already received, and refuses new
//! entries (the caller blocks) rather than evict anything no replica has received.
//! Entries every live replica of their destination has received are dropped at once: no
//! one can ask for them again, and their memory is reused for the next sends. When lost
//! replicas are regenerated (`retaining`), a new incarnation replays its program and asks
//! for them again: they are *retained*, oldest dropped first beyond a bound in bytes,
//! until every live replica of the destination took a checkpoint past them (CHECKPOINTED
//! notices): a new incarnation restored from a checkpoint never asks for what is below
//! it. Log memory is then bounded by the traffic of one checkpoint interval.
//! It owns the per-(comm, tag, dst) seq counters and per-(comm, dst) order numbers, so a
//! lookup can tell "evicted" from "not sent yet". It must never do I/O.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;

use super::{Key, Map};
use crate::limits::LOG_ENTRY_OVERHEAD_BYTES;

mod handover;
mod retained;

use retained::Retained;

/// One logged message. The payload is stored once and shared by every pull of it.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// Message bytes.
    pub payload: Bytes,
    /// Order number among all sends from this rank to the destination on this comm.
    pub order: u64,
    /// Coordinated choices (slots `0..choices`) the sender had made or followed before
    /// this send; the message may depend on them (see `pull::decision`).
    pub choices: u64,
    /// When it was logged (the engine's clock; zero when not known).
    pub logged_at: Duration,
    /// Sent synchronously: whoever serves it says so (`FLAG_SYNC`), so that every
    /// receiver replica that claims it tells the sender's replicas (MATCHED).
    pub sync: bool,
    /// The payload is the application's memory, lent to the log (`mark_lent`,
    /// `give_back`): `None` when it is the log's own.
    pub lent: Option<Lend>,
}

/// Until when a payload lent to the log (`LogEntry::lent`) stays the application's
/// memory; it is copied into the log's own if the log still holds it then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lend {
    /// An immediate send's buffer, until its request completes: never retained for a
    /// replay (as an unlogged send is not).
    UntilComplete,
    /// A one-sided target's window memory, until the target changes it (an answer to a
    /// get): retained for a replay like the log's own payload, and copied (from the
    /// entries and the retained ones alike) when given back.
    UntilChanged,
    /// A message no replay asks for again, until its request completes (MPI-IO's
    /// collective write blocks, which a replaying aggregator replica skips): as
    /// `UntilComplete`, never retained, but lent also where replicas regenerate from
    /// their siblings' logs.
    Unreplayed,
}

impl Lend {
    /// Whether an entry lent so is retained for a replay once every live replica of its
    /// destination received it.
    pub fn retained(self) -> bool {
        match self {
            Lend::UntilChanged => true,
            Lend::UntilComplete | Lend::Unreplayed => false,
        }
    }
}

/// The tag of *acknowledgements*: messages without bytes that are the only messages their
/// sender sends their destination on their communicator (a one-sided window's
/// acknowledgements of requests whose answer carries nothing, docs/PROTOCOL.md "Passive
/// target"). Kept out of the log (`SendLog::append_ack`): a pull for one already sent is
/// answered with an empty DATA from the stream's numbering alone (`SendLog::ack_order`),
/// so nothing is stored, evicted or retained for them, and any replica that sent one can
/// answer it however late the pull comes (a failover, a replay). Outside the program's
/// tags (0 to the tag bound); the engine refuses bytes under it.
pub const ACK_TAG: i32 = i32::MIN + 1;

/// Answer to "do you have this key?".
#[derive(Debug)]
pub enum Lookup<'a> {
    /// Logged: serve it.
    Present(&'a LogEntry),
    /// Sent once, since evicted: answer GONE.
    Evicted,
    /// This replica has not made that send yet: park the request.
    NotYetSent,
}

/// The log is full of messages no replica of their destination has received yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogFull {
    /// Bytes in use.
    pub used_bytes: usize,
    /// Bytes the new entry needs.
    pub need_bytes: usize,
}

/// Bounded store of this replica's sent messages.
#[derive(Debug)]
pub struct SendLog {
    bytes_max: usize,
    bytes_used: usize,
    entries: Map<Key, LogEntry>,
    /// Keys in send order, oldest first (eviction order).
    fifo: VecDeque<Key>,
    /// Next seq per (comm, tag, dst).
    seqs: Map<(u32, i32, u32), u64>,
    /// Next order number per (comm, dst).
    orders: Map<(u32, u32), u64>,
    /// Watermark each replica of dst reported, per (comm, dst); `u64::MAX` for a dead one.
    consumed: Map<(u32, u32), Vec<u64>>,
    /// Replicas per rank (length of each watermark vector).
    replicas: usize,
    /// Replicas known dead, per rank: their watermark starts at `u64::MAX`.
    dead: Map<u32, Vec<u32>>,
    /// Keys per (comm, dst) in send (= order) order, for eager eviction.
    by_dst: Map<(u32, u32), VecDeque<(u64, Key)>>,
    evicted_count: u64,
    /// `Some(bound)`: entries every live replica received are retained up to `bound`
    /// bytes for regenerated replicas (see `retaining`); `None`: dropped at once.
    retain_max: Option<usize>,
    /// Entries every live replica of their destination has (they left `entries` and
    /// `by_dst`), kept for a replay, and their bytes.
    retained: Retained,
    retained_bytes: usize,
    /// Checkpoint watermark each replica of dst reported, per (comm, dst): 0 until it
    /// took one, `u64::MAX` for a dead one.
    checkpointed: Map<(u32, u32), Vec<u64>>,
    /// Replicas per rank that are new incarnations catching up: dead for consumption,
    /// but their checkpoint watermark counts (from 0, until they report the snapshot
    /// they restored).
    joining: Map<u32, Vec<u32>>,
}

impl SendLog {
    /// An empty log bounded at `bytes_max`, for destinations with `replicas` replicas.
    pub fn new(bytes_max: usize, replicas: u32) -> Self {
        SendLog {
            bytes_max,
            bytes_used: 0,
            entries: Map::default(),
            fifo: VecDeque::new(),
            seqs: Map::default(),
            orders: Map::default(),
            consumed: Map::default(),
            replicas: replicas.max(1) as usize,
            dead: Map::default(),
            by_dst: Map::default(),
            evicted_count: 0,
            retain_max: None,
            retained: Retained::default(),
            retained_bytes: 0,
            checkpointed: Map::default(),
            joining: Map::default(),
        }
    }

    /// Keeps entries every live replica of their destination received, up to `bytes`
    /// (oldest dropped first), so a regenerated replica can replay its program.
    pub fn retaining(mut self, bytes: usize) -> Self {
        self.retain_max = Some(bytes);
        self
    }

    fn cost(len: usize) -> usize {
        len + LOG_ENTRY_OVERHEAD_BYTES
    }

    /// Appends a message from `src` that may depend on `choices` coordinated choices and
    /// returns its key and order number, or `LogFull` when even after eviction there is
    /// no room. An entry larger than the whole bound is accepted into an empty log, so one
    /// huge message cannot block forever. `now` (the engine's clock) is kept as the
    /// entry's `logged_at`.
    #[allow(clippy::too_many_arguments)]
    pub fn append(
        &mut self,
        comm: u32,
        tag: i32,
        src: u32,
        dst: u32,
        payload: Bytes,
        choices: u64,
        now: Duration,
    ) -> Result<(Key, u64), LogFull> {
        let need = Self::cost(payload.len());
        if self.bytes_used + need > self.bytes_max && !self.is_empty() {
            self.evict_for(need);
            if self.bytes_used + need > self.bytes_max && !self.is_empty() {
                return Err(LogFull {
                    used_bytes: self.bytes_used,
                    need_bytes: need,
                });
            }
        }
        let seq_slot = self.seqs.entry((comm, tag, dst)).or_insert(0);
        let key = Key {
            comm,
            tag,
            src,
            dst,
            seq: *seq_slot,
        };
        *seq_slot += 1;
        let order_slot = self.orders.entry((comm, dst)).or_insert(0);
        let order = *order_slot;
        *order_slot += 1;
        self.bytes_used += need;
        let earlier = self.entries.insert(
            key,
            LogEntry {
                payload,
                order,
                choices,
                logged_at: now,
                sync: false,
                lent: None,
            },
        );
        debug_assert!(earlier.is_none(), "{key} logged twice");
        // Over the bound only with one entry alone (a message larger than the log).
        debug_assert!(
            self.bytes_used <= self.bytes_max || self.entries.len() + self.retained.len() == 1,
            "log over its bound: {} of {} bytes in {} entries",
            self.bytes_used,
            self.bytes_max,
            self.entries.len()
        );
        self.fifo.push_back(key);
        let queue = self.by_dst.entry((comm, dst)).or_default();
        debug_assert!(
            queue.back().is_none_or(|&(o, _)| o < order),
            "order numbers to {dst} on {comm} not increasing"
        );
        queue.push_back((order, key));
        Ok((key, order))
    }

    /// Takes the key and order number of the next acknowledgement (`ACK_TAG`) from `src`
    /// to `dst` on `comm` without keeping anything, when every message sent to `dst` on
    /// `comm` so far was an acknowledgement (so a message's order number is its seq);
    /// `None` otherwise (the caller logs it as any message).
    pub fn append_ack(&mut self, comm: u32, src: u32, dst: u32) -> Option<(Key, u64)> {
        let (key, order) = self.peek_next(comm, ACK_TAG, src, dst);
        (key.seq == order).then(|| self.append_unlogged(comm, ACK_TAG, src, dst))
    }

    /// The order number of acknowledgement `key` (`ACK_TAG`) if it was sent and kept out
    /// of the log (`append_ack`): every message to its destination on its communicator
    /// was an acknowledgement, so its order number is its seq.
    pub fn ack_order(&self, key: &Key) -> Option<u64> {
        let seqs = self.seqs.get(&(key.comm, ACK_TAG, key.dst)).copied()?;
        (key.tag == ACK_TAG && key.seq < seqs && self.sent_to(key.comm, key.dst) == seqs)
            .then_some(key.seq)
    }

    /// Takes the key and order number of a message every live replica of `dst` already
    /// has, without keeping it: lookups answer `Evicted`.
    pub fn append_unlogged(&mut self, comm: u32, tag: i32, src: u32, dst: u32) -> (Key, u64) {
        let (key, order) = self.peek_next(comm, tag, src, dst);
        self.seqs.insert((comm, tag, dst), key.seq + 1);
        self.orders.insert((comm, dst), order + 1);
        (key, order)
    }

    /// Whether every replica of `dst` reported a watermark past `order` on `comm` (a dead
    /// one counts as past everything).
    pub fn delivered(&self, comm: u32, dst: u32, order: u64) -> bool {
        let dead = self.dead.get(&dst);
        match self.consumed.get(&(comm, dst)) {
            Some(marks) => marks.iter().all(|&w| w > order),
            None => (0..self.replicas as u32).all(|k| dead.is_some_and(|d| d.contains(&k))),
        }
    }

    /// Marks logged message `key` as sent synchronously (`LogEntry::sync`).
    pub fn mark_synchronous(&mut self, key: &Key) {
        if let Some(e) = self.entries.get_mut(key) {
            e.sync = true;
        } else if let Some(e) = self.retained.get_mut(key) {
            e.sync = true;
        }
    }

    /// Marks logged message `key` as lent (`LogEntry::lent`) until `lend`: its payload is
    /// memory the application gets back then (`give_back`).
    pub fn mark_lent(&mut self, key: &Key, lend: Lend) {
        if let Some(e) = self.entries.get_mut(key) {
            e.lent = Some(lend);
        }
    }

    /// Whether the log still holds lent message `key`: not yet received by every live
    /// replica of its destination, nor evicted; or, lent `UntilChanged`, retained.
    pub fn holds_lent(&self, key: &Key) -> bool {
        match self.entries.get(key) {
            Some(e) => e.lent.is_some(),
            None => self
                .retained
                .get(key)
                .is_some_and(|e| e.lent == Some(Lend::UntilChanged)),
        }
    }

    /// The entry of lent message `key`, if the log holds it (`holds_lent`).
    fn lent_entry(&mut self, key: &Key) -> Option<&mut LogEntry> {
        match self.entries.get_mut(key) {
            Some(e) => e.lent.is_some().then_some(e),
            None => self
                .retained
                .get_mut(key)
                .filter(|e| e.lent == Some(Lend::UntilChanged)),
        }
    }

    /// The loan of message `key` ends (the send's request completes, or the window
    /// changes): if the log still holds it, its payload is copied into memory of the
    /// log's own (true); a lent entry every live replica received was dropped then
    /// (never retained, unless lent `UntilChanged`), so nothing is left to copy.
    pub fn give_back(&mut self, key: &Key) -> bool {
        match self.lent_entry(key) {
            Some(e) => {
                e.payload = super::pool::copy(&e.payload);
                e.lent = None;
                true
            }
            None => false,
        }
    }

    /// Copies every lent payload the log still holds into memory of its own (the
    /// program finalized: a request it never completed must not leave the log reading its
    /// memory while the log serves on). The number copied.
    pub fn give_back_all(&mut self) -> usize {
        let mut n = 0;
        let retained = self.retained.iter_mut().map(|(_, e)| e);
        for e in self
            .entries
            .values_mut()
            .chain(retained)
            .filter(|e| e.lent.is_some())
        {
            e.payload = super::pool::copy(&e.payload);
            e.lent = None;
            n += 1;
        }
        n
    }

    /// Whether some live replica of `dst` reported having the message with `order` on
    /// `comm`.
    pub fn received_by_some(&self, comm: u32, dst: u32, order: u64) -> bool {
        self.consumed
            .get(&(comm, dst))
            .is_some_and(|marks| marks.iter().any(|&w| w != u64::MAX && w > order))
    }

    /// The key and order number the next `append` for (comm, tag, dst) will get.
    pub fn peek_next(&self, comm: u32, tag: i32, src: u32, dst: u32) -> (Key, u64) {
        let seq = self.seqs.get(&(comm, tag, dst)).copied().unwrap_or(0);
        let order = self.orders.get(&(comm, dst)).copied().unwrap_or(0);
        (
            Key {
                comm,
                tag,
                src,
                dst,
                seq,
            },
            order,
        )
    }

    /// Looks a key up.
    pub fn lookup(&self, key: &Key) -> Lookup<'_> {
        let next = self
            .seqs
            .get(&(key.comm, key.tag, key.dst))
            .copied()
            .unwrap_or(0);
        if key.seq >= next {
            return Lookup::NotYetSent;
        }
        match self.entries.get(key).or_else(|| self.retained.get(key)) {
            Some(e) => Lookup::Present(e),
            None => Lookup::Evicted,
        }
    }

    /// The key of the `order`-th message to `dst` on `comm`, whatever its tag, while its
    /// entry (or the record of its eviction under memory pressure) is still here.
    pub fn key_at_order(&self, comm: u32, dst: u32, order: u64) -> Option<Key> {
        if order >= self.sent_to(comm, dst) {
            return None;
        }
        let live = self.by_dst.get(&(comm, dst)).and_then(|q| {
            if q.front()?.0 > order {
                return None;
            }
            let i = q.binary_search_by_key(&order, |&(o, _)| o).ok()?;
            q.get(i).map(|(_, k)| *k)
        });
        live.or_else(|| self.retained.key_at_order(comm, dst, order))
    }

    /// Number of messages this replica has sent to `dst` on `comm` (its progress).
    pub fn sent_to(&self, comm: u32, dst: u32) -> u64 {
        self.orders.get(&(comm, dst)).copied().unwrap_or(0)
    }

    /// Records that replica `replica` of `dst` has received every message below
    /// `watermark` on `comm`; drops what every live replica of `dst` now has.
    pub fn note_consumed(&mut self, comm: u32, dst: u32, replica: u32, watermark: u64) {
        let marks = self.marks(comm, dst);
        match marks.get_mut(replica as usize) {
            Some(slot) if watermark > *slot => *slot = watermark,
            // Nothing moved: nothing new to drop.
            Some(_) | None => return,
        }
        self.drop_fully_consumed(comm, dst);
    }

    /// A new incarnation of replica `replica` of `dst` replays the program: it counts as
    /// having everything until it caught up (`note_caught_up`), so it holds nothing back.
    pub fn note_joining(&mut self, dst: u32, replica: u32) {
        self.note_dead(dst, replica);
        let list = self.joining.entry(dst).or_default();
        if !list.contains(&replica) {
            list.push(replica);
        }
        for ((_, d), marks) in self.checkpointed.iter_mut() {
            if *d == dst {
                if let Some(m) = marks.get_mut(replica as usize) {
                    *m = 0;
                }
            }
        }
    }

    /// Replica `replica` of `dst` took a checkpoint (or restored one) when it had every
    /// message below `watermark` on `comm`: what every replica of dst has and every
    /// replica's checkpoint is past need not be kept for a replay.
    pub fn note_checkpoint(&mut self, comm: u32, dst: u32, replica: u32, watermark: u64) {
        let marks = self.checkpoint_marks(comm, dst);
        match marks.get_mut(replica as usize) {
            Some(slot) if *slot != u64::MAX && watermark > *slot => *slot = watermark,
            Some(_) | None => return,
        }
        self.release_checkpointed(comm, dst);
    }

    /// Drops the retained entries to dst on `comm` below every replica's checkpoint.
    fn release_checkpointed(&mut self, comm: u32, dst: u32) {
        let below = self.checkpoint_floor(comm, dst);
        while self
            .retained
            .front(comm, dst)
            .is_some_and(|(_, e)| e.order < below)
        {
            if let Some((_, e)) = self.retained.pop_front(comm, dst) {
                self.drop_retained(e);
            }
        }
    }

    /// Frees a retained entry that left `retained`.
    fn drop_retained(&mut self, e: LogEntry) {
        let cost = Self::cost(e.payload.len());
        self.bytes_used -= cost;
        self.retained_bytes = self.retained_bytes.saturating_sub(cost);
        self.evicted_count += 1;
        super::pool::recycle(e.payload);
    }

    fn checkpoint_marks(&mut self, comm: u32, dst: u32) -> &mut Vec<u64> {
        let replicas = self.replicas;
        let (dead, joining) = (self.dead.get(&dst), self.joining.get(&dst));
        self.checkpointed.entry((comm, dst)).or_insert_with(|| {
            (0..replicas as u32)
                .map(|k| {
                    let gone = dead.is_some_and(|d| d.contains(&k))
                        && !joining.is_some_and(|j| j.contains(&k));
                    if gone {
                        u64::MAX
                    } else {
                        0
                    }
                })
                .collect()
        })
    }

    /// Every replica of dst that may still be regenerated from its checkpoint is past
    /// this order number on `comm`.
    fn checkpoint_floor(&self, comm: u32, dst: u32) -> u64 {
        match self.checkpointed.get(&(comm, dst)) {
            Some(m) => m.iter().copied().min().unwrap_or(0),
            None => 0,
        }
    }

    /// The new incarnation of replica `replica` of `dst` caught up: from now on entries
    /// wait for its watermarks like any live replica's (starting from nothing: its
    /// CONSUMED reports raise them). What was released meanwhile stays retained.
    pub fn note_caught_up(&mut self, dst: u32, replica: u32) {
        let Some(list) = self.dead.get_mut(&dst) else {
            return;
        };
        let before = list.len();
        list.retain(|&k| k != replica);
        if list.len() == before {
            return;
        }
        if let Some(j) = self.joining.get_mut(&dst) {
            j.retain(|&k| k != replica);
        }
        for ((_, d), marks) in self.consumed.iter_mut() {
            if *d == dst {
                if let Some(m) = marks.get_mut(replica as usize) {
                    *m = 0;
                }
            }
        }
    }

    /// Replica `replica` of `dst` is dead: it will never ask for anything again.
    pub fn note_dead(&mut self, dst: u32, replica: u32) {
        let list = self.dead.entry(dst).or_default();
        if list.contains(&replica) {
            return;
        }
        list.push(replica);
        if let Some(j) = self.joining.get_mut(&dst) {
            j.retain(|&k| k != replica);
        }
        let comms: Vec<u32> = self
            .consumed
            .keys()
            .filter(|(_, d)| *d == dst)
            .map(|(c, _)| *c)
            .collect();
        for comm in comms {
            self.note_consumed(comm, dst, replica, u64::MAX);
        }
        // Its checkpoint no longer holds anything back, from the next report on; not at
        // once: what it had not consumed stays retained above it, for a new incarnation
        // announced right after may restore from it (a handover at one replica).
        for ((_, d), marks) in self.checkpointed.iter_mut() {
            if *d == dst {
                if let Some(m) = marks.get_mut(replica as usize) {
                    *m = u64::MAX;
                }
            }
        }
    }

    fn marks(&mut self, comm: u32, dst: u32) -> &mut Vec<u64> {
        let replicas = self.replicas;
        let dead = self.dead.get(&dst);
        self.consumed.entry((comm, dst)).or_insert_with(|| {
            (0..replicas)
                .map(|k| {
                    if dead.is_some_and(|d| d.contains(&(k as u32))) {
                        u64::MAX
                    } else {
                        0
                    }
                })
                .collect()
        })
    }

    fn drop_fully_consumed(&mut self, comm: u32, dst: u32) {
        let all = self
            .consumed
            .get(&(comm, dst))
            .and_then(|m| m.iter().min().copied())
            .unwrap_or(0);
        let floor = match self.retain_max {
            Some(_) => self.checkpoint_floor(comm, dst),
            None => u64::MAX,
        };
        let Some(q) = self.by_dst.get_mut(&(comm, dst)) else {
            return;
        };
        while let Some(&(order, key)) = q.front() {
            if order >= all {
                break;
            }
            q.pop_front();
            let Some(e) = self.entries.remove(&key) else {
                continue;
            };
            // A lent payload is the application's memory: kept only until its request
            // completes, so it is not retained for a replay (as an unlogged send is not).
            if self.retain_max.is_some() && order >= floor && e.lent.is_none_or(Lend::retained) {
                self.retained_bytes += Self::cost(e.payload.len());
                self.retained.push(key, e);
            } else {
                self.bytes_used -= Self::cost(e.payload.len());
                self.evicted_count += 1;
                super::pool::recycle(e.payload);
            }
        }
        self.trim_retained();
        // Keys of dropped entries linger in the eviction queue; compact it now and then.
        if self.fifo.len() > 2 * (self.entries.len() + self.retained.len()) + 64 {
            let (entries, retained) = (&self.entries, &self.retained);
            self.fifo
                .retain(|k| entries.contains_key(k) || retained.get(k).is_some());
        }
    }

    /// Drops the oldest retained entries beyond the retention bound.
    fn trim_retained(&mut self) {
        debug_assert!(
            self.retained_bytes <= self.bytes_used,
            "retained {} of {} bytes held",
            self.retained_bytes,
            self.bytes_used
        );
        let max = self.retain_max.unwrap_or(0);
        while self.retained_bytes > max {
            let Some((_, e)) = self.retained.pop_oldest() else {
                self.retained_bytes = 0;
                break;
            };
            self.drop_retained(e);
        }
    }

    /// The numbering state: next seq per (comm, tag, dst) and next order per (comm, dst).
    #[allow(clippy::type_complexity)]
    pub fn progress(&self) -> (Vec<((u32, i32, u32), u64)>, Vec<((u32, u32), u64)>) {
        let mut seqs: Vec<_> = self.seqs.iter().map(|(k, v)| (*k, *v)).collect();
        let mut orders: Vec<_> = self.orders.iter().map(|(k, v)| (*k, *v)).collect();
        seqs.sort_unstable();
        orders.sort_unstable();
        (seqs, orders)
    }

    /// Continues the numbering from a snapshot's `progress`; everything below reads as
    /// evicted (sent by the incarnation the snapshot came from).
    pub fn restore_progress(
        &mut self,
        seqs: &[((u32, i32, u32), u64)],
        orders: &[((u32, u32), u64)],
    ) {
        self.seqs = seqs.iter().copied().collect();
        self.orders = orders.iter().copied().collect();
    }

    /// Bytes of entries retained for regenerated replicas.
    pub fn retained_bytes(&self) -> usize {
        self.retained_bytes
    }

    /// Some replica of dst has every message below the highest reported watermark.
    fn evictable(&self, key: &Key, entry: &LogEntry) -> bool {
        let any = self
            .consumed
            .get(&(key.comm, key.dst))
            .and_then(|m| m.iter().filter(|w| **w != u64::MAX).max().copied())
            .unwrap_or(0);
        entry.order < any
    }

    /// Evicts oldest-first among entries some destination replica has received, until
    /// `need` more bytes fit or nothing more may go.
    fn evict_for(&mut self, need: usize) {
        let mut kept = VecDeque::with_capacity(self.fifo.len());
        while let Some(key) = self.fifo.pop_front() {
            if self.bytes_used + need <= self.bytes_max {
                kept.push_back(key);
                kept.extend(self.fifo.drain(..));
                break;
            }
            // A retained entry is the oldest of its stream when its key comes up here
            // (both in order).
            let retained = match self.retained.front(key.comm, key.dst) {
                Some((k, e)) if *k == key => Some(self.evictable(&key, e)),
                Some(_) | None => None,
            };
            match retained {
                Some(true) => {
                    if let Some((_, e)) = self.retained.pop_front(key.comm, key.dst) {
                        self.drop_retained(e);
                    }
                    continue;
                }
                Some(false) => {
                    kept.push_back(key);
                    continue;
                }
                None => {}
            }
            let evict = match self.entries.get(&key) {
                Some(e) => self.evictable(&key, e),
                None => true,
            };
            if evict {
                if let Some(e) = self.entries.remove(&key) {
                    self.bytes_used -= Self::cost(e.payload.len());
                    self.evicted_count += 1;
                }
            } else {
                kept.push_back(key);
            }
        }
        self.fifo = kept;
    }

    /// Whether `copies` entries of `len` payload bytes each would be accepted now (after
    /// eviction). One entry is always accepted into an empty log; more only if they fit
    /// (see `could_hold`).
    pub fn has_room_for(&mut self, len: usize, copies: usize) -> bool {
        let need = Self::cost(len) * copies;
        if (copies == 1 && self.is_empty()) || self.bytes_used + need <= self.bytes_max {
            return true;
        }
        self.evict_for(need);
        self.bytes_used + need <= self.bytes_max
    }

    /// Whether `copies` entries of `len` payload bytes each fit in the log at all.
    pub fn could_hold(&self, len: usize, copies: usize) -> bool {
        Self::cost(len) * copies <= self.bytes_max
    }

    /// Whether no entry is held (live or retained).
    fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.retained.len() == 0
    }

    /// Bytes currently held.
    pub fn used_bytes(&self) -> usize {
        self.bytes_used
    }

    /// Entries evicted so far.
    pub fn evicted_count(&self) -> u64 {
        self.evicted_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(n: usize) -> Bytes {
        Bytes::from(vec![7u8; n])
    }

    /// Acknowledgements stay out of the log and are known by their numbering alone
    /// while every message of their (comm, dst) is one; a stream holding anything else
    /// logs them (its order numbers are no longer their seqs).
    #[test]
    fn acknowledgements_are_numbered_not_stored_while_their_stream_holds_nothing_else() {
        let mut log = SendLog::new(1 << 20, 2);
        let (k0, o0) = log.append_ack(3, 1, 2).unwrap();
        let (k1, o1) = log.append_ack(3, 1, 2).unwrap();
        assert_eq!((k0.seq, o0, k1.seq, o1), (0, 0, 1, 1));
        assert_eq!(k1.tag, ACK_TAG);
        assert!(matches!(log.lookup(&k1), Lookup::Evicted));
        assert_eq!(log.ack_order(&k1), Some(1));
        assert_eq!(log.ack_order(&Key { seq: 2, ..k1 }), None);
        assert!(log.is_empty());
        // Another destination's stream is its own.
        assert_eq!(log.append_ack(3, 1, 4).map(|(_, o)| o), Some(0));
        // Something else on (3, 2): acknowledgements there are logged from then on.
        log.append(3, 5, 1, 2, msg(1), 0, Duration::ZERO).unwrap();
        assert!(log.append_ack(3, 1, 2).is_none());
        assert_eq!(log.ack_order(&k0), None);
    }

    #[test]
    fn an_unlogged_send_takes_its_numbers_and_reads_as_evicted() {
        let mut log = SendLog::new(1 << 20, 2);
        log.append(0, 5, 1, 2, msg(1), 0, Duration::ZERO).unwrap();
        assert!(!log.delivered(0, 2, 0));
        let (k, o) = log.append_unlogged(0, 5, 1, 2);
        assert_eq!((k.seq, o), (1, 1));
        assert!(matches!(log.lookup(&k), Lookup::Evicted));
        let (k2, o2) = log.append(0, 5, 1, 2, msg(1), 0, Duration::ZERO).unwrap();
        assert_eq!((k2.seq, o2), (2, 2));
        // Delivered once every live replica's watermark is past it.
        log.note_consumed(0, 2, 0, 2);
        assert!(!log.delivered(0, 2, 1));
        log.note_dead(2, 1);
        assert!(log.delivered(0, 2, 1));
        assert!(!log.delivered(0, 2, 2));
    }

    #[test]
    fn seq_and_order_count_per_key_and_pair() {
        let mut log = SendLog::new(1 << 20, 1);
        let (k0, o0) = log.append(0, 5, 1, 2, msg(1), 0, Duration::ZERO).unwrap();
        let (k1, o1) = log.append(0, 6, 1, 2, msg(1), 0, Duration::ZERO).unwrap();
        let (k2, o2) = log.append(0, 5, 1, 2, msg(1), 0, Duration::ZERO).unwrap();
        assert_eq!((k0.seq, k1.seq, k2.seq), (0, 0, 1));
        assert_eq!((o0, o1, o2), (0, 1, 2));
        assert_eq!(log.sent_to(0, 2), 3);
        let unsent = Key { seq: 2, ..k0 };
        assert!(matches!(log.lookup(&unsent), Lookup::NotYetSent));
        assert_eq!(log.key_at_order(0, 2, 1), Some(k1));
        assert_eq!(log.key_at_order(0, 2, 3), None);
    }

    #[test]
    fn never_evicts_unreceived_and_blocks_instead() {
        let per = 100 + LOG_ENTRY_OVERHEAD_BYTES;
        let mut log = SendLog::new(per * 2, 2);
        let (k0, _) = log.append(0, 0, 0, 1, msg(100), 0, Duration::ZERO).unwrap();
        log.append(0, 0, 0, 1, msg(100), 0, Duration::ZERO).unwrap();
        assert!(
            log.append(0, 0, 0, 1, msg(100), 0, Duration::ZERO).is_err(),
            "nothing received yet"
        );
        assert!(matches!(log.lookup(&k0), Lookup::Present(_)));
        log.note_consumed(0, 1, 0, 1);
        assert!(
            matches!(log.lookup(&k0), Lookup::Present(_)),
            "replica 1 still may ask"
        );
        let (k2, _) = log.append(0, 0, 0, 1, msg(100), 0, Duration::ZERO).unwrap();
        assert!(matches!(log.lookup(&k0), Lookup::Evicted));
        assert!(matches!(log.lookup(&k2), Lookup::Present(_)));
        assert_eq!(log.evicted_count(), 1);
    }

    #[test]
    fn entries_every_live_replica_has_are_dropped_at_once() {
        let mut log = SendLog::new(1 << 20, 2);
        let (k0, _) = log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).unwrap();
        let (k1, _) = log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).unwrap();
        log.note_consumed(0, 1, 1, 2);
        assert!(matches!(log.lookup(&k0), Lookup::Present(_)));
        log.note_dead(1, 0);
        assert!(matches!(log.lookup(&k0), Lookup::Evicted));
        assert!(matches!(log.lookup(&k1), Lookup::Evicted));
        assert_eq!(log.used_bytes(), 0);
    }

    #[test]
    fn a_lent_entry_is_copied_if_still_here_and_never_retained() {
        let mut log = SendLog::new(1 << 20, 1).retaining(1 << 20);
        let lent = Bytes::from_owner(vec![7u8; 10]);
        let (k0, _) = log
            .append(0, 0, 0, 1, lent.clone(), 0, Duration::ZERO)
            .unwrap();
        let (k1, _) = log
            .append(0, 0, 0, 1, lent.clone(), 0, Duration::ZERO)
            .unwrap();
        let (k2, _) = log
            .append(0, 0, 0, 1, lent.clone(), 0, Duration::ZERO)
            .unwrap();
        let (k3, _) = log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).unwrap();
        for k in [k0, k1, k2] {
            log.mark_lent(&k, Lend::UntilComplete);
            assert!(log.holds_lent(&k));
        }
        // Received by every live replica: the lent entry goes, the copied one stays.
        log.note_consumed(0, 1, 0, 1);
        assert!(!log.holds_lent(&k0));
        assert!(matches!(log.lookup(&k0), Lookup::Evicted));
        assert!(!log.give_back(&k0), "nothing left to copy");
        // Still here when its request completes: copied into memory of the log's own.
        assert!(log.give_back(&k1));
        assert!(!log.holds_lent(&k1));
        match log.lookup(&k1) {
            Lookup::Present(e) => {
                assert_eq!(&e.payload[..], &[7u8; 10]);
                assert_ne!(e.payload.as_ptr(), lent.as_ptr());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(log.give_back_all(), 1, "k2 only");
        assert!(!log.holds_lent(&k2));
        log.note_consumed(0, 1, 0, 4);
        // Copied ones are retained as any entry.
        assert!(matches!(log.lookup(&k1), Lookup::Present(_)));
        assert!(matches!(log.lookup(&k3), Lookup::Present(_)));
    }

    /// A payload lent until its memory changes (a one-sided target's window) is retained
    /// for a replay like any other, still lent: giving it back copies it whether it is
    /// still an entry or retained, so that a replay after the window changed gets the
    /// bytes the first answer had.
    #[test]
    fn a_payload_lent_until_changed_is_retained_and_copied_from_there() {
        let mut log = SendLog::new(1 << 20, 2).retaining(1 << 20);
        let window = Bytes::from_owner(vec![7u8; 10]);
        let keys: Vec<Key> = (0..3)
            .map(|_| {
                let (k, _) = log
                    .append(0, 0, 0, 1, window.clone(), 0, Duration::ZERO)
                    .unwrap();
                log.mark_lent(&k, Lend::UntilChanged);
                k
            })
            .collect();
        // Every replica of the destination has the first two: retained, still lent.
        log.note_consumed(0, 1, 0, 2);
        log.note_consumed(0, 1, 1, 2);
        for &k in &keys {
            assert!(log.holds_lent(&k), "{k}");
        }
        assert_eq!(log.retained_bytes(), 2 * (10 + LOG_ENTRY_OVERHEAD_BYTES));
        assert!(log.give_back(&keys[0]), "copied from the retained ones");
        assert!(!log.holds_lent(&keys[0]));
        assert!(!log.give_back(&keys[0]), "given back once");
        assert_eq!(log.give_back_all(), 2, "one retained, one entry");
        for &k in &keys {
            assert!(!log.holds_lent(&k));
            match log.lookup(&k) {
                Lookup::Present(e) => {
                    assert_eq!(&e.payload[..], &[7u8; 10]);
                    assert_ne!(e.payload.as_ptr(), window.as_ptr(), "{k}: a copy");
                }
                other => panic!("{k}: {other:?}"),
            }
        }
    }

    #[test]
    fn retained_entries_stay_for_a_replay_up_to_their_bound() {
        let per = 10 + LOG_ENTRY_OVERHEAD_BYTES;
        let mut log = SendLog::new(1 << 20, 2).retaining(2 * per);
        let keys: Vec<Key> = (0..3)
            .map(|_| {
                log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO)
                    .unwrap()
                    .0
            })
            .collect();
        log.note_dead(1, 0);
        log.note_consumed(0, 1, 1, 3);
        // Everyone live has all three; the two newest stay for a replay.
        assert!(matches!(log.lookup(&keys[0]), Lookup::Evicted));
        assert!(matches!(log.lookup(&keys[1]), Lookup::Present(_)));
        assert!(matches!(log.lookup(&keys[2]), Lookup::Present(_)));
        assert_eq!(log.retained_bytes(), 2 * per);
        // A replay asks by order too (wildcard receives).
        assert_eq!(log.key_at_order(0, 1, 0), None);
        assert_eq!(log.key_at_order(0, 1, 1), Some(keys[1]));
        assert_eq!(log.key_at_order(0, 1, 2), Some(keys[2]));
        // A new incarnation of replica 0 joins, then catches up: entries wait for it.
        log.note_joining(1, 0);
        log.note_caught_up(1, 0);
        let (k3, _) = log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).unwrap();
        log.note_consumed(0, 1, 1, 4);
        assert!(matches!(log.lookup(&k3), Lookup::Present(_)));
        assert!(!log.delivered(0, 1, 3), "replica 0 has not reported yet");
        log.note_consumed(0, 1, 0, 4);
        assert!(log.delivered(0, 1, 3));
        assert_eq!(log.retained_bytes(), 2 * per, "still bounded");
        assert!(matches!(log.lookup(&k3), Lookup::Present(_)));
        assert!(matches!(log.lookup(&keys[1]), Lookup::Evicted));
    }

    #[test]
    fn a_full_log_evicts_retained_entries_oldest_first_and_releases_by_checkpoint() {
        let per = 10 + LOG_ENTRY_OVERHEAD_BYTES;
        let mut log = SendLog::new(3 * per, 1).retaining(1 << 20);
        let keys: Vec<Key> = (0..3)
            .map(|i| {
                log.append(0, i % 2, 0, 1, msg(10), 0, Duration::ZERO)
                    .unwrap()
                    .0
            })
            .collect();
        log.note_consumed(0, 1, 0, 3);
        assert_eq!(log.retained_bytes(), 3 * per);
        assert!(keys
            .iter()
            .all(|k| matches!(log.lookup(k), Lookup::Present(_))));
        // Full: the next send evicts the oldest retained entry.
        let (k3, _) = log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).unwrap();
        assert!(matches!(log.lookup(&keys[0]), Lookup::Evicted));
        assert!(matches!(log.lookup(&keys[1]), Lookup::Present(_)));
        assert_eq!(log.retained_bytes(), 2 * per);
        assert_eq!(log.used_bytes(), 3 * per);
        assert_eq!(log.key_at_order(0, 1, 0), None);
        assert_eq!(log.key_at_order(0, 1, 1), Some(keys[1]));
        assert_eq!(log.key_at_order(0, 1, 3), Some(k3));
        // A checkpoint past order 2 releases the retained entries below it.
        log.note_checkpoint(0, 1, 0, 3);
        assert!(matches!(log.lookup(&keys[2]), Lookup::Evicted));
        assert_eq!(log.retained_bytes(), 0);
        assert!(matches!(log.lookup(&k3), Lookup::Present(_)));
        assert_eq!(log.evicted_count(), 3);
    }

    #[test]
    fn retained_entries_of_a_destination_with_no_live_replica_are_not_evicted() {
        let per = 10 + LOG_ENTRY_OVERHEAD_BYTES;
        let mut log = SendLog::new(2 * per, 1).retaining(1 << 20);
        let (k0, _) = log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).unwrap();
        log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).unwrap();
        log.note_consumed(0, 1, 0, 2);
        // Its only replica died: a new incarnation may replay and ask for them again.
        log.note_dead(1, 0);
        assert!(log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO).is_err());
        assert!(matches!(log.lookup(&k0), Lookup::Present(_)));
        assert_eq!(log.retained_bytes(), 2 * per);
    }

    #[test]
    fn a_handover_at_one_replica_keeps_what_its_checkpoint_has_not() {
        let mut log = SendLog::new(1 << 20, 1).retaining(1 << 20);
        let keys: Vec<Key> = (0..3)
            .map(|_| {
                log.append(0, 0, 0, 1, msg(10), 0, Duration::ZERO)
                    .unwrap()
                    .0
            })
            .collect();
        log.note_consumed(0, 1, 0, 1);
        log.note_checkpoint(0, 1, 0, 1);
        assert!(matches!(log.lookup(&keys[0]), Lookup::Evicted));
        // The only replica drains and its next incarnation restores its checkpoint.
        log.note_joining(1, 0);
        assert!(matches!(log.lookup(&keys[1]), Lookup::Present(_)));
        assert!(matches!(log.lookup(&keys[2]), Lookup::Present(_)));
        log.note_checkpoint(0, 1, 0, 1);
        log.note_caught_up(1, 0);
        assert!(matches!(log.lookup(&keys[1]), Lookup::Present(_)));
        log.note_consumed(0, 1, 0, 3);
        log.note_checkpoint(0, 1, 0, 3);
        assert!(matches!(log.lookup(&keys[2]), Lookup::Evicted));
    }

    #[test]
    fn oversized_entry_fits_an_empty_log() {
        let mut log = SendLog::new(10, 1);
        assert!(log.append(0, 0, 0, 1, msg(1000), 0, Duration::ZERO).is_ok());
        assert!(log.append(0, 0, 0, 1, msg(1), 0, Duration::ZERO).is_err());
    }
}
