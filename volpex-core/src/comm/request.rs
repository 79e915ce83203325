//! `Request`: an immediate operation in flight (MPI-3.1 section 3.7).

use super::communicator::{fill_bytes, Communicator};
use super::Status;
use crate::error::Error;
use crate::message::Key;

enum State<'a> {
    Done(Status),
    Receive {
        comm: Communicator,
        key: Key,
        buf: &'a mut [u8],
        elem: usize,
    },
    Taken,
}

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

    pub(crate) fn receive(
        comm: &Communicator,
        key: Key,
        buf: &'a mut [u8],
        elem: usize,
    ) -> Request<'a> {
        Request {
            state: State::Receive {
                comm: comm.clone(),
                key,
                buf,
                elem,
            },
        }
    }

    fn finish(
        comm: &Communicator,
        key: &Key,
        buf: &mut [u8],
        elem: usize,
        data: bytes::Bytes,
    ) -> Result<Status, Error> {
        let n = fill_bytes(buf, elem, &data);
        crate::message::pool::recycle(data);
        Ok(comm.status_for(key, n?))
    }

    /// Blocks until the operation completes (MPI_Wait).
    pub fn wait(mut self) -> Result<Status, Error> {
        match std::mem::replace(&mut self.state, State::Taken) {
            State::Done(st) => Ok(st),
            State::Receive {
                comm,
                key,
                buf,
                elem,
            } => {
                let n = comm.wait_into(&key, buf, elem)?;
                Ok(comm.status_for(&key, n))
            }
            State::Taken => Err(Error::Runtime("request already completed".into())),
        }
    }

    /// Completes the operation if it can without waiting (MPI_Test).
    pub fn test(&mut self) -> Result<Option<Status>, Error> {
        match &mut self.state {
            State::Done(st) => Ok(Some(*st)),
            State::Receive {
                comm,
                key,
                buf,
                elem,
            } => match comm.test_key(key)? {
                Some(data) => {
                    let st = Self::finish(comm, key, buf, *elem, data)?;
                    self.state = State::Done(st);
                    Ok(Some(st))
                }
                None => Ok(None),
            },
            State::Taken => Err(Error::Runtime("request already completed".into())),
        }
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        if let State::Receive { comm, key, .. } = &self.state {
            comm.detach(key);
        }
    }
}

/// Waits for every request (MPI_Waitall); statuses in request order.
pub fn wait_all(requests: Vec<Request<'_>>) -> Result<Vec<Status>, Error> {
    requests.into_iter().map(Request::wait).collect()
}

/// Waits until one request completes, removes it and returns its former index and status
/// (MPI_Waitany); `None` for an empty list. Which of several complete requests is
/// returned may differ between replicas: programs must not branch on it (see the
/// determinism contract in the README).
pub fn wait_any(requests: &mut Vec<Request<'_>>) -> Result<Option<(usize, Status)>, Error> {
    if requests.is_empty() {
        return Ok(None);
    }
    loop {
        for i in 0..requests.len() {
            if let Some(st) = requests[i].test()? {
                let mut r = requests.remove(i);
                r.state = State::Taken;
                return Ok(Some((i, st)));
            }
        }
        // Nothing complete: sleep in the event loop until something happens.
        if let Some(comm) = requests.iter().find_map(|r| match &r.state {
            State::Receive { comm, .. } => Some(comm.clone()),
            State::Done(_) | State::Taken => None,
        }) {
            comm.drive_once()?;
        }
    }
}
