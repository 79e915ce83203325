//! SP's block-diagonal transformations between the conservative variables and the
//! characteristic variables of each direction (the reference's txinvr, ninvr, pinvr and
//! tzetar), applied on the interior points of a cell.

use crate::cfd::constants::C2;
use crate::cfd::{CellState, Constants, Soa};

/// Calls `f(p)` for every interior point of the cell.
#[inline(always)]
fn interior(cs: &CellState<Soa>, mut f: impl FnMut(usize)) {
    let c = &cs.cell;
    for k in c.start[2]..c.size[2] - c.end[2] {
        for j in c.start[1]..c.size[1] - c.end[1] {
            let row = cs.grid.at(0, j as isize, k as isize);
            for p in row + c.start[0]..row + c.size[0] - c.end[0] {
                f(p);
            }
        }
    }
}

/// txinvr: rhs <- T^-1 rhs before the x solve.
pub fn txinvr(cs: &mut CellState<Soa>, k: &Constants) {
    let mut rhs = std::mem::take(&mut cs.rhs.data);
    let np = cs.grid.npts;
    let a = &cs.aux;
    interior(cs, |p| {
        let ru1 = a.rho_i[p];
        let (uu, vv, ww) = (a.vel[0][p], a.vel[1][p], a.vel[2][p]);
        let ac = a.speed[p];
        let ac2inv = a.ainv[p] * a.ainv[p];
        let r1 = rhs[p];
        let r2 = rhs[np + p];
        let r3 = rhs[2 * np + p];
        let r4 = rhs[3 * np + p];
        let r5 = rhs[4 * np + p];
        let t1 = C2 * ac2inv * (a.qs[p] * r1 - uu * r2 - vv * r3 - ww * r4 + r5);
        let t2 = k.bt * ru1 * (uu * r1 - r2);
        let t3 = (k.bt * ru1 * ac) * t1;
        rhs[p] = r1 - t1;
        rhs[np + p] = -ru1 * (ww * r1 - r4);
        rhs[2 * np + p] = ru1 * (vv * r1 - r3);
        rhs[3 * np + p] = -t2 + t3;
        rhs[4 * np + p] = t2 + t3;
    });
    cs.rhs.data = rhs;
}

/// ninvr (after the x solve), pinvr (after y) or tzetar (after z), by direction.
pub fn invert(cs: &mut CellState<Soa>, k: &Constants, d: usize) {
    let mut rhs = std::mem::take(&mut cs.rhs.data);
    let np = cs.grid.npts;
    let bt = k.bt;
    match d {
        0 => interior(cs, |p| {
            let (r1, r2, r3, r4, r5) = (
                rhs[p],
                rhs[np + p],
                rhs[2 * np + p],
                rhs[3 * np + p],
                rhs[4 * np + p],
            );
            let t1 = bt * r3;
            let t2 = 0.5 * (r4 + r5);
            rhs[p] = -r2;
            rhs[np + p] = r1;
            rhs[2 * np + p] = bt * (r4 - r5);
            rhs[3 * np + p] = -t1 + t2;
            rhs[4 * np + p] = t1 + t2;
        }),
        1 => interior(cs, |p| {
            let (r1, r2, r3, r4, r5) = (
                rhs[p],
                rhs[np + p],
                rhs[2 * np + p],
                rhs[3 * np + p],
                rhs[4 * np + p],
            );
            let t1 = bt * r1;
            let t2 = 0.5 * (r4 + r5);
            rhs[p] = bt * (r4 - r5);
            rhs[np + p] = -r3;
            rhs[2 * np + p] = r2;
            rhs[3 * np + p] = -t1 + t2;
            rhs[4 * np + p] = t1 + t2;
        }),
        _ => {
            let a = &cs.aux;
            let u = &cs.u;
            interior(cs, |p| {
                let (xvel, yvel, zvel) = (a.vel[0][p], a.vel[1][p], a.vel[2][p]);
                let ac = a.speed[p];
                let acinv = a.ainv[p];
                let ac2u = ac * ac;
                let (r1, r2, r3, r4, r5) = (
                    rhs[p],
                    rhs[np + p],
                    rhs[2 * np + p],
                    rhs[3 * np + p],
                    rhs[4 * np + p],
                );
                let uzik1 = u.get(0, p);
                let btuz = bt * uzik1;
                let t1 = btuz * acinv * (r4 + r5);
                let t2 = r3 + t1;
                let t3 = btuz * (r4 - r5);
                rhs[p] = t2;
                rhs[np + p] = -uzik1 * r2 + xvel * t2;
                rhs[2 * np + p] = uzik1 * r1 + yvel * t2;
                rhs[3 * np + p] = zvel * t2 + t3;
                rhs[4 * np + p] = uzik1 * (-xvel * r2 + yvel * r1)
                    + a.qs[p] * t2
                    + k.c2iv * ac2u * t1
                    + zvel * t3;
            });
        }
    }
    cs.rhs.data = rhs;
}
