//! Window objects (MPI-3.1 sections 11.2 and 6.7.4): creation and freeing, attributes,
//! names, groups, and the guard that answers a window call's errors with the window's
//! handler. What an entry holds is `crate::window`'s.
//!
//! Owns these operations on the table's entries; must never touch the window's memory
//! (`sync` does, through `batch`) nor communicate but to make and free one.

use std::collections::BTreeMap;
use std::os::raw::c_int;

use crate::error::{MpiError, Result};
use crate::handles::{class, NULL};
use crate::state;
use crate::window::{key, Epoch, Fixed, WinEntry, MODEL_UNIFIED};

/// Makes a window over `comm_h` (collective): `base` and `size` the memory, whose owner
/// `owned` says.
pub fn create(
    base: usize,
    size: usize,
    disp_unit: c_int,
    info: Vec<(String, String)>,
    comm_h: c_int,
    flavor: c_int,
    owned: bool,
) -> Result<c_int> {
    let comm = state::intra(comm_h, "MPI_Win_create")?;
    if disp_unit <= 0 {
        return Err(MpiError::new(
            class::DISP,
            format!("displacement unit {disp_unit}: it must be positive"),
        ));
    }
    let mine = [size as u64, disp_unit as u64];
    let mut all = vec![0u64; 2 * comm.size() as usize];
    comm.all_gather_into(&mine[..], &mut all[..])?;
    let peers = all.chunks(2).map(|c| (c[0], c[1])).collect();
    let dup = crate::comm::dup(comm_h)?;
    let errhandler = state::with(|s| Ok(s.comms.get(comm_h)?.errhandler))?;
    // MPI-3.1 section 11.2.1: `no_locks` says the window is never locked.
    let locks = !info.iter().any(|(k, v)| k == "no_locks" && v == "true");
    let entry = WinEntry {
        comm: dup,
        base,
        size,
        disp_unit: disp_unit as usize,
        owned,
        peers,
        fixed: Box::new(Fixed {
            size: size as isize,
            disp_unit,
            flavor,
            model: MODEL_UNIFIED,
        }),
        name: String::new(),
        errhandler,
        attrs: Vec::new(),
        info,
        epoch: Epoch::default(),
        queued: BTreeMap::new(),
        landings: BTreeMap::new(),
    };
    let h = state::with(|s| Ok(s.wins.insert(entry)))?;
    if locks {
        super::passive::register(h, state::comm(dup)?)?;
    }
    Ok(h)
}

/// Where window `win`'s memory is: (address, bytes).
pub fn memory(win: c_int) -> Result<(usize, usize)> {
    with(win, |e| Ok((e.base, e.size)))
}

/// Runs `f` on window `win`'s entry.
pub fn with<R>(win: c_int, f: impl FnOnce(&mut WinEntry) -> Result<R>) -> Result<R> {
    state::with(|s| f(s.wins.get_mut(win)?))
}

/// MPI_Win_free (section 11.2.5): collective; every epoch must be over. Deletes the
/// attributes (calling their delete functions), then a barrier, so that no process frees
/// memory another may still access. Returns the memory to free if it was ours.
pub fn free(win: &mut c_int, mem: &super::passive::Memory) -> Result<Option<usize>> {
    let h = *win;
    let (comm, busy) = with(h, |e| {
        Ok((
            e.comm,
            e.epoch.access.is_some()
                || e.epoch.exposure.is_some()
                || !e.queued.is_empty()
                || !e.epoch.locks.is_empty(),
        ))
    })?;
    if busy {
        return Err(MpiError::new(
            class::RMA_SYNC,
            "MPI_Win_free with an access, exposure or lock epoch open (end it first)",
        ));
    }
    let keys: Vec<c_int> = with(h, |e| Ok(e.attrs.iter().map(|a| a.0).collect()))?;
    for k in keys {
        delete_attr(h, k)?;
    }
    super::passive::barrier(&state::comm(comm)?, mem)?;
    super::passive::unregister(h);
    let e = state::with(|s| s.wins.remove(h))?;
    let mut c = e.comm;
    crate::comm::free(&mut c)?;
    *win = NULL;
    Ok(e.owned.then_some(e.base))
}

/// A predefined attribute: where its value is (C gets a pointer to it, but MPI_WIN_BASE,
/// which is the base itself), and the value (Fortran gets it).
pub fn fixed_attr(win: c_int, key: c_int) -> Result<Option<(usize, isize)>> {
    with(win, |e| {
        let f = &*e.fixed;
        Ok(match key {
            key::BASE => Some((e.base, e.base as isize)),
            key::SIZE => Some((&f.size as *const isize as usize, f.size)),
            key::DISP_UNIT => Some((&f.disp_unit as *const c_int as usize, f.disp_unit as isize)),
            key::CREATE_FLAVOR => Some((&f.flavor as *const c_int as usize, f.flavor as isize)),
            key::MODEL => Some((&f.model as *const c_int as usize, f.model as isize)),
            _ => None,
        })
    })
}

/// Whether `key` is one of the predefined window attributes.
pub fn is_fixed(key: c_int) -> bool {
    (key::BASE..=key::MODEL).contains(&key)
}

fn win_attrs(s: &mut state::State, win: c_int) -> Result<&mut Vec<(c_int, usize)>> {
    Ok(&mut s.wins.get_mut(win)?.attrs)
}

/// MPI_Win_set_attr (section 6.7.4): replaces (deleting the old value first) or adds;
/// the predefined attributes cannot be set.
pub fn set_attr(win: c_int, key: c_int, value: usize) -> Result<()> {
    if is_fixed(key) {
        return Err(MpiError::new(
            class::KEYVAL,
            "a predefined window attribute cannot be set",
        ));
    }
    crate::comm::set_attr_in(win_attrs, win, key, value)
}

/// MPI_Win_get_attr of a key the program made.
pub fn user_attr(win: c_int, key: c_int) -> Result<Option<usize>> {
    crate::comm::user_attr_in(win_attrs, win, key)
}

/// MPI_Win_delete_attr: calls the key's delete function, then removes the attribute.
pub fn delete_attr(win: c_int, key: c_int) -> Result<()> {
    crate::comm::delete_attr_in(win_attrs, win, key)
}

/// MPI_Win_get_group: a new group of the window's processes.
pub fn group(win: c_int) -> Result<c_int> {
    let comm = with(win, |e| Ok(e.comm))?;
    crate::comm::group(comm)
}

/// Runs the body of window function `func` and answers for its errors with window
/// `win`'s error handler (MPI_COMM_WORLD's when `win` is not a window).
pub fn guard(func: &'static str, win: c_int, body: impl FnOnce() -> Result<()>) -> c_int {
    crate::errhandler::guard_with(func, body, || {
        let own = state::with(|s| {
            Ok(match s.wins.get(win) {
                Ok(w) if win != NULL => Some(s.handler(w.errhandler, win)),
                _ => None,
            })
        });
        // MPI_COMM_WORLD's, asked outside the state's lock (which is not reentrant).
        own.ok()
            .flatten()
            .unwrap_or_else(|| state::errhandler(crate::handles::COMM_WORLD))
    })
}
