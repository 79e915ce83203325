//! EP, the "embarrassingly parallel" kernel (NPB 3.3 MPI `EP/ep.f`): Gaussian pairs by
//! the Marsaglia polar method from the NPB generator, tallied in ten square annuli. Owns
//! the batch split over ranks and the final all-reduces of the sums and counts.

use serde::{Deserialize, Serialize};
use volpex::{Communicator, SystemOperation};

use crate::checkpoint::{ensure, Checkpoints};
use crate::common::{
    broadcast_from_root, pow_mod46, randlc, rel_ok, vranlc, Class, NpbError, Report, RANDLC_A,
};

/// log2 of the batch size (the reference's `mk`).
const MK: u32 = 16;
/// Pairs per batch.
const NK: usize = 1 << MK;
/// Number of annuli counted.
const NQ: usize = 10;
/// Seed of the generator.
const SEED: f64 = 271_828_183.0;
/// Verification tolerance.
const EPSILON: f64 = 1.0e-8;

/// log2 of the number of pairs (the reference's `m`) and the official sums.
fn params(class: Class) -> (u32, f64, f64) {
    match class {
        Class::S => (24, -3.247_834_652_034_74e3, -6.958_407_078_382_297e3),
        Class::W => (25, -2.863_319_731_645_753e3, -6.320_053_679_109_499e3),
        Class::A => (28, -4.295_875_165_629_892e3, -1.580_732_573_678_431e4),
        Class::B => (30, 4.033_815_542_441_498e4, -2.660_669_192_809_235e4),
        Class::C => (32, 4.764_367_927_995_374e4, -8.084_072_988_043_731e4),
    }
}

/// Default number of checkpoints in a rank's share of the batches.
const CHECKPOINTS_PER_RUN: u64 = 16;

/// What one rank tallies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Tally {
    sx: f64,
    sy: f64,
    q: [f64; NQ],
}

/// What the rest of a run needs after a batch: how many of this rank's batches are
/// done, the tally so far and the timer. The batches communicate nothing (the sums are
/// all-reduced after the last one), so a checkpoint here only spares a regenerated
/// replica the batches before it.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct State {
    done: u64,
    tally: Tally,
    /// Seconds of the timed section so far.
    elapsed: f64,
}

/// Runs EP on `world`, checkpointing after batches.
pub fn run(world: &Communicator, class: Class, ck: &Checkpoints) -> Result<Report, NpbError> {
    let (m, sx_ref, sy_ref) = params(class);
    let restored = ck.restored::<State>()?;
    if restored.is_none() {
        // timers_enabled: rank 0 would read timer.flag; the extra timers stay off.
        broadcast_from_root(world, &mut [0])?;
    }
    let nodes = world.size() as u64;
    let node = world.rank() as u64;
    let batches = 1u64 << (m - MK);
    let (first, count) = my_batches(batches, nodes, node);
    if count == 0 {
        return Err(NpbError::Setup(format!(
            "EP class {class} has {batches} batches: too many processes ({nodes})"
        )));
    }
    let mut x = vec![0.0f64; 2 * NK];
    let every_default = (count / CHECKPOINTS_PER_RUN).max(1);

    let (done, mut tally, t0) = match restored {
        Some(st) => {
            ensure(st.done <= count, "EP batch")?;
            (st.done, st.tally, volpex::wtime() - st.elapsed)
        }
        None => {
            world.barrier()?;
            let tally = Tally {
                sx: 0.0,
                sy: 0.0,
                q: [0.0; NQ],
            };
            (0, tally, volpex::wtime())
        }
    };
    // a^(2 nk): the generator's jump from one batch to the next.
    let an = pow_mod46(RANDLC_A, 2 * NK as u64);
    for i in done..count {
        let kk = first + i;
        let mut t1 = SEED;
        randlc(&mut t1, pow_mod46(an, kk));
        vranlc(&mut t1, RANDLC_A, &mut x);
        gaussian_pairs(&x, &mut tally);
        ck.save(world, every_default, (i + 1, count), || State {
            done: i + 1,
            tally: tally.clone(),
            elapsed: volpex::wtime() - t0,
        })?;
    }
    let mut sums = [0.0f64; 1];
    world.all_reduce_into(&[tally.sx], &mut sums, SystemOperation::sum())?;
    let sx = sums[0];
    world.all_reduce_into(&[tally.sy], &mut sums, SystemOperation::sum())?;
    let sy = sums[0];
    let mut q = [0.0f64; NQ];
    world.all_reduce_into(&tally.q, &mut q, SystemOperation::sum())?;
    let elapsed = volpex::wtime() - t0;
    let mut tm = [0.0f64];
    world.all_reduce_into(&[elapsed], &mut tm, SystemOperation::max())?;
    let tm = tm[0];

    let verified = rel_ok(sx, sx_ref, EPSILON) && rel_ok(sy, sy_ref, EPSILON);
    let numbers = 2f64.powi(m as i32 + 1);
    Ok(Report {
        name: "EP",
        class,
        size: (1u64 << (m + 1), 0, 0),
        iterations: 0,
        seconds: tm,
        processes: world.size(),
        mops_total: numbers / tm / 1.0e6,
        operation: "Random numbers generated",
        verified,
        checks: [sx, sy].into_iter().chain(q).collect(),
    })
}

/// First batch and number of batches of rank `node`: the first `batches % nodes` ranks
/// take one extra.
fn my_batches(batches: u64, nodes: u64, node: u64) -> (u64, u64) {
    let base = batches / nodes;
    let large = batches % nodes;
    if node < large {
        (node * (base + 1), base + 1)
    } else {
        (large * (base + 1) + (node - large) * base, base)
    }
}

/// Accepts the pairs of `x` inside the unit disc and turns them into Gaussian deviates.
fn gaussian_pairs(x: &[f64], tally: &mut Tally) {
    for pair in x.chunks_exact(2) {
        let x1 = 2.0 * pair[0] - 1.0;
        let x2 = 2.0 * pair[1] - 1.0;
        let t1 = x1 * x1 + x2 * x2;
        if t1 <= 1.0 {
            let t2 = (-2.0 * t1.ln() / t1).sqrt();
            let t3 = x1 * t2;
            let t4 = x2 * t2;
            // max and the index as the reference's maxsd and cvttsd2si: both values are
            // finite and non-negative, so `f64::max`'s NaN rule and a conversion
            // saturating at 0 would only cost instructions.
            let (a3, a4) = (t3.abs(), t4.abs());
            let l = if a3 > a4 { a3 } else { a4 } as i64 as usize;
            tally.q[l.min(NQ - 1)] += 1.0;
            tally.sx += t3;
            tally.sy += t4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class S resumed from each of its checkpoints (as a regenerated replica restored
    /// from it) gives the uninterrupted run's results bit for bit; its states survive
    /// the postcard round trip.
    #[test]
    fn class_s_resumes_from_every_checkpoint() {
        let recorded = crate::checkpoint::assert_resumes_from_every_checkpoint(run, Class::S, None);
        crate::checkpoint::assert_states_round_trip::<State>(&recorded);
    }

    #[test]
    fn batches_cover_the_range_once() {
        for nodes in 1..=7u64 {
            let mut next = 0;
            for node in 0..nodes {
                let (first, count) = my_batches(100, nodes, node);
                assert_eq!(first, next);
                next += count;
            }
            assert_eq!(next, 100);
        }
    }
}
