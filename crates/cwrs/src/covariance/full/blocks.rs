//! The block products of the full form: Σ₀x for many rows at once, laid out in lanes; and the
//! plan of the one-row protocol (multiclass rounds), which computes them ahead for the rows a
//! class will be asked to prepare.

use super::{block_length, block_size, product, Full, LANES};
use crate::data::{Features, Row};
use crate::linalg::axpy;

/// Σ₀x for a block of rows, computed together: one row alone uses one lane, more use groups of
/// [`LANES`]; a lane's arithmetic is the same either way. The buffers live across blocks.
#[derive(Clone, Debug)]
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
            row_product(sigma, dim, row, &mut self.one_x, &mut self.one_sigma_x);
            return;
        }
        self.x.clear();
        self.x
            .resize(rows.len().div_ceil(LANES) * dim, [0.0; LANES]);
        let gathered: Vec<bool> = rows.iter().map(|row| gathers(row, dim)).collect();
        for (k, row) in rows.iter().enumerate() {
            let group = &mut self.x[k / LANES * dim..];
            row.for_each(|j, xj| group[j][k % LANES] = xj);
        }
        self.sigma_x.resize(self.x.len(), [0.0; LANES]);
        if gathered.contains(&false) {
            product(sigma, dim, &self.x, &mut self.sigma_x);
        }
        // A sparse row's lane holds its gathered product, the bits it has alone.
        for (k, row) in rows.iter().enumerate().filter(|&(k, _)| gathered[k]) {
            gather_product(sigma, dim, row, &mut self.one_sigma_x);
            let group = &mut self.sigma_x[k / LANES * dim..(k / LANES + 1) * dim];
            group
                .iter_mut()
                .zip(&self.one_sigma_x)
                .for_each(|(g, &v)| g[k % LANES] = v);
        }
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

/// A row has few enough non-zero entries (one in [`GATHER_RATIO`] coordinates or fewer) that
/// Σ₀x is summed from the rows of Σ₀ at them, O(d·nnz), rather than by the tiled product,
/// O(d²): a bandit's actions crossed with a one-hot, hashed text. Decided from the row's values
/// alone, the same for it stored dense or sparse, so its Σ₀x has the same bits in any block.
fn gathers(row: &Features, dim: usize) -> bool {
    let mut nonzero = 0;
    row.for_each(|_, xj| nonzero += usize::from(xj != 0.0));
    nonzero * GATHER_RATIO <= dim
}

/// Rows with at most one non-zero entry in this many coordinates take [`gather_product`].
const GATHER_RATIO: usize = 8;

/// Σ₀x = Σ_j x_j·Σ₀[j, :] over the non-zero x_j in increasing j (Σ₀ is exactly symmetric: its
/// row j is its column j), each entry summed in that order whatever the vector width.
fn gather_product(sigma: &[f64], dim: usize, row: &Features, out: &mut [f64]) {
    out.fill(0.0);
    row.for_each(|j, xj| {
        if xj != 0.0 {
            axpy(xj, &sigma[j * dim..(j + 1) * dim], out);
        }
    });
}

/// One row's dense x and Σ₀x: gathered for a sparse row ([`gathers`]), else the product.
pub(super) fn row_product(
    sigma: &[f64],
    dim: usize,
    row: &Features,
    x: &mut [f64],
    sigma_x: &mut [f64],
) {
    x.fill(0.0);
    row.for_each(|j, xj| x[j] = xj);
    if gathers(row, dim) {
        gather_product(sigma, dim, row, sigma_x);
    } else {
        product(sigma, dim, as_lanes_ref(x), as_lanes(sigma_x));
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

/// Where a row's values live: within one learning call, rows with the same key are the same
/// rows (the plan is dropped at the end of every call and whenever Σ₀ changes).
type RowKey = (usize, usize, usize);

fn key(row: Row) -> RowKey {
    let (values, indices) = match row {
        Row::Dense(values) => (values, 0),
        Row::Sparse32(indices, values) => (values, indices.as_ptr() as usize),
        Row::Sparse64(indices, values) => (values, indices.as_ptr() as usize),
    };
    (values.as_ptr() as usize, values.len(), indices)
}

/// Σ₀x of the rows a class is expected to prepare next (see [`Full::plan`]): work space, not
/// part of the model (every plan compares equal).
#[derive(Clone, Debug)]
pub(super) struct Plan {
    keys: Vec<RowKey>,
    /// The first key not used yet.
    next: usize,
    products: BlockProducts,
}

impl PartialEq for Plan {
    fn eq(&self, _: &Plan) -> bool {
        true
    }
}

impl Plan {
    pub(super) fn new(dim: usize) -> Plan {
        Plan {
            keys: Vec::new(),
            next: 0,
            products: BlockProducts::new(dim),
        }
    }

    pub(super) fn clear(&mut self) {
        self.keys.clear();
        self.next = 0;
    }

    /// The position of `row` among the unused planned rows.
    fn position(&self, row: Row) -> Option<usize> {
        let wanted = key(row);
        (self.next..self.keys.len()).find(|&k| self.keys[k] == wanted)
    }
}

impl Full {
    /// `rows[0]` is prepared next and the others perhaps later, in order: unless it is planned
    /// already, computes Σ₀x for as many of them as can update before the next fold (the
    /// binary path's block length), in one pass over Σ₀. Nothing (and no plan) for an empty
    /// `rows`, or when the block is one row.
    pub(super) fn plan(&mut self, rows: &[Row]) {
        let Some(&first) = rows.first() else {
            return self.plan.clear();
        };
        if self.plan.position(first).is_some() {
            return;
        }
        self.plan.clear();
        let length = block_length(block_size(self.dim), self.pending.len() / self.dim.max(1));
        if length > 1 && rows.len() > 1 {
            let rows = &rows[..rows.len().min(length)];
            let features: Vec<Features> = rows.iter().map(|&r| self.shape.features(r)).collect();
            self.plan.products.compute(&self.sigma, &features);
            self.plan.keys.extend(rows.iter().map(|&r| key(r)));
        }
    }

    /// Σ₀x of `row` (and its dense x) from the plan into `x`, `sigma_x`, if it is planned:
    /// the same bits as its own product.
    pub(super) fn planned_product(&mut self, row: Row, x: &mut [f64], sigma_x: &mut [f64]) -> bool {
        match self.plan.position(row) {
            Some(k) => {
                self.plan.products.row(k, x, sigma_x);
                self.plan.next = k + 1;
                true
            }
            None => false,
        }
    }
}
