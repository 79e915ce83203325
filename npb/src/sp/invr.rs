//! SP's block-diagonal transformations between the conservative variables and the
//! characteristic variables of each direction (the reference's txinvr, ninvr, pinvr and
//! tzetar), applied on the interior points of a cell.

use crate::cfd::constants::C2;
use crate::cfd::{cut_rows, CellState, Constants, Soa};

/// Calls `f(p, len)` for every row of interior points of the cell (`len` points from
/// `p`).
#[inline(always)]
fn rows(cs: &CellState<Soa>, mut f: impl FnMut(usize, usize)) {
    let c = &cs.cell;
    let len = c.size[0] - c.end[0] - c.start[0];
    for k in c.start[2]..c.size[2] - c.end[2] {
        for j in c.start[1]..c.size[1] - c.end[1] {
            f(cs.grid.at(c.start[0] as isize, j as isize, k as isize), len);
        }
    }
}

/// The five components of `rhs` (planes of `np` values) at the `len` points from `p`.
#[inline(always)]
fn comps(rhs: &mut [f64], np: usize, p: usize, len: usize) -> [&mut [f64]; 5] {
    // Each part is exactly `len` long, so the row loops index without bounds checks.
    let mut it = rhs.chunks_exact_mut(np);
    std::array::from_fn(|_| &mut it.next().expect("five components")[p..p + len])
}

/// The derived quantities of one row of points that the transformations read.
struct Derived<'a> {
    rho_i: &'a [f64],
    qs: &'a [f64],
    vel: [&'a [f64]; 3],
    speed: &'a [f64],
    ainv: &'a [f64],
}

impl<'a> Derived<'a> {
    /// The row of `len` points from `p` of `cs`'s derived quantities.
    fn row(cs: &'a CellState<Soa>, p: usize, len: usize) -> Derived<'a> {
        let a = &cs.aux;
        Derived {
            rho_i: &a.rho_i[p..p + len],
            qs: &a.qs[p..p + len],
            vel: [0, 1, 2].map(|m| &a.vel[m][p..p + len]),
            speed: &a.speed[p..p + len],
            ainv: &a.ainv[p..p + len],
        }
    }

    /// The same rows cut to `len` values, so that a row kernel indexing below `len` needs
    /// no bounds checks.
    #[inline(always)]
    fn cut(&self, len: usize) -> Derived<'a> {
        Derived {
            rho_i: &self.rho_i[..len],
            qs: &self.qs[..len],
            vel: self.vel.map(|v| &v[..len]),
            speed: &self.speed[..len],
            ainv: &self.ainv[..len],
        }
    }
}

// The row kernels: functions of their own, never inlined, with the five rows they
// rewrite as separate parameters, so the compiler knows that these overlap neither each
// other nor the inputs and runs the loops as vector code without run-time overlap
// checks (as a closure over the cell they ran 1.5x the reference's time on 4 ranks).

/// txinvr: rhs <- T^-1 rhs before the x solve.
pub fn txinvr(cs: &mut CellState<Soa>, k: &Constants) {
    let mut rhs = std::mem::take(&mut cs.rhs.data);
    let np = cs.grid.npts;
    rows(cs, |p, len| {
        let [r1, r2, r3, r4, r5] = comps(&mut rhs, np, p, len);
        txinvr_row(r1, r2, r3, r4, r5, &Derived::row(cs, p, len), k.bt);
    });
    cs.rhs.data = rhs;
}

/// txinvr on one row.
#[inline(never)]
fn txinvr_row(
    r1s: &mut [f64],
    r2s: &mut [f64],
    r3s: &mut [f64],
    r4s: &mut [f64],
    r5s: &mut [f64],
    a: &Derived,
    bt: f64,
) {
    let len = r1s.len();
    let [r2s, r3s, r4s, r5s] = cut_rows(len, [r2s, r3s, r4s, r5s]);
    let Derived {
        rho_i,
        qs,
        vel: [us, vs, ws],
        speed,
        ainv,
    } = a.cut(len);
    for i in 0..len {
        let ru1 = rho_i[i];
        let (uu, vv, ww) = (us[i], vs[i], ws[i]);
        let ac = speed[i];
        let ac2inv = ainv[i] * ainv[i];
        let (r1, r2, r3, r4, r5) = (r1s[i], r2s[i], r3s[i], r4s[i], r5s[i]);
        let t1 = C2 * ac2inv * (qs[i] * r1 - uu * r2 - vv * r3 - ww * r4 + r5);
        let t2 = bt * ru1 * (uu * r1 - r2);
        let t3 = (bt * ru1 * ac) * t1;
        r1s[i] = r1 - t1;
        r2s[i] = -ru1 * (ww * r1 - r4);
        r3s[i] = ru1 * (vv * r1 - r3);
        r4s[i] = -t2 + t3;
        r5s[i] = t2 + t3;
    }
}

/// ninvr (after the x solve), pinvr (after y) or tzetar (after z), by direction.
pub fn invert(cs: &mut CellState<Soa>, k: &Constants, d: usize) {
    let mut rhs = std::mem::take(&mut cs.rhs.data);
    let np = cs.grid.npts;
    rows(cs, |p, len| {
        let [r1, r2, r3, r4, r5] = comps(&mut rhs, np, p, len);
        match d {
            0 => ninvr_row(r1, r2, r3, r4, r5, k.bt),
            // pinvr is ninvr with the first three rows taken in the order 2, 3, 1.
            1 => ninvr_row(r2, r3, r1, r4, r5, k.bt),
            _ => {
                let u0 = &cs.u.data[p..p + len];
                tzetar_row(r1, r2, r3, r4, r5, &Derived::row(cs, p, len), u0, k);
            }
        }
    });
    cs.rhs.data = rhs;
}

/// ninvr on one row (and pinvr, its rows given in another order: see `invert`).
#[inline(never)]
fn ninvr_row(
    r1s: &mut [f64],
    r2s: &mut [f64],
    r3s: &mut [f64],
    r4s: &mut [f64],
    r5s: &mut [f64],
    bt: f64,
) {
    let len = r1s.len();
    let [r2s, r3s, r4s, r5s] = cut_rows(len, [r2s, r3s, r4s, r5s]);
    for i in 0..len {
        let (r1, r2, r3, r4, r5) = (r1s[i], r2s[i], r3s[i], r4s[i], r5s[i]);
        let t1 = bt * r3;
        let t2 = 0.5 * (r4 + r5);
        r1s[i] = -r2;
        r2s[i] = r1;
        r3s[i] = bt * (r4 - r5);
        r4s[i] = -t1 + t2;
        r5s[i] = t1 + t2;
    }
}

/// tzetar on one row (`u0` the row's density).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn tzetar_row(
    r1s: &mut [f64],
    r2s: &mut [f64],
    r3s: &mut [f64],
    r4s: &mut [f64],
    r5s: &mut [f64],
    a: &Derived,
    u0: &[f64],
    k: &Constants,
) {
    let len = r1s.len();
    let [r2s, r3s, r4s, r5s] = cut_rows(len, [r2s, r3s, r4s, r5s]);
    let Derived {
        qs,
        vel: [xv, yv, zv],
        speed,
        ainv,
        ..
    } = a.cut(len);
    let u0 = &u0[..len];
    let (bt, c2iv) = (k.bt, k.c2iv);
    for i in 0..len {
        let (xvel, yvel, zvel) = (xv[i], yv[i], zv[i]);
        let ac = speed[i];
        let acinv = ainv[i];
        let ac2u = ac * ac;
        let (r1, r2, r3, r4, r5) = (r1s[i], r2s[i], r3s[i], r4s[i], r5s[i]);
        let uzik1 = u0[i];
        let btuz = bt * uzik1;
        let t1 = btuz * acinv * (r4 + r5);
        let t2 = r3 + t1;
        let t3 = btuz * (r4 - r5);
        r1s[i] = t2;
        r2s[i] = -uzik1 * r2 + xvel * t2;
        r3s[i] = uzik1 * r1 + yvel * t2;
        r4s[i] = zvel * t2 + t3;
        r5s[i] = uzik1 * (-xvel * r2 + yvel * r1) + qs[i] * t2 + c2iv * ac2u * t1 + zvel * t3;
    }
}
