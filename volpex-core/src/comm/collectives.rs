//! The communicator's two faces towards the collectives: it implements their
//! point-to-point interface (`PointToPoint`, in its collective context `id + 1`), and it
//! offers them to the program as methods in the style of the `mpi` crate
//! (`world.all_reduce_into(..)`, `world.process_at_rank(root).broadcast_into(..)`,
//! `immediate_*`), each a one-line call of the algorithm in `collective`.
//!
//! Owns the mapping from those methods to the algorithms and the wrapping of a running
//! immediate collective in a `Request`. Must never hold a collective algorithm itself
//! (they live in `collective`, which never sees a `Communicator`).

use super::communicator::{Communicator, Partner};
use super::process::Process;
use super::request::Request;
use crate::collective::immediate::{immediate_all_reduce, immediate_barrier, immediate_broadcast};
use crate::collective::{self, Operation, PointToPoint};
use crate::datatype::{BufferMut, Equivalence, Target};
use crate::error::Error;
use crate::message::matching::{Mode, RecvId};

impl PointToPoint for Communicator {
    fn shape(&self) -> (u32, u32) {
        (self.members.world.len() as u32, self.rank)
    }

    fn post_internal(&self, tag: i32, src: u32) -> Result<RecvId, Error> {
        let spec = self.spec(self.id + 1, Partner::Rank(src as i32), Some(tag))?;
        self.post(spec, Mode::Receive)
    }

    fn wait_internal_into(&self, id: RecvId, buf: &mut [u8], elem: usize) -> Result<usize, Error> {
        self.wait_into(id, buf, elem).map(|st| st.count_bytes())
    }

    fn discard(&self, id: RecvId) {
        self.detach(id);
    }

    fn send_internal(&self, tag: i32, dst: u32, bytes: &[u8]) -> Result<(), Error> {
        self.send_on(self.id + 1, tag, dst, bytes)
    }

    fn send_internal_each(&self, tag: i32, dsts: &[u32], bytes: &[u8]) -> Result<(), Error> {
        self.send_each_on(self.id + 1, tag, dsts, bytes)
    }

    /// Named like a created communicator, so it is the same in every replica of every
    /// member.
    fn immediate_context(&self) -> Box<dyn PointToPoint + Send> {
        match self.child(b"immediate", self.members.world.clone()) {
            Some(c) => Box::new(c),
            None => unreachable!("a process is always a member of its communicator"),
        }
    }
}

/// Collectives over the whole communicator (MPI-3.1 chapter 5).
impl Communicator {
    /// Blocks until every rank has called it (MPI_Barrier).
    pub fn barrier(&self) -> Result<(), Error> {
        collective::barrier::barrier(self)
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

    /// Reduces every rank's `send` (`counts.sum()` elements) and leaves the `counts[rank]`
    /// elements at this rank's offset in `recv` (MPI_Reduce_scatter, section 5.10.1).
    pub fn reduce_scatter_into<T: Equivalence, O: Operation<T>>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[usize],
        op: O,
    ) -> Result<(), Error> {
        collective::reduce_scatter(self, send, recv, counts, &op)
    }

    /// Starts a barrier and returns at once (MPI_Ibarrier, section 5.12.1).
    pub fn immediate_barrier<'a>(&self) -> Result<Request<'a>, Error> {
        let running = immediate_barrier(self)?;
        Ok(Request::collective(self, running, &mut []))
    }

    /// Starts an all-reduce and returns at once; `recv` is filled when the request
    /// completes (MPI_Iallreduce, section 5.12.8).
    pub fn immediate_all_reduce_into<'a, T, O>(
        &self,
        send: &[T],
        recv: &'a mut [T],
        op: O,
    ) -> Result<Request<'a>, Error>
    where
        T: Equivalence + Send,
        O: Operation<T> + Send + 'static,
    {
        let running = immediate_all_reduce(self, send, recv.len(), op)?;
        Ok(Request::collective(
            self,
            running,
            bytemuck::cast_slice_mut(recv),
        ))
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
}

/// Rooted collectives, called on the root process (MPI-3.1 chapter 5).
impl Process<'_> {
    fn root(&self) -> Result<u32, Error> {
        self.dest()
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
        match buf.target() {
            Target::Contiguous(b) => collective::broadcast(self.comm, root, b),
            Target::Scattered(layout) => {
                let mut packed = layout.pack();
                collective::broadcast(self.comm, root, &mut packed)?;
                layout.unpack(&packed);
                Ok(())
            }
        }
    }

    /// Starts a broadcast of `buf` from this (root) process and returns at once; `buf`
    /// is filled when the request completes (MPI_Ibcast, section 5.12.2).
    pub fn immediate_broadcast_into<'b, T: Equivalence>(
        &self,
        buf: &'b mut [T],
    ) -> Result<Request<'b>, Error> {
        let root = self.root()?;
        let running = immediate_broadcast(self.comm, root, buf)?;
        Ok(Request::collective(
            self.comm,
            running,
            bytemuck::cast_slice_mut(buf),
        ))
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
}
