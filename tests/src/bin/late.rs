//! Test program: every rank sleeps `--sleep-ms` after it initialized, before its first
//! message, then a token goes once around the ring and rank 0 prints it. So no
//! connection between ranks exists before the sleep ends: a test can stop a process
//! during the sleep and have the others dial it while it is stopped.

use std::time::Duration;

fn main() -> Result<(), volpex::Error> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let sleep_ms: u64 = std::env::args()
        .skip_while(|a| a != "--sleep-ms")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let universe = volpex::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    std::thread::sleep(Duration::from_millis(sleep_ms));
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let mut token = 0u64;
    if rank == 0 {
        next.send(&1u64)?;
        prev.receive_into(&mut token)?;
        println!("late: ranks={size} token={token}");
    } else {
        prev.receive_into(&mut token)?;
        next.send(&(token * 3 + u64::from(rank as u32)))?;
    }
    Ok(())
}
