//! Test program: what users of the `mpi` crate (rsmpi) reach for, each result checked
//! against its sequential computation: a struct with padding and `bool` fields by
//! `#[derive(Equivalence)]` (point-to-point, broadcast, gathers), single values in
//! collectives, partitions with displacements (gaps left untouched), immediate
//! collectives, synchronous and ready sends, `send_receive_replace_into`, a Cartesian
//! grid (shift, coordinates, subgroup); a `bool` byte of 2 received into a derived struct
//! is an error. `--iters` repeats it with `--work-ms` between
//! rounds so replicas can be killed mid-run; `--abort CODE` makes the last rank abort.
//! Prints one line from rank 0.

use std::time::Duration;

use volpex::{Communicator, Partition, PartitionMut, SystemOperation};

fn check(ok: bool, what: &str) {
    volpex_tests::check("rsmpi", ok, what);
}

/// Not plain data: padding after `id`, and `bool`s.
#[derive(volpex::Equivalence, Clone, Debug, PartialEq)]
struct Cell {
    id: u8,
    value: f64,
    alive: bool,
    flags: [bool; 2],
}

fn cell(rank: i32, i: usize, round: u64) -> Cell {
    Cell {
        id: (rank as usize * 10 + i) as u8,
        value: f64::from(rank) * 1.25 + i as f64 + round as f64,
        alive: (rank as usize + i).is_multiple_of(2),
        flags: [i == 0, rank % 3 == 1],
    }
}

fn mix(d: i64, v: i64) -> i64 {
    d.wrapping_mul(1_000_003).wrapping_add(v)
}

fn round(world: &Communicator, r: u64) -> Result<i64, Box<dyn std::error::Error>> {
    let (me, n) = (world.rank(), world.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let mut d = 0i64;

    // Derived structs, point to point, in every send mode. A synchronous send completes
    // once its receive has started (MPI-3.1 section 3.4): in a ring, each receive is
    // posted before the send.
    let cells: Vec<Cell> = (0..3).map(|i| cell(me, i, r)).collect();
    let mut got = vec![cell(0, 0, 0); 3];
    let rq = world
        .process_at_rank(prev)
        .immediate_receive_into(&mut got[..])?;
    world.process_at_rank(next).synchronous_send(&cells[..])?;
    rq.wait()?;
    check(
        got == (0..3).map(|i| cell(prev, i, r)).collect::<Vec<_>>(),
        "derived vector",
    );
    world.process_at_rank(next).ready_send(&cell(me, 7, r))?;
    let (one, _) = world.process_at_rank(prev).receive::<Cell>()?;
    check(one == cell(prev, 7, r), "derived value");
    let mut first = [cell(0, 0, 0)];
    let rq = world
        .process_at_rank(prev)
        .immediate_receive_into(&mut first[..])?;
    let req = world
        .process_at_rank(next)
        .immediate_synchronous_send(&cells[..1])?;
    req.wait()?;
    rq.wait()?;
    check(first == [cell(prev, 0, r)], "immediate synchronous send");
    if r == 0 && n > 1 {
        // A `bool` byte that is neither 0 nor 1 is an error at the receiver, not a value.
        check(
            <Cell as volpex::Equivalence>::WIRE_BYTES == 12,
            "a Cell is 12 bytes on the wire",
        );
        let mut raw = [0u8; 12];
        raw[9] = 2; // `alive`, after id (1) and value (8)
        world.process_at_rank(next).send(&raw[..])?;
        let bad = world.process_at_rank(prev).receive_vec::<Cell>();
        check(
            matches!(bad, Err(volpex::Error::Usage(_))),
            "a received bool byte of 2 is refused",
        );
    }
    let mut buf = [me; 3];
    world.send_receive_replace_into(&mut buf, next, prev)?;
    check(buf == [prev; 3], "send_receive_replace_into");

    // Single values in collectives.
    let x = i64::from(me) + r as i64;
    let mut sum = 0i64;
    world.all_reduce_into(&x, &mut sum, SystemOperation::sum())?;
    let want: i64 = (0..n).map(|k| i64::from(k) + r as i64).sum();
    check(sum == want, "all_reduce_into a single value");
    d = mix(d, sum);
    let mut c = if me == 0 {
        cell(0, 5, r)
    } else {
        cell(me, 0, 0)
    };
    world.process_at_rank(0).broadcast_into(&mut c)?;
    check(c == cell(0, 5, r), "broadcast of a derived value");
    let root = world.process_at_rank(0);
    let mine = cell(me, 1, r);
    if me == 0 {
        let mut all: Vec<Cell> = (0..n).map(|_| cell(0, 0, 0)).collect();
        root.gather_into_root(&mine, &mut all[..])?;
        check(
            all == (0..n).map(|k| cell(k, 1, r)).collect::<Vec<_>>(),
            "gather of derived values",
        );
    } else {
        root.gather_into(&mine)?;
    }

    // Partitions: rank k's block has k + 1 elements, one unused element before each.
    let counts: Vec<i32> = (0..n).map(|k| k + 1).collect();
    let displs: Vec<i32> = (0..n).map(|k| k * (k + 1) / 2 + k + 1).collect();
    let total = (displs[n as usize - 1] + counts[n as usize - 1]) as usize;
    let block = |k: i32| -> Vec<i32> { (0..=k).map(|j| k * 100 + j + r as i32).collect() };
    let expect = || {
        let mut v = vec![-1; total];
        for k in 0..n {
            let at = displs[k as usize] as usize;
            v[at..at + k as usize + 1].copy_from_slice(&block(k));
        }
        v
    };
    if me == 0 {
        let mut out = vec![-1; total];
        let mut p = PartitionMut::new(&mut out[..], &counts, &displs);
        root.gather_varcount_into_root_partitioned(&block(me)[..], &mut p)?;
        check(out == expect(), "gather_varcount with displacements");
    } else {
        root.gather_varcount_into(&block(me)[..])?;
    }
    let mut everyone = vec![-1; total];
    world.all_gather_varcount_into_partitioned(
        &block(me)[..],
        &mut PartitionMut::new(&mut everyone[..], &counts, &displs),
    )?;
    check(
        everyone == expect(),
        "all_gather_varcount with displacements",
    );
    d = mix(d, everyone.iter().map(|&v| i64::from(v)).sum());
    let mut part = vec![0; me as usize + 1];
    if me == 0 {
        let src = expect();
        root.scatter_varcount_into_root_partitioned(
            &Partition::new(&src[..], &counts, &displs),
            &mut part[..],
        )?;
    } else {
        root.scatter_varcount_into(&mut part[..])?;
    }
    check(part == block(me), "scatter_varcount with displacements");
    // All-to-all: the value for rank j sits at n - 1 - j; the one from rank i lands at 2i.
    let send: Vec<i64> = (0..n)
        .rev()
        .map(|j| i64::from(me) * 1000 + i64::from(j) + r as i64)
        .collect();
    let ones = vec![1usize; n as usize];
    let sdispls: Vec<usize> = (0..n as usize).map(|j| n as usize - 1 - j).collect();
    let rdispls: Vec<usize> = (0..n as usize).map(|i| 2 * i).collect();
    let mut recv = vec![-7i64; 2 * n as usize];
    world.all_to_all_varcount_into_partitioned(
        &Partition::new(&send[..], &ones, &sdispls),
        &mut PartitionMut::new(&mut recv[..], &ones, &rdispls),
    )?;
    for i in 0..n as usize {
        check(
            recv[2 * i] == i as i64 * 1000 + i64::from(me) + r as i64 && recv[2 * i + 1] == -7,
            "all_to_all_varcount with displacements",
        );
    }

    // Immediate collectives, several in flight at once.
    let mut isum = 0i64;
    let mut iscan = 0i64;
    let mut gathered: Vec<Cell> = (0..n).map(|_| cell(0, 0, 0)).collect();
    let mut bcast: Vec<Cell> = if me == 0 {
        (0..2).map(|i| cell(9, i, r)).collect()
    } else {
        (0..2).map(|_| cell(0, 0, 0)).collect()
    };
    let mut sq = vec![0u32; n as usize];
    let mine = cell(me, 3, r);
    let reqs = vec![
        world.immediate_all_reduce_into(&x, &mut isum, SystemOperation::sum())?,
        world.immediate_barrier()?,
        world.immediate_all_gather_into(&mine, &mut gathered[..])?,
        world.immediate_scan_into(&x, &mut iscan, SystemOperation::sum())?,
        root.immediate_broadcast_into(&mut bcast[..])?,
        world.immediate_all_to_all_into(&vec![(me * me) as u32; n as usize][..], &mut sq[..])?,
    ];
    volpex::wait_all(reqs)?;
    check(isum == want, "immediate all-reduce");
    check(
        iscan == (0..=me).map(|k| i64::from(k) + r as i64).sum::<i64>(),
        "immediate scan",
    );
    check(
        gathered == (0..n).map(|k| cell(k, 3, r)).collect::<Vec<_>>(),
        "immediate all-gather of derived values",
    );
    check(
        bcast == (0..2).map(|i| cell(9, i, r)).collect::<Vec<_>>(),
        "immediate broadcast",
    );
    check(
        sq == (0..n).map(|k| (k * k) as u32).collect::<Vec<_>>(),
        "immediate all-to-all",
    );
    // The other immediate collectives, all in flight together.
    let nu = n as usize;
    let mut exscan = -5i64;
    let mut rsb = [0i64; 2];
    let mut igath = vec![-1; total];
    let mut iscat = vec![0; nu];
    let mut iscatv = vec![0; me as usize + 1];
    let mut iagv = vec![-1; total];
    let mut iagvp = vec![-1; total];
    let mut iatav = vec![-7i64; nu];
    let mut iatavp = vec![-7i64; 2 * nu];
    let mut igv = vec![-1; expect().iter().filter(|&&v| v >= 0).count()];
    let flat: Vec<i32> = (0..n).flat_map(&block).collect();
    let flat_counts: Vec<usize> = (0..nu).map(|k| k + 1).collect();
    let scat_src: Vec<i32> = (0..n * n).collect();
    let rsb_in: Vec<i64> = (0..2 * nu).map(|j| i64::from(me) + j as i64).collect();
    let mut reqs = vec![
        world.immediate_exclusive_scan_into(&x, &mut exscan, SystemOperation::sum())?,
        world.immediate_reduce_scatter_block_into(&rsb_in, &mut rsb[..], SystemOperation::sum())?,
        world.immediate_all_gather_varcount_into(&block(me)[..], &mut igv[..], &flat_counts)?,
        world.immediate_all_gather_varcount_into_partitioned(
            &block(me)[..],
            PartitionMut::new(&mut iagvp[..], &counts, &displs),
        )?,
        world.immediate_all_to_all_varcount_into(&send[..], &ones, &mut iatav[..], &ones)?,
        world.immediate_all_to_all_varcount_into_partitioned(
            &Partition::new(&send[..], &ones, &sdispls),
            PartitionMut::new(&mut iatavp[..], &ones, &rdispls),
        )?,
    ];
    if me == 0 {
        reqs.push(root.immediate_gather_varcount_into_root(
            &block(me)[..],
            &mut iagv[..flat.len()],
            &flat_counts,
        )?);
        reqs.push(root.immediate_scatter_into_root(&scat_src[..], &mut iscat[..])?);
        reqs.push(root.immediate_scatter_varcount_into_root(
            &flat[..],
            &flat_counts,
            &mut iscatv[..],
        )?);
        reqs.push(root.immediate_gather_into_root(&block(0)[..1], &mut igath[..nu])?);
    } else {
        reqs.push(root.immediate_gather_varcount_into(&block(me)[..])?);
        reqs.push(root.immediate_scatter_into(&mut iscat[..])?);
        reqs.push(root.immediate_scatter_varcount_into(&mut iscatv[..])?);
        reqs.push(root.immediate_gather_into(&block(me)[..1])?);
    }
    volpex::wait_all(reqs)?;
    let below: i64 = (0..me).map(|k| i64::from(k) + r as i64).sum();
    check(
        me == 0 && exscan == -5 || me > 0 && exscan == below,
        "immediate exclusive scan",
    );
    let colsum = |j: usize| (0..n).map(|k| i64::from(k) + j as i64).sum::<i64>();
    check(
        rsb == [colsum(2 * me as usize), colsum(2 * me as usize + 1)],
        "immediate reduce-scatter-block",
    );
    check(igv == flat, "immediate all-gather with counts");
    check(iagvp == expect(), "immediate all-gather into a partition");
    for i in 0..nu {
        check(
            iatav[i] == i as i64 * 1000 + i64::from(n - 1 - me) + r as i64,
            "immediate all-to-all with counts",
        );
        check(
            iatavp[2 * i] == i as i64 * 1000 + i64::from(me) + r as i64 && iatavp[2 * i + 1] == -7,
            "immediate all-to-all between partitions",
        );
    }
    check(
        iscat == (me * n..(me + 1) * n).collect::<Vec<_>>(),
        "immediate scatter",
    );
    check(iscatv == block(me), "immediate scatter with counts");
    check(
        me != 0
            || (iagv[..flat.len()] == flat[..]
                && igath[..nu] == (0..n).map(|k| block(k)[0]).collect::<Vec<_>>()[..]),
        "immediate gathers",
    );
    world.process_at_rank(next).buffered_send(&[me][..])?;
    let req = world
        .process_at_rank(next)
        .immediate_ready_send(&[me + 1][..])?;
    req.wait()?;
    let (b1, _) = world.process_at_rank(prev).receive_vec::<i32>()?;
    let (b2, _) = world.process_at_rank(prev).receive_vec::<i32>()?;
    check(
        b1 == [prev] && b2 == [prev + 1],
        "buffered and immediate ready sends",
    );

    let mut red = 0i64;
    let ireq = if me == 0 {
        root.immediate_reduce_into_root(&x, &mut red, SystemOperation::max())?
    } else {
        root.immediate_reduce_into(&x, SystemOperation::max())?
    };
    ireq.wait()?;
    check(
        me != 0 || red == i64::from(n - 1) + r as i64,
        "immediate reduce",
    );
    d = mix(d, isum + iscan);

    // A Cartesian grid: periodic along dimension 0.
    let mut dims = [0, 0];
    volpex::dims_create(n, &mut dims)?;
    let Some(grid) = world.create_cartesian_communicator(&dims, &[true, false], false)? else {
        return Err("every rank is in a grid of all ranks".into());
    };
    let layout = grid.get_layout();
    check(
        grid.coordinates_to_rank(&layout.coords)? == grid.rank(),
        "coordinates of this rank",
    );
    let (src, dst) = grid.shift(0, 1)?;
    let (Some(src), Some(dst)) = (src, dst) else {
        return Err("a periodic dimension always has neighbours".into());
    };
    let mut from = -1;
    grid.send_receive_into(&grid.rank(), dst, &mut from, src)?;
    check(from == src, "send_receive_into along a shift");
    let mut c = grid.rank_to_coordinates(from)?;
    c[0] += 1;
    check(
        grid.coordinates_to_rank(&c)? == grid.rank(),
        "shift is +1 along dimension 0",
    );
    let row = grid.subgroup(&[false, true])?;
    let mut members = 0i32;
    row.all_reduce_into(&1i32, &mut members, SystemOperation::sum())?;
    check(members == dims[1] && row.size() == dims[1], "subgroup size");
    check(row.rank() == layout.coords[1], "subgroup rank");
    d = mix(d, i64::from(from) * 7 + i64::from(members));
    Ok(d)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<i64>().ok())
    };
    let (iters, work_ms) = (arg("--iters").unwrap_or(1), arg("--work-ms").unwrap_or(0));
    let universe = volpex::initialize()?;
    let world = universe.world();
    if let Some(code) = arg("--abort") {
        world.barrier()?;
        if world.rank() == world.size() - 1 {
            world.abort(code as i32);
        }
        world.barrier()?;
        return Err("the job went on after an abort".into());
    }
    let mut digest = 0i64;
    for r in 0..iters.max(0) as u64 {
        digest = mix(digest, round(&world, r)?);
        std::thread::sleep(Duration::from_millis(work_ms.max(0) as u64));
    }
    if world.rank() == 0 {
        println!("rsmpi: ok ranks={} digest={digest}", world.size());
    }
    Ok(())
}
