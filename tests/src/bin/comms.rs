//! Test program: communicators (MPI-3.1 chapter 6): duplicate, split by color and key,
//! groups and create; ids agree everywhere, messages on different communicators never
//! match, and point-to-point and collectives work inside each. Prints one line from
//! world rank 0 with every id it saw, which must be the same in every replica.

use volpex::SystemOperation;

fn check(ok: bool, what: &str) {
    volpex_tests::check("comms", ok, what);
}

fn main() -> Result<(), volpex::Error> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (me, n) = (world.rank(), world.size());
    let mut ids = vec![world.id()];

    // Duplicate: same members, separate message space.
    let dup = world.duplicate();
    check(
        dup.size() == n && dup.rank() == me && dup.id() != world.id(),
        "dup shape",
    );
    ids.push(dup.id());
    if n > 1 {
        if me == 0 {
            world.process_at_rank(1).send_with_tag(&1u32, 5)?;
            dup.process_at_rank(1).send_with_tag(&2u32, 5)?;
        } else if me == 1 {
            let (b, _) = dup.process_at_rank(0).receive_with_tag::<u32>(5)?;
            let (a, _) = world.process_at_rank(0).receive_with_tag::<u32>(5)?;
            check(
                (a, b) == (1, 2),
                "messages on different communicators matched",
            );
        }
    }

    // Split by parity, ranked in reverse.
    let half = world.split_by_color_with_key(Some(me % 2), -me)?;
    let Some(half) = half else {
        check(false, "split returned nothing for a defined color");
        return Ok(());
    };
    let members: Vec<i32> = (0..n).filter(|r| r % 2 == me % 2).rev().collect();
    check(half.size() == members.len() as i32, "split size");
    check(members[half.rank() as usize] == me, "split rank order");
    let mut their_ids = vec![0u32; half.size() as usize];
    half.all_gather_into(&[half.id()], &mut their_ids)?;
    check(their_ids.iter().all(|i| *i == half.id()), "split ids agree");
    ids.push(half.id());
    // A ring inside the half; statuses name ranks of the half.
    let (hr, hs) = (half.rank(), half.size());
    half.process_at_rank((hr + 1) % hs).send(&me)?;
    let (got, st) = half.process_at_rank((hr + hs - 1) % hs).receive::<i32>()?;
    check(
        got == members[((hr + hs - 1) % hs) as usize],
        "ring inside split",
    );
    check(
        st.source_rank() == (hr + hs - 1) % hs,
        "status source is a split rank",
    );
    let mut sum = [0i32];
    half.all_reduce_into(&[me], &mut sum, SystemOperation::sum())?;
    check(
        sum[0] == members.iter().sum::<i32>(),
        "all-reduce inside split",
    );

    // Undefined color joins nothing.
    let none = world.split_by_color(if me == 0 { None } else { Some(7) })?;
    check(none.is_none() == (me == 0), "undefined color");
    if let Some(c) = &none {
        check(
            c.size() == n - 1 && c.rank() == me - 1,
            "split without rank 0",
        );
        ids.push(c.id());
    }

    // Groups: the first half of the world, by include; create.
    let g = world.group();
    let first: Vec<i32> = (0..(n + 1) / 2).collect();
    let fg = g.include(&first);
    check(fg.size() == first.len() as i32, "group include");
    check(fg.rank() == (me < (n + 1) / 2).then_some(me), "group rank");
    check(
        g.exclude(&first).size() == n - first.len() as i32,
        "group exclude",
    );
    let back = fg.translate_ranks(&[0], &g);
    check(back == vec![Some(0)], "translate ranks");
    let sub = world.create(&fg);
    check(sub.is_some() == (me < (n + 1) / 2), "create membership");
    if let Some(sub) = &sub {
        let mut v = [0i64];
        if sub.rank() == 0 {
            v[0] = 42;
        }
        sub.process_at_rank(0).broadcast_into(&mut v[..])?;
        check(v[0] == 42, "broadcast inside created communicator");
        ids.push(sub.id());
    }
    // Every process saw the same ids for the communicators it is in: world rank 0 reports.
    world.barrier()?;
    if me == 0 {
        let hex: Vec<String> = ids.iter().map(|i| format!("{i:08x}")).collect();
        println!("comms: ok ranks={n} ids={}", hex.join(","));
    }
    Ok(())
}
