//! Pieces of a buffer (`Piece`: a run of elements of one datatype at an offset from the
//! buffer's origin, the blocks of the `v` and `w` collectives) and a send buffer as a
//! collective reads it (`Source`: the program's memory, or a packed copy of the pieces it
//! sends), with the packing of pieces into one run of bytes.
//!
//! Owns these descriptions and their packing. Must never hold a raw pointer (`raw` makes
//! the buffers and the copies) nor the semantics of a collective (`coll`).

use std::borrow::Cow;
use std::sync::Arc;

use super::{Buf, BufMut, Datatype};
use crate::error::{MpiError, Result};
use crate::handles::class;

/// `count` elements of `dt` starting `at` bytes from a buffer's origin (the C pointer).
#[derive(Clone)]
pub struct Piece {
    /// Byte offset of the first element's origin from the buffer's.
    pub at: isize,
    /// Elements.
    pub count: usize,
    /// Their datatype.
    pub dt: Arc<Datatype>,
}

impl Piece {
    /// The piece `count` elements from element `first` of `dt`.
    pub fn elements(dt: &Arc<Datatype>, first: i128, count: usize) -> Result<Piece> {
        let at = first
            .checked_mul(dt.extent as i128)
            .and_then(|a| isize::try_from(a).ok())
            .ok_or_else(|| MpiError::new(class::COUNT, "displacement too large"))?;
        Ok(Piece {
            at,
            count,
            dt: dt.clone(),
        })
    }

    /// Bytes of data in it.
    pub fn bytes(&self) -> Result<usize> {
        self.dt.bytes_of(self.count)
    }

    /// Whether it holds data (a piece without any may lie anywhere, even outside the
    /// buffer's memory).
    pub fn has_data(&self) -> bool {
        self.dt.size > 0 && self.count > 0
    }
}

/// A send buffer and its pieces (the `w` forms: a datatype per piece).
pub type Pieced<'a> = (Source<'a>, Vec<Piece>);
/// A receive buffer and its pieces.
pub type PiecedMut<'a> = (BufMut<'a>, Vec<Piece>);

/// A send buffer as a collective reads it (`raw::source` makes it): the program's
/// memory, or, when the send buffer's extent overlaps the receive buffer's without
/// sharing a byte with it (MPI-3.1 section 3.10 allows that: two strided datatypes may
/// interleave), a packed copy of the pieces the call sends, taken at the call before the
/// receive buffer was made. The job then owns its input, and no slice over the send
/// buffer's memory ever aliases the receive buffer.
pub enum Source<'a> {
    /// The program's memory.
    Memory(Buf<'a>),
    /// The data of `pieces`, each at its offset in `data`.
    Copy {
        /// The pieces' data, one after the other.
        data: Vec<u8>,
        /// Each piece copied (those with data) and where its data starts.
        pieces: Vec<(Piece, usize)>,
        /// The buffer's datatype (of the `w` forms: one of the pieces').
        dt: Arc<Datatype>,
    },
}

impl<'a> Source<'a> {
    /// The buffer's datatype.
    pub fn dt(&self) -> &Arc<Datatype> {
        match self {
            Source::Memory(b) => &b.dt,
            Source::Copy { dt, .. } => dt,
        }
    }

    /// The data of the first `count` elements.
    pub fn first(self, count: usize) -> Result<Cow<'a, [u8]>> {
        let p = Piece::elements(self.dt(), 0, count)?;
        self.pack(std::slice::from_ref(&p))
    }

    /// The data of `pieces`, one after the other (see `pack`).
    pub fn pack(self, pieces: &[Piece]) -> Result<Cow<'a, [u8]>> {
        let (data, copied) = match self {
            Source::Memory(b) => return pack(&b, pieces),
            Source::Copy { data, pieces, .. } => (data, pieces),
        };
        let wanted: Vec<&Piece> = pieces.iter().filter(|p| p.has_data()).collect();
        if wanted.len() == copied.len() && wanted.iter().zip(&copied).all(|(w, (c, _))| w.is(c)) {
            return Ok(Cow::Owned(data));
        }
        let mut out = Vec::new();
        for p in wanted {
            out.extend_from_slice(copied_part(&data, &copied, p)?);
        }
        Ok(Cow::Owned(out))
    }
}

impl Piece {
    /// Whether it is `other`: the same elements of the same datatype.
    fn is(&self, other: &Piece) -> bool {
        self.at == other.at && self.count == other.count && Arc::ptr_eq(&self.dt, &other.dt)
    }
}

/// The data of piece `p` in a copy of `copied` pieces: a run of elements of one of them.
fn copied_part<'d>(data: &'d [u8], copied: &[(Piece, usize)], p: &Piece) -> Result<&'d [u8]> {
    let len = p.bytes()?;
    for (c, start) in copied.iter().filter(|(c, _)| Arc::ptr_eq(&c.dt, &p.dt)) {
        let (ext, d) = (c.dt.extent, p.at - c.at);
        let skip = match d {
            0 => 0,
            _ if ext != 0 && d % ext == 0 && d / ext > 0 => (d / ext) as usize,
            _ => continue,
        };
        if skip.checked_add(p.count).is_none_or(|end| end > c.count) {
            continue;
        }
        let from = start + c.dt.bytes_of(skip)?;
        if let Some(part) = data.get(from..from + len) {
            return Ok(part);
        }
    }
    Err(MpiError::new(
        class::INTERN,
        "a send piece missing from its copy",
    ))
}

/// The pieces of blocks (first element, count) of one datatype.
pub fn pieces(dt: &Arc<Datatype>, blocks: &[(i128, usize)]) -> Result<Vec<Piece>> {
    blocks
        .iter()
        .map(|&(first, count)| Piece::elements(dt, first, count))
        .collect()
}

/// The data of `pieces` of `buf`, one after the other: borrowed when they lie in order
/// in contiguous datatypes.
pub fn pack<'a>(buf: &Buf<'a>, pieces: &[Piece]) -> Result<Cow<'a, [u8]>> {
    if let Some((start, len)) = packed_span(buf.mem.len(), buf.origin, pieces)? {
        return Ok(Cow::Borrowed(&buf.mem[start..start + len]));
    }
    let mut out = Vec::new();
    for p in pieces.iter().filter(|p| p.has_data()) {
        let b = Buf::new(buf.mem, buf.origin + p.at, p.dt.clone());
        out.extend_from_slice(&b.bytes(0, p.count)?);
    }
    Ok(Cow::Owned(out))
}

/// The bytes `pieces` cover in memory of `mem_len` bytes whose origin is `origin` bytes
/// in, if they are their packed form: contiguous datatypes, each piece right after the
/// one before. None otherwise.
pub fn packed_span(
    mem_len: usize,
    origin: isize,
    pieces: &[Piece],
) -> Result<Option<(usize, usize)>> {
    let with_data = pieces.iter().filter(|p| p.has_data());
    let Some(first) = with_data.clone().next() else {
        return Ok(Some((0, 0)));
    };
    let mut next = first.at;
    for p in with_data {
        if !p.dt.contiguous || p.at != next {
            return Ok(None);
        }
        next += p.bytes()? as isize;
    }
    let len = (next - first.at) as usize;
    if len == 0 {
        return Ok(Some((0, 0)));
    }
    let start = usize::try_from(origin + first.at)
        .ok()
        .filter(|s| s.checked_add(len).is_some_and(|e| e <= mem_len))
        .ok_or_else(|| MpiError::new(class::BUFFER, "datatype reaches outside the buffer"))?;
    Ok(Some((start, len)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::predefined::{index_of, PREDEFINED};

    fn int() -> Arc<Datatype> {
        Arc::new(Datatype::predefined(
            &PREDEFINED[index_of("MPI_INT").unwrap()],
        ))
    }

    /// A copy of a send buffer answers for the pieces it holds and for runs of their
    /// elements, and for nothing else.
    #[test]
    fn a_copy_gives_the_pieces_it_holds() {
        let t = int();
        let data: Vec<u8> = (0..24).collect();
        let copy = |pieces: Vec<(Piece, usize)>| Source::Copy {
            data: data.clone(),
            pieces,
            dt: t.clone(),
        };
        let piece = |first, count| Piece::elements(&t, first, count).unwrap();
        // Elements 0..4 and 10..12, one after the other in the copy.
        let held = vec![(piece(0, 4), 0), (piece(10, 2), 16)];
        let all = copy(held.clone())
            .pack(&[piece(0, 4), piece(10, 2)])
            .unwrap();
        assert!(matches!(all, Cow::Owned(_)));
        assert_eq!(&*all, &data[..]);
        let part = copy(held.clone())
            .pack(&[piece(11, 1), piece(1, 2), piece(5, 0)])
            .unwrap();
        assert_eq!(&*part, &[&data[20..24], &data[4..12]].concat()[..]);
        assert_eq!(&*copy(held.clone()).first(1).unwrap(), &data[..4]);
        // Not copied: elements 3..5, or the same elements of another datatype.
        assert!(copy(held.clone()).pack(&[piece(3, 2)]).is_err());
        let other = Piece::elements(&int(), 0, 1).unwrap();
        assert!(copy(held).pack(&[other]).is_err());
    }
}
