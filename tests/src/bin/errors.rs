//! Test program: a rank whose program ends badly while the others wait for it.
//! `--mode error`: rank 0 returns an error of its own from `main`; `--mode out-of-range`:
//! rank 0 sends to a rank past the end (`RankOutOfRange`, returned with `?`);
//! `--mode panic`: rank 0 panics. Every other rank waits for a message from rank 0 that
//! never comes, then prints what its receive returned. With `--mode ok` rank 0 sends it
//! and every rank prints `errors: ok`.

use std::fmt;

#[derive(Debug)]
struct BadInput;

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the input file says nothing")
    }
}

impl std::error::Error for BadInput {}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The runtime's diagnostics on stderr (VOLPEX_LOG): the program's choice, not the library's.
    volpex::log_to_stderr();
    let mode = std::env::args()
        .skip_while(|a| a != "--mode")
        .nth(1)
        .unwrap_or_else(|| "ok".into());
    let universe = volpex::initialize()?;
    let world = universe.world();
    if world.rank() == 0 {
        match mode.as_str() {
            "error" => return Err(Box::new(BadInput)),
            "out-of-range" => world.process_at_rank(world.size() + 5).send(&[1u64])?,
            "panic" => panic!("rank 0 gives up"),
            _ => {
                for r in 1..world.size() {
                    world.process_at_rank(r).send(&[7u64])?;
                }
            }
        }
    } else {
        let got = world.process_at_rank(0).receive_vec::<u64>();
        match got {
            Ok((v, _)) if v == [7] => println!("errors: ok"),
            Ok((v, _)) => println!("errors: FAILED got {v:?}"),
            Err(e) => {
                eprintln!("rank {}: the receive from rank 0 failed: {e}", world.rank());
                return Err(e.into());
            }
        }
    }
    Ok(())
}
