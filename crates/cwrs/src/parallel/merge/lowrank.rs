//! Merging low-rank models (docs/design.md §9.7). A class of a low-rank model keeps its
//! precision as Λ = D + BᵀB (D = diag(1/S), B at most 2k Frequent Directions rows). Every
//! method writes the merged precision as a diagonal D plus a signed sum of rows,
//! G = Σ_i w_i r_i r_iᵀ, and sketches G back to at most 2k rows by one Frequent Directions step
//! in the metric of S (the learning shrink's, §3.3), moving the diagonal of what it drops to
//! D, so the merged Λ keeps the diagonal of the exact merge. While the stacked rows fit in 2k
//! nothing is dropped and the merge is the full form's.

use super::{not_definite, Method};
use crate::covariance::{symmetric_eigen, VARIANCE_FLOOR};
use crate::error::CwError;
use crate::linalg::{axpy, backward_solve, cholesky, dot_in_order, forward_solve};

/// Directions of the stacked rows whose squared length (in the metric of S) is below this
/// fraction of the largest are numerically in the span of the others (a shard that did not
/// shrink repeats its base's rows exactly): dropping them changes G by that fraction at most.
const SPAN_TOLERANCE: f64 = 1e-12;

/// One class of a low-rank model: Λ = diag(1/S) + BᵀB, B's live rows only.
struct Factors {
    variances: Vec<f64>,
    rows: Vec<f64>,
}

impl Factors {
    /// From the state's values: S (`dim` values), then the sketch, live rows first.
    fn of(values: &[f64], dim: usize) -> Factors {
        let (variances, sketch) = values.split_at(dim);
        let live = sketch
            .chunks_exact(dim)
            .take_while(|row| row.iter().any(|&b| b != 0.0))
            .count();
        Factors {
            variances: variances.to_vec(),
            rows: sketch[..live * dim].to_vec(),
        }
    }

    fn dim(&self) -> usize {
        self.variances.len()
    }

    fn n_rows(&self) -> usize {
        self.rows.len() / self.dim().max(1)
    }

    /// Λμ = μ/S + Bᵀ(Bμ).
    fn precision_times(&self, mu: &[f64]) -> Vec<f64> {
        let mut eta: Vec<f64> = mu.iter().zip(&self.variances).map(|(m, s)| m / s).collect();
        for row in self.rows.chunks_exact(self.dim()) {
            axpy(dot_in_order(row, mu), row, &mut eta);
        }
        eta
    }

    /// The lower Cholesky factor L of I + BSBᵀ.
    fn factor(&self) -> Result<Vec<f64>, CwError> {
        let n = self.n_rows();
        let mut m = gram(&self.rows, n, &self.variances);
        m.iter_mut().step_by(n + 1).for_each(|x| *x += 1.0);
        cholesky(&m, n).ok_or_else(not_definite)
    }

    /// Λ⁻¹η by Woodbury: S(η − Bᵀz) with (I + BSBᵀ)z = BSη.
    fn covariance_times(&self, eta: &[f64]) -> Result<Vec<f64>, CwError> {
        let (n, dim) = (self.n_rows(), self.dim());
        let factor = self.factor()?;
        let scaled: Vec<f64> = eta
            .iter()
            .zip(&self.variances)
            .map(|(e, s)| e * s)
            .collect();
        let mut z: Vec<f64> = self
            .rows
            .chunks_exact(dim)
            .map(|r| dot_in_order(r, &scaled))
            .collect();
        forward_solve(&factor, n, n, &mut z);
        backward_solve(&factor, n, n, &mut z);
        let mut mu = eta.to_vec();
        for (row, &zi) in self.rows.chunks_exact(dim).zip(&z) {
            axpy(-zi, row, &mut mu);
        }
        mu.iter_mut()
            .zip(&self.variances)
            .for_each(|(m, s)| *m *= s);
        Ok(mu)
    }

    /// The rows of Y with Σ = S − YᵀY (Woodbury): Y = L⁻¹BS.
    fn explained(&self) -> Result<Vec<f64>, CwError> {
        let factor = self.factor()?;
        Ok(solve_rows(
            &factor,
            self.n_rows(),
            &self.rows,
            &self.variances,
        ))
    }

    /// The state's values: S, then `capacity` rows (the live ones first, then zeros).
    fn values(&self, capacity: usize) -> Vec<f64> {
        let mut values = self.variances.clone();
        values.extend_from_slice(&self.rows);
        values.resize(self.dim() * (1 + capacity), 0.0);
        values
    }
}

/// The merge of class `class` (its `dim` coordinates) of low-rank models of rank `rank`
/// (docs/design.md §9.7): writes the mean into `mean` and returns the covariance values as the
/// state keeps them (S, then 2k sketch rows). `base` and `inputs` are each model's (means,
/// covariance values), all classes.
#[allow(clippy::too_many_arguments)]
pub(super) fn merge_class(
    method: Method,
    rank: usize,
    dim: usize,
    class: usize,
    base: (&[f64], &[f64]),
    inputs: &[(&[f64], &[f64])],
    weights: &[f64],
    mean: &mut [f64],
) -> Result<Vec<f64>, CwError> {
    let len = dim * (1 + 2 * rank);
    let class_of = |(mu, cov): (&[f64], &[f64])| {
        let mu = &mu[class * dim..(class + 1) * dim];
        (
            mu.to_vec(),
            Factors::of(&cov[class * len..(class + 1) * len], dim),
        )
    };
    let base = class_of(base);
    let inputs: Vec<_> = inputs.iter().map(|&m| class_of(m)).collect();
    let merged = match method {
        Method::Information => information(&base, &inputs, 2 * rank, mean)?,
        Method::Precision => precision((&inputs, weights), 2 * rank, mean)?,
        Method::Average | Method::Auto => average((&inputs, weights), 2 * rank, mean)?,
    };
    Ok(merged.values(2 * rank))
}

/// Λ = Λ₀ + Σₖ(Λₖ − Λₖ₀): D = D₀ + Σₖ(Dₖ − D₀), and G = B₀ᵀB₀ + Σₖ(BₖᵀBₖ − B₀ᵀB₀) folded in
/// shard order, each step sketching the running rows, shard k's and the base's (subtracted);
/// η likewise, μ = Λ⁻¹η.
fn information(
    (base_mean, base): &(Vec<f64>, Factors),
    inputs: &[(Vec<f64>, Factors)],
    capacity: usize,
    mean: &mut [f64],
) -> Result<Factors, CwError> {
    let base_precision: Vec<f64> = base.variances.iter().map(|s| 1.0 / s).collect();
    let mut precision = base_precision.clone();
    let base_eta = base.precision_times(base_mean);
    let mut eta = base_eta.clone();
    for (mu, model) in inputs {
        for ((d, s), d0) in precision
            .iter_mut()
            .zip(&model.variances)
            .zip(&base_precision)
        {
            *d += 1.0 / s - d0;
        }
        let added = model.precision_times(mu);
        eta.iter_mut()
            .zip(added)
            .zip(&base_eta)
            .for_each(|((e, a), e0)| *e += a - e0);
    }
    let metric = variances_of(&precision)?;
    let mut dropped = vec![0.0; base.dim()];
    let mut running = base.rows.clone();
    for (_, model) in inputs {
        let stacked = [&running[..], &model.rows, &base.rows].concat();
        let signs = [
            (running.len(), 1.0),
            (model.rows.len(), 1.0),
            (base.rows.len(), -1.0),
        ];
        let weights = row_weights(&signs, base.dim());
        running = sketch(&metric, &stacked, &weights, capacity, &mut dropped);
    }
    finish(precision, &base_precision, dropped, running, &eta, mean)
}

/// Λ = Σₖ bₖΛₖ: D = Σₖ bₖDₖ and the rows √bₖ·Bₖ stacked (folded in order); η = Σₖ bₖΛₖμₖ.
fn precision(
    (inputs, weights): (&[(Vec<f64>, Factors)], &[f64]),
    capacity: usize,
    mean: &mut [f64],
) -> Result<Factors, CwError> {
    let dim = inputs[0].1.dim();
    let (mut precision, mut eta) = (vec![0.0; dim], vec![0.0; dim]);
    for ((mu, model), &b) in inputs.iter().zip(weights) {
        for (d, s) in precision.iter_mut().zip(&model.variances) {
            *d += b / s;
        }
        axpy(b, &model.precision_times(mu), &mut eta);
    }
    let metric = variances_of(&precision)?;
    let mut dropped = vec![0.0; dim];
    let mut running = Vec::new();
    for ((_, model), &b) in inputs.iter().zip(weights) {
        let rows = model.rows.iter().map(|r| r * b.sqrt());
        let stacked: Vec<f64> = running.iter().copied().chain(rows).collect();
        let weights = vec![1.0; stacked.len() / dim];
        running = sketch(&metric, &stacked, &weights, capacity, &mut dropped);
    }
    finish(precision.clone(), &precision, dropped, running, &eta, mean)
}

/// μ = Σₖ bₖμₖ, Σ = Σₖ bₖΣₖ, folded in order: the running average Σ̄ and the next model's Σₖ
/// combine as (1 − t)Σ̄ + tΣₖ = S' − YᵀY (S' the mixed S, Y the two models' Woodbury rows,
/// scaled), whose inverse is exactly D' + ZᵀZ with D' = 1/S', Z = R⁻¹YD', RRᵀ = I − YD'Yᵀ.
fn average(
    (inputs, weights): (&[(Vec<f64>, Factors)], &[f64]),
    capacity: usize,
    mean: &mut [f64],
) -> Result<Factors, CwError> {
    mean.fill(0.0);
    for ((mu, _), &b) in inputs.iter().zip(weights) {
        axpy(b, mu, mean);
    }
    let dim = mean.len();
    let (first, rest) = inputs.split_first().ok_or_else(not_definite)?;
    let mut running = Factors {
        variances: first.1.variances.clone(),
        rows: first.1.rows.clone(),
    };
    let mut total = weights[0];
    for ((_, model), &b) in rest.iter().zip(&weights[1..]) {
        if b == 0.0 {
            continue;
        }
        let t = b / (total + b);
        total += b;
        let variances: Vec<f64> = (running.variances.iter().zip(&model.variances))
            .map(|(r, s)| (1.0 - t) * r + t * s)
            .collect();
        let precision: Vec<f64> = variances.iter().map(|s| 1.0 / s).collect();
        let y: Vec<f64> = (running.explained()?.iter().map(|v| v * (1.0 - t).sqrt()))
            .chain(model.explained()?.iter().map(|v| v * t.sqrt()))
            .collect();
        let n = y.len() / dim;
        let mut inner = gram(&y, n, &precision);
        inner.iter_mut().for_each(|x| *x = -*x);
        inner.iter_mut().step_by(n + 1).for_each(|x| *x += 1.0);
        let factor = cholesky(&inner, n).ok_or_else(not_definite)?;
        let z = solve_rows(&factor, n, &y, &precision);
        let mut dropped = vec![0.0; dim];
        let rows = sketch(&variances, &z, &vec![1.0; n], capacity, &mut dropped);
        let kept = with_dropped(precision.clone(), &precision, &dropped);
        running = Factors {
            variances: variances_of(&kept)?,
            rows,
        };
    }
    Ok(running)
}

/// The merged factors (D + dropped, floored at `floor`; the sketch `rows`) and μ = Λ⁻¹η.
fn finish(
    precision: Vec<f64>,
    floor: &[f64],
    dropped: Vec<f64>,
    rows: Vec<f64>,
    eta: &[f64],
    mean: &mut [f64],
) -> Result<Factors, CwError> {
    let merged = Factors {
        variances: variances_of(&with_dropped(precision, floor, &dropped))?,
        rows,
    };
    mean.copy_from_slice(&merged.covariance_times(eta)?);
    if mean.iter().all(|m| m.is_finite()) {
        Ok(merged)
    } else {
        Err(not_definite())
    }
}

/// D + dropped, at least `floor` (where the sketch dropped a negative part of G, D + dropped
/// could otherwise fall below a precision the evidence never lowers).
fn with_dropped(mut precision: Vec<f64>, floor: &[f64], dropped: &[f64]) -> Vec<f64> {
    for ((d, f), e) in precision.iter_mut().zip(floor).zip(dropped) {
        *d = (*d + e).max(*f);
    }
    precision
}

/// S = 1/D, floored as the form floors it; a D that is not positive is refused.
fn variances_of(precision: &[f64]) -> Result<Vec<f64>, CwError> {
    precision
        .iter()
        .map(|&d| {
            if d > 0.0 && d.is_finite() {
                Ok((1.0 / d).max(VARIANCE_FLOOR))
            } else {
                Err(not_definite())
            }
        })
        .collect()
}

/// One weight per row from (values, weight) runs of the stacked rows.
fn row_weights(runs: &[(usize, f64)], dim: usize) -> Vec<f64> {
    runs.iter()
        .flat_map(|&(values, w)| std::iter::repeat_n(w, values / dim))
        .collect()
}

/// Frequent Directions on a signed stack of rows, in the metric of S (`metric`): G =
/// Σ_i w_i r_i r_iᵀ is written in an S-orthonormal basis of the rows' span (from the
/// eigen-decomposition VΘVᵀ of their Gram matrix K = RSRᵀ: Q = Θ^-½VᵀR, QSQᵀ = I, so G =
/// QᵀCQ with C = Θ^½Vᵀ diag(w) VΘ^½), C = UΛUᵀ, and the returned rows are
/// √(λ_i − δ)·u_iᵀQ for the (at most `capacity`) positive λ_i above δ = λ_{capacity+1} (0 when
/// fewer are positive). Each coordinate's G_jj − Σ_i B'_ij² (what is dropped: the shrink and
/// any negative part) is added to `dropped`.
fn sketch(
    metric: &[f64],
    rows: &[f64],
    weights: &[f64],
    capacity: usize,
    dropped: &mut [f64],
) -> Vec<f64> {
    let (dim, n) = (metric.len(), weights.len());
    for (row, w) in rows.chunks_exact(dim).zip(weights) {
        dropped
            .iter_mut()
            .zip(row)
            .for_each(|(e, r)| *e += w * r * r);
    }
    if n == 0 {
        return Vec::new();
    }
    let mut basis = vec![0.0; n * n];
    let theta = symmetric_eigen(&gram(rows, n, metric), &mut basis, n);
    let span = theta
        .iter()
        .take_while(|&&t| t > SPAN_TOLERANCE * theta[0])
        .count();
    let mut c = vec![0.0; span * span];
    for a in 0..span {
        for b in 0..=a {
            let (va, vb) = (&basis[a * n..(a + 1) * n], &basis[b * n..(b + 1) * n]);
            let s: f64 = (0..n).map(|i| va[i] * weights[i] * vb[i]).sum();
            let entry = s * (theta[a] * theta[b]).sqrt();
            c[a * span + b] = entry;
            c[b * span + a] = entry;
        }
    }
    let mut u = vec![0.0; span * span];
    let lambda = symmetric_eigen(&c, &mut u, span);
    let positive = lambda.iter().take_while(|&&l| l > 0.0).count();
    let delta = if positive > capacity {
        lambda[capacity]
    } else {
        0.0
    };
    let mut out = Vec::new();
    for (i, &l) in lambda[..positive.min(capacity)].iter().enumerate() {
        if l <= delta {
            break;
        }
        let scale = (l - delta).sqrt();
        // The coefficients of the input rows: scale·V Θ^-½ u_i.
        let ui = &u[i * span..(i + 1) * span];
        let mut row = vec![0.0; dim];
        for (j, input) in rows.chunks_exact(dim).enumerate() {
            let coefficient: f64 = (0..span)
                .map(|a| ui[a] * basis[a * n + j] / theta[a].sqrt())
                .sum();
            axpy(scale * coefficient, input, &mut row);
        }
        if row.iter().any(|&b| b != 0.0) {
            dropped.iter_mut().zip(&row).for_each(|(e, b)| *e -= b * b);
            out.extend_from_slice(&row);
        }
    }
    out
}

/// K = R·diag(s)·Rᵀ over the n rows of `rows`.
fn gram(rows: &[f64], n: usize, s: &[f64]) -> Vec<f64> {
    let dim = s.len();
    let mut k = vec![0.0; n * n];
    for i in 0..n {
        let weighted = scaled(&rows[i * dim..(i + 1) * dim], s);
        for j in 0..=i {
            let entry = dot_in_order(&rows[j * dim..(j + 1) * dim], &weighted);
            k[i * n + j] = entry;
            k[j * n + i] = entry;
        }
    }
    k
}

/// L⁻¹·R·diag(s) for the n rows R of `rows` (L lower triangular, n×n).
fn solve_rows(factor: &[f64], n: usize, rows: &[f64], s: &[f64]) -> Vec<f64> {
    let dim = s.len();
    let mut out: Vec<f64> = rows.chunks_exact(dim).flat_map(|r| scaled(r, s)).collect();
    for i in 0..n {
        let (done, rest) = out.split_at_mut(i * dim);
        let row = &mut rest[..dim];
        for (t, earlier) in done.chunks_exact(dim).enumerate() {
            axpy(-factor[i * n + t], earlier, row);
        }
        row.iter_mut().for_each(|v| *v /= factor[i * n + i]);
    }
    out
}

fn scaled(row: &[f64], s: &[f64]) -> Vec<f64> {
    row.iter().zip(s).map(|(r, s)| r * s).collect()
}
