//! LU's symmetric successive over-relaxation (the reference's jacld, blts, jacu, buts):
//! per k-plane, line by line (one j at a time), the line's block lower (then upper)
//! triangular Jacobian and its solve, so a line's blocks are still in cache when the
//! solve reads them. Planes are processed as a 2-D pipelined wavefront: each process
//! waits for the north and west boundary of the plane (exchange_1) before its lower sweep
//! and sends its south and east boundary after it; the upper sweep runs the other way.

use super::exchange::{exchange_1, Ex1};
use super::grid::Sub;
#[cfg(doc)]
use crate::bt::blocks::jacobians;
use crate::bt::blocks::{jacobian_pair, Block};
use crate::cfd::constants::Constants;
use crate::common::NpbError;
use volpex::Communicator;

/// The four Jacobian blocks of every i of one line (j, k) of a plane.
pub struct Jac {
    /// Main diagonal.
    pub d: Vec<Block>,
    /// k, j and i neighbours (lower: k-1, j-1, i-1; upper: i+1, j+1, k+1).
    pub a: Vec<Block>,
    /// Second neighbour block.
    pub b: Vec<Block>,
    /// Third neighbour block.
    pub c: Vec<Block>,
}

impl Jac {
    /// Zeroed blocks for a line of a sub-domain, indexed by i.
    pub fn new(s: &Sub) -> Jac {
        let n = s.nx + 2;
        Jac {
            d: vec![[[0.0; 5]; 5]; n],
            a: vec![[[0.0; 5]; 5]; n],
            b: vec![[[0.0; 5]; 5]; n],
            c: vec![[[0.0; 5]; 5]; n],
        }
    }
}

#[inline(always)]
fn point(u: &[f64], p: usize) -> ([f64; 5], f64, f64) {
    let v = [u[p], u[p + 1], u[p + 2], u[p + 3], u[p + 4]];
    let tmp1 = 1.0 / v[0];
    let qs = 0.5 * (v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) * tmp1 * tmp1;
    (v, qs, tmp1)
}

/// Whether entry (m, q) of the flux Jacobian in direction `d` can be nonzero (the
/// pattern of [`jacobians`]: row 0 only at the momentum along d, the row of that momentum
/// and the energy row full, the other momentum rows at density, the momentum along d
/// and their own).
const fn fjac_nonzero(d: usize, m: usize, q: usize) -> bool {
    let n = d + 1;
    match m {
        0 => q == n,
        4 => true,
        _ => m == n || q == 0 || q == n || q == m,
    }
}

/// Whether entry (m, q) of the viscous Jacobian (any direction) can be nonzero: the
/// momentum rows at density and their own, the energy row full.
const fn njac_nonzero(m: usize, q: usize) -> bool {
    match m {
        0 => false,
        4 => true,
        _ => q == 0 || q == m,
    }
}

/// The block of the neighbour in direction `D` into `out`: sign -1 for lower, +1 for
/// upper. Only the entries the Jacobians' pattern leaves nonzero are computed (the
/// reference writes them out one by one); a product with a structural zero would
/// change no sum.
#[inline(always)]
fn neighbour<const D: usize>(u: &[f64], p: usize, sign: f64, k: &Constants, out: &mut Block) {
    let (v, qs, ri) = point(u, p);
    let (f, nj) = jacobian_pair(&v, qs, ri, D, k);
    let (dt1, dt2) = (k.dt * k.t1[D], k.dt * k.t2[D]);
    for m in 0..5 {
        for n in 0..5 {
            out[m][n] = match (fjac_nonzero(D, m, n), njac_nonzero(m, n)) {
                (true, true) => sign * dt2 * f[m][n] - dt1 * nj[m][n],
                (true, false) => sign * dt2 * f[m][n],
                (false, true) => -(dt1 * nj[m][n]),
                (false, false) => 0.0,
            };
        }
        out[m][m] -= dt1 * k.dd[D][m];
    }
}

/// The block diagonal at a point into `out`.
#[inline(always)]
fn diagonal(u: &[f64], p: usize, k: &Constants, out: &mut Block) {
    let (v, qs, ri) = point(u, p);
    // Written out, not `[0, 1, 2].map(..)`: the map's closure is not always inlined,
    // and then each 200-byte block is returned and copied.
    let nj = [
        jacobian_pair(&v, qs, ri, 0, k).1,
        jacobian_pair(&v, qs, ri, 1, k).1,
        jacobian_pair(&v, qs, ri, 2, k).1,
    ];
    let mut diag = [0.0; 5];
    for d in 0..3 {
        for m in 0..5 {
            diag[m] += k.t1[d] * k.dd[d][m];
        }
    }
    for m in 0..5 {
        for n in 0..5 {
            out[m][n] = if njac_nonzero(m, n) {
                (k.t1[0] * nj[0][m][n] + k.t1[1] * nj[1][m][n] + k.t1[2] * nj[2][m][n])
                    * (k.dt * 2.0)
            } else {
                0.0
            };
        }
        out[m][m] = 1.0 + out[m][m] + k.dt * 2.0 * diag[m];
    }
}

/// jacld: the lower triangular part of the Jacobian on line (j, kk).
#[inline(never)]
fn jacld(s: &Sub, k: &Constants, u: &[f64], j: isize, kk: isize, jac: &mut Jac) {
    for i in s.ist..=s.iend {
        let p = s.at(i, j, kk);
        let x = i as usize;
        diagonal(u, p, k, &mut jac.d[x]);
        neighbour::<2>(u, s.at(i, j, kk - 1), -1.0, k, &mut jac.a[x]);
        neighbour::<1>(u, s.at(i, j - 1, kk), -1.0, k, &mut jac.b[x]);
        neighbour::<0>(u, s.at(i - 1, j, kk), -1.0, k, &mut jac.c[x]);
    }
}

/// jacu: the upper triangular part of the Jacobian on line (j, kk).
#[inline(never)]
fn jacu(s: &Sub, k: &Constants, u: &[f64], j: isize, kk: isize, jac: &mut Jac) {
    for i in s.ist..=s.iend {
        let p = s.at(i, j, kk);
        let x = i as usize;
        diagonal(u, p, k, &mut jac.d[x]);
        neighbour::<0>(u, s.at(i + 1, j, kk), 1.0, k, &mut jac.a[x]);
        neighbour::<1>(u, s.at(i, j + 1, kk), 1.0, k, &mut jac.b[x]);
        neighbour::<2>(u, s.at(i, j, kk + 1), 1.0, k, &mut jac.c[x]);
    }
}

/// The five components of the point at index `p` (a copy).
#[inline(always)]
fn at5(v: &[f64], p: usize) -> [f64; 5] {
    v[p..p + 5].try_into().expect("five components")
}

/// The five components of the point at index `p`, in place.
#[inline(always)]
fn at5_mut(v: &mut [f64], p: usize) -> &mut [f64; 5] {
    (&mut v[p..p + 5]).try_into().expect("five components")
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

/// The lower sweep on plane `kk` (the reference's jacld and blts for each line, between
/// the two halves of exchange_1): v <- L^-1 v, with `u`'s Jacobians.
#[allow(clippy::too_many_arguments)]
pub fn lower(
    comm: &Communicator,
    s: &Sub,
    k: &Constants,
    u: &[f64],
    omega: f64,
    v: &mut [f64],
    jac: &mut Jac,
    kk: isize,
) -> Result<(), NpbError> {
    exchange_1(comm, s, v, kk, Ex1::RecvLower)?;
    for j in s.jst..=s.jend {
        jacld(s, k, u, j, kk, jac);
        blts(s, omega, v, jac, j, kk);
    }
    exchange_1(comm, s, v, kk, Ex1::SendLower)
}

/// The upper sweep on plane `kk` (the reference's jacu and buts for each line, last line
/// first, between the two halves of exchange_1): v <- U^-1 v, with `u`'s Jacobians.
#[allow(clippy::too_many_arguments)]
pub fn upper(
    comm: &Communicator,
    s: &Sub,
    k: &Constants,
    u: &[f64],
    omega: f64,
    v: &mut [f64],
    jac: &mut Jac,
    kk: isize,
) -> Result<(), NpbError> {
    exchange_1(comm, s, v, kk, Ex1::RecvUpper)?;
    for j in (s.jst..=s.jend).rev() {
        jacu(s, k, u, j, kk, jac);
        buts(s, omega, v, jac, j, kk);
    }
    exchange_1(comm, s, v, kk, Ex1::SendUpper)
}

/// blts on line (j, kk). The reference's two passes over the plane (v -= omega A
/// v(k-1), then the i-1 and j-1 neighbours and the solve) run fused point by point:
/// v(k-1) is not written on this plane, so every value is the same.
#[inline(never)]
fn blts(s: &Sub, omega: f64, v: &mut [f64], jac: &Jac, j: isize, kk: isize) {
    // v(i-1), carried from the point before (its solution) rather than read back from
    // where it was just stored: it is on the critical path from point to point.
    let mut vx = at5(v, s.at(s.ist - 1, j, kk));
    for i in s.ist..=s.iend {
        let p = s.at(i, j, kk);
        let pz = s.at(i, j, kk - 1);
        let py = s.at(i, j - 1, kk);
        let x = i as usize;
        let (a, b, c) = (&jac.a[x], &jac.b[x], &jac.c[x]);
        let (vz, vy) = (at5(v, pz), at5(v, py));
        let vp = at5_mut(v, p);
        for m in 0..5 {
            let sum = a[m][0] * vz[0]
                + a[m][1] * vz[1]
                + a[m][2] * vz[2]
                + a[m][3] * vz[3]
                + a[m][4] * vz[4];
            vp[m] -= omega * sum;
        }
        let mut r = [0.0; 5];
        for m in 0..5 {
            let mut sum = 0.0;
            for n in 0..5 {
                sum += b[m][n] * vy[n] + c[m][n] * vx[n];
            }
            r[m] = vp[m] - omega * sum;
        }
        solve5(&jac.d[x], &mut r);
        *vp = r;
        vx = r;
    }
}

/// buts on line (j, kk). The reference's two passes over a line (tv = omega C v(k+1),
/// then the i+1 and j+1 neighbours and the solve) run fused point by point: v(k+1) is
/// not written on this plane, so every value is the same.
#[inline(never)]
fn buts(s: &Sub, omega: f64, v: &mut [f64], jac: &Jac, j: isize, kk: isize) {
    // v(i+1), carried from the point before (see blts).
    let mut vx = at5(v, s.at(s.iend + 1, j, kk));
    for i in (s.ist..=s.iend).rev() {
        let p = s.at(i, j, kk);
        let pz = s.at(i, j, kk + 1);
        let py = s.at(i, j + 1, kk);
        let x = i as usize;
        let (a, b, c) = (&jac.a[x], &jac.b[x], &jac.c[x]);
        let (vz, vy) = (at5(v, pz), at5(v, py));
        let mut r = [0.0; 5];
        for m in 0..5 {
            r[m] = omega
                * (c[m][0] * vz[0]
                    + c[m][1] * vz[1]
                    + c[m][2] * vz[2]
                    + c[m][3] * vz[3]
                    + c[m][4] * vz[4]);
        }
        for m in 0..5 {
            let mut sum = 0.0;
            for n in 0..5 {
                sum += b[m][n] * vy[n] + a[m][n] * vx[n];
            }
            r[m] += omega * sum;
        }
        solve5(&jac.d[x], &mut r);
        let vp = at5_mut(v, p);
        for m in 0..5 {
            vp[m] -= r[m];
        }
        vx = *vp;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The patterns the LU blocks skip are the Jacobians' structural zeros.
    #[test]
    fn jacobian_patterns_cover_every_nonzero() {
        let k = Constants::new([12; 3], 0.5);
        let u = [1.3, 0.2, -0.4, 0.7, 2.9];
        let ri = 1.0 / u[0];
        let qs = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) * ri * ri;
        for d in 0..3 {
            let (f, nj) = jacobian_pair(&u, qs, ri, d, &k);
            for m in 0..5 {
                for q in 0..5 {
                    assert!(fjac_nonzero(d, m, q) || f[m][q] == 0.0, "fjac {d} {m} {q}");
                    assert!(njac_nonzero(m, q) || nj[m][q] == 0.0, "njac {d} {m} {q}");
                }
            }
        }
    }
}
