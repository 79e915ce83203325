//! Seeded simulator for the pull engine, and property tests of the wire decoder and the
//! engine against hostile input. One test binary (one link step); each module is one
//! theme:
//!
//! - `harness`: the `Sim` type (replicas, fake clock, network, faults, checks, seeds);
//! - `failure_free`: runs without faults;
//! - `faults`: kills, silences, cut links, reordering links;
//! - `logs`: tiny sender logs, flow control, eviction and retirement;
//! - `wildcards`: `ANY_SOURCE` / `ANY_TAG` choices under faults;
//! - `regeneration`: killed replicas replaced by new incarnations replaying the program;
//! - `engine_pair`: two to four engines driven by hand, one mechanism each;
//! - `one_sided`: one-sided epochs and passive-target lock orders under failovers,
//!   leader deaths and regenerations, in a small world of its own;
//! - `hostile`: property tests: arbitrary bytes into the frame decoder, arbitrary
//!   well-formed frames from arbitrary peers into engines.
//!
//! Reference: DESIGN.md "Pull protocol", "Sender log", "Failure detection", "Testing".
//! Replay one seed of the simulator with
//! `VOLPEX_SIM_SEED=<seed> cargo test -p volpex-proto --test simulator <test name>`; add
//! `VOLPEX_SIM_TRACE=1` for the stand-in launcher's doings and `VOLPEX_SIM_LOG=<filter>`
//! (env_logger syntax) for the engines' own log, with `-- --nocapture`.

mod engine_pair;
mod failure_free;
mod faults;
mod harness;
mod hostile;
mod logs;
mod one_sided;
mod regeneration;
mod wildcards;
