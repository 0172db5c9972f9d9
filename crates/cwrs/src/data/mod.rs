//! Borrowed views of the input: one row (dense slice or sparse CSR row) and a whole matrix.
//! Nothing here copies or allocates; a matrix is validated once, up front, so the learning loop
//! can trust every index.

pub mod hashing;
pub mod libsvm;
pub mod text;
mod unicode_tables;

use std::ops::Range;

use crate::error::CwError;
use crate::parallel::threads::{spawn_or_keep, Spawned};

/// A sparse index type as found in SciPy CSR matrices.
pub trait SparseIndex: Copy + PartialOrd + Send + Sync + std::fmt::Display {
    /// The index as `usize`; `None` when negative or too large.
    fn checked(self) -> Option<usize>;
    /// The index as `usize`, for indices already validated.
    fn get(self) -> usize;
}

macro_rules! sparse_index {
    ($($t:ty),*) => {$(
        impl SparseIndex for $t {
            #[inline(always)]
            fn checked(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
            #[inline(always)]
            fn get(self) -> usize {
                self as usize
            }
        }
    )*};
}
sparse_index!(i32, i64, u32, usize);

/// The index types of a CSR [`Matrix`].
pub trait CsrIndex: SparseIndex {
    /// The CSR matrix of these arrays (validated by [`Matrix::validate`]).
    fn matrix<'a>(
        values: &'a [f64],
        indices: &'a [Self],
        indptr: &'a [Self],
        n_cols: usize,
    ) -> Matrix<'a>;
}

macro_rules! csr_index {
    ($($t:ty => $variant:ident),*) => {$(
        impl CsrIndex for $t {
            fn matrix<'a>(values: &'a [f64], indices: &'a [$t], indptr: &'a [$t], n_cols: usize)
                -> Matrix<'a> {
                Matrix::$variant { values, indices, indptr, n_cols }
            }
        }
    )*};
}
csr_index!(i32 => Csr32, i64 => Csr64);

/// Non-negative integers (row or class indices) as `usize`; `what` names them in the error.
pub fn indices(values: impl IntoIterator<Item = i64>, what: &str) -> Result<Vec<usize>, CwError> {
    let indices = values.into_iter().map(usize::try_from);
    let negative = |_| CwError::InvalidInput(format!("{what} holds a negative index"));
    indices.collect::<Result<_, _>>().map_err(negative)
}

/// One example's features. Sparse indices must be in range and strictly increasing (canonical
/// CSR: sorted, no duplicates); [`Row::validate`] and [`Matrix::validate`] check it.
#[derive(Clone, Copy, Debug)]
pub enum Row<'a> {
    /// A dense row: feature j is `values[j]`.
    Dense(&'a [f64]),
    /// A sparse row, 32-bit: the column indices and their values, the same length.
    Sparse32(&'a [i32], &'a [f64]),
    /// A sparse row, 64-bit: the column indices and their values, the same length.
    Sparse64(&'a [i64], &'a [f64]),
}

impl Row<'_> {
    /// Calls `f(j, x_j)` for every stored entry.
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        match *self {
            Row::Dense(values) => values.iter().enumerate().for_each(|(j, &x)| f(j, x)),
            Row::Sparse32(indices, values) => sparse_for_each(indices, values, f),
            Row::Sparse64(indices, values) => sparse_for_each(indices, values, f),
        }
    }

    /// x·s for a sparse vector `s` with sorted indices (gather for dense rows, merge for sparse).
    pub fn dot_sparse(&self, indices: &[u32], values: &[f64]) -> f64 {
        match *self {
            Row::Dense(x) => indices
                .iter()
                .zip(values)
                .map(|(&j, &v)| v * x[j as usize])
                .sum(),
            Row::Sparse32(xi, xv) => merge_dot(xi, xv, indices, values),
            Row::Sparse64(xi, xv) => merge_dot(xi, xv, indices, values),
        }
    }

    /// The non-zero entries as sorted (index, value) vectors: a compact copy of the row.
    pub fn to_sparse(&self) -> (Vec<u32>, Vec<f64>) {
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        self.for_each(|j, x| {
            if x != 0.0 {
                indices.push(j as u32);
                values.push(x);
            }
        });
        (indices, values)
    }

    /// ‖x‖².
    pub fn squared_norm(&self) -> f64 {
        let mut s = 0.0;
        self.for_each(|_, x| s += x * x);
        s
    }

    /// The largest |x_j| stored.
    pub fn largest(&self) -> f64 {
        let mut largest = 0.0f64;
        self.for_each(|_, x| largest = largest.max(x.abs()));
        largest
    }

    /// Checks that every index is below `n_features` and every value finite.
    pub fn validate(&self, n_features: usize) -> Result<(), CwError> {
        match *self {
            Row::Dense(values) => {
                check_len(values.len(), n_features)?;
                check_finite(values)
            }
            Row::Sparse32(indices, values) => check_sparse(indices, values, n_features),
            Row::Sparse64(indices, values) => check_sparse(indices, values, n_features),
        }
    }
}

impl<'a> Row<'a> {
    /// The row with every value multiplied by `scale` (written into `buffer`).
    pub fn scaled<'b>(&self, scale: f64, buffer: &'b mut Vec<f64>) -> Row<'b>
    where
        'a: 'b,
    {
        let values = match *self {
            Row::Dense(values) | Row::Sparse32(_, values) | Row::Sparse64(_, values) => values,
        };
        buffer.clear();
        buffer.extend(values.iter().map(|&x| x * scale));
        match *self {
            Row::Dense(_) => Row::Dense(buffer),
            Row::Sparse32(indices, _) => Row::Sparse32(indices, buffer),
            Row::Sparse64(indices, _) => Row::Sparse64(indices, buffer),
        }
    }

    /// Runs `f` on the row as a one-row matrix `n_cols` wide, as a caller passing that one
    /// row would build it (a CSR row with its own offsets 0 and nnz).
    pub(crate) fn as_matrix<R>(self, n_cols: usize, f: impl FnOnce(&Matrix) -> R) -> R {
        match self {
            Row::Dense(values) => f(&Matrix::Dense {
                values,
                n_rows: 1,
                n_cols,
            }),
            Row::Sparse32(indices, values) => f(&Matrix::Csr32 {
                values,
                indices,
                indptr: &[0, values.len() as i32],
                n_cols,
            }),
            Row::Sparse64(indices, values) => f(&Matrix::Csr64 {
                values,
                indices,
                indptr: &[0, values.len() as i64],
                n_cols,
            }),
        }
    }
}

/// The power of two 2⁻ᵉ that brings `largest` (> 0) to [1, 2), with e clamped to ±1022 so the
/// factor is a normal float: multiplying by it is exact wherever the product is normal.
pub fn unit_scale(largest: f64) -> f64 {
    let e = ((largest.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    f64::from_bits(((1023 - e.clamp(-1022, 1022)) as u64) << 52)
}

#[inline(always)]
fn sparse_for_each<I: SparseIndex>(indices: &[I], values: &[f64], mut f: impl FnMut(usize, f64)) {
    for (&j, &x) in indices.iter().zip(values) {
        f(j.get(), x);
    }
}

/// Σ x_j s_j over the indices both sorted vectors hold.
fn merge_dot<I: SparseIndex>(xi: &[I], xv: &[f64], si: &[u32], sv: &[f64]) -> f64 {
    let mut sum = 0.0;
    merge_common(xi, xv, si, sv, |_, x, s| sum += x * s);
    sum
}

fn check_len(len: usize, n_features: usize) -> Result<(), CwError> {
    if len == n_features {
        Ok(())
    } else {
        Err(CwError::InvalidInput(format!(
            "X has {len} features, but the model is expecting {n_features} features as input"
        )))
    }
}

#[inline(always)]
fn check_finite(values: &[f64]) -> Result<(), CwError> {
    // An `or` without early exit over independent lanes, so the check vectorizes (a sum of
    // 0·x, tried before, is a chain of dependent additions: one per 4 cycles).
    if !values.iter().fold(false, |bad, x| bad | !x.is_finite()) {
        Ok(())
    } else {
        Err(CwError::InvalidInput(
            "Input X contains NaN or infinity".into(),
        ))
    }
}

fn check_sparse<I: SparseIndex>(
    indices: &[I],
    values: &[f64],
    n_features: usize,
) -> Result<(), CwError> {
    if indices.len() != values.len() {
        return Err(CwError::InvalidInput(format!(
            "sparse data has {} indices but {} values",
            indices.len(),
            values.len()
        )));
    }
    check_indices(indices, n_features)?;
    check_finite(values)
}

/// The column indices of one row: each in `0..n_features`, strictly increasing (a repeated
/// index would be learned as two features and give a wrong variance).
#[inline(always)]
fn check_indices<I: SparseIndex>(indices: &[I], n_features: usize) -> Result<(), CwError> {
    // The common case, checked without branches: in range and strictly increasing. Comparing
    // in the index's own type over a zip of two slices (no bounds checks) vectorizes; with the
    // first index non-negative and the last below `n_features`, all are in range.
    let increasing = indices
        .iter()
        .zip(indices.get(1..).unwrap_or_default())
        .fold(true, |ok, (a, b)| ok & (a < b));
    let in_range = match (indices.first(), indices.last()) {
        (Some(first), Some(last)) => first.checked().is_some() && last.get() < n_features,
        _ => true,
    };
    if increasing && in_range {
        Ok(())
    } else {
        index_error(indices, n_features)
    }
}

/// The error of [`check_indices`] on a row it refused.
#[cold]
fn index_error<I: SparseIndex>(indices: &[I], n_features: usize) -> Result<(), CwError> {
    let mut next_allowed = 0;
    for &index in indices {
        match index.checked() {
            Some(j) if j >= next_allowed && j < n_features => next_allowed = j + 1,
            Some(j) if j < n_features => {
                return Err(CwError::InvalidInput(format!(
                    "sparse column indices must be sorted without duplicates within a row; \
                     found {j} after {}",
                    next_allowed - 1
                )))
            }
            _ => {
                return Err(CwError::InvalidInput(format!(
                    "sparse column index {index} is out of range for {n_features} features"
                )));
            }
        }
    }
    Ok(())
}

/// A batch of rows: a C-ordered dense matrix or a CSR matrix.
#[derive(Clone, Copy, Debug)]
pub enum Matrix<'a> {
    /// A dense C-ordered (row-major) matrix.
    Dense {
        /// The values, row after row: `values[i * n_cols + j]` is row i's feature j.
        values: &'a [f64],
        /// The number of rows.
        n_rows: usize,
        /// The number of columns (features).
        n_cols: usize,
    },
    /// A CSR matrix with 32-bit indices (SciPy's usual int32 index arrays).
    Csr32 {
        /// The stored values, row after row.
        values: &'a [f64],
        /// The column index of each entry, strictly increasing within a row.
        indices: &'a [i32],
        /// The row offsets: row i is entries `indptr[i]..indptr[i + 1]` (n_rows + 1 values from 0).
        indptr: &'a [i32],
        /// The number of columns (features).
        n_cols: usize,
    },
    /// A CSR matrix with 64-bit indices (SciPy's int64 index arrays).
    Csr64 {
        /// The stored values, row after row.
        values: &'a [f64],
        /// The column index of each entry, strictly increasing within a row.
        indices: &'a [i64],
        /// The row offsets: row i is entries `indptr[i]..indptr[i + 1]` (n_rows + 1 values from 0).
        indptr: &'a [i64],
        /// The number of columns (features).
        n_cols: usize,
    },
}

impl<'a> Matrix<'a> {
    /// The number of rows.
    pub fn n_rows(&self) -> usize {
        match *self {
            Matrix::Dense { n_rows, .. } => n_rows,
            Matrix::Csr32 { indptr, .. } => indptr.len().saturating_sub(1),
            Matrix::Csr64 { indptr, .. } => indptr.len().saturating_sub(1),
        }
    }

    /// The number of columns (features).
    pub fn n_cols(&self) -> usize {
        match *self {
            Matrix::Dense { n_cols, .. }
            | Matrix::Csr32 { n_cols, .. }
            | Matrix::Csr64 { n_cols, .. } => n_cols,
        }
    }

    /// Row `i`; the matrix must have been validated and `i < n_rows()`.
    #[inline(always)]
    pub fn row(&self, i: usize) -> Row<'a> {
        match *self {
            Matrix::Dense { values, n_cols, .. } => {
                Row::Dense(&values[i * n_cols..(i + 1) * n_cols])
            }
            Matrix::Csr32 {
                values,
                indices,
                indptr,
                ..
            } => csr_row(values, indices, indptr, i, Row::Sparse32),
            Matrix::Csr64 {
                values,
                indices,
                indptr,
                ..
            } => csr_row(values, indices, indptr, i, Row::Sparse64),
        }
    }

    /// Checks shapes, CSR structure, index ranges and finiteness, and that the matrix has
    /// `n_features` columns. After this, [`Matrix::row`] cannot go out of bounds.
    pub fn validate(&self, n_features: usize) -> Result<(), CwError> {
        self.validate_structure(n_features)?;
        self.validate_rows(0..self.n_rows(), n_features)
    }

    /// The O(rows) part of [`Matrix::validate`]: shapes and the CSR row pointers, so that
    /// [`Matrix::row`] cannot go out of bounds (the rows' contents are not checked).
    pub fn validate_structure(&self, n_features: usize) -> Result<(), CwError> {
        check_len(self.n_cols(), n_features)?;
        match *self {
            Matrix::Dense {
                values,
                n_rows,
                n_cols,
            } => {
                if n_rows.checked_mul(n_cols) != Some(values.len()) {
                    return Err(CwError::InvalidInput(format!(
                        "dense buffer of {} values does not hold {n_rows}×{n_cols}",
                        values.len()
                    )));
                }
                Ok(())
            }
            Matrix::Csr32 {
                values,
                indices,
                indptr,
                ..
            } => check_indptr(values, indices, indptr),
            Matrix::Csr64 {
                values,
                indices,
                indptr,
                ..
            } => check_indptr(values, indices, indptr),
        }
    }

    /// The rest of [`Matrix::validate`] for rows `rows` of a matrix whose structure is valid:
    /// indices in range and strictly increasing, values finite.
    pub fn validate_rows(&self, rows: Range<usize>, n_features: usize) -> Result<(), CwError> {
        #[cfg(target_arch = "x86_64")]
        if crate::linalg::simd::has_avx2() {
            // SAFETY: the CPU has AVX2, checked just above.
            return unsafe { validate_rows_avx2(self, rows, n_features) };
        }
        self.validate_rows_portable(rows, n_features)
    }

    /// [`Matrix::validate_rows`] in the instructions of any CPU.
    #[inline(always)]
    fn validate_rows_portable(&self, rows: Range<usize>, n_features: usize) -> Result<(), CwError> {
        match *self {
            Matrix::Dense { values, n_cols, .. } => {
                check_finite(&values[rows.start * n_cols..rows.end * n_cols])
            }
            Matrix::Csr32 {
                values,
                indices,
                indptr,
                ..
            } => check_csr_rows(values, indices, &indptr[rows.start..=rows.end], n_features),
            Matrix::Csr64 {
                values,
                indices,
                indptr,
                ..
            } => check_csr_rows(values, indices, &indptr[rows.start..=rows.end], n_features),
        }
    }

    /// The error that refuses this batch when a part of its checks (a chunk of its rows, or its
    /// targets) gave `error`: the error of the whole batch's validation (which checks every
    /// row's indices before the values) if it has one, else `error`. So a batch is refused with
    /// the same error however it is validated, and bad rows before bad targets.
    pub fn refusal(&self, n_features: usize, error: CwError) -> CwError {
        let whole = self.validate_rows(0..self.n_rows(), n_features);
        whole.err().unwrap_or(error)
    }

    /// Stored entries: all of them for a dense matrix.
    pub fn n_entries(&self) -> usize {
        match *self {
            Matrix::Dense { values, .. }
            | Matrix::Csr32 { values, .. }
            | Matrix::Csr64 { values, .. } => values.len(),
        }
    }

    /// The rows as CSR arrays `(values, indices, indptr)` (a dense row's every entry kept).
    pub fn to_csr(&self) -> (Vec<f64>, Vec<i64>, Vec<i64>) {
        let (mut values, mut indices, mut indptr) = (Vec::new(), Vec::new(), vec![0]);
        for i in 0..self.n_rows() {
            self.row(i).for_each(|j, v| {
                values.push(v);
                indices.push(j as i64);
            });
            indptr.push(indices.len() as i64);
        }
        (values, indices, indptr)
    }
}

/// [`Matrix::validate_rows`] compiled for AVX2: twice the vector width for its comparisons
/// (a tenth of a sparse fit's instructions went to them).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn validate_rows_avx2(x: &Matrix, rows: Range<usize>, n_features: usize) -> Result<(), CwError> {
    x.validate_rows_portable(rows, n_features)
}

/// Row `i` of a CSR matrix, as the [`Row`] variant `row` of its index type (the matrix must
/// have been validated).
#[inline(always)]
fn csr_row<'a, I: SparseIndex>(
    values: &'a [f64],
    indices: &'a [I],
    indptr: &[I],
    i: usize,
    row: fn(&'a [I], &'a [f64]) -> Row<'a>,
) -> Row<'a> {
    let (start, end) = (indptr[i].get(), indptr[i + 1].get());
    row(&indices[start..end], &values[start..end])
}

fn check_indptr<I: SparseIndex>(
    values: &[f64],
    indices: &[I],
    indptr: &[I],
) -> Result<(), CwError> {
    let bad_indptr = || CwError::InvalidInput("CSR indptr is inconsistent with its data".into());
    if indptr.is_empty() || indptr[0].checked() != Some(0) {
        return Err(bad_indptr());
    }
    let mut previous = 0;
    for p in &indptr[1..] {
        let p = p.checked().ok_or_else(bad_indptr)?;
        if p < previous {
            return Err(bad_indptr());
        }
        previous = p;
    }
    if previous != values.len() || indices.len() != values.len() {
        return Err(bad_indptr());
    }
    Ok(())
}

/// Checks the rows whose pointers are `indptr` (a window of a valid indptr).
#[inline(always)]
fn check_csr_rows<I: SparseIndex>(
    values: &[f64],
    indices: &[I],
    indptr: &[I],
    n_features: usize,
) -> Result<(), CwError> {
    for row in indptr.windows(2) {
        check_indices(&indices[row[0].get()..row[1].get()], n_features)?;
    }
    let (first, last) = (indptr[0].get(), indptr[indptr.len() - 1].get());
    check_finite(&values[first..last])
}

/// Learns the rows of a matrix whose structure is valid while a second thread validates their
/// contents ahead: `learn` gets consecutive ranges of validated rows, in order, until a range
/// fails; then the error is returned, and `learn` has seen only the rows before that range.
/// When the system refuses the thread (at its limit on threads or memory), each range is
/// validated on this thread just before it is learned ([`learn_validated_in_turn`]): the same
/// ranges, only slower. `stop` is asked between ranges; once it says to stop, the rows left are
/// not learned (nor validated).
pub fn learn_validated_ahead(
    x: &Matrix,
    n_features: usize,
    chunk_rows: usize,
    stop: Option<Stop>,
    mut learn: impl FnMut(Range<usize>),
) -> Result<(), CwError> {
    let (n, chunk_rows) = (x.n_rows(), chunk_rows.max(1));
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let ahead = spawn_or_keep(scope, move || {
            for start in (0..n).step_by(chunk_rows) {
                let rows = start..n.min(start + chunk_rows);
                let checked = validate_chunk(x, rows.clone(), n_features).map(|()| rows);
                let failed = checked.is_err();
                // After an error the learner stops listening: nothing is left to report.
                if sender.send(checked).is_err() || failed {
                    return;
                }
            }
        });
        if let Spawned::Refused(_) = ahead {
            return learn_validated_in_turn(x, 0..n, n_features, chunk_rows, stop, |rows| {
                learn(rows);
                Ok(())
            });
        }
        for checked in receiver {
            // Leaving drops the receiver, which ends the validation ahead.
            if stop.is_some_and(|stop| stop.now()) {
                break;
            }
            learn(checked?);
        }
        Ok(())
    })
}

/// Stored entries validated at a time when rows are validated chunk by chunk, each chunk just
/// before it is learned: 192 KiB of CSR arrays with 32-bit indices, which the core's own cache
/// still holds when the learner reads them (instead of reading them from memory a second time).
const CHUNK_ENTRIES: usize = 1 << 14;

/// Rows of `x` per chunk of about [`CHUNK_ENTRIES`] stored entries.
pub(crate) fn chunk_rows(x: &Matrix) -> usize {
    (CHUNK_ENTRIES * x.n_rows().max(1) / x.n_entries().max(1)).max(1)
}

/// [`learn_validated_ahead`] on the calling thread, over rows `rows` of `x`: each chunk of
/// `chunk_rows` rows is validated just before `learn` gets it, so the learner reads the chunk's
/// arrays from cache. `stop` is asked between chunks (a chunk may present fewer rows than
/// [`Stop::every`]); once it says to stop, the rows left are not learned. A refused chunk
/// gives the error of the whole batch's validation.
pub fn learn_validated_in_turn(
    x: &Matrix,
    rows: Range<usize>,
    n_features: usize,
    chunk_rows: usize,
    stop: Option<Stop>,
    mut learn: impl FnMut(Range<usize>) -> Result<(), CwError>,
) -> Result<(), CwError> {
    let chunk_rows = chunk_rows.max(1);
    for start in rows.clone().step_by(chunk_rows) {
        if stop.is_some_and(|stop| stop.now()) {
            break;
        }
        let chunk = start..rows.end.min(start + chunk_rows);
        validate_chunk(x, chunk.clone(), n_features)?;
        learn(chunk)?;
    }
    Ok(())
}

/// [`Matrix::validate_rows`] on a chunk of the rows, refused as a batch ([`Matrix::refusal`]).
fn validate_chunk(x: &Matrix, rows: Range<usize>, n_features: usize) -> Result<(), CwError> {
    x.validate_rows(rows, n_features)
        .map_err(|error| x.refusal(n_features, error))
}

/// The model's coordinates: the user's `n_features` features, then the constant bias feature 1
/// when the model fits an intercept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The number of the user's features (columns of a row).
    pub n_features: usize,
    /// Whether the model adds a constant bias feature 1 (its weight is the intercept).
    pub fit_intercept: bool,
}

impl Shape {
    /// More features than any model could hold (a vector of f64 holds fewer than 2⁶⁰ values):
    /// refused up front, so that the number of coordinates cannot overflow.
    pub const MAX_FEATURES: usize = (isize::MAX as usize) / 8 - 1;

    /// The coordinates of a model of `n_features` features (at least 1, at most
    /// [`Shape::MAX_FEATURES`]), with a bias if `fit_intercept`.
    pub fn new(n_features: usize, fit_intercept: bool) -> Result<Shape, CwError> {
        if n_features == 0 {
            return Err(CwError::InvalidInput(
                "a model needs at least one feature".into(),
            ));
        }
        if n_features > Self::MAX_FEATURES {
            return Err(CwError::InvalidInput(format!(
                "a model cannot hold {n_features} features (at most {})",
                Self::MAX_FEATURES
            )));
        }
        Ok(Shape {
            n_features,
            fit_intercept,
        })
    }

    /// The number of weights: features plus the bias.
    pub fn dim(&self) -> usize {
        self.n_features + usize::from(self.fit_intercept)
    }

    /// `row` as the model sees it: its features, then the bias feature 1 if the model fits an
    /// intercept.
    #[inline]
    pub fn features<'a>(&self, row: Row<'a>) -> Features<'a> {
        self.scaled_features(row, 1.0)
    }

    /// `row` as the model sees it with the bias feature `bias` instead of 1: what `row`
    /// scaled by `bias` looks like when `row` holds the features already scaled.
    #[inline]
    pub fn scaled_features<'a>(&self, row: Row<'a>, bias: f64) -> Features<'a> {
        Features {
            row,
            bias: self.fit_intercept.then_some((self.n_features, bias)),
        }
    }

    /// (s, f(s·x)) for `row` as the model sees it, x, and the power of two s that brings its
    /// largest |x_j| (the bias feature's 1 included) to [1, 2) (s = 1 for an all-zero row).
    /// Scaling by s is exact, so for a quadratic form f, f(s·x) = s²·f(x) to the bit wherever
    /// neither side over- or underflows, and f(s·x) is representable where f(x) is not
    /// (features beyond ~1e±154).
    pub fn at_unit_scale(&self, row: Row, f: impl FnOnce(&Features) -> f64) -> (f64, f64) {
        let bias = if self.fit_intercept { 1.0 } else { 0.0 };
        let largest = row.largest().max(bias);
        if largest == 0.0 {
            return (1.0, f(&self.features(row)));
        }
        let s = unit_scale(largest);
        let mut values = Vec::new();
        (s, f(&self.scaled_features(row.scaled(s, &mut values), s)))
    }
}

/// A row as the model sees it: the user's features plus the bias feature (its index and
/// value, 1 but in a rescaled row), if any.
#[derive(Clone, Copy, Debug)]
pub struct Features<'a> {
    row: Row<'a>,
    bias: Option<(usize, f64)>,
}

impl Features<'_> {
    /// Calls `f(j, x_j)` for every stored entry, the bias feature last.
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        match self.row {
            // Dense rows inline here: through `Row::for_each(&mut f)` the closure was called per
            // entry where that instance is not inlined (a one-row score took twice as long).
            Row::Dense(values) => values.iter().enumerate().for_each(|(j, &x)| f(j, x)),
            row => row.for_each(&mut f),
        }
        if let Some((j, bias)) = self.bias {
            f(j, bias);
        }
    }

    /// w·x over the row as the model sees it: `w` holds a weight per coordinate (bias last).
    #[inline]
    pub fn dot(&self, w: &[f64]) -> f64 {
        let mut s = 0.0;
        self.for_each(|j, x| s += w[j] * x);
        s
    }

    /// Σ_j `term(table[j], x_j)` over the entries in order (the bias last), added as
    /// [`Features::for_each`] would: the same bits. A dense row is zipped with the table, so
    /// the loop indexes nothing (a bounds check per entry otherwise stays where the caller's
    /// code is not inlined with the table's length in sight).
    #[inline(always)]
    pub fn sum_over<T>(&self, table: &[T], term: impl Fn(&T, f64) -> f64) -> f64 {
        let mut s = 0.0;
        match self.row {
            Row::Dense(values) => {
                let table = &table[..values.len()];
                table.iter().zip(values).for_each(|(t, &x)| s += term(t, x));
            }
            row => row.for_each(&mut |j, x| s += term(&table[j], x)),
        }
        if let Some((j, bias)) = self.bias {
            s += term(&table[j], bias);
        }
        s
    }

    /// ‖x‖² over the row as the model sees it, the bias feature included.
    #[inline]
    pub fn squared_norm(&self) -> f64 {
        let mut s = 0.0;
        self.for_each(|_, x| s += x * x);
        s
    }

    /// Calls `f(j, x_j, y_j)` for every coordinate that both this row and `other` (over the
    /// same [`Shape`]) store, in increasing j, the bias feature last: O(d) for two dense rows,
    /// O(nnz) for a dense and a sparse row, O(nnz_x + nnz_y) for two sparse rows (a merge of
    /// their sorted indices). For `other` the same row, the entries come in the order of
    /// [`Features::for_each`].
    #[inline]
    pub fn for_each_common(&self, other: &Features, mut f: impl FnMut(usize, f64, f64)) {
        match (self.row, other.row) {
            (Row::Dense(x), Row::Dense(y)) => {
                let y = &y[..x.len()];
                (x.iter().zip(y).enumerate()).for_each(|(j, (&xj, &yj))| f(j, xj, yj));
            }
            (Row::Dense(x), y) => y.for_each(|j, yj| f(j, x[j], yj)),
            (x, Row::Dense(y)) => x.for_each(|j, xj| f(j, xj, y[j])),
            (Row::Sparse32(xi, xv), Row::Sparse32(yi, yv)) => merge_common(xi, xv, yi, yv, &mut f),
            (Row::Sparse32(xi, xv), Row::Sparse64(yi, yv)) => merge_common(xi, xv, yi, yv, &mut f),
            (Row::Sparse64(xi, xv), Row::Sparse32(yi, yv)) => merge_common(xi, xv, yi, yv, &mut f),
            (Row::Sparse64(xi, xv), Row::Sparse64(yi, yv)) => merge_common(xi, xv, yi, yv, &mut f),
        }
        if let (Some((j, x)), Some((_, y))) = (self.bias, other.bias) {
            f(j, x, y);
        }
    }

    /// x·y over the coordinates both rows store (see [`Features::for_each_common`]); for `other`
    /// the same row, [`Features::squared_norm`] bit for bit.
    #[inline]
    pub fn dot_features(&self, other: &Features) -> f64 {
        let mut s = 0.0;
        self.for_each_common(other, |_, x, y| s += x * y);
        s
    }
}

/// `f(j, x_j, y_j)` for the indices both sorted, duplicate-free sparse rows hold, in order.
#[inline(always)]
fn merge_common<I: SparseIndex, J: SparseIndex>(
    xi: &[I],
    xv: &[f64],
    yi: &[J],
    yv: &[f64],
    mut f: impl FnMut(usize, f64, f64),
) {
    // Rows far apart (a bandit's actions crossed with a one-hot) share nothing: start where the
    // other row's indices begin, which is past the end for rows with disjoint ranges.
    let (Some(x_first), Some(y_first)) = (xi.first(), yi.first()) else {
        return;
    };
    let mut p = xi.partition_point(|i| i.get() < y_first.get());
    let mut q = yi.partition_point(|j| j.get() < x_first.get());
    while p < xi.len() && q < yi.len() {
        let (a, b) = (xi[p].get(), yi[q].get());
        if a == b {
            f(a, xv[p], yv[q]);
            p += 1;
            q += 1;
        } else if a < b {
            p += 1;
        } else {
            q += 1;
        }
    }
}

/// How a batch is presented: row `i` with importance weight `weights[i]` (a finite real ≥ 0; 1
/// when `None`; a row of weight 0 is skipped as if absent, docs/design.md §2.10), rows taken in
/// `order` (a sequence of row indices, repeats allowed) or else `0..n`; `stop`, when given, is
/// asked every [`Stop::every`] rows whether to end the batch early (an interrupted call, which
/// the caller then undoes).
#[derive(Clone, Copy, Debug, Default)]
pub struct Presentation<'a> {
    /// The importance weight of each row (`None`: all 1).
    pub weights: Weights<'a>,
    /// The row indices in the order they are learned (repeats allowed); `0..n` when `None`.
    pub order: Option<&'a [usize]>,
    /// The caller's request to end the batch early, if it may make one.
    pub stop: Option<Stop<'a>>,
    /// Whether each row's weight is also multiplied by its class's balanced weight from the
    /// model's running class counts (`class_weight="balanced"`, docs/design.md §2.10; for
    /// [`crate::Model::partial_fit`]).
    pub balanced: bool,
}

/// The importance weights of a batch's rows, if not all 1.
pub type Weights<'a> = Option<&'a [f64]>;

/// Row `i`'s weight.
#[inline]
pub fn weight_of(weights: Weights, i: usize) -> f64 {
    weights.map_or(1.0, |w| w[i])
}

/// Whether to end a batch early: `asked` is true once the caller wants it to stop (sticky). It is
/// asked every `every` presentations (at least 1), which the caller sets from the work of a row
/// ([`stop_every`]), and between chunks of rows.
#[derive(Clone, Copy)]
pub struct Stop<'a> {
    /// Whether the caller wants the batch to end (once true, it stays true).
    pub asked: &'a (dyn Fn() -> bool + Sync),
    /// How many presentations pass between two questions (at least 1).
    pub every: u32,
}

impl Stop<'_> {
    /// Whether the caller wants the batch to end now.
    pub fn now(&self) -> bool {
        (self.asked)()
    }
}

/// Estimated work (multiply-adds) between two questions to a [`Stop`]: about a millisecond, so
/// that a caller asked every [`STOP_POLL`] hears its answer that soon for rows of any cost (a
/// question costs tens of nanoseconds: a lock and a clock read).
pub const POLL_WORK: f64 = (1u64 << 20) as f64;

/// How often a thread that waits for others (a sharded pass) asks a [`Stop`], and how often a
/// caller that can be interrupted (Python: Ctrl-C) wants to be asked.
pub const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Presentations between two questions to a [`Stop`] for rows of `row_work` each.
pub fn stop_every(row_work: f64) -> u32 {
    // Saturating: NaN (no estimate) gives 1, a row of no work the most.
    ((POLL_WORK / row_work) as u32).max(1)
}

impl std::fmt::Debug for Stop<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stop")
    }
}

impl<'a> Presentation<'a> {
    /// Checks `x` (against `n_features`), the number of labels and the presentation, so that
    /// learning can then run without any failure.
    pub fn check(&self, x: &Matrix, n_features: usize, n_labels: usize) -> Result<(), CwError> {
        self.check_shapes(x, n_features, n_labels)?;
        x.validate_rows(0..x.n_rows(), n_features)
    }

    /// [`Presentation::check`] but for the contents of x's rows (see
    /// [`Matrix::validate_rows`]).
    pub fn check_shapes(
        &self,
        x: &Matrix,
        n_features: usize,
        n_labels: usize,
    ) -> Result<(), CwError> {
        x.validate_structure(n_features)?;
        let n = x.n_rows();
        if n_labels != n {
            return Err(CwError::InvalidInput(format!(
                "X has {n} rows but y has {n_labels} values"
            )));
        }
        if let Some(weights) = self.weights {
            check_weights(weights, n)?;
        }
        if let Some(&bad) = self.order.and_then(|o| o.iter().find(|&&i| i >= n)) {
            return Err(CwError::InvalidInput(format!(
                "row index {bad} is out of range for {n} rows"
            )));
        }
        Ok(())
    }

    /// The row indices of an `n`-row batch, one per presentation, in presentation order.
    pub fn sequence(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.kept(self.presented(n))
    }

    /// [`Presentation::sequence`] with the rows of weight 0 too (which are not learned: a
    /// caller that predicts every row before learning it, `partial_fit_scored`).
    pub(crate) fn sequence_with_weightless(&self, n: usize) -> impl Iterator<Item = usize> + '_ {
        self.until_stopped(self.presented(n))
    }

    /// The presentations of rows `rows` in order (`order` must be `None`).
    pub fn sequence_of(&self, rows: Range<usize>) -> impl Iterator<Item = usize> + '_ {
        debug_assert!(self.order.is_none());
        self.kept(rows)
    }

    /// The row indices of an `n`-row batch in presentation order: `order`, or else `0..n`.
    fn presented(&self, n: usize) -> impl Iterator<Item = usize> + 'a {
        let natural = if self.order.is_some() { 0 } else { n };
        self.order.unwrap_or(&[]).iter().copied().chain(0..natural)
    }

    /// The rows of `rows` whose weight is not 0, until `stop` says to stop.
    fn kept(&self, rows: impl Iterator<Item = usize> + 'a) -> impl Iterator<Item = usize> + 'a {
        let weights = self.weights;
        self.until_stopped(rows.filter(move |&i| weights.is_none_or(|w| w[i] != 0.0)))
    }

    /// `rows` until `stop`, asked every `stop.every` rows, says to stop.
    fn until_stopped(
        &self,
        rows: impl Iterator<Item = usize> + 'a,
    ) -> impl Iterator<Item = usize> + 'a {
        let stop = self.stop;
        let mut count = 0u32;
        rows.take_while(move |_| {
            let Some(stop) = stop else {
                return true;
            };
            count += 1;
            if count < stop.every {
                return true;
            }
            count = 0;
            !stop.now()
        })
    }

    /// How many rows an `n`-row batch presents (rows of weight 0 and rows out of range, which
    /// validation refuses, count 0).
    pub fn len(&self, n: usize) -> u64 {
        let times = |i: usize| match self.weights {
            None => 1,
            Some(w) => w.get(i).map_or(0, |&h| u64::from(h != 0.0)),
        };
        match self.order {
            Some(order) => order.iter().map(|&i| times(i)).sum(),
            None => (0..n).map(times).sum(),
        }
    }

    /// Calls `f(i)` once per presentation of row `i` of an `n`-row batch.
    pub fn for_each(&self, n: usize, f: impl FnMut(usize)) {
        self.sequence(n).for_each(f);
    }
}

/// The largest importance weight a row takes, 2⁶⁴: totals of weights that a model keeps (the
/// average's, the class counts of `class_weight="balanced"`) then stay finite over any stream
/// (2⁶⁴ rows of it sum to 2¹²⁸), so that every model learned can be saved and loaded.
pub const MAX_WEIGHT: f64 = 18_446_744_073_709_551_616.0;

/// Checks a batch's importance weights: one per row, each finite, ≥ 0 and at most
/// [`MAX_WEIGHT`].
pub fn check_weights(weights: &[f64], n: usize) -> Result<(), CwError> {
    if weights.len() != n {
        return Err(CwError::InvalidInput(format!(
            "X has {n} rows but sample_weight has {} values",
            weights.len()
        )));
    }
    match weights
        .iter()
        .position(|h| !(*h >= 0.0 && *h <= MAX_WEIGHT))
    {
        Some(i) => Err(CwError::InvalidInput(format!(
            "sample_weight must hold weights from 0 to 2**64, got {} at row {i}",
            weights[i]
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
