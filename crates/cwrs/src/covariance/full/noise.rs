//! Process noise in the full form (docs/design.md §10.1): Σ = Σ₀ + g·I − Σ_b h_b h_bᵀ, with g
//! the noise of the rounds since the last fold. A round adds q to g, which is exact whatever
//! terms are pending ((Σ₀ + gI − HHᵀ) + qI = Σ₀ + (g + q)I − HHᵀ); a row's Σx gains g·x (in
//! `Full::correct`), and Σ₀ does not change between folds, so the block products stay valid.

use super::Full;

impl Full {
    /// Starts a learning round: Σ ← Σ + q·I, kept as the growth g (O(d) for the diagonals kept
    /// for the safeguards, which gain q each).
    #[inline]
    pub(super) fn begin_round(&mut self) {
        if self.noise != 0.0 {
            self.grow(self.noise);
        }
    }

    /// Σ ← Σ + g·I: g joins the growth, and the diagonals kept for the safeguards gain g.
    pub(super) fn grow(&mut self, g: f64) {
        self.growth += g;
        self.diagonal.iter_mut().for_each(|s| *s += g);
        self.base_diagonal.iter_mut().for_each(|s| *s += g);
    }

    /// Σ₀ ← Σ₀ + g·I, g ← 0 (the first step of a fold).
    pub(super) fn fold_growth(&mut self) {
        add_to_diagonal(&mut self.sigma, self.dim, self.growth);
        self.growth = 0.0;
    }

    /// Σ ← a·I (the reset of `process_noise="auto"`), nothing pending.
    pub(super) fn reset(&mut self, a: f64) {
        self.sigma.fill(0.0);
        add_to_diagonal(&mut self.sigma, self.dim, a);
        self.pending.clear();
        self.growth = 0.0;
        self.refresh_diagonal();
    }
}

/// Σ_ii += g (nothing when g = 0, so Σ keeps its bits).
pub(super) fn add_to_diagonal(sigma: &mut [f64], dim: usize, g: f64) {
    if g != 0.0 {
        sigma.iter_mut().step_by(dim + 1).for_each(|s| *s += g);
    }
}
