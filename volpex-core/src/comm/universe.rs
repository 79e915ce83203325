//! `Universe`: joining the job, and finalization by drop.
//!
//! Owns the state every communicator of the process shares (`Inner`: the runtime, this
//! replica's identity, fault-injection counters), the start of the event loop, and the
//! end of the job for this replica. Must never carry messages itself: communicators do,
//! and never install a global logger: that is the application's choice (`log_to_stderr`
//! is there for the programs that want ours).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use volpex_proto::launch::DIAG_PREFIX;
use volpex_proto::message::ReplicaId;

use super::output::Writer;
use super::Communicator;
use crate::bootstrap;
use crate::env;
use crate::error::Error;
use crate::transport::{Core, Drain, Listeners, Membership, Runtime, SystemClock, TransportClock};

/// Shared state behind every communicator of a process.
pub(crate) struct Inner {
    pub(crate) rt: Arc<Runtime>,
    pub(crate) me: ReplicaId,
    pub(crate) ranks: u32,
    pub(crate) replicas: u32,
    pub(crate) sends: AtomicU64,
    pub(crate) exit_after_sends: Option<u64>,
    pub(crate) launched: bool,
    bg: Mutex<Option<JoinHandle<()>>>,
    /// Checkpoints taken (or restored) so far.
    pub(crate) checkpoints: AtomicU64,
    /// Every split made so far: (parent context id, nth creation, what each member gave).
    pub(crate) splits: Mutex<Vec<(u32, u32, Vec<i64>)>>,
    /// Splits the restored snapshot recorded, answered without communicating.
    pub(crate) restored_splits: Vec<(u32, u32, Vec<i64>)>,
    /// The application's state from the restored snapshot, until `restored` takes it.
    pub(crate) restored_state: Mutex<Option<Vec<u8>>>,
    /// A state is restored and `restored` has not taken it: the program must not
    /// communicate yet (checked on every send and receive, hence not under the lock).
    pub(crate) awaiting_restore: AtomicBool,
    /// This process is a regenerated incarnation.
    pub(crate) regenerated: bool,
    /// Who writes this replica's output files (`Universe::create_output`).
    pub(crate) writer: Writer,
    /// How many communicators this process made from each (context id, description)
    /// with `create_from_group`, which names the next one.
    pub(crate) group_creations: Mutex<HashMap<(u32, Vec<u8>), u32>>,
    /// The host of every rank's first replica at the start, as an index into the sorted
    /// list of the job's hosts (`split_by_host`).
    pub(crate) hosts: Vec<u32>,
}

impl Inner {
    fn new(
        rt: Arc<Runtime>,
        me: ReplicaId,
        (ranks, replicas): (u32, u32),
        bg: JoinHandle<()>,
    ) -> Inner {
        Inner {
            rt,
            me,
            ranks,
            replicas,
            sends: AtomicU64::new(0),
            exit_after_sends: None,
            launched: false,
            bg: Mutex::new(Some(bg)),
            checkpoints: AtomicU64::new(0),
            splits: Mutex::new(Vec::new()),
            restored_splits: Vec::new(),
            restored_state: Mutex::new(None),
            awaiting_restore: AtomicBool::new(false),
            regenerated: false,
            writer: Writer::new(None, me.rank),
            group_creations: Mutex::new(HashMap::new()),
            hosts: vec![0; ranks as usize],
        }
    }

    /// The recorded result of split `nth` of communicator `parent`, on a replica restored
    /// from a checkpoint made after it.
    pub(crate) fn restored_split(&self, parent: u32, nth: u32) -> Option<Vec<i64>> {
        self.restored_splits
            .iter()
            .find(|(p, n, _)| *p == parent && *n == nth)
            .map(|(_, _, all)| all.clone())
    }
}

/// The MPI environment of this process. Dropping it finalizes: the replica tells the
/// launcher it is done and keeps serving its log until the whole job is done.
pub struct Universe {
    pub(super) inner: Arc<Inner>,
}

/// Joins the job the launcher started this process in, or, without a launcher, a job of
/// one rank and one replica. The runtime's diagnostics go through the `log` crate to
/// whatever logger the application installed (none: they are dropped); `log_to_stderr`
/// installs ours.
pub fn initialize() -> Result<Universe, Error> {
    let env = env::read()?;
    let cfg = env.config;
    let clock = TransportClock::System(SystemClock::starting_now());
    let drain = Arc::new(Drain::default());
    let inner = if let Some(launch) = env.launch {
        let connect_timeout = cfg.connect_timeout;
        let j = bootstrap::join(
            &launch,
            connect_timeout,
            cfg.tcp_congestion.as_deref(),
            cfg.shm,
            &drain,
        )?;
        // The job's processes on this host: those listening on our address.
        let mine = j
            .addrs
            .get(j.me.rank as usize)
            .and_then(|r| r.get(j.me.replica as usize))
            .copied()
            .flatten()
            .map(|a| a.ip());
        let here = j
            .addrs
            .iter()
            .flatten()
            .filter(|a| a.map(|a| a.ip()) == mine)
            .count();
        let cfg = cfg.for_host(here);
        let hosts = host_indices(&j.addrs);
        let (hard_spin, spin, shared) = (cfg.hard_spin, cfg.spin, cfg.shared_host);
        let regenerated = j.catch_up.is_some();
        let handover = launch.handover.filter(|_| regenerated);
        let (core, waker) = Core::new(
            j.me,
            (j.ranks, j.replicas),
            j.key,
            cfg,
            j.listeners,
            Some(j.launcher),
            Membership {
                addrs: j.addrs,
                starting: j.starting,
                incarnations: j.incarnations,
                incarnation: j.incarnation,
                catch_up: j.catch_up,
                handover: handover.is_some(),
            },
            clock,
            drain,
        )
        .map_err(Error::EventLoopStart)?;
        let mut core = core;
        core.exit_after_choices = launch.exit_after_choices;
        bootstrap::files::activate(j.launcher_addr, j.key, j.me, j.incarnation, connect_timeout);
        let handed_over = match handover {
            Some(addr) => {
                let got = super::checkpoint::take_handover(
                    &mut core,
                    addr,
                    &j.key,
                    j.incarnation,
                    connect_timeout,
                )?;
                core.settle_after_handover(got.is_some());
                got
            }
            None => None,
        };
        let (rt, bg) = Runtime::start(core, waker);
        log::debug!(
            "replica {} joined a job of {} x {}; {here} of its processes on this host (shared: {shared}), hard spin {hard_spin:?}, spin {spin:?}",
            j.me,
            j.ranks,
            j.replicas,
        );
        let snapshot = if handed_over.is_some() {
            handed_over
        } else if regenerated {
            super::checkpoint::fetch_and_restore(&rt)?
        } else {
            None
        };
        let mut inner = Inner::new(rt, j.me, (j.ranks, j.replicas), bg);
        inner.exit_after_sends = launch.exit_after_sends;
        inner.launched = true;
        inner.regenerated = regenerated;
        inner.writer = Writer::new(Some(launch.launcher), j.me.rank);
        inner.hosts = hosts;
        if let Some(s) = snapshot {
            volpex_files::restore(&s.files);
            super::checkpoint::output_mark("restored", s.number);
            inner.checkpoints = AtomicU64::new(s.number);
            inner.sends = AtomicU64::new(s.sends);
            inner.splits = Mutex::new(s.splits.clone());
            inner.restored_splits = s.splits;
            inner.restored_state = Mutex::new(Some(s.app));
            inner.awaiting_restore = AtomicBool::new(true);
        }
        inner
    } else {
        let me = ReplicaId::new(0, 0);
        let (core, waker) = Core::new(
            me,
            (1, 1),
            [0; 32],
            cfg,
            Listeners::default(),
            None,
            Membership::alone(),
            clock,
            drain,
        )
        .map_err(Error::EventLoopStart)?;
        let (rt, bg) = Runtime::start(core, waker);
        Inner::new(rt, me, (1, 1), bg)
    };
    Ok(Universe {
        inner: Arc::new(inner),
    })
}

/// The host of every rank's first registered replica, as an index into the sorted list
/// of those hosts (0 for a rank without one).
fn host_indices(addrs: &[Vec<Option<std::net::SocketAddr>>]) -> Vec<u32> {
    let first: Vec<Option<IpAddr>> = addrs
        .iter()
        .map(|r| r.iter().flatten().next().map(|a| a.ip()))
        .collect();
    let mut distinct: Vec<IpAddr> = first.iter().flatten().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    first
        .iter()
        .map(|h| {
            h.and_then(|ip| distinct.binary_search(&ip).ok())
                .map_or(0, |i| i as u32)
        })
        .collect()
}

/// Installs a global logger (env_logger) for a program that wants the runtime's
/// diagnostics and has no logger of its own: they go to stderr as
/// `volpex[RANK.REPLICA] time LEVEL target: message` at the level in `VOLPEX_LOG` (else
/// `RUST_LOG`, else warnings), and volpexrun passes lines with that prefix through
/// unmerged, unlike program output. Call it before `initialize`, at most once; a logger
/// already installed is left alone. The library never calls it itself.
pub fn log_to_stderr() {
    use std::io::Write;
    let (rank, replica, level) = env::log_settings();
    let who = format!("{DIAG_PREFIX}[{rank}.{replica}]");
    let _ = env_logger::Builder::new()
        .parse_filters(&level)
        .format(move |buf, rec| {
            writeln!(
                buf,
                "{who} {} {} {}: {}",
                buf.timestamp_micros(),
                rec.level(),
                rec.target(),
                rec.args()
            )
        })
        .try_init();
}

impl Universe {
    /// MPI_COMM_WORLD.
    pub fn world(&self) -> Communicator {
        Communicator::world(self.inner.clone())
    }

    /// Which copy of its rank this process is (0..replicas). For logs only: a program's
    /// results must not depend on it.
    pub fn replica(&self) -> u32 {
        self.inner.me.replica
    }

    /// How many replicas every rank has.
    pub fn replicas(&self) -> u32 {
        self.inner.replicas
    }

    /// Starts writing an output file at `path` (its directory must exist): the rank
    /// writes a temporary next to it, and `OutputFile::commit` syncs it and renames it
    /// over `path` in one atomic step. Whatever replicas die, mid-write or not, `path`
    /// holds either nothing or one complete copy (see `docs/FILES.md`: one replica of the
    /// rank writes, the others check); a temporary the disk could not take whole is never
    /// renamed, and `commit` returns the error. The bytes written must be the same in
    /// every replica of the rank (the determinism contract), and different ranks must
    /// write different paths.
    pub fn create_output(
        &self,
        path: impl AsRef<std::path::Path>,
    ) -> std::io::Result<super::OutputFile> {
        super::OutputFile::create(path.as_ref(), self.inner.writer.clone())
    }
}

impl Drop for Universe {
    fn drop(&mut self) {
        let inner = &self.inner;
        // A panicking application has not finished: do not tell the launcher it did.
        if inner.launched && !std::thread::panicking() {
            // Its files are complete before the job may end.
            volpex_files::finish();
            inner.rt.lock().finalize_and_serve();
        }
        inner.rt.stop();
        if let Some(h) = inner.bg.lock().take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ip: &str) -> Option<std::net::SocketAddr> {
        Some(format!("{ip}:1000").parse().expect("an address"))
    }

    /// A rank's host is where its first registered replica is, numbered in address
    /// order: ranks on one machine share one number, whatever their other replicas.
    #[test]
    fn hosts_are_numbered_by_the_first_replica() {
        let table = vec![
            vec![at("10.0.0.2"), at("10.0.0.1")],
            vec![None, at("10.0.0.3")],
            vec![at("10.0.0.2"), at("10.0.0.3")],
            vec![None, None],
        ];
        assert_eq!(host_indices(&table), vec![0, 1, 0, 0]);
        let local = vec![vec![at("127.0.0.1"), at("127.0.0.1")]; 3];
        assert_eq!(host_indices(&local), vec![0, 0, 0]);
    }
}
