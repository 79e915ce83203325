//! What every NAS Parallel Benchmark port shares: problem classes, the NPB pseudo-random
//! generator, verification checks, the standard report block, and the small collectives
//! every port shares (start-up broadcasts from rank 0, the maximum time at rank 0, rank
//! 0's verdict). The benchmarks' own communication lives in their modules.

use std::fmt;
use std::str::FromStr;

use volpex::{Communicator, SystemOperation};

/// NPB problem class (sizes grow S < W < A < B < C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Small: a few seconds or less; used by the tests.
    S,
    /// Workstation.
    W,
    /// Standard test problem A.
    A,
    /// Standard test problem B (4x A).
    B,
    /// Standard test problem C (4x B), where memory allows.
    C,
}

impl Class {
    /// The letter NPB prints.
    pub fn letter(self) -> char {
        match self {
            Class::S => 'S',
            Class::W => 'W',
            Class::A => 'A',
            Class::B => 'B',
            Class::C => 'C',
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

impl FromStr for Class {
    type Err = String;
    fn from_str(s: &str) -> Result<Class, String> {
        match s {
            "S" | "s" => Ok(Class::S),
            "W" | "w" => Ok(Class::W),
            "A" | "a" => Ok(Class::A),
            "B" | "b" => Ok(Class::B),
            "C" | "c" => Ok(Class::C),
            other => Err(format!("unknown class {other:?}: use S, W, A, B or C")),
        }
    }
}

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum NpbError {
    /// The process count or class is not one the reference accepts.
    #[error("{0}")]
    Setup(String),
    /// The runtime failed (a lost rank, a retired replica, ...).
    #[error(transparent)]
    Runtime(#[from] volpex::Error),
}

/// Everything the standard NPB report block prints (print_results in the reference).
#[derive(Debug, Clone)]
pub struct Report {
    /// Benchmark name as NPB prints it ("BT", "EP", ...).
    pub name: &'static str,
    /// Problem class.
    pub class: Class,
    /// Problem size: up to three dimensions (n1, n2, n3); n2 = n3 = 0 prints one number.
    pub size: (u64, u64, u64),
    /// Iterations of the timed section.
    pub iterations: u64,
    /// Seconds of the timed section (the maximum over ranks, as the reference reports).
    pub seconds: f64,
    /// Processes the benchmark ran on.
    pub processes: i32,
    /// Millions of operations per second, all processes together.
    pub mops_total: f64,
    /// What the operation count counts ("floating point", "keys ranked", ...).
    pub operation: &'static str,
    /// Whether every checked quantity matched the official value within its tolerance.
    pub verified: bool,
    /// The checked quantities as computed (not printed here): tests compare runs, e.g.
    /// one restored from a checkpoint, bit for bit.
    pub checks: Vec<f64>,
}

impl Report {
    /// The report block, in the layout of NPB's print_results.
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!("\n {} Benchmark Completed.\n", self.name));
        s.push_str(&format!(
            " Class           =             {:>12}\n",
            self.class
        ));
        let (n1, n2, n3) = self.size;
        if n2 == 0 && n3 == 0 {
            s.push_str(&format!(" Size            =             {n1:>12}\n"));
        } else {
            s.push_str(&format!(
                " Size            =             {n1:>4}x{n2:>4}x{n3:>4}\n"
            ));
        }
        s.push_str(&format!(
            " Iterations      =             {:>12}\n",
            self.iterations
        ));
        s.push_str(&format!(
            " Time in seconds =             {:>12.2}\n",
            self.seconds
        ));
        s.push_str(&format!(
            " Total processes =             {:>12}\n",
            self.processes
        ));
        s.push_str(&format!(
            " Mop/s total     =             {:>12.2}\n",
            self.mops_total
        ));
        s.push_str(&format!(
            " Mop/s/process   =             {:>12.2}\n",
            self.mops_total / f64::from(self.processes.max(1))
        ));
        s.push_str(&format!(" Operation type  = {:>24}\n", self.operation));
        s.push_str(&format!(
            " Verification    =             {:>12}\n",
            if self.verified {
                "SUCCESSFUL"
            } else {
                "UNSUCCESSFUL"
            }
        ));
        s.push_str(" Version         =                    3.4.2\n");
        s.push_str(" Runtime         =                   Volpex\n");
        s
    }
}

/// `|x - reference| / |reference| <= epsilon` (the reference's relative check); NaN fails.
pub fn rel_ok(x: f64, reference: f64, epsilon: f64) -> bool {
    let err = ((x - reference) / reference).abs();
    err <= epsilon
}

/// Multiplier of the NPB generator, 5^13.
pub const RANDLC_A: f64 = 1_220_703_125.0;

const TWO_46: u64 = 1 << 46;
const R46: f64 = 1.0 / (TWO_46 as f64);

/// The NPB linear congruential generator (randlc): `x <- a * x mod 2^46`, returning
/// `x * 2^-46` in (0, 1). `x` and `a` are integers below 2^46 held in f64, as in the
/// reference; the arithmetic here is exact integer arithmetic, so results match bit for
/// bit.
pub fn randlc(x: &mut f64, a: f64) -> f64 {
    let next = mul_mod46(*x as u64, a as u64);
    *x = next as f64;
    next as f64 * R46
}

/// Fills `y` with the next `y.len()` numbers of the generator (vranlc).
pub fn vranlc(x: &mut f64, a: f64, y: &mut [f64]) {
    let a = a as u64;
    let mut s = *x as u64;
    for v in y.iter_mut() {
        s = mul_mod46(s, a);
        *v = s as f64 * R46;
    }
    *x = s as f64;
}

/// `a^n mod 2^46` as the generator's multiplier for jumping n steps ahead.
pub fn pow_mod46(a: f64, mut n: u64) -> f64 {
    let mut base = a as u64 % TWO_46;
    let mut acc: u64 = 1;
    while n > 0 {
        if n & 1 == 1 {
            acc = mul_mod46(acc, base);
        }
        base = mul_mod46(base, base);
        n >>= 1;
    }
    acc as f64
}

/// `x * a mod 2^46`: 2^46 divides 2^64, so the low 64 bits of the product suffice.
fn mul_mod46(x: u64, a: u64) -> u64 {
    x.wrapping_mul(a) & (TWO_46 - 1)
}

/// `Err(Setup)` unless `n` is a power of two (what CG, FT, IS and MG accept).
pub fn require_power_of_two(bench: &str, n: i32) -> Result<(), NpbError> {
    if n > 0 && (n & (n - 1)) == 0 {
        Ok(())
    } else {
        Err(NpbError::Setup(format!(
            "{bench} needs a power-of-two number of processes, got {n}"
        )))
    }
}

/// log2 of a power of two.
pub fn log2(n: usize) -> u32 {
    n.trailing_zeros()
}

/// The maximum of every rank's `seconds` at rank 0 (MPI_Reduce with MPI_MAX, as the
/// reference reports its time); other ranks get their own value back.
pub fn max_time_at_root(world: &Communicator, seconds: f64) -> Result<f64, NpbError> {
    let root = world.process_at_rank(0);
    if world.rank() == 0 {
        let mut max = [0.0f64];
        root.reduce_into_root(&[seconds], &mut max, SystemOperation::max())?;
        Ok(max[0])
    } else {
        root.reduce_into(&[seconds], SystemOperation::max())?;
        Ok(seconds)
    }
}

/// One MPI_Bcast of `values` from rank 0: the reference's start-up broadcasts of what
/// rank 0 read (input parameters, the timer flag); every rank continues with rank 0's.
pub fn broadcast_from_root(world: &Communicator, values: &mut [i32]) -> Result<(), NpbError> {
    world.process_at_rank(0).broadcast_into(values)?;
    Ok(())
}

/// Rank 0's verification verdict on every rank (a one-flag broadcast after the timed
/// section), for benchmarks whose reference checks only at rank 0: every rank's exit
/// code then tells the same story.
pub fn verdict_from_root(world: &Communicator, verified: bool) -> Result<bool, NpbError> {
    let mut flag = [i32::from(verified)];
    world.process_at_rank(0).broadcast_into(&mut flag)?;
    Ok(flag[0] != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference's double-precision randlc, written out for comparison.
    fn randlc_reference(x: &mut f64, a: f64) -> f64 {
        let r23 = 0.5f64.powi(23);
        let r46 = r23 * r23;
        let t23 = 2.0f64.powi(23);
        let t46 = t23 * t23;
        let t1 = r23 * a;
        let a1 = t1.trunc();
        let a2 = a - t23 * a1;
        let t1 = r23 * *x;
        let x1 = t1.trunc();
        let x2 = *x - t23 * x1;
        let t1 = a1 * x2 + a2 * x1;
        let t2 = (r23 * t1).trunc();
        let z = t1 - t23 * t2;
        let t3 = t23 * z + a2 * x2;
        let t4 = (r46 * t3).trunc();
        *x = t3 - t46 * t4;
        r46 * *x
    }

    #[test]
    fn randlc_matches_the_reference_arithmetic() {
        let (mut a, mut b) = (314_159_265.0, 314_159_265.0);
        for _ in 0..10_000 {
            assert_eq!(randlc(&mut a, RANDLC_A), randlc_reference(&mut b, RANDLC_A));
            assert_eq!(a, b);
        }
    }

    #[test]
    fn vranlc_and_jumps_agree_with_stepping() {
        let mut x = 271_828_183.0;
        let mut y = vec![0.0; 1000];
        vranlc(&mut x, RANDLC_A, &mut y);
        let mut z = 271_828_183.0;
        for v in &y {
            assert_eq!(*v, randlc(&mut z, RANDLC_A));
        }
        assert_eq!(x, z);
        let mut w = 271_828_183.0;
        randlc(&mut w, pow_mod46(RANDLC_A, 1000));
        assert_eq!(w, x);
    }

    #[test]
    fn report_block_names_the_verdict() {
        let r = Report {
            name: "EP",
            class: Class::S,
            size: (33_554_432, 0, 0),
            iterations: 0,
            seconds: 1.5,
            processes: 4,
            mops_total: 100.0,
            operation: "Random numbers generated",
            verified: true,
            checks: vec![],
        };
        let text = r.render();
        assert!(text.contains(" EP Benchmark Completed."));
        assert!(text.contains("Verification    =               SUCCESSFUL"));
        assert!(text.contains("Mop/s/process   =                    25.00"));
    }
}
