use crate::data::Features;

/// Diagonal covariance: the diagonal of the precision update (CW-Stdev §3.3),
/// Σ_j ← Σ_j / (1 + c·Σ_j·x_j²) = 1 / (1/Σ_j + c·x_j²). Work per example is O(nnz).
#[derive(Clone, Debug, PartialEq)]
pub struct Diagonal {
    variances: Vec<f64>,
}

impl Diagonal {
    pub fn new(dim: usize, a: f64) -> Self {
        Diagonal {
            variances: vec![a; dim],
        }
    }

    pub fn from_values(variances: Vec<f64>) -> Self {
        Diagonal { variances }
    }

    pub fn values(&self) -> &[f64] {
        &self.variances
    }

    #[inline]
    pub fn variance(&self, x: &Features) -> f64 {
        let mut v = 0.0;
        x.for_each(|j, xj| v += self.variances[j] * xj * xj);
        v
    }

    #[inline]
    pub fn update(&mut self, x: &Features, mean: &mut [f64], step: f64, c: f64) {
        let variances = &mut self.variances;
        x.for_each(|j, xj| {
            // A zero of a dense row changes nothing. Skipping it, and writing the new variance
            // as 1/(1/Σ_j + c·x_j²), keep an infinite c (see `sherman_morrison_factor`) or a
            // collapsed Σ_j = 0 from making 0·∞ = NaN.
            if xj != 0.0 {
                let s = variances[j];
                mean[j] += step * s * xj;
                variances[j] = 1.0 / (1.0 / s + c * xj * xj);
            }
        });
    }
}
