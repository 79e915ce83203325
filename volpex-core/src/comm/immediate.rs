//! The immediate (non-blocking) form of every collective (MPI-3.1 section 5.12), as
//! methods of `Communicator` and of the root `Process` (`immediate_all_reduce_into`,
//! `immediate_broadcast_into`, ...), and `Communicator::immediate`, the general form
//! they are all made of: an operation run on a thread of its own in a context of the
//! communicator apart from its other traffic, on copies of the inputs
//! (`collective::immediate`), and a `Request` that puts the result in place when it
//! completes.
//!
//! Contexts (`Lanes`): the n-th immediate operation of a communicator runs in lane
//! n mod `IMMEDIATE_LANES`, a communicator of the same ranks with a context named by the
//! lane's number, once the operation before it in that lane is done here. Operations in
//! one lane thus follow each other as blocking collectives do on one communicator (each
//! takes exactly the messages the last one left), while those in different lanes run at
//! once; and a lane's streams serve every operation that comes through it, so the pulls
//! the runtime makes ahead for a stream's next message are used (a context per operation
//! would leave them standing at the senders for ever). Every member starts the same
//! immediate operations in the same order (MPI requires it), so each names the same
//! lane everywhere, and replicas of a rank pull the same messages: replication and
//! failover work as for the blocking forms. Waiting for the operation before cannot
//! deadlock: it was started everywhere before this one, and runs on its own thread.
//!
//! Owns the lanes, the copies of the inputs and the sinks of the results. Must never
//! hold a collective algorithm (they live in `collective`) nor touch a caller's buffer
//! before the request completes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use bytemuck::Pod;
use parking_lot::{Condvar, Mutex};

use super::collectives::{all_to_all_blocks, scaled};
use super::communicator::Communicator;
use super::group::derive_id;
use super::process::Process;
use super::request::{Request, Sink};
use crate::collective::immediate::start;
use crate::collective::{self, Operation, PointToPoint};
use crate::config::collective::IMMEDIATE_LANES;
use crate::datatype::derive::check_len;
use crate::datatype::{Elements, ElementsMut, Equivalence, Partition, PartitionMut};
use crate::error::Error;

/// The lanes of one communicator's immediate operations.
pub(crate) struct Lanes {
    /// Immediate operations started so far.
    started: AtomicU64,
    lanes: Vec<Lane>,
}

/// One lane: its communicator (made when first used) and how many of its operations are
/// done here.
struct Lane {
    comm: OnceLock<Communicator>,
    done: Mutex<u64>,
    turn: Condvar,
}

impl Lanes {
    pub(crate) fn new() -> Lanes {
        Lanes {
            started: AtomicU64::new(0),
            lanes: (0..IMMEDIATE_LANES)
                .map(|_| Lane {
                    comm: OnceLock::new(),
                    done: Mutex::new(0),
                    turn: Condvar::new(),
                })
                .collect(),
        }
    }
}

/// An immediate operation's place: its lane's communicator and its turn in the lane.
struct Ticket {
    lanes: std::sync::Arc<Lanes>,
    lane: usize,
    turn: u64,
}

impl Ticket {
    /// Waits until the operations before this one in its lane are done here.
    fn wait(&self) {
        let lane = &self.lanes.lanes[self.lane];
        let mut done = lane.done.lock();
        while *done < self.turn {
            lane.turn.wait(&mut done);
        }
    }
}

/// The operation is done, failed, panicked or never started: the next one in the lane
/// may go.
impl Drop for Ticket {
    fn drop(&mut self) {
        let lane = &self.lanes.lanes[self.lane];
        *lane.done.lock() += 1;
        lane.turn.notify_all();
    }
}

/// Decodes an immediate collective's result into `recv`.
fn sink<'a, T: Equivalence>(recv: &'a mut [T]) -> Sink<'a> {
    Box::new(move |bytes| {
        check_len(bytes.len(), recv.len() * T::WIRE_BYTES)?;
        T::decode(bytes, recv)
    })
}

/// Unpacks an immediate collective's result into a partition.
fn sink_partition<T: Equivalence>(mut recv: PartitionMut<'_, T>) -> Sink<'_> {
    Box::new(move |bytes| recv.unpack(bytes))
}

/// An immediate collective without a result here.
fn no_result<'a>() -> Sink<'a> {
    Box::new(|bytes| check_len(bytes.len(), 0))
}

/// The shape of every immediate collective here: `run` reads `input` and writes
/// `output` (which starts as given) in a fresh context; `sink` puts `output` in place
/// when the request completes.
fn launch<'a, T, F>(
    comm: &Communicator,
    input: Vec<T>,
    mut output: Vec<T>,
    sink: Sink<'a>,
    run: F,
) -> Result<Request<'a>, Error>
where
    T: Pod + Send,
    F: FnOnce(&dyn PointToPoint, &[T], &mut [T]) -> Result<(), Error> + Send + 'static,
{
    comm.immediate(
        move |c| {
            run(c, &input, &mut output)?;
            Ok(bytemuck::cast_slice(&output).to_vec())
        },
        sink,
    )
}

/// A collective that moves data, in message form: `send` goes in, `recv` is filled.
fn moving<'a, T, F>(
    comm: &Communicator,
    send: &[T],
    recv: &'a mut [T],
    run: F,
) -> Result<Request<'a>, Error>
where
    T: Equivalence,
    F: FnOnce(&dyn PointToPoint, &[u8], &mut [u8]) -> Result<(), Error> + Send + 'static,
{
    let output = vec![0u8; recv.len() * T::WIRE_BYTES];
    launch(comm, T::encode(send).into_owned(), output, sink(recv), run)
}

/// A collective that moves data where this process only gives (a gather's non-root).
fn giving<'a, T, F>(comm: &Communicator, send: &[T], run: F) -> Result<Request<'a>, Error>
where
    T: Equivalence,
    F: FnOnce(&dyn PointToPoint, &[u8], &mut [u8]) -> Result<(), Error> + Send + 'static,
{
    launch(
        comm,
        T::encode(send).into_owned(),
        Vec::new(),
        no_result(),
        run,
    )
}

/// A collective that moves data where this process only takes (a scatter's non-root).
fn taking<'a, T, F>(comm: &Communicator, recv: &'a mut [T], run: F) -> Result<Request<'a>, Error>
where
    T: Equivalence,
    F: FnOnce(&dyn PointToPoint, &[u8], &mut [u8]) -> Result<(), Error> + Send + 'static,
{
    let output = vec![0u8; recv.len() * T::WIRE_BYTES];
    launch(comm, Vec::new(), output, sink(recv), run)
}

/// A reduction: `send`'s elements go in, `recv` (zeroed while it runs) is filled.
fn reducing<'a, T, F>(
    comm: &Communicator,
    send: &[T],
    recv: &'a mut [T],
    run: F,
) -> Result<Request<'a>, Error>
where
    T: Pod + Send + Equivalence,
    F: FnOnce(&dyn PointToPoint, &[T], &mut [T]) -> Result<(), Error> + Send + 'static,
{
    let output = vec![T::zeroed(); recv.len()];
    launch(comm, send.to_vec(), output, sink(recv), run)
}

impl Communicator {
    /// Starts `run` on a thread of its own and returns at once; when the request
    /// completes, `sink` gets the bytes `run` returned. `run` gets a communicator of the
    /// same ranks in a context of its own (named, like a created communicator, by how
    /// many this one made before, so it is the same in every replica of every member):
    /// whatever it sends can match nothing else in flight. Every immediate collective is
    /// this with its blocking form as `run`; the MPI interface builds its own the same
    /// way. Like any collective, every rank must start the same immediate operations in
    /// the same order (MPI-3.1 section 5.12).
    pub fn immediate<'a, F, S>(&self, run: F, sink: S) -> Result<Request<'a>, Error>
    where
        F: FnOnce(&Communicator) -> Result<Vec<u8>, Error> + Send + 'static,
        S: FnOnce(&[u8]) -> Result<(), Error> + 'a,
    {
        let n = self.lanes.started.fetch_add(1, Ordering::Relaxed);
        let lane = (n % IMMEDIATE_LANES) as usize;
        let ctx = self.lanes.lanes[lane].comm.get_or_init(|| {
            let id = derive_id(self.id, lane as u32, b"immediate lane");
            match self.named(id, self.members.world.clone()) {
                Some(c) => c,
                None => unreachable!("a process is always a member of its communicator"),
            }
        });
        let ticket = Ticket {
            lanes: self.lanes.clone(),
            lane,
            turn: n / IMMEDIATE_LANES,
        };
        let run = move |c: &Communicator| {
            ticket.wait();
            let result = run(c);
            drop(ticket);
            result
        };
        // A thread waiting for any of several requests sleeps in `poll`: wake it.
        let running = start(ctx.clone(), run, |c| c.inner.rt.wake())?;
        Ok(Request::collective(self, running, Box::new(sink)))
    }

    /// Starts a barrier and returns at once (MPI_Ibarrier, section 5.12.1).
    pub fn immediate_barrier<'a>(&self) -> Result<Request<'a>, Error> {
        launch::<u8, _>(self, Vec::new(), Vec::new(), no_result(), |c, _, _| {
            collective::barrier::barrier(c)
        })
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
        reducing(
            self,
            send.elements(),
            recv.elements_mut(),
            move |c, s, r| collective::all_reduce(c, s, r, &op),
        )
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
        moving(
            self,
            send.elements(),
            recv.elements_mut(),
            collective::all_gather,
        )
    }

    /// Starts an all-gather with counts (MPI_Iallgatherv, section 5.12.5).
    pub fn immediate_all_gather_varcount_into<'a, T: Equivalence>(
        &self,
        send: &[T],
        recv: &'a mut [T],
        counts: &[usize],
    ) -> Result<Request<'a>, Error> {
        let counts = scaled(counts, T::WIRE_BYTES);
        moving(self, send, recv, move |c, s, r| {
            collective::all_gather_varcount(c, s, r, &counts)
        })
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
        let out = vec![0u8; counts.iter().sum()];
        launch(self, bytes, out, sink_partition(recv), move |c, s, r| {
            collective::all_gather_varcount(c, s, r, &counts)
        })
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
        moving(
            self,
            send.elements(),
            recv.elements_mut(),
            collective::all_to_all,
        )
    }

    /// Starts an all-to-all with counts (MPI_Ialltoallv, section 5.12.6).
    pub fn immediate_all_to_all_varcount_into<'a, T: Equivalence>(
        &self,
        send: &[T],
        send_counts: &[usize],
        recv: &'a mut [T],
        recv_counts: &[usize],
    ) -> Result<Request<'a>, Error> {
        let sc = scaled(send_counts, T::WIRE_BYTES);
        let rc = scaled(recv_counts, T::WIRE_BYTES);
        moving(self, send, recv, move |c, s, r| {
            collective::all_to_all_varcount(c, s, &sc, r, &rc)
        })
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
        let out = vec![0u8; rc.iter().sum()];
        launch(self, bytes, out, sink_partition(recv), move |c, s, r| {
            collective::all_to_all_varcount(c, s, &sc, r, &rc)
        })
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
        reducing(self, send, recv, move |c, s, r| {
            collective::reduce_scatter_block(c, s, r, &op)
        })
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
        reducing(self, send, recv, move |c, s, r| {
            collective::reduce_scatter(c, s, r, &counts, &op)
        })
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
        self.immediate_scan(send, recv, op, false)
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
        self.immediate_scan(send, recv, op, true)
    }

    fn immediate_scan<'a, S, R, O>(
        &self,
        send: &S,
        recv: &'a mut R,
        op: O,
        exclusive: bool,
    ) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod + Send,
        R: ElementsMut<Elem = S::Elem> + ?Sized,
        O: Operation<S::Elem> + Send + 'static,
    {
        let recv = recv.elements_mut();
        // The output starts as `recv`, which an exclusive scan leaves as it was at rank 0.
        let out = recv.to_vec();
        launch(
            self,
            send.elements().to_vec(),
            out,
            sink(recv),
            move |c, s, r| collective::scan(c, s, r, &op, exclusive),
        )
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
        let copy = B::Elem::encode(buf).into_owned();
        launch(self.comm, Vec::new(), copy, sink(buf), move |c, _, b| {
            collective::broadcast(c, root, b)
        })
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
        reducing(
            self.comm,
            send.elements(),
            recv.elements_mut(),
            move |c, s, r| collective::reduce(c, root, s, Some(r), &op),
        )
    }

    /// Starts a contribution to a reduction at this root (MPI_Ireduce), at the others.
    pub fn immediate_reduce_into<'a, S, O>(&self, send: &S, op: O) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Pod + Send,
        O: Operation<S::Elem> + Send + 'static,
    {
        let root = self.root()?;
        let input = send.elements().to_vec();
        launch(self.comm, input, Vec::new(), no_result(), move |c, s, _| {
            collective::reduce(c, root, s, None, &op)
        })
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
        moving(
            self.comm,
            send.elements(),
            recv.elements_mut(),
            move |c, s, r| collective::gather(c, root, s, Some(r)),
        )
    }

    /// Starts a contribution to a gather at this root (MPI_Igather), at the others.
    pub fn immediate_gather_into<'a, S>(&self, send: &S) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
    {
        let root = self.root()?;
        giving(self.comm, send.elements(), move |c, s, _| {
            collective::gather(c, root, s, None)
        })
    }

    /// Starts a gather with counts at this root (MPI_Igatherv, section 5.12.3).
    pub fn immediate_gather_varcount_into_root<'a, T: Equivalence>(
        &self,
        send: &[T],
        recv: &'a mut [T],
        counts: &[usize],
    ) -> Result<Request<'a>, Error> {
        let root = self.at_root()?;
        let counts = scaled(counts, T::WIRE_BYTES);
        moving(self.comm, send, recv, move |c, s, r| {
            collective::gather_varcount(c, root, s, Some((r, &counts)))
        })
    }

    /// Starts a contribution to a gatherv at this root (MPI_Igatherv), at the others.
    pub fn immediate_gather_varcount_into<'a, S>(&self, send: &S) -> Result<Request<'a>, Error>
    where
        S: Elements + ?Sized,
        S::Elem: Equivalence,
    {
        let root = self.root()?;
        giving(self.comm, send.elements(), move |c, s, _| {
            collective::gather_varcount(c, root, s, None)
        })
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
        moving(
            self.comm,
            send.elements(),
            recv.elements_mut(),
            move |c, s, r| collective::scatter(c, root, Some(s), r),
        )
    }

    /// Starts receiving this root's block of a scatter (MPI_Iscatter), at the others.
    pub fn immediate_scatter_into<'a, R>(&self, recv: &'a mut R) -> Result<Request<'a>, Error>
    where
        R: ElementsMut + ?Sized,
        R::Elem: Equivalence,
    {
        let root = self.root()?;
        taking(self.comm, recv.elements_mut(), move |c, _, r| {
            collective::scatter(c, root, None, r)
        })
    }

    /// Starts a scatter with counts from this root (MPI_Iscatterv, section 5.12.4).
    pub fn immediate_scatter_varcount_into_root<'a, T: Equivalence>(
        &self,
        send: &[T],
        counts: &[usize],
        recv: &'a mut [T],
    ) -> Result<Request<'a>, Error> {
        let root = self.at_root()?;
        let counts = scaled(counts, T::WIRE_BYTES);
        moving(self.comm, send, recv, move |c, s, r| {
            collective::scatter_varcount(c, root, Some((s, &counts)), r)
        })
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
        taking(self.comm, recv.elements_mut(), move |c, _, r| {
            collective::scatter_varcount(c, root, None, r)
        })
    }
}
