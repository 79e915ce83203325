//! Test program: every rank writes `DIR/out-RANK.dat` through `Universe::create_output`,
//! `--chunks` chunks of `--chunk-kib` KiB (chunk c of rank r is byte `(r * 31 + c * 7 + i)
//! % 251` at offset i), with a barrier and `--work-ms` of sleep after each chunk, so a
//! replica can be killed mid-write (`--fault R.K:exit@sends=N` hits it after its N-th
//! send: mid-write, deterministically). Prints one line per rank.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let num = |name: &str, default: usize| -> Result<usize, String> {
        arg(name).map_or(Ok(default), |v| {
            v.parse().map_err(|e| format!("{name} {v}: {e}"))
        })
    };
    let dir = PathBuf::from(arg("--dir").ok_or("--dir DIR is required")?);
    let (chunks, kib, work_ms) = (
        num("--chunks", 8)?,
        num("--chunk-kib", 64)?,
        num("--work-ms", 0)?,
    );
    let universe = volpex::initialize()?;
    let world = universe.world();
    let me = world.rank() as usize;
    let path = dir.join(format!("out-{me}.dat"));
    let mut out = universe.create_output(&path)?;
    let mut chunk = vec![0u8; kib * 1024];
    for c in 0..chunks {
        for (i, b) in chunk.iter_mut().enumerate() {
            *b = ((me * 31 + c * 7 + i) % 251) as u8;
        }
        out.write_all(&chunk)?;
        world.barrier()?;
        std::thread::sleep(Duration::from_millis(work_ms as u64));
    }
    out.commit()?;
    println!("outputs: rank {me} wrote {} bytes", chunks * chunk.len());
    Ok(())
}
