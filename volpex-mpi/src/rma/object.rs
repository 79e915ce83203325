//! Window objects (MPI-3.1 sections 11.2 and 6.7.4): creation and freeing, attributes,
//! names, groups, and the guard that answers a window call's errors with the window's
//! handler. What an entry holds is `crate::window`'s.
//!
//! Owns these operations on the table's entries; must never touch the window's memory
//! (`sync` does, through `batch`) nor communicate but to make and free one.

use std::collections::BTreeMap;
use std::os::raw::c_int;

use parking_lot::Mutex;

use crate::error::{MpiError, Result};
use crate::handles::{class, NULL};
use crate::state;
use crate::window::{
    key, Epoch, Fixed, WinEntry, FLAVOR_ALLOCATE, FLAVOR_CREATE, FLAVOR_DYNAMIC, MODEL_UNIFIED,
};

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
    // MPI-3.1 section 11.2.1: `no_locks` says the window is never locked.
    let locks = !info.iter().any(|(k, v)| k == "no_locks" && v == "true");
    let mine = [size as u64, disp_unit as u64, u64::from(locks)];
    let mut all = vec![0u64; 3 * comm.size() as usize];
    comm.all_gather_into(&mine[..], &mut all[..])?;
    let peers = all.chunks(3).map(|c| (c[0], c[1])).collect();
    let lockable: Vec<i32> = (0..comm.size())
        .filter(|&r| all[3 * r as usize + 2] != 0)
        .collect();
    let dup = crate::comm::dup(comm_h)?;
    let errhandler = state::with(|s| Ok(s.comms.get(comm_h)?.errhandler))?;
    // Where passive targets acknowledge requests without an answer (`rma::passive`).
    let acks = match lockable.is_empty() {
        true => None,
        false => Some(state::comm(dup)?.duplicate()),
    };
    let entry = WinEntry {
        comm: dup,
        acks: acks.clone(),
        base,
        size,
        disp_unit: disp_unit as usize,
        owned,
        peers,
        lockable,
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
        // One block of memory only this process stores into (not a shared or dynamic
        // window's), whose gets' answers may be lent to the log where replicated.
        let replicated = state::with(|s| Ok(s.universe.as_ref().map_or(1, |u| u.replicas())))? > 1;
        let lends = replicated && (flavor == FLAVOR_CREATE || flavor == FLAVOR_ALLOCATE);
        let acks = acks.ok_or_else(|| {
            MpiError::new(
                class::INTERN,
                "a lockable window without its acknowledgement communicator",
            )
        })?;
        super::passive::register(h, state::comm(dup)?, acks, lends)?;
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
pub fn free(win: &mut c_int, mem: &'static super::passive::Memory) -> Result<Option<usize>> {
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
    let wcomm = state::comm(comm)?;
    let lockable = with(h, |e| Ok(e.lockable.clone()))?;
    super::passive::close(&wcomm, &lockable)?;
    super::passive::barrier(&wcomm, mem)?;
    super::passive::unregister(h)?;
    for r in ATTACHED.lock().iter_mut() {
        if r.as_ref().is_some_and(|r| r.win == h) {
            *r = None;
        }
    }
    let e = state::with(|s| s.wins.remove(h))?;
    let mut c = e.comm;
    crate::comm::free(&mut c)?;
    if let Some(acks) = e.acks {
        acks.free();
    }
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

/// Memory attached to a dynamic window (MPI_Win_attach).
struct Region {
    win: c_int,
    base: usize,
    size: usize,
}

/// Every region attached so far, in attach order (a detached one leaves its place
/// empty): the k-th attach of the program is region k in every replica.
static ATTACHED: Mutex<Vec<Option<Region>>> = Mutex::new(Vec::new());

/// Where window addresses start: region k's bytes are at `WINDOW_ADDRESSES + (k <<
/// REGION_BITS)` on.
const WINDOW_ADDRESSES: u64 = 1 << 62;
const REGION_BITS: u32 = 40;

/// MPI_Win_attach (section 11.2.4): `size` bytes at `base` join dynamic window `win`.
pub fn attach(win: c_int, base: usize, size: usize) -> Result<()> {
    let flavor = with(win, |e| Ok(e.fixed.flavor))?;
    if flavor != FLAVOR_DYNAMIC {
        return Err(MpiError::new(
            class::RMA_FLAVOR,
            "MPI_Win_attach on a window not made by MPI_Win_create_dynamic",
        ));
    }
    if size as u64 >= 1 << REGION_BITS {
        return Err(MpiError::new(
            class::SIZE,
            format!("attaching {size} bytes: at most 2^{REGION_BITS} - 1 at once"),
        ));
    }
    let mut all = ATTACHED.lock();
    if all.len() as u64 >= (1 << (62 - REGION_BITS)) - 1 {
        return Err(MpiError::new(
            class::NO_MEM,
            "too many MPI_Win_attach calls",
        ));
    }
    all.push(Some(Region { win, base, size }));
    Ok(())
}

/// MPI_Win_detach: the region attached to `win` at `base` leaves it.
pub fn detach(win: c_int, base: usize) -> Result<()> {
    with(win, |_| Ok(()))?;
    let mut all = ATTACHED.lock();
    let r = all
        .iter_mut()
        .find(|r| r.as_ref().is_some_and(|r| r.win == win && r.base == base))
        .ok_or_else(|| {
            MpiError::new(
                class::ARG,
                "MPI_Win_detach of memory not attached to the window",
            )
        })?;
    *r = None;
    Ok(())
}

/// MPI_Get_address of `at`: inside memory attached to a dynamic window, its window
/// address, the same in every replica (a program sends it to origins as a target
/// displacement, and replicas of one process have their memory at different
/// addresses); elsewhere the address itself.
pub fn address(at: usize) -> isize {
    let all = ATTACHED.lock();
    for (k, r) in all.iter().enumerate() {
        if let Some(r) = r {
            if at >= r.base && at - r.base < r.size.max(1) {
                let virt = WINDOW_ADDRESSES + ((k as u64) << REGION_BITS) + (at - r.base) as u64;
                return virt as isize;
            }
        }
    }
    at as isize
}

/// The regions attached to dynamic window `win`, as (window address, address, bytes);
/// `None` for a window of another flavor.
pub fn attached(win: c_int) -> Result<Option<Vec<(u64, usize, usize)>>> {
    if with(win, |e| Ok(e.fixed.flavor))? != FLAVOR_DYNAMIC {
        return Ok(None);
    }
    let all = ATTACHED.lock();
    Ok(Some(
        all.iter()
            .enumerate()
            .filter_map(|(k, r)| {
                let r = r.as_ref().filter(|r| r.win == win)?;
                Some((
                    WINDOW_ADDRESSES + ((k as u64) << REGION_BITS),
                    r.base,
                    r.size,
                ))
            })
            .collect(),
    ))
}
