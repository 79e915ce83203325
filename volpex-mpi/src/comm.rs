//! Communicators and groups (MPI-3.1 chapter 6): intra- and inter-communicators, their
//! creation, comparison and freeing, info hints (section 6.4.4), attributes with their
//! copy and delete callbacks (section 6.7), names (section 6.8), and the predefined
//! attributes of `MPI_COMM_WORLD` (section 8.1.2), over `volpex::Communicator`,
//! `volpex::InterCommunicator` and `volpex::Group`.
//!
//! Creating a communicator is collective and happens in the same order on every member,
//! so every replica of every member names the new one alike (the volpex library derives
//! its context from the parent's, or, for `MPI_Comm_create_group`, from the group and the
//! tag); a new communicator inherits its parent's error handler. An inter-communicator's
//! entry keeps its point-to-point face as its communicator, so point-to-point calls treat
//! both kinds alike; everything else asks `inter` first.

use std::os::raw::c_int;
use std::sync::atomic::Ordering;

use volpex::{Communicator, Group, InterCommunicator};

use crate::errhandler::LASTUSEDCODE_VALUE;
use crate::error::{MpiError, Result};
use crate::handles::{
    self, attr, class, COMM_TYPE_SHARED, CONGRUENT, IDENT, NULL, SIMILAR, UNDEFINED, UNEQUAL,
};
use crate::info::Pairs;
use crate::request;
use crate::state::{self, Active, CommEntry};

/// MPI_Comm_size: the local group's size.
pub fn size(comm: c_int) -> Result<c_int> {
    state::with(|s| {
        let e = s.comms.get(comm)?;
        Ok(e.inter.as_ref().map_or(e.comm.size(), |ic| ic.size()))
    })
}

/// MPI_Comm_rank: the rank in the local group.
pub fn rank(comm: c_int) -> Result<c_int> {
    state::with(|s| {
        let e = s.comms.get(comm)?;
        Ok(e.inter.as_ref().map_or(e.comm.rank(), |ic| ic.rank()))
    })
}

/// MPI_Comm_test_inter.
pub fn is_inter(comm: c_int) -> Result<bool> {
    Ok(state::inter(comm)?.is_some())
}

/// MPI_Comm_remote_size: MPI_ERR_COMM for an intra-communicator.
pub fn remote_size(comm: c_int) -> Result<c_int> {
    Ok(need_inter(comm, "MPI_Comm_remote_size")?.remote_size())
}

/// MPI_Comm_remote_group.
pub fn remote_group(comm: c_int) -> Result<c_int> {
    let g = need_inter(comm, "MPI_Comm_remote_group")?.remote_group();
    state::with(|s| Ok(s.groups.insert(g)))
}

fn need_inter(comm: c_int, what: &str) -> Result<InterCommunicator> {
    state::inter(comm)?.ok_or_else(|| {
        MpiError::new(
            class::COMM,
            format!("{what} needs an inter-communicator; {comm:#x} is an intra-communicator"),
        )
    })
}

/// A new entry made from `parent` (whose error handler it inherits).
fn add_entry(parent: c_int, mut e: CommEntry) -> Result<c_int> {
    state::with(|s| {
        e.errhandler = s.comms.get(parent)?.errhandler;
        Ok(s.comms.insert(e))
    })
}

fn add(parent: c_int, comm: Communicator) -> Result<c_int> {
    add_entry(
        parent,
        CommEntry::intra(comm, handles::ERRORS_ARE_FATAL, ""),
    )
}

fn add_inter(parent: c_int, ic: InterCommunicator) -> Result<c_int> {
    let mut e = CommEntry::intra(ic.point_to_point().clone(), handles::ERRORS_ARE_FATAL, "");
    e.inter = Some(ic);
    add_entry(parent, e)
}

/// MPI_Comm_dup: the copy keeps the topology, the info hints, and the attributes whose
/// copy function says so (MPI-3.1 section 6.4.2); an inter-communicator's copy is one
/// too.
pub fn dup(comm: c_int) -> Result<c_int> {
    let h = match state::inter(comm)? {
        Some(ic) => add_inter(comm, ic.duplicate())?,
        None => add(comm, state::comm(comm)?.duplicate())?,
    };
    state::with(|s| {
        let e = s.comms.get(comm)?;
        let (topo, info) = (e.topo.clone(), e.info.clone());
        let n = s.comms.get_mut(h)?;
        n.topo = topo;
        n.info = info;
        Ok(())
    })?;
    if let Err(e) = copy_attrs(comm, h) {
        let mut h = h;
        let _ = free(&mut h);
        return Err(e);
    }
    Ok(h)
}

/// Runs the copy function of every attribute of `from` (in the order set) and gives `to`
/// the values they return (MPI-3.1 section 6.7.2); a copy function's error code is the
/// call's.
fn copy_attrs(from: c_int, to: c_int) -> Result<()> {
    let attrs = state::with(|s| {
        let e = s.comms.get(from)?;
        Ok(e.attrs
            .iter()
            .filter_map(|&(k, v)| s.keyvals.get(k).ok().map(|kv| (k, v, *kv)))
            .collect::<Vec<(c_int, usize, state::Keyval)>>())
    })?;
    for (k, v, kv) in attrs {
        let Some(f) = kv.copy else { continue };
        match crate::raw::copy_attr(f, from, k, kv.extra, v) {
            (class::SUCCESS, Some(nv)) => state::with(|s| {
                s.comms.get_mut(to)?.attrs.push((k, nv));
                Ok(())
            })?,
            (class::SUCCESS, None) => {}
            (code, _) => {
                return Err(MpiError::new(
                    code,
                    format!("the copy function of attribute key {k:#x} failed with {code}"),
                ))
            }
        }
    }
    Ok(())
}

/// MPI_Comm_dup_with_info: MPI_Comm_dup, with `info`'s hints instead of the old ones.
pub fn dup_with_info(comm: c_int, info: c_int) -> Result<c_int> {
    let hints = crate::info::pairs(info)?;
    let h = dup(comm)?;
    state::with(|s| {
        s.comms.get_mut(h)?.info = hints;
        Ok(h)
    })
}

/// MPI_Comm_idup (MPI-3.1 section 6.4.2): a duplicate needs no message here (its
/// context is derived), so it is made at once and the request is complete.
pub fn idup(comm: c_int) -> Result<(c_int, c_int)> {
    let h = dup(comm)?;
    let r = request::add(Active::Done(handles::MpiStatus::new(
        handles::ANY_SOURCE,
        handles::ANY_TAG,
        0,
    )))?;
    Ok((h, r))
}

/// MPI_Comm_set_info: the hints replace the old ones. None changes what this library
/// does; MPI_Comm_get_info gives them back (MPI-3.1 section 6.4.4 lets it return only
/// those it uses; MPICH returns those it knows, we return what was set).
pub fn set_info(comm: c_int, info: c_int) -> Result<()> {
    let hints = crate::info::pairs(info)?;
    state::with(|s| {
        s.comms.get_mut(comm)?.info = hints;
        Ok(())
    })
}

/// MPI_Comm_get_info: a new info object with the communicator's hints.
pub fn get_info(comm: c_int) -> Result<c_int> {
    let hints: Pairs = state::with(|s| Ok(s.comms.get(comm)?.info.clone()))?;
    crate::info::from_pairs(hints)
}

fn color_of(color: c_int) -> Result<Option<i32>> {
    match color {
        UNDEFINED => Ok(None),
        c if c >= 0 => Ok(Some(c)),
        c => Err(MpiError::arg(format!("invalid color {c}"))),
    }
}

/// MPI_Comm_split: MPI_COMM_NULL for MPI_UNDEFINED; on an inter-communicator, a new one
/// between the members of each color (MPI-3.1 section 6.4.2).
pub fn split(comm: c_int, color: c_int, key: c_int) -> Result<c_int> {
    let color = color_of(color)?;
    if let Some(ic) = state::inter(comm)? {
        return match ic.split(color, key)? {
            Some(n) => add_inter(comm, n),
            None => Ok(NULL),
        };
    }
    match state::comm(comm)?.split_by_color_with_key(color, key)? {
        Some(c) => add(comm, c),
        None => Ok(NULL),
    }
}

/// MPI_Comm_split_type (MPI-3.1 section 6.4.2): MPI_COMM_TYPE_SHARED groups the ranks
/// of one host (see `volpex::Communicator::split_by_host`), MPI_UNDEFINED gives
/// MPI_COMM_NULL; the info's hints go to the new communicator.
pub fn split_type(comm: c_int, kind: c_int, key: c_int, info: c_int) -> Result<c_int> {
    let c = state::intra(comm, "MPI_Comm_split_type")?;
    let hints = crate::info::pairs(info)?;
    let made = match kind {
        COMM_TYPE_SHARED => c.split_by_host(key)?,
        UNDEFINED => c.split_by_color_with_key(None, key)?,
        k => {
            return Err(MpiError::arg(format!(
                "invalid split type {k} (MPI_COMM_TYPE_SHARED or MPI_UNDEFINED)"
            )))
        }
    };
    match made {
        Some(n) => {
            let h = add(comm, n)?;
            state::with(|s| {
                s.comms.get_mut(h)?.info = hints;
                Ok(h)
            })
        }
        None => Ok(NULL),
    }
}

/// Refuses a group with a process outside `comm`'s group (MPI_ERR_GROUP).
fn check_subgroup(g: &Group, of: &Group) -> Result<()> {
    let ranks: Vec<i32> = (0..g.size()).collect();
    if let Some(i) = g
        .translate_ranks(&ranks, of)
        .iter()
        .position(Option::is_none)
    {
        return Err(MpiError::new(
            class::GROUP,
            format!("rank {i} of the group is not in the communicator's group"),
        ));
    }
    Ok(())
}

/// MPI_Comm_create: MPI_COMM_NULL at processes outside `group`; on an
/// inter-communicator, `group` is a subgroup of the local group (MPI-3.1 section 6.4.2).
pub fn create(comm: c_int, group: c_int) -> Result<c_int> {
    let g = state::with(|s| s.groups.get(group).cloned())?;
    if let Some(ic) = state::inter(comm)? {
        check_subgroup(&g, &ic.group())?;
        return match ic.create(&g)? {
            Some(n) => add_inter(comm, n),
            None => Ok(NULL),
        };
    }
    let c = state::comm(comm)?;
    check_subgroup(&g, &c.group())?;
    match c.create(&g) {
        Some(n) => add(comm, n),
        None => Ok(NULL),
    }
}

/// MPI_Comm_create_group (MPI-3.1 section 6.4.2): collective over the members of
/// `group` only, told apart from concurrent calls by `tag`; MPI_COMM_NULL for a caller
/// outside the group.
pub fn create_group(comm: c_int, group: c_int, tag: c_int) -> Result<c_int> {
    let c = state::intra(comm, "MPI_Comm_create_group")?;
    if !(0..=volpex::TAG_UB).contains(&tag) {
        return Err(MpiError::new(class::TAG, format!("invalid tag {tag}")));
    }
    let g = state::with(|s| s.groups.get(group).cloned())?;
    check_subgroup(&g, &c.group())?;
    match c.create_from_group(&g, tag) {
        Some(n) => add(comm, n),
        None => Ok(NULL),
    }
}

/// MPI_Intercomm_create (MPI-3.1 section 6.6.2): `peer` and `remote_leader` matter at
/// the local leader only.
pub fn intercomm_create(
    local: c_int,
    local_leader: c_int,
    peer: c_int,
    remote_leader: c_int,
    tag: c_int,
) -> Result<c_int> {
    let lc = state::intra(local, "MPI_Intercomm_create")?;
    if local_leader < 0 || local_leader >= lc.size() {
        return Err(MpiError::new(
            class::RANK,
            format!(
                "local leader {local_leader} is not a rank of the local communicator (size {})",
                lc.size()
            ),
        ));
    }
    let pc = if lc.rank() == local_leader {
        let pc = state::intra(peer, "MPI_Intercomm_create's peer communicator")?;
        if remote_leader < 0 || remote_leader >= pc.size() {
            return Err(MpiError::new(
                class::RANK,
                format!(
                    "remote leader {remote_leader} is not a rank of the peer communicator (size {})",
                    pc.size()
                ),
            ));
        }
        if !(0..=volpex::TAG_UB).contains(&tag) {
            return Err(MpiError::new(class::TAG, format!("invalid tag {tag}")));
        }
        Some(pc)
    } else {
        None
    };
    let ic = InterCommunicator::new(
        &lc,
        local_leader,
        pc.as_ref().map(|p| (p, remote_leader)),
        tag,
    )?;
    add_inter(local, ic)
}

/// MPI_Intercomm_merge (MPI-3.1 section 6.6.2): the group passing `high` false first.
pub fn intercomm_merge(comm: c_int, high: bool) -> Result<c_int> {
    let ic = need_inter(comm, "MPI_Intercomm_merge")?;
    add(comm, ic.merge(high)?)
}

/// MPI_Comm_free: the delete functions of its attributes run first, the attribute set
/// last first (MPI-3.1 section 6.7.3; the order MPICH uses too).
pub fn free(comm: &mut c_int) -> Result<()> {
    if *comm == handles::COMM_WORLD || *comm == handles::COMM_SELF {
        return Err(MpiError::new(
            class::COMM,
            "a predefined communicator cannot be freed",
        ));
    }
    delete_all_attrs(*comm)?;
    let entry = state::with(|s| s.comms.remove(*comm))?;
    entry.comm.free();
    *comm = NULL;
    Ok(())
}

/// Deletes every attribute of `comm`, the one set last first (MPI_Comm_free, and
/// MPI_Finalize on MPI_COMM_SELF: MPI-3.1 section 8.7.1 says in the reverse order they
/// were set).
pub fn delete_all_attrs(comm: c_int) -> Result<()> {
    let keys: Vec<c_int> =
        state::with(|s| Ok(s.comms.get(comm)?.attrs.iter().map(|a| a.0).collect()))?;
    for k in keys.into_iter().rev() {
        delete_attr(comm, k)?;
    }
    Ok(())
}

/// MPI_Comm_create_keyval.
pub fn create_keyval(kv: state::Keyval) -> Result<c_int> {
    state::with(|s| Ok(s.keyvals.insert(kv)))
}

/// MPI_Comm_free_keyval: the key stays for the attributes that use it (MPI-3.1 section
/// 6.7.2); the handle becomes MPI_KEYVAL_INVALID.
pub fn free_keyval(k: &mut c_int) -> Result<()> {
    state::with(|s| s.keyvals.get(*k).map(drop))?;
    *k = handles::NULL;
    Ok(())
}

/// Where an object's attributes are kept: its entry's list of (keyval, value), in the
/// order set (a communicator's, a window's).
pub type Attrs = fn(&mut state::State, c_int) -> Result<&mut Vec<(c_int, usize)>>;

fn comm_attrs(s: &mut state::State, comm: c_int) -> Result<&mut Vec<(c_int, usize)>> {
    Ok(&mut s.comms.get_mut(comm)?.attrs)
}

/// MPI_Comm_set_attr: replaces (calling the delete function on the old value first,
/// MPI-3.1 section 6.7.2) or adds.
pub fn set_attr(comm: c_int, key: c_int, value: usize) -> Result<()> {
    set_attr_in(comm_attrs, comm, key, value)
}

/// MPI_Comm_delete_attr: calls the key's delete function and removes the attribute; a
/// delete function's error code is the call's, and the attribute stays.
pub fn delete_attr(comm: c_int, key: c_int) -> Result<()> {
    delete_attr_in(comm_attrs, comm, key)
}

/// A user attribute's value: Ok(None) when not set.
pub fn user_attr(comm: c_int, key: c_int) -> Result<Option<usize>> {
    user_attr_in(comm_attrs, comm, key)
}

/// `set_attr` on object `obj`'s attributes (`attrs`).
pub fn set_attr_in(attrs: Attrs, obj: c_int, key: c_int, value: usize) -> Result<()> {
    let had = state::with(|s| {
        s.keyvals.get(key)?;
        Ok(attrs(s, obj)?.iter().any(|a| a.0 == key))
    })?;
    if had {
        delete_attr_in(attrs, obj, key)?;
    }
    state::with(|s| {
        attrs(s, obj)?.push((key, value));
        Ok(())
    })
}

/// `delete_attr` on object `obj`'s attributes (`attrs`); its delete function gets `obj`.
pub fn delete_attr_in(attrs: Attrs, obj: c_int, key: c_int) -> Result<()> {
    let (value, kv) = state::with(|s| {
        let kv = *s.keyvals.get(key)?;
        let v = attrs(s, obj)?
            .iter()
            .find(|a| a.0 == key)
            .map(|a| a.1)
            .ok_or_else(|| MpiError::new(class::KEYVAL, format!("no attribute {key:#x} here")))?;
        Ok((v, kv))
    })?;
    if let Some(f) = kv.delete {
        let code = crate::raw::delete_attr(f, obj, key, value, kv.extra);
        if code != class::SUCCESS {
            return Err(MpiError::new(
                code,
                format!("the delete function of attribute key {key:#x} failed with {code}"),
            ));
        }
    }
    state::with(|s| {
        attrs(s, obj)?.retain(|a| a.0 != key);
        Ok(())
    })
}

/// `user_attr` on object `obj`'s attributes (`attrs`).
pub fn user_attr_in(attrs: Attrs, obj: c_int, key: c_int) -> Result<Option<usize>> {
    state::with(|s| {
        s.keyvals.get(key)?;
        Ok(attrs(s, obj)?.iter().find(|a| a.0 == key).map(|a| a.1))
    })
}

/// The world ranks of a group's members, in group order.
fn world_ranks(g: &Group, world: &Group) -> Vec<i32> {
    let ranks: Vec<i32> = (0..g.size()).collect();
    g.translate_ranks(&ranks, world)
        .into_iter()
        .map(|r| r.unwrap_or(-1))
        .collect()
}

fn world_group(s: &state::State) -> Result<Group> {
    Ok(s.comms.get(handles::COMM_WORLD)?.comm.group())
}

fn compare_groups(a: &Group, b: &Group, world: &Group) -> c_int {
    let (wa, wb) = (world_ranks(a, world), world_ranks(b, world));
    if wa == wb {
        IDENT
    } else {
        let (mut sa, mut sb) = (wa, wb);
        sa.sort_unstable();
        sb.sort_unstable();
        if sa == sb {
            SIMILAR
        } else {
            UNEQUAL
        }
    }
}

/// The local group of a communicator's entry, and its remote group for an
/// inter-communicator.
fn groups_of(e: &CommEntry) -> (Group, Option<Group>) {
    match &e.inter {
        Some(ic) => (ic.group(), Some(ic.remote_group())),
        None => (e.comm.group(), None),
    }
}

/// MPI_Comm_compare (MPI-3.1 section 6.4.1): an inter-communicator compares its local
/// and its remote group, and is never like an intra-communicator.
pub fn compare(a: c_int, b: c_int) -> Result<c_int> {
    state::with(|s| {
        let (la, ra) = groups_of(s.comms.get(a)?);
        let (lb, rb) = groups_of(s.comms.get(b)?);
        if a == b {
            return Ok(IDENT);
        }
        let world = world_group(s)?;
        let local = compare_groups(&la, &lb, &world);
        let all = match (ra, rb) {
            (None, None) => local,
            (Some(ra), Some(rb)) => local.max(compare_groups(&ra, &rb, &world)),
            _ => UNEQUAL,
        };
        Ok(match all {
            IDENT => CONGRUENT,
            other => other,
        })
    })
}

/// MPI_Comm_group: the local group.
pub fn group(comm: c_int) -> Result<c_int> {
    state::with(|s| {
        let g = groups_of(s.comms.get(comm)?).0;
        Ok(s.groups.insert(g))
    })
}

/// MPI_Group_size.
pub fn group_size(g: c_int) -> Result<c_int> {
    state::with(|s| Ok(s.groups.get(g)?.size()))
}

/// MPI_Group_rank: MPI_UNDEFINED outside the group.
pub fn group_rank(g: c_int) -> Result<c_int> {
    state::with(|s| Ok(s.groups.get(g)?.rank().unwrap_or(UNDEFINED)))
}

fn check_ranks(g: &Group, ranks: &[c_int]) -> Result<()> {
    for (i, &r) in ranks.iter().enumerate() {
        if r < 0 || r >= g.size() {
            return Err(MpiError::new(
                class::RANK,
                format!(
                    "rank {r} (entry {i}) is not in the group of size {}",
                    g.size()
                ),
            ));
        }
        if ranks[..i].contains(&r) {
            return Err(MpiError::new(class::RANK, format!("rank {r} listed twice")));
        }
    }
    Ok(())
}

/// MPI_Group_incl.
pub fn group_incl(g: c_int, ranks: &[c_int]) -> Result<c_int> {
    state::with(|s| {
        let grp = s.groups.get(g)?;
        check_ranks(grp, ranks)?;
        let n = grp.include(ranks);
        Ok(s.groups.insert(n))
    })
}

/// MPI_Group_excl.
pub fn group_excl(g: c_int, ranks: &[c_int]) -> Result<c_int> {
    state::with(|s| {
        let grp = s.groups.get(g)?;
        check_ranks(grp, ranks)?;
        let n = grp.exclude(ranks);
        Ok(s.groups.insert(n))
    })
}

/// MPI_Group_translate_ranks.
pub fn translate_ranks(a: c_int, ranks: &[c_int], b: c_int) -> Result<Vec<c_int>> {
    state::with(|s| {
        let (ga, gb) = (s.groups.get(a)?, s.groups.get(b)?);
        for &r in ranks {
            if r != handles::PROC_NULL && (r < 0 || r >= ga.size()) {
                return Err(MpiError::new(
                    class::RANK,
                    format!("rank {r} is not in the group"),
                ));
            }
        }
        Ok(ga
            .translate_ranks(ranks, gb)
            .into_iter()
            .zip(ranks)
            .map(|(t, &r)| {
                if r == handles::PROC_NULL {
                    r
                } else {
                    t.unwrap_or(UNDEFINED)
                }
            })
            .collect())
    })
}

/// MPI_Group_compare.
pub fn group_compare(a: c_int, b: c_int) -> Result<c_int> {
    state::with(|s| {
        let world = world_group(s)?;
        Ok(compare_groups(s.groups.get(a)?, s.groups.get(b)?, &world))
    })
}

/// Set operations on groups (union, intersection, difference; MPI-3.1 section 6.3.2).
#[derive(Clone, Copy)]
pub enum SetOp {
    /// MPI_Group_union.
    Union,
    /// MPI_Group_intersection.
    Intersection,
    /// MPI_Group_difference.
    Difference,
}

/// A set operation on two groups; order: the first group's, then the second's.
pub fn group_set(a: c_int, b: c_int, how: SetOp) -> Result<c_int> {
    state::with(|s| {
        let world = world_group(s)?;
        let wa = world_ranks(s.groups.get(a)?, &world);
        let wb = world_ranks(s.groups.get(b)?, &world);
        let members: Vec<i32> = match how {
            SetOp::Union => wa
                .iter()
                .copied()
                .chain(wb.iter().copied().filter(|r| !wa.contains(r)))
                .collect(),
            SetOp::Intersection => wa.iter().copied().filter(|r| wb.contains(r)).collect(),
            SetOp::Difference => wa.iter().copied().filter(|r| !wb.contains(r)).collect(),
        };
        let n = world.include(&members);
        Ok(s.groups.insert(n))
    })
}

/// MPI_Group_free.
pub fn group_free(g: &mut c_int) -> Result<()> {
    state::with(|s| s.groups.remove(*g).map(drop))?;
    *g = NULL;
    Ok(())
}

/// MPI_TAG_UB's value.
pub static TAG_UB_VALUE: c_int = volpex::TAG_UB;
/// MPI_HOST's value: no host is special.
pub static HOST_VALUE: c_int = handles::PROC_NULL;
/// MPI_IO's value: every process can do I/O.
pub static IO_VALUE: c_int = handles::ANY_SOURCE;
/// MPI_WTIME_IS_GLOBAL's value: clocks are not synchronized.
pub static WTIME_IS_GLOBAL_VALUE: c_int = 0;
/// MPI_APPNUM's value.
pub static APPNUM_VALUE: c_int = 0;
/// MPI_Comm_get_attr for the predefined keys: where the value lives, or None (flag
/// false) for a key without a value.
pub fn get_attr(comm: c_int, key: c_int) -> Result<Option<*const c_int>> {
    state::with(|s| s.comms.get(comm).map(drop))?;
    Ok(Some(match key {
        attr::TAG_UB => &TAG_UB_VALUE,
        attr::HOST => &HOST_VALUE,
        attr::IO => &IO_VALUE,
        attr::WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL_VALUE,
        attr::APPNUM => &APPNUM_VALUE,
        attr::LASTUSEDCODE => LASTUSEDCODE_VALUE.as_ptr(),
        attr::UNIVERSE_SIZE => return Ok(None),
        k => {
            return Err(MpiError::new(
                class::KEYVAL,
                format!("invalid attribute key {k:#x}"),
            ))
        }
    }))
}

/// The value of predefined attribute `key` (what `get_attr` points to).
pub fn attr_value(comm: c_int, key: c_int) -> Result<Option<c_int>> {
    Ok(get_attr(comm, key)?.map(|_| match key {
        attr::TAG_UB => TAG_UB_VALUE,
        attr::HOST => HOST_VALUE,
        attr::IO => IO_VALUE,
        attr::WTIME_IS_GLOBAL => WTIME_IS_GLOBAL_VALUE,
        attr::APPNUM => APPNUM_VALUE,
        _ => LASTUSEDCODE_VALUE.load(Ordering::Relaxed),
    }))
}

/// MPI_Comm_set_name.
pub fn set_name(comm: c_int, name: String) -> Result<()> {
    state::with(|s| {
        s.comms.get_mut(comm)?.name = name;
        Ok(())
    })
}

/// MPI_Comm_get_name.
pub fn get_name(comm: c_int) -> Result<String> {
    state::with(|s| Ok(s.comms.get(comm)?.name.clone()))
}

/// The ranks `(first, last, stride)` triplets name (MPI_Group_range_incl/excl).
pub fn expand_ranges(g: c_int, ranges: &[[c_int; 3]]) -> Result<Vec<c_int>> {
    let size = group_size(g)?;
    let mut out = Vec::new();
    for (i, &[first, last, stride]) in ranges.iter().enumerate() {
        if stride == 0 {
            return Err(MpiError::arg(format!("range {i} has stride 0")));
        }
        let mut r = first;
        while (stride > 0 && r <= last) || (stride < 0 && r >= last) {
            if r < 0 || r >= size {
                return Err(MpiError::new(
                    class::RANK,
                    format!("range {i} names rank {r}, outside the group"),
                ));
            }
            out.push(r);
            if out.len() > size as usize {
                return Err(MpiError::new(class::RANK, "ranges name a rank twice"));
            }
            r += stride;
        }
    }
    Ok(out)
}
