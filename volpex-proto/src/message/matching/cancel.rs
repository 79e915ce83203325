//! Cancelling a posted receive (MPI_Cancel, MPI-3.1 section 3.8.4): either it matched a
//! message, or it is cancelled and claims none, so the message it would have taken goes
//! to the next receive that matches it.
//!
//! Whether a receive had matched depends on timing, so with replicas one of them decides
//! (`may_cancel`, the leader of choices) and every replica carries the decision out
//! (`cancel`), whatever arrived where. Carrying out "cancelled" in a replica whose receive
//! did complete puts its message back into the unexpected queue; receives that claimed
//! later messages of the same stream (comm, tag, src) move up by one (the k-th receive
//! of a stream claims seq k, see the module doc of `matching`). The decision rule only
//! says "cancelled" when every replica can do that and end up where the decider is: see
//! `may_cancel`. A receive with a coordination slot (`ANY_SOURCE`) is not decided here:
//! its slot holds either its match or the leader's "cancelled" (`Chooser::cancelled`).

use super::{Arrival, CancelDiverged, Key, Matched, Matcher, Mode, Need, RecvId, Source, TagSel};

/// A receive to move: its id and the key it claims now.
type Claim = (RecvId, Key);

impl<E: Clone> Matcher<E> {
    /// The coordination slot receive `id` was posted with (`ANY_SOURCE` receives when
    /// choices are coordinated), until its result is taken.
    pub fn slot_of(&self, id: RecvId) -> Option<u64> {
        self.slots.get(&id).copied()
    }

    /// Whether operation `id` is posted and not resolved yet.
    pub fn is_unresolved(&self, id: RecvId) -> bool {
        self.unresolved.iter().any(|p| p.id == id)
    }

    /// Whether receive `id` is cancelled, decided by the replica that decides (the
    /// leader; any replica when choices are not coordinated). Yes when it has matched no
    /// message here, no receive posted after it that takes any tag from one of its
    /// sources is pending (its match could change in another replica), and every later
    /// claim on its stream, if it has one, belongs to a receive that still waits for its
    /// message (they move up by one, `cancel`). A freed receive (`detach`) among them
    /// makes the answer no: a replica where it completed has discarded its message.
    pub fn may_cancel(&self, id: RecvId) -> bool {
        if self.done.contains_key(&id) || self.detached.contains(&id) {
            return false;
        }
        let (comm, sources): (u32, Vec<u32>) = match self.keys.get(&id) {
            Some(k) => (k.comm, vec![k.src]),
            None => match self.unresolved.iter().find(|p| p.id == id) {
                Some(p) if p.mode == Mode::Receive => (p.spec.comm, p.spec.ranks().to_vec()),
                _ => return false,
            },
        };
        let later_any_tag = |pid: RecvId, spec_src: &Source, tag: TagSel, slot: Option<u64>| {
            pid > id
                && tag == TagSel::Any
                && slot.is_none()
                && matches!(spec_src, Source::Rank(s) if sources.contains(s))
        };
        if self
            .unresolved
            .iter()
            .any(|p| p.spec.comm == comm && later_any_tag(p.id, &p.spec.src, p.spec.tag, p.slot))
        {
            return false;
        }
        let any_tag_pending = self
            .any_tag
            .iter()
            .chain(
                self.done
                    .iter()
                    .filter_map(|(i, d)| d.any_tag.as_ref().map(|a| (i, a))),
            )
            .any(|(&pid, &(c, s))| pid > id && c == comm && sources.contains(&s));
        if any_tag_pending {
            return false;
        }
        let Some(key) = self.keys.get(&id) else {
            return true; // unresolved: it claims nothing yet
        };
        let later = self.later_claims(key);
        let all_wait = later
            .iter()
            .all(|(pid, _)| self.keys.contains_key(pid) && !self.detached.contains(pid));
        all_wait && later.len() as u64 == self.claims_after(key)
    }

    /// Carries out the decision that receive `id` is cancelled: it leaves the posted
    /// receives, its message (if it had arrived here) goes back into the unexpected queue,
    /// and the receives that claimed later messages of its stream move up by one (taking
    /// an earlier message at once if it is here). Appends what must be fetched; call
    /// `resolve` afterwards. `Err` when this replica cannot follow (a later claim on the
    /// stream was taken or freed, or the receive itself completed and was taken): it
    /// would diverge from the replica that decided. Changes nothing then. `Ok` gives the
    /// keys no receive waits for any more (their fetches are not needed now).
    pub fn cancel(
        &mut self,
        id: RecvId,
        needs: &mut Vec<Need>,
    ) -> Result<Vec<Key>, CancelDiverged> {
        if let Some(i) = self.unresolved.iter().position(|p| p.id == id) {
            self.unresolved.remove(i);
            self.slots.remove(&id);
            self.detached.remove(&id);
            return Ok(Vec::new());
        }
        let key = self.claim_of(id).ok_or(CancelDiverged)?;
        let mut later = self.later_claims(&key);
        let movable = later.iter().all(|(pid, k)| {
            !self.detached.contains(pid)
                && (self.keys.contains_key(pid) || self.got_message(*pid))
                && k.seq > key.seq
        });
        if !movable
            || later.len() as u64 != self.claims_after(&key)
            || (self.done.contains_key(&id) && !self.got_message(id))
        {
            return Err(CancelDiverged);
        }
        later.sort_unstable_by_key(|(_, k)| k.seq);
        let mut old: Vec<Key> = later.iter().map(|(_, k)| *k).collect();
        old.push(key);
        let any_tags: Vec<_> = later.iter().map(|(pid, _)| self.unclaim(*pid)).collect();
        self.unclaim(id);
        self.slots.remove(&id);
        self.claimed.insert((key.comm, key.tag, key.src), key.seq);
        for ((pid, _), any_tag) in later.into_iter().zip(any_tags) {
            if let Some(a) = any_tag {
                self.any_tag.insert(pid, a);
            }
            self.reclaim(pid, key, needs);
        }
        old.retain(|k| !self.waiting.contains_key(k));
        Ok(old)
    }

    /// The key receive `id` claims: waiting for it, or completed with it and not taken.
    fn claim_of(&self, id: RecvId) -> Option<Key> {
        self.keys
            .get(&id)
            .copied()
            .or_else(|| match self.done.get(&id).map(|d| &d.result) {
                Some(Ok(Matched::Message { key, .. })) => Some(*key),
                _ => None,
            })
    }

    /// Whether receive `id` completed with a message it may give back (its order number
    /// is known).
    fn got_message(&self, id: RecvId) -> bool {
        self.done.get(&id).is_some_and(|d| d.order.is_some())
    }

    /// How many claims on `key`'s stream came after it.
    fn claims_after(&self, key: &Key) -> u64 {
        let claimed = self
            .claimed
            .get(&(key.comm, key.tag, key.src))
            .copied()
            .unwrap_or(0);
        claimed.saturating_sub(key.seq + 1)
    }

    /// The receives here (waiting or completed, not taken) that claim a later message of
    /// `key`'s stream.
    fn later_claims(&self, key: &Key) -> Vec<Claim> {
        let same =
            |k: &Key| k.comm == key.comm && k.tag == key.tag && k.src == key.src && k.seq > key.seq;
        let waiting = self
            .keys
            .iter()
            .filter(|(_, k)| same(k))
            .map(|(&i, &k)| (i, k));
        let done = self.done.iter().filter_map(|(&i, d)| match &d.result {
            Ok(Matched::Message { key: k, .. }) if same(k) => Some((i, *k)),
            _ => None,
        });
        waiting.chain(done).collect()
    }

    /// Undoes receive `id`'s claim: it stops waiting, or its message goes back into the
    /// unexpected queue. Returns its `ANY_TAG` source, if it had one.
    fn unclaim(&mut self, id: RecvId) -> Option<(u32, u32)> {
        if let Some(key) = self.keys.remove(&id) {
            if let Some(w) = self.waiting.get_mut(&key) {
                w.receive = None;
                if w.probes.is_empty() {
                    self.waiting.remove(&key);
                }
            }
            return self.any_tag.remove(&id);
        }
        let d = self.done.remove(&id)?;
        if let (Ok(Matched::Message { key, payload }), Some(order)) = (d.result, d.order) {
            self.arrivals += 1;
            self.by_order
                .entry((key.comm, key.src))
                .or_default()
                .insert(order, key);
            self.arrived.insert(
                key,
                Arrival {
                    order,
                    payload,
                    nth: self.arrivals,
                },
            );
        }
        d.any_tag
    }

    /// Receive `id` claims the next message of `stream`'s stream again.
    fn reclaim(&mut self, id: RecvId, stream: Key, needs: &mut Vec<Need>) {
        let key = self.next_key(stream.comm, stream.tag, stream.src);
        *self
            .claimed
            .entry((key.comm, key.tag, key.src))
            .or_insert(0) += 1;
        self.receive_key(id, key, needs);
    }
}
