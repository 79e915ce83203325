//! The ghost-face exchange of BT and SP (the reference's copy_faces): every process packs
//! the two outermost layers of u of all its cells facing each of the six directions into
//! one buffer per direction, sends the six buffers to its successor/predecessor in each
//! direction, receives the six matching buffers and unpacks them into the ghost layers;
//! then compute_rhs runs on the refreshed fields.

use super::rhs::compute_rhs;
use super::{Flow, Layout};
use crate::common::NpbError;

/// Message tags of the reference (header.h).
pub const EAST: i32 = 2000;
/// Tag of westward traffic.
pub const WEST: i32 = 3000;
/// Tag of northward traffic.
pub const NORTH: i32 = 4000;
/// Tag of southward traffic.
pub const SOUTH: i32 = 5000;
/// Tag of downward traffic.
pub const BOTTOM: i32 = 6000;
/// Tag of upward traffic.
pub const TOP: i32 = 7000;

/// Appends (`pack`) or fills from `buf` at `*at` (unpack) the layers `lo..lo+2` of
/// direction `d` of a cell's u, a row (contiguous i) at a time, k and j outer: with
/// interleaved storage the row's points with their components (the reference's order),
/// planar each component's part of the row in turn. Both ends of an exchange run this
/// code, so the order only has to agree with itself; row slices copy as memcpy, where
/// point by point the faces took three times the reference's time (SP class A, 4 ranks).
fn face<L: Layout>(
    cs: &mut super::CellState<L>,
    d: usize,
    lo: isize,
    buf: &mut Vec<f64>,
    at: &mut usize,
    pack: bool,
) {
    let n = cs.cell.size.map(|v| v as isize);
    let mut range = [(0, n[0]), (0, n[1]), (0, n[2])];
    range[d] = (lo, lo + 2);
    let len = (range[0].1 - range[0].0) as usize;
    let (runs, run_len) = if L::AOS { (1, 5 * len) } else { (5, len) };
    for k in range[2].0..range[2].1 {
        for j in range[1].0..range[1].1 {
            let p = cs.grid.at(range[0].0, j, k);
            for m in 0..runs {
                let start = cs.u.ix(m, p);
                let row = &mut cs.u.data[start..start + run_len];
                if pack {
                    buf.extend_from_slice(row);
                } else {
                    row.copy_from_slice(&buf[*at..*at + run_len]);
                    *at += run_len;
                }
            }
        }
    }
}

/// copy_faces followed by compute_rhs.
pub fn copy_faces<L: Layout>(flow: &mut Flow<L>) -> Result<(), NpbError> {
    let nc = flow.dec.ncells;
    if nc > 1 {
        // out[2d] goes to the successor in d (its high faces), out[2d+1] to the predecessor;
        // the buffers are the flow's, kept from one step to the next at their size.
        let (out, inb) = flow.faces.split_at_mut(6);
        for b in out.iter_mut() {
            b.clear();
        }
        let mut none = 0;
        for cs in &mut flow.cells {
            for d in 0..3 {
                let size = cs.cell.size[d] as isize;
                if cs.cell.coord[d] != nc - 1 {
                    face(cs, d, size - 2, &mut out[2 * d], &mut none, true);
                }
                if cs.cell.coord[d] != 0 {
                    face(cs, d, 0, &mut out[2 * d + 1], &mut none, true);
                }
            }
        }
        // What arrives mirrors what leaves: the successor's low faces fill our high ghost
        // layers, the predecessor's high faces our low ones.
        for (b, o) in inb.iter_mut().zip(out.iter()) {
            b.resize(o.len(), 0.0);
        }
        let (succ, pred) = (flow.dec.successor, flow.dec.predecessor);
        let up = [EAST, NORTH, TOP];
        let down = [WEST, SOUTH, BOTTOM];
        let comm = &flow.comm_rhs;
        // Sends are buffered, so posting all six first cannot deadlock.
        for d in 0..3 {
            comm.process_at_rank(succ[d])
                .send_with_tag(&out[2 * d][..], up[d])?;
            comm.process_at_rank(pred[d])
                .send_with_tag(&out[2 * d + 1][..], down[d])?;
        }
        for d in 0..3 {
            // Our high ghosts come from the successor's low faces, tagged as going down.
            let (hi, lo) = inb.split_at_mut(2 * d + 1);
            comm.process_at_rank(pred[d])
                .receive_into_with_tag(&mut lo[0][..], up[d])?;
            comm.process_at_rank(succ[d])
                .receive_into_with_tag(&mut hi[2 * d][..], down[d])?;
        }
        let mut at = [0usize; 6];
        for cs in &mut flow.cells {
            for d in 0..3 {
                let size = cs.cell.size[d] as isize;
                if cs.cell.coord[d] != 0 {
                    let (b, a) = (&mut inb[2 * d + 1], &mut at[2 * d + 1]);
                    face(cs, d, -2, b, a, false);
                }
                if cs.cell.coord[d] != nc - 1 {
                    let (b, a) = (&mut inb[2 * d], &mut at[2 * d]);
                    face(cs, d, size, b, a, false);
                }
            }
        }
    }
    let k = flow.k.clone();
    let with_speed = flow.with_speed;
    for cs in &mut flow.cells {
        compute_rhs(cs, &k, with_speed);
    }
    Ok(())
}
