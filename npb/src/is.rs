//! IS, integer sort (NPB 3.3 MPI `IS/is.c`): bucket-sorts random keys locally,
//! redistributes them by bucket with an all-to-all of counts and an all-to-all-v of keys,
//! ranks them by counting, checks five test keys each iteration (partial verification)
//! and the final global order (full verification). Owns the key redistribution.

use serde::{Deserialize, Serialize};
use volpex::{Communicator, SystemOperation};

use crate::checkpoint::{ensure, Checkpoints};
use crate::common::{
    broadcast_from_root, log2, max_time_at_root, pow_mod46, randlc, require_power_of_two,
    verdict_from_root, Class, NpbError, Report, RANDLC_A,
};

/// Timed iterations.
const MAX_ITERATIONS: usize = 10;
/// Keys whose rank is checked every iteration.
const TEST_ARRAY_SIZE: usize = 5;
/// Seed of the key generator.
const SEED: f64 = 314_159_265.0;
/// Tag of the full verification's neighbour exchange.
const TAG_VERIFY: i32 = 1000;
/// Default checkpoint interval, in ranking iterations.
const CHECKPOINT_EVERY: u64 = 1;

/// What the rest of a run needs before a ranking iteration: which one, the partial
/// verifications passed so far and the timer. The keys are regenerated locally
/// (create_seq, then rank 0's two keys per iteration done); every other buffer is
/// rebuilt by the iteration. There is no checkpoint after the last iteration: the full
/// verification that follows needs that iteration's redistributed keys.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct State {
    /// The next ranking iteration (1..=MAX_ITERATIONS).
    next: u64,
    passed: i32,
    /// Seconds of the timed section so far.
    elapsed: f64,
}

/// Sizes of a class (log2 of keys, of the key range and of the number of buckets) and
/// its test keys' indices and (iteration-shifted) ranks.
struct Params {
    total_keys_log2: u32,
    max_key_log2: u32,
    buckets_log2: u32,
    max_procs: i32,
    test_index: [i64; TEST_ARRAY_SIZE],
    test_rank: [i64; TEST_ARRAY_SIZE],
}

fn params(class: Class) -> Params {
    let (t, k, b, max_procs, test_index, test_rank) = match class {
        Class::S => (
            16,
            11,
            9,
            128,
            [48427, 17148, 23627, 62548, 4431],
            [0, 18, 346, 64917, 65463],
        ),
        Class::W => (
            20,
            16,
            10,
            1024,
            [357773, 934767, 875723, 898999, 404505],
            [1249, 11698, 1039987, 1043896, 1048018],
        ),
        Class::A => (
            23,
            19,
            10,
            1024,
            [2112377, 662041, 5336171, 3642833, 4250760],
            [104, 17523, 123928, 8288932, 8388264],
        ),
        Class::B => (
            25,
            21,
            10,
            1024,
            [41869, 812306, 5102857, 18232239, 26860214],
            [33422937, 10244, 59149, 33135281, 99],
        ),
        Class::C => (
            27,
            23,
            10,
            1024,
            [44172927, 72999161, 74326391, 129606274, 21736814],
            [61147, 882988, 266290, 133997595, 133525895],
        ),
    };
    Params {
        total_keys_log2: t,
        max_key_log2: k,
        buckets_log2: b,
        max_procs,
        test_index,
        test_rank,
    }
}

/// The rank test key `i` must have at `iteration` (the shifts of the reference's
/// partial_verify, which differ per class).
fn expected_rank(class: Class, base: i64, i: usize, iteration: i64) -> i64 {
    let up = match class {
        Class::S | Class::C => i <= 2,
        Class::W => i < 2,
        Class::A => i <= 2,
        Class::B => i == 1 || i == 2 || i == 4,
    };
    match (class, up) {
        (Class::W, true) => base + (iteration - 2),
        (Class::A, true) => base + (iteration - 1),
        (Class::A, false) => base - (iteration - 1),
        (_, true) => base + iteration,
        (_, false) => base - iteration,
    }
}

/// One rank's state.
struct Sorter<'a> {
    world: &'a Communicator,
    class: Class,
    p: Params,
    me: usize,
    procs: usize,
    /// Keys per rank before redistribution.
    num_keys: usize,
    num_buckets: usize,
    shift: u32,
    key_array: Vec<i32>,
    /// Keys sorted into buckets (the all-to-all-v send buffer).
    key_buff1: Vec<i32>,
    /// Keys received in the redistribution.
    key_buff2: Vec<i32>,
    /// Per key value, indexed by the key (only this rank's range is used): cumulative
    /// population (the ranks).
    counts: Vec<i32>,
    /// Keys on this rank after the last redistribution.
    total_local_keys: usize,
    passed: i32,
}

/// Runs IS on `world`, checkpointing before ranking iterations.
pub fn run(world: &Communicator, class: Class, ck: &Checkpoints) -> Result<Report, NpbError> {
    let procs = world.size();
    require_power_of_two("IS", procs)?;
    let p = params(class);
    if procs > p.max_procs {
        return Err(NpbError::Setup(format!(
            "IS class {class} runs on at most {} processes, got {procs}",
            p.max_procs
        )));
    }
    let restored = ck.restored::<State>()?;
    if restored.is_none() {
        // timeron: rank 0 would read timer.flag; the extra timers stay off.
        broadcast_from_root(world, &mut [0])?;
    }
    let mut s = Sorter::new(world, class, p);
    s.create_seq();
    let (first, t0) = match restored {
        Some(st) => {
            ensure(
                (1..=MAX_ITERATIONS as u64).contains(&st.next),
                "IS iteration",
            )?;
            // The keys as the iterations before the checkpoint left them.
            for iteration in 1..st.next as usize {
                s.set_iteration_keys(iteration);
            }
            s.passed = st.passed;
            (st.next as usize, volpex::wtime() - st.elapsed)
        }
        None => {
            // One iteration for free, to touch every page (not timed, not verified).
            s.rank(1)?;
            s.passed = 0;
            let t0 = volpex::wtime();
            s.checkpoint(ck, 0, t0)?;
            (1, t0)
        }
    };
    for iteration in first..=MAX_ITERATIONS {
        s.rank(iteration)?;
        s.checkpoint(ck, iteration, t0)?;
    }
    let elapsed = volpex::wtime() - t0;
    let maxtime = max_time_at_root(world, elapsed)?;

    s.full_verify()?;
    let root = world.process_at_rank(0);
    let mut passed = [0i32];
    if world.rank() == 0 {
        root.reduce_into_root(&[s.passed], &mut passed, SystemOperation::sum())?;
    } else {
        root.reduce_into(&[s.passed], SystemOperation::sum())?;
    }
    let verified = verdict_from_root(world, passed[0] == (5 * MAX_ITERATIONS) as i32 + procs)?;
    let total_keys = 1u64 << s.p.total_keys_log2;
    Ok(Report {
        name: "IS",
        class,
        size: (total_keys, 0, 0),
        iterations: MAX_ITERATIONS as u64,
        seconds: maxtime,
        processes: procs,
        mops_total: (MAX_ITERATIONS as f64) * total_keys as f64 / maxtime / 1.0e6,
        operation: "keys ranked",
        verified,
        checks: vec![f64::from(passed[0])],
    })
}

impl<'a> Sorter<'a> {
    fn new(world: &'a Communicator, class: Class, p: Params) -> Sorter<'a> {
        let procs = world.size() as usize;
        let num_keys = (1usize << p.total_keys_log2) / procs;
        Sorter {
            world,
            class,
            me: world.rank() as usize,
            procs,
            num_keys,
            num_buckets: 1 << p.buckets_log2,
            shift: p.max_key_log2 - p.buckets_log2,
            key_array: vec![0; num_keys],
            key_buff1: vec![0; num_keys],
            key_buff2: Vec::new(),
            counts: vec![0; 1 << p.max_key_log2],
            total_local_keys: 0,
            passed: 0,
            p,
        }
    }

    /// Generates this rank's keys: each the scaled sum of four uniform numbers, the
    /// stream split evenly over the ranks (find_my_seed and create_seq).
    fn create_seq(&mut self) {
        let nn = 4u64 << self.p.total_keys_log2;
        let mq = log2((nn / self.procs as u64) as usize);
        let an = pow_mod46(RANDLC_A, 1u64 << mq);
        let mut seed = SEED;
        randlc(&mut seed, pow_mod46(an, self.me as u64));
        let k = f64::from((1i32 << self.p.max_key_log2) / 4);
        for key in self.key_array.iter_mut() {
            let mut x = randlc(&mut seed, RANDLC_A);
            x += randlc(&mut seed, RANDLC_A);
            x += randlc(&mut seed, RANDLC_A);
            x += randlc(&mut seed, RANDLC_A);
            *key = (k * x) as i32;
        }
    }

    /// The checkpoint after `done` ranking iterations (0: after the untimed one), when
    /// due; the timed section started at `t0`.
    fn checkpoint(&self, ck: &Checkpoints, done: usize, t0: f64) -> Result<(), NpbError> {
        let total = MAX_ITERATIONS as u64;
        ck.save(self.world, CHECKPOINT_EVERY, (done as u64, total), || {
            State {
                next: done as u64 + 1,
                passed: self.passed,
                elapsed: volpex::wtime() - t0,
            }
        })
    }

    /// Rank 0 changes two keys at the start of each ranking iteration.
    fn set_iteration_keys(&mut self, iteration: usize) {
        let max_key = 1i32 << self.p.max_key_log2;
        if self.me == 0 {
            self.key_array[iteration] = iteration as i32;
            self.key_array[iteration + MAX_ITERATIONS] = max_key - iteration as i32;
        }
    }

    /// One ranking iteration (the reference's `rank`).
    fn rank(&mut self, iteration: usize) -> Result<(), NpbError> {
        self.set_iteration_keys(iteration);
        let nb = self.num_buckets;
        // Bucket sizes, with the test keys hidden in the top TEST_ARRAY_SIZE entries.
        let mut bucket_size = vec![0i32; nb + TEST_ARRAY_SIZE];
        for (i, &index) in self.p.test_index.iter().enumerate() {
            if index as usize / self.num_keys == self.me {
                bucket_size[nb + i] = self.key_array[index as usize % self.num_keys];
            }
        }
        bucket_sort(
            &self.key_array,
            self.shift,
            &mut bucket_size[..nb],
            &mut self.key_buff1,
        );

        let mut totals = vec![0i32; nb + TEST_ARRAY_SIZE];
        self.world
            .all_reduce_into(&bucket_size, &mut totals, SystemOperation::sum())?;

        let plan = Redistribution::plan(&bucket_size, &totals[..nb], self.num_keys, self.procs);
        let mut recv_count = vec![0i32; self.procs];
        self.world
            .all_to_all_into(&plan.send_count, &mut recv_count)?;
        let send_counts: Vec<usize> = plan.send_count.iter().map(|&c| c as usize).collect();
        let recv_counts: Vec<usize> = recv_count.iter().map(|&c| c as usize).collect();
        let received: usize = recv_counts.iter().sum();
        self.key_buff2.resize(received, 0);
        self.world.all_to_all_varcount_into(
            &self.key_buff1,
            &send_counts,
            &mut self.key_buff2,
            &recv_counts,
        )?;

        let (first, last) = (plan.first[self.me], plan.last[self.me]);
        let min_key_val = first << self.shift;
        let max_key_val = ((last + 1) << self.shift) - 1;
        // Keys on lower ranks (m) and here (j), from the bucket totals.
        let lesser: i64 = (0..self.me)
            .flat_map(|k| plan.first[k]..=plan.last[k])
            .map(|b| i64::from(totals[b as usize]))
            .sum();
        let local: usize = (first..=last).map(|b| totals[b as usize] as usize).sum();

        // Counts by key value over the whole key range, as the reference's key_buff_ptr
        // (key_buff1 offset by min_key_val): only min_key_val..=max_key_val is used here.
        let (lo, hi) = (
            min_key_val as usize,
            (max_key_val + 1).max(min_key_val) as usize,
        );
        let counts = &mut self.counts[..];
        counts[lo..hi].fill(0);
        // counts' length is a power of two (the key range) and every key lies in it: the
        // mask changes nothing but drops the bounds check from this loop.
        let mask = counts.len() - 1;
        for &key in &self.key_buff2[..local] {
            counts[key as usize & mask] += 1;
        }
        for i in lo + 1..hi {
            counts[i] += counts[i - 1];
        }

        for i in 0..TEST_ARRAY_SIZE {
            let k = totals[nb + i];
            if min_key_val <= k && k <= max_key_val {
                // Keys below k here: the cumulative count at k - 1 (none below the range).
                let below = if k > min_key_val {
                    i64::from(counts[(k - 1) as usize])
                } else {
                    0
                };
                let key_rank = below + lesser;
                let want = expected_rank(self.class, self.p.test_rank[i], i, iteration as i64);
                if key_rank == want {
                    self.passed += 1;
                } else {
                    eprintln!(
                        "Failed partial verification: iteration {iteration}, processor {}, test key {i}",
                        self.me
                    );
                }
            }
        }
        self.total_local_keys = local;
        Ok(())
    }

    /// Sorts the last iteration's keys by their ranks and checks the order, across the
    /// rank boundary too (the reference's full_verify).
    fn full_verify(&mut self) -> Result<(), NpbError> {
        let n = self.total_local_keys;
        let mut sorted = vec![0i32; n];
        for &key in &self.key_buff2[..n] {
            let c = &mut self.counts[key as usize];
            *c -= 1;
            sorted[*c as usize] = key;
        }
        let last = sorted.last().copied().unwrap_or(0);
        let mut k = [0i32];
        {
            let request = if self.me > 0 {
                Some(
                    self.world
                        .process_at_rank(self.me as i32 - 1)
                        .immediate_receive_into_with_tag(&mut k[..], TAG_VERIFY)?,
                )
            } else {
                None
            };
            if self.me + 1 < self.procs {
                self.world
                    .process_at_rank(self.me as i32 + 1)
                    .send_with_tag(&[last][..], TAG_VERIFY)?;
            }
            if let Some(r) = request {
                r.wait()?;
            }
        }
        let mut wrong = 0;
        if self.me > 0 && n > 0 && k[0] > sorted[0] {
            wrong += 1;
        }
        wrong += sorted.windows(2).filter(|w| w[0] > w[1]).count();
        if wrong == 0 {
            self.passed += 1;
        } else {
            eprintln!(
                "Processor {}:  Full_verify: number of keys out of sort: {wrong}",
                self.me
            );
        }
        Ok(())
    }
}

/// Counts the keys per bucket (`key >> shift`) into `sizes` and copies them into `out`
/// grouped by bucket, in their order within a bucket.
fn bucket_sort(keys: &[i32], shift: u32, sizes: &mut [i32], out: &mut [i32]) {
    // nb is a power of two and keys lie in 0..nb << shift: the mask changes nothing but
    // lets the compiler drop the bounds checks.
    let nb = sizes.len();
    let mask = nb - 1;
    for &key in keys {
        sizes[(key >> shift) as usize & mask] += 1;
    }
    let mut ptrs = vec![0usize; nb];
    for i in 1..nb {
        ptrs[i] = ptrs[i - 1] + sizes[i - 1] as usize;
    }
    // `out` holds a power of two of keys (the keys per rank): the same for it.
    let Some(out_mask) = out.len().checked_sub(1) else {
        return;
    };
    for &key in keys {
        let b = &mut ptrs[(key >> shift) as usize & mask];
        out[*b & out_mask] = key;
        *b += 1;
    }
}

/// Which buckets go to which rank: buckets are dealt out in order until a rank's share
/// of all keys passes the average (the reference's redistribution).
struct Redistribution {
    send_count: Vec<i32>,
    /// First and last bucket of each rank.
    first: Vec<i32>,
    last: Vec<i32>,
}

impl Redistribution {
    fn plan(local: &[i32], totals: &[i32], num_keys: usize, procs: usize) -> Redistribution {
        let mut r = Redistribution {
            send_count: vec![0; procs],
            first: vec![0; procs],
            last: vec![0; procs],
        };
        let mut global_sum: i64 = 0;
        let mut local_sum: i32 = 0;
        let mut j = 0usize;
        for i in 0..totals.len() {
            global_sum += i64::from(totals[i]);
            local_sum += local[i];
            if j < procs && global_sum >= ((j + 1) * num_keys) as i64 {
                r.send_count[j] = local_sum;
                if j != 0 {
                    r.first[j] = r.last[j - 1] + 1;
                }
                r.last[j] = i as i32;
                j += 1;
                local_sum = 0;
            }
        }
        // Ranks left without buckets get an empty range.
        while j < procs {
            r.send_count[j] = 0;
            r.first[j] = 1;
            j += 1;
        }
        r
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
    fn one_rank_takes_every_bucket() {
        let local = vec![3, 0, 5, 2];
        let r = Redistribution::plan(&local, &local, 10, 1);
        assert_eq!(r.send_count, vec![10]);
        assert_eq!((r.first[0], r.last[0]), (0, 3));
    }

    #[test]
    fn buckets_are_dealt_in_order() {
        let totals = vec![4, 4, 4, 4];
        let local = vec![2, 2, 2, 2];
        let r = Redistribution::plan(&local, &totals, 8, 2);
        assert_eq!(r.send_count, vec![4, 4]);
        assert_eq!((r.first[1], r.last[1]), (2, 3));
    }
}
