use crate::data::Features;
use crate::rules::sherman_morrison_factor;

/// Full covariance, a dense symmetric d×d matrix (row-major), updated by Sherman–Morrison:
/// Σ ← Σ − β·(Σx)(Σx)ᵀ with β = c / (1 + c·v).
#[derive(Clone, Debug, PartialEq)]
pub struct Full {
    dim: usize,
    sigma: Vec<f64>,
    /// Σx of the last prepared example.
    sigma_x: Vec<f64>,
}

impl Full {
    pub fn new(dim: usize, a: f64) -> Self {
        let mut sigma = vec![0.0; dim * dim];
        sigma.iter_mut().step_by(dim + 1).for_each(|s| *s = a);
        Full {
            dim,
            sigma,
            sigma_x: vec![0.0; dim],
        }
    }

    pub fn from_values(dim: usize, sigma: Vec<f64>) -> Self {
        Full {
            dim,
            sigma,
            sigma_x: vec![0.0; dim],
        }
    }

    pub fn values(&self) -> &[f64] {
        &self.sigma
    }

    #[inline]
    fn row(&self, k: usize) -> &[f64] {
        &self.sigma[k * self.dim..(k + 1) * self.dim]
    }

    /// xᵀΣx touching only the rows and columns of the non-zeros: O(nnz²).
    pub fn variance(&self, x: &Features) -> f64 {
        let mut v = 0.0;
        x.for_each(|k, xk| {
            if xk != 0.0 {
                let row = self.row(k);
                let mut dot = 0.0;
                x.for_each(|l, xl| dot += row[l] * xl);
                v += xk * dot;
            }
        });
        v
    }

    /// Computes and keeps Σx (a sum of the rows of the non-zeros, Σ being symmetric) and returns
    /// v = x·Σx.
    pub fn prepare(&mut self, x: &Features) -> f64 {
        let dim = self.dim;
        let (sigma, sigma_x) = (&self.sigma, &mut self.sigma_x);
        sigma_x.fill(0.0);
        x.for_each(|k, xk| {
            if xk != 0.0 {
                let row = &sigma[k * dim..(k + 1) * dim];
                sigma_x.iter_mut().zip(row).for_each(|(g, &s)| *g += xk * s);
            }
        });
        let mut v = 0.0;
        x.for_each(|k, xk| v += xk * sigma_x[k]);
        v
    }

    pub fn update(&mut self, mean: &mut [f64], step: f64, c: f64, v: f64) {
        mean.iter_mut()
            .zip(&self.sigma_x)
            .for_each(|(m, &g)| *m += step * g);
        if c == 0.0 {
            return;
        }
        // Σ −= h hᵀ with h = √β·Σx: the product h_i·h_j is commutative, so Σ stays exactly
        // symmetric.
        let scale = sherman_morrison_factor(c, v).sqrt();
        self.sigma_x.iter_mut().for_each(|g| *g *= scale);
        let h = &self.sigma_x;
        for (row, &hi) in self.sigma.chunks_exact_mut(self.dim).zip(h) {
            row.iter_mut().zip(h).for_each(|(s, &hj)| *s -= hi * hj);
        }
    }
}
