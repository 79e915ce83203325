//! Passive target synchronization (MPI-3.1 section 11.5.3): MPI_Win_lock / unlock,
//! lock_all / unlock_all, flush (all, local), sync, and the target's side of it, which
//! the target's program never calls: its *serving calls* apply what origins send while
//! they wait (section 11.7.3: progress inside MPI calls).
//!
//! An origin's lock on another process is lazy: its first request (sent at a flush or at
//! unlock, with the epoch's operations on that target) acquires the lock there, the one
//! at unlock releases it, and the origin waits for every request's answer. A lock on
//! itself is taken at once, as an *own request*, so the program may then touch its
//! window directly. The target keeps one receive of the next request posted per origin
//! and window, and per window which origins hold which lock; a request applies when its
//! origin holds a lock, or when the lock it asks for is free (exclusive: nobody holds
//! one; shared: nobody holds an exclusive one).
//!
//! Under replication every replica of the target must apply the same requests in the
//! same order in the same serving call: the rank's leader replica decides, as it decides
//! an `ANY_SOURCE` match. A serving call takes choice slots; the leader records in the
//! current slot each list of (window, origin) it applies, then the empty list when the
//! call returns; a follower applies the lists it reads and leaves the call at the empty
//! one (docs/PROTOCOL.md, "Passive target").
//!
//! Owns the lock tables, the posted request receives and the serving calls; must never
//! keep window memory past a call (the C layer hands it in), nor serve outside an MPI
//! call.

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::os::raw::c_int;
use std::time::Duration;

use parking_lot::Mutex;
use volpex::{Communicator, Decision, PostedMessage, ReceiveInto, Waiting};

use super::answer::{
    answer_pieces, in_place, pieces_of, short_answer, split_pieces, Answer, Places,
};
use super::batch::{self, Window};
use super::object;
use crate::coll::job::{self, Job};
use crate::error::{MpiError, Result};
use crate::handles::{class, COMM_WORLD, PROC_NULL};
use crate::state;
use crate::window::{Access, Landing, LockKind as Kind};

/// How long a serving call that waits sleeps at most once its spin is over (it wakes as
/// soon as anything arrives; see `wait`).
const LOOK: Duration = Duration::from_millis(1);

/// Tags on the window's communicator: a request (lock kind, release, batch), its answer.
const REQUEST: i32 = 5;
const ANSWER: i32 = 6;

/// MPI_LOCK_EXCLUSIVE.
pub const LOCK_EXCLUSIVE: c_int = 234;
/// MPI_LOCK_SHARED.
pub const LOCK_SHARED: c_int = 235;

/// The window's memory for a window handle (the C layer's; see `ffi::rma`).
pub type Memory = dyn Fn(c_int) -> Result<Box<dyn Window>>;

/// Reads an MPI lock type.
pub fn kind_of(t: c_int) -> Result<Kind> {
    match t {
        LOCK_SHARED => Ok(Kind::Shared),
        LOCK_EXCLUSIVE => Ok(Kind::Exclusive),
        t => Err(MpiError::new(
            class::LOCKTYPE,
            format!("lock type {t}: MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE"),
        )),
    }
}

fn code(k: Kind) -> u8 {
    match k {
        Kind::Shared => 1,
        Kind::Exclusive => 2,
    }
}

fn kind_code(c: u8) -> Result<Kind> {
    match c {
        1 => Ok(Kind::Shared),
        2 => Ok(Kind::Exclusive),
        _ => Err(bad_request()),
    }
}

/// What a request does at the target.
enum Body {
    /// From another origin: its batch's bytes; the answer goes back as a message.
    Remote(bytes::Bytes),
    /// From this process itself: the operations, and where their answers land.
    Own(Vec<Access<'static>>, Vec<Landing>),
}

/// One request of an origin at a target.
struct Request {
    kind: Kind,
    release: bool,
    /// Its answer carries nothing (no get, fetching accumulate or compare-and-swap): the
    /// target acknowledges it on the window's acknowledgement communicator instead
    /// (`Served::acks`), a message kept out of the log (`volpex::Process::acknowledge`).
    ack: bool,
    body: Body,
}

/// A target's side of one window that allows locks.
struct Served {
    comm: Communicator,
    /// Where requests whose answer carries nothing are acknowledged (`Request::ack`):
    /// a duplicate of `comm` that carries nothing else.
    acks: Communicator,
    /// The posted receive of each other origin's next request.
    posted: BTreeMap<i32, PostedMessage>,
    /// Requests here that do not apply yet (the leader's; and own requests, everywhere).
    pending: BTreeMap<i32, VecDeque<Request>>,
    /// Who holds which lock.
    holders: BTreeMap<i32, Kind>,
    /// Own requests applied so far.
    own_done: u64,
    /// Own requests made so far.
    own_made: u64,
    /// Whether gets' answers from this window are lent to the log (`Loans`).
    lends: bool,
    /// The answers lent to the log from this window's memory.
    loans: Loans,
}

/// Answers to gets lent to the log straight from the window's memory (where replicated,
/// every answer stays in the target's log until every live replica of its origin has it,
/// and retained for a replay, which copied every answer): taken back, the log copying
/// what it still holds, before anything may change the window (a request that is not
/// gets alone, an own request, an active-target epoch's operations, the serving call's
/// return to the program) and before it is freed.
#[derive(Default)]
struct Loans(Vec<volpex::Loan>);

impl Loans {
    /// Takes every loan back (`volpex::Communicator::take_back`).
    fn take_back(&mut self, comm: &Communicator) -> Result<()> {
        for loan in self.0.drain(..) {
            comm.take_back(loan)?;
        }
        Ok(())
    }
}

/// Takes back every answer lent to the log from any window (`Loans`): one may change now.
pub fn take_back_all() -> Result<()> {
    take_back_in(&mut SERVED.lock())
}

fn take_back_in(served: &mut BTreeMap<c_int, Served>) -> Result<()> {
    for s in served.values_mut() {
        s.loans.take_back(&s.comm)?;
    }
    Ok(())
}

/// Takes back every loan (`take_back_in`) if applying `r` may change a window.
fn take_back_before(served: &mut BTreeMap<c_int, Served>, r: &Request) -> Result<()> {
    // Decoding the batch again only while something is lent.
    match served.values().any(|s| !s.loans.0.is_empty()) && changes(r) {
        true => take_back_in(served),
        false => Ok(()),
    }
}

/// Whether applying `r` may change a window: anything but a batch of gets alone.
fn changes(r: &Request) -> bool {
    match &r.body {
        Body::Remote(bytes) => batch::decode(bytes).map_or(true, |ops| {
            !ops.iter().all(|op| matches!(op, Access::Get { .. }))
        }),
        Body::Own(..) => true,
    }
}

/// Whether a request of `origin` for a lock of `kind` applies with `holders` holding
/// locks: its origin holds one, or the lock is free (MPI-3.1 section 11.5.3).
fn grants(holders: &BTreeMap<i32, Kind>, origin: i32, kind: Kind) -> bool {
    holders.contains_key(&origin)
        || match kind {
            Kind::Exclusive => holders.is_empty(),
            Kind::Shared => !holders.values().any(|&k| k == Kind::Exclusive),
        }
}

/// Takes or gives back `origin`'s lock in `holders` as request `r` does.
fn hold(holders: &mut BTreeMap<i32, Kind>, origin: i32, r: &Request) {
    if r.release {
        holders.remove(&origin);
    } else {
        holders.entry(origin).or_insert(r.kind);
    }
}

/// A request's flags byte: it releases the lock; it is acknowledged (`Request::ack`).
const RELEASE: u8 = 1;
const ACKNOWLEDGED: u8 = 2;

/// A request as it came from another origin.
fn parse(b: bytes::Bytes) -> Result<Request> {
    let (&kind, rest) = b.split_first().ok_or_else(bad_request)?;
    let &flags = rest.first().ok_or_else(bad_request)?;
    if flags & !(RELEASE | ACKNOWLEDGED) != 0 {
        return Err(bad_request());
    }
    Ok(Request {
        kind: kind_code(kind)?,
        release: flags & RELEASE != 0,
        ack: flags & ACKNOWLEDGED != 0,
        body: Body::Remote(b.slice(2..)),
    })
}

/// Every window that allows locks, by handle.
static SERVED: Mutex<BTreeMap<c_int, Served>> = Mutex::new(BTreeMap::new());

thread_local! {
    /// Serving calls open on this thread (an inner one is part of the outer).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The choice slot of the open serving call.
    static SLOT: Cell<Option<u64>> = const { Cell::new(None) };
}

fn world() -> Result<Communicator> {
    state::comm(COMM_WORLD)
}

/// Starts serving window `win` (made over `comm`, this process `me` of `n`): posts a
/// receive for each other origin's first request.
/// `lends`: gets' answers are lent to the log (`Loans`).
/// `acks`: the window's acknowledgement communicator (`Served::acks`).
pub fn register(win: c_int, comm: Communicator, acks: Communicator, lends: bool) -> Result<()> {
    let me = comm.rank();
    let mut posted = BTreeMap::new();
    for o in (0..comm.size()).filter(|&o| o != me) {
        posted.insert(o, comm.process_at_rank(o).post_message_with_tag(REQUEST)?);
    }
    SERVED.lock().insert(
        win,
        Served {
            comm,
            acks,
            posted,
            pending: BTreeMap::new(),
            holders: BTreeMap::new(),
            own_done: 0,
            own_made: 0,
            lends,
            loans: Loans::default(),
        },
    );
    Ok(())
}

/// Sends each of `targets` (ranks of window communicator `comm` whose part of the window
/// allows locks) but this process the empty request that closes its receive of this
/// origin's next request (MPI_Win_free, before its barrier): else that receive, and the
/// pull it parks here, would wait for the job's life (a program making and freeing 500
/// windows spent a fifth of its time scanning them).
pub fn close(comm: &Communicator, targets: &[i32]) -> Result<()> {
    let me = comm.rank();
    for &t in targets.iter().filter(|&&t| t != me) {
        comm.process_at_rank(t)
            .send_with_tag(&[0u8; 0][..], REQUEST)?;
    }
    Ok(())
}

/// Stops serving window `win` (MPI_Win_free, after its barrier): takes each origin's
/// closing request its receive still waits for (sent before the barrier).
pub fn unregister(win: c_int) -> Result<()> {
    let Some(mut s) = SERVED.lock().remove(&win) else {
        return Ok(());
    };
    s.loans.take_back(&s.comm)?;
    for (_, p) in s.posted {
        match p.wait() {
            Ok(b) if b.is_empty() => {}
            Ok(_) => return Err(bad_request()),
            // An origin that ended or is lost sends nothing more.
            Err(volpex::Error::SenderEnded { .. } | volpex::Error::RankLost { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Whether serving calls serve: some window allows locks.
pub fn active() -> bool {
    !SERVED.lock().is_empty()
}

/// Encodes a list of (window, origin).
fn encode(list: &[(c_int, i32)]) -> Vec<u8> {
    list.iter()
        .flat_map(|&(w, o)| w.to_le_bytes().into_iter().chain(o.to_le_bytes()))
        .collect()
}

fn decode(v: &[u8]) -> Result<Vec<(c_int, i32)>> {
    if !v.len().is_multiple_of(8) {
        return Err(MpiError::new(
            class::INTERN,
            "a passive-target choice that does not decode",
        ));
    }
    Ok(v.chunks(8)
        .map(|c| {
            let w = c_int::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let o = i32::from_le_bytes([c[4], c[5], c[6], c[7]]);
            (w, o)
        })
        .collect())
}

/// A request's header and batch, as it travels.
fn request_bytes(kind: Kind, release: bool, ack: bool, ops: &[Access]) -> Vec<u8> {
    let flags = match release {
        true => RELEASE,
        false => 0,
    } | match ack {
        true => ACKNOWLEDGED,
        false => 0,
    };
    batch::encode_after(&[code(kind), flags], ops)
}

fn bad_request() -> MpiError {
    MpiError::new(
        class::INTERN,
        "a passive-target request that does not decode",
    )
}

/// How the leader's pick looks for requests.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Look {
    /// Testing each origin's receive, which turns the loop.
    Turning,
    /// Taking what earlier turns brought, without a turn: the caller turns the loop
    /// between its steps anyway (`round`, `serve`), or offers an answer's memory there
    /// (`serve_into`), which a turn of a test would not: the answer's first bytes would
    /// go to a pooled buffer, and the whole of it be copied into place once it is here.
    Arrived,
}

/// The leader's pick: takes what arrived, and returns the requests that apply now, in
/// the order they are to be applied (windows ascending, origins ascending, each
/// origin's in order), having taken them out of the pending queues, and the (window,
/// origin) whose request receive it took, to post again (`repost`) once they applied:
/// posting it makes the pulls ahead of the request taken (the engine's speculation),
/// work that would otherwise come between the request's arrival and its answer. One
/// request per origin and step: an origin waits for each request's answer before its
/// next one to the same target, so the next step takes any other. `Look::Turning`
/// turns the loop once, at the first test: the receives tested after it (other
/// origins', other windows') take what that turn
/// brought, as a turn per test would only ask the kernel again in the same microsecond
/// (an 8 B put + flush turned it three times between the request's arrival and its
/// answer).
fn pick(served: &mut BTreeMap<c_int, Served>, look: Look) -> Result<(Picked, Vec<(c_int, i32)>)> {
    let mut out = Vec::new();
    let mut taken = Vec::new();
    let mut look = look;
    for (&w, s) in served.iter_mut() {
        let mut ended = Vec::new();
        for (&o, p) in s.posted.iter_mut() {
            let got = match look {
                Look::Turning => {
                    look = Look::Arrived;
                    p.test()
                }
                Look::Arrived => p.arrived(),
            };
            match got {
                // The origin's closing request (MPI_Win_free): it sends nothing more.
                Ok(Some(b)) if b.is_empty() => ended.push(o),
                Ok(Some(b)) => {
                    s.pending.entry(o).or_default().push_back(parse(b)?);
                    taken.push((w, o));
                }
                Ok(None) => {}
                // An origin whose program ended (or that is lost) sends nothing more.
                Err(volpex::Error::SenderEnded { .. } | volpex::Error::RankLost { .. }) => {
                    ended.push(o)
                }
                Err(e) => return Err(e.into()),
            }
        }
        for o in ended {
            s.posted.remove(&o);
        }
        // Apply in rounds until nothing more applies (a release may free the lock).
        let mut holders = s.holders.clone();
        loop {
            let mut any = false;
            for (&o, q) in s.pending.iter_mut() {
                while let Some(r) = q.front() {
                    if !grants(&holders, o, r.kind) {
                        break;
                    }
                    let Some(r) = q.pop_front() else { break };
                    hold(&mut holders, o, &r);
                    out.push((w, o, r));
                    any = true;
                }
            }
            if !any {
                break;
            }
        }
    }
    Ok((out, taken))
}

/// Requests the leader picked: (window, origin, request), in the order they apply.
type Picked = Vec<(c_int, i32, Request)>;

/// Posts again the request receives `pick` took.
fn repost(served: &mut BTreeMap<c_int, Served>, taken: Vec<(c_int, i32)>) -> Result<()> {
    for (w, o) in taken {
        let s = served.get_mut(&w).ok_or_else(bad_request)?;
        let fresh = s.comm.process_at_rank(o).post_message_with_tag(REQUEST)?;
        s.posted.insert(o, fresh);
    }
    Ok(())
}

/// The next request of `origin` at window `w`: queued here, or (a follower) the one its
/// posted receive gets.
fn next_request(s: &mut Served, origin: i32) -> Result<Request> {
    if let Some(r) = s.pending.get_mut(&origin).and_then(VecDeque::pop_front) {
        return Ok(r);
    }
    let fresh = s
        .comm
        .process_at_rank(origin)
        .post_message_with_tag(REQUEST)?;
    let p = s.posted.insert(origin, fresh).ok_or_else(bad_request)?;
    parse(p.wait()?)
}

/// Applies request `r` of `origin` to window `w`: the lock table, the operations, the
/// answer.
fn apply(s: &mut Served, w: c_int, origin: i32, r: Request, mem: &Memory) -> Result<()> {
    if !grants(&s.holders, origin, r.kind) {
        return Err(MpiError::new(
            class::INTERN,
            "the leader replica applied a request whose lock is held here",
        ));
    }
    hold(&mut s.holders, origin, &r);
    let mut window = mem(w)?;
    let window = &mut *window;
    let kinds = |h| Ok(state::op(h)?.kind);
    match r.body {
        Body::Remote(bytes) if r.ack => {
            // Nothing to answer: the acknowledgement, out of the log.
            batch::apply(window, &batch::decode(&bytes)?, &kinds)?;
            s.acks.process_at_rank(origin).acknowledge()?;
        }
        Body::Remote(bytes) => {
            let ops = batch::decode(&bytes)?;
            let to = s.comm.process_at_rank(origin);
            // Gets of one window range are answered from the window (one copy fewer of
            // what may be megabytes), lent to the log where it lends (`Loans`); else (or
            // across a dynamic window's regions) the answer is built.
            let range = batch::answer_range(&ops);
            let lent = match (s.lends, range) {
                (true, Some((o, l))) => window.lend(o, l).ok().flatten(),
                _ => None,
            };
            if let Some(answer) = lent {
                for piece in answer_pieces(answer) {
                    if let Some(loan) = to.send_lent_until_changed_with_tag(piece, ANSWER)? {
                        s.loans.0.push(loan);
                    }
                }
            } else if let Some(Ok(answer)) = range.map(|(o, l)| window.piece(o, l)) {
                for piece in answer_pieces(answer) {
                    to.send_with_tag(piece, ANSWER)?;
                }
            } else {
                for piece in answer_pieces(&batch::apply(window, &ops, &kinds)?) {
                    to.send_with_tag(piece, ANSWER)?;
                }
            }
        }
        Body::Own(ops, landings) => {
            let answer = batch::apply(window, &ops, &kinds)?;
            super::sync::land(landings, &answer)?;
            s.own_done += 1;
        }
    }
    Ok(())
}

/// One step of the open serving call: applies what the leader decided (or, leading,
/// decides and applies). True when something was applied.
fn step(mem: &Memory, look: Look) -> Result<bool> {
    let world = world()?;
    let mut served = SERVED.lock();
    let slot = SLOT.with(Cell::get);
    let list = match slot.map(|s| world.poll_choice(s)) {
        None | Some(Decision::Yours) => {
            let (picked, taken) = pick(&mut served, look)?;
            if picked.is_empty() {
                repost(&mut served, taken)?;
                return Ok(false);
            }
            if let Some(s) = slot {
                let ids: Vec<(c_int, i32)> = picked.iter().map(|&(w, o, _)| (w, o)).collect();
                world.record_choice(s, encode(&ids));
            }
            for (w, o, r) in picked {
                take_back_before(&mut served, &r)?;
                let s = served.get_mut(&w).ok_or_else(bad_request)?;
                apply(s, w, o, r, mem)?;
            }
            repost(&mut served, taken)?;
            None
        }
        Some(Decision::Made(v)) if v.is_empty() => return Ok(false),
        Some(Decision::Made(v)) => Some(decode(&v)?),
        Some(Decision::Waiting) => return Ok(false),
    };
    for (w, o) in list.unwrap_or_default() {
        let s = served.get_mut(&w).ok_or_else(|| {
            MpiError::new(
                class::INTERN,
                "the leader replica applied a request on a window this replica does not have",
            )
        })?;
        let r = next_request(s, o)?;
        take_back_before(&mut served, &r)?;
        let s = served.get_mut(&w).ok_or_else(bad_request)?;
        apply(s, w, o, r, mem)?;
    }
    SLOT.with(|c| c.set(world.choice_slot()));
    Ok(true)
}

/// Ends the open serving call: the leader records that nothing more was applied in it;
/// a follower applies the rest the leader did and returns when the leader's call did.
fn end(mem: &Memory) -> Result<()> {
    let world = world()?;
    let mut waiting = Waiting::default();
    while let Some(s) = SLOT.with(Cell::get) {
        match world.poll_choice(s) {
            Decision::Yours => {
                world.record_choice(s, Vec::new());
                break;
            }
            Decision::Made(v) if v.is_empty() => break,
            Decision::Made(_) => {
                step(mem, Look::Turning)?;
                waiting.restart();
            }
            Decision::Waiting => wait(&world, &mut waiting)?,
        }
    }
    SLOT.with(|c| c.set(None));
    Ok(())
}

/// Opens a serving call (an inner one is part of the outer); true for the outer one.
fn open_call() -> bool {
    let outer = DEPTH.with(|d| {
        d.set(d.get() + 1);
        d.get() == 1
    });
    if outer && active() {
        SLOT.with(|c| c.set(world().ok().and_then(|w| w.choice_slot())));
    }
    outer
}

/// Closes the serving call `open_call` opened, whose work ended with `r`.
fn close_call<T>(outer: bool, mem: &Memory, r: Result<T>) -> Result<T> {
    let ended = match outer && SLOT.with(Cell::get).is_some() {
        true => end(mem),
        false => Ok(()),
    };
    // The program may store into its windows once the call returns.
    let back = match outer {
        true => take_back_all(),
        false => Ok(()),
    };
    let ended = ended.and(back);
    DEPTH.with(|d| d.set(d.get() - 1));
    let v = r?;
    ended?;
    Ok(v)
}

/// The pause of a serving call between its polls: it waits as a blocking receive does
/// (`volpex::Communicator::pause`: spinning first, so a request or an answer that comes
/// within the spin is taken at once, not after the wake-up of a core that slept; then
/// sleeping until something arrives, `LOOK` at most).
fn wait(world: &Communicator, waiting: &mut Waiting) -> Result<()> {
    Ok(world.pause(waiting, LOOK)?)
}

/// One round of a serving call that waits: a step of serving, or, with nothing to
/// apply, a pause (`wait`) of the wait `waiting`, which starts over when something
/// was applied. Rounds run between the turns of a polling collective's tests
/// (`volpex::polling_between`): the step takes what those turns and the pauses
/// brought, without a turn of its own.
fn round(mem: &Memory, waiting: &mut Waiting) -> Result<()> {
    let served = if active() {
        step(mem, Look::Arrived)?
    } else {
        false
    };
    if served {
        waiting.restart();
    } else {
        wait(&world()?, waiting)?;
    }
    Ok(())
}

/// Runs a serving call: rounds of serving until `poll` answers (it must not block),
/// then the call's end. The first step turns the loop; the later ones take what the
/// pauses (`wait`) and `poll` brought.
pub fn serve<T>(mem: &Memory, mut poll: impl FnMut() -> Result<Option<T>>) -> Result<T> {
    let outer = open_call();
    let mut waiting = Waiting::default();
    let mut look = Look::Turning;
    let r = (|| loop {
        if active() && step(mem, look)? {
            waiting.restart();
            continue;
        }
        if let Some(v) = poll()? {
            return Ok(v);
        }
        wait(&world()?, &mut waiting)?;
        look = Look::Arrived;
    })();
    close_call(outer, mem, r)
}

// ---- The origin's side ----

fn sync_error(msg: impl Into<String>) -> MpiError {
    MpiError::new(class::RMA_SYNC, msg.into())
}

/// Queues an own request at window `win` and serves until it applied.
fn own(win: c_int, r: Request, mem: &Memory) -> Result<()> {
    let want = {
        let mut served = SERVED.lock();
        let s = served
            .get_mut(&win)
            .ok_or_else(|| sync_error("the window was made with info no_locks = true"))?;
        let me = s.comm.rank();
        s.pending.entry(me).or_default().push_back(r);
        s.own_made += 1;
        s.own_made
    };
    serve(mem, || {
        let done = SERVED.lock().get(&win).map_or(want, |s| s.own_done);
        Ok((done >= want).then_some(()))
    })
}

/// MPI_Win_lock (section 11.5.3): a lock of `kind` at `rank` (lazy, but at this process
/// itself; nothing at MPI_PROC_NULL, as Open MPI and MPICH do).
pub fn lock(win: c_int, kind: Kind, rank: c_int, mem: &Memory) -> Result<()> {
    if rank == PROC_NULL {
        return Ok(());
    }
    if !SERVED.lock().contains_key(&win) {
        return Err(sync_error(
            "MPI_Win_lock on a window made with info no_locks = true",
        ));
    }
    let me = object::with(win, |e| {
        if e.epoch.locks.contains_key(&rank) {
            return Err(sync_error(format!(
                "MPI_Win_lock: rank {rank} is locked already in this epoch"
            )));
        }
        if e.epoch.access.is_some() || e.epoch.fence && !e.queued.is_empty() {
            return Err(sync_error("MPI_Win_lock inside an active target epoch"));
        }
        if usize::try_from(rank).map_or(true, |r| r >= e.peers.len()) {
            return Err(MpiError::new(
                class::RANK,
                format!("rank {rank} is not in the window's group"),
            ));
        }
        e.epoch.locks.insert(rank, (kind, false));
        Ok(e.comm)
    })?;
    let me = state::comm(me)?.rank();
    if rank == me {
        let r = Request {
            kind,
            release: false,
            ack: false,
            body: Body::Own(Vec::new(), Vec::new()),
        };
        own(win, r, mem)?;
    }
    Ok(())
}

/// Sends the requests of `targets` (flush, or with `release` unlock) and waits for their
/// answers, serving meanwhile.
fn finish(win: c_int, targets: &[i32], release: bool, mem: &Memory) -> Result<()> {
    let comm = state::comm(object::with(win, |e| Ok(e.comm))?)?;
    let me = comm.rank();
    let mut work = object::with(win, |e| {
        let mut work = Vec::new();
        for &t in targets {
            let Some(&(kind, sent)) = e.epoch.locks.get(&t) else {
                return Err(sync_error(format!("rank {t} is not locked")));
            };
            let ops = e.queued.remove(&t).unwrap_or_default();
            let landings = e.landings.remove(&t).unwrap_or_default();
            if t != me && ops.is_empty() && !(release && sent) {
                if release {
                    e.epoch.locks.remove(&t);
                }
                continue;
            }
            match release {
                true => {
                    e.epoch.locks.remove(&t);
                }
                false => {
                    e.epoch.locks.insert(t, (kind, true));
                }
            }
            work.push((t, kind, ops, landings));
        }
        Ok(work)
    })?;
    let mut waits = Vec::new();
    for (t, kind, ops, landings) in work.drain(..) {
        if t == me {
            let ops = ops.into_iter().map(Access::into_owned).collect();
            let r = Request {
                kind,
                release,
                ack: false,
                body: Body::Own(ops, landings),
            };
            own(win, r, mem)?;
            continue;
        }
        // Its pulls go out in the request's write.
        let to = comm.process_at_rank(t);
        if landings.is_empty() {
            // Nothing to answer: an acknowledgement, on the window's own communicator for
            // them (`Served::acks`).
            let acks = object::with(win, |e| Ok(e.acks.clone()))?
                .ok_or_else(|| sync_error("no process of the window allows locks"))?;
            let ack = acks.process_at_rank(t).post_acknowledgement_before_send()?;
            to.send_with_tag(&request_bytes(kind, release, true, &ops)[..], REQUEST)?;
            waits.push(Answer::Posted(vec![ack], Places::Landings(Vec::new())));
            continue;
        }
        let total = landings.iter().map(|l| l.len).sum::<u64>();
        let total = usize::try_from(total).map_err(|_| short_answer())?;
        let posted = |places| -> Result<Answer> {
            let pieces = (0..pieces_of(total))
                .map(|_| to.post_message_before_send_with_tag(ANSWER))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(Answer::Posted(pieces, places))
        };
        let answer = match in_place(landings)? {
            Places::One(buf) => {
                let len = buf.len();
                let bufs = split_pieces(buf);
                Answer::InPlace(to.post_pieces_into_before_send_with_tag(bufs, ANSWER)?, len)
            }
            places => posted(places)?,
        };
        to.send_with_tag(&request_bytes(kind, release, false, &ops)[..], REQUEST)?;
        waits.push(answer);
    }
    for answer in waits {
        match answer {
            Answer::Posted(mut pieces, places) => {
                let mut got: Vec<Option<bytes::Bytes>> = vec![None; pieces.len()];
                serve(mem, || {
                    for (p, g) in pieces.iter_mut().zip(got.iter_mut()) {
                        if g.is_none() {
                            *g = p.test()?;
                        }
                    }
                    Ok(got.iter().all(Option::is_some).then_some(()))
                })?;
                let mut got = got.into_iter().flatten();
                match (got.next(), pieces.len()) {
                    (Some(bytes), 1) => {
                        places.land(&bytes)?;
                        PostedMessage::recycle(bytes);
                    }
                    (first, _) => {
                        let pieces: Vec<bytes::Bytes> = first.into_iter().chain(got).collect();
                        let mut whole = Vec::with_capacity(pieces.iter().map(|b| b.len()).sum());
                        for b in pieces {
                            whole.extend_from_slice(&b);
                            PostedMessage::recycle(b);
                        }
                        places.land(&whole)?;
                    }
                }
            }
            Answer::InPlace(mut answer, len) => {
                let got: usize = serve_into(mem, &mut answer)?
                    .iter()
                    .map(volpex::Status::count_bytes)
                    .sum();
                if got != len {
                    return Err(short_answer());
                }
            }
        }
    }
    Ok(())
}

/// A serving call that waits for the answer `answer` receives in place: rounds of
/// serving, its pauses offering the answer's memory (`volpex::ReceiveInto`).
fn serve_into(mem: &Memory, answer: &mut ReceiveInto<'_>) -> Result<Vec<volpex::Status>> {
    let outer = open_call();
    let mut waiting = Waiting::default();
    let r = (|| loop {
        if active() && step(mem, Look::Arrived)? {
            waiting.restart();
            continue;
        }
        if let Some(st) = answer.pause(&mut waiting, LOOK)? {
            return Ok(st);
        }
    })();
    close_call(outer, mem, r)
}

/// MPI_Win_unlock: the epoch's operations on `rank` are complete there when it returns.
pub fn unlock(win: c_int, rank: c_int, mem: &Memory) -> Result<()> {
    if rank == PROC_NULL {
        return Ok(());
    }
    finish(win, &[rank], true, mem)
}

/// MPI_Win_flush (and flush_local): the operations on `rank` so far are complete.
pub fn flush(win: c_int, rank: c_int, mem: &Memory) -> Result<()> {
    if rank == PROC_NULL {
        return Ok(());
    }
    finish(win, &[rank], false, mem)
}

fn locked(win: c_int) -> Result<Vec<i32>> {
    object::with(win, |e| Ok(e.epoch.locks.keys().copied().collect()))
}

/// MPI_Win_flush_all (and flush_local_all).
pub fn flush_all(win: c_int, mem: &Memory) -> Result<()> {
    finish(win, &locked(win)?, false, mem)
}

/// MPI_Win_lock_all: a shared lock at every process of the window.
pub fn lock_all(win: c_int, mem: &Memory) -> Result<()> {
    let n = object::with(win, |e| {
        if !e.epoch.locks.is_empty() {
            return Err(sync_error("MPI_Win_lock_all while a lock is held"));
        }
        Ok(e.peers.len() as i32)
    })?;
    for r in 0..n {
        lock(win, Kind::Shared, r, mem)?;
    }
    Ok(())
}

/// MPI_Win_unlock_all.
pub fn unlock_all(win: c_int, mem: &Memory) -> Result<()> {
    let all = locked(win)?;
    if all.is_empty() {
        return Err(sync_error("MPI_Win_unlock_all without MPI_Win_lock_all"));
    }
    finish(win, &all, true, mem)
}

/// MPI_Win_sync: the window's memory is one copy here (MPI_WIN_UNIFIED); a serving call,
/// so a program that polls its window with it sees its origins' requests applied.
pub fn sync(mem: &Memory) -> Result<()> {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    serve(mem, || Ok(Some(())))
}

/// Runs `work` (blocking collectives, on this thread) as a serving call while a window
/// allows locks: each collective sends and receives its plain messages, polling its
/// receives and serving between polls (`volpex::polling_between`), so a member that
/// serves nothing (a window over part of a communicator) takes part with the plain
/// collective. The collectives make no choices, so the serving call's slots are the
/// same in every replica.
fn serving<T>(mem: &'static Memory, work: impl FnOnce() -> Result<T>) -> Result<T> {
    if !active() {
        return work();
    }
    let outer = open_call();
    let failed = std::rc::Rc::new(Cell::new(None));
    let failure = failed.clone();
    let mut waiting = Waiting::default();
    let r = volpex::polling_between(
        Box::new(move || {
            round(mem, &mut waiting).map_err(|e| {
                failure.set(Some(e));
                volpex::Error::Usage("serving a passive-target request failed")
            })
        }),
        work,
    );
    let r = match failed.take() {
        Some(e) => Err(e),
        None => r,
    };
    close_call(outer, mem, r)
}

/// A barrier over `comm` that serves while it waits (MPI_Barrier, MPI_Win_free's).
pub fn barrier(comm: &Communicator, mem: &'static Memory) -> Result<()> {
    serving(mem, || Ok(comm.barrier()?))
}

/// A blocking collective of the C interface (`coll::job`: MPI_Allreduce, MPI_Bcast,
/// ...), serving while it waits.
pub fn collective(job: Job<'_>, mem: &'static Memory) -> Result<()> {
    serving(mem, || job::run(job))
}

/// MPI_Finalize's barrier over MPI_COMM_WORLD, before the job is left: a serving call,
/// so a target that finalizes still applies the requests of origins whose epochs on it
/// are open (MPI-3.1 section 11.5.3: a passive target's progress), and every process
/// takes part whether or not it serves.
pub fn finalize(mem: &'static Memory) -> Result<()> {
    barrier(&world()?, mem)
}

/// The next message with `tag` from `rank` of `comm`, waited for in a serving call while
/// a window allows locks (active target synchronization waits so, since a target may
/// still owe a late origin its passive requests).
pub fn receive(comm: &Communicator, rank: i32, tag: i32, mem: &Memory) -> Result<bytes::Bytes> {
    if !active() {
        let (v, _) = comm.process_at_rank(rank).receive_vec_with_tag::<u8>(tag)?;
        return Ok(v.into());
    }
    let mut posted = comm.process_at_rank(rank).post_message_with_tag(tag)?;
    serve(mem, || posted.test().map_err(MpiError::from))
}
