//! One-sided communication's races (docs/PROTOCOL.md "One-sided communication"), driven
//! with the engine operations `volpex-mpi/src/rma` makes: an epoch's batch is a logged
//! send on the window's communicator that each target replica pulls from one replica of
//! the origin, its answer a send back; a passive-target serving call posts one receive per
//! origin and takes choice slots, in which the leader records the order it applies
//! requests in and a follower reads it. A small seeded world of its own (the `Sim`
//! harness runs fixed message programs): FIFO links delivered in random order, timers,
//! kills with death notices after a random delay, fences the engines ask for, new
//! incarnations (`world`); the scenarios: `epochs` (active target), `locks` (passive
//! target).
//!
//! Must never reach into an engine: everything goes through its public commands.

mod epochs;
mod locks;
mod world;

/// The window's communicator (a duplicate of the program's: no program tag matches).
const WIN: u32 = 7;
/// Tags as volpex-mpi's rma uses them: post/start/complete/wait batch and answer, passive
/// request and answer.
const BATCH: i32 = 3;
const BATCH_ANSWER: i32 = 4;
const REQUEST: i32 = 5;
const ANSWER: i32 = 6;
/// The window's acknowledgement communicator (another duplicate): a target acknowledges
/// there, with `ACK_TAG` and no bytes, what has no answer.
const ACKS: u32 = 9;
