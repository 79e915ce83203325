//! The buffer-overlap rule (MPI-3.1 sections 2.3 and 3.10): the send and receive
//! buffers of one call must be disjoint, where a buffer is the bytes its datatype
//! touches, not the span of its extents. Two strided types whose extents interleave
//! (the columns of one matrix in a halo exchange) touch disjoint bytes and are valid.
//! This module answers "do these two buffers share a byte?"; it must never read or
//! write them (`raw` builds the views that do).

use crate::datatype::Datatype;

/// A buffer argument: the address of its origin (the C pointer), its datatype and the
/// ranges of elements (first, count) the call uses.
#[derive(Clone, Copy)]
pub struct Touch<'a> {
    /// The C pointer, as an address.
    pub base: usize,
    /// Its datatype.
    pub dt: &'a Datatype,
    /// (first element, count) of each range the call sends or receives.
    pub blocks: &'a [(i128, usize)],
}

/// The address ranges the touches `ts` touch, sorted and merged.
fn ranges(ts: &[Touch<'_>]) -> Vec<(i128, i128)> {
    let mut v: Vec<(i128, i128)> = Vec::new();
    for t in ts {
        let base = t.base as i128;
        for &(first, count) in t.blocks {
            if count == 0 || t.dt.size == 0 {
                continue;
            }
            if t.dt.contiguous {
                let at = base + first * t.dt.extent as i128;
                v.push((at, at + (t.dt.size as i128) * count as i128));
                continue;
            }
            v.extend(
                t.dt.touched(first, count)
                    .map(|(off, len)| (base + off, base + off + len as i128)),
            );
        }
    }
    v.sort_unstable();
    let mut merged: Vec<(i128, i128)> = Vec::with_capacity(v.len());
    for (lo, hi) in v {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

/// Whether some byte is touched by both `a` and `b`.
pub fn share_bytes(a: &Touch<'_>, b: &Touch<'_>) -> bool {
    any_share_bytes(std::slice::from_ref(a), std::slice::from_ref(b))
}

/// Whether some byte is touched by one of `a` and one of `b`: the two sides of a call
/// whose blocks each have their own datatype and place (MPI_Alltoallw's).
pub fn any_share_bytes(a: &[Touch<'_>], b: &[Touch<'_>]) -> bool {
    let (x, y) = (ranges(a), ranges(b));
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if x[i].1 <= y[j].0 {
            i += 1;
        } else if y[j].1 <= x[i].0 {
            j += 1;
        } else {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::envelope::{Combiner, Contents};
    use crate::datatype::predefined::{index_of, PREDEFINED};
    use std::sync::Arc;

    fn double() -> Arc<Datatype> {
        Arc::new(Datatype::predefined(
            &PREDEFINED[index_of("MPI_DOUBLE").unwrap()],
        ))
    }

    /// Column `c` of a rows x cols matrix of doubles, as MPI_Type_vector(rows, 1, cols).
    fn column(rows: isize, cols: isize) -> Datatype {
        let parts: Vec<_> = (0..rows).map(|i| (i * cols * 8, 1, double())).collect();
        Datatype::derived(
            Contents::new(Combiner::Vector, vec![], vec![], vec![]),
            &parts,
        )
        .unwrap()
    }

    /// A halo exchange: send column 1, receive into column 0 of the same matrix. The
    /// extents interleave, the bytes do not.
    #[test]
    fn columns_of_one_matrix_are_disjoint() {
        let col = column(4, 6);
        let m = 0x10000usize;
        let send = Touch {
            base: m + 8,
            dt: &col,
            blocks: &[(0, 1)],
        };
        let recv = Touch {
            base: m,
            dt: &col,
            blocks: &[(0, 1)],
        };
        assert!(!share_bytes(&send, &recv));
        let same = Touch {
            base: m + 8,
            ..recv
        };
        assert!(share_bytes(&send, &same));
        let d = double();
        let one = Touch {
            base: m + 3 * 48 + 8,
            dt: &d,
            blocks: &[(0, 1)],
        };
        assert!(share_bytes(&send, &one), "the last element of the column");
        let gap = Touch {
            base: m + 16,
            dt: &d,
            blocks: &[(0, 1), (6, 1)],
        };
        assert!(!share_bytes(&send, &gap));
    }

    /// Blocks of their own datatypes and places (MPI_Alltoallw's) share a byte when any
    /// one of a side's does with any one of the other's.
    #[test]
    fn pieces_of_several_datatypes() {
        let (col, d) = (column(4, 6), double());
        let m = 0x20000usize;
        let one = [(0i128, 1usize)];
        let send = [
            Touch {
                base: m + 8,
                dt: &col,
                blocks: &one,
            },
            Touch {
                base: m + 40,
                dt: &d,
                blocks: &one,
            },
        ];
        let mut recv = [
            Touch {
                base: m,
                dt: &col,
                blocks: &one,
            },
            Touch {
                base: m + 32,
                dt: &d,
                blocks: &one,
            },
        ];
        assert!(!any_share_bytes(&send, &recv));
        recv[1].base = m + 3 * 48 + 8;
        assert!(any_share_bytes(&send, &recv), "the column's last element");
    }
}
