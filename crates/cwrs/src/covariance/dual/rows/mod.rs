//! Prediction over many rows at once (docs/design.md §3.4.1): the kernel values of a block of
//! rows against the whole support set, then the scores and, only when asked, the variances,
//! with Π read once per block instead of once per row; large batches on two cores. Every value
//! is bit for bit the one-row path's ([`DualGaussian::kernel_row`], `moments_of`): each inner
//! product, kernel value, Πk and score is summed in the same order, only the loops around them
//! are reordered.

use std::ops::Range;

use super::symmetric::Support;
use super::DualGaussian;
use crate::data::Matrix;
use crate::linalg::simd::{dot, dot_block};

/// Rows per block: their kernel rows and Πk (2 × 16 × |S| values) stay in the L2 cache while
/// Π streams past them.
const BLOCK_ROWS: usize = 16;

/// Batches below this many rows go row by row: laying out the support set costs about as
/// much as scoring one row against it.
pub(super) const MIN_BLOCKED_ROWS: usize = 4;

/// Support sets from this size on give the variance kᵀΠk as a quadratic form over Π's packed
/// triangle ([`crate::linalg::simd::quadratic_forms`]: half the multiply-adds of forming Πk, in register
/// tiles), one row or many alike; smaller ones form Πk as learning does, the bits of earlier
/// releases. The two sums differ in rounding only (docs/design.md §3.4.1).
pub(super) const QUADRATIC_MIN_SUPPORT: usize = 256;

/// Multiply-adds above which a batch is split over two cores (waking a thread costs tens of
/// microseconds).
const PARALLEL_WORK: usize = 1 << 22;

/// The support set laid out for many rows at once: the rows storing every feature packed
/// row-major (a dense row meets them in [`dot_block`]), the others by feature (a row adds
/// x_j·s_pj over its own non-zeros only).
pub(super) struct Layout {
    n_support: usize,
    n_features: usize,
    /// ‖s_p‖² of the support rows, in the order of S.
    norms: Vec<f64>,
    dense: Vec<f64>,
    /// The places in S of the packed rows; `all_dense` when they are all of S, in order.
    dense_places: Vec<usize>,
    all_dense: bool,
    /// Feature `features[c]` holds the entries `starts[c]..starts[c + 1]` of `places` and
    /// `values`, in the order of S.
    features: Vec<u32>,
    starts: Vec<usize>,
    places: Vec<usize>,
    values: Vec<f64>,
}

impl Layout {
    pub(super) fn new(support: &[Support], n_features: usize) -> Layout {
        let (mut dense, mut dense_places, mut entries) = (Vec::new(), Vec::new(), Vec::new());
        for (p, s) in support.iter().enumerate() {
            if s.indices.len() == n_features {
                dense.extend_from_slice(&s.values);
                dense_places.push(p);
            } else {
                entries.extend(s.indices.iter().zip(&s.values).map(|(&j, &v)| (j, p, v)));
            }
        }
        // A stable sort: within a feature the entries stay in the order of S.
        entries.sort_by_key(|&(j, _, _)| j);
        let (mut features, mut starts) = (Vec::new(), Vec::new());
        for (e, &(j, _, _)) in entries.iter().enumerate() {
            if features.last() != Some(&j) {
                features.push(j);
                starts.push(e);
            }
        }
        starts.push(entries.len());
        Layout {
            n_support: support.len(),
            n_features,
            norms: support.iter().map(|s| s.norm2).collect(),
            all_dense: dense_places.len() == support.len(),
            dense,
            dense_places,
            features,
            starts,
            places: entries.iter().map(|&(_, p, _)| p).collect(),
            values: entries.iter().map(|&(_, _, v)| v).collect(),
        }
    }

    /// `out[i·|S| + p]` = x·s_p for the rows `rows` of a validated `x`, each summed as
    /// [`Support::dot`] sums it: a dense row against a packed support row as [`dot`] does
    /// (here [`dot_block`]), otherwise over the common features in increasing order (a sum that
    /// skips the zero products x_j·s_pj = ±0, which cannot change it).
    pub(super) fn dots(
        &self,
        x: &Matrix,
        rows: Range<usize>,
        out: &mut [f64],
        scratch: &mut Vec<f64>,
    ) {
        let (m, d) = (self.n_support, self.n_features);
        if m == 0 {
            return;
        }
        out.fill(0.0);
        if let Matrix::Dense { values, .. } = *x {
            let block = &values[rows.start * d..rows.end * d];
            let n_dense = self.dense_places.len();
            if self.all_dense {
                dot_block(block, &self.dense, d, out, m);
            } else if n_dense > 0 {
                scratch.clear();
                scratch.resize(rows.len() * n_dense, 0.0);
                dot_block(block, &self.dense, d, scratch, n_dense);
                for (o, s) in out.chunks_exact_mut(m).zip(scratch.chunks_exact(n_dense)) {
                    self.dense_places
                        .iter()
                        .zip(s)
                        .for_each(|(&p, &v)| o[p] = v);
                }
            }
            for (o, row) in out.chunks_exact_mut(m).zip(block.chunks_exact(d)) {
                for (c, &j) in self.features.iter().enumerate() {
                    let xj = row[j as usize];
                    if xj != 0.0 {
                        self.add_feature(c, xj, o);
                    }
                }
            }
            return;
        }
        for (i, o) in rows.zip(out.chunks_exact_mut(m)) {
            let row = x.row(i);
            for (s, &p) in self.dense.chunks_exact(d).zip(&self.dense_places) {
                let mut sum = 0.0;
                row.for_each(|j, xj| sum += xj * s[j]);
                o[p] = sum;
            }
            let mut from = 0;
            row.for_each(|j, xj| {
                let rest = &self.features[from..];
                from += rest.partition_point(|&f| (f as usize) < j);
                if self.features.get(from).is_some_and(|&f| f as usize == j) {
                    self.add_feature(from, xj, o);
                }
            });
        }
    }

    /// `out[p] += xj·s_pj` over the support rows that store feature `features[c]`.
    #[inline]
    fn add_feature(&self, c: usize, xj: f64, out: &mut [f64]) {
        let entries = self.starts[c]..self.starts[c + 1];
        for (&p, &v) in self.places[entries.clone()]
            .iter()
            .zip(&self.values[entries])
        {
            out[p] += xj * v;
        }
    }
}

impl DualGaussian {
    /// Calls `each(i, μ·φ(x_i), φ(x_i)ᵀΣφ(x_i))` for every row of a validated `x` with
    /// several rows, the variance only when `with_variance` (NaN otherwise). `custom` holds a
    /// custom kernel's values: k_S(x_i) (+ bias) of every row, then κ_i (+ bias) of every row.
    pub(super) fn blocked_moments(
        &self,
        x: &Matrix,
        custom: Option<(&[f64], &[f64])>,
        with_variance: bool,
        mut each: impl FnMut(usize, f64, f64),
    ) {
        let (n, m) = (x.n_rows(), self.support.len());
        let layout = match (custom, &self.kernel) {
            (None, kernel) if kernel.name().is_some() => {
                Some(Layout::new(&self.support, self.n_features))
            }
            _ => None,
        };
        let per_row = x.n_entries() / n.max(1) + if with_variance { m } else { 0 };
        let mut moments = vec![(f64::NAN, f64::NAN); n];
        let run = |rows: Range<usize>, out: &mut [(f64, f64)]| {
            let mut work = Work::default();
            for start in rows.clone().step_by(BLOCK_ROWS) {
                let block = start..rows.end.min(start + BLOCK_ROWS);
                let out = &mut out[block.start - rows.start..block.end - rows.start];
                match (&layout, custom) {
                    (Some(layout), _) => {
                        self.kernel_rows(layout, x, block, &mut work);
                        let Work { k, kappas, pk, .. } = &mut work;
                        self.moments_block(k, kappas, with_variance, pk, out);
                    }
                    (None, Some((k, kappas))) => {
                        let k = &k[block.start * m..block.end * m];
                        self.moments_block(k, &kappas[block], with_variance, &mut work.pk, out);
                    }
                    (None, None) => unreachable!("a custom kernel's values are given"),
                }
            }
        };
        let parallel = n >= 2 * BLOCK_ROWS
            && n.saturating_mul(m).saturating_mul(per_row.max(1)) >= PARALLEL_WORK
            && crate::available_cores() >= 2;
        if parallel {
            let half = n.div_ceil(2 * BLOCK_ROWS) * BLOCK_ROWS;
            let (first, second) = moments.split_at_mut(half);
            crate::on_two_threads(|| run(0..half, first), || run(half..n, second));
        } else {
            run(0..n, &mut moments);
        }
        for (i, (score, v)) in moments.into_iter().enumerate() {
            each(i, score, v);
        }
    }

    /// The kernel rows k_S(x_i) (+ bias) and κ_i (+ bias) of the rows `rows` of `x` (a
    /// built-in kernel) into `work`.
    fn kernel_rows(&self, layout: &Layout, x: &Matrix, rows: Range<usize>, work: &mut Work) {
        let m = self.support.len();
        work.k.clear();
        work.k.resize(rows.len() * m, 0.0);
        layout.dots(x, rows.clone(), &mut work.k, &mut work.scratch);
        work.kappas.clear();
        for (offset, i) in rows.enumerate() {
            let xx = x.row(i).squared_norm();
            let k = &mut work.k[offset * m..(offset + 1) * m];
            self.kernel_values(&self.kernel, xx, &layout.norms, k);
            work.kappas
                .push(self.kernel.self_similarity(xx) + self.bias());
        }
    }

    /// `out[i]` = (k_i·ν, a·κ_i + k_iᵀΠk_i) for the kernel rows k_i in `k` (|S| each), the
    /// variance NaN unless `with_variance`; Π is read once for all of them.
    fn moments_block(
        &self,
        k: &[f64],
        kappas: &[f64],
        with_variance: bool,
        pk: &mut Vec<f64>,
        out: &mut [(f64, f64)],
    ) {
        let m = self.support.len();
        let rows = || (0..kappas.len()).map(|i| &k[i * m..(i + 1) * m]);
        for (o, k) in out.iter_mut().zip(rows()) {
            o.0 = dot(k, &self.nu);
        }
        if !with_variance {
            return;
        }
        if m >= QUADRATIC_MIN_SUPPORT && !self.pi.is_empty() {
            let mut quadratic = [0.0; BLOCK_ROWS];
            let quadratic = &mut quadratic[..kappas.len()];
            self.pi.quadratic_forms(k, quadratic);
            for ((o, &kappa), q) in out.iter_mut().zip(kappas).zip(quadratic) {
                o.1 = self.a * kappa + *q;
            }
            return;
        }
        if !self.pi.is_empty() {
            self.pi.multiply_block(k, kappas.len(), pk);
        }
        for (i, ((o, k), &kappa)) in out.iter_mut().zip(rows()).zip(kappas).enumerate() {
            let mut v = self.a * kappa;
            if !self.pi.is_empty() {
                v += dot(k, &pk[i * m..(i + 1) * m]);
            }
            o.1 = v;
        }
    }
}

/// Work space of one thread of [`DualGaussian::blocked_moments`].
#[derive(Default)]
struct Work {
    k: Vec<f64>,
    kappas: Vec<f64>,
    pk: Vec<f64>,
    scratch: Vec<f64>,
}

#[cfg(test)]
mod tests;
