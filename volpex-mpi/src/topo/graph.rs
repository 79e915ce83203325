//! Graph topologies (MPI-3.1 section 7.5.3) and distributed graph topologies (section
//! 7.5.4): their creation and what the query functions answer.
//!
//! A graph is the whole graph, as every process passes it to MPI_Graph_create (`index`,
//! `edges`). A distributed graph keeps only this process's edges: with
//! MPI_Dist_graph_create_adjacent, the lists it was given, in their order (the standard
//! fixes that order for the queries and the neighbourhood collectives); with
//! MPI_Dist_graph_create, where any process may name any edge, the edges are sent to
//! both their ends by one all-to-all, and each end lists them by the rank that named
//! them, then in the order it named them (the standard leaves this order to the
//! implementation; this one is the same in every replica of a rank). Weights are kept
//! as given; `MPI_UNWEIGHTED` graphs have none.
//!
//! Owns the graphs' creation (`topology::Graph` and `DistGraph` are what they are).
//! Must never hold a raw pointer (`raw::weights` reads the
//! weights arguments).

use std::os::raw::c_int;

use crate::error::{MpiError, Result};
use crate::handles::class;
use crate::raw::Weights;
use crate::state;

use super::register;
use crate::topology::{DistGraph, Graph, Topology};

/// Checks every rank of `ranks` is one of `size`.
fn check_ranks(ranks: &[c_int], size: c_int, what: &str) -> Result<()> {
    match ranks.iter().find(|&&r| r < 0 || r >= size) {
        Some(r) => Err(MpiError::new(
            class::RANK,
            format!("{what}: rank {r} (communicator size {size})"),
        )),
        None => Ok(()),
    }
}

/// The weights of `n` edges: whether the graph is weighted, and one weight per edge
/// (none if not).
fn weights_of(w: Weights<'_>, n: usize) -> Result<(bool, Vec<c_int>)> {
    match w {
        Weights::Unweighted => Ok((false, Vec::new())),
        Weights::Empty => Ok((true, Vec::new())),
        Weights::Given(w) if w.len() == n => Ok((true, w.to_vec())),
        Weights::Given(w) => Err(MpiError::arg(format!("{} weights for {n} edges", w.len()))),
    }
}

/// MPI_Graph_create (MPI-3.1 section 7.5.3): a communicator of the first `index.len()`
/// ranks of `comm` with the graph; MPI_COMM_NULL at the others.
pub fn graph_create(comm: c_int, index: &[c_int], edges: &[c_int]) -> Result<c_int> {
    let c = state::intra(comm, "MPI_Graph_create")?;
    let nnodes = index.len() as c_int;
    if nnodes > c.size() {
        return Err(MpiError::new(
            class::ARG,
            format!("a graph of {nnodes} nodes on {} processes", c.size()),
        ));
    }
    let graph = Graph::new(index, edges)?;
    let color = (c.rank() < nnodes).then_some(0);
    let new = c.split_by_color_with_key(color, c.rank())?;
    register(comm, new, Topology::Graph(graph))
}

/// The graph of communicator `comm`, and this process's rank.
pub fn graph_of(comm: c_int) -> Result<(Graph, c_int)> {
    match super::of(comm)? {
        (Topology::Graph(g), rank) => Ok((g, rank)),
        _ => Err(MpiError::new(
            class::TOPOLOGY,
            "the communicator has no graph topology",
        )),
    }
}

/// The distributed graph of communicator `comm`.
pub fn dist_graph_of(comm: c_int) -> Result<DistGraph> {
    match super::of(comm)? {
        (Topology::DistGraph(g), _) => Ok(g),
        _ => Err(MpiError::new(
            class::TOPOLOGY,
            "the communicator has no distributed graph topology",
        )),
    }
}

/// MPI_Dist_graph_create_adjacent (MPI-3.1 section 7.5.4): every process names its own
/// incoming and outgoing edges. The new communicator has the ranks of `comm`.
pub fn dist_graph_create_adjacent(
    comm: c_int,
    (sources, source_weights): (&[c_int], Weights<'_>),
    (destinations, destination_weights): (&[c_int], Weights<'_>),
) -> Result<c_int> {
    let c = state::intra(comm, "MPI_Dist_graph_create_adjacent")?;
    check_ranks(sources, c.size(), "sources")?;
    check_ranks(destinations, c.size(), "destinations")?;
    let (win, sw) = weights_of(source_weights, sources.len())?;
    let (wout, dw) = weights_of(destination_weights, destinations.len())?;
    let graph = DistGraph {
        sources: sources.to_vec(),
        source_weights: sw,
        destinations: destinations.to_vec(),
        destination_weights: dw,
        weighted: win || wout,
    };
    register(comm, Some(c.duplicate()), Topology::DistGraph(graph))
}

/// MPI_Dist_graph_create (MPI-3.1 section 7.5.4): this process names, for each of
/// `sources`, `degrees[i]` edges to ranks of `destinations` (one after the other). The
/// edges reach both their ends, so each end learns its own.
pub fn dist_graph_create(
    comm: c_int,
    sources: &[c_int],
    degrees: &[c_int],
    destinations: &[c_int],
    weights: Weights<'_>,
) -> Result<c_int> {
    let c = state::intra(comm, "MPI_Dist_graph_create")?;
    let size = c.size();
    check_ranks(sources, size, "sources")?;
    check_ranks(destinations, size, "destinations")?;
    let (weighted, w) = weights_of(weights, destinations.len())?;
    // Each edge named here, as (source, destination, weight).
    let mut edges = Vec::with_capacity(destinations.len());
    let mut next = 0usize;
    for (&s, &d) in sources.iter().zip(degrees) {
        let d = usize::try_from(d).map_err(|_| MpiError::arg(format!("negative degree {d}")))?;
        let end = next
            .checked_add(d)
            .filter(|&e| e <= destinations.len())
            .ok_or_else(|| MpiError::arg("degrees name more edges than destinations"))?;
        for (k, &d) in destinations.iter().enumerate().take(end).skip(next) {
            edges.push([s, d, w.get(k).copied().unwrap_or(1)]);
        }
        next = end;
    }
    // Rank r gets every edge with an end at r: [source, destination, weight] triples.
    let n = size as usize;
    let mut out: Vec<Vec<c_int>> = vec![Vec::new(); n];
    for e in &edges {
        out[e[0] as usize].extend_from_slice(e);
        if e[1] != e[0] {
            out[e[1] as usize].extend_from_slice(e);
        }
    }
    let counts: Vec<i32> = out.iter().map(|v| v.len() as i32).collect();
    let mut incoming = vec![0i32; n];
    c.all_to_all_into(&counts[..], &mut incoming[..])?;
    let send: Vec<c_int> = out.concat();
    let send_counts: Vec<usize> = counts.iter().map(|&k| k as usize).collect();
    let recv_counts: Vec<usize> = incoming.iter().map(|&k| k.max(0) as usize).collect();
    let mut recv = vec![0 as c_int; recv_counts.iter().sum()];
    c.all_to_all_varcount_into(&send, &send_counts, &mut recv, &recv_counts)?;
    let me = c.rank();
    let mut graph = DistGraph {
        sources: Vec::new(),
        source_weights: Vec::new(),
        destinations: Vec::new(),
        destination_weights: Vec::new(),
        weighted,
    };
    for e in recv.chunks_exact(3) {
        if e[1] == me {
            graph.sources.push(e[0]);
            graph.source_weights.push(e[2]);
        }
        if e[0] == me {
            graph.destinations.push(e[1]);
            graph.destination_weights.push(e[2]);
        }
    }
    if !weighted {
        graph.source_weights.clear();
        graph.destination_weights.clear();
    }
    register(comm, Some(c.duplicate()), Topology::DistGraph(graph))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_the_sentinels() {
        assert_eq!(weights_of(Weights::Unweighted, 3).unwrap(), (false, vec![]));
        assert_eq!(weights_of(Weights::Empty, 0).unwrap(), (true, vec![]));
        assert_eq!(
            weights_of(Weights::Given(&[4, 5]), 2).unwrap(),
            (true, vec![4, 5])
        );
        assert!(weights_of(Weights::Given(&[4]), 2).is_err());
    }
}
