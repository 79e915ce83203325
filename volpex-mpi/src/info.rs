//! Info objects (MPI-3.1 chapter 9): ordered (key, value) string pairs, their limits
//! (`MPI_MAX_INFO_KEY`, `MPI_MAX_INFO_VAL`) and errors, and `MPI_INFO_ENV` (section
//! 8.1.2's keys, filled at `MPI_Init`).
//!
//! Owns what an info object holds and the checks on keys and values. Must never interpret
//! a hint: the functions that take an info (`MPI_Comm_set_info`, ...) keep or ignore
//! what they are given.

use std::os::raw::c_int;

use crate::error::{MpiError, Result};
use crate::handles::{self, class, MAX_INFO_KEY, MAX_INFO_VAL};
use crate::state;

/// An info object's pairs, in the order their keys were first set.
pub type Pairs = Vec<(String, String)>;

/// MPI_INFO_ENV (MPI-3.1 section 8.1.2): how this process was started, under the keys
/// of MPI_Comm_spawn's info (`command`, `argv`, `maxprocs`, `soft`, `host`, `arch`,
/// `wdir`, `file`, `thread_level`), each only when known. `thread_level` is the level
/// the program asked for, as in MPICH and Open MPI.
pub fn environment(world_size: i32, thread_required: c_int) -> Pairs {
    let mut args = std::env::args();
    let mut env = Vec::new();
    if let Some(cmd) = args.next() {
        env.push(("command".into(), cmd));
        let rest: Vec<String> = args.collect();
        if !rest.is_empty() {
            env.push(("argv".into(), rest.join(" ")));
        }
    }
    env.push(("maxprocs".into(), world_size.to_string()));
    env.push(("soft".into(), world_size.to_string()));
    env.push(("host".into(), crate::types::processor_name()));
    env.push(("arch".into(), std::env::consts::ARCH.into()));
    if let Ok(wd) = std::env::current_dir() {
        env.push(("wdir".into(), wd.to_string_lossy().into_owned()));
    }
    let level = match thread_required {
        handles::THREAD_SINGLE => "MPI_THREAD_SINGLE",
        1 => "MPI_THREAD_FUNNELED",
        handles::THREAD_SERIALIZED => "MPI_THREAD_SERIALIZED",
        _ => "MPI_THREAD_MULTIPLE",
    };
    env.push(("thread_level".into(), level.into()));
    env
}

/// A key as MPI-3.1 chapter 9 allows it: 1 to MPI_MAX_INFO_KEY characters.
fn check_key(key: &str) -> Result<()> {
    if key.is_empty() || key.len() > MAX_INFO_KEY {
        return Err(MpiError::new(
            class::INFO_KEY,
            format!(
                "info key of {} characters (1 to MPI_MAX_INFO_KEY = {MAX_INFO_KEY})",
                key.len()
            ),
        ));
    }
    Ok(())
}

/// MPI_Info_create: an empty info object.
pub fn create() -> Result<c_int> {
    state::with(|s| Ok(s.infos.insert(Vec::new())))
}

/// MPI_Info_set: adds `key` or replaces its value.
pub fn set(h: c_int, key: String, value: String) -> Result<()> {
    check_key(&key)?;
    if value.len() > MAX_INFO_VAL {
        return Err(MpiError::new(
            class::INFO_VALUE,
            format!(
                "info value of {} characters for {key:?} (at most MPI_MAX_INFO_VAL = {MAX_INFO_VAL})",
                value.len()
            ),
        ));
    }
    state::with(|s| {
        let info = s.infos.get_mut(h)?;
        match info.iter_mut().find(|(k, _)| *k == key) {
            Some(kv) => kv.1 = value,
            None => info.push((key, value)),
        }
        Ok(())
    })
}

/// MPI_Info_get: the value of `key`, if set.
pub fn get(h: c_int, key: &str) -> Result<Option<String>> {
    check_key(key)?;
    state::with(|s| {
        Ok(s.infos
            .get(h)?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone()))
    })
}

/// MPI_Info_get_valuelen: the length of `key`'s value, if set.
pub fn valuelen(h: c_int, key: &str) -> Result<Option<usize>> {
    Ok(get(h, key)?.map(|v| v.len()))
}

/// MPI_Info_delete: MPI_ERR_INFO_NOKEY when `key` is not set.
pub fn delete(h: c_int, key: &str) -> Result<()> {
    check_key(key)?;
    state::with(|s| {
        let info = s.infos.get_mut(h)?;
        let before = info.len();
        info.retain(|(k, _)| k != key);
        if info.len() == before {
            return Err(MpiError::new(
                class::INFO_NOKEY,
                format!("info key {key:?} is not set"),
            ));
        }
        Ok(())
    })
}

/// MPI_Info_get_nkeys.
pub fn nkeys(h: c_int) -> Result<c_int> {
    state::with(|s| Ok(s.infos.get(h)?.len() as c_int))
}

/// MPI_Info_get_nthkey: the key set `n`-th (from 0).
pub fn nthkey(h: c_int, n: c_int) -> Result<String> {
    state::with(|s| {
        let info = s.infos.get(h)?;
        usize::try_from(n)
            .ok()
            .and_then(|i| info.get(i))
            .map(|(k, _)| k.clone())
            .ok_or_else(|| {
                MpiError::arg(format!(
                    "key number {n} of an info object with {} keys",
                    info.len()
                ))
            })
    })
}

/// MPI_Info_dup: a new info object with the same pairs in the same order.
pub fn dup(h: c_int) -> Result<c_int> {
    state::with(|s| {
        let pairs = s.infos.get(h)?.clone();
        Ok(s.infos.insert(pairs))
    })
}

/// MPI_Info_free (MPI_INFO_ENV, predefined, is refused).
pub fn free(h: c_int) -> Result<()> {
    state::with(|s| s.infos.remove(h).map(drop))
}

/// The pairs of info `h` (none for MPI_INFO_NULL), for a function that takes hints.
pub fn pairs(h: c_int) -> Result<Pairs> {
    if h == handles::NULL {
        return Ok(Vec::new());
    }
    state::with(|s| Ok(s.infos.get(h)?.clone()))
}

/// A new info object holding `pairs` (what MPI_Comm_get_info returns).
pub fn from_pairs(pairs: Pairs) -> Result<c_int> {
    state::with(|s| Ok(s.infos.insert(pairs)))
}
