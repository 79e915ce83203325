//! CG, conjugate gradient (NPB 3.3 MPI `CG/cg.f`): the inverse power method on a random
//! sparse symmetric matrix, each outer iteration solving with 25 unpreconditioned CG
//! steps. Owns the 2-D process grid (rows x columns, columns = 2 x rows when the count is
//! not square), the matrix generation for this rank's block, and the row sums (butterfly
//! exchanges with `reduce_exch_proc`) and transpose exchanges of the reference.

use serde::{Deserialize, Serialize};
use volpex::Communicator;

use crate::checkpoint::{ensure, Checkpoints, F64s};
use crate::common::{
    broadcast_from_root, log2, max_time_at_root, randlc, rel_ok, require_power_of_two, Class,
    NpbError, Report, RANDLC_A,
};

/// CG steps per outer iteration.
const CGITMAX: usize = 25;
/// Lower bound on the smallest eigenvalue.
const RCOND: f64 = 0.1;
/// Verification tolerance.
const EPSILON: f64 = 1.0e-10;
/// Tag of the transpose exchange (the row sums use tags 1..=l2npcols).
const TAG_TRANSPOSE: i32 = 1;
/// Default checkpoint interval, in outer iterations: the state is one vector.
const CHECKPOINT_EVERY: u64 = 1;

/// What the rest of a run needs after an outer iteration: x (the other vectors are
/// rebuilt from it by conj_grad; the matrix is regenerated locally), the latest zeta
/// and the timer.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct State<'a> {
    /// Outer iterations done.
    done: u64,
    zeta: f64,
    /// Seconds of the timed section so far.
    elapsed: f64,
    x: F64s<'a>,
}

/// Matrix order, nonzeros per generated vector, outer iterations, shift, official zeta.
fn params(class: Class) -> (usize, usize, usize, f64, f64) {
    match class {
        Class::S => (1400, 7, 15, 10.0, 8.597_177_507_864_8),
        Class::W => (7000, 8, 15, 12.0, 10.362_595_087_124),
        Class::A => (14000, 11, 15, 20.0, 17.130_235_054_029),
        Class::B => (75000, 13, 75, 60.0, 22.712_745_482_631),
        Class::C => (150_000, 15, 75, 110.0, 28.973_605_592_845),
    }
}

/// This rank's place in the process grid and its communication schedule. Row and
/// column numbers are 1-based and inclusive, as in the reference; vector positions
/// (`send_start`, the reduce starts) are 0-based here.
struct Layout {
    nprows: usize,
    firstrow: usize,
    lastrow: usize,
    firstcol: usize,
    lastcol: usize,
    exch_proc: i32,
    exch_recv_length: usize,
    send_start: usize,
    send_len: usize,
    /// Butterfly partners along the row, one per stage (l2npcols of them).
    reduce_exch_proc: Vec<i32>,
    reduce_send_starts: Vec<usize>,
    reduce_send_lengths: Vec<usize>,
    reduce_recv_starts: Vec<usize>,
    reduce_recv_lengths: Vec<usize>,
}

impl Layout {
    fn new(na: usize, nprocs: usize, me: usize) -> Layout {
        let l2 = log2(nprocs);
        let npcols = 1usize << (l2 / 2 + l2 % 2);
        let nprows = 1usize << (l2 / 2);
        let proc_row = me / npcols;
        let proc_col = me - proc_row * npcols;
        let even = me.is_multiple_of(2);

        let (firstrow, lastrow, firstcol, lastcol);
        if na / npcols * npcols == na {
            let col_size = na / npcols;
            firstcol = proc_col * col_size + 1;
            lastcol = firstcol - 1 + col_size;
            let row_size = na / nprows;
            firstrow = proc_row * row_size + 1;
            lastrow = firstrow - 1 + row_size;
        } else {
            (firstrow, lastrow) = uneven_block(na, nprows, proc_row);
            if npcols == nprows {
                (firstcol, lastcol) = uneven_block(na, npcols, proc_col);
            } else {
                // Columns: split like the rows, then halve each block between two ranks.
                let (f, l) = uneven_block(na, npcols / 2, proc_col / 2);
                let col_size = l + 1 - f;
                if even {
                    firstcol = f;
                    lastcol = f - 1 + (col_size - 1) / 2 + 1;
                } else {
                    firstcol = f + (col_size - 1) / 2 + 1;
                    lastcol = firstcol - 1 + col_size / 2;
                }
            }
        }

        let rows = lastrow - firstrow + 1;
        let (send_start, send_len) = if npcols == nprows {
            (1, rows)
        } else if even {
            (1, rows.div_ceil(2))
        } else {
            (rows.div_ceil(2) + 1, rows / 2)
        };

        let exch_proc = if npcols == nprows {
            (me % nprows) * nprows + me / nprows
        } else {
            2 * ((me / 2 % nprows) * nprows + me / 2 / nprows) + me % 2
        };

        let l2npcols = log2(npcols) as usize;
        let mut reduce_exch_proc = Vec::with_capacity(l2npcols);
        let mut div_factor = npcols;
        for _ in 0..l2npcols {
            let j = (proc_col + div_factor / 2) % div_factor + proc_col / div_factor * div_factor;
            reduce_exch_proc.push((proc_row * npcols + j) as i32);
            div_factor /= 2;
        }
        let mut reduce_send_starts = vec![0; l2npcols];
        let mut reduce_send_lengths = vec![0; l2npcols];
        let mut reduce_recv_lengths = vec![0; l2npcols];
        for i in (0..l2npcols).rev() {
            if nprows == npcols {
                reduce_send_starts[i] = send_start;
                reduce_send_lengths[i] = send_len;
                reduce_recv_lengths[i] = rows;
            } else {
                reduce_recv_lengths[i] = send_len;
                if i == l2npcols - 1 {
                    reduce_send_lengths[i] = rows - send_len;
                    reduce_send_starts[i] = if even { send_start + send_len } else { 1 };
                } else {
                    reduce_send_lengths[i] = send_len;
                    reduce_send_starts[i] = send_start;
                }
            }
        }
        Layout {
            nprows,
            firstrow,
            lastrow,
            firstcol,
            lastcol,
            exch_proc: exch_proc as i32,
            exch_recv_length: lastcol - firstcol + 1,
            send_start: send_start - 1,
            send_len,
            reduce_exch_proc,
            reduce_send_starts: reduce_send_starts.iter().map(|s| s - 1).collect(),
            reduce_send_lengths,
            reduce_recv_starts: vec![send_start - 1; l2npcols],
            reduce_recv_lengths,
        }
    }

    fn rows(&self) -> usize {
        self.lastrow - self.firstrow + 1
    }

    fn cols(&self) -> usize {
        self.lastcol - self.firstcol + 1
    }
}

/// First and last (1-based) of block `p` of `n` items split over `parts`, the first
/// `n % parts` blocks one larger.
fn uneven_block(n: usize, parts: usize, p: usize) -> (usize, usize) {
    let extra = n - n / parts * parts;
    if p < extra {
        let size = n / parts + 1;
        let first = p * size + 1;
        (first, first - 1 + size)
    } else {
        let size = n / parts;
        let first = extra * (size + 1) + (p - extra) * size + 1;
        (first, first - 1 + size)
    }
}

/// This rank's block of the matrix in compressed rows; column indices are local
/// (0-based from `firstcol`).
struct Matrix {
    a: Vec<f64>,
    colidx: Vec<u32>,
    rowstr: Vec<usize>,
}

/// The generator of the reference's `makea` (its `tran`/`amult` state).
struct Generator {
    tran: f64,
}

impl Generator {
    fn next(&mut self) -> f64 {
        randlc(&mut self.tran, RANDLC_A)
    }
}

/// Generates this rank's block: the sum of `n` outer products of random sparse vectors
/// with geometrically decreasing weights, plus `(rcond - shift)` on the diagonal
/// (makea, sprnvc, vecset and sparse of the reference).
fn makea(n: usize, nonzer: usize, shift: f64, lay: &Layout, gen: &mut Generator) -> Matrix {
    let mut size = 1.0f64;
    let ratio = RCOND.powf(1.0 / n as f64);
    let (mut arow, mut acol, mut aelt) = (Vec::new(), Vec::new(), Vec::new());
    let mut mark = vec![false; n + 1];
    let mut v = Vec::with_capacity(nonzer + 1);
    let mut iv = Vec::with_capacity(nonzer + 1);
    for iouter in 1..=n {
        sprnvc(n, nonzer, &mut v, &mut iv, &mut mark, gen);
        vecset(&mut v, &mut iv, iouter, 0.5);
        for (&jcol, &vj) in iv.iter().zip(&v) {
            if jcol >= lay.firstcol && jcol <= lay.lastcol {
                let scale = size * vj;
                for (&irow, &vi) in iv.iter().zip(&v) {
                    if irow >= lay.firstrow && irow <= lay.lastrow {
                        acol.push(jcol);
                        arow.push(irow);
                        aelt.push(vi * scale);
                    }
                }
            }
        }
        size *= ratio;
    }
    for i in lay.firstrow..=lay.lastrow {
        if i >= lay.firstcol && i <= lay.lastcol {
            acol.push(i);
            arow.push(i);
            aelt.push(RCOND - shift);
        }
    }
    sparse(n, lay, &arow, &acol, &aelt)
}

/// A sparse random vector of `nz` distinct positions in 1..=n (sprnvc).
fn sprnvc(
    n: usize,
    nz: usize,
    v: &mut Vec<f64>,
    iv: &mut Vec<usize>,
    mark: &mut [bool],
    gen: &mut Generator,
) {
    v.clear();
    iv.clear();
    let nn1 = n.next_power_of_two();
    while v.len() < nz {
        let vecelt = gen.next();
        let vecloc = gen.next();
        let i = (nn1 as f64 * vecloc) as usize + 1;
        if i > n {
            continue;
        }
        if !mark[i] {
            mark[i] = true;
            v.push(vecelt);
            iv.push(i);
        }
    }
    for &i in iv.iter() {
        mark[i] = false;
    }
}

/// Sets element `i` of the sparse vector to `val`, appending it if absent (vecset).
fn vecset(v: &mut Vec<f64>, iv: &mut Vec<usize>, i: usize, val: f64) {
    let mut set = false;
    for (k, &pos) in iv.iter().enumerate() {
        if pos == i {
            v[k] = val;
            set = true;
        }
    }
    if !set {
        v.push(val);
        iv.push(i);
    }
}

/// Compressed rows from (row, column, value) triples, summing duplicates in the
/// reference's order and dropping zeros (sparse).
fn sparse(n: usize, lay: &Layout, arow: &[usize], acol: &[usize], aelt: &[f64]) -> Matrix {
    let nrows = lay.rows();
    // rowstr[j] (0-based row j) = first entry of the row, after a counting pass.
    let mut rowstr = vec![0usize; nrows + 1];
    for &r in arow {
        rowstr[r - lay.firstrow + 1] += 1;
    }
    for j in 1..=nrows {
        rowstr[j] += rowstr[j - 1];
    }
    let nnza = arow.len();
    let mut a = vec![0.0f64; nnza];
    let mut colidx = vec![0usize; nnza];
    let mut next = rowstr.clone();
    for ((&r, &c), &e) in arow.iter().zip(acol).zip(aelt) {
        let k = &mut next[r - lay.firstrow];
        a[*k] = e;
        colidx[*k] = c;
        *k += 1;
    }
    // Sum duplicates row by row, keeping first-seen column order.
    let mut x = vec![0.0f64; n + 1];
    let mut mark = vec![false; n + 1];
    let mut nzloc = Vec::with_capacity(n);
    let mut nza = 0;
    let mut start = 0;
    for j in 0..nrows {
        nzloc.clear();
        for k in start..rowstr[j + 1] {
            let i = colidx[k];
            x[i] += a[k];
            if !mark[i] && x[i] != 0.0 {
                mark[i] = true;
                nzloc.push(i);
            }
        }
        for &i in &nzloc {
            mark[i] = false;
            let xi = x[i];
            x[i] = 0.0;
            if xi != 0.0 {
                a[nza] = xi;
                colidx[nza] = i;
                nza += 1;
            }
        }
        start = rowstr[j + 1];
        rowstr[j + 1] = nza;
    }
    a.truncate(nza);
    let colidx = colidx[..nza]
        .iter()
        .map(|&c| (c - lay.firstcol) as u32)
        .collect();
    Matrix { a, colidx, rowstr }
}

/// The rank's vectors (length na / nprows + 2 as in the reference).
struct Vectors {
    x: Vec<f64>,
    z: Vec<f64>,
    p: Vec<f64>,
    q: Vec<f64>,
    r: Vec<f64>,
    w: Vec<f64>,
}

/// One rank's solver.
struct Solver<'a> {
    world: &'a Communicator,
    lay: Layout,
    mat: Matrix,
    vec: Vectors,
}

/// Runs CG on `world`, checkpointing after outer iterations.
pub fn run(world: &Communicator, class: Class, ck: &Checkpoints) -> Result<Report, NpbError> {
    let nprocs = world.size();
    require_power_of_two("CG", nprocs)?;
    let (na, nonzer, niter, shift, zeta_ref) = params(class);
    let restored = ck.restored::<State>()?;
    if restored.is_none() {
        // timeron: rank 0 would read timer.flag; the extra timers stay off.
        broadcast_from_root(world, &mut [0])?;
    }
    let mut s = Solver::new(world, na, nonzer, shift);

    let (first, mut zeta, t0) = match restored {
        Some(st) => {
            ensure(st.done <= niter as u64, "CG iteration")?;
            st.x.copy_into(&mut s.vec.x, "CG x")?;
            (st.done, st.zeta, volpex::wtime() - st.elapsed)
        }
        None => {
            // One untimed iteration to touch every page, then start over from x = 1.
            s.conj_grad()?;
            s.normalize()?;
            s.vec.x[..na / s.lay.nprows + 1].fill(1.0);
            world.barrier()?;
            (0, 0.0, volpex::wtime())
        }
    };
    for it in first..niter as u64 {
        s.conj_grad()?;
        let xz = s.normalize()?;
        zeta = shift + 1.0 / xz;
        ck.save(world, CHECKPOINT_EVERY, (it + 1, niter as u64), || State {
            done: it + 1,
            zeta,
            elapsed: volpex::wtime() - t0,
            x: F64s::of(&s.vec.x),
        })?;
    }
    let elapsed = volpex::wtime() - t0;
    let tmax = max_time_at_root(world, elapsed)?;

    let nnz = (nonzer * (nonzer + 1)) as f64;
    let flops = (2 * niter * na) as f64 * (3.0 + nnz + 25.0 * (5.0 + nnz) + 3.0);
    Ok(Report {
        name: "CG",
        class,
        size: (na as u64, 0, 0),
        iterations: niter as u64,
        seconds: tmax,
        processes: nprocs,
        mops_total: if tmax > 0.0 {
            flops / tmax / 1.0e6
        } else {
            0.0
        },
        operation: "floating point",
        verified: rel_ok(zeta, zeta_ref, EPSILON),
        checks: vec![zeta],
    })
}

impl<'a> Solver<'a> {
    /// This rank's block of the matrix and its vectors, x = 1.
    fn new(world: &'a Communicator, na: usize, nonzer: usize, shift: f64) -> Solver<'a> {
        let lay = Layout::new(na, world.size() as usize, world.rank() as usize);
        let mut gen = Generator {
            tran: 314_159_265.0,
        };
        gen.next();
        let mat = makea(na, nonzer, shift, &lay, &mut gen);
        let len = na / lay.nprows + 2;
        let vec = Vectors {
            x: vec![1.0; len],
            z: vec![0.0; len],
            p: vec![0.0; len],
            q: vec![0.0; len],
            r: vec![0.0; len],
            w: vec![0.0; len],
        };
        Solver {
            world,
            lay,
            mat,
            vec,
        }
    }

    /// x.z and z.z summed along the row, then x = z / ||z||; returns x.z.
    fn normalize(&mut self) -> Result<f64, NpbError> {
        let n = self.lay.cols();
        let mut norm = [0.0f64; 2];
        for (x, z) in self.vec.x[..n].iter().zip(&self.vec.z[..n]) {
            norm[0] += x * z;
            norm[1] += z * z;
        }
        let norm = self.row_sum(norm)?;
        let scale = 1.0 / norm[1].sqrt();
        let v = &mut self.vec;
        for (x, z) in v.x[..n].iter_mut().zip(&v.z[..n]) {
            *x = scale * z;
        }
        Ok(norm[0])
    }

    /// Sums `value` over the ranks of this grid row with the reference's butterfly
    /// (irecv from, send to `reduce_exch_proc[i]` with tag i + 1, wait).
    fn row_sum<const N: usize>(&self, mut value: [f64; N]) -> Result<[f64; N], NpbError> {
        for (i, &partner) in self.lay.reduce_exch_proc.iter().enumerate() {
            let tag = i as i32 + 1;
            let peer = self.world.process_at_rank(partner);
            let mut other = [0.0f64; N];
            let req = peer.immediate_receive_into_with_tag(&mut other[..], tag)?;
            peer.send_with_tag(&value[..], tag)?;
            req.wait()?;
            for (v, o) in value.iter_mut().zip(other) {
                *v += o;
            }
        }
        Ok(value)
    }

    /// The 25 CG steps on A z = x (conj_grad); returns ||x - A z|| (only used for
    /// printing in the reference).
    fn conj_grad(&mut self) -> Result<f64, NpbError> {
        let cols = self.lay.cols();
        let len = self.lay_len();
        let v = &mut self.vec;
        v.q[..len].fill(0.0);
        v.z[..len].fill(0.0);
        v.r[..len].copy_from_slice(&v.x[..len]);
        v.p[..len].copy_from_slice(&v.x[..len]);
        v.w[..len].fill(0.0);

        let mut rho = self.row_sum([dot(&self.vec.r[..cols], &self.vec.r[..cols])])?[0];
        for _ in 0..CGITMAX {
            self.matvec_p_into_q()?;
            let v = &mut self.vec;
            let d = dot(&v.p[..cols], &v.q[..cols]);
            let d = self.row_sum([d])?[0];
            let alpha = rho / d;
            let rho0 = rho;
            let v = &mut self.vec;
            for (((z, r), p), q) in v.z[..cols]
                .iter_mut()
                .zip(v.r[..cols].iter_mut())
                .zip(&v.p[..cols])
                .zip(&v.q[..cols])
            {
                *z += alpha * p;
                *r -= alpha * q;
            }
            rho = self.row_sum([dot(&self.vec.r[..cols], &self.vec.r[..cols])])?[0];
            let beta = rho / rho0;
            let v = &mut self.vec;
            for (p, r) in v.p[..cols].iter_mut().zip(&v.r[..cols]) {
                *p = r + beta * *p;
            }
        }
        // ||r|| = ||x - A z||: r = A z, summed and transposed like q.
        let v = &mut self.vec;
        matvec(&self.mat, &v.z, &mut v.w);
        let v = &mut self.vec;
        exchange(self.world, &self.lay, &mut v.w, &mut v.r)?;
        let v = &self.vec;
        let sum: f64 = v.x[..cols]
            .iter()
            .zip(&v.r[..cols])
            .map(|(x, r)| (x - r) * (x - r))
            .fold(0.0, |s, d| s + d);
        Ok(self.row_sum([sum])?[0].sqrt())
    }

    fn lay_len(&self) -> usize {
        self.vec.x.len() - 1
    }

    /// q = A p: the block product into w, summed along the row and exchanged with the
    /// transpose partner; w is cleared for reuse.
    fn matvec_p_into_q(&mut self) -> Result<(), NpbError> {
        let v = &mut self.vec;
        matvec(&self.mat, &v.p, &mut v.w);
        exchange(self.world, &self.lay, &mut v.w, &mut v.q)?;
        let clear = self.lay.rows().max(self.lay.cols());
        self.vec.w[..clear].fill(0.0);
        Ok(())
    }
}

/// w = A p over this rank's rows.
fn matvec(mat: &Matrix, p: &[f64], w: &mut [f64]) {
    for (wj, row) in w.iter_mut().zip(mat.rowstr.windows(2)) {
        let (start, end) = (row[0], row[1]);
        let (a, c) = (&mat.a[start..end], &mat.colidx[start..end]);
        // Four nonzeros per turn, summed in the reference's order: the loop's own
        // counting is a quarter of it, and every gathered p[c] keeps its bounds check.
        let (a4, c4) = (a.chunks_exact(4), c.chunks_exact(4));
        let (ar, cr) = (a4.remainder(), c4.remainder());
        let mut sum = 0.0;
        for (a, c) in a4.zip(c4) {
            sum += a[0] * p[c[0] as usize];
            sum += a[1] * p[c[1] as usize];
            sum += a[2] * p[c[2] as usize];
            sum += a[3] * p[c[3] as usize];
        }
        for (a, &c) in ar.iter().zip(cr) {
            sum += a * p[c as usize];
        }
        *wj = sum;
    }
}

/// Sums the partial products `w` along the grid row (in the reference's reverse stage
/// order, receiving into `out` as scratch) and leaves this rank's column piece of the
/// result in `out`, from the transpose partner (or from `w` on a single column).
fn exchange(
    world: &Communicator,
    lay: &Layout,
    w: &mut [f64],
    out: &mut [f64],
) -> Result<(), NpbError> {
    let stages = lay.reduce_exch_proc.len();
    for i in (0..stages).rev() {
        let tag = i as i32 + 1;
        let peer = world.process_at_rank(lay.reduce_exch_proc[i]);
        let rs = lay.reduce_recv_starts[i];
        let rl = lay.reduce_recv_lengths[i];
        let ss = lay.reduce_send_starts[i];
        let sl = lay.reduce_send_lengths[i];
        let req = peer.immediate_receive_into_with_tag(&mut out[rs..rs + rl], tag)?;
        peer.send_with_tag(&w[ss..ss + sl], tag)?;
        req.wait()?;
        let s = lay.send_start;
        for (wj, oj) in w[s..s + rl].iter_mut().zip(&out[s..s + rl]) {
            *wj += oj;
        }
    }
    if stages != 0 {
        let peer = world.process_at_rank(lay.exch_proc);
        let req =
            peer.immediate_receive_into_with_tag(&mut out[..lay.exch_recv_length], TAG_TRANSPOSE)?;
        peer.send_with_tag(
            &w[lay.send_start..lay.send_start + lay.send_len],
            TAG_TRANSPOSE,
        )?;
        req.wait()?;
    } else {
        out[..lay.exch_recv_length].copy_from_slice(&w[..lay.exch_recv_length]);
    }
    Ok(())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
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
        crate::checkpoint::assert_states_round_trip::<State>(&recorded);
    }

    #[test]
    fn grid_blocks_cover_the_matrix() {
        // Class S splits evenly; class B on 128 and 256 ranks takes the uneven paths.
        for (na, nprocs) in [
            (1400, 1),
            (1400, 2),
            (1400, 4),
            (1400, 8),
            (1400, 16),
            (75000, 128),
            (75000, 256),
        ] {
            let mut rows = vec![0usize; na + 1];
            let mut cols = vec![0usize; na + 1];
            let npcols = nprocs / Layout::new(na, nprocs, 0).nprows;
            for me in 0..nprocs {
                let l = Layout::new(na, nprocs, me);
                if me % npcols == 0 {
                    (l.firstrow..=l.lastrow).for_each(|r| rows[r] += 1);
                }
                if me < npcols {
                    (l.firstcol..=l.lastcol).for_each(|c| cols[c] += 1);
                }
            }
            assert!(rows[1..].iter().all(|&n| n == 1), "rows, {nprocs} procs");
            assert!(cols[1..].iter().all(|&n| n == 1), "cols, {nprocs} procs");
        }
    }
}
