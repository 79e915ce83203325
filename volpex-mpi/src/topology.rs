//! The process topology a communicator carries (MPI-3.1 chapter 7): a Cartesian grid
//! (`volpex::CartesianGrid`, which does its arithmetic), a graph or a distributed graph;
//! what `MPI_Topo_test` says of it, and the neighbours its neighbourhood collectives
//! exchange with (section 7.6).
//!
//! Owns these descriptions and the answers that follow from them alone. Must never make
//! a communicator nor reach the tables: `topo` makes topologies and registers them with
//! their communicators, `state::CommEntry` holds them.

use std::os::raw::c_int;

use volpex::CartesianGrid;

use crate::error::{MpiError, Result};
use crate::handles::{class, PROC_NULL};

/// MPI_GRAPH, as `MPI_Topo_test` answers.
pub const GRAPH: c_int = 1;
/// MPI_CART.
pub const CART: c_int = 2;
/// MPI_DIST_GRAPH.
pub const DIST_GRAPH: c_int = 3;

/// The topology of a communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Topology {
    /// A Cartesian grid (MPI_Cart_create).
    Cart(CartesianGrid),
    /// A graph (MPI_Graph_create).
    Graph(Graph),
    /// A distributed graph (MPI_Dist_graph_create, MPI_Dist_graph_create_adjacent).
    DistGraph(DistGraph),
}

/// A neighbour of a neighbourhood collective: its rank (or MPI_PROC_NULL) and the slot
/// its messages travel in (`volpex::Communicator::neighbor_exchange`).
pub type Neighbor = (c_int, u32);

/// The neighbours of one rank, in the order of the neighbourhood collectives' buffers
/// (MPI-3.1 section 7.6): it receives block i from `sources[i]` and sends block j to
/// `destinations[j]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbors {
    /// Where its blocks come from.
    pub sources: Vec<Neighbor>,
    /// Where its blocks go.
    pub destinations: Vec<Neighbor>,
}

impl Topology {
    /// What MPI_Topo_test answers.
    pub fn kind(&self) -> c_int {
        match self {
            Topology::Cart(_) => CART,
            Topology::Graph(_) => GRAPH,
            Topology::DistGraph(_) => DIST_GRAPH,
        }
    }

    /// The neighbours of `rank` (section 7.6). Cartesian: along each dimension the
    /// rank below, then the one above (MPI_Cart_shift by 1; MPI_PROC_NULL off a
    /// non-periodic edge), for both buffers; a message sent to the neighbour below
    /// travels in that dimension's "down" slot and arrives in the receiver's block of
    /// the neighbour above, so a periodic dimension of size 1 or 2 pairs the right
    /// blocks. Graph: the neighbours in MPI_Graph_neighbors order, for both buffers.
    /// Distributed graph: the sources and the destinations.
    pub fn neighbors(&self, rank: c_int) -> Result<Neighbors> {
        match self {
            Topology::Cart(cart) => {
                let ndims = cart.dims().len();
                let mut sources = Vec::with_capacity(2 * ndims);
                let mut destinations = Vec::with_capacity(2 * ndims);
                for d in 0..ndims {
                    let (below, above) = cart_shift(cart, rank, d as c_int, 1)?;
                    let (down, up) = (2 * d as u32, 2 * d as u32 + 1);
                    sources.extend([(below, up), (above, down)]);
                    destinations.extend([(below, down), (above, up)]);
                }
                Ok(Neighbors {
                    sources,
                    destinations,
                })
            }
            Topology::Graph(g) => {
                let n: Vec<Neighbor> = g.neighbors(rank)?.iter().map(|&r| (r, 0)).collect();
                Ok(Neighbors {
                    sources: n.clone(),
                    destinations: n,
                })
            }
            Topology::DistGraph(g) => Ok(Neighbors {
                sources: g.sources.iter().map(|&r| (r, 0)).collect(),
                destinations: g.destinations.iter().map(|&r| (r, 0)).collect(),
            }),
        }
    }
}

/// MPI_Cart_shift: (source, destination) of `rank`'s shift by `disp` along `direction`,
/// MPI_PROC_NULL past the edge of a non-periodic dimension (MPI-3.1 section 7.5.6).
pub fn cart_shift(
    cart: &CartesianGrid,
    rank: c_int,
    direction: c_int,
    disp: c_int,
) -> Result<(c_int, c_int)> {
    let (source, dest) = cart.shift(rank, direction, disp)?;
    Ok((source.unwrap_or(PROC_NULL), dest.unwrap_or(PROC_NULL)))
}

/// A graph topology: node i's neighbours are `edges[index[i - 1]..index[i]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// Cumulative degrees, one per node.
    pub index: Vec<c_int>,
    /// Every node's neighbours, one after the other.
    pub edges: Vec<c_int>,
}

impl Graph {
    /// Checks `index` and `edges` describe a graph of `index.len()` nodes.
    pub fn new(index: &[c_int], edges: &[c_int]) -> Result<Graph> {
        let bad = |why: String| MpiError::new(class::ARG, why);
        let mut before = 0;
        for (i, &x) in index.iter().enumerate() {
            if x < before {
                return Err(bad(format!(
                    "index[{i}] = {x} is below index[{}]",
                    i.max(1) - 1
                )));
            }
            before = x;
        }
        if before as usize != edges.len() {
            return Err(bad(format!(
                "index ends at {before} but {} edges are given",
                edges.len()
            )));
        }
        let n = index.len() as c_int;
        if let Some(e) = edges.iter().find(|&&e| e < 0 || e >= n) {
            return Err(MpiError::new(
                class::TOPOLOGY,
                format!("edge to {e} in a graph of {n} nodes"),
            ));
        }
        Ok(Graph {
            index: index.to_vec(),
            edges: edges.to_vec(),
        })
    }

    /// The neighbours of node `rank` (MPI_Graph_neighbors).
    pub fn neighbors(&self, rank: c_int) -> Result<&[c_int]> {
        let r = usize::try_from(rank)
            .ok()
            .filter(|&r| r < self.index.len())
            .ok_or_else(|| {
                MpiError::new(
                    class::RANK,
                    format!("rank {rank} is not a node of the graph"),
                )
            })?;
        let lo = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        Ok(&self.edges[lo..self.index[r] as usize])
    }
}

/// A distributed graph topology: this process's edges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DistGraph {
    /// Where its incoming edges come from.
    pub sources: Vec<c_int>,
    /// Their weights (empty if unweighted).
    pub source_weights: Vec<c_int>,
    /// Where its outgoing edges go.
    pub destinations: Vec<c_int>,
    /// Their weights (empty if unweighted).
    pub destination_weights: Vec<c_int>,
    /// Whether the graph has weights (not MPI_UNWEIGHTED).
    pub weighted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_graph_answers_its_neighbours() {
        // The example of MPI-3.1 section 7.5.3: 4 nodes.
        let g = Graph::new(&[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2]).unwrap();
        assert_eq!(g.neighbors(0).unwrap(), &[1, 3]);
        assert_eq!(g.neighbors(1).unwrap(), &[0]);
        assert_eq!(g.neighbors(3).unwrap(), &[0, 2]);
        assert!(g.neighbors(4).is_err());
    }

    #[test]
    fn a_bad_graph_is_an_error() {
        assert!(Graph::new(&[2, 1], &[1, 0]).is_err());
        assert!(Graph::new(&[1, 2], &[1, 2]).is_err());
        assert!(Graph::new(&[1, 3], &[1, 0]).is_err());
    }
}
