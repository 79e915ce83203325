//! Test program: MPI matching and ordering rules under replication (MPI-3.1 section
//! 3.5, "Semantics of point-to-point communication"). Replica 1 of every even rank is
//! slowed down so replicas run out of step. Prints one line from rank 0; any violation
//! prints a FAILED line and exits non-zero.

use std::time::Duration;

fn check(ok: bool, what: &str) {
    volpex_tests::check("ordering", ok, what);
}

fn main() -> Result<(), volpex::Error> {
    volpex_tests::without_file_layer();
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let slow = universe.replica() == 1 && rank % 2 == 0;
    let pause = || {
        if slow {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let mut digest: u64 = 0;
    let mut add = |v: u64| digest = digest.wrapping_mul(1_000_003).wrapping_add(v);

    // 1. Non-overtaking per tag; tags received in the opposite order of sending.
    if rank == 0 {
        for i in 0..40u64 {
            world.process_at_rank(1).send_with_tag(&i, 7)?;
            world.process_at_rank(1).send_with_tag(&(1000 + i), 9)?;
            pause();
        }
    } else if rank == 1 {
        for i in 0..40u64 {
            let (v, st) = world.process_at_rank(0).receive_with_tag::<u64>(9)?;
            check(
                v == 1000 + i && st.tag() == 9 && st.source_rank() == 0,
                "tag 9 order",
            );
            add(v);
        }
        for i in 0..40u64 {
            let (v, _) = world.process_at_rank(0).receive_with_tag::<u64>(7)?;
            check(v == i, "tag 7 order");
            add(v);
            pause();
        }
    }

    // 2. Immediate receives posted before the sends, completed in any order.
    if rank == 1 {
        let mut a = [0u64; 4];
        let mut b = [0u64; 2];
        let ra = world
            .process_at_rank(0)
            .immediate_receive_into_with_tag(&mut a[..], 21)?;
        let rb = world
            .process_at_rank(0)
            .immediate_receive_into_with_tag(&mut b[..], 22)?;
        world.process_at_rank(0).send_with_tag(&1u8, 20)?;
        let mut reqs = vec![ra, rb];
        let mut seen = 0;
        while let Some((_, st)) = volpex::wait_any(&mut reqs)? {
            check(
                st.count::<u64>() == if st.tag() == 21 { 4 } else { 2 },
                "counts",
            );
            seen += 1;
        }
        check(seen == 2, "wait_any saw both");
        drop(reqs);
        check(a == [1, 2, 3, 4] && b == [5, 6], "immediate payloads");
        for v in a.iter().chain(b.iter()) {
            add(*v);
        }
    } else if rank == 0 {
        world.process_at_rank(1).receive_with_tag::<u8>(20)?;
        pause();
        world.process_at_rank(1).send_with_tag(&[5u64, 6][..], 22)?;
        world
            .process_at_rank(1)
            .send_with_tag(&[1u64, 2, 3, 4][..], 21)?;
    }

    // 3. send_receive cycles around the ring, both directions.
    let right = (rank + 1) % size;
    let left = (rank + size - 1) % size;
    let mut token = rank as u64 + 1;
    for step in 0..25u64 {
        let mut got = 0u64;
        let (to, from) = if step % 2 == 0 {
            (right, left)
        } else {
            (left, right)
        };
        world.send_receive_into(&token, to, &mut got, from)?;
        token = got.wrapping_mul(31).wrapping_add(step);
        pause();
    }
    add(token);

    // 4. Self-send, and whole-message receives of varying length.
    world
        .process_at_rank(rank)
        .send_with_tag(&[rank as u32; 3][..], 5)?;
    let (mine, st) = world.process_at_rank(rank).receive_vec_with_tag::<u32>(5)?;
    check(
        mine == vec![rank as u32; 3] && st.source_rank() == rank,
        "self send",
    );
    let partner = world.process_at_rank(right);
    partner.send_with_tag(&vec![rank as u16; rank as usize * 3 + 1][..], 6)?;
    let (v, _) = world.process_at_rank(left).receive_vec_with_tag::<u16>(6)?;
    check(
        v.len() == left as usize * 3 + 1 && v.iter().all(|x| *x == left as u16),
        "vec length",
    );
    add(v.len() as u64);

    // 5. Truncation is an error, not a crash.
    if rank == 0 && size > 1 {
        world.process_at_rank(1).send_with_tag(&[9u64; 8][..], 30)?;
    } else if rank == 1 {
        let mut small = [0u64; 2];
        let r = world
            .process_at_rank(0)
            .receive_into_with_tag(&mut small[..], 30);
        check(
            matches!(r, Err(volpex::Error::Truncated { .. })),
            "truncation error",
        );
    }

    // The seed helper is equal in every replica of a rank.
    add(world.rank_seed(7));

    // 6. Large messages into bigger buffers, blocking and immediate.
    let big: Vec<u64> = (0..100_000u64).map(|i| i * 3 + 1).collect();
    if rank == 0 && size > 1 {
        world.process_at_rank(1).send_with_tag(&big[..], 40)?;
        world.process_at_rank(1).send_with_tag(&big[..50_000], 41)?;
    } else if rank == 1 {
        let mut a = vec![0u64; 120_000];
        let st = world
            .process_at_rank(0)
            .receive_into_with_tag(&mut a[..], 40)?;
        check(
            st.count::<u64>() == 100_000 && a[..100_000] == big[..],
            "large receive",
        );
        check(
            a[100_000..].iter().all(|x| *x == 0),
            "nothing past the message",
        );
        let mut b = vec![0u64; 60_000];
        let req = world
            .process_at_rank(0)
            .immediate_receive_into_with_tag(&mut b[..], 41)?;
        let st = req.wait()?;
        check(
            st.count::<u64>() == 50_000 && b[..50_000] == big[..50_000],
            "large immediate",
        );
        add(a[99_999] + b[49_999]);
    }

    // Everyone's digest to rank 0, in rank order.
    world.barrier()?;
    if rank == 0 {
        let mut all = digest;
        for r in 1..size {
            let (d, _) = world.process_at_rank(r).receive_with_tag::<u64>(99)?;
            all = all.wrapping_mul(7).wrapping_add(d);
        }
        println!("ordering: ok ranks={size} digest={all:016x}");
    } else {
        world.process_at_rank(0).send_with_tag(&digest, 99)?;
    }
    Ok(())
}
