//! MG, multigrid (NPB 3.3 MPI `MG/mg.f`): V-cycles of a 3-D Poisson solver on a periodic
//! grid split over a 3-D process grid. Owns the level hierarchy, the stencil kernels
//! (resid, psinv, rprj3, interp), the halo exchanges of comm3 (ready/give3/take3 with the
//! reference's tags, periodic copies on one process) and comm3_ex (levels where ranks
//! run out of points), and the random right-hand side (zran3).

use serde::{Deserialize, Serialize};
use volpex::{Communicator, SystemOperation};

use crate::checkpoint::{ensure, interval_for, Checkpoints, F64s};
use crate::common::{
    broadcast_from_root, log2, max_time_at_root, pow_mod46, randlc, rel_ok, require_power_of_two,
    vranlc, Class, NpbError, Report, RANDLC_A,
};

/// Verification tolerance.
const EPSILON: f64 = 1.0e-8;
/// Charges of each sign placed by zran3.
const MM: usize = 10;
/// The residual operator A.
const A: [f64; 4] = [-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0];
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

/// Message tag of direction `dir` (-1 or +1) on `axis` (0..3): msg_type of the reference.
fn msg_type(axis: usize, dir: i32) -> i32 {
    100 * (dir + 2 + 10 * (axis as i32 + 1))
}

/// Index of a direction in the per-axis pairs: -1 -> 0, +1 -> 1.
fn di(dir: i32) -> usize {
    usize::from(dir > 0)
}

/// Local extents (ghost layers included) and neighbours of one level.
#[derive(Clone)]
struct Level {
    /// m1, m2, m3: local points per axis plus the two ghost layers.
    m: [usize; 3],
    /// Neighbour rank per axis and direction (see `di`).
    nbr: [[i32; 2]; 3],
    /// This rank has no points on the level (comm3 only clears it).
    dead: bool,
    /// comm3_ex sends (give) or receives (take) along an axis on this level.
    give_ex: [bool; 3],
    take_ex: [bool; 3],
}

impl Level {
    fn len(&self) -> usize {
        self.m[0] * self.m[1] * self.m[2]
    }
}

/// The decomposition of every level (the reference's setup); levels are 1..=lt.
struct Layout {
    lt: usize,
    levels: Vec<Level>,
    /// First global interior index (1-based, the reference's is1..is3) at the top level.
    start: [i64; 3],
}

impl Layout {
    fn new(nx: usize, nprocs: usize, me: usize) -> Layout {
        let lt = log2(nx) as usize;
        let log_p = log2(nprocs) as usize;
        let dx = log_p / 3;
        let dy = (log_p - dx) / 2;
        let pi = [1i64 << dx, 1i64 << dy, (nprocs >> dx >> dy) as i64];
        let me = me as i64;
        let idi = [me % pi[0], (me / pi[0]) % pi[1], me / (pi[0] * pi[1])];
        let mut next = [1i64; 3];
        let blank = Level {
            m: [0; 3],
            nbr: [[0; 2]; 3],
            dead: false,
            give_ex: [false; 3],
            take_ex: [false; 3],
        };
        let mut levels = vec![blank; lt + 1];
        for k in (1..=lt).rev() {
            let ng = (nx >> (lt - k)) as i64;
            for ax in 0..3 {
                let mi = 2 + ((idi[ax] + 1) * ng) / pi[ax] - (idi[ax] * ng) / pi[ax];
                let mip = 2 + ((next[ax] + idi[ax] + 1) * ng) / pi[ax]
                    - ((next[ax] + idi[ax]) * ng) / pi[ax];
                if mip == 2 || mi == 2 {
                    next[ax] *= 2;
                }
                if k < lt {
                    if mip == 2 && mi == 3 {
                        levels[k + 1].give_ex[ax] = true;
                    }
                    if mip == 3 && mi == 2 {
                        levels[k + 1].take_ex[ax] = true;
                    }
                }
                levels[k].m[ax] = mi as usize;
            }
            levels[k].dead = levels[k].m.contains(&2);
            for dir in [-1i64, 1] {
                // Fortran mod: the sign of the dividend, as the reference computes it.
                let idin: Vec<i64> = (0..3)
                    .map(|ax| (idi[ax] + dir * next[ax] + pi[ax]) % pi[ax])
                    .collect();
                let rank = |c: [i64; 3]| (c[0] + pi[0] * (c[1] + pi[1] * c[2])) as i32;
                let d = di(dir as i32);
                levels[k].nbr[0][d] = rank([idin[0], idi[1], idi[2]]);
                levels[k].nbr[1][d] = rank([idi[0], idin[1], idi[2]]);
                levels[k].nbr[2][d] = rank([idi[0], idi[1], idin[2]]);
            }
        }
        let ng = nx as i64;
        let start = [0, 1, 2].map(|ax| 2 + ng - ((pi[ax] - idi[ax]) * ng) / pi[ax]);
        Layout { lt, levels, start }
    }
}

/// Flat index of 1-based (i1, i2, i3) in an m1 x m2 x m3 array.
#[inline]
fn at(m: &[usize; 3], i1: usize, i2: usize, i3: usize) -> usize {
    (i1 - 1) + m[0] * ((i2 - 1) + m[1] * (i3 - 1))
}

/// Start of the 1-based row (i2, i3).
#[inline]
fn row(m: &[usize; 3], i2: usize, i3: usize) -> usize {
    at(m, 1, i2, i3)
}

/// A box of 1-based inclusive ranges per axis, walked in Fortran order (i1 fastest).
type Bounds = [(usize, usize); 3];

fn box_len(b: &Bounds) -> usize {
    b.iter().map(|(lo, hi)| hi + 1 - lo).product()
}

fn pack(u: &[f64], m: &[usize; 3], b: &Bounds, out: &mut Vec<f64>) {
    out.clear();
    for i3 in b[2].0..=b[2].1 {
        for i2 in b[1].0..=b[1].1 {
            let base = row(m, i2, i3);
            out.extend_from_slice(&u[base + b[0].0 - 1..base + b[0].1]);
        }
    }
}

fn unpack(u: &mut [f64], m: &[usize; 3], b: &Bounds, data: &[f64]) {
    let w = b[0].1 + 1 - b[0].0;
    let mut chunks = data.chunks_exact(w);
    for i3 in b[2].0..=b[2].1 {
        for i2 in b[1].0..=b[1].1 {
            let base = row(m, i2, i3);
            if let Some(c) = chunks.next() {
                u[base + b[0].0 - 1..base + b[0].1].copy_from_slice(c);
            }
        }
    }
}

/// The face box comm3 moves on `axis`: `plane` on the axis, the full extent on lower
/// axes, the interior on higher ones (give3/take3).
fn face(m: &[usize; 3], axis: usize, plane: (usize, usize)) -> Bounds {
    let mut b = [(0, 0); 3];
    for (ax, r) in b.iter_mut().enumerate() {
        *r = match ax.cmp(&axis) {
            std::cmp::Ordering::Less => (1, m[ax]),
            std::cmp::Ordering::Equal => plane,
            std::cmp::Ordering::Greater => (2, m[ax] - 1),
        };
    }
    b
}

/// The box comm3_ex moves on `axis`: `plane` on the axis, everything else in full
/// (give3_ex/take3_ex).
fn face_ex(m: &[usize; 3], axis: usize, plane: (usize, usize)) -> Bounds {
    let mut b = [(1, m[0]), (1, m[1]), (1, m[2])];
    b[axis] = plane;
    b
}

/// Halo exchanges of one rank (comm3, comm3_ex, comm1p and their helpers).
struct Halo<'a> {
    world: &'a Communicator,
    nprocs: i32,
    send: Vec<f64>,
    recv_minus: Vec<f64>,
    recv_plus: Vec<f64>,
}

impl Halo<'_> {
    /// comm3: refreshes the ghost layers of `u` on level `lev`.
    fn comm3(&mut self, u: &mut [f64], lev: &Level) -> Result<(), NpbError> {
        if lev.dead {
            u.fill(0.0);
            return Ok(());
        }
        let m = &lev.m;
        for axis in 0..3 {
            let n = m[axis];
            let give_minus = face(m, axis, (2, 2));
            let give_plus = face(m, axis, (n - 1, n - 1));
            let take_minus = face(m, axis, (n, n));
            let take_plus = face(m, axis, (1, 1));
            if self.nprocs == 1 {
                // comm1p: the periodic copy within this rank.
                pack(u, m, &give_plus, &mut self.recv_plus);
                pack(u, m, &give_minus, &mut self.recv_minus);
                unpack(u, m, &take_minus, &self.recv_minus);
                unpack(u, m, &take_plus, &self.recv_plus);
            } else {
                self.exchange(
                    u,
                    lev,
                    axis,
                    [give_minus, give_plus],
                    [take_minus, take_plus],
                )?;
            }
        }
        Ok(())
    }

    /// ready(-1), ready(+1), give3(+1), give3(-1), take3(-1), take3(+1) on one axis.
    fn exchange(
        &mut self,
        u: &mut [f64],
        lev: &Level,
        axis: usize,
        give: [Bounds; 2],
        take: [Bounds; 2],
    ) -> Result<(), NpbError> {
        let m = &lev.m;
        let nbr = lev.nbr[axis];
        self.recv_minus.resize(box_len(&take[0]), 0.0);
        self.recv_plus.resize(box_len(&take[1]), 0.0);
        {
            // ready(axis, dir): from nbr(axis, -dir) with tag msg_type(axis, dir). The
            // reference names the source rank here (NPB 3.3 and 3.4 alike), so this needs
            // no wildcard receive.
            let req_minus = self
                .world
                .process_at_rank(nbr[di(1)])
                .immediate_receive_into_with_tag(&mut self.recv_minus[..], msg_type(axis, -1))?;
            let req_plus = self
                .world
                .process_at_rank(nbr[di(-1)])
                .immediate_receive_into_with_tag(&mut self.recv_plus[..], msg_type(axis, 1))?;
            for dir in [1, -1] {
                pack(u, m, &give[di(dir)], &mut self.send);
                self.world
                    .process_at_rank(nbr[di(dir)])
                    .send_with_tag(&self.send[..], msg_type(axis, dir))?;
            }
            req_minus.wait()?;
            req_plus.wait()?;
        }
        unpack(u, m, &take[0], &self.recv_minus);
        unpack(u, m, &take[1], &self.recv_plus);
        Ok(())
    }

    /// comm3_ex: after interpolation, ranks that own points on level `lev` but none on
    /// the level below get their ghost layers from the ranks that do.
    fn comm3_ex(&mut self, u: &mut [f64], lev: &Level) -> Result<(), NpbError> {
        if self.nprocs == 1 {
            // comm1p_ex: nothing to give or take on a single rank.
            return Ok(());
        }
        let m = &lev.m;
        for axis in 0..3 {
            let n = m[axis];
            let nbr = lev.nbr[axis];
            if lev.take_ex[axis] {
                let take_minus = face_ex(m, axis, (n, n));
                let take_plus = face_ex(m, axis, (1, 2));
                self.recv_minus.resize(box_len(&take_minus), 0.0);
                self.recv_plus.resize(box_len(&take_plus), 0.0);
                {
                    let req_minus = self
                        .world
                        .process_at_rank(nbr[di(1)])
                        .immediate_receive_into_with_tag(
                            &mut self.recv_minus[..],
                            msg_type(axis, -1),
                        )?;
                    let req_plus = self
                        .world
                        .process_at_rank(nbr[di(-1)])
                        .immediate_receive_into_with_tag(
                            &mut self.recv_plus[..],
                            msg_type(axis, 1),
                        )?;
                    req_minus.wait()?;
                    req_plus.wait()?;
                }
                unpack(u, m, &take_minus, &self.recv_minus);
                unpack(u, m, &take_plus, &self.recv_plus);
            }
            if lev.give_ex[axis] {
                let give = [face_ex(m, axis, (2, 2)), face_ex(m, axis, (n - 1, n))];
                for dir in [1, -1] {
                    pack(u, m, &give[di(dir)], &mut self.send);
                    self.world
                        .process_at_rank(nbr[di(dir)])
                        .send_with_tag(&self.send[..], msg_type(axis, dir))?;
                }
            }
        }
        Ok(())
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
            halo: Halo {
                world,
                nprocs,
                send: Vec::new(),
                recv_minus: Vec::new(),
                recv_plus: Vec::new(),
            },
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

/// The sum of the four side rows and of the four corner rows around row (i2, i3) of
/// `x`, the way resid and psinv pair them.
fn sides_and_corners(
    x: &[f64],
    m: &[usize; 3],
    i2: usize,
    i3: usize,
    sides: &mut [f64],
    corners: &mut [f64],
) {
    let n1 = m[0];
    let r = |a: usize, b: usize| &x[row(m, a, b)..row(m, a, b) + n1];
    let (s_a, s_b, s_c, s_d) = (r(i2 - 1, i3), r(i2 + 1, i3), r(i2, i3 - 1), r(i2, i3 + 1));
    let (c_a, c_b, c_c, c_d) = (
        r(i2 - 1, i3 - 1),
        r(i2 + 1, i3 - 1),
        r(i2 - 1, i3 + 1),
        r(i2 + 1, i3 + 1),
    );
    let (sides, corners) = (&mut sides[..n1], &mut corners[..n1]);
    for i in 0..n1 {
        sides[i] = s_a[i] + s_b[i] + s_c[i] + s_d[i];
        corners[i] = c_a[i] + c_b[i] + c_c[i] + c_d[i];
    }
}

/// out = a + b + c + d, element-wise, in that order.
#[inline(always)]
fn sum4(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64], d: &[f64]) {
    for ((((o, a), b), c), d) in out.iter_mut().zip(a).zip(b).zip(c).zip(d) {
        *o = a + b + c + d;
    }
}

/// resid: r = v - A u on the interior (`v` = None: r itself holds v).
fn resid(u: &[f64], v: Option<&[f64]>, r: &mut [f64], m: &[usize; 3], s: [&mut Vec<f64>; 2]) {
    let [u1, u2] = s;
    let n1 = m[0];
    for i3 in 2..m[2] {
        for i2 in 2..m[1] {
            sides_and_corners(u, m, i2, i3, u1, u2);
            let b = row(m, i2, i3);
            resid_row(
                &u[b + 1..b + n1 - 1],
                v.map(|v| &v[b + 1..b + n1 - 1]),
                &u1[..n1],
                &u2[..n1],
                &mut r[b + 1..b + n1 - 1],
            );
        }
    }
}

/// One row of resid: `out = v - a0 u - a2 (u2 + u1 left + u1 right) - a3 (u2 left +
/// u2 right)`, the side and corner sums `u1`, `u2` spanning the row's ghosts too; `v`
/// = None: `out` holds v.
#[inline(always)]
fn resid_row(uc: &[f64], vc: Option<&[f64]>, u1: &[f64], u2: &[f64], out: &mut [f64]) {
    let n = out.len();
    let (u1l, u1r) = (&u1[..n], &u1[2..n + 2]);
    let (u2l, u2c, u2r) = (&u2[..n], &u2[1..n + 1], &u2[2..n + 2]);
    let uc = &uc[..n];
    let a = |v: f64, i: usize| {
        v - A[0] * uc[i] - A[2] * (u2c[i] + u1l[i] + u1r[i]) - A[3] * (u2l[i] + u2r[i])
    };
    match vc {
        Some(vc) => {
            for (i, (o, &v)) in out.iter_mut().zip(&vc[..n]).enumerate() {
                *o = a(v, i);
            }
        }
        None => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = a(*o, i);
            }
        }
    }
}

/// psinv: u = u + C r on the interior.
fn psinv(r: &[f64], u: &mut [f64], m: &[usize; 3], c: &[f64; 4], r1: &mut [f64], r2: &mut [f64]) {
    let n1 = m[0];
    for i3 in 2..m[2] {
        for i2 in 2..m[1] {
            sides_and_corners(r, m, i2, i3, r1, r2);
            let b = row(m, i2, i3);
            let rr = &r[b..b + n1];
            let out = &mut u[b + 1..b + n1 - 1];
            let (rl, rc, rp) = (&rr[..n1 - 2], &rr[1..n1 - 1], &rr[2..n1]);
            let (r1l, r1c, r1r) = (&r1[..n1 - 2], &r1[1..n1 - 1], &r1[2..n1]);
            let r2c = &r2[1..n1 - 1];
            for i in 0..n1 - 2 {
                out[i] = out[i]
                    + c[0] * rc[i]
                    + c[1] * (rl[i] + rp[i] + r1c[i])
                    + c[2] * (r2c[i] + r1l[i] + r1r[i]);
            }
        }
    }
}

/// rprj3: s = P r, the trilinear projection of fine `r` (mk) onto coarse `s` (mj).
fn rprj3(
    r: &[f64],
    mk: &[usize; 3],
    s: &mut [f64],
    mj: &[usize; 3],
    x1: &mut [f64],
    y1: &mut [f64],
) {
    let d = mk.map(|n| if n == 3 { 2 } else { 1 });
    let n1 = mk[0];
    // The outputs j1 = 2..mj1-1 sit at the fine i1 = 2 j1 - d1; `span` holds them with
    // their neighbours (0-based, the reference's i1 - 1).
    let n = mj[0].saturating_sub(2);
    let span = 2 - d[0]..3 - d[0] + 2 * n;
    for j3 in 2..mj[2] {
        let i3 = 2 * j3 - d[2];
        for j2 in 2..mj[1] {
            let i2 = 2 * j2 - d[1];
            let rw = |a: usize, b: usize| &r[row(mk, a, b)..row(mk, a, b) + n1];
            // x1 and y1 on the whole row: the reference's x1, y1 at its even points and
            // its x2, y2 at its odd ones, each summed in the same order.
            sum4(
                &mut x1[..n1],
                rw(i2 - 1, i3),
                rw(i2 + 1, i3),
                rw(i2, i3 - 1),
                rw(i2, i3 + 1),
            );
            sum4(
                &mut y1[..n1],
                rw(i2 - 1, i3 - 1),
                rw(i2 - 1, i3 + 1),
                rw(i2 + 1, i3 - 1),
                rw(i2 + 1, i3 + 1),
            );
            if n == 0 {
                continue;
            }
            let b = row(mj, j2, j3);
            let triples = |v| triples(v, span.clone());
            let cc = rw(i2, i3);
            for (o, ((c, x), y)) in s[b + 1..b + 1 + n]
                .iter_mut()
                .zip(triples(cc).zip(triples(x1)).zip(triples(y1)))
            {
                *o = 0.5 * c[1]
                    + 0.25 * (c[0] + c[2] + x[1])
                    + 0.125 * (x[0] + x[2] + y[1])
                    + 0.0625 * (y[0] + y[2]);
            }
        }
    }
}

/// Every other window of three in `v[span]`: each output point of rprj3 with its two
/// neighbours.
fn triples(v: &[f64], span: std::ops::Range<usize>) -> impl Iterator<Item = &[f64]> {
    v[span].windows(3).step_by(2)
}

/// interp: u += Q z, the trilinear interpolation of coarse `z` (mz) into fine `u` (mu),
/// when no fine extent is 3.
fn interp(z: &[f64], mz: &[usize; 3], u: &mut [f64], mu: &[usize; 3], s: [&mut Vec<f64>; 3]) {
    let [z1, z2, z3] = s;
    let mm1 = mz[0];
    let n1 = mu[0];
    let (z1, z2, z3) = (&mut z1[..mm1], &mut z2[..mm1], &mut z3[..mm1]);
    for i3 in 1..mz[2] {
        for i2 in 1..mz[1] {
            let zr = |a: usize, b: usize| &z[row(mz, a, b)..row(mz, a, b) + mm1];
            let (z00, z10, z01, z11) = (
                zr(i2, i3),
                zr(i2 + 1, i3),
                zr(i2, i3 + 1),
                zr(i2 + 1, i3 + 1),
            );
            for i in 0..mm1 {
                z1[i] = z10[i] + z00[i];
                z2[i] = z01[i] + z00[i];
                z3[i] = z11[i] + z01[i] + z1[i];
            }
            let urow = |a: usize, b: usize| row(mu, a, b)..row(mu, a, b) + n1;
            add_pairs(&mut u[urow(2 * i2 - 1, 2 * i3 - 1)], z00, |a, b| {
                (a, 0.5 * (b + a))
            });
            add_pairs(&mut u[urow(2 * i2, 2 * i3 - 1)], z1, |a, b| {
                (0.5 * a, 0.25 * (a + b))
            });
            add_pairs(&mut u[urow(2 * i2 - 1, 2 * i3)], z2, |a, b| {
                (0.5 * a, 0.25 * (a + b))
            });
            add_pairs(&mut u[urow(2 * i2, 2 * i3)], z3, |a, b| {
                (0.25 * a, 0.125 * (a + b))
            });
        }
    }
}

/// Adds `f(z[i], z[i + 1])` = (odd, even) to `out[2 i]` and `out[2 i + 1]` for every
/// pair of neighbours in `z`.
#[inline(always)]
fn add_pairs(out: &mut [f64], z: &[f64], f: impl Fn(f64, f64) -> (f64, f64)) {
    for (pair, w) in out.chunks_exact_mut(2).zip(z.windows(2)) {
        let (odd, even) = f(w[0], w[1]);
        pair[0] += odd;
        pair[1] += even;
    }
}

/// interp when some fine extent is 3 (a rank with one point on that axis).
fn interp_thin(z: &[f64], mz: &[usize; 3], u: &mut [f64], mu: &[usize; 3]) {
    let d = mu.map(|n| if n == 3 { 2 } else { 1 });
    let t = mu.map(|n| usize::from(n == 3));
    let zz = |i1: usize, i2: usize, i3: usize| z[at(mz, i1, i2, i3)];
    let mut add = |i1: usize, i2: usize, i3: usize, v: f64| u[at(mu, i1, i2, i3)] += v;
    let [mm1, mm2, mm3] = *mz;
    for i3 in d[2]..mm3 {
        for i2 in d[1]..mm2 {
            for i1 in d[0]..mm1 {
                add(2 * i1 - d[0], 2 * i2 - d[1], 2 * i3 - d[2], zz(i1, i2, i3));
            }
            for i1 in 1..mm1 {
                let v = 0.5 * (zz(i1 + 1, i2, i3) + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - d[1], 2 * i3 - d[2], v);
            }
        }
        for i2 in 1..mm2 {
            for i1 in d[0]..mm1 {
                let v = 0.5 * (zz(i1, i2 + 1, i3) + zz(i1, i2, i3));
                add(2 * i1 - d[0], 2 * i2 - t[1], 2 * i3 - d[2], v);
            }
            for i1 in 1..mm1 {
                let v = 0.25
                    * (zz(i1 + 1, i2 + 1, i3)
                        + zz(i1 + 1, i2, i3)
                        + zz(i1, i2 + 1, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - t[1], 2 * i3 - d[2], v);
            }
        }
    }
    for i3 in 1..mm3 {
        for i2 in d[1]..mm2 {
            for i1 in d[0]..mm1 {
                let v = 0.5 * (zz(i1, i2, i3 + 1) + zz(i1, i2, i3));
                add(2 * i1 - d[0], 2 * i2 - d[1], 2 * i3 - t[2], v);
            }
            for i1 in 1..mm1 {
                let v = 0.25
                    * (zz(i1 + 1, i2, i3 + 1)
                        + zz(i1, i2, i3 + 1)
                        + zz(i1 + 1, i2, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - d[1], 2 * i3 - t[2], v);
            }
        }
        for i2 in 1..mm2 {
            for i1 in d[0]..mm1 {
                let v = 0.25
                    * (zz(i1, i2 + 1, i3 + 1)
                        + zz(i1, i2, i3 + 1)
                        + zz(i1, i2 + 1, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - d[0], 2 * i2 - t[1], 2 * i3 - t[2], v);
            }
            for i1 in 1..mm1 {
                let v = 0.125
                    * (zz(i1 + 1, i2 + 1, i3 + 1)
                        + zz(i1 + 1, i2, i3 + 1)
                        + zz(i1, i2 + 1, i3 + 1)
                        + zz(i1, i2, i3 + 1)
                        + zz(i1 + 1, i2 + 1, i3)
                        + zz(i1 + 1, i2, i3)
                        + zz(i1, i2 + 1, i3)
                        + zz(i1, i2, i3));
                add(2 * i1 - t[0], 2 * i2 - t[1], 2 * i3 - t[2], v);
            }
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

    #[test]
    fn one_rank_owns_the_whole_grid_on_every_level() {
        let lay = Layout::new(32, 1, 0);
        for k in 1..=5 {
            assert_eq!(lay.levels[k].m, [(1 << k) + 2; 3]);
            assert!(!lay.levels[k].dead);
        }
        assert_eq!(lay.start, [2, 2, 2]);
    }

    #[test]
    fn neighbours_are_mutual() {
        for nprocs in [2usize, 4, 8, 16, 64] {
            let lays: Vec<Layout> = (0..nprocs).map(|me| Layout::new(32, nprocs, me)).collect();
            for (me, l) in lays.iter().enumerate() {
                for ax in 0..3 {
                    let up = l.levels[5].nbr[ax][1] as usize;
                    assert_eq!(lays[up].levels[5].nbr[ax][0] as usize, me);
                }
            }
        }
    }

    #[test]
    fn msg_types_match_the_reference() {
        assert_eq!(msg_type(0, -1), 1100);
        assert_eq!(msg_type(2, 1), 3300);
    }
}
