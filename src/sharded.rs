//! `fit` on several cores in one process (docs/design.md §9.4). Each pass splits its rows into
//! contiguous shards (of the stored rows, or of the pass's row order), learns a copy of the
//! model of the start of the pass on each in its own thread, and merges the copies in shard
//! order with that model as the base ([`crate::merge`], method "auto"). The result depends
//! only on the data, the row orders and the number of shards, never on thread timing.
//!
//! What makes it cheap: the copies are made once per fit; the rows are validated once per pass,
//! each thread its share; a shard in stored order is a range of rows (no index array); and for
//! the diagonal and identity forms without an L1 penalty or process noise, the merge runs in
//! place, one pass over the coordinates that writes the merged model into every copy (ready
//! for the next pass) and then into the model. It computes exactly what [`merge::merge`] does.
//! Other mergeable forms go through [`merge::merge`].

use std::ops::Range;

use crate::covariance::{Coordinate, CovarianceKind, Gaussian};
use crate::data::{Matrix, Presentation, Stop};
use crate::error::CwError;
use crate::estimator::{Estimator, Model, Targets};
use crate::merge::{self, Method};

/// The copies of a model that a sharded fit trains, made once and refreshed each pass.
pub struct ShardedFit {
    shards: Vec<Estimator>,
    /// Whether every shard holds the model as it is (after an in-place merge).
    current: bool,
}

/// Runs `$body` with `$l` bound to the linear learner of `$model` and `$t` to its targets
/// (`$otherwise` for a kernel model or targets of the wrong kind).
macro_rules! linear {
    ($model:expr, $targets:expr, ($l:ident, $t:ident) => $body:expr, $otherwise:expr) => {
        match ($model, $targets) {
            (Model::Binary($l), Targets::Values($t)) => $body,
            (Model::Regressor($l), Targets::Values($t)) => $body,
            (Model::Multiclass($l), Targets::Classes($t)) => $body,
            _ => $otherwise,
        }
    };
}

impl ShardedFit {
    /// The copies for `n_jobs` (≥ 1) shards of `model`, refused if `model` cannot be merged.
    pub fn new(model: &Estimator, n_jobs: usize) -> Result<ShardedFit, CwError> {
        merge::check_mergeable(model)?;
        if n_jobs == 0 {
            return Err(CwError::InvalidParameter(
                "n_jobs must be at least 1".into(),
            ));
        }
        Ok(ShardedFit {
            shards: vec![model.clone(); n_jobs],
            current: true,
        })
    }

    /// One pass over the rows of `x` (row `i` `repeats[i]` times, in `order` or else in stored
    /// order) in shards, merged into `model`, which must be the model the shards were made from
    /// or the result of the previous pass. Everything is checked before `model` changes: on an
    /// error, or when `stop` ends the pass early (then the result is `Ok(false)`), `model` is as
    /// it was at the start of the pass.
    pub fn pass(
        &mut self,
        model: &mut Estimator,
        x: &Matrix,
        targets: Targets,
        repeats: Option<&[u32]>,
        order: Option<&[usize]>,
        stop: Option<Stop>,
    ) -> Result<bool, CwError> {
        let presentation = Presentation {
            repeats,
            order,
            stop,
        };
        let kind = model.kind();
        let refuse = || CwError::InvalidInput(format!("a {kind} model cannot be sharded"));
        linear!(model.model(), targets, (l, t) => l.check_batch(x, t, &presentation), Err(refuse()))?;
        self.refresh(model);
        let (n, n_features) = (x.n_rows(), model.config().count::<usize>("n_features")?);
        let parts = split(order.map_or(n, <[usize]>::len), self.shards.len());
        let shards = &mut self.shards[..parts.len()];
        self.current = false;
        let learn = |shard: &mut Estimator, part: Range<usize>| {
            let (presentation, rows) = match order {
                Some(order) => (
                    Presentation {
                        order: Some(&order[part]),
                        ..presentation
                    },
                    0..0,
                ),
                // In stored order a shard validates its own rows, then learns them.
                None => {
                    x.validate_rows(part.clone(), n_features)?;
                    (presentation, part)
                }
            };
            linear!(shard.model_mut(), targets, (l, t) => l.learn_checked(x, t, presentation, rows),
                Err(refuse()))
        };
        if order.is_some() {
            // The shards' rows are scattered: validate all of them first, a range per thread.
            let ranges = split(n, parts.len());
            in_parallel(&mut vec![(); ranges.len()], &ranges, |_, rows| {
                x.validate_rows(rows, n_features)
            })?;
        }
        in_parallel(shards, &parts, learn)?;
        if stop.is_some_and(|stop| (stop.0)()) {
            return Ok(false);
        }
        let in_place = merge_in_place(model, shards)?;
        if !in_place {
            let refs = shards.iter().collect::<Vec<_>>();
            *model = merge::merge(&refs, Method::Auto, Some(model), None)?;
        }
        // Shards left idle (fewer rows than shards) did not receive the merge.
        self.current = in_place && parts.len() == self.shards.len();
        Ok(true)
    }

    /// Makes every shard a copy of `model` again, unless they already are.
    fn refresh(&mut self, model: &Estimator) {
        if !self.current {
            self.shards
                .iter_mut()
                .for_each(|shard| shard.clone_from(model));
            self.current = true;
        }
    }
}

/// `0..n` in `k` contiguous parts as `numpy.array_split` makes them (the first `n % k` one
/// longer), the empty ones left out.
fn split(n: usize, k: usize) -> Vec<Range<usize>> {
    let (size, longer) = (n / k, n % k);
    let mut start = 0;
    (0..k)
        .map(|part| {
            let end = start + size + usize::from(part < longer);
            let range = start..end;
            start = end;
            range
        })
        .filter(|range| !range.is_empty())
        .collect()
}

/// `f(item k, part k)` for every k, the first on this thread and the rest on their own; the
/// first error in part order.
fn in_parallel<T: Send>(
    items: &mut [T],
    parts: &[Range<usize>],
    f: impl Fn(&mut T, Range<usize>) -> Result<(), CwError> + Sync,
) -> Result<(), CwError> {
    let f = &f;
    std::thread::scope(|scope| {
        let mut items = items.iter_mut().zip(parts.iter().cloned());
        let Some((first, first_part)) = items.next() else {
            return Ok(());
        };
        let others = items
            .map(|(item, part)| scope.spawn(move || f(item, part)))
            .collect::<Vec<_>>();
        let mut results = vec![f(first, first_part)];
        for handle in others {
            results.push(
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        results.into_iter().collect()
    })
}

/// The per-class models of a linear learner and a setter of its counters.
fn gaussians(estimator: &mut Estimator) -> Option<&mut [Gaussian]> {
    match estimator.model_mut() {
        Model::Binary(l) => Some(l.models_mut()),
        Model::Regressor(l) => Some(l.models_mut()),
        Model::Multiclass(l) => Some(l.models_mut()),
        Model::Kernel(_) | Model::MulticlassKernel(_) => None,
    }
}

fn set_counters(estimator: &mut Estimator, updates: u64, mistakes: u64, rounds: u64) {
    match estimator.model_mut() {
        Model::Binary(l) => l.set_counters(updates, mistakes, rounds),
        Model::Regressor(l) => l.set_counters(updates, mistakes, rounds),
        Model::Multiclass(l) => l.set_counters(updates, mistakes, rounds),
        Model::Kernel(_) | Model::MulticlassKernel(_) => {}
    }
}

/// The counters of a model: updates, mistakes, rows learned (as the state keeps them).
fn counters(estimator: &Estimator) -> [u64; 3] {
    let mistakes = estimator.n_mistakes().unwrap_or(0);
    [
        estimator.n_updates(),
        mistakes,
        estimator.n_rounds().unwrap_or(0),
    ]
}

/// The merge of `shards` (trained from `model`) written into every shard and then into `model`,
/// when the form allows it in place: returns false (nothing changed) otherwise. Computes what
/// [`merge::merge`] with method "auto" computes, bit for bit.
fn merge_in_place(model: &mut Estimator, shards: &mut [Estimator]) -> Result<bool, CwError> {
    let kind = merge::check_mergeable(model)?;
    let method = merge::resolve(Method::Auto, kind, model)?;
    let config = model.config();
    let plain = !merge::has_process_noise(config)? && config.optional_string("penalty")?.is_none();
    let in_place = matches!(
        (kind, method),
        (
            CovarianceKind::Diagonal,
            Method::Information | Method::Average
        ) | (CovarianceKind::Identity, Method::Average)
    );
    if !(plain && in_place) {
        return Ok(false);
    }
    let base = counters(model);
    let gains = shards
        .iter()
        .map(|shard| {
            counters(shard)[0]
                .checked_sub(base[0])
                .ok_or_else(merge::not_definite)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let weights = merge::normalised(None, &gains)?;
    let mut outputs = shards.iter_mut().filter_map(gaussians).collect::<Vec<_>>();
    let inputs = gaussians(model).ok_or_else(merge::not_definite)?;
    for (class, base) in inputs.iter().enumerate() {
        let mut shard_class = outputs
            .iter_mut()
            .map(|g| &mut g[class])
            .collect::<Vec<_>>();
        merge_class(base, &mut shard_class, method, &weights)?;
    }
    // The merged model is in every shard: copy it into the model, counters summed as the state
    // merge sums them.
    let added = |i: usize| {
        shards.iter().fold(base[i], |total, shard| {
            total.saturating_add(counters(shard)[i].saturating_sub(base[i]))
        })
    };
    let merged = [added(0), added(1), added(2)];
    let (first, others) = shards.split_first_mut().ok_or_else(merge::not_definite)?;
    for shard in others.iter_mut() {
        set_counters(shard, merged[0], merged[1], merged[2]);
    }
    set_counters(first, merged[0], merged[1], merged[2]);
    let source = gaussians(first).ok_or_else(merge::not_definite)?;
    let target = gaussians(model).ok_or_else(merge::not_definite)?;
    for (to, from) in target.iter_mut().zip(source.iter_mut()) {
        match (to, from) {
            (Gaussian::Diagonal(to), Gaussian::Diagonal(from)) => {
                to.coordinates_mut().copy_from_slice(from.coordinates_mut())
            }
            (Gaussian::Identity(to), Gaussian::Identity(from)) => {
                to.mean_mut().copy_from_slice(from.mean_mut())
            }
            _ => unreachable!("every shard has the model's form"),
        }
    }
    set_counters(model, merged[0], merged[1], merged[2]);
    Ok(true)
}

/// One class: the merge of the shards' models `shards` trained from `base`, written into
/// each of `shards`.
fn merge_class(
    base: &Gaussian,
    shards: &mut [&mut Gaussian],
    method: Method,
    weights: &[f64],
) -> Result<(), CwError> {
    match base {
        Gaussian::Diagonal(base) => {
            let mut shards = values_of(shards, |g| match g {
                Gaussian::Diagonal(d) => Some(d.coordinates_mut()),
                _ => None,
            });
            for (j, start) in base.coordinates().iter().enumerate() {
                let merged = match method {
                    Method::Information => information(start, &shards, j)?,
                    _ => Coordinate {
                        mean: average(&shards, weights, |s| s[j].mean),
                        variance: average(&shards, weights, |s| s[j].variance),
                    },
                };
                if !(merged.mean.is_finite()
                    && merged.variance.is_finite()
                    && merged.variance > 0.0)
                {
                    return Err(CwError::InvalidInput(
                        "the merged model is not valid: a merged mean or variance is not finite"
                            .into(),
                    ));
                }
                shards.iter_mut().for_each(|s| s[j] = merged);
            }
        }
        // Averaging does not read the base.
        Gaussian::Identity(_) => {
            let mut shards = values_of(shards, |g| match g {
                Gaussian::Identity(i) => Some(i.mean_mut()),
                _ => None,
            });
            for j in 0..shards.first().map_or(0, |s| s.len()) {
                let merged = average(&shards, weights, |s| s[j]);
                if !merged.is_finite() {
                    return Err(CwError::InvalidInput(
                        "the merged model is not valid: a merged mean is not finite".into(),
                    ));
                }
                shards.iter_mut().for_each(|s| s[j] = merged);
            }
        }
        _ => unreachable!("merge_in_place takes the diagonal and identity forms only"),
    }
    Ok(())
}

/// The values `values` gives of each of `shards` (which all have the model's form).
fn values_of<'a, T>(
    shards: &'a mut [&mut Gaussian],
    values: fn(&'a mut Gaussian) -> Option<&'a mut [T]>,
) -> Vec<&'a mut [T]> {
    let each = shards.iter_mut().map(|g| values(g));
    each.map(|v| v.expect("every shard has the model's form"))
        .collect()
}

/// λ = λ₀ + Σₖ(λₖ − λ₀), η = η₀ + Σₖ(ηₖ − η₀) of coordinate `j`, as μ = η/λ and σ² = 1/λ
/// (the arithmetic of `merge::merge_diagonal`, in its order).
#[inline]
fn information(
    start: &Coordinate,
    shards: &[&mut [Coordinate]],
    j: usize,
) -> Result<Coordinate, CwError> {
    let l0 = 1.0 / start.variance;
    let e0 = l0 * start.mean;
    let (mut lambda, mut eta) = (l0, e0);
    for shard in shards {
        let c = &shard[j];
        let l = 1.0 / c.variance;
        let e = l * c.mean;
        lambda += l - l0;
        eta += e - e0;
    }
    if !(lambda.is_finite() && lambda > 0.0) {
        return Err(merge::not_definite());
    }
    Ok(Coordinate {
        mean: eta / lambda,
        variance: 1.0 / lambda,
    })
}

/// Σₖ bₖ·value(shard k), summed from 0 in shard order (as `merge::merge`'s averaging).
#[inline]
fn average<S: ?Sized>(shards: &[&mut S], weights: &[f64], value: impl Fn(&S) -> f64) -> f64 {
    shards
        .iter()
        .zip(weights)
        .fold(0.0, |sum, (shard, &b)| sum + b * value(shard))
}

#[cfg(test)]
#[path = "sharded_tests.rs"]
mod tests;
