//! Every limit and timeout of the runtime (the transport, the progress thread, the
//! collective algorithms), in one place, units last in names; the protocol's own are
//! `volpex_proto::limits`.
//!
//! Values come from defaults here, overridden by environment variables that `env` reads
//! at the edge (documented in docs/VOLPEXRUN.md). Must never read the environment
//! itself nor hold runtime state.

use std::time::Duration;

/// How long a blocked call polls without yielding on a host with a core for each of the
/// job's processes there. Covers a small message's round trip on loopback, so a
/// ping-pong never pays a `sched_yield` per poll, and bounds what a wait can keep from
/// the kernel's softirq thread.
pub const HARD_SPIN_DEFAULT: Duration = Duration::from_micros(20);

/// Capacity of each ring of a shared-memory connection, each direction (docs/SHM.md):
/// what a peer TCP connection's send buffer takes (`SOCKET_BUFFER_BYTES`), so a frame
/// that goes out in one write there does here too (a large send skips the log only if
/// its frame went out whole); a larger frame goes through in pieces. Pages are taken
/// only as bytes first reach them.
pub const SHM_RING_BYTES: usize = SOCKET_BUFFER_BYTES;

/// A send to a rank whose every replica this process reaches through shared memory skips
/// the log from this size on when they all confirm it at once (docs/PROTOCOL.md,
/// "Unlogged sends"; over TCP `volpex_proto::limits::UNLOGGED_BYTES_MIN`). A receiver
/// copies out of the ring at memory speed, so its confirmation comes before the copy
/// into the log would end, and the sender is free to read the answer instead of copying
/// (ping-pong 512 KiB 119 -> 20 us, 1 MiB 138 -> 37 us). Not lower: a receiver that
/// computes confirms only after `Config::confirm_wait` (20 us plus 1 us per 10 KB),
/// which this size keeps within about 1.5 copies.
pub const SHM_UNLOGGED_BYTES_MIN: usize = 512 << 10;

/// How long a blocked call polls (yielding between polls) before it sleeps, when its host
/// has a core for each of the job's processes there: longer than a compute phase between
/// a send and its wait (`volpex-bench overlap`, C = 10 ms), so a message sent before one
/// is there as soon as Open MPI's (which polls without end): waking from a sleep costs a
/// few microseconds more. A wait longer than this sleeps.
pub const SPIN_DEDICATED: Duration = Duration::from_millis(50);

/// The same with fewer cores than processes: the process we wait for may need ours.
pub const SPIN_SHARED: Duration = Duration::from_millis(1);

/// How long an exchange waits at least for the confirmations of its large blocks on a
/// host with fewer cores than processes (see `Config::settle_wait`): about a scheduler
/// time slice, since a receiver that shares a core reads the block only once it runs,
/// and the wait gives the core away (an IS-like all-to-all on shared cores copied most of
/// its blocks into the log without it).
pub const SETTLE_WAIT_SHARED: Duration = Duration::from_millis(5);

/// Default TCP congestion control of peer connections (see `transport::tuning`).
pub const TCP_CONGESTION_DEFAULT: &str = "cubic";

/// Immediate sends (MPI_Isend) of at least this many bytes lend their buffer to the log
/// instead of copying it (`Core::send_lent`): the receiver confirms each such message at
/// once, and the request's completion copies it only if a confirmation is late. Below it
/// the copy costs less than the confirmation (a frame back per message).
pub const LENT_BYTES_MIN: usize = 256 << 10;

/// How long a collective call that lent its blocks (`Core::await_loans`: MPI-IO's
/// collective write) waits at its end, beyond the confirmation wait of what is still
/// lent, for its receivers' confirmations before it copies the rest into the log: an
/// aggregator's follower confirms once its writer reported the round applied, a round
/// trip through volpexrun (its writer reports every millisecond).
pub const LOANS_WAIT: Duration = Duration::from_millis(10);

/// How long a sender blocked on a full log waits per loop turn.
pub const FULL_LOG_TURN: Duration = Duration::from_millis(10);

/// Requested SO_SNDBUF / SO_RCVBUF of peer connections (the kernel caps it at its
/// `*mem_max`), so that a multi-megabyte message needs few readiness round trips.
pub const SOCKET_BUFFER_BYTES: usize = 4 << 20;

/// How often at most a replica sends its counters (`ToLauncher::Stats`) to the launcher
/// when they changed, so the report keeps them however the replica ends.
pub const STATS_INTERVAL: Duration = Duration::from_millis(500);

/// Default TCP user timeout and keepalive bound of peer connections
/// (`Config::peer_timeout`, see `transport::keepalive`).
pub const PEER_TIMEOUT_DEFAULT: Duration = Duration::from_millis(10_000);

/// The progress thread keeps away from the core while the application used it within
/// this window (see `transport::progress`).
pub const APP_ACTIVE_WINDOW: Duration = Duration::from_millis(1);
/// The progress thread's looks while the application keeps using the core grow apart,
/// doubling from twice `APP_ACTIVE_WINDOW` up to this. Every look is a timer interrupt
/// and a thread switch on the application's core, which NPB SP on shared cores felt.
pub const APP_ACTIVE_LOOK_MAX: Duration = Duration::from_millis(32);
/// How long an application thread that finds the core taken (by the progress thread,
/// asleep in `poll` until the waker rouses it) keeps trying between yields before it
/// sleeps on the lock: sleeping, it needs a second wake-up, and on a VM whose idle CPUs
/// halt each costs a trip through the hypervisor (a barrier entered late was left
/// sooner with this spin, nearly as soon as with no progress thread at all).
pub const APP_HANDOVER_SPIN: Duration = Duration::from_millis(1);
/// Longest the progress thread sleeps in one poll.
pub const BACKGROUND_POLL: Duration = Duration::from_millis(50);

/// Largest user tag (MPI_TAG_UB); `comm::TAG_UB` is this.
pub const TAG_UB: i32 = i32::MAX;

/// Where the algorithms switch (sizes in bytes). Measured with `volpex-bench
/// collectives` at 4 ranks on two cores (loop and single methods, rotating broadcast
/// roots); see docs/BENCHMARKS.md, "Collectives".
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

/// Runtime tunables of one replica: the protocol engine's, and the transport's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The protocol engine's tunables (sender log bound, timeouts).
    pub protocol: volpex_proto::Config,
    /// Connection establishment (TCP connect plus handshake) timeout
    /// (`VOLPEX_CONNECT_TIMEOUT_MS`).
    pub connect_timeout: Duration,
    /// How long a blocked call polls without sleeping before it sleeps in the kernel
    /// (`VOLPEX_SPIN_US`); `None`: `SPIN_DEDICATED` when this host runs no more of the
    /// job's processes than it has cores, otherwise `SPIN_SHARED` (see `spin_for`).
    pub spin: Option<Duration>,
    /// Whether a spinning call gives the CPU away between polls (`VOLPEX_YIELD`, 0 or 1;
    /// see docs/BENCHMARKS.md for why 1 is the default even with a core for every
    /// process).
    pub yield_when_idle: bool,
    /// How long a blocked call polls before it starts giving the CPU away between polls
    /// (`VOLPEX_HARD_SPIN_US`); `None`: `HARD_SPIN_DEFAULT` when this host runs no more of
    /// the job's processes than it has cores, otherwise zero (see `hard_spin_for`).
    pub hard_spin: Option<Duration>,
    /// How long a large send that skipped the log waits for its receivers to confirm it
    /// before copying it into the log after all (`VOLPEX_CONFIRM_WAIT_US`); `None`: about
    /// as long as the copy itself takes (see `confirm_wait`).
    pub confirm_wait: Option<Duration>,
    /// This host runs more of the job's processes than it has cores (see `for_host`).
    pub shared_host: bool,
    /// The job's processes on this host (see `for_host`; 0 until then).
    pub here: usize,
    /// Whether a blocked call sleeps at once while other work crowds the host's CPUs
    /// (`transport::load`): set by `for_host` unless the user chose the spins
    /// (`VOLPEX_SPIN_US`, `VOLPEX_HARD_SPIN_US`).
    pub watch_load: bool,
    /// TCP user timeout and keepalive bound on peer connections
    /// (`VOLPEX_PEER_TIMEOUT_MS`; 0 = `None`, the kernel defaults; see
    /// `transport::keepalive`).
    pub peer_timeout: Option<Duration>,
    /// TCP congestion control of peer connections (`VOLPEX_TCP_CONGESTION`, default
    /// `cubic`; `system` = `None`, the system's default; see `transport::tuning`).
    pub tcp_congestion: Option<String>,
    /// Whether peers on this host are dialed through shared memory (`VOLPEX_SHM`, 0 or
    /// 1; docs/SHM.md).
    pub shm: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            protocol: volpex_proto::Config::default(),
            connect_timeout: Duration::from_millis(5000),
            spin: None,
            yield_when_idle: true,
            hard_spin: None,
            confirm_wait: None,
            shared_host: false,
            here: 0,
            watch_load: false,
            peer_timeout: Some(PEER_TIMEOUT_DEFAULT),
            tcp_congestion: Some(TCP_CONGESTION_DEFAULT.to_string()),
            shm: true,
        }
    }
}

impl Config {
    /// This configuration for a replica whose host runs `here` of the job's processes:
    /// the spins resolved (`hard_spin_for`, `spin_for`), `shared_host` and `here` set, and
    /// the host's load watched unless the user chose the spins.
    pub fn for_host(mut self, here: usize) -> Config {
        self.watch_load = self.spin.is_none() && self.hard_spin.is_none();
        self.here = here;
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_load_is_watched_unless_the_user_chose_the_spins() {
        let c = Config::default().for_host(3);
        assert!(c.watch_load);
        assert_eq!(c.here, 3);
        let spin = Config {
            spin: Some(Duration::ZERO),
            ..Config::default()
        };
        assert!(!spin.for_host(3).watch_load);
        let hard = Config {
            hard_spin: Some(Duration::from_micros(5)),
            ..Config::default()
        };
        assert!(!hard.for_host(3).watch_load);
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
