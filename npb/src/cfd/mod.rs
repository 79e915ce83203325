//! What the pseudo-applications share. All three (BT, SP, LU) solve the same discretized
//! compressible Navier-Stokes problem with the same manufactured exact solution
//! ([`constants`]) and check themselves the same way ([`verify`]). BT and SP also share
//! the multi-partition decomposition ([`decomp`]), the per-cell field storage (this file),
//! initialization and forcing ([`init`]), the explicit right-hand side ([`rhs`]), the
//! ghost-face exchange ([`faces`]), the error and residual norms ([`norms`]) and the run
//! around their time steps ([`drive`]).

#![allow(clippy::needless_range_loop)]

pub mod constants;
pub mod decomp;
pub mod drive;
pub mod faces;
pub mod init;
pub mod norms;
pub mod rhs;
pub mod verify;

use std::marker::PhantomData;

pub use constants::Constants;
pub use decomp::{Cell, Decomp};

/// Ghost width of every per-cell array (u needs two layers for the dissipation stencil).
pub const GHOST: usize = 2;

/// How the five components of a point are stored: interleaved (BT, `u(m,i,j,k)`) or one
/// array per component (SP, `u(i,j,k,m)`), as in the reference codes.
pub trait Layout: Copy + Default + 'static {
    /// True for interleaved storage.
    const AOS: bool;
}

/// Interleaved: the 5 components of a point are adjacent.
#[derive(Clone, Copy, Default)]
pub struct Aos;
impl Layout for Aos {
    const AOS: bool = true;
}

/// Planar: each component is a contiguous 3-D array.
#[derive(Clone, Copy, Default)]
pub struct Soa;
impl Layout for Soa {
    const AOS: bool = false;
}

/// Index arithmetic of one cell's arrays: `n` interior points per dimension plus
/// [`GHOST`] layers on each side; i is the contiguous dimension.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    /// Strides of i, j, k.
    pub stride: [usize; 3],
    /// Points including ghosts.
    pub npts: usize,
    origin: usize,
}

impl Grid {
    /// The grid of a cell of `n` points.
    pub fn new(n: [usize; 3]) -> Grid {
        let sy = n[0] + 2 * GHOST;
        let sz = sy * (n[1] + 2 * GHOST);
        let npts = sz * (n[2] + 2 * GHOST);
        Grid {
            stride: [1, sy, sz],
            npts,
            origin: GHOST * (1 + sy + sz),
        }
    }

    /// Flat index of point (i, j, k); each coordinate may be down to -GHOST.
    #[inline(always)]
    pub fn at(&self, i: isize, j: isize, k: isize) -> usize {
        (self.origin as isize + i + j * self.stride[1] as isize + k * self.stride[2] as isize)
            as usize
    }

    /// Flat index of a point given as coordinates in dimension order.
    #[inline(always)]
    pub fn at3(&self, c: [isize; 3]) -> usize {
        self.at(c[0], c[1], c[2])
    }
}

/// Five components per point on a [`Grid`].
pub struct Field5<L: Layout> {
    /// The values.
    pub data: Vec<f64>,
    npts: usize,
    _layout: PhantomData<L>,
}

impl<L: Layout> Field5<L> {
    /// A field filled with `v`.
    pub fn new(grid: &Grid, v: f64) -> Field5<L> {
        Field5 {
            data: vec![v; grid.npts * 5],
            npts: grid.npts,
            _layout: PhantomData,
        }
    }

    /// Index of component `m` of point `p`.
    #[inline(always)]
    pub fn ix(&self, m: usize, p: usize) -> usize {
        if L::AOS {
            p * 5 + m
        } else {
            m * self.npts + p
        }
    }

    /// Component `m` of point `p`.
    #[inline(always)]
    pub fn get(&self, m: usize, p: usize) -> f64 {
        self.data[self.ix(m, p)]
    }

    /// Sets component `m` of point `p`.
    #[inline(always)]
    pub fn set(&mut self, m: usize, p: usize, v: f64) {
        let i = self.ix(m, p);
        self.data[i] = v;
    }

    /// The five components of point `p`.
    #[inline(always)]
    pub fn point(&self, p: usize) -> [f64; 5] {
        [
            self.get(0, p),
            self.get(1, p),
            self.get(2, p),
            self.get(3, p),
            self.get(4, p),
        ]
    }
}

/// Derived point quantities compute_rhs refreshes each step (the reference's rho_i, us,
/// vs, ws, square, qs and, for SP, speed and ainv).
pub struct Aux {
    /// 1 / rho.
    pub rho_i: Vec<f64>,
    /// Velocities u, v, w.
    pub vel: [Vec<f64>; 3],
    /// Kinetic energy density.
    pub square: Vec<f64>,
    /// square / rho.
    pub qs: Vec<f64>,
    /// Speed of sound (SP only; empty for BT).
    pub speed: Vec<f64>,
    /// 1 / speed (SP only).
    pub ainv: Vec<f64>,
}

impl Aux {
    fn new(grid: &Grid, with_speed: bool) -> Aux {
        let n = grid.npts;
        let s = if with_speed { n } else { 0 };
        Aux {
            rho_i: vec![0.0; n],
            vel: [vec![0.0; n], vec![0.0; n], vec![0.0; n]],
            square: vec![0.0; n],
            qs: vec![0.0; n],
            speed: vec![0.0; s],
            ainv: vec![0.0; s],
        }
    }
}

/// One cell of the multi-partition decomposition with its fields.
pub struct CellState<L: Layout> {
    /// Where the cell lies.
    pub cell: Cell,
    /// Its index arithmetic.
    pub grid: Grid,
    /// The solution, with two ghost layers.
    pub u: Field5<L>,
    /// The right-hand side (and, after the solves, the update).
    pub rhs: Field5<L>,
    /// The forcing term of the exact solution.
    pub forcing: Field5<L>,
    /// Derived quantities.
    pub aux: Aux,
}

/// A rank's share of a BT or SP run: its cells, the constants and communicators.
pub struct Flow<L: Layout> {
    /// The decomposition.
    pub dec: Decomp,
    /// Problem constants.
    pub k: Constants,
    /// This rank's cells, in the reference's order (cell c is in z-plane c).
    pub cells: Vec<CellState<L>>,
    /// Communicator of the face exchange (the reference's comm_rhs).
    pub comm_rhs: volpex::Communicator,
    /// Communicator of the pipelined line solves (comm_solve).
    pub comm_solve: volpex::Communicator,
    /// Whether compute_rhs also computes the speed of sound (SP).
    pub with_speed: bool,
    /// The face exchange's six send buffers, then its six receive buffers (see
    /// `faces::copy_faces`), kept from one step to the next.
    pub faces: [Vec<f64>; 12],
}

impl<L: Layout> Flow<L> {
    /// Allocates the cells of `dec`.
    pub fn new(
        world: &volpex::Communicator,
        dec: Decomp,
        k: Constants,
        with_speed: bool,
    ) -> Flow<L> {
        let cells = dec
            .cells
            .iter()
            .map(|cell| {
                let grid = Grid::new(cell.size);
                CellState {
                    cell: cell.clone(),
                    grid,
                    u: Field5::new(&grid, 1.0),
                    rhs: Field5::new(&grid, 0.0),
                    forcing: Field5::new(&grid, 0.0),
                    aux: Aux::new(&grid, with_speed),
                }
            })
            .collect();
        Flow {
            dec,
            k,
            cells,
            comm_rhs: world.duplicate(),
            comm_solve: world.duplicate(),
            with_speed,
            faces: Default::default(),
        }
    }

    /// u += rhs on the interior points of every cell (the reference's add).
    pub fn add(&mut self) {
        for cs in &mut self.cells {
            let c = &cs.cell;
            let len = c.size[0] - c.end[0] - c.start[0];
            let np = cs.grid.npts;
            for k in c.start[2]..c.size[2] - c.end[2] {
                for j in c.start[1]..c.size[1] - c.end[1] {
                    let p = cs.grid.at(c.start[0] as isize, j as isize, k as isize);
                    // The row's values: one run of 5*len (interleaved) or a run of len
                    // per component (planar).
                    let (runs, width) = if L::AOS { (1, 5 * len) } else { (5, len) };
                    for m in 0..runs {
                        let at = if L::AOS { 5 * p } else { m * np + p };
                        let u = &mut cs.u.data[at..at + width];
                        let r = &cs.rhs.data[at..at + width];
                        for (x, y) in u.iter_mut().zip(r) {
                            *x += *y;
                        }
                    }
                }
            }
        }
    }
}

/// The 4th-order dissipation stencil weights at position `pos` of a line of `n` points
/// (coefficients of offsets -2..=2), given whether the line starts/ends at the physical
/// boundary. The reference writes the boundary-adjacent rows out separately.
#[inline]
pub fn diss_coef(pos: usize, n: usize, start: usize, end: usize) -> [f64; 5] {
    if start == 1 && pos == 1 {
        [0.0, 0.0, 5.0, -4.0, 1.0]
    } else if start == 1 && pos == 2 {
        [0.0, -4.0, 6.0, -4.0, 1.0]
    } else if end == 1 && pos + 3 == n {
        [1.0, -4.0, 6.0, -4.0, 0.0]
    } else if end == 1 && pos + 2 == n {
        [1.0, -4.0, 5.0, 0.0, 0.0]
    } else {
        [1.0, -4.0, 6.0, -4.0, 1.0]
    }
}

/// A row kernel's output rows after its first, cut to the first's length `len`: with
/// every row known to be `len` long, the kernel's loop runs without bounds checks.
#[inline(always)]
pub fn cut_rows(len: usize, rows: [&mut [f64]; 4]) -> [&mut [f64]; 4] {
    rows.map(|r| &mut r[..len])
}

/// The two dimensions other than `d`, inner (faster) first.
#[inline]
pub fn others(d: usize) -> (usize, usize) {
    match d {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    }
}
