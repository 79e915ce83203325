//! LU: the Lower-Upper symmetric Gauss-Seidel pseudo-application (NPB 3.x MPI). Owns
//! LU's class table, official values, boundary and initial values (setbv, setiv), the
//! SSOR time-stepping driver, the norms, the surface integral (pintgr) and the report.
//! The decomposition is in [`grid`], the messages in [`exchange`], the residual in
//! [`rhs`], the triangular sweeps in [`ssor`]; the exact solution and the verification
//! are shared with BT and SP ([`crate::cfd`]).

#![allow(clippy::needless_range_loop)]
// The official values are kept digit for digit as published.
#![allow(clippy::excessive_precision)]

pub mod exchange;
pub mod grid;
pub mod rhs;
pub mod ssor;

use serde::{Deserialize, Serialize};

use crate::cfd::constants::{exact_solution, Constants, C2, CE};
use crate::cfd::verify::{compare, max_time, Refs};
use crate::checkpoint::{ensure, Checkpoints, F64s};
use crate::common::{Class, NpbError, Report};
use exchange::{exchange_4, exchange_5, exchange_6, Plane};
use grid::Sub;
use ssor::Jac;
use volpex::Communicator;

/// Grid points per direction, iterations and time step of a class (setparams).
fn params(class: Class) -> (usize, u64, f64) {
    match class {
        Class::S => (12, 50, 0.5),
        Class::W => (33, 300, 1.5e-3),
        Class::A => (64, 250, 2.0),
        Class::B => (102, 250, 2.0),
        Class::C => (162, 250, 2.0),
    }
}

/// The relaxation factor.
const OMEGA: f64 = 1.2;
/// Default checkpoint interval, in SSOR steps.
const CHECKPOINT_EVERY: u64 = 10;

/// What the rest of a run needs after an SSOR step: u, the residual rsd the step ended
/// with (the next step starts from it), the forcing term frct (erhs exchanges ghost
/// values, so a restored replica cannot rebuild it alone), the latest residual norms and
/// the timer. flux and the Jacobians are rebuilt by every step.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct State<'a> {
    /// SSOR steps done.
    done: u64,
    rsdnm: [f64; 5],
    /// Seconds of the timed section so far.
    elapsed: f64,
    u: F64s<'a>,
    rsd: F64s<'a>,
    frct: F64s<'a>,
}

/// Where an SSOR run starts: from the start (with its pre-loop residual and barrier),
/// or after a restored checkpoint.
enum Start<'a> {
    Fresh,
    Restored(State<'a>),
}

/// The official values (npb-verification.md); none are on file for class C.
fn refs(class: Class) -> Option<Refs> {
    let (dt, xcr, xce, xci) = match class {
        Class::S => (
            0.5,
            [
                1.6196343210976702e-02,
                2.1976745164821318e-03,
                1.5179927653399185e-03,
                1.5029584435994323e-03,
                3.4264073155896461e-02,
            ],
            [
                6.4223319957960924e-04,
                8.4144342047347926e-05,
                5.8588269616485186e-05,
                5.8474222595157350e-05,
                1.3103347914111294e-03,
            ],
            7.8418928865937083e+00,
        ),
        Class::W => (
            1.5e-3,
            [
                0.1236511638192e+02,
                0.1317228477799e+01,
                0.2550120713095e+01,
                0.2326187750252e+01,
                0.2826799444189e+02,
            ],
            [
                0.4867877144216e+00,
                0.5064652880982e-01,
                0.9281818101960e-01,
                0.8570126542733e-01,
                0.1084277417792e+01,
            ],
            0.1161399311023e+02,
        ),
        Class::A => (
            2.0,
            [
                7.7902107606689367e+02,
                6.3402765259692870e+01,
                1.9499249727292479e+02,
                1.7845301160418537e+02,
                1.8384760349464247e+03,
            ],
            [
                2.9964085685471943e+01,
                2.8194576365003349e+00,
                7.3473412698774742e+00,
                6.7139225687777051e+00,
                7.0715315688392578e+01,
            ],
            2.6030925604886277e+01,
        ),
        Class::B => (
            2.0,
            [
                3.5532672969982736e+03,
                2.6214750795310692e+02,
                8.8333721850952190e+02,
                7.7812774739425265e+02,
                7.3087969592545314e+03,
            ],
            [
                1.1401176380212709e+02,
                8.1098963655421574e+00,
                2.8480597317698308e+01,
                2.5905394567832939e+01,
                2.6054907504857413e+02,
            ],
            4.7887162703308227e+01,
        ),
        Class::C => return None,
    };
    Some(Refs {
        dt,
        xcr,
        xce,
        xci: Some(xci),
    })
}

/// One process's LU state.
struct Lu {
    s: Sub,
    k: Constants,
    u: Vec<f64>,
    rsd: Vec<f64>,
    frct: Vec<f64>,
    flux: Vec<f64>,
    jac: Jac,
    comm: Communicator,
}

/// The exact solution at global grid point (i, j, k) (1-based), as the reference's exact.
fn exact(s: &Sub, i: usize, j: usize, k: usize) -> [f64; 5] {
    let xi = (i as f64 - 1.0) / (s.n0[0] as f64 - 1.0);
    let eta = (j as f64 - 1.0) / (s.n0[1] as f64 - 1.0);
    let zeta = (k as f64 - 1.0) / (s.n0[2] as f64 - 1.0);
    exact_solution(xi, eta, zeta)
}

impl Lu {
    fn set_point(v: &mut [f64], p: usize, x: [f64; 5]) {
        v[p..p + 5].copy_from_slice(&x);
    }

    /// setbv: exact values on the six faces.
    fn setbv(&mut self) {
        let s = &self.s;
        let (nx, ny, nz) = (s.nx as isize, s.ny as isize, s.nz as isize);
        for j in 1..=ny {
            let jg = s.jpt + j as usize;
            for i in 1..=nx {
                let ig = s.ipt + i as usize;
                Self::set_point(&mut self.u, s.at(i, j, 1), exact(s, ig, jg, 1));
                Self::set_point(&mut self.u, s.at(i, j, nz), exact(s, ig, jg, s.nz));
            }
        }
        for k in 1..=nz {
            for i in 1..=nx {
                let ig = s.ipt + i as usize;
                if s.west.is_none() {
                    Self::set_point(&mut self.u, s.at(i, 1, k), exact(s, ig, 1, k as usize));
                }
                if s.east.is_none() {
                    let v = exact(s, ig, s.n0[1], k as usize);
                    Self::set_point(&mut self.u, s.at(i, ny, k), v);
                }
            }
            for j in 1..=ny {
                let jg = s.jpt + j as usize;
                if s.north.is_none() {
                    Self::set_point(&mut self.u, s.at(1, j, k), exact(s, 1, jg, k as usize));
                }
                if s.south.is_none() {
                    let v = exact(s, s.n0[0], jg, k as usize);
                    Self::set_point(&mut self.u, s.at(nx, j, k), v);
                }
            }
        }
    }

    /// setiv: trilinear interpolation of the boundary values inside.
    fn setiv(&mut self) {
        let s = &self.s;
        let (nx0, ny0, nz) = (s.n0[0], s.n0[1], s.nz);
        for k in 2..nz {
            let zeta = (k as f64 - 1.0) / (nz as f64 - 1.0);
            for j in 1..=s.ny {
                let jg = s.jpt + j;
                if jg == 1 || jg == ny0 {
                    continue;
                }
                let eta = (jg as f64 - 1.0) / (ny0 as f64 - 1.0);
                for i in 1..=s.nx {
                    let ig = s.ipt + i;
                    if ig == 1 || ig == nx0 {
                        continue;
                    }
                    let xi = (ig as f64 - 1.0) / (nx0 as f64 - 1.0);
                    let e1 = exact(s, 1, jg, k);
                    let e2 = exact(s, nx0, jg, k);
                    let e3 = exact(s, ig, 1, k);
                    let e4 = exact(s, ig, ny0, k);
                    let e5 = exact(s, ig, jg, 1);
                    let e6 = exact(s, ig, jg, nz);
                    let p = s.at(i as isize, j as isize, k as isize);
                    for m in 0..5 {
                        let pxi = (1.0 - xi) * e1[m] + xi * e2[m];
                        let peta = (1.0 - eta) * e3[m] + eta * e4[m];
                        let pzeta = (1.0 - zeta) * e5[m] + zeta * e6[m];
                        self.u[p + m] =
                            pxi + peta + pzeta - pxi * peta - peta * pzeta - pzeta * pxi
                                + pxi * peta * pzeta;
                    }
                }
            }
        }
    }

    /// erhs: the forcing term, the operator applied to the exact solution.
    fn erhs(&mut self) -> Result<(), NpbError> {
        let s = self.s.clone();
        self.frct.fill(0.0);
        let mut w = vec![0.0; s.len5()];
        for k in 1..=s.nz {
            let zeta = (k as f64 - 1.0) / (s.nz as f64 - 1.0);
            for j in 1..=s.ny {
                let eta = ((s.jpt + j) as f64 - 1.0) / (s.n0[1] as f64 - 1.0);
                for i in 1..=s.nx {
                    let xi = ((s.ipt + i) as f64 - 1.0) / (s.n0[0] as f64 - 1.0);
                    let p = s.at(i as isize, j as isize, k as isize);
                    for m in 0..5 {
                        let c = &CE[m];
                        w[p + m] = c[0]
                            + c[1] * xi
                            + c[2] * eta
                            + c[3] * zeta
                            + c[4] * xi * xi
                            + c[5] * eta * eta
                            + c[6] * zeta * zeta
                            + c[7] * xi * xi * xi
                            + c[8] * eta * eta * eta
                            + c[9] * zeta * zeta * zeta
                            + c[10] * xi * xi * xi * xi
                            + c[11] * eta * eta * eta * eta
                            + c[12] * zeta * zeta * zeta * zeta;
                    }
                }
            }
        }
        rhs::operator(
            &self.comm,
            &s,
            &self.k,
            &mut w,
            &mut self.flux,
            &mut self.frct,
        )
    }

    /// rhs: rsd = operator(u) - frct.
    fn rhs(&mut self) -> Result<(), NpbError> {
        for (r, f) in self.rsd.iter_mut().zip(&self.frct) {
            *r = -f;
        }
        rhs::operator(
            &self.comm,
            &self.s,
            &self.k,
            &mut self.u,
            &mut self.flux,
            &mut self.rsd,
        )
    }

    /// l2norm of rsd over the interior.
    fn l2norm(&self, v: &[f64]) -> Result<[f64; 5], NpbError> {
        let s = &self.s;
        let mut sum = [0.0; 5];
        for k in 2..s.nz as isize {
            for j in s.jst..=s.jend {
                for i in s.ist..=s.iend {
                    let p = s.at(i, j, k);
                    for m in 0..5 {
                        sum[m] += v[p + m] * v[p + m];
                    }
                }
            }
        }
        let mut out = [0.0; 5];
        self.comm
            .all_reduce_into(&sum[..], &mut out[..], volpex::SystemOperation::sum())?;
        let n = ((s.n0[0] - 2) * (s.n0[1] - 2) * (s.n0[2] - 2)) as f64;
        Ok(out.map(|x| (x / n).sqrt()))
    }

    /// error: RMS norm of u minus the exact solution over the interior.
    fn error(&self) -> Result<[f64; 5], NpbError> {
        let s = &self.s;
        let mut e = vec![0.0; s.len5()];
        for k in 2..s.nz as isize {
            for j in s.jst..=s.jend {
                for i in s.ist..=s.iend {
                    let p = s.at(i, j, k);
                    let x = exact(s, s.ipt + i as usize, s.jpt + j as usize, k as usize);
                    for m in 0..5 {
                        e[p + m] = x[m] - self.u[p + m];
                    }
                }
            }
        }
        self.l2norm(&e)
    }

    /// One SSOR run of `niter` steps from `start`, checkpointing after steps when `ck`
    /// is given; returns the residual norms and the time.
    fn ssor(
        &mut self,
        niter: u64,
        itmax: u64,
        start: Start,
        ck: Option<&Checkpoints>,
    ) -> Result<([f64; 5], f64), NpbError> {
        let s = self.s.clone();
        let k = self.k.clone();
        let tmp = 1.0 / (OMEGA * (2.0 - OMEGA));
        let nz = s.nz as isize;
        let (first, mut rsdnm, t0) = match start {
            Start::Fresh => {
                self.rhs()?;
                let rsdnm = self.l2norm(&self.rsd)?;
                self.comm.barrier()?;
                (0, rsdnm, volpex::wtime())
            }
            Start::Restored(st) => {
                ensure(st.done <= niter, "LU step")?;
                st.u.copy_into(&mut self.u, "LU u")?;
                st.rsd.copy_into(&mut self.rsd, "LU rsd")?;
                st.frct.copy_into(&mut self.frct, "LU frct")?;
                (st.done, st.rsdnm, volpex::wtime() - st.elapsed)
            }
        };
        let inorm = itmax;
        for istep in first + 1..=niter {
            // Rows of consecutive i: (kk, j) -> index of (ist, j, kk), 5 values a point.
            let row_len = 5 * (s.iend - s.ist + 1) as usize;
            for kk in 2..nz {
                for j in s.jst..=s.jend {
                    let p = s.at(s.ist, j, kk);
                    for r in &mut self.rsd[p..p + row_len] {
                        *r *= k.dt;
                    }
                }
            }
            for kk in 2..nz {
                let (u, rsd) = (&self.u, &mut self.rsd);
                ssor::lower(&self.comm, &s, &k, u, OMEGA, rsd, &mut self.jac, kk)?;
            }
            for kk in (2..nz).rev() {
                let (u, rsd) = (&self.u, &mut self.rsd);
                ssor::upper(&self.comm, &s, &k, u, OMEGA, rsd, &mut self.jac, kk)?;
            }
            for kk in 2..nz {
                for j in s.jst..=s.jend {
                    let p = s.at(s.ist, j, kk);
                    let rsd = &self.rsd[p..p + row_len];
                    for (u, r) in self.u[p..p + row_len].iter_mut().zip(rsd) {
                        *u += tmp * *r;
                    }
                }
            }
            if istep % inorm == 0 {
                // The norm of the correction (the reference computes and drops it).
                self.l2norm(&self.rsd)?;
            }
            self.rhs()?;
            if istep % inorm == 0 || istep == itmax {
                rsdnm = self.l2norm(&self.rsd)?;
            }
            if rsdnm.iter().all(|&r| r < 1.0e-8) {
                break;
            }
            if let Some(ck) = ck {
                ck.save(&self.comm, CHECKPOINT_EVERY, (istep, niter), || State {
                    done: istep,
                    rsdnm,
                    elapsed: volpex::wtime() - t0,
                    u: F64s::of(&self.u),
                    rsd: F64s::of(&self.rsd),
                    frct: F64s::of(&self.frct),
                })?;
            }
        }
        let t = volpex::wtime() - t0;
        Ok((rsdnm, t))
    }

    /// pintgr: the surface integral of the pressure over a box inside the grid.
    fn pintgr(&self) -> Result<f64, NpbError> {
        let s = &self.s;
        let (nx, ny) = (s.nx as isize, s.ny as isize);
        let (ipt, jpt) = (s.ipt as isize, s.jpt as isize);
        let (ii1, ii2) = (2isize, s.n0[0] as isize - 1);
        let (ji1, ji2) = (2isize, s.n0[1] as isize - 2);
        let (ki1, ki2) = (3isize, s.n0[2] as isize - 1);
        let mut ibeg = nx + 1;
        let mut ifin = 0;
        let (ig1, ig2) = (ipt + 1, ipt + nx);
        if ig1 >= ii1 && ig2 < ii2 + nx {
            ibeg = 1;
        }
        if ig1 > ii1 - nx && ig2 <= ii2 {
            ifin = nx;
        }
        if ii1 >= ig1 && ii1 <= ig2 {
            ibeg = ii1 - ipt;
        }
        if ii2 >= ig1 && ii2 <= ig2 {
            ifin = ii2 - ipt;
        }
        let mut jbeg = ny + 1;
        let mut jfin = 0;
        let (jg1, jg2) = (jpt + 1, jpt + ny);
        if jg1 >= ji1 && jg2 < ji2 + ny {
            jbeg = 1;
        }
        if jg1 > ji1 - ny && jg2 <= ji2 {
            jfin = ny;
        }
        if ji1 >= jg1 && ji1 <= jg2 {
            jbeg = ji1 - jpt;
        }
        if ji2 >= jg1 && ji2 <= jg2 {
            jfin = ji2 - jpt;
        }
        let mut ifin1 = ifin;
        let mut jfin1 = jfin;
        if ipt + ifin1 == ii2 {
            ifin1 = ifin - 1;
        }
        if jpt + jfin1 == ji2 {
            jfin1 = jfin - 1;
        }
        let pressure = |i: isize, j: isize, k: isize| {
            let p = s.at(i, j, k);
            let u = &self.u[p..p + 5];
            C2 * (u[4] - 0.50 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) / u[0])
        };
        let dim = s.nx.max(s.ny).max(s.nz);
        let sum = |comm: &Communicator, x: f64| -> Result<f64, NpbError> {
            let mut out = [0.0];
            comm.all_reduce_into(&[x][..], &mut out[..], volpex::SystemOperation::sum())?;
            Ok(out[0])
        };
        let quad = |g: &Plane, h: &Plane, a0: isize, a1: isize, b0: isize, b1: isize| {
            let mut f = 0.0;
            for b in b0..=b1 {
                for a in a0..=a1 {
                    f += g.v[g.at(a, b)]
                        + g.v[g.at(a + 1, b)]
                        + g.v[g.at(a, b + 1)]
                        + g.v[g.at(a + 1, b + 1)]
                        + h.v[h.at(a, b)]
                        + h.v[h.at(a + 1, b)]
                        + h.v[h.at(a, b + 1)]
                        + h.v[h.at(a + 1, b + 1)];
                }
            }
            f
        };
        // k = ki1 and k = ki2 faces.
        let mut phi1 = Plane::new(dim);
        let mut phi2 = Plane::new(dim);
        for j in jbeg..=jfin {
            for i in ibeg..=ifin {
                let (a, b) = (phi1.at(i, j), phi2.at(i, j));
                phi1.v[a] = pressure(i, j, ki1);
                phi2.v[b] = pressure(i, j, ki2);
            }
        }
        exchange_4(
            &self.comm, s, &mut phi1, &mut phi2, ibeg, ifin1, jbeg, jfin1,
        )?;
        let frc1 =
            s_dxi(s) * s_deta(s) * sum(&self.comm, quad(&phi1, &phi2, ibeg, ifin1, jbeg, jfin1))?;
        // j = ji1 and j = ji2 faces.
        let mut phi1 = Plane::new(dim);
        let mut phi2 = Plane::new(dim);
        let ind1 = jpt + jbeg == ji1;
        if ind1 {
            for k in ki1..=ki2 {
                for i in ibeg..=ifin {
                    let a = phi1.at(i, k);
                    phi1.v[a] = pressure(i, jbeg, k);
                }
            }
        }
        let ind2 = jpt + jfin == ji2;
        if ind2 {
            for k in ki1..=ki2 {
                for i in ibeg..=ifin {
                    let a = phi2.at(i, k);
                    phi2.v[a] = pressure(i, jfin, k);
                }
            }
        }
        if ind1 {
            exchange_5(&self.comm, s, &mut phi1, ibeg, ifin1)?;
        }
        if ind2 {
            exchange_5(&self.comm, s, &mut phi2, ibeg, ifin1)?;
        }
        let frc2 =
            s_dxi(s) * s_dzeta(s) * sum(&self.comm, quad(&phi1, &phi2, ibeg, ifin1, ki1, ki2 - 1))?;
        // i = ii1 and i = ii2 faces.
        let mut phi1 = Plane::new(dim);
        let mut phi2 = Plane::new(dim);
        let ind1 = ipt + ibeg == ii1;
        if ind1 {
            for k in ki1..=ki2 {
                for j in jbeg..=jfin {
                    let a = phi1.at(j, k);
                    phi1.v[a] = pressure(ibeg, j, k);
                }
            }
        }
        let ind2 = ipt + ifin == ii2;
        if ind2 {
            for k in ki1..=ki2 {
                for j in jbeg..=jfin {
                    let a = phi2.at(j, k);
                    phi2.v[a] = pressure(ifin, j, k);
                }
            }
        }
        if ind1 {
            exchange_6(&self.comm, s, &mut phi1, jbeg, jfin1)?;
        }
        if ind2 {
            exchange_6(&self.comm, s, &mut phi2, jbeg, jfin1)?;
        }
        let frc3 = s_deta(s)
            * s_dzeta(s)
            * sum(&self.comm, quad(&phi1, &phi2, jbeg, jfin1, ki1, ki2 - 1))?;
        Ok(0.25 * (frc1 + frc2 + frc3))
    }
}

fn s_dxi(s: &Sub) -> f64 {
    1.0 / (s.n0[0] as f64 - 1.0)
}
fn s_deta(s: &Sub) -> f64 {
    1.0 / (s.n0[1] as f64 - 1.0)
}
fn s_dzeta(s: &Sub) -> f64 {
    1.0 / (s.n0[2] as f64 - 1.0)
}

/// Runs LU of `class` on `world` (a power-of-two number of ranks), checkpointing after
/// SSOR steps.
pub fn run(world: &Communicator, class: Class, ck: &Checkpoints) -> Result<Report, NpbError> {
    let (size, itmax, dt) = params(class);
    let s = Sub::new(world.size(), world.rank(), size)?;
    let root = world.rank() == 0;
    let restored = ck.restored::<State>()?;
    // A restored replica printed the banner before its checkpoint.
    if root && restored.is_none() {
        println!("\n\n NAS Parallel Benchmarks 3.4 -- LU Benchmark\n");
        println!(" Size: {size:4}x{size:4}x{size:4}");
        println!(" Iterations: {itmax:4}");
        println!(" Number of processes: {:5}\n", world.size());
    }
    let n = s.len5();
    let mut lu = Lu {
        k: Constants::new([size; 3], dt),
        u: vec![0.0; n],
        rsd: vec![0.0; n],
        frct: vec![0.0; n],
        flux: vec![0.0; n],
        jac: Jac::new(&s),
        comm: world.duplicate(),
        s,
    };
    let start = match restored {
        Some(st) => Start::Restored(st),
        None => {
            lu.setbv();
            lu.setiv();
            lu.erhs()?;
            // One iteration to touch all code and data, then start again.
            lu.ssor(1, itmax, Start::Fresh, None)?;
            lu.setbv();
            lu.setiv();
            Start::Fresh
        }
    };
    let (xcr, t) = lu.ssor(itmax, itmax, start, Some(ck))?;
    let tmax = max_time(world, t)?;
    let xce = lu.error()?;
    let xci = lu.pintgr()?;
    let verified = compare(root, dt, &xcr, &xce, Some(xci), refs(class));
    let (f, nn) = (size as f64, 3.0 * size as f64);
    let mops = if tmax > 0.0 {
        itmax as f64
            * (1984.77 * f * f * f - 10923.3 * (nn / 3.0) * (nn / 3.0) + 27770.9 * nn / 3.0
                - 144010.0)
            / (tmax * 1.0e6)
    } else {
        0.0
    };
    Ok(Report {
        name: "LU",
        class,
        size: (size as u64, size as u64, size as u64),
        iterations: itmax,
        seconds: tmax,
        processes: world.size(),
        mops_total: mops,
        operation: "floating point",
        verified,
        checks: xcr.iter().chain(&xce).copied().chain([xci]).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class S resumed from each of its checkpoints (as a regenerated replica restored
    /// from it) gives the uninterrupted run's results bit for bit; its states survive
    /// the postcard round trip.
    #[test]
    fn class_s_resumes_from_every_checkpoint() {
        let recorded = crate::checkpoint::assert_resumes_from_every_checkpoint(run, Class::S, None);
        crate::checkpoint::assert_states_round_trip::<State>(&recorded);
    }
}
