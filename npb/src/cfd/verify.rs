//! The comparison against official values that BT, SP and LU print and use (the
//! reference's verify routines), and the shared tail of their runs: timing as the
//! maximum over ranks.

use crate::common::{rel_ok, NpbError};

/// Official values of one class.
#[derive(Clone, Copy, Debug)]
pub struct Refs {
    /// Time step the values were computed with.
    pub dt: f64,
    /// RMS norms of the residual.
    pub xcr: [f64; 5],
    /// RMS norms of the solution error.
    pub xce: [f64; 5],
    /// LU's surface integral.
    pub xci: Option<f64>,
}

/// Tolerance of every check.
pub const EPSILON: f64 = 1.0e-8;

/// Compares (printing the reference's comparison lines when `print`) and returns whether
/// everything matched. `refs` is None for a class without official values.
pub fn compare(
    print: bool,
    dt: f64,
    xcr: &[f64; 5],
    xce: &[f64; 5],
    xci: Option<f64>,
    refs: Option<Refs>,
) -> bool {
    let Some(r) = refs else {
        if print {
            println!(" No reference values provided");
            println!(" No verification performed");
        }
        return false;
    };
    let mut ok = (dt - r.dt).abs() <= EPSILON;
    if print {
        println!(" Verification being performed");
        println!(" accuracy setting for epsilon = {EPSILON:20.13E}");
        if !ok {
            println!(" DT does not match the reference value of {:15.8E}", r.dt);
        }
    }
    let mut line = |label: &str, x: &[f64; 5], refv: &[f64; 5]| {
        if print {
            println!(" Comparison of RMS-norms of {label}");
        }
        for m in 0..5 {
            let good = rel_ok(x[m], refv[m], EPSILON);
            ok &= good;
            if print {
                let dif = ((x[m] - refv[m]) / refv[m]).abs();
                let tag = if good { "         " } else { " FAILURE:" };
                println!(
                    "{tag} {:2} {:20.13E}{:20.13E}{:20.13E}",
                    m + 1,
                    x[m],
                    refv[m],
                    dif
                );
            }
        }
    };
    line("residual", xcr, &r.xcr);
    line("solution error", xce, &r.xce);
    if let (Some(x), Some(refv)) = (xci, r.xci) {
        let good = rel_ok(x, refv, EPSILON);
        ok &= good;
        if print {
            println!(" Comparison of surface integral");
            let tag = if good { "         " } else { " FAILURE:" };
            let dif = ((x - refv) / refv).abs();
            println!("{tag}    {x:20.13E}{refv:20.13E}{dif:20.13E}");
        }
    }
    if print {
        println!(" Verification {}", if ok { "Successful" } else { "failed" });
    }
    ok
}

/// The maximum of `t` over all ranks, at every rank.
pub fn max_time(world: &volpex::Communicator, t: f64) -> Result<f64, NpbError> {
    let mut out = [0.0];
    world.all_reduce_into(&[t][..], &mut out[..], volpex::SystemOperation::max())?;
    Ok(out[0])
}
