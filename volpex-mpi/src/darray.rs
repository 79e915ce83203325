//! Datatypes for parts of multidimensional arrays (MPI-3.1 sections 4.1.3 and 4.1.4):
//! MPI_Type_create_subarray (a box of an array) and MPI_Type_create_darray (the part of
//! a distributed array one process of a grid owns: block, cyclic or not distributed in
//! each dimension, C or Fortran order). Both are the same computation: which indices
//! each dimension keeps, then the array's elements those select, in array order, with
//! the whole array as the extent. Must never look at memory.

use std::os::raw::c_int;
use std::sync::Arc;

use crate::datatype::envelope::{Combiner, Contents};
use crate::datatype::Datatype;
use crate::error::{MpiError, Result};

/// MPI_ORDER_C.
pub const ORDER_C: c_int = 56;
/// MPI_ORDER_FORTRAN.
pub const ORDER_FORTRAN: c_int = 57;
/// MPI_DISTRIBUTE_BLOCK.
pub const DISTRIBUTE_BLOCK: c_int = 121;
/// MPI_DISTRIBUTE_CYCLIC.
pub const DISTRIBUTE_CYCLIC: c_int = 122;
/// MPI_DISTRIBUTE_NONE.
pub const DISTRIBUTE_NONE: c_int = 123;
/// MPI_DISTRIBUTE_DFLT_DARG.
pub const DISTRIBUTE_DFLT_DARG: c_int = -49767;

/// Most runs of elements a subarray or darray may have.
const RUNS_MAX: u64 = 1 << 24;

/// The indices a dimension keeps, as runs (start, length), increasing.
type Runs = Vec<(i64, i64)>;

fn bad(f: &str, what: String) -> MpiError {
    MpiError::arg(format!("{f}: {what}"))
}

/// The type of the elements `keep` selects in an array of `sizes` (`keep[d]`: the runs
/// of indices of dimension `d`), in array order (C: the last dimension varies fastest;
/// Fortran: the first), with lower bound 0 and the whole array as its extent.
fn select(
    f: &str,
    contents: Contents,
    sizes: &[i64],
    keep: &[Runs],
    fortran: bool,
    old: Arc<Datatype>,
) -> Result<Datatype> {
    let n = sizes.len();
    // Dimensions from the slowest to the fastest.
    let order: Vec<usize> = if fortran {
        (0..n).rev().collect()
    } else {
        (0..n).collect()
    };
    let sz: Vec<i64> = order.iter().map(|&d| sizes[d]).collect();
    let idx: Vec<Vec<i64>> = order[..n - 1]
        .iter()
        .map(|&d| keep[d].iter().flat_map(|&(s, l)| s..s + l).collect())
        .collect();
    let fast = &keep[order[n - 1]];
    let rows: u64 = idx.iter().map(|v| v.len() as u64).product();
    if rows.saturating_mul(fast.len() as u64) > RUNS_MAX {
        return Err(bad(f, format!("more than {RUNS_MAX} runs of elements")));
    }
    let too_large = || bad(f, "the array is too large".into());
    let ext = old.extent as i128;
    let mut parts = Vec::new();
    let mut at = vec![0usize; n - 1];
    if !fast.is_empty() && idx.iter().all(|v| !v.is_empty()) {
        'rows: loop {
            let mut lin: i128 = 0;
            for d in 0..n - 1 {
                lin = lin * sz[d] as i128 + idx[d][at[d]] as i128;
            }
            for &(s, l) in fast {
                let disp = (lin * sz[n - 1] as i128 + s as i128) * ext;
                let disp = isize::try_from(disp).map_err(|_| too_large())?;
                parts.push((disp, l as usize, old.clone()));
            }
            // The next row, odometer-wise.
            for d in (0..n - 1).rev() {
                at[d] += 1;
                if at[d] < idx[d].len() {
                    continue 'rows;
                }
                at[d] = 0;
            }
            break;
        }
    }
    let mut t = Datatype::derived(contents, &parts)?;
    let whole: i128 = sizes.iter().map(|&s| s as i128).product::<i128>() * ext;
    t.set_bounds(0, isize::try_from(whole).map_err(|_| too_large())?);
    Ok(t)
}

fn fortran_order(f: &str, order: c_int) -> Result<bool> {
    match order {
        ORDER_C => Ok(false),
        ORDER_FORTRAN => Ok(true),
        o => Err(bad(f, format!("invalid order {o}"))),
    }
}

/// MPI_Type_create_subarray: the `subsizes` box at `starts` of an array of `sizes`.
pub fn subarray(
    sizes: &[c_int],
    subsizes: &[c_int],
    starts: &[c_int],
    order: c_int,
    old: Arc<Datatype>,
) -> Result<Datatype> {
    const F: &str = "MPI_Type_create_subarray";
    let n = sizes.len();
    if n == 0 || subsizes.len() != n || starts.len() != n {
        return Err(bad(F, "ndims must be at least 1".into()));
    }
    let fortran = fortran_order(F, order)?;
    let mut keep = Vec::with_capacity(n);
    for d in 0..n {
        let (s, b, a) = (
            i64::from(sizes[d]),
            i64::from(subsizes[d]),
            i64::from(starts[d]),
        );
        if s < 1 || b < 1 || a < 0 || a + b > s {
            return Err(bad(
                F,
                format!("dimension {d}: subsize {b} at {a} does not fit in size {s}"),
            ));
        }
        keep.push(vec![(a, b)]);
    }
    let mut ints = vec![n as c_int];
    ints.extend_from_slice(sizes);
    ints.extend_from_slice(subsizes);
    ints.extend_from_slice(starts);
    ints.push(order);
    let contents = Contents::new(Combiner::Subarray, ints, vec![], vec![old.clone()]);
    let sizes: Vec<i64> = sizes.iter().map(|&s| i64::from(s)).collect();
    select(F, contents, &sizes, &keep, fortran, old)
}

/// The arguments of MPI_Type_create_darray.
pub struct Darray<'a> {
    /// Processes in the grid.
    pub size: c_int,
    /// This process's rank in it.
    pub rank: c_int,
    /// `array_of_gsizes`.
    pub gsizes: &'a [c_int],
    /// `array_of_distribs`.
    pub distribs: &'a [c_int],
    /// `array_of_dargs`.
    pub dargs: &'a [c_int],
    /// `array_of_psizes`.
    pub psizes: &'a [c_int],
    /// MPI_ORDER_C or MPI_ORDER_FORTRAN.
    pub order: c_int,
}

/// The indices of a dimension of `g` elements that process `c` of `p` owns under
/// `distrib` with argument `darg` (MPI-3.1 section 4.1.4).
fn owned(d: usize, g: i64, distrib: c_int, darg: c_int, p: i64, c: i64) -> Result<Runs> {
    const F: &str = "MPI_Type_create_darray";
    let darg = i64::from(darg);
    let dflt = darg == i64::from(DISTRIBUTE_DFLT_DARG);
    match distrib {
        DISTRIBUTE_NONE => {
            if p != 1 {
                return Err(bad(
                    F,
                    format!("dimension {d} is MPI_DISTRIBUTE_NONE over {p} processes (must be 1)"),
                ));
            }
            Ok(vec![(0, g)])
        }
        DISTRIBUTE_BLOCK => {
            let b = if dflt { (g + p - 1) / p } else { darg };
            if b < 1 || b * p < g {
                return Err(bad(
                    F,
                    format!("dimension {d}: blocks of {b} over {p} processes do not cover {g}"),
                ));
            }
            let start = (c * b).min(g);
            let end = ((c + 1) * b).min(g);
            Ok(if end > start {
                vec![(start, end - start)]
            } else {
                vec![]
            })
        }
        DISTRIBUTE_CYCLIC => {
            let b = if dflt { 1 } else { darg };
            if b < 1 {
                return Err(bad(
                    F,
                    format!("dimension {d}: invalid cyclic argument {b}"),
                ));
            }
            let mut runs = Vec::new();
            let mut s = c * b;
            while s < g {
                runs.push((s, b.min(g - s)));
                s += p * b;
            }
            Ok(runs)
        }
        other => Err(bad(
            F,
            format!("dimension {d}: invalid distribution {other}"),
        )),
    }
}

/// MPI_Type_create_darray: the elements process `rank` of a grid of `psizes` processes
/// (in row-major order, as a Cartesian topology numbers them) owns.
pub fn darray(a: &Darray<'_>, old: Arc<Datatype>) -> Result<Datatype> {
    const F: &str = "MPI_Type_create_darray";
    let n = a.gsizes.len();
    if n == 0 || [a.distribs.len(), a.dargs.len(), a.psizes.len()] != [n; 3] {
        return Err(bad(F, "ndims must be at least 1".into()));
    }
    let fortran = fortran_order(F, a.order)?;
    let grid: i64 = a.psizes.iter().map(|&p| i64::from(p)).product();
    if a.psizes.iter().any(|&p| p < 1) || grid != i64::from(a.size) {
        return Err(bad(
            F,
            format!("a grid of {:?} processes is not size {}", a.psizes, a.size),
        ));
    }
    if a.rank < 0 || a.rank >= a.size {
        return Err(bad(F, format!("rank {} outside 0..{}", a.rank, a.size)));
    }
    let mut coords = vec![0i64; n];
    let mut r = i64::from(a.rank);
    for d in (0..n).rev() {
        coords[d] = r % i64::from(a.psizes[d]);
        r /= i64::from(a.psizes[d]);
    }
    let mut keep = Vec::with_capacity(n);
    for (d, &c) in coords.iter().enumerate() {
        let g = i64::from(a.gsizes[d]);
        if g < 1 {
            return Err(bad(F, format!("dimension {d}: invalid size {g}")));
        }
        let p = i64::from(a.psizes[d]);
        keep.push(owned(d, g, a.distribs[d], a.dargs[d], p, c)?);
    }
    let mut ints = vec![a.size, a.rank, n as c_int];
    for v in [a.gsizes, a.distribs, a.dargs, a.psizes] {
        ints.extend_from_slice(v);
    }
    ints.push(a.order);
    let contents = Contents::new(Combiner::Darray, ints, vec![], vec![old.clone()]);
    let sizes: Vec<i64> = a.gsizes.iter().map(|&s| i64::from(s)).collect();
    select(F, contents, &sizes, &keep, fortran, old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::predefined::{index_of, PREDEFINED};

    fn int() -> Arc<Datatype> {
        Arc::new(Datatype::predefined(
            &PREDEFINED[index_of("MPI_INT").unwrap()],
        ))
    }

    /// The element indices (in units of MPI_INT) a type selects.
    fn elements(t: &Datatype) -> Vec<isize> {
        t.blocks
            .iter()
            .flat_map(|&(o, l)| (o / 4..(o + l as isize) / 4).collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn subarray_in_both_orders() {
        // 4 x 5 array, the 2 x 3 box at (1, 2).
        let c = subarray(&[4, 5], &[2, 3], &[1, 2], ORDER_C, int()).unwrap();
        assert_eq!(elements(&c), [7, 8, 9, 12, 13, 14]);
        assert_eq!((c.lb, c.extent, c.size), (0, 80, 24));
        let f = subarray(&[4, 5], &[2, 3], &[1, 2], ORDER_FORTRAN, int()).unwrap();
        // Fortran order: element (i, j) is at i + 4 j.
        assert_eq!(elements(&f), [9, 10, 13, 14, 17, 18]);
        assert!(subarray(&[4], &[3], &[2], ORDER_C, int()).is_err());
    }

    /// MPI-3.1 section 4.1.4, computed by hand: a 6 x 5 array over a 2 x 2 grid, block
    /// rows and cyclic(2) columns; rank 3 is grid (1, 1).
    #[test]
    fn darray_block_cyclic_by_hand() {
        let a = Darray {
            size: 4,
            rank: 3,
            gsizes: &[6, 5],
            distribs: &[DISTRIBUTE_BLOCK, DISTRIBUTE_CYCLIC],
            dargs: &[DISTRIBUTE_DFLT_DARG, 2],
            psizes: &[2, 2],
            order: ORDER_C,
        };
        let t = darray(&a, int()).unwrap();
        // Rows 3..6, columns 2, 3.
        assert_eq!(elements(&t), [17, 18, 22, 23, 27, 28]);
        assert_eq!((t.lb, t.extent), (0, 120));
        let f = darray(
            &Darray {
                order: ORDER_FORTRAN,
                ..a
            },
            int(),
        )
        .unwrap();
        // Fortran order: (i, j) at i + 6 j; rows 3..6 of columns 2 and 3.
        assert_eq!(elements(&f), [15, 16, 17, 21, 22, 23]);
        let none = darray(
            &Darray {
                size: 2,
                rank: 1,
                gsizes: &[3, 4],
                distribs: &[DISTRIBUTE_NONE, DISTRIBUTE_BLOCK],
                dargs: &[0, DISTRIBUTE_DFLT_DARG],
                psizes: &[1, 2],
                order: ORDER_C,
            },
            int(),
        )
        .unwrap();
        assert_eq!(elements(&none), [2, 3, 6, 7, 10, 11]);
    }

    #[test]
    fn darray_refuses_bad_grids() {
        let a = Darray {
            size: 3,
            rank: 0,
            gsizes: &[6],
            distribs: &[DISTRIBUTE_BLOCK],
            dargs: &[1],
            psizes: &[3],
            order: ORDER_C,
        };
        assert!(darray(&a, int()).is_err(), "blocks of 1 do not cover 6");
        assert!(darray(
            &Darray {
                psizes: &[2],
                dargs: &[DISTRIBUTE_DFLT_DARG],
                ..a
            },
            int()
        )
        .is_err());
        // A process with nothing: 2 elements cyclic over 3 processes, rank 2.
        let t = darray(
            &Darray {
                rank: 2,
                gsizes: &[2],
                distribs: &[DISTRIBUTE_CYCLIC],
                dargs: &[DISTRIBUTE_DFLT_DARG],
                ..a
            },
            int(),
        )
        .unwrap();
        assert_eq!((t.size, t.extent), (0, 8));
    }
}
