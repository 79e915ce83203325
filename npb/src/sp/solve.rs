//! SP's scalar pentadiagonal line solves (the reference's lhsx/lhsy/lhsz and
//! x_solve/y_solve/z_solve): per direction, three factors (the u eigenvalue for the
//! first three components, u+c and u-c for the last two) solved by the Thomas
//! algorithm. With several cells per line the sweep is pipelined through the
//! multi-partition: the forward elimination of a cell waits for the last two eliminated
//! rows of the preceding cell (22 values per line, from the predecessor), the back
//! substitution for the first two solved rows of the following cell (10 values per line,
//! from the successor); every message carries the reference's DEFAULT_TAG (0).
//!
//! Memory order: the x lines are contiguous and solved one at a time, each recurrence
//! carrying its next rows in registers; the y and z lines are solved a row of them at a
//! time (the contiguous i runs across the lines), every step a vector operation on
//! windows of the diagonals.

use super::invr::invert;
use crate::cfd::{diss_coef, CellState, Constants, Flow, Soa};
use crate::common::NpbError;

/// The reference's DEFAULT_TAG.
const DEFAULT_TAG: i32 = 0;

/// The 15 left-hand-side diagonals of every cell: `lhs[n * npts + p]`, n = 5*factor +
/// (0: second sub-, 1: sub-, 2: main, 3: super-, 4: second super-diagonal).
pub struct Lhs {
    cells: Vec<Vec<f64>>,
}

impl Lhs {
    /// Zero everywhere but the main diagonals, which are 1 (lhsinit): boundary rows stay
    /// identity rows for good.
    pub fn new(flow: &Flow<Soa>) -> Lhs {
        Lhs {
            cells: flow
                .cells
                .iter()
                .map(|cs| {
                    let np = cs.grid.npts;
                    let mut v = vec![0.0; 15 * np];
                    for f in 0..3 {
                        v[(5 * f + 2) * np..(5 * f + 3) * np].fill(1.0);
                    }
                    v
                })
                .collect(),
        }
    }
}

/// How the interior lines of one direction of a cell lie in memory: groups of `w`
/// lines side by side (adjacent in memory: a row of i values for the y and z lines, a
/// single line for x), each group starting at one of `bases`; `n` positions per line,
/// `s` apart.
struct Sweep {
    bases: Vec<usize>,
    w: usize,
    s: usize,
    n: usize,
}

impl Sweep {
    /// The lines of direction `d` of a cell, in the reference's loop order (outer
    /// dimension first).
    fn new(cs: &CellState<Soa>, d: usize) -> Sweep {
        let c = &cs.cell;
        let g = &cs.grid;
        let range = |e: usize| c.start[e] as isize..(c.size[e] - c.end[e]) as isize;
        let (bases, w): (Vec<usize>, usize) = match d {
            0 => (
                range(2)
                    .flat_map(|k| range(1).map(move |j| (j, k)))
                    .map(|(j, k)| g.at(0, j, k))
                    .collect(),
                1,
            ),
            1 => (
                range(2).map(|k| g.at(c.start[0] as isize, 0, k)).collect(),
                range(0).len(),
            ),
            _ => (
                range(1).map(|j| g.at(c.start[0] as isize, j, 0)).collect(),
                range(0).len(),
            ),
        };
        Sweep {
            bases,
            w,
            s: g.stride[d],
            n: c.size[d],
        }
    }
}

/// The windows of `w` values at `p`, `p + s` and `p + 2s` of `x` (`s >= w`).
#[inline(always)]
fn three(x: &mut [f64], p: usize, s: usize, w: usize) -> [&mut [f64]; 3] {
    let (lo, hi) = x[p..].split_at_mut(s);
    let (mid, hi) = hi.split_at_mut(s);
    [&mut lo[..w], &mut mid[..w], &mut hi[..w]]
}

/// The windows of `w` values at `p` and `p + s` of `x` (`s >= w`).
#[inline(always)]
fn two(x: &mut [f64], p: usize, s: usize, w: usize) -> [&mut [f64]; 2] {
    let (lo, hi) = x[p..].split_at_mut(s);
    [&mut lo[..w], &mut hi[..w]]
}

/// The `N` arrays of `np` values that `v` holds back to back.
fn planes<const N: usize>(v: &mut [f64], np: usize) -> [&mut [f64]; N] {
    let mut it = v.chunks_exact_mut(np);
    std::array::from_fn(|_| it.next().expect("N arrays of np values"))
}

// The row kernels of the y and z line solves: one position of `w` lines side by side.
// Each is a function of its own, never inlined, so that its rows come in as parameters:
// only there does the compiler know that `&mut` slices do not overlap, and it vectorizes
// the loop across the lines. Written inline over windows of shared arrays (or inlined),
// the loops stay scalar, every value reloaded after each store.

/// Eliminates the sub-diagonals below position 0 of a row of lines: `fac` gets 1 / c0,
/// row 0 (c0, d0, e0) is scaled by it, rows 1 (b1, c1, d1) and 2 (a2, b2, c2) lose
/// their first entries.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn eliminate_row(
    fac: &mut [f64],
    c0: &[f64],
    d0: &mut [f64],
    e0: &mut [f64],
    b1: &[f64],
    c1: &mut [f64],
    d1: &mut [f64],
    a2: &[f64],
    b2: &mut [f64],
    c2: &mut [f64],
) {
    let w = fac.len();
    let (c0, d0, e0) = (&c0[..w], &mut d0[..w], &mut e0[..w]);
    let (b1, c1, d1) = (&b1[..w], &mut c1[..w], &mut d1[..w]);
    let (a2, b2, c2) = (&a2[..w], &mut b2[..w], &mut c2[..w]);
    for q in 0..w {
        let fac1 = 1.0 / c0[q];
        fac[q] = fac1;
        let (dq, eq) = (d0[q] * fac1, e0[q] * fac1);
        d0[q] = dq;
        e0[q] = eq;
        c1[q] -= b1[q] * dq;
        d1[q] -= b1[q] * eq;
        b2[q] -= a2[q] * dq;
        c2[q] -= a2[q] * eq;
    }
}

/// The same elimination on one right-hand side component (rows r0, r1, r2).
#[inline(never)]
fn eliminate_rhs_row(
    fac: &[f64],
    b1: &[f64],
    a2: &[f64],
    r0: &mut [f64],
    r1: &mut [f64],
    r2: &mut [f64],
) {
    let w = fac.len();
    let (b1, a2, r0, r1, r2) = (&b1[..w], &a2[..w], &mut r0[..w], &mut r1[..w], &mut r2[..w]);
    for q in 0..w {
        let x = r0[q] * fac[q];
        r0[q] = x;
        r1[q] -= b1[q] * x;
        r2[q] -= a2[q] * x;
    }
}

/// Back substitution of one right-hand side component at one position of a row of
/// lines, from the two positions after it.
#[inline(never)]
fn substitute_row(d0: &[f64], e0: &[f64], r0: &mut [f64], r1: &[f64], r2: &[f64]) {
    let w = r0.len();
    let (d0, e0, r1, r2) = (&d0[..w], &e0[..w], &r1[..w], &r2[..w]);
    for q in 0..w {
        r0[q] = r0[q] - d0[q] * r1[q] - e0[q] * r2[q];
    }
}

/// Base indices (position 0) of the interior lines of direction `d`, outer dimension
/// first (the order of the pipelined buffers).
fn lines(cs: &CellState<Soa>, d: usize) -> Vec<usize> {
    let sw = Sweep::new(cs, d);
    sw.bases.iter().flat_map(|&b| b..b + sw.w).collect()
}

/// The left-hand side of direction `d` for one cell (lhsx, lhsy, lhsz).
fn compute_lhs(cs: &CellState<Soa>, k: &Constants, d: usize, lhs: &mut [f64]) {
    let c = &cs.cell;
    let np = cs.grid.npts;
    let sw = Sweep::new(cs, d);
    let (s, w, n) = (sw.s, sw.w, sw.n);
    let (lo, hi) = (c.start[d], n - c.end[d]);
    let a = &cs.aux;
    let vel = &a.vel[d];
    let dd = k.dd[d];
    // The dissipation weights (times dt*dssp) by diagonal and position.
    let mut wt = [(); 5].map(|_| vec![0.0; n]);
    for pos in 0..n {
        for (x, v) in diss_coef(pos, n, c.start[d], c.end[d]).iter().enumerate() {
            wt[x][pos] = k.dtdssp * v;
        }
    }
    let lhs_of = LhsRow {
        dtt1: k.dtt1[d],
        dtt2: k.dtt2[d],
        c2dtt1: k.c2dtt1[d],
    };
    // rhon of positions lo-1 ..= hi, stored at pos + 1, w lines side by side (the
    // velocities are read in place).
    let mut rhon = vec![0.0; (n + 2) * w];
    let mut wrow = [(); 5].map(|_| vec![0.0; w]);
    let mut dg: [&mut [f64]; 15] = planes(lhs, np);
    // rhon from the reciprocal of density, one run of points; the maxima are plain
    // comparisons (`f64::max`'s NaN rule costs more than the rest of the loop, and
    // densities are never NaN).
    let larger = |x: f64, y: f64| if x > y { x } else { y };
    let rhon_of = |out: &mut [f64], rho_i: &[f64]| {
        for (r, &ri) in out.iter_mut().zip(rho_i) {
            let ru1 = k.c3c4 * ri;
            *r = larger(
                larger(
                    larger(dd[d + 1] + k.con43 * ru1, dd[4] + k.c1c5 * ru1),
                    k.dmax[d] + ru1,
                ),
                dd[0],
            );
        }
    };
    for &base in &sw.bases {
        if w == 1 {
            // x: one run along the line (rhon and the weights indexed by position: rhon
            // of position pos at pos + 1, pos from lo - 1, adjacent).
            let (p, len) = (base + lo, hi - lo);
            rhon_of(&mut rhon[lo..hi + 2], &a.rho_i[p - 1..p + len + 1]);
            lhs_of.run(
                &mut dg,
                p,
                len,
                [&vel[p - 1..], &vel[p + 1..]],
                [&rhon[lo..], &rhon[lo + 1..], &rhon[lo + 2..]],
                [&a.speed[p - 1..], &a.speed[p + 1..]],
                wt.each_ref().map(|x| &x[lo..]),
            );
            continue;
        }
        // q = pos + 1 (pos starts at -1 in a cell without a low boundary).
        for q in lo..=hi + 1 {
            let p = base + q * s - s;
            rhon_of(&mut rhon[q * w..(q + 1) * w], &a.rho_i[p..p + w]);
        }
        // y, z: one run across the row of lines per position.
        for pos in lo..hi {
            let p = base + pos * s;
            for (x, r) in wrow.iter_mut().enumerate() {
                r.fill(wt[x][pos]);
            }
            lhs_of.run(
                &mut dg,
                p,
                w,
                [&vel[p - s..], &vel[p + s..]],
                [
                    &rhon[pos * w..],
                    &rhon[(pos + 1) * w..],
                    &rhon[(pos + 2) * w..],
                ],
                [&a.speed[p - s..], &a.speed[p + s..]],
                wrow.each_ref().map(|x| &x[..]),
            );
        }
    }
}

/// The direction's time-step factors of the left-hand side.
struct LhsRow {
    dtt1: f64,
    dtt2: f64,
    c2dtt1: f64,
}

impl LhsRow {
    /// Fills the 15 diagonals at `p .. p + len` from the neighbours' velocities `cv`
    /// (-1, +1), `rhon` (-1, 0, +1), the speed of sound (-1, +1) and the dissipation
    /// weights, each slice starting at the run's first point.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        dg: &mut [&mut [f64]; 15],
        p: usize,
        len: usize,
        cv: [&[f64]; 2],
        rhon: [&[f64]; 3],
        speed: [&[f64]; 2],
        wt: [&[f64]; 5],
    ) {
        let (cm, cp) = (&cv[0][..len], &cv[1][..len]);
        let (rm, r0, rp) = (&rhon[0][..len], &rhon[1][..len], &rhon[2][..len]);
        let (sm, sp) = (&speed[0][..len], &speed[1][..len]);
        let (dtt1, dtt2, c2dtt1) = (self.dtt1, self.dtt2, self.c2dtt1);
        let (w1, w2, w3) = (&wt[1][..len], &wt[2][..len], &wt[3][..len]);
        let [d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14] =
            dg.each_mut().map(|x| &mut x[p..p + len]);
        // One kernel per row of the left-hand side, each writing the three factors'
        // copies of it.
        copies3(d0, d5, d10, &wt[0][..len]);
        let sub = [-dtt2, dtt1, -dtt2];
        side3(d1, d6, d11, [cm, rm, w1, sm], sub);
        main3(d2, d7, d12, r0, w2, c2dtt1);
        side3(d3, d8, d13, [cp, rp, w3, sp], [dtt2, dtt1, dtt2]);
        copies3(d4, d9, d14, &wt[4][..len]);
    }
}

// The kernels of `LhsRow::run`, never inlined so that their three output rows come in
// as parameters (see the row kernels above).

/// `w` into all three rows (the outer diagonals: dissipation only).
#[inline(never)]
fn copies3(a: &mut [f64], b: &mut [f64], c: &mut [f64], w: &[f64]) {
    let len = a.len();
    let (b, c, w) = (&mut b[..len], &mut c[..len], &w[..len]);
    for i in 0..len {
        (a[i], b[i], c[i]) = (w[i], w[i], w[i]);
    }
}

/// A diagonal next to the main one: `l = kv v - kr rhon + w`, then `l`, `l + ks s`
/// and `l - ks s` (`s` the speed of sound) for the three factors.
#[inline(never)]
fn side3(
    a: &mut [f64],
    b: &mut [f64],
    c: &mut [f64],
    [v, rh, w, sp]: [&[f64]; 4],
    [kv, kr, ks]: [f64; 3],
) {
    let len = a.len();
    let (b, c) = (&mut b[..len], &mut c[..len]);
    let [v, rh, w, sp] = [v, rh, w, sp].map(|x| &x[..len]);
    for i in 0..len {
        let l = kv * v[i] - kr * rh[i] + w[i];
        a[i] = l;
        b[i] = l + ks * sp[i];
        c[i] = l - ks * sp[i];
    }
}

/// The main diagonal, the same for the three factors: `1 + c2dtt1 rhon + w`.
#[inline(never)]
fn main3(a: &mut [f64], b: &mut [f64], c: &mut [f64], rh: &[f64], w: &[f64], c2dtt1: f64) {
    let len = a.len();
    let (b, c, rh, w) = (&mut b[..len], &mut c[..len], &rh[..len], &w[..len]);
    for i in 0..len {
        let l = 1.0 + c2dtt1 * rh[i] + w[i];
        (a[i], b[i], c[i]) = (l, l, l);
    }
}

/// Factor `f` (0: components 0..3, 1: component 3, 2: component 4): its first lhs
/// diagonal and its components.
fn factor(f: usize) -> (usize, std::ops::Range<usize>) {
    match f {
        0 => (0, 0..3),
        1 => (5, 3..4),
        _ => (10, 4..5),
    }
}

/// Forward elimination of one factor (diagonals `l`, right-hand sides `r`) along the
/// lines of `sw`, all positions including the last two rows.
fn forward<const NM: usize>(l: &mut [&mut [f64]; 5], r: &mut [&mut [f64]; NM], sw: &Sweep) {
    let (s, w, n) = (sw.s, sw.w, sw.n);
    let [a, b, c, d, e] = l;
    if w == 1 {
        // x: one contiguous line at a time. The values the next row needs are carried
        // in registers: reading back what the previous step just stored would stall on
        // store forwarding.
        for &base in &sw.bases {
            let a = &a[base..base + n];
            let b = &mut b[base..base + n];
            let c = &mut c[base..base + n];
            let d = &mut d[base..base + n];
            let e = &mut e[base..base + n];
            let r: [&mut [f64]; NM] = r.each_mut().map(|x| &mut x[base..base + n]);
            let (mut c0, mut c1, mut d0, mut b1) = (c[0], c[1], d[0], b[1]);
            let mut r0: [f64; NM] = std::array::from_fn(|m| r[m][0]);
            let mut r1: [f64; NM] = std::array::from_fn(|m| r[m][1]);
            for i in 0..n - 2 {
                let fac1 = 1.0 / c0;
                let (di, ei) = (d0 * fac1, e[i] * fac1);
                d[i] = di;
                e[i] = ei;
                let a2 = a[i + 2];
                let nc1 = c1 - b1 * di;
                let nd1 = d[i + 1] - b1 * ei;
                let nb2 = b[i + 2] - a2 * di;
                let nc2 = c[i + 2] - a2 * ei;
                c[i + 1] = nc1;
                d[i + 1] = nd1;
                b[i + 2] = nb2;
                c[i + 2] = nc2;
                for m in 0..NM {
                    let x0 = r0[m] * fac1;
                    let x1 = r1[m] - b1 * x0;
                    let x2 = r[m][i + 2] - a2 * x0;
                    r[m][i] = x0;
                    r[m][i + 1] = x1;
                    r[m][i + 2] = x2;
                    r0[m] = x1;
                    r1[m] = x2;
                }
                (c0, c1, d0, b1) = (nc1, nc2, nd1, nb2);
            }
            let i = n - 2;
            let fac1 = 1.0 / c0;
            let (di, ei) = (d0 * fac1, e[i] * fac1);
            d[i] = di;
            e[i] = ei;
            let nc1 = c1 - b1 * di;
            c[i + 1] = nc1;
            let fac2 = 1.0 / nc1;
            d[i + 1] = (d[i + 1] - b1 * ei) * fac2;
            e[i + 1] *= fac2;
            for m in 0..NM {
                let x0 = r0[m] * fac1;
                r[m][i] = x0;
                r[m][i + 1] = (r1[m] - b1 * x0) * fac2;
            }
        }
        return;
    }
    // y, z: a row of lines side by side, one position at a time.
    let (mut fac, mut fac2) = (vec![0.0; w], vec![0.0; w]);
    for &base in &sw.bases {
        for pos in 0..n - 2 {
            let p = base + pos * s;
            let a2 = &a[p + 2 * s..p + 2 * s + w];
            let [_, b1, b2] = three(b, p, s, w);
            let [c0, c1, c2] = three(c, p, s, w);
            let [d0, d1] = two(d, p, s, w);
            let e0 = &mut e[p..p + w];
            eliminate_row(&mut fac, c0, d0, e0, b1, c1, d1, a2, b2, c2);
            for x in r.iter_mut() {
                let [r0, r1, r2] = three(x, p, s, w);
                eliminate_rhs_row(&fac, b1, a2, r0, r1, r2);
            }
        }
        let p = base + (n - 2) * s;
        let b1 = &b[p + s..p + s + w];
        let [c0, c1] = two(c, p, s, w);
        let [d0, d1] = two(d, p, s, w);
        let [e0, e1] = two(e, p, s, w);
        for q in 0..w {
            let fac1 = 1.0 / c0[q];
            fac[q] = fac1;
            d0[q] *= fac1;
            e0[q] *= fac1;
            c1[q] -= b1[q] * d0[q];
            d1[q] -= b1[q] * e0[q];
            let f2 = 1.0 / c1[q];
            fac2[q] = f2;
            d1[q] *= f2;
            e1[q] *= f2;
        }
        for x in r.iter_mut() {
            let [r0, r1] = two(x, p, s, w);
            for q in 0..w {
                r0[q] *= fac[q];
                r1[q] -= b1[q] * r0[q];
                r1[q] *= fac2[q];
            }
        }
    }
}

/// Back substitution of the components `r` that share one factor's upper diagonals `d`,
/// `e` along the lines of `sw`, from position n-3 down (the last two positions are done).
/// The components go side by side, as the reference's loop over m: `d` and `e` are read
/// once for all of them.
fn backward<const NM: usize>(d: &[f64], e: &[f64], r: &mut [&mut [f64]; NM], sw: &Sweep) {
    let (s, w, n) = (sw.s, sw.w, sw.n);
    for &base in &sw.bases {
        if w == 1 {
            let d = &d[base..base + n];
            let e = &e[base..base + n];
            let r: [&mut [f64]; NM] = r.each_mut().map(|x| &mut x[base..base + n]);
            // r[i+1] and r[i+2] stay in registers (see forward).
            let mut r1: [f64; NM] = std::array::from_fn(|m| r[m][n - 2]);
            let mut r2: [f64; NM] = std::array::from_fn(|m| r[m][n - 1]);
            for i in (0..n - 2).rev() {
                let (di, ei) = (d[i], e[i]);
                for m in 0..NM {
                    let v = r[m][i] - di * r1[m] - ei * r2[m];
                    r[m][i] = v;
                    (r1[m], r2[m]) = (v, r1[m]);
                }
            }
            continue;
        }
        for pos in (0..n - 2).rev() {
            let p = base + pos * s;
            let (d0, e0) = (&d[p..p + w], &e[p..p + w]);
            for x in r.iter_mut() {
                let [r0, r1, r2] = three(x, p, s, w);
                substitute_row(d0, e0, r0, r1, r2);
            }
        }
    }
}

/// The line solve in direction `d` over all cells, ending with the direction's
/// block-diagonal inversion.
pub fn solve(flow: &mut Flow<Soa>, lhs: &mut Lhs, d: usize) -> Result<(), NpbError> {
    let nc = flow.dec.ncells;
    let comm = flow.comm_solve.clone();
    let (pred, succ) = (flow.dec.predecessor[d], flow.dec.successor[d]);
    let k = flow.k.clone();

    // Forward elimination.
    for stage in 0..nc {
        let ci = flow.dec.slice[d][stage];
        let cs = &mut flow.cells[ci];
        let l = &mut lhs.cells[ci];
        let np = cs.grid.npts;
        let sw = Sweep::new(cs, d);
        let bases = lines(cs, d);
        let s = sw.s;
        let nl = bases.len();
        let n = cs.cell.size[d];
        compute_lhs(cs, &k, d, l);
        let r = &mut cs.rhs.data;
        if stage != 0 {
            let mut buf = vec![0.0; 22 * nl];
            comm.process_at_rank(pred)
                .receive_into_with_tag(&mut buf[..], DEFAULT_TAG)?;
            let mut at = 0;
            for f in 0..3 {
                let (n0, ms) = factor(f);
                let (a_, b_, c_, d_) = (n0 * np, (n0 + 1) * np, (n0 + 2) * np, (n0 + 3) * np);
                let nm = ms.len();
                for &p0 in &bases {
                    let p1 = p0 + s;
                    l[b_ + p0] -= buf[at] * l[a_ + p0];
                    l[c_ + p0] -= buf[at + 1] * l[a_ + p0];
                    for (i, m) in ms.clone().enumerate() {
                        r[m * np + p0] -= buf[at + 2 + i] * l[a_ + p0];
                    }
                    let dv = buf[at + 2 + nm];
                    let ev = buf[at + 3 + nm];
                    let r1 = l[b_ + p0];
                    l[c_ + p0] -= dv * r1;
                    l[d_ + p0] -= ev * r1;
                    for (i, m) in ms.clone().enumerate() {
                        r[m * np + p0] -= buf[at + 4 + nm + i] * r1;
                    }
                    let r2 = l[a_ + p1];
                    l[b_ + p1] -= dv * r2;
                    l[c_ + p1] -= ev * r2;
                    for (i, m) in ms.clone().enumerate() {
                        r[m * np + p1] -= buf[at + 4 + nm + i] * r2;
                    }
                    at += 4 + 2 * nm;
                }
            }
        }
        {
            let dg: [&mut [f64]; 15] = planes(l, np);
            let [r0, r1, r2, r3, r4]: [&mut [f64]; 5] = planes(r, np);
            let mut dg = dg.into_iter();
            let mut next5 =
                || -> [&mut [f64]; 5] { std::array::from_fn(|_| dg.next().expect("15 diagonals")) };
            forward::<3>(&mut next5(), &mut [r0, r1, r2], &sw);
            forward::<1>(&mut next5(), &mut [r3], &sw);
            forward::<1>(&mut next5(), &mut [r4], &sw);
        }
        if stage != nc - 1 {
            let mut buf = Vec::with_capacity(22 * nl);
            for f in 0..3 {
                let (n0, ms) = factor(f);
                for &base in &bases {
                    for i in [n - 2, n - 1] {
                        let p = base + i * s;
                        buf.push(l[(n0 + 3) * np + p]);
                        buf.push(l[(n0 + 4) * np + p]);
                        for m in ms.clone() {
                            buf.push(r[m * np + p]);
                        }
                    }
                }
            }
            comm.process_at_rank(succ)
                .send_with_tag(&buf[..], DEFAULT_TAG)?;
        }
    }

    // Back substitution.
    for stage in (0..nc).rev() {
        let ci = flow.dec.slice[d][stage];
        let mut buf = Vec::new();
        if stage != nc - 1 {
            let nl = lines(&flow.cells[ci], d).len();
            buf = vec![0.0; 10 * nl];
            comm.process_at_rank(succ)
                .receive_into_with_tag(&mut buf[..], DEFAULT_TAG)?;
            let next = flow.dec.slice[d][stage + 1];
            invert(&mut flow.cells[next], &k, d);
        }
        let cs = &mut flow.cells[ci];
        let l = &lhs.cells[ci];
        let np = cs.grid.npts;
        let sw = Sweep::new(cs, d);
        let bases = lines(cs, d);
        let s = sw.s;
        let n = cs.cell.size[d];
        let r = &mut cs.rhs.data;
        if stage != nc - 1 {
            let mut at = 0;
            for m in 0..5 {
                let n0 = factor(if m < 3 { 0 } else { m - 2 }).0;
                let (d_, e_) = ((n0 + 3) * np, (n0 + 4) * np);
                for &base in &bases {
                    let p = base + (n - 1) * s;
                    let p1 = p - s;
                    let (sm1, sm2) = (buf[at], buf[at + 1]);
                    r[m * np + p] = r[m * np + p] - l[d_ + p] * sm1 - l[e_ + p] * sm2;
                    r[m * np + p1] = r[m * np + p1] - l[d_ + p1] * r[m * np + p] - l[e_ + p1] * sm1;
                    at += 2;
                }
            }
        } else {
            for m in 0..5 {
                let n0 = factor(if m < 3 { 0 } else { m - 2 }).0;
                let d_ = (n0 + 3) * np;
                for &base in &bases {
                    let p = base + (n - 2) * s;
                    r[m * np + p] -= l[d_ + p] * r[m * np + p + s];
                }
            }
        }
        {
            // Each factor's upper diagonals, for the components it solves.
            let de = |f: usize| {
                let n0 = factor(f).0;
                (
                    &l[(n0 + 3) * np..(n0 + 4) * np],
                    &l[(n0 + 4) * np..(n0 + 5) * np],
                )
            };
            let [r0, r1, r2, r3, r4]: [&mut [f64]; 5] = planes(r, np);
            let (d0, e0) = de(0);
            backward::<3>(d0, e0, &mut [r0, r1, r2], &sw);
            let (d1, e1) = de(1);
            backward::<1>(d1, e1, &mut [r3], &sw);
            let (d2, e2) = de(2);
            backward::<1>(d2, e2, &mut [r4], &sw);
        }
        if stage != 0 {
            let mut out = Vec::with_capacity(10 * bases.len());
            for m in 0..5 {
                for &base in &bases {
                    out.push(r[m * np + base]);
                    out.push(r[m * np + base + s]);
                }
            }
            comm.process_at_rank(pred)
                .send_with_tag(&out[..], DEFAULT_TAG)?;
        } else {
            invert(cs, &k, d);
        }
    }
    Ok(())
}
