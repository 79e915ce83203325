//! `Request`: an immediate operation in flight (MPI-3.1 section 3.7), and the calls that
//! complete one of many (`wait_any`, `test_any`, `wait_some`, `test_some`).
//!
//! Which of several requests completes first depends on timing, so those calls are
//! coordinated like wildcard receives: the leader replica of the rank decides and records
//! the indices, every other replica waits for exactly those requests. With one replica
//! per rank, or a send-deterministic program, each replica decides for itself.
//!
//! Owns a request's state (done, a posted receive, a running immediate collective, a
//! generalized request the program completes) and the coordination of "which
//! completed". Must never let a replica pick completions the
//! leader did not record, and never run a collective itself (`collective::immediate`
//! does; the request only joins its thread and copies the result out).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};

use super::communicator::Communicator;
use super::process::deliver;
use super::receive::message;
use super::Status;
use crate::collective::immediate::Running;
use crate::datatype::Target;
use crate::error::Error;
use crate::transport::Loan;
use volpex_proto::message::matching::RecvId;
use volpex_proto::message::Key;
use volpex_proto::pull::ChoiceState;

enum State<'a> {
    Done(Status),
    Receive {
        comm: Communicator,
        id: RecvId,
        buf: Target<'a>,
        elem: usize,
        /// Its coordination slot (an `ANY_SOURCE` receive's), for `cancel`.
        slot: Option<u64>,
    },
    /// A receive that `test` completed: still a receive for `cancel` and the calls that
    /// coordinate completions, whose answers must not depend on which replica's `test`
    /// saw it complete.
    Received {
        comm: Communicator,
        id: RecvId,
        slot: Option<u64>,
        status: Status,
    },
    /// An immediate collective running on its own thread; `out` puts its result in
    /// place.
    Collective {
        comm: Communicator,
        running: Running,
        out: Sink<'a>,
    },
    /// A synchronous send (MPI_Issend), logged, until a receive claims it.
    Synchronous {
        comm: Communicator,
        key: Key,
        status: Status,
    },
    /// An immediate send whose buffer is lent to the log (`Core::send_lent`): complete
    /// from the start, as any send, but its completion gives the buffer back.
    Lent {
        comm: Communicator,
        loan: Loan,
        status: Status,
    },
    /// An operation the program runs itself and marks complete (`Request::generalized`).
    Generalized {
        comm: Communicator,
        done: Arc<AtomicBool>,
    },
    Taken,
}

/// How long a wait for a generalized request lets the event loop run before looking at
/// the request again: it is completed by the program (maybe on another thread), not by
/// anything the loop sees.
const GENERALIZED_LOOK: Duration = Duration::from_millis(1);

/// Puts the bytes an immediate collective returned into the caller's buffer.
pub(crate) type Sink<'a> = Box<dyn FnOnce(&[u8]) -> Result<(), Error> + 'a>;

/// An immediate operation. Dropping a receive request that has not completed still
/// consumes its message (it is discarded on arrival), like MPI_Request_free.
pub struct Request<'a> {
    state: State<'a>,
}

impl<'a> Request<'a> {
    pub(crate) fn done(st: Status) -> Request<'a> {
        Request {
            state: State::Done(st),
        }
    }

    /// Synchronous send `key` (logged): complete once a receive claims it; `status` is
    /// its status then.
    pub(crate) fn synchronous(comm: &Communicator, key: Key, status: Status) -> Request<'a> {
        Request {
            state: State::Synchronous {
                comm: comm.clone(),
                key,
                status,
            },
        }
    }

    /// Posted receive `id` into `buf`; `slot` is its coordination slot, if it has one
    /// (`Communicator::receive_slot`).
    pub(crate) fn receive(
        comm: &Communicator,
        id: RecvId,
        buf: Target<'a>,
        elem: usize,
        slot: Option<u64>,
    ) -> Request<'a> {
        Request {
            state: State::Receive {
                comm: comm.clone(),
                id,
                buf,
                elem,
                slot,
            },
        }
    }

    /// An immediate send whose buffer `loan` holds until the request completes.
    pub(crate) fn lent(comm: &Communicator, loan: Loan, status: Status) -> Request<'a> {
        Request {
            state: State::Lent {
                comm: comm.clone(),
                loan,
                status,
            },
        }
    }

    pub(crate) fn collective(comm: &Communicator, running: Running, out: Sink<'a>) -> Request<'a> {
        Request {
            state: State::Collective {
                comm: comm.clone(),
                running,
                out,
            },
        }
    }

    /// A generalized request (MPI_Grequest_start, MPI-3.1 section 12.2): an operation the
    /// program runs itself, complete once `done` is true (set by the program, from any
    /// thread). It waits and tests like any request, and `wait_any` and the other calls
    /// that pick completed requests choose it like the others, so every replica of the
    /// rank reports the same ones; `comm` is the communicator those choices go through.
    /// Its status is empty: the program's query function makes the one MPI returns.
    pub fn generalized(comm: &Communicator, done: Arc<AtomicBool>) -> Request<'static> {
        Request {
            state: State::Generalized {
                comm: comm.clone(),
                done,
            },
        }
    }

    fn comm(&self) -> Option<&Communicator> {
        match &self.state {
            State::Receive { comm, .. }
            | State::Received { comm, .. }
            | State::Collective { comm, .. }
            | State::Synchronous { comm, .. }
            | State::Generalized { comm, .. } => Some(comm),
            // Complete from the start: a choice among such requests is the same at every
            // replica.
            State::Lent { .. } | State::Done(_) | State::Taken => None,
        }
    }

    fn is_generalized(&self) -> bool {
        matches!(self.state, State::Generalized { .. })
    }

    /// Waits a while, turning the loop, for the receivers of the lent sends among
    /// `requests` to confirm them (`Core::await_loans`), so that completing them copies
    /// none: the end of a collective call that lent its blocks. True when every one was
    /// confirmed.
    pub fn await_lent(requests: &[Request<'_>]) -> Result<bool, Error> {
        let mut comm = None;
        let mut loans = Vec::new();
        for r in requests {
            if let State::Lent { comm: c, loan, .. } = &r.state {
                comm.get_or_insert(c);
                loans.push(loan);
            }
        }
        match comm {
            Some(c) => c.await_loans(&loans),
            None => Ok(true),
        }
    }

    /// Blocks until the operation completes (MPI_Wait).
    pub fn wait(mut self) -> Result<Status, Error> {
        self.wait_here()
    }

    fn wait_here(&mut self) -> Result<Status, Error> {
        match std::mem::replace(&mut self.state, State::Taken) {
            State::Done(st) | State::Received { status: st, .. } => Ok(st),
            State::Receive {
                comm,
                id,
                buf: Target::Contiguous(buf),
                elem,
                ..
            } => comm.wait_into(id, buf, elem),
            State::Receive {
                comm,
                id,
                buf: buf @ Target::Scattered(_),
                elem,
                ..
            } => {
                let (key, data) = message(comm.wait(id)?)?;
                let n = deliver(buf, elem, &data)?;
                Ok(comm.status_for(&key, n))
            }
            State::Collective { comm, running, out } => finish_collective(&comm, running, out),
            State::Synchronous { comm, key, status } => {
                comm.wait_matched(&key)?;
                Ok(status)
            }
            State::Lent { comm, loan, status } => {
                comm.give_back(loan)?;
                Ok(status)
            }
            State::Generalized { comm, done } => {
                while !done.load(Ordering::Acquire) {
                    comm.drive_for(GENERALIZED_LOOK)?;
                }
                Ok(generalized_status(&comm))
            }
            State::Taken => Err(Error::RequestCompleted),
        }
    }

    /// Cancels a pending receive (MPI_Cancel, MPI-3.1 section 3.8.4): true when it was
    /// cancelled (it then completes at once, with a status whose `is_cancelled()` is
    /// true, and claims no message: the one it would have matched goes to the next
    /// receive that matches it), false when it had matched a message (it completes as
    /// usual). Every replica of the rank gets the same answer: the leader replica decides
    /// and the others follow, as for a wildcard receive. A send (complete at once: its
    /// message is in the sender log), an immediate collective and a completed request
    /// are not cancelled (false). A synchronous send is not cancelled either, but it no
    /// longer waits for its receive: it completes at once, as a buffered send, and its
    /// message is delivered as usual (MPI-3.1 section 3.8.4: a wait for a request marked
    /// for cancellation returns whatever other processes do).
    pub fn cancel(&mut self) -> Result<bool, Error> {
        if let State::Synchronous { comm, key, status } = &self.state {
            comm.forget_match(key);
            self.state = State::Done(*status);
            return Ok(false);
        }
        let (comm, id, slot) = match &self.state {
            State::Receive { comm, id, slot, .. } | State::Received { comm, id, slot, .. } => {
                (comm, *id, *slot)
            }
            State::Synchronous { .. }
            | State::Lent { .. }
            | State::Done(_)
            | State::Collective { .. }
            | State::Generalized { .. }
            | State::Taken => return Ok(false),
        };
        // A receive `test` completed here may still be pending in a sibling: ask all the
        // same, so that every replica takes the same slots (the leader answers no).
        if !comm.cancel_receive(id, slot)? {
            return Ok(false);
        }
        // Cancelled: the matcher forgot the receive, so nothing is detached on drop.
        self.state = State::Done(Status::cancelled());
        Ok(true)
    }

    /// Completes the operation if it can without waiting (MPI_Test). Not coordinated:
    /// how often it says "not yet" may differ between replicas (see the determinism
    /// contract); `test_any` is. A "not yet" gives the CPU away first (see
    /// `Communicator::idle`).
    pub fn test(&mut self) -> Result<Option<Status>, Error> {
        let st = self.test_quietly()?;
        if st.is_none() {
            if let Some(c) = self.comm() {
                c.idle();
            }
        }
        Ok(st)
    }

    /// `test` without giving the CPU away (for a caller that tests several requests).
    fn test_quietly(&mut self) -> Result<Option<Status>, Error> {
        match &mut self.state {
            State::Done(st) | State::Received { status: st, .. } => Ok(Some(*st)),
            State::Receive {
                comm,
                id,
                buf,
                elem,
                slot,
            } => match comm.test(*id)? {
                Some(m) => {
                    let (key, data) = message(m)?;
                    let target = match buf {
                        Target::Contiguous(b) => Target::Contiguous(b),
                        Target::Scattered(l) => Target::Scattered(Box::new(&mut **l)),
                    };
                    let n = deliver(target, *elem, &data);
                    volpex_proto::message::pool::recycle(data);
                    let st = comm.status_for(&key, n?);
                    self.state = State::Received {
                        comm: comm.clone(),
                        id: *id,
                        slot: *slot,
                        status: st,
                    };
                    Ok(Some(st))
                }
                None => Ok(None),
            },
            State::Collective { running, .. } => {
                if running.is_done() {
                    let st = self.wait_here()?;
                    self.state = State::Done(st);
                    Ok(Some(st))
                } else {
                    // Its thread needs the CPU more than a caller polling for it.
                    std::thread::yield_now();
                    Ok(None)
                }
            }
            State::Synchronous { comm, key, status } => {
                if !comm.test_matched(key)? {
                    return Ok(None);
                }
                let st = *status;
                self.state = State::Done(st);
                Ok(Some(st))
            }
            State::Lent { .. } => {
                let st = self.wait_here()?;
                self.state = State::Done(st);
                Ok(Some(st))
            }
            State::Generalized { comm, done } => Ok(done
                .load(Ordering::Acquire)
                .then(|| generalized_status(comm))),
            State::Taken => Err(Error::RequestCompleted),
        }
    }
}

/// The status of a completed generalized request.
fn generalized_status(comm: &Communicator) -> Status {
    Status {
        source: comm.rank(),
        tag: 0,
        bytes: 0,
        cancelled: false,
    }
}

/// Joins an immediate collective's thread and puts its result in place.
fn finish_collective(
    comm: &Communicator,
    running: Running,
    out: Sink<'_>,
) -> Result<Status, Error> {
    let result = running.join()?;
    out(&result)?;
    Ok(Status {
        source: comm.rank(),
        tag: 0,
        bytes: result.len(),
        cancelled: false,
    })
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if let State::Lent { .. } = self.state {
            // Freed before it completed (MPI_Request_free): the buffer is given back now,
            // while the program still leaves it alone.
            if let State::Lent { comm, loan, .. } = std::mem::replace(&mut self.state, State::Taken)
            {
                if let Err(e) = comm.give_back(loan) {
                    log::warn!("an immediate send's buffer given back with an error: {e}");
                }
            }
            return;
        }
        match &self.state {
            State::Receive { comm, id, .. } => comm.detach(*id),
            // Its message stays in the log and is delivered; nobody waits for the match.
            State::Synchronous { comm, key, .. } => comm.forget_match(key),
            State::Done(_)
            | State::Received { .. }
            | State::Collective { .. }
            | State::Lent { .. }
            | State::Generalized { .. }
            | State::Taken => {}
        }
    }
}

/// Waits for every request (MPI_Waitall); statuses in request order.
pub fn wait_all(requests: Vec<Request<'_>>) -> Result<Vec<Status>, Error> {
    requests.into_iter().map(Request::wait).collect()
}

/// How many requests a "some" call completes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Some_ {
    One,
    All,
}

/// Waits until one request completes, removes it and returns its former index and status
/// (MPI_Waitany); `None` for an empty list. Every replica of the rank returns the same
/// index.
pub fn wait_any(requests: &mut Vec<Request<'_>>) -> Result<Option<(usize, Status)>, Error> {
    let done = complete_some(requests, Some_::One, true)?;
    Ok(done.into_iter().next())
}

/// Like `wait_any`, but returns `None` at once when no request is complete (MPI_Testany).
pub fn test_any(requests: &mut Vec<Request<'_>>) -> Result<Option<(usize, Status)>, Error> {
    let done = complete_some(requests, Some_::One, false)?;
    Ok(done.into_iter().next())
}

/// Waits until at least one request completes and removes every complete one, returning
/// their former indices and statuses in index order (MPI_Waitsome).
pub fn wait_some(requests: &mut Vec<Request<'_>>) -> Result<Vec<(usize, Status)>, Error> {
    complete_some(requests, Some_::All, true)
}

/// Removes every request that is complete now (maybe none), as `wait_some` (MPI_Testsome).
pub fn test_some(requests: &mut Vec<Request<'_>>) -> Result<Vec<(usize, Status)>, Error> {
    complete_some(requests, Some_::All, false)
}

fn complete_some(
    requests: &mut Vec<Request<'_>>,
    how: Some_,
    block: bool,
) -> Result<Vec<(usize, Status)>, Error> {
    let Some(comm) = requests.iter().find_map(|r| r.comm().cloned()) else {
        // Only completed sends: every replica sees the same.
        let n = match how {
            Some_::One => requests.len().min(1),
            Some_::All => requests.len(),
        };
        return take(requests, (0..n).collect());
    };
    let slot = comm.post_choice();
    // A generalized request is completed by the program, which the loop does not see:
    // a wait looks at it again every `GENERALIZED_LOOK`.
    let generalized = requests.iter().any(Request::is_generalized);
    loop {
        let choice = match slot {
            None => ChoiceState::Yours,
            Some(s) => comm.choice(s),
        };
        match choice {
            ChoiceState::Made(v) => return take(requests, decode(&v, requests.len())?),
            ChoiceState::Yours => {
                let mut ready = Vec::new();
                for (i, r) in requests.iter_mut().enumerate() {
                    if r.test_quietly()?.is_some() {
                        ready.push(i);
                        if how == Some_::One {
                            break;
                        }
                    }
                }
                if !ready.is_empty() || !block {
                    if let Some(s) = slot {
                        comm.make_choice(s, encode(&ready));
                    }
                    if ready.is_empty() {
                        comm.idle();
                    }
                    return take(requests, ready);
                }
                if generalized {
                    comm.drive_for(GENERALIZED_LOOK)?;
                } else {
                    comm.drive_once()?;
                }
            }
            ChoiceState::Waiting => comm.drive_once()?,
        }
    }
}

/// Completes the requests at `indices` (ascending) and removes them from the list.
fn take(
    requests: &mut Vec<Request<'_>>,
    indices: Vec<usize>,
) -> Result<Vec<(usize, Status)>, Error> {
    let mut out = Vec::with_capacity(indices.len());
    for &i in &indices {
        out.push((i, requests[i].wait_here()?));
    }
    for &i in indices.iter().rev() {
        requests.remove(i);
    }
    Ok(out)
}

fn encode(indices: &[usize]) -> Bytes {
    let mut b = BytesMut::with_capacity(4 * indices.len());
    for &i in indices {
        b.put_u32_le(i as u32);
    }
    b.freeze()
}

fn decode(b: &[u8], len: usize) -> Result<Vec<usize>, Error> {
    let bad = || Error::RequestChoiceMismatch {
        choice: b.to_vec(),
        requests: len,
    };
    if !b.len().is_multiple_of(4) {
        return Err(bad());
    }
    let mut out = Vec::with_capacity(b.len() / 4);
    for c in b.chunks_exact(4) {
        let i = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
        if i >= len || out.last().is_some_and(|&p| p >= i) {
            return Err(bad());
        }
        out.push(i);
    }
    Ok(out)
}
