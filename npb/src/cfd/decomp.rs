//! The multi-partition decomposition of BT and SP (the reference's make_set, lhsinit's
//! start/end flags and setup_mpi's process-count rule): with P = p*p processes the grid
//! is cut into p*p*p cells; each process owns p cells, one in every plane of every
//! direction, so that each line solve keeps every process busy and every neighbour
//! relation is between the same two processes.

use crate::common::NpbError;

/// One cell owned by this process.
#[derive(Clone, Debug)]
pub struct Cell {
    /// Cell coordinates in the p*p*p cell grid (0-based).
    pub coord: [usize; 3],
    /// Global index of the cell's first point per direction.
    pub low: [usize; 3],
    /// Points per direction.
    pub size: [usize; 3],
    /// 1 if the cell touches the low physical boundary in that direction.
    pub start: [usize; 3],
    /// 1 if the cell touches the high physical boundary.
    pub end: [usize; 3],
}

/// This process's cells and neighbours.
#[derive(Clone, Debug)]
pub struct Decomp {
    /// Cells per direction (sqrt of the process count).
    pub ncells: usize,
    /// Grid points per direction.
    pub grid: [usize; 3],
    /// The cells, cell c lying in z-plane c.
    pub cells: Vec<Cell>,
    /// `slice[d][s]`: the index of the cell in plane s of direction d.
    pub slice: [Vec<usize>; 3],
    /// Rank holding the preceding cells in each direction.
    pub predecessor: [i32; 3],
    /// Rank holding the following cells.
    pub successor: [i32; 3],
    /// The reference's compiled MAX_CELL_DIM (problem size / cells + 1).
    pub max_cell_dim: usize,
}

impl Decomp {
    /// The decomposition for `rank` of `nprocs` on a cube of `problem_size` points.
    pub fn new(
        name: &str,
        nprocs: i32,
        rank: i32,
        problem_size: usize,
    ) -> Result<Decomp, NpbError> {
        let n = usize::try_from(nprocs)
            .map_err(|_| NpbError::Setup(format!("{name}: bad process count {nprocs}")))?;
        let p = (0..=n).find(|q| q * q >= n).unwrap_or(0);
        if n == 0 || p * p != n {
            return Err(NpbError::Setup(format!(
                "{name} needs a square number of processes (1, 4, 9, 16, ...); got {nprocs}"
            )));
        }
        let node = usize::try_from(rank)
            .map_err(|_| NpbError::Setup(format!("{name}: bad rank {rank}")))?;
        let mut coord = vec![[node % p, node / p, 0]];
        for c in 1..p {
            let prev = coord[c - 1];
            coord.push([(prev[0] + 1) % p, (prev[1] + p - 1) % p, c]);
        }
        let mut slice = [vec![0; p], vec![0; p], vec![0; p]];
        for (c, cc) in coord.iter().enumerate() {
            for d in 0..3 {
                slice[d][cc[d]] = c;
            }
        }
        let (i, j) = (coord[0][0], coord[0][1]);
        let r = |a: usize, b: usize| (a + p * b) as i32;
        let predecessor = [
            r((i + p - 1) % p, j),
            r(i, (j + p - 1) % p),
            r((i + 1) % p, (j + p - 1) % p),
        ];
        let successor = [
            r((i + 1) % p, j),
            r(i, (j + 1) % p),
            r((i + p - 1) % p, (j + 1) % p),
        ];
        let grid = [problem_size; 3];
        let mut cells = Vec::with_capacity(p);
        for cc in &coord {
            let mut low = [0; 3];
            let mut size = [0; 3];
            for d in 0..3 {
                let base = grid[d] / p;
                let excess = grid[d] % p;
                if cc[d] < excess {
                    size[d] = base + 1;
                    low[d] = cc[d] * (base + 1);
                } else {
                    size[d] = base;
                    low[d] = excess * (base + 1) + (cc[d] - excess) * base;
                }
                if size[d] <= 2 {
                    return Err(NpbError::Setup(format!(
                        "{name}: cell size too small ({} points) for {nprocs} processes; \
                         the minimum is 3",
                        size[d]
                    )));
                }
            }
            cells.push(Cell {
                coord: *cc,
                low,
                size,
                start: cc.map(|x| usize::from(x == 0)),
                end: cc.map(|x| usize::from(x == p - 1)),
            });
        }
        Ok(Decomp {
            ncells: p,
            grid,
            cells,
            slice,
            predecessor,
            successor,
            max_cell_dim: problem_size / p + 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plane_holds_one_cell_and_cells_tile_the_grid() {
        for p in 1..=4usize {
            let mut owned = vec![0u32; p * p * p];
            for rank in 0..(p * p) as i32 {
                let d = Decomp::new("BT", (p * p) as i32, rank, 12).expect("square");
                for c in &d.cells {
                    owned[c.coord[0] + p * (c.coord[1] + p * c.coord[2])] += 1;
                }
                for s in 0..3 {
                    let mut planes: Vec<usize> =
                        d.slice[s].iter().map(|&c| d.cells[c].coord[s]).collect();
                    planes.sort_unstable();
                    assert_eq!(planes, (0..p).collect::<Vec<_>>());
                }
            }
            assert!(owned.iter().all(|&o| o == 1), "p={p}: {owned:?}");
        }
    }

    #[test]
    fn non_square_counts_are_refused() {
        for n in [2, 3, 5, 8] {
            assert!(matches!(
                Decomp::new("SP", n, 0, 12),
                Err(NpbError::Setup(_))
            ));
        }
    }
}
