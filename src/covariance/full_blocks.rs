//! The block products of the full form: Σ₀x for many rows at once, laid out in lanes.

use super::{product, LANES};
use crate::data::Features;

/// Σ₀x for a block of rows, computed together: one row alone uses one lane, more use groups of
/// [`LANES`]; a lane's arithmetic is the same either way. The buffers live across blocks.
pub(super) struct BlockProducts {
    dim: usize,
    /// Whether the block is one row, kept in `one_x`, `one_sigma_x`.
    alone: bool,
    one_x: Vec<f64>,
    one_sigma_x: Vec<f64>,
    x: Vec<[f64; LANES]>,
    sigma_x: Vec<[f64; LANES]>,
}

impl BlockProducts {
    pub(super) fn new(dim: usize) -> Self {
        BlockProducts {
            dim,
            alone: false,
            one_x: vec![0.0; dim],
            one_sigma_x: vec![0.0; dim],
            x: Vec::new(),
            sigma_x: Vec::new(),
        }
    }

    pub(super) fn compute(&mut self, sigma: &[f64], rows: &[Features]) {
        let dim = self.dim;
        self.alone = rows.len() == 1;
        if let [row] = rows {
            self.one_x.fill(0.0);
            row.for_each(|j, xj| self.one_x[j] = xj);
            product(
                sigma,
                dim,
                as_lanes_ref(&self.one_x),
                as_lanes(&mut self.one_sigma_x),
            );
            return;
        }
        self.x.clear();
        self.x
            .resize(rows.len().div_ceil(LANES) * dim, [0.0; LANES]);
        for (k, row) in rows.iter().enumerate() {
            let group = &mut self.x[k / LANES * dim..];
            row.for_each(|j, xj| group[j][k % LANES] = xj);
        }
        self.sigma_x.resize(self.x.len(), [0.0; LANES]);
        product(sigma, dim, &self.x, &mut self.sigma_x);
    }

    /// Row k of the block and its Σ₀x, dense.
    pub(super) fn row(&self, k: usize, x: &mut [f64], sigma_x: &mut [f64]) {
        if self.alone {
            x.copy_from_slice(&self.one_x);
            sigma_x.copy_from_slice(&self.one_sigma_x);
            return;
        }
        let (lane, group) = (k % LANES, k / LANES * self.dim..(k / LANES + 1) * self.dim);
        x.iter_mut()
            .zip(&self.x[group.clone()])
            .for_each(|(v, g)| *v = g[lane]);
        sigma_x
            .iter_mut()
            .zip(&self.sigma_x[group])
            .for_each(|(v, g)| *v = g[lane]);
    }
}

/// A vector as one-lane groups.
pub(super) fn as_lanes(v: &mut [f64]) -> &mut [[f64; 1]] {
    let (lanes, rest) = v.as_chunks_mut::<1>();
    debug_assert!(rest.is_empty());
    lanes
}

pub(super) fn as_lanes_ref(v: &[f64]) -> &[[f64; 1]] {
    v.as_chunks::<1>().0
}
