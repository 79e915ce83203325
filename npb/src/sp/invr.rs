//! SP's block-diagonal transformations between the conservative variables and the
//! characteristic variables of each direction (the reference's txinvr, ninvr, pinvr and
//! tzetar), applied on the interior points of a cell.

use crate::cfd::constants::C2;
use crate::cfd::{CellState, Constants, Soa};

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

/// txinvr: rhs <- T^-1 rhs before the x solve.
pub fn txinvr(cs: &mut CellState<Soa>, k: &Constants) {
    let mut rhs = std::mem::take(&mut cs.rhs.data);
    let np = cs.grid.npts;
    let a = &cs.aux;
    rows(cs, |p, len| {
        let [r1s, r2s, r3s, r4s, r5s] = comps(&mut rhs, np, p, len);
        let (rho_i, qs) = (&a.rho_i[p..p + len], &a.qs[p..p + len]);
        let (us, vs, ws) = (
            &a.vel[0][p..p + len],
            &a.vel[1][p..p + len],
            &a.vel[2][p..p + len],
        );
        let (speed, ainv) = (&a.speed[p..p + len], &a.ainv[p..p + len]);
        for i in 0..len {
            let ru1 = rho_i[i];
            let (uu, vv, ww) = (us[i], vs[i], ws[i]);
            let ac = speed[i];
            let ac2inv = ainv[i] * ainv[i];
            let (r1, r2, r3, r4, r5) = (r1s[i], r2s[i], r3s[i], r4s[i], r5s[i]);
            let t1 = C2 * ac2inv * (qs[i] * r1 - uu * r2 - vv * r3 - ww * r4 + r5);
            let t2 = k.bt * ru1 * (uu * r1 - r2);
            let t3 = (k.bt * ru1 * ac) * t1;
            r1s[i] = r1 - t1;
            r2s[i] = -ru1 * (ww * r1 - r4);
            r3s[i] = ru1 * (vv * r1 - r3);
            r4s[i] = -t2 + t3;
            r5s[i] = t2 + t3;
        }
    });
    cs.rhs.data = rhs;
}

/// ninvr (after the x solve), pinvr (after y) or tzetar (after z), by direction.
pub fn invert(cs: &mut CellState<Soa>, k: &Constants, d: usize) {
    let mut rhs = std::mem::take(&mut cs.rhs.data);
    let np = cs.grid.npts;
    let bt = k.bt;
    let a = &cs.aux;
    let u = &cs.u;
    rows(cs, |p, len| {
        let [r1s, r2s, r3s, r4s, r5s] = comps(&mut rhs, np, p, len);
        match d {
            0 => {
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
            1 => {
                for i in 0..len {
                    let (r1, r2, r3, r4, r5) = (r1s[i], r2s[i], r3s[i], r4s[i], r5s[i]);
                    let t1 = bt * r1;
                    let t2 = 0.5 * (r4 + r5);
                    r1s[i] = bt * (r4 - r5);
                    r2s[i] = -r3;
                    r3s[i] = r2;
                    r4s[i] = -t1 + t2;
                    r5s[i] = t1 + t2;
                }
            }
            _ => {
                let (xv, yv, zv) = (
                    &a.vel[0][p..p + len],
                    &a.vel[1][p..p + len],
                    &a.vel[2][p..p + len],
                );
                let (speed, ainv, qs) =
                    (&a.speed[p..p + len], &a.ainv[p..p + len], &a.qs[p..p + len]);
                let u0 = &u.data[p..p + len];
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
                    r5s[i] = uzik1 * (-xvel * r2 + yvel * r1)
                        + qs[i] * t2
                        + k.c2iv * ac2u * t1
                        + zvel * t3;
                }
            }
        }
    });
    cs.rhs.data = rhs;
}
