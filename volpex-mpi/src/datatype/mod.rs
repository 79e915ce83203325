//! Datatypes (MPI-3.1 chapter 4): the predefined ones, derived ones as a type map of
//! byte blocks, and user buffers described by (memory, datatype, count).
//!
//! A datatype is its type map flattened to `(byte offset, byte length)` blocks, plus its
//! lower bound and extent; every constructor (contiguous, vector, hvector, indexed,
//! hindexed, struct, subarray, darray, resized) is the same operation on those lists.
//! Sends pack the blocks of a non-contiguous buffer into one message, receives unpack
//! it; a contiguous buffer is sent and received in place. Reductions need to know the
//! element type: `base` is the one primitive type a datatype is made of, if any. Each
//! type also keeps its signature (`signature`: what MPI_Get_elements counts) and the
//! call that made it (`envelope`).
//!
//! The pair types (`MPI_DOUBLE_INT`, ...) are their C struct: the value, the int after
//! it, and the struct's padding, which is extent and not data (MPI_Type_size of
//! `MPI_DOUBLE_INT` is 12, its extent 16), as in Open MPI and MPICH.

pub mod envelope;
pub mod piece;
pub mod predefined;
pub mod signature;

use std::borrow::Cow;
use std::os::raw::c_int;
use std::sync::Arc;

use crate::datatype::envelope::{Combiner, Contents};
use crate::datatype::predefined::{Basic, Layout, Marker, Predef};
use crate::datatype::signature::{Builder as SigBuilder, Signature};
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
    /// i128 (MPI_INTEGER16).
    I128,
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
    /// struct { double; int; }, its data without the padding (12 bytes).
    DoubleInt,
    /// struct { long; int; }, its data without the padding (12 bytes).
    LongInt,
    /// struct { int; int; }.
    TwoInt,
    /// struct { short; int; }, its data without the padding (6 bytes).
    ShortInt,
    /// float[2] (MPI_2REAL).
    TwoF32,
    /// double[2] (MPI_2DOUBLE_PRECISION).
    TwoF64,
    /// long double (MAX and MIN only).
    LongDouble,
    /// struct { long double; int; }, its data without the padding (20 bytes).
    LongDoubleInt,
    /// Bytes no predefined operation applies to (long double complex, half and quad
    /// precision and their pairs), of this size.
    Opaque(usize),
}

/// The primitive types an operation can run on, in a fixed order: a primitive's position
/// is its code in one-sided batches (`rma::batch`), the same in every process.
const CODED: [Prim; 23] = [
    Prim::I8,
    Prim::U8,
    Prim::I16,
    Prim::U16,
    Prim::I32,
    Prim::U32,
    Prim::I64,
    Prim::U64,
    Prim::I128,
    Prim::F32,
    Prim::F64,
    Prim::CF32,
    Prim::CF64,
    Prim::FloatInt,
    Prim::DoubleInt,
    Prim::LongInt,
    Prim::TwoInt,
    Prim::ShortInt,
    Prim::TwoF32,
    Prim::TwoF64,
    Prim::LongDouble,
    Prim::LongDoubleInt,
    Prim::Opaque(0),
];

impl Prim {
    /// Its code (`None` for bytes no operation applies to).
    pub fn code(self) -> Option<u8> {
        match self {
            Prim::Opaque(_) => None,
            p => CODED.iter().position(|&c| c == p).map(|i| i as u8),
        }
    }

    /// The primitive of code `c`.
    pub fn from_code(c: u8) -> Option<Prim> {
        match CODED.get(c as usize) {
            Some(Prim::Opaque(_)) | None => None,
            Some(&p) => Some(p),
        }
    }

    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            Prim::I8 | Prim::U8 => 1,
            Prim::I16 | Prim::U16 => 2,
            Prim::I32 | Prim::U32 | Prim::F32 => 4,
            Prim::ShortInt => 6,
            Prim::I64 | Prim::U64 | Prim::F64 | Prim::CF32 => 8,
            Prim::FloatInt | Prim::TwoInt | Prim::TwoF32 => 8,
            Prim::DoubleInt | Prim::LongInt => 12,
            Prim::I128 | Prim::CF64 | Prim::TwoF64 | Prim::LongDouble => 16,
            Prim::LongDoubleInt => 20,
            Prim::Opaque(n) => n,
        }
    }
}

/// Most blocks a derived datatype may have (a bound on the memory its type map takes).
const BLOCKS_MAX: usize = 1 << 24;

/// A datatype: its type map as byte blocks, bounds and extent, its signature, and how
/// it was made.
#[derive(Debug, Clone)]
pub struct Datatype {
    /// What messages call it: the name the program gave it, a predefined type's name,
    /// or the constructor of a derived type.
    pub name: String,
    /// What MPI_Type_get_name returns (empty for a derived type not named).
    pub mpi_name: String,
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
    pub blocks: Arc<[(isize, usize)]>,
    /// The one primitive type every element is made of, if there is one.
    pub base: Option<Prim>,
    /// One block at offset 0 of `size` bytes, and extent `size`: buffers are used in place.
    pub contiguous: bool,
    /// Committed (predefined types are).
    pub committed: bool,
    /// A predefined type (cannot be freed): the named ones and the F90 ones.
    pub predefined: bool,
    /// Its handle (what a user operation is called with).
    pub handle: c_int,
    /// Its basic elements.
    pub sig: Signature,
    /// The alignment of its most aligned basic element (for a struct's extent).
    pub align: usize,
    /// The lower bound was set by a marker (`MPI_LB`, or resizing) somewhere inside.
    pub lb_marked: bool,
    /// The upper bound was set by a marker (`MPI_UB`, or resizing) somewhere inside.
    pub ub_marked: bool,
    /// `MPI_LB` or `MPI_UB` themselves.
    pub marker: Option<Marker>,
    /// How it was made (MPI_Type_get_envelope).
    pub contents: Arc<Contents>,
    /// Attributes the program set: (key, value), in the order set.
    pub attrs: Vec<(c_int, usize)>,
}

fn overflow() -> MpiError {
    MpiError::new(class::COUNT, "count or displacement too large")
}

fn to_isize(v: i128) -> Result<isize> {
    isize::try_from(v).map_err(|_| overflow())
}

fn round_up(v: usize, to: usize) -> usize {
    v.div_ceil(to) * to
}

impl Datatype {
    /// A predefined type.
    pub fn predefined(p: &Predef) -> Datatype {
        let size = p.size();
        let (blocks, extent, sig, align, marker) = match p.layout {
            Layout::Plain(b, n) => (vec![(0, size)], size, vec![(b, n)], b.align(), None),
            Layout::Pair(b) => {
                let int = Basic::Int {
                    native: 4,
                    ext: 4,
                    signed: true,
                };
                let at = round_up(b.native(), int.align());
                let align = b.align().max(int.align());
                let blocks = if at == b.native() {
                    vec![(0, at + 4)]
                } else {
                    vec![(0, b.native()), (at as isize, 4)]
                };
                let ext = round_up(at + 4, align);
                (blocks, ext, vec![(b, 1), (int, 1)], align, None)
            }
            Layout::Marker(m) => (vec![], 0, vec![], 1, Some(m)),
        };
        let mut t = Datatype {
            name: p.name.to_string(),
            mpi_name: p.name.to_string(),
            size,
            lb: 0,
            extent: extent as isize,
            true_lb: 0,
            true_ub: blocks.last().map_or(0, |b| b.0 + b.1 as isize),
            blocks: blocks.into(),
            base: p.prim,
            contiguous: false,
            committed: true,
            predefined: true,
            handle: 0,
            sig: Signature::basic(&sig),
            align,
            lb_marked: false,
            ub_marked: false,
            marker,
            contents: Arc::new(Contents::named()),
            attrs: Vec::new(),
        };
        t.contiguous = t.is_contiguous();
        t
    }

    /// A derived type made of `parts`: (byte displacement, count, old type) each, in
    /// type-map order, recording `contents`. Its bounds (MPI-3.1 sections 4.1.6 and
    /// 4.1.7): the lowest and highest of its parts', but where a part carries a bound
    /// marker (MPI_LB / MPI_UB, or a resized type), the markers' only; a struct's upper
    /// bound is rounded up to the alignment of its most aligned element (the epsilon of
    /// section 4.1.6), as Open MPI and MPICH do for MPI_Type_create_struct only.
    pub fn derived(
        contents: Contents,
        parts: &[(isize, usize, Arc<Datatype>)],
    ) -> Result<Datatype> {
        let name = contents.combiner.constructor();
        let pad = contents.combiner == Combiner::Struct;
        let mut blocks: Vec<(isize, usize)> = Vec::new();
        // Bounds: (from markers, from data).
        let (mut mlb, mut mub, mut dlb, mut dub) = (None::<i128>, None::<i128>, None, None);
        let low = |b: &mut Option<i128>, v: i128| *b = Some(b.map_or(v, |x| x.min(v)));
        let high = |b: &mut Option<i128>, v: i128| *b = Some(b.map_or(v, |x| x.max(v)));
        let mut base: Option<Option<Prim>> = None;
        let mut size: usize = 0;
        let mut align = 1;
        let mut sig = SigBuilder::default();
        for (disp, count, old) in parts {
            if *count == 0 {
                continue;
            }
            let (d, ext, n) = (*disp as i128, old.extent as i128, *count as i128);
            match old.marker {
                Some(Marker::Lb) => {
                    low(&mut mlb, d);
                    continue;
                }
                Some(Marker::Ub) => {
                    high(&mut mub, d);
                    continue;
                }
                None => {}
            }
            base = Some(match base {
                None => old.base,
                Some(b) if b == old.base => b,
                Some(_) => None,
            });
            align = align.max(old.align);
            let span = (n - 1) * ext;
            let lo = d + old.lb as i128 + span.min(0);
            let hi = d + old.lb as i128 + ext + span.max(0);
            low(if old.lb_marked { &mut mlb } else { &mut dlb }, lo);
            high(if old.ub_marked { &mut mub } else { &mut dub }, hi);
            size = old
                .size
                .checked_mul(*count)
                .and_then(|s| s.checked_add(size))
                .ok_or_else(overflow)?;
            sig.push(*count, old);
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
                for &(off, len) in old.blocks.iter() {
                    let at = to_isize(d + j * ext + off as i128)?;
                    match blocks.last_mut() {
                        Some((o, l)) if *o + *l as isize == at => *l += len,
                        _ => blocks.push((at, len)),
                    }
                }
            }
        }
        blocks.retain(|b| b.1 > 0);
        let lb = mlb.or(dlb).unwrap_or(0);
        let mut ub = mub.or(dub).unwrap_or(0);
        if pad && mub.is_none() && align > 1 {
            let ext = ub - lb;
            ub += (align as i128 - ext.rem_euclid(align as i128)) % align as i128;
        }
        let true_lb = blocks.iter().map(|b| b.0).min().unwrap_or(0);
        let true_ub = blocks.iter().map(|b| b.0 + b.1 as isize).max().unwrap_or(0);
        let mut t = Datatype {
            name: name.to_string(),
            mpi_name: String::new(),
            size,
            lb: to_isize(lb)?,
            extent: to_isize(ub - lb)?,
            true_lb,
            true_ub,
            blocks: blocks.into(),
            base: base.flatten(),
            contiguous: false,
            committed: false,
            predefined: false,
            handle: 0,
            sig: sig.finish(),
            align,
            lb_marked: mlb.is_some(),
            ub_marked: mub.is_some(),
            marker: None,
            contents: Arc::new(contents),
            attrs: Vec::new(),
        };
        t.contiguous = t.is_contiguous();
        Ok(t)
    }

    fn is_contiguous(&self) -> bool {
        self.lb == 0
            && self.extent == self.size as isize
            && (self.blocks.is_empty() || self.blocks[..] == [(0, self.size)])
    }

    /// This type with its lower bound and extent set (MPI_Type_create_resized, MPI-3.1
    /// section 4.1.7: both bounds become markers).
    pub fn resized(old: &Arc<Datatype>, lb: isize, extent: isize) -> Datatype {
        let mut t = (**old).clone();
        t.name = Combiner::Resized.constructor().into();
        t.mpi_name = String::new();
        t.lb = lb;
        t.extent = extent;
        t.lb_marked = true;
        t.ub_marked = true;
        t.marker = None;
        t.committed = false;
        t.predefined = false;
        t.attrs = Vec::new();
        t.contents = Arc::new(Contents::new(
            Combiner::Resized,
            vec![],
            vec![lb, extent],
            vec![old.clone()],
        ));
        t.contiguous = t.is_contiguous();
        t
    }

    /// Sets the bounds as markers do (MPI-3.1 section 4.1.7): a subarray's and a
    /// darray's lower bound 0 and the whole array as extent (sections 4.1.3, 4.1.4).
    pub fn set_bounds(&mut self, lb: isize, extent: isize) {
        self.lb = lb;
        self.extent = extent;
        self.lb_marked = true;
        self.ub_marked = true;
        self.contiguous = self.is_contiguous();
    }

    /// A copy of `old` (MPI_Type_dup), without its name and attributes.
    pub fn dup(old: &Arc<Datatype>) -> Datatype {
        let mut t = (**old).clone();
        t.name = Combiner::Dup.constructor().into();
        t.mpi_name = String::new();
        t.predefined = false;
        t.attrs = Vec::new();
        t.contents = Arc::new(Contents::new(
            Combiner::Dup,
            vec![],
            vec![],
            vec![old.clone()],
        ));
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

    /// The byte blocks `count` elements from element `first` touch, as (offset from the
    /// origin, length), in type-map order: one block for a contiguous type (a 1 MiB
    /// MPI_Put of MPI_BYTE was a million blocks, 4 ms of merging them again).
    pub fn touched(&self, first: i128, count: usize) -> impl Iterator<Item = (i128, usize)> + '_ {
        let ext = self.extent as i128;
        let whole = self.contiguous.then(|| (first * ext, count * self.size));
        let each = (!self.contiguous).then_some(0..count as i128);
        whole
            .into_iter()
            .chain(each.into_iter().flatten().flat_map(move |e| {
                self.blocks
                    .iter()
                    .map(move |&(off, len)| ((first + e) * ext + off as i128, len))
            }))
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
/// buffer's origin (the C pointer) is `origin` bytes into it; or a packed copy of its
/// data (`Packed`).
pub struct Buf<'a> {
    /// The memory (or the packed copy).
    pub mem: &'a [u8],
    /// Offset of the C pointer in `mem`.
    pub origin: isize,
    /// The datatype.
    pub dt: Arc<Datatype>,
    /// None: `mem` is the program's memory. Some: `mem` is a packed copy, and these are
    /// the ranges of elements it holds: (first element, count, offset in `mem`).
    pub packed: Option<&'a [(i128, usize, usize)]>,
}

impl<'a> Buf<'a> {
    /// The buffer at `origin` bytes into the program's memory `mem`.
    pub fn new(mem: &'a [u8], origin: isize, dt: Arc<Datatype>) -> Buf<'a> {
        Buf {
            mem,
            origin,
            dt,
            packed: None,
        }
    }

    /// The data of `count` elements from element `first`, in message order (borrowed when
    /// the datatype is contiguous or the buffer packed).
    pub fn bytes(&self, first: i128, count: usize) -> Result<Cow<'a, [u8]>> {
        let Some(pieces) = self.packed else {
            return bytes_of(self.mem, self.origin, &self.dt, first, count);
        };
        if count == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        let end = first + count as i128;
        let (p0, _, at) = pieces
            .iter()
            .find(|&&(p, n, _)| p <= first && end <= p + n as i128)
            .ok_or_else(|| {
                MpiError::new(
                    class::INTERN,
                    format!("elements {first}..{end} were not packed"),
                )
            })?;
        let skip = self
            .dt
            .bytes_of(usize::try_from(first - p0).map_err(|_| overflow())?)?;
        let r = range(self.mem.len(), at + skip, self.dt.bytes_of(count)?)?;
        Ok(Cow::Borrowed(&self.mem[r]))
    }
}

/// The data of ranges of elements of a send buffer, packed (what a `Buf` reads when
/// the send buffer's bytes interleave with the receive buffer's: MPI-3.1 section 3.10
/// forbids only shared bytes, and Rust any slice over both).
#[derive(Debug, Default)]
pub struct Packed {
    /// The data, range after range.
    pub data: Vec<u8>,
    /// (first element, count, offset in `data`) of each range.
    pub pieces: Vec<(i128, usize, usize)>,
}

impl Packed {
    /// A send buffer of type `dt` reading this copy.
    pub fn buf(&self, dt: Arc<Datatype>) -> Buf<'_> {
        Buf {
            mem: &self.data,
            origin: 0,
            dt,
            packed: Some(&self.pieces),
        }
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
        for &(off, len) in dt.blocks.iter() {
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

impl<'a> BufMut<'a> {
    /// The bytes of `count` elements from `first`, to receive into in place, if the
    /// datatype is contiguous.
    pub fn in_place(&mut self, first: i128, count: usize) -> Result<Option<&mut [u8]>> {
        Ok(self.place(first, count)?.map(|r| &mut self.mem[r]))
    }

    /// `in_place` for the first `count` elements, for as long as the memory lives.
    pub fn into_place(self, count: usize) -> Result<Option<&'a mut [u8]>> {
        let place = self.place(0, count)?;
        let mem = self.mem;
        Ok(place.map(|r| &mut mem[r]))
    }

    /// Where in the memory `count` elements from `first` lie, if the datatype is
    /// contiguous.
    fn place(&self, first: i128, count: usize) -> Result<Option<std::ops::Range<usize>>> {
        if !self.dt.contiguous {
            return Ok(None);
        }
        if count == 0 {
            return Ok(Some(0..0));
        }
        let r = range(
            self.mem.len(),
            self.dt.at(self.origin, first, 0)?,
            self.dt.bytes_of(count)?,
        )?;
        Ok(Some(r))
    }

    /// The current data of `count` elements from `first`, in message order.
    pub fn bytes(&self, first: i128, count: usize) -> Result<Cow<'_, [u8]>> {
        bytes_of(self.mem, self.origin, &self.dt, first, count)
    }

    /// Spreads `data` over up to `count` elements from `first` (whole or partial:
    /// a shorter message fills the first bytes).
    pub fn write(&mut self, first: i128, count: usize, mut data: &[u8]) -> Result<()> {
        if self.dt.contiguous {
            // One copy, not one per element (a 1 MiB MPI_Get of MPI_BYTE landed byte by
            // byte, 58% of MPICH's rma_contig).
            let n = data.len().min(self.dt.bytes_of(count)?);
            if n > 0 {
                let r = range(self.mem.len(), self.dt.at(self.origin, first, 0)?, n)?;
                self.mem[r].copy_from_slice(&data[..n]);
            }
            return Ok(());
        }
        let dt = self.dt.clone();
        for e in 0..count as i128 {
            for &(off, len) in dt.blocks.iter() {
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
    use crate::datatype::predefined::{index_of, PREDEFINED};

    fn named(name: &str) -> Arc<Datatype> {
        Arc::new(Datatype::predefined(&PREDEFINED[index_of(name).unwrap()]))
    }

    fn int() -> Arc<Datatype> {
        named("MPI_INT")
    }

    fn made(c: Combiner) -> Contents {
        Contents::new(c, vec![], vec![], vec![])
    }

    #[test]
    fn vector_bounds_and_packing() {
        // 3 blocks of 2 ints, stride 4 ints: a column pair of a 3 x 4 matrix.
        let parts: Vec<_> = (0..3).map(|i| (i * 16, 2, int())).collect();
        let v = Datatype::derived(made(Combiner::Vector), &parts).unwrap();
        assert_eq!((v.size, v.lb, v.extent), (24, 0, 40));
        assert_eq!(v.blocks[..], [(0, 8), (16, 8), (32, 8)]);
        assert!(!v.contiguous);
        assert_eq!(v.base, Some(Prim::I32));
        let m: Vec<u8> = (0..48).collect();
        let b = Buf::new(&m, 0, Arc::new(v.clone()));
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
        let c = Arc::new(Datatype::derived(made(Combiner::Contiguous), &[(0, 5, int())]).unwrap());
        assert!(c.contiguous);
        assert_eq!(c.span(0, 3).unwrap(), (0, 60));
        let r = Datatype::resized(&c, 0, 40);
        assert!(!r.contiguous);
        assert_eq!(r.span(0, 2).unwrap(), (0, 60));
        assert_eq!(r.span(1, 1).unwrap(), (40, 20));
    }

    #[test]
    fn out_of_range_is_an_error_not_a_panic() {
        let m = [0u8; 4];
        let b = Buf::new(&m, 0, int());
        assert!(b.bytes(0, 2).is_err());
        assert!(b.bytes(-1, 1).is_err());
    }

    /// MPI-3.1 section 4.1.6: a struct's extent is padded to its most aligned element,
    /// as a C compiler pads the struct (`{char; double;}` is 16 bytes); the pair types
    /// are such structs, and their padding is not data.
    #[test]
    fn structs_are_padded_like_c() {
        let s = Datatype::derived(
            made(Combiner::Struct),
            &[(0, 1, named("MPI_CHAR")), (8, 1, named("MPI_DOUBLE"))],
        )
        .unwrap();
        assert_eq!((s.size, s.extent, s.align), (9, 16, 8));
        let di = named("MPI_DOUBLE_INT");
        assert_eq!((di.size, di.extent, di.sig.elements), (12, 16, 2));
        let si = named("MPI_SHORT_INT");
        assert_eq!((si.size, si.extent), (6, 8));
        assert_eq!(si.blocks[..], [(0, 2), (4, 4)]);
        let ldi = named("MPI_LONG_DOUBLE_INT");
        assert_eq!((ldi.size, ldi.extent), (20, 32));
        let v = Datatype::derived(
            made(Combiner::Hvector),
            &[(0, 1, named("MPI_DOUBLE")), (12, 1, named("MPI_DOUBLE"))],
        )
        .unwrap();
        assert_eq!(v.extent, 20, "only structs are padded");
    }

    /// MPI-3.1 section 4.1.7: where markers set a bound, the markers alone decide it.
    #[test]
    fn bound_markers_decide_the_bounds() {
        let s = Datatype::derived(
            made(Combiner::Struct),
            &[
                (-4, 1, named("MPI_LB")),
                (0, 2, int()),
                (20, 1, named("MPI_UB")),
            ],
        )
        .unwrap();
        assert_eq!((s.lb, s.extent, s.size), (-4, 24, 8));
        assert!(s.lb_marked && s.ub_marked);
        let s = Arc::new(s);
        let outer = Datatype::derived(
            made(Combiner::Struct),
            &[(0, 1, s.clone()), (-100, 1, named("MPI_CHAR"))],
        )
        .unwrap();
        assert_eq!(outer.lb, -4, "the marked lower bound wins over lower data");
        let r = Arc::new(Datatype::resized(&int(), 2, 6));
        let c = Datatype::derived(made(Combiner::Contiguous), &[(0, 3, r)]).unwrap();
        assert_eq!((c.lb, c.extent), (2, 18));
    }

    #[test]
    fn signatures_count_basic_elements() {
        use crate::datatype::signature::elements;
        let di = named("MPI_DOUBLE_INT");
        assert_eq!(elements(&di, 24), Some(4));
        assert_eq!(elements(&di, 20), Some(3));
        assert_eq!(elements(&di, 10), None);
        let s = Arc::new(
            Datatype::derived(
                made(Combiner::Struct),
                &[(0, 2, int()), (8, 1, named("MPI_DOUBLE"))],
            )
            .unwrap(),
        );
        let c = Datatype::derived(made(Combiner::Contiguous), &[(0, 3, s)]).unwrap();
        assert_eq!(c.sig.elements, 9);
        assert_eq!(elements(&c, 16 + 4), Some(4));
        assert_eq!(elements(&c, 16 + 8), Some(5));
        assert_eq!(elements(&c, 16 + 10), None);
        assert_eq!(elements(&c, 48), Some(9));
    }

    #[test]
    fn packed_copies_read_like_the_memory() {
        let parts: Vec<_> = (0..3).map(|i| (i * 16, 1, int())).collect();
        let v = Arc::new(Datatype::derived(made(Combiner::Vector), &parts).unwrap());
        let m: Vec<u8> = (0..200).collect();
        let direct = Buf::new(&m, 0, v.clone());
        let mut p = Packed::default();
        p.pieces.push((1, 2, 0));
        p.data = direct.bytes(1, 2).unwrap().into_owned();
        let b = p.buf(v);
        assert_eq!(b.bytes(2, 1).unwrap(), direct.bytes(2, 1).unwrap());
        assert_eq!(b.bytes(1, 2).unwrap(), direct.bytes(1, 2).unwrap());
        assert!(b.bytes(0, 1).is_err());
    }
}
