//! Blocks of a buffer at given displacements, one per rank, for the varying-count
//! collectives (the `mpi` crate's `Partition` and `PartitionMut`; MPI's `counts` and
//! `displs` arguments of MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoallv).
//!
//! Owns the block arithmetic and its checks, done when the collective runs (a negative,
//! too long or, for receiving, overlapping block is an error then), and moving the blocks
//! to and from their message form. Must never index outside the buffer.

use super::{Elements, ElementsMut, Equivalence};
use crate::error::Error;

/// Counts and displacements as given: anything that converts to `usize` (`i32` as in
/// the `mpi` crate, or `usize`).
fn convert<C: Copy + TryInto<usize>>(v: &[C], bad: &mut Option<&'static str>) -> Vec<usize> {
    v.iter()
        .map(|&c| {
            c.try_into().unwrap_or_else(|_| {
                bad.get_or_insert("partition: a count or displacement is negative");
                0
            })
        })
        .collect()
}

/// Block `i` (`counts[i]` elements from `displs[i]`) of a buffer, for rank i.
#[derive(Debug, Clone)]
struct Blocks {
    counts: Vec<usize>,
    displs: Vec<usize>,
    bad: Option<&'static str>,
}

impl Blocks {
    fn new<C, D>(counts: &[C], displs: &[D]) -> Blocks
    where
        C: Copy + TryInto<usize>,
        D: Copy + TryInto<usize>,
    {
        let mut bad = None;
        let counts = convert(counts, &mut bad);
        let displs = convert(displs, &mut bad);
        if counts.len() != displs.len() {
            bad.get_or_insert("partition: counts and displacements differ in length");
        }
        Blocks {
            counts,
            displs,
            bad,
        }
    }

    /// Checks the blocks against `ranks` and a buffer of `len` elements (and that they
    /// do not overlap when `disjoint`).
    fn check(&self, ranks: usize, len: usize, disjoint: bool) -> Result<(), Error> {
        if let Some(why) = self.bad {
            return Err(Error::Usage(why));
        }
        if self.counts.len() != ranks {
            return Err(Error::BufferSize {
                what: "partition counts (one per rank)",
                expected: ranks,
                got: self.counts.len(),
            });
        }
        for (&d, &c) in self.displs.iter().zip(&self.counts) {
            let end = d.saturating_add(c);
            if end > len {
                return Err(Error::BufferSize {
                    what: "partition buffer (a block ends past it)",
                    expected: end,
                    got: len,
                });
            }
        }
        if disjoint {
            let mut order: Vec<usize> = (0..ranks).filter(|&i| self.counts[i] > 0).collect();
            order.sort_by_key(|&i| self.displs[i]);
            for w in order.windows(2) {
                if self.displs[w[0]] + self.counts[w[0]] > self.displs[w[1]] {
                    return Err(Error::Usage("partition: receive blocks overlap"));
                }
            }
        }
        Ok(())
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.displs[i]..self.displs[i] + self.counts[i]
    }
}

/// Blocks of a buffer to send, one per rank: `counts[i]` elements from `displs[i]`
/// (blocks may overlap).
pub struct Partition<'a, T> {
    data: &'a [T],
    blocks: Blocks,
}

impl<'a, T: Equivalence> Partition<'a, T> {
    /// The partition of `data` (checked when a collective uses it).
    pub fn new<B, C, D>(data: &'a B, counts: impl AsRef<[C]>, displs: impl AsRef<[D]>) -> Self
    where
        B: Elements<Elem = T> + ?Sized,
        C: Copy + TryInto<usize>,
        D: Copy + TryInto<usize>,
    {
        Partition {
            data: data.elements(),
            blocks: Blocks::new(counts.as_ref(), displs.as_ref()),
        }
    }

    /// Elements per rank.
    pub fn counts(&self) -> &[usize] {
        &self.blocks.counts
    }

    /// Where each rank's block starts.
    pub fn displs(&self) -> &[usize] {
        &self.blocks.displs
    }

    /// The blocks in rank order as one message form, and their counts (checked
    /// against `ranks` ranks).
    pub(crate) fn packed(&self, ranks: usize) -> Result<(Vec<u8>, Vec<usize>), Error> {
        self.blocks.check(ranks, self.data.len(), false)?;
        let mut out = Vec::new();
        for i in 0..ranks {
            out.extend_from_slice(&T::encode(&self.data[self.blocks.range(i)]));
        }
        Ok((out, self.blocks.counts.clone()))
    }
}

/// Blocks of a buffer to receive into, one per rank: `counts[i]` elements from
/// `displs[i]` (blocks must not overlap; elements outside them are left as they are).
pub struct PartitionMut<'a, T> {
    data: &'a mut [T],
    blocks: Blocks,
}

impl<'a, T: Equivalence> PartitionMut<'a, T> {
    /// The partition of `data` (checked when a collective uses it).
    pub fn new<B, C, D>(data: &'a mut B, counts: impl AsRef<[C]>, displs: impl AsRef<[D]>) -> Self
    where
        B: ElementsMut<Elem = T> + ?Sized,
        C: Copy + TryInto<usize>,
        D: Copy + TryInto<usize>,
    {
        PartitionMut {
            data: data.elements_mut(),
            blocks: Blocks::new(counts.as_ref(), displs.as_ref()),
        }
    }

    /// Elements per rank.
    pub fn counts(&self) -> &[usize] {
        &self.blocks.counts
    }

    /// Where each rank's block starts.
    pub fn displs(&self) -> &[usize] {
        &self.blocks.displs
    }

    /// Checks the blocks against `ranks` ranks; returns their counts.
    pub(crate) fn checked(&self, ranks: usize) -> Result<Vec<usize>, Error> {
        self.blocks.check(ranks, self.data.len(), true)?;
        Ok(self.blocks.counts.clone())
    }

    /// Puts the message form of every block, one after the other in rank order, in
    /// place (after `checked`).
    pub(crate) fn unpack(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let mut at = 0;
        for i in 0..self.blocks.counts.len() {
            let n = self.blocks.counts[i] * T::WIRE_BYTES;
            let part = bytes.get(at..at + n).ok_or(Error::BufferSize {
                what: "partition message bytes",
                expected: at + n,
                got: bytes.len(),
            })?;
            T::decode(part, &mut self.data[self.blocks.range(i)])?;
            at += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_checked_when_used() {
        let v = [0u32; 10];
        assert!(Partition::new(&v, [2, 3], [0, 7]).packed(2).is_ok());
        assert!(Partition::new(&v, [2, 4], [0, 7]).packed(2).is_err());
        assert!(Partition::new(&v, [2, -1], [0, 7]).packed(2).is_err());
        assert!(Partition::new(&v, [2, 3], [0, 7]).packed(3).is_err());
        assert!(Partition::new(&v, [2usize, 3], [0usize]).packed(2).is_err());
        // Sending blocks may overlap; receiving ones may not.
        assert!(Partition::new(&v, [4, 4], [0, 2]).packed(2).is_ok());
        let mut w = [0u32; 10];
        assert!(PartitionMut::new(&mut w, [4, 4], [0, 2])
            .checked(2)
            .is_err());
        assert!(PartitionMut::new(&mut w, [2, 0, 4], [0, 1, 2])
            .checked(3)
            .is_ok());
    }

    #[test]
    fn blocks_round_trip_in_rank_order() {
        let v: Vec<u16> = (0..8).collect();
        let (bytes, counts) = Partition::new(&v, [2, 3], [5, 0]).packed(2).unwrap();
        assert_eq!(counts, [2, 3]);
        let mut w = [9u16; 8];
        let mut p = PartitionMut::new(&mut w[..], [2, 3], [0, 4]);
        p.checked(2).unwrap();
        p.unpack(&bytes).unwrap();
        assert_eq!(w, [5, 6, 9, 9, 0, 1, 2, 9]);
    }
}
