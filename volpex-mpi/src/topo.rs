//! Cartesian process topologies (MPI-3.1 chapter 7): `MPI_Dims_create` and a
//! communicator's grid (dimensions, periodicity) with the rank/coordinate arithmetic.
//! Ranks are laid out in row-major order (the last dimension varies fastest) and never
//! reordered.

use std::os::raw::c_int;

use crate::error::{MpiError, Result};
use crate::handles::{class, NULL, PROC_NULL, UNDEFINED};
use crate::state::{self, CommEntry};

/// MPI_CART, as `MPI_Topo_test` answers.
pub const CART: c_int = 2;

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
    match c.split_by_color_with_key(color, c.rank())? {
        Some(new) => state::with(|s| {
            let errhandler = s.comms.get(comm)?.errhandler;
            Ok(s.comms.insert(CommEntry {
                topo: Some(cart),
                ..CommEntry::intra(new, errhandler, "")
            }))
        }),
        None => Ok(NULL),
    }
}

/// The grid of communicator `comm`.
pub fn cart_of(comm: c_int) -> Result<(Cart, c_int)> {
    state::with(|s| {
        let e = s.comms.get(comm)?;
        let cart = e.topo.clone().ok_or_else(|| {
            MpiError::new(
                class::TOPOLOGY,
                "the communicator has no Cartesian topology",
            )
        })?;
        Ok((cart, e.comm.rank()))
    })
}

/// MPI_Topo_test: MPI_CART or MPI_UNDEFINED.
pub fn topo_test(comm: c_int) -> Result<c_int> {
    state::with(|s| {
        Ok(if s.comms.get(comm)?.topo.is_some() {
            CART
        } else {
            UNDEFINED
        })
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
        Some(new) => state::with(|s| {
            let errhandler = s.comms.get(comm)?.errhandler;
            Ok(s.comms.insert(CommEntry {
                topo: Some(sub),
                ..CommEntry::intra(new, errhandler, "")
            }))
        }),
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
