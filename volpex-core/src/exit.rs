//! Every exit code a replica process ends with on its own, in one table, so the runtime
//! and the launcher read them from one place.
//!
//! Owns the numbers only. Must never import anything: every layer that ends the process
//! (the transport, the heartbeat, fault injection in the communicators) depends on this
//! module, and it on none of them.
//!
//! | code | constant | meaning |
//! |---|---|---|
//! | 75 | `EXIT_RETIRED` | the replica fell too far behind the senders' logs and retired (the launcher counts it as retired, not failed) |
//! | 76 | `EXIT_ORPHANED` | the connection (or heartbeat) to the launcher was lost: the replica is orphaned |
//! | 77 | `EXIT_DRAINED` | the replica got SIGTERM (its machine goes away), told the launcher, and its drain grace ended (the launcher counts it as drained, not failed) |
//! | 99 | `EXIT_FAULT` | injected fault: `exit@sends=N` or `exit@choices=N` ended the replica on purpose |
//!
//! Any other code is the application's own (`0` after a normal finalize).

/// Process exit code of a replica that fell behind the logs and retired.
pub const EXIT_RETIRED: i32 = 75;
/// Process exit code when the launcher connection is lost (orphaned replica).
pub const EXIT_ORPHANED: i32 = 76;
/// Process exit code of a replica whose drain grace after SIGTERM ended.
pub const EXIT_DRAINED: i32 = 77;
/// Process exit code used by `exit@sends` and `exit@choices` fault injection.
pub const EXIT_FAULT: i32 = 99;
