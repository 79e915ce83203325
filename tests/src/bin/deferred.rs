//! Test program: deferred receives dropped without being skipped or fetched.
//!
//! `deferred COUNT`, 2 ranks: on a communicator of its own, rank 1 sends rank 0 COUNT
//! messages of 256 KiB with one tag, each followed by a small note on the world
//! communicator; rank 0 waits for each note, then defers the message's receive
//! (`Process::defer_message_with_tag`) and drops the claim. A dropped claim must release
//! the message (it counts as received): else rank 1's log keeps every one of them and,
//! once they fill it (`VOLPEX_LOG_BYTES`), rank 1 waits in its send for ever. Rank 0
//! prints "deferred: ok COUNT".

fn main() -> Result<(), volpex::Error> {
    volpex::log_to_stderr();
    let count: u32 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let universe = volpex::initialize()?;
    let world = universe.world();
    let blocks = world.duplicate();
    let block = vec![7u8; 256 << 10];
    for k in 0..count {
        if world.rank() == 1 {
            blocks.process_at_rank(0).send_with_tag(&block[..], 5)?;
            world.process_at_rank(0).send(&k)?;
        } else {
            let mut note = 0u32;
            world.process_at_rank(1).receive_into(&mut note)?;
            assert_eq!(note, k);
            let claim = blocks.process_at_rank(1).defer_message_with_tag(5)?;
            assert!(claim.is_some(), "message {k} could not be deferred");
            drop(claim);
        }
    }
    world.barrier()?;
    if world.rank() == 0 {
        println!("deferred: ok {count}");
    }
    Ok(())
}
