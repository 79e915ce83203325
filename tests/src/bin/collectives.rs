//! Test program: every collective against a sequential computation of its expected
//! result (MPI-3.1 chapter 5), for any number of ranks, including zero-length parts and
//! a non-commutative user operation, on small vectors and on vectors above the switch
//! points of the large-vector algorithms (`volpex::collective_limits`). `--iters`
//! repeats the whole set (with `--work-ms` between rounds) so replicas can be killed
//! mid-run. `--late-ms L` repeats the large all-to-all once more, the last rank entering
//! it L ms late (its senders wait for its pulls). Prints one line from rank 0.

use volpex::collective_limits as limit;
use volpex::{Communicator, SystemOperation, UserOperation};

fn check(ok: bool, what: &str) {
    volpex_tests::check("collectives", ok, what);
}

/// Rank i's j-th input element in round `round`.
fn input(i: i32, j: usize, round: u64) -> i64 {
    (i as i64 + 1) * 1000 + j as i64 * 7 + round as i64
}

/// A non-commutative, associative operation: 2x2 matrix product (wrapping).
fn matmul(a: [i64; 4], b: [i64; 4]) -> [i64; 4] {
    let m = |x: i64, y: i64| x.wrapping_mul(y);
    [
        m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
        m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
        m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
        m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
    ]
}

/// Rank i's j-th matrix.
fn matrix(i: i32, j: usize, round: u64) -> [i64; 4] {
    let x = input(i, j, round);
    [x, 1, x % 7, 2]
}

/// A plain-data struct sent as it is (MPI derived datatype by `bytemuck` derive).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct Particle {
    pos: [f64; 3],
    id: u64,
}

/// Folds a value into the run's digest.
fn mix(d: i64, v: i64) -> i64 {
    d.wrapping_mul(1_000_003).wrapping_add(v)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (iters, work_ms, late_ms) = (arg("--iters", 1), arg("--work-ms", 0), arg("--late-ms", 0));
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (me, n) = (world.rank(), world.size());
    let mut digest = 0i64;
    for round in 0..iters {
        for len in [0usize, 1, 5] {
            let mine: Vec<i64> = (0..len).map(|j| input(me, j, round)).collect();
            let mats: Vec<[i64; 4]> = (0..len).map(|j| matrix(me, j, round)).collect();
            // Product of the matrices of ranks 0..upto, in rank order.
            let mat_prefix = |upto: i32| -> Vec<[i64; 4]> {
                (0..len)
                    .map(|j| {
                        (1..upto).fold(matrix(0, j, round), |acc, r| {
                            matmul(acc, matrix(r, j, round))
                        })
                    })
                    .collect()
            };
            let all = |f: &dyn Fn(i64, i64) -> i64| -> Vec<i64> {
                (0..len)
                    .map(|j| (1..n).fold(input(0, j, round), |acc, r| f(acc, input(r, j, round))))
                    .collect()
            };
            for root in [0, n - 1] {
                // Broadcast.
                let mut b: Vec<i64> = if me == root {
                    mine.clone()
                } else {
                    vec![0; len]
                };
                world.process_at_rank(root).broadcast_into(&mut b[..])?;
                let want: Vec<i64> = (0..len).map(|j| input(root, j, round)).collect();
                check(b == want, "broadcast");
                // Reduce, commutative and not.
                let rootp = world.process_at_rank(root);
                let mut r = vec![0i64; len];
                let mut o = vec![[0i64; 4]; len];
                if me == root {
                    rootp.reduce_into_root(&mine, &mut r, SystemOperation::sum())?;
                    rootp.reduce_into_root(
                        &mats,
                        &mut o,
                        UserOperation::non_commutative(matmul),
                    )?;
                    check(r == all(&|a, b| a + b), "reduce sum");
                    check(o == mat_prefix(n), "reduce non-commutative");
                } else {
                    rootp.reduce_into(&mine, SystemOperation::sum())?;
                    rootp.reduce_into(&mats, UserOperation::non_commutative(matmul))?;
                }
                // Gather and scatter.
                let everyone: Vec<i64> = (0..n)
                    .flat_map(|i| (0..len).map(move |j| input(i, j, round)))
                    .collect();
                if me == root {
                    let mut g = vec![0i64; len * n as usize];
                    rootp.gather_into_root(&mine, &mut g)?;
                    check(g == everyone, "gather");
                    let mut s = vec![0i64; len];
                    rootp.scatter_into_root(&everyone, &mut s)?;
                    check(s == mine, "scatter at root");
                } else {
                    rootp.gather_into(&mine)?;
                    let mut s = vec![0i64; len];
                    rootp.scatter_into(&mut s)?;
                    check(s == mine, "scatter");
                }
                digest = mix(
                    digest,
                    r.iter()
                        .chain(o.iter().map(|m| &m[0]))
                        .fold(0, |a: i64, b| a.wrapping_add(*b)),
                );
            }
            // All-reduce with every predefined operation family, and a user operation.
            let mut ar = vec![0i64; len];
            world.all_reduce_into(&mine, &mut ar, SystemOperation::max())?;
            check(ar == all(&|a, b| a.max(b)), "all-reduce max");
            world.all_reduce_into(&mine, &mut ar, SystemOperation::bitwise_xor())?;
            check(ar == all(&|a, b| a ^ b), "all-reduce bxor");
            let mut am = vec![[0i64; 4]; len];
            world.all_reduce_into(&mats, &mut am, UserOperation::non_commutative(matmul))?;
            check(am == mat_prefix(n), "all-reduce non-commutative");
            let fmine: Vec<f64> = mine.iter().map(|x| *x as f64 * 0.5).collect();
            let mut fr = vec![0f64; len];
            world.all_reduce_into(&fmine, &mut fr, SystemOperation::sum())?;
            let fwant: Vec<f64> = all(&|a, b| a + b).iter().map(|x| *x as f64 * 0.5).collect();
            check(fr == fwant, "all-reduce f64 sum");
            // All-gather.
            let everyone: Vec<i64> = (0..n)
                .flat_map(|i| (0..len).map(move |j| input(i, j, round)))
                .collect();
            let mut ag = vec![0i64; len * n as usize];
            world.all_gather_into(&mine, &mut ag)?;
            check(ag == everyone, "all-gather");
            // All-to-all: block j of rank i is (i, j).
            let send: Vec<i64> = (0..n)
                .flat_map(|j| (0..len).map(move |k| (me * 100 + j) as i64 * 10 + k as i64))
                .collect();
            let mut recv = vec![0i64; len * n as usize];
            world.all_to_all_into(&send, &mut recv)?;
            let want: Vec<i64> = (0..n)
                .flat_map(|i| (0..len).map(move |k| (i * 100 + me) as i64 * 10 + k as i64))
                .collect();
            check(recv == want, "all-to-all");
            // Scans.
            let mut sc = vec![[0i64; 4]; len];
            world.scan_into(&mats, &mut sc, UserOperation::non_commutative(matmul))?;
            check(sc == mat_prefix(me + 1), "scan");
            let mut ex = vec![[-1i64; 4]; len];
            world.exclusive_scan_into(&mats, &mut ex, UserOperation::non_commutative(matmul))?;
            check(me == 0 || ex == mat_prefix(me), "exclusive scan");
            let mut sum_scan = vec![0i64; len];
            world.scan_into(&mine, &mut sum_scan, SystemOperation::sum())?;
            let want: Vec<i64> = (0..len)
                .map(|j| (0..=me).map(|r| input(r, j, round)).sum())
                .collect();
            check(sum_scan == want, "scan sum");
            let s = ar
                .iter()
                .chain(&sum_scan)
                .chain(sc.iter().map(|m| &m[3]))
                .fold(0, |a: i64, b| a.wrapping_add(*b));
            digest = mix(digest, s);
        }
        // Varcount variants: rank i contributes i % 3 elements (zero-length parts too).
        let counts: Vec<usize> = (0..n).map(|i| (i % 3) as usize).collect();
        let part =
            |i: i32| -> Vec<i64> { (0..(i % 3) as usize).map(|j| input(i, j, round)).collect() };
        let concat: Vec<i64> = (0..n).flat_map(part).collect();
        let mine = part(me);
        let root = world.process_at_rank(n - 1);
        if me == n - 1 {
            let mut g = vec![0i64; concat.len()];
            root.gather_varcount_into_root(&mine, &mut g, &counts)?;
            check(g == concat, "gatherv");
        } else {
            root.gather_varcount_into(&mine)?;
        }
        let zero = world.process_at_rank(0);
        let mut sv = vec![0i64; mine.len()];
        if me == 0 {
            zero.scatter_varcount_into_root(&concat, &counts, &mut sv)?;
        } else {
            zero.scatter_varcount_into(&mut sv)?;
        }
        check(sv == mine, "scatterv");
        let mut agv = vec![0i64; concat.len()];
        world.all_gather_varcount_into(&mine, &mut agv, &counts)?;
        check(agv == concat, "allgatherv");
        let len_to = |i: i32, j: i32| ((i + j) % 3) as usize;
        let val = |i: i32, j: i32, k: usize| (i * 100 + j) as i64 * 10 + k as i64;
        let send_counts: Vec<usize> = (0..n).map(|j| len_to(me, j)).collect();
        let recv_counts: Vec<usize> = (0..n).map(|i| len_to(i, me)).collect();
        let send: Vec<i64> = (0..n)
            .flat_map(|j| (0..len_to(me, j)).map(move |k| val(me, j, k)))
            .collect();
        let want: Vec<i64> = (0..n)
            .flat_map(|i| (0..len_to(i, me)).map(move |k| val(i, me, k)))
            .collect();
        let mut atv = vec![0i64; want.len()];
        world.all_to_all_varcount_into(&send, &send_counts, &mut atv, &recv_counts)?;
        check(atv == want, "alltoallv");
        let rs_send: Vec<i64> = (0..2 * n as usize).map(|j| input(me, j, round)).collect();
        let mut rs = [0i64; 2];
        world.reduce_scatter_block_into(&rs_send, &mut rs, SystemOperation::sum())?;
        let want: Vec<i64> = (0..2)
            .map(|b| (0..n).map(|i| input(i, 2 * me as usize + b, round)).sum())
            .collect();
        check(rs[..] == want[..], "reduce-scatter block");
        // Reduce-scatter with varying counts (rank i keeps i % 3 elements).
        let total: usize = counts.iter().sum();
        let rv_send: Vec<i64> = (0..total).map(|j| input(me, j, round)).collect();
        let mut rv = vec![0i64; counts[me as usize]];
        world.reduce_scatter_into(&rv_send, &mut rv, &counts, SystemOperation::sum())?;
        let at: usize = counts[..me as usize].iter().sum();
        let want: Vec<i64> = (0..rv.len())
            .map(|k| (0..n).map(|i| input(i, at + k, round)).sum())
            .collect();
        check(rv == want, "reduce-scatter varcount");
        // Min-loc and max-loc over (value, location) pairs; ties keep the lower location.
        let pairs = [
            [(input(me, 0, round) % 5) as f64, me as f64],
            [-((me % 2) as f64), me as f64],
        ];
        let mut lo = [[0f64; 2]; 2];
        let mut hi = [[0f64; 2]; 2];
        world.all_reduce_into(&pairs, &mut lo, volpex::MinLoc)?;
        world.all_reduce_into(&pairs, &mut hi, volpex::MaxLoc)?;
        let best = |better: &dyn Fn(f64, f64) -> bool, k: usize| {
            (0..n).fold([f64::NAN, -1.0], |acc: [f64; 2], i| {
                let v = if k == 0 {
                    (input(i, 0, round) % 5) as f64
                } else {
                    -((i % 2) as f64)
                };
                if acc[1] < 0.0 || better(v, acc[0]) {
                    [v, i as f64]
                } else {
                    acc
                }
            })
        };
        for k in 0..2 {
            check(lo[k] == best(&|a, b| a < b, k), "min-loc");
            check(hi[k] == best(&|a, b| a > b, k), "max-loc");
        }
        // Immediate barrier, broadcast and all-reduce, overlapped with other work.
        // (Buffers first: a request must not outlive what it fills.)
        let mut ib = if me == 0 {
            mine.clone()
        } else {
            vec![0i64; counts[0]]
        };
        let mut ia = [0i64; 3];
        let send3 = [input(me, 0, round), 1, me as i64];
        let bar = world.immediate_barrier()?;
        let bc = world
            .process_at_rank(0)
            .immediate_broadcast_into(&mut ib[..])?;
        let red = world.immediate_all_reduce_into(&send3, &mut ia, SystemOperation::sum())?;
        let mut blocking = [0i64; 3];
        world.all_reduce_into(&send3, &mut blocking, SystemOperation::sum())?;
        volpex::wait_all(vec![bar, bc, red])?;
        check(ib == part(0), "immediate broadcast");
        check(ia == blocking, "immediate all-reduce");
        // Strided and indexed views: column `me % 3` of a 4 x 3 row-major matrix to the
        // right neighbour, which stores it into its own column, and an indexed send.
        let m: Vec<i64> = (0..12).map(|x| input(me, x, round)).collect();
        let col = (me % 3) as usize;
        let column = volpex::Strided::new(&m[col..], 4, 1, 3)?;
        let right = world.process_at_rank((me + 1) % n);
        let left = (me + n - 1) % n;
        right.send_with_tag(&column, 40)?;
        let mut into = [0i64; 12];
        let lcol = (left % 3) as usize;
        {
            let mut view = volpex::StridedMut::new(&mut into[lcol..], 4, 1, 3)?;
            world
                .process_at_rank(left)
                .receive_into_with_tag(&mut view, 40)?;
        }
        let want_col: Vec<i64> = (0..4).map(|r| input(left, r * 3 + lcol, round)).collect();
        let got_col: Vec<i64> = (0..4).map(|r| into[r * 3 + lcol]).collect();
        check(got_col == want_col, "strided column");
        // A derived plain-data struct, point-to-point and in a collective.
        let p = Particle {
            pos: [me as f64, 0.5, -1.0],
            id: round * 100 + me as u64,
        };
        right.send_with_tag(&[p][..], 42)?;
        let (got, _) = world
            .process_at_rank(left)
            .receive_with_tag::<Particle>(42)?;
        check(
            got.id == round * 100 + left as u64 && got.pos[0] == left as f64,
            "struct send",
        );
        let mut all_p = vec![
            Particle {
                pos: [0.0; 3],
                id: 0
            };
            n as usize
        ];
        world.all_gather_into(&[p], &mut all_p)?;
        check(
            all_p
                .iter()
                .enumerate()
                .all(|(i, q)| q.id == round * 100 + i as u64),
            "struct all-gather",
        );
        let blocks = [(9usize, 3usize), (0, 2)];
        let idx = volpex::Indexed::new(&m, &blocks)?;
        right.send_with_tag(&idx, 41)?;
        let (flat, st) = world
            .process_at_rank(left)
            .receive_vec_with_tag::<i64>(41)?;
        let want: Vec<i64> = [9, 10, 11, 0, 1]
            .iter()
            .map(|&x| input(left, x, round))
            .collect();
        check(flat == want && st.count::<i64>() == 5, "indexed send");
        digest = mix(
            digest,
            agv.iter()
                .chain(&atv)
                .chain(&rs)
                .chain(&rv)
                .chain(&ia)
                .fold(0, |a: i64, b| a.wrapping_add(*b)),
        );
        digest = mix(digest, large_vectors(&world, round, late_ms)?);
        world.barrier()?;
        if work_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(work_ms));
        }
    }
    if me == 0 {
        println!("collectives: ok ranks={n} digest={digest:016x}");
    }
    Ok(())
}

/// Elements of `T` just above `bytes` (so a vector of them takes the large-vector path),
/// plus `extra` (so it does not split evenly).
fn above<T>(bytes: usize, extra: usize) -> usize {
    bytes / std::mem::size_of::<T>() + extra
}

/// The same 64 bits on every rank? (An all-gather of this rank's.)
fn same_everywhere(world: &Communicator, bits: u64) -> Result<bool, volpex::Error> {
    let mut all = vec![0u64; world.size() as usize];
    world.all_gather_into(&[bits], &mut all)?;
    Ok(all.iter().all(|&b| b == bits))
}

/// A hash of the bit patterns of `v`.
fn bits_of(v: &[f64]) -> u64 {
    v.iter().fold(0u64, |h, x| {
        h.rotate_left(5) ^ x.to_bits().wrapping_mul(0x9e37_79b9_7f4a_7c15)
    })
}

/// Collectives on vectors above the switch points: all-reduce and reduce by recursive
/// halving (commutative) and through the tree (non-commutative), reduce-scatter by
/// halving with zero-length parts, broadcast by binomial tree or scatter plus ring, ring
/// all-gather(v), all-to-all posting its receives first. Returns a digest of the results.
fn large_vectors(world: &Communicator, round: u64, late_ms: u64) -> Result<i64, volpex::Error> {
    let (me, n) = (world.rank(), world.size());
    let mut digest = 0i64;
    // All-reduce and reduce of integers and exact halves (any order gives the same sum).
    let len = above::<i64>(limit::HALVING_BYTES, 3);
    let mine: Vec<i64> = (0..len).map(|j| input(me, j, round)).collect();
    let want: Vec<i64> = (0..len)
        .map(|j| (0..n).map(|i| input(i, j, round)).sum())
        .collect();
    let mut got = vec![0i64; len];
    world.all_reduce_into(&mine, &mut got, SystemOperation::sum())?;
    check(got == want, "large all-reduce sum");
    let halves: Vec<f64> = mine.iter().map(|x| *x as f64 * 0.5).collect();
    let mut fgot = vec![0f64; len];
    world.all_reduce_into(&halves, &mut fgot, SystemOperation::sum())?;
    check(
        fgot.iter().zip(&want).all(|(g, w)| *g == *w as f64 * 0.5),
        "large all-reduce f64 sum",
    );
    for root in [0, n - 1] {
        let rootp = world.process_at_rank(root);
        if me == root {
            let mut r = vec![0i64; len];
            rootp.reduce_into_root(&mine, &mut r, SystemOperation::sum())?;
            check(r == want, "large reduce sum");
        } else {
            rootp.reduce_into(&mine, SystemOperation::sum())?;
        }
    }
    // Rounding depends on the order of the sum: every rank must still get the same bits.
    let thirds: Vec<f64> = (0..len)
        .map(|j| (input(me, j, round) as f64).sqrt() / 3.0)
        .collect();
    world.all_reduce_into(&thirds, &mut fgot, SystemOperation::sum())?;
    check(
        same_everywhere(world, bits_of(&fgot))?,
        "large all-reduce: the same bits on every rank",
    );
    let mut small = [0f64; 3];
    world.all_reduce_into(&thirds[..3], &mut small, SystemOperation::sum())?;
    check(
        same_everywhere(world, bits_of(&small))?,
        "all-reduce: the same bits on every rank",
    );
    // Non-commutative: rank order, through the tree, on a vector as large.
    let mlen = above::<[i64; 4]>(limit::HALVING_BYTES, 1);
    let mats: Vec<[i64; 4]> = (0..mlen).map(|j| matrix(me, j, round)).collect();
    let mut am = vec![[0i64; 4]; mlen];
    world.all_reduce_into(&mats, &mut am, UserOperation::non_commutative(matmul))?;
    let mat_all =
        |j: usize| (1..n).fold(matrix(0, j, round), |a, r| matmul(a, matrix(r, j, round)));
    check(
        am.iter().enumerate().all(|(j, m)| *m == mat_all(j)),
        "large all-reduce non-commutative",
    );
    // Reduce-scatter by halving: rank i keeps (i % 3) * k elements (zero-length parts),
    // with k such that they add up to a large vector.
    let shares = (0..n).map(|i| (i % 3) as usize).sum::<usize>().max(1);
    let k = above::<i64>(limit::HALVING_BYTES, 1).div_ceil(shares);
    let counts: Vec<usize> = (0..n).map(|i| (i % 3) as usize * k).collect();
    let total: usize = counts.iter().sum();
    let rs_send: Vec<i64> = (0..total).map(|j| input(me, j, round)).collect();
    let mut rv = vec![0i64; counts[me as usize]];
    world.reduce_scatter_into(&rs_send, &mut rv, &counts, SystemOperation::sum())?;
    let at: usize = counts[..me as usize].iter().sum();
    check(
        rv.iter()
            .enumerate()
            .all(|(x, v)| *v == (0..n).map(|i| input(i, at + x, round)).sum::<i64>()),
        "large reduce-scatter varcount",
    );
    let block = above::<i64>(limit::HALVING_BYTES, 2) / n as usize + 1;
    let rb_send: Vec<i64> = (0..block * n as usize)
        .map(|j| input(me, j, round))
        .collect();
    let mut rb = vec![0i64; block];
    world.reduce_scatter_block_into(&rb_send, &mut rb, SystemOperation::max())?;
    check(
        rb.iter().enumerate().all(|(x, v)| {
            *v == (0..n)
                .map(|i| input(i, me as usize * block + x, round))
                .max()
                .unwrap_or(i64::MIN)
        }),
        "large reduce-scatter block",
    );
    // Broadcast: binomial tree, or scatter plus ring on many ranks.
    let blen = above::<i64>(limit::SCATTER_BYTES, 5);
    for root in [n - 1, 0] {
        let mut b: Vec<i64> = if me == root {
            (0..blen).map(|j| input(root, j, round)).collect()
        } else {
            vec![0; blen]
        };
        world.process_at_rank(root).broadcast_into(&mut b[..])?;
        check(
            b.iter()
                .enumerate()
                .all(|(j, v)| *v == input(root, j, round)),
            "large broadcast",
        );
        digest = mix(digest, b[blen - 1]);
    }
    // Ring all-gather(v): rank i contributes (i % 3) * k elements.
    let k = above::<i64>(limit::GATHER_BROADCAST_BYTES, 1).div_ceil(shares);
    let counts: Vec<usize> = (0..n).map(|i| (i % 3) as usize * k).collect();
    let part = |i: i32| -> Vec<i64> {
        (0..counts[i as usize])
            .map(|j| input(i, j, round))
            .collect()
    };
    let concat: Vec<i64> = (0..n).flat_map(part).collect();
    let mut agv = vec![0i64; concat.len()];
    world.all_gather_varcount_into(&part(me), &mut agv, &counts)?;
    check(agv == concat, "large allgatherv");
    // All-to-all with blocks large enough to post the receives first.
    let ab = above::<i64>(limit::POST_FIRST_BYTES, 1);
    let val = |i: i32, j: i32, x: usize| input(i, x, round) * 100 + j as i64;
    let send: Vec<i64> = (0..n)
        .flat_map(|j| (0..ab).map(move |x| val(me, j, x)))
        .collect();
    let want: Vec<i64> = (0..n)
        .flat_map(|i| (0..ab).map(move |x| val(i, me, x)))
        .collect();
    // Once more with a late rank: no pull stands for a large block (its receiver asks
    // for none ahead), so the blocks to it wait for its pulls.
    let passes = if late_ms > 0 { 2 } else { 1 };
    for pass in 0..passes {
        if pass == 1 && me == n - 1 {
            std::thread::sleep(std::time::Duration::from_millis(late_ms));
        }
        let mut recv = vec![0i64; send.len()];
        world.all_to_all_into(&send, &mut recv)?;
        check(recv == want, "large all-to-all");
    }
    let sum = |v: &[i64]| v.iter().fold(0i64, |a, b| a.wrapping_add(*b));
    digest = mix(digest, sum(&got));
    digest = mix(digest, sum(&rv));
    digest = mix(digest, sum(&agv));
    digest = mix(digest, am.iter().fold(0i64, |a, m| a.wrapping_add(m[1])));
    Ok(digest)
}
