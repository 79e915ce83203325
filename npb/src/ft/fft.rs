//! FT's 1-D FFTs (the reference's cffts1/2/3, cfftz and fftz2): Stockham transforms on
//! blocks of FFTBLOCK lines along one axis of a complex 3-D array, in a split
//! real/imaginary scratch. Owns the scratch and its layout; never communicates nor knows
//! the decomposition (the caller passes each array and its dimensions).

use std::f64::consts::PI;

/// Lines transformed together (the reference's fftblock).
const FFTBLOCK: usize = 16;

/// Blocked 1-D FFTs along one axis of a complex 3-D array (cffts1/2/3 and cfftz/fftz2).
pub(super) struct Fft {
    /// Roots of unity: entry ln + i = exp(i pi i / ln) for the stage of block length ln
    /// (fft_init's table without its leading log2 entry).
    roots: Vec<(f64, f64)>,
    /// Block scratch (see `parts`): xr, xi, yr, yi (split real/imaginary, line position
    /// major: [pos * FFTBLOCK + line]) of `len` values each, then xc, a block as it lies
    /// in the array (interleaved, position major: [pos * 2 FFTBLOCK]), `len + STAGGER`
    /// apart.
    work: Vec<f64>,
    len: usize,
}

impl Fft {
    pub(super) fn new(n: usize) -> Fft {
        let mut roots = vec![(0.0, 0.0); n.max(1)];
        let mut ln = 1;
        while ln < n {
            let t = PI / ln as f64;
            for i in 0..ln {
                let ti = i as f64 * t;
                roots[ln + i] = (ti.cos(), ti.sin());
            }
            ln *= 2;
        }
        Fft {
            roots,
            work: Vec::new(),
            len: 0,
        }
    }

    fn scratch(&mut self, n: usize) {
        self.len = n * FFTBLOCK;
        self.work
            .resize(4 * (self.len + STAGGER) + 2 * self.len, 0.0);
    }

    /// FFTs along the first axis, FFTBLOCK lines (consecutive second index) at a time.
    pub(super) fn lines_dim1(&mut self, is: i32, x: &mut [f64], d: [usize; 3]) {
        let [d1, d2, d3] = d;
        self.scratch(d1);
        for k in 0..d3 {
            for jj in (0..d2).step_by(FFTBLOCK) {
                let ([xr, xi, _, _], _) = parts(&mut self.work, self.len);
                for j in 0..FFTBLOCK {
                    let line = &x[2 * d1 * (jj + j + d2 * k)..][..2 * d1];
                    for (i, c) in line.chunks_exact(2).enumerate() {
                        xr[i * FFTBLOCK + j] = c[0];
                        xi[i * FFTBLOCK + j] = c[1];
                    }
                }
                self.cfftz(is, d1);
                let ([xr, xi, _, _], _) = parts(&mut self.work, self.len);
                for j in 0..FFTBLOCK {
                    let line = &mut x[2 * d1 * (jj + j + d2 * k)..][..2 * d1];
                    for (i, c) in line.chunks_exact_mut(2).enumerate() {
                        c[0] = xr[i * FFTBLOCK + j];
                        c[1] = xi[i * FFTBLOCK + j];
                    }
                }
            }
        }
    }

    /// FFTs along the second axis, blocks of FFTBLOCK consecutive first indices.
    pub(super) fn lines_dim2(&mut self, is: i32, x: &mut [f64], d: [usize; 3]) {
        let [d1, d2, d3] = d;
        for k in 0..d3 {
            let plane = &mut x[2 * d1 * d2 * k..][..2 * d1 * d2];
            self.strided(is, plane, d1, d2, 2 * d1);
        }
    }

    /// FFTs along the third axis, blocks of FFTBLOCK consecutive first indices.
    pub(super) fn lines_dim3(&mut self, is: i32, x: &mut [f64], d: [usize; 3]) {
        let [d1, d2, d3] = d;
        for j in 0..d2 {
            let sub = &mut x[2 * d1 * j..];
            self.strided(is, sub, d1, d3, 2 * d1 * d2);
        }
    }

    /// FFTs of length `n` over lines whose points are `stride` f64 apart, for the
    /// `width` consecutive lines starting at `x`, FFTBLOCK at a time.
    ///
    /// A block's segments are copied whole (memcpy: wide moves, as the reference copies
    /// its complex values), then split into real and imaginary parts in cache: split
    /// while copied, the scattered moves to and from the array took a fifth of FT's time
    /// on one process, against the reference's 14%.
    fn strided(&mut self, is: i32, x: &mut [f64], width: usize, n: usize, stride: usize) {
        self.scratch(n);
        const SEG: usize = 2 * FFTBLOCK;
        for ii in (0..width).step_by(FFTBLOCK) {
            let ([xr, xi, _, _], xc) = parts(&mut self.work, self.len);
            for (p, seg) in xc.chunks_exact_mut(SEG).enumerate() {
                seg.copy_from_slice(&x[stride * p + 2 * ii..][..SEG]);
            }
            split(xc, xr, xi);
            self.cfftz(is, n);
            let ([xr, xi, _, _], xc) = parts(&mut self.work, self.len);
            join(xr, xi, xc);
            for (p, seg) in xc.chunks_exact(SEG).enumerate() {
                x[stride * p + 2 * ii..][..SEG].copy_from_slice(seg);
            }
        }
    }

    /// FFTs of the FFTBLOCK lines of length n = 2^m in the x scratch, in place
    /// (Stockham, two stages per pass, as cfftz).
    fn cfftz(&mut self, is: i32, n: usize) {
        let m = n.trailing_zeros() as usize;
        let mut l = 1;
        let ([xr, xi, yr, yi], _) = parts(&mut self.work, self.len);
        while l <= m {
            fftz2(is, l, m, &self.roots, [xr, xi], [yr, yi]);
            if l == m {
                xr.copy_from_slice(yr);
                xi.copy_from_slice(yi);
                break;
            }
            fftz2(is, l + 1, m, &self.roots, [yr, yi], [xr, xi]);
            l += 2;
        }
    }
}

/// Values between the parts of the FFT scratch: parts whose starts were a multiple of
/// 4 KiB apart (as separate vectors of 32 KiB were) made a stage's loads wait on its stores
/// to the same offsets in the other part (4K aliasing).
const STAGGER: usize = 136;

/// The FFT scratch's parts: xr, xi, yr, yi of `len` values each, and xc of `2 len`.
fn parts(work: &mut [f64], len: usize) -> ([&mut [f64]; 4], &mut [f64]) {
    let (xr, rest) = work.split_at_mut(len + STAGGER);
    let (xi, rest) = rest.split_at_mut(len + STAGGER);
    let (yr, rest) = rest.split_at_mut(len + STAGGER);
    let (yi, xc) = rest.split_at_mut(len + STAGGER);
    (
        [
            &mut xr[..len],
            &mut xi[..len],
            &mut yr[..len],
            &mut yi[..len],
        ],
        &mut xc[..2 * len],
    )
}

/// Interleaved complex values into their real and imaginary parts. Never inlined: as
/// parameters the slices are known apart, and the loop compiles to vector moves.
#[inline(never)]
fn split(c: &[f64], re: &mut [f64], im: &mut [f64]) {
    for ((c, r), i) in c.chunks_exact(2).zip(re.iter_mut()).zip(im.iter_mut()) {
        *r = c[0];
        *i = c[1];
    }
}

/// Real and imaginary parts into interleaved complex values (see `split`).
#[inline(never)]
fn join(re: &[f64], im: &[f64], c: &mut [f64]) {
    for ((c, r), i) in c.chunks_exact_mut(2).zip(re).zip(im) {
        c[0] = *r;
        c[1] = *i;
    }
}

/// Stage `l` of the Stockham FFT of length 2^m on FFTBLOCK lines (fftz2).
fn fftz2(is: i32, l: usize, m: usize, roots: &[(f64, f64)], x: [&[f64]; 2], y: [&mut [f64]; 2]) {
    let [xr, xi] = x;
    let [yr, yi] = y;
    let n1 = 1usize << (m - 1);
    let lk = 1usize << (l - 1);
    let li = 1usize << (m - l);
    let lj = 2 * lk;
    const B: usize = FFTBLOCK;
    for i in 0..li {
        let i11 = i * lk;
        let i12 = i11 + n1;
        let i21 = i * lj;
        let i22 = i21 + lk;
        let (ur, ui0) = roots[li + i];
        let ui = if is >= 1 { ui0 } else { -ui0 };
        for k in 0..lk {
            let ar = &xr[(i11 + k) * B..][..B];
            let ai = &xi[(i11 + k) * B..][..B];
            let br = &xr[(i12 + k) * B..][..B];
            let bi = &xi[(i12 + k) * B..][..B];
            let (s1, s2) = yr.split_at_mut((i22 + k) * B);
            let sr = &mut s1[(i21 + k) * B..][..B];
            let dr = &mut s2[..B];
            let (t1, t2) = yi.split_at_mut((i22 + k) * B);
            let si = &mut t1[(i21 + k) * B..][..B];
            let di = &mut t2[..B];
            for j in 0..B {
                let (x11r, x11i, x21r, x21i) = (ar[j], ai[j], br[j], bi[j]);
                sr[j] = x11r + x21r;
                si[j] = x11i + x21i;
                let (er, ei) = (x11r - x21r, x11i - x21i);
                dr[j] = ur * er - ui * ei;
                di[j] = ur * ei + ui * er;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A naive DFT of one line, for comparison.
    fn dft(re: &[f64], im: &[f64], sign: f64) -> (Vec<f64>, Vec<f64>) {
        let n = re.len();
        let mut or = vec![0.0; n];
        let mut oi = vec![0.0; n];
        for k in 0..n {
            for t in 0..n {
                let a = sign * 2.0 * PI * (k * t) as f64 / n as f64;
                or[k] += re[t] * a.cos() - im[t] * a.sin();
                oi[k] += re[t] * a.sin() + im[t] * a.cos();
            }
        }
        (or, oi)
    }

    #[test]
    fn block_fft_matches_a_naive_dft() {
        for n in [2usize, 4, 8, 32] {
            let mut f = Fft::new(32);
            f.scratch(n);
            let re: Vec<f64> = (0..n * FFTBLOCK).map(|v| (v as f64 * 0.37).sin()).collect();
            let im: Vec<f64> = (0..n * FFTBLOCK).map(|v| (v as f64 * 0.11).cos()).collect();
            let ([xr, xi, _, _], _) = parts(&mut f.work, f.len);
            xr.copy_from_slice(&re);
            xi.copy_from_slice(&im);
            f.cfftz(1, n);
            let ([xr, xi, _, _], _) = parts(&mut f.work, f.len);
            for line in 0..FFTBLOCK {
                let lr: Vec<f64> = (0..n).map(|p| re[p * FFTBLOCK + line]).collect();
                let li: Vec<f64> = (0..n).map(|p| im[p * FFTBLOCK + line]).collect();
                let (er, ei) = dft(&lr, &li, 1.0);
                for p in 0..n {
                    assert!((xr[p * FFTBLOCK + line] - er[p]).abs() < 1e-9, "n {n}");
                    assert!((xi[p * FFTBLOCK + line] - ei[p]).abs() < 1e-9, "n {n}");
                }
            }
        }
    }
}
