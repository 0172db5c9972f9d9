//! AROW regression's prior variance of the feature weights learned from the stream, by
//! maximizing the evidence (MacKay's fixed point) at checkpoints whose cost is amortized over
//! the rows (docs/design.md §3.14, "The prior of the weights, learned in the loop").
//!
//! The model is Σ⁻¹ = E/a + B/a₀ + Σ_t xxᵀ/r, with E the feature coordinates, B the bias (which
//! keeps the configured prior a₀), and κ = σ²/r the noise scale (1 for a fixed r). In absolute
//! units the weights' prior variance is κ·a and their posterior covariance κ·Σ, so MacKay's
//! update of the prior precision λ = 1/(κ·a) reads, over the feature coordinates j,
//!
//! ```text
//! γ = Σ_j (1 − Σ_jj/a),   a ← ‖μ_E‖² / (κ·γ).
//! ```
//!
//! Changing a changes the prior alone: the data's information Σ⁻¹ − E/a and the information
//! vector Σ⁻¹μ (the prior's mean is 0) stay, so with δ = 1/a′ − 1/a
//!
//! ```text
//! Σ′ = (Σ⁻¹ + δE)⁻¹ = (I + δΣE)⁻¹Σ,   μ′ = Σ′Σ⁻¹μ = (I + δΣE)⁻¹μ,
//! ```
//!
//! exact, and computed without inverting Σ (per coordinate in the diagonal form). The noise
//! scale κ moves with it ([`NoiseEstimate::with_prior_changed`]), and the fixed point reads
//! the κ of each trial a: a and κ are maximized jointly.

use crate::error::CwError;
use crate::learn::noise_estimate::NoiseEstimate;

/// Fixed-point iterations at a checkpoint (each one solve of the form's size).
const ITERATIONS: usize = 4;

/// The iteration stops once a changes by less than this fraction.
const TOLERANCE: f64 = 1e-10;

/// A checkpoint changes a by at most this factor either way, and a stays in
/// [1/`LIMIT`, `LIMIT`]: a stream whose weights are all 0 would drive it to 0.
const STEP_LIMIT: f64 = 1e6;
const LIMIT: f64 = 1e100;

/// The learned prior variance of the feature weights and the rows it was learned over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PriorEstimate {
    /// The current prior variance a of the feature weights (the model's posterior is under it).
    pub variance: f64,
    /// Rows learned with a positive weight: the checkpoints are counted in them.
    pub rows: u64,
}

/// What the posterior under a trial prior says: Σ_j Σ′_jj, ‖μ′‖² and μ′·μ over the feature
/// coordinates (μ the mean before the change).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeatureMoments {
    /// The sum of the feature coordinates' variances.
    pub variance_sum: f64,
    /// The squared norm of the feature weights' mean.
    pub squared_norm: f64,
    /// The product of the feature weights' means after and before the change.
    pub cross: f64,
}

impl PriorEstimate {
    /// A fresh estimate from the configured prior variance `a`.
    pub fn new(a: f64) -> Self {
        PriorEstimate {
            variance: a,
            rows: 0,
        }
    }

    /// A restored estimate, refused unless a is positive and finite.
    pub fn restored(variance: f64, rows: u64) -> Result<Self, CwError> {
        if !(variance > 0.0 && variance.is_finite()) {
            return Err(CwError::InvalidState(format!(
                "the learned prior variance must be positive and finite, got {variance}"
            )));
        }
        Ok(PriorEstimate { variance, rows })
    }

    /// Rows still to learn until the next checkpoint, for models of `n_features` features: the
    /// checkpoints are after rows 2^k·(d + 1), k = 0, 1, …, so that their O(d³) cost (full
    /// form) is amortized over at least d + 1 rows of O(d²) each.
    pub fn rows_to_checkpoint(&self, n_features: usize) -> u64 {
        let unit = (n_features as u64).saturating_add(1);
        let mut checkpoint = unit;
        while checkpoint <= self.rows {
            checkpoint = checkpoint.saturating_mul(2);
            if checkpoint == u64::MAX {
                return u64::MAX - self.rows;
            }
        }
        checkpoint - self.rows
    }

    /// A checkpoint: a few fixed-point iterations of MacKay's update from the current a over
    /// `n_features` feature coordinates, jointly with the noise scale κ = σ̂²/r of `noise`
    /// (with `scaled_by_noise`; 1 for a fixed r), which moves with the prior
    /// ([`NoiseEstimate::with_prior_changed`]); `posterior(δ, commit)` gives the feature moments of
    /// the posterior whose feature prior precision is larger by δ, and sets the model to it
    /// when `commit`. The model, `noise` and the estimate change only if the update is
    /// defined (γ > 0, μ ≠ 0).
    pub fn maximize_evidence(
        &mut self,
        n_features: usize,
        noise: &mut NoiseEstimate,
        scaled_by_noise: bool,
        mut posterior: impl FnMut(f64, bool) -> Option<FeatureMoments>,
    ) {
        let current = self.variance;
        let (low, high) = (
            (current / STEP_LIMIT).max(1.0 / LIMIT),
            (current * STEP_LIMIT).min(LIMIT),
        );
        let delta = |a: f64| 1.0 / a - 1.0 / current;
        let mut a = current;
        for _ in 0..ITERATIONS {
            let Some(moments) = posterior(delta(a), false) else {
                break;
            };
            let kappa = match scaled_by_noise {
                true => noise.with_prior_changed(delta(a), moments.cross).estimate,
                false => 1.0,
            };
            let Some(next) = evidence_update(a, n_features, kappa, moments) else {
                break;
            };
            let next = next.clamp(low, high);
            let converged = ((next - a) / a).abs() < TOLERANCE;
            a = next;
            if converged {
                break;
            }
        }
        if a == current {
            return;
        }
        if let Some(moments) = posterior(delta(a), true) {
            self.variance = a;
            *noise = noise.with_prior_changed(delta(a), moments.cross);
        }
    }
}

/// MacKay's update: a′ = ‖μ_E‖²/(κ·γ), γ = Σ_j (1 − Σ_jj/a) the number of feature weights the
/// data determine; `None` where it is not defined.
pub fn evidence_update(
    a: f64,
    n_features: usize,
    kappa: f64,
    moments: FeatureMoments,
) -> Option<f64> {
    let gamma = n_features as f64 - moments.variance_sum / a;
    let next = moments.squared_norm / (kappa * gamma);
    (gamma > 1e-12 * n_features as f64 && next > 0.0 && next.is_finite()).then_some(next)
}

/// The dense posterior (μ, Σ row-major over `dim` coordinates, the first `n_features` the
/// features) with the feature prior precision larger by `delta`: (I + δΣE)⁻¹ applied to μ and
/// Σ by Gaussian elimination with partial pivoting, Σ′ symmetrized; `None` if the system is
/// singular or a value is not finite.
pub fn reweighed_dense(
    mean: &[f64],
    sigma: &[f64],
    n_features: usize,
    delta: f64,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let dim = mean.len();
    // M = I + δΣE: column j scaled by δ for the features, 0 for the bias.
    let mut m: Vec<f64> = (0..dim * dim)
        .map(|k| {
            let (i, j) = (k / dim, k % dim);
            let term = if j < n_features {
                delta * sigma[k]
            } else {
                0.0
            };
            term + f64::from(u8::from(i == j))
        })
        .collect();
    // The right-hand sides, row i: μ_i then row i of Σ.
    let width = dim + 1;
    let mut rhs: Vec<f64> = (0..dim)
        .flat_map(|i| std::iter::once(mean[i]).chain(sigma[i * dim..(i + 1) * dim].iter().copied()))
        .collect();
    for col in 0..dim {
        let pivot = (col..dim)
            .max_by(|&p, &q| m[p * dim + col].abs().total_cmp(&m[q * dim + col].abs()))?;
        if m[pivot * dim + col] == 0.0 || m[pivot * dim + col].is_nan() {
            return None;
        }
        if pivot != col {
            for k in 0..dim {
                m.swap(pivot * dim + k, col * dim + k);
            }
            for k in 0..width {
                rhs.swap(pivot * width + k, col * width + k);
            }
        }
        let diagonal = m[col * dim + col];
        let (pivot_m, below_m) = m.split_at_mut((col + 1) * dim);
        let (pivot_rhs, below_rhs) = rhs.split_at_mut((col + 1) * width);
        let (pivot_m, pivot_rhs) = (&pivot_m[col * dim..], &pivot_rhs[col * width..]);
        let rows = below_m
            .chunks_exact_mut(dim)
            .zip(below_rhs.chunks_exact_mut(width));
        for (row_m, row_rhs) in rows {
            let factor = row_m[col] / diagonal;
            if factor == 0.0 {
                continue;
            }
            (row_m[col..].iter_mut().zip(&pivot_m[col..])).for_each(|(r, p)| *r -= factor * p);
            (row_rhs.iter_mut().zip(pivot_rhs)).for_each(|(r, p)| *r -= factor * p);
        }
    }
    // Back substitution by rows of the right-hand sides (contiguous).
    for row in (0..dim).rev() {
        let (head, solved) = rhs.split_at_mut((row + 1) * width);
        let current = &mut head[row * width..];
        for (t, solved_row) in (row + 1..dim).zip(solved.chunks_exact(width)) {
            let factor = m[row * dim + t];
            if factor != 0.0 {
                current
                    .iter_mut()
                    .zip(solved_row)
                    .for_each(|(c, s)| *c -= factor * s);
            }
        }
        let diagonal = m[row * dim + row];
        current.iter_mut().for_each(|c| *c /= diagonal);
    }
    let new_mean: Vec<f64> = (0..dim).map(|i| rhs[i * width]).collect();
    let mut new_sigma = vec![0.0; dim * dim];
    for i in 0..dim {
        for j in 0..dim {
            new_sigma[i * dim + j] = 0.5 * (rhs[i * width + 1 + j] + rhs[j * width + 1 + i]);
        }
    }
    let finite = new_mean.iter().chain(&new_sigma).all(|v| v.is_finite());
    finite.then_some((new_mean, new_sigma))
}

/// [`reweighed_dense`] of a diagonal Σ (the variances): per feature coordinate,
/// σ′ = σ/(1 + δσ) and μ′ = μ/(1 + δσ); `None` if a variance would not stay positive.
pub fn reweighed_diagonal(
    mean: &[f64],
    variances: &[f64],
    n_features: usize,
    delta: f64,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let (mut new_mean, mut new_variances) = (mean.to_vec(), variances.to_vec());
    for j in 0..n_features.min(mean.len()) {
        let scale = 1.0 + delta * variances[j];
        if !(scale > 0.0 && scale.is_finite()) {
            return None;
        }
        new_mean[j] /= scale;
        new_variances[j] /= scale;
    }
    Some((new_mean, new_variances))
}

/// The feature moments of a posterior of mean `mean` changed from `before`: Σ_j `variance(j)`,
/// Σ_j μ_j² and Σ_j μ_j·before_j over the first `n_features` coordinates.
pub fn feature_moments(
    mean: &[f64],
    before: &[f64],
    n_features: usize,
    variance: impl Fn(usize) -> f64,
) -> FeatureMoments {
    FeatureMoments {
        variance_sum: (0..n_features).map(variance).sum(),
        squared_norm: mean[..n_features].iter().map(|m| m * m).sum(),
        cross: (mean[..n_features].iter().zip(before))
            .map(|(m, b)| m * b)
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoints_double_from_the_dimension() {
        let mut estimate = PriorEstimate::new(1.0);
        let mut checkpoints = Vec::new();
        while estimate.rows < 100 {
            estimate.rows += estimate.rows_to_checkpoint(4);
            checkpoints.push(estimate.rows);
        }
        assert_eq!(checkpoints, [5, 10, 20, 40, 80, 160]);
        estimate.rows = 7;
        assert_eq!(estimate.rows_to_checkpoint(4), 3);
    }

    #[test]
    fn the_dense_change_of_prior_is_the_inverse_of_the_changed_precision() {
        // Σ⁻¹ = I/2 + XᵀX over 2 features and a bias.
        let precision = [2.5, 0.3, 0.1, 0.3, 1.5, -0.2, 0.1, -0.2, 1.2];
        let sigma = invert3(&precision);
        let information = [0.4, -1.0, 0.7];
        let mean = multiply3(&sigma, &information);
        let delta = 3.0;
        let (new_mean, new_sigma) = reweighed_dense(&mean, &sigma, 2, delta).unwrap();
        let mut changed = precision;
        changed[0] += delta;
        changed[4] += delta;
        let expected = invert3(&changed);
        let expected_mean = multiply3(&expected, &information);
        for (x, y) in new_sigma.iter().zip(&expected) {
            assert!((x - y).abs() < 1e-13, "{new_sigma:?} {expected:?}");
        }
        for (x, y) in new_mean.iter().zip(&expected_mean) {
            assert!((x - y).abs() < 1e-13);
        }
        // The diagonal form is the same map per coordinate.
        let variances = [0.5, 2.0, 1.0];
        let (m, v) = reweighed_diagonal(&[1.0, 2.0, 3.0], &variances, 2, -0.25).unwrap();
        let dense = [0.5, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0];
        let (dm, dv) = reweighed_dense(&[1.0, 2.0, 3.0], &dense, 2, -0.25).unwrap();
        assert_eq!(m, dm);
        assert_eq!(v, [dv[0], dv[4], dv[8]]);
    }

    fn invert3(m: &[f64; 9]) -> [f64; 9] {
        let c = |i: usize, j: usize| m[i * 3 + j];
        let det = c(0, 0) * (c(1, 1) * c(2, 2) - c(1, 2) * c(2, 1))
            - c(0, 1) * (c(1, 0) * c(2, 2) - c(1, 2) * c(2, 0))
            + c(0, 2) * (c(1, 0) * c(2, 1) - c(1, 1) * c(2, 0));
        let mut out = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                let (r0, r1) = ((j + 1) % 3, (j + 2) % 3);
                let (c0, c1) = ((i + 1) % 3, (i + 2) % 3);
                out[i * 3 + j] = (c(r0, c0) * c(r1, c1) - c(r0, c1) * c(r1, c0)) / det;
            }
        }
        out
    }

    fn multiply3(m: &[f64; 9], v: &[f64; 3]) -> [f64; 3] {
        std::array::from_fn(|i| (0..3).map(|j| m[i * 3 + j] * v[j]).sum())
    }
}
