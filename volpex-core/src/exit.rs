//! The one place that ends the process on the runtime's own decision, and the exit codes
//! it ends with (the table is `volpex_proto::launch::exit`'s, shared with the launcher).
//!
//! Owns `end`: every layer that must end the process (the transport when the replica
//! retires or is orphaned, the heartbeat, the handover, fault injection and `abort` in
//! the communicators) calls it with the reason, and nothing else in the crate calls
//! `std::process::exit`. Must never import another module of the crate.

pub use volpex_proto::launch::exit::{EXIT_DRAINED, EXIT_FAULT, EXIT_ORPHANED, EXIT_RETIRED};

/// The exit code of `abort(code)`: `code` when it is a plain failure code (1-255,
/// except the codes volpexrun reads as retired, orphaned, drained or an injected fault),
/// else 1.
pub fn abort_exit_code(code: i32) -> i32 {
    match code {
        EXIT_RETIRED | EXIT_ORPHANED | EXIT_DRAINED | EXIT_FAULT => 1,
        c @ 1..=255 => c,
        _ => 1,
    }
}

/// Why the runtime ends this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The replica fell too far behind the senders' logs (`EXIT_RETIRED`).
    Retired,
    /// The launcher is gone (`EXIT_ORPHANED`).
    Orphaned,
    /// The replica drained: it handed over, or its grace ended (`EXIT_DRAINED`).
    Drained,
    /// Injected fault (`EXIT_FAULT`).
    Fault,
    /// The program called `abort` with this code (see `abort_exit_code`).
    Abort(i32),
}

impl End {
    /// The process exit code.
    pub(crate) fn code(self) -> i32 {
        match self {
            End::Retired => EXIT_RETIRED,
            End::Orphaned => EXIT_ORPHANED,
            End::Drained => EXIT_DRAINED,
            End::Fault => EXIT_FAULT,
            End::Abort(code) => code,
        }
    }
}

/// Ends the process now with `why`'s exit code (the caller printed why).
pub(crate) fn end(why: End) -> ! {
    log::debug!("ending the process: {why:?}");
    std::process::exit(why.code())
}
