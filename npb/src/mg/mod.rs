//! MG, multigrid (NPB 3.3 MPI `MG/mg.f`): V-cycles of a 3-D Poisson solver on a periodic
//! grid split over a 3-D process grid. Owns the level hierarchy and the V-cycle, the
//! random right-hand side (zran3), the norms, checkpoints and the report. The
//! decomposition and the halo exchanges are in [`grid`], the stencil kernels in
//! [`stencils`].

mod grid;
mod stencils;

use serde::{Deserialize, Serialize};
use volpex::{Communicator, SystemOperation};

use crate::checkpoint::{ensure, interval_for, Checkpoints, F64s};
use crate::common::{
    broadcast_from_root, log2, max_time_at_root, pow_mod46, randlc, rel_ok, require_power_of_two,
    vranlc, Class, NpbError, Report, RANDLC_A,
};
use grid::{at, row, Halo, Layout};
use stencils::{interp, interp_thin, psinv, resid, rprj3};

/// Verification tolerance.
const EPSILON: f64 = 1.0e-8;
/// Charges of each sign placed by zran3.
const MM: usize = 10;
/// Default checkpoint interval in V-cycles when the state is large (see
/// `checkpoint::interval_for`): at class A and above a checkpoint costs about two
/// V-cycles, and a rank sends about 6 MB per V-cycle at class A on 4 ranks, so a
/// sender retains at most about 40 MB for a regenerated replica. Class A (4 V-cycles)
/// then takes none: replaying it from the start needs about 35 MB of log per rank.
const CHECKPOINT_EVERY_LARGE: u64 = 5;
/// What the rest of a run needs after a V-cycle and its residual: u on the finest
/// level, ghosts included, and r's ghost layers (r's interior is v - A u, recomputed
/// locally by resid; every coarser level is rebuilt by the next V-cycle), the
/// right-hand side v as its few nonzero points (zran3 places +1 and -1 at twenty points
/// of the whole grid) and the timer.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct State<'a> {
    /// V-cycles done.
    done: u64,
    /// Seconds of the timed section so far.
    elapsed: f64,
    u: F64s<'a>,
    /// r's ghost layers, in `shell` order.
    r_shell: F64s<'a>,
    /// (index, value) of every nonzero of v, ghosts included.
    v: Vec<(u64, f64)>,
}

/// Grid edge, iterations, official L2 norm of the residual.
fn params(class: Class) -> (usize, usize, f64) {
    match class {
        Class::S => (32, 4, 0.530_770_700_573_4e-4),
        Class::W => (128, 4, 0.646_732_937_533_9e-5),
        Class::A => (256, 4, 0.243_336_530_906_9e-5),
        Class::B => (256, 20, 0.180_056_440_135_5e-5),
        Class::C => (512, 20, 0.570_673_228_574e-6),
    }
}

/// The smoother S(a) (classes S, W, A) or S(b).
fn smoother(class: Class) -> [f64; 4] {
    match class {
        Class::S | Class::W | Class::A => [-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0],
        Class::B | Class::C => [-3.0 / 17.0, 1.0 / 33.0, -1.0 / 61.0, 0.0],
    }
}
/// One rank's solver state: u and r on every level, v on the finest.
struct Solver<'a> {
    world: &'a Communicator,
    lay: Layout,
    halo: Halo<'a>,
    u: Vec<Vec<f64>>,
    r: Vec<Vec<f64>>,
    v: Vec<f64>,
    c: [f64; 4],
    /// Scratch rows for the stencils.
    s1: Vec<f64>,
    s2: Vec<f64>,
    s3: Vec<f64>,
}

/// Runs MG on `world`, checkpointing after V-cycles.
pub fn run(world: &Communicator, class: Class, ck: &Checkpoints) -> Result<Report, NpbError> {
    let nprocs = world.size();
    require_power_of_two("MG", nprocs)?;
    let (nx, nit, verify_value) = params(class);
    let restored = ck.restored::<State>()?;
    let (nx, nit) = match restored {
        // Rank 0 broadcast the compiled defaults before the checkpoint.
        Some(_) => (nx, nit),
        None => broadcast_input(world, nx, nit)?,
    };
    let mut s = Solver::new(world, class, nx)?;
    let lt = s.lay.lt;
    let dn = (nx * nx * nx) as f64;

    let (first, t0) = match restored {
        Some(st) => {
            ensure(st.done <= nit as u64, "MG iteration")?;
            st.u.copy_into(&mut s.u[lt], "MG u")?;
            for &(i, x) in &st.v {
                let slot = usize::try_from(i).ok().and_then(|i| s.v.get_mut(i));
                *slot.ok_or_else(|| crate::checkpoint::misfit("MG v"))? = x;
            }
            s.restore_r(&st.r_shell.0)?;
            (st.done, volpex::wtime() - st.elapsed)
        }
        None => {
            // Untimed start: one V-cycle to touch everything, then start over.
            s.zran3(nx)?;
            s.norm2u3_v(dn)?;
            s.resid_top()?;
            s.norm2u3_r(dn)?;
            s.mg3p()?;
            s.resid_top()?;
            s.u[lt].fill(0.0);
            s.zran3(nx)?;

            world.barrier()?;
            let t0 = volpex::wtime();
            s.resid_top()?;
            s.norm2u3_r(dn)?;
            (0, t0)
        }
    };
    let every = interval_for(8 * s.u[lt].len(), CHECKPOINT_EVERY_LARGE);
    for it in first..nit as u64 {
        s.mg3p()?;
        s.resid_top()?;
        ck.save(world, every, (it + 1, nit as u64), || State {
            done: it + 1,
            elapsed: volpex::wtime() - t0,
            u: F64s::of(&s.u[lt]),
            r_shell: F64s(shell(&s.r[lt], &s.lay.levels[lt].m).into()),
            // v no longer changes: only its nonzeros go in (twenty over all ranks).
            v: s.v
                .iter()
                .enumerate()
                .filter(|(_, &x)| x != 0.0)
                .map(|(i, &x)| (i as u64, x))
                .collect(),
        })?;
    }
    let (rnm2, _rnmu) = s.norm2u3_r(dn)?;
    let elapsed = volpex::wtime() - t0;
    let t = max_time_at_root(world, elapsed)?;

    Ok(Report {
        name: "MG",
        class,
        size: (nx as u64, nx as u64, nx as u64),
        iterations: nit as u64,
        seconds: t,
        processes: nprocs,
        mops_total: if t > 0.0 {
            58.0 * 1.0e-6 * nit as f64 * dn / t
        } else {
            0.0
        },
        operation: "floating point",
        verified: rel_ok(rnm2, verify_value, EPSILON),
        checks: vec![rnm2],
    })
}

/// The reference's broadcasts of what rank 0 read (mg.input or the compiled defaults):
/// lt, nit, nx, ny, nz, the debug vector, the timer flag; returns rank 0's grid and
/// iterations.
fn broadcast_input(
    world: &Communicator,
    nx: usize,
    nit: usize,
) -> Result<(usize, usize), NpbError> {
    let mut input = [log2(nx) as i32, nit as i32, nx as i32, nx as i32, nx as i32];
    for v in input.chunks_mut(1) {
        broadcast_from_root(world, v)?;
    }
    broadcast_from_root(world, &mut [0; 8])?;
    broadcast_from_root(world, &mut [0])?;
    Ok((input[2] as usize, input[1] as usize))
}

impl<'a> Solver<'a> {
    /// The decomposition (the reference's setup) and zeroed arrays on every level.
    fn new(world: &'a Communicator, class: Class, nx: usize) -> Result<Solver<'a>, NpbError> {
        let nprocs = world.size();
        let lay = Layout::new(nx, nprocs as usize, world.rank() as usize);
        let top = lay.levels[lay.lt].m;
        if (top[0] - 2) * (top[1] - 2) * (top[2] - 2) < MM {
            return Err(NpbError::Setup(format!(
                "MG class {class} on {nprocs} processes leaves fewer than {MM} points per process"
            )));
        }
        let u: Vec<Vec<f64>> = lay.levels.iter().map(|l| vec![0.0; l.len()]).collect();
        let width = top.iter().max().copied().unwrap_or(0) + 2;
        Ok(Solver {
            world,
            halo: Halo::new(world, nprocs),
            v: vec![0.0; lay.levels[lay.lt].len()],
            r: u.clone(),
            u,
            lay,
            c: smoother(class),
            s1: vec![0.0; width],
            s2: vec![0.0; width],
            s3: vec![0.0; width],
        })
    }

    /// The V-cycle (mg3P): restrict the residual down to level 1, smooth there, then
    /// interpolate, recompute the residual and smooth on the way up.
    fn mg3p(&mut self) -> Result<(), NpbError> {
        let lt = self.lay.lt;
        for k in (2..=lt).rev() {
            let (coarse, fine) = self.r.split_at_mut(k);
            rprj3(
                &fine[0],
                &self.lay.levels[k].m,
                &mut coarse[k - 1],
                &self.lay.levels[k - 1].m,
                &mut self.s1,
                &mut self.s2,
            );
            self.halo
                .comm3(&mut self.r[k - 1], &self.lay.levels[k - 1])?;
        }
        self.u[1].fill(0.0);
        self.psinv(1)?;
        for k in 2..lt {
            self.u[k].fill(0.0);
            self.interp(k)?;
            let lev = &self.lay.levels[k];
            resid(
                &self.u[k],
                None,
                &mut self.r[k],
                &lev.m,
                [&mut self.s1, &mut self.s2],
            );
            self.halo.comm3(&mut self.r[k], lev)?;
            self.psinv(k)?;
        }
        self.interp(lt)?;
        self.resid_top()?;
        self.psinv(lt)
    }

    /// r = v - A u on the finest level.
    fn resid_top(&mut self) -> Result<(), NpbError> {
        let lt = self.lay.lt;
        let lev = &self.lay.levels[lt];
        resid(
            &self.u[lt],
            Some(&self.v),
            &mut self.r[lt],
            &lev.m,
            [&mut self.s1, &mut self.s2],
        );
        self.halo.comm3(&mut self.r[lt], lev)
    }

    /// r on the finest level as resid_top left it, from u, v and r's ghost layers
    /// `shell` (a restored replica's), without communicating.
    fn restore_r(&mut self, shell: &[f64]) -> Result<(), NpbError> {
        let lt = self.lay.lt;
        let m = self.lay.levels[lt].m;
        resid(
            &self.u[lt],
            Some(&self.v),
            &mut self.r[lt],
            &m,
            [&mut self.s1, &mut self.s2],
        );
        unshell(&mut self.r[lt], &m, shell)
    }

    /// u = u + C r on level `k`, then the halo exchange.
    fn psinv(&mut self, k: usize) -> Result<(), NpbError> {
        let lev = &self.lay.levels[k];
        psinv(
            &self.r[k],
            &mut self.u[k],
            &lev.m,
            &self.c,
            &mut self.s1,
            &mut self.s2,
        );
        self.halo.comm3(&mut self.u[k], lev)
    }

    /// u(k) += the interpolation of u(k - 1), then comm3_ex.
    fn interp(&mut self, k: usize) -> Result<(), NpbError> {
        let (coarse, fine) = self.u.split_at_mut(k);
        let zm = &self.lay.levels[k - 1].m;
        let um = &self.lay.levels[k].m;
        if um.contains(&3) {
            interp_thin(&coarse[k - 1], zm, &mut fine[0], um);
        } else {
            interp(
                &coarse[k - 1],
                zm,
                &mut fine[0],
                um,
                [&mut self.s1, &mut self.s2, &mut self.s3],
            );
        }
        self.halo.comm3_ex(&mut self.u[k], &self.lay.levels[k])
    }

    fn norm2u3_v(&mut self, dn: f64) -> Result<(f64, f64), NpbError> {
        let m = self.lay.levels[self.lay.lt].m;
        norm2u3(self.world, &self.v, &m, dn)
    }

    fn norm2u3_r(&mut self, dn: f64) -> Result<(f64, f64), NpbError> {
        let lt = self.lay.lt;
        norm2u3(self.world, &self.r[lt], &self.lay.levels[lt].m, dn)
    }

    /// zran3: v = 0 except +1 at the ten largest and -1 at the ten smallest of a
    /// uniform random field over the whole grid, found across ranks.
    fn zran3(&mut self, nx: usize) -> Result<(), NpbError> {
        let lt = self.lay.lt;
        let m = self.lay.levels[lt].m;
        let z = &mut self.v;
        z.fill(0.0);
        let a1 = pow_mod46(RANDLC_A, nx as u64);
        let a2 = pow_mod46(RANDLC_A, (nx * nx) as u64);
        let [is1, is2, is3] = self.lay.start.map(|s| (s - 2) as u64);
        let ai = pow_mod46(RANDLC_A, nx as u64 * (is2 + nx as u64 * is3) + is1);
        let mut x0 = 314_159_265.0;
        randlc(&mut x0, ai);
        for i3 in 2..m[2] {
            let mut x1 = x0;
            for i2 in 2..m[1] {
                let mut xx = x1;
                let b = at(&m, 2, i2, i3);
                vranlc(&mut xx, RANDLC_A, &mut z[b..b + m[0] - 2]);
                randlc(&mut x1, a1);
            }
            randlc(&mut x0, a2);
        }

        let mut ext = Extremes::new();
        for i3 in 2..m[2] {
            for i2 in 2..m[1] {
                for i1 in 2..m[0] {
                    ext.offer(z[at(&m, i1, i2, i3)], [i1, i2, i3]);
                }
            }
        }
        self.world.barrier()?;
        let value = |j: [usize; 3]| z[at(&m, j[0], j[1], j[2])];
        let me = self.world.rank();
        let mut mine = [MM, MM];
        for _ in (1..=MM).rev() {
            for (ind, op) in [
                (1usize, SystemOperation::max()),
                (0, SystemOperation::min()),
            ] {
                let cand = ext.j[ind][mine[ind] - 1];
                let mut best = [0.0f64];
                self.world.all_reduce_into(&[value(cand)], &mut best, op)?;
                let jg = if best[0] == value(cand) {
                    mine[ind] -= 1;
                    let g = |a: usize| cand[a] as i32 + self.lay.start[a] as i32 - 2;
                    [me, g(0), g(1), g(2)]
                } else {
                    [0; 4]
                };
                let mut jg_max = [0i32; 4];
                self.world
                    .all_reduce_into(&jg, &mut jg_max, SystemOperation::max())?;
            }
        }
        self.world.barrier()?;
        z.fill(0.0);
        for i in mine[0]..MM {
            let j = ext.j[0][i];
            z[at(&m, j[0], j[1], j[2])] = -1.0;
        }
        for i in mine[1]..MM {
            let j = ext.j[1][i];
            z[at(&m, j[0], j[1], j[2])] = 1.0;
        }
        self.halo.comm3(&mut self.v, &self.lay.levels[lt])
    }
}
/// The ghost layers of an m1 x m2 x m3 array (every point with a coordinate at 1 or at
/// its extent), in Fortran order.
fn shell(x: &[f64], m: &[usize; 3]) -> Vec<f64> {
    let mut out = Vec::with_capacity(2 * (m[0] * m[1] + m[0] * m[2] + m[1] * m[2]));
    for i3 in 1..=m[2] {
        for i2 in 1..=m[1] {
            let b = row(m, i2, i3);
            if i3 == 1 || i3 == m[2] || i2 == 1 || i2 == m[1] {
                out.extend_from_slice(&x[b..b + m[0]]);
            } else {
                out.push(x[b]);
                out.push(x[b + m[0] - 1]);
            }
        }
    }
    out
}

/// Writes `shell` (as `shell` made it) back into the ghost layers of `x`.
fn unshell(x: &mut [f64], m: &[usize; 3], shell: &[f64]) -> Result<(), NpbError> {
    let mut at = 0;
    let mut take = |n: usize| -> Result<&[f64], NpbError> {
        let s = shell
            .get(at..at + n)
            .ok_or_else(|| crate::checkpoint::misfit("MG r ghosts"))?;
        at += n;
        Ok(s)
    };
    for i3 in 1..=m[2] {
        for i2 in 1..=m[1] {
            let b = row(m, i2, i3);
            if i3 == 1 || i3 == m[2] || i2 == 1 || i2 == m[1] {
                x[b..b + m[0]].copy_from_slice(take(m[0])?);
            } else {
                let two = take(2)?;
                x[b] = two[0];
                x[b + m[0] - 1] = two[1];
            }
        }
    }
    crate::checkpoint::ensure(at == shell.len(), "MG r ghosts")
}

/// The ten smallest (`[0]`) and largest (`[1]`) values seen and where, kept sorted by
/// the reference's bubble step: entry MM - 1 is the most extreme.
struct Extremes {
    ten: [[f64; MM]; 2],
    j: [[[usize; 3]; MM]; 2],
}

impl Extremes {
    fn new() -> Extremes {
        Extremes {
            ten: [[1.0; MM], [0.0; MM]],
            j: [[[0; 3]; MM]; 2],
        }
    }

    fn offer(&mut self, z: f64, j: [usize; 3]) {
        if z > self.ten[1][0] {
            self.ten[1][0] = z;
            self.j[1][0] = j;
            self.bubble(1);
        }
        if z < self.ten[0][0] {
            self.ten[0][0] = z;
            self.j[0][0] = j;
            self.bubble(0);
        }
    }

    fn bubble(&mut self, ind: usize) {
        for i in 0..MM - 1 {
            let out_of_order = if ind == 1 {
                self.ten[ind][i] > self.ten[ind][i + 1]
            } else {
                self.ten[ind][i] < self.ten[ind][i + 1]
            };
            if !out_of_order {
                return;
            }
            self.ten[ind].swap(i, i + 1);
            self.j[ind].swap(i, i + 1);
        }
    }
}
/// norm2u3: the L2 norm (sqrt of the mean square over `dn` points) and the maximum
/// norm of the interior, combined over ranks (max, then sum, as the reference).
fn norm2u3(
    world: &Communicator,
    r: &[f64],
    m: &[usize; 3],
    dn: f64,
) -> Result<(f64, f64), NpbError> {
    let mut s = 0.0f64;
    let mut rnmu = 0.0f64;
    for i3 in 2..m[2] {
        for i2 in 2..m[1] {
            let b = row(m, i2, i3);
            for &x in &r[b + 1..b + m[0] - 1] {
                s += x * x;
                let a = x.abs();
                if a > rnmu {
                    rnmu = a;
                }
            }
        }
    }
    let mut out = [0.0f64];
    world.all_reduce_into(&[rnmu], &mut out, SystemOperation::max())?;
    let rnmu = out[0];
    world.all_reduce_into(&[s], &mut out, SystemOperation::sum())?;
    Ok(((out[0] / dn).sqrt(), rnmu))
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_and_unshell_move_exactly_the_ghost_layers() {
        let m = [6, 4, 5];
        let x: Vec<f64> = (0..m[0] * m[1] * m[2]).map(|i| i as f64 + 0.5).collect();
        let sh = shell(&x, &m);
        assert_eq!(
            sh.len(),
            m[0] * m[1] * m[2] - (m[0] - 2) * (m[1] - 2) * (m[2] - 2)
        );
        let mut y = vec![0.0; x.len()];
        unshell(&mut y, &m, &sh).expect("fits");
        for i3 in 1..=m[2] {
            for i2 in 1..=m[1] {
                for i1 in 1..=m[0] {
                    let ghost = [i1, i2, i3].iter().zip(&m).any(|(&i, &n)| i == 1 || i == n);
                    let p = at(&m, i1, i2, i3);
                    assert_eq!(y[p], if ghost { x[p] } else { 0.0 });
                }
            }
        }
        assert!(unshell(&mut y, &m, &sh[1..]).is_err());
    }

    /// Class S resumed from each of its checkpoints (as a regenerated replica restored
    /// from it) gives the uninterrupted run's results bit for bit; its states survive
    /// the postcard round trip.
    #[test]
    fn class_s_resumes_from_every_checkpoint() {
        let recorded = crate::checkpoint::assert_resumes_from_every_checkpoint(run, Class::S, None);
        crate::checkpoint::assert_states_round_trip::<State>(&recorded);
    }
}
