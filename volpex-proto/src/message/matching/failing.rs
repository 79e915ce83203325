//! Completing posted operations that can never match: their message's sender lost every
//! replica, evicted it everywhere, or ended without sending it. The engine decides that;
//! this file only finds the operations concerned and completes them with its error.
//! An immediate probe whose choice the leader makes is never failed: it cannot wait
//! forever (the leader answers "nothing" when no candidate is here), and a follower
//! must take the leader's answer.

use super::{Key, Matcher, Mode, Posted, RecvSpec, TagSel, Want};

/// Whether an unresolved operation may fail because its candidates are gone.
fn may_fail(p: &Posted) -> bool {
    !(p.mode == Mode::ImmediateProbe && p.slot.is_some())
}

impl<E: Clone> Matcher<E> {
    /// Completes every operation waiting for `key` with `err`.
    pub fn fail_key(&mut self, key: &Key, err: E) {
        if let Some(w) = self.waiting.remove(key) {
            for id in w.probes.into_iter().chain(w.receive) {
                self.finish(id, Err(err.clone()));
            }
        }
    }

    /// Completes every unresolved operation none of whose sources can still send what it
    /// needs, with the error `gone` gives for the first such source. `gone(src, want)`
    /// judges the message the operation would take next from `src`: by key for a tag, by
    /// order number (from `watermark`) for `ANY_TAG`; messages already here were
    /// considered by `resolve`.
    pub fn fail_unresolved_by_candidates(
        &mut self,
        watermark: &dyn Fn(u32, u32) -> u64,
        gone: impl Fn(u32, &Want) -> Option<E>,
    ) {
        let mut i = 0;
        while i < self.unresolved.len() {
            if !may_fail(&self.unresolved[i]) {
                i += 1;
                continue;
            }
            let spec = &self.unresolved[i].spec;
            let mut first = None;
            let mut all = !spec.ranks().is_empty();
            for &src in spec.ranks() {
                let want = match spec.tag {
                    TagSel::Tag(tag) => Want::Key(self.next_key(spec.comm, tag, src)),
                    TagSel::Any => Want::Order {
                        comm: spec.comm,
                        src,
                        dst: self.me,
                        order: watermark(spec.comm, src),
                    },
                };
                match gone(src, &want) {
                    Some(e) => {
                        first.get_or_insert(e);
                    }
                    None => {
                        all = false;
                        break;
                    }
                }
            }
            match first.filter(|_| all) {
                Some(err) => {
                    if let Some(p) = self.unresolved.remove(i) {
                        self.finish(p.id, Err(err));
                    }
                }
                None => i += 1,
            }
        }
    }

    /// Completes every unresolved operation `doomed` says can never match, with the error
    /// it gives.
    pub fn fail_unresolved(&mut self, doomed: impl Fn(&RecvSpec) -> Option<E>) {
        let mut i = 0;
        while i < self.unresolved.len() {
            let p = &self.unresolved[i];
            match doomed(&p.spec).filter(|_| may_fail(p)) {
                Some(err) => {
                    if let Some(p) = self.unresolved.remove(i) {
                        self.finish(p.id, Err(err));
                    }
                }
                None => i += 1,
            }
        }
    }
}
