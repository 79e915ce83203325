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
    /// C' of every line of every cell, line after line (`(ib * size[a] + ia) * n + pos`).
    lhsc: Vec<Vec<Block>>,
    line: LineWork,
}

/// One line's Jacobians and its lower and diagonal blocks (the reference's fjac, njac,
/// lhsa, lhsb). fjac and njac are indexed by position + 1.
struct LineWork {
    fj: Vec<Block>,
    nj: Vec<Block>,
    lhsa: Vec<Block>,
    lhsb: Vec<Block>,
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
                .map(|c| vec![ZERO; c.cell.size.iter().product()])
                .collect(),
            line: LineWork {
                fj: vec![ZERO; maxn],
                nj: vec![ZERO; maxn],
                lhsa: vec![ZERO; maxn],
                lhsb: vec![ZERO; maxn],
            },
        }
    }
}

/// The zero block.
const ZERO: Block = [[0.0; 5]; 5];

/// The five components of point `p` of an interleaved field's values, in place.
#[inline(always)]
fn point_mut(data: &mut [f64], p: usize) -> &mut [f64; 5] {
    (&mut data[5 * p..5 * p + 5])
        .try_into()
        .expect("five components")
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
        let (ends, lhsc, line) = ((first, last), &mut w.lhsc[ci], &mut w.line);
        match d {
            0 => solve_cell::<0>(cs, &k, ends, &solve_buf, maxd, lhsc, line),
            1 => solve_cell::<1>(cs, &k, ends, &solve_buf, maxd, lhsc, line),
            _ => solve_cell::<2>(cs, &k, ends, &solve_buf, maxd, lhsc, line),
        }
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

/// Forward elimination of every line of one cell in direction `D` (x_solve_cell,
/// y_solve_cell, z_solve_cell: one copy per direction, so that the Jacobians' pattern and
/// the line's indexing are constants), in place on the cell's rhs and its C' (`lhsc`), as
/// the reference does. `recv` holds C' and rhs' of the preceding cell's last plane when
/// this is not the first cell.
fn solve_cell<const D: usize>(
    cs: &mut CellState<Aos>,
    k: &Constants,
    (first, last): (bool, bool),
    recv: &[f64],
    maxd: usize,
    lhsc: &mut [Block],
    w: &mut LineWork,
) {
    let d = D;
    let c = cs.cell.clone();
    let (a, b) = others(d);
    let n = c.size[d];
    let isize = n - 1;
    let s = cs.grid.stride[d];
    let tmp1 = k.dtt1[d];
    let tmp2 = k.dtt2[d];
    let dd = k.dd[d];
    // Positions whose blocks come from the Jacobians; a boundary position keeps the
    // identity row of lhsabinit (and a zero C').
    let (lo, hi) = (c.start[d], isize - c.end[d]);
    for ib in c.start[b]..c.size[b] - c.end[b] {
        for ia in c.start[a]..c.size[a] - c.end[a] {
            let p0 = point(cs, d, ia, ib, 0);
            // Jacobians at positions lo-1 ..= hi+1 (index pos+1).
            for j in lo..=hi + 2 {
                let p = p0 + j * s - s;
                jacobians(
                    &cs.u.point(p),
                    cs.aux.qs[p],
                    cs.aux.rho_i[p],
                    d,
                    k,
                    &mut w.fj[j],
                    &mut w.nj[j],
                );
            }
            let base = (ib * c.size[a] + ia) * n;
            let line = &mut lhsc[base..base + n];
            if lo == 1 {
                w.lhsa[0] = ZERO;
                w.lhsb[0] = IDENTITY;
                line[0] = ZERO;
            }
            if hi < isize {
                w.lhsa[isize] = ZERO;
                w.lhsb[isize] = IDENTITY;
                line[isize] = ZERO;
            }
            for pos in lo..=hi {
                let (fm, nm) = (&w.fj[pos], &w.nj[pos]);
                let n0 = &w.nj[pos + 1];
                let (fp, np) = (&w.fj[pos + 2], &w.nj[pos + 2]);
                let (la, lb, lc) = (&mut w.lhsa[pos], &mut w.lhsb[pos], &mut line[pos]);
                // Every entry written once, the diagonal's dissipation term in the same
                // expression (the reference's order of operations), rather than the
                // diagonal read back and rewritten after a block store.
                for m in 0..5 {
                    for q in 0..5 {
                        if m == q {
                            la[m][q] = -tmp2 * fm[m][q] - tmp1 * nm[m][q] - tmp1 * dd[m];
                            lb[m][q] = 1.0 + tmp1 * 2.0 * n0[m][q] + tmp1 * 2.0 * dd[m];
                            lc[m][q] = tmp2 * fp[m][q] - tmp1 * np[m][q] - tmp1 * dd[m];
                        } else {
                            la[m][q] = -tmp2 * fm[m][q] - tmp1 * nm[m][q];
                            lb[m][q] = tmp1 * 2.0 * n0[m][q];
                            lc[m][q] = tmp2 * fp[m][q] - tmp1 * np[m][q];
                        }
                    }
                }
            }
            let rhs = &mut cs.rhs.data[..];
            let at = |pos: usize| p0 + pos * s;
            // rhs'(pos - 1), carried along the line.
            let mut rprev;
            if first {
                let r = point_mut(rhs, at(0));
                binvcrhs(&mut w.lhsb[0], &mut line[0], r);
                rprev = *r;
            } else {
                // Position 0 follows the preceding cell's last plane.
                let o = (ib * maxd + ia) * 30;
                let mut cprev = ZERO;
                for m in 0..5 {
                    cprev[m].copy_from_slice(&recv[o + 5 * m..o + 5 * m + 5]);
                }
                let mut rp = [0.0; 5];
                rp.copy_from_slice(&recv[o + 25..o + 30]);
                let r = point_mut(rhs, at(0));
                matvec_sub(&w.lhsa[0], &rp, r);
                matmul_sub(&w.lhsa[0], &cprev, &mut w.lhsb[0]);
                binvcrhs(&mut w.lhsb[0], &mut line[0], r);
                rprev = *r;
            }
            let stop = if last { isize } else { n };
            for pos in 1..stop {
                // rhs(i) -= A rhs(i-1); B(i) -= A C(i-1); C(i), rhs(i) <- B(i)^-1 ...
                let r = point_mut(rhs, at(pos));
                matvec_sub(&w.lhsa[pos], &rprev, r);
                let (done, todo) = line.split_at_mut(pos);
                matmul_sub(&w.lhsa[pos], &done[pos - 1], &mut w.lhsb[pos]);
                binvcrhs(&mut w.lhsb[pos], &mut todo[0], r);
                rprev = *r;
            }
            if last {
                let r = point_mut(rhs, at(isize));
                matvec_sub(&w.lhsa[isize], &rprev, r);
                matmul_sub(&w.lhsa[isize], &line[isize - 1], &mut w.lhsb[isize]);
                binvrhs(&mut w.lhsb[isize], r);
            }
        }
    }
}

/// Back substitution of every line of one cell, in place on its rhs; `recv` holds the
/// following cell's solution on its first plane when this is not the last cell.
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
    let s = cs.grid.stride[d];
    for ib in c.start[b]..c.size[b] - c.end[b] {
        for ia in c.start[a]..c.size[a] - c.end[a] {
            let base = (ib * c.size[a] + ia) * n;
            let line = &lhsc[base..base + n];
            let p0 = point(cs, d, ia, ib, 0);
            let rhs = &mut cs.rhs.data[..];
            // The solution one position further along the line.
            let mut next = [0.0; 5];
            let top = if last {
                next = *point_mut(rhs, p0 + (n - 1) * s);
                n - 1
            } else {
                let at = (ib * maxd + ia) * 5;
                next.copy_from_slice(&recv[at..at + 5]);
                n
            };
            for pos in (0..top).rev() {
                let r = point_mut(rhs, p0 + pos * s);
                matvec_sub(&line[pos], &next, r);
                next = *r;
            }
        }
    }
}
