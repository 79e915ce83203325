//! What the simulator checks: every completed receive got exactly the message a
//! failure-free run delivers for it (the right data), exactly once; every live replica
//! of a rank matched the same message at every receive; nothing completes after the run;
//! every message a survivor received reflects only the choices its sender rank kept.
//!
//! Reference: DESIGN.md "Message identity and matching" (a key delivered once, identical
//! choices in every replica), "Pull protocol" (data already received is never asked
//! again).

use std::collections::HashMap;

use volpex_proto::message::matching::{Matched, RecvId};
use volpex_proto::message::Key;

use super::programs::{content, digest, Recv};
use super::{Life, Sim};

impl Sim {
    pub fn check_completions(&mut self, i: usize) {
        let ids: Vec<RecvId> = self.reps[i].waiting.keys().copied().collect();
        let rank = i / self.r as usize;
        for id in ids {
            let Some(&(ordinal, g)) = self.reps[i].waiting.get(&id) else {
                continue;
            };
            // As the driver takes it: the pulls ahead wait for the replica's next turn
            // (`speculate_pending` at its next step, timer or frame).
            let now = self.now;
            let Some(res) = self.reps[i].engine.take_later(|| now, id) else {
                continue;
            };
            let who = self.reps[i].engine.me();
            match res {
                Ok(Matched::Message { key, payload }) => {
                    let Some(&got) = self.by_key.get(&key) else {
                        self.fail(format!("replica {who} matched {key}, which nobody sent"));
                    };
                    if self.modes[rank] == Recv::Exact && got != g {
                        self.fail(format!("replica {who} got message {got}, not {g}"));
                    }
                    let body = content(got, &self.schedule[got]);
                    let sent_digest = payload
                        .get(body.len()..)
                        .and_then(|d| <[u8; 8]>::try_from(d).ok())
                        .map(u64::from_le_bytes);
                    let (Some(sent_digest), true) = (sent_digest, payload.starts_with(&body))
                    else {
                        self.fail(format!(
                            "replica {who} got the wrong data for {key} (message {got})"
                        ));
                    };
                    self.reps[i].digests.push((got, sent_digest));
                    if !self.reps[i].completed.insert(key) {
                        self.fail(format!(
                            "replica {who} (incarnation {}) completed {key} twice",
                            self.reps[i].inc
                        ));
                    }
                    // Every live replica of the rank matches the same message at each
                    // receive (a dead one may have made a choice nobody saw).
                    for k in 0..self.r as usize {
                        let other = rank * self.r as usize + k;
                        if !self.runnable(other) {
                            continue;
                        }
                        if let Some(&theirs) = self.reps[other].matched.get(&ordinal) {
                            if theirs != key {
                                self.fail(format!(
                                    "replica {who} matched {key} at receive {ordinal}, a sibling {theirs}"
                                ));
                            }
                        }
                    }
                    self.reps[i].matched.insert(ordinal, key);
                    self.reps[i].waiting.remove(&id);
                }
                Ok(Matched::Nothing) => {
                    self.fail(format!("replica {who}: a receive matched nothing"))
                }
                Err(e) => {
                    // The retirement that failed it is reported as an event.
                    self.collect(i);
                    if self.reps[i].life != Life::Retired {
                        self.fail(format!("replica {who}: receive {ordinal} failed: {e}"));
                    }
                    self.reps[i].waiting.clear();
                }
            }
        }
    }

    /// Nothing may complete a second time: no result is left behind.
    pub fn check_no_leftovers(&mut self) {
        for i in 0..self.reps.len() {
            let ids: Vec<RecvId> = self.reps[i].waiting.keys().copied().collect();
            for id in ids {
                if self.runnable(i) && self.reps[i].engine.take(self.now, id).is_some() {
                    let who = self.reps[i].engine.me();
                    self.fail(format!("replica {who} completed {id:?} after the run"));
                }
            }
        }
    }

    /// Every message a surviving replica received carries the digest of the matches its
    /// sender rank made in the end (the replicas that finished agree on them).
    pub fn check_effects(&self) {
        let r = self.r as usize;
        let mut finals: Vec<Option<&HashMap<usize, Key>>> = vec![None; self.progs.len()];
        for (i, rep) in self.reps.iter().enumerate() {
            if self.runnable(i) && self.done(i) {
                let rank = i / r;
                if let Some(other) = finals[rank] {
                    if other != &rep.matched {
                        self.fail(format!(
                            "finished replicas of rank {rank} matched differently"
                        ));
                    }
                }
                finals[rank] = Some(&rep.matched);
            }
        }
        // A replica that died may have seen choices that died with it (the new leader may
        // decide those slots anew, see `pull::foreign`): only the survivors must agree.
        for (i, rep) in self.reps.iter().enumerate() {
            if rep.life != Life::Running {
                continue;
            }
            for &(g, got) in &rep.digests {
                let src = self.schedule[g].src as usize;
                let Some(matched) = finals[src] else { continue };
                let keys: Vec<Key> = (0..self.receives_before[g])
                    .filter_map(|o| matched.get(&o).copied())
                    .collect();
                if digest(&keys) != got {
                    let server = self.servers.get(&(i, self.keys[g]));
                    self.fail(format!(
                        "message {g} from rank {src} reflects choices its rank did not keep \
                         (received by {} incarnation {}, served by {server:?})",
                        rep.engine.me(),
                        rep.inc
                    ));
                }
            }
        }
    }
}
