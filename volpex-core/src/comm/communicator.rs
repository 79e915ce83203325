//! `Communicator`: a group of ranks with its own message space (MPI-3.1 chapters 3 and
//! 6): creating communicators, and the send path (`send_on`, `send_each_on`: into the
//! sender log, a large message straight out to the pulls already waiting for it).
//!
//! Owns the communicator's identity (context id, rank, members) and every send. Must
//! never decide which replica a message goes to (the pulls do) nor run a collective
//! algorithm (`collective`, through `PointToPoint` in `comm/collectives.rs`); the receive
//! side is `receive.rs`.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::group::{derive_id, Group, Members};
use super::immediate::Lanes;
use super::process::{AnyProcess, Process};
use super::receive::{Arrivals, RecvInto};
use super::request::Request;
use super::universe::Inner;
use super::{Status, Tag, TAG_UB};
use crate::datatype::{Buffer, BufferMut, Equivalence};
use crate::error::Error;
use crate::exit::{self, abort_exit_code, End};
use crate::transport::Loan;
use volpex_proto::message::{Key, Lend};
use volpex_proto::pull::MatchState;

/// A group of ranks with its own message space (MPI communicator, MPI-3.1 chapter 6).
/// Clones share the same communicator.
#[derive(Clone)]
pub struct Communicator {
    pub(crate) inner: Arc<Inner>,
    /// Context id of point-to-point traffic; `id + 1` carries collectives.
    pub(super) id: u32,
    /// This process's rank in the communicator.
    pub(super) rank: u32,
    pub(super) members: Arc<Members>,
    /// Communicators created from this one so far (names the next one's context).
    created: Arc<AtomicU32>,
    /// The contexts its immediate collectives run in (`immediate.rs`).
    pub(super) lanes: Arc<Lanes>,
}

/// Who a receive names: one rank of the communicator, or any (`ANY_SOURCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Partner {
    Rank(i32),
    Any,
}

impl Communicator {
    pub(crate) fn world(inner: Arc<Inner>) -> Communicator {
        let world: Arc<[u32]> = (0..inner.ranks).collect::<Vec<u32>>().into();
        Communicator {
            id: 0,
            rank: inner.me.rank,
            members: Arc::new(Members::new(world)),
            created: Arc::new(AtomicU32::new(0)),
            lanes: Arc::new(Lanes::new()),
            inner,
        }
    }

    /// This process's rank.
    pub fn rank(&self) -> i32 {
        self.rank as i32
    }

    /// Number of ranks.
    pub fn size(&self) -> i32 {
        self.members.world.len() as i32
    }

    /// The context id (equal in every replica of every member).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The program is done with this communicator (MPI_Comm_free; MPI-3.1 section 6.4.3:
    /// operations pending on it complete normally): the pulls this replica made ahead
    /// on its contexts for messages no receive waits for are withdrawn.
    pub fn free(&self) {
        let mut core = self.inner.rt.lock();
        core.engine
            .forget_contexts(&[self.id, self.id.wrapping_add(1)]);
        core.flush();
    }

    /// The communicator's group (MPI_Comm_group).
    pub fn group(&self) -> Group {
        Group {
            world: self.members.world.clone(),
            me: self.inner.me.rank,
        }
    }

    pub(super) fn child(&self, what: &[u8], world: Arc<[u32]>) -> Option<Communicator> {
        let nth = self.next_creation();
        self.named(derive_id(self.id, nth, what), world)
    }

    /// Takes the number of the next communicator created from this one.
    pub(super) fn next_creation(&self) -> u32 {
        self.created.fetch_add(1, Ordering::Relaxed)
    }

    /// A communicator with context `id` and members `world` (world ranks in rank order),
    /// or `None` when this process is not one of them.
    pub(super) fn named(&self, id: u32, world: Arc<[u32]>) -> Option<Communicator> {
        let members = Members::new(world);
        let rank = members.local(self.inner.me.rank)?;
        Some(Communicator {
            inner: self.inner.clone(),
            id,
            rank,
            members: Arc::new(members),
            created: Arc::new(AtomicU32::new(0)),
            lanes: Arc::new(Lanes::new()),
        })
    }

    /// A communicator with context `id` whose ranks name the processes of `remote`
    /// (world ranks in rank order) and whose own rank is `rank`: the point-to-point face
    /// of an inter-communicator (MPI-3.1 section 6.6: a destination or source rank names
    /// a process of the remote group; `any_process()` matches only the remote group).
    pub(super) fn addressing(&self, id: u32, remote: Arc<[u32]>, rank: u32) -> Communicator {
        Communicator {
            inner: self.inner.clone(),
            id,
            rank,
            members: Arc::new(Members::new(remote)),
            created: Arc::new(AtomicU32::new(0)),
            lanes: Arc::new(Lanes::new()),
        }
    }

    /// A new communicator with the same members and its own message space
    /// (MPI_Comm_dup). Collective: every member calls it, in the same order.
    pub fn duplicate(&self) -> Communicator {
        let world = self.members.world.clone();
        match self.child(b"dup", world) {
            Some(c) => c,
            // This process is a member of its own communicator.
            None => unreachable!("a process is always a member of its communicator"),
        }
    }

    /// Splits by color: members passing the same color form a new communicator, ranked
    /// as in this one; `None` (MPI_UNDEFINED) joins none (MPI_Comm_split).
    pub fn split_by_color(&self, color: Option<i32>) -> Result<Option<Communicator>, Error> {
        self.split_by_color_with_key(color, 0)
    }

    /// Splits by color, ranking each new communicator by `key`, then by rank here.
    pub fn split_by_color_with_key(
        &self,
        color: Option<i32>,
        key: i32,
    ) -> Result<Option<Communicator>, Error> {
        // Everyone learns everyone's (has color, color, key).
        let mine = [
            i64::from(color.is_some()),
            i64::from(color.unwrap_or(0)),
            i64::from(key),
        ];
        let nth = self.created.fetch_add(1, Ordering::Relaxed);
        let all = match self.inner.restored_split(self.id, nth) {
            Some(all) => all,
            None => {
                let mut all = vec![0i64; 3 * self.members.world.len()];
                self.all_gather_into(&mine, &mut all)?;
                all
            }
        };
        self.inner.splits.lock().push((self.id, nth, all.clone()));
        let Some(c) = color else {
            return Ok(None);
        };
        let mut chosen: Vec<(i64, usize)> = all
            .chunks(3)
            .enumerate()
            .filter(|(_, e)| e[0] == 1 && e[1] == i64::from(c))
            .map(|(r, e)| (e[2], r))
            .collect();
        chosen.sort_unstable();
        let world: Arc<[u32]> = chosen
            .iter()
            .map(|(_, r)| self.members.world[*r])
            .collect::<Vec<u32>>()
            .into();
        let id = derive_id(
            self.id,
            nth,
            &[b"split".as_slice(), &c.to_le_bytes()].concat(),
        );
        match self.named(id, world) {
            Some(new) => Ok(Some(new)),
            None => Err(Error::Usage(
                "split: this process is missing from its own color",
            )),
        }
    }

    /// A communicator of the members of `group` (a subgroup of this one's), or `None`
    /// at processes outside it (MPI_Comm_create). Collective over this communicator;
    /// every member passes the same group.
    pub fn create(&self, group: &Group) -> Option<Communicator> {
        let what: Vec<u8> = group.world.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.child(&[b"create".as_slice(), &what].concat(), group.world.clone())
    }

    /// A communicator of the members of `group` (a subgroup of this one's), made by them
    /// alone (MPI_Comm_create_group, MPI-3.1 section 6.4.2): only the members call it,
    /// all with the same group and `tag`, and calls with the same group and tag happen
    /// in the same order on every member. The context is named by this communicator,
    /// the group, the tag and how many such calls this process made before, so every
    /// replica of every member names it alike without a message; processes outside the
    /// group that make other calls meanwhile change nothing. `None` when this process is
    /// not in `group`.
    pub fn create_from_group(&self, group: &Group, tag: Tag) -> Option<Communicator> {
        let mut what: Vec<u8> = b"create_group".to_vec();
        what.extend_from_slice(&tag.to_le_bytes());
        what.extend(group.world.iter().flat_map(|w| w.to_le_bytes()));
        let nth = {
            let mut made = self.inner.group_creations.lock();
            let n = made.entry((self.id, what.clone())).or_insert(0);
            *n += 1;
            *n - 1
        };
        self.named(derive_id(self.id, nth, &what), group.world.clone())
    }

    /// Splits into the ranks of each host (MPI_Comm_split_type with
    /// MPI_COMM_TYPE_SHARED, MPI-3.1 section 6.4.2), ranked by `key`, then by rank here.
    /// A rank's host is where its first replica ran when the job started (the replicas of
    /// a rank run on different hosts; every one of them must land in the same
    /// communicator), as the launcher's address table says; a job started on one
    /// machine, or without a launcher, is one host. Collective, like
    /// `split_by_color_with_key`.
    pub fn split_by_host(&self, key: i32) -> Result<Option<Communicator>, Error> {
        let host = self
            .inner
            .hosts
            .get(self.inner.me.rank as usize)
            .copied()
            .unwrap_or(0);
        self.split_by_color_with_key(Some(host as i32), key)
    }

    /// Starts `task` (blocking operations, on communicators of its own) on a thread of
    /// its own and returns a request that completes when it returns: an immediate
    /// operation made of blocking ones, as the immediate collectives are (see
    /// `collective::immediate`; an MPI library builds its inter-communicator ones this
    /// way). Every replica of the rank must start the same tasks in the same order, each
    /// on communicators every replica names alike.
    pub fn immediate_task<'a>(
        &self,
        task: impl FnOnce() -> Result<(), Error> + Send + 'static,
    ) -> Result<Request<'a>, Error> {
        // A thread waiting for any of several requests sleeps in `poll`: wake it.
        let running = crate::collective::immediate::start(
            self.clone(),
            move |_| task().map(|()| Vec::new()),
            |c| c.inner.rt.wake(),
        )?;
        Ok(Request::collective(
            self,
            running,
            Box::new(|bytes: &[u8]| crate::datatype::derive::check_len(bytes.len(), 0)),
        ))
    }

    /// The partner at `rank` (checked when used).
    pub fn process_at_rank(&self, rank: i32) -> Process<'_> {
        Process::new(self, rank)
    }

    /// Any rank of this communicator as a source (`MPI_ANY_SOURCE`): which message a
    /// receive from it takes is decided once per rank and followed by every replica.
    pub fn any_process(&self) -> AnyProcess<'_> {
        Process::any(self)
    }

    /// A seed equal in every replica of this rank and different between ranks: the way
    /// to seed randomness without breaking replica determinism.
    pub fn rank_seed(&self, salt: u64) -> u64 {
        let mut h = blake3::Hasher::new();
        h.update(b"volpex rank seed");
        h.update(&salt.to_le_bytes());
        h.update(&self.id.to_le_bytes());
        h.update(&self.rank.to_le_bytes());
        let mut b = [0u8; 8];
        b.copy_from_slice(&h.finalize().as_bytes()[..8]);
        u64::from_le_bytes(b)
    }

    /// Sends `send` to `dest` and receives into `recv` from `source`, both with tag 0
    /// (MPI_Sendrecv). Sends are buffered, so any cycle of these completes.
    pub fn send_receive_into<S, R>(
        &self,
        send: &S,
        dest: i32,
        recv: &mut R,
        source: i32,
    ) -> Result<Status, Error>
    where
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        self.send_receive_into_with_tags(send, dest, 0, recv, source, 0)
    }

    /// MPI_Sendrecv with explicit tags.
    pub fn send_receive_into_with_tags<S, R>(
        &self,
        send: &S,
        dest: i32,
        send_tag: Tag,
        recv: &mut R,
        source: i32,
        recv_tag: Tag,
    ) -> Result<Status, Error>
    where
        S: Buffer + ?Sized,
        R: BufferMut + ?Sized,
    {
        self.process_at_rank(dest).send_with_tag(send, send_tag)?;
        self.process_at_rank(source)
            .receive_into_with_tag(recv, recv_tag)
    }

    /// Sends the contents of `buf` to `dest` and replaces them with a message from
    /// `source`, both with tag 0 (MPI_Sendrecv_replace).
    pub fn send_receive_replace_into<B>(
        &self,
        buf: &mut B,
        dest: i32,
        source: i32,
    ) -> Result<Status, Error>
    where
        B: Buffer + BufferMut + ?Sized,
    {
        self.send_receive_replace_into_with_tags(buf, dest, 0, source, 0)
    }

    /// MPI_Sendrecv_replace with explicit tags. The send is buffered (its bytes are in
    /// the sender log before the receive starts), so the buffer is free to take the
    /// message.
    pub fn send_receive_replace_into_with_tags<B>(
        &self,
        buf: &mut B,
        dest: i32,
        send_tag: Tag,
        source: i32,
        recv_tag: Tag,
    ) -> Result<Status, Error>
    where
        B: Buffer + BufferMut + ?Sized,
    {
        self.process_at_rank(dest).send_with_tag(&*buf, send_tag)?;
        self.process_at_rank(source)
            .receive_into_with_tag(buf, recv_tag)
    }

    /// Ends the whole job with `code` (MPI_Abort): prints why on stderr and exits with
    /// `abort_exit_code(code)`. Every replica of the rank reaches it (the program is
    /// deterministic), so the rank fails and volpexrun ends the job.
    pub fn abort(&self, code: i32) -> ! {
        eprintln!(
            "volpex: rank {} aborted the job (communicator {}, error code {code})",
            self.inner.me.rank, self.id
        );
        exit::end(End::Abort(abort_exit_code(code)))
    }

    /// MPI_Sendrecv receiving a vector of `T` (tag 0).
    pub fn send_receive_vec<S, T>(
        &self,
        send: &S,
        dest: i32,
        source: i32,
    ) -> Result<(Vec<T>, Status), Error>
    where
        S: Buffer + ?Sized,
        T: Equivalence,
    {
        self.process_at_rank(dest).send(send)?;
        self.process_at_rank(source).receive_vec::<T>()
    }

    pub(crate) fn check_rank(&self, rank: i32) -> Result<u32, Error> {
        match usize::try_from(rank)
            .ok()
            .and_then(|r| self.members.world.get(r))
        {
            Some(_) => Ok(rank as u32),
            None => Err(Error::RankOutOfRange {
                rank: rank.into(),
                size: self.members.world.len() as u32,
            }),
        }
    }

    pub(crate) fn check_tag(tag: Tag) -> Result<(), Error> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Error::BadTag(tag))
        }
    }

    /// Sends `bytes` from context `ctx` with `tag` to `dst` (a rank of this
    /// communicator); see `Core::send` for when it returns.
    pub(crate) fn send_on(&self, ctx: u32, tag: Tag, dst: u32, bytes: &[u8]) -> Result<(), Error> {
        let dst = self.world_rank(dst)?;
        self.inner.check_restored()?;
        self.inner.rt.lock().send(ctx, tag, dst, bytes)?;
        self.count_send()
    }

    /// `send_on` of memory the caller lends until `lend` (see `Core::send_lent`): an
    /// immediate send's buffer (`give_back`), a window answering a get (`take_back`), or
    /// a collective write block no replay asks for (`give_back`).
    /// `None`: it was sent as `send_on` sends.
    pub(crate) fn send_lent_on(
        &self,
        (ctx, tag, dst): (u32, Tag, u32),
        mem: &'static [u8],
        lend: Lend,
    ) -> Result<Option<Loan>, Error> {
        let dst = self.world_rank(dst)?;
        self.inner.check_restored()?;
        let loan = self.inner.rt.lock().send_lent((ctx, tag, dst), mem, lend)?;
        self.count_send()?;
        Ok(loan)
    }

    /// Waits a while for the receivers of `loans` to confirm them (`Core::await_loans`).
    pub(crate) fn await_loans(&self, loans: &[&Loan]) -> Result<bool, Error> {
        Ok(self.inner.rt.lock().await_loans(loans)?)
    }

    /// Ends a loan of `Process::send_lent_until_changed_with_tag` at once (its memory is
    /// about to change): a payload the log still holds is copied into the log's own
    /// memory; afterwards nothing reads the lent memory.
    pub fn take_back(&self, loan: Loan) -> Result<(), Error> {
        self.inner.rt.lock().take_back(loan)?;
        Ok(())
    }

    /// Ends the loan of a `send_lent_on` (its request completes): afterwards nothing
    /// reads the lent memory.
    pub(crate) fn give_back(&self, loan: Loan) -> Result<(), Error> {
        self.inner.rt.lock().give_back(loan)?;
        Ok(())
    }

    /// `send_on`, synchronously (MPI_Ssend, MPI-3.1 section 3.4): the message is logged
    /// as any other, and complete once a receive claimed it (`wait_matched`,
    /// `test_matched`; see `volpex_proto::pull::engine::synchronous`). Returns its key.
    pub(crate) fn send_synchronous_on(
        &self,
        ctx: u32,
        tag: Tag,
        dst: u32,
        bytes: &[u8],
    ) -> Result<Key, Error> {
        let dst = self.world_rank(dst)?;
        self.inner.check_restored()?;
        let mut core = self.inner.rt.lock();
        let key = core.engine.expect_match(ctx, tag, dst);
        if let Err(e) = core.send(ctx, tag, dst, bytes) {
            core.engine.forget_match(&key);
            return Err(e.into());
        }
        drop(core);
        self.count_send()?;
        Ok(key)
    }

    /// Drives the loop until a receive claimed synchronous message `key`; an error when
    /// every replica of its destination is gone.
    pub(crate) fn wait_matched(&self, key: &Key) -> Result<(), Error> {
        let mut core = self.inner.rt.lock();
        let r = core
            .drive_until(|c| matched(c.engine.match_state(key), key), &mut [])
            .map_err(Error::EventLoop);
        core.engine.forget_match(key);
        r?
    }

    /// Whether a receive claimed synchronous message `key` (one non-blocking loop turn
    /// first); once it did, the engine forgets it.
    pub(crate) fn test_matched(&self, key: &Key) -> Result<bool, Error> {
        let mut core = self.inner.rt.lock();
        if core.engine.match_state(key) == MatchState::Waiting {
            core.turn(Some(Duration::ZERO), false)
                .map_err(Error::EventLoop)?;
        }
        let r = matched(core.engine.match_state(key), key);
        if r.is_some() {
            core.engine.forget_match(key);
        }
        r.map_or(Ok(false), |r| r.map(|()| true))
    }

    /// Stops waiting for synchronous message `key` (its request was cancelled or freed).
    pub(crate) fn forget_match(&self, key: &Key) {
        self.inner.rt.lock().engine.forget_match(key);
    }

    /// An exchange in context `ctx`: sends block i of `sends` to its rank (of this
    /// communicator) with `tag`, then waits for every receive of `recvs` (posted before),
    /// whose buffers take their large messages straight from the socket from the first
    /// send on. A large block that no pull waited for goes out when its pull comes, while
    /// this waits. Only then are the large blocks that are not in the log settled (see
    /// `Core::send_unsettled`, `Core::settle_all`), also when a send or a receive failed.
    pub(crate) fn exchange_on(
        &self,
        ctx: u32,
        tag: Tag,
        sends: &[(u32, &[u8])],
        recvs: &mut [RecvInto<'_>],
    ) -> Result<(), Error> {
        self.inner.check_restored()?;
        let dsts = sends
            .iter()
            .map(|&(d, _)| self.world_rank(d))
            .collect::<Result<Vec<u32>, Error>>()?;
        let mut core = self.inner.rt.lock();
        let mut arrivals = Arrivals::new(recvs);
        arrivals.offer(&core);
        // A block not in the log has no number yet: only one may go to each rank. Only a
        // large block stays out of the log, so small exchanges skip the check.
        let exclusive = !sends
            .iter()
            .any(|(_, b)| b.len() >= volpex_proto::limits::DIRECT_WRITE_BYTES_MIN)
            || distinct(&dsts);
        let mut unsettled = Vec::with_capacity(sends.len());
        let mut result = Ok(());
        for (&dst, &(_, bytes)) in dsts.iter().zip(sends) {
            match core.send_unsettled(ctx, tag, dst, bytes, exclusive, arrivals.landings()) {
                Ok(u) => unsettled.extend(u),
                Err(e) => {
                    result = Err(Error::from(e));
                    break;
                }
            }
            if let Err(e) = self.count_send() {
                result = Err(e);
                break;
            }
        }
        while result.is_ok() {
            match arrivals.wait_or(&mut core, |c| unsettled.iter().any(|u| c.awaited(u))) {
                Ok(true) => break,
                Ok(false) => {
                    result = core
                        .release_awaited(&mut unsettled, arrivals.landings())
                        .map_err(Error::from);
                }
                Err(e) => result = Err(e),
            }
        }
        drop(arrivals);
        result.and(core.settle_all(unsettled).map_err(Error::from))
    }

    /// `send_on` to each of `dsts` in turn with one copy into the log for all of them (the
    /// sends of one buffer in a broadcast; see `Core::send_shared`), or one by one where
    /// they cannot share it.
    pub(crate) fn send_each_on(
        &self,
        ctx: u32,
        tag: Tag,
        dsts: &[u32],
        bytes: &[u8],
    ) -> Result<(), Error> {
        let world = dsts
            .iter()
            .map(|&d| self.world_rank(d))
            .collect::<Result<Vec<u32>, Error>>()?;
        self.inner.check_restored()?;
        if self.inner.rt.lock().send_shared(ctx, tag, &world, bytes)? {
            dsts.iter().try_for_each(|_| self.count_send())
        } else {
            dsts.iter()
                .try_for_each(|&dst| self.send_on(ctx, tag, dst, bytes))
        }
    }

    /// Counts a finished send; applies `exit@sends`.
    fn count_send(&self) -> Result<(), Error> {
        let inner = &self.inner;
        let n = inner.sends.fetch_add(1, Ordering::Relaxed) + 1;
        if inner.exit_after_sends == Some(n) {
            eprintln!(
                "volpex[{}] exits after send {n} (fault injection)",
                inner.me
            );
            exit::end(End::Fault);
        }
        Ok(())
    }

    /// World rank of a rank of this communicator (ranks are checked by the callers).
    pub(super) fn world_rank(&self, rank: u32) -> Result<u32, Error> {
        self.members
            .world
            .get(rank as usize)
            .copied()
            .ok_or(Error::RankOutOfRange {
                rank: rank.into(),
                size: self.members.world.len() as u32,
            })
    }
}

/// Whether no rank appears twice in `ranks`.
fn distinct(ranks: &[u32]) -> bool {
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).all(|w| w[0] != w[1])
}

/// A synchronous send's outcome once it has one.
fn matched(state: MatchState, key: &Key) -> Option<Result<(), Error>> {
    match state {
        MatchState::Waiting => None,
        MatchState::Matched => Some(Ok(())),
        MatchState::Lost => Some(Err(Error::RankLost { rank: key.dst })),
    }
}
