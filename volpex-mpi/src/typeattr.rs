//! Names and attributes of datatypes (MPI-3.1 sections 6.7.4 and 6.8): MPI_Type_set_name
//! and get_name; datatype keyvals with the program's copy and delete functions, C or
//! Fortran; MPI_Type_set_attr, get_attr and delete_attr; what MPI_Type_dup and
//! MPI_Type_free do with attributes: the operations on the datatype side of the state
//! (`state::TypeState`, which holds the keyvals and the F90 types).
//! Calls the program's functions with the state unlocked (they may call MPI), and must
//! never call one twice for one event.
//!
//! Datatype keyvals are their own kind of handle (`TAG_TYPE_KEYVAL`): a communicator's
//! keyval given to MPI_Type_set_attr is MPI_ERR_KEYVAL, as the standard's separate
//! MPI_Comm_create_keyval and MPI_Type_create_keyval imply.

use std::os::raw::c_int;

use crate::datatype::Datatype;
use crate::error::{MpiError, Result};
use crate::handles::{class, MAX_OBJECT_NAME, NULL};
use crate::raw;
use crate::state::{self, CopyFn, DeleteFn, TypeKeyval};
use crate::types;

/// MPI_Type_set_name: at most MPI_MAX_OBJECT_NAME - 1 bytes are kept (Open MPI and
/// MPICH truncate too).
pub fn set_name(h: c_int, name: &str) -> Result<()> {
    let mut n = name.len().min(MAX_OBJECT_NAME - 1);
    while !name.is_char_boundary(n) {
        n -= 1;
    }
    let name = &name[..n];
    state::with(|s| {
        let t = std::sync::Arc::make_mut(s.types.get_mut(h)?);
        t.mpi_name = name.to_string();
        t.name = name.to_string();
        Ok(())
    })
}

/// MPI_Type_get_name: a predefined type's name ("MPI_INT"), the name set, or empty.
pub fn get_name(h: c_int) -> Result<String> {
    Ok(types::any(h)?.mpi_name.clone())
}

/// MPI_Type_create_keyval.
pub fn create_keyval(
    copy: Option<CopyFn>,
    delete: Option<DeleteFn>,
    extra: usize,
) -> Result<c_int> {
    state::with(|s| {
        Ok(s.dtypes.keyvals.insert(TypeKeyval {
            copy,
            delete,
            extra,
            freed: false,
        }))
    })
}

fn keyval(s: &state::State, key: c_int) -> Result<TypeKeyval> {
    let kv = *s.dtypes.keyvals.get(key)?;
    if kv.freed {
        return Err(MpiError::new(
            class::KEYVAL,
            format!("datatype keyval {key:#x} was freed"),
        ));
    }
    Ok(kv)
}

/// MPI_Type_free_keyval: sets `*key` to MPI_KEYVAL_INVALID.
pub fn free_keyval(key: &mut c_int) -> Result<()> {
    state::with(|s| {
        keyval(s, *key)?;
        s.dtypes.keyvals.get_mut(*key)?.freed = true;
        Ok(())
    })?;
    *key = NULL;
    Ok(())
}

/// MPI_Type_set_attr: replaces (the old value's delete function runs first) or adds.
pub fn set_attr(h: c_int, key: c_int, value: usize) -> Result<()> {
    let had = state::with(|s| {
        keyval(s, key)?;
        Ok(s.types.get(h)?.attrs.iter().any(|a| a.0 == key))
    })?;
    if had {
        delete_attr(h, key)?;
    }
    state::with(|s| {
        std::sync::Arc::make_mut(s.types.get_mut(h)?)
            .attrs
            .push((key, value));
        Ok(())
    })
}

/// MPI_Type_get_attr: the value, if set.
pub fn get_attr(h: c_int, key: c_int) -> Result<Option<usize>> {
    state::with(|s| {
        keyval(s, key)?;
        Ok(s.types
            .get(h)?
            .attrs
            .iter()
            .find(|a| a.0 == key)
            .map(|a| a.1))
    })
}

fn failed(what: &str, key: c_int, code: c_int) -> MpiError {
    MpiError::new(
        class::OTHER,
        format!("the {what} function of datatype keyval {key:#x} returned {code}"),
    )
}

/// Runs `key`'s delete function on `value` (attribute of type `h`).
fn run_delete(h: c_int, key: c_int, value: usize) -> Result<()> {
    let kv = state::with(|s| s.dtypes.keyvals.get(key).copied())?;
    let code = match kv.delete {
        None => class::SUCCESS,
        Some(DeleteFn::C(f)) => raw::call_delete_attr(f, h, key, value, kv.extra),
        Some(DeleteFn::Fortran(f)) => raw::call_fortran_delete_attr(f, h, key, value, kv.extra),
    };
    if code != class::SUCCESS {
        return Err(failed("delete", key, code));
    }
    Ok(())
}

/// MPI_Type_delete_attr: the delete function runs, then the attribute goes (it stays
/// if the function fails, MPI-3.1 section 6.7.4).
pub fn delete_attr(h: c_int, key: c_int) -> Result<()> {
    let value = state::with(|s| {
        keyval(s, key)?;
        s.types
            .get(h)?
            .attrs
            .iter()
            .find(|a| a.0 == key)
            .map(|a| a.1)
            .ok_or_else(|| {
                MpiError::new(
                    class::KEYVAL,
                    format!("datatype {h:#x} has no attribute {key:#x}"),
                )
            })
    })?;
    run_delete(h, key, value)?;
    remove(h, key)
}

fn remove(h: c_int, key: c_int) -> Result<()> {
    state::with(|s| {
        std::sync::Arc::make_mut(s.types.get_mut(h)?)
            .attrs
            .retain(|a| a.0 != key);
        Ok(())
    })
}

/// Deletes every attribute of `h` (MPI_Type_free), freed keyvals' too, in the order set.
pub fn delete_all(h: c_int) -> Result<()> {
    let attrs = types::any(h)?.attrs.clone();
    for (key, value) in attrs {
        run_delete(h, key, value)?;
        remove(h, key)?;
    }
    Ok(())
}

/// MPI_Type_free: the delete functions of its attributes run first (MPI-3.1 section
/// 6.7.4); a predefined type (named or F90) is refused.
pub fn free(h: c_int) -> Result<()> {
    if types::any(h)?.predefined {
        return Err(MpiError::new(
            class::TYPE,
            "a predefined datatype cannot be freed",
        ));
    }
    delete_all(h)?;
    state::with(|s| s.types.remove(h).map(drop))
}

/// MPI_Type_dup: the same type, committed or not as `h` is, with the attributes whose
/// copy functions say so (MPI-3.1 section 4.1.10); the name is not copied.
pub fn dup(h: c_int) -> Result<c_int> {
    let old = types::any(h)?;
    let mut t = Datatype::dup(&old);
    for &(key, value) in &old.attrs {
        let kv = state::with(|s| s.dtypes.keyvals.get(key).copied())?;
        let (code, copied) = match kv.copy {
            None => (class::SUCCESS, None),
            Some(CopyFn::C(f)) => raw::call_copy_attr(f, h, key, kv.extra, value),
            Some(CopyFn::Fortran(f)) => raw::call_fortran_copy_attr(f, h, key, kv.extra, value),
        };
        if code != class::SUCCESS {
            return Err(failed("copy", key, code));
        }
        if let Some(v) = copied {
            t.attrs.push((key, v));
        }
    }
    types::add(t)
}
