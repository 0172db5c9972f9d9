//! The dual form's storage: the support rows and the packed symmetric matrices over them (Π and
//! the support Gram matrix).

use crate::data::Row;
use crate::linalg::simd::{dot, dot_axpy, quadratic_forms, subtract_scaled};

/// A stored support row: its non-zeros and ‖x‖².
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Support {
    pub(super) indices: Vec<u32>,
    pub(super) values: Vec<f64>,
    pub(super) norm2: f64,
}

impl Support {
    /// s·x. A support row with every feature stored against a dense row is a contiguous dot
    /// product (its indices are then 0..d); this runs |S| times per example.
    #[inline]
    pub(super) fn dot(&self, row: &Row) -> f64 {
        match *row {
            Row::Dense(x) if self.indices.len() == x.len() => dot(&self.values, x),
            _ => row.dot_sparse(&self.indices, &self.values),
        }
    }
}

/// A symmetric |S|×|S| matrix over the support rows, stored as its packed lower triangle: row p
/// holds columns 0..=p from offset p(p+1)/2. The per-example passes over Π are memory-bound, so
/// storing each entry once halves their traffic, and every pass runs along contiguous rows.
/// Appending a support row is a plain append; removing one is O(|S|) (the last row and column
/// move into its place, as `Vec::swap_remove` does).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Symmetric {
    data: Vec<f64>,
    n: usize,
}

impl Symmetric {
    /// From a full row-major matrix, assumed symmetric: only its lower triangle is read.
    pub(super) fn from_dense(n: usize, values: &[f64]) -> Symmetric {
        let mut data = Vec::with_capacity(n * (n + 1) / 2);
        for p in 0..n {
            data.extend_from_slice(&values[p * n..=p * n + p]);
        }
        Symmetric { data, n }
    }

    pub(super) fn to_dense(&self) -> Vec<f64> {
        let (mut dense, mut column) = (Vec::with_capacity(self.n * self.n), Vec::new());
        for p in 0..self.n {
            self.column(p, &mut column);
            dense.extend_from_slice(&column);
        }
        dense
    }

    /// Every entry times `r`.
    pub(super) fn scale(&mut self, r: f64) {
        self.data.iter_mut().for_each(|v| *v *= r);
    }

    /// The values stored (the packed triangle).
    pub(super) fn n_values(&self) -> usize {
        self.data.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.n == 0
    }

    #[inline]
    fn offset(p: usize) -> usize {
        p * (p + 1) / 2
    }

    #[inline]
    pub(super) fn diagonal(&self, p: usize) -> f64 {
        self.data[Self::offset(p) + p]
    }

    /// Row p (= column p) in full, into `out`.
    pub(super) fn column(&self, p: usize, out: &mut Vec<f64>) {
        out.clear();
        out.extend_from_slice(&self.data[Self::offset(p)..Self::offset(p + 1)]);
        out.extend((p + 1..self.n).map(|q| self.data[Self::offset(q) + p]));
    }

    /// Appends a row and column: `column` (length n), then `corner`.
    pub(super) fn push(&mut self, column: &[f64], corner: f64) {
        self.data.extend_from_slice(column);
        self.data.push(corner);
        self.n += 1;
    }

    /// Appends a zero row and column.
    pub(super) fn push_zeros(&mut self) {
        self.n += 1;
        self.data.resize(Self::offset(self.n), 0.0);
    }

    /// Removes row and column `victim`, moving the last ones into their place.
    pub(super) fn swap_remove(&mut self, victim: usize) {
        let last = self.n - 1;
        if victim != last {
            let (head, last_row) = self.data.split_at_mut(Self::offset(last));
            let start = Self::offset(victim);
            head[start..start + victim].copy_from_slice(&last_row[..victim]);
            head[start + victim] = last_row[last];
            for q in victim + 1..last {
                head[Self::offset(q) + victim] = last_row[q];
            }
        }
        self.data.truncate(Self::offset(last));
        self.n = last;
    }

    /// Calls `each(p, row p up to the diagonal)` for every row, in order.
    #[inline(always)]
    fn for_each_row(&mut self, mut each: impl FnMut(usize, &mut [f64])) {
        let mut rest = self.data.as_mut_slice();
        for p in 0..self.n {
            let (row, tail) = std::mem::take(&mut rest).split_at_mut(p + 1);
            each(p, row);
            rest = tail;
        }
    }

    /// y = M·x.
    pub(super) fn multiply(&self, x: &[f64], y: &mut Vec<f64>) {
        y.clear();
        y.resize(self.n, 0.0);
        let mut rest = self.data.as_slice();
        for p in 0..self.n {
            let (row, tail) = rest.split_at(p + 1);
            rest = tail;
            accumulate_row(p, row, x, y);
        }
    }

    /// `y[i·n..][..n]` = M·x_i for the `count` vectors x_i in `x` (n values each), each as
    /// [`Self::multiply`] computes it, with every row of M read once for all of them.
    pub(super) fn multiply_block(&self, x: &[f64], count: usize, y: &mut Vec<f64>) {
        let n = self.n;
        y.clear();
        y.resize(count * n, 0.0);
        let mut rest = self.data.as_slice();
        for p in 0..n {
            let (row, tail) = rest.split_at(p + 1);
            rest = tail;
            for (x, y) in x.chunks_exact(n).zip(y.chunks_exact_mut(n)) {
                accumulate_row(p, row, x, y);
            }
        }
    }

    /// `out[i]` = x_iᵀMx_i for the vectors x_i in `x` (n values each, one per value of `out`),
    /// as [`quadratic_forms`] sums them: not the bits of x_i·(Mx_i).
    pub(super) fn quadratic_forms(&self, x: &[f64], out: &mut [f64]) {
        quadratic_forms(&self.data, self.n, x, out);
    }

    /// M ← M − h hᵀ, minus c wᵀ too when `schur` = (c, w) (with w ∝ c, so symmetric), then
    /// y = M·x for each of `products`, all in one sweep over M: each row is multiplied right
    /// after its update, while it is still in cache.
    pub(super) fn update_and_multiply(
        &mut self,
        h: &[f64],
        schur: Option<(&[f64], &[f64])>,
        mut products: [Option<Product>; 2],
    ) {
        for product in products.iter_mut().flatten() {
            product.y.clear();
            product.y.resize(self.n, 0.0);
        }
        self.for_each_row(|p, row| {
            subtract_scaled(row, h[p], h, schur.map(|(c, w)| (c[p], w)));
            for product in products.iter_mut().flatten() {
                accumulate_row(p, row, product.x, product.y);
            }
        });
    }
}

/// y = M·x, computed during a sweep over M.
pub(super) struct Product<'a> {
    pub(super) x: &'a [f64],
    pub(super) y: &'a mut Vec<f64>,
}

/// Adds row p's share of y = M·x for a symmetric M: `row` (columns 0..=p) is both the lower
/// part of row p (a dot product into y_p) and the upper part of column p (an axpy into y_0..p),
/// so M is read once.
#[inline(always)]
fn accumulate_row(p: usize, row: &[f64], x: &[f64], y: &mut [f64]) {
    let (y_lower, y_p) = y.split_at_mut(p);
    y_p[0] += dot_axpy(&row[..p], &x[..p], x[p], y_lower) + row[p] * x[p];
}
