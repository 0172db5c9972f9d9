//! Learning the rows of a LIBSVM file as they are parsed (docs/design.md §9.5): each chunk of
//! the reader (`crate::data::libsvm`, parsed ahead on its own thread) is learned straight from
//! its buffers, with no copy into the caller's arrays. This is how a `cwrs.dask` worker learns
//! a streamed partition: the per-chunk copies and allocations of a round trip through Python
//! cost it about a third of its time (docs/design.md §9.5).

use crate::data::libsvm::Chunk;
use crate::data::{Matrix, Presentation};
use crate::error::CwError;
use crate::model::{AnyLearner, Model, Targets};

/// How the labels of a file become the model's targets.
#[derive(Clone, Debug, PartialEq)]
pub enum FileLabels {
    /// A regressor's targets, as written.
    Values,
    /// A binary classifier's two labels, sorted: the first is −1, the second +1.
    Binary([f64; 2]),
    /// A multiclass classifier's labels, sorted: each is its class index.
    Classes(Vec<f64>),
}

impl FileLabels {
    /// The labels of `estimator`'s kind of model given its sorted `classes` (None for a
    /// regressor).
    pub fn new(estimator: &Model, classes: Option<Vec<f64>>) -> Result<Self, CwError> {
        let expected = match estimator.n_classes() {
            Some(n) => Some(n),
            None if estimator.kind() == "regressor" => None,
            None => Some(2),
        };
        let sorted = |c: &[f64]| c.windows(2).all(|w| w[0] < w[1]);
        match (expected, classes) {
            (None, None) => Ok(FileLabels::Values),
            (Some(2), Some(c)) if c.len() == 2 && sorted(&c) => {
                Ok(FileLabels::Binary([c[0], c[1]]))
            }
            (Some(n), Some(c)) if c.len() == n && sorted(&c) => Ok(FileLabels::Classes(c)),
            (n, c) => Err(CwError::InvalidParameter(format!(
                "classes must be the model's {} sorted distinct labels, got {c:?}",
                n.map_or("no".into(), |n| n.to_string())
            ))),
        }
    }
}

/// Reused between chunks: the targets of the chunk being learned.
#[derive(Default)]
pub struct Scratch {
    values: Vec<f64>,
    classes: Vec<usize>,
}

/// Learns the rows of `chunk` as `n_features` wide rows, in order; errors name the chunk's
/// lines (the first bad one where it is a label or an index).
pub fn learn_chunk(
    estimator: &mut Model,
    chunk: &Chunk,
    n_features: usize,
    labels: &FileLabels,
    scratch: &mut Scratch,
) -> Result<(), CwError> {
    let lines = chunk.lines();
    let at = |row: usize, what: String| {
        CwError::InvalidInput(format!(
            "line {}: {what}",
            lines.get(row).copied().unwrap_or(0)
        ))
    };
    if chunk.n_features() > n_features {
        let first = chunk
            .indices()
            .iter()
            .position(|&j| j as usize >= n_features);
        let entry = first.unwrap_or(0) as i64;
        let row = chunk
            .indptr()
            .partition_point(|&p| p <= entry)
            .saturating_sub(1);
        return Err(at(
            row,
            format!("n_features was set to {n_features}, but the line has a larger index"),
        ));
    }
    let targets = match labels {
        FileLabels::Values => Targets::Values(chunk.labels()),
        FileLabels::Binary(pair) => {
            scratch.values.clear();
            for (row, &y) in chunk.labels().iter().enumerate() {
                let target = match y {
                    y if y == pair[0] => -1.0,
                    y if y == pair[1] => 1.0,
                    y => return Err(at(row, format!("the label {y} is not in classes {pair:?}"))),
                };
                scratch.values.push(target);
            }
            Targets::Values(&scratch.values)
        }
        FileLabels::Classes(classes) => {
            scratch.classes.clear();
            for (row, &y) in chunk.labels().iter().enumerate() {
                let k = classes.partition_point(|&c| c < y);
                if classes.get(k) != Some(&y) {
                    return Err(at(
                        row,
                        format!("the label {y} is not in classes {classes:?}"),
                    ));
                }
                scratch.classes.push(k);
            }
            Targets::Classes(&scratch.classes)
        }
    };
    learn_parsed(estimator, &chunk.matrix(n_features), targets).map_err(|err| match err {
        CwError::InvalidInput(message) => CwError::InvalidInput(format!(
            "lines {}-{}: {message}",
            lines.first().copied().unwrap_or(0),
            lines.last().copied().unwrap_or(0)
        )),
        err => err,
    })
}

/// `Model::partial_fit` of the rows of a chunk, `n_features` wide, in order, without the
/// checks of each row's contents ([`crate::data::Matrix::validate_rows`]: finite values,
/// strictly increasing indices below `n_features`; 17% of a worker's learning, docs/design.md
/// §9.5) that the reader already made: it refuses a line with a value or label that is not
/// finite or an index written twice, and sorts the others; [`learn_chunk`] refuses a chunk
/// wider than `n_features`. The shapes, the row pointers and the targets are checked as
/// `partial_fit` checks them; a kernel model learns through `partial_fit`.
fn learn_parsed(estimator: &mut Model, x: &Matrix, targets: Targets) -> Result<(), CwError> {
    let presentation = Presentation::default();
    let rows = 0..x.n_rows();
    match (estimator.model(), targets) {
        (AnyLearner::Binary(l), Targets::Values(t)) => l.check_batch(x, t, &presentation)?,
        (AnyLearner::Regressor(l), Targets::Values(t)) => l.check_batch(x, t, &presentation)?,
        (AnyLearner::Multiclass(l), Targets::Classes(k)) => l.check_batch(x, k, &presentation)?,
        _ => return estimator.partial_fit(x, targets, presentation),
    }
    match (estimator.model_mut(), targets) {
        (AnyLearner::Binary(l), Targets::Values(t)) => l.learn_checked(x, t, presentation, rows),
        (AnyLearner::Regressor(l), Targets::Values(t)) => l.learn_checked(x, t, presentation, rows),
        (AnyLearner::Multiclass(l), Targets::Classes(k)) => {
            l.learn_checked(x, k, presentation, rows)
        }
        _ => unreachable!("the kinds learned through partial_fit returned above"),
    }
}

#[cfg(test)]
mod tests;
