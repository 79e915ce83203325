//! File views (MPI-3.1 section 13.3): a displacement, an etype and a filetype, and the
//! flattening of a range of the view's data into `(file offset, length)` pieces, with
//! the datatype engine's type maps (`Datatype::blocks`, the filetype tiled from the
//! displacement at every extent).
//!
//! Owns the arithmetic only; must never touch a file or the handle tables.

use std::sync::Arc;

use crate::datatype::Datatype;
use crate::error::{MpiError, Result};
use crate::handles::class;

/// A view: where the process's data lies in the file.
#[derive(Clone)]
pub struct View {
    /// Byte offset of the first tile of the filetype.
    pub disp: u64,
    /// The unit of positions and offsets.
    pub etype: Arc<Datatype>,
    /// The pattern tiled over the file from `disp`.
    pub filetype: Arc<Datatype>,
    /// Their handles as the program gave them.
    pub handles: (i32, i32),
    /// The data representation is external32 (big-endian; only for types whose basic
    /// elements have the same size in both, so the layout is the native one).
    pub external32: bool,
}

/// A piece of file: (offset in bytes, length).
pub type Piece = (u64, usize);

impl View {
    /// The default view: displacement 0, etype and filetype MPI_BYTE (section 13.3).
    pub fn bytes(byte: Arc<Datatype>, handle: i32) -> View {
        View {
            disp: 0,
            etype: byte.clone(),
            filetype: byte,
            handles: (handle, handle),
            external32: false,
        }
    }

    /// A view, checked: the filetype's data made of whole etypes, neither of them with
    /// negative displacements in its type map (section 13.3: "displacements in the
    /// typemap of the filetype are required to be non-negative and monotonically
    /// nondecreasing"; we check the first, and take the map in its order).
    pub fn new(
        disp: u64,
        etype: Arc<Datatype>,
        filetype: Arc<Datatype>,
        handles: (i32, i32),
    ) -> Result<View> {
        if etype.size == 0 {
            return Err(MpiError::new(class::TYPE, "an etype with no data"));
        }
        // A filetype without data is a rank that accesses nothing (MPICH's
        // setview_zero); any access of data through it is an error (`pieces`).
        if !filetype.size.is_multiple_of(etype.size) {
            return Err(MpiError::new(
                class::TYPE,
                format!(
                    "the filetype ({} bytes of data) is not made of whole etypes of {} bytes",
                    filetype.size, etype.size
                ),
            ));
        }
        if filetype.blocks.iter().any(|&(off, _)| off < 0)
            || (filetype.size > 0 && filetype.extent <= 0)
        {
            return Err(MpiError::new(
                class::TYPE,
                "a filetype with negative displacements or extent",
            ));
        }
        Ok(View {
            disp,
            etype,
            filetype,
            handles,
            external32: false,
        })
    }

    /// Bytes of data in one etype.
    pub fn esize(&self) -> u64 {
        self.etype.size as u64
    }

    /// The file pieces of `len` bytes of the view's data from data byte `start`, in data
    /// order, adjacent pieces merged.
    pub fn pieces(&self, start: u64, len: u64) -> Result<Vec<Piece>> {
        let ft = &self.filetype;
        let size = ft.size as u64;
        let mut out: Vec<Piece> = Vec::new();
        if len == 0 {
            return Ok(out);
        }
        if size == 0 {
            return Err(MpiError::new(
                class::TYPE,
                "an access of data through a filetype without data",
            ));
        }
        let mut tile = start / size;
        let mut skip = start % size;
        let mut left = len;
        // A contiguous filetype: one piece.
        if ft.blocks.len() == 1 && ft.blocks[0].1 as u64 == size && ft.extent as u64 == size {
            let at = self.file_offset(0, ft.blocks[0].0, start)?;
            return Ok(vec![(at, to_usize(len)?)]);
        }
        while left > 0 {
            for &(off, blen) in ft.blocks.iter() {
                let blen = blen as u64;
                if skip >= blen {
                    skip -= blen;
                    continue;
                }
                let n = (blen - skip).min(left);
                let at = self.file_offset(tile, off, skip)?;
                match out.last_mut() {
                    Some((o, l)) if *o + *l as u64 == at => *l += to_usize(n)?,
                    _ => out.push((at, to_usize(n)?)),
                }
                skip = 0;
                left -= n;
                if left == 0 {
                    break;
                }
            }
            tile += 1;
        }
        Ok(out)
    }

    /// The file offset of byte `skip` of the block at `off` in tile `tile`.
    fn file_offset(&self, tile: u64, off: isize, skip: u64) -> Result<u64> {
        let at = self.disp as i128
            + tile as i128 * self.filetype.extent as i128
            + off as i128
            + skip as i128;
        u64::try_from(at).map_err(|_| MpiError::new(class::ARG, "a file offset out of range"))
    }

    /// The absolute byte offset of view position `etypes` (MPI_File_get_byte_offset).
    pub fn byte_offset(&self, etypes: u64) -> Result<u64> {
        let start = etypes
            .checked_mul(self.esize())
            .ok_or_else(|| MpiError::arg("offset out of range"))?;
        Ok(self.pieces(start, 1)?.first().map_or(self.disp, |p| p.0))
    }

    /// How many bytes of the view's data lie before file byte `size` (where the view
    /// ends for MPI_SEEK_END).
    pub fn data_before(&self, size: u64) -> u64 {
        if size <= self.disp {
            return 0;
        }
        let ft = &self.filetype;
        if ft.size == 0 {
            return 0;
        }
        let ext = ft.extent as u64;
        let rel = size - self.disp;
        let tiles = rel / ext;
        let mut n = tiles * ft.size as u64;
        let rest = rel % ext;
        for &(off, len) in ft.blocks.iter() {
            let off = off as u64;
            if off < rest {
                n += (rest - off).min(len as u64);
            }
        }
        n
    }
}

fn to_usize(n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| MpiError::arg("an access too large"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::predefined::{index_of, PREDEFINED};

    fn named(name: &str) -> Arc<Datatype> {
        Arc::new(Datatype::predefined(&PREDEFINED[index_of(name).unwrap()]))
    }

    /// A filetype of `blocks` (offset, length) bytes and extent `extent`.
    fn filetype(blocks: &[(isize, usize)], extent: isize) -> Arc<Datatype> {
        let mut t = (*named("MPI_BYTE")).clone();
        t.blocks = blocks.into();
        t.size = blocks.iter().map(|b| b.1).sum();
        t.extent = extent;
        t.contiguous = false;
        Arc::new(t)
    }

    #[test]
    fn a_strided_view_flattens_into_its_blocks_tile_after_tile() {
        let v = View::new(
            100,
            named("MPI_BYTE"),
            filetype(&[(0, 4), (8, 2)], 16),
            (0, 0),
        )
        .unwrap();
        assert_eq!(v.pieces(0, 6).unwrap(), vec![(100, 4), (108, 2)]);
        assert_eq!(
            v.pieces(3, 8).unwrap(),
            vec![(103, 1), (108, 2), (116, 4), (124, 1)]
        );
        assert_eq!(v.byte_offset(4).unwrap(), 108);
        assert_eq!(v.data_before(100), 0);
        assert_eq!(v.data_before(110), 6);
        assert_eq!(v.data_before(118), 8);
    }

    #[test]
    fn adjacent_blocks_merge_and_a_contiguous_view_is_one_piece() {
        let v = View::new(0, named("MPI_BYTE"), filetype(&[(0, 4), (4, 4)], 8), (0, 0)).unwrap();
        assert_eq!(v.pieces(2, 12).unwrap(), vec![(2, 12)]);
        let c = View::new(8, named("MPI_INT"), named("MPI_INT"), (0, 0)).unwrap();
        assert_eq!(c.pieces(4, 400).unwrap(), vec![(12, 400)]);
        assert_eq!(c.byte_offset(3).unwrap(), 20);
    }

    #[test]
    fn a_filetype_not_made_of_whole_etypes_is_refused() {
        let e = View::new(0, named("MPI_INT"), filetype(&[(0, 6)], 8), (0, 0));
        assert_eq!(e.err().map(|e| e.class), Some(class::TYPE));
    }
}
