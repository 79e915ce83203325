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

/// The four Jacobian blocks of every i of one line (j, k) of a plane. The three
/// neighbour blocks are stored transposed (`a[x][n][m]` is entry (m, n)): a block times a
/// vector then goes column by column, each column's five rows side by side in memory, so
/// the products of all five rows are vector operations (row by row they are not, and
/// across a row the sum's order would change).
pub struct Jac {
    /// Main diagonal.
    pub d: Vec<Block>,
    /// k, j and i neighbours (lower: k-1, j-1, i-1; upper: i+1, j+1, k+1), transposed.
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

/// The block of the neighbour in direction `D` into `out`, transposed (see [`Jac`]):
/// sign -1 for lower, +1 for upper. Only the entries the Jacobians' pattern leaves
/// nonzero are computed (the reference writes them out one by one); a product with a
/// structural zero would change no sum.
#[inline(always)]
fn neighbour<const D: usize>(u: &[f64], p: usize, sign: f64, k: &Constants, out: &mut Block) {
    let (v, qs, ri) = point(u, p);
    let (f, nj) = jacobian_pair(&v, qs, ri, D, k);
    let (dt1, dt2) = (k.dt * k.t1[D], k.dt * k.t2[D]);
    for n in 0..5 {
        for m in 0..5 {
            let mut e = match (fjac_nonzero(D, m, n), njac_nonzero(m, n)) {
                (true, true) => sign * dt2 * f[m][n] - dt1 * nj[m][n],
                (true, false) => sign * dt2 * f[m][n],
                (false, true) => -(dt1 * nj[m][n]),
                (false, false) => 0.0,
            };
            if m == n {
                e -= dt1 * k.dd[D][m];
            }
            out[n][m] = e;
        }
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

/// `t x` for a transposed block `t` (see [`Jac`]): row m's sum runs over the columns in
/// order, starting from the first product, the five rows side by side.
#[inline(always)]
fn product(t: &Block, x: &[f64; 5]) -> [f64; 5] {
    let mut s = [0.0; 5];
    for m in 0..5 {
        s[m] = t[0][m] * x[0];
    }
    for n in 1..5 {
        for m in 0..5 {
            s[m] += t[n][m] * x[n];
        }
    }
    s
}

/// `t x + u y` for transposed blocks, row m's sum taking column n of both at once (from
/// zero, in column order), the five rows side by side.
#[inline(always)]
fn pair_product(t: &Block, x: &[f64; 5], u: &Block, y: &[f64; 5]) -> [f64; 5] {
    let mut s = [0.0; 5];
    for n in 0..5 {
        for m in 0..5 {
            s[m] += t[n][m] * x[n] + u[n][m] * y[n];
        }
    }
    s
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
    let mut tv = [0.0; 5];
    for j in (s.jst..=s.jend).rev() {
        jacu(s, k, u, j, kk, jac);
        buts(s, omega, v, jac, &mut tv, j, kk);
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
        let az = product(a, &vz);
        for m in 0..5 {
            vp[m] -= omega * az[m];
        }
        // Through `vp` in memory before the solve, for the reason given at buts.
        let sum = pair_product(b, &vy, c, &vx);
        for m in 0..5 {
            vp[m] -= omega * sum[m];
        }
        let mut r = *vp;
        solve5(&jac.d[x], &mut r);
        *vp = r;
        vx = r;
    }
}

/// buts on line (j, kk). The reference's two passes over a line (tv = omega C v(k+1),
/// then the i+1 and j+1 neighbours and the solve) run fused point by point: v(k+1) is
/// not written on this plane, so every value is the same. The right-hand side goes
/// through `tv` in memory, as the reference's: stored, its five rows are computed side
/// by side (kept in registers, the compiler paired the columns instead, 25% more
/// instructions).
#[inline(never)]
fn buts(s: &Sub, omega: f64, v: &mut [f64], jac: &Jac, tv: &mut [f64; 5], j: isize, kk: isize) {
    // v(i+1), carried from the point before (see blts).
    let mut vx = at5(v, s.at(s.iend + 1, j, kk));
    for i in (s.ist..=s.iend).rev() {
        let p = s.at(i, j, kk);
        let pz = s.at(i, j, kk + 1);
        let py = s.at(i, j + 1, kk);
        let x = i as usize;
        let (a, b, c) = (&jac.a[x], &jac.b[x], &jac.c[x]);
        let (vz, vy) = (at5(v, pz), at5(v, py));
        let cz = product(c, &vz);
        let sum = pair_product(b, &vy, a, &vx);
        for m in 0..5 {
            tv[m] = omega * cz[m];
            tv[m] += omega * sum[m];
        }
        let mut r = *tv;
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

    /// The products of transposed blocks are the blocks' products with their rows, bit
    /// for bit (the same sums in the same order).
    #[test]
    fn transposed_products_are_row_products() {
        let block = |seed: f64| -> Block {
            std::array::from_fn(|m| std::array::from_fn(|n| (seed + (5 * m + n) as f64).sin()))
        };
        let (t, u) = (block(0.3), block(1.7));
        let transpose =
            |b: &Block| -> Block { std::array::from_fn(|n| std::array::from_fn(|m| b[m][n])) };
        let (x, y) = ([0.9, -1.1, 0.4, 2.2, -0.7], [1.3, 0.05, -2.4, 0.8, 1.9]);
        let (pt, pp) = (
            product(&transpose(&t), &x),
            pair_product(&transpose(&t), &x, &transpose(&u), &y),
        );
        for m in 0..5 {
            let row =
                t[m][0] * x[0] + t[m][1] * x[1] + t[m][2] * x[2] + t[m][3] * x[3] + t[m][4] * x[4];
            let mut pair = 0.0;
            for n in 0..5 {
                pair += t[m][n] * x[n] + u[m][n] * y[n];
            }
            assert_eq!(pt[m].to_bits(), row.to_bits(), "product row {m}");
            assert_eq!(pp[m].to_bits(), pair.to_bits(), "pair product row {m}");
        }
    }

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
