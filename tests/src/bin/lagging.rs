//! Test program: receivers that lag behind their sender past its checkpoint (issue 42).
//!
//! `lagging GATE`: rank 0 sends one value to every other rank, checkpoints, then receives
//! one answer from each. Every other rank waits until the file GATE exists before it
//! receives rank 0's value, then answers with the value plus its rank. Rank 0 prints
//! `lagging: rank 0 checkpointed` on stderr after its checkpoint, and `lagging: ok` when
//! every answer is right. A replica of rank 0 restored from its sibling's checkpoint
//! goes on after the sends: the values sent before the checkpoint must still reach the
//! waiting ranks once that sibling is gone.

use std::path::PathBuf;
use std::time::Duration;

const VALUE: u64 = 4200;

fn main() -> Result<(), volpex::Error> {
    // The gate is this test's own file, looked at by one rank only.
    volpex_tests::without_file_layer();
    volpex::log_to_stderr();
    let gate = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .ok_or(volpex::Error::Usage("usage: lagging GATE"))?;
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    if rank == 0 {
        if universe.restored::<u64>()?.is_none() {
            for r in 1..size {
                world.process_at_rank(r).send(&(VALUE + r as u64))?;
            }
            world.checkpoint(&1u64)?;
        }
        eprintln!("lagging: rank 0 checkpointed");
        let mut ok = true;
        for r in 1..size {
            let (answer, _) = world.process_at_rank(r).receive::<u64>()?;
            ok &= answer == VALUE + 2 * r as u64;
        }
        volpex_tests::check("lagging", ok, "an answer");
        println!("lagging: ok");
    } else {
        while !gate.exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
        let (value, _) = world.process_at_rank(0).receive::<u64>()?;
        world.process_at_rank(0).send(&(value + rank as u64))?;
    }
    Ok(())
}
