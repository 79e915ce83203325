//! The production driver: a mio event loop that owns every socket and drives the pull
//! engine, plus the lock discipline that lets a blocked application thread drive the loop
//! itself while a background thread serves pulls when the application computes.
//!
//! Owns connections (opened on first use, authenticated, cached), routing of engine frames
//! to peers, timeouts on connection setup, and the launcher control connection. Must never
//! decide protocol questions (which replica, what to answer): that is the engine's job.

mod clock;
mod colocated;
mod connection;
mod drain;
mod event_loop;
mod keepalive;
mod launcher;
mod load;
mod peers;
pub mod progress;
mod send;
// The transport's one exception to `deny(unsafe_code)`: mapping and reading shared
// memory, each block with a `// SAFETY:` line.
#[allow(unsafe_code)]
mod shm;
mod spin;
mod stats;
pub mod tuning;

pub use clock::{SystemClock, TransportClock};
pub use drain::Drain;
pub use event_loop::{Core, Listeners, Membership};
pub use progress::Runtime;
pub use send::Loan;
pub use shm::shared;
pub use shm::{unavailable as shm_unavailable, Listener as ShmListener};
pub(crate) use spin::Pace;
pub use volpex_proto::wire::stream::Landing;
