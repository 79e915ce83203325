//! LU's symmetric successive over-relaxation (the reference's jacld, blts, jacu, buts):
//! per k-plane, the block lower (then upper) triangular Jacobian and its solve. Planes
//! are processed as a 2-D pipelined wavefront: each process waits for the north and
//! west boundary of the plane (exchange_1) before its lower sweep and sends its south
//! and east boundary after it; the upper sweep runs the other way.

use super::exchange::{exchange_1, Ex1};
use super::grid::Sub;
use crate::bt::blocks::{jacobian_pair, Block};
use crate::cfd::constants::Constants;
use crate::common::NpbError;
use volpex::Communicator;

/// The four Jacobian blocks of every (i, j) of one plane.
pub struct Jac {
    /// Main diagonal.
    pub d: Vec<Block>,
    /// k, j and i neighbours (lower: k-1, j-1, i-1; upper: i+1, j+1, k+1).
    pub a: Vec<Block>,
    /// Second neighbour block.
    pub b: Vec<Block>,
    /// Third neighbour block.
    pub c: Vec<Block>,
    nx: usize,
}

impl Jac {
    /// Zeroed blocks for a sub-domain.
    pub fn new(s: &Sub) -> Jac {
        let n = (s.nx + 2) * (s.ny + 2);
        Jac {
            d: vec![[[0.0; 5]; 5]; n],
            a: vec![[[0.0; 5]; 5]; n],
            b: vec![[[0.0; 5]; 5]; n],
            c: vec![[[0.0; 5]; 5]; n],
            nx: s.nx,
        }
    }

    #[inline(always)]
    fn ix(&self, i: isize, j: isize) -> usize {
        i as usize + (self.nx + 2) * j as usize
    }
}

#[inline(always)]
fn point(u: &[f64], p: usize) -> ([f64; 5], f64, f64) {
    let v = [u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4]];
    let tmp1 = 1.0 / v[0];
    let qs = 0.5 * (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) * tmp1 * tmp1;
    (v, qs, tmp1)
}

/// The block of the neighbour in direction `d`: sign -1 for lower, +1 for upper.
#[inline(always)]
fn neighbour(u: &[f64], p: usize, d: usize, sign: f64, k: &Constants) -> Block {
    let (v, qs, ri) = point(u, p);
    let (f, nj) = jacobian_pair(&v, qs, ri, d, k);
    let (dt1, dt2) = (k.dt * k.t1[d], k.dt * k.t2[d]);
    let mut out = [[0.0; 5]; 5];
    for m in 0..5 {
        for n in 0..5 {
            out[m][n] = sign * dt2 * f[m][n] - dt1 * nj[m][n];
        }
        out[m][m] -= dt1 * k.dd[d][m];
    }
    out
}

/// The block diagonal at a point.
#[inline(always)]
fn diagonal(u: &[f64], p: usize, k: &Constants) -> Block {
    let (v, qs, ri) = point(u, p);
    let mut out = [[0.0; 5]; 5];
    let mut diag = [0.0; 5];
    for d in 0..3 {
        let (_, nj) = jacobian_pair(&v, qs, ri, d, k);
        for m in 0..5 {
            for n in 0..5 {
                out[m][n] += k.t1[d] * nj[m][n];
            }
            diag[m] += k.t1[d] * k.dd[d][m];
        }
    }
    for m in 0..5 {
        for n in 0..5 {
            out[m][n] *= k.dt * 2.0;
        }
        out[m][m] = 1.0 + out[m][m] + k.dt * 2.0 * diag[m];
    }
    out
}

/// jacld: the lower triangular part of the Jacobian on plane `kk`.
pub fn jacld(s: &Sub, k: &Constants, u: &[f64], kk: isize, jac: &mut Jac) {
    for j in s.jst..=s.jend {
        for i in s.ist..=s.iend {
            let p = s.at(i, j, kk);
            let x = jac.ix(i, j);
            jac.d[x] = diagonal(u, p, k);
            jac.a[x] = neighbour(u, s.at(i, j, kk - 1), 2, -1.0, k);
            jac.b[x] = neighbour(u, s.at(i, j - 1, kk), 1, -1.0, k);
            jac.c[x] = neighbour(u, s.at(i - 1, j, kk), 0, -1.0, k);
        }
    }
}

/// jacu: the upper triangular part of the Jacobian on plane `kk`.
pub fn jacu(s: &Sub, k: &Constants, u: &[f64], kk: isize, jac: &mut Jac) {
    for j in s.jst..=s.jend {
        for i in s.ist..=s.iend {
            let p = s.at(i, j, kk);
            let x = jac.ix(i, j);
            jac.d[x] = diagonal(u, p, k);
            jac.a[x] = neighbour(u, s.at(i + 1, j, kk), 0, 1.0, k);
            jac.b[x] = neighbour(u, s.at(i, j + 1, kk), 1, 1.0, k);
            jac.c[x] = neighbour(u, s.at(i, j, kk + 1), 2, 1.0, k);
        }
    }
}

/// Solves d x = v in place by Gaussian elimination without pivoting (the reference's
/// tmat sequence).
#[inline(always)]
fn solve5(d: &Block, v: &mut [f64; 5]) {
    let mut t = *d;
    for p in 0..4 {
        let tmp1 = 1.0 / t[p][p];
        for r in p + 1..5 {
            let tmp = tmp1 * t[r][p];
            for c in p + 1..5 {
                t[r][c] -= tmp * t[p][c];
            }
            v[r] -= v[p] * tmp;
        }
    }
    for r in (0..5).rev() {
        for c in r + 1..5 {
            v[r] -= t[r][c] * v[c];
        }
        v[r] /= t[r][r];
    }
}

/// blts: v <- L^-1 v on plane `kk`, between the two halves of exchange_1.
#[allow(clippy::too_many_arguments)]
pub fn blts(
    comm: &Communicator,
    s: &Sub,
    omega: f64,
    v: &mut [f64],
    jac: &Jac,
    kk: isize,
) -> Result<(), NpbError> {
    exchange_1(comm, s, v, kk, Ex1::RecvLower)?;
    for j in s.jst..=s.jend {
        for i in s.ist..=s.iend {
            let p = s.at(i, j, kk);
            let pz = s.at(i, j, kk - 1);
            let a = &jac.a[jac.ix(i, j)];
            for m in 0..5 {
                let sum = a[m][0] * v[pz]
                    + a[m][1] * v[pz + 1]
                    + a[m][2] * v[pz + 2]
                    + a[m][3] * v[pz + 3]
                    + a[m][4] * v[pz + 4];
                v[p + m] -= omega * sum;
            }
        }
    }
    for j in s.jst..=s.jend {
        for i in s.ist..=s.iend {
            let p = s.at(i, j, kk);
            let py = s.at(i, j - 1, kk);
            let px = s.at(i - 1, j, kk);
            let x = jac.ix(i, j);
            let (b, c) = (&jac.b[x], &jac.c[x]);
            let mut r = [0.0; 5];
            for m in 0..5 {
                let mut sum = 0.0;
                for n in 0..5 {
                    sum += b[m][n] * v[py + n] + c[m][n] * v[px + n];
                }
                r[m] = v[p + m] - omega * sum;
            }
            solve5(&jac.d[x], &mut r);
            v[p..p + 5].copy_from_slice(&r);
        }
    }
    exchange_1(comm, s, v, kk, Ex1::SendLower)
}

/// buts: v <- U^-1 v on plane `kk`, between the two halves of exchange_1.
#[allow(clippy::too_many_arguments)]
pub fn buts(
    comm: &Communicator,
    s: &Sub,
    omega: f64,
    v: &mut [f64],
    tv: &mut [[f64; 5]],
    jac: &Jac,
    kk: isize,
) -> Result<(), NpbError> {
    exchange_1(comm, s, v, kk, Ex1::RecvUpper)?;
    for j in (s.jst..=s.jend).rev() {
        for i in (s.ist..=s.iend).rev() {
            let pz = s.at(i, j, kk + 1);
            let x = jac.ix(i, j);
            let c = &jac.c[x];
            for m in 0..5 {
                tv[x][m] = omega
                    * (c[m][0] * v[pz]
                        + c[m][1] * v[pz + 1]
                        + c[m][2] * v[pz + 2]
                        + c[m][3] * v[pz + 3]
                        + c[m][4] * v[pz + 4]);
            }
        }
    }
    for j in (s.jst..=s.jend).rev() {
        for i in (s.ist..=s.iend).rev() {
            let p = s.at(i, j, kk);
            let py = s.at(i, j + 1, kk);
            let px = s.at(i + 1, j, kk);
            let x = jac.ix(i, j);
            let (a, b) = (&jac.a[x], &jac.b[x]);
            let mut r = tv[x];
            for m in 0..5 {
                let mut sum = 0.0;
                for n in 0..5 {
                    sum += b[m][n] * v[py + n] + a[m][n] * v[px + n];
                }
                r[m] += omega * sum;
            }
            solve5(&jac.d[x], &mut r);
            for m in 0..5 {
                v[p + m] -= r[m];
            }
        }
    }
    exchange_1(comm, s, v, kk, Ex1::SendUpper)
}
