//! Process topologies (MPI-3.1 chapter 7): making communicators with a topology and what
//! the query functions answer of a communicator's topology (`topology::Topology`: a
//! Cartesian grid, a graph or a distributed graph, with its neighbours); Cartesian grids
//! here over `volpex::CartesianGrid`, which does their arithmetic for the Rust API too
//! (MPI's answers on top: MPI_PROC_NULL, error classes), graphs and distributed graphs in
//! `topo/graph.rs`. Ranks
//! are never reordered (`reorder` is a hint the standard lets us ignore; Open MPI and
//! MPICH ignore it too unless a mapping module is configured): Cartesian ranks are laid
//! out in row-major order (the last dimension varies fastest).
//!
//! Owns the topologies' communicators' creation. Must never send a message
//! itself: a topology is made from the communicator splits and duplicates of `volpex`,
//! and a distributed graph's edges travel by its all-to-all.

pub mod graph;

use std::os::raw::c_int;

use volpex::{CartesianGrid, Communicator};

use crate::error::{MpiError, Result};
use crate::handles::{class, NULL, UNDEFINED};
use crate::state::{self, CommEntry};
use crate::topology::Topology;

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

/// MPI_Cart_rank: the rank at `coords` (wrapped along periodic dimensions);
/// MPI_ERR_ARG outside a non-periodic dimension (MPI-3.1 section 7.5.5).
pub fn cart_rank(cart: &CartesianGrid, coords: &[c_int]) -> Result<c_int> {
    cart.rank_at(coords)?.ok_or_else(|| {
        MpiError::new(
            class::ARG,
            format!("coordinates {coords:?} are outside the grid"),
        )
    })
}

/// MPI_Dims_create: fills the zero entries of `dims` so their product with the others is
/// `nnodes`, as balanced as possible, in non-increasing order (the library's
/// `volpex::dims_create`, with MPI's error class).
pub fn dims_create(nnodes: c_int, dims: &mut [c_int]) -> Result<()> {
    volpex::dims_create(nnodes, dims).map_err(|e| MpiError::new(class::DIMS, e.to_string()))
}

/// MPI_Cart_create: a communicator of the first `prod(dims)` ranks of `comm` with the
/// grid (`volpex::Communicator::create_cartesian_communicator`); MPI_COMM_NULL at the
/// others. A dimension that is not positive, or a grid larger than `comm`, is
/// MPI_ERR_DIMS (MPI-3.1 section 7.5.1).
pub fn cart_create(comm: c_int, dims: &[c_int], periods: &[bool]) -> Result<c_int> {
    let c = state::intra(comm, "MPI_Cart_create")?;
    let bad_dims = |e: volpex::Error| MpiError::new(class::DIMS, e.to_string());
    let grid = CartesianGrid::new(dims, periods).map_err(bad_dims)?;
    if grid.size() > c.size() {
        return Err(MpiError::new(
            class::DIMS,
            format!("grid {dims:?} does not fit {} processes", c.size()),
        ));
    }
    let new = c.create_cartesian_communicator(dims, periods, false)?;
    register(comm, new.map(|cc| cc.into_parts().0), Topology::Cart(grid))
}

/// The grid of communicator `comm`.
pub fn cart_of(comm: c_int) -> Result<(CartesianGrid, c_int)> {
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

/// MPI_Cart_sub: the sub-grids keeping the dimensions where `remain` is true
/// (`volpex::CartesianCommunicator::subgroup`, MPI-3.1 section 7.5.7).
pub fn cart_sub(comm: c_int, remain: &[bool]) -> Result<c_int> {
    let (cart, _) = cart_of(comm)?;
    let sub =
        volpex::CartesianCommunicator::from_grid(state::comm(comm)?, cart)?.subgroup(remain)?;
    let (new, grid) = sub.into_parts();
    register(comm, Some(new), Topology::Cart(grid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handles::PROC_NULL;
    use crate::topology::cart_shift;

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
        let g = CartesianGrid::new(&[2, 3], &[false, true]).unwrap();
        assert_eq!(g.coordinates(5).unwrap(), vec![1, 2]);
        assert_eq!(cart_rank(&g, &[1, 2]).unwrap(), 5);
        assert_eq!(cart_shift(&g, 5, 1, 1).unwrap(), (4, 3));
        assert_eq!(cart_shift(&g, 5, 0, 1).unwrap(), (2, PROC_NULL));
        assert_eq!(cart_rank(&g, &[0, -1]).unwrap(), 2);
        let outside = cart_rank(&g, &[2, 0]).unwrap_err();
        assert_eq!(outside.class, class::ARG);
        assert_eq!(
            g.coordinates(6).map_err(MpiError::from).unwrap_err().class,
            class::RANK
        );
        assert_eq!(cart_shift(&g, 0, 2, 1).unwrap_err().class, class::ARG);
    }
}
