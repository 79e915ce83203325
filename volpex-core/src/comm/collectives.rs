//! The communicator's two faces towards the collectives: it implements their
//! point-to-point interface (`PointToPoint`, in its collective context `id + 1`), and it
//! offers them to the program as methods in the style of the `mpi` crate
//! (`world.all_reduce_into(..)`, `world.process_at_rank(root).broadcast_into(..)`,
//! `immediate_*`), each a one-line call of the algorithm in `collective`.
//!
//! Owns the mapping from those methods to the algorithms, the message form of their
//! buffers (collectives that only move data run on bytes: plain data borrowed as it is,
//! derived types encoded, partitions packed; reductions run on plain-data values). Must
//! never hold a collective algorithm itself (they live in `collective`, which never sees
//! a `Communicator`).
//!
//! Their immediate forms are in `immediate.rs`.

use bytemuck::Pod;

use super::communicator::{Communicator, Partner};
use super::process::Process;
use super::receive::RecvInto;
use crate::collective::{self, Operation, PointToPoint};
use crate::datatype::{
    BufferMut, Elements, ElementsMut, Equivalence, Partition, PartitionMut, Target,
};
use crate::error::Error;
use volpex_proto::message::matching::{Mode, RecvId};

/// What this thread calls between polls while a blocking collective waits for a
/// message (`polling_between`), if anything.
pub type Between = Box<dyn FnMut() -> Result<(), Error>>;

thread_local! {
    static BETWEEN: std::cell::RefCell<Option<Between>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with every blocking collective it runs on this thread waiting by polling,
/// and calling `between` between polls (each call must return soon; it may wait a
/// little itself, paced as a blocking receive waits, with `Communicator::pause`): the
/// same messages as without, so
/// members may run the collective either way. The thread stays this one (a caller that
/// serves requests of other processes while it waits, as a passive-target MPI window
/// does). A collective that `between` itself runs waits the plain way.
pub fn polling_between<R>(between: Between, f: impl FnOnce() -> R) -> R {
    let outer = BETWEEN.with(|b| b.borrow_mut().replace(between));
    let r = f();
    BETWEEN.with(|b| *b.borrow_mut() = outer);
    r
}

/// Calls this thread's `between` (set: `polling`).
fn between() -> Result<(), Error> {
    let Some(mut f) = BETWEEN.with(|b| b.borrow_mut().take()) else {
        return Ok(());
    };
    let r = f();
    BETWEEN.with(|b| *b.borrow_mut() = Some(f));
    r
}

/// Whether this thread's collectives wait by polling (`polling_between`).
fn polling() -> bool {
    BETWEEN.with(|b| b.borrow().is_some())
}

impl PointToPoint for Communicator {
    fn shape(&self) -> (u32, u32) {
        (self.members.world.len() as u32, self.rank)
    }

    fn post_internal(&self, tag: i32, src: u32) -> Result<RecvId, Error> {
        let spec = self.spec(self.id + 1, Partner::Rank(src as i32), Some(tag))?;
        self.post(spec, Mode::Receive)
    }

    fn wait_internal_into(&self, id: RecvId, buf: &mut [u8], elem: usize) -> Result<usize, Error> {
        if !polling() {
            return self.wait_into(id, buf, elem).map(|st| st.count_bytes());
        }
        loop {
            if let Some(m) = self.test(id)? {
                let (_, data) = super::receive::message(m)?;
                return super::receive::fill_bytes(buf, elem, &data);
            }
            between()?;
        }
    }

    fn discard(&self, id: RecvId) {
        self.detach(id);
    }

    fn send_internal(&self, tag: i32, dst: u32, bytes: &[u8]) -> Result<(), Error> {
        self.send_on(self.id + 1, tag, dst, bytes)
    }

    fn exchange_internal(
        &self,
        tag: i32,
        sends: &[(u32, &[u8])],
        recvs: Vec<(RecvId, &mut [u8])>,
        elem: usize,
    ) -> Result<Vec<usize>, Error> {
        if polling() {
            // The same messages, sent first, then each receive waited for by polling.
            for &(dst, bytes) in sends {
                self.send_internal(tag, dst, bytes)?;
            }
            return recvs
                .into_iter()
                .map(|(id, buf)| self.wait_internal_into(id, buf, elem))
                .collect();
        }
        let mut all: Vec<_> = recvs
            .into_iter()
            .map(|(id, buf)| RecvInto::new(id, buf))
            .collect();
        self.exchange_on(self.id + 1, tag, sends, &mut all)?;
        all.into_iter()
            .map(|r| r.finish(self, elem).map(|st| st.count_bytes()))
            .collect()
    }

    fn send_internal_each(&self, tag: i32, dsts: &[u32], bytes: &[u8]) -> Result<(), Error> {
        self.send_each_on(self.id + 1, tag, dsts, bytes)
    }
}

/// Runs `f` on the message form of `recv`: its memory for plain data, else a scratch
/// buffer decoded into `recv` afterwards.
pub(super) fn into_values<T: Equivalence>(
    recv: &mut [T],
    f: impl FnOnce(&mut [u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    if let Some(b) = T::plain_bytes_mut(recv) {
        return f(b);
    }
    let mut tmp = vec![0u8; recv.len() * T::WIRE_BYTES];
    f(&mut tmp)?;
    T::decode(&tmp, recv)
}

/// Counts of elements as counts of bytes.
pub(super) fn scaled(counts: &[usize], wire: usize) -> Vec<usize> {
    counts.iter().map(|c| c * wire).collect()
}

/// The check every all-to-all makes: blocks of equal length.
pub(super) fn all_to_all_blocks(n: usize, len: usize) -> Result<(), Error> {
    if len.is_multiple_of(n) {
        Ok(())
    } else {
        Err(Error::BufferSize {
            what: "all-to-all input (a multiple of the size)",
            expected: len - len % n,
            got: len,
        })
    }
}

/// Collectives over the whole communicator (MPI-3.1 chapter 5). Buffers are slices,
/// arrays or vectors, or single values (`Elements`); collectives that only move data
/// take any `Equivalence` type, reductions plain data (`bytemuck::Pod`).
impl Communicator {
    pub(super) fn ranks(&self) -> usize {
        self.members.world.len()
    }

    /// Blocks until every rank has called it (MPI_Barrier).
    pub fn barrier(&self) -> Result<(), Error> {
        collective::barrier::barrier(self)
    }

    /// Combines every rank's `send` element-wise with `op` (in rank order) into `recv` on
    /// every rank (MPI_Allreduce, MPI-3.1 section 5.9.6).
    pub fn all_reduce_into<S, R, O>(&self, send: &S, recv: &mut R, op: O) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem>,
    {
        collective::all_reduce(self, send.elements(), recv.elements_mut(), &op)
    }

    /// Every rank's `send` lands in block `rank` of `recv` on every rank (MPI_Allgather,
    /// section 5.7).
    pub fn all_gather_into<S, R>(&self, send: &S, recv: &mut R) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        let bytes = S::Elem::encode(send.elements());
        into_values(recv.elements_mut(), |r| {
            collective::all_gather(self, &bytes, r)
        })
    }

    /// Block j of `send` goes to rank j; block i of `recv` comes from rank i
    /// (MPI_Alltoall, section 5.8).
    pub fn all_to_all_into<S, R>(&self, send: &S, recv: &mut R) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        all_to_all_blocks(self.ranks(), send.elements().len())?;
        let bytes = S::Elem::encode(send.elements());
        into_values(recv.elements_mut(), |r| {
            collective::all_to_all(self, &bytes, r)
        })
    }

    /// Like `all_gather_into` with `counts[i]` elements from rank i, placed one after
    /// the other (MPI_Allgatherv, section 5.7).
    pub fn all_gather_varcount_into<T: Equivalence>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
    ) -> Result<(), Error> {
        let bytes = T::encode(send);
        let counts = scaled(counts, T::WIRE_BYTES);
        into_values(recv, |r| {
            collective::all_gather_varcount(self, &bytes, r, &counts)
        })
    }

    /// `all_gather_varcount_into` with displacements, as the `mpi` crate's: rank i's
    /// `send` lands in block i of the partition (MPI_Allgatherv, section 5.7).
    pub fn all_gather_varcount_into_partitioned<S, T>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<(), Error>
    where
        S: Elements<Elem = T> + ?Sized,
        T: Equivalence,
    {
        let counts = scaled(&recv.checked(self.ranks())?, T::WIRE_BYTES);
        let mut tmp = vec![0u8; counts.iter().sum()];
        collective::all_gather_varcount(self, &T::encode(send.elements()), &mut tmp, &counts)?;
        recv.unpack(&tmp)
    }

    /// Like `all_to_all_into` with per-rank block lengths (MPI_Alltoallv, section 5.8).
    pub fn all_to_all_varcount_into<T: Equivalence>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &mut [T],
        recv_counts: &[usize],
    ) -> Result<(), Error> {
        let bytes = T::encode(send);
        let (sc, rc) = (
            scaled(send_counts, T::WIRE_BYTES),
            scaled(recv_counts, T::WIRE_BYTES),
        );
        into_values(recv, |r| {
            collective::all_to_all_varcount(self, &bytes, &sc, r, &rc)
        })
    }

    /// `all_to_all_varcount_into` with displacements, as the `mpi` crate's: block j of
    /// `send` goes to rank j, block i of `recv` comes from rank i (MPI_Alltoallv).
    pub fn all_to_all_varcount_into_partitioned<T: Equivalence>(
        &self,
        send: &Partition<'_, T>,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<(), Error> {
        let (bytes, sc) = send.packed(self.ranks())?;
        let rc = scaled(&recv.checked(self.ranks())?, T::WIRE_BYTES);
        let mut tmp = vec![0u8; rc.iter().sum()];
        collective::all_to_all_varcount(self, &bytes, &scaled(&sc, T::WIRE_BYTES), &mut tmp, &rc)?;
        recv.unpack(&tmp)
    }

    /// Reduces every rank's `send` (size x `recv.len()` elements) and leaves block
    /// `rank` of the result in `recv` (MPI_Reduce_scatter_block, section 5.10.1).
    pub fn reduce_scatter_block_into<T: Pod, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: O,
    ) -> Result<(), Error> {
        collective::reduce_scatter_block(self, send, recv, &op)
    }

    /// Reduces every rank's `send` (`counts.sum()` elements) and leaves the `counts[rank]`
    /// elements at this rank's offset in `recv` (MPI_Reduce_scatter, section 5.10.1).
    pub fn reduce_scatter_into<T: Pod, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: O,
    ) -> Result<(), Error> {
        collective::reduce_scatter(self, send, recv, counts, &op)
    }

    /// Inclusive prefix reduction over ranks 0..=rank (MPI_Scan, section 5.11.1).
    pub fn scan_into<S, R, O>(&self, send: &S, recv: &mut R, op: O) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem>,
    {
        collective::scan(self, send.elements(), recv.elements_mut(), &op, false)
    }

    /// A neighbourhood exchange (the data movement of MPI_Neighbor_allgather and
    /// MPI_Neighbor_alltoall and their forms, MPI-3.1 section 7.6): sends each
    /// `(rank, slot, bytes)` of `sends` and receives each `(rank, slot, buf)` of `recvs`,
    /// a message of exactly the buffer's length. A receive takes only a message its
    /// sender sent in the same slot (say, the direction of a Cartesian shift); between
    /// two ranks in one slot, messages match in the order sent. Collective in the sense
    /// that every rank named calls it, with sends and receives that pair up.
    pub fn neighbor_exchange(
        &self,
        sends: &[(i32, u32, &[u8])],
        recvs: &mut [(i32, u32, &mut [u8])],
    ) -> Result<(), Error> {
        let sends = sends
            .iter()
            .map(|&(r, slot, b)| Ok((self.check_rank(r)?, slot, b)))
            .collect::<Result<Vec<_>, Error>>()?;
        let recvs = recvs
            .iter_mut()
            .map(|(r, slot, b)| Ok((self.check_rank(*r)?, *slot, &mut **b)))
            .collect::<Result<Vec<_>, Error>>()?;
        collective::neighbor::exchange(self, &sends, recvs)
    }

    /// Exclusive prefix reduction over ranks 0..rank; rank 0's `recv` is left as it was
    /// (MPI_Exscan, section 5.11.2).
    pub fn exclusive_scan_into<S, R, O>(&self, send: &S, recv: &mut R, op: O) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem>,
    {
        collective::scan(self, send.elements(), recv.elements_mut(), &op, true)
    }
}

/// Rooted collectives, called on the root process (MPI-3.1 chapter 5).
impl Process<'_> {
    pub(super) fn root(&self) -> Result<u32, Error> {
        self.dest()
    }

    pub(super) fn at_root(&self) -> Result<u32, Error> {
        let root = self.root()?;
        if root as i32 == self.comm.rank() {
            Ok(root)
        } else {
            Err(Error::Usage(
                "a *_root collective must be called on the root itself",
            ))
        }
    }

    pub(super) fn ranks(&self) -> usize {
        self.comm.members.world.len()
    }

    /// Broadcasts `buf` from this (root) process to every rank (MPI_Bcast, MPI-3.1
    /// section 5.4); every rank calls it with a buffer of the same length. Any buffer:
    /// a slice, array, vector or single value of any `Equivalence` type, or a view.
    pub fn broadcast_into<B: BufferMut + ?Sized>(&self, buf: &mut B) -> Result<(), Error> {
        let root = self.root()?;
        match buf.target() {
            Target::Contiguous(b) => collective::broadcast(self.comm, root, b),
            Target::Scattered(mut layout) => {
                let mut packed = layout.pack();
                collective::broadcast(self.comm, root, &mut packed)?;
                layout.unpack(&packed)
            }
        }
    }

    /// At the root: the rank-ordered reduction of every rank's `send` into `recv`
    /// (MPI_Reduce, section 5.9.1).
    pub fn reduce_into_root<S, R, O>(&self, send: &S, recv: &mut R, op: O) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem>,
    {
        let root = self.at_root()?;
        collective::reduce(
            self.comm,
            root,
            send.elements(),
            Some(recv.elements_mut()),
            &op,
        )
    }

    /// At the other ranks: contribute `send` to a reduction at this root.
    pub fn reduce_into<S, O>(&self, send: &S, op: O) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod,
        O: Operation<S::Elem>,
    {
        let root = self.root()?;
        collective::reduce(self.comm, root, send.elements(), None, &op)
    }

    /// At the root: block i of `recv` gets rank i's `send` (MPI_Gather, section 5.5).
    pub fn gather_into_root<S, R>(&self, send: &S, recv: &mut R) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        let root = self.at_root()?;
        let bytes = S::Elem::encode(send.elements());
        into_values(recv.elements_mut(), |r| {
            collective::gather(self.comm, root, &bytes, Some(r))
        })
    }

    /// At the other ranks: contribute `send` to a gather at this root.
    pub fn gather_into<S>(&self, send: &S) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
    {
        let root = self.root()?;
        collective::gather(self.comm, root, &S::Elem::encode(send.elements()), None)
    }

    /// At the root: block i of `send` goes to rank i's `recv` (MPI_Scatter, section 5.6).
    pub fn scatter_into_root<S, R>(&self, send: &S, recv: &mut R) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        let root = self.at_root()?;
        let bytes = S::Elem::encode(send.elements());
        into_values(recv.elements_mut(), |r| {
            collective::scatter(self.comm, root, Some(&bytes), r)
        })
    }

    /// At the other ranks: receive this root's block into `recv`.
    pub fn scatter_into<R>(&self, recv: &mut R) -> Result<(), Error>
    where
        R: ElementsMut + ?Sized,
        R::Elem: Equivalence,
    {
        let root = self.root()?;
        into_values(recv.elements_mut(), |r| {
            collective::scatter(self.comm, root, None, r)
        })
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
        let bytes = T::encode(send);
        let counts = scaled(counts, T::WIRE_BYTES);
        into_values(recv, |r| {
            collective::gather_varcount(self.comm, root, &bytes, Some((r, &counts)))
        })
    }

    /// At the root, with displacements as the `mpi` crate's: rank i's `send` lands in
    /// block i of the partition (MPI_Gatherv, section 5.5).
    pub fn gather_varcount_into_root_partitioned<S, T>(
        &self,
        send: &S,
        recv: &mut PartitionMut<'_, T>,
    ) -> Result<(), Error>
    where
        S: Elements<Elem = T> + ?Sized,
        T: Equivalence,
    {
        let root = self.at_root()?;
        let counts = scaled(&recv.checked(self.ranks())?, T::WIRE_BYTES);
        let mut tmp = vec![0u8; counts.iter().sum()];
        let bytes = T::encode(send.elements());
        collective::gather_varcount(self.comm, root, &bytes, Some((&mut tmp, &counts)))?;
        recv.unpack(&tmp)
    }

    /// At the other ranks: contribute `send` to a gatherv at this root.
    pub fn gather_varcount_into<S>(&self, send: &S) -> Result<(), Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
    {
        let root = self.root()?;
        let bytes = S::Elem::encode(send.elements());
        collective::gather_varcount(self.comm, root, &bytes, None)
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
        let bytes = T::encode(send);
        let counts = scaled(counts, T::WIRE_BYTES);
        into_values(recv, |r| {
            collective::scatter_varcount(self.comm, root, Some((&bytes, &counts)), r)
        })
    }

    /// At the root, with displacements as the `mpi` crate's: block i of the partition
    /// goes to rank i (MPI_Scatterv, section 5.6).
    pub fn scatter_varcount_into_root_partitioned<R, T>(
        &self,
        send: &Partition<'_, T>,
        recv: &mut R,
    ) -> Result<(), Error>
    where
        R: ElementsMut<Elem = T> + ?Sized,
        T: Equivalence,
    {
        let root = self.at_root()?;
        let (bytes, counts) = send.packed(self.ranks())?;
        let counts = scaled(&counts, T::WIRE_BYTES);
        into_values(recv.elements_mut(), |r| {
            collective::scatter_varcount(self.comm, root, Some((&bytes, &counts)), r)
        })
    }

    /// At the other ranks: receive this root's block into `recv`.
    pub fn scatter_varcount_into<R>(&self, recv: &mut R) -> Result<(), Error>
    where
        R: ElementsMut + ?Sized,
        R::Elem: Equivalence,
    {
        let root = self.root()?;
        into_values(recv.elements_mut(), |r| {
            collective::scatter_varcount(self.comm, root, None, r)
        })
    }
}
