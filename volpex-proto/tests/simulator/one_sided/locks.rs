//! Passive target: two origins' lock requests served by the target's replicas in one
//! serving call, the order recorded by the leader in choice slots and read by the
//! followers (docs/PROTOCOL.md "Passive target", tags 5 and 6).
//!
//! Must never decide what the engine does: it only makes the program's sends, receives
//! and choices and checks what they give.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::message::matching::RecvId;
use volpex_proto::pull::ChoiceState;

use super::world::{Step, World};
use super::{ANSWER, REQUEST};
use crate::harness::seeds;

/// Requests each origin sends (each one a lock, a fetch-and-op, the release).
const REQUESTS: u8 = 8;

/// What a request does to the target's counter: a fetch-and-op that does not commute,
/// so the values the origins fetch show the order the target applied them in.
fn fetch_and_op(counter: &mut u64, add: u8) -> u64 {
    let old = *counter;
    *counter = counter.wrapping_mul(3).wrapping_add(u64::from(add));
    old
}

fn add_of(origin: u8, e: u8) -> u8 {
    origin
        .wrapping_mul(101)
        .wrapping_add(e.wrapping_mul(7))
        .wrapping_add(1)
}

/// A replica in the lock program: ranks 0 and 1 are origins, each sending `REQUESTS`
/// exclusive-lock requests to rank 2 one after the other (each waits for the answer);
/// rank 2 is the target, whose replicas serve them in one serving call.
#[derive(Debug, Default)]
struct LockState {
    // Origin side.
    sent: u8,
    waiting: Option<RecvId>,
    /// What each request fetched.
    fetched: Vec<u64>,
    // Target side: a receive of the next request posted per origin, what arrived and
    // waits, the choice slot, the list being applied, the window.
    posted: [Option<RecvId>; 2],
    received: [u8; 2],
    pending: [VecDeque<(u8, u8)>; 2],
    slot: Option<u64>,
    list: Option<(Bytes, usize)>,
    counter: u64,
    /// (origin, request) applied, in order.
    log: Vec<(u8, u8)>,
    /// Non-empty lists this replica recorded as the leader.
    chosen: usize,
    done: bool,
}

fn origin_step(w: &mut World, i: usize, st: &mut LockState) -> Step {
    let me = w.engines[i].me().rank as u8;
    match st.waiting {
        None if st.sent == REQUESTS => Step::Done,
        None => {
            w.send(i, REQUEST, 2, vec![me, st.sent, add_of(me, st.sent)]);
            st.waiting = Some(w.post(i, 2, ANSWER));
            Step::Progress
        }
        Some(id) => {
            let Some(got) = w.take(i, id) else {
                return Step::Blocked;
            };
            let Ok(v) = <[u8; 8]>::try_from(&got[..]) else {
                w.fail(format!("{}: answer {got:?}", w.engines[i].me()));
            };
            st.fetched.push(u64::from_le_bytes(v));
            st.waiting = None;
            st.sent += 1;
            Step::Progress
        }
    }
}

/// Applies origin `o`'s next request at a target replica: exactly once and in the order
/// the origin sent them, else the run fails.
fn apply_request(w: &mut World, i: usize, st: &mut LockState, o: u8) -> bool {
    let Some((from, e)) = st.pending[o as usize].pop_front() else {
        return false;
    };
    let next = st.log.iter().filter(|&&(x, _)| x == o).count() as u8;
    if (from, e) != (o, next) {
        w.fail(format!(
            "{} applies request {e} of origin {from} where {next} of {o} is due: {:?}",
            w.engines[i].me(),
            st.log
        ));
    }
    let old = fetch_and_op(&mut st.counter, add_of(o, e));
    st.log.push((o, e));
    w.send(i, ANSWER, u32::from(o), old.to_le_bytes().to_vec());
    true
}

/// One step of a target replica's serving call (volpex-mpi `rma::passive::step`/`end`).
fn target_step(w: &mut World, i: usize, st: &mut LockState) -> Step {
    if st.done {
        return Step::Done;
    }
    let mut moved = false;
    for o in 0..2u8 {
        match st.posted[o as usize] {
            None if st.received[o as usize] < REQUESTS => {
                st.posted[o as usize] = Some(w.post(i, u32::from(o), REQUEST));
                moved = true;
            }
            None => {}
            Some(id) => {
                if let Some(b) = w.take(i, id) {
                    if b.len() != 3 || b[0] != o {
                        w.fail(format!("{}: request {b:?} from {o}", w.engines[i].me()));
                    }
                    st.pending[o as usize].push_back((b[0], b[1]));
                    st.received[o as usize] += 1;
                    st.posted[o as usize] = None;
                    moved = true;
                }
            }
        }
    }
    let progress = |moved| if moved { Step::Progress } else { Step::Blocked };
    // A follower applying the leader's list waits for each request it names.
    if let Some((list, mut k)) = st.list.take() {
        while k < list.len() {
            if !apply_request(w, i, st, list[k]) {
                st.list = Some((list, k));
                return progress(moved);
            }
            k += 1;
        }
        st.slot = None;
        return Step::Progress;
    }
    let Some(slot) = st.slot.or_else(|| w.engines[i].post_choice()) else {
        w.fail("choices are coordinated at r > 1".into());
    };
    st.slot = Some(slot);
    let all = 2 * usize::from(REQUESTS);
    match w.engines[i].choice(w.now, slot) {
        ChoiceState::Yours if st.log.len() == all => {
            w.engines[i].make_choice(w.now, slot, Bytes::new());
            st.done = true;
            Step::Done
        }
        ChoiceState::Yours => {
            let list: Vec<u8> = (0..2u8)
                .flat_map(|o| std::iter::repeat_n(o, st.pending[o as usize].len()))
                .collect();
            if list.is_empty() {
                return progress(moved);
            }
            // Recorded before anything that depends on it leaves (the answers).
            w.engines[i].make_choice(w.now, slot, Bytes::from(list.clone()));
            st.chosen += 1;
            for o in list {
                apply_request(w, i, st, o);
            }
            st.slot = None;
            Step::Progress
        }
        ChoiceState::Made(v) if v.is_empty() => {
            if st.log.len() != all {
                w.fail(format!(
                    "{}: the serving call ended after {} of {all} requests",
                    w.engines[i].me(),
                    st.log.len()
                ));
            }
            st.done = true;
            Step::Done
        }
        ChoiceState::Made(v) => {
            st.list = Some((v, 0));
            Step::Progress
        }
        ChoiceState::Waiting => progress(moved),
    }
}

/// Two origins' exclusive-lock requests served by two or three target replicas, the
/// order decided in choice slots by the leader (replica 0), which is killed right after
/// it recorded a choice and applied it, with a random part of what it made (answers to
/// origins carrying the choice, choices to its followers) gone out; sometimes the origin
/// replica most likely to hold that choice dies with it, sometimes the leader is
/// regenerated and replays the serving call as a follower. Every surviving target
/// replica applies every request exactly once, all in the same order, and every value a
/// live origin replica fetched (from whichever target replica answered it) is the one
/// that order gives. docs/PROTOCOL.md "Passive target".
#[test]
fn a_lock_order_survives_the_death_of_the_leader_that_chose_it() {
    let (mut runs, mut kills, mut took_over, mut redecided) = (0usize, 0, 0, 0);
    let (mut regenerated, mut caught_up) = (0usize, 0usize);
    for seed in seeds(200, 4545) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x10c4);
        let r = rng.random_range(2..=3);
        let regenerate = rng.random_bool(0.4);
        let mut w = World::new(seed, 3, r, regenerate);
        let mut states: Vec<LockState> = (0..3 * r).map(|_| LockState::default()).collect();
        let leader = 2 * r as usize;
        let kill_at = rng.random_bool(0.8).then(|| rng.random_range(1..=4));
        let origin_too = !regenerate && rng.random_bool(0.25);
        let mut struck = false;
        w.run("locks", &mut states, |w, i, st| {
            if i < leader {
                return origin_step(w, i, st);
            }
            let step = target_step(w, i, st);
            if i == leader && !struck && Some(st.chosen) == kill_at {
                struck = true;
                let n = w.rng.random_range(0..4);
                w.flush_some(i, n);
                match regenerate {
                    true => w.regenerate(i),
                    false => w.kill(i),
                }
                if origin_too {
                    // The origin replica most likely to hold the choice (its answers come
                    // from the leader's team) dies with it: the choice may be lost.
                    w.kill(0);
                }
            }
            step
        });
        let survivors: Vec<usize> = (leader..3 * r as usize).filter(|&i| w.alive[i]).collect();
        let Some(&first) = survivors.first() else {
            w.fail("no target replica survived".into());
        };
        let log = &states[first].log;
        for &i in &survivors[1..] {
            if states[i].log != *log {
                w.fail(format!(
                    "target replicas applied different orders: {log:?} and {:?}",
                    states[i].log
                ));
            }
        }
        // Replay the survivors' order: what each request fetched.
        let mut counter = 0;
        let mut fetched = BTreeMap::new();
        for &(o, e) in log {
            fetched.insert((o, e), fetch_and_op(&mut counter, add_of(o, e)));
        }
        // A dead origin replica may have fetched by a choice that died with it.
        for (i, st) in states.iter().enumerate().take(leader) {
            if !w.alive[i] {
                continue;
            }
            let o = (i / r as usize) as u8;
            for (e, got) in st.fetched.iter().enumerate() {
                if fetched.get(&(o, e as u8)) != Some(got) {
                    w.fail(format!(
                        "{} fetched {got} with request {e}, the targets' order {log:?} gives {:?}",
                        w.engines[i].me(),
                        fetched.get(&(o, e as u8))
                    ));
                }
            }
        }
        runs += 1;
        kills += w.kills;
        // A follower that recorded choices led after a takeover; a dead leader whose
        // order is no prefix of the survivors' had choices nobody depended on, decided
        // anew.
        took_over += usize::from(
            survivors
                .iter()
                .any(|&i| i != leader && states[i].chosen > 0),
        );
        redecided += usize::from(!w.alive[leader] && !log.starts_with(&states[leader].log));
        regenerated += usize::from(w.incs[leader] > 0);
        caught_up += w.caught_up;
    }
    eprintln!(
        "one-sided locks: {runs} runs, {kills} kills, {took_over} taken over, \
         {redecided} with a dead leader's order decided anew, {regenerated} leaders \
         regenerated, {caught_up} caught up"
    );
    assert!(runs == 1 || (kills > 0 && took_over > 0 && redecided > 0 && caught_up > 0));
}
