//! Active target synchronization (MPI-3.1 sections 11.5.1 and 11.5.2): MPI_Win_fence and
//! MPI_Win_post / start / complete / wait / test. The synchronization that ends an epoch
//! carries its operations: each origin sends every target of the epoch one batch (empty
//! or not) on the window's communicator; each target applies the batches in ascending
//! origin rank, each in the order its origin issued it, and sends each origin the
//! answers its batch asked for. Batches and answers are ordinary messages: every replica
//! of a target pulls each batch from one replica of its origin, so all replicas of a
//! target apply the same operations in the same order and keep the same window, and
//! every replica of an origin gets the same answers (docs/PROTOCOL.md, "One-sided
//! communication").
//!
//! Owns the epochs' transitions and the exchange; must never keep the window's memory
//! (which the C layer hands each call) past the call.

use std::collections::BTreeMap;
use std::os::raw::c_int;

use volpex::{Communicator, PostedMessage};

use super::batch;
use super::object;
use super::passive::{self, Memory};
use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::state;
use crate::window::{Access, Landing};

/// MPI_MODE_NOPRECEDE.
pub const MODE_NOPRECEDE: c_int = 8192;
/// MPI_MODE_NOSUCCEED.
pub const MODE_NOSUCCEED: c_int = 16384;

/// Tags on the window's communicator: a fence's batches and answers; an access epoch's
/// (start .. complete) batches and answers.
const FENCE: i32 = 1;
const FENCE_ANSWER: i32 = 2;
const PSCW: i32 = 3;
const PSCW_ANSWER: i32 = 4;

/// What one end of an epoch moves: this process's batches to `targets`, the batches of
/// `origins` applied here.
struct Exchange<'m> {
    comm: Communicator,
    win: c_int,
    mem: &'m Memory,
    queued: BTreeMap<i32, Vec<Access<'static>>>,
    landings: BTreeMap<i32, Vec<Landing>>,
}

fn sync_error(msg: &str) -> MpiError {
    MpiError::new(class::RMA_SYNC, msg.to_string())
}

/// The exchange of window `win` (memory `mem`): with the window's queue for an end of an
/// access epoch (`queue`), with none for serving an exposure epoch (whose operations on
/// others stay queued for this process's own MPI_Win_complete).
fn exchange(win: c_int, mem: &Memory, queue: bool) -> Result<Exchange<'_>> {
    let (comm, queued, landings) = object::with(win, |e| {
        Ok(match queue {
            true => (
                e.comm,
                std::mem::take(&mut e.queued),
                std::mem::take(&mut e.landings),
            ),
            false => (e.comm, BTreeMap::new(), BTreeMap::new()),
        })
    })?;
    Ok(Exchange {
        comm: state::comm(comm)?,
        win,
        mem,
        queued,
        landings,
    })
}

impl Exchange<'_> {
    /// Sends each of `targets` (but this process) its batch with `tag`.
    fn send(&mut self, targets: &[i32], tag: i32) -> Result<()> {
        let me = self.comm.rank();
        for &t in targets.iter().filter(|&&t| t != me) {
            let ops = self.queued.remove(&t).unwrap_or_default();
            self.comm
                .process_at_rank(t)
                .send_with_tag(&batch::encode(&ops)[..], tag)?;
        }
        Ok(())
    }

    /// Applies this process's own batch (if it targets itself) and lands its answers.
    fn apply_own(&mut self) -> Result<()> {
        let me = self.comm.rank();
        let ops = self.queued.remove(&me).unwrap_or_default();
        let ops: Vec<Access> = ops.into_iter().map(Access::into_owned).collect();
        let answer = self.apply(&ops)?;
        self.land(me, &answer)
    }

    /// Applies `ops` to this process's window; returns their answers.
    fn apply(&mut self, ops: &[Access]) -> Result<Vec<u8>> {
        // The window's memory only while applying: a serving wait in between may apply
        // passive-target requests to it. Nothing lent from a window may stay in the log
        // while a window changes (`passive::take_back_all`).
        super::passive::take_back_all()?;
        let mut w = (self.mem)(self.win)?;
        batch::apply(&mut *w, ops, &|h| Ok(state::op(h)?.kind))
    }

    /// Receives and applies the batch of each of `origins` (but this process) in
    /// ascending rank, sending each its answer with `tag + 1` if it has one.
    fn serve(&mut self, origins: &[i32], tag: i32) -> Result<()> {
        let me = self.comm.rank();
        let mut order: Vec<i32> = origins.to_vec();
        order.sort_unstable();
        order.dedup();
        for o in order {
            if o == me {
                self.apply_own()?;
                continue;
            }
            let bytes = passive::receive(&self.comm, o, tag, self.mem)?;
            let ops = batch::decode(&bytes)?;
            let answer = self.apply(&ops)?;
            if ops.iter().any(Access::answers) {
                self.comm
                    .process_at_rank(o)
                    .send_with_tag(&answer[..], tag + 1)?;
            }
        }
        Ok(())
    }

    /// Receives the answers of `targets` (but this process) whose operations return data.
    fn collect(&mut self, targets: &[i32], tag: i32) -> Result<()> {
        let me = self.comm.rank();
        let waiting: Vec<i32> = self
            .landings
            .keys()
            .copied()
            .filter(|&t| t != me && targets.contains(&t))
            .collect();
        for t in waiting {
            let bytes = passive::receive(&self.comm, t, tag, self.mem)?;
            self.land(t, &bytes)?;
            PostedMessage::recycle(bytes);
        }
        Ok(())
    }

    /// Writes target `t`'s answer into the buffers waiting for it, in order.
    fn land(&mut self, t: i32, answer: &[u8]) -> Result<()> {
        land(self.landings.remove(&t).unwrap_or_default(), answer)
    }
}

/// Writes an answer into the buffers waiting for it, in order.
pub(super) fn land(landings: Vec<Landing>, mut answer: &[u8]) -> Result<()> {
    for mut l in landings {
        let n = usize::try_from(l.len).map_err(|_| short())?;
        if n > answer.len() {
            return Err(short());
        }
        let (a, rest) = answer.split_at(n);
        l.buf.write(0, l.count, a)?;
        answer = rest;
    }
    Ok(())
}

fn short() -> MpiError {
    MpiError::new(
        class::INTERN,
        "a one-sided answer shorter than its operations",
    )
}

/// MPI_Win_fence (section 11.5.1): collective over the window's group. Ends the epoch
/// of the previous fence (unless `MPI_MODE_NOPRECEDE`: none precedes, so nothing moves)
/// and starts the next (unless `MPI_MODE_NOSUCCEED`).
pub fn fence(win: c_int, assert: c_int, mem: &Memory) -> Result<()> {
    let open = object::with(win, |e| {
        if e.epoch.access.is_some() || e.epoch.exposure.is_some() {
            return Err(sync_error(
                "MPI_Win_fence inside a post/start epoch (end it with MPI_Win_complete/MPI_Win_wait)",
            ));
        }
        Ok(!e.queued.is_empty())
    })?;
    if assert & MODE_NOPRECEDE != 0 {
        if open {
            return Err(sync_error(
                "MPI_Win_fence asserts MPI_MODE_NOPRECEDE after operations of this epoch",
            ));
        }
    } else {
        let mut x = exchange(win, mem, true)?;
        let all: Vec<i32> = (0..x.comm.size()).collect();
        x.send(&all, FENCE)?;
        x.serve(&all, FENCE)?;
        x.collect(&all, FENCE_ANSWER)?;
    }
    object::with(win, |e| {
        e.epoch.fence = assert & MODE_NOSUCCEED == 0;
        Ok(())
    })?;
    // A shared window's loads and stores are ordered by its team's own barrier.
    super::shared::after_fence(win);
    Ok(())
}

/// The window-group ranks of group `g`'s members (MPI_ERR_GROUP if one is not in it).
fn ranks_of(win: c_int, g: c_int) -> Result<Vec<i32>> {
    let wg = object::group(win)?;
    let n = state::with(|s| Ok(s.groups.get(g)?.size()));
    let ranks = n.and_then(|n| crate::comm::translate_ranks(g, &(0..n).collect::<Vec<_>>(), wg));
    let mut wgh = wg;
    crate::comm::group_free(&mut wgh)?;
    let ranks = ranks?;
    if ranks.iter().any(|&r| r < 0) {
        return Err(MpiError::new(
            class::GROUP,
            "the group has a process outside the window's group",
        ));
    }
    Ok(ranks)
}

/// MPI_Win_start (section 11.5.2): an access epoch to the members of `group`.
pub fn start(win: c_int, group: c_int) -> Result<()> {
    let targets = ranks_of(win, group)?;
    object::with(win, |e| {
        if e.epoch.access.is_some() || e.epoch.fence && !e.queued.is_empty() {
            return Err(sync_error("MPI_Win_start while an access epoch is open"));
        }
        e.epoch.fence = false;
        e.epoch.access = Some(targets);
        Ok(())
    })
}

/// MPI_Win_complete: ends the access epoch; its operations are complete at the origin
/// (a get's data is here) when it returns. An operation on this process itself is
/// applied here, at once. A process that also exposes its window (MPI_Win_post) serves
/// its origins' batches here, before it waits for answers: its targets may be waiting
/// in their own MPI_Win_complete for it (a ring of post/start/complete/wait).
pub fn complete(win: c_int, mem: &Memory) -> Result<()> {
    let targets = object::with(win, |e| {
        e.epoch
            .access
            .take()
            .ok_or_else(|| sync_error("MPI_Win_complete without MPI_Win_start"))
    })?;
    let mut x = exchange(win, mem, true)?;
    x.send(&targets, PSCW)?;
    if targets.contains(&x.comm.rank()) {
        x.apply_own()?;
    }
    let exposed = object::with(win, |e| {
        Ok(match (&e.epoch.exposure, e.epoch.served) {
            (Some(o), false) => Some(o.clone()),
            _ => None,
        })
    })?;
    if let Some(origins) = exposed {
        let me = x.comm.rank();
        let others: Vec<i32> = origins.into_iter().filter(|&o| o != me).collect();
        x.serve(&others, PSCW)?;
        object::with(win, |e| {
            e.epoch.served = true;
            Ok(())
        })?;
    }
    x.collect(&targets, PSCW_ANSWER)
}

/// MPI_Win_post (section 11.5.2): an exposure epoch to the members of `group`.
pub fn post(win: c_int, group: c_int) -> Result<()> {
    let origins = ranks_of(win, group)?;
    object::with(win, |e| {
        if e.epoch.exposure.is_some() {
            return Err(sync_error("MPI_Win_post while an exposure epoch is open"));
        }
        e.epoch.fence = false;
        e.epoch.exposure = Some(origins);
        e.epoch.served = false;
        Ok(())
    })
}

/// The origins of the open exposure epoch but this process (whose operations on itself
/// its MPI_Win_complete applied).
fn exposed(win: c_int) -> Result<(Vec<i32>, Communicator)> {
    let (origins, comm) = object::with(win, |e| {
        let o = e
            .epoch
            .exposure
            .clone()
            .ok_or_else(|| sync_error("MPI_Win_wait or MPI_Win_test without MPI_Win_post"))?;
        Ok((o, e.comm))
    })?;
    let comm = state::comm(comm)?;
    let me = comm.rank();
    Ok((origins.into_iter().filter(|&o| o != me).collect(), comm))
}

/// MPI_Win_wait: ends the exposure epoch once every origin's batch is applied.
pub fn wait(win: c_int, mem: &Memory) -> Result<()> {
    let (origins, _) = exposed(win)?;
    let served = match object::with(win, |e| Ok(e.epoch.served))? {
        true => Ok(()),
        false => exchange(win, mem, false)?.serve(&origins, PSCW),
    };
    object::with(win, |e| {
        e.epoch.exposure = None;
        e.epoch.served = false;
        Ok(())
    })?;
    served
}

/// MPI_Win_test: MPI_Win_wait if every origin's batch is here, else false. Every replica
/// gets the same answer (each probe is answered by the rank's leader).
pub fn test(win: c_int, mem: &Memory) -> Result<bool> {
    let (origins, comm) = exposed(win)?;
    let served = object::with(win, |e| Ok(e.epoch.served))?;
    for o in origins.into_iter().filter(|_| !served) {
        if comm
            .process_at_rank(o)
            .immediate_probe_with_tag(PSCW)?
            .is_none()
        {
            return Ok(false);
        }
    }
    wait(win, mem)?;
    Ok(true)
}
