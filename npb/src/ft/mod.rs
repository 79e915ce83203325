//! FT, 3-D FFT PDE solver (NPB 3.3 MPI `FT/ft.f`): evolves a random field in Fourier
//! space and transforms it back every step, checking 1024 sampled points. Owns the
//! decomposition (0-D on one rank, 1-D slabs with an all-to-all transpose over
//! `commslice1` otherwise), the time steps and the checksum reductions; the 1-D FFTs
//! are `fft`'s.

mod fft;

use serde::{Deserialize, Serialize};
use volpex::{Communicator, SystemOperation};

use fft::Fft;

use crate::checkpoint::{ensure, interval_for, Checkpoints, F64s};
use crate::common::{
    broadcast_from_root, max_time_at_root, pow_mod46, randlc, require_power_of_two,
    verdict_from_root, vranlc, Class, NpbError, Report, RANDLC_A,
};

/// Tile edge of the local transposes (the reference's transblock).
const TRANSBLOCK: usize = 32;
/// Verification tolerance on every checksum.
const EPSILON: f64 = 1.0e-12;
const SEED: f64 = 314_159_265.0;
const ALPHA: f64 = 1.0e-6;
const PI: f64 = std::f64::consts::PI;
/// Default checkpoint interval in iterations when the state is large (see
/// `checkpoint::interval_for`): at class A a checkpoint costs about an iteration, but
/// each iteration's transpose sends 25 MB per rank on 4 ranks, so two iterations are as
/// much as a sender can retain for a regenerated replica under the default replay
/// budget. FT also checkpoints after its set-up (whose two transposes are as much).
const CHECKPOINT_EVERY_LARGE: u64 = 2;

/// What the rest of a run needs after an iteration: u0, the field in Fourier space
/// (u1 and u2 are rebuilt from it each iteration, the twiddle factors locally), the
/// checksums so far (rank 0's; empty elsewhere) and the timer.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct State<'a> {
    /// Iterations done.
    done: u64,
    /// Seconds of the timed section so far.
    elapsed: f64,
    u0: F64s<'a>,
    sums: Vec<(f64, f64)>,
}

/// Grid (nx, ny, nz), iterations and the official checksums of a class.
fn params(class: Class) -> ([usize; 3], usize, &'static [(f64, f64)]) {
    match class {
        Class::S => ([64, 64, 64], 6, &CSUM_S),
        Class::W => ([128, 128, 32], 6, &CSUM_W),
        Class::A => ([256, 256, 128], 6, &CSUM_A),
        Class::B => ([512, 256, 256], 20, &CSUM_B),
        Class::C => ([512, 512, 512], 20, &CSUM_C),
    }
}

const CSUM_S: [(f64, f64); 6] = [
    (5.546_087_004_964e2, 4.845_363_331_978e2),
    (5.546_385_409_189e2, 4.865_304_269_511e2),
    (5.546_148_406_171e2, 4.883_910_722_336e2),
    (5.545_423_607_415e2, 4.901_273_169_046e2),
    (5.544_255_039_624e2, 4.917_475_857_993e2),
    (5.542_683_411_902e2, 4.932_597_244_941e2),
];
const CSUM_W: [(f64, f64); 6] = [
    (5.673_612_178_944e2, 5.293_246_849_175e2),
    (5.631_436_885_271e2, 5.282_149_986_629e2),
    (5.594_024_089_970e2, 5.270_996_558_037e2),
    (5.560_698_047_020e2, 5.260_027_904_925e2),
    (5.530_898_991_250e2, 5.249_400_845_633e2),
    (5.504_159_734_538e2, 5.239_212_247_086e2),
];
const CSUM_A: [(f64, f64); 6] = [
    (5.046_735_008_193e2, 5.114_047_905_510e2),
    (5.059_412_319_734e2, 5.098_809_666_433e2),
    (5.069_376_896_287e2, 5.098_144_042_213e2),
    (5.077_892_868_474e2, 5.101_336_130_759e2),
    (5.085_233_095_391e2, 5.104_914_655_194e2),
    (5.091_487_099_959e2, 5.107_917_842_803e2),
];
const CSUM_B: [(f64, f64); 20] = [
    (5.177_643_571_579e2, 5.077_803_458_597e2),
    (5.154_521_291_263e2, 5.088_249_431_599e2),
    (5.146_409_228_649e2, 5.096_208_912_659e2),
    (5.142_378_756_213e2, 5.101_023_387_619e2),
    (5.139_626_667_737e2, 5.103_976_610_617e2),
    (5.137_423_460_082e2, 5.105_948_019_802e2),
    (5.135_547_056_878e2, 5.107_404_165_783e2),
    (5.133_910_925_466e2, 5.108_576_573_661e2),
    (5.132_470_705_390e2, 5.109_577_278_523e2),
    (5.131_197_729_984e2, 5.110_460_304_483e2),
    (5.130_070_319_283e2, 5.111_252_433_800e2),
    (5.129_070_537_032e2, 5.111_968_077_718e2),
    (5.128_182_883_502e2, 5.112_616_233_064e2),
    (5.127_393_733_383e2, 5.113_203_605_551e2),
    (5.126_691_062_020e2, 5.113_735_928_093e2),
    (5.126_064_276_004e2, 5.114_218_460_548e2),
    (5.125_504_076_570e2, 5.114_656_139_760e2),
    (5.125_002_331_720e2, 5.115_053_595_966e2),
    (5.124_551_951_846e2, 5.115_415_130_407e2),
    (5.124_146_770_029e2, 5.115_744_692_211e2),
];
const CSUM_C: [(f64, f64); 20] = [
    (5.195_078_707_457e2, 5.149_019_699_238e2),
    (5.155_422_171_134e2, 5.127_578_201_997e2),
    (5.144_678_022_222e2, 5.122_251_847_514e2),
    (5.140_150_594_328e2, 5.121_090_289_018e2),
    (5.137_550_426_810e2, 5.121_143_685_824e2),
    (5.135_811_056_728e2, 5.121_496_764_568e2),
    (5.134_569_343_165e2, 5.121_870_921_893e2),
    (5.133_651_975_661e2, 5.122_193_250_322e2),
    (5.132_955_192_805e2, 5.122_454_735_794e2),
    (5.132_410_471_738e2, 5.122_663_649_603e2),
    (5.131_971_141_679e2, 5.122_830_879_827e2),
    (5.131_605_205_716e2, 5.122_965_869_718e2),
    (5.131_290_734_194e2, 5.123_075_927_445e2),
    (5.131_012_720_314e2, 5.123_166_486_553e2),
    (5.130_760_908_195e2, 5.123_241_541_685e2),
    (5.130_528_295_923e2, 5.123_304_037_599e2),
    (5.130_310_107_773e2, 5.123_356_167_976e2),
    (5.130_103_090_133e2, 5.123_399_592_211e2),
    (5.129_905_029_333e2, 5.123_435_588_985e2),
    (5.129_714_421_109e2, 5.123_465_164_008e2),
];

/// The decomposition (0-D: np = 1; 1-D: z slabs, then y slabs after the transpose).
/// Arrays are complex, stored as interleaved (re, im) f64 pairs, in one of two
/// layouts: layout 1 is (x, y, z-slab), layout 3 is (z, x, y-slab), first index fastest.
struct Layout {
    n: [usize; 3],
    np: usize,
    me: usize,
    /// Extents of layout 1 (also layout 2) and layout 3 on this rank.
    dims1: [usize; 3],
    dims3: [usize; 3],
    /// First global z (layout 1) and y (layout 3) of this rank, 0-based.
    z0: usize,
    y0: usize,
}

impl Layout {
    fn new(n: [usize; 3], np: usize, me: usize) -> Layout {
        let [nx, ny, nz] = n;
        if np == 1 {
            Layout {
                n,
                np,
                me,
                dims1: n,
                dims3: n,
                z0: 0,
                y0: 0,
            }
        } else {
            Layout {
                n,
                np,
                me,
                dims1: [nx, ny, nz / np],
                dims3: [nz, nx, ny / np],
                z0: me * nz / np,
                y0: me * ny / np,
            }
        }
    }

    /// Complex points per rank (the reference's ntdivnp).
    fn points(&self) -> usize {
        self.n[0] * self.n[1] / self.np * self.n[2]
    }
}

/// One rank's solver.
struct Solver<'a> {
    world: &'a Communicator,
    /// Ranks sharing this rank's first grid coordinate (all of them in 1-D).
    slice1: Communicator,
    lay: Layout,
    fft: Fft,
    u0: Vec<f64>,
    u1: Vec<f64>,
    u2: Vec<f64>,
    twiddle: Vec<f64>,
    sums: Vec<(f64, f64)>,
    /// Iterations (rank 0's choice).
    niter: usize,
}

/// Runs FT on `world`, checkpointing after iterations.
pub fn run(world: &Communicator, class: Class, ck: &Checkpoints) -> Result<Report, NpbError> {
    let (n, niter, csum) = params(class);
    let restored = ck.restored::<State>()?;
    let mut s = Solver::new(world, class, n, niter, restored.is_some())?;
    let niter = s.niter;

    let every = interval_for(8 * s.u0.len(), CHECKPOINT_EVERY_LARGE);
    let save = |s: &Solver, done: u64, t0: f64| {
        ck.save(world, every, (done, niter as u64), || State {
            done,
            elapsed: volpex::wtime() - t0,
            u0: F64s::of(&s.u0),
            sums: s.sums.clone(),
        })
    };
    let (first, t0) = match restored {
        Some(st) => {
            ensure(st.done <= niter as u64, "FT iteration")?;
            st.u0.copy_into(&mut s.u0, "FT u0")?;
            s.sums = st.sums;
            s.compute_indexmap();
            (st.done, volpex::wtime() - st.elapsed)
        }
        None => {
            // Run the set-up once untimed to touch every page, then start over.
            s.start()?;
            world.barrier()?;
            let t0 = volpex::wtime();
            s.start()?;
            save(&s, 0, t0)?;
            (0, t0)
        }
    };
    for it in first..niter as u64 {
        s.evolve();
        s.inverse()?;
        s.checksum()?;
        save(&s, it + 1, t0)?;
    }
    let verified =
        world.rank() == 0 && s.sums.len() == csum.len() && checksums_match(&s.sums, csum);
    let elapsed = volpex::wtime() - t0;
    let total_time = max_time_at_root(world, elapsed)?;
    let verified = verdict_from_root(world, verified)?;
    Ok(Report {
        name: "FT",
        class,
        size: (n[0] as u64, n[1] as u64, n[2] as u64),
        iterations: niter as u64,
        seconds: total_time,
        processes: world.size(),
        mops_total: if total_time > 0.0 {
            mops(n, niter) / total_time
        } else {
            0.0
        },
        operation: "floating point",
        verified,
        checks: s.sums.iter().flat_map(|&(r, i)| [r, i]).collect(),
    })
}

/// Millions of operations of a run (the reference's count).
fn mops(n: [usize; 3], niter: usize) -> f64 {
    let ntotal = (n[0] * n[1] * n[2]) as f64;
    1.0e-6
        * ntotal
        * (14.8157 + 7.19641 * ntotal.ln() + (5.23518 + 7.21113 * ntotal.ln()) * niter as f64)
}

/// |sum - ref| / |ref| <= EPSILON for every iteration's checksum.
fn checksums_match(sums: &[(f64, f64)], reference: &[(f64, f64)]) -> bool {
    sums.iter().zip(reference).all(|(&(sr, si), &(rr, ri))| {
        let err = (sr - rr).hypot(si - ri) / rr.hypot(ri);
        err <= EPSILON
    })
}

impl<'a> Solver<'a> {
    /// The reference's setup: process count checks, rank 0's choices broadcast (np1,
    /// np2, layout, iterations, timers; not again in a `restored` replica, whose rank
    /// took them before its checkpoint), the row and column communicators, the arrays.
    fn new(
        world: &'a Communicator,
        class: Class,
        n: [usize; 3],
        niter: usize,
        restored: bool,
    ) -> Result<Solver<'a>, NpbError> {
        let np = world.size();
        require_power_of_two("FT", np)?;
        if np as usize > n[2] {
            return Err(NpbError::Setup(format!(
                "FT class {class} on {np} processes needs the 2-D layout (more processes than nz = {}), which is not ported",
                n[2]
            )));
        }
        let me = world.rank();
        let layout = if np == 1 { 0 } else { 1 };
        let mut setup = [1, np, layout, niter as i32, 0];
        if !restored {
            for v in setup.chunks_mut(1) {
                broadcast_from_root(world, v)?;
            }
        }
        // The processor grid is np1 x np2 = 1 x np; both slices are made, as there.
        let (me1, me2) = (0, me);
        let slice1 = world
            .split_by_color_with_key(Some(me1), me2)?
            .ok_or_else(|| NpbError::Setup("FT: no row communicator".into()))?;
        let _slice2 = world.split_by_color_with_key(Some(me2), me1)?;
        let lay = Layout::new(n, np as usize, me as usize);
        let points = lay.points();
        Ok(Solver {
            world,
            slice1,
            fft: Fft::new(n[0]),
            u0: vec![0.0; 2 * points],
            u1: vec![0.0; 2 * points],
            u2: vec![0.0; 2 * points],
            twiddle: vec![0.0; points],
            sums: Vec::with_capacity(niter),
            niter: setup[3] as usize,
            lay,
        })
    }

    /// compute_indexmap, compute_initial_conditions, fft_init and the forward FFT.
    fn start(&mut self) -> Result<(), NpbError> {
        self.compute_indexmap();
        self.compute_initial_conditions();
        self.fft = Fft::new(self.lay.n[0]);
        self.forward()
    }

    /// twiddle = exp(-4 alpha pi^2 (kx^2 + ky^2 + kz^2)) in layout 3, with the
    /// wave numbers folded into -n/2..n/2.
    fn compute_indexmap(&mut self) {
        let [nx, ny, nz] = self.lay.n;
        let ap = -4.0 * ALPHA * PI * PI;
        let fold = |i: usize, n: usize| ((i + n / 2) % n) as i64 - (n / 2) as i64;
        let [d1, d2, d3] = self.lay.dims3;
        let y0 = self.lay.y0;
        let mut t = self.twiddle.iter_mut();
        if self.lay.np == 1 {
            // Layout (x, y, z).
            for k in 0..d3 {
                let kk = fold(k, nz);
                for j in 0..d2 {
                    let jj = fold(j, ny);
                    for i in 0..d1 {
                        let ii = fold(i, nx);
                        if let Some(v) = t.next() {
                            *v = (ap * (ii * ii + jj * jj + kk * kk) as f64).exp();
                        }
                    }
                }
            }
        } else {
            // Layout (z, x, y-slab).
            for j in 0..d3 {
                let jj = fold(j + y0, ny);
                for i in 0..d2 {
                    let ii = fold(i, nx);
                    for k in 0..d1 {
                        let kk = fold(k, nz);
                        if let Some(v) = t.next() {
                            *v = (ap * (kk * kk + (jj * jj + ii * ii)) as f64).exp();
                        }
                    }
                }
            }
        }
    }

    /// u1 = the random field, this rank's z planes of the generator's stream.
    fn compute_initial_conditions(&mut self) {
        let [nx, ny, _] = self.lay.n;
        let [_, d2, d3] = self.lay.dims1;
        let mut start = SEED;
        let skip = (2 * nx * self.lay.z0 * ny) as u64;
        randlc(&mut start, pow_mod46(RANDLC_A, skip));
        let an = pow_mod46(RANDLC_A, (2 * nx * ny) as u64);
        let plane = 2 * nx * d2;
        for (k, chunk) in self.u1.chunks_exact_mut(plane).take(d3).enumerate() {
            let mut x0 = start;
            vranlc(&mut x0, RANDLC_A, chunk);
            if k + 1 != d3 {
                randlc(&mut start, an);
            }
        }
    }

    /// u0 = u0 * twiddle; u1 = u0.
    fn evolve(&mut self) {
        for ((u0, u1), &t) in self
            .u0
            .chunks_exact_mut(2)
            .zip(self.u1.chunks_exact_mut(2))
            .zip(&self.twiddle)
        {
            u0[0] *= t;
            u0[1] *= t;
            u1[0] = u0[0];
            u1[1] = u0[1];
        }
    }

    /// fft(1, u1, u0): forward transform of u1 (destroyed) into u0, in layout 3.
    fn forward(&mut self) -> Result<(), NpbError> {
        let [nx, ny, nz] = self.lay.n;
        let d1 = self.lay.dims1;
        if self.lay.np == 1 {
            self.fft.lines_dim1(1, &mut self.u1, d1);
            self.fft.lines_dim2(1, &mut self.u1, d1);
            self.fft.lines_dim3(1, &mut self.u1, d1);
            std::mem::swap(&mut self.u0, &mut self.u1);
        } else {
            self.fft.lines_dim1(1, &mut self.u1, d1);
            self.fft.lines_dim2(1, &mut self.u1, d1);
            // transpose_xy_z: (x y, z-slab) -> (z, x y-slab).
            self.transpose(nx * ny, nz / self.lay.np, Direction::Forward)?;
            self.fft.lines_dim1(1, &mut self.u0, self.lay.dims3);
        }
        Ok(())
    }

    /// fft(-1, u1, u2): inverse transform of u1 (destroyed) into u2, in layout 1.
    fn inverse(&mut self) -> Result<(), NpbError> {
        let [nx, ny, nz] = self.lay.n;
        let d1 = self.lay.dims1;
        if self.lay.np == 1 {
            self.fft.lines_dim3(-1, &mut self.u1, d1);
            self.fft.lines_dim2(-1, &mut self.u1, d1);
            self.fft.lines_dim1(-1, &mut self.u1, d1);
            std::mem::swap(&mut self.u2, &mut self.u1);
        } else {
            self.fft.lines_dim1(-1, &mut self.u1, self.lay.dims3);
            // transpose_x_yz: (z, x y-slab) -> (x y, z-slab).
            self.transpose(nz, nx * ny / self.lay.np, Direction::Inverse)?;
            self.fft.lines_dim2(-1, &mut self.u2, d1);
            self.fft.lines_dim1(-1, &mut self.u2, d1);
        }
        Ok(())
    }

    /// The 1-D transpose of u1 (n1 x n2 here) into u0 (forward) or u2 (inverse):
    /// transpose2_local, transpose2_global (all-to-all over commslice1), transpose2_finish.
    fn transpose(&mut self, n1: usize, n2: usize, dir: Direction) -> Result<(), NpbError> {
        let out = match dir {
            Direction::Forward => &mut self.u0,
            Direction::Inverse => &mut self.u2,
        };
        transpose_local(&self.u1, out, n1, n2);
        self.slice1.all_to_all_into(&out[..], &mut self.u1[..])?;
        transpose_finish(&self.u1, out, n1, n2, self.lay.np);
        Ok(())
    }

    /// Sums 1024 sampled points of u2 (layout 1), divided by the grid size, over ranks
    /// at rank 0 (MPI_Reduce); rank 0 keeps it for verification.
    fn checksum(&mut self) -> Result<(), NpbError> {
        let [nx, ny, nz] = self.lay.n;
        let [d1, d2, d3] = self.lay.dims1;
        let z0 = self.lay.z0;
        let mut chk = [0.0f64; 2];
        for j in 1..=1024usize {
            let q = j % nx;
            let r = (3 * j) % ny;
            let s = (5 * j) % nz;
            if s >= z0 && s < z0 + d3 {
                let idx = 2 * (q + d1 * (r + d2 * (s - z0)));
                chk[0] += self.u2[idx];
                chk[1] += self.u2[idx + 1];
            }
        }
        let ntotal = (nx * ny * nz) as f64;
        let chk = [chk[0] / ntotal, chk[1] / ntotal];
        let root = self.world.process_at_rank(0);
        if self.lay.me == 0 {
            let mut all = [0.0f64; 2];
            root.reduce_into_root(&chk, &mut all, SystemOperation::sum())?;
            self.sums.push((all[0], all[1]));
        } else {
            root.reduce_into(&chk, SystemOperation::sum())?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Forward,
    Inverse,
}

/// xout(n2, n1) = xin(n1, n2)^T for complex arrays, in tiles (transpose2_local).
fn transpose_local(xin: &[f64], xout: &mut [f64], n1: usize, n2: usize) {
    for jb in (0..n2).step_by(TRANSBLOCK) {
        let je = (jb + TRANSBLOCK).min(n2);
        for ib in (0..n1).step_by(TRANSBLOCK) {
            let ie = (ib + TRANSBLOCK).min(n1);
            for i in ib..ie {
                for j in jb..je {
                    let src = 2 * (i + n1 * j);
                    let dst = 2 * (j + n2 * i);
                    xout[dst] = xin[src];
                    xout[dst + 1] = xin[src + 1];
                }
            }
        }
    }
}

/// xout(n2 np, n1 / np) from the blocks xin(n2, n1 / np, p) received from each rank p
/// (transpose2_finish).
fn transpose_finish(xin: &[f64], xout: &mut [f64], n1: usize, n2: usize, np: usize) {
    let cols = n1 / np;
    for p in 0..np {
        for j in 0..cols {
            let src = 2 * (n2 * (j + cols * p));
            let dst = 2 * (p * n2 + n2 * np * j);
            xout[dst..dst + 2 * n2].copy_from_slice(&xin[src..src + 2 * n2]);
        }
    }
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

    #[test]
    fn local_transpose_then_finish_on_one_rank_is_a_transpose() {
        let (n1, n2) = (40usize, 3usize);
        let x: Vec<f64> = (0..2 * n1 * n2).map(|v| v as f64).collect();
        let mut t = vec![0.0; x.len()];
        transpose_local(&x, &mut t, n1, n2);
        let mut out = vec![0.0; x.len()];
        transpose_finish(&t, &mut out, n1, n2, 1);
        for i in 0..n1 {
            for j in 0..n2 {
                assert_eq!(out[2 * (j + n2 * i)], x[2 * (i + n1 * j)]);
            }
        }
    }
}
