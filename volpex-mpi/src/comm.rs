//! Communicators and groups (MPI-3.1 chapter 6) and the predefined attributes of
//! `MPI_COMM_WORLD` (section 8.1.2), over `volpex::Communicator` and `volpex::Group`.
//!
//! Creating a communicator is collective and happens in the same order on every member,
//! so every replica of every member names the new one alike (the volpex library derives
//! its context from the parent's); a new communicator inherits its parent's error handler.

use std::os::raw::c_int;

use volpex::Group;

use crate::error::{MpiError, Result};
use crate::handles::{self, attr, class, CONGRUENT, IDENT, NULL, SIMILAR, UNDEFINED, UNEQUAL};
use crate::state::{self, CommEntry};

/// MPI_Comm_size.
pub fn size(comm: c_int) -> Result<c_int> {
    state::with(|s| Ok(s.comms.get(comm)?.comm.size()))
}

/// MPI_Comm_rank.
pub fn rank(comm: c_int) -> Result<c_int> {
    state::with(|s| Ok(s.comms.get(comm)?.comm.rank()))
}

fn add(parent: c_int, comm: volpex::Communicator, name: &str) -> Result<c_int> {
    state::with(|s| {
        let errhandler = s.comms.get(parent)?.errhandler;
        Ok(s.comms.insert(CommEntry {
            comm,
            errhandler,
            name: name.into(),
            topo: None,
            attrs: Vec::new(),
        }))
    })
}

/// MPI_Comm_dup: the copy keeps the topology, and the attributes whose copy function
/// says so (MPI-3.1 section 6.7.2).
pub fn dup(comm: c_int) -> Result<c_int> {
    let c = state::comm(comm)?.duplicate();
    let h = add(comm, c, "")?;
    let (topo, attrs) = state::with(|s| {
        let e = s.comms.get(comm)?;
        let attrs: Vec<(c_int, usize, state::Keyval)> = e
            .attrs
            .iter()
            .filter_map(|&(k, v)| s.keyvals.get(k).ok().map(|kv| (k, v, *kv)))
            .collect();
        Ok((e.topo.clone(), attrs))
    })?;
    let mut copied = Vec::new();
    for (k, v, kv) in attrs {
        if let Some(f) = kv.copy {
            match crate::ffi::raw::call_copy_attr(f, comm, k, kv.extra, v) {
                (0, Some(nv)) => copied.push((k, nv)),
                (0, None) => {}
                (code, _) => {
                    return Err(MpiError::new(
                        class::OTHER,
                        format!("the copy function of attribute key {k:#x} failed with {code}"),
                    ))
                }
            }
        }
    }
    state::with(|s| {
        let e = s.comms.get_mut(h)?;
        e.topo = topo;
        e.attrs = copied;
        Ok(h)
    })
}

/// MPI_Comm_split: MPI_COMM_NULL for MPI_UNDEFINED.
pub fn split(comm: c_int, color: c_int, key: c_int) -> Result<c_int> {
    let color = match color {
        UNDEFINED => None,
        c if c >= 0 => Some(c),
        c => return Err(MpiError::arg(format!("invalid color {c}"))),
    };
    match state::comm(comm)?.split_by_color_with_key(color, key)? {
        Some(c) => add(comm, c, ""),
        None => Ok(NULL),
    }
}

/// MPI_Comm_create: MPI_COMM_NULL at processes outside `group`.
pub fn create(comm: c_int, group: c_int) -> Result<c_int> {
    let c = state::comm(comm)?;
    let g = state::with(|s| s.groups.get(group).cloned())?;
    match c.create(&g) {
        Some(n) => add(comm, n, ""),
        None => Ok(NULL),
    }
}

/// MPI_Comm_free: the delete functions of its attributes run first.
pub fn free(comm: &mut c_int) -> Result<()> {
    let keys: Vec<c_int> = state::with(|s| {
        if *comm == handles::COMM_WORLD || *comm == handles::COMM_SELF {
            return Err(MpiError::new(
                class::COMM,
                "a predefined communicator cannot be freed",
            ));
        }
        Ok(s.comms.get(*comm)?.attrs.iter().map(|a| a.0).collect())
    })?;
    for k in keys {
        delete_attr(*comm, k)?;
    }
    state::with(|s| s.comms.remove(*comm).map(drop))?;
    *comm = NULL;
    Ok(())
}

/// MPI_Comm_create_keyval.
pub fn create_keyval(kv: state::Keyval) -> Result<c_int> {
    state::with(|s| Ok(s.keyvals.insert(kv)))
}

/// MPI_Comm_free_keyval: the key stays for the attributes that use it; the handle is
/// cleared.
pub fn free_keyval(k: &mut c_int) -> Result<()> {
    state::with(|s| s.keyvals.get(*k).map(drop))?;
    *k = handles::NULL;
    Ok(())
}

/// MPI_Comm_set_attr: replaces (deleting the old value) or adds.
pub fn set_attr(comm: c_int, key: c_int, value: usize) -> Result<()> {
    let had = state::with(|s| {
        s.keyvals.get(key)?;
        Ok(s.comms.get(comm)?.attrs.iter().any(|a| a.0 == key))
    })?;
    if had {
        delete_attr(comm, key)?;
    }
    state::with(|s| {
        s.comms.get_mut(comm)?.attrs.push((key, value));
        Ok(())
    })
}

/// MPI_Comm_delete_attr: calls the key's delete function and removes the attribute.
pub fn delete_attr(comm: c_int, key: c_int) -> Result<()> {
    let (value, kv) = state::with(|s| {
        let kv = *s.keyvals.get(key)?;
        let v = s
            .comms
            .get(comm)?
            .attrs
            .iter()
            .find(|a| a.0 == key)
            .map(|a| a.1)
            .ok_or_else(|| MpiError::new(class::KEYVAL, format!("no attribute {key:#x} here")))?;
        Ok((v, kv))
    })?;
    if let Some(f) = kv.delete {
        let code = crate::ffi::raw::call_delete_attr(f, comm, key, value, kv.extra);
        if code != 0 {
            return Err(MpiError::new(
                class::OTHER,
                format!("the delete function of attribute key {key:#x} failed with {code}"),
            ));
        }
    }
    state::with(|s| {
        s.comms.get_mut(comm)?.attrs.retain(|a| a.0 != key);
        Ok(())
    })
}

/// A user attribute's value: Ok(None) when not set.
pub fn user_attr(comm: c_int, key: c_int) -> Result<Option<usize>> {
    state::with(|s| {
        s.keyvals.get(key)?;
        Ok(s.comms
            .get(comm)?
            .attrs
            .iter()
            .find(|a| a.0 == key)
            .map(|a| a.1))
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

/// MPI_Comm_compare.
pub fn compare(a: c_int, b: c_int) -> Result<c_int> {
    state::with(|s| {
        let (ca, cb) = (&s.comms.get(a)?.comm, &s.comms.get(b)?.comm);
        if a == b {
            return Ok(IDENT);
        }
        let world = world_group(s)?;
        Ok(match compare_groups(&ca.group(), &cb.group(), &world) {
            IDENT => CONGRUENT,
            other => other,
        })
    })
}

/// MPI_Comm_group.
pub fn group(comm: c_int) -> Result<c_int> {
    state::with(|s| {
        let g = s.comms.get(comm)?.comm.group();
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
/// MPI_LASTUSEDCODE's value.
pub static LASTUSEDCODE_VALUE: c_int = class::LASTCODE;

/// MPI_Comm_get_attr for the predefined keys: where the value lives, or None (flag
/// false) for a key without a value.
pub fn get_attr(comm: c_int, key: c_int) -> Result<Option<&'static c_int>> {
    state::with(|s| s.comms.get(comm).map(drop))?;
    Ok(Some(match key {
        attr::TAG_UB => &TAG_UB_VALUE,
        attr::HOST => &HOST_VALUE,
        attr::IO => &IO_VALUE,
        attr::WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL_VALUE,
        attr::APPNUM => &APPNUM_VALUE,
        attr::LASTUSEDCODE => &LASTUSEDCODE_VALUE,
        attr::UNIVERSE_SIZE => return Ok(None),
        k => {
            return Err(MpiError::new(
                class::KEYVAL,
                format!("invalid attribute key {k:#x}"),
            ))
        }
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
