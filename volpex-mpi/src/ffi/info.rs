//! Info objects and handle conversion in `mpi.h` (MPI-3.1 chapter 9): every info
//! function, and the `_f2c`/`_c2f` pairs (handles are the same integers in C and
//! Fortran). Thin shells over `info`; never touches a message.

use super::*;

// ---- Info objects ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_create(info: *mut c_int) -> c_int {
    guard("MPI_Info_create", COMM_WORLD, || {
        set(info, "info", crate::info::create()?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_set(
    info: c_int,
    key: *const c_char,
    value: *const c_char,
) -> c_int {
    guard("MPI_Info_set", COMM_WORLD, || {
        // SAFETY: NUL-terminated strings (MPI-3.1 section 9).
        let (k, v) = unsafe { (raw::string(key, "key")?, raw::string(value, "value")?) };
        crate::info::set(info, k, v)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get(
    info: c_int,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Info_get", COMM_WORLD, || {
        // SAFETY: a NUL-terminated key (MPI-3.1 section 9).
        let k = unsafe { raw::string(key, "key") }?;
        match crate::info::get(info, &k)? {
            Some(v) => {
                let mut len = 0;
                // SAFETY: `valuelen` + 1 bytes at `value` (MPI-3.1 section 9).
                unsafe { raw::put_string(value, cnt(valuelen)? + 1, &v, &mut len) }?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_free(info: *mut c_int) -> c_int {
    guard("MPI_Info_free", COMM_WORLD, || {
        // SAFETY: `info` points to an info handle.
        let h = unsafe { raw::out(info, "info") }?;
        crate::info::free(*h)?;
        *h = NULL;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_delete(info: c_int, key: *const c_char) -> c_int {
    guard("MPI_Info_delete", COMM_WORLD, || {
        // SAFETY: a NUL-terminated key (MPI-3.1 section 9).
        let k = unsafe { raw::string(key, "key") }?;
        crate::info::delete(info, &k)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_dup(info: c_int, newinfo: *mut c_int) -> c_int {
    guard("MPI_Info_dup", COMM_WORLD, || {
        set(newinfo, "newinfo", crate::info::dup(info)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_nkeys(info: c_int, nkeys: *mut c_int) -> c_int {
    guard("MPI_Info_get_nkeys", COMM_WORLD, || {
        set(nkeys, "nkeys", crate::info::nkeys(info)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_nthkey(info: c_int, n: c_int, key: *mut c_char) -> c_int {
    guard("MPI_Info_get_nthkey", COMM_WORLD, || {
        let k = crate::info::nthkey(info, n)?;
        let mut len = 0;
        // SAFETY: MPI_MAX_INFO_KEY + 1 bytes at `key` (MPI-3.1 section 9).
        unsafe { raw::put_string(key, MAX_INFO_KEY + 1, &k, &mut len) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Info_get_valuelen(
    info: c_int,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
) -> c_int {
    guard("MPI_Info_get_valuelen", COMM_WORLD, || {
        // SAFETY: a NUL-terminated key (MPI-3.1 section 9).
        let k = unsafe { raw::string(key, "key") }?;
        match crate::info::valuelen(info, &k)? {
            Some(n) => {
                set(valuelen, "valuelen", n as c_int)?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }
    })
}

// ---- Handle conversion: handles are the same integers in C and Fortran ----

macro_rules! same_handle {
    ($($f2c:ident $c2f:ident),*) => {$(
        #[no_mangle]
        pub extern "C" fn $f2c(h: c_int) -> c_int {
            h
        }
        #[no_mangle]
        pub extern "C" fn $c2f(h: c_int) -> c_int {
            h
        }
    )*};
}
same_handle!(
    MPI_Comm_f2c MPI_Comm_c2f,
    MPI_Type_f2c MPI_Type_c2f,
    MPI_Group_f2c MPI_Group_c2f,
    MPI_Op_f2c MPI_Op_c2f,
    MPI_Request_f2c MPI_Request_c2f,
    MPI_Errhandler_f2c MPI_Errhandler_c2f,
    MPI_Info_f2c MPI_Info_c2f,
    MPI_Win_f2c MPI_Win_c2f,
    MPI_File_f2c MPI_File_c2f
);
