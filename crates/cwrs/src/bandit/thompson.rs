//! Thompson sampling's draws (docs/design.md §3.16). Only the scores Xw of the round's K
//! actions matter, and for w ~ N(μ, α²Σ) they are N(Xμ, α²XΣXᵀ): with K no larger than the
//! model's coordinates D they are drawn jointly through the factor of that K × K matrix
//! (O(K²) cross-variances and O(K³) per round, never Σ itself); with more actions than
//! coordinates, w is drawn through the scores of D basis rows (the bias alone and each feature
//! with the bias), whose covariance is Σ in another basis, and the actions are scored by it.

use super::generator::Generator;
use crate::data::{Matrix, Row};
use crate::error::{zeros, CwError};
use crate::model::Model;

/// The rounds' draws: the index of the best action under each of `draws` independent draws of
/// w ~ N(μ, α²Σ) (ties to the first), in the order drawn.
pub(super) fn best_actions(
    model: &Model,
    actions: &Matrix,
    alpha: f64,
    draws: usize,
    generator: &mut Generator,
) -> Result<Vec<usize>, CwError> {
    let n_actions = actions.n_rows();
    let n_features = model.model_config().n_features;
    let fit_intercept = model.model_config().fit_intercept;
    let dim = n_features + usize::from(fit_intercept);
    if n_actions <= dim {
        let scores = ScoreDraws::new(model, actions, alpha)?;
        let mut z = zeros(draws.checked_mul(n_actions), || draws_of(draws, n_actions))?;
        generator.fill_standard_normal(&mut z);
        let mut s = vec![0.0; n_actions];
        Ok(z.chunks_exact(n_actions)
            .map(|z| {
                scores.draw(z, &mut s);
                first_best(&s)
            })
            .collect())
    } else {
        // The actions are scored here, not by the model: checked as it would check them.
        actions.validate(n_features)?;
        let basis = Basis::new(n_features, fit_intercept);
        let weights = ScoreDraws::new(model, &basis.matrix(), alpha)?;
        let mut z = zeros(draws.checked_mul(dim), || draws_of(draws, dim))?;
        generator.fill_standard_normal(&mut z);
        let (mut s, mut w, mut scores) = (vec![0.0; dim], vec![0.0; dim], vec![0.0; n_actions]);
        Ok(z.chunks_exact(dim)
            .map(|z| {
                weights.draw(z, &mut s);
                basis.weights(&s, &mut w);
                for (i, score) in scores.iter_mut().enumerate() {
                    *score = dot_with_bias(actions.row(i), &w, fit_intercept);
                }
                first_best(&scores)
            })
            .collect())
    }
}

/// What the normals of `draws` draws of `width` values are called in an out-of-memory error.
fn draws_of(draws: usize, width: usize) -> String {
    format!("the normals of {draws} Thompson draws of {width} values")
}

/// The index of the first highest value (NumPy's `argmax`).
pub(super) fn first_best(values: &[f64]) -> usize {
    let mut best = 0;
    for (k, &v) in values.iter().enumerate().skip(1) {
        if v > values[best] {
            best = k;
        }
    }
    best
}

/// Draws of the scores of some rows: N(m, α²C) with m their means and C their covariance,
/// as m + αLz with LLᵀ = C.
struct ScoreDraws {
    means: Vec<f64>,
    factor: Vec<f64>,
    alpha: f64,
}

impl ScoreDraws {
    fn new(model: &Model, rows: &Matrix, alpha: f64) -> Result<ScoreDraws, CwError> {
        let n = rows.n_rows();
        let what = || format!("the {n} × {n} covariance of a round's scores");
        let (mut means, mut factor) = (vec![0.0; n], zeros(n.checked_mul(n), what)?);
        model.score_distribution(rows, &mut means, &mut factor)?;
        semidefinite_cholesky(&mut factor, n);
        Ok(ScoreDraws {
            means,
            factor,
            alpha,
        })
    }

    /// m + αLz into `out` (L lower triangular, row-major).
    fn draw(&self, z: &[f64], out: &mut [f64]) {
        let n = self.means.len();
        for (i, value) in out.iter_mut().enumerate() {
            let row = &self.factor[i * n..=i * n + i];
            let mut lz = 0.0;
            for (l, z) in row.iter().zip(z) {
                lz += l * z;
            }
            *value = self.means[i] + self.alpha * lz;
        }
    }
}

/// Overwrites the lower triangle of the symmetric positive semidefinite `c` (n × n,
/// row-major) with a factor L, LLᵀ = C, and zeroes the upper triangle. A pivot at or below
/// 10⁻¹² of the largest diagonal entry (a direction of zero variance, as duplicate actions or
/// rounding leave) gives a zero column: in exact arithmetic the column below such a pivot is
/// zero too, so this is Cholesky's factorization extended to singular matrices.
pub(super) fn semidefinite_cholesky(c: &mut [f64], n: usize) {
    let largest = (0..n).map(|i| c[i * n + i]).fold(0.0, f64::max);
    let floor = 1e-12 * largest;
    for j in 0..n {
        let pivot = c[j * n + j] - (0..j).map(|k| c[j * n + k] * c[j * n + k]).sum::<f64>();
        let diagonal = if pivot > floor { pivot.sqrt() } else { 0.0 };
        c[j * n + j] = diagonal;
        for i in j + 1..n {
            let s = c[i * n + j] - (0..j).map(|k| c[i * n + k] * c[j * n + k]).sum::<f64>();
            c[i * n + j] = if diagonal == 0.0 { 0.0 } else { s / diagonal };
            c[j * n + i] = 0.0;
        }
    }
}

/// The D basis rows of a model over `n_features` features: with an intercept, the bias alone
/// (the empty row) then each feature with it, whose scores are w_b and w_j + w_b; without,
/// the unit rows, whose scores are the weights.
struct Basis {
    n_features: usize,
    fit_intercept: bool,
    indices: Vec<i64>,
    indptr: Vec<i64>,
    values: Vec<f64>,
}

impl Basis {
    fn new(n_features: usize, fit_intercept: bool) -> Basis {
        let bias_row = usize::from(fit_intercept);
        let mut indptr = vec![0; bias_row];
        indptr.extend(0..=n_features as i64);
        Basis {
            n_features,
            fit_intercept,
            indices: (0..n_features as i64).collect(),
            indptr,
            values: vec![1.0; n_features],
        }
    }

    fn matrix(&self) -> Matrix<'_> {
        Matrix::Csr64 {
            values: &self.values,
            indices: &self.indices,
            indptr: &self.indptr,
            n_cols: self.n_features,
        }
    }

    /// The weights (features, then the bias) from the basis rows' scores.
    fn weights(&self, scores: &[f64], w: &mut [f64]) {
        if self.fit_intercept {
            let bias = scores[0];
            for (w, s) in w.iter_mut().zip(&scores[1..]) {
                *w = s - bias;
            }
            w[self.n_features] = bias;
        } else {
            w.copy_from_slice(scores);
        }
    }
}

/// x·w over the features, plus the bias weight w[n_features] when there is one.
fn dot_with_bias(row: Row, w: &[f64], fit_intercept: bool) -> f64 {
    let mut s = 0.0;
    row.for_each(|j, x| s += x * w[j]);
    if fit_intercept {
        s += w[w.len() - 1];
    }
    s
}
