//! SP's scalar pentadiagonal line solves (the reference's lhsx/lhsy/lhsz and
//! x_solve/y_solve/z_solve): per direction, three factors (the u eigenvalue for the
//! first three components, u+c and u-c for the last two) solved by the Thomas
//! algorithm. With several cells per line the sweep is pipelined through the
//! multi-partition: the forward elimination of a cell waits for the last two eliminated
//! rows of the preceding cell (22 values per line, from the predecessor), the back
//! substitution for the first two solved rows of the following cell (10 values per line,
//! from the successor); every message carries the reference's DEFAULT_TAG (0).

use super::invr::invert;
use crate::cfd::{diss_coef, others, CellState, Constants, Flow, Soa};
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

/// Lines swept together: one at a time along x (the line is contiguous), a whole row of
/// lines per position along y and z (the contiguous i runs across the lines), as the
/// reference's loop orders do.
fn groups(bases: &[usize], na: usize, d: usize) -> std::slice::Chunks<'_, usize> {
    bases.chunks(if d == 0 { 1 } else { na.max(1) })
}

/// Base indices (position 0) of the interior lines of direction `d`, outer dimension
/// first, the stride along the lines and the number of lines per outer index.
fn lines(cs: &CellState<Soa>, d: usize) -> (Vec<usize>, usize, usize) {
    let c = &cs.cell;
    let (a, b) = others(d);
    let mut v = Vec::new();
    for ib in c.start[b]..c.size[b] - c.end[b] {
        for ia in c.start[a]..c.size[a] - c.end[a] {
            let mut idx = [0isize; 3];
            idx[a] = ia as isize;
            idx[b] = ib as isize;
            v.push(cs.grid.at3(idx));
        }
    }
    let na = c.size[a] - c.start[a] - c.end[a];
    (v, cs.grid.stride[d], na)
}

/// The left-hand side of direction `d` for one cell (lhsx, lhsy, lhsz).
fn compute_lhs(cs: &CellState<Soa>, k: &Constants, d: usize, lhs: &mut [f64]) {
    let c = &cs.cell;
    let np = cs.grid.npts;
    let n = c.size[d];
    let (bases, s, _) = lines(cs, d);
    let a = &cs.aux;
    let vel = &a.vel[d];
    let dd = k.dd[d];
    let (dtt1, dtt2, c2dtt1) = (k.dtt1[d], k.dtt2[d], k.c2dtt1[d]);
    let wt: Vec<[f64; 5]> = (0..n)
        .map(|pos| diss_coef(pos, n, c.start[d], c.end[d]))
        .collect();
    let mut cv = vec![0.0; n + 2];
    let mut rhon = vec![0.0; n + 2];
    for &base in &bases {
        // positions start-1 ..= n-end, stored at pos+1
        for pos in c.start[d] as isize - 1..=(n - c.end[d]) as isize {
            let p = (base as isize + pos * s as isize) as usize;
            let ru1 = k.c3c4 * a.rho_i[p];
            cv[(pos + 1) as usize] = vel[p];
            rhon[(pos + 1) as usize] = (dd[d + 1] + k.con43 * ru1)
                .max(dd[4] + k.c1c5 * ru1)
                .max(k.dmax[d] + ru1)
                .max(dd[0]);
        }
        for pos in c.start[d]..n - c.end[d] {
            let p = base + pos * s;
            let w = wt[pos];
            let mut l = [
                0.0,
                -dtt2 * cv[pos] - dtt1 * rhon[pos],
                1.0 + c2dtt1 * rhon[pos + 1],
                dtt2 * cv[pos + 2] - dtt1 * rhon[pos + 2],
                0.0,
            ];
            for q in 0..5 {
                l[q] += k.dtdssp * w[q];
                lhs[q * np + p] = l[q];
                lhs[(5 + q) * np + p] = l[q];
                lhs[(10 + q) * np + p] = l[q];
            }
            let (sm, sp) = (a.speed[p - s], a.speed[p + s]);
            lhs[6 * np + p] = l[1] - dtt2 * sm;
            lhs[8 * np + p] = l[3] + dtt2 * sp;
            lhs[11 * np + p] = l[1] + dtt2 * sm;
            lhs[13 * np + p] = l[3] - dtt2 * sp;
        }
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
        let (bases, s, na) = lines(cs, d);
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
                let (a_, b_, c_, d_, e_) = (
                    n0 * np,
                    (n0 + 1) * np,
                    (n0 + 2) * np,
                    (n0 + 3) * np,
                    (n0 + 4) * np,
                );
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
                let _ = e_;
            }
        }
        for f in 0..3 {
            let (n0, ms) = factor(f);
            let (a_, b_, c_, d_, e_) = (
                n0 * np,
                (n0 + 1) * np,
                (n0 + 2) * np,
                (n0 + 3) * np,
                (n0 + 4) * np,
            );
            for g in groups(&bases, na, d) {
                for i in 0..n - 2 {
                    for &base in g {
                        let p = base + i * s;
                        let (p1, p2) = (p + s, p + 2 * s);
                        let fac1 = 1.0 / l[c_ + p];
                        l[d_ + p] *= fac1;
                        l[e_ + p] *= fac1;
                        for m in ms.clone() {
                            r[m * np + p] *= fac1;
                        }
                        l[c_ + p1] -= l[b_ + p1] * l[d_ + p];
                        l[d_ + p1] -= l[b_ + p1] * l[e_ + p];
                        for m in ms.clone() {
                            r[m * np + p1] -= l[b_ + p1] * r[m * np + p];
                        }
                        l[b_ + p2] -= l[a_ + p2] * l[d_ + p];
                        l[c_ + p2] -= l[a_ + p2] * l[e_ + p];
                        for m in ms.clone() {
                            r[m * np + p2] -= l[a_ + p2] * r[m * np + p];
                        }
                    }
                }
                // The last two rows.
                for &base in g {
                    let p = base + (n - 2) * s;
                    let p1 = p + s;
                    let fac1 = 1.0 / l[c_ + p];
                    l[d_ + p] *= fac1;
                    l[e_ + p] *= fac1;
                    for m in ms.clone() {
                        r[m * np + p] *= fac1;
                    }
                    l[c_ + p1] -= l[b_ + p1] * l[d_ + p];
                    l[d_ + p1] -= l[b_ + p1] * l[e_ + p];
                    for m in ms.clone() {
                        r[m * np + p1] -= l[b_ + p1] * r[m * np + p];
                    }
                    let fac2 = 1.0 / l[c_ + p1];
                    l[d_ + p1] *= fac2;
                    l[e_ + p1] *= fac2;
                    for m in ms.clone() {
                        r[m * np + p1] *= fac2;
                    }
                }
            }
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
            let nl = lines(&flow.cells[ci], d).0.len();
            buf = vec![0.0; 10 * nl];
            comm.process_at_rank(succ)
                .receive_into_with_tag(&mut buf[..], DEFAULT_TAG)?;
            let next = flow.dec.slice[d][stage + 1];
            invert(&mut flow.cells[next], &k, d);
        }
        let cs = &mut flow.cells[ci];
        let l = &lhs.cells[ci];
        let np = cs.grid.npts;
        let (bases, s, na) = lines(cs, d);
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
        for m in 0..5 {
            let n0 = factor(if m < 3 { 0 } else { m - 2 }).0;
            let (d_, e_) = ((n0 + 3) * np, (n0 + 4) * np);
            let rm = m * np;
            for g in groups(&bases, na, d) {
                for i in (0..n - 2).rev() {
                    for &base in g {
                        let p = base + i * s;
                        r[rm + p] =
                            r[rm + p] - l[d_ + p] * r[rm + p + s] - l[e_ + p] * r[rm + p + 2 * s];
                    }
                }
            }
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
