//! Every limit and timeout of the runtime, in one place, units last in names.
//!
//! Values come from defaults here, overridden by environment variables the launcher
//! exports (documented in the README). This module only reads the environment; it must
//! never hold runtime state.

use std::time::Duration;

/// Size of the fixed wire header in bytes (asserted at compile time against the field
/// layout in `wire::header`).
pub const HEADER_BYTES: usize = 56;

/// Largest payload one frame may carry. Anything larger is a protocol error that closes
/// the connection, so a hostile length field can never make us allocate without bound.
pub const FRAME_PAYLOAD_BYTES_MAX: usize = 1 << 30;

/// How long a blocked call polls without yielding on a host with a core for each of the
/// job's processes there. Covers a small message's round trip (about 15 µs on loopback),
/// so a ping-pong never pays a `sched_yield` per poll (measured on the 2-core VM: 8 B
/// latency 7% lower in one series of 10 alternating runs, 2% in another of 16), and
/// bounds what a wait can keep from the kernel's softirq thread.
pub const HARD_SPIN_DEFAULT: Duration = Duration::from_micros(20);

/// How long a blocked call polls (yielding between polls) before it sleeps, when its host
/// has a core for each of the job's processes there: longer than a compute phase between
/// a send and its wait (`volpex-bench overlap`, C = 10 ms), so a message sent before one
/// is there as soon as Open MPI's (which polls without end): waking from a sleep costs
/// about 3 µs more on the 2-core VM. A wait longer than this sleeps.
pub const SPIN_DEDICATED: Duration = Duration::from_millis(50);

/// The same with fewer cores than processes: the process we wait for may need ours.
pub const SPIN_SHARED: Duration = Duration::from_millis(1);

/// How long an exchange waits at least for the confirmations of its large blocks on a
/// host with fewer cores than processes (see `Config::settle_wait`): about a scheduler
/// time slice, since a receiver that shares a core reads the block only once it runs,
/// and the wait gives the core away. IS-like all-to-all of 2 MB blocks on 4 ranks and 2
/// cores: blocks copied into the log 850 -> 20 of 2400, 3-4% less time per iteration.
pub const SETTLE_WAIT_SHARED: Duration = Duration::from_millis(5);

/// Default TCP congestion control of peer connections (see `transport::tuning`).
pub const TCP_CONGESTION_DEFAULT: &str = "cubic";

/// Largest control-message payload (launcher <-> process).
pub const CONTROL_PAYLOAD_BYTES_MAX: usize = 16 << 20;

/// Default bound on the sender log.
pub const LOG_BYTES_DEFAULT: usize = 256 << 20;

/// Default bound on the log entries kept only for regenerated replicas (every live replica
/// of their destination has them; see `message::log`).
pub const REPLAY_BYTES_DEFAULT: usize = 64 << 20;

/// Bookkeeping bytes charged per log entry on top of its payload.
pub const LOG_ENTRY_OVERHEAD_BYTES: usize = 64;

/// Most unstable choices of its own rank a message carries along (see `pull::foreign`);
/// one that depends on more waits until every live sibling holds them.
pub const CHOICES_CARRIED_MAX: usize = 64;

/// A leader sends its followers new choices (see `pull::decision`) this many at a time,
/// or `CHOICES_BATCH_WAIT` after the first of them, whichever comes first. Below
/// `CHOICES_CARRIED_MAX`, so followers lagging a batch behind never hold back a message
/// (output commit).
pub const CHOICES_BATCH: u64 = 8;
/// See `CHOICES_BATCH`.
pub const CHOICES_BATCH_WAIT: Duration = Duration::from_micros(1000);

/// Most choices (see `pull::decision`) a replica keeps for siblings that lag behind.
pub const DECISIONS_HELD_MAX: usize = 1 << 20;

/// Most choices one pull for a choice is answered with (the asked one and those after).
pub const CHOICES_PER_ANSWER: u64 = 64;

/// Messages at least this large start going out to the replicas whose pulls wait for
/// them before they are copied into the log (see `transport::send`).
pub const DIRECT_WRITE_BYTES_MIN: usize = 64 << 10;

/// Messages at least this large skip the log when every live replica of the destination
/// confirms them at once. Below it the copy hides behind the receiver's reading
/// (measured: skipping it gains nothing at 1 MiB, 15% at 4 MiB).
pub const UNLOGGED_BYTES_MIN: usize = 2 << 20;

/// How long a sender blocked on a full log waits per loop turn.
pub const FULL_LOG_TURN: Duration = Duration::from_millis(10);

/// A pull answered from a log entry older than this came late: the DATA says so
/// (`FLAG_LATE`) and the receiver pulls that stream ahead from then on.
pub const LATE_PULL: Duration = Duration::from_micros(50);

/// Payloads smaller than this come from the ordinary allocator, larger ones from
/// `message::pool`.
pub const POOLED_BYTES_MIN: usize = 64 << 10;
/// Most bytes `message::pool` keeps.
pub const POOL_BYTES_MAX: usize = 256 << 20;

/// Received payloads larger than this are read straight into their own allocation.
pub const LARGE_PAYLOAD_BYTES: usize = 32 << 10;
/// Size of a connection's read buffer for small frames.
pub const READ_BUFFER_BYTES: usize = 64 << 10;

/// Requested SO_SNDBUF / SO_RCVBUF of peer connections (the kernel caps it at its
/// `*mem_max`), so that a multi-megabyte message needs few readiness round trips.
pub const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// How often at most a replica sends its counters (`ToLauncher::Stats`) to the launcher
/// when they changed, so the report keeps them however the replica ends.
pub const STATS_INTERVAL: Duration = Duration::from_millis(500);

/// Environment variable with the peer timeout in ms (read into `Config::peer_timeout`).
pub const PEER_TIMEOUT_VAR: &str = "VOLPEX_PEER_TIMEOUT_MS";
/// Default TCP user timeout and keepalive bound of peer connections
/// (`Config::peer_timeout`, see `transport::keepalive`).
pub const PEER_TIMEOUT_DEFAULT: Duration = Duration::from_millis(10_000);

/// The progress thread keeps away from the core while the application used it within
/// this window (see `transport::progress`).
pub const APP_ACTIVE_WINDOW: Duration = Duration::from_millis(1);
/// The progress thread's looks while the application keeps using the core grow apart,
/// doubling from twice `APP_ACTIVE_WINDOW` up to this. Every look is a timer interrupt
/// and a thread switch on the application's core: at one every 2 ms, NPB SP class A on
/// 4 ranks and 2 cores ran 6% slower than with one every 20 ms.
pub const APP_ACTIVE_LOOK_MAX: Duration = Duration::from_millis(32);
/// How long an application thread that finds the core taken (by the progress thread,
/// asleep in `poll` until the waker rouses it) keeps trying between yields before it
/// sleeps on the lock: sleeping, it needs a second wake-up, and on a VM whose idle CPUs
/// halt each costs a trip through the hypervisor. A barrier one of 2 ranks entered
/// 30 ms late: it left a median 104 µs after the late arrival, 84 µs with this, 76 µs
/// with no progress thread at all (200 ms late: 337, 269, 277 µs; 60 samples each).
pub const APP_HANDOVER_SPIN: Duration = Duration::from_millis(1);
/// Longest the progress thread sleeps in one poll.
pub const BACKGROUND_POLL: Duration = Duration::from_millis(50);

/// Largest user tag (MPI_TAG_UB); `comm::TAG_UB` is this.
pub const TAG_UB: i32 = i32::MAX;

/// Where the algorithms switch (sizes in bytes). Measured with `volpex-bench
/// collectives` at 4 ranks on two cores (loop and single methods, rotating broadcast
/// roots); see the README's benchmark section.
pub mod collective {
    /// A broadcast or a reduction to one rank (reduce, all-reduce below
    /// `HALVING_BYTES`, barrier) of at most this many bytes on at most `FLAT_RANKS` ranks
    /// goes between the root and every rank directly (one hop each way; at 8 ranks a
    /// binomial broadcast was faster).
    pub const FLAT_BYTES: usize = 32 << 10;
    /// See `FLAT_BYTES`.
    pub const FLAT_RANKS: u32 = 4;
    /// A broadcast of at least this many bytes on at least `SCATTER_RANKS` ranks is a
    /// scatter plus a ring all-gather (MPICH's switch; below 8 ranks the binomial tree
    /// moves fewer bytes in all, and was faster at every size at 4 ranks).
    pub const SCATTER_BYTES: usize = 512 << 10;
    /// See `SCATTER_BYTES`.
    pub const SCATTER_RANKS: u32 = 8;
    /// Commutative reductions (reduce, all-reduce, reduce-scatter) of at least this many
    /// bytes go by recursive halving (and doubling); below, through a tree at one rank.
    /// (At 4 ranks on two cores the trees were faster up to 128 KiB, the halving from
    /// 256 KiB: it moves no fewer bytes in all there, in more messages.)
    pub const HALVING_BYTES: usize = 256 << 10;
    /// An all-gather of less than this many bytes in all is a gather to rank 0 plus a
    /// broadcast; from here a ring.
    pub const GATHER_BROADCAST_BYTES: usize = 256 << 10;
    /// An all-to-all (not -v) of at most this many bytes in all (the size times each
    /// rank's input) goes through rank 0: gather, then scatter.
    pub const ALL_TO_ALL_ROOT_BYTES: usize = 128 << 10;
    /// An all-to-all rank whose largest incoming block has at least this many bytes
    /// posts its receives before sending (so the blocks it is sent can leave straight
    /// from the senders' buffers); below, it sends first, so its pulls share the writes
    /// of its sends.
    pub const POST_FIRST_BYTES: usize = 64 << 10;
    /// A scan on at most this many ranks goes along a chain (no more hops than the
    /// exchange steps of recursive doubling, and half the messages); above, recursive
    /// doubling.
    pub const CHAIN_SCAN_RANKS: u32 = 4;
    /// The contexts a communicator's immediate collectives take turns in: the n-th one
    /// started runs in context n modulo this, after the one before it there. More
    /// outstanding at once than this wait for each other (correct, not concurrent); a
    /// context per operation would leave its streams' pulls ahead standing for ever.
    pub const IMMEDIATE_LANES: u64 = 16;
}

/// Runtime tunables of one replica.
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
    /// How often a receiver tells all replicas of a sender how far it has consumed
    /// (`VOLPEX_CONSUMED_MS`); lets sender logs evict.
    pub consumed_interval: Duration,
    /// Connection establishment (TCP connect plus handshake) timeout
    /// (`VOLPEX_CONNECT_TIMEOUT_MS`).
    pub connect_timeout: Duration,
    /// How long a blocked call polls without sleeping before it sleeps in the kernel
    /// (`VOLPEX_SPIN_US`); `None`: `SPIN_DEDICATED` when this host runs no more of the
    /// job's processes than it has cores, otherwise `SPIN_SHARED` (see `spin_for`).
    pub spin: Option<Duration>,
    /// Whether a spinning call gives the CPU away between polls (`VOLPEX_YIELD`, 0 or 1;
    /// see the README for why 1 is the default even with a core for every process).
    pub yield_when_idle: bool,
    /// How long a blocked call polls before it starts giving the CPU away between polls
    /// (`VOLPEX_HARD_SPIN_US`); `None`: `HARD_SPIN_DEFAULT` when this host runs no more of
    /// the job's processes than it has cores, otherwise zero (see `hard_spin_for`).
    pub hard_spin: Option<Duration>,
    /// The program declares that any choice among messages gives the same sends
    /// (`VOLPEX_SEND_DETERMINISTIC`, 0 or 1): replicas make wildcard and `wait_any`
    /// choices on their own instead of following their rank's leader.
    pub send_deterministic: bool,
    /// How long a large send that skipped the log waits for its receivers to confirm it
    /// before copying it into the log after all (`VOLPEX_CONFIRM_WAIT_US`); `None`: about
    /// as long as the copy itself takes (see `confirm_wait`).
    pub confirm_wait: Option<Duration>,
    /// This host runs more of the job's processes than it has cores (see `for_host`).
    pub shared_host: bool,
    /// TCP user timeout and keepalive bound on peer connections
    /// (`VOLPEX_PEER_TIMEOUT_MS`; 0 = `None`, the kernel defaults; see
    /// `transport::keepalive`).
    pub peer_timeout: Option<Duration>,
    /// TCP congestion control of peer connections (`VOLPEX_TCP_CONGESTION`, default
    /// `cubic`; `system` = `None`, the system's default; see `transport::tuning`).
    pub tcp_congestion: Option<String>,
    /// The launcher regenerates lost replicas (`VOLPEX_REGENERATE`, 0 or 1, set by
    /// volpexrun): the log retains what a new incarnation replaying the program needs,
    /// and no send skips the log.
    pub regenerate: bool,
    /// Bound on those retained entries (`VOLPEX_REPLAY_BYTES`).
    pub replay_bytes_max: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            log_bytes_max: LOG_BYTES_DEFAULT,
            ack_timeout: Duration::from_millis(2000),
            ack_delay: Duration::from_micros(1000),
            hedge_timeout: Duration::from_millis(200),
            consumed_interval: Duration::from_millis(20),
            connect_timeout: Duration::from_millis(5000),
            spin: None,
            yield_when_idle: true,
            hard_spin: None,
            send_deterministic: false,
            confirm_wait: None,
            shared_host: false,
            peer_timeout: Some(PEER_TIMEOUT_DEFAULT),
            tcp_congestion: Some(TCP_CONGESTION_DEFAULT.to_string()),
            regenerate: false,
            replay_bytes_max: REPLAY_BYTES_DEFAULT,
        }
    }
}

impl Config {
    /// Defaults overridden by `VOLPEX_*` environment variables. A variable that does not
    /// parse is an error naming it.
    pub fn from_env() -> Result<Config, String> {
        let mut c = Config::default();
        if let Some(v) = env_u64("VOLPEX_LOG_BYTES")? {
            c.log_bytes_max = usize::try_from(v).map_err(|_| "VOLPEX_LOG_BYTES too large")?;
        }
        if let Some(v) = env_u64("VOLPEX_ACK_TIMEOUT_MS")? {
            c.ack_timeout = Duration::from_millis(v.max(1));
        }
        if let Some(v) = env_u64("VOLPEX_HEDGE_MS")? {
            c.hedge_timeout = Duration::from_millis(v.max(1));
        }
        if let Some(v) = env_u64("VOLPEX_CONSUMED_MS")? {
            c.consumed_interval = Duration::from_millis(v.max(1));
        }
        if let Some(v) = env_u64("VOLPEX_CONNECT_TIMEOUT_MS")? {
            c.connect_timeout = Duration::from_millis(v.max(1));
        }
        if let Some(v) = env_u64("VOLPEX_ACK_DELAY_US")? {
            c.ack_delay = Duration::from_micros(v);
        }
        if let Some(v) = env_u64("VOLPEX_SPIN_US")? {
            c.spin = Some(Duration::from_micros(v));
        }
        if let Some(v) = env_u64("VOLPEX_HARD_SPIN_US")? {
            c.hard_spin = Some(Duration::from_micros(v));
        }
        if let Some(v) = env_u64("VOLPEX_YIELD")? {
            c.yield_when_idle = v != 0;
        }
        if let Some(v) = env_u64(PEER_TIMEOUT_VAR)? {
            c.peer_timeout = (v > 0).then(|| Duration::from_millis(v));
        }
        if let Some(v) = env_u64("VOLPEX_SEND_DETERMINISTIC")? {
            c.send_deterministic = v != 0;
        }
        if let Some(v) = env_u64("VOLPEX_CONFIRM_WAIT_US")? {
            c.confirm_wait = Some(Duration::from_micros(v));
        }
        if let Some(v) = env_u64(crate::bootstrap::vars::REGENERATE)? {
            c.regenerate = v != 0;
        }
        if let Some(v) = env_u64("VOLPEX_REPLAY_BYTES")? {
            c.replay_bytes_max = usize::try_from(v).map_err(|_| "VOLPEX_REPLAY_BYTES too large")?;
        }
        if let Some(v) = env_string("VOLPEX_TCP_CONGESTION")? {
            c.tcp_congestion = parse_congestion(&v)?;
        }
        Ok(c)
    }

    /// This configuration for a replica whose host runs `here` of the job's processes:
    /// the spins resolved (`hard_spin_for`, `spin_for`) and `shared_host` set.
    pub fn for_host(mut self, here: usize) -> Config {
        self.hard_spin = Some(self.hard_spin_for(here));
        self.spin = Some(self.spin_for(here));
        self.shared_host = !dedicated(here);
        self
    }

    /// The hard spin of a replica whose host runs `here` of the job's processes: the
    /// configured one, else `HARD_SPIN_DEFAULT` if the host has a core for each of them.
    /// With fewer cores, the process we wait for may need ours, and gets it only when we
    /// yield.
    pub fn hard_spin_for(&self, here: usize) -> Duration {
        self.hard_spin.unwrap_or(if dedicated(here) {
            HARD_SPIN_DEFAULT
        } else {
            Duration::ZERO
        })
    }

    /// The spin of a replica whose host runs `here` of the job's processes: the
    /// configured one, else `SPIN_DEDICATED` if the host has a core for each of them,
    /// `SPIN_SHARED` if not.
    pub fn spin_for(&self, here: usize) -> Duration {
        self.spin.unwrap_or(if dedicated(here) {
            SPIN_DEDICATED
        } else {
            SPIN_SHARED
        })
    }

    /// How long a send of `len` bytes that skipped the log waits for confirmations:
    /// `confirm_wait` if set, else 20 µs plus 1 µs per 10 KB (a memory copy's speed), so
    /// a late confirmation costs at most about twice the copy it was meant to save.
    pub fn confirm_wait(&self, len: usize) -> Duration {
        self.confirm_wait
            .unwrap_or_else(|| Duration::from_micros(20 + len as u64 / 10_000))
    }

    /// How long an exchange whose largest unsettled block has `len` bytes waits for its
    /// confirmations (`Core::settle_all`): `confirm_wait`, but on a shared host at least
    /// `SETTLE_WAIT_SHARED` unless `confirm_wait` is set. Its receivers are in the
    /// exchange (they pulled), so they confirm once they get a core to read on.
    pub fn settle_wait(&self, len: usize) -> Duration {
        let wait = self.confirm_wait(len);
        if self.shared_host && self.confirm_wait.is_none() {
            wait.max(SETTLE_WAIT_SHARED)
        } else {
            wait
        }
    }
}

/// Whether this host has a core for each of `here` processes.
fn dedicated(here: usize) -> bool {
    here <= std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A congestion control name as the kernel takes it (`TCP_CA_NAME_MAX` is 16 with the
/// terminating zero), or `system` for none.
fn parse_congestion(v: &str) -> Result<Option<String>, String> {
    let v = v.trim();
    if v == "system" {
        return Ok(None);
    }
    if v.is_empty() || v.len() > 15 || !v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "VOLPEX_TCP_CONGESTION={v:?} is not a congestion control name (e.g. cubic, reno, \
             bbr) or `system`"
        ));
    }
    Ok(Some(v.to_string()))
}

/// Reads a string environment variable.
fn env_string(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(s) => Ok(Some(s)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{name} is not valid UTF-8")),
    }
}

/// Reads an unsigned integer environment variable (`_` separators allowed).
pub fn env_u64(name: &str) -> Result<Option<u64>, String> {
    env_string(name)?
        .map(|s| {
            s.replace('_', "")
                .trim()
                .parse::<u64>()
                .map_err(|_| format!("{name}={s:?} is not a non-negative integer"))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn congestion_control_names() {
        assert_eq!(parse_congestion("cubic"), Ok(Some("cubic".into())));
        assert_eq!(parse_congestion(" bbr "), Ok(Some("bbr".into())));
        assert_eq!(parse_congestion("system"), Ok(None));
        for bad in ["", "cu bic", "a_name_too_long_", "cubic;reno"] {
            let e = parse_congestion(bad).unwrap_err();
            assert!(e.contains("VOLPEX_TCP_CONGESTION"), "{e}");
        }
    }

    #[test]
    fn hard_spin_only_with_a_core_for_every_process_here() {
        let c = Config::default();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(c.hard_spin_for(1), HARD_SPIN_DEFAULT);
        assert_eq!(c.hard_spin_for(cores), HARD_SPIN_DEFAULT);
        assert_eq!(c.hard_spin_for(cores + 1), Duration::ZERO);
        let set = Config {
            hard_spin: Some(Duration::from_micros(7)),
            ..Config::default()
        };
        assert_eq!(set.hard_spin_for(cores + 1), Duration::from_micros(7));
    }

    #[test]
    fn exchanges_wait_longer_for_confirmations_where_processes_share_cores() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let two_mb = 2 << 20;
        let own = Config::default().for_host(cores);
        assert!(!own.shared_host);
        assert_eq!(own.settle_wait(two_mb), own.confirm_wait(two_mb));
        let shared = Config::default().for_host(cores + 1);
        assert!(shared.shared_host);
        assert_eq!(shared.settle_wait(two_mb), SETTLE_WAIT_SHARED);
        assert_eq!(shared.settle_wait(1 << 30), shared.confirm_wait(1 << 30));
        let set = Config {
            confirm_wait: Some(Duration::from_micros(7)),
            ..Config::default()
        }
        .for_host(cores + 1);
        assert_eq!(set.settle_wait(two_mb), Duration::from_micros(7));
    }
}
