//! Collective operations (MPI-3.1 chapter 5) over the volpex communicator's collectives.
//!
//! Data movement (broadcast, gather, scatter, all-gather, all-to-all and their `v` forms)
//! runs on bytes; reductions run on the datatype's element type (`with_elem!`), with the
//! predefined operations. `MPI_IN_PLACE` arrives here as `None` for the send side.
//! Buffers with displacements (`v` forms) go through a packed copy unless they are
//! already packed in rank order.

use std::borrow::Cow;
use std::os::raw::c_int;

use volpex::Communicator;

use crate::datatype::{Buf, BufMut};
use crate::error::{MpiError, Result};
use crate::ffi::raw::Pending;
use crate::handles::class;
use crate::op::{self, Elem, Op, Predef, UserOp};
use crate::request::{self, Active};
use crate::state;
use crate::with_elem;

/// A send side: buffer and element count.
pub type In<'s, 'a> = (&'s Buf<'a>, usize);
/// A receive side: buffer and element count (per rank for gathers).
pub type Out<'s, 'a> = (&'s mut BufMut<'a>, usize);

/// A collective's input: `count` elements of the send buffer (borrowed when its datatype
/// is contiguous), or with `MPI_IN_PLACE` (`send` None) a copy of `count` elements of the
/// receive buffer from element `first` (which the collective then overwrites).
fn input<'s>(
    send: Option<(&Buf<'s>, usize)>,
    recv: &BufMut<'_>,
    first: i128,
    count: usize,
) -> Result<Cow<'s, [u8]>> {
    match send {
        Some((s, k)) => s.bytes(0, k),
        None => Ok(Cow::Owned(recv.bytes(first, count)?.into_owned())),
    }
}

fn check_root(c: &Communicator, root: c_int) -> Result<()> {
    if root < 0 || root >= c.size() {
        return Err(MpiError::new(
            class::ROOT,
            format!("invalid root {root} (communicator size {})", c.size()),
        ));
    }
    Ok(())
}

/// Runs `f` on the bytes of `count` elements of `buf` from `first`: in place when the
/// datatype is contiguous, else on a packed copy written back afterwards.
fn with_bytes<R>(
    buf: &mut BufMut<'_>,
    first: i128,
    count: usize,
    f: impl FnOnce(&mut [u8]) -> Result<R>,
) -> Result<R> {
    if let Some(b) = buf.in_place(first, count)? {
        return f(b);
    }
    let mut tmp = buf.bytes(first, count)?.into_owned();
    let r = f(&mut tmp)?;
    buf.write(first, count, &tmp)?;
    Ok(r)
}

/// MPI_Barrier.
pub fn barrier(comm: c_int) -> Result<()> {
    state::comm(comm)?.barrier()?;
    Ok(())
}

/// MPI_Bcast.
pub fn bcast(comm: c_int, buf: &mut BufMut<'_>, count: usize, root: c_int) -> Result<()> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    with_bytes(buf, 0, count, |b| {
        c.process_at_rank(root).broadcast_into(b)?;
        Ok(())
    })
}

/// Which reduction.
#[derive(Clone, Copy)]
enum Red<'a> {
    Reduce { root: c_int, at_root: bool },
    All,
    Scan,
    Exscan,
    ScatterBlock,
    Scatter(&'a [usize]),
}

/// `bytes` as elements of `T`, borrowed when aligned.
fn typed<T: Elem>(bytes: &[u8]) -> Result<Cow<'_, [T]>> {
    if !bytes.len().is_multiple_of(std::mem::size_of::<T>()) {
        return Err(MpiError::new(class::TYPE, "buffer is not whole elements"));
    }
    Ok(match bytemuck::try_cast_slice::<u8, T>(bytes) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => Cow::Owned(bytemuck::pod_collect_to_vec(bytes)),
    })
}

/// Runs `f` on `bytes` as elements of `T` (through an aligned copy if need be).
fn typed_mut<T: Elem, R>(bytes: &mut [u8], f: impl FnOnce(&mut [T]) -> R) -> Result<R> {
    let n = std::mem::size_of::<T>();
    if !bytes.len().is_multiple_of(n) {
        return Err(MpiError::new(class::TYPE, "buffer is not whole elements"));
    }
    if (bytes.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Ok(f(bytemuck::cast_slice_mut(bytes)));
    }
    let mut v: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
    let r = f(&mut v);
    bytes.copy_from_slice(bytemuck::cast_slice(&v));
    Ok(r)
}

/// `a = a op b` element-wise, without communicating.
fn local_t<T: Elem>(
    op: &Op,
    (tname, dt): (&str, c_int),
    input: &[u8],
    inout: &mut [u8],
) -> Result<()> {
    if let Some(user) = op.user {
        let mut lower = input.to_vec();
        let n = inout.len() / std::mem::size_of::<T>();
        crate::ffi::raw::call_user_op(user.f, &mut lower, inout, n, dt);
        return Ok(());
    }
    op::check::<T>(op, tname)?;
    let input = typed::<T>(input)?;
    typed_mut::<T, _>(inout, |io| {
        // MPI_Reduce_local: inoutbuf = inbuf op inoutbuf, inbuf the lower "rank".
        for (x, &a) in io.iter_mut().zip(input.iter()) {
            let mut acc = a;
            T::combine(op.kind, &mut acc, *x);
            *x = acc;
        }
    })
}

/// MPI_Reduce_local.
pub fn reduce_local(
    input: &Buf<'_>,
    inout: &mut BufMut<'_>,
    count: usize,
    op: c_int,
) -> Result<()> {
    let op = state::op(op)?;
    let prim = prim_of(inout)?;
    check_user(&op, inout, prim)?;
    let tname = inout.dt.name.clone();
    let dth = inout.dt.handle;
    let data = input.bytes(0, count)?;
    with_bytes(inout, 0, count, |r| {
        with_elem!(prim, op, local_t(&op, (&tname, dth), &data, r))
    })
}

fn reduce_t<T: Elem>(
    c: &Communicator,
    op: &Op,
    (tname, dt): (&str, c_int),
    red: Red<'_>,
    send: &[u8],
    recv: &mut [u8],
) -> Result<()> {
    match op.user {
        None => {
            op::check::<T>(op, tname)?;
            run_red::<T, _>(c, Predef(op.kind), red, send, recv)
        }
        Some(user) => run_red::<T, _>(c, UserOp { user, dt }, red, send, recv),
    }
}

fn run_red<T: Elem, O: volpex::Operation<T> + Copy>(
    c: &Communicator,
    o: O,
    red: Red<'_>,
    send: &[u8],
    recv: &mut [u8],
) -> Result<()> {
    let send = typed::<T>(send)?;
    let elem = std::mem::size_of::<T>();
    let r = typed_mut::<T, _>(recv, |r| match red {
        Red::Reduce {
            root,
            at_root: true,
        } => c.process_at_rank(root).reduce_into_root(&send, r, o),
        Red::Reduce { root, .. } => c.process_at_rank(root).reduce_into(&send, o),
        Red::All => c.all_reduce_into(&send, r, o),
        Red::Scan => c.scan_into(&send, r, o),
        Red::Exscan => c.exclusive_scan_into(&send, r, o),
        Red::ScatterBlock => c.reduce_scatter_block_into(&send, r, o),
        Red::Scatter(counts) => {
            let counts: Vec<usize> = counts.iter().map(|b| b / elem).collect();
            c.reduce_scatter_into(&send, r, &counts, o)
        }
    })?;
    r.map_err(Into::into)
}

/// The element type of a reduction over `buf`'s datatype.
fn prim_of(buf: &BufMut<'_>) -> Result<crate::datatype::Prim> {
    buf.dt.base.ok_or_else(|| {
        MpiError::new(
            class::TYPE,
            format!(
                "a reduction needs a datatype of one predefined type ({} mixes types)",
                buf.dt.name
            ),
        )
    })
}

/// A user operation is called on whole elements of its datatype: only predefined
/// datatypes so far (a derived one would be split by the algorithms inside an element).
fn check_user(op: &Op, buf: &BufMut<'_>, prim: crate::datatype::Prim) -> Result<()> {
    if op.user.is_some() && buf.dt.size != prim.size() {
        return Err(MpiError::new(
            class::TYPE,
            format!(
                "user operations on derived datatypes ({}) are not implemented yet",
                buf.dt.name
            ),
        ));
    }
    Ok(())
}

fn run_reduce(
    c: &Communicator,
    op: c_int,
    red: Red<'_>,
    send: &[u8],
    recv: &mut BufMut<'_>,
    (first, count): (i128, usize),
) -> Result<()> {
    let op = state::op(op)?;
    let prim = prim_of(recv)?;
    check_user(&op, recv, prim)?;
    let tname = recv.dt.name.clone();
    let dth = recv.dt.handle;
    with_bytes(recv, first, count, |r| {
        with_elem!(prim, op, reduce_t(c, &op, (&tname, dth), red, send, r))
    })
}

/// MPI_Reduce: `recv` is the root's buffer (None elsewhere), `send` None is MPI_IN_PLACE
/// at the root.
pub fn reduce(
    comm: c_int,
    send: Option<&Buf<'_>>,
    recv: Option<&mut BufMut<'_>>,
    count: usize,
    op: c_int,
    root: c_int,
) -> Result<()> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    let at_root = c.rank() == root;
    match recv {
        Some(recv) if at_root => {
            let send = input(send.map(|s| (s, count)), recv, 0, count)?;
            run_reduce(
                &c,
                op,
                Red::Reduce { root, at_root },
                &send,
                recv,
                (0, count),
            )
        }
        _ => {
            let Some(s) = send else {
                return Err(MpiError::new(
                    class::BUFFER,
                    "MPI_IN_PLACE as the send buffer is only for the root",
                ));
            };
            let bytes = s.bytes(0, count)?;
            let mut nothing = [0u8; 0];
            let mut empty = BufMut {
                mem: &mut nothing,
                origin: 0,
                dt: s.dt.clone(),
            };
            run_reduce(
                &c,
                op,
                Red::Reduce {
                    root,
                    at_root: false,
                },
                &bytes,
                &mut empty,
                (0, 0),
            )
        }
    }
}

fn whole_reduce(
    comm: c_int,
    red: Red<'_>,
    send: Option<&Buf<'_>>,
    recv: &mut BufMut<'_>,
    (send_count, recv_count): (usize, usize),
    op: c_int,
) -> Result<()> {
    let c = state::comm(comm)?;
    let send = input(send.map(|s| (s, send_count)), recv, 0, send_count)?;
    run_reduce(&c, op, red, &send, recv, (0, recv_count))
}

/// MPI_Allreduce.
pub fn allreduce(
    comm: c_int,
    send: Option<&Buf<'_>>,
    recv: &mut BufMut<'_>,
    count: usize,
    op: c_int,
) -> Result<()> {
    whole_reduce(comm, Red::All, send, recv, (count, count), op)
}

/// MPI_Scan.
pub fn scan(
    comm: c_int,
    send: Option<&Buf<'_>>,
    recv: &mut BufMut<'_>,
    count: usize,
    op: c_int,
) -> Result<()> {
    whole_reduce(comm, Red::Scan, send, recv, (count, count), op)
}

/// MPI_Exscan.
pub fn exscan(
    comm: c_int,
    send: Option<&Buf<'_>>,
    recv: &mut BufMut<'_>,
    count: usize,
    op: c_int,
) -> Result<()> {
    whole_reduce(comm, Red::Exscan, send, recv, (count, count), op)
}

/// MPI_Reduce_scatter_block.
pub fn reduce_scatter_block(
    comm: c_int,
    send: Option<&Buf<'_>>,
    recv: &mut BufMut<'_>,
    count: usize,
    op: c_int,
) -> Result<()> {
    let n = state::comm(comm)?.size() as usize;
    let total = count
        .checked_mul(n)
        .ok_or_else(|| MpiError::new(class::COUNT, "count too large"))?;
    if send.is_none() {
        // In place: the input is the whole receive buffer, the result its first block.
        let input = recv.bytes(0, total)?.into_owned();
        let mut out = vec![0u8; recv.dt.bytes_of(count)?];
        let c = state::comm(comm)?;
        let op = state::op(op)?;
        let prim = prim_of(recv)?;
        check_user(&op, recv, prim)?;
        let tname = recv.dt.name.clone();
        let dth = recv.dt.handle;
        with_elem!(
            prim,
            op,
            reduce_t(&c, &op, (&tname, dth), Red::ScatterBlock, &input, &mut out)
        )?;
        return recv.write(0, count, &out);
    }
    whole_reduce(comm, Red::ScatterBlock, send, recv, (total, count), op)
}

/// MPI_Reduce_scatter: rank i gets `counts[i]` elements.
pub fn reduce_scatter(
    comm: c_int,
    send: Option<&Buf<'_>>,
    recv: &mut BufMut<'_>,
    counts: &[usize],
    op: c_int,
) -> Result<()> {
    let c = state::comm(comm)?;
    let me = c.rank() as usize;
    let total: usize = counts.iter().sum();
    let size = recv.dt.size;
    let byte_counts: Vec<usize> = counts.iter().map(|n| n * size).collect();
    let mine = counts.get(me).copied().unwrap_or(0);
    let input = input(send.map(|s| (s, total)), recv, 0, total)?;
    let op = state::op(op)?;
    let prim = prim_of(recv)?;
    check_user(&op, recv, prim)?;
    let tname = recv.dt.name.clone();
    let dth = recv.dt.handle;
    let mut out = vec![0u8; recv.dt.bytes_of(mine)?];
    with_elem!(
        prim,
        op,
        reduce_t(
            &c,
            &op,
            (&tname, dth),
            Red::Scatter(&byte_counts),
            &input,
            &mut out
        )
    )?;
    recv.write(0, mine, &out)
}

/// MPI_Gather: `recv` only at the root; `send` None is MPI_IN_PLACE at the root.
pub fn gather(
    comm: c_int,
    send: Option<In<'_, '_>>,
    recv: Option<Out<'_, '_>>,
    root: c_int,
) -> Result<()> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    let n = c.size() as usize;
    match recv {
        Some((rbuf, rcount)) if c.rank() == root => {
            let send = input(send, rbuf, i128::from(root) * rcount as i128, rcount)?;
            with_bytes(rbuf, 0, n * rcount, |r| {
                c.process_at_rank(root).gather_into_root(&send[..], r)?;
                Ok(())
            })
        }
        _ => {
            let (s, k) = send
                .ok_or_else(|| MpiError::new(class::BUFFER, "MPI_IN_PLACE is only for the root"))?;
            c.process_at_rank(root).gather_into(&s.bytes(0, k)?[..])?;
            Ok(())
        }
    }
}

/// Blocks of a `v` collective: (first element, count) per rank.
pub type Blocks = Vec<(i128, usize)>;

fn packed_order(blocks: &Blocks) -> bool {
    let mut next = 0i128;
    blocks.iter().all(|&(d, k)| {
        let ok = d == next;
        next += k as i128;
        ok
    })
}

/// Receives a rank-ordered concatenation through `f` into `blocks` of `buf`.
fn into_blocks(
    buf: &mut BufMut<'_>,
    blocks: &Blocks,
    f: impl FnOnce(&mut [u8], &[usize]) -> Result<()>,
) -> Result<()> {
    let size = buf.dt.size;
    let bytes: Vec<usize> = blocks.iter().map(|b| b.1 * size).collect();
    let total: usize = blocks.iter().map(|b| b.1).sum();
    if packed_order(blocks) {
        return with_bytes(buf, 0, total, |r| f(r, &bytes));
    }
    let mut tmp = vec![0u8; total * size];
    f(&mut tmp, &bytes)?;
    let mut at = 0;
    for (&(first, k), &len) in blocks.iter().zip(&bytes) {
        buf.write(first, k, &tmp[at..at + len])?;
        at += len;
    }
    Ok(())
}

/// The blocks of `buf` concatenated in rank order, and their lengths in bytes: borrowed
/// when they lie one after the other in a contiguous datatype (a copy of a large
/// all-to-all's input cost NPB IS more than its exchange).
fn from_blocks<'a>(buf: &Buf<'a>, blocks: &Blocks) -> Result<(Cow<'a, [u8]>, Vec<usize>)> {
    if packed_order(blocks) {
        let counts = blocks
            .iter()
            .map(|&(_, k)| buf.dt.bytes_of(k))
            .collect::<Result<Vec<usize>>>()?;
        let total = blocks.iter().map(|&(_, k)| k).sum();
        return Ok((buf.bytes(0, total)?, counts));
    }
    let mut out = Vec::new();
    let mut counts = Vec::with_capacity(blocks.len());
    for &(first, k) in blocks {
        let b = buf.bytes(first, k)?;
        counts.push(b.len());
        out.extend_from_slice(&b);
    }
    Ok((Cow::Owned(out), counts))
}

/// MPI_Gatherv.
pub fn gatherv(
    comm: c_int,
    send: Option<In<'_, '_>>,
    recv: Option<(&mut BufMut<'_>, Blocks)>,
    root: c_int,
) -> Result<()> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    match recv {
        Some((rbuf, blocks)) if c.rank() == root => {
            let (first, k) = blocks.get(root as usize).copied().unwrap_or((0, 0));
            let send = input(send, rbuf, first, k)?;
            into_blocks(rbuf, &blocks, |r, counts| {
                c.process_at_rank(root)
                    .gather_varcount_into_root(&send[..], r, counts)?;
                Ok(())
            })
        }
        _ => {
            let (s, k) = send
                .ok_or_else(|| MpiError::new(class::BUFFER, "MPI_IN_PLACE is only for the root"))?;
            c.process_at_rank(root)
                .gather_varcount_into(&s.bytes(0, k)?[..])?;
            Ok(())
        }
    }
}

/// MPI_Scatter: `send` only at the root; `recv` None is MPI_IN_PLACE at the root.
pub fn scatter(
    comm: c_int,
    send: Option<In<'_, '_>>,
    recv: Option<Out<'_, '_>>,
    root: c_int,
) -> Result<()> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    let n = c.size() as usize;
    match send {
        Some((s, k)) if c.rank() == root => {
            let all = s.bytes(0, n * k)?;
            match recv {
                Some((rbuf, rk)) => with_bytes(rbuf, 0, rk, |r| {
                    c.process_at_rank(root).scatter_into_root(&all[..], r)?;
                    Ok(())
                }),
                None => {
                    let mut mine = vec![0u8; all.len() / n.max(1)];
                    c.process_at_rank(root)
                        .scatter_into_root(&all[..], &mut mine[..])?;
                    Ok(())
                }
            }
        }
        _ => {
            let (rbuf, rk) = recv
                .ok_or_else(|| MpiError::new(class::BUFFER, "MPI_IN_PLACE is only for the root"))?;
            with_bytes(rbuf, 0, rk, |r| {
                c.process_at_rank(root).scatter_into(r)?;
                Ok(())
            })
        }
    }
}

/// MPI_Scatterv.
pub fn scatterv(
    comm: c_int,
    send: Option<(&Buf<'_>, Blocks)>,
    recv: Option<Out<'_, '_>>,
    root: c_int,
) -> Result<()> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    match send {
        Some((s, blocks)) if c.rank() == root => {
            let (all, counts) = from_blocks(s, &blocks)?;
            match recv {
                Some((rbuf, rk)) => with_bytes(rbuf, 0, rk, |r| {
                    c.process_at_rank(root)
                        .scatter_varcount_into_root(&all[..], &counts, r)?;
                    Ok(())
                }),
                None => {
                    let mut mine = vec![0u8; counts.get(root as usize).copied().unwrap_or(0)];
                    c.process_at_rank(root).scatter_varcount_into_root(
                        &all[..],
                        &counts,
                        &mut mine[..],
                    )?;
                    Ok(())
                }
            }
        }
        _ => {
            let (rbuf, rk) = recv
                .ok_or_else(|| MpiError::new(class::BUFFER, "MPI_IN_PLACE is only for the root"))?;
            with_bytes(rbuf, 0, rk, |r| {
                c.process_at_rank(root).scatter_varcount_into(r)?;
                Ok(())
            })
        }
    }
}

/// MPI_Allgather; `send` None is MPI_IN_PLACE.
pub fn allgather(comm: c_int, send: Option<In<'_, '_>>, (rbuf, rk): Out<'_, '_>) -> Result<()> {
    let c = state::comm(comm)?;
    let n = c.size() as usize;
    let send = input(send, rbuf, i128::from(c.rank()) * rk as i128, rk)?;
    with_bytes(rbuf, 0, n * rk, |r| {
        c.all_gather_into(&send[..], r)?;
        Ok(())
    })
}

/// MPI_Allgatherv.
pub fn allgatherv(
    comm: c_int,
    send: Option<In<'_, '_>>,
    rbuf: &mut BufMut<'_>,
    blocks: Blocks,
) -> Result<()> {
    let c = state::comm(comm)?;
    let (first, k) = blocks.get(c.rank() as usize).copied().unwrap_or((0, 0));
    let send = input(send, rbuf, first, k)?;
    into_blocks(rbuf, &blocks, |r, counts| {
        c.all_gather_varcount_into(&send[..], r, counts)?;
        Ok(())
    })
}

/// MPI_Alltoall; `send` None is MPI_IN_PLACE.
pub fn alltoall(comm: c_int, send: Option<In<'_, '_>>, (rbuf, rk): Out<'_, '_>) -> Result<()> {
    let c = state::comm(comm)?;
    let n = c.size() as usize;
    let send = input(send.map(|(s, k)| (s, n * k)), rbuf, 0, n * rk)?;
    with_bytes(rbuf, 0, n * rk, |r| {
        c.all_to_all_into(&send[..], r)?;
        Ok(())
    })
}

/// MPI_Alltoallv; `send` None is MPI_IN_PLACE.
pub fn alltoallv(
    comm: c_int,
    send: Option<(&Buf<'_>, Blocks)>,
    rbuf: &mut BufMut<'_>,
    rblocks: Blocks,
) -> Result<()> {
    let c = state::comm(comm)?;
    let (all, counts) = match send {
        Some((s, blocks)) => from_blocks(s, &blocks)?,
        None => {
            let mut out = Vec::new();
            let mut counts = Vec::new();
            for &(first, k) in &rblocks {
                let b = rbuf.bytes(first, k)?;
                counts.push(b.len());
                out.extend_from_slice(&b);
            }
            (Cow::Owned(out), counts)
        }
    };
    into_blocks(rbuf, &rblocks, |r, rcounts| {
        c.all_to_all_varcount_into(&all[..], &counts, r, rcounts)?;
        Ok(())
    })
}

/// MPI_Ibarrier.
pub fn ibarrier(comm: c_int) -> Result<c_int> {
    let r = state::comm(comm)?.immediate_barrier()?;
    request::add(Active::Volpex(Pending(r, comm)))
}

/// MPI_Ibcast into a contiguous buffer that stays valid until the request completes.
pub fn ibcast(comm: c_int, mem: &'static mut [u8], root: c_int) -> Result<c_int> {
    let c = state::comm(comm)?;
    check_root(&c, root)?;
    let r = c.process_at_rank(root).immediate_broadcast_into(mem)?;
    request::add(Active::Volpex(Pending(r, comm)))
}

fn iallreduce_t<T: Elem>(
    c: &Communicator,
    op: &Op,
    (tname, dt, comm): (&str, c_int, c_int),
    send: &[u8],
    recv: &'static mut [u8],
) -> Result<c_int> {
    let send = typed::<T>(send)?;
    let recv: &'static mut [T] = bytemuck::try_cast_slice_mut(recv).map_err(|e| {
        MpiError::new(
            class::BUFFER,
            format!("receive buffer of {tname} elements: {e}"),
        )
    })?;
    let r = match op.user {
        None => {
            op::check::<T>(op, tname)?;
            c.immediate_all_reduce_into(&send, recv, Predef(op.kind))?
        }
        Some(user) => c.immediate_all_reduce_into(&send, recv, UserOp { user, dt })?,
    };
    request::add(Active::Volpex(Pending(r, comm)))
}

/// MPI_Iallreduce into a contiguous buffer that stays valid until the request completes;
/// `send` None is MPI_IN_PLACE.
pub fn iallreduce(
    comm: c_int,
    send: Option<&Buf<'_>>,
    recv: &'static mut [u8],
    dt: &crate::datatype::Datatype,
    count: usize,
    op: c_int,
) -> Result<c_int> {
    let c = state::comm(comm)?;
    let op = state::op(op)?;
    let prim = dt.base.ok_or_else(|| {
        MpiError::new(
            class::TYPE,
            format!(
                "a reduction needs a datatype of one predefined type ({} mixes types)",
                dt.name
            ),
        )
    })?;
    if op.user.is_some() && dt.size != prim.size() {
        return Err(MpiError::new(
            class::TYPE,
            "user operations on derived datatypes are not implemented yet",
        ));
    }
    let data = match send {
        Some(s) => s.bytes(0, count)?.into_owned(),
        None => recv.to_vec(),
    };
    with_elem!(
        prim,
        op,
        iallreduce_t(&c, &op, (&dt.name, dt.handle, comm), &data, recv)
    )
}
