//! BT: the Block-Tridiagonal pseudo-application (NPB 3.x MPI). Owns BT's class table,
//! official values, time-step driver (adi: copy_faces + compute_rhs, x/y/z block line
//! solves, add) and report; the shared flow machinery is in [`crate::cfd`], the 5x5
//! kernels in [`blocks`], the pipelined line solves in [`solve`].

#![allow(clippy::needless_range_loop)]
// The official values are kept digit for digit as published.
#![allow(clippy::excessive_precision)]

pub mod blocks;
pub mod solve;

use crate::cfd::drive::{self, App};
use crate::cfd::faces::copy_faces;
use crate::cfd::verify::Refs;
use crate::cfd::{Aos, Flow};
use crate::checkpoint::Checkpoints;
use crate::common::{Class, NpbError, Report};
use solve::{solve, SolveWork};

/// Grid points per direction, iterations and time step of a class (setparams).
fn params(class: Class) -> (usize, u64, f64) {
    match class {
        Class::S => (12, 60, 0.010),
        Class::W => (24, 200, 0.0008),
        Class::A => (64, 200, 0.0008),
        Class::B => (102, 200, 0.0003),
        Class::C => (162, 200, 0.0001),
    }
}

/// The official values (verify.f / npb-verification.md).
fn refs(class: Class) -> Refs {
    let (dt, xcr, xce) = match class {
        Class::S => (
            1.0e-2,
            [
                1.7034283709541311e-01,
                1.2975252070034097e-02,
                3.2527926989486055e-02,
                2.6436421275166801e-02,
                1.9211784131744430e-01,
            ],
            [
                4.9976913345811579e-04,
                4.5195666782961927e-05,
                7.3973765172921357e-05,
                7.3821238632439731e-05,
                8.9269630987491446e-04,
            ],
        ),
        Class::W => (
            0.8e-3,
            [
                0.1125590409344e+03,
                0.1180007595731e+02,
                0.2710329767846e+02,
                0.2469174937669e+02,
                0.2638427874317e+03,
            ],
            [
                0.4419655736008e+01,
                0.4638531260002e+00,
                0.1011551749967e+01,
                0.9235878729944e+00,
                0.1018045837718e+02,
            ],
        ),
        Class::A => (
            0.8e-3,
            [
                1.0806346714637264e+02,
                1.1319730901220813e+01,
                2.5974354511582465e+01,
                2.3665622544678910e+01,
                2.5278963211748344e+02,
            ],
            [
                4.2348416040525025e+00,
                4.4390282496995698e-01,
                9.6692480136345650e-01,
                8.8302063039765474e-01,
                9.7379901770829278e+00,
            ],
        ),
        Class::B => (
            3.0e-4,
            [
                1.4233597229287254e+03,
                9.9330522590150238e+01,
                3.5646025644535285e+02,
                3.2485447959084092e+02,
                3.2707541254659363e+03,
            ],
            [
                5.2969847140936856e+01,
                4.4632896115670668e+00,
                1.3122573342210174e+01,
                1.2006925323559144e+01,
                1.2459576151035986e+02,
            ],
        ),
        Class::C => (
            1.0e-4,
            [
                0.62398116551764615e+04,
                0.50793239190423964e+03,
                0.15423530093013596e+04,
                0.13302387929291190e+04,
                0.11604087428436455e+05,
            ],
            [
                0.16462008369091265e+03,
                0.11497107903824313e+02,
                0.41207446207461508e+02,
                0.37087651059694167e+02,
                0.36211053051841265e+03,
            ],
        ),
    };
    Refs {
        dt,
        xcr,
        xce,
        xci: None,
    }
}

/// One time step.
fn adi(flow: &mut Flow<Aos>, w: &mut SolveWork) -> Result<(), NpbError> {
    copy_faces(flow)?;
    for d in 0..3 {
        solve(flow, w, d)?;
    }
    flow.add();
    Ok(())
}

/// Runs BT of `class` on `world` (a square number of ranks).
pub fn run(
    world: &volpex::Communicator,
    class: Class,
    ck: &Checkpoints,
) -> Result<Report, NpbError> {
    let app = App {
        name: "BT",
        params: params(class),
        with_speed: false,
        announce_last: true,
        refs: Some(refs(class)),
        mops: |n, niter, t| {
            1.0e-6 * niter as f64 * (3478.8 * n * n * n - 17655.7 * n * n + 28023.7 * n) / t
        },
    };
    drive::run::<Aos, _>(world, class, ck, app, SolveWork::new, adi)
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
        crate::checkpoint::assert_states_round_trip::<drive::State>(&recorded);
    }
}
