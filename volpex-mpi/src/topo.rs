//! Process topologies (MPI-3.1 chapter 7): the topology a communicator carries
//! (`Topology`: a Cartesian grid, a graph or a distributed graph), what `MPI_Topo_test`
//! says of it, and the neighbours its neighbourhood collectives exchange with (section
//! 7.6); Cartesian grids here (`MPI_Dims_create`, dimensions, periodicity and the
//! rank/coordinate arithmetic), graphs and distributed graphs in `topo/graph.rs`. Ranks
//! are never reordered (`reorder` is a hint the standard lets us ignore; Open MPI and
//! MPICH ignore it too unless a mapping module is configured): Cartesian ranks are laid
//! out in row-major order (the last dimension varies fastest).
//!
//! Owns the topologies and their communicators' creation. Must never send a message
//! itself: a topology is made from the communicator splits and duplicates of `volpex`,
//! and a distributed graph's edges travel by its all-to-all.

pub mod graph;

use std::os::raw::c_int;

use volpex::Communicator;

use crate::error::{MpiError, Result};
use crate::handles::{class, NULL, PROC_NULL, UNDEFINED};
use crate::state::{self, CommEntry};
pub use graph::{DistGraph, Graph};

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
    Cart(Cart),
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
                let mut sources = Vec::with_capacity(2 * cart.dims.len());
                let mut destinations = Vec::with_capacity(2 * cart.dims.len());
                for d in 0..cart.dims.len() {
                    let (below, above) = cart.shift(rank, d as c_int, 1)?;
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

/// The topology of communicator `comm` and this process's rank in it; MPI_ERR_TOPOLOGY
/// without one.
pub fn of(comm: c_int) -> Result<(Topology, c_int)> {
    state::with(|s| {
        let e = s.comms.get(comm)?;
        let t = e.topo.clone().ok_or_else(|| {
            MpiError::new(class::TOPOLOGY, "the communicator has no process topology")
        })?;
        Ok((t, e.comm.rank()))
    })
}

/// Registers `new`, made from communicator `comm`, with topology `topo` (and `comm`'s
/// error handler, MPI-3.1 section 8.3.1); `None` (a process outside the new group) is
/// MPI_COMM_NULL.
pub fn register(comm: c_int, new: Option<Communicator>, topo: Topology) -> Result<c_int> {
    let Some(new) = new else {
        return Ok(NULL);
    };
    state::with(|s| {
        let errhandler = s.comms.get(comm)?.errhandler;
        Ok(s.comms.insert(CommEntry {
            topo: Some(topo),
            ..CommEntry::intra(new, errhandler, "")
        }))
    })
}

/// A Cartesian grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cart {
    /// Processes along each dimension.
    pub dims: Vec<c_int>,
    /// Whether each dimension wraps around.
    pub periods: Vec<bool>,
}

impl Cart {
    /// Number of processes in the grid.
    pub fn size(&self) -> c_int {
        self.dims.iter().product()
    }

    /// Coordinates of `rank`.
    pub fn coords(&self, rank: c_int) -> Result<Vec<c_int>> {
        if rank < 0 || rank >= self.size() {
            return Err(MpiError::new(
                class::RANK,
                format!("rank {rank} is not in the grid"),
            ));
        }
        let mut c = vec![0; self.dims.len()];
        let mut r = rank;
        for (i, &d) in self.dims.iter().enumerate().rev() {
            c[i] = r % d;
            r /= d;
        }
        Ok(c)
    }

    /// The rank at `coords` (wrapped along periodic dimensions); an error outside the grid.
    pub fn rank(&self, coords: &[c_int]) -> Result<c_int> {
        self.rank_or_null(coords)?.ok_or_else(|| {
            MpiError::new(
                class::ARG,
                format!("coordinates {coords:?} are outside the grid"),
            )
        })
    }

    /// The rank at `coords`, None outside a non-periodic dimension.
    fn rank_or_null(&self, coords: &[c_int]) -> Result<Option<c_int>> {
        if coords.len() != self.dims.len() {
            return Err(MpiError::arg("wrong number of coordinates"));
        }
        let mut r = 0;
        for ((&c, &d), &p) in coords.iter().zip(&self.dims).zip(&self.periods) {
            let c = if p {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return Ok(None);
            };
            r = r * d + c;
        }
        Ok(Some(r))
    }

    /// MPI_Cart_shift: (source, destination) of a shift by `disp` along `direction`.
    pub fn shift(&self, rank: c_int, direction: c_int, disp: c_int) -> Result<(c_int, c_int)> {
        let dir = usize::try_from(direction)
            .ok()
            .filter(|&d| d < self.dims.len())
            .ok_or_else(|| MpiError::arg(format!("invalid direction {direction}")))?;
        let me = self.coords(rank)?;
        let at = |delta: c_int| -> Result<c_int> {
            let mut c = me.clone();
            c[dir] += delta;
            Ok(self.rank_or_null(&c)?.unwrap_or(PROC_NULL))
        };
        Ok((at(-disp)?, at(disp)?))
    }
}

/// MPI_Dims_create: fills the zero entries of `dims` so their product with the others is
/// `nnodes`, as balanced as possible, in non-increasing order (the library's
/// `volpex::dims_create`, with MPI's error class).
pub fn dims_create(nnodes: c_int, dims: &mut [c_int]) -> Result<()> {
    volpex::dims_create(nnodes, dims).map_err(|e| MpiError::new(class::DIMS, e.to_string()))
}

/// MPI_Cart_create: a communicator of the first `prod(dims)` ranks of `comm` with the
/// grid; MPI_COMM_NULL at the others.
pub fn cart_create(comm: c_int, cart: Cart) -> Result<c_int> {
    let c = state::intra(comm, "MPI_Cart_create")?;
    let n = cart.size();
    if cart.dims.iter().any(|&d| d <= 0) || n > c.size() {
        return Err(MpiError::new(
            class::DIMS,
            format!("grid {:?} does not fit {} processes", cart.dims, c.size()),
        ));
    }
    let color = (c.rank() < n).then_some(0);
    let new = c.split_by_color_with_key(color, c.rank())?;
    register(comm, new, Topology::Cart(cart))
}

/// The grid of communicator `comm`.
pub fn cart_of(comm: c_int) -> Result<(Cart, c_int)> {
    match of(comm)? {
        (Topology::Cart(cart), rank) => Ok((cart, rank)),
        _ => Err(MpiError::new(
            class::TOPOLOGY,
            "the communicator has no Cartesian topology",
        )),
    }
}

/// MPI_Topo_test: MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH or MPI_UNDEFINED.
pub fn topo_test(comm: c_int) -> Result<c_int> {
    state::with(|s| {
        Ok(s.comms
            .get(comm)?
            .topo
            .as_ref()
            .map_or(UNDEFINED, Topology::kind))
    })
}

/// MPI_Cart_sub: the sub-grids keeping the dimensions where `remain` is true.
pub fn cart_sub(comm: c_int, remain: &[bool]) -> Result<c_int> {
    let (cart, rank) = cart_of(comm)?;
    if remain.len() != cart.dims.len() {
        return Err(MpiError::arg("remain_dims has the wrong length"));
    }
    let me = cart.coords(rank)?;
    // Color: the coordinates along the dropped dimensions; key: the rank (row-major
    // order of the kept coordinates follows it).
    let mut color = 0;
    for i in 0..cart.dims.len() {
        if !remain[i] {
            color = color * cart.dims[i] + me[i];
        }
    }
    let sub = Cart {
        dims: (0..cart.dims.len())
            .filter(|&i| remain[i])
            .map(|i| cart.dims[i])
            .collect(),
        periods: (0..cart.dims.len())
            .filter(|&i| remain[i])
            .map(|i| cart.periods[i])
            .collect(),
    };
    let c = state::comm(comm)?;
    match c.split_by_color_with_key(Some(color), rank)? {
        Some(new) => register(comm, Some(new), Topology::Cart(sub)),
        None => Err(MpiError::new(class::INTERN, "MPI_Cart_sub: no sub-grid")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_create_balances() {
        let cases: &[(c_int, &[c_int], &[c_int])] = &[
            (6, &[0, 0], &[3, 2]),
            (7, &[0, 0], &[7, 1]),
            (16, &[0, 0, 0], &[4, 2, 2]),
            (12, &[0, 3, 0], &[2, 3, 2]),
            (1, &[0, 0], &[1, 1]),
        ];
        for (n, dims, want) in cases {
            let mut d = dims.to_vec();
            dims_create(*n, &mut d).unwrap();
            assert_eq!(&d[..], *want, "{n} {dims:?}");
        }
        assert!(dims_create(10, &mut [3, 0]).is_err());
    }

    #[test]
    fn shifts_wrap_only_on_periodic_dimensions() {
        let g = Cart {
            dims: vec![2, 3],
            periods: vec![false, true],
        };
        assert_eq!(g.coords(5).unwrap(), vec![1, 2]);
        assert_eq!(g.rank(&[1, 2]).unwrap(), 5);
        assert_eq!(g.shift(5, 1, 1).unwrap(), (4, 3));
        assert_eq!(g.shift(5, 0, 1).unwrap(), (2, PROC_NULL));
        assert_eq!(g.rank(&[0, -1]).unwrap(), 2);
        assert!(g.rank(&[2, 0]).is_err());
    }
}
