//! Strided and indexed views of a slice (MPI_Type_vector, MPI_Type_indexed): a message
//! made of blocks of a buffer, sent and received without the program copying them.
//!
//! Owns the block arithmetic and its checks: a view that would reach outside its slice is
//! refused when it is made, so packing and unpacking never index out of bounds.

use std::borrow::Cow;

use bytemuck::Pod;

use super::{Buffer, BufferMut, Layout, Target};
use crate::error::Error;

/// Why a view could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// A block ends past the slice.
    #[error("block {block} ends at element {end}, past the {len} elements of the slice")]
    OutOfBounds {
        /// Which block.
        block: usize,
        /// Its end (exclusive).
        end: usize,
        /// Slice length.
        len: usize,
    },
    /// Blocks of a receive view overlap (the message would be ambiguous).
    #[error("blocks {a} and {b} overlap")]
    Overlap {
        /// First block.
        a: usize,
        /// Second block.
        b: usize,
    },
}

/// `(offset, length)` of every block, checked against a slice of `len` elements.
fn check(blocks: &[(usize, usize)], len: usize, disjoint: bool) -> Result<(), LayoutError> {
    for (i, &(at, n)) in blocks.iter().enumerate() {
        let end = at.saturating_add(n);
        if end > len {
            return Err(LayoutError::OutOfBounds { block: i, end, len });
        }
    }
    if disjoint {
        let mut order: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].1 > 0).collect();
        order.sort_by_key(|&i| blocks[i].0);
        for w in order.windows(2) {
            let (a, b) = (blocks[w[0]], blocks[w[1]]);
            if a.0 + a.1 > b.0 {
                return Err(LayoutError::Overlap { a: w[0], b: w[1] });
            }
        }
    }
    Ok(())
}

fn strided(count: usize, block: usize, stride: usize) -> Vec<(usize, usize)> {
    (0..count).map(|i| (i * stride, block)).collect()
}

fn pack<T: Pod>(data: &[T], blocks: &[(usize, usize)]) -> Vec<u8> {
    let elem = std::mem::size_of::<T>();
    let mut out = Vec::with_capacity(blocks.iter().map(|b| b.1).sum::<usize>() * elem);
    for &(at, n) in blocks {
        out.extend_from_slice(bytemuck::cast_slice(&data[at..at + n]));
    }
    out
}

fn unpack<T: Pod>(data: &mut [T], blocks: &[(usize, usize)], mut bytes: &[u8]) {
    let elem = std::mem::size_of::<T>();
    for &(at, n) in blocks {
        if bytes.is_empty() {
            return;
        }
        let take = (n * elem).min(bytes.len()) / elem.max(1);
        let dst: &mut [u8] = bytemuck::cast_slice_mut(&mut data[at..at + take]);
        dst.copy_from_slice(&bytes[..take * elem]);
        bytes = &bytes[take * elem..];
    }
}

/// `count` blocks of `block` elements, `stride` elements apart, read from a slice
/// (MPI_Type_vector): a column of a row-major matrix is `Strided::new(&m, rows, 1, cols)`.
pub struct Strided<'a, T> {
    data: &'a [T],
    blocks: Vec<(usize, usize)>,
}

impl<'a, T: Pod> Strided<'a, T> {
    /// The view, or an error if it reaches past `data`.
    pub fn new(
        data: &'a [T],
        count: usize,
        block: usize,
        stride: usize,
    ) -> Result<Self, LayoutError> {
        let blocks = strided(count, block, stride);
        check(&blocks, data.len(), false)?;
        Ok(Strided { data, blocks })
    }
}

impl<T: Pod> Buffer for Strided<'_, T> {
    fn bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(pack(self.data, &self.blocks))
    }
}

/// A strided view of a slice to receive into (blocks must not overlap).
pub struct StridedMut<'a, T> {
    data: &'a mut [T],
    blocks: Vec<(usize, usize)>,
}

impl<'a, T: Pod> StridedMut<'a, T> {
    /// The view, or an error if it reaches past `data` or its blocks overlap.
    pub fn new(
        data: &'a mut [T],
        count: usize,
        block: usize,
        stride: usize,
    ) -> Result<Self, LayoutError> {
        let blocks = strided(count, block, stride);
        check(&blocks, data.len(), true)?;
        Ok(StridedMut { data, blocks })
    }
}

/// Blocks at arbitrary offsets of a slice, as `(offset, length)` pairs in message order
/// (MPI_Type_indexed).
pub struct Indexed<'a, T> {
    data: &'a [T],
    blocks: Vec<(usize, usize)>,
}

impl<'a, T: Pod> Indexed<'a, T> {
    /// The view, or an error if a block reaches past `data`.
    pub fn new(data: &'a [T], blocks: &[(usize, usize)]) -> Result<Self, LayoutError> {
        check(blocks, data.len(), false)?;
        Ok(Indexed {
            data,
            blocks: blocks.to_vec(),
        })
    }
}

impl<T: Pod> Buffer for Indexed<'_, T> {
    fn bytes(&self) -> Cow<'_, [u8]> {
        Cow::Owned(pack(self.data, &self.blocks))
    }
}

/// An indexed view of a slice to receive into (blocks must not overlap).
pub struct IndexedMut<'a, T> {
    data: &'a mut [T],
    blocks: Vec<(usize, usize)>,
}

impl<'a, T: Pod> IndexedMut<'a, T> {
    /// The view, or an error if a block reaches past `data` or blocks overlap.
    pub fn new(data: &'a mut [T], blocks: &[(usize, usize)]) -> Result<Self, LayoutError> {
        check(blocks, data.len(), true)?;
        Ok(IndexedMut {
            data,
            blocks: blocks.to_vec(),
        })
    }
}

macro_rules! receive_view {
    ($($v:ident),*) => {$(
        impl<T: Pod> Layout for $v<'_, T> {
            fn byte_len(&self) -> usize {
                self.blocks.iter().map(|b| b.1).sum::<usize>() * std::mem::size_of::<T>()
            }
            fn pack(&self) -> Vec<u8> {
                pack(self.data, &self.blocks)
            }
            fn unpack(&mut self, bytes: &[u8]) -> Result<(), Error> {
                unpack(self.data, &self.blocks, bytes);
                Ok(())
            }
        }

        impl<T: Pod> BufferMut for $v<'_, T> {
            fn target(&mut self) -> Target<'_> {
                Target::Scattered(Box::new(self))
            }
            fn elem_bytes(&self) -> usize {
                std::mem::size_of::<T>()
            }
        }

        impl<T: Pod> Buffer for $v<'_, T> {
            fn bytes(&self) -> Cow<'_, [u8]> {
                Cow::Owned(pack(self.data, &self.blocks))
            }
        }
    )*};
}

receive_view!(StridedMut, IndexedMut);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_round_trips() {
        // 3 x 4 row-major matrix; column 1.
        let m: Vec<u32> = (0..12).collect();
        let col = Strided::new(&m[1..], 3, 1, 4).unwrap();
        assert_eq!(
            bytemuck::cast_slice::<u8, u32>(&col.bytes()),
            &[1, 5, 9][..]
        );
        let mut z = vec![0u32; 12];
        let mut view = StridedMut::new(&mut z[2..], 3, 1, 4).unwrap();
        let bytes = col.bytes().into_owned();
        match view.target() {
            Target::Scattered(mut u) => {
                assert_eq!(u.byte_len(), 12);
                u.unpack(&bytes).unwrap();
            }
            Target::Contiguous(_) => panic!("a strided view is not contiguous"),
        }
        assert_eq!(z, [0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 9, 0]);
    }

    #[test]
    fn bad_views_are_refused() {
        let v = [0u8; 10];
        assert!(Strided::new(&v, 3, 2, 4).is_ok());
        assert_eq!(
            Strided::new(&v, 4, 2, 3).err(),
            Some(LayoutError::OutOfBounds {
                block: 3,
                end: 11,
                len: 10
            })
        );
        let mut w = [0u8; 10];
        assert!(matches!(
            IndexedMut::new(&mut w, &[(0, 4), (3, 2)]),
            Err(LayoutError::Overlap { .. })
        ));
        assert!(Indexed::new(&v, &[(8, 3)]).is_err());
        assert!(Indexed::new(&v, &[(usize::MAX, 2)]).is_err());
        let idx = Indexed::new(&v, &[(6, 2), (0, 1)]).unwrap();
        assert_eq!(idx.bytes().len(), 3);
    }
}
