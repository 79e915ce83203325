//! Collective operations on inter-communicators (MPI-3.1 section 5.2.2): every data
//! movement and reduction goes from one group to the other. In a rooted operation the
//! root passes `MPI_ROOT`, the rest of its group `MPI_PROC_NULL`, and the other group
//! the root's rank in the root's group; the result lands in the other group.
//!
//! Over `volpex::InterCommunicator`: messages between the groups go through its bridge
//! (a hidden intra-communicator of both groups, in contexts nothing else uses), one
//! message per pair of processes that exchange data, each of the data as the sender's
//! datatype packs it; the barrier is the bridge's. A reduction is folded at the
//! receiver, in the senders' rank order (`x0 op (x1 op (... op xn-1))`, so a
//! non-commutative operation is applied as MPI-3.1 section 5.9.1 orders it), with
//! `MPI_Reduce_local`'s code. These are the simplest algorithms that are right; an
//! inter-communicator collective moves each datum once per receiver, so they cost what
//! their data costs, and the number of messages grows as the product of the group sizes.
//!
//! The immediate forms (section 5.12) run the same code on a thread of their own
//! (`start`), on a duplicate of the inter-communicator made for that one operation, so
//! their messages never meet those of other collectives in flight; every replica of
//! every member makes the same duplicates in the same order.
//!
//! Owns the roles of the processes and the order of the folds. Must never touch a C
//! pointer (`ffi` turns them into `Buf`/`BufMut` first) nor pick an algorithm by
//! timing.

use std::borrow::Cow;
use std::os::raw::c_int;
use std::sync::Arc;

use volpex::InterCommunicator;

use crate::coll::Blocks;
use crate::datatype::{Buf, BufMut, Datatype};
use crate::error::{class_name, MpiError, Result};
use crate::handles::{class, PROC_NULL, ROOT};
use crate::raw::Pending;
use crate::request;
use crate::state::Active;

/// The tag of every message on the bridge (the order of the calls tells them apart).
const TAG: i32 = 0;

/// What a process does in a rooted inter-communicator collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The root (it passed MPI_ROOT).
    Root,
    /// In the root's group, not the root (MPI_PROC_NULL): takes no part.
    Idle,
    /// In the other group; the root is this rank of the remote group.
    Leaf(c_int),
}

/// The role `root` gives this process (MPI_ERR_ROOT for any other value).
pub fn role(ic: &InterCommunicator, root: c_int) -> Result<Role> {
    match root {
        ROOT => Ok(Role::Root),
        PROC_NULL => Ok(Role::Idle),
        r if (0..ic.remote_size()).contains(&r) => Ok(Role::Leaf(r)),
        r => Err(MpiError::new(
            class::ROOT,
            format!(
                "invalid root {r} on an inter-communicator (MPI_ROOT, MPI_PROC_NULL or a rank \
                 of the remote group, of size {})",
                ic.remote_size()
            ),
        )),
    }
}

/// Sends `bytes` to rank `r` of the remote group.
fn send_to(ic: &InterCommunicator, r: c_int, bytes: &[u8]) -> Result<()> {
    ic.bridge()
        .process_at_rank(ic.remote_in_bridge(r))
        .send_with_tag(bytes, TAG)?;
    Ok(())
}

/// Sends `bytes` to every rank of the remote group.
fn send_to_all(ic: &InterCommunicator, bytes: &[u8]) -> Result<()> {
    (0..ic.remote_size()).try_for_each(|r| send_to(ic, r, bytes))
}

/// Receives the next message from rank `r` of the remote group: at most `cap` bytes
/// (MPI_ERR_TRUNCATE beyond).
fn recv_from(ic: &InterCommunicator, r: c_int, cap: usize) -> Result<Vec<u8>> {
    let (v, _) = ic
        .bridge()
        .process_at_rank(ic.remote_in_bridge(r))
        .receive_vec_with_tag::<u8>(TAG)?;
    if v.len() > cap {
        return Err(MpiError::new(
            class::TRUNCATE,
            format!(
                "{} bytes from rank {r} of the remote group, room for {cap}",
                v.len()
            ),
        ));
    }
    Ok(v)
}

/// Receives one message from every remote rank, each into its block of `buf`.
fn recv_blocks(ic: &InterCommunicator, buf: &mut BufMut<'_>, blocks: &Blocks) -> Result<()> {
    for (r, &(first, k)) in (0..ic.remote_size()).zip(blocks) {
        let data = recv_from(ic, r, buf.dt.bytes_of(k)?)?;
        buf.write(first, k, &data)?;
    }
    Ok(())
}

/// MPI_Barrier: nobody leaves before every process of the other group entered.
pub fn barrier(ic: &InterCommunicator) -> Result<()> {
    ic.bridge().barrier()?;
    Ok(())
}

/// MPI_Bcast: the root's buffer lands in every process of the other group.
pub fn bcast(
    ic: &InterCommunicator,
    buf: &mut BufMut<'_>,
    count: usize,
    root: c_int,
) -> Result<()> {
    match role(ic, root)? {
        Role::Root => send_to_all(ic, &buf.bytes(0, count)?),
        Role::Idle => Ok(()),
        Role::Leaf(r) => {
            let data = recv_from(ic, r, buf.dt.bytes_of(count)?)?;
            buf.write(0, count, &data)
        }
    }
}

/// MPI_Gather / MPI_Gatherv: the root receives each remote process's data into its
/// block (`recv`: the root's buffer and one block per remote rank).
pub fn gather(
    ic: &InterCommunicator,
    send: Option<(&Buf<'_>, usize)>,
    recv: Option<(&mut BufMut<'_>, Blocks)>,
    root: c_int,
) -> Result<()> {
    match (role(ic, root)?, send, recv) {
        (Role::Root, _, Some((rbuf, blocks))) => recv_blocks(ic, rbuf, &blocks),
        (Role::Idle, _, _) => Ok(()),
        (Role::Leaf(r), Some((s, k)), _) => send_to(ic, r, &s.bytes(0, k)?),
        _ => Err(missing_buffer()),
    }
}

/// MPI_Scatter / MPI_Scatterv: the root sends block r of its buffer to remote rank r.
pub fn scatter(
    ic: &InterCommunicator,
    send: Option<(&Buf<'_>, Blocks)>,
    recv: Option<(&mut BufMut<'_>, usize)>,
    root: c_int,
) -> Result<()> {
    match (role(ic, root)?, send, recv) {
        (Role::Root, Some((s, blocks)), _) => {
            for (r, &(first, k)) in (0..ic.remote_size()).zip(&blocks) {
                send_to(ic, r, &s.bytes(first, k)?)?;
            }
            Ok(())
        }
        (Role::Idle, _, _) => Ok(()),
        (Role::Leaf(r), _, Some((rbuf, k))) => {
            let data = recv_from(ic, r, rbuf.dt.bytes_of(k)?)?;
            rbuf.write(0, k, &data)
        }
        _ => Err(missing_buffer()),
    }
}

fn missing_buffer() -> MpiError {
    MpiError::new(
        class::BUFFER,
        "MPI_IN_PLACE is not allowed on an inter-communicator",
    )
}

/// MPI_Allgather / MPI_Allgatherv: every process sends its data to every process of the
/// other group, and receives theirs into its blocks, in remote rank order.
pub fn allgather(
    ic: &InterCommunicator,
    send: (&Buf<'_>, usize),
    rbuf: &mut BufMut<'_>,
    blocks: &Blocks,
) -> Result<()> {
    send_to_all(ic, &send.0.bytes(0, send.1)?)?;
    recv_blocks(ic, rbuf, blocks)
}

/// The blocks of the collectives without counts per rank (MPI_Gather's root,
/// MPI_Scatter's, MPI_Allgather, MPI_Alltoall): `k` elements per remote rank, one after
/// the other.
pub fn blocks_of(ic: &InterCommunicator, k: usize) -> Blocks {
    (0..ic.remote_size())
        .map(|r| (i128::from(r) * k as i128, k))
        .collect()
}

/// MPI_Alltoall / MPI_Alltoallv: block r of the send buffer goes to remote rank r, and
/// what remote rank r sends lands in block r of the receive buffer.
pub fn alltoall(
    ic: &InterCommunicator,
    send: (&Buf<'_>, &Blocks),
    rbuf: &mut BufMut<'_>,
    rblocks: &Blocks,
) -> Result<()> {
    let (s, sblocks) = send;
    for (r, &(first, k)) in (0..ic.remote_size()).zip(sblocks) {
        send_to(ic, r, &s.bytes(first, k)?)?;
    }
    recv_blocks(ic, rbuf, rblocks)
}

/// MPI_Alltoallw, with the data already packed: `sends[r]` goes to remote rank r, and
/// `put(r, bytes)` places what remote rank r sent (at most `caps[r]` bytes).
pub fn alltoallw(
    ic: &InterCommunicator,
    sends: &[Cow<'_, [u8]>],
    caps: &[usize],
    mut put: impl FnMut(usize, &[u8]) -> Result<()>,
) -> Result<()> {
    for (r, bytes) in (0..ic.remote_size()).zip(sends) {
        send_to(ic, r, bytes)?;
    }
    for (r, &cap) in (0..ic.remote_size()).zip(caps) {
        let data = recv_from(ic, r, cap)?;
        put(r as usize, &data)?;
    }
    Ok(())
}

/// `count` elements of `dt` laid out in fresh memory from their packed bytes, as a
/// send buffer for `MPI_Reduce_local`.
fn laid_out(dt: &Arc<Datatype>, count: usize, packed: &[u8]) -> Result<(Vec<u8>, isize)> {
    let (lo, len) = dt.span(0, count)?;
    let mut mem = vec![0u8; len];
    let mut b = BufMut {
        mem: &mut mem,
        origin: -lo,
        dt: dt.clone(),
    };
    b.write(0, count, packed)?;
    Ok((mem, -lo))
}

/// Folds the remote contributions `parts` (in remote rank order, each `count` packed
/// elements of `recv`'s datatype) into `recv`: `parts[0] op (parts[1] op ...)`.
fn fold(parts: &[Vec<u8>], recv: &mut BufMut<'_>, count: usize, op: c_int) -> Result<()> {
    let want = recv.dt.bytes_of(count)?;
    for (i, p) in parts.iter().enumerate() {
        if p.len() != want {
            return Err(MpiError::new(
                class::TRUNCATE,
                format!(
                    "{} bytes to reduce from rank {i} of the remote group, {want} expected",
                    p.len()
                ),
            ));
        }
    }
    let Some((last, rest)) = parts.split_last() else {
        return Ok(());
    };
    recv.write(0, count, last)?;
    let dt = recv.dt.clone();
    for p in rest.iter().rev() {
        let (mem, origin) = laid_out(&dt, count, p)?;
        let input = Buf::new(&mem, origin, dt.clone());
        crate::coll::reduce_local(&input, recv, count, op)?;
    }
    Ok(())
}

/// Receives `len` packed bytes from every remote rank.
fn recv_all(ic: &InterCommunicator, len: usize) -> Result<Vec<Vec<u8>>> {
    (0..ic.remote_size())
        .map(|r| recv_from(ic, r, len))
        .collect()
}

/// MPI_Reduce: the root gets the reduction of the other group's data.
pub fn reduce(
    ic: &InterCommunicator,
    send: Option<&Buf<'_>>,
    recv: Option<&mut BufMut<'_>>,
    count: usize,
    op: c_int,
    root: c_int,
) -> Result<()> {
    match (role(ic, root)?, send, recv) {
        (Role::Root, _, Some(recv)) => {
            let parts = recv_all(ic, recv.dt.bytes_of(count)?)?;
            fold(&parts, recv, count, op)
        }
        (Role::Idle, _, _) => Ok(()),
        (Role::Leaf(r), Some(s), _) => send_to(ic, r, &s.bytes(0, count)?),
        _ => Err(missing_buffer()),
    }
}

/// MPI_Allreduce: each group gets the reduction of the other group's data.
pub fn allreduce(
    ic: &InterCommunicator,
    send: &Buf<'_>,
    recv: &mut BufMut<'_>,
    count: usize,
    op: c_int,
) -> Result<()> {
    send_to_all(ic, &send.bytes(0, count)?)?;
    let parts = recv_all(ic, recv.dt.bytes_of(count)?)?;
    fold(&parts, recv, count, op)
}

/// MPI_Reduce_scatter / MPI_Reduce_scatter_block: the reduction of one group's vectors
/// (of `total` elements, the same in both groups) is scattered over the other group,
/// `counts[i]` elements to its rank i (this process's group's counts). Every process
/// sends its whole vector to every remote process, which takes its own part.
pub fn reduce_scatter(
    ic: &InterCommunicator,
    send: (&Buf<'_>, usize),
    recv: &mut BufMut<'_>,
    counts: &[usize],
    op: c_int,
) -> Result<()> {
    let (s, total) = send;
    send_to_all(ic, &s.bytes(0, total)?)?;
    let me = ic.rank() as usize;
    let mine = counts.get(me).copied().unwrap_or(0);
    let before: usize = counts.iter().take(me).sum();
    let elem = recv.dt.size;
    let (from, len) = (before * elem, mine * elem);
    let parts = recv_all(ic, usize::MAX)?
        .into_iter()
        .map(|v| {
            v.get(from..from + len).map(<[u8]>::to_vec).ok_or_else(|| {
                MpiError::new(
                    class::TRUNCATE,
                    format!(
                        "a vector of {} bytes from the remote group has no bytes {from}..{} for \
                         this rank",
                        v.len(),
                        from + len
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    fold(&parts, recv, mine, op)
}

/// Starts `op` on a duplicate of `ic` made for it, on a thread of its own, and returns
/// the request of communicator handle `comm` (the immediate forms, MPI-3.1 section
/// 5.12). The buffers `op` uses must be the program's until the request completes.
pub fn start(
    comm: c_int,
    ic: &InterCommunicator,
    op: impl FnOnce(&InterCommunicator) -> Result<()> + Send + 'static,
) -> Result<c_int> {
    let own = ic.duplicate();
    let r = ic
        .point_to_point()
        .immediate_task(move || op(&own).map_err(|e| to_volpex(&e)))?;
    request::add(Active::Volpex(Pending(r, comm)))
}

/// An error inside an immediate operation, as the request reports it: a retired replica
/// stays retired; anything else by its class's name (the arguments were checked when
/// the operation started, so what is left is rare).
fn to_volpex(e: &MpiError) -> volpex::Error {
    if e.retired {
        volpex::Error::Retired(e.msg.clone())
    } else {
        volpex::Error::Usage(class_name(e.class))
    }
}
