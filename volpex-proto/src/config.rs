//! The tunables of the protocol engine of one replica: the sender log's bounds and the
//! engine's timeouts.
//!
//! Owns the values and their defaults. Must never read the environment: the runtime
//! reads its variables at the edge (`volpex`'s `env` module; the names are
//! `launch::vars`) and hands a `Config` in.

use std::time::Duration;

use crate::limits::{LOG_BYTES_DEFAULT, REPLAY_BYTES_DEFAULT};

/// Protocol tunables of one replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Bound on the sender log (`VOLPEX_LOG_BYTES`).
    pub log_bytes_max: usize,
    /// A pull that gets no answer at all (no ACK, DATA or GONE) within this time fails
    /// over to another replica (`VOLPEX_ACK_TIMEOUT_MS`).
    pub ack_timeout: Duration,
    /// A sender answers a pull it must park with ACK only if the pull is still parked
    /// after this delay (`VOLPEX_ACK_DELAY_US`; 0 = at once). A pull answered by DATA
    /// within the delay needs no ACK, which keeps one write off the critical path.
    pub ack_delay: Duration,
    /// A pull parked at the sender for this long is hedged: another replica of the sender
    /// is asked whether it already has the message (`VOLPEX_HEDGE_MS`).
    pub hedge_timeout: Duration,
    /// A replica asked first whose sibling answered a pull that a receive had waited
    /// for this long is far behind: later pulls prefer other replicas of its rank
    /// (`VOLPEX_LAG_MS`). Shorter waits answered by a hedge move nothing, unless the
    /// replica asked first never acknowledged the pull (see `receive::complete`), or
    /// parked it and said nothing for a hedge interval after it was asked again (see
    /// `receive::hedge`).
    pub lag_timeout: Duration,
    /// How often a receiver tells all replicas of a sender how far it has consumed
    /// (`VOLPEX_CONSUMED_MS`); lets sender logs evict.
    pub consumed_interval: Duration,
    /// The program declares that any choice among messages gives the same sends
    /// (`VOLPEX_SEND_DETERMINISTIC`, 0 or 1): replicas make wildcard and `wait_any`
    /// choices on their own instead of following their rank's leader.
    pub send_deterministic: bool,
    /// The launcher regenerates lost replicas (`VOLPEX_REGENERATE`, 0 or 1, set by
    /// volpexrun): the log retains what a new incarnation replaying the program needs,
    /// and, with siblings to regenerate from (more than one replica per rank), no send
    /// skips the log.
    pub regenerate: bool,
    /// Bound on those retained entries (`VOLPEX_REPLAY_BYTES`).
    pub replay_bytes_max: usize,
}

impl Config {
    /// Whether a lost replica of a job of `replicas` replicas per rank may be regenerated
    /// from a sibling: regeneration on and siblings to regenerate from. Checkpoints are
    /// then kept for siblings and no send skips the log; at `-r 1` only a handover
    /// restores a replica, from the snapshot it hands over (`Engine::hand_over`).
    pub fn regenerates_from_siblings(&self, replicas: u32) -> bool {
        self.regenerate && replicas > 1
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            log_bytes_max: LOG_BYTES_DEFAULT,
            ack_timeout: Duration::from_millis(2000),
            ack_delay: Duration::from_micros(1000),
            hedge_timeout: Duration::from_millis(200),
            lag_timeout: Duration::from_millis(1000),
            consumed_interval: Duration::from_millis(20),
            send_deterministic: false,
            regenerate: false,
            replay_bytes_max: REPLAY_BYTES_DEFAULT,
        }
    }
}
