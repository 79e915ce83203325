//! RMS norms of BT and SP's verification (the reference's error_norm and rhs_norm),
//! summed over all processes.

use super::constants::exact_solution;
use super::{Flow, Layout};
use crate::common::NpbError;

fn finish(
    comm: &volpex::Communicator,
    work: [f64; 5],
    grid: [usize; 3],
) -> Result<[f64; 5], NpbError> {
    let mut rms = [0.0; 5];
    comm.all_reduce_into(&work[..], &mut rms[..], volpex::SystemOperation::sum())?;
    for r in &mut rms {
        for g in grid {
            *r /= g as f64 - 2.0;
        }
        *r = r.sqrt();
    }
    Ok(rms)
}

/// RMS norm of u minus the exact solution over every grid point.
pub fn error_norm<L: Layout>(
    flow: &Flow<L>,
    comm: &volpex::Communicator,
) -> Result<[f64; 5], NpbError> {
    let mut work = [0.0; 5];
    let dn = flow.k.dnm1;
    for cs in &flow.cells {
        let c = &cs.cell;
        for kk in 0..c.size[2] {
            let zeta = (kk + c.low[2]) as f64 * dn[2];
            for jj in 0..c.size[1] {
                let eta = (jj + c.low[1]) as f64 * dn[1];
                for ii in 0..c.size[0] {
                    let xi = (ii + c.low[0]) as f64 * dn[0];
                    let e = exact_solution(xi, eta, zeta);
                    let p = cs.grid.at(ii as isize, jj as isize, kk as isize);
                    for m in 0..5 {
                        let add = cs.u.get(m, p) - e[m];
                        work[m] += add * add;
                    }
                }
            }
        }
    }
    finish(comm, work, flow.dec.grid)
}

/// RMS norm of rhs over the interior points.
pub fn rhs_norm<L: Layout>(
    flow: &Flow<L>,
    comm: &volpex::Communicator,
) -> Result<[f64; 5], NpbError> {
    let mut work = [0.0; 5];
    for cs in &flow.cells {
        let c = &cs.cell;
        for kk in c.start[2]..c.size[2] - c.end[2] {
            for jj in c.start[1]..c.size[1] - c.end[1] {
                for ii in c.start[0]..c.size[0] - c.end[0] {
                    let p = cs.grid.at(ii as isize, jj as isize, kk as isize);
                    for (m, w) in work.iter_mut().enumerate() {
                        let add = cs.rhs.get(m, p);
                        *w += add * add;
                    }
                }
            }
        }
    }
    finish(comm, work, flow.dec.grid)
}
