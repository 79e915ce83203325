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

/// MPI_Type_create_subarray: the `subsizes` block at `starts` of an array of `sizes`
/// (C order: the last dimension varies fastest; Fortran order: the first), with the
/// whole array's extent (MPI-3.1 section 4.1.3).
pub fn subarray(
    sizes: &[c_int],
    subsizes: &[c_int],
    starts: &[c_int],
    fortran: bool,
    old: Arc<Datatype>,
) -> Result<Datatype> {
    let bad = |what: &str| crate::error::MpiError::arg(format!("MPI_Type_create_subarray: {what}"));
    let n = sizes.len();
    if n == 0 || subsizes.len() != n || starts.len() != n {
        return Err(bad("need ndims >= 1 entries in each array"));
    }
    // Dimensions from the slowest to the fastest.
    let order: Vec<usize> = if fortran {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    let (sz, sub, st): (Vec<i64>, Vec<i64>, Vec<i64>) = (
        order.iter().map(|&i| i64::from(sizes[i])).collect(),
        order.iter().map(|&i| i64::from(subsizes[i])).collect(),
        order.iter().map(|&i| i64::from(starts[i])).collect(),
    );
    for i in 0..n {
        if sz[i] < 1 || sub[i] < 1 || st[i] < 0 || st[i] + sub[i] > sz[i] {
            return Err(bad(&format!("dimension {} does not fit", order[i])));
        }
    }
    let total: i64 = sub[..n - 1].iter().product();
    if total > 1 << 24 {
        return Err(bad("too many rows"));
    }
    let mut parts = Vec::with_capacity(total as usize);
    let mut idx = vec![0i64; n - 1];
    for _ in 0..total {
        // Linear element offset of (starts + idx, starts_last).
        let mut lin = 0i64;
        for d in 0..n - 1 {
            lin = lin * sz[d] + st[d] + idx[d];
        }
        lin = lin * sz[n - 1] + st[n - 1];
        let disp = isize::try_from(lin).map_err(|_| bad("too large"))? * old.extent;
        parts.push((disp, sub[n - 1] as usize, old.clone()));
        for d in (0..n - 1).rev() {
            idx[d] += 1;
            if idx[d] < sub[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let t = Datatype::derived("MPI_Type_create_subarray", &parts)?;
    let whole: i64 = sz.iter().product();
    let extent = isize::try_from(whole).map_err(|_| bad("too large"))? * old.extent;
    let mut r = t.resized(old.lb, extent);
    r.name = "MPI_Type_create_subarray".into();
    Ok(r)
}
