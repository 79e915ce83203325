//! The explicit right-hand side of BT and SP (the reference's compute_rhs): derived
//! quantities on the cell and its first ghost layer, the forcing term, the flux
//! differences and 4th-order dissipation in each direction, times dt.
//!
//! Everything runs one row of i values at a time on contiguous slices (the fields'
//! components at the row's points and at its neighbours' in the stencil direction), so
//! the inner loops carry no index arithmetic or bounds checks. With the planar layout
//! (SP) the slices are the fields' own memory, and one kernel call computes the row of
//! all five components (the flux differences, then the dissipation). With the
//! interleaved layout (BT) the loops run over the row's points, all five components of
//! a point at once, on 5-value chunks of the fields' memory (as the reference does;
//! gathering components into scratch rows and scattering them back cost BT's
//! compute_rhs twice the reference's time).

use super::constants::{Constants, C1, C2};
use super::{cut_rows, diss_coef, CellState, Field5, Layout};

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
    // The forcing term is known on the whole cell, boundary included; a row at a time,
    // as the ghost layers hold no forcing and nothing reads the right-hand side there
    // (copying them too moved 1.4x the bytes at 32 points a side).
    let runs = if L::AOS { 1 } else { 5 };
    let run = if L::AOS { 5 * c.size[0] } else { c.size[0] };
    for kk in 0..c.size[2] {
        for jj in 0..c.size[1] {
            let p = g.at(0, jj as isize, kk as isize);
            for m in 0..runs {
                let at = cs.rhs.ix(m, p);
                cs.rhs.data[at..at + run].copy_from_slice(&cs.forcing.data[at..at + run]);
            }
        }
    }
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

/// The first three of five rows (a stencil of reach 1).
fn three(x: [&[f64]; 5]) -> [&[f64]; 3] {
    [x[0], x[1], x[2]]
}

/// Flux differences in direction `d` on the interior points.
fn flux<L: Layout>(cs: &mut CellState<L>, k: &Constants, d: usize, sc: &mut Scratch) {
    let c = &cs.cell;
    let g = cs.grid;
    let s = g.stride[d];
    let (i0, len) = (c.start[0], c.size[0] - c.end[0] - c.start[0]);
    let con = k.con[d];
    let consts = FluxConsts {
        dt1: k.dt1[d],
        t2: k.t2[d],
        along: con[1] * k.con43,
        across: con[1],
        energy: [con[2], con[3], con[4]],
    };
    let a = &cs.aux;
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let p = g.at(i0 as isize, jj as isize, kk as isize);
            let [b0, b1, b2, b3, b4] = &mut sc.u;
            // Each row below, at and above the row in direction d.
            let near = |x| {
                let (m, o, p) = around(x, p, s, len);
                [m, o, p]
            };
            let rows = FluxRows {
                u: [
                    three(stencil(&cs.u, 0, p, len, s, 1, b0)),
                    three(stencil(&cs.u, 1, p, len, s, 1, b1)),
                    three(stencil(&cs.u, 2, p, len, s, 1, b2)),
                    three(stencil(&cs.u, 3, p, len, s, 1, b3)),
                    three(stencil(&cs.u, 4, p, len, s, 1, b4)),
                ],
                vel: [near(&a.vel[0]), near(&a.vel[1]), near(&a.vel[2])],
                sq: near(&a.square),
                q: near(&a.qs),
                ri: near(&a.rho_i),
            };
            with_rows_mut(
                &mut cs.rhs,
                p,
                len,
                &mut sc.r,
                |[r0, r1, r2, r3, r4]| match d {
                    0 => flux_row::<0>(r0, r1, r2, r3, r4, &rows, &consts),
                    1 => flux_row::<1>(r0, r1, r2, r3, r4, &rows, &consts),
                    _ => flux_row::<2>(r0, r1, r2, r3, r4, &rows, &consts),
                },
            );
        }
    }
}

/// The rows one row of flux differences reads, each as (below, at, above) in the
/// direction (`sq`: below and above only): the five components of u, the three
/// velocities, the kinetic energy, it times the reciprocal of density, and that
/// reciprocal.
struct FluxRows<'a> {
    u: [[&'a [f64]; 3]; 5],
    vel: [[&'a [f64]; 3]; 3],
    sq: [&'a [f64]; 3],
    q: [&'a [f64]; 3],
    ri: [&'a [f64]; 3],
}

/// The direction's constants of the flux differences: dt1 per component, t2, the
/// viscous factors of the momentum along the direction (con1 con43) and across it
/// (con1), and the energy's (con2, con3, con4).
struct FluxConsts {
    dt1: [f64; 5],
    t2: f64,
    along: f64,
    across: f64,
    energy: [f64; 3],
}

// The flux differences of a row, all five components in one pass over the points, as
// the reference's loop. The kernel is a function of its own, never inlined, with its five
// output rows as separate parameters: only there does the compiler know that they
// overlap none of the inputs (and not each other), and it runs the loop as vector code
// without run-time overlap checks, which cost more than the loop itself on short rows
// (SP's line solves' row kernels are written so for the same reason). One pass instead
// of one per component reads each input row once, and calls one kernel per row instead
// of five. The per-point formulas are the former kernels', in the same order, so the
// results are the same bits.

/// Density: `r + dt1 (a+ - 2a + a-) - t2 (n+ - n-)`, with `n` the momentum along the
/// direction.
#[inline(always)]
fn mass(r: f64, [a_m, a_0, a_p]: [f64; 3], [n_m, n_p]: [f64; 2], dt1: f64, t2: f64) -> f64 {
    r + dt1 * (a_p - 2.0 * a_0 + a_m) - t2 * (n_p - n_m)
}

/// The momentum along the direction (velocity `v`, energy `e`, kinetic energy `sq`).
#[inline(always)]
fn along(
    r: f64,
    [x_m, x_0, x_p]: [f64; 3],
    [vm, v0, vp]: [f64; 3],
    [e_m, e_p]: [f64; 2],
    [sqm, sqp]: [f64; 2],
    [dt1, c, t2]: [f64; 3],
) -> f64 {
    r + dt1 * (x_p - 2.0 * x_0 + x_m) + c * (vp - 2.0 * v0 + vm)
        - t2 * (x_p * vp - x_m * vm + (e_p - sqp - e_m + sqm) * C2)
}

/// A momentum across the direction (its velocity `w`; `v` the velocity along).
#[inline(always)]
fn across(
    r: f64,
    [x_m, x_0, x_p]: [f64; 3],
    [wm, w0, wp]: [f64; 3],
    [vm, vp]: [f64; 2],
    [dt1, c, t2]: [f64; 3],
) -> f64 {
    r + dt1 * (x_p - 2.0 * x_0 + x_m) + c * (wp - 2.0 * w0 + wm) - t2 * (x_p * vp - x_m * vm)
}

/// Energy (`v` the velocity along the direction, `sq` the kinetic energy, `q` it times
/// the reciprocal of density `ri`).
#[inline(always)]
fn energy(
    r: f64,
    [e_m, e_0, e_p]: [f64; 3],
    [um1, uijk, up1]: [f64; 3],
    [qm, q0, qp]: [f64; 3],
    [rim, ri0, rip]: [f64; 3],
    [sqm, sqp]: [f64; 2],
    [dt1, con2, con3, con4, t2]: [f64; 5],
) -> f64 {
    r + dt1 * (e_p - 2.0 * e_0 + e_m)
        + con2 * (qp - 2.0 * q0 + qm)
        + con3 * (up1 * up1 - 2.0 * uijk * uijk + um1 * um1)
        + con4 * (e_p * rip - 2.0 * e_0 * ri0 + e_m * rim)
        - t2 * ((C1 * e_p - C2 * sqp) * up1 - (C1 * e_m - C2 * sqm) * um1)
}

/// The flux differences of one row in direction `D` (0: x, 1: y, 2: z).
#[inline(never)]
fn flux_row<'a, const D: usize>(
    r0: &mut [f64],
    r1: &mut [f64],
    r2: &mut [f64],
    r3: &mut [f64],
    r4: &mut [f64],
    x: &FluxRows<'a>,
    k: &FluxConsts,
) {
    let len = r0.len();
    let [r1, r2, r3, r4] = cut_rows(len, [r1, r2, r3, r4]);
    let cut = |y: &[&'a [f64]; 3]| -> [&'a [f64]; 3] { y.map(|z| &z[..len]) };
    let u = [
        cut(&x.u[0]),
        cut(&x.u[1]),
        cut(&x.u[2]),
        cut(&x.u[3]),
        cut(&x.u[4]),
    ];
    let vel = [cut(&x.vel[0]), cut(&x.vel[1]), cut(&x.vel[2])];
    let (sq, q, ri) = (cut(&x.sq), cut(&x.q), cut(&x.ri));
    let (dt1, t2) = (k.dt1, k.t2);
    let [con2, con3, con4] = k.energy;
    for i in 0..len {
        let at = |y: &[&[f64]; 3]| [y[0][i], y[1][i], y[2][i]];
        let v = at(&vel[D]);
        let (vmp, e, sqmp) = ([v[0], v[2]], at(&u[4]), [sq[0][i], sq[2][i]]);
        let un = at(&u[D + 1]);
        r0[i] = mass(r0[i], at(&u[0]), [un[0], un[2]], dt1[0], t2);
        r1[i] = if D == 0 {
            along(
                r1[i],
                at(&u[1]),
                v,
                [e[0], e[2]],
                sqmp,
                [dt1[1], k.along, t2],
            )
        } else {
            across(r1[i], at(&u[1]), at(&vel[0]), vmp, [dt1[1], k.across, t2])
        };
        r2[i] = if D == 1 {
            along(
                r2[i],
                at(&u[2]),
                v,
                [e[0], e[2]],
                sqmp,
                [dt1[2], k.along, t2],
            )
        } else {
            across(r2[i], at(&u[2]), at(&vel[1]), vmp, [dt1[2], k.across, t2])
        };
        r3[i] = if D == 2 {
            along(
                r3[i],
                at(&u[3]),
                v,
                [e[0], e[2]],
                sqmp,
                [dt1[3], k.along, t2],
            )
        } else {
            across(r3[i], at(&u[3]), at(&vel[2]), vmp, [dt1[3], k.across, t2])
        };
        r4[i] = energy(
            r4[i],
            e,
            v,
            at(&q),
            at(&ri),
            sqmp,
            [dt1[4], con2, con3, con4, t2],
        );
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
            with_rows_mut(&mut cs.rhs, p, len, &mut sc.r, |[r0, r1, r2, r3, r4]| {
                if d == 0 {
                    let w: [&[f64]; 5] = along_x.each_ref().map(|v| &v[..]);
                    dissipate(r0, r1, r2, r3, r4, &u, w, k.dssp);
                } else {
                    dissipate(r0, r1, r2, r3, r4, &u, wt[[jj, kk][d - 1]], k.dssp);
                }
            });
        }
    }
}

// The row kernels of the planar dissipation, all five components of a row in one pass
// (one call per row, each input row read once), never inlined for the reason the flux's
// kernel is; the five output rows are separate parameters.

/// `r -= dssp * sum(w[o] * x[o])` over the stencil offsets `o` at one point.
#[inline(always)]
fn damp(r: &mut f64, x: [f64; 5], w: [f64; 5], dssp: f64) {
    let v = w[0] * x[0] + w[1] * x[1] + w[2] * x[2] + w[3] * x[3] + w[4] * x[4];
    *r -= dssp * v;
}

/// The dissipation's stencil weights along a row: one set for the whole row (y and z),
/// or a set per point (x, where they change near the cell's ends).
trait Weights: Copy {
    /// The weights cut to the row's `len` points.
    fn cut(self, len: usize) -> Self;
    /// The weights at point `i`.
    fn at(&self, i: usize) -> [f64; 5];
}

impl Weights for [f64; 5] {
    #[inline(always)]
    fn cut(self, _: usize) -> Self {
        self
    }
    #[inline(always)]
    fn at(&self, _: usize) -> [f64; 5] {
        *self
    }
}

impl Weights for [&[f64]; 5] {
    #[inline(always)]
    fn cut(self, len: usize) -> Self {
        self.map(|w| &w[..len])
    }
    #[inline(always)]
    fn at(&self, i: usize) -> [f64; 5] {
        self.map(|w| w[i])
    }
}

/// The five components' dissipation on a row.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn dissipate<W: Weights>(
    r0: &mut [f64],
    r1: &mut [f64],
    r2: &mut [f64],
    r3: &mut [f64],
    r4: &mut [f64],
    x: &[[&[f64]; 5]; 5],
    w: W,
    dssp: f64,
) {
    let len = r0.len();
    let [r1, r2, r3, r4] = cut_rows(len, [r1, r2, r3, r4]);
    let x = x.map(|c| c.map(|y| &y[..len]));
    let w = w.cut(len);
    for i in 0..len {
        let at = |c: &[&[f64]; 5]| [c[0][i], c[1][i], c[2][i], c[3][i], c[4][i]];
        let wi = w.at(i);
        damp(&mut r0[i], at(&x[0]), wi, dssp);
        damp(&mut r1[i], at(&x[1]), wi, dssp);
        damp(&mut r2[i], at(&x[2]), wi, dssp);
        damp(&mut r3[i], at(&x[3]), wi, dssp);
        damp(&mut r4[i], at(&x[4]), wi, dssp);
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
