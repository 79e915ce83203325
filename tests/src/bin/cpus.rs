//! Test program: writes the CPUs each of its threads may run on (`Cpus_allowed_list` of
//! every task in /proc/self/task) to `BASE.RANK.REPLICA`, one line per thread, after the
//! runtime started its threads. Usage: `cpus BASE`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = std::env::args().nth(1).ok_or("usage: cpus BASE")?;
    let universe = volpex::initialize()?;
    let world = universe.world();
    let mut lines = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")? {
        let status = std::fs::read_to_string(task?.path().join("status"))?;
        let list = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .ok_or("no Cpus_allowed_list")?;
        lines.push(list.trim().to_string());
    }
    let path = format!("{base}.{}.{}", world.rank(), universe.replica());
    std::fs::write(path, lines.join("\n") + "\n")?;
    world.barrier()?;
    Ok(())
}
