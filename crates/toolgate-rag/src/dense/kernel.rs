//! The encoder's dense layers: `y = x · Wᵀ + b` for the few rows (tokens) of one text.
//!
//! A general GEMM re-packs the weight matrix on every call, which for a query of 5–40 tokens
//! costs about as much as the multiplication (profiled: ~45 % of the query time in candle's
//! packing). Here the weights are packed once, at load, into panels of `3 × lanes` output
//! columns (`[panel][input][column]`, zero-padded), and a micro-kernel keeps a 4-token ×
//! 3-vector tile of outputs in registers while it streams a panel once: per input value,
//! 3 vector loads, 4 broadcasts, 12 FMA. The vector width (AVX-512, AVX2, …) is chosen at
//! run time by `pulp`, the same for packing and for multiplying. Large products split
//! their panels over two threads.

use pulp::{Arch, Simd, WithSimd};

/// Tokens per micro-kernel tile.
const TILE: usize = 4;
/// Vectors of output columns per panel.
const VECTORS: usize = 3;
/// Multiply-adds above which the panels are split over two threads.
const PARALLEL_ABOVE: usize = 4 << 20;

/// A dense layer, packed for the micro-kernel.
pub struct Dense {
    /// `[panel][input][width]`, the last panel zero-padded.
    packed: Vec<f32>,
    /// The bias, zero-padded to whole panels.
    bias: Vec<f32>,
    pub inputs: usize,
    pub outputs: usize,
    /// Output columns per panel (`VECTORS × lanes`).
    width: usize,
}

/// The f32 lanes of the vectors `pulp` dispatches to on this CPU.
fn lanes() -> usize {
    struct Lanes;
    impl WithSimd for Lanes {
        type Output = usize;
        #[inline(always)]
        fn with_simd<S: Simd>(self, _: S) -> usize {
            size_of::<S::f32s>() / size_of::<f32>()
        }
    }
    Arch::new().dispatch(Lanes)
}

impl Dense {
    /// Packs `weight` (`[outputs, inputs]`, row-major: the checkpoint layout) and `bias`.
    pub fn new(weight: &[f32], bias: &[f32], inputs: usize, outputs: usize) -> Self {
        debug_assert_eq!(weight.len(), inputs * outputs);
        let width = VECTORS * lanes();
        let panels = outputs.div_ceil(width);
        let mut packed = vec![0f32; panels * inputs * width];
        for o in 0..outputs {
            let (p, j) = (o / width, o % width);
            for i in 0..inputs {
                packed[(p * inputs + i) * width + j] = weight[o * inputs + i];
            }
        }
        let mut padded = bias.to_vec();
        padded.resize(panels * width, 0.0);
        Dense {
            packed,
            bias: padded,
            inputs,
            outputs,
            width,
        }
    }

    fn panels(&self) -> usize {
        self.bias.len() / self.width
    }

    /// `x` holds `rows` rows of `inputs` values; returns `rows` rows of `outputs` values.
    pub fn forward(&self, x: &[f32], rows: usize) -> Vec<f32> {
        debug_assert_eq!(x.len(), rows * self.inputs);
        // Whole tiles of tokens: the padding rows are zeros and are dropped at the end.
        let tiles = rows.div_ceil(TILE);
        let mut xs = x.to_vec();
        xs.resize(tiles * TILE * self.inputs, 0.0);
        let panels = self.panels();
        let stride = panels * self.width;
        let mut y = vec![0f32; tiles * TILE * stride];
        let work = rows * self.inputs * self.outputs;
        if work > PARALLEL_ABOVE && panels > 1 {
            let half = panels / 2;
            let (a, b) = rayon::join(
                || self.panel_range(&xs, tiles, 0, half),
                || self.panel_range(&xs, tiles, half, panels),
            );
            let (wa, wb) = (half * self.width, (panels - half) * self.width);
            for r in 0..tiles * TILE {
                y[r * stride..r * stride + wa].copy_from_slice(&a[r * wa..(r + 1) * wa]);
                y[r * stride + wa..(r + 1) * stride].copy_from_slice(&b[r * wb..(r + 1) * wb]);
            }
        } else {
            y = self.panel_range(&xs, tiles, 0, panels);
        }
        // Drop the padding rows and columns.
        if stride == self.outputs {
            y.truncate(rows * self.outputs);
            y
        } else {
            (0..rows)
                .flat_map(|r| y[r * stride..r * stride + self.outputs].iter().copied())
                .collect()
        }
    }

    /// Panels `from..to` for every padded row: `tiles × TILE` rows of `(to - from) × width`.
    fn panel_range(&self, xs: &[f32], tiles: usize, from: usize, to: usize) -> Vec<f32> {
        let mut y = vec![0f32; tiles * TILE * (to - from) * self.width];
        Arch::new().dispatch(Panels {
            dense: self,
            xs,
            tiles,
            from,
            to,
            y: &mut y,
        });
        y
    }
}

struct Panels<'a> {
    dense: &'a Dense,
    xs: &'a [f32],
    tiles: usize,
    from: usize,
    to: usize,
    y: &'a mut [f32],
}

impl WithSimd for Panels<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        let Panels {
            dense,
            xs,
            tiles,
            from,
            to,
            y,
        } = self;
        let (k, width) = (dense.inputs, dense.width);
        let row_width = (to - from) * width;
        for p in from..to {
            let panel = &dense.packed[p * k * width..(p + 1) * k * width];
            let (panel, _) = S::as_simd_f32s(panel);
            let (bias, _) = S::as_simd_f32s(&dense.bias[p * width..(p + 1) * width]);
            for t in 0..tiles {
                let x = |r: usize| &xs[(t * TILE + r) * k..(t * TILE + r + 1) * k];
                let acc = tile(simd, panel, [x(0), x(1), x(2), x(3)]);
                for (r, acc) in acc.iter().enumerate() {
                    let start = (t * TILE + r) * row_width + (p - from) * width;
                    let (out, _) = S::as_mut_simd_f32s(&mut y[start..start + width]);
                    for ((o, a), b) in out.iter_mut().zip(acc).zip(bias) {
                        *o = simd.add_f32s(*a, *b);
                    }
                }
            }
        }
    }
}

/// One panel (`k` steps of [`VECTORS`] vectors) against four token rows.
#[inline(always)]
fn tile<S: Simd>(simd: S, panel: &[S::f32s], x: [&[f32]; TILE]) -> [[S::f32s; VECTORS]; TILE] {
    let zero = simd.splat_f32s(0.0);
    let mut acc = [[zero; VECTORS]; TILE];
    let rows = x[0].iter().zip(x[1]).zip(x[2]).zip(x[3]);
    for (w, (((x0, x1), x2), x3)) in panel.chunks_exact(VECTORS).zip(rows) {
        let (w0, w1, w2) = (w[0], w[1], w[2]);
        for (a, xv) in acc.iter_mut().zip([*x0, *x1, *x2, *x3]) {
            let b = simd.splat_f32s(xv);
            a[0] = simd.mul_add_f32s(b, w0, a[0]);
            a[1] = simd.mul_add_f32s(b, w1, a[1]);
            a[2] = simd.mul_add_f32s(b, w2, a[2]);
        }
    }
    acc
}

/// GELU with the error function (BERT's `gelu`), in place, over the whole feed-forward
/// activation at once. `erf` is a rational approximation (odd degree-13 over even degree-8
/// polynomial in `x`, clamped to ±4 where f32 `erf` is ±1; max error ~1e-7 against libm,
/// see the test), plain arithmetic that vectorises under the dispatched target features —
/// `libm::erff` per element cost ~10 % of a query.
pub fn gelu_in_place(v: &mut [f32]) {
    struct Gelu<'a>(&'a mut [f32]);
    impl WithSimd for Gelu<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, _: S) {
            for x in self.0.iter_mut() {
                *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
            }
        }
    }
    Arch::new().dispatch(Gelu(v));
}

#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 - 2.101_024e-6;
    p = p * x2 - 5.692_506_4e-5;
    p = p * x2 - 7.349_906_3e-4;
    p = p * x2 - 2.954_600_1e-3;
    p = p * x2 - 1.609_603_3e-2;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 - 2.133_740_6e-4;
    q = q * x2 - 1.682_827e-3;
    q = q * x2 - 7.373_329e-3;
    q = q * x2 - 1.426_474e-2;
    x * p / q
}

/// `v · row` for every `dim`-long row of `matrix`, in one vectorised pass (the dense
/// retriever's scan over the catalog's vectors).
pub fn dot_rows(matrix: &[f32], dim: usize, v: &[f32]) -> Vec<f32> {
    scan(matrix, dim, v, None)
}

/// `v · row` for the rows numbered in `rows`, in that order (the exact rescoring of the
/// candidates a quantised scan picked), in one vectorised pass.
pub fn dot_rows_of(matrix: &[f32], dim: usize, v: &[f32], rows: &[u32]) -> Vec<f32> {
    scan(matrix, dim, v, Some(rows))
}

fn scan(matrix: &[f32], dim: usize, v: &[f32], rows: Option<&[u32]>) -> Vec<f32> {
    struct Rows<'a> {
        matrix: &'a [f32],
        dim: usize,
        v: &'a [f32],
        rows: Option<&'a [u32]>,
    }
    impl WithSimd for Rows<'_> {
        type Output = Vec<f32>;
        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) -> Vec<f32> {
            let Rows {
                matrix,
                dim,
                v,
                rows,
            } = self;
            match rows {
                None => matrix
                    .chunks_exact(dim)
                    .map(|row| row_dot(simd, row, v))
                    .collect(),
                Some(rows) => rows
                    .iter()
                    .map(|&r| {
                        let at = r as usize * dim;
                        matrix
                            .get(at..at + dim)
                            .map_or(0.0, |row| row_dot(simd, row, v))
                    })
                    .collect(),
            }
        }
    }
    if dim == 0 || v.len() != dim {
        return Vec::new();
    }
    Arch::new().dispatch(Rows {
        matrix,
        dim,
        v,
        rows,
    })
}

#[inline(always)]
fn row_dot<S: Simd>(simd: S, row: &[f32], v: &[f32]) -> f32 {
    let (vv, vt) = S::as_simd_f32s(v);
    let (rv, rt) = S::as_simd_f32s(row);
    let mut acc = [simd.splat_f32s(0.0); 2];
    for (r, q) in rv.chunks_exact(2).zip(vv.chunks_exact(2)) {
        acc[0] = simd.mul_add_f32s(r[0], q[0], acc[0]);
        acc[1] = simd.mul_add_f32s(r[1], q[1], acc[1]);
    }
    if rv.len() % 2 == 1 {
        let last = rv.len() - 1;
        acc[0] = simd.mul_add_f32s(rv[last], vv[last], acc[0]);
    }
    let tail: f32 = rt.iter().zip(vt).map(|(a, b)| a * b).sum();
    simd.reduce_sum_f32s(simd.add_f32s(acc[0], acc[1])) + tail
}

/// Quantises `v` to `out` (same length) as `round(v / scale)` in −127..=127; returns the
/// scale (0 for the zero vector).
pub fn quantize(v: &[f32], out: &mut [i8]) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        out.fill(0);
        return 0.0;
    }
    let scale = max / 127.0;
    for (o, x) in out.iter_mut().zip(v) {
        *o = (x / scale).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

/// Integer dot products of `v` with every `dim`-long row of `codes` (a first pass over the
/// catalog at a quarter of the f32 vectors' memory traffic; the best are rescored exactly).
pub fn dot_rows_i8(codes: &[i8], dim: usize, v: &[i8]) -> Vec<i32> {
    struct Rows<'a> {
        codes: &'a [i8],
        dim: usize,
        v: &'a [i8],
    }
    impl WithSimd for Rows<'_> {
        type Output = Vec<i32>;
        #[inline(always)]
        fn with_simd<S: Simd>(self, _: S) -> Vec<i32> {
            // Plain lane-wise code: compiled with the dispatched target features, it
            // vectorises (widening multiply-adds) without intrinsics.
            const LANES: usize = 32;
            self.codes
                .chunks_exact(self.dim)
                .map(|row| {
                    let mut acc = [0i32; LANES];
                    let (rc, qc) = (row.chunks_exact(LANES), self.v.chunks_exact(LANES));
                    let tail: i32 = rc
                        .remainder()
                        .iter()
                        .zip(qc.remainder())
                        .map(|(a, b)| i32::from(*a) * i32::from(*b))
                        .sum();
                    for (r, q) in rc.zip(qc) {
                        for j in 0..LANES {
                            acc[j] += i32::from(r[j]) * i32::from(q[j]);
                        }
                    }
                    acc.iter().sum::<i32>() + tail
                })
                .collect()
        }
    }
    if dim == 0 || v.len() != dim {
        return Vec::new();
    }
    Arch::new().dispatch(Rows { codes, dim, v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(
        w: &[f32],
        b: &[f32],
        inputs: usize,
        outputs: usize,
        x: &[f32],
        rows: usize,
    ) -> Vec<f32> {
        let mut y = vec![0f32; rows * outputs];
        for r in 0..rows {
            for o in 0..outputs {
                let mut s = b[o] as f64;
                for i in 0..inputs {
                    s += x[r * inputs + i] as f64 * w[o * inputs + i] as f64;
                }
                y[r * outputs + o] = s as f32;
            }
        }
        y
    }

    fn pseudo(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    #[test]
    fn fast_gelu_matches_the_exact_one() {
        let xs: Vec<f32> = (-8000..=8000).map(|i| i as f32 / 1000.0).collect();
        let mut got = xs.clone();
        gelu_in_place(&mut got);
        for (x, g) in xs.iter().zip(&got) {
            let want = 0.5 * x * (1.0 + libm::erff(x * std::f32::consts::FRAC_1_SQRT_2));
            assert!((g - want).abs() < 2e-6, "gelu({x}) = {g}, want {want}");
        }
    }

    #[test]
    fn row_dots_match_the_plain_ones() {
        for dim in [1, 7, 16, 33, 384] {
            let m = pseudo(dim * 5, 4);
            let v = pseudo(dim, 5);
            let got = dot_rows(&m, dim, &v);
            assert_eq!(got.len(), 5);
            assert_eq!(dot_rows_of(&m, dim, &v, &[4, 1]), [got[4], got[1]]);
            for (r, g) in got.iter().enumerate() {
                let want: f64 = (0..dim).map(|i| m[r * dim + i] as f64 * v[i] as f64).sum();
                assert!((*g as f64 - want).abs() < 1e-4, "dim {dim}: {g} vs {want}");
            }
        }
    }

    #[test]
    fn quantised_dots_track_the_exact_ones() {
        let dim = 384;
        let m = pseudo(dim * 50, 6);
        let v = pseudo(dim, 7);
        let mut codes = vec![0i8; m.len()];
        let scales: Vec<f32> = m
            .chunks_exact(dim)
            .zip(codes.chunks_exact_mut(dim))
            .map(|(row, out)| quantize(row, out))
            .collect();
        let mut qv = vec![0i8; dim];
        let qs = quantize(&v, &mut qv);
        let exact = dot_rows(&m, dim, &v);
        let approx = dot_rows_i8(&codes, dim, &qv);
        for ((e, a), s) in exact.iter().zip(&approx).zip(&scales) {
            let a = *a as f32 * s * qs;
            assert!((e - a).abs() < 0.05, "{e} vs {a}");
        }
        let mut zero = [1i8; 3];
        assert_eq!(quantize(&[0.0; 3], &mut zero), 0.0);
        assert_eq!(zero, [0; 3]);
    }

    #[test]
    fn matches_the_plain_product_for_odd_shapes_and_both_paths() {
        // Odd row counts, widths that are not multiples of the block or the vector, and a
        // product large enough to take the two-thread path.
        for (rows, inputs, outputs) in [(1, 7, 3), (3, 33, 10), (5, 384, 385), (17, 384, 1536)] {
            let (weight, bias) = (pseudo(inputs * outputs, 1), pseudo(outputs, 2));
            let d = Dense::new(&weight, &bias, inputs, outputs);
            let x = pseudo(rows * inputs, 3);
            let got = d.forward(&x, rows);
            let want = reference(&weight, &bias, inputs, outputs, &x, rows);
            for (g, w) in got.iter().zip(&want) {
                assert!(
                    (g - w).abs() < 1e-4,
                    "{rows}x{inputs}x{outputs}: {g} vs {w}"
                );
            }
        }
    }
}
