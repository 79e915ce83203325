//! Active target: an origin's epochs of puts and accumulates, each a batch sent at the
//! end of the epoch and pulled by every target replica from one replica of the origin,
//! its answer sent back (docs/PROTOCOL.md "One-sided communication", tags 3 and 4).
//!
//! Must never decide what the engine does: it only issues the program's sends and
//! receives and checks what they deliver.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use volpex_proto::message::matching::RecvId;
use volpex_proto::message::ACK_TAG;

use super::world::{Step, World};
use super::{ACKS, BATCH, BATCH_ANSWER};
use crate::harness::seeds;

/// One operation of a batch on a window of `WINDOW` bytes: a put of bytes, or an
/// accumulate (wrapping add) that may fetch what was there.
#[derive(Debug, Clone)]
enum Op {
    Put { off: usize, data: Vec<u8> },
    Acc { off: usize, add: u8, fetch: bool },
}

const WINDOW: usize = 32;

/// A batch's bytes (the test's own format; the engine carries them opaque).
fn encode(ops: &[Op]) -> Vec<u8> {
    let mut v = vec![ops.len() as u8];
    for op in ops {
        match op {
            Op::Put { off, data } => {
                v.extend_from_slice(&[1, *off as u8, data.len() as u8]);
                v.extend_from_slice(data);
            }
            Op::Acc { off, add, fetch } => {
                v.extend_from_slice(&[2, *off as u8, *add, *fetch as u8])
            }
        }
    }
    v
}

/// Applies `ops` to `window` in order; the answer: each fetching accumulate's old byte.
fn apply(window: &mut [u8], ops: &[Op]) -> Vec<u8> {
    let mut answer = Vec::new();
    for op in ops {
        match op {
            Op::Put { off, data } => window[*off..*off + data.len()].copy_from_slice(data),
            Op::Acc { off, add, fetch } => {
                if *fetch {
                    answer.push(window[*off]);
                }
                window[*off] = window[*off].wrapping_add(*add);
            }
        }
    }
    answer
}

fn answers(ops: &[Op]) -> bool {
    ops.iter()
        .any(|op| matches!(op, Op::Acc { fetch: true, .. }))
}

/// The origin's epochs: every replica of it issues the same operations (its program is
/// deterministic), so any of them can serve a target replica's pull.
fn epochs(rng: &mut ChaCha8Rng, n: usize) -> Vec<Vec<Op>> {
    (0..n)
        .map(|_| {
            (0..rng.random_range(0..5))
                .map(|_| {
                    let off = rng.random_range(0..WINDOW - 4);
                    if rng.random_bool(0.4) {
                        let len = rng.random_range(1..=4);
                        Op::Put {
                            off,
                            data: (0..len).map(|_| rng.random()).collect(),
                        }
                    } else {
                        Op::Acc {
                            off,
                            add: rng.random_range(1..=255),
                            fetch: rng.random_bool(0.5),
                        }
                    }
                })
                .collect()
        })
        .collect()
}

/// Where one replica is in the epoch program: rank 0 (origin) sends epoch `epoch`'s
/// batch at `MPI_Win_complete` and waits for its answer if it has one; rank 1 (target)
/// receives the batch at `MPI_Win_wait`, applies it and answers.
#[derive(Debug)]
struct EpochState {
    epoch: usize,
    waiting: Option<RecvId>,
    window: Vec<u8>,
    /// (epoch, operation) applied, in order (target replicas).
    applied: Vec<(usize, usize)>,
    /// Acknowledgements sent (target replicas).
    acks: usize,
}

impl Default for EpochState {
    fn default() -> EpochState {
        EpochState {
            epoch: 0,
            waiting: None,
            window: vec![0; WINDOW],
            applied: Vec::new(),
            acks: 0,
        }
    }
}

fn epoch_step(w: &mut World, i: usize, st: &mut EpochState, model: &EpochModel) -> Step {
    let origin = i < w.r as usize;
    let e = st.epoch;
    if e == model.batches.len() {
        return Step::Done;
    }
    let ops = &model.batches[e];
    match (origin, st.waiting) {
        (true, None) => {
            // The answer's receive first, as a passive origin posts it before its request.
            st.waiting = Some(match answers(ops) {
                true => w.post(i, 1, BATCH_ANSWER),
                false => w.post_on(i, ACKS, 1, ACK_TAG),
            });
            w.send(i, BATCH, 1, encode(ops));
        }
        (true, Some(id)) => {
            let Some(got) = w.take(i, id) else {
                return Step::Blocked;
            };
            // An acknowledgement (kept out of the target's log) says the batch applied.
            if got[..] != model.answers[e][..] {
                w.fail(format!(
                    "{} got answer {got:?} for epoch {e}, a failure-free run {:?}",
                    w.engines[i].me(),
                    model.answers[e]
                ));
            }
            st.waiting = None;
            st.epoch += 1;
        }
        (false, None) => st.waiting = Some(w.post(i, 0, BATCH)),
        (false, Some(id)) => {
            let Some(got) = w.take(i, id) else {
                return Step::Blocked;
            };
            // The batch the target replica pulled, from whichever origin replica served
            // it, is byte for byte the one the program issued for this epoch.
            if got[..] != encode(ops)[..] {
                w.fail(format!(
                    "{} got batch {got:?} for epoch {e}, the origin issued {:?}",
                    w.engines[i].me(),
                    encode(ops)
                ));
            }
            let answer = apply(&mut st.window, ops);
            st.applied.extend((0..ops.len()).map(|k| (e, k)));
            if st.window != model.windows[e] {
                w.fail(format!(
                    "{}: window after epoch {e} is {:?}, a failure-free run's {:?}",
                    w.engines[i].me(),
                    st.window,
                    model.windows[e]
                ));
            }
            if answers(ops) {
                w.send(i, BATCH_ANSWER, 0, answer);
            } else {
                let key = w.send_on(i, ACKS, ACK_TAG, 0, Vec::new());
                if w.engines[i].log_holds(&key) {
                    w.fail(format!(
                        "{}: acknowledgement {key} logged",
                        w.engines[i].me()
                    ));
                }
                st.acks += 1;
            }
            st.waiting = None;
            st.epoch += 1;
        }
    }
    Step::Progress
}

/// A failure-free run of the epochs: the batches, each epoch's answer and the window
/// after it.
struct EpochModel {
    batches: Vec<Vec<Op>>,
    answers: Vec<Vec<u8>>,
    windows: Vec<Vec<u8>>,
}

impl EpochModel {
    fn new(batches: Vec<Vec<Op>>) -> EpochModel {
        let mut window = vec![0u8; WINDOW];
        let (mut answers, mut windows) = (Vec::new(), Vec::new());
        for ops in &batches {
            answers.push(apply(&mut window, ops));
            windows.push(window.clone());
        }
        EpochModel {
            batches,
            answers,
            windows,
        }
    }
}

/// An origin's epochs of puts and accumulates pulled by two or three target replicas,
/// while the origin replica they pull from is killed at a random point of an epoch
/// (sometimes a target replica too), half the time replaced by a new incarnation that
/// replays the origin's program: every target replica gets each epoch's batch once, byte
/// for byte as issued (by whichever incarnation served it), applies every operation
/// exactly once and in issue order (its window equals a failure-free run's after every
/// epoch), and every surviving origin replica, the new incarnation included, gets the
/// failure-free answers. docs/PROTOCOL.md "One-sided communication".
#[test]
fn an_epoch_s_operations_apply_once_in_order_in_every_target_replica_across_failovers() {
    let (mut runs, mut failovers, mut kills) = (0usize, 0u64, 0usize);
    let (mut regenerated, mut caught_up, mut acks) = (0usize, 0usize, 0usize);
    for seed in seeds(150, 45) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0e5c);
        let r = rng.random_range(2..=3);
        let model = EpochModel::new(epochs(&mut rng, 30));
        let regenerate = rng.random_bool(0.5);
        let mut w = World::new(seed, 2, r, regenerate);
        let mut states: Vec<EpochState> = (0..2 * r).map(|_| EpochState::default()).collect();
        // Kill origin replica 0.0 (the one target replica 1.0 pulls from) when it has
        // issued `at` epochs, half the time with a new incarnation replaying the origin's
        // program in its place; now and then a target replica as well.
        let at = rng.random_range(0..model.batches.len());
        let kill_origin = rng.random_bool(0.85);
        let target_too = rng
            .random_bool(0.2)
            .then(|| rng.random_range(0..r) as usize);
        let mut struck = false;
        w.run("epochs", &mut states, |w, i, st| {
            if kill_origin && !struck && i == 0 && st.epoch == at {
                // Mid-epoch: part of what it made left, the rest is lost with it.
                struck = true;
                let n = w.rng.random_range(0..3);
                w.flush_some(0, n);
                match regenerate {
                    true => w.regenerate(0),
                    false => w.kill(0),
                }
                if let Some(t) = target_too {
                    w.kill(r as usize + t);
                }
                return Step::Blocked;
            }
            epoch_step(w, i, st, &model)
        });
        acks += states
            .iter()
            .skip(r as usize)
            .map(|st| st.acks)
            .sum::<usize>();
        regenerated += usize::from(w.incs[0] > 0);
        caught_up += w.caught_up;
        for (i, st) in states.iter().enumerate().skip(r as usize) {
            if !w.alive[i] {
                continue;
            }
            let all: Vec<(usize, usize)> = model
                .batches
                .iter()
                .enumerate()
                .flat_map(|(e, ops)| (0..ops.len()).map(move |k| (e, k)))
                .collect();
            if st.applied != all {
                w.fail(format!("target replica {i} applied {:?}", st.applied));
            }
        }
        runs += 1;
        kills += w.kills;
        failovers += w.engines.iter().map(|e| e.stats().failovers).sum::<u64>();
    }
    eprintln!(
        "one-sided epochs: {runs} runs, {kills} kills, {failovers} failovers, \
         {regenerated} regenerated origin replicas, {caught_up} caught up, {acks} acknowledgements"
    );
    assert!(runs == 1 || (kills > 0 && failovers > 0 && caught_up > 0 && acks > 0));
}
