//! BT's approximate-factorization line solves (the reference's x_solve, y_solve,
//! z_solve): block-tridiagonal systems along every grid line of one direction, solved by
//! block Gaussian elimination and back substitution. With several cells per line the
//! solve is pipelined through the multi-partition: each cell's forward elimination waits
//! for C' and rhs' of the last plane of the preceding cell (tag WEST/SOUTH/BOTTOM +
//! cell position, from the predecessor), and each back substitution waits for the first
//! plane of the following cell's solution (tag EAST/NORTH/TOP + cell position, from the
//! successor).

use super::blocks::{binvcrhs, binvrhs, jacobians, matmul_sub, matvec_sub, Block, IDENTITY};
use crate::cfd::faces::{BOTTOM, EAST, NORTH, SOUTH, TOP, WEST};
use crate::cfd::{others, Aos, CellState, Constants, Flow};
use crate::common::NpbError;

/// Storage that lives across the forward and backward sweeps: the eliminated upper
/// blocks C' of every cell, and per-line scratch.
pub struct SolveWork {
    lhsc: Vec<Vec<Block>>,
    fj: Vec<Block>,
    nj: Vec<Block>,
    lhsa: Vec<Block>,
    lhsb: Vec<Block>,
    cc: Vec<Block>,
    r: Vec<[f64; 5]>,
}

impl SolveWork {
    /// Scratch for the cells of `flow`.
    pub fn new(flow: &Flow<Aos>) -> SolveWork {
        let maxn = flow
            .cells
            .iter()
            .flat_map(|c| c.cell.size)
            .max()
            .unwrap_or(0)
            + 2;
        SolveWork {
            lhsc: flow
                .cells
                .iter()
                .map(|c| vec![[[0.0; 5]; 5]; c.cell.size.iter().product()])
                .collect(),
            fj: vec![[[0.0; 5]; 5]; maxn],
            nj: vec![[[0.0; 5]; 5]; maxn],
            lhsa: vec![[[0.0; 5]; 5]; maxn],
            lhsb: vec![[[0.0; 5]; 5]; maxn],
            cc: vec![[[0.0; 5]; 5]; maxn],
            r: vec![[0.0; 5]; maxn],
        }
    }
}

/// Index of point `pos` of line (ia, ib) in direction `d`.
#[inline(always)]
fn point(cs: &CellState<Aos>, d: usize, ia: usize, ib: usize, pos: isize) -> usize {
    let (a, b) = others(d);
    let mut idx = [0isize; 3];
    idx[d] = pos;
    idx[a] = ia as isize;
    idx[b] = ib as isize;
    cs.grid.at3(idx)
}

/// The line solve in direction `d` (0 = x, 1 = y, 2 = z) over all cells.
pub fn solve(flow: &mut Flow<Aos>, w: &mut SolveWork, d: usize) -> Result<(), NpbError> {
    let nc = flow.dec.ncells;
    let maxd = flow.dec.max_cell_dim;
    let (a, b) = others(d);
    let comm = flow.comm_solve.clone();
    let (pred, succ) = (flow.dec.predecessor[d], flow.dec.successor[d]);
    let solve_tag = [WEST, SOUTH, BOTTOM][d];
    let back_tag = [EAST, NORTH, TOP][d];
    let k = flow.k.clone();
    let mut solve_buf = vec![0.0; maxd * maxd * 30];
    let mut back_buf = vec![0.0; maxd * maxd * 5];

    for stage in 0..nc {
        let ci = flow.dec.slice[d][stage];
        let (first, last) = (stage == 0, stage == nc - 1);
        let cs = &mut flow.cells[ci];
        let tag = (cs.cell.coord[a] + cs.cell.coord[b] * nc) as i32;
        if !first {
            comm.process_at_rank(pred)
                .receive_into_with_tag(&mut solve_buf[..], solve_tag + tag)?;
        }
        solve_cell(cs, &k, d, first, last, &solve_buf, maxd, w, ci);
        if !last {
            // C'(last plane) and rhs'(last plane) of every line.
            let c = &cs.cell;
            let n = c.size[d];
            solve_buf.fill(0.0);
            for ib in c.start[b]..c.size[b] - c.end[b] {
                for ia in c.start[a]..c.size[a] - c.end[a] {
                    let at = (ib * maxd + ia) * 30;
                    let blk = &w.lhsc[ci][(ib * c.size[a] + ia) * n + n - 1];
                    for m in 0..5 {
                        solve_buf[at + 5 * m..at + 5 * m + 5].copy_from_slice(&blk[m]);
                    }
                    let p = point(cs, d, ia, ib, n as isize - 1);
                    solve_buf[at + 25..at + 30].copy_from_slice(&cs.rhs.point(p));
                }
            }
            comm.process_at_rank(succ)
                .send_with_tag(&solve_buf[..], solve_tag + tag)?;
        }
    }

    for stage in (0..nc).rev() {
        let ci = flow.dec.slice[d][stage];
        let (first, last) = (stage == 0, stage == nc - 1);
        let cs = &mut flow.cells[ci];
        let tag = (cs.cell.coord[a] + cs.cell.coord[b] * nc) as i32;
        if !last {
            comm.process_at_rank(succ)
                .receive_into_with_tag(&mut back_buf[..], back_tag + tag)?;
        }
        backsubstitute(cs, d, last, &back_buf, maxd, &w.lhsc[ci]);
        if !first {
            let c = &cs.cell;
            back_buf.fill(0.0);
            for ib in c.start[b]..c.size[b] - c.end[b] {
                for ia in c.start[a]..c.size[a] - c.end[a] {
                    let at = (ib * maxd + ia) * 5;
                    let p = point(cs, d, ia, ib, 0);
                    back_buf[at..at + 5].copy_from_slice(&cs.rhs.point(p));
                }
            }
            comm.process_at_rank(pred)
                .send_with_tag(&back_buf[..], back_tag + tag)?;
        }
    }
    Ok(())
}

/// Forward elimination of every line of one cell (x_solve_cell). `recv` holds C' and
/// rhs' of the preceding cell's last plane when this is not the first cell.
#[allow(clippy::too_many_arguments)]
fn solve_cell(
    cs: &mut CellState<Aos>,
    k: &Constants,
    d: usize,
    first: bool,
    last: bool,
    recv: &[f64],
    maxd: usize,
    w: &mut SolveWork,
    ci: usize,
) {
    let c = cs.cell.clone();
    let (a, b) = others(d);
    let n = c.size[d];
    let isize = n - 1;
    let tmp1 = k.dtt1[d];
    let tmp2 = k.dtt2[d];
    let dd = k.dd[d];
    let lhsc = &mut w.lhsc[ci];
    for ib in c.start[b]..c.size[b] - c.end[b] {
        for ia in c.start[a]..c.size[a] - c.end[a] {
            // Jacobians at positions start-1 ..= n-end (index pos+1).
            let lo = c.start[d] as isize - 1;
            let hi = (n - c.end[d]) as isize;
            for pos in lo..=hi {
                let p = point(cs, d, ia, ib, pos);
                let (f, nj) = jacobians(&cs.u.point(p), cs.aux.qs[p], cs.aux.rho_i[p], d, k);
                w.fj[(pos + 1) as usize] = f;
                w.nj[(pos + 1) as usize] = nj;
            }
            for pos in 0..n {
                w.lhsa[pos] = [[0.0; 5]; 5];
                w.lhsb[pos] = IDENTITY;
                w.cc[pos + 1] = [[0.0; 5]; 5];
                w.r[pos + 1] = cs.rhs.point(point(cs, d, ia, ib, pos as isize));
            }
            for pos in c.start[d]..=isize - c.end[d] {
                let (fm, nm) = (&w.fj[pos], &w.nj[pos]);
                let n0 = &w.nj[pos + 1];
                let (fp, np) = (&w.fj[pos + 2], &w.nj[pos + 2]);
                let (la, lb, lc) = (&mut w.lhsa[pos], &mut w.lhsb[pos], &mut w.cc[pos + 1]);
                for m in 0..5 {
                    for q in 0..5 {
                        la[m][q] = -tmp2 * fm[m][q] - tmp1 * nm[m][q];
                        lb[m][q] = tmp1 * 2.0 * n0[m][q];
                        lc[m][q] = tmp2 * fp[m][q] - tmp1 * np[m][q];
                    }
                    la[m][m] -= tmp1 * dd[m];
                    lb[m][m] = 1.0 + lb[m][m] + tmp1 * 2.0 * dd[m];
                    lc[m][m] -= tmp1 * dd[m];
                }
            }
            let start = if first {
                binvcrhs(&mut w.lhsb[0], &mut w.cc[1], &mut w.r[1]);
                1
            } else {
                let at = (ib * maxd + ia) * 30;
                for m in 0..5 {
                    w.cc[0][m].copy_from_slice(&recv[at + 5 * m..at + 5 * m + 5]);
                }
                w.r[0].copy_from_slice(&recv[at + 25..at + 30]);
                0
            };
            let stop = if last { isize } else { n };
            for i in start..stop {
                // rhs(i) -= A rhs(i-1); B(i) -= A C(i-1); C(i), rhs(i) <- B(i)^-1 ...
                let prev = w.r[i];
                matvec_sub(&w.lhsa[i], &prev, &mut w.r[i + 1]);
                let cprev = w.cc[i];
                matmul_sub(&w.lhsa[i], &cprev, &mut w.lhsb[i]);
                binvcrhs(&mut w.lhsb[i], &mut w.cc[i + 1], &mut w.r[i + 1]);
            }
            if last {
                let prev = w.r[isize];
                matvec_sub(&w.lhsa[isize], &prev, &mut w.r[isize + 1]);
                let cprev = w.cc[isize];
                matmul_sub(&w.lhsa[isize], &cprev, &mut w.lhsb[isize]);
                binvrhs(&mut w.lhsb[isize], &mut w.r[isize + 1]);
            }
            let base = (ib * c.size[a] + ia) * n;
            lhsc[base..base + n].copy_from_slice(&w.cc[1..=n]);
            for pos in 0..n {
                let p = point(cs, d, ia, ib, pos as isize);
                for m in 0..5 {
                    cs.rhs.set(m, p, w.r[pos + 1][m]);
                }
            }
        }
    }
}

/// Back substitution of every line of one cell; `recv` holds the following cell's
/// solution on its first plane when this is not the last cell.
fn backsubstitute(
    cs: &mut CellState<Aos>,
    d: usize,
    last: bool,
    recv: &[f64],
    maxd: usize,
    lhsc: &[Block],
) {
    let c = cs.cell.clone();
    let (a, b) = others(d);
    let n = c.size[d];
    let mut r = vec![[0.0f64; 5]; n];
    for ib in c.start[b]..c.size[b] - c.end[b] {
        for ia in c.start[a]..c.size[a] - c.end[a] {
            let base = (ib * c.size[a] + ia) * n;
            for (pos, rp) in r.iter_mut().enumerate() {
                *rp = cs.rhs.point(point(cs, d, ia, ib, pos as isize));
            }
            if !last {
                let at = (ib * maxd + ia) * 5;
                let mut next = [0.0; 5];
                next.copy_from_slice(&recv[at..at + 5]);
                matvec_sub(&lhsc[base + n - 1], &next, &mut r[n - 1]);
            }
            for pos in (0..n - 1).rev() {
                let next = r[pos + 1];
                matvec_sub(&lhsc[base + pos], &next, &mut r[pos]);
            }
            for (pos, rp) in r.iter().enumerate() {
                let p = point(cs, d, ia, ib, pos as isize);
                for (m, v) in rp.iter().enumerate() {
                    cs.rhs.set(m, p, *v);
                }
            }
        }
    }
}
