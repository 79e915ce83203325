//! The layer in a replica: what the program's file calls do once `activate` ran.
//!
//! A call on a path or descriptor of the rank's files (`Handled::Done`) goes through the
//! model (offsets, sizes, errors: the same in every replica), takes the next number of
//! the rank's sequence, and lands in the journal; anything else (`Handled::Pass`) goes to
//! the C library untouched. An operation whose result depends on the file system (an
//! open, a rename, a removal) takes the writer's recorded outcome; a close or an fsync
//! waits until the writer applied the file through it and takes what the disk said.
//! Reads lay the journal over the file system (`overlay`). Writes made without their
//! bytes are in `deferred`, the path-changing calls in `names`, the calls on
//! descriptors and paths (open, write, read, stat, ...) in `calls`.
//!
//! Owns the replica's state of the layer (one, behind a mutex) and the waits; the worker
//! thread (`worker`, above this module: `activate` is handed its start) applies and
//! reports. Must never call a function this crate exports while holding the state (it
//! would come back here): its own I/O goes through `real`.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{c_int, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard, ReentrantMutex};
use serde::{Deserialize, Serialize};

use crate::apply::{Applied, Applier};
use crate::journal::{Entry, FileId, Gate, Journal, Op};
use crate::model::{Known, Model};
use crate::protocol::{self, Down, Failure, Outcome, Recorded, Seq, Written};
use crate::real;
use crate::{overlay, paths};

mod calls;
mod deferred;
mod names;

pub use calls::{
    close, describe, dup, fstat, fsync, ftruncate, open, private, read, seek, stat_path,
    status_flags, truncate, write, StatInfo,
};
pub use deferred::{fill, may_defer, resolve_deferred, verifies, write_deferred, Deferred};
pub use names::{mkdir, rename, unlink};

/// Who this process is, and how it leaves when its files cannot go on.
pub struct Identity {
    /// Rank.
    pub rank: u32,
    /// Replica index.
    pub replica: u32,
    /// Incarnation.
    pub incarnation: u32,
    /// The exit code of a replica that retires (it diverged from its writer).
    pub retire_code: i32,
}

/// Sends one message (`protocol::Up` bytes) to the launcher.
pub type Sender = Box<dyn Fn(&[u8]) -> std::io::Result<()> + Send + Sync>;
/// Opens the files connection to the launcher (at the first file operation); the
/// connection's reader passes what comes to `deliver`.
pub type Connect = Box<dyn FnOnce() -> std::io::Result<Sender> + Send>;

/// What the layer did with a call.
#[derive(Debug, PartialEq, Eq)]
pub enum Handled<T> {
    /// Not one of the rank's files: the C library does it.
    Pass,
    /// Done here.
    Done(Result<T, c_int>),
}

/// Settings, from the environment at activation.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// Bound on the journal's bytes; a write beyond waits for the writer.
    pub journal_bytes_max: usize,
    /// `VOLPEX_VERIFY_OUTPUT=1`.
    pub verify: bool,
}

/// The journal's bound unless `VOLPEX_FILES_JOURNAL_BYTES` says.
const JOURNAL_BYTES_DEFAULT: usize = 256 << 20;
/// How far (in bytes kept) a replica that does not replay may run ahead of its writer
/// before a write waits for it (when the journal's bound is not lower): the bytes it
/// keeps then fit in the journal's spare buffers again, so a follower that keeps large
/// writes (a two-phase aggregator's) stops taking new memory once it has this much.
const AHEAD_BYTES: usize = 64 << 20;
/// A wait this long says so in the log (once per wait).
const WAIT_NOTE: Duration = Duration::from_secs(10);
/// How long a close or fsync waits for the writer's word on it.
const SYNC_WAIT: Duration = Duration::from_secs(5);

/// What the launcher said (see `protocol::Down`).
#[derive(Debug, Default)]
pub(crate) struct Role {
    pub heard: bool,
    pub epoch: u32,
    pub writing: bool,
    pub writer: u32,
    /// Applied by the rank's writer, as far as this replica knows.
    pub applied: Seq,
    pub recorded_through: Seq,
    /// Recorded outcomes not taken yet.
    pub outcomes: BTreeMap<Seq, Recorded>,
    pub gate: Seq,
    pub mutated: HashMap<PathBuf, Seq>,
}

/// What goes to the launcher in the next report.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pub recorded: Vec<Recorded>,
    pub mutated: Vec<(String, Seq)>,
    pub failures: Vec<Failure>,
    pub written: Vec<Written>,
    pub unseen: Vec<Failure>,
    /// Something changed since the last report.
    pub dirty: bool,
    /// Someone waits for it: send at once.
    pub urgent: bool,
    pub last_sent: Option<Instant>,
    /// Produced, applied and finished as last sent.
    pub sent: (Seq, Seq, bool),
    /// The problem went out (the replica then retires).
    pub problem_sent: bool,
}

/// The connection to the launcher.
pub(crate) enum Link {
    /// Not opened yet.
    Idle(Option<Connect>),
    /// Open.
    Up(Arc<Sender>),
    /// Lost or never opened: file operations fail.
    Down,
}

/// The replica's state of the layer.
pub(crate) struct State {
    pub id: Identity,
    pub cfg: Config,
    pub model: Model,
    pub journal: Journal,
    /// Operations produced (the last one's number).
    pub produced: Seq,
    /// The last produced operation waits for its outcome and has no entry yet.
    pub in_flight: bool,
    /// Digest of every operation's kind, path, offset and length so far.
    pub trace: u64,
    pub role: Role,
    /// The writer's own apply point (while it writes).
    pub own_applied: Seq,
    pub outbox: Outbox,
    pub link: Link,
    pub worker: bool,
    /// Starts the files thread (`worker::start`, handed to `activate`: the worker sits
    /// above this module).
    start_worker: fn(),
    /// The program is done with files (finalized): nothing waits any more.
    pub finished: bool,
    /// Files this process made for itself (mkstemp): never the rank's.
    pub private: HashSet<PathBuf>,
    /// Descriptors for reading the file system's copy of a file.
    pub readers: HashMap<FileId, (Arc<Path>, c_int)>,
    /// Files whose close or fsync failed: later writes fail too.
    pub sticky: HashMap<FileId, c_int>,
    /// Outcomes this replica decided itself (it does not write), to compare with the
    /// writer's records when they come.
    pub decided: BTreeMap<Seq, (Outcome, u64)>,
    /// Closes and fsyncs of files, until the writer's record of them comes (a failure
    /// makes the file's later writes fail here too).
    pub syncs: BTreeMap<Seq, FileId>,
    /// The layer cannot go on here (diverged, lost the launcher).
    pub problem: Option<String>,
    /// The problem ends this replica: it retires once it said why.
    pub retiring: bool,
    /// The journal holds every entry after this one: what is not applied yet, and, for a
    /// replica that replays its rank's program from before its writer's point, all it
    /// wrote since it started (to read it back as it was).
    pub kept: Seq,
    /// Such a replica keeps its entries until it has produced this many operations.
    pub hold_until: Option<Seq>,
    /// Writes produced without their bytes (`write_deferred`) that the program has not
    /// resolved yet: nothing from the first on counts as applied here, and a writer's
    /// files thread applies nothing past it, until `fill` gave its bytes.
    pub deferred: BTreeMap<Seq, Ticket>,
}

pub(crate) struct Shared {
    pub state: Mutex<State>,
    pub cond: Condvar,
    /// The writer's hands: the files thread applies the journal with them, and a writer
    /// with nothing unapplied applies its program's write with them at once (`write`).
    /// Taken without the state's lock held, or after it (never the other way round).
    pub applier: Mutex<Applier>,
    /// Serializes the program's file operations (threads of one program calling at once
    /// could otherwise number them differently in each replica; they still might, and the
    /// trace check then says so).
    ops: ReentrantMutex<()>,
}

static SHARED: OnceLock<Shared> = OnceLock::new();
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Descriptors of the layer, one bit each (the fast test of every descriptor call).
static TRACKED: [AtomicU64; TRACKED_WORDS] = [const { AtomicU64::new(0) }; TRACKED_WORDS];
const TRACKED_WORDS: usize = 1024;
/// Descriptors at or above this are never the layer's.
pub const FD_LIMIT: c_int = (TRACKED_WORDS * 64) as c_int;

thread_local! {
    /// This thread is inside the layer: a call it makes goes straight to the C library.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Whether `fd` is one of the layer's descriptors (and this thread is not inside the
/// layer already).
#[inline]
pub fn tracked(fd: c_int) -> bool {
    if !(0..FD_LIMIT).contains(&fd) {
        return false;
    }
    let w = TRACKED[fd as usize / 64].load(Ordering::Relaxed);
    w & (1u64 << (fd % 64)) != 0 && !INSIDE.with(Cell::get) && !CHILD.load(Ordering::Relaxed)
}

fn mark(fd: c_int, on: bool) {
    if (0..FD_LIMIT).contains(&fd) {
        let bit = 1u64 << (fd % 64);
        if on {
            TRACKED[fd as usize / 64].fetch_or(bit, Ordering::Relaxed);
        } else {
            TRACKED[fd as usize / 64].fetch_and(!bit, Ordering::Relaxed);
        }
    }
}

/// Whether the layer runs in this process (and this thread is not inside it).
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed) && !INSIDE.with(Cell::get)
}

/// Runs a thread of the layer's own (all its calls go to the C library).
pub(crate) fn inside_thread(f: impl FnOnce()) {
    inside(f)
}

/// In a child process after fork: the layer's descriptors are not the child's to write
/// (they are placeholders: its calls on them fail with EBADF), its paths the system's.
pub(crate) fn forked() {
    ACTIVE.store(false, Ordering::Relaxed);
    CHILD.store(true, Ordering::Relaxed);
}

static CHILD: AtomicBool = AtomicBool::new(false);

/// Runs `f` with this thread marked inside the layer.
fn inside<R>(f: impl FnOnce() -> R) -> R {
    struct Out(bool);
    impl Drop for Out {
        fn drop(&mut self) {
            INSIDE.with(|c| c.set(self.0));
        }
    }
    let _out = Out(INSIDE.with(|c| c.replace(true)));
    f()
}

pub(crate) fn shared() -> Option<&'static Shared> {
    SHARED.get()
}

/// Starts the layer in this process (a replica of a launched job). Files opened before
/// stay the C library's. `VOLPEX_FILES=0` leaves the layer off. The modules above this
/// one hand in what it must not name: `install` runs once before the layer turns on (the
/// exported functions' setup, `sys::init`), `start_worker` starts the files thread
/// (`worker::start`) at the rank's first file.
pub(crate) fn activate(id: Identity, connect: Connect, install: fn(), start_worker: fn()) {
    if std::env::var("VOLPEX_FILES").is_ok_and(|v| v == "0") {
        log::info!("VOLPEX_FILES=0: the program's files are not replicated");
        return;
    }
    let journal_bytes_max = std::env::var("VOLPEX_FILES_JOURNAL_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(JOURNAL_BYTES_DEFAULT)
        .max(1 << 16);
    let verify = std::env::var("VOLPEX_VERIFY_OUTPUT").is_ok_and(|v| v == "1");
    let cfg = Config {
        journal_bytes_max,
        verify,
    };
    let state = State::new(id, cfg, Link::Idle(Some(connect)), start_worker);
    let fresh = SHARED
        .set(Shared {
            state: Mutex::new(state),
            cond: Condvar::new(),
            applier: Mutex::new(Applier::default()),
            ops: ReentrantMutex::new(()),
        })
        .is_ok();
    if fresh {
        install();
        ACTIVE.store(true, Ordering::SeqCst);
    }
}

/// A message from the launcher (`protocol::Down`).
pub fn deliver(bytes: &[u8]) {
    let Some(sh) = shared() else { return };
    let Some(d) = protocol::decode::<Down>(bytes) else {
        log::warn!("a files message from volpexrun that does not decode; ignored");
        return;
    };
    let mut g = sh.state.lock();
    g.on_down(d);
    sh.cond.notify_all();
}

/// The files connection ended: the launcher is gone, or it ended this incarnation.
pub fn link_lost(why: &str) {
    let Some(sh) = shared() else { return };
    let mut g = sh.state.lock();
    if !g.finished && g.problem.is_none() {
        g.problem = Some(format!("lost the files connection to volpexrun ({why})"));
    }
    g.link = Link::Down;
    sh.cond.notify_all();
}

/// The program is done with its files (MPI_Finalize, the universe dropped): returns once
/// the rank's writer applied every operation this replica produced, so the job may end.
/// Later operations are applied without waiting.
pub fn finish() {
    let Some(sh) = shared() else { return };
    let _op = sh.ops.lock();
    inside(|| {
        let mut g = sh.state.lock();
        if g.finished {
            return;
        }
        if g.worker {
            wait_while(
                sh,
                &mut g,
                "the writer to apply this replica's files",
                State::pending,
            );
        }
        if g.problem.is_none() {
            let unseen = unseen(&g.model);
            g.outbox.unseen = unseen;
        }
        g.finished = true;
        g.outbox.dirty = true;
        g.outbox.urgent = true;
        sh.cond.notify_all();
        if g.worker {
            wait_while(sh, &mut g, "the last files report to go out", |s| {
                s.outbox.sent.2 != s.finished && matches!(s.link, Link::Up(_))
            });
        }
    });
}

/// Waits until the file operations this replica made so far are applied: in the writer,
/// until its files thread applied them (an operation that waits for the other replicas
/// to produce it waits for them); in another replica, until the writer says so, for
/// `SYNC_WAIT` at most (as a close does). A rank that tells another rank something
/// after this (MPI-IO's collective calls) has its files on the file system as its
/// program left them. Returns at once before the first file operation.
pub fn settle() {
    let Some(sh) = shared() else { return };
    let _op = sh.ops.lock();
    inside(|| {
        let mut g = sh.state.lock();
        if g.finished || !g.worker {
            return;
        }
        let start = Instant::now();
        let target = g.produced;
        wait_while(
            sh,
            &mut g,
            "the writer to apply this replica's file operations",
            |s| s.known_applied() < target && (s.role.writing || start.elapsed() < SYNC_WAIT),
        );
    });
}

/// Waits while `busy` holds (and the layer can go on), telling the worker it is
/// urgent. Returns at once after `finish`.
fn wait_while(
    sh: &Shared,
    g: &mut MutexGuard<'_, State>,
    what: &str,
    busy: impl Fn(&State) -> bool,
) {
    let start = Instant::now();
    let mut noted = false;
    while busy(g) && g.problem.is_none() && !matches!(g.link, Link::Down) {
        if g.finished && !what.starts_with("the last") {
            return;
        }
        if start.elapsed() > Duration::from_millis(50) && !noted {
            log::debug!(
                "replica {}.{}: waited {:?} for {what} (applied {} of {}, writing {})",
                g.id.rank,
                g.id.replica,
                start.elapsed(),
                g.known_applied(),
                g.produced,
                g.role.writing
            );
        }
        g.outbox.dirty = true;
        g.outbox.urgent = true;
        sh.cond.notify_all();
        sh.cond.wait_for(g, Duration::from_millis(100));
        if !noted && start.elapsed() > WAIT_NOTE {
            noted = true;
            log::warn!(
                "replica {}.{}: waiting {:.0} s for {what} (writer: replica {}, applied {} of {})",
                g.id.rank,
                g.id.replica,
                start.elapsed().as_secs_f64(),
                g.role.writer,
                g.known_applied(),
                g.produced
            );
        }
    }
}

/// This replica's state of the layer, to put in a checkpoint.
pub fn snapshot() -> Vec<u8> {
    let Some(sh) = shared() else {
        return Vec::new();
    };
    let g = sh.state.lock();
    let open = g.model.open_for_writing();
    if !open.is_empty() {
        log::warn!(
            "replica {}.{}: files open for writing at a checkpoint ({}): a replica restored from it cannot write them; close files before checkpoints",
            g.id.rank,
            g.id.replica,
            open.join(", ")
        );
    }
    protocol::encode(&Saved {
        model: &g.model,
        produced: g.produced,
        trace: g.trace,
        journal: g.journal.to_vec(),
        applied: g.known_applied(),
    })
}

/// Restores what `snapshot` saved in a sibling (a replica restored from its checkpoint).
pub fn restore(bytes: &[u8]) {
    let Some(sh) = shared() else { return };
    if bytes.is_empty() {
        return;
    }
    let Some(s) = protocol::decode::<Restored>(bytes) else {
        log::warn!("the checkpoint's file state does not decode; files start empty");
        return;
    };
    let mut g = sh.state.lock();
    g.model = s.model;
    g.model.forget_descriptors();
    g.produced = s.produced;
    g.trace = s.trace;
    g.role.applied = s.applied;
    g.kept = s.applied;
    g.journal = Journal::default();
    for e in s.journal {
        g.journal.push(e);
    }
}

/// The closed files of the rank that this replica's host does not see as the model says
/// (they must be there, at least as large, once the writer applied everything): its host
/// and the writer's do not share a file system. An open makes a network file system
/// show the file as its last close left it.
fn unseen(model: &Model) -> Vec<Failure> {
    let mut out = Vec::new();
    for (path, size) in model.closed_files() {
        let Some(c) = cpath(&path) else { continue };
        let seen = real::open(&c, libc::O_RDONLY, 0).and_then(|fd| {
            let st = real::fstat(fd);
            let _ = real::close(fd);
            st
        });
        let what = match seen {
            // Larger: other ranks may write the same file.
            Ok(st) if st.st_size as u64 >= size => continue,
            Ok(st) => format!("{} bytes, {size} written", st.st_size),
            Err(e) => format!("{size} bytes written, {}", protocol::errno_name(e)),
        };
        out.push(Failure {
            path: path.display().to_string(),
            what,
            errno: 0,
        });
    }
    out
}

#[derive(Serialize)]
struct Saved<'a> {
    model: &'a Model,
    produced: Seq,
    trace: u64,
    journal: Vec<Entry>,
    applied: Seq,
}

#[derive(Deserialize)]
struct Restored {
    model: Model,
    produced: Seq,
    trace: u64,
    journal: Vec<Entry>,
    applied: Seq,
}

/// FNV-1a over `bytes`, folded into `h`.
fn fold(h: u64, bytes: &[u8]) -> u64 {
    let mut h = h ^ 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn cpath(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

impl State {
    /// A replica's state before its first file operation.
    pub(crate) fn new(id: Identity, cfg: Config, link: Link, start_worker: fn()) -> State {
        State {
            id,
            cfg,
            model: Model::default(),
            journal: Journal::default(),
            produced: 0,
            in_flight: false,
            trace: 0,
            role: Role {
                gate: 0,
                ..Role::default()
            },
            own_applied: 0,
            outbox: Outbox::default(),
            link,
            worker: false,
            start_worker,
            finished: false,
            private: HashSet::new(),
            readers: HashMap::new(),
            sticky: HashMap::new(),
            decided: BTreeMap::new(),
            syncs: BTreeMap::new(),
            problem: None,
            retiring: false,
            kept: 0,
            hold_until: None,
            deferred: BTreeMap::new(),
        }
    }

    pub(crate) fn known_applied(&self) -> Seq {
        if self.role.writing {
            self.own_applied
        } else {
            self.role.applied
        }
    }

    /// Operations up to here a writer with an empty journal has applied: all it
    /// produced, but for one in flight and a deferred write (`write_deferred`) whose
    /// bytes it does not have yet.
    pub(crate) fn applied_through(&self) -> Seq {
        match self.deferred.keys().next() {
            Some(&d) => self.done_through().min(d - 1),
            None => self.done_through(),
        }
    }

    /// Operations up to here are complete (the one in flight is not).
    pub(crate) fn done_through(&self) -> Seq {
        if self.in_flight {
            self.produced - 1
        } else {
            self.produced
        }
    }

    fn on_down(&mut self, d: Down) {
        if d.epoch < self.role.epoch {
            return;
        }
        let became = d.you_write && !(self.role.writing && self.role.epoch == d.epoch);
        if !self.role.heard && d.applied > self.done_through() {
            // It starts behind its writer: it replays, and keeps what it writes.
            self.hold_until = Some(d.applied);
        }
        self.role.heard = true;
        self.role.epoch = d.epoch;
        self.role.writer = d.writer;
        self.role.applied = self.role.applied.max(d.applied);
        self.role.recorded_through = d.recorded_through;
        self.role.gate = d.gate;
        let from = self.done_through();
        for r in d.recorded {
            if let Some((o, trace)) = self.decided.remove(&r.seq) {
                if o != r.outcome || trace != r.trace {
                    self.diverged(r.seq);
                }
            } else if let Some(file) = self.syncs.remove(&r.seq) {
                if let Outcome::Failed { errno } = r.outcome {
                    self.sticky.insert(file, errno);
                }
            } else if r.seq > from {
                self.role.outcomes.insert(r.seq, r);
            }
        }
        for (p, s) in d.mutated {
            let e = self.role.mutated.entry(PathBuf::from(p)).or_insert(0);
            *e = (*e).max(s);
        }
        if became {
            log::info!(
                "replica {}.{} writes rank {}'s files from operation {} (epoch {})",
                self.id.rank,
                self.id.replica,
                self.id.rank,
                d.applied + 1,
                d.epoch
            );
            self.own_applied = d.applied;
            // What it decided itself beyond the last record, it records now.
            for (seq, (outcome, trace)) in std::mem::take(&mut self.decided) {
                if seq > d.recorded_through {
                    self.outbox.recorded.push(Recorded {
                        seq,
                        outcome,
                        trace,
                    });
                    self.outbox.urgent = true;
                }
            }
        }
        self.role.writing = d.you_write;
        self.retain();
    }

    /// Takes the next number, folding the operation's header into the trace.
    fn next(&mut self, header: &[u8]) -> (Seq, u64) {
        self.produced += 1;
        self.trace = fold(self.trace, header);
        self.outbox.dirty = true;
        (self.produced, self.trace)
    }

    fn push(&mut self, mut e: Entry) {
        e.trace = self.trace;
        if let Op::Write {
            path, offset, data, ..
        } = &e.op
        {
            self.digest(e.seq, path.as_deref(), *offset, &[data]);
        }
        self.journal.push(e);
        self.retain();
    }

    /// With `VOLPEX_VERIFY_OUTPUT=1`: the digest of write `seq` goes to the launcher.
    fn digest(&mut self, seq: Seq, path: Option<&Path>, offset: u64, parts: &[&[u8]]) {
        if !self.cfg.verify {
            return;
        }
        let mut hasher = blake3::Hasher::new();
        for p in parts {
            hasher.update(p);
        }
        let h = hasher.finalize();
        let mut hash = [0u8; 16];
        hash.copy_from_slice(&h.as_bytes()[..16]);
        self.outbox.written.push(Written {
            seq,
            path: path.map_or_else(|| "(a removed file)".into(), |p| p.display().to_string()),
            offset,
            len: parts.iter().map(|p| p.len() as u64).sum(),
            hash,
        });
    }

    /// The checks and numbering header every write of `len` bytes to `fd` (at `at`, or
    /// at its file pointer) starts with: the file, offset and gate the model gives it
    /// and the header the operation is numbered with; `None` for nothing to write.
    fn start_write(
        &mut self,
        fd: c_int,
        len: u64,
        at: Option<u64>,
    ) -> Result<Option<StartedWrite>, c_int> {
        if self.problem.is_some() {
            return Err(libc::EIO);
        }
        let desc = self.model.desc_of(fd).ok_or(libc::EBADF)?;
        if let Some(&e) = self.sticky.get(&desc.file) {
            return Err(e);
        }
        if len == 0 {
            return Ok(None);
        }
        let (file, offset, gate) = self.model.write(fd, len, at)?;
        let mut header = b"write".to_vec();
        header.extend_from_slice(&file.to_le_bytes());
        header.extend_from_slice(&offset.to_le_bytes());
        header.extend_from_slice(&len.to_le_bytes());
        Ok(Some((file, offset, gate, header)))
    }

    /// Whether this replica applies its program's next write (with `gate`) itself, at
    /// once, instead of through the journal: it is the rank's writer, it applied every
    /// operation it produced (so the write is next in order, and the files thread has
    /// nothing in hand), it does not replay from before its writer's point, and the
    /// write may be applied now (an append; a rewrite once every live replica has
    /// produced it: `Role::gate`). Then the bytes go from the program's buffer to the
    /// file without a copy into the journal; nothing else changes (the others keep their
    /// copy until this writer reports it applied, a failure breaks the file as the
    /// files thread's would).
    fn applies_now(&self, gate: Gate) -> bool {
        let gate_open = match gate {
            Gate::Free => true,
            Gate::Everyone => self.role.gate > self.produced,
        };
        self.role.writing
            && gate_open
            && self.hold_until.is_none()
            && !self.in_flight
            && self.own_applied == self.produced
            && self.problem.is_none()
            && matches!(self.link, Link::Up(_))
    }

    /// Applies the program's write at once (`applies_now` said so): numbers it, writes
    /// `data` with the state's lock released (the files thread finds nothing to apply:
    /// the operation counts as not produced until it is applied, `in_flight`), and takes
    /// note of it as the files thread does of what it applied. A writer that lost its
    /// role meanwhile keeps the write in its journal, as any other replica does.
    fn write_in_place(
        sh: &Shared,
        g: &mut MutexGuard<'_, State>,
        header: &[u8],
        file: FileId,
        offset: u64,
        parts: &[&[u8]],
        gate: Gate,
    ) -> Result<usize, c_int> {
        let (seq, trace) = g.next(header);
        let path = g.model.file(file).and_then(|f| f.path.clone());
        g.digest(seq, path.as_deref(), offset, parts);
        let epoch = g.role.epoch;
        g.in_flight = true;
        let a = MutexGuard::unlocked(g, || {
            sh.applier
                .lock()
                .write(seq, gate, file, path.as_deref(), offset, parts)
        });
        g.in_flight = false;
        if g.role.writing && g.role.epoch == epoch {
            g.note_applied(vec![(seq, trace, a)]);
        } else {
            let data = g.journal.copy(parts);
            let mut e = g.model.write_entry(seq, file, offset, data, gate);
            e.trace = trace;
            g.journal.push(e);
            g.retain();
        }
        sh.cond.notify_all();
        Ok(parts.iter().map(|p| p.len()).sum())
    }

    /// Takes note of what the writer applied (`done`: each operation, its trace and
    /// what applying it gave).
    pub(crate) fn note_applied(&mut self, done: Vec<(Seq, u64, Applied)>) {
        for (seq, trace, a) in done {
            if let Some(outcome) = a.outcome {
                let r = Recorded {
                    seq,
                    outcome,
                    trace,
                };
                self.outbox.recorded.push(r);
                // A failure is the file's from now on (its program waits for this).
                if let Some(file) = self.syncs.remove(&seq) {
                    if let Outcome::Failed { errno } = outcome {
                        self.sticky.insert(file, errno);
                    }
                }
                self.outbox.urgent = true;
            }
            if let Some(f) = a.failure {
                log::warn!(
                    "replica {}.{}: {} of {} failed: {}",
                    self.id.rank,
                    self.id.replica,
                    f.what,
                    f.path,
                    protocol::errno_name(f.errno)
                );
                self.outbox.failures.push(f);
                self.outbox.urgent = true;
            }
            self.outbox.mutated.extend(a.mutated);
            self.own_applied = self.own_applied.max(seq);
        }
        if !self.pending() {
            self.own_applied = self.own_applied.max(self.applied_through());
        }
        self.retain();
        self.outbox.dirty = true;
    }

    /// Whether the journal holds operations the writer has not applied.
    pub(crate) fn pending(&self) -> bool {
        self.journal.after(self.known_applied()).next().is_some()
    }

    /// Drops the entries the journal need not hold any more: those applied, unless this
    /// replica still replays from before its writer's point (and they fit).
    pub(crate) fn retain(&mut self) {
        if let Some(h) = self.hold_until {
            let full = self.journal.bytes() > self.cfg.journal_bytes_max;
            if self.done_through() >= h || full {
                if full {
                    log::warn!(
                        "replica {}.{}: replaying, its files' operations outgrew VOLPEX_FILES_JOURNAL_BYTES: a file rewritten before operation {h} cannot be read back as it was",
                        self.id.rank,
                        self.id.replica
                    );
                }
                self.hold_until = None;
            }
        }
        if self.hold_until.is_none() {
            self.kept = self.known_applied();
            self.journal.trim_through(self.kept);
        }
    }

    /// The outcome of operation `seq`: the writer's record when it has one (this replica
    /// replays what its writer did before it started), else decided here from the model
    /// and the file system. No replica decides differently from the writer: an operation
    /// that would change what the decision reads (a creation, a truncation, a rename, the
    /// first write open of a path) waits at the writer until every live replica has
    /// produced it, and records come before their effects; the record, when it comes, is
    /// compared. Waits only for the launcher's first answer (it says what is recorded).
    fn outcome(
        sh: &Shared,
        g: &mut MutexGuard<'_, State>,
        seq: Seq,
        trace: u64,
        decide: &dyn Fn(&State) -> Outcome,
    ) -> Outcome {
        wait_while(sh, g, "volpexrun's first answer on files", |s| {
            !s.role.heard
        });
        if seq <= g.role.recorded_through {
            if let Some(r) = g.role.outcomes.remove(&seq) {
                if r.trace != trace && !g.role.writing {
                    g.diverged(seq);
                    return Outcome::Failed { errno: libc::EIO };
                }
                return r.outcome;
            }
        }
        if g.problem.is_some() {
            return Outcome::Failed { errno: libc::EIO };
        }
        let outcome = decide(g);
        if g.role.writing {
            g.outbox.recorded.push(Recorded {
                seq,
                outcome,
                trace,
            });
            g.outbox.dirty = true;
            g.outbox.urgent = true;
            sh.cond.notify_all();
        } else if !g.finished {
            g.decided.insert(seq, (outcome, trace));
        }
        outcome
    }

    /// The outcome of close or fsync operation `seq` on `file`: what the disk said when
    /// the writer applied the file through it (a full disk, a quota). The writer waits for
    /// its own files thread, which applies the file through here once every live replica
    /// has produced what it must wait for; another replica waits for the writer's record
    /// for `SYNC_WAIT` at most (the writer is usually ahead: the record is there), then
    /// takes a failure already known for the file, or success (a failure found later
    /// fails the job, and this replica's later writes to the file). So once a close
    /// returns in the writer, and in the others when the record came, the file is on the
    /// file system: a rank that reads it after a message from this one sees it. Neither
    /// wait can deadlock: the writer reaches the close with no other replica's help but
    /// the messages its program needs, and the others only need to come as far as it.
    fn synced(
        sh: &Shared,
        g: &mut MutexGuard<'_, State>,
        seq: Seq,
        file: FileId,
    ) -> Result<(), c_int> {
        if let Some(r) = g.role.outcomes.remove(&seq) {
            // The writer said it before this replica came here.
            if let Outcome::Failed { errno } = r.outcome {
                g.sticky.insert(file, errno);
            }
        } else if !g.finished {
            g.syncs.insert(seq, file);
            let start = Instant::now();
            while g.syncs.contains_key(&seq) {
                // The writer waits for its own files thread (which may wait for the others
                // to come this far: they never wait for it longer than SYNC_WAIT).
                if !g.role.writing && start.elapsed() >= SYNC_WAIT {
                    log::info!(
                        "replica {}.{}: no word from the writer (replica {}) on file operation {seq} after {SYNC_WAIT:?}; going on",
                        g.id.rank,
                        g.id.replica,
                        g.role.writer
                    );
                    break;
                }
                if g.problem.is_some() || matches!(g.link, Link::Down) {
                    break;
                }
                g.outbox.dirty = true;
                g.outbox.urgent = true;
                sh.cond.notify_all();
                sh.cond.wait_for(g, Duration::from_millis(20));
            }
        }
        match g.sticky.get(&file) {
            Some(&e) => Err(e),
            None => Ok(()),
        }
    }

    /// This replica's operation `seq` is not what the writer did: it cannot go on.
    fn diverged(&mut self, seq: Seq) {
        let msg = format!(
            "replica {}.{}: file operation {seq} differs from the writer's (replica {}): the program did not do the same file operations in every replica (see the determinism contract); retiring",
            self.id.rank, self.id.replica, self.role.writer
        );
        self.fail(msg);
    }

    /// Records a problem that ends this replica: reported, then it retires.
    fn fail(&mut self, msg: String) {
        self.retiring = true;
        if self.problem.is_none() {
            eprintln!("volpex[{}.{}] {msg}", self.id.rank, self.id.replica);
            self.problem = Some(msg);
            self.outbox.dirty = true;
            self.outbox.urgent = true;
        }
    }

    /// A replica that replays from before operation `since` cannot read `path` as it was.
    fn check_replay(&mut self, path: &Path) -> Result<(), c_int> {
        match self.role.mutated.get(path) {
            Some(&s) if s > self.done_through() => {
                self.fail(format!(
                    "replica {}.{}: cannot replay: {} was changed by file operation {s}, after the one it replays now ({}); a checkpoint would let it start later; retiring",
                    self.id.rank,
                    self.id.replica,
                    path.display(),
                    self.done_through()
                ));
                Err(libc::EIO)
            }
            _ => Ok(()),
        }
    }

    fn ensure_worker(&mut self) {
        if !self.worker {
            self.worker = true;
            (self.start_worker)();
        }
    }

    /// The writer's decision for an open of `path` for writing.
    fn decide_open(&self, path: &Path, create: bool, excl: bool) -> Outcome {
        let failed = |errno| Outcome::Failed { errno };
        match self.model.known(path) {
            Known::File(id) if create && excl => {
                let _ = id;
                failed(libc::EEXIST)
            }
            Known::File(id) => Outcome::Ok {
                existed: true,
                size: self.model.file(id).map_or(0, |f| f.size),
            },
            Known::Gone if !create => failed(libc::ENOENT),
            Known::Gone => match self.parent_writable(path) {
                Ok(()) => Outcome::Ok {
                    existed: false,
                    size: 0,
                },
                Err(e) => failed(e),
            },
            Known::Unknown => {
                let Some(c) = cpath(path) else {
                    return failed(libc::EINVAL);
                };
                match real::stat(&c) {
                    Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => failed(libc::EISDIR),
                    Ok(_) if create && excl => failed(libc::EEXIST),
                    Ok(st) => match real::access(&c, libc::W_OK) {
                        Ok(()) => Outcome::Ok {
                            existed: true,
                            size: st.st_size as u64,
                        },
                        Err(e) => failed(e),
                    },
                    Err(libc::ENOENT) if !create => failed(libc::ENOENT),
                    Err(libc::ENOENT) => match self.parent_writable(path) {
                        Ok(()) => Outcome::Ok {
                            existed: false,
                            size: 0,
                        },
                        Err(e) => failed(e),
                    },
                    Err(e) => failed(e),
                }
            }
        }
    }

    /// Whether a file may be made or removed in `path`'s directory.
    fn parent_writable(&self, path: &Path) -> Result<(), c_int> {
        let parent = path.parent().unwrap_or(Path::new("/"));
        match self.model.dir(parent) {
            Some(true) => return Ok(()),
            Some(false) => return Err(libc::ENOENT),
            None => {}
        }
        let c = cpath(parent).ok_or(libc::EINVAL)?;
        let st = real::stat(&c)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            return Err(libc::ENOTDIR);
        }
        real::access(&c, libc::W_OK | libc::X_OK)
    }

    /// The writer's decision for a path that must exist (rename's source, unlink).
    fn decide_existing(&self, path: &Path, dir: bool) -> Outcome {
        let ok = |size| Outcome::Ok {
            existed: true,
            size,
        };
        if dir {
            return match self.model.dir(path) {
                Some(true) => ok(0),
                Some(false) => Outcome::Failed {
                    errno: libc::ENOENT,
                },
                None => match cpath(path).map(|c| real::stat(&c)) {
                    Some(Ok(st)) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => {
                        match self.parent_writable(path) {
                            Ok(()) => ok(0),
                            Err(errno) => Outcome::Failed { errno },
                        }
                    }
                    Some(Ok(_)) => Outcome::Failed {
                        errno: libc::ENOTDIR,
                    },
                    Some(Err(errno)) => Outcome::Failed { errno },
                    None => Outcome::Failed {
                        errno: libc::EINVAL,
                    },
                },
            };
        }
        let size = match self.model.known(path) {
            Known::File(id) => self.model.file(id).map_or(0, |f| f.size),
            Known::Gone => {
                return Outcome::Failed {
                    errno: libc::ENOENT,
                }
            }
            Known::Unknown => match cpath(path).map(|c| real::stat(&c)) {
                Some(Ok(st)) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => {
                    return Outcome::Failed {
                        errno: libc::EISDIR,
                    }
                }
                Some(Ok(st)) => st.st_size as u64,
                Some(Err(errno)) => return Outcome::Failed { errno },
                None => {
                    return Outcome::Failed {
                        errno: libc::EINVAL,
                    }
                }
            },
        };
        match self.parent_writable(path) {
            Ok(()) => ok(size),
            Err(errno) => Outcome::Failed { errno },
        }
    }

    /// Where `read_base` reads `file` (`None`: nowhere, it reads as empty).
    fn base_path(&self, file: FileId) -> Option<Arc<Path>> {
        let f = self.model.file(file);
        let (now, shared) = (f.and_then(|f| f.path.clone()), f.is_some_and(|f| f.shared));
        match shared {
            true => now,
            false => overlay::path_at(&self.journal, self.kept, file, now),
        }
    }

    /// Reads the file system's copy of `file` (as applied through `applied`) at `off`.
    fn read_base(&mut self, file: FileId, off: u64, buf: &mut [u8]) -> Result<usize, c_int> {
        let Some(path) = self.base_path(file) else {
            return Ok(0);
        };
        self.check_replay(&path)?;
        let fd = match self.readers.get(&file) {
            Some((p, fd)) if **p == *path => *fd,
            _ => {
                if let Some((_, old)) = self.readers.remove(&file) {
                    let _ = real::close(old);
                }
                let Some(c) = cpath(&path) else {
                    return Ok(0);
                };
                match real::open(&c, libc::O_RDONLY, 0) {
                    Ok(fd) => {
                        self.readers.insert(file, (path, fd));
                        fd
                    }
                    // Not created on the file system yet.
                    Err(libc::ENOENT) => return Ok(0),
                    Err(e) => return Err(e),
                }
            }
        };
        real::pread_full(fd, buf, off)
    }

    /// The bytes of write `seq` of `len` bytes at `offset` of `file`, which a replaying
    /// replica made without them (`write_deferred`): as the file system has them (the
    /// writer applied it), with `own` (file offset, bytes) laid over them. `Err`: why they
    /// cannot be had (nothing read the file system then).
    fn replayed_bytes(
        &mut self,
        seq: Seq,
        file: FileId,
        offset: u64,
        len: u64,
        own: &[(u64, &[u8])],
    ) -> Result<Vec<u8>, String> {
        if self.known_applied() < seq {
            return Err(format!("its writer has not applied operation {seq}"));
        }
        let end = offset + len;
        let mut data = vec![0u8; len as usize];
        let covered: u64 = own
            .iter()
            .map(|(o, b)| end.min(o + b.len() as u64).saturating_sub((*o).max(offset)))
            .sum();
        if covered < len {
            let Some(path) = self.base_path(file) else {
                return Err("its file is not on the file system".into());
            };
            // As `check_replay`, without retiring.
            if let Some(&s) = self.role.mutated.get(&*path) {
                if s > self.done_through() {
                    return Err(format!(
                        "{} was changed by file operation {s} since",
                        path.display()
                    ));
                }
            }
            self.read_base(file, offset, &mut data)
                .map_err(|e| format!("reading it back: {}", protocol::errno_name(e)))?;
        }
        for (o, b) in own {
            let (lo, hi) = (offset.max(*o), end.min(o + b.len() as u64));
            if lo < hi {
                data[(lo - offset) as usize..(hi - offset) as usize]
                    .copy_from_slice(&b[(lo - o) as usize..(hi - o) as usize]);
            }
        }
        Ok(data)
    }
}

/// The absolute form of `path`, relative to `dirfd` (`AT_FDCWD`: the working
/// directory); `None` when it cannot be known.
fn resolve(dirfd: c_int, path: &Path) -> Option<PathBuf> {
    if path.is_absolute() {
        return Some(paths::absolute(Path::new("/"), path));
    }
    let base = if dirfd == libc::AT_FDCWD {
        std::env::current_dir().ok()?
    } else {
        std::fs::read_link(format!("/proc/self/fd/{dirfd}")).ok()?
    };
    Some(paths::absolute(&base, path))
}

/// What a path-based call concerns.
enum Target {
    /// Not the layer's.
    Pass,
    /// This absolute path.
    Path(PathBuf),
}

fn target(g: &State, dirfd: c_int, path: &Path) -> Target {
    match resolve(dirfd, path) {
        Some(p) if !paths::system(&p) && !p.ancestors().any(|a| g.private.contains(a)) => {
            Target::Path(p)
        }
        _ => Target::Pass,
    }
}

/// Whether `open(path, flags)` would be one of the layer's (freopen cannot be).
pub fn claims(path: &Path, flags: c_int) -> bool {
    let acc = flags & libc::O_ACCMODE;
    if acc == libc::O_RDONLY && flags & libc::O_CREAT == 0 {
        return false;
    }
    let Some(sh) = shared() else { return false };
    inside(|| {
        let g = sh.state.lock();
        match target(&g, libc::AT_FDCWD, path) {
            Target::Pass => false,
            Target::Path(p) => {
                g.model.known(&p) != Known::Unknown
                    || cpath(&p).map(|c| real::stat(&c)).is_none_or(|st| {
                        st.is_err() || st.is_ok_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFREG)
                    })
            }
        }
    })
}

/// Runs a program's file operation: serialized with the others, inside the layer.
fn op<T>(f: impl FnOnce(&'static Shared, &mut MutexGuard<'_, State>) -> Handled<T>) -> Handled<T> {
    let Some(sh) = shared() else {
        return Handled::Pass;
    };
    let _op = sh.ops.lock();
    inside(|| {
        let mut g = sh.state.lock();
        let r = f(sh, &mut g);
        if g.retiring && !g.finished {
            retire(sh, &mut g);
        }
        r
    })
}

/// Ends this replica, once the launcher heard why (or after a second): its program must
/// not go on with what the layer could not give it.
fn retire(sh: &Shared, g: &mut MutexGuard<'_, State>) -> ! {
    g.outbox.dirty = true;
    g.outbox.urgent = true;
    sh.cond.notify_all();
    let start = Instant::now();
    while !g.outbox.problem_sent
        && !matches!(g.link, Link::Down)
        && start.elapsed() < Duration::from_secs(1)
    {
        sh.cond.wait_for(g, Duration::from_millis(20));
    }
    real::exit_now(g.id.retire_code)
}

fn done<T>(
    f: impl FnOnce(&'static Shared, &mut MutexGuard<'_, State>) -> Result<T, c_int>,
) -> Result<T, c_int> {
    match op(|sh, g| Handled::Done(f(sh, g))) {
        Handled::Done(r) => r,
        Handled::Pass => Err(libc::EBADF),
    }
}

thread_local! {
    /// Set while `shared_open` runs its opens.
    static SHARED_OPEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, whose opens (in this thread) open files that several ranks write and read
/// (MPI-IO's files, opened by every rank of a communicator): such a file's size at open
/// is not part of the rank's outcome (another rank's writer may change it at any time;
/// the replicas of this rank would decide it differently), its reads are cut to the
/// file system's size rather than the model's, and `fstat` reports the larger of the
/// two. The rank's own writes to it follow the layer's rule like any other.
pub fn shared_open<T>(f: impl FnOnce() -> T) -> T {
    SHARED_OPEN.with(|c| c.set(true));
    let r = f();
    SHARED_OPEN.with(|c| c.set(false));
    r
}

fn opening_shared() -> bool {
    SHARED_OPEN.with(|c| c.get())
}

/// A write's file, offset, gate and numbering header (`State::start_write`).
type StartedWrite = (FileId, u64, Gate, Vec<u8>);

/// A write `write_deferred` numbered without its bytes, until its program resolves it.
#[derive(Debug, Clone)]
pub(crate) struct Ticket {
    pub(crate) trace: u64,
    pub(crate) file: FileId,
    pub(crate) offset: u64,
    pub(crate) len: u64,
    pub(crate) gate: Gate,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> State {
        let id = Identity {
            rank: 0,
            replica: 0,
            incarnation: 0,
            retire_code: 75,
        };
        let cfg = Config {
            journal_bytes_max: 1 << 16,
            verify: false,
        };
        let mut g = State::new(id, cfg, Link::Up(Arc::new(Box::new(|_| Ok(())))), || {});
        g.role.heard = true;
        g.role.writing = true;
        g.produced = 4;
        g.own_applied = 4;
        g.role.gate = 4;
        g
    }

    #[test]
    fn only_a_writer_with_nothing_unapplied_writes_at_once() {
        let mut g = writer();
        assert!(g.applies_now(Gate::Free));
        // A rewrite waits for the other replicas (the gate is at 4: operation 5 waits).
        assert!(!g.applies_now(Gate::Everyone));
        g.role.gate = 5;
        assert!(g.applies_now(Gate::Everyone));
        // Behind its own journal: the write goes after what is there, in order.
        g.own_applied = 3;
        assert!(!g.applies_now(Gate::Free));
        g.own_applied = 4;
        // Replaying from before its writer's point: it keeps what it writes.
        g.hold_until = Some(9);
        assert!(!g.applies_now(Gate::Free));
        g.hold_until = None;
        // Not the writer: the journal.
        g.role.writing = false;
        assert!(!g.applies_now(Gate::Free));
    }
}
