//! Datatype handles and constructors (MPI-3.1 section 4.1): each constructor checks its
//! arguments, builds the type map (`datatype`) and records its call (`envelope`);
//! commit, MPI_Type_get_contents, the F90 types and MPI_Type_match_size (section
//! 17.1.9); and small environment helpers (processor name, pack and unpack). Freeing a
//! type is `typeattr`'s (its attributes' delete functions run first).

use std::os::raw::c_int;
use std::sync::Arc;

use crate::datatype::envelope::{Combiner, Contents};
use crate::datatype::predefined;
use crate::datatype::{count, Datatype};
use crate::error::{MpiError, Result};
use crate::handles::{class, TAG_DATATYPE};
use crate::state;

/// The datatype behind `h`, committed or not (for queries and constructors).
pub fn any(h: c_int) -> Result<Arc<Datatype>> {
    state::with(|s| s.types.get(h).cloned())
}

/// `f` of the datatype behind `h`, without taking a reference to it (queries such as
/// MPI_Type_size, which some programs call once per element).
pub fn query<R>(h: c_int, f: impl FnOnce(&Datatype) -> R) -> Result<R> {
    state::with(|s| Ok(f(s.types.get(h)?)))
}

/// Adds a new datatype.
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
            Arc::make_mut(t).committed = true;
        }
        Ok(())
    })
}

/// A derived type of `parts` recording `contents`.
fn derived(
    combiner: Combiner,
    ints: Vec<c_int>,
    addrs: Vec<isize>,
    types: Vec<Arc<Datatype>>,
    parts: &[(isize, usize, Arc<Datatype>)],
) -> Result<Datatype> {
    Datatype::derived(Contents::new(combiner, ints, addrs, types), parts)
}

fn n_of(len: usize) -> c_int {
    c_int::try_from(len).unwrap_or(c_int::MAX)
}

/// MPI_Type_contiguous.
pub fn contiguous(n: c_int, old: c_int) -> Result<Datatype> {
    let o = any(old)?;
    let parts = [(0, count(n)?, o.clone())];
    derived(Combiner::Contiguous, vec![n], vec![], vec![o], &parts)
}

/// `n` blocks of `blocklength` elements, `stride` bytes apart.
fn strided(
    n: usize,
    blocklength: usize,
    stride: isize,
    old: &Arc<Datatype>,
) -> Vec<(isize, usize, Arc<Datatype>)> {
    (0..n)
        .map(|i| (stride.saturating_mul(i as isize), blocklength, old.clone()))
        .collect()
}

/// MPI_Type_vector: the stride in elements of `old`.
pub fn vector(n: c_int, blocklength: c_int, stride: c_int, old: c_int) -> Result<Datatype> {
    let o = any(old)?;
    let bytes = (stride as isize).saturating_mul(o.extent);
    let parts = strided(count(n)?, count(blocklength)?, bytes, &o);
    derived(
        Combiner::Vector,
        vec![n, blocklength, stride],
        vec![],
        vec![o],
        &parts,
    )
}

/// MPI_Type_create_hvector (and MPI_Type_hvector): the stride in bytes.
pub fn hvector(n: c_int, blocklength: c_int, stride: isize, old: c_int) -> Result<Datatype> {
    let o = any(old)?;
    let parts = strided(count(n)?, count(blocklength)?, stride, &o);
    derived(
        Combiner::Hvector,
        vec![n, blocklength],
        vec![stride],
        vec![o],
        &parts,
    )
}

/// Blocks of `lens[i]` elements of `old` at byte displacements `displs[i]`.
fn blocks_at(
    lens: &[c_int],
    displs: &[isize],
    old: &Arc<Datatype>,
) -> Result<Vec<(isize, usize, Arc<Datatype>)>> {
    lens.iter()
        .zip(displs)
        .map(|(&l, &d)| Ok((d, count(l)?, old.clone())))
        .collect()
}

/// MPI_Type_indexed: displacements in elements of `old`.
pub fn indexed(lens: &[c_int], displs: &[c_int], old: c_int) -> Result<Datatype> {
    let o = any(old)?;
    let bytes: Vec<isize> = displs
        .iter()
        .map(|&d| (d as isize).saturating_mul(o.extent))
        .collect();
    let parts = blocks_at(lens, &bytes, &o)?;
    let mut ints = vec![n_of(lens.len())];
    ints.extend_from_slice(lens);
    ints.extend_from_slice(displs);
    derived(Combiner::Indexed, ints, vec![], vec![o], &parts)
}

/// MPI_Type_create_hindexed (and MPI_Type_hindexed): displacements in bytes.
pub fn hindexed(lens: &[c_int], displs: &[isize], old: c_int) -> Result<Datatype> {
    let o = any(old)?;
    let parts = blocks_at(lens, displs, &o)?;
    let mut ints = vec![n_of(lens.len())];
    ints.extend_from_slice(lens);
    derived(Combiner::Hindexed, ints, displs.to_vec(), vec![o], &parts)
}

/// MPI_Type_create_indexed_block: blocks of one length, displacements in elements.
pub fn indexed_block(blocklength: c_int, displs: &[c_int], old: c_int) -> Result<Datatype> {
    let o = any(old)?;
    let bytes: Vec<isize> = displs
        .iter()
        .map(|&d| (d as isize).saturating_mul(o.extent))
        .collect();
    let parts = blocks_at(&vec![blocklength; displs.len()], &bytes, &o)?;
    let mut ints = vec![n_of(displs.len()), blocklength];
    ints.extend_from_slice(displs);
    derived(Combiner::IndexedBlock, ints, vec![], vec![o], &parts)
}

/// MPI_Type_create_hindexed_block: blocks of one length, displacements in bytes.
pub fn hindexed_block(blocklength: c_int, displs: &[isize], old: c_int) -> Result<Datatype> {
    let o = any(old)?;
    let parts = blocks_at(&vec![blocklength; displs.len()], displs, &o)?;
    let ints = vec![n_of(displs.len()), blocklength];
    derived(
        Combiner::HindexedBlock,
        ints,
        displs.to_vec(),
        vec![o],
        &parts,
    )
}

/// MPI_Type_create_struct (and MPI_Type_struct, whose `MPI_LB` and `MPI_UB` entries
/// are bound markers).
pub fn create_struct(lens: &[c_int], displs: &[isize], types: &[c_int]) -> Result<Datatype> {
    let olds = types.iter().map(|&t| any(t)).collect::<Result<Vec<_>>>()?;
    let parts = lens
        .iter()
        .zip(displs)
        .zip(&olds)
        .map(|((&l, &d), t)| Ok((d, count(l)?, t.clone())))
        .collect::<Result<Vec<_>>>()?;
    let mut ints = vec![n_of(lens.len())];
    ints.extend_from_slice(lens);
    derived(Combiner::Struct, ints, displs.to_vec(), olds, &parts)
}

/// MPI_Type_create_resized.
pub fn resized(old: c_int, lb: isize, extent: isize) -> Result<Datatype> {
    Ok(Datatype::resized(&any(old)?, lb, extent))
}

/// MPI_Type_get_contents: the integers and addresses of the call that made `h`, and
/// handles of its datatypes: a predefined one's own handle, a new handle (to free) of
/// an equal type for a derived one (MPI-3.1 section 4.1.13), committed.
pub fn contents(h: c_int) -> Result<(Arc<Contents>, Vec<c_int>)> {
    let c = any(h)?.contents.clone();
    let mut handles = Vec::with_capacity(c.types.len());
    for t in &c.types {
        if t.predefined {
            handles.push(t.handle);
            continue;
        }
        let mut copy = (**t).clone();
        copy.attrs = Vec::new();
        copy.committed = true;
        handles.push(add(copy)?);
    }
    Ok((c, handles))
}

/// The handle of the predefined type named `name`.
pub fn named(name: &str) -> Result<c_int> {
    let i = predefined::index_of(name)
        .ok_or_else(|| MpiError::new(class::INTERN, format!("no predefined type {name}")))?;
    Ok(TAG_DATATYPE | (i as c_int + 1))
}

/// MPI_Type_match_size (MPI-3.1 section 17.1.9): a predefined Fortran type of
/// `typeclass` and `size` bytes.
pub fn match_size(typeclass: c_int, size: c_int) -> Result<c_int> {
    if !(1..=3).contains(&typeclass) {
        return Err(MpiError::arg(format!("invalid typeclass {typeclass}")));
    }
    match predefined::match_size(typeclass, size) {
        Some(name) => named(name),
        None => Err(MpiError::arg(format!(
            "no type of typeclass {typeclass} has {size} bytes"
        ))),
    }
}

/// MPI_Type_create_f90_real / _complex / _integer (MPI-3.1 section 17.1.9): a
/// predefined type (it cannot be freed; one per distinct (p, r)) equal to the Fortran
/// type gfortran's SELECTED_REAL_KIND / SELECTED_INT_KIND choose, whose envelope says
/// the F90 combiner and gives (p, r) or (r) as called.
pub fn f90(combiner: Combiner, p: c_int, r: c_int) -> Result<c_int> {
    let ints = match combiner {
        Combiner::F90Integer => vec![r],
        _ => vec![p, r],
    };
    let cached = state::with(|s| {
        Ok(s.dtypes
            .f90
            .iter()
            .find(|(c, i, _)| *c == combiner && *i == ints)
            .map(|e| e.2))
    })?;
    if let Some(h) = cached {
        return Ok(h);
    }
    let name = match combiner {
        Combiner::F90Real => predefined::f90_real_bytes(p, r).map(|b| format!("MPI_REAL{b}")),
        Combiner::F90Complex => {
            predefined::f90_real_bytes(p, r).map(|b| format!("MPI_COMPLEX{}", 2 * b))
        }
        _ => predefined::f90_integer_bytes(r).map(|b| format!("MPI_INTEGER{b}")),
    }
    .ok_or_else(|| {
        MpiError::arg(format!(
            "{}: no type has precision {p} and range {r}",
            combiner.constructor()
        ))
    })?;
    let mut t = (*any(named(&name)?)?).clone();
    t.name = format!("{} ({name})", combiner.constructor());
    t.mpi_name = String::new();
    t.attrs = Vec::new();
    t.contents = Arc::new(Contents::new(combiner, ints.clone(), vec![], vec![]));
    let h = add(t)?;
    state::with(|s| {
        s.dtypes.f90.push((combiner, ints, h));
        Ok(h)
    })
}

/// The host name (MPI_Get_processor_name).
pub fn processor_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".into())
}

/// A pack position from C: an offset into a buffer.
fn position_of<T: Copy + TryInto<usize> + std::fmt::Display>(p: T) -> Result<usize> {
    p.try_into()
        .map_err(|_| MpiError::arg(format!("invalid position {p}")))
}

/// Copies `data` into `out` at `at`: the new position.
fn put(data: &[u8], out: &mut [u8], at: usize) -> Result<usize> {
    let end = at
        .checked_add(data.len())
        .filter(|&e| e <= out.len())
        .ok_or_else(|| {
            MpiError::new(
                class::TRUNCATE,
                format!(
                    "{} bytes do not fit at position {at} of {}",
                    data.len(),
                    out.len()
                ),
            )
        })?;
    out[at..end].copy_from_slice(data);
    Ok(end)
}

/// The `len` bytes of `input` at `at`.
fn take(input: &[u8], at: usize, len: usize) -> Result<&[u8]> {
    at.checked_add(len)
        .and_then(|end| input.get(at..end))
        .ok_or_else(|| {
            MpiError::new(
                class::TRUNCATE,
                format!(
                    "{len} bytes are not there at position {at} of {}",
                    input.len()
                ),
            )
        })
}

/// MPI_Pack (MPI-3.1 section 4.2): appends the data of `count` elements of `input` to
/// `out` at `*position` and advances it.
pub fn pack(
    input: &crate::datatype::Buf<'_>,
    count: usize,
    out: &mut [u8],
    position: &mut c_int,
) -> Result<()> {
    let end = put(&input.bytes(0, count)?, out, position_of(*position)?)?;
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
    let at = position_of(*position)?;
    let len = out.dt.bytes_of(count)?;
    out.write(0, count, take(input, at, len)?)?;
    *position = c_int::try_from(at + len).unwrap_or(c_int::MAX);
    Ok(())
}

/// MPI_Pack_external (MPI-3.1 section 4.3): as `pack`, in external32.
pub fn pack_external(
    input: &crate::datatype::Buf<'_>,
    count: usize,
    out: &mut [u8],
    position: &mut isize,
) -> Result<()> {
    let data = crate::external32::convert_all(&input.dt, count, &input.bytes(0, count)?, true)?;
    let end = put(&data, out, position_of(*position)?)?;
    *position = isize::try_from(end).unwrap_or(isize::MAX);
    Ok(())
}

/// MPI_Unpack_external: as `unpack`, from external32.
pub fn unpack_external(
    input: &[u8],
    position: &mut isize,
    out: &mut crate::datatype::BufMut<'_>,
    count: usize,
) -> Result<()> {
    let at = position_of(*position)?;
    let len = usize::try_from(crate::external32::size(&out.dt, count)?)
        .map_err(|_| MpiError::new(class::COUNT, "count too large"))?;
    let native = crate::external32::convert_all(&out.dt, count, take(input, at, len)?, false)?;
    out.write(0, count, &native)?;
    *position = isize::try_from(at + len).unwrap_or(isize::MAX);
    Ok(())
}
