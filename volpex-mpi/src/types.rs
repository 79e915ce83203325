//! Datatype constructors and handles (MPI-3.1 section 4.1), and small environment
//! helpers (processor name, MPI_Abort's exit code).

use std::os::raw::c_int;
use std::sync::Arc;

use crate::datatype::{count, Datatype};
use crate::error::Result;
use crate::state;

/// The datatype behind `h`, committed or not (for queries and constructors).
pub fn any(h: c_int) -> Result<Arc<Datatype>> {
    state::with(|s| s.types.get(h).cloned())
}

/// Adds a new (uncommitted) datatype.
pub fn add(t: Datatype) -> Result<c_int> {
    state::with(|s| {
        let h = s.types.insert(Arc::new(t));
        Arc::make_mut(s.types.get_mut(h)?).handle = h;
        Ok(h)
    })
}

/// MPI_Type_commit.
pub fn commit(h: c_int) -> Result<()> {
    state::with(|s| {
        let t = s.types.get_mut(h)?;
        if !t.committed {
            let mut c = (**t).clone();
            c.committed = true;
            *t = Arc::new(c);
        }
        Ok(())
    })
}

/// MPI_Type_free (a predefined type is refused).
pub fn free(h: c_int) -> Result<()> {
    state::with(|s| s.types.remove(h).map(drop))
}

/// `count` blocks of `blocklength` elements, `stride` bytes apart.
pub fn hvector(
    name: &str,
    n: usize,
    blocklength: usize,
    stride: isize,
    old: Arc<Datatype>,
) -> Result<Datatype> {
    let parts: Vec<_> = (0..n)
        .map(|i| (stride.saturating_mul(i as isize), blocklength, old.clone()))
        .collect();
    Datatype::derived(name, &parts)
}

/// Blocks of `lens[i]` elements at byte displacements `displs[i]`.
pub fn hindexed(
    name: &str,
    lens: &[c_int],
    displs: &[isize],
    old: Arc<Datatype>,
) -> Result<Datatype> {
    let parts = lens
        .iter()
        .zip(displs)
        .map(|(&l, &d)| Ok((d, count(l)?, old.clone())))
        .collect::<Result<Vec<_>>>()?;
    Datatype::derived(name, &parts)
}

/// MPI_Type_create_struct.
pub fn create_struct(lens: &[c_int], displs: &[isize], types: &[c_int]) -> Result<Datatype> {
    let parts = lens
        .iter()
        .zip(displs)
        .zip(types)
        .map(|((&l, &d), &t)| Ok((d, count(l)?, any(t)?)))
        .collect::<Result<Vec<_>>>()?;
    Datatype::derived("MPI_Type_create_struct", &parts)
}

/// The exit code of MPI_Abort: the error code if it is a plain failure code (1-255,
/// except the codes volpexrun reads as retired, orphaned, drained or injected faults),
/// else 1.
pub fn abort_exit_code(errorcode: c_int) -> i32 {
    use volpex::exit::{EXIT_DRAINED, EXIT_FAULT, EXIT_ORPHANED, EXIT_RETIRED};
    match errorcode {
        EXIT_RETIRED | EXIT_ORPHANED | EXIT_DRAINED | EXIT_FAULT => 1,
        c @ 1..=255 => c,
        _ => 1,
    }
}

/// The host name (MPI_Get_processor_name).
pub fn processor_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".into())
}

/// MPI_Pack: appends the data of `input` to `out` at `*position`.
pub fn pack(
    input: &crate::datatype::Buf<'_>,
    count: usize,
    out: &mut [u8],
    position: &mut c_int,
) -> Result<()> {
    let data = input.bytes(0, count)?;
    let at = usize::try_from(*position)
        .map_err(|_| crate::error::MpiError::arg(format!("invalid position {position}")))?;
    let end = at
        .checked_add(data.len())
        .filter(|&e| e <= out.len())
        .ok_or_else(|| {
            crate::error::MpiError::new(
                crate::handles::class::TRUNCATE,
                format!(
                    "{} bytes do not fit at position {at} of {}",
                    data.len(),
                    out.len()
                ),
            )
        })?;
    out[at..end].copy_from_slice(&data);
    *position = c_int::try_from(end).unwrap_or(c_int::MAX);
    Ok(())
}

/// MPI_Unpack: reads `count` elements from `input` at `*position` into `out`.
pub fn unpack(
    input: &[u8],
    position: &mut c_int,
    out: &mut crate::datatype::BufMut<'_>,
    count: usize,
) -> Result<()> {
    let len = out.dt.bytes_of(count)?;
    let at = usize::try_from(*position)
        .map_err(|_| crate::error::MpiError::arg(format!("invalid position {position}")))?;
    let data = at
        .checked_add(len)
        .and_then(|end| input.get(at..end))
        .ok_or_else(|| {
            crate::error::MpiError::new(
                crate::handles::class::TRUNCATE,
                format!(
                    "{len} bytes are not there at position {at} of {}",
                    input.len()
                ),
            )
        })?;
    out.write(0, count, data)?;
    *position = c_int::try_from(at + len).unwrap_or(c_int::MAX);
    Ok(())
}

/// MPI_Info_create.
pub fn info_create() -> Result<c_int> {
    state::with(|s| Ok(s.infos.insert(Vec::new())))
}

/// MPI_Info_set.
pub fn info_set(h: c_int, key: String, value: String) -> Result<()> {
    if key.is_empty() || key.len() > 255 {
        return Err(crate::error::MpiError::new(
            crate::handles::class::INFO_KEY,
            format!("invalid info key {key:?}"),
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
pub fn info_get(h: c_int, key: &str) -> Result<Option<String>> {
    state::with(|s| {
        Ok(s.infos
            .get(h)?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone()))
    })
}

/// MPI_Info_free.
pub fn info_free(h: c_int) -> Result<()> {
    state::with(|s| s.infos.remove(h).map(drop))
}
