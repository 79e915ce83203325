//! The run BT and SP share: the banner, setup, one untimed step to touch all code and
//! data, the timed steps, verification and the report. It owns no numerics: the time
//! step, its workspace, the class table, the official values and the operation count
//! come from the benchmark.

use serde::{Deserialize, Serialize};

use super::faces::copy_faces;
use super::init::{exact_rhs, initialize};
use super::norms::{error_norm, rhs_norm};
use super::verify::{compare, max_time, Refs};
use super::{Constants, Decomp, Flow, Layout};
use crate::checkpoint::{ensure, Checkpoints, F64s};
use crate::common::{Class, NpbError, Report};

/// Default checkpoint interval, in time steps (a step costs far less than a V-cycle or
/// an FFT iteration, and BT and SP take 60 to 400 of them).
pub const CHECKPOINT_EVERY: u64 = 10;

/// What the rest of a BT or SP run needs after a time step: the solution u of each of
/// this rank's cells, ghosts included (rhs, the derived quantities and the solves'
/// workspace are rebuilt by the next step, the forcing term locally by exact_rhs), and
/// the timer.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct State<'a> {
    /// Time steps done.
    pub done: u64,
    /// Seconds of the timed section so far.
    pub elapsed: f64,
    /// u of each cell, in the decomposition's order.
    pub u: Vec<F64s<'a>>,
}

/// What a pseudo-application brings to the shared run.
pub struct App {
    /// "BT" or "SP".
    pub name: &'static str,
    /// Grid points per direction, iterations and time step of the class.
    pub params: (usize, u64, f64),
    /// Whether the flow keeps the speed of sound (`Flow::new`).
    pub with_speed: bool,
    /// Whether the last step is announced too (as the reference prints it).
    pub announce_last: bool,
    /// The official values, if any are on file for the class.
    pub refs: Option<Refs>,
    /// Mop/s total from the grid size, the iterations and the seconds taken (> 0).
    pub mops: fn(f64, u64, f64) -> f64,
}

/// Runs `app` of `class` on `world`: `work` makes the time step's workspace, `step`
/// advances the flow by one time step; checkpoints after time steps.
pub fn run<L: Layout, W>(
    world: &volpex::Communicator,
    class: Class,
    ck: &Checkpoints,
    app: App,
    work: impl FnOnce(&Flow<L>) -> W,
    mut step: impl FnMut(&mut Flow<L>, &mut W) -> Result<(), NpbError>,
) -> Result<Report, NpbError> {
    let (size, niter, dt) = app.params;
    let dec = Decomp::new(app.name, world.size(), world.rank(), size)?;
    let root = world.rank() == 0;
    let restored = ck.restored::<State>()?;
    // A restored replica printed the banner before its checkpoint.
    if root && restored.is_none() {
        println!(
            "\n\n NAS Parallel Benchmarks 3.4 -- {} Benchmark\n",
            app.name
        );
        println!(" Size: {size:4}x{size:4}x{size:4}");
        println!(" Iterations: {niter:4}    dt: {dt:11.7}");
        println!(" Number of active processes: {:5}\n", world.size());
    }
    let k = Constants::new([size; 3], dt);
    let mut flow: Flow<L> = Flow::new(world, dec, k, app.with_speed);
    initialize(&mut flow);
    exact_rhs(&mut flow);
    let mut w = work(&flow);
    let (first, t0) = match restored {
        Some(st) => {
            ensure(
                st.done <= niter && st.u.len() == flow.cells.len(),
                "BT/SP step or cells",
            )?;
            for (cs, u) in flow.cells.iter_mut().zip(&st.u) {
                u.copy_into(&mut cs.u.data, "cell u")?;
            }
            (st.done, volpex::wtime() - st.elapsed)
        }
        None => {
            // One step to touch all code and data, then start again.
            step(&mut flow, &mut w)?;
            initialize(&mut flow);
            world.barrier()?;
            (0, volpex::wtime())
        }
    };
    for s in first + 1..=niter {
        if root && (s % 20 == 0 || s == 1 || (app.announce_last && s == niter)) {
            println!(" Time step {s:4}");
        }
        step(&mut flow, &mut w)?;
        ck.save(world, CHECKPOINT_EVERY, (s, niter), || State {
            done: s,
            elapsed: volpex::wtime() - t0,
            u: flow.cells.iter().map(|cs| F64s::of(&cs.u.data)).collect(),
        })?;
    }
    let t = volpex::wtime() - t0;
    let xce = error_norm(&flow, world)?;
    copy_faces(&mut flow)?;
    let mut xcr = rhs_norm(&flow, world)?;
    for x in &mut xcr {
        *x /= dt;
    }
    let verified = compare(root, dt, &xcr, &xce, None, app.refs);
    let tmax = max_time(world, t)?;
    let mops = if tmax > 0.0 {
        (app.mops)(size as f64, niter, tmax)
    } else {
        0.0
    };
    Ok(Report {
        name: app.name,
        class,
        size: (size as u64, size as u64, size as u64),
        iterations: niter,
        seconds: tmax,
        processes: world.size(),
        mops_total: mops,
        operation: "floating point",
        verified,
        checks: xcr.iter().chain(&xce).copied().collect(),
    })
}
