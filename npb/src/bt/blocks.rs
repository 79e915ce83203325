//! BT's 5x5 block kernels (the reference's solve_subs: matvec_sub, matmul_sub, binvcrhs,
//! binvrhs) and the flux and viscous Jacobians of one direction. Blocks are `[row][col]`.

use crate::cfd::constants::{Constants, C1, C2};

/// A 5x5 block.
pub type Block = [[f64; 5]; 5];

/// The identity block.
pub const IDENTITY: Block = {
    let mut b = [[0.0; 5]; 5];
    let mut i = 0;
    while i < 5 {
        b[i][i] = 1.0;
        i += 1;
    }
    b
};

/// b -= a * v.
#[inline(always)]
pub fn matvec_sub(a: &Block, v: &[f64; 5], b: &mut [f64; 5]) {
    for i in 0..5 {
        b[i] = b[i]
            - a[i][0] * v[0]
            - a[i][1] * v[1]
            - a[i][2] * v[2]
            - a[i][3] * v[3]
            - a[i][4] * v[4];
    }
}

/// c -= a * b.
#[inline(always)]
pub fn matmul_sub(a: &Block, b: &Block, c: &mut Block) {
    for i in 0..5 {
        for j in 0..5 {
            c[i][j] = c[i][j]
                - a[i][0] * b[0][j]
                - a[i][1] * b[1][j]
                - a[i][2] * b[2][j]
                - a[i][3] * b[3][j]
                - a[i][4] * b[4][j];
        }
    }
}

/// Gauss-Jordan elimination without pivoting: c <- b^-1 c, r <- b^-1 r (b is destroyed).
/// One pivot after the other, each a constant so that every loop has constant bounds and
/// unrolls fully (as the reference writes binvcrhs out).
#[inline(always)]
pub fn binvcrhs(b: &mut Block, c: &mut Block, r: &mut [f64; 5]) {
    pivot_step::<0, true>(b, c, r);
    pivot_step::<1, true>(b, c, r);
    pivot_step::<2, true>(b, c, r);
    pivot_step::<3, true>(b, c, r);
    pivot_step::<4, true>(b, c, r);
}

/// Gauss-Jordan elimination without pivoting: r <- b^-1 r.
#[inline(always)]
pub fn binvrhs(b: &mut Block, r: &mut [f64; 5]) {
    let mut unused = [[0.0; 5]; 5];
    pivot_step::<0, false>(b, &mut unused, r);
    pivot_step::<1, false>(b, &mut unused, r);
    pivot_step::<2, false>(b, &mut unused, r);
    pivot_step::<3, false>(b, &mut unused, r);
    pivot_step::<4, false>(b, &mut unused, r);
}

/// Step `P` of the Gauss-Jordan elimination: scales row P by 1 / b[P][P] and removes
/// column P from every other row, of b, r and (if `WITH_C`) c.
#[inline(always)]
fn pivot_step<const P: usize, const WITH_C: bool>(b: &mut Block, c: &mut Block, r: &mut [f64; 5]) {
    let pivot = 1.0 / b[P][P];
    for col in P + 1..5 {
        b[P][col] *= pivot;
    }
    if WITH_C {
        for col in 0..5 {
            c[P][col] *= pivot;
        }
    }
    r[P] *= pivot;
    for row in 0..5 {
        if row == P {
            continue;
        }
        let coeff = b[row][P];
        for col in P + 1..5 {
            b[row][col] -= coeff * b[P][col];
        }
        if WITH_C {
            for col in 0..5 {
                c[row][col] -= coeff * c[P][col];
            }
        }
        r[row] -= coeff * r[P];
    }
}

/// The flux Jacobian (`f`, fjac) and viscous Jacobian (`nj`, njac) in direction `d` at a
/// point with state `u`, `qs` = kinetic energy / rho and `rho_i` = 1/rho, written in
/// place (a returned pair of blocks was a 400-byte memcpy per point).
#[inline(always)]
pub fn jacobians(
    u: &[f64; 5],
    qs: f64,
    rho_i: f64,
    d: usize,
    k: &Constants,
    f: &mut Block,
    nj: &mut Block,
) {
    let tmp1 = rho_i;
    let tmp2 = tmp1 * tmp1;
    let tmp3 = tmp1 * tmp2;
    let n = d + 1;
    let (ta, tb) = match d {
        0 => (2, 3),
        1 => (1, 3),
        _ => (1, 2),
    };
    *f = [[0.0; 5]; 5];
    *nj = [[0.0; 5]; 5];
    f[0][n] = 1.0;
    f[n][0] = -(u[n] * u[n] * tmp2) + C2 * qs;
    f[n][n] = (2.0 - C2) * (u[n] * tmp1);
    f[n][4] = C2;
    f[4][0] = (C2 * 2.0 * qs - C1 * (u[4] * tmp1)) * (u[n] * tmp1);
    f[4][n] = C1 * u[4] * tmp1 - C2 * (u[n] * u[n] * tmp2 + qs);
    f[4][4] = C1 * (u[n] * tmp1);
    let c3c4 = k.c3c4;
    let c1345 = k.c1345;
    let con43 = k.con43;
    nj[n][0] = -con43 * c3c4 * tmp2 * u[n];
    nj[n][n] = con43 * c3c4 * tmp1;
    for t in [ta, tb] {
        f[n][t] = -C2 * (u[t] * tmp1);
        f[t][0] = -(u[n] * u[t]) * tmp2;
        f[t][n] = u[t] * tmp1;
        f[t][t] = u[n] * tmp1;
        f[4][t] = -C2 * (u[t] * u[n]) * tmp2;
        nj[t][0] = -c3c4 * tmp2 * u[t];
        nj[t][t] = c3c4 * tmp1;
    }
    let coef = |m: usize| {
        if m == n {
            con43 * c3c4 - c1345
        } else {
            c3c4 - c1345
        }
    };
    nj[4][0] = -coef(1) * tmp3 * (u[1] * u[1])
        - coef(2) * tmp3 * (u[2] * u[2])
        - coef(3) * tmp3 * (u[3] * u[3])
        - c1345 * tmp2 * u[4];
    for m in 1..4 {
        nj[4][m] = coef(m) * tmp2 * u[m];
    }
    nj[4][4] = c1345 * tmp1;
}

/// [`jacobians`] returned as a pair (fjac, njac).
#[inline(always)]
pub fn jacobian_pair(u: &[f64; 5], qs: f64, rho_i: f64, d: usize, k: &Constants) -> (Block, Block) {
    let (mut f, mut nj) = ([[0.0; 5]; 5], [[0.0; 5]; 5]);
    jacobians(u, qs, rho_i, d, k, &mut f, &mut nj);
    (f, nj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binvcrhs_solves_the_block_system() {
        let mut b = [[0.0; 5]; 5];
        for i in 0..5 {
            for j in 0..5 {
                b[i][j] = if i == j {
                    10.0 + i as f64
                } else {
                    (i * 5 + j) as f64 * 0.1
                };
            }
        }
        let x = [1.0, -2.0, 3.0, 0.5, 4.0];
        let mut r = [0.0; 5];
        for i in 0..5 {
            for j in 0..5 {
                r[i] += b[i][j] * x[j];
            }
        }
        let mut c = b;
        let mut bb = b;
        binvcrhs(&mut bb, &mut c, &mut r);
        for i in 0..5 {
            assert!((r[i] - x[i]).abs() < 1e-12);
            for j in 0..5 {
                let e = if i == j { 1.0 } else { 0.0 };
                assert!((c[i][j] - e).abs() < 1e-12);
            }
        }
    }
}
