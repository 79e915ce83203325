//! Datatypes (MPI-3.1 chapter 4): the predefined ones, derived ones as a type map of
//! byte blocks, and user buffers described by (memory, datatype, count).
//!
//! A datatype is its type map flattened to `(byte offset, byte length)` blocks, plus its
//! lower bound and extent; every constructor (contiguous, vector, hvector, indexed,
//! hindexed, struct, resized) is the same operation on those lists. Sends pack the blocks
//! of a non-contiguous buffer into one message, receives unpack it; a contiguous buffer
//! is sent and received in place. Reductions need to know the element type: `base` is
//! the one primitive type a datatype is made of, if any.
//!
//! The pair types (`MPI_DOUBLE_INT`, ...) are their C struct, padding included: their
//! size is their extent (16 bytes for `MPI_DOUBLE_INT`), so they stay contiguous.

use std::borrow::Cow;
use std::os::raw::c_int;
use std::sync::Arc;

use crate::error::{MpiError, Result};
use crate::handles::class;

/// The element types reductions know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prim {
    /// i8.
    I8,
    /// u8.
    U8,
    /// i16.
    I16,
    /// u16.
    U16,
    /// i32.
    I32,
    /// u32.
    U32,
    /// i64.
    I64,
    /// u64.
    U64,
    /// f32.
    F32,
    /// f64.
    F64,
    /// float _Complex.
    CF32,
    /// double _Complex.
    CF64,
    /// struct { float; int; }.
    FloatInt,
    /// struct { double; int; }.
    DoubleInt,
    /// struct { long; int; }.
    LongInt,
    /// struct { int; int; }.
    TwoInt,
    /// struct { short; int; }.
    ShortInt,
    /// float[2] (MPI_2REAL).
    TwoF32,
    /// double[2] (MPI_2DOUBLE_PRECISION).
    TwoF64,
    /// long double (16 bytes: x87 extended precision on x86-64, IEEE binary128 on
    /// AArch64), which only MIN and MAX combine (no Rust arithmetic type matches it).
    LongDouble,
    /// struct { long double; int; } (MPI_LONG_DOUBLE_INT, 32 bytes).
    LongDoubleInt,
    /// Bytes no operation applies to (long double complex), of this size.
    Opaque(usize),
}

impl Prim {
    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            Prim::I8 | Prim::U8 => 1,
            Prim::I16 | Prim::U16 => 2,
            Prim::I32 | Prim::U32 | Prim::F32 => 4,
            Prim::I64 | Prim::U64 | Prim::F64 | Prim::CF32 => 8,
            Prim::FloatInt | Prim::TwoInt | Prim::ShortInt | Prim::TwoF32 => 8,
            Prim::CF64 | Prim::DoubleInt | Prim::LongInt | Prim::TwoF64 => 16,
            Prim::LongDouble => 16,
            Prim::LongDoubleInt => 32,
            Prim::Opaque(n) => n,
        }
    }
}

/// The predefined datatypes in handle order (handle = TAG_DATATYPE | position + 1), as
/// `mpi.h` numbers them.
pub const PREDEFINED: &[(&str, Prim)] = &[
    ("MPI_CHAR", Prim::I8),
    ("MPI_SIGNED_CHAR", Prim::I8),
    ("MPI_UNSIGNED_CHAR", Prim::U8),
    ("MPI_BYTE", Prim::U8),
    ("MPI_WCHAR", Prim::I32),
    ("MPI_SHORT", Prim::I16),
    ("MPI_UNSIGNED_SHORT", Prim::U16),
    ("MPI_INT", Prim::I32),
    ("MPI_UNSIGNED", Prim::U32),
    ("MPI_LONG", Prim::I64),
    ("MPI_UNSIGNED_LONG", Prim::U64),
    ("MPI_LONG_LONG_INT", Prim::I64),
    ("MPI_UNSIGNED_LONG_LONG", Prim::U64),
    ("MPI_FLOAT", Prim::F32),
    ("MPI_DOUBLE", Prim::F64),
    ("MPI_LONG_DOUBLE", Prim::LongDouble),
    ("MPI_PACKED", Prim::U8),
    ("MPI_C_BOOL", Prim::U8),
    ("MPI_INT8_T", Prim::I8),
    ("MPI_INT16_T", Prim::I16),
    ("MPI_INT32_T", Prim::I32),
    ("MPI_INT64_T", Prim::I64),
    ("MPI_UINT8_T", Prim::U8),
    ("MPI_UINT16_T", Prim::U16),
    ("MPI_UINT32_T", Prim::U32),
    ("MPI_UINT64_T", Prim::U64),
    ("MPI_AINT", Prim::I64),
    ("MPI_OFFSET", Prim::I64),
    ("MPI_COUNT", Prim::I64),
    ("MPI_C_FLOAT_COMPLEX", Prim::CF32),
    ("MPI_C_DOUBLE_COMPLEX", Prim::CF64),
    ("MPI_C_LONG_DOUBLE_COMPLEX", Prim::Opaque(32)),
    ("MPI_FLOAT_INT", Prim::FloatInt),
    ("MPI_DOUBLE_INT", Prim::DoubleInt),
    ("MPI_LONG_INT", Prim::LongInt),
    ("MPI_2INT", Prim::TwoInt),
    ("MPI_SHORT_INT", Prim::ShortInt),
    ("MPI_LONG_DOUBLE_INT", Prim::LongDoubleInt),
    ("MPI_CHARACTER", Prim::U8),
    ("MPI_INTEGER", Prim::I32),
    ("MPI_REAL", Prim::F32),
    ("MPI_DOUBLE_PRECISION", Prim::F64),
    ("MPI_LOGICAL", Prim::I32),
    ("MPI_COMPLEX", Prim::CF32),
    ("MPI_DOUBLE_COMPLEX", Prim::CF64),
    ("MPI_2INTEGER", Prim::TwoInt),
    ("MPI_2REAL", Prim::TwoF32),
    ("MPI_2DOUBLE_PRECISION", Prim::TwoF64),
    ("MPI_INTEGER1", Prim::I8),
    ("MPI_INTEGER2", Prim::I16),
    ("MPI_INTEGER4", Prim::I32),
    ("MPI_INTEGER8", Prim::I64),
    ("MPI_REAL4", Prim::F32),
    ("MPI_REAL8", Prim::F64),
];

/// Most blocks a derived datatype may have (a bound on the memory its type map takes).
const BLOCKS_MAX: usize = 1 << 24;

/// A datatype: its type map as byte blocks, bounds and extent.
#[derive(Debug, Clone)]
pub struct Datatype {
    /// `MPI_DOUBLE`, or the constructor of a derived type.
    pub name: String,
    /// Bytes of data in one element (MPI_Type_size).
    pub size: usize,
    /// Lower bound (MPI_Type_get_extent).
    pub lb: isize,
    /// Extent: the distance between consecutive elements.
    pub extent: isize,
    /// Lowest byte the data touches, from the element's origin.
    pub true_lb: isize,
    /// One past the highest byte the data touches.
    pub true_ub: isize,
    /// `(offset, length)` of the data, in type-map order, adjacent blocks merged.
    pub blocks: Vec<(isize, usize)>,
    /// The one primitive type every element is made of, if there is one.
    pub base: Option<Prim>,
    /// One block at offset 0 of `size` bytes, and extent `size`: buffers are used in place.
    pub contiguous: bool,
    /// Committed (predefined types are).
    pub committed: bool,
    /// A predefined type (cannot be freed).
    pub predefined: bool,
    /// Its handle (what a user operation is called with).
    pub handle: c_int,
}

fn overflow() -> MpiError {
    MpiError::new(class::COUNT, "count or displacement too large")
}

fn to_isize(v: i128) -> Result<isize> {
    isize::try_from(v).map_err(|_| overflow())
}

impl Datatype {
    /// A predefined type.
    pub fn predefined(name: &str, prim: Prim) -> Datatype {
        let n = prim.size();
        Datatype {
            name: name.to_string(),
            size: n,
            lb: 0,
            extent: n as isize,
            true_lb: 0,
            true_ub: n as isize,
            blocks: vec![(0, n)],
            base: Some(prim),
            contiguous: true,
            committed: true,
            predefined: true,
            handle: 0,
        }
    }

    /// A derived type made of `parts`: (byte displacement, count, old type) each, in
    /// type-map order (MPI-3.1 section 4.1.2: the bounds of a derived type).
    pub fn derived(name: &str, parts: &[(isize, usize, Arc<Datatype>)]) -> Result<Datatype> {
        let mut blocks: Vec<(isize, usize)> = Vec::new();
        let mut lb: Option<i128> = None;
        let mut ub: Option<i128> = None;
        let mut base: Option<Option<Prim>> = None;
        let mut size: usize = 0;
        for (disp, count, old) in parts {
            if *count == 0 {
                continue;
            }
            base = Some(match base {
                None => old.base,
                Some(b) if b == old.base => b,
                Some(_) => None,
            });
            let (disp, ext, n) = (*disp as i128, old.extent as i128, *count as i128);
            let span = (n - 1) * ext;
            let lo = disp + old.lb as i128 + span.min(0);
            let hi = disp + old.lb as i128 + ext + span.max(0);
            lb = Some(lb.map_or(lo, |l| l.min(lo)));
            ub = Some(ub.map_or(hi, |u| u.max(hi)));
            size = old
                .size
                .checked_mul(*count)
                .and_then(|s| s.checked_add(size))
                .ok_or_else(overflow)?;
            if blocks
                .len()
                .saturating_add(old.blocks.len().saturating_mul(*count))
                > BLOCKS_MAX
            {
                return Err(MpiError::new(
                    class::TYPE,
                    format!("{name}: more than {BLOCKS_MAX} blocks"),
                ));
            }
            for j in 0..n {
                for &(off, len) in &old.blocks {
                    let at = to_isize(disp + j * ext + off as i128)?;
                    match blocks.last_mut() {
                        Some((o, l)) if *o + *l as isize == at => *l += len,
                        _ => blocks.push((at, len)),
                    }
                }
            }
        }
        blocks.retain(|b| b.1 > 0);
        let (lb, ub) = (lb.unwrap_or(0), ub.unwrap_or(0));
        let true_lb = blocks.iter().map(|b| b.0).min().unwrap_or(0);
        let true_ub = blocks.iter().map(|b| b.0 + b.1 as isize).max().unwrap_or(0);
        let mut t = Datatype {
            name: name.to_string(),
            size,
            lb: to_isize(lb)?,
            extent: to_isize(ub - lb)?,
            true_lb,
            true_ub,
            blocks,
            base: base.flatten(),
            contiguous: false,
            committed: false,
            predefined: false,
            handle: 0,
        };
        t.contiguous = t.is_contiguous();
        Ok(t)
    }

    fn is_contiguous(&self) -> bool {
        self.lb == 0
            && self.extent == self.size as isize
            && (self.blocks.is_empty() || self.blocks == [(0, self.size)])
    }

    /// This type with its lower bound and extent set (MPI_Type_create_resized).
    pub fn resized(&self, lb: isize, extent: isize) -> Datatype {
        let mut t = self.clone();
        t.name = "MPI_Type_create_resized".into();
        t.lb = lb;
        t.extent = extent;
        t.committed = false;
        t.predefined = false;
        t.contiguous = t.is_contiguous();
        t
    }

    /// The memory `count` elements starting `first` extents from the origin touch:
    /// (offset from the origin, length in bytes).
    pub fn span(&self, first: i128, count: usize) -> Result<(isize, usize)> {
        if count == 0 || self.size == 0 {
            return Ok((0, 0));
        }
        let ext = self.extent as i128;
        let start = first * ext;
        let last = (first + count as i128 - 1) * ext;
        let lo = start.min(last) + self.true_lb as i128;
        let hi = start.max(last) + self.true_ub as i128;
        let len = usize::try_from(hi - lo).map_err(|_| overflow())?;
        if len > isize::MAX as usize {
            return Err(overflow());
        }
        Ok((to_isize(lo)?, len))
    }

    /// Bytes of data in `count` elements.
    pub fn bytes_of(&self, count: usize) -> Result<usize> {
        self.size.checked_mul(count).ok_or_else(overflow)
    }

    /// Where element `e` starts in memory whose byte 0 is at `-origin` from the origin.
    fn at(&self, origin: isize, e: i128, off: isize) -> Result<usize> {
        let a = origin as i128 + e * self.extent as i128 + off as i128;
        usize::try_from(a).map_err(|_| MpiError::new(class::BUFFER, "buffer out of range"))
    }
}

fn range(mem_len: usize, at: usize, len: usize) -> Result<std::ops::Range<usize>> {
    match at.checked_add(len) {
        Some(end) if end <= mem_len => Ok(at..end),
        _ => Err(MpiError::new(
            class::BUFFER,
            "datatype reaches outside the buffer",
        )),
    }
}

/// A user's send buffer: memory covering every byte the elements touch, where the
/// buffer's origin (the C pointer) is `origin` bytes into it.
pub struct Buf<'a> {
    /// The memory.
    pub mem: &'a [u8],
    /// Offset of the C pointer in `mem`.
    pub origin: isize,
    /// The datatype.
    pub dt: Arc<Datatype>,
}

impl<'a> Buf<'a> {
    /// The data of `count` elements from element `first`, in message order (borrowed when
    /// the datatype is contiguous).
    pub fn bytes(&self, first: i128, count: usize) -> Result<Cow<'a, [u8]>> {
        bytes_of(self.mem, self.origin, &self.dt, first, count)
    }
}

fn bytes_of<'m>(
    mem: &'m [u8],
    origin: isize,
    dt: &Datatype,
    first: i128,
    count: usize,
) -> Result<Cow<'m, [u8]>> {
    if count == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    if dt.contiguous {
        let r = range(mem.len(), dt.at(origin, first, 0)?, dt.bytes_of(count)?)?;
        return Ok(Cow::Borrowed(&mem[r]));
    }
    let mut out = Vec::with_capacity(dt.bytes_of(count)?);
    for e in 0..count as i128 {
        for &(off, len) in &dt.blocks {
            let r = range(mem.len(), dt.at(origin, first + e, off)?, len)?;
            out.extend_from_slice(&mem[r]);
        }
    }
    Ok(Cow::Owned(out))
}

/// A user's receive buffer (see `Buf`).
pub struct BufMut<'a> {
    /// The memory.
    pub mem: &'a mut [u8],
    /// Offset of the C pointer in `mem`.
    pub origin: isize,
    /// The datatype.
    pub dt: Arc<Datatype>,
}

impl BufMut<'_> {
    /// The bytes of `count` elements from `first`, to receive into in place, if the
    /// datatype is contiguous.
    pub fn in_place(&mut self, first: i128, count: usize) -> Result<Option<&mut [u8]>> {
        if !self.dt.contiguous {
            return Ok(None);
        }
        if count == 0 {
            return Ok(Some(&mut []));
        }
        let r = range(
            self.mem.len(),
            self.dt.at(self.origin, first, 0)?,
            self.dt.bytes_of(count)?,
        )?;
        Ok(Some(&mut self.mem[r]))
    }

    /// The current data of `count` elements from `first`, in message order.
    pub fn bytes(&self, first: i128, count: usize) -> Result<Cow<'_, [u8]>> {
        bytes_of(self.mem, self.origin, &self.dt, first, count)
    }

    /// Spreads `data` over up to `count` elements from `first` (whole or partial:
    /// a shorter message fills the first bytes).
    pub fn write(&mut self, first: i128, count: usize, mut data: &[u8]) -> Result<()> {
        let dt = self.dt.clone();
        for e in 0..count as i128 {
            for &(off, len) in &dt.blocks {
                if data.is_empty() {
                    return Ok(());
                }
                let n = len.min(data.len());
                let r = range(self.mem.len(), dt.at(self.origin, first + e, off)?, n)?;
                self.mem[r].copy_from_slice(&data[..n]);
                data = &data[n..];
            }
        }
        Ok(())
    }
}

/// A non-negative count from C.
pub fn count(c: c_int) -> Result<usize> {
    usize::try_from(c).map_err(|_| MpiError::new(class::COUNT, format!("negative count {c}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> Arc<Datatype> {
        Arc::new(Datatype::predefined("MPI_INT", Prim::I32))
    }

    #[test]
    fn vector_bounds_and_packing() {
        // 3 blocks of 2 ints, stride 4 ints: a column pair of a 3 x 4 matrix.
        let parts: Vec<_> = (0..3).map(|i| (i * 16, 2, int())).collect();
        let v = Datatype::derived("MPI_Type_vector", &parts).unwrap();
        assert_eq!((v.size, v.lb, v.extent), (24, 0, 40));
        assert_eq!(v.blocks, vec![(0, 8), (16, 8), (32, 8)]);
        assert!(!v.contiguous);
        assert_eq!(v.base, Some(Prim::I32));
        let m: Vec<u8> = (0..48).collect();
        let b = Buf {
            mem: &m,
            origin: 0,
            dt: Arc::new(v.clone()),
        };
        let packed = b.bytes(0, 1).unwrap();
        assert_eq!(&packed[..8], &m[0..8]);
        assert_eq!(&packed[8..16], &m[16..24]);
        let mut z = vec![0u8; 48];
        let mut w = BufMut {
            mem: &mut z,
            origin: 0,
            dt: Arc::new(v),
        };
        w.write(0, 1, &packed).unwrap();
        assert_eq!(&z[32..40], &m[32..40]);
        assert_eq!(&z[8..16], &[0; 8]);
    }

    #[test]
    fn contiguous_of_contiguous_stays_contiguous() {
        let c = Datatype::derived("MPI_Type_contiguous", &[(0, 5, int())]).unwrap();
        assert!(c.contiguous);
        assert_eq!(c.span(0, 3).unwrap(), (0, 60));
        let r = c.resized(0, 40);
        assert!(!r.contiguous);
        assert_eq!(r.span(0, 2).unwrap(), (0, 60));
        assert_eq!(r.span(1, 1).unwrap(), (40, 20));
    }

    #[test]
    fn out_of_range_is_an_error_not_a_panic() {
        let m = [0u8; 4];
        let b = Buf {
            mem: &m,
            origin: 0,
            dt: int(),
        };
        assert!(b.bytes(0, 2).is_err());
        assert!(b.bytes(-1, 1).is_err());
    }
}
