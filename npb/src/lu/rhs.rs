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
    direction::<0>(s, k, w, flux, out);
    exchange_3(comm, s, w, 1)?;
    direction::<1>(s, k, w, flux, out);
    direction::<2>(s, k, w, flux, out);
    Ok(())
}

/// Convective and viscous flux differences plus dissipation in direction `D` (a constant,
/// so that the momentum component along it is a fixed index in the inner loops).
fn direction<const D: usize>(s: &Sub, k: &Constants, w: &[f64], flux: &mut [f64], out: &mut [f64]) {
    let d = D;
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
    let (cl, ch) = if d == 2 { (1, n) } else { (l1, l2) };
    // The passes run block by block (a line for x, a k-plane for y, the whole volume
    // for z) over rows of consecutive i, as the reference's loops do: the flux of a
    // block is complete before its differences are taken, and every pass works on
    // contiguous slices (its rows and their neighbours sd away).
    let blocks: Vec<(isize, isize)> = match d {
        0 => (rb.0..=rb.1)
            .flat_map(|b| (ra.0..=ra.1).map(move |a| (a, b)))
            .collect(),
        1 => (rb.0..=rb.1).map(|b| (0, b)).collect(),
        _ => vec![(0, 0)],
    };
    for (ba, bb) in blocks {
        let blk = Rows {
            s,
            d,
            ra,
            rb,
            a: ba,
            b: bb,
        };
        // Convective fluxes.
        blk.each(cl, ch, |_, q, len| {
            let (u, f) = (&w[q..q + 5 * len], &mut flux[q..q + 5 * len]);
            for (u, f) in u.chunks_exact(5).zip(f.chunks_exact_mut(5)) {
                let un = u[nm] / u[0];
                let qq = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) / u[0];
                f[0] = u[nm];
                f[1] = u[1] * un;
                f[2] = u[2] * un;
                f[3] = u[3] * un;
                f[4] = (C1 * u[4] - C2 * qq) * un;
                f[nm] += C2 * (u[4] - qq);
            }
        });
        blk.each(st, en, |_, q, len| {
            let l = 5 * len;
            let (o, fp, fm) = (
                &mut out[q..q + l],
                &flux[q + sd..q + sd + l],
                &flux[q - sd..q - sd + l],
            );
            for e in 0..l {
                o[e] -= t2 * (fp[e] - fm[e]);
            }
        });
        // Viscous fluxes.
        blk.each(st, l2, |_, q, len| {
            let l = 5 * len;
            let (u, um, f) = (&w[q..q + l], &w[q - sd..q - sd + l], &mut flux[q..q + l]);
            for ((u, um), f) in u
                .chunks_exact(5)
                .zip(um.chunks_exact(5))
                .zip(f.chunks_exact_mut(5))
            {
                let tmp = 1.0 / u[0];
                let ui = [tmp * u[1], tmp * u[2], tmp * u[3], tmp * u[4]];
                let tmp = 1.0 / um[0];
                let um = [tmp * um[1], tmp * um[2], tmp * um[3], tmp * um[4]];
                for c in 0..3 {
                    let coef = if c + 1 == nm { r43 * t3 } else { t3 };
                    f[1 + c] = coef * (ui[c] - um[c]);
                }
                f[4] = 0.50
                    * (1.0 - c1c5)
                    * t3
                    * ((ui[0] * ui[0] + ui[1] * ui[1] + ui[2] * ui[2])
                        - (um[0] * um[0] + um[1] * um[1] + um[2] * um[2]))
                    + (1.0 / 6.0) * t3 * (ui[nm - 1] * ui[nm - 1] - um[nm - 1] * um[nm - 1])
                    + c1c5 * t3 * (ui[3] - um[3]);
            }
        });
        blk.each(st, en, |_, q, len| {
            let l = 5 * len;
            let o = &mut out[q..q + l];
            let (x, xm, xp) = (&w[q..q + l], &w[q - sd..q - sd + l], &w[q + sd..q + sd + l]);
            let (f, fp) = (&flux[q..q + l], &flux[q + sd..q + sd + l]);
            for (((o, x), (xm, xp)), (f, fp)) in o
                .chunks_exact_mut(5)
                .zip(x.chunks_exact(5))
                .zip(xm.chunks_exact(5).zip(xp.chunks_exact(5)))
                .zip(f.chunks_exact(5).zip(fp.chunks_exact(5)))
            {
                o[0] += dd[0] * t1 * (xm[0] - 2.0 * x[0] + xp[0]);
                for m in 1..5 {
                    o[m] = o[m]
                        + t3 * C3 * C4 * (fp[m] - f[m])
                        + dd[m] * t1 * (xm[m] - 2.0 * x[m] + xp[m]);
                }
            }
        });
        // Fourth-order dissipation (along x the weights change from point to point).
        blk.each(st, en, |p, q, len| {
            let l = 5 * len;
            let o = &mut out[q..q + l];
            let [x0, x1, x2, x3, x4] = [-2isize, -1, 0, 1, 2]
                .map(|o| w[(q as isize + o * sd as isize) as usize..][..l].chunks_exact(5));
            let rows = x0.zip(x1).zip(x2).zip(x3).zip(x4);
            for (t, (o, ((((x0, x1), x2), x3), x4))) in o.chunks_exact_mut(5).zip(rows).enumerate()
            {
                let c = wt[(if D == 0 { p + t as isize } else { p }) as usize];
                for m in 0..5 {
                    let v =
                        c[0] * x0[m] + c[1] * x1[m] + c[2] * x2[m] + c[3] * x3[m] + c[4] * x4[m];
                    o[m] -= k.dssp * v;
                }
            }
        });
    }
}

/// One block of a direction's passes: the line (a, b) = (j, k) along x, the plane
/// k = b along y, or the whole volume along z; `ra` and `rb` are the ranges of the two
/// other coordinates (inner first).
struct Rows<'a> {
    s: &'a Sub,
    d: usize,
    ra: (isize, isize),
    rb: (isize, isize),
    a: isize,
    b: isize,
}

impl Rows<'_> {
    /// Calls `f(p, q, len)` for the rows of consecutive i that make up the block's
    /// points at positions lo..=hi along the direction: `len` points from index `q`,
    /// at position `p` (along x, the row is the line and `p` its first position).
    #[inline(always)]
    fn each(&self, lo: isize, hi: isize, mut f: impl FnMut(isize, usize, usize)) {
        let s = self.s;
        let ni = (self.ra.1 - self.ra.0 + 1) as usize;
        match self.d {
            0 => f(lo, s.at(lo, self.a, self.b), (hi - lo + 1) as usize),
            1 => {
                for p in lo..=hi {
                    f(p, s.at(self.ra.0, p, self.b), ni);
                }
            }
            _ => {
                for p in lo..=hi {
                    for j in self.rb.0..=self.rb.1 {
                        f(p, s.at(self.ra.0, j, p), ni);
                    }
                }
            }
        }
    }
}
