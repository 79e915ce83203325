//! MG's decomposition and halo exchanges: the extents and neighbours of every level on
//! the process grid (the reference's setup), the face boxes, and comm3 (ready, give3,
//! take3 with the reference's tags; periodic copies on one process) and comm3_ex (levels
//! where ranks run out of points). Moves ghost layers only; never computes on the grid.

use volpex::Communicator;

use crate::common::{log2, NpbError};

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
pub(super) struct Level {
    /// m1, m2, m3: local points per axis plus the two ghost layers.
    pub(super) m: [usize; 3],
    /// Neighbour rank per axis and direction (see `di`).
    pub(super) nbr: [[i32; 2]; 3],
    /// This rank has no points on the level (comm3 only clears it).
    pub(super) dead: bool,
    /// comm3_ex sends (give) or receives (take) along an axis on this level.
    pub(super) give_ex: [bool; 3],
    pub(super) take_ex: [bool; 3],
}

impl Level {
    pub(super) fn len(&self) -> usize {
        self.m[0] * self.m[1] * self.m[2]
    }
}

/// The decomposition of every level (the reference's setup); levels are 1..=lt.
pub(super) struct Layout {
    pub(super) lt: usize,
    pub(super) levels: Vec<Level>,
    /// First global interior index (1-based, the reference's is1..is3) at the top level.
    pub(super) start: [i64; 3],
}

impl Layout {
    pub(super) fn new(nx: usize, nprocs: usize, me: usize) -> Layout {
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
pub(super) fn at(m: &[usize; 3], i1: usize, i2: usize, i3: usize) -> usize {
    (i1 - 1) + m[0] * ((i2 - 1) + m[1] * (i3 - 1))
}

/// Start of the 1-based row (i2, i3).
#[inline]
pub(super) fn row(m: &[usize; 3], i2: usize, i3: usize) -> usize {
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
pub(super) struct Halo<'a> {
    world: &'a Communicator,
    nprocs: i32,
    send: Vec<f64>,
    recv_minus: Vec<f64>,
    recv_plus: Vec<f64>,
}

impl<'a> Halo<'a> {
    /// No exchange buffers yet: they grow to the largest face.
    pub(super) fn new(world: &'a Communicator, nprocs: i32) -> Halo<'a> {
        Halo {
            world,
            nprocs,
            send: Vec::new(),
            recv_minus: Vec::new(),
            recv_plus: Vec::new(),
        }
    }

    /// comm3: refreshes the ghost layers of `u` on level `lev`.
    pub(super) fn comm3(&mut self, u: &mut [f64], lev: &Level) -> Result<(), NpbError> {
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
    pub(super) fn comm3_ex(&mut self, u: &mut [f64], lev: &Level) -> Result<(), NpbError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
