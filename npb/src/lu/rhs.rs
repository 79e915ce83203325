//! LU's steady-state residual (the reference's rhs) and forcing term (erhs): the same
//! flux-difference operator (convective fluxes, viscous fluxes, 4th-order dissipation in
//! i, j and k), applied to u for the residual and to the exact solution for the forcing.
//! The i and j passes first refresh two ghost layers with exchange_3.

use super::exchange::exchange_3;
use super::grid::Sub;
use crate::cfd::constants::{Constants, C1, C2, C3, C4, C5};
use crate::cfd::diss_coef;
use crate::common::NpbError;
use volpex::Communicator;

/// out += operator(w) on the interior points; `w`'s ghosts are refreshed first.
pub fn operator(
    comm: &Communicator,
    s: &Sub,
    k: &Constants,
    w: &mut [f64],
    flux: &mut [f64],
    out: &mut [f64],
) -> Result<(), NpbError> {
    exchange_3(comm, s, w, 0)?;
    direction(s, k, 0, w, flux, out);
    exchange_3(comm, s, w, 1)?;
    direction(s, k, 1, w, flux, out);
    direction(s, k, 2, w, flux, out);
    Ok(())
}

/// Convective and viscous flux differences plus dissipation in direction `d`.
fn direction(s: &Sub, k: &Constants, d: usize, w: &[f64], flux: &mut [f64], out: &mut [f64]) {
    let (n, lo_bnd, hi_bnd) = match d {
        0 => (s.nx as isize, s.north.is_none(), s.south.is_none()),
        1 => (s.ny as isize, s.west.is_none(), s.east.is_none()),
        _ => (s.nz as isize, true, true),
    };
    let l1 = if lo_bnd { 1 } else { 0 };
    let l2 = if hi_bnd { n } else { n + 1 };
    let st = if lo_bnd { 2 } else { 1 };
    let en = if hi_bnd { n - 1 } else { n };
    let sd = s.stride(d);
    let (t1, t2, t3) = (k.t1[d], k.t2[d], k.t3[d]);
    let dd = k.dd[d];
    let nm = d + 1;
    // Lines along d: the two other coordinates over their interior ranges.
    let (ra, rb): ((isize, isize), (isize, isize)) = match d {
        0 => ((s.jst, s.jend), (2, s.nz as isize - 1)),
        1 => ((s.ist, s.iend), (2, s.nz as isize - 1)),
        _ => ((s.ist, s.iend), (s.jst, s.jend)),
    };
    let base = |a: isize, b: isize| -> usize {
        match d {
            0 => s.at(0, a, b),
            1 => s.at(a, 0, b),
            _ => s.at(a, b, 0),
        }
    };
    let wt: Vec<[f64; 5]> = (0..=n)
        .map(|p| {
            if p >= st && p <= en {
                diss_coef(
                    (p - 1) as usize,
                    n as usize,
                    lo_bnd as usize,
                    hi_bnd as usize,
                )
            } else {
                [0.0; 5]
            }
        })
        .collect();
    let r43 = 4.0 / 3.0;
    let c1c5 = C1 * C5;
    for b in rb.0..=rb.1 {
        for a in ra.0..=ra.1 {
            let b0 = base(a, b);
            let at = |p: isize| (b0 as isize + p * sd as isize) as usize;
            // Convective fluxes.
            let (cl, ch) = if d == 2 { (1, n) } else { (l1, l2) };
            for p in cl..=ch {
                let q = at(p);
                let u = &w[q..q + 5];
                let un = u[nm] / u[0];
                let qq = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) / u[0];
                let mut f = [
                    u[nm],
                    u[1] * un,
                    u[2] * un,
                    u[3] * un,
                    (C1 * u[4] - C2 * qq) * un,
                ];
                f[nm] += C2 * (u[4] - qq);
                flux[q..q + 5].copy_from_slice(&f);
            }
            for p in st..=en {
                let q = at(p);
                let (qp, qm) = (q + sd, q - sd);
                for m in 0..5 {
                    out[q + m] -= t2 * (flux[qp + m] - flux[qm + m]);
                }
            }
            // Viscous fluxes.
            for p in st..=l2 {
                let q = at(p);
                let qm = q - sd;
                let tmp = 1.0 / w[q];
                let ui = [
                    tmp * w[q + 1],
                    tmp * w[q + 2],
                    tmp * w[q + 3],
                    tmp * w[q + 4],
                ];
                let tmp = 1.0 / w[qm];
                let um = [
                    tmp * w[qm + 1],
                    tmp * w[qm + 2],
                    tmp * w[qm + 3],
                    tmp * w[qm + 4],
                ];
                for c in 0..3 {
                    let coef = if c + 1 == nm { r43 * t3 } else { t3 };
                    flux[q + 1 + c] = coef * (ui[c] - um[c]);
                }
                flux[q + 4] = 0.50
                    * (1.0 - c1c5)
                    * t3
                    * ((ui[0] * ui[0] + ui[1] * ui[1] + ui[2] * ui[2])
                        - (um[0] * um[0] + um[1] * um[1] + um[2] * um[2]))
                    + (1.0 / 6.0) * t3 * (ui[nm - 1] * ui[nm - 1] - um[nm - 1] * um[nm - 1])
                    + c1c5 * t3 * (ui[3] - um[3]);
            }
            for p in st..=en {
                let q = at(p);
                let (qp, qm) = (q + sd, q - sd);
                out[q] += dd[0] * t1 * (w[qm] - 2.0 * w[q] + w[qp]);
                for m in 1..5 {
                    out[q + m] = out[q + m]
                        + t3 * C3 * C4 * (flux[qp + m] - flux[q + m])
                        + dd[m] * t1 * (w[qm + m] - 2.0 * w[q + m] + w[qp + m]);
                }
            }
            // Fourth-order dissipation.
            for p in st..=en {
                let q = at(p);
                let c = wt[p as usize];
                for m in 0..5 {
                    let v = c[0] * w[q - 2 * sd + m]
                        + c[1] * w[q - sd + m]
                        + c[2] * w[q + m]
                        + c[3] * w[q + sd + m]
                        + c[4] * w[q + 2 * sd + m];
                    out[q + m] -= k.dssp * v;
                }
            }
        }
    }
}
