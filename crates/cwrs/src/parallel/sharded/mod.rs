//! `fit` on several cores in one process (docs/design.md §9.4). Each pass splits its rows into
//! contiguous shards (of the stored rows, or of the pass's row order), learns a copy of the
//! model of the start of the pass on each in its own thread, and merges the copies in shard
//! order with that model as the base ([`crate::parallel::merge`], method "auto"). The result depends
//! only on the data, the row orders and the number of shards, never on thread timing.
//!
//! What makes it cheap: the copies are made once per fit, each by its own thread; the rows are
//! validated once per pass, each thread its share; a shard in stored order is a range of rows
//! (no index array), validated and learned a chunk at a time, so that its rows come from memory
//! once; and for the diagonal and identity forms without an L1 penalty or process noise, the
//! merge runs in place, the coordinates in one range per thread, writing the merged model into
//! every copy (ready for the next pass), and the model then swaps with the first copy. It
//! computes exactly what [`merge::merge`] does. Other mergeable forms go through
//! [`merge::merge`].

use std::ops::Range;

use crate::covariance::{Coordinate, CovarianceKind, Gaussian};
use crate::data::{
    chunk_rows, learn_validated_in_turn, Matrix, Presentation, Stop, Weights, STOP_POLL,
};
use crate::error::CwError;
use crate::learn::noise_estimate::NoiseEstimate;
use crate::model::{AnyLearner, Model, Targets};
use crate::parallel::merge::{self, Method};
use crate::parallel::threads::spawn_or_keep;

/// The copies of a model that a sharded fit trains, made once (when a pass first needs them:
/// never more than it has rows) and refreshed each pass.
pub struct ShardedFit {
    n_jobs: usize,
    shards: Vec<Model>,
    /// Whether each shard holds the model as it is (after an in-place merge, all but the
    /// first, which then holds the model of the start of the pass).
    current: Vec<bool>,
    /// Whether the last pass merged in place, leaving the model of its start in the first shard.
    swapped: bool,
}

/// The memory the system could give this process now (Linux: `MemAvailable`), if it says.
fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib = line.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    kib.checked_mul(1024)
}

/// Coordinates below which the in-place merge runs on one thread (a thread costs more).
const PARALLEL_MERGE_COORDINATES: usize = 1 << 15;

/// Runs `$body` with `$l` bound to the linear learner of `$model` and `$t` to its targets
/// (`$otherwise` for a kernel model or targets of the wrong kind).
macro_rules! linear {
    ($model:expr, $targets:expr, ($l:ident, $t:ident) => $body:expr, $otherwise:expr) => {
        match ($model, $targets) {
            (AnyLearner::Binary($l), Targets::Values($t)) => $body,
            (AnyLearner::Regressor($l), Targets::Values($t)) => $body,
            (AnyLearner::Multiclass($l), Targets::Classes($t)) => $body,
            _ => $otherwise,
        }
    };
}

impl ShardedFit {
    /// A fit of `model` in `n_jobs` (≥ 1) shards, refused if `model` cannot be merged.
    pub fn new(model: &Model, n_jobs: usize) -> Result<ShardedFit, CwError> {
        merge::check_mergeable(model)?;
        if n_jobs == 0 {
            return Err(CwError::InvalidParameter(
                "n_jobs must be at least 1".into(),
            ));
        }
        Ok(ShardedFit {
            n_jobs,
            shards: Vec::new(),
            current: Vec::new(),
            swapped: false,
        })
    }

    /// Makes copies of `model` until there are `n` shards, refused (nothing made) when they
    /// would not fit in the memory available.
    fn grow(&mut self, model: &Model, x: &Matrix, n: usize) -> Result<(), CwError> {
        let missing = n.saturating_sub(self.shards.len());
        if missing == 0 {
            return Ok(());
        }
        // A copy holds about as many numbers as copying it takes multiply-adds.
        let bytes = model.costs(x, 1.0).0 * 8.0 * missing as f64;
        if let Some(available) = available_memory().filter(|&a| bytes > a as f64) {
            let gib = |b: f64| b / f64::from(1u32 << 30);
            return Err(CwError::InvalidParameter(format!(
                "n_jobs={} needs {missing} more copies of the model ({:.1} GiB), more than the \
                 {:.1} GiB of memory available; use a smaller n_jobs",
                self.n_jobs,
                gib(bytes),
                gib(available as f64)
            )));
        }
        let mut copies = (0..missing).map(|_| None).collect::<Vec<_>>();
        copy_in_parallel(&mut copies, |copy| *copy = Some(model.clone()));
        self.shards.extend(copies.into_iter().flatten());
        self.current.resize(self.shards.len(), true);
        Ok(())
    }

    /// One pass over the rows of `x` (row `i` with weight `weights[i]`, times its class's
    /// balanced weight when `balanced`; see [`Presentation::balanced`]), in `order` or else in stored
    /// order) in shards, merged into `model`, which must be the model the shards were made from
    /// or the result of the previous pass. Everything is checked before `model` changes: on an
    /// error, or when `stop` ends the pass early (then the result is `Ok(false)`), `model` is as
    /// it was at the start of the pass.
    pub fn pass(
        &mut self,
        model: &mut Model,
        x: &Matrix,
        targets: Targets,
        (weights, balanced): (Weights, bool),
        order: Option<&[usize]>,
        stop: Option<Stop>,
    ) -> Result<bool, CwError> {
        let balance = balanced
            .then(|| model.balanced(targets, weights))
            .transpose()?;
        let presentation = Presentation {
            weights: balance.as_ref().map_or(weights, |(w, _)| Some(w)),
            order,
            stop,
            balanced: false,
        };
        let kind = model.kind();
        let refuse = || CwError::InvalidInput(format!("a {kind} model cannot be sharded"));
        linear!(model.model(), targets, (l, t) => l.check_batch(x, t, &presentation), Err(refuse()))?;
        let (n, n_features) = (x.n_rows(), model.model_config().n_features);
        let parts = split(order.map_or(n, <[usize]>::len), self.n_jobs);
        self.refresh(model);
        self.grow(model, x, parts.len())?;
        let shards = &mut self.shards[..parts.len()];
        self.current.fill(false);
        let stopped = || stop.is_some_and(|stop| stop.now());
        let learn_rows = |shard: &mut Model, presentation, rows| {
            linear!(shard.model_mut(), targets, (l, t) => l.learn_checked(x, t, presentation, rows),
                Err(refuse()))
        };
        let learn = |shard: &mut Model, part: Range<usize>| match order {
            Some(order) => {
                let order = Some(&order[part]);
                learn_rows(
                    shard,
                    Presentation {
                        order,
                        ..presentation
                    },
                    0..0,
                )
            }
            // In stored order a shard validates its rows a chunk at a time, then learns them.
            None => learn_validated_in_turn(x, part, n_features, chunk_rows(x), stop, |rows| {
                learn_rows(shard, presentation, rows)
            }),
        };
        if order.is_some() {
            // The shards' rows are scattered: validate all of them first, a range per thread.
            let ranges = split(n, parts.len());
            in_parallel(
                &mut vec![(); ranges.len()],
                &ranges,
                |_, rows| x.validate_rows(rows, n_features),
                None,
            )?;
        }
        in_parallel(shards, &parts, learn, stop)?;
        if stopped() {
            return Ok(false);
        }
        if merge_in_place(model, shards)? {
            // Every shard holds the merged model, except the first, swapped with `model`
            // (cheaper than a copy, which only a next pass needs).
            self.current[1..parts.len()].fill(true);
            self.swapped = true;
        } else {
            let refs = shards.iter().collect::<Vec<_>>();
            *model = merge::merge(&refs, Method::Auto, Some(model), None)?;
        }
        if let Some((_, counts)) = balance {
            model.set_class_counts(counts)?;
        }
        Ok(true)
    }

    /// Makes every shard a copy of `model` again, unless it already is.
    fn refresh(&mut self, model: &Model) {
        // After an in-place merge the first shard differs from the model in its tables and
        // counters only: copied in place, a range of coordinates per thread.
        if std::mem::take(&mut self.swapped) && !self.current[0] {
            copy_tables(model, &mut self.shards[0], self.current.len());
            self.current[0] = true;
        }
        let stale = (self.shards.iter_mut().zip(&self.current))
            .filter(|(_, &current)| !current)
            .map(|(shard, _)| shard);
        let mut stale = stale.collect::<Vec<_>>();
        copy_in_parallel(&mut stale, |shard| shard.clone_from(model));
        self.current.fill(true);
    }
}

/// The tables and counters of `model` (a diagonal or identity form) copied into `shard`, the
/// coordinates in `threads` ranges on as many threads.
fn copy_tables(model: &Model, shard: &mut Model, threads: usize) {
    let [updates, mistakes, rounds] = counters(model);
    set_counters(shard, updates, mistakes, rounds);
    // Cannot fail: the model's own estimate, valid for the same learner.
    let _ = set_noise(shard, model.noise_estimate());
    let (Some(from), Some(to)) = (model.primal_gaussians(), gaussians(shard)) else {
        return;
    };
    let n_coordinates = from.first().map_or(0, |g| g.shape().dim());
    let ranges = split(n_coordinates, pieces(n_coordinates, threads));
    let mut work = (0..ranges.len()).map(|_| Vec::new()).collect::<Vec<_>>();
    for (from, to) in from.iter().zip(to) {
        let copies: Vec<Copy> = match (from, to) {
            (Gaussian::Diagonal(from), Gaussian::Diagonal(to)) => {
                let from = ranges.iter().map(|r| &from.coordinates()[r.clone()]);
                let to = cut(to.coordinates_mut(), &ranges);
                from.zip(to).map(|(f, t)| Copy::Diagonal(f, t)).collect()
            }
            (Gaussian::Identity(from), Gaussian::Identity(to)) => {
                let from = ranges.iter().map(|r| &from.mean_values()[r.clone()]);
                let to = cut(to.mean_mut(), &ranges);
                from.zip(to).map(|(f, t)| Copy::Identity(f, t)).collect()
            }
            _ => unreachable!("only the forms merged in place are copied in place"),
        };
        work.iter_mut().zip(copies).for_each(|(w, c)| w.push(c));
    }
    // Cannot fail: a copy never does.
    let _ = in_parallel(
        &mut work,
        &ranges,
        |copies, _| {
            for copy in copies.iter_mut() {
                match copy {
                    Copy::Diagonal(from, to) => to.copy_from_slice(from),
                    Copy::Identity(from, to) => to.copy_from_slice(from),
                }
            }
            Ok(())
        },
        None,
    );
}

/// One range of one class's table, to copy.
enum Copy<'a> {
    Diagonal(&'a [Coordinate], &'a mut [Coordinate]),
    Identity(&'a [f64], &'a mut [f64]),
}

/// Threads for a pass over `n_coordinates` of every class (one below a size a thread pays for).
fn pieces(n_coordinates: usize, threads: usize) -> usize {
    if n_coordinates < PARALLEL_MERGE_COORDINATES {
        1
    } else {
        threads
    }
}

/// `copy(slot)` for every slot, each on its own thread (copies of a large model take
/// milliseconds each, and every thread then learns on memory it wrote).
fn copy_in_parallel<T: Send>(slots: &mut [T], copy: impl Fn(&mut T) + Sync) {
    let parts = vec![0..0; slots.len()];
    // Cannot fail: a copy never does.
    let _ = in_parallel(
        slots,
        &parts,
        |slot, _| {
            copy(slot);
            Ok(())
        },
        None,
    );
}

/// `0..n` in `k` contiguous parts as `numpy.array_split` makes them (the first `n % k` one
/// longer), the empty ones left out: at most `n` parts, however large `k`.
fn split(n: usize, k: usize) -> Vec<Range<usize>> {
    let k = k.clamp(1, n.max(1));
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
/// first error in part order. An item whose thread the system refuses runs on this thread, in
/// its turn ([`spawn_or_keep`]): the items are independent, so the results are the same. With
/// `stop`, this thread keeps asking it every [`STOP_POLL`] while it waits for the others
/// (only this thread asks the caller's check, and the others stop on what it finds: a shard
/// learned here early must not leave Ctrl-C unheard until the slowest one ends).
fn in_parallel<T: Send>(
    items: &mut [T],
    parts: &[Range<usize>],
    f: impl Fn(&mut T, Range<usize>) -> Result<(), CwError> + Sync,
    stop: Option<Stop>,
) -> Result<(), CwError> {
    let mut work = items.iter_mut().zip(parts.iter().cloned());
    let Some((first, first_part)) = work.next() else {
        return Ok(());
    };
    let f = &f;
    std::thread::scope(|scope| {
        let others = work
            .map(|(item, part)| spawn_or_keep(scope, move || f(item, part)))
            .collect::<Vec<_>>();
        let mut results = vec![f(first, first_part)];
        results.extend(others.into_iter().map(|other| match stop {
            // Asked for what it does here: the check whose answer stops the other threads.
            Some(stop) => other.join_polling(STOP_POLL, || {
                stop.now();
            }),
            None => other.join(),
        }));
        results.into_iter().collect()
    })
}

/// The per-class models of a linear learner, to be changed, and a setter of its counters.
fn gaussians(estimator: &mut Model) -> Option<&mut [Gaussian]> {
    match estimator.model_mut() {
        AnyLearner::Binary(l) => Some(l.models_mut()),
        AnyLearner::Regressor(l) => Some(l.models_mut()),
        AnyLearner::Multiclass(l) => Some(l.models_mut()),
        AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => None,
    }
}

fn set_counters(estimator: &mut Model, updates: u64, mistakes: u64, rounds: u64) {
    match estimator.model_mut() {
        AnyLearner::Binary(l) => l.set_counters(updates, mistakes, rounds),
        AnyLearner::Regressor(l) => l.set_counters(updates, mistakes, rounds),
        AnyLearner::Multiclass(l) => l.set_counters(updates, mistakes, rounds),
        AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => {}
    }
}

/// Gives a primal model the noise estimate `noise` (if its learner keeps one).
fn set_noise(estimator: &mut Model, noise: Option<NoiseEstimate>) -> Result<(), CwError> {
    let Some(noise) = noise else {
        return Ok(());
    };
    match estimator.model_mut() {
        AnyLearner::Binary(l) => l.set_noise_estimate(noise),
        AnyLearner::Regressor(l) => l.set_noise_estimate(noise),
        AnyLearner::Multiclass(l) => l.set_noise_estimate(noise),
        AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => Ok(()),
    }
}

/// The counters of a model: updates, mistakes, rows learned (as the state keeps them).
fn counters(estimator: &Model) -> [u64; 3] {
    let mistakes = estimator.n_mistakes().unwrap_or(0);
    [
        estimator.n_updates(),
        mistakes,
        estimator.n_rounds().unwrap_or(0),
    ]
}

/// The merge of `shards` (trained from `model`) written into every shard, then swapped with
/// `model` (so the first shard holds the model as it was), when the form allows it in place:
/// returns false (nothing changed) otherwise. Computes what [`merge::merge`] with method
/// "auto" computes, bit for bit, with the coordinates in as many ranges as there are shards,
/// each on its own thread.
fn merge_in_place(model: &mut Model, shards: &mut [Model]) -> Result<bool, CwError> {
    let kind = merge::check_mergeable(model)?;
    let config = model.model_config();
    let method = merge::resolve(Method::Auto, kind, config)?;
    let plain = !merge::has_process_noise(config) && config.penalty.is_none();
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
    if shards.is_empty() {
        return Err(merge::not_definite());
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
    let added = |i: usize| {
        shards.iter().fold(base[i], |total, shard| {
            total.saturating_add(counters(shard)[i].saturating_sub(base[i]))
        })
    };
    let merged = [added(0), added(1), added(2)];
    let noise = (model.noise_estimate())
        .map(|base| NoiseEstimate::merged(base, shards.iter().filter_map(Model::noise_estimate)));
    let inputs = gaussians(model).ok_or_else(merge::not_definite)?;
    let n_coordinates = inputs.first().map_or(0, |g| g.shape().dim());
    let ranges = split(n_coordinates, pieces(n_coordinates, shards.len()));
    // Per range, every class's tables in that range, and the first failure met there.
    let mut work = (0..ranges.len())
        .map(|_| (Vec::new(), None))
        .collect::<Vec<_>>();
    let mut outputs = (shards.iter_mut().filter_map(gaussians))
        .map(|classes| classes.iter_mut())
        .collect::<Vec<_>>();
    for base in inputs.iter() {
        let shard_class = outputs.iter_mut().filter_map(Iterator::next).collect();
        for ((tables, _), piece) in work
            .iter_mut()
            .zip(Tables::of(base, shard_class).cut(&ranges))
        {
            tables.push(piece);
        }
    }
    in_parallel(
        &mut work,
        &ranges,
        |(tables, failure), range| {
            *failure = tables.iter_mut().enumerate().find_map(|(class, tables)| {
                let failed = tables.merge(method, &weights).err();
                failed.map(|(j, error)| ((class, range.start + j), error))
            });
            Ok(())
        },
        None,
    )?;
    // The first failure in the order of a merge class by class, coordinate by coordinate.
    let failures = work.into_iter().filter_map(|(_, failure)| failure);
    if let Some((_, error)) = failures.min_by_key(|(at, _)| *at) {
        return Err(error);
    }
    for shard in shards.iter_mut() {
        set_counters(shard, merged[0], merged[1], merged[2]);
        set_noise(shard, noise)?;
    }
    std::mem::swap(model, &mut shards[0]);
    Ok(true)
}

/// The per-coordinate tables of one class (or of a range of its coordinates): the base's,
/// read, and every shard's, written.
enum Tables<'a> {
    Diagonal(&'a [Coordinate], Vec<&'a mut [Coordinate]>),
    /// Averaging does not read the base.
    Identity(Vec<&'a mut [f64]>),
}

impl<'a> Tables<'a> {
    /// The tables of the class `base` of the base model and `shards` of the shards.
    fn of(base: &'a Gaussian, shards: Vec<&'a mut Gaussian>) -> Tables<'a> {
        let each = shards.into_iter();
        match base {
            Gaussian::Diagonal(base) => Tables::Diagonal(
                base.coordinates(),
                each.map(|g| match g {
                    Gaussian::Diagonal(d) => d.coordinates_mut(),
                    _ => unreachable!("every shard has the model's form"),
                })
                .collect(),
            ),
            Gaussian::Identity(_) => Tables::Identity(
                each.map(|g| match g {
                    Gaussian::Identity(i) => i.mean_mut(),
                    _ => unreachable!("every shard has the model's form"),
                })
                .collect(),
            ),
            _ => unreachable!("merge_in_place takes the diagonal and identity forms only"),
        }
    }

    /// These tables cut into the consecutive `ranges` of their coordinates.
    fn cut(self, ranges: &[Range<usize>]) -> Vec<Tables<'a>> {
        match self {
            Tables::Diagonal(base, shards) => {
                let bases = ranges.iter().map(|range| &base[range.clone()]);
                let pieces = transpose(shards.into_iter().map(|s| cut(s, ranges)), ranges.len());
                bases
                    .zip(pieces)
                    .map(|(base, shards)| Tables::Diagonal(base, shards))
                    .collect()
            }
            Tables::Identity(shards) => {
                let pieces = transpose(shards.into_iter().map(|s| cut(s, ranges)), ranges.len());
                pieces.into_iter().map(Tables::Identity).collect()
            }
        }
    }

    /// The merge of these tables written into every shard's; on failure, the first coordinate
    /// that failed and why.
    fn merge(&mut self, method: Method, weights: &[f64]) -> Result<(), (usize, CwError)> {
        match self {
            Tables::Diagonal(base, shards) => {
                for (j, start) in base.iter().enumerate() {
                    let merged = match method {
                        Method::Information => information(start, shards, j).map_err(|e| (j, e))?,
                        _ => Coordinate {
                            mean: average(shards, weights, |s| s[j].mean),
                            variance: average(shards, weights, |s| s[j].variance),
                        },
                    };
                    if !(merged.mean.is_finite()
                        && merged.variance.is_finite()
                        && merged.variance > 0.0)
                    {
                        return Err((j, not_finite("a merged mean or variance")));
                    }
                    shards.iter_mut().for_each(|s| s[j] = merged);
                }
            }
            Tables::Identity(shards) => {
                for j in 0..shards.first().map_or(0, |s| s.len()) {
                    let merged = average(shards, weights, |s| s[j]);
                    if !merged.is_finite() {
                        return Err((j, not_finite("a merged mean")));
                    }
                    shards.iter_mut().for_each(|s| s[j] = merged);
                }
            }
        }
        Ok(())
    }
}

fn not_finite(what: &str) -> CwError {
    CwError::InvalidInput(format!(
        "the merged model is not valid: {what} is not finite"
    ))
}

/// `values` cut into the consecutive `ranges` (which cover it from its start).
fn cut<'a, T>(mut values: &'a mut [T], ranges: &[Range<usize>]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(ranges.len());
    for range in ranges {
        let (piece, rest) = std::mem::take(&mut values).split_at_mut(range.len());
        pieces.push(piece);
        values = rest;
    }
    pieces
}

/// The `n` pieces of every item, regrouped by piece.
fn transpose<T>(items: impl Iterator<Item = Vec<T>>, n: usize) -> Vec<Vec<T>> {
    let mut by_piece = (0..n).map(|_| Vec::new()).collect::<Vec<_>>();
    for pieces in items {
        by_piece
            .iter_mut()
            .zip(pieces)
            .for_each(|(all, piece)| all.push(piece));
    }
    by_piece
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
mod tests;
