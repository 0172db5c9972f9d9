//! The calls a host (the Python bindings) makes on a model it shares between threads
//! ([`Guarded`]), with everything but the conversion of its values: the model built from the
//! entries the host holds, learning that the host can interrupt ([`crate::host::interrupt`]: its
//! `check` runs its signal handlers), `fit`'s sharded passes, a LIBSVM file learned as it is
//! parsed, and the merge of models. Waits and long work run detached ([`Detach`]); `E` is the
//! host's error.

use std::path::Path;

use cwrs::data::libsvm::{stream_file, LabelField};
use cwrs::data::{stop_every, Matrix, Presentation, Stop};
use cwrs::error::CwError;
use cwrs::learn::file_learning::{learn_chunk, FileLabels, Scratch};
use cwrs::learn::online::Progressive;
use cwrs::model::state::{Held, HeldArray, State};
use cwrs::model::{CustomKernel, Model, Targets};
use cwrs::parallel::merge;
use cwrs::parallel::sharded::ShardedFit;

use crate::host::call_cost::CallCost;
use crate::host::interrupt::Interrupt;
use crate::host::reading::{next_chunk, result_of};
use crate::host::shared::{guarded, Detach, Guarded, Internal, Work};

/// The model of the entries a host holds (or of the error it met reading them,
/// [`State::from_held`]): a fresh model from configuration entries, any problem with them
/// an invalid parameter; or (`restoring`) the model of a state ([`Model::from_state`]),
/// built and checked detached (a full covariance's check is O(d³)).
pub fn build_model<A: HeldArray>(
    held: Result<Vec<(String, Held<A>)>, CwError>,
    custom: CustomKernel,
    restoring: bool,
    detach: impl Detach,
) -> Result<Model, CwError> {
    if restoring {
        let held = held?;
        let state = State::from_held(&held, true)?;
        return detach.run_detached(|| Model::from_state(&state, custom));
    }
    let invalid_parameter = |err| match err {
        CwError::InvalidState(message) => CwError::InvalidParameter(message),
        err => err,
    };
    let held = held.map_err(invalid_parameter)?;
    let config = State::from_held(&held, false).map_err(invalid_parameter)?;
    Model::new(config, custom)
}

/// `partial_fit`: the rows of `x` learned (row `i` with weight `weights[i]`, in `order` if given,
/// weighted by the running class counts if `balanced`), each row's prediction before it is
/// learned written into `out` if given ([`Model::partial_fit_scored`]), attached or detached as
/// `cost` says. A long batch stops when `check` fails, the model left as it was, and the error
/// is returned (see [`crate::host::interrupt`]).
pub fn partial_fit<E: Send + From<Internal> + From<CwError>, D: Detach>(
    (model, detach): (&Guarded<Model, E>, D),
    (cost, x, targets): (CallCost, &Matrix, Targets),
    (weights, order, balanced): (Option<&[f64]>, Option<&[usize]>, bool),
    out: Option<Progressive>,
    check: impl Fn() -> Result<(), E> + Sync,
) -> Result<(), E> {
    let presentation = Presentation {
        weights,
        order,
        stop: None,
        balanced,
    };
    let work = cost.work(x, presentation.len(x.n_rows()) as usize);
    let interrupt = Interrupt::new(check);
    model.write(detach, "partial_fit", work, |e| {
        Ok(
            e.partial_fit_stoppable(x, targets, (presentation, out), &|| interrupt.stop())
                .map(drop)?,
        )
    })?;
    interrupt.into_error().map_or(Ok(()), Err)
}

/// `fit`'s passes on `n_jobs` threads (docs/design.md §9.4, [`cwrs::parallel::sharded`]): one pass of
/// the rows of `x` (row `i` with weight `weights[i]`) per row order of `orders` (None: the stored
/// order), each learned in `n_jobs` shards and merged into `model`. When `check` fails, the fit
/// ends between or during passes, the model as the last complete pass left it. The whole fit
/// holds the model (detached): its copies are made from the model each pass merges into, which
/// no other call can change in between; so the orders are drawn in it (a host that draws them
/// attached takes its thread state back for that, on this thread, as its `check` does).
pub fn fit_sharded<E: Send + From<Internal> + From<CwError>, D: Detach + Copy>(
    (model, detach): (&Guarded<Model, E>, D),
    n_jobs: usize,
    (x, targets, weights): (&Matrix, Targets, (Option<&[f64]>, bool)),
    orders: impl IntoIterator<Item = Result<Option<Vec<usize>>, E>> + Send,
    check: impl Fn() -> Result<(), E> + Sync,
) -> Result<(), E> {
    let interrupt = Interrupt::new(check);
    let stop = || interrupt.stop();
    model.write(detach, "fit", Work::Batch, |e| {
        let mut fit = ShardedFit::new(e, n_jobs)?;
        let stop = Stop {
            asked: &stop,
            every: stop_every(e.costs(x, x.n_rows() as f64).1),
        };
        for order in orders {
            let order = order?;
            let passed = fit.pass(e, x, targets, weights, order.as_deref(), Some(stop));
            // An interruption wins over an error of the same pass, as in `partial_fit` (another
            // shard may have met a bad row while the interrupted ones stopped): it stopped.
            let learned = match passed {
                Err(_) if stop.now() => false,
                passed => passed?,
            };
            if !learned {
                break;
            }
        }
        Ok(())
    })?;
    interrupt.into_error().map_or(Ok(()), Err)
}

/// Learns the rows of the LIBSVM file `path` (indices zero-based or not) into `model`, in order,
/// as `n_features` wide rows, parsed ahead in chunks of `chunk_rows` rows on the reader's thread
/// (docs/design.md §9.5); `classes` are a classifier's sorted labels (None for a regressor).
/// Each chunk is learned detached; `check` runs between chunks and while waiting for one. Not
/// all or nothing: on an error (naming the file and line) the model keeps the chunks learned
/// before it.
pub fn learn_file<E: Send + From<Internal> + From<CwError>, D: Detach + Copy>(
    (model, detach): (&Guarded<Model, E>, D),
    (path, zero_based, chunk_rows): (&Path, bool, usize),
    n_features: usize,
    classes: Option<Vec<f64>>,
    mut check: impl FnMut() -> Result<(), E>,
) -> Result<(), E> {
    const OPERATION: &str = "learn_svmlight";
    let labels = model.read(detach, OPERATION, Work::Quick, |e| {
        Ok(FileLabels::new(e, classes)?)
    })?;
    let pending = stream_file(
        path.into(),
        Some(zero_based),
        LabelField::Required,
        Some(chunk_rows.max(1)),
    );
    let pending = pending.map_err(CwError::from)?;
    let chunks = result_of(pending, detach, ("_cwrs", OPERATION), &mut check)?;
    let mut scratch = Scratch::default();
    let in_file = |err| match err {
        CwError::InvalidInput(message) => {
            CwError::InvalidInput(format!("{}: {message}", path.display()))
        }
        err => err,
    };
    while let Some(chunk) = next_chunk(&chunks, detach, &mut check)? {
        model.write(detach, OPERATION, Work::Batch, |e| {
            Ok(learn_chunk(e, &chunk, n_features, &labels, &mut scratch).map_err(in_file)?)
        })?;
        chunks.recycle(chunk);
    }
    Ok(())
}

/// The merge of `models` trained from `base` by the method named `method`, with `weights` (see
/// [`merge::merge`]), of snapshots (the mean and covariance, [`merge::Snapshot`]) taken one
/// model at a time: a model that another thread updates is waited for, never held with the
/// others.
pub fn merge<E: Send + From<Internal> + From<CwError>, D: Detach + Copy>(
    models: &[&Guarded<Model, E>],
    base: Option<&Guarded<Model, E>>,
    detach: D,
    method: &str,
    weights: Option<&[f64]>,
) -> Result<Model, E> {
    let snapshot = |m: &Guarded<Model, E>| {
        m.read(detach, "merge", Work::Batch, |e| Ok(merge::Snapshot::of(e)))
    };
    let snapshots = models
        .iter()
        .map(|m| snapshot(m))
        .collect::<Result<Vec<_>, _>>()?;
    let base = base.map(snapshot).transpose()?;
    let method = merge::Method::from_name(method)?;
    detach.run_detached(|| {
        guarded("Model", "merge", || {
            Ok(merge::merge_snapshots(
                &snapshots,
                method,
                base.as_ref(),
                weights,
            )?)
        })
    })
}

#[cfg(test)]
mod tests;
