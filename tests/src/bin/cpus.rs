//! Test program: writes the CPUs each of its threads may run on (`Cpus_allowed_list` of
//! every task in /proc/self/task) to `BASE.RANK.REPLICA`, one line per thread, after the
//! runtime started its threads. Then it waits (up to a minute) until every replica of
//! the job has written its file: the job ends when one team finishes, and a replica of a
//! slower team would otherwise be ended before it wrote. Usage: `cpus BASE`.

use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    volpex_tests::without_file_layer();
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let base = std::env::args().nth(1).ok_or("usage: cpus BASE")?;
    let universe = volpex::initialize()?;
    let world = universe.world();
    let lines = volpex_tests::thread_cpu_lists()?;
    let path = |rank: i32, replica: u32| format!("{base}.{rank}.{replica}");
    // Written under another name and renamed, so a file that exists is complete.
    let mine = path(world.rank(), universe.replica());
    std::fs::write(format!("{mine}.part"), lines.join("\n") + "\n")?;
    std::fs::rename(format!("{mine}.part"), &mine)?;
    let until = Instant::now() + Duration::from_secs(60);
    let all = |r: i32| (0..universe.replicas()).all(|k| std::path::Path::new(&path(r, k)).exists());
    while !(0..world.size()).all(all) {
        if Instant::now() > until {
            return Err("not every replica wrote its CPUs within a minute".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    world.barrier()?;
    Ok(())
}
