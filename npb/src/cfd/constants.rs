//! The problem constants of the reference's set_constants (BT and SP; LU uses the same
//! exact-solution coefficients) and the manufactured exact solution.

/// Coefficients of the exact solution: `CE[m][0..13]` for component m (the reference's
/// `ce(m, 1..13)`).
pub const CE: [[f64; 13]; 5] = [
    [
        2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3,
    ],
    [
        1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5,
    ],
    [
        2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4,
    ],
    [
        2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3,
    ],
    [
        5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2,
    ],
];

/// The exact solution at (xi, eta, zeta) in the unit cube.
#[inline]
pub fn exact_solution(xi: f64, eta: f64, zeta: f64) -> [f64; 5] {
    let mut out = [0.0; 5];
    for (m, o) in out.iter_mut().enumerate() {
        let ce = &CE[m];
        *o = ce[0]
            + xi * (ce[1] + xi * (ce[4] + xi * (ce[7] + xi * ce[10])))
            + eta * (ce[2] + eta * (ce[5] + eta * (ce[8] + eta * ce[11])))
            + zeta * (ce[3] + zeta * (ce[6] + zeta * (ce[9] + zeta * ce[12])));
    }
    out
}

/// Gas constants of the reference (c1..c5).
pub const C1: f64 = 1.4;
/// c2.
pub const C2: f64 = 0.4;
/// c3.
pub const C3: f64 = 0.1;
/// c4.
pub const C4: f64 = 1.0;
/// c5.
pub const C5: f64 = 1.4;

/// Everything set_constants computes, with the per-direction quantities as arrays indexed
/// by direction (0 = x/xi, 1 = y/eta, 2 = z/zeta) so one routine serves all three.
#[derive(Clone, Debug)]
pub struct Constants {
    /// Time step.
    pub dt: f64,
    /// 1 / (grid points - 1) per direction.
    pub dnm1: [f64; 3],
    /// tx1, ty1, tz1.
    pub t1: [f64; 3],
    /// tx2, ty2, tz2.
    pub t2: [f64; 3],
    /// tx3, ty3, tz3.
    pub t3: [f64; 3],
    /// dx1..dx5, dy1..dy5, dz1..dz5.
    pub dd: [[f64; 5]; 3],
    /// dxmax, dymax, dzmax.
    pub dmax: [f64; 3],
    /// dx1tx1..dx5tx1 etc.
    pub dt1: [[f64; 5]; 3],
    /// xxcon1..xxcon5, yycon1.., zzcon1.. (index 0 = con1).
    pub con: [[f64; 5]; 3],
    /// dt * t1 per direction.
    pub dtt1: [f64; 3],
    /// dt * t2 per direction.
    pub dtt2: [f64; 3],
    /// 2 dt t1 per direction.
    pub c2dtt1: [f64; 3],
    /// c1 * c2.
    pub c1c2: f64,
    /// c1 * c5.
    pub c1c5: f64,
    /// c3 * c4.
    pub c3c4: f64,
    /// c1c5 * c3c4.
    pub c1345: f64,
    /// Dissipation coefficient.
    pub dssp: f64,
    /// dt * dssp.
    pub dtdssp: f64,
    /// sqrt(1/2).
    pub bt: f64,
    /// 4/3.
    pub con43: f64,
    /// 2.5.
    pub c2iv: f64,
}

impl Constants {
    /// The constants of a grid of `grid` points per direction and time step `dt`.
    pub fn new(grid: [usize; 3], dt: f64) -> Constants {
        let dnm1 = [
            1.0 / (grid[0] as f64 - 1.0),
            1.0 / (grid[1] as f64 - 1.0),
            1.0 / (grid[2] as f64 - 1.0),
        ];
        let t1 = dnm1.map(|d| 1.0 / (d * d));
        let t2 = dnm1.map(|d| 1.0 / (2.0 * d));
        let t3 = dnm1.map(|d| 1.0 / d);
        let dd: [[f64; 5]; 3] = [[0.75; 5], [0.75; 5], [1.0; 5]];
        let dmax = [
            dd[0][2].max(dd[0][3]),
            dd[1][1].max(dd[1][3]),
            dd[2][1].max(dd[2][2]),
        ];
        let dssp = 0.25 * dd[0][0].max(dd[1][0].max(dd[2][0]));
        let c1c2 = C1 * C2;
        let c1c5 = C1 * C5;
        let c3c4 = C3 * C4;
        let c1345 = c1c5 * c3c4;
        let conz1 = 1.0 - c1c5;
        let con43 = 4.0 / 3.0;
        let con16 = 1.0 / 6.0;
        let mut dt1 = [[0.0; 5]; 3];
        let mut con = [[0.0; 5]; 3];
        for d in 0..3 {
            for m in 0..5 {
                dt1[d][m] = dd[d][m] * t1[d];
            }
            let c3c4t3 = c3c4 * t3[d];
            con[d] = [
                c3c4t3 * con43 * t3[d],
                c3c4t3 * t3[d],
                c3c4t3 * conz1 * t3[d],
                c3c4t3 * con16 * t3[d],
                c3c4t3 * c1c5 * t3[d],
            ];
        }
        Constants {
            dt,
            dnm1,
            t1,
            t2,
            t3,
            dd,
            dmax,
            dt1,
            con,
            dtt1: t1.map(|t| dt * t),
            dtt2: t2.map(|t| dt * t),
            c2dtt1: t1.map(|t| 2.0 * (dt * t)),
            c1c2,
            c1c5,
            c3c4,
            c1345,
            dssp,
            dtdssp: dt * dssp,
            bt: 0.5f64.sqrt(),
            con43,
            c2iv: 2.5,
        }
    }
}
