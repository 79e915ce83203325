//! The origin's side of the communication calls (MPI-3.1 section 11.3): MPI_Put, MPI_Get,
//! MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap. Each is
//! checked (an epoch open to the target, the target's window bounds, the datatypes and
//! the operation) and queued for the synchronization that ends the epoch; a put's and an
//! accumulate's data stay in the origin buffer until then (MPI-3.1 section 11.3: the
//! program leaves it unchanged until the operation completes), and are copied once, into
//! the batch (the C layer copies them at the call for a request-based operation, whose
//! request completes at once).
//!
//! Owns the checks and the queue; must never communicate.

use std::borrow::Cow;
use std::os::raw::c_int;
use std::sync::Arc;

use super::object;
use crate::coll::reduce::Combiner;
use crate::datatype::{BufMut, Datatype};
use crate::error::{MpiError, Result};
use crate::handles::{class, PROC_NULL};
use crate::op::OpKind;
use crate::state;
use crate::window::{Access, Landing, Pieces, FLAVOR_DYNAMIC};

/// Where an operation goes: rank, displacement (in the target's units), and the target
/// datatype with its count.
pub struct Target {
    /// Rank in the window's group.
    pub rank: c_int,
    /// Displacement from the target window's base, in its displacement units.
    pub disp: isize,
    /// Elements of `dt`.
    pub count: usize,
    /// The target datatype (its type map is read here, at the origin).
    pub dt: Arc<Datatype>,
}

/// Checks that `t` may be accessed now and returns its pieces of the target's window;
/// `None` for MPI_PROC_NULL (the call does nothing).
fn pieces(win: c_int, t: &Target) -> Result<Option<Pieces>> {
    if t.rank == PROC_NULL {
        return Ok(None);
    }
    let (dynamic, (size, unit)) = object::with(win, |e| {
        let open = e.epoch.fence
            || e.epoch.access.as_ref().is_some_and(|g| g.contains(&t.rank))
            || e.epoch.locks.contains_key(&t.rank);
        let peer = usize::try_from(t.rank)
            .ok()
            .and_then(|r| e.peers.get(r).copied())
            .ok_or_else(|| {
                MpiError::new(
                    class::RANK,
                    format!("target rank {} is not in the window's group", t.rank),
                )
            })?;
        if !open {
            return Err(MpiError::new(
                class::RMA_SYNC,
                format!(
                    "no access epoch to rank {} is open (MPI_Win_fence, MPI_Win_start or MPI_Win_lock first)",
                    t.rank
                ),
            ));
        }
        Ok((e.fixed.flavor == FLAVOR_DYNAMIC, peer))
    })?;
    let range = || {
        MpiError::new(
            class::RMA_RANGE,
            format!(
                "the access at displacement {} reaches outside rank {}'s window of {size} bytes",
                t.disp, t.rank
            ),
        )
    };
    let start = (t.disp as i128)
        .checked_mul(unit as i128)
        .ok_or_else(range)?;
    let mut out: Pieces = Vec::new();
    for (off, len) in t.dt.touched(0, t.count) {
        if len == 0 {
            continue;
        }
        let at = start + off;
        // A dynamic window's displacements are window addresses, checked at the target.
        if at < 0 || !dynamic && at + len as i128 > size as i128 {
            return Err(range());
        }
        let (at, len) = (at as u64, len as u64);
        match out.last_mut() {
            Some((o, l)) if *o + *l == at => *l += len,
            _ => out.push((at, len)),
        }
    }
    Ok(Some(out))
}

fn queue(win: c_int, rank: c_int, op: Access<'static>, landing: Option<Landing>) -> Result<()> {
    object::with(win, |e| {
        e.queued.entry(rank).or_default().push(op);
        if let Some(l) = landing {
            e.landings.entry(rank).or_default().push(l);
        }
        Ok(())
    })
}

/// Checks that the origin's data fits the target's elements (MPI-3.1 section 11.3: the
/// type signatures match).
fn same_bytes(len: usize, t: &Target, what: &str) -> Result<()> {
    let want = t.dt.bytes_of(t.count)?;
    if len != want {
        return Err(MpiError::new(
            class::TYPE,
            format!("{what}: the origin gives {len} bytes, the target datatype takes {want}"),
        ));
    }
    Ok(())
}

/// Bytes an operation carries: borrowed from the origin buffer, or packed.
pub type Data = Cow<'static, [u8]>;

/// MPI_Put (section 11.3.1): `data` is the origin buffer's packed bytes.
pub fn put(win: c_int, data: Data, t: Target) -> Result<()> {
    same_bytes(data.len(), &t, "MPI_Put")?;
    let Some(pieces) = pieces(win, &t)? else {
        return Ok(());
    };
    queue(win, t.rank, Access::Put { pieces, data }, None)
}

/// MPI_Get (section 11.3.2): `count` elements land in `buf` when the epoch ends.
pub fn get(win: c_int, buf: BufMut<'static>, count: usize, t: Target) -> Result<()> {
    same_bytes(buf.dt.bytes_of(count)?, &t, "MPI_Get")?;
    let Some(pieces) = pieces(win, &t)? else {
        return Ok(());
    };
    let len = pieces.iter().map(|p| p.1).sum();
    queue(
        win,
        t.rank,
        Access::Get { pieces },
        Some(Landing { buf, count, len }),
    )
}

/// The operation of handle `op` for one-sided use on `dt` (section 11.3.4: a predefined
/// operation, MPI_REPLACE or MPI_NO_OP, on a datatype of one predefined type), and that
/// type's code.
fn checked_op(op: c_int, dt: &Arc<Datatype>) -> Result<(OpKind, u8)> {
    let o = state::op(op)?;
    if o.user.is_some() {
        return Err(MpiError::new(
            class::OP,
            "one-sided accumulates take predefined operations only (MPI-3.1 11.3.4)",
        ));
    }
    let prim = dt.base.ok_or_else(|| {
        MpiError::new(
            class::TYPE,
            format!(
                "{} needs a datatype of one predefined type ({} mixes types)",
                o.name, dt.name
            ),
        )
    })?;
    let code = prim.code().ok_or_else(|| {
        MpiError::new(
            class::OP,
            format!("{} is not defined on {}", o.name, dt.name),
        )
    })?;
    if !matches!(o.kind, OpKind::Replace | OpKind::NoOp) {
        Combiner::new(op, dt)?;
    }
    Ok((o.kind, code))
}

/// MPI_Accumulate, and with `result` MPI_Get_accumulate and MPI_Fetch_and_op (sections
/// 11.3.4): `data` the origin's packed bytes (ignored for MPI_NO_OP), `origin` its
/// datatype.
pub fn accumulate(
    win: c_int,
    data: Data,
    origin: Option<&Arc<Datatype>>,
    op: c_int,
    t: Target,
    result: Option<(BufMut<'static>, usize)>,
) -> Result<()> {
    // Of no bytes at all: nothing happens, whatever the datatypes (MPICH's badrma).
    let no_result = match &result {
        Some((buf, count)) => buf.dt.bytes_of(*count)? == 0,
        None => true,
    };
    if t.dt.bytes_of(t.count)? == 0 && data.is_empty() && no_result {
        state::op(op)?;
        return Ok(());
    }
    let (kind, prim) = checked_op(op, &t.dt)?;
    let data = if kind == OpKind::NoOp {
        Cow::Owned(vec![0; t.dt.bytes_of(t.count)?])
    } else {
        if let Some(o) = origin {
            if o.base != t.dt.base {
                return Err(MpiError::new(
                    class::TYPE,
                    format!(
                        "the origin datatype {} and the target datatype {} are not of one predefined type",
                        o.name, t.dt.name
                    ),
                ));
            }
        }
        same_bytes(data.len(), &t, "MPI_Accumulate")?;
        data
    };
    if let Some((buf, count)) = &result {
        same_bytes(buf.dt.bytes_of(*count)?, &t, "MPI_Get_accumulate's result")?;
    }
    let Some(pieces) = pieces(win, &t)? else {
        return Ok(());
    };
    let len = pieces.iter().map(|p| p.1).sum();
    let landing = result.map(|(buf, count)| Landing { buf, count, len });
    let acc = Access::Acc {
        pieces,
        data,
        op,
        prim,
        fetch: landing.is_some(),
    };
    queue(win, t.rank, acc, landing)
}

/// MPI_Compare_and_swap (section 11.3.4): one element of a predefined datatype `t.dt`;
/// the old value lands in `result`.
pub fn compare_and_swap(
    win: c_int,
    data: Data,
    compare: Data,
    result: BufMut<'static>,
    t: Target,
) -> Result<()> {
    if t.count != 1 || !t.dt.predefined || t.dt.base.is_none() {
        return Err(MpiError::new(
            class::TYPE,
            "MPI_Compare_and_swap takes one element of a predefined datatype",
        ));
    }
    same_bytes(data.len(), &t, "MPI_Compare_and_swap")?;
    same_bytes(compare.len(), &t, "MPI_Compare_and_swap's compare value")?;
    let Some(pieces) = pieces(win, &t)? else {
        return Ok(());
    };
    let &[(at, len)] = &pieces[..] else {
        return Err(MpiError::new(
            class::TYPE,
            "MPI_Compare_and_swap's element is not contiguous",
        ));
    };
    queue(
        win,
        t.rank,
        Access::Cas { at, compare, data },
        Some(Landing {
            buf: result,
            count: 1,
            len,
        }),
    )
}
