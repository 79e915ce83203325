//! The immediate (non-blocking) form of every collective (MPI-3.1 section 5.12), as
//! methods of `Communicator` and of the root `Process` (`immediate_all_reduce_into`,
//! `immediate_broadcast_into`, ...). Each runs the blocking algorithm on a thread of its
//! own in a fresh context of the communicator, on copies of the inputs
//! (`collective::immediate`), and returns a `Request` that puts the result in place when
//! it completes. Replicas of a rank start the same immediate collectives in the same
//! order, so they name the same contexts and pull the same messages: replication and
//! failover work as for the blocking forms.
//!
//! Owns the copies of the inputs and the sinks of the results. Must never hold a
//! collective algorithm (they live in `collective`) nor touch a caller's buffer before
//! the request completes.

use bytemuck::Pod;

use super::collectives::{
    all_to_all_blocks, no_result, scaled, sink, sink_partition, start_values,
};
use super::communicator::Communicator;
use super::process::Process;
use super::request::Request;
use crate::collective::immediate::start;
use crate::collective::{self, Operation};
use crate::datatype::{Elements, ElementsMut, Equivalence, Partition, PartitionMut};
use crate::error::Error;

/// Immediate collectives over the whole communicator.
impl Communicator {
    /// Starts a barrier and returns at once (MPI_Ibarrier, section 5.12.1).
    pub fn immediate_barrier<'a>(&self) -> Result<Request<'a>, Error> {
        let running = start(self, |c| {
            collective::barrier::barrier(c).map(|()| Vec::new())
        })?;
        Ok(Request::collective(self, running, no_result()))
    }

    /// Starts an all-reduce and returns at once; `recv` is filled when the request
    /// completes (MPI_Iallreduce, section 5.12.8).
    pub fn immediate_all_reduce_into<'a, S, R, O>(
        &self,
        send: &S,
        recv: &'a mut R,
        op: O,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod + Send,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem> + Send + 'static,
    {
        let recv = recv.elements_mut();
        let running = start_values(self, send.elements(), recv.len(), move |c, s, r| {
            collective::all_reduce(c, s, r, &op)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts an all-gather (MPI_Iallgather, section 5.12.5).
    pub fn immediate_all_gather_into<'a, S, R>(
        &self,
        send: &S,
        recv: &'a mut R,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence + 'a,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        let bytes = S::Elem::encode(send.elements()).into_owned();
        let recv = recv.elements_mut();
        let len = recv.len() * S::Elem::WIRE_BYTES;
        let running = start(self, move |c| {
            let mut out = vec![0u8; len];
            collective::all_gather(c, &bytes, &mut out).map(|()| out)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts an all-gather with counts (MPI_Iallgatherv, section 5.12.5).
    pub fn immediate_all_gather_varcount_into<'a, T: Equivalence>(
        &self,
        send: &[T],
        recv: &'a mut [T],
        counts: &[usize],
    ) -> Result<Request<'a>, Error> {
        let bytes = T::encode(send).into_owned();
        let counts = scaled(counts, T::WIRE_BYTES);
        let len = recv.len() * T::WIRE_BYTES;
        let running = start(self, move |c| {
            let mut out = vec![0u8; len];
            collective::all_gather_varcount(c, &bytes, &mut out, &counts).map(|()| out)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts an all-gather into a partition (MPI_Iallgatherv, section 5.12.5).
    pub fn immediate_all_gather_varcount_into_partitioned<'a, S, T>(
        &self,
        send: &S,
        recv: PartitionMut<'a, T>,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements<Elem = T> + ?Sized,
        T: Equivalence,
    {
        let counts = scaled(&recv.checked(self.ranks())?, T::WIRE_BYTES);
        let bytes = T::encode(send.elements()).into_owned();
        let running = start(self, move |c| {
            let mut out = vec![0u8; counts.iter().sum()];
            collective::all_gather_varcount(c, &bytes, &mut out, &counts).map(|()| out)
        })?;
        Ok(Request::collective(self, running, sink_partition(recv)))
    }

    /// Starts an all-to-all (MPI_Ialltoall, section 5.12.6).
    pub fn immediate_all_to_all_into<'a, S, R>(
        &self,
        send: &S,
        recv: &'a mut R,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence + 'a,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        all_to_all_blocks(self.ranks(), send.elements().len())?;
        let bytes = S::Elem::encode(send.elements()).into_owned();
        let recv = recv.elements_mut();
        let len = recv.len() * S::Elem::WIRE_BYTES;
        let running = start(self, move |c| {
            let mut out = vec![0u8; len];
            collective::all_to_all(c, &bytes, &mut out).map(|()| out)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts an all-to-all with counts (MPI_Ialltoallv, section 5.12.6).
    pub fn immediate_all_to_all_varcount_into<'a, T: Equivalence>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &'a mut [T],
        recv_counts: &[usize],
    ) -> Result<Request<'a>, Error> {
        let bytes = T::encode(send).into_owned();
        let (sc, rc) = (
            scaled(send_counts, T::WIRE_BYTES),
            scaled(recv_counts, T::WIRE_BYTES),
        );
        let len = recv.len() * T::WIRE_BYTES;
        let running = start(self, move |c| {
            let mut out = vec![0u8; len];
            collective::all_to_all_varcount(c, &bytes, &sc, &mut out, &rc).map(|()| out)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts an all-to-all between partitions (MPI_Ialltoallv, section 5.12.6).
    pub fn immediate_all_to_all_varcount_into_partitioned<'a, T: Equivalence>(
        &self,
        send: &Partition<'_, T>,
        recv: PartitionMut<'a, T>,
    ) -> Result<Request<'a>, Error> {
        let (bytes, sc) = send.packed(self.ranks())?;
        let sc = scaled(&sc, T::WIRE_BYTES);
        let rc = scaled(&recv.checked(self.ranks())?, T::WIRE_BYTES);
        let running = start(self, move |c| {
            let mut out = vec![0u8; rc.iter().sum()];
            collective::all_to_all_varcount(c, &bytes, &sc, &mut out, &rc).map(|()| out)
        })?;
        Ok(Request::collective(self, running, sink_partition(recv)))
    }

    /// Starts a reduce-scatter of equal blocks (MPI_Ireduce_scatter_block, section
    /// 5.12.9).
    pub fn immediate_reduce_scatter_block_into<'a, T, O>(
        &self,
        send: &[T],
        recv: &'a mut [T],
        op: O,
    ) -> Result<Request<'a>, Error>
    where
        T: Pod + Send,
        O: Operation<T> + Send + 'static,
    {
        let running = start_values(self, send, recv.len(), move |c, s, r| {
            collective::reduce_scatter_block(c, s, r, &op)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts a reduce-scatter with counts (MPI_Ireduce_scatter, section 5.12.9).
    pub fn immediate_reduce_scatter_into<'a, T, O>(
        &self,
        send: &[T],
        recv: &'a mut [T],
        counts: &[usize],
        op: O,
    ) -> Result<Request<'a>, Error>
    where
        T: Pod + Send,
        O: Operation<T> + Send + 'static,
    {
        let counts = counts.to_vec();
        let running = start_values(self, send, recv.len(), move |c, s, r| {
            collective::reduce_scatter(c, s, r, &counts, &op)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts an inclusive scan (MPI_Iscan, section 5.12.11).
    pub fn immediate_scan_into<'a, S, R, O>(
        &self,
        send: &S,
        recv: &'a mut R,
        op: O,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod + Send,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem> + Send + 'static,
    {
        let recv = recv.elements_mut();
        let running = start_values(self, send.elements(), recv.len(), move |c, s, r| {
            collective::scan(c, s, r, &op, false)
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }

    /// Starts an exclusive scan (MPI_Iexscan, section 5.12.12); rank 0's `recv` is left
    /// as it was.
    pub fn immediate_exclusive_scan_into<'a, S, R, O>(
        &self,
        send: &S,
        recv: &'a mut R,
        op: O,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod + Send,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem> + Send + 'static,
    {
        let recv = recv.elements_mut();
        let input = send.elements().to_vec();
        let mut result = recv.to_vec();
        let running = start(self, move |c| {
            collective::scan(c, &input, &mut result, &op, true)?;
            Ok(bytemuck::cast_slice(&result).to_vec())
        })?;
        Ok(Request::collective(self, running, sink(recv)))
    }
}

/// Immediate rooted collectives, called on the root process.
impl Process<'_> {
    /// Starts a broadcast of `buf` from this (root) process and returns at once; `buf`
    /// is filled when the request completes (MPI_Ibcast, section 5.12.2).
    pub fn immediate_broadcast_into<'b, B>(&self, buf: &'b mut B) -> Result<Request<'b>, Error>
    where
        B: ElementsMut + ?Sized,
        B::Elem: Equivalence,
    {
        let root = self.root()?;
        let buf = buf.elements_mut();
        let mut copy = B::Elem::encode(buf).into_owned();
        let running = start(self.comm, move |c| {
            collective::broadcast(c, root, &mut copy).map(|()| copy)
        })?;
        Ok(Request::collective(self.comm, running, sink(buf)))
    }

    /// Starts a reduction at this root (MPI_Ireduce, section 5.12.7), at the root.
    pub fn immediate_reduce_into_root<'a, S, R, O>(
        &self,
        send: &S,
        recv: &'a mut R,
        op: O,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod + Send,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem> + Send + 'static,
    {
        let root = self.at_root()?;
        let recv = recv.elements_mut();
        let running = start_values(self.comm, send.elements(), recv.len(), move |c, s, r| {
            collective::reduce(c, root, s, Some(r), &op)
        })?;
        Ok(Request::collective(self.comm, running, sink(recv)))
    }

    /// Starts a contribution to a reduction at this root (MPI_Ireduce), at the others.
    pub fn immediate_reduce_into<'a, S, O>(&self, send: &S, op: O) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod + Send,
        O: Operation<S::Elem> + Send + 'static,
    {
        let root = self.root()?;
        let running = start_values(self.comm, send.elements(), 0, move |c, s, _| {
            collective::reduce(c, root, s, None, &op)
        })?;
        Ok(Request::collective(self.comm, running, no_result()))
    }

    /// Starts a gather at this root (MPI_Igather, section 5.12.3), at the root.
    pub fn immediate_gather_into_root<'a, S, R>(
        &self,
        send: &S,
        recv: &'a mut R,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence + 'a,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        let root = self.at_root()?;
        let bytes = S::Elem::encode(send.elements()).into_owned();
        let recv = recv.elements_mut();
        let len = recv.len() * S::Elem::WIRE_BYTES;
        let running = start(self.comm, move |c| {
            let mut out = vec![0u8; len];
            collective::gather(c, root, &bytes, Some(&mut out)).map(|()| out)
        })?;
        Ok(Request::collective(self.comm, running, sink(recv)))
    }

    /// Starts a contribution to a gather at this root (MPI_Igather), at the others.
    pub fn immediate_gather_into<'a, S>(&self, send: &S) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
    {
        let root = self.root()?;
        let bytes = S::Elem::encode(send.elements()).into_owned();
        let running = start(self.comm, move |c| {
            collective::gather(c, root, &bytes, None).map(|()| Vec::new())
        })?;
        Ok(Request::collective(self.comm, running, no_result()))
    }

    /// Starts a gather with counts at this root (MPI_Igatherv, section 5.12.3).
    pub fn immediate_gather_varcount_into_root<'a, T: Equivalence>(
        &self,
        send: &[T],
        recv: &'a mut [T],
        counts: &[usize],
    ) -> Result<Request<'a>, Error> {
        let root = self.at_root()?;
        let bytes = T::encode(send).into_owned();
        let counts = scaled(counts, T::WIRE_BYTES);
        let len = recv.len() * T::WIRE_BYTES;
        let running = start(self.comm, move |c| {
            let mut out = vec![0u8; len];
            collective::gather_varcount(c, root, &bytes, Some((&mut out, &counts))).map(|()| out)
        })?;
        Ok(Request::collective(self.comm, running, sink(recv)))
    }

    /// Starts a contribution to a gatherv at this root (MPI_Igatherv), at the others.
    pub fn immediate_gather_varcount_into<'a, S>(&self, send: &S) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
    {
        let root = self.root()?;
        let bytes = S::Elem::encode(send.elements()).into_owned();
        let running = start(self.comm, move |c| {
            collective::gather_varcount(c, root, &bytes, None).map(|()| Vec::new())
        })?;
        Ok(Request::collective(self.comm, running, no_result()))
    }

    /// Starts a scatter from this root (MPI_Iscatter, section 5.12.4), at the root.
    pub fn immediate_scatter_into_root<'a, S, R>(
        &self,
        send: &S,
        recv: &'a mut R,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence + 'a,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
    {
        let root = self.at_root()?;
        let bytes = S::Elem::encode(send.elements()).into_owned();
        let recv = recv.elements_mut();
        let len = recv.len() * S::Elem::WIRE_BYTES;
        let running = start(self.comm, move |c| {
            let mut out = vec![0u8; len];
            collective::scatter(c, root, Some(&bytes), &mut out).map(|()| out)
        })?;
        Ok(Request::collective(self.comm, running, sink(recv)))
    }

    /// Starts receiving this root's block of a scatter (MPI_Iscatter), at the others.
    pub fn immediate_scatter_into<'a, R>(&self, recv: &'a mut R) -> Result<Request<'a>, Error>
    where
        R: ElementsMut + ?Sized,
        R::Elem: Equivalence,
    {
        let root = self.root()?;
        let recv = recv.elements_mut();
        let len = recv.len() * R::Elem::WIRE_BYTES;
        let running = start(self.comm, move |c| {
            let mut out = vec![0u8; len];
            collective::scatter(c, root, None, &mut out).map(|()| out)
        })?;
        Ok(Request::collective(self.comm, running, sink(recv)))
    }

    /// Starts a scatter with counts from this root (MPI_Iscatterv, section 5.12.4).
    pub fn immediate_scatter_varcount_into_root<'a, T: Equivalence>(
        &self,
        send: &[T],
        counts: &[usize],
        recv: &'a mut [T],
    ) -> Result<Request<'a>, Error> {
        let root = self.at_root()?;
        let bytes = T::encode(send).into_owned();
        let counts = scaled(counts, T::WIRE_BYTES);
        let len = recv.len() * T::WIRE_BYTES;
        let running = start(self.comm, move |c| {
            let mut out = vec![0u8; len];
            collective::scatter_varcount(c, root, Some((&bytes, &counts)), &mut out).map(|()| out)
        })?;
        Ok(Request::collective(self.comm, running, sink(recv)))
    }

    /// Starts receiving this root's block of a scatterv (MPI_Iscatterv), at the others.
    pub fn immediate_scatter_varcount_into<'a, R>(
        &self,
        recv: &'a mut R,
    ) -> Result<Request<'a>, Error>
    where
        R: ElementsMut + ?Sized,
        R::Elem: Equivalence,
    {
        let root = self.root()?;
        let recv = recv.elements_mut();
        let len = recv.len() * R::Elem::WIRE_BYTES;
        let running = start(self.comm, move |c| {
            let mut out = vec![0u8; len];
            collective::scatter_varcount(c, root, None, &mut out).map(|()| out)
        })?;
        Ok(Request::collective(self.comm, running, sink(recv)))
    }
}
