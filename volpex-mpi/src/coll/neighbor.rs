//! Neighbourhood collectives (MPI-3.1 section 7.6): MPI_Neighbor_allgather(v) and
//! MPI_Neighbor_alltoall(v/w), and their immediate forms (section 7.7), on a
//! communicator's Cartesian, graph or distributed graph topology (`topology::Neighbors`
//! says who, in which order). Each is a `Job` whose kernel is one
//! `volpex::Communicator::neighbor_exchange`: this rank's blocks for its destinations,
//! packed one after the other, and a receive for each source into the pieces of the
//! receive buffer. A neighbour that is MPI_PROC_NULL (off the edge of a non-periodic
//! Cartesian dimension) gets nothing and leaves its receive block as it was.
//!
//! Owns the mapping from buffers to neighbours. Must never decide who the neighbours are
//! (`topo` does).

use std::borrow::Cow;
use std::ops::Range;
use std::os::raw::c_int;

use crate::error::{MpiError, Result};
use crate::handles::{class, PROC_NULL};
use crate::topo;
use crate::topology::{Neighbor, Neighbors};

use super::job::{self, Job, Output};
use super::lengths;
use crate::datatype::piece::{Piece, PiecedMut, Source};

/// The neighbours of this rank in communicator `comm`'s topology.
pub fn neighbors(comm: c_int) -> Result<Neighbors> {
    let (t, rank) = topo::of(comm)?;
    t.neighbors(rank)
}

/// The send side: the send buffer and one piece per destination (`Each`), or one piece
/// for all of them (`Same`, the all-gathers).
pub enum Sends<'a> {
    /// Block j goes to destination j.
    Each(Source<'a>, Vec<Piece>),
    /// The same block goes to every destination.
    Same(Source<'a>, Piece),
}

/// A message out: its destination, its slot and its bytes in the packed input.
type Out = (c_int, u32, Range<usize>);

/// A neighbourhood collective: `sends` to the destinations of `comm`'s topology, one
/// piece of `recv` per source.
pub fn exchange<'a>(comm: c_int, sends: Sends<'a>, (recv, rps): PiecedMut<'a>) -> Result<Job<'a>> {
    let nb = neighbors(comm)?;
    if rps.len() != nb.sources.len() {
        return Err(count_mismatch("receive", rps.len(), nb.sources.len()));
    }
    // The messages out: (rank, slot, bytes of the packed input).
    let (input, out): (Cow<'a, [u8]>, Vec<Out>) = match sends {
        Sends::Same(buf, piece) => {
            let data = buf.pack(std::slice::from_ref(&piece))?;
            let all = 0..data.len();
            let out = nb
                .destinations
                .iter()
                .filter(|n| n.0 != PROC_NULL)
                .map(|&(r, slot)| (r, slot, all.clone()))
                .collect();
            (data, out)
        }
        Sends::Each(buf, sps) => {
            if sps.len() != nb.destinations.len() {
                return Err(count_mismatch("send", sps.len(), nb.destinations.len()));
            }
            let (to, sps) = live(&nb.destinations, sps);
            let mut at = 0;
            let mut out = Vec::with_capacity(to.len());
            for (&(r, slot), len) in to.iter().zip(lengths(&sps)?) {
                out.push((r, slot, at..at + len));
                at += len;
            }
            (buf.pack(&sps)?, out)
        }
    };
    // The messages in: (rank, slot, length), into the live sources' pieces in order.
    let (from, rps) = live(&nb.sources, rps);
    let ins: Vec<(c_int, u32, usize)> = from
        .iter()
        .zip(lengths(&rps)?)
        .map(|(&(r, slot), len)| (r, slot, len))
        .collect();
    let kernel: job::Kernel = Box::new(move |c, input, result| {
        let sends: Vec<(c_int, u32, &[u8])> = out
            .iter()
            .map(|(r, slot, range)| (*r, *slot, &input[range.clone()]))
            .collect();
        let mut recvs = Vec::with_capacity(ins.len());
        let mut rest = result;
        for &(r, slot, len) in &ins {
            let (mine, tail) = rest.split_at_mut(len);
            recvs.push((r, slot, mine));
            rest = tail;
        }
        c.neighbor_exchange(&sends, &mut recvs)
    });
    Job::new(comm, input, Some(Output::new(recv, rps)), 0, kernel)
}

/// The neighbours that are not MPI_PROC_NULL, with their pieces.
fn live(neighbors: &[Neighbor], pieces: Vec<Piece>) -> (Vec<Neighbor>, Vec<Piece>) {
    neighbors
        .iter()
        .copied()
        .zip(pieces)
        .filter(|(n, _)| n.0 != PROC_NULL)
        .unzip()
}

fn count_mismatch(side: &str, got: usize, want: usize) -> MpiError {
    MpiError::new(
        class::ARG,
        format!("{got} {side} blocks for {want} neighbours"),
    )
}

/// The in- and out-degree of this rank in `comm`'s topology (how many counts and
/// displacements the `v` and `w` forms take).
pub fn degrees(comm: c_int) -> Result<(usize, usize)> {
    let nb = neighbors(comm)?;
    Ok((nb.sources.len(), nb.destinations.len()))
}
