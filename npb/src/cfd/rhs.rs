//! The explicit right-hand side of BT and SP (the reference's compute_rhs): derived
//! quantities on the cell and its first ghost layer, the forcing term, the flux
//! differences and 4th-order dissipation in each direction, times dt.

use super::constants::{Constants, C1, C2};
use super::{diss_coef, CellState, Layout};

/// compute_rhs for one cell; `with_speed` also computes the speed of sound (SP).
pub fn compute_rhs<L: Layout>(cs: &mut CellState<L>, k: &Constants, with_speed: bool) {
    let c = cs.cell.clone();
    let g = cs.grid;
    // Reciprocal of density, velocities, kinetic energy and (SP) speed of sound.
    for kk in -1..=c.size[2] as isize {
        for jj in -1..=c.size[1] as isize {
            let row = g.at(-1, jj, kk);
            for p in row..row + c.size[0] + 2 {
                let u = cs.u.point(p);
                let rho_inv = 1.0 / u[0];
                let a = &mut cs.aux;
                a.rho_i[p] = rho_inv;
                a.vel[0][p] = u[1] * rho_inv;
                a.vel[1][p] = u[2] * rho_inv;
                a.vel[2][p] = u[3] * rho_inv;
                let sq = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) * rho_inv;
                a.square[p] = sq;
                a.qs[p] = sq * rho_inv;
                if with_speed {
                    let aux = (k.c1c2 * rho_inv * (u[4] - sq)).sqrt();
                    a.speed[p] = aux;
                    a.ainv[p] = 1.0 / aux;
                }
            }
        }
    }
    // The forcing term is known on the whole cell, boundary included.
    cs.rhs.data.copy_from_slice(&cs.forcing.data);
    for d in 0..3 {
        flux(cs, k, d);
        dissipation(cs, k, d);
    }
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let row = g.at(0, jj as isize, kk as isize);
            for p in row + c.start[0]..row + c.size[0] - c.end[0] {
                for m in 0..5 {
                    let v = cs.rhs.get(m, p) * k.dt;
                    cs.rhs.set(m, p, v);
                }
            }
        }
    }
}

/// Flux differences in direction `d` on the interior points.
fn flux<L: Layout>(cs: &mut CellState<L>, k: &Constants, d: usize) {
    let c = &cs.cell;
    let g = cs.grid;
    let s = g.stride[d];
    let n = d + 1;
    let (t2, dt1, con) = (k.t2[d], k.dt1[d], k.con[d]);
    let a = &cs.aux;
    let vel = &a.vel[d];
    let u = &cs.u;
    let rhs = &mut cs.rhs;
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let row = g.at(0, jj as isize, kk as isize);
            for p in row + c.start[0]..row + c.size[0] - c.end[0] {
                let (pp, pm) = (p + s, p - s);
                let uijk = vel[p];
                let up1 = vel[pp];
                let um1 = vel[pm];
                let mut r = rhs.point(p);
                r[0] = r[0] + dt1[0] * (u.get(0, pp) - 2.0 * u.get(0, p) + u.get(0, pm))
                    - t2 * (u.get(n, pp) - u.get(n, pm));
                for mm in 1..4 {
                    let vm = &a.vel[mm - 1];
                    let second = dt1[mm] * (u.get(mm, pp) - 2.0 * u.get(mm, p) + u.get(mm, pm));
                    if mm == n {
                        r[mm] = r[mm] + second + con[1] * k.con43 * (up1 - 2.0 * uijk + um1)
                            - t2 * (u.get(mm, pp) * up1 - u.get(mm, pm) * um1
                                + (u.get(4, pp) - a.square[pp] - u.get(4, pm) + a.square[pm]) * C2);
                    } else {
                        r[mm] = r[mm] + second + con[1] * (vm[pp] - 2.0 * vm[p] + vm[pm])
                            - t2 * (u.get(mm, pp) * up1 - u.get(mm, pm) * um1);
                    }
                }
                r[4] = r[4]
                    + dt1[4] * (u.get(4, pp) - 2.0 * u.get(4, p) + u.get(4, pm))
                    + con[2] * (a.qs[pp] - 2.0 * a.qs[p] + a.qs[pm])
                    + con[3] * (up1 * up1 - 2.0 * uijk * uijk + um1 * um1)
                    + con[4]
                        * (u.get(4, pp) * a.rho_i[pp] - 2.0 * u.get(4, p) * a.rho_i[p]
                            + u.get(4, pm) * a.rho_i[pm])
                    - t2 * ((C1 * u.get(4, pp) - C2 * a.square[pp]) * up1
                        - (C1 * u.get(4, pm) - C2 * a.square[pm]) * um1);
                for (m, v) in r.iter().enumerate() {
                    rhs.set(m, p, *v);
                }
            }
        }
    }
}

/// Fourth-order dissipation in direction `d`.
fn dissipation<L: Layout>(cs: &mut CellState<L>, k: &Constants, d: usize) {
    let c = &cs.cell;
    let g = cs.grid;
    let s = g.stride[d];
    let wt: Vec<[f64; 5]> = (0..c.size[d])
        .map(|pos| diss_coef(pos, c.size[d], c.start[d], c.end[d]))
        .collect();
    let u = &cs.u;
    let rhs = &mut cs.rhs;
    for kk in c.start[2]..c.size[2] - c.end[2] {
        for jj in c.start[1]..c.size[1] - c.end[1] {
            let row = g.at(0, jj as isize, kk as isize);
            for ii in c.start[0]..c.size[0] - c.end[0] {
                let p = row + ii;
                let w = wt[[ii, jj, kk][d]];
                for m in 0..5 {
                    let v = w[0] * u.get(m, p - 2 * s)
                        + w[1] * u.get(m, p - s)
                        + w[2] * u.get(m, p)
                        + w[3] * u.get(m, p + s)
                        + w[4] * u.get(m, p + 2 * s);
                    let r = rhs.get(m, p) - k.dssp * v;
                    rhs.set(m, p, r);
                }
            }
        }
    }
}
