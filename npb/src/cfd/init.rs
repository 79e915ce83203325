//! Initial field (transfinite interpolation of the boundary values, then the exact
//! boundary values) and the forcing term of the exact solution (the reference's
//! initialize and exact_rhs), for BT and SP.

use super::constants::{exact_solution, C1, C2};
use super::{diss_coef, others, Flow, Layout};

/// The reference's initialize: u = 1 everywhere, interpolated values in every cell, exact
/// values on the six faces of the grid.
pub fn initialize<L: Layout>(flow: &mut Flow<L>) {
    let dn = flow.k.dnm1;
    for cs in &mut flow.cells {
        cs.u.data.fill(1.0);
        let c = cs.cell.clone();
        for kk in 0..c.size[2] {
            let zeta = (kk + c.low[2]) as f64 * dn[2];
            for jj in 0..c.size[1] {
                let eta = (jj + c.low[1]) as f64 * dn[1];
                for ii in 0..c.size[0] {
                    let xi = (ii + c.low[0]) as f64 * dn[0];
                    let px = [
                        exact_solution(0.0, eta, zeta),
                        exact_solution(1.0, eta, zeta),
                    ];
                    let py = [exact_solution(xi, 0.0, zeta), exact_solution(xi, 1.0, zeta)];
                    let pz = [exact_solution(xi, eta, 0.0), exact_solution(xi, eta, 1.0)];
                    let p = cs.grid.at(ii as isize, jj as isize, kk as isize);
                    for m in 0..5 {
                        let pxi = xi * px[1][m] + (1.0 - xi) * px[0][m];
                        let peta = eta * py[1][m] + (1.0 - eta) * py[0][m];
                        let pzeta = zeta * pz[1][m] + (1.0 - zeta) * pz[0][m];
                        let v = pxi + peta + pzeta - pxi * peta - pxi * pzeta - peta * pzeta
                            + pxi * peta * pzeta;
                        cs.u.set(m, p, v);
                    }
                }
            }
        }
    }
    // The exact values on the faces: the low and high plane of each direction.
    let nc = flow.dec.ncells;
    for d in 0..3 {
        for high in [false, true] {
            let (plane, fixed) = if high { (nc - 1, 1.0) } else { (0, 0.0) };
            let cs = &mut flow.cells[flow.dec.slice[d][plane]];
            let c = cs.cell.clone();
            let pos = if high { c.size[d] - 1 } else { 0 };
            let (a, b) = others(d);
            for ib in 0..c.size[b] {
                for ia in 0..c.size[a] {
                    let mut idx = [0usize; 3];
                    idx[d] = pos;
                    idx[a] = ia;
                    idx[b] = ib;
                    let mut x = [0.0; 3];
                    for e in 0..3 {
                        x[e] = (idx[e] + c.low[e]) as f64 * dn[e];
                    }
                    x[d] = fixed;
                    let v = exact_solution(x[0], x[1], x[2]);
                    let p = cs.grid.at3(idx.map(|v| v as isize));
                    for (m, vm) in v.iter().enumerate() {
                        cs.u.set(m, p, *vm);
                    }
                }
            }
        }
    }
}

/// The reference's exact_rhs: the forcing term that makes the exact solution a steady
/// state of the discrete equations, computed line by line in each direction.
pub fn exact_rhs<L: Layout>(flow: &mut Flow<L>) {
    let k = flow.k.clone();
    for cs in &mut flow.cells {
        cs.forcing.data.fill(0.0);
        let c = cs.cell.clone();
        for d in 0..3 {
            let n = d + 1;
            let (ta, tb) = match d {
                0 => (2, 3),
                1 => (1, 3),
                _ => (1, 2),
            };
            let (a, b) = others(d);
            let lo = -2 * (1 - c.start[d] as isize);
            let hi = c.size[d] as isize + 1 - 2 * c.end[d] as isize;
            // Line buffers are indexed by position + 2 (positions -2 ..= size + 1).
            let len = c.size[d] + 4;
            let mut ue = vec![[0.0f64; 5]; len];
            let mut buf = vec![[0.0f64; 5]; len];
            let mut cuf = vec![0.0f64; len];
            let mut q = vec![0.0f64; len];
            let (t2, dt1, con) = (k.t2[d], k.dt1[d], k.con[d]);
            for ib in c.start[b]..c.size[b] - c.end[b] {
                for ia in c.start[a]..c.size[a] - c.end[a] {
                    let mut x = [0.0; 3];
                    x[a] = (ia + c.low[a]) as f64 * k.dnm1[a];
                    x[b] = (ib + c.low[b]) as f64 * k.dnm1[b];
                    for pos in lo..=hi {
                        let s = (pos + 2) as usize;
                        x[d] = (pos + c.low[d] as isize) as f64 * k.dnm1[d];
                        let e = exact_solution(x[0], x[1], x[2]);
                        ue[s] = e;
                        let dtpp = 1.0 / e[0];
                        for m in 1..5 {
                            buf[s][m] = dtpp * e[m];
                        }
                        cuf[s] = buf[s][n] * buf[s][n];
                        buf[s][0] = cuf[s] + buf[s][ta] * buf[s][ta] + buf[s][tb] * buf[s][tb];
                        q[s] = 0.5 * (buf[s][1] * e[1] + buf[s][2] * e[2] + buf[s][3] * e[3]);
                    }
                    let first = c.start[d];
                    let last = c.size[d] - c.end[d];
                    for pos in first..last {
                        let s = pos + 2;
                        let (sp, sm) = (s + 1, s - 1);
                        let mut idx = [0isize; 3];
                        idx[d] = pos as isize;
                        idx[a] = ia as isize;
                        idx[b] = ib as isize;
                        let p = cs.grid.at3(idx);
                        let mut f = cs.forcing.point(p);
                        f[0] = f[0] - t2 * (ue[sp][n] - ue[sm][n])
                            + dt1[0] * (ue[sp][0] - 2.0 * ue[s][0] + ue[sm][0]);
                        for mm in 1..4 {
                            if mm == n {
                                f[mm] = f[mm]
                                    - t2 * ((ue[sp][n] * buf[sp][n] + C2 * (ue[sp][4] - q[sp]))
                                        - (ue[sm][n] * buf[sm][n] + C2 * (ue[sm][4] - q[sm])))
                                    + con[0] * (buf[sp][n] - 2.0 * buf[s][n] + buf[sm][n])
                                    + dt1[mm] * (ue[sp][mm] - 2.0 * ue[s][mm] + ue[sm][mm]);
                            } else {
                                f[mm] = f[mm]
                                    - t2 * (ue[sp][mm] * buf[sp][n] - ue[sm][mm] * buf[sm][n])
                                    + con[1] * (buf[sp][mm] - 2.0 * buf[s][mm] + buf[sm][mm])
                                    + dt1[mm] * (ue[sp][mm] - 2.0 * ue[s][mm] + ue[sm][mm]);
                            }
                        }
                        f[4] = f[4]
                            - t2 * (buf[sp][n] * (C1 * ue[sp][4] - C2 * q[sp])
                                - buf[sm][n] * (C1 * ue[sm][4] - C2 * q[sm]))
                            + 0.5 * con[2] * (buf[sp][0] - 2.0 * buf[s][0] + buf[sm][0])
                            + con[3] * (cuf[sp] - 2.0 * cuf[s] + cuf[sm])
                            + con[4] * (buf[sp][4] - 2.0 * buf[s][4] + buf[sm][4])
                            + dt1[4] * (ue[sp][4] - 2.0 * ue[s][4] + ue[sm][4]);
                        // Fourth-order dissipation.
                        let w = diss_coef(pos, c.size[d], c.start[d], c.end[d]);
                        for (m, fm) in f.iter_mut().enumerate() {
                            let mut acc = 0.0;
                            for o in 0..5 {
                                acc += w[o] * ue[s + o - 2][m];
                            }
                            *fm -= k.dssp * acc;
                        }
                        for (m, fm) in f.iter().enumerate() {
                            cs.forcing.set(m, p, *fm);
                        }
                    }
                }
            }
        }
        // Change the sign of the forcing function.
        for kk in c.start[2]..c.size[2] - c.end[2] {
            for jj in c.start[1]..c.size[1] - c.end[1] {
                for ii in c.start[0]..c.size[0] - c.end[0] {
                    let p = cs.grid.at(ii as isize, jj as isize, kk as isize);
                    for m in 0..5 {
                        let v = -cs.forcing.get(m, p);
                        cs.forcing.set(m, p, v);
                    }
                }
            }
        }
    }
}
