//! Cartesian process topologies (MPI-3.1 chapter 7) in the `mpi` crate's shape:
//! `Communicator::create_cartesian_communicator`, and a `CartesianCommunicator` with
//! `shift`, `rank_to_coordinates`, `coordinates_to_rank`, `get_layout` and `subgroup`;
//! `dims_create` (MPI_Dims_create).
//!
//! Owns the grid arithmetic: ranks laid out in row-major order (the last dimension varies
//! fastest), never reordered (`reorder` is accepted and ignored, as MPI allows). Must
//! never communicate except through the communicator splits that make the grids, so every
//! replica of every member computes the same grid without a message of its own.

use std::ops::Deref;

use super::Communicator;
use crate::error::Error;

/// A Cartesian grid: processes along each dimension, and whether each wraps around,
/// with the rank <-> coordinates arithmetic (ranks in row-major order). A value of its
/// own, so a binding that keeps a communicator's grid beside it (the C ABI's handle
/// tables) computes with the same code as `CartesianCommunicator`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CartesianGrid {
    dims: Vec<i32>,
    periods: Vec<bool>,
}

impl CartesianGrid {
    /// A grid of `dims` processes along each dimension, `periods` saying which wrap
    /// around (MPI-3.1 section 7.5.1): one flag per dimension, every dimension positive,
    /// at most `i32::MAX` processes in all.
    pub fn new(dims: &[i32], periods: &[bool]) -> Result<CartesianGrid, Error> {
        if dims.len() != periods.len() {
            return Err(Error::Usage(
                "create_cartesian_communicator: dims and periods differ in length",
            ));
        }
        if dims.iter().any(|&d| d <= 0) {
            return Err(Error::Usage(
                "create_cartesian_communicator: every dimension must be positive",
            ));
        }
        if dims
            .iter()
            .try_fold(1i32, |p, &d| p.checked_mul(d))
            .is_none()
        {
            return Err(Error::Usage(
                "create_cartesian_communicator: the grid has more processes than the communicator",
            ));
        }
        Ok(CartesianGrid {
            dims: dims.to_vec(),
            periods: periods.to_vec(),
        })
    }

    /// Processes along each dimension.
    pub fn dims(&self) -> &[i32] {
        &self.dims
    }

    /// Whether each dimension wraps around.
    pub fn periods(&self) -> &[bool] {
        &self.periods
    }

    /// Number of processes in the grid.
    pub fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// Coordinates of `rank` (MPI_Cart_coords).
    pub fn coordinates(&self, rank: i32) -> Result<Vec<i32>, Error> {
        if !(0..self.size()).contains(&rank) {
            return Err(Error::RankOutOfRange {
                rank: rank.into(),
                size: self.size() as u32,
            });
        }
        Ok(coords_of(&self.dims, rank))
    }

    /// The rank at `coords`, wrapped along periodic dimensions; `None` outside a
    /// non-periodic one (MPI_Cart_rank; MPI_PROC_NULL in a shift).
    pub fn rank_at(&self, coords: &[i32]) -> Result<Option<i32>, Error> {
        if coords.len() != self.dims.len() {
            return Err(Error::Usage(
                "coordinates_to_rank: one coordinate per dimension",
            ));
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

    /// Source and destination of `rank`'s shift by `displacement` along `dimension`
    /// (MPI_Cart_shift): the ranks it receives from and sends to; `None`
    /// (MPI_PROC_NULL) past the edge of a non-periodic dimension.
    pub fn shift(
        &self,
        rank: i32,
        dimension: i32,
        displacement: i32,
    ) -> Result<(Option<i32>, Option<i32>), Error> {
        let dim = usize::try_from(dimension)
            .ok()
            .filter(|&d| d < self.dims.len())
            .ok_or(Error::Usage("shift: no such dimension"))?;
        let me = self.coordinates(rank)?;
        let at = |delta: i32| {
            let mut c = me.clone();
            c[dim] = c[dim].saturating_add(delta);
            self.rank_at(&c)
        };
        Ok((at(displacement.saturating_neg())?, at(displacement)?))
    }

    /// The sub-grid through `rank` keeping the dimensions where `retain` is true
    /// (MPI_Cart_sub), and the color of `rank`'s sub-grid: its coordinates along the
    /// dropped dimensions (split with this color and the rank as key, the kept
    /// coordinates follow row-major order).
    pub fn sub(&self, rank: i32, retain: &[bool]) -> Result<(i32, CartesianGrid), Error> {
        if retain.len() != self.dims.len() {
            return Err(Error::Usage("subgroup: one flag per dimension"));
        }
        let me = self.coordinates(rank)?;
        let mut color = 0;
        for i in 0..self.dims.len() {
            if !retain[i] {
                color = color * self.dims[i] + me[i];
            }
        }
        let kept = |i: &usize| retain[*i];
        let grid = CartesianGrid {
            dims: (0..self.dims.len())
                .filter(kept)
                .map(|i| self.dims[i])
                .collect(),
            periods: (0..self.dims.len())
                .filter(kept)
                .map(|i| self.periods[i])
                .collect(),
        };
        Ok((color, grid))
    }
}

/// A communicator whose ranks form a grid (MPI_Cart_create). Every communicator method
/// works on it (it dereferences to its `Communicator`).
#[derive(Clone)]
pub struct CartesianCommunicator {
    comm: Communicator,
    grid: CartesianGrid,
}

/// A grid's shape and this process's place in it (MPI_Cart_get).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CartesianLayout {
    /// Processes along each dimension.
    pub dims: Vec<i32>,
    /// Whether each dimension wraps around.
    pub periods: Vec<bool>,
    /// This process's coordinates.
    pub coords: Vec<i32>,
}

impl Deref for CartesianCommunicator {
    type Target = Communicator;
    fn deref(&self) -> &Communicator {
        &self.comm
    }
}

/// Coordinates of `rank` in a grid of `dims`.
fn coords_of(dims: &[i32], rank: i32) -> Vec<i32> {
    let mut c = vec![0; dims.len()];
    let mut r = rank;
    for (i, &d) in dims.iter().enumerate().rev() {
        c[i] = r % d;
        r /= d;
    }
    c
}

impl Communicator {
    /// A communicator of the first `dims.iter().product()` ranks of this one laid out as
    /// a grid (MPI_Cart_create, MPI-3.1 section 7.5.1); `None` at the ranks outside it.
    /// Collective: every rank calls it with the same arguments. `reorder` is ignored
    /// (ranks keep their order).
    pub fn create_cartesian_communicator(
        &self,
        dims: &[i32],
        periods: &[bool],
        reorder: bool,
    ) -> Result<Option<CartesianCommunicator>, Error> {
        let _ = reorder;
        let grid = CartesianGrid::new(dims, periods)?;
        let n = grid.size();
        if n > self.size() {
            return Err(Error::Usage(
                "create_cartesian_communicator: the grid has more processes than the communicator",
            ));
        }
        let color = (self.rank() < n).then_some(0);
        Ok(self
            .split_by_color_with_key(color, self.rank())?
            .map(|comm| CartesianCommunicator { comm, grid }))
    }
}

impl CartesianCommunicator {
    /// `comm` with the grid `grid` (as `create_cartesian_communicator` made them; a
    /// binding that keeps the two apart puts them together again here). `grid` must have
    /// exactly `comm`'s size.
    pub fn from_grid(comm: Communicator, grid: CartesianGrid) -> Result<Self, Error> {
        if grid.size() != comm.size() {
            return Err(Error::Usage(
                "a Cartesian grid must have as many processes as its communicator",
            ));
        }
        Ok(CartesianCommunicator { comm, grid })
    }

    /// The communicator and the grid apart (the inverse of `from_grid`), for a binding
    /// that keeps the two apart.
    pub fn into_parts(self) -> (Communicator, CartesianGrid) {
        (self.comm, self.grid)
    }

    /// The grid's communicator.
    pub fn as_communicator(&self) -> &Communicator {
        &self.comm
    }

    /// The grid.
    pub fn grid(&self) -> &CartesianGrid {
        &self.grid
    }

    /// Number of dimensions (MPI_Cartdim_get).
    pub fn num_dimensions(&self) -> i32 {
        self.grid.dims.len() as i32
    }

    /// The grid and this process's coordinates (MPI_Cart_get).
    pub fn get_layout(&self) -> CartesianLayout {
        CartesianLayout {
            dims: self.grid.dims.clone(),
            periods: self.grid.periods.clone(),
            coords: coords_of(&self.grid.dims, self.comm.rank()),
        }
    }

    /// Coordinates of `rank` (MPI_Cart_coords).
    pub fn rank_to_coordinates(&self, rank: i32) -> Result<Vec<i32>, Error> {
        self.comm.check_rank(rank)?;
        Ok(coords_of(&self.grid.dims, rank))
    }

    /// The rank at `coords` (MPI_Cart_rank), wrapped along periodic dimensions; an error
    /// outside a non-periodic one.
    pub fn coordinates_to_rank(&self, coords: &[i32]) -> Result<i32, Error> {
        self.grid.rank_at(coords)?.ok_or(Error::Usage(
            "coordinates_to_rank: coordinates outside a non-periodic dimension",
        ))
    }

    /// Source and destination of a shift by `displacement` along `dimension`
    /// (MPI_Cart_shift): the ranks this process receives from and sends to; `None`
    /// (MPI_PROC_NULL) past the edge of a non-periodic dimension.
    pub fn shift(
        &self,
        dimension: i32,
        displacement: i32,
    ) -> Result<(Option<i32>, Option<i32>), Error> {
        self.grid.shift(self.comm.rank(), dimension, displacement)
    }

    /// The sub-grid through this process keeping the dimensions where `retain` is true
    /// (MPI_Cart_sub). Collective over this grid.
    pub fn subgroup(&self, retain: &[bool]) -> Result<CartesianCommunicator, Error> {
        let (color, grid) = self.grid.sub(self.comm.rank(), retain)?;
        match self
            .comm
            .split_by_color_with_key(Some(color), self.comm.rank())?
        {
            Some(comm) => Ok(CartesianCommunicator { comm, grid }),
            None => unreachable!("a process has a color, so it is in its sub-grid"),
        }
    }
}

/// Fills the zero entries of `dims` so that the product of all is `nnodes`, as balanced
/// as possible, in non-increasing order (MPI_Dims_create, MPI-3.1 section 7.5.2).
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> Result<(), Error> {
    if nnodes < 1 || dims.iter().any(|&d| d < 0) {
        return Err(Error::Usage(
            "dims_create: the number of nodes must be positive and no dimension negative",
        ));
    }
    let fixed = dims
        .iter()
        .filter(|&&d| d > 0)
        .try_fold(1i32, |p, &d| p.checked_mul(d))
        .ok_or(Error::Usage(
            "dims_create: the given dimensions multiply past the largest rank count",
        ))?;
    if nnodes % fixed != 0 {
        return Err(Error::Usage(
            "dims_create: the given dimensions do not divide the number of nodes",
        ));
    }
    let free: Vec<usize> = (0..dims.len()).filter(|&i| dims[i] == 0).collect();
    if free.is_empty() {
        return if fixed == nnodes {
            Ok(())
        } else {
            Err(Error::Usage(
                "dims_create: the given dimensions do not make the number of nodes",
            ))
        };
    }
    // Prime factors, largest first, each to the dimension with the smallest product.
    let mut rest = i64::from(nnodes / fixed);
    let mut factors: Vec<i64> = Vec::new();
    let mut f = 2i64;
    while f * f <= rest {
        while rest % f == 0 {
            factors.push(f);
            rest /= f;
        }
        f += 1;
    }
    if rest > 1 {
        factors.push(rest);
    }
    // Every product divides nnodes, so it fits an i32.
    let mut out = vec![1i64; free.len()];
    for &p in factors.iter().rev() {
        if let Some(m) = out.iter_mut().min() {
            *m *= p;
        }
    }
    out.sort_unstable_by(|a, b| b.cmp(a));
    for (i, v) in free.into_iter().zip(out) {
        dims[i] = v as i32;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_create_balances() {
        let cases: &[(i32, &[i32], &[i32])] = &[
            (6, &[0, 0], &[3, 2]),
            (7, &[0, 0], &[7, 1]),
            (16, &[0, 0, 0], &[4, 2, 2]),
            (12, &[0, 3, 0], &[2, 3, 2]),
            (1, &[0, 0], &[1, 1]),
        ];
        for &(n, given, want) in cases {
            let mut d = given.to_vec();
            dims_create(n, &mut d).unwrap();
            assert_eq!(d, want, "{n} {given:?}");
        }
        assert!(dims_create(10, &mut [3, 0]).is_err());
        assert!(dims_create(0, &mut [0]).is_err());
        assert!(dims_create(6, &mut [2, 2]).is_err());
        assert!(dims_create(6, &mut [1 << 16, 1 << 16, 0]).is_err());
        let mut big = [0, 0];
        dims_create(i32::MAX, &mut big).unwrap();
        assert_eq!(big, [i32::MAX, 1]);
    }

    #[test]
    fn coordinates_are_row_major() {
        assert_eq!(coords_of(&[2, 3], 4), [1, 1]);
        assert_eq!(coords_of(&[2, 3], 5), [1, 2]);
        assert_eq!(coords_of(&[4], 3), [3]);
    }

    #[test]
    fn shifts_wrap_only_on_periodic_dimensions() {
        let g = CartesianGrid::new(&[2, 3], &[false, true]).unwrap();
        assert_eq!(g.size(), 6);
        assert_eq!(g.coordinates(5).unwrap(), [1, 2]);
        assert!(g.coordinates(6).is_err());
        assert_eq!(g.rank_at(&[1, 2]).unwrap(), Some(5));
        assert_eq!(g.shift(5, 1, 1).unwrap(), (Some(4), Some(3)));
        assert_eq!(g.shift(5, 0, 1).unwrap(), (Some(2), None));
        assert_eq!(g.rank_at(&[0, -1]).unwrap(), Some(2));
        assert_eq!(g.rank_at(&[2, 0]).unwrap(), None);
        assert!(g.rank_at(&[0]).is_err());
        assert!(g.shift(0, 2, 1).is_err());
    }

    #[test]
    fn a_sub_grid_keeps_its_dimensions_and_colors_by_the_dropped_ones() {
        let g = CartesianGrid::new(&[2, 3, 2], &[true, false, true]).unwrap();
        // Rank 9 is (1, 1, 1): keeping dimension 1, the color is (1, 1) -> 1 * 2 + 1.
        let (color, sub) = g.sub(9, &[false, true, false]).unwrap();
        assert_eq!(color, 3);
        assert_eq!((sub.dims(), sub.periods()), (&[3][..], &[false][..]));
        assert!(g.sub(9, &[true]).is_err());
        for bad in [
            (&[2, 0][..], &[true, true][..]),
            (&[2][..], &[true, false][..]),
        ] {
            assert!(CartesianGrid::new(bad.0, bad.1).is_err());
        }
    }
}
