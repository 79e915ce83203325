//! SP: the Scalar-Pentadiagonal pseudo-application (NPB 3.x MPI). Owns SP's class
//! table, official values, time-step driver (adi: copy_faces + compute_rhs, txinvr,
//! x/y/z pentadiagonal line solves, add) and report; the shared flow machinery is in
//! [`crate::cfd`], the line solves in [`solve`], the variable transformations in
//! [`invr`].

#![allow(clippy::needless_range_loop)]
// The official values are kept digit for digit as published.
#![allow(clippy::excessive_precision)]

pub mod invr;
pub mod solve;

use crate::cfd::drive::{self, App};
use crate::cfd::faces::copy_faces;
use crate::cfd::verify::Refs;
use crate::cfd::{Flow, Soa};
use crate::checkpoint::Checkpoints;
use crate::common::{Class, NpbError, Report};
use solve::{solve, Lhs};

/// Grid points per direction, iterations and time step of a class (setparams).
fn params(class: Class) -> (usize, u64, f64) {
    match class {
        Class::S => (12, 100, 0.015),
        Class::W => (36, 400, 0.0015),
        Class::A => (64, 400, 0.0015),
        Class::B => (102, 400, 0.001),
        Class::C => (162, 400, 0.00067),
    }
}

/// The official values (npb-verification.md); none are on file for class C.
fn refs(class: Class) -> Option<Refs> {
    let (dt, xcr, xce) = match class {
        Class::S => (
            1.5e-2,
            [
                2.7470315451339479e-02,
                1.0360746705285417e-02,
                1.6235745065095532e-02,
                1.5840557224455615e-02,
                3.4849040609362460e-02,
            ],
            [
                2.7289258557377227e-05,
                1.0364446640837285e-05,
                1.6154798287166471e-05,
                1.5750704994480102e-05,
                3.4177666183390531e-05,
            ],
        ),
        Class::W => (
            1.5e-3,
            [
                0.1893253733584e-02,
                0.1717075447775e-03,
                0.2778153350936e-03,
                0.2887475409984e-03,
                0.3143611161242e-02,
            ],
            [
                0.7542088599534e-04,
                0.6512852253086e-05,
                0.1049092285688e-04,
                0.1128838671535e-04,
                0.1212845639773e-03,
            ],
        ),
        Class::A => (
            1.5e-3,
            [
                2.4799822399300195e0,
                1.1276337964368832e0,
                1.5028977888770491e0,
                1.4217816211695179e0,
                2.1292113035138280e0,
            ],
            [
                1.0900140297820550e-04,
                3.7343951769282091e-05,
                5.0092785406541633e-05,
                4.7671093939528255e-05,
                1.3621613399213001e-04,
            ],
        ),
        Class::B => (
            1.0e-3,
            [
                0.6903293579998e+02,
                0.3095134488084e+02,
                0.4103336647017e+02,
                0.3864769009604e+02,
                0.5643482272596e+02,
            ],
            [
                0.9810006190188e-02,
                0.1022827905670e-02,
                0.1720597911692e-02,
                0.1694479428231e-02,
                0.1847456263981e-01,
            ],
        ),
        Class::C => return None,
    };
    Some(Refs {
        dt,
        xcr,
        xce,
        xci: None,
    })
}

/// One time step.
fn adi(flow: &mut Flow<Soa>, lhs: &mut Lhs) -> Result<(), NpbError> {
    copy_faces(flow)?;
    let k = flow.k.clone();
    for cs in &mut flow.cells {
        invr::txinvr(cs, &k);
    }
    for d in 0..3 {
        solve(flow, lhs, d)?;
    }
    flow.add();
    Ok(())
}

/// Runs SP of `class` on `world` (a square number of ranks).
pub fn run(
    world: &volpex::Communicator,
    class: Class,
    ck: &Checkpoints,
) -> Result<Report, NpbError> {
    let app = App {
        name: "SP",
        params: params(class),
        with_speed: true,
        announce_last: false,
        refs: refs(class),
        mops: |n, niter, t| {
            (881.174 * n * n * n - 4683.91 * n * n + 11484.5 * n - 19272.4) * niter as f64
                / (t * 1.0e6)
        },
    };
    drive::run::<Soa, _>(world, class, ck, app, Lhs::new, adi)
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
