//! LU's point-to-point exchanges (the reference's exchange_1, exchange_3, exchange_4,
//! exchange_5, exchange_6), same partners, tags, sizes and order. Every receive names
//! its source: the reference does too, so there is no wildcard receive here.

use super::grid::{Sub, FROM_E, FROM_N, FROM_S, FROM_W};
use crate::common::NpbError;
use volpex::Communicator;

fn send(comm: &Communicator, to: i32, buf: &[f64], tag: i32) -> Result<(), NpbError> {
    comm.process_at_rank(to).send_with_tag(buf, tag)?;
    Ok(())
}

fn recv(comm: &Communicator, from: i32, n: usize, tag: i32) -> Result<Vec<f64>, NpbError> {
    let mut buf = vec![0.0; n];
    comm.process_at_rank(from)
        .receive_into_with_tag(&mut buf[..], tag)?;
    Ok(buf)
}

/// Which half of exchange_1 (the reference's iex).
#[derive(Clone, Copy)]
pub enum Ex1 {
    /// Before blts: the k-plane's north row and west column.
    RecvLower,
    /// Before buts: the south row and east column.
    RecvUpper,
    /// After blts: send the last row south and the last column east.
    SendLower,
    /// After buts: send the first row north and the first column west.
    SendUpper,
}

/// exchange_1: one plane's boundary values of `g` for the wavefront sweeps.
pub fn exchange_1(
    comm: &Communicator,
    s: &Sub,
    g: &mut [f64],
    k: isize,
    iex: Ex1,
) -> Result<(), NpbError> {
    let (nx, ny) = (s.nx as isize, s.ny as isize);
    let row = |g: &[f64], i: isize| -> Vec<f64> {
        (s.jst..=s.jend)
            .flat_map(|j| g[s.at(i, j, k)..s.at(i, j, k) + 5].to_vec())
            .collect()
    };
    let col = |g: &[f64], j: isize| -> Vec<f64> {
        (s.ist..=s.iend)
            .flat_map(|i| g[s.at(i, j, k)..s.at(i, j, k) + 5].to_vec())
            .collect()
    };
    let nj = 5 * (s.jend - s.jst + 1) as usize;
    let ni = 5 * (s.iend - s.ist + 1) as usize;
    match iex {
        Ex1::RecvLower | Ex1::RecvUpper => {
            let lower = matches!(iex, Ex1::RecvLower);
            let (ns, ntag, i_at) = if lower {
                (s.north, FROM_N, 0)
            } else {
                (s.south, FROM_S, nx + 1)
            };
            if let Some(p) = ns {
                let b = recv(comm, p, nj, ntag)?;
                for (n, j) in (s.jst..=s.jend).enumerate() {
                    let at = s.at(i_at, j, k);
                    g[at..at + 5].copy_from_slice(&b[5 * n..5 * n + 5]);
                }
            }
            let (we, wtag, j_at) = if lower {
                (s.west, FROM_W, 0)
            } else {
                (s.east, FROM_E, ny + 1)
            };
            if let Some(p) = we {
                let b = recv(comm, p, ni, wtag)?;
                for (n, i) in (s.ist..=s.iend).enumerate() {
                    let at = s.at(i, j_at, k);
                    g[at..at + 5].copy_from_slice(&b[5 * n..5 * n + 5]);
                }
            }
        }
        Ex1::SendLower => {
            if let Some(p) = s.south {
                send(comm, p, &row(g, nx), FROM_N)?;
            }
            if let Some(p) = s.east {
                send(comm, p, &col(g, ny), FROM_W)?;
            }
        }
        Ex1::SendUpper => {
            if let Some(p) = s.north {
                send(comm, p, &row(g, 1), FROM_S)?;
            }
            if let Some(p) = s.west {
                send(comm, p, &col(g, 1), FROM_E)?;
            }
        }
    }
    Ok(())
}

/// exchange_3: two layers of `g` across the north/south (`iex` = 0) or east/west (1)
/// sub-domain faces, for the right-hand side.
pub fn exchange_3(comm: &Communicator, s: &Sub, g: &mut [f64], iex: u8) -> Result<(), NpbError> {
    let (nx, ny, nz) = (s.nx as isize, s.ny as isize, s.nz as isize);
    if iex == 0 {
        let pack = |g: &[f64], i1: isize, i2: isize| -> Vec<f64> {
            let mut b = Vec::with_capacity(10 * (ny * nz) as usize);
            for i in [i1, i2] {
                for k in 1..=nz {
                    for j in 1..=ny {
                        b.extend_from_slice(&g[s.at(i, j, k)..s.at(i, j, k) + 5]);
                    }
                }
            }
            b
        };
        let unpack = |g: &mut [f64], b: &[f64], i1: isize, i2: isize| {
            let mut at = 0;
            for i in [i1, i2] {
                for k in 1..=nz {
                    for j in 1..=ny {
                        let p = s.at(i, j, k);
                        g[p..p + 5].copy_from_slice(&b[at..at + 5]);
                        at += 5;
                    }
                }
            }
        };
        let n = 10 * (ny * nz) as usize;
        if let Some(p) = s.south {
            send(comm, p, &pack(g, nx - 1, nx), FROM_N)?;
        }
        if let Some(p) = s.north {
            let b = recv(comm, p, n, FROM_N)?;
            unpack(g, &b, -1, 0);
        }
        if let Some(p) = s.north {
            send(comm, p, &pack(g, 2, 1), FROM_S)?;
        }
        if let Some(p) = s.south {
            let b = recv(comm, p, n, FROM_S)?;
            unpack(g, &b, nx + 2, nx + 1);
        }
    } else {
        let pack = |g: &[f64], j1: isize, j2: isize| -> Vec<f64> {
            let mut b = Vec::with_capacity(10 * (nx * nz) as usize);
            for j in [j1, j2] {
                for k in 1..=nz {
                    for i in 1..=nx {
                        b.extend_from_slice(&g[s.at(i, j, k)..s.at(i, j, k) + 5]);
                    }
                }
            }
            b
        };
        let unpack = |g: &mut [f64], b: &[f64], j1: isize, j2: isize| {
            let mut at = 0;
            for j in [j1, j2] {
                for k in 1..=nz {
                    for i in 1..=nx {
                        let p = s.at(i, j, k);
                        g[p..p + 5].copy_from_slice(&b[at..at + 5]);
                        at += 5;
                    }
                }
            }
        };
        let n = 10 * (nx * nz) as usize;
        if let Some(p) = s.east {
            send(comm, p, &pack(g, ny - 1, ny), FROM_W)?;
        }
        if let Some(p) = s.west {
            let b = recv(comm, p, n, FROM_W)?;
            unpack(g, &b, -1, 0);
        }
        if let Some(p) = s.west {
            send(comm, p, &pack(g, 2, 1), FROM_E)?;
        }
        if let Some(p) = s.east {
            let b = recv(comm, p, n, FROM_E)?;
            unpack(g, &b, ny + 2, ny + 1);
        }
    }
    Ok(())
}

/// A 2-D array indexed 0..=d+1 in both directions (pintgr's phi1/phi2).
pub struct Plane {
    /// Side length (d + 2).
    pub side: usize,
    /// Values.
    pub v: Vec<f64>,
}

impl Plane {
    /// Zeros for indices 0..=d+1.
    pub fn new(d: usize) -> Plane {
        Plane {
            side: d + 2,
            v: vec![0.0; (d + 2) * (d + 2)],
        }
    }
    /// Element (a, b).
    #[inline]
    pub fn at(&self, a: isize, b: isize) -> usize {
        a as usize + self.side * b as usize
    }
}

/// exchange_4: pintgr's first surface values across the east and south faces.
#[allow(clippy::too_many_arguments)]
pub fn exchange_4(
    comm: &Communicator,
    s: &Sub,
    g: &mut Plane,
    h: &mut Plane,
    ibeg: isize,
    ifin1: isize,
    jbeg: isize,
    jfin1: isize,
) -> Result<(), NpbError> {
    let (nx, ny) = (s.nx as isize, s.ny as isize);
    if jfin1 == ny {
        if let Some(p) = s.east {
            let b = recv(comm, p, 2 * nx as usize, FROM_E)?;
            for i in 1..=nx {
                let (gi, hi) = (g.at(i, ny + 1), h.at(i, ny + 1));
                g.v[gi] = b[(i - 1) as usize];
                h.v[hi] = b[(i - 1 + nx) as usize];
            }
        }
    }
    if jbeg == 1 {
        if let Some(p) = s.west {
            let mut b: Vec<f64> = (1..=nx).map(|i| g.v[g.at(i, 1)]).collect();
            b.extend((1..=nx).map(|i| h.v[h.at(i, 1)]));
            send(comm, p, &b, FROM_E)?;
        }
    }
    let ny2 = ny + 2;
    if ifin1 == nx {
        if let Some(p) = s.south {
            let b = recv(comm, p, 2 * ny2 as usize, FROM_S)?;
            for j in 0..=ny + 1 {
                let (gi, hi) = (g.at(nx + 1, j), h.at(nx + 1, j));
                g.v[gi] = b[j as usize];
                h.v[hi] = b[(j + ny2) as usize];
            }
        }
    }
    if ibeg == 1 {
        if let Some(p) = s.north {
            let mut b: Vec<f64> = (0..=ny + 1).map(|j| g.v[g.at(1, j)]).collect();
            b.extend((0..=ny + 1).map(|j| h.v[h.at(1, j)]));
            send(comm, p, &b, FROM_S)?;
        }
    }
    Ok(())
}

/// exchange_5: pintgr's i-direction surface values (`g(i, k)`) across the south face.
pub fn exchange_5(
    comm: &Communicator,
    s: &Sub,
    g: &mut Plane,
    ibeg: isize,
    ifin1: isize,
) -> Result<(), NpbError> {
    let (nx, nz) = (s.nx as isize, s.nz as isize);
    if ifin1 == nx {
        if let Some(p) = s.south {
            let b = recv(comm, p, nz as usize, FROM_S)?;
            for k in 1..=nz {
                let gi = g.at(nx + 1, k);
                g.v[gi] = b[(k - 1) as usize];
            }
        }
    }
    if ibeg == 1 {
        if let Some(p) = s.north {
            let b: Vec<f64> = (1..=nz).map(|k| g.v[g.at(1, k)]).collect();
            send(comm, p, &b, FROM_S)?;
        }
    }
    Ok(())
}

/// exchange_6: pintgr's j-direction surface values (`g(j, k)`) across the east face.
pub fn exchange_6(
    comm: &Communicator,
    s: &Sub,
    g: &mut Plane,
    jbeg: isize,
    jfin1: isize,
) -> Result<(), NpbError> {
    let (ny, nz) = (s.ny as isize, s.nz as isize);
    if jfin1 == ny {
        if let Some(p) = s.east {
            let b = recv(comm, p, nz as usize, FROM_E)?;
            for k in 1..=nz {
                let gi = g.at(ny + 1, k);
                g.v[gi] = b[(k - 1) as usize];
            }
        }
    }
    if jbeg == 1 {
        if let Some(p) = s.west {
            let b: Vec<f64> = (1..=nz).map(|k| g.v[g.at(1, k)]).collect();
            send(comm, p, &b, FROM_E)?;
        }
    }
    Ok(())
}
