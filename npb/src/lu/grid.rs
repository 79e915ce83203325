//! LU's 2-D process grid and sub-domains (the reference's proc_grid, neighbors and
//! subdomain): the i and j directions are cut over an xdim x ydim grid of processes
//! (power-of-two process counts), k stays whole. Also the index arithmetic of the
//! per-process arrays `(m, -1..nx+2, -1..ny+2, 1..nz)` with Fortran-style indices.

use crate::common::NpbError;

/// Message tags of the reference (applu.incl).
pub const FROM_S: i32 = 1;
/// Tag of messages coming from the north.
pub const FROM_N: i32 = 2;
/// Tag of messages coming from the east.
pub const FROM_E: i32 = 3;
/// Tag of messages coming from the west.
pub const FROM_W: i32 = 4;

/// This process's place in the grid.
#[derive(Clone, Debug)]
pub struct Sub {
    /// Global points per direction.
    pub n0: [usize; 3],
    /// Local points in i, j (k is whole: nz = n0[2]).
    pub nx: usize,
    /// Local points in j.
    pub ny: usize,
    /// Points in k.
    pub nz: usize,
    /// Global offset of the first local i (ipt) and j (jpt).
    pub ipt: usize,
    /// Global offset of the first local j.
    pub jpt: usize,
    /// Neighbours (None at the physical boundary): north = lower i, south = higher i,
    /// west = lower j, east = higher j.
    pub north: Option<i32>,
    /// Higher-i neighbour.
    pub south: Option<i32>,
    /// Lower-j neighbour.
    pub west: Option<i32>,
    /// Higher-j neighbour.
    pub east: Option<i32>,
    /// Interior ranges ist..=iend, jst..=jend (1-based local).
    pub ist: isize,
    /// Last interior i.
    pub iend: isize,
    /// First interior j.
    pub jst: isize,
    /// Last interior j.
    pub jend: isize,
}

impl Sub {
    /// The sub-domain of `rank` among `num` processes on an `n0` grid.
    pub fn new(num: i32, rank: i32, n0: usize) -> Result<Sub, NpbError> {
        if num < 1 || (num & (num - 1)) != 0 {
            return Err(NpbError::Setup(format!(
                "LU needs a power-of-two number of processes (1, 2, 4, 8, ...); got {num}"
            )));
        }
        let num = num as usize;
        let id = rank as usize;
        let mut ydim = ((num as f64).sqrt() + 0.001) as usize;
        let mut xdim = num / ydim;
        while xdim * ydim != num {
            ydim -= 1;
            xdim = num / ydim;
        }
        let row = id % xdim + 1;
        let col = id / xdim + 1;
        let north = (row > 1).then(|| id as i32 - 1);
        let south = (row < xdim).then(|| id as i32 + 1);
        let west = (col > 1).then(|| (id - xdim) as i32);
        let east = (col < ydim).then(|| (id + xdim) as i32);
        let split = |n: usize, parts: usize, at: usize| {
            let mm = n % parts;
            if at <= mm {
                let len = n / parts + 1;
                (len, (at - 1) * len)
            } else {
                let len = n / parts;
                (len, (at - 1) * len + mm)
            }
        };
        let (nx, ipt) = split(n0, xdim, row);
        let (ny, jpt) = split(n0, ydim, col);
        let nz = n0;
        if nx < 3 || ny < 3 || nz < 3 {
            return Err(NpbError::Setup(format!(
                "LU: sub-domain {nx}x{ny}x{nz} is too small for {num} processes; \
                 every side needs at least 3 points"
            )));
        }
        Ok(Sub {
            n0: [n0; 3],
            nx,
            ny,
            nz,
            ipt,
            jpt,
            north,
            south,
            west,
            east,
            ist: if north.is_none() { 2 } else { 1 },
            iend: if south.is_none() {
                nx as isize - 1
            } else {
                nx as isize
            },
            jst: if west.is_none() { 2 } else { 1 },
            jend: if east.is_none() {
                ny as isize - 1
            } else {
                ny as isize
            },
        })
    }

    /// Elements of a 5-component array over the local grid with ghosts.
    pub fn len5(&self) -> usize {
        5 * (self.nx + 4) * (self.ny + 4) * (self.nz + 4)
    }

    /// Index of component 0 of point (i, j, k), each from -1 (the reference has no k
    /// ghosts; the extra layers keep the dissipation stencil in bounds).
    #[inline(always)]
    pub fn at(&self, i: isize, j: isize, k: isize) -> usize {
        let sy = self.nx as isize + 4;
        let sz = sy * (self.ny as isize + 4);
        (5 * ((k + 1) * sz + (j + 1) * sy + (i + 1))) as usize
    }

    /// Stride (in elements) of a step in direction d.
    pub fn stride(&self, d: usize) -> usize {
        match d {
            0 => 5,
            1 => 5 * (self.nx + 4),
            _ => 5 * (self.nx + 4) * (self.ny + 4),
        }
    }
}
