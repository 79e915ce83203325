//! Test program: waits (up to `--wait-s`, default 3) until the CPUs its threads may run on
//! change, then writes them (`Cpus_allowed_list` of every task, one line per thread) to
//! `BASE.RANK.REPLICA`, waits until every replica of the teams listed in `--teams` wrote
//! its file (and every replica named in `--wait-for RANK.REPLICA,...`), and ends with a
//! barrier. A replica named in `--expect RANK.REPLICA=CPUS;...`
//! instead waits (up to a minute) until every thread may run on exactly `CPUS`: the test
//! knows where it will be bound, whether that happens before this program starts looking
//! or after. Usage: `rebind BASE --teams 0,2 [--wait-for 0.0] [--expect 0.2=1;1.2=1]`.

use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    volpex_tests::without_file_layer();
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let args: Vec<String> = std::env::args().collect();
    let base = args
        .get(1)
        .ok_or("usage: rebind BASE --teams LIST")?
        .clone();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let teams: Vec<u32> = opt("--teams")
        .ok_or("--teams missing")?
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let wait_for: Vec<String> = opt("--wait-for")
        .map(|l| l.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let wait = Duration::from_secs_f64(opt("--wait-s").map_or(Ok(3.0), |s| s.parse())?);
    let universe = volpex::initialize()?;
    let world = universe.world();
    let me = format!("{}.{}", world.rank(), universe.replica());
    let target: Option<Vec<usize>> = match opt("--expect")
        .unwrap_or_default()
        .split(';')
        .filter_map(|e| e.split_once('='))
        .find(|(who, _)| *who == me)
    {
        Some((_, cpus)) => Some(volpex_proto::launch::parse_cpus(cpus)?),
        None => None,
    };
    let first = volpex_tests::thread_cpu_lists()?;
    let reached = |now: &Vec<String>| match &target {
        Some(want) => now
            .iter()
            .all(|l| volpex_proto::launch::parse_cpus(l).as_ref() == Ok(want)),
        None => *now != first,
    };
    let until = Instant::now()
        + if target.is_some() {
            Duration::from_secs(60)
        } else {
            wait
        };
    let mut now = first.clone();
    while !reached(&now) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        now = volpex_tests::thread_cpu_lists()?;
    }
    let path = |rank: i32, replica: u32| format!("{base}.{rank}.{replica}");
    let mine = path(world.rank(), universe.replica());
    std::fs::write(format!("{mine}.part"), now.join("\n") + "\n")?;
    std::fs::rename(format!("{mine}.part"), &mine)?;
    let until = Instant::now() + Duration::from_secs(60);
    let all = |r: i32| {
        teams
            .iter()
            .all(|&k| std::path::Path::new(&path(r, k)).exists())
    };
    let named = || {
        wait_for
            .iter()
            .all(|who| std::path::Path::new(&format!("{base}.{who}")).exists())
    };
    while !((0..world.size()).all(all) && named()) {
        if Instant::now() > until {
            return Err("not every listed replica wrote its CPUs within a minute".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    world.barrier()?;
    Ok(())
}
