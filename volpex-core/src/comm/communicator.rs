//! `Communicator` and `Process`: point-to-point operations (MPI-3.1 chapter 3).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::group::{derive_id, Group, Members};
use super::request::Request;
use super::universe::Inner;
use super::{Status, Tag, TAG_UB};
use crate::bootstrap::EXIT_FAULT;
use crate::collective::{self, Operation};
use crate::datatype::{vec_from_bytes, Buffer, BufferMut, Equivalence};
use crate::error::Error;
use crate::message::Key;
use crate::transport::progress::AppGuard;
use crate::wire::frame::data_header;
use crate::wire::stream::Landing;

/// How long a sender blocked on a full log waits per loop turn.
const FULL_LOG_TURN: Duration = Duration::from_millis(10);
/// Messages at least this large start going out before they are copied into the log.
const DIRECT_WRITE_BYTES_MIN: usize = 64 << 10;

/// A group of ranks with its own message space (MPI communicator, MPI-3.1 chapter 6).
/// Clones share the same communicator.
#[derive(Clone)]
pub struct Communicator {
    pub(crate) inner: Arc<Inner>,
    /// Context id of point-to-point traffic; `id + 1` carries collectives.
    id: u32,
    /// This process's rank in the communicator.
    rank: u32,
    members: Arc<Members>,
    /// Communicators created from this one so far (names the next one's context).
    created: Arc<AtomicU32>,
}

/// One rank of a communicator, as a message partner.
#[derive(Clone, Copy)]
pub struct Process<'a> {
    comm: &'a Communicator,
    rank: i32,
}

impl Communicator {
    pub(crate) fn world(inner: Arc<Inner>) -> Communicator {
        let world: Arc<[u32]> = (0..inner.ranks).collect::<Vec<u32>>().into();
        Communicator {
            id: 0,
            rank: inner.me.rank,
            members: Arc::new(Members::new(world)),
            created: Arc::new(AtomicU32::new(0)),
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

    /// The communicator's group (MPI_Comm_group).
    pub fn group(&self) -> Group {
        Group {
            world: self.members.world.clone(),
            me: self.inner.me.rank,
        }
    }

    fn child(&self, what: &[u8], world: Arc<[u32]>) -> Option<Communicator> {
        let nth = self.created.fetch_add(1, Ordering::Relaxed);
        let id = derive_id(self.id, nth, what);
        let members = Members::new(world);
        let rank = members.local(self.inner.me.rank)?;
        Some(Communicator {
            inner: self.inner.clone(),
            id,
            rank,
            members: Arc::new(members),
            created: Arc::new(AtomicU32::new(0)),
        })
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
        let mut all = vec![0i64; 3 * self.members.world.len()];
        self.all_gather_into(&mine, &mut all)?;
        let nth = self.created.fetch_add(1, Ordering::Relaxed);
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
        let members = Members::new(world);
        let Some(rank) = members.local(self.inner.me.rank) else {
            return Err(Error::Usage(
                "split: this process is missing from its own color",
            ));
        };
        Ok(Some(Communicator {
            inner: self.inner.clone(),
            id: derive_id(
                self.id,
                nth,
                &[b"split".as_slice(), &c.to_le_bytes()].concat(),
            ),
            rank,
            members: Arc::new(members),
            created: Arc::new(AtomicU32::new(0)),
        }))
    }

    /// A communicator of the members of `group` (a subgroup of this one's), or `None`
    /// at processes outside it (MPI_Comm_create). Collective over this communicator;
    /// every member passes the same group.
    pub fn create(&self, group: &Group) -> Option<Communicator> {
        let what: Vec<u8> = group.world.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.child(&[b"create".as_slice(), &what].concat(), group.world.clone())
    }

    /// The partner at `rank` (checked when used).
    pub fn process_at_rank(&self, rank: i32) -> Process<'_> {
        Process { comm: self, rank }
    }

    /// Blocks until every rank has called it (MPI_Barrier).
    pub fn barrier(&self) -> Result<(), Error> {
        collective::barrier::barrier(self)
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

    /// Combines every rank's `send` element-wise with `op` (in rank order) into `recv` on
    /// every rank (MPI_Allreduce, MPI-3.1 section 5.9.6).
    pub fn all_reduce_into<T: Equivalence, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<(), Error> {
        collective::all_reduce(self, send, recv, &op)
    }

    /// Every rank's `send` lands in block `rank` of `recv` on every rank (MPI_Allgather,
    /// section 5.7).
    pub fn all_gather_into<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        collective::all_gather(self, send, recv)
    }

    /// Block j of `send` goes to rank j; block i of `recv` comes from rank i
    /// (MPI_Alltoall, section 5.8).
    pub fn all_to_all_into<T: Equivalence>(&self, send: &[T], recv: &mut [T]) -> Result<(), Error> {
        collective::all_to_all(self, send, recv)
    }

    /// Like `all_gather_into` with `counts[i]` elements from rank i, placed one after
    /// the other (MPI_Allgatherv, section 5.7).
    pub fn all_gather_varcount_into<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<(), Error> {
        collective::all_gather_varcount(self, send, recv, counts)
    }

    /// Like `all_to_all_into` with per-rank block lengths (MPI_Alltoallv, section 5.8).
    pub fn all_to_all_varcount_into<T: Equivalence>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
    ) -> Result<(), Error> {
        collective::all_to_all_varcount(self, send, send_counts, recv, recv_counts)
    }

    /// Reduces every rank's `send` (size x `recv.len()` elements) and leaves block
    /// `rank` of the result in `recv` (MPI_Reduce_scatter_block, section 5.10.1).
    pub fn reduce_scatter_block_into<T: Equivalence, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<(), Error> {
        collective::reduce_scatter_block(self, send, recv, &op)
    }

    /// Inclusive prefix reduction over ranks 0..=rank (MPI_Scan, section 5.11.1).
    pub fn scan_into<T: Equivalence, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<(), Error> {
        collective::scan(self, send, recv, &op, false)
    }

    /// Exclusive prefix reduction over ranks 0..rank; rank 0's `recv` is left as it was
    /// (MPI_Exscan, section 5.11.2).
    pub fn exclusive_scan_into<T: Equivalence, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<(), Error> {
        collective::scan(self, send, recv, &op, true)
    }

    fn check_rank(&self, rank: i32) -> Result<u32, Error> {
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

    fn check_tag(tag: Tag) -> Result<(), Error> {
        if (0..=TAG_UB).contains(&tag) {
            Ok(())
        } else {
            Err(Error::BadTag(tag))
        }
    }

    /// Appends to the log, blocking while the log is full; applies `exit@sends`.
    /// A large message whose pull is already parked here starts going out straight from
    /// `bytes`, and is copied into the log while the receiver reads it.
    fn send_on(&self, ctx: u32, tag: Tag, dst: u32, bytes: &[u8]) -> Result<(), Error> {
        let dst = self.world_rank(dst)?;
        let inner = &self.inner;
        let mut core = inner.rt.lock();
        let mut blocked = false;
        while !core.engine.log_has_room(bytes.len()) {
            if !blocked {
                log::debug!(
                    "replica {}: sender log full; blocking the sender until a replica of rank {dst} consumes",
                    inner.me
                );
                blocked = true;
            }
            if !core.engine.rank_alive(dst) {
                return Err(Error::RankLost { rank: dst });
            }
            core.turn(Some(FULL_LOG_TURN), false)
                .map_err(|e| Error::Runtime(e.to_string()))?;
        }
        if bytes.len() >= DIRECT_WRITE_BYTES_MIN {
            let (key, order, waiters) = core.engine.next_send(ctx, tag, dst);
            for (to, req) in waiters {
                let h = data_header(&key, req, order, bytes.len());
                core.write_direct(to, key, req, &h, bytes);
            }
        }
        let payload = crate::message::pool::copy(bytes);
        let now = core.now();
        // The log had room a moment ago under the same lock, so this cannot fail.
        core.engine
            .send(now, ctx, tag, dst, payload)
            .map_err(|full| {
                Error::Runtime(format!(
                    "sender log refused a message it had room for: {full:?}"
                ))
            })?;
        core.flush_all();
        let n = inner.sends.fetch_add(1, Ordering::Relaxed) + 1;
        if inner.exit_after_sends == Some(n) {
            eprintln!(
                "volpex[{}] exits after send {n} (fault injection)",
                inner.me
            );
            std::process::exit(EXIT_FAULT);
        }
        Ok(())
    }

    pub(crate) fn post_on(&self, ctx: u32, tag: Tag, src: u32) -> Result<Key, Error> {
        let src = self.world_rank(src)?;
        let mut core = self.inner.rt.lock();
        let now = core.now();
        let key = core.engine.post_receive(now, ctx, tag, src);
        core.flush_all();
        Ok(key)
    }

    /// World rank of a rank of this communicator (ranks are checked by the callers).
    fn world_rank(&self, rank: u32) -> Result<u32, Error> {
        self.members
            .world
            .get(rank as usize)
            .copied()
            .ok_or(Error::RankOutOfRange {
                rank: rank.into(),
                size: self.members.world.len() as u32,
            })
    }

    /// Drives the loop until `key` completes.
    pub(crate) fn wait_key(&self, key: &Key) -> Result<Bytes, Error> {
        let mut core = self.inner.rt.lock();
        wait_locked(&mut core, key)
    }

    /// Drives the loop until `key` completes, with its message put into `buf` (a large one
    /// lands there straight from the socket). Returns the message length in bytes.
    pub(crate) fn wait_into(&self, key: &Key, buf: &mut [u8], elem: usize) -> Result<usize, Error> {
        let mut core = self.inner.rt.lock();
        let mut landing = Landing {
            key: *key,
            buf,
            landed: None,
        };
        let data = core
            .drive_until(|c| c.take_received(key), Some(&mut landing))
            .map_err(|e| Error::Runtime(e.to_string()))??;
        drop(core);
        match landing.landed {
            Some(n) if data.is_empty() => check_whole(n, elem).map(|()| n),
            _ => {
                let n = fill_bytes(landing.buf, elem, &data);
                crate::message::pool::recycle(data);
                n
            }
        }
    }

    /// Completes `key` if it is done, without waiting (one non-blocking loop turn).
    pub(crate) fn test_key(&self, key: &Key) -> Result<Option<Bytes>, Error> {
        let mut core = self.inner.rt.lock();
        if let Some(r) = core.take_received(key) {
            return r.map(Some).map_err(Error::from);
        }
        core.turn(Some(Duration::ZERO), false)
            .map_err(|e| Error::Runtime(e.to_string()))?;
        match core.take_received(key) {
            Some(r) => r.map(Some).map_err(Error::from),
            None => Ok(None),
        }
    }

    /// One blocking turn of the event loop (returns when anything happened).
    pub(crate) fn drive_once(&self) -> Result<(), Error> {
        self.inner
            .rt
            .lock()
            .turn(None, false)
            .map_err(|e| Error::Runtime(e.to_string()))
    }

    pub(crate) fn detach(&self, key: &Key) {
        self.inner.rt.lock().engine.detach(key);
    }

    pub(crate) fn send_internal(&self, tag: Tag, dst: u32, bytes: &[u8]) -> Result<(), Error> {
        self.send_on(self.id + 1, tag, dst, bytes)
    }

    pub(crate) fn receive_internal(&self, tag: Tag, src: u32) -> Result<Bytes, Error> {
        let key = self.post_on(self.id + 1, tag, src)?;
        self.wait_key(&key)
    }

    pub(crate) fn status_for(&self, key: &Key, bytes: usize) -> Status {
        Status {
            source: self.members.local(key.src).map_or(-1, |r| r as i32),
            tag: key.tag,
            bytes,
        }
    }
}

fn wait_locked(core: &mut AppGuard<'_>, key: &Key) -> Result<Bytes, Error> {
    core.drive_until(|c| c.take_received(key), None)
        .map_err(|e| Error::Runtime(e.to_string()))?
        .map_err(Error::from)
}

fn check_whole(bytes: usize, elem: usize) -> Result<(), Error> {
    if bytes.is_multiple_of(elem.max(1)) {
        Ok(())
    } else {
        Err(Error::BadLength {
            message_bytes: bytes,
            elem_bytes: elem,
        })
    }
}

/// Copies a received message into a buffer of `elem`-byte elements, checking it fits
/// in whole elements.
pub(crate) fn fill_bytes(dst: &mut [u8], elem: usize, data: &[u8]) -> Result<usize, Error> {
    if data.len() > dst.len() {
        return Err(Error::Truncated {
            message_bytes: data.len(),
            buffer_bytes: dst.len(),
        });
    }
    check_whole(data.len(), elem)?;
    dst[..data.len()].copy_from_slice(data);
    Ok(data.len())
}

impl<'a> Process<'a> {
    /// This partner's rank.
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// Buffered send with tag 0 (MPI_Send): returns once the message is in the local log.
    pub fn send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<(), Error> {
        self.send_with_tag(buf, 0)
    }

    /// Buffered send with a tag.
    pub fn send_with_tag<B: Buffer + ?Sized>(&self, buf: &B, tag: Tag) -> Result<(), Error> {
        let dst = self.comm.check_rank(self.rank)?;
        Communicator::check_tag(tag)?;
        self.comm.send_on(self.comm.id, tag, dst, buf.as_bytes())
    }

    /// Receives the next tag-0 message from this partner into `buf` (MPI_Recv).
    pub fn receive_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<Status, Error> {
        self.receive_into_with_tag(buf, 0)
    }

    /// Receives the next message with `tag` from this partner into `buf`.
    pub fn receive_into_with_tag<B: BufferMut + ?Sized>(
        &self,
        buf: &mut B,
        tag: Tag,
    ) -> Result<Status, Error> {
        let key = self.post(tag)?;
        let elem = buf.elem_bytes();
        let n = self.comm.wait_into(&key, buf.as_bytes_mut(), elem)?;
        Ok(self.comm.status_for(&key, n))
    }

    /// Receives one value of `T` with tag 0.
    pub fn receive<T: Equivalence>(&self) -> Result<(T, Status), Error> {
        self.receive_with_tag(0)
    }

    /// Receives one value of `T` with `tag`.
    pub fn receive_with_tag<T: Equivalence>(&self, tag: Tag) -> Result<(T, Status), Error> {
        let mut v = [T::zeroed()];
        let st = self.receive_into_with_tag(&mut v[..], tag)?;
        if st.count_bytes() != std::mem::size_of::<T>() {
            return Err(Error::BadLength {
                message_bytes: st.count_bytes(),
                elem_bytes: std::mem::size_of::<T>(),
            });
        }
        Ok((v[0], st))
    }

    /// Receives a whole message of `T`s with tag 0, however long.
    pub fn receive_vec<T: Equivalence>(&self) -> Result<(Vec<T>, Status), Error> {
        self.receive_vec_with_tag(0)
    }

    /// Receives a whole message of `T`s with `tag`.
    pub fn receive_vec_with_tag<T: Equivalence>(
        &self,
        tag: Tag,
    ) -> Result<(Vec<T>, Status), Error> {
        let key = self.post(tag)?;
        let data = self.comm.wait_key(&key)?;
        let len = data.len();
        let v = vec_from_bytes::<T>(&data);
        crate::message::pool::recycle(data);
        Ok((v?, self.comm.status_for(&key, len)))
    }

    fn root(&self) -> Result<u32, Error> {
        self.comm.check_rank(self.rank)
    }

    fn at_root(&self) -> Result<u32, Error> {
        let root = self.root()?;
        if root as i32 == self.comm.rank() {
            Ok(root)
        } else {
            Err(Error::Usage(
                "a *_root collective must be called on the root itself",
            ))
        }
    }

    /// Broadcasts `buf` from this (root) process to every rank (MPI_Bcast, MPI-3.1
    /// section 5.4); every rank calls it with a buffer of the same length.
    pub fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<(), Error> {
        let root = self.root()?;
        collective::broadcast(self.comm, root, buf.as_bytes_mut())
    }

    /// At the root: the rank-ordered reduction of every rank's `send` into `recv`
    /// (MPI_Reduce, section 5.9.1).
    pub fn reduce_into_root<T: Equivalence, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<(), Error> {
        let root = self.at_root()?;
        collective::reduce(self.comm, root, send, Some(recv), &op)
    }

    /// At the other ranks: contribute `send` to a reduction at this root.
    pub fn reduce_into<T: Equivalence, O: Operation<T>>(
        &self,
        send: &[T],
        op: O,
    ) -> Result<(), Error> {
        let root = self.root()?;
        collective::reduce(self.comm, root, send, None, &op)
    }

    /// At the root: block i of `recv` gets rank i's `send` (MPI_Gather, section 5.5).
    pub fn gather_into_root<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
    ) -> Result<(), Error> {
        let root = self.at_root()?;
        collective::gather(self.comm, root, send, Some(recv))
    }

    /// At the other ranks: contribute `send` to a gather at this root.
    pub fn gather_into<T: Equivalence>(&self, send: &[T]) -> Result<(), Error> {
        let root = self.root()?;
        collective::gather(self.comm, root, send, None)
    }

    /// At the root: block i of `send` goes to rank i's `recv` (MPI_Scatter, section 5.6).
    pub fn scatter_into_root<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
    ) -> Result<(), Error> {
        let root = self.at_root()?;
        collective::scatter(self.comm, root, Some(send), recv)
    }

    /// At the other ranks: receive this root's block into `recv`.
    pub fn scatter_into<T: Equivalence>(&self, recv: &mut [T]) -> Result<(), Error> {
        let root = self.root()?;
        collective::scatter(self.comm, root, None, recv)
    }

    /// At the root: rank i's `send` lands at offset `counts[..i].sum()` of `recv`
    /// (MPI_Gatherv, section 5.5).
    pub fn gather_varcount_into_root<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<(), Error> {
        let root = self.at_root()?;
        collective::gather_varcount(self.comm, root, send, Some((recv, counts)))
    }

    /// At the other ranks: contribute `send` to a gatherv at this root.
    pub fn gather_varcount_into<T: Equivalence>(&self, send: &[T]) -> Result<(), Error> {
        let root = self.root()?;
        collective::gather_varcount(self.comm, root, send, None)
    }

    /// At the root: `counts[i]` elements at their offset in `send` go to rank i
    /// (MPI_Scatterv, section 5.6).
    pub fn scatter_varcount_into_root<T: Equivalence>(
        &self,
        send: &[T],
        counts: &[usize],
        recv: &mut [T],
    ) -> Result<(), Error> {
        let root = self.at_root()?;
        collective::scatter_varcount(self.comm, root, Some((send, counts)), recv)
    }

    /// At the other ranks: receive this root's block into `recv`.
    pub fn scatter_varcount_into<T: Equivalence>(&self, recv: &mut [T]) -> Result<(), Error> {
        let root = self.root()?;
        collective::scatter_varcount(self.comm, root, None, recv)
    }

    /// Immediate send (MPI_Isend). Sends are buffered, so the request is already complete.
    pub fn immediate_send<B: Buffer + ?Sized>(&self, buf: &B) -> Result<Request<'static>, Error> {
        self.immediate_send_with_tag(buf, 0)
    }

    /// Immediate send with a tag.
    pub fn immediate_send_with_tag<B: Buffer + ?Sized>(
        &self,
        buf: &B,
        tag: Tag,
    ) -> Result<Request<'static>, Error> {
        self.send_with_tag(buf, tag)?;
        Ok(Request::done(Status {
            source: self.comm.rank(),
            tag,
            bytes: buf.as_bytes().len(),
        }))
    }

    /// Immediate receive of a tag-0 message into `buf` (MPI_Irecv); the buffer is borrowed
    /// until the request completes.
    pub fn immediate_receive_into<B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
    ) -> Result<Request<'a>, Error> {
        self.immediate_receive_into_with_tag(buf, 0)
    }

    /// Immediate receive with a tag.
    pub fn immediate_receive_into_with_tag<B: BufferMut + ?Sized>(
        &self,
        buf: &'a mut B,
        tag: Tag,
    ) -> Result<Request<'a>, Error> {
        let key = self.post(tag)?;
        let elem = buf.elem_bytes();
        Ok(Request::receive(self.comm, key, buf.as_bytes_mut(), elem))
    }

    fn post(&self, tag: Tag) -> Result<Key, Error> {
        let src = self.comm.check_rank(self.rank)?;
        Communicator::check_tag(tag)?;
        self.comm.post_on(self.comm.id, tag, src)
    }
}
