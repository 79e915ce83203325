//! The explicit right-hand side of BT and SP (the reference's compute_rhs): derived
//! quantities on the cell and its first ghost layer, the forcing term, the flux
//! differences and 4th-order dissipation in each direction, times dt.
//!
//! Everything runs one row of i values at a time on contiguous slices (the fields'
//! components at the row's points and at its neighbours' in the stencil direction), so
//! the inner loops carry no index arithmetic or bounds checks. With the planar layout
//! (SP) the slices are the fields' own memory, one component at a time. With the
//! interleaved layout (BT) the loops run over the row's points, all five components of
//! a point at once, on 5-value chunks of the fields' memory (as the reference does;
//! gathering components into scratch rows and scattering them back cost BT's
//! compute_rhs twice the reference's time).

use super::constants::{Constants, C1, C2};
use super::{diss_coef, CellState, Field5, Layout};

/// Scratch rows of the interleaved layout: per component, the stencil rows of u and
/// the row of rhs.
struct Scratch {
    u: [Vec<f64>; 5],
    r: [Vec<f64>; 5],
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            u: Default::default(),
            r: Default::default(),
        }
    }
}

/// Component `m` of `f` at the `len` points from `p` moved by `o * s` for the offsets
/// `o` in `-reach..=reach`, each a contiguous slice (entry `o + reach`; unused entries
/// are empty): slices of the field itself (planar) or gathered into `buf`
/// (interleaved).
#[inline]
fn stencil<'a, L: Layout>(
    f: &'a Field5<L>,
    m: usize,
    p: usize,
    len: usize,
    s: usize,
    reach: usize,
    buf: &'a mut Vec<f64>,
) -> [&'a [f64]; 5] {
    let mut out: [&[f64]; 5] = [&[]; 5];
    let width = 2 * reach + 1;
    if !L::AOS {
        let plane = &f.data[m * f.npts..(m + 1) * f.npts];
        for (o, x) in out.iter_mut().take(width).enumerate() {
            let at = p + o * s - reach * s;
            *x = &plane[at..at + len];
        }
        return out;
    }
    buf.clear();
    if s == 1 {
        // One gathered row covers every offset.
        let from = p - reach;
        buf.extend(
            f.data[5 * from + m..5 * (from + len + 2 * reach)]
                .iter()
                .step_by(5),
        );
        let buf: &'a [f64] = buf;
        for (o, x) in out.iter_mut().take(width).enumerate() {
            *x = &buf[o..o + len];
        }
    } else {
        for o in 0..width {
            let at = p + o * s - reach * s;
            buf.extend(f.data[5 * at + m..5 * (at + len)].iter().step_by(5));
        }
        let buf: &'a [f64] = buf;
        for (o, x) in out.iter_mut().take(width).enumerate() {
            *x = &buf[o * len..(o + 1) * len];
        }
    }
    out
}

/// Runs `body` on the five components of `f` at the `len` points from `p` as mutable
/// contiguous slices (gathered into and scattered back from `bufs` if interleaved).
#[inline]
fn with_rows_mut<L: Layout>(
    f: &mut Field5<L>,
    p: usize,
    len: usize,
    bufs: &mut [Vec<f64>; 5],
    body: impl FnOnce([&mut [f64]; 5]),
) {
    if !L::AOS {
        let np = f.npts;
        let mut planes = f.data.chunks_exact_mut(np);
        let rows: [&mut [f64]; 5] = std::array::from_fn(|_| {
            let plane = planes.next().expect("five components");
            &mut plane[p..p + len]
        });
        body(rows);
        return;
    }
    let points = &mut f.data[5 * p..5 * (p + len)];
    for (m, b) in bufs.iter_mut().enumerate() {
        b.clear();
        b.extend(points.iter().skip(m).step_by(5));
    }
    body(bufs.each_mut().map(|b| &mut b[..]));
    for (m, b) in bufs.iter().enumerate() {
        for (x, v) in points.iter_mut().skip(m).step_by(5).zip(b) {
            *x = *v;
        }
    }
}

/// The `len` values of `x` from `p - s`, `p` and `p + s`.
#[inline(always)]
fn around(x: &[f64], p: usize, s: usize, len: usize) -> (&[f64], &[f64], &[f64]) {
    (
        &x[p - s..p - s + len],
        &x[p..p + len],
        &x[p + s..p + s + len],
    )
}

/// compute_rhs for one cell; `with_speed` also computes the speed of sound (SP).
pub fn compute_rhs<L: Layout>(cs: &mut CellState<L>, k: &Constants, with_speed: bool) {
    let c = cs.cell.clone();
    let g = cs.grid;
    let mut sc = Scratch::new();
    // Reciprocal of density, velocities, kinetic energy and (SP) speed of sound.
    let len = c.size[0] + 2;
    if L::AOS {
        derived_aos(cs, len);
    } else {
        for kk in -1..=c.size[2] as isize {
            for jj in -1..=c.size[1] as isize {
                let p = g.at(-1, jj, kk);
                let [b0, b1, b2, b3, b4] = &mut sc.u;
                let u0 = stencil(&cs.u, 0, p, len, 1, 0, b0)[0];
                let u1 = stencil(&cs.u, 1, p, len, 1, 0, b1)[0];
                let u2 = stencil(&cs.u, 2, p, len, 1, 0, b2)[0];
                let u3 = stencil(&cs.u, 3, p, len, 1, 0, b3)[0];
                let u4 = stencil(&cs.u, 4, p, len, 1, 0, b4)[0];
                let a = &mut cs.aux;
                let [vx, vy, vz] = &mut a.vel;
                let rho_i = &mut a.rho_i[p..p + len];
                let (vx, vy, vz) = (
                    &mut vx[p..p + len],
                    &mut vy[p..p + len],
                    &mut vz[p..p + len],
                );
                let square = &mut a.square[p..p + len];
                let qs = &mut a.qs[p..p + len];
                for i in 0..len {
                    let rho_inv = 1.0 / u0[i];
                    rho_i[i] = rho_inv;
                    vx[i] = u1[i] * rho_inv;
                    vy[i] = u2[i] * rho_inv;
                    vz[i] = u3[i] * rho_inv;
                    let sq = 0.5 * (u1[i] * u1[i] + u2[i] * u2[i] + u3[i] * u3[i]) * rho_inv;
                    square[i] = sq;
                    qs[i] = sq * rho_inv;
                }
                if with_speed {
                    let (speed, ainv) = (&mut a.speed[p..p + len], &mut a.ainv[p..p + len]);
                    let (rho_i, square) = (&a.rho_i[p..p + len], &a.square[p..p + len]);
                    for i in 0..len {
                        let aux = (k.c1c2 * rho_i[i] * (u4[i] - square[i])).sqrt();
                        speed[i] = aux;
                        ainv[i] = 1.0 / aux;
                    }
                }
            }
        }
    }
    // The forcing term is known on the whole cell, boundary included.
    cs.rhs.data.copy_from_slice(&cs.forcing.data);
    for d in 0..3 {
        if L::AOS {
            match d {
                0 => flux_aos::<L, 0>(cs, k),
                1 => flux_aos::<L, 1>(cs, k),
                _ => flux_aos::<L, 2>(cs, k),
            }
            dissipation_aos(cs, k, d);
        } else {
            flux(cs, k, d, &mut sc);
            dissipation(cs, k, d, &mut sc);
        }
    }
    let (i0, len) = (c.start[0], c.size[0] - c.end[0] - c.start[0]);
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let p = g.at(i0 as isize, jj as isize, kk as isize);
            if L::AOS {
                for v in &mut cs.rhs.data[5 * p..5 * (p + len)] {
                    *v *= k.dt;
                }
                continue;
            }
            with_rows_mut(&mut cs.rhs, p, len, &mut sc.r, |rows| {
                for r in rows {
                    for v in r.iter_mut() {
                        *v *= k.dt;
                    }
                }
            });
        }
    }
}

/// Flux differences in direction `d` on the interior points.
fn flux<L: Layout>(cs: &mut CellState<L>, k: &Constants, d: usize, sc: &mut Scratch) {
    let c = &cs.cell;
    let g = cs.grid;
    let s = g.stride[d];
    let n = d + 1;
    let (t2, dt1, con) = (k.t2[d], k.dt1[d], k.con[d]);
    let (i0, len) = (c.start[0], c.size[0] - c.end[0] - c.start[0]);
    let a = &cs.aux;
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let p = g.at(i0 as isize, jj as isize, kk as isize);
            let [b0, b1, b2, b3, b4] = &mut sc.u;
            let u = [
                stencil(&cs.u, 0, p, len, s, 1, b0),
                stencil(&cs.u, 1, p, len, s, 1, b1),
                stencil(&cs.u, 2, p, len, s, 1, b2),
                stencil(&cs.u, 3, p, len, s, 1, b3),
                stencil(&cs.u, 4, p, len, s, 1, b4),
            ];
            // Neighbours below (m), at (0) and above (p) in direction d.
            let (vm, v0, vp) = around(&a.vel[d], p, s, len);
            let (sqm, _, sqp) = around(&a.square, p, s, len);
            let (qm, q0, qp) = around(&a.qs, p, s, len);
            let (rim, ri0, rip) = around(&a.rho_i, p, s, len);
            with_rows_mut(&mut cs.rhs, p, len, &mut sc.r, |rows| {
                let [r0, r1, r2, r3, r4] = rows;
                let (e_m, e_0, e_p) = (u[4][0], u[4][1], u[4][2]);
                let rho = [u[0][0], u[0][1], u[0][2]];
                flux_mass(r0, rho, [u[n][0], u[n][2]], [dt1[0], t2]);
                for (mm, r) in [(1, r1), (2, r2), (3, r3)] {
                    let x = [u[mm][0], u[mm][1], u[mm][2]];
                    if mm == n {
                        let c = con[1] * k.con43;
                        flux_along(r, x, [vm, v0, vp], [e_m, e_p], [sqm, sqp], [dt1[mm], c, t2]);
                    } else {
                        let (wm, w0, wp) = around(&a.vel[mm - 1], p, s, len);
                        let c = [dt1[mm], con[1], t2];
                        flux_across(r, x, [wm, w0, wp], [vm, vp], c);
                    }
                }
                let c = [dt1[4], con[2], con[3], con[4], t2];
                let sq = [sqm, sqp];
                flux_energy(
                    r4,
                    [e_m, e_0, e_p],
                    [vm, v0, vp],
                    [qm, q0, qp],
                    [rim, ri0, rip],
                    sq,
                    c,
                );
            });
        }
    }
}

// The row kernels of the planar flux differences, one output row each, stencil rows
// as (below, at, above) in the direction. Each is a function of its own, never
// inlined, so that its output row comes in as a parameter: only there does the
// compiler know that it overlaps none of the inputs, and it runs the loop as vector
// code without run-time overlap checks, which cost more than the loop itself on short
// rows (SP's line solves' row kernels are written so for the same reason).

/// Density: `r += dt1 (a+ - 2a + a-) - t2 (n+ - n-)`, with `n` the momentum along the
/// direction (below, above).
#[inline(never)]
fn flux_mass(r: &mut [f64], a: [&[f64]; 3], n: [&[f64]; 2], [dt1, t2]: [f64; 2]) {
    let len = r.len();
    let (a_m, a_0, a_p) = (&a[0][..len], &a[1][..len], &a[2][..len]);
    let [n_m, n_p] = n.map(|y| &y[..len]);
    for i in 0..len {
        r[i] = r[i] + dt1 * (a_p[i] - 2.0 * a_0[i] + a_m[i]) - t2 * (n_p[i] - n_m[i]);
    }
}

/// The momentum along the direction (velocity `v`, energy `e`, kinetic energy `sq`);
/// `c` is (dt1, con1 * con43, t2).
#[inline(never)]
fn flux_along(
    r: &mut [f64],
    x: [&[f64]; 3],
    v: [&[f64]; 3],
    e: [&[f64]; 2],
    sq: [&[f64]; 2],
    [dt1, c, t2]: [f64; 3],
) {
    let len = r.len();
    let [x_m, x_0, x_p] = x.map(|y| &y[..len]);
    let [vm, v0, vp] = v.map(|y| &y[..len]);
    let [e_m, e_p] = e.map(|y| &y[..len]);
    let [sqm, sqp] = sq.map(|y| &y[..len]);
    for i in 0..len {
        r[i] = r[i] + dt1 * (x_p[i] - 2.0 * x_0[i] + x_m[i]) + c * (vp[i] - 2.0 * v0[i] + vm[i])
            - t2 * (x_p[i] * vp[i] - x_m[i] * vm[i] + (e_p[i] - sqp[i] - e_m[i] + sqm[i]) * C2);
    }
}

/// A momentum across the direction (its velocity `w`; `v` the velocity along); `c` is
/// (dt1, con1, t2).
#[inline(never)]
fn flux_across(
    r: &mut [f64],
    x: [&[f64]; 3],
    w: [&[f64]; 3],
    v: [&[f64]; 2],
    [dt1, c, t2]: [f64; 3],
) {
    let len = r.len();
    let [x_m, x_0, x_p] = x.map(|y| &y[..len]);
    let [wm, w0, wp] = w.map(|y| &y[..len]);
    let [vm, vp] = v.map(|y| &y[..len]);
    for i in 0..len {
        r[i] = r[i] + dt1 * (x_p[i] - 2.0 * x_0[i] + x_m[i]) + c * (wp[i] - 2.0 * w0[i] + wm[i])
            - t2 * (x_p[i] * vp[i] - x_m[i] * vm[i]);
    }
}

/// Energy (`v` the velocity along the direction, `sq` the kinetic energy, `q` it times
/// the reciprocal of density `ri`); `c` is (dt1, con2, con3, con4, t2).
#[inline(never)]
fn flux_energy(
    r: &mut [f64],
    e: [&[f64]; 3],
    v: [&[f64]; 3],
    q: [&[f64]; 3],
    ri: [&[f64]; 3],
    sq: [&[f64]; 2],
    [dt1, con2, con3, con4, t2]: [f64; 5],
) {
    let len = r.len();
    let [e_m, e_0, e_p] = e.map(|y| &y[..len]);
    let [um, u0, up] = v.map(|y| &y[..len]);
    let [qm, q0, qp] = q.map(|y| &y[..len]);
    let [rim, ri0, rip] = ri.map(|y| &y[..len]);
    let [sqm, sqp] = sq.map(|y| &y[..len]);
    for i in 0..len {
        let (up1, uijk, um1) = (up[i], u0[i], um[i]);
        r[i] = r[i]
            + dt1 * (e_p[i] - 2.0 * e_0[i] + e_m[i])
            + con2 * (qp[i] - 2.0 * q0[i] + qm[i])
            + con3 * (up1 * up1 - 2.0 * uijk * uijk + um1 * um1)
            + con4 * (e_p[i] * rip[i] - 2.0 * e_0[i] * ri0[i] + e_m[i] * rim[i])
            - t2 * ((C1 * e_p[i] - C2 * sqp[i]) * up1 - (C1 * e_m[i] - C2 * sqm[i]) * um1);
    }
}

/// Fourth-order dissipation in direction `d`.
fn dissipation<L: Layout>(cs: &mut CellState<L>, k: &Constants, d: usize, sc: &mut Scratch) {
    let c = &cs.cell;
    let g = cs.grid;
    let s = g.stride[d];
    let wt: Vec<[f64; 5]> = (0..c.size[d])
        .map(|pos| diss_coef(pos, c.size[d], c.start[d], c.end[d]))
        .collect();
    let (i0, len) = (c.start[0], c.size[0] - c.end[0] - c.start[0]);
    // Along x the weights change near the cell's ends: a row of them per diagonal, by
    // point, so that each row is one loop (runs of equal weights cost more than they
    // saved on short rows: with small cells most runs were single points).
    let along_x: [Vec<f64>; 5] = if d == 0 {
        std::array::from_fn(|m| (0..len).map(|i| wt[i0 + i][m]).collect())
    } else {
        Default::default()
    };
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let p = g.at(i0 as isize, jj as isize, kk as isize);
            let [b0, b1, b2, b3, b4] = &mut sc.u;
            let u = [
                stencil(&cs.u, 0, p, len, s, 2, b0),
                stencil(&cs.u, 1, p, len, s, 2, b1),
                stencil(&cs.u, 2, p, len, s, 2, b2),
                stencil(&cs.u, 3, p, len, s, 2, b3),
                stencil(&cs.u, 4, p, len, s, 2, b4),
            ];
            with_rows_mut(&mut cs.rhs, p, len, &mut sc.r, |rows| {
                for (r, x) in rows.into_iter().zip(&u) {
                    if d == 0 {
                        dissipate_x(r, x, &along_x, k.dssp);
                    } else {
                        dissipate(r, x, wt[[jj, kk][d - 1]], k.dssp);
                    }
                }
            });
        }
    }
}

// The row kernels of the planar dissipation, one component's row each, never inlined
// for the reason the flux's are.

/// `r -= dssp * sum(w[o] * x[o])` over the stencil offsets `o`, one set of weights for
/// the row (y and z).
#[inline(never)]
fn dissipate(r: &mut [f64], x: &[&[f64]; 5], w: [f64; 5], dssp: f64) {
    let len = r.len();
    let [x0, x1, x2, x3, x4] = x.map(|y| &y[..len]);
    let [w0, w1, w2, w3, w4] = w;
    for i in 0..len {
        let v = w0 * x0[i] + w1 * x1[i] + w2 * x2[i] + w3 * x3[i] + w4 * x4[i];
        r[i] -= dssp * v;
    }
}

/// [`dissipate`] with weights by point (x, where they change near the cell's ends).
#[inline(never)]
fn dissipate_x(r: &mut [f64], x: &[&[f64]; 5], w: &[Vec<f64>; 5], dssp: f64) {
    let len = r.len();
    let [x0, x1, x2, x3, x4] = x.map(|y| &y[..len]);
    let [w0, w1, w2, w3, w4] = w.each_ref().map(|y| &y[..len]);
    for i in 0..len {
        let v = w0[i] * x0[i] + w1[i] * x1[i] + w2[i] * x2[i] + w3[i] * x3[i] + w4[i] * x4[i];
        r[i] -= dssp * v;
    }
}

/// The `len` points of an interleaved field's values from point `p`, as 5-value chunks.
#[inline(always)]
fn points(x: &[f64], p: usize, len: usize) -> std::slice::ChunksExact<'_, f64> {
    x[5 * p..5 * (p + len)].chunks_exact(5)
}

/// Reciprocal of density, velocities and kinetic energy on the cell and its first ghost
/// layer, interleaved layout (BT has no speed of sound).
fn derived_aos<L: Layout>(cs: &mut CellState<L>, len: usize) {
    debug_assert!(L::AOS);
    let c = &cs.cell;
    let g = cs.grid;
    for kk in -1..=c.size[2] as isize {
        for jj in -1..=c.size[1] as isize {
            let p = g.at(-1, jj, kk);
            let a = &mut cs.aux;
            let [vx, vy, vz] = &mut a.vel;
            let rho_i = &mut a.rho_i[p..p + len];
            let (vx, vy, vz) = (
                &mut vx[p..p + len],
                &mut vy[p..p + len],
                &mut vz[p..p + len],
            );
            let square = &mut a.square[p..p + len];
            let qs = &mut a.qs[p..p + len];
            for (i, u) in points(&cs.u.data, p, len).enumerate() {
                let rho_inv = 1.0 / u[0];
                rho_i[i] = rho_inv;
                vx[i] = u[1] * rho_inv;
                vy[i] = u[2] * rho_inv;
                vz[i] = u[3] * rho_inv;
                let sq = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) * rho_inv;
                square[i] = sq;
                qs[i] = sq * rho_inv;
            }
        }
    }
}

/// [`flux`] for the interleaved layout in direction `D`, point by point.
fn flux_aos<L: Layout, const D: usize>(cs: &mut CellState<L>, k: &Constants) {
    debug_assert!(L::AOS);
    let c = &cs.cell;
    let g = cs.grid;
    let s = g.stride[D];
    let n = D + 1;
    // The two momentum components across the direction.
    let (ta, tb) = match D {
        0 => (2, 3),
        1 => (1, 3),
        _ => (1, 2),
    };
    let (t2, dt1, con) = (k.t2[D], k.dt1[D], k.con[D]);
    let (i0, len) = (c.start[0], c.size[0] - c.end[0] - c.start[0]);
    let a = &cs.aux;
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let p = g.at(i0 as isize, jj as isize, kk as isize);
            let u = &cs.u.data;
            let rows = points(u, p - s, len)
                .zip(points(u, p, len))
                .zip(points(u, p + s, len));
            // Neighbours below (m), at (0) and above (p) in direction D.
            let (vm, v0, vp) = around(&a.vel[D], p, s, len);
            let (sqm, _, sqp) = around(&a.square, p, s, len);
            let (qm, q0, qp) = around(&a.qs, p, s, len);
            let (rim, ri0, rip) = around(&a.rho_i, p, s, len);
            let (wam, wa0, wap) = around(&a.vel[ta - 1], p, s, len);
            let (wbm, wb0, wbp) = around(&a.vel[tb - 1], p, s, len);
            let rhs = cs.rhs.data[5 * p..5 * (p + len)].chunks_exact_mut(5);
            for (i, (r, ((xm, x0), xp))) in rhs.zip(rows).enumerate() {
                r[0] = r[0] + dt1[0] * (xp[0] - 2.0 * x0[0] + xm[0]) - t2 * (xp[n] - xm[n]);
                r[n] = r[n]
                    + dt1[n] * (xp[n] - 2.0 * x0[n] + xm[n])
                    + con[1] * k.con43 * (vp[i] - 2.0 * v0[i] + vm[i])
                    - t2 * (xp[n] * vp[i] - xm[n] * vm[i] + (xp[4] - sqp[i] - xm[4] + sqm[i]) * C2);
                for (mm, wm, w0, wp) in [(ta, wam, wa0, wap), (tb, wbm, wb0, wbp)] {
                    r[mm] = r[mm]
                        + dt1[mm] * (xp[mm] - 2.0 * x0[mm] + xm[mm])
                        + con[1] * (wp[i] - 2.0 * w0[i] + wm[i])
                        - t2 * (xp[mm] * vp[i] - xm[mm] * vm[i]);
                }
                let (up1, uijk, um1) = (vp[i], v0[i], vm[i]);
                r[4] = r[4]
                    + dt1[4] * (xp[4] - 2.0 * x0[4] + xm[4])
                    + con[2] * (qp[i] - 2.0 * q0[i] + qm[i])
                    + con[3] * (up1 * up1 - 2.0 * uijk * uijk + um1 * um1)
                    + con[4] * (xp[4] * rip[i] - 2.0 * x0[4] * ri0[i] + xm[4] * rim[i])
                    - t2 * ((C1 * xp[4] - C2 * sqp[i]) * up1 - (C1 * xm[4] - C2 * sqm[i]) * um1);
            }
        }
    }
}

/// [`dissipation`] for the interleaved layout, point by point.
fn dissipation_aos<L: Layout>(cs: &mut CellState<L>, k: &Constants, d: usize) {
    debug_assert!(L::AOS);
    let c = &cs.cell;
    let g = cs.grid;
    let s = g.stride[d];
    let wt: Vec<[f64; 5]> = (0..c.size[d])
        .map(|pos| diss_coef(pos, c.size[d], c.start[d], c.end[d]))
        .collect();
    let (i0, len) = (c.start[0], c.size[0] - c.end[0] - c.start[0]);
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let p = g.at(i0 as isize, jj as isize, kk as isize);
            let u = &cs.u.data;
            let rows = points(u, p - 2 * s, len)
                .zip(points(u, p - s, len))
                .zip(points(u, p, len))
                .zip(points(u, p + s, len))
                .zip(points(u, p + 2 * s, len));
            let rhs = cs.rhs.data[5 * p..5 * (p + len)].chunks_exact_mut(5);
            for (i, (r, ((((x0, x1), x2), x3), x4))) in rhs.zip(rows).enumerate() {
                let pos = [i0 + i, jj, kk][d];
                let [w0, w1, w2, w3, w4] = wt[pos];
                for m in 0..5 {
                    let v = w0 * x0[m] + w1 * x1[m] + w2 * x2[m] + w3 * x3[m] + w4 * x4[m];
                    r[m] -= k.dssp * v;
                }
            }
        }
    }
}
