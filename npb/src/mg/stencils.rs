//! MG's stencil kernels on one rank's arrays: resid, psinv, rprj3 and interp, row by row
//! with the reference's order of additions. Never communicates.

use super::grid::{at, row};

/// The residual operator A.
const A: [f64; 4] = [-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0];
/// The sum of the four side rows and of the four corner rows around row (i2, i3) of
/// `x`, the way resid and psinv pair them.
fn sides_and_corners(
    x: &[f64],
    m: &[usize; 3],
    i2: usize,
    i3: usize,
    sides: &mut [f64],
    corners: &mut [f64],
) {
    let n1 = m[0];
    let r = |a: usize, b: usize| &x[row(m, a, b)..row(m, a, b) + n1];
    let (s_a, s_b, s_c, s_d) = (r(i2 - 1, i3), r(i2 + 1, i3), r(i2, i3 - 1), r(i2, i3 + 1));
    let (c_a, c_b, c_c, c_d) = (
        r(i2 - 1, i3 - 1),
        r(i2 + 1, i3 - 1),
        r(i2 - 1, i3 + 1),
        r(i2 + 1, i3 + 1),
    );
    let (sides, corners) = (&mut sides[..n1], &mut corners[..n1]);
    for i in 0..n1 {
        sides[i] = s_a[i] + s_b[i] + s_c[i] + s_d[i];
        corners[i] = c_a[i] + c_b[i] + c_c[i] + c_d[i];
    }
}

/// out = a + b + c + d, element-wise, in that order.
#[inline(always)]
fn sum4(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64], d: &[f64]) {
    for ((((o, a), b), c), d) in out.iter_mut().zip(a).zip(b).zip(c).zip(d) {
        *o = a + b + c + d;
    }
}

/// resid: r = v - A u on the interior (`v` = None: r itself holds v).
pub(super) fn resid(
    u: &[f64],
    v: Option<&[f64]>,
    r: &mut [f64],
    m: &[usize; 3],
    s: [&mut Vec<f64>; 2],
) {
    let [u1, u2] = s;
    let n1 = m[0];
    for i3 in 2..m[2] {
        for i2 in 2..m[1] {
            sides_and_corners(u, m, i2, i3, u1, u2);
            let b = row(m, i2, i3);
            resid_row(
                &u[b + 1..b + n1 - 1],
                v.map(|v| &v[b + 1..b + n1 - 1]),
                &u1[..n1],
                &u2[..n1],
                &mut r[b + 1..b + n1 - 1],
            );
        }
    }
}

/// One row of resid: `out = v - a0 u - a2 (u2 + u1 left + u1 right) - a3 (u2 left +
/// u2 right)`, the side and corner sums `u1`, `u2` spanning the row's ghosts too; `v`
/// = None: `out` holds v.
#[inline(always)]
fn resid_row(uc: &[f64], vc: Option<&[f64]>, u1: &[f64], u2: &[f64], out: &mut [f64]) {
    let n = out.len();
    let (u1l, u1r) = (&u1[..n], &u1[2..n + 2]);
    let (u2l, u2c, u2r) = (&u2[..n], &u2[1..n + 1], &u2[2..n + 2]);
    let uc = &uc[..n];
    let a = |v: f64, i: usize| {
        v - A[0] * uc[i] - A[2] * (u2c[i] + u1l[i] + u1r[i]) - A[3] * (u2l[i] + u2r[i])
    };
    match vc {
        Some(vc) => {
            for (i, (o, &v)) in out.iter_mut().zip(&vc[..n]).enumerate() {
                *o = a(v, i);
            }
        }
        None => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = a(*o, i);
            }
        }
    }
}

/// psinv: u = u + C r on the interior.
pub(super) fn psinv(
    r: &[f64],
    u: &mut [f64],
    m: &[usize; 3],
    c: &[f64; 4],
    r1: &mut [f64],
    r2: &mut [f64],
) {
    let n1 = m[0];
    for i3 in 2..m[2] {
        for i2 in 2..m[1] {
            sides_and_corners(r, m, i2, i3, r1, r2);
            let b = row(m, i2, i3);
            let rr = &r[b..b + n1];
            let out = &mut u[b + 1..b + n1 - 1];
            let (rl, rc, rp) = (&rr[..n1 - 2], &rr[1..n1 - 1], &rr[2..n1]);
            let (r1l, r1c, r1r) = (&r1[..n1 - 2], &r1[1..n1 - 1], &r1[2..n1]);
            let r2c = &r2[1..n1 - 1];
            for i in 0..n1 - 2 {
                out[i] = out[i]
                    + c[0] * rc[i]
                    + c[1] * (rl[i] + rp[i] + r1c[i])
                    + c[2] * (r2c[i] + r1l[i] + r1r[i]);
            }
        }
    }
}

/// rprj3: s = P r, the trilinear projection of fine `r` (mk) onto coarse `s` (mj).
pub(super) fn rprj3(
    r: &[f64],
    mk: &[usize; 3],
    s: &mut [f64],
    mj: &[usize; 3],
    x1: &mut [f64],
    y1: &mut [f64],
) {
    let d = mk.map(|n| if n == 3 { 2 } else { 1 });
    let n1 = mk[0];
    // The outputs j1 = 2..mj1-1 sit at the fine i1 = 2 j1 - d1; `span` holds them with
    // their neighbours (0-based, the reference's i1 - 1).
    let n = mj[0].saturating_sub(2);
    let span = 2 - d[0]..3 - d[0] + 2 * n;
    for j3 in 2..mj[2] {
        let i3 = 2 * j3 - d[2];
        for j2 in 2..mj[1] {
            let i2 = 2 * j2 - d[1];
            let rw = |a: usize, b: usize| &r[row(mk, a, b)..row(mk, a, b) + n1];
            // x1 and y1 on the whole row: the reference's x1, y1 at its even points and
            // its x2, y2 at its odd ones, each summed in the same order.
            sum4(
                &mut x1[..n1],
                rw(i2 - 1, i3),
                rw(i2 + 1, i3),
                rw(i2, i3 - 1),
                rw(i2, i3 + 1),
            );
            sum4(
                &mut y1[..n1],
                rw(i2 - 1, i3 - 1),
                rw(i2 - 1, i3 + 1),
                rw(i2 + 1, i3 - 1),
                rw(i2 + 1, i3 + 1),
            );
            if n == 0 {
                continue;
            }
            let b = row(mj, j2, j3);
            let triples = |v| triples(v, span.clone());
            let cc = rw(i2, i3);
            for (o, ((c, x), y)) in s[b + 1..b + 1 + n]
                .iter_mut()
                .zip(triples(cc).zip(triples(x1)).zip(triples(y1)))
            {
                *o = 0.5 * c[1]
                    + 0.25 * (c[0] + c[2] + x[1])
                    + 0.125 * (x[0] + x[2] + y[1])
                    + 0.0625 * (y[0] + y[2]);
            }
        }
    }
}

/// Every other window of three in `v[span]`: each output point of rprj3 with its two
/// neighbours.
fn triples(v: &[f64], span: std::ops::Range<usize>) -> impl Iterator<Item = &[f64]> {
    v[span].windows(3).step_by(2)
}

/// interp: u += Q z, the trilinear interpolation of coarse `z` (mz) into fine `u` (mu),
/// when no fine extent is 3.
pub(super) fn interp(
    z: &[f64],
    mz: &[usize; 3],
    u: &mut [f64],
    mu: &[usize; 3],
    s: [&mut Vec<f64>; 3],
) {
    let [z1, z2, z3] = s;
    let mm1 = mz[0];
    let n1 = mu[0];
    let (z1, z2, z3) = (&mut z1[..mm1], &mut z2[..mm1], &mut z3[..mm1]);
    for i3 in 1..mz[2] {
        for i2 in 1..mz[1] {
            let zr = |a: usize, b: usize| &z[row(mz, a, b)..row(mz, a, b) + mm1];
            let (z00, z10, z01, z11) = (
                zr(i2, i3),
                zr(i2 + 1, i3),
                zr(i2, i3 + 1),
                zr(i2 + 1, i3 + 1),
            );
            for i in 0..mm1 {
                z1[i] = z10[i] + z00[i];
                z2[i] = z01[i] + z00[i];
                z3[i] = z11[i] + z01[i] + z1[i];
            }
            let urow = |a: usize, b: usize| row(mu, a, b)..row(mu, a, b) + n1;
            add_pairs(&mut u[urow(2 * i2 - 1, 2 * i3 - 1)], z00, |a, b| {
                (a, 0.5 * (b + a))
            });
            add_pairs(&mut u[urow(2 * i2, 2 * i3 - 1)], z1, |a, b| {
                (0.5 * a, 0.25 * (a + b))
            });
            add_pairs(&mut u[urow(2 * i2 - 1, 2 * i3)], z2, |a, b| {
                (0.5 * a, 0.25 * (a + b))
            });
            add_pairs(&mut u[urow(2 * i2, 2 * i3)], z3, |a, b| {
                (0.25 * a, 0.125 * (a + b))
            });
        }
    }
}

/// Adds `f(z[i], z[i + 1])` = (odd, even) to `out[2 i]` and `out[2 i + 1]` for every
/// pair of neighbours in `z`.
#[inline(always)]
fn add_pairs(out: &mut [f64], z: &[f64], f: impl Fn(f64, f64) -> (f64, f64)) {
    for (pair, w) in out.chunks_exact_mut(2).zip(z.windows(2)) {
        let (odd, even) = f(w[0], w[1]);
        pair[0] += odd;
        pair[1] += even;
    }
}

/// interp when some fine extent is 3 (a rank with one point on that axis).
pub(super) fn interp_thin(z: &[f64], mz: &[usize; 3], u: &mut [f64], mu: &[usize; 3]) {
    let d = mu.map(|n| if n == 3 { 2 } else { 1 });
    let t = mu.map(|n| usize::from(n == 3));
    let zz = |i1: usize, i2: usize, i3: usize| z[at(mz, i1, i2, i3)];
    let mut add = |i1: usize, i2: usize, i3: usize, v: f64| u[at(mu, i1, i2, i3)] += v;
    let [mm1, mm2, mm3] = *mz;
    for i3 in d[2]..mm3 {
        for i2 in d[1]..mm2 {
            for i1 in d[0]..mm1 {
                add(2 * i1 - d[0], 2 * i2 - d[1], 2 * i3 - d[2], zz(i1, i2, i3));
            }
            for i1 in 1..mm1 {
                let v = 0.5 * (zz(i1 + 1, i2, i3) + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - d[1], 2 * i3 - d[2], v);
            }
        }
        for i2 in 1..mm2 {
            for i1 in d[0]..mm1 {
                let v = 0.5 * (zz(i1, i2 + 1, i3) + zz(i1, i2, i3));
                add(2 * i1 - d[0], 2 * i2 - t[1], 2 * i3 - d[2], v);
            }
            for i1 in 1..mm1 {
                let v = 0.25
                    * (zz(i1 + 1, i2 + 1, i3)
                        + zz(i1 + 1, i2, i3)
                        + zz(i1, i2 + 1, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - t[1], 2 * i3 - d[2], v);
            }
        }
    }
    for i3 in 1..mm3 {
        for i2 in d[1]..mm2 {
            for i1 in d[0]..mm1 {
                let v = 0.5 * (zz(i1, i2, i3 + 1) + zz(i1, i2, i3));
                add(2 * i1 - d[0], 2 * i2 - d[1], 2 * i3 - t[2], v);
            }
            for i1 in 1..mm1 {
                let v = 0.25
                    * (zz(i1 + 1, i2, i3 + 1)
                        + zz(i1, i2, i3 + 1)
                        + zz(i1 + 1, i2, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - d[1], 2 * i3 - t[2], v);
            }
        }
        for i2 in 1..mm2 {
            for i1 in d[0]..mm1 {
                let v = 0.25
                    * (zz(i1, i2 + 1, i3 + 1)
                        + zz(i1, i2, i3 + 1)
                        + zz(i1, i2 + 1, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - d[0], 2 * i2 - t[1], 2 * i3 - t[2], v);
            }
            for i1 in 1..mm1 {
                let v = 0.125
                    * (zz(i1 + 1, i2 + 1, i3 + 1)
                        + zz(i1 + 1, i2, i3 + 1)
                        + zz(i1, i2 + 1, i3 + 1)
                        + zz(i1, i2, i3 + 1)
                        + zz(i1 + 1, i2 + 1, i3)
                        + zz(i1 + 1, i2, i3)
                        + zz(i1, i2 + 1, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - t[1], 2 * i3 - t[2], v);
            }
        }
    }
}
