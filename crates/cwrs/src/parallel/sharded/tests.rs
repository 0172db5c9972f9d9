use super::*;
use crate::model::state::State;

const N_FEATURES: usize = 3;

fn binary(rule: &str, covariance: &str) -> Model {
    binary_of_width(rule, covariance, N_FEATURES)
}

fn binary_of_width(rule: &str, covariance: &str, n_features: usize) -> Model {
    let params = vec![("r".to_string(), 0.5)];
    let config = State::default()
        .with("kind", "binary")
        .with("rule", rule)
        .with("params", if rule == "AROW" { params } else { Vec::new() })
        .with("n_features", n_features)
        .with("fit_intercept", true)
        .with("a", 1.0)
        .with("covariance", covariance)
        .with("penalty", None::<String>);
    Model::new(config, None).unwrap()
}

/// Rows of a low-discrepancy sequence and labels ±1 of a linear rule with some noise.
fn data(n_rows: usize) -> (Vec<f64>, Vec<f64>) {
    let spread = |i: usize, step: f64| ((i as f64 + 1.0) * step).fract() - 0.5;
    let x: Vec<f64> = (0..n_rows * N_FEATURES)
        .map(|i| spread(i, 0.754_877_666_2))
        .collect();
    let y = x.chunks(N_FEATURES).enumerate().map(|(i, r)| {
        let score = r[0] - 2.0 * r[1] + 0.3 * spread(i, 0.569_840_290_9);
        if score > 0.0 {
            1.0
        } else {
            -1.0
        }
    });
    let y = y.collect();
    (x, y)
}

/// The definition: copies of `model` learn the parts of `order` one after the other and
/// `merge::merge` combines them.
fn by_definition(model: &Model, x: &Matrix, y: &[f64], order: &[usize], k: usize) -> Model {
    let shards = split(order.len(), k).into_iter().map(|part| {
        let mut shard = model.clone();
        let presentation = Presentation {
            order: Some(&order[part]),
            ..Presentation::default()
        };
        shard
            .partial_fit(x, Targets::Values(y), presentation)
            .unwrap();
        shard
    });
    let shards = shards.collect::<Vec<_>>();
    merge::merge(
        &shards.iter().collect::<Vec<_>>(),
        Method::Auto,
        Some(model),
        None,
    )
    .unwrap()
}

#[test]
fn split_is_numpy_array_split_without_the_empty_parts() {
    assert_eq!(split(10, 3), vec![0..4, 4..7, 7..10]);
    assert_eq!(split(2, 4), vec![0..1, 1..2]);
    assert_eq!(split(0, 2), Vec::<Range<usize>>::new());
    // More parts than rows: one row each, in no more steps than rows.
    assert_eq!(split(3, usize::MAX), vec![0..1, 1..2, 2..3]);
    assert_eq!(split(0, usize::MAX), Vec::<Range<usize>>::new());
}

#[test]
fn shards_are_copied_when_a_pass_needs_them_and_never_beyond_its_rows() {
    let (values, y) = data(40);
    let x = Matrix::Dense {
        values: &values,
        n_rows: 40,
        n_cols: N_FEATURES,
    };
    for n_jobs in [1 << 31, usize::MAX, 1_000_000] {
        let mut model = binary("AROW", "full");
        let mut fit = ShardedFit::new(&model, n_jobs).unwrap();
        assert!(fit.shards.is_empty());
        let mut expected = model.clone();
        let stored: Vec<usize> = (0..40).collect();
        for _ in 0..2 {
            expected = by_definition(&expected, &x, &y, &stored, n_jobs);
            let passed = fit.pass(
                &mut model,
                &x,
                Targets::Values(&y),
                (None, false),
                None,
                None,
            );
            assert!(passed.unwrap());
            assert_eq!(fit.shards.len(), 40);
            assert_eq!(model.clone().state(), expected.clone().state());
        }
    }
}

#[test]
fn copies_that_would_not_fit_in_memory_are_refused_before_any_is_made() {
    // 1000 copies of a full covariance of 4096² numbers: 128 GiB.
    let (n_features, n_rows, n_jobs) = (4095, 1000, 1000);
    let Some(available) = available_memory() else {
        return;
    };
    if available > 100 << 30 {
        return;
    }
    let values = vec![0.5; n_rows * n_features];
    let y = vec![1.0; n_rows];
    let x = Matrix::Dense {
        values: &values,
        n_rows,
        n_cols: n_features,
    };
    let mut model = binary_of_width("AROW", "full", n_features);
    let before = model.clone().state();
    let mut fit = ShardedFit::new(&model, n_jobs).unwrap();
    let refused = fit.pass(
        &mut model,
        &x,
        Targets::Values(&y),
        (None, false),
        None,
        None,
    );
    let Err(CwError::InvalidParameter(message)) = refused else {
        panic!("not refused: {refused:?}");
    };
    assert!(
        message.contains("n_jobs=1000") && message.contains("memory"),
        "{message}"
    );
    assert!(fit.shards.is_empty());
    assert!(model.state() == before);
}

#[test]
fn passes_merged_in_place_equal_the_state_merge_bit_for_bit() {
    let (values, y) = data(97);
    let x = Matrix::Dense {
        values: &values,
        n_rows: 97,
        n_cols: N_FEATURES,
    };
    let shuffled: Vec<usize> = (0..97).map(|i| (i * 37) % 97).collect();
    for (rule, covariance) in [("AROW", "diag"), ("PA", "identity"), ("AROW", "full")] {
        for k in [2, 3] {
            let mut model = binary(rule, covariance);
            let mut expected = model.clone();
            let mut fit = ShardedFit::new(&model, k).unwrap();
            for order in [None, Some(&shuffled[..]), None] {
                let stored: Vec<usize> = (0..97).collect();
                let presented = order.unwrap_or(&stored);
                expected = by_definition(&expected, &x, &y, presented, k);
                assert!(fit
                    .pass(
                        &mut model,
                        &x,
                        Targets::Values(&y),
                        (None, false),
                        order,
                        None
                    )
                    .unwrap());
                assert_eq!(
                    model.clone().state(),
                    expected.clone().state(),
                    "{rule} {covariance}"
                );
            }
        }
    }
}

#[test]
fn a_refused_or_stopped_pass_leaves_the_model_as_it_was() {
    let (values, y) = data(40);
    let mut model = binary("AROW", "diag");
    let mut fit = ShardedFit::new(&model, 2).unwrap();
    let x = Matrix::Dense {
        values: &values,
        n_rows: 40,
        n_cols: N_FEATURES,
    };
    fit.pass(
        &mut model,
        &x,
        Targets::Values(&y),
        (None, false),
        None,
        None,
    )
    .unwrap();
    let before = model.clone().state();
    let stop = || true;
    let stopped = fit.pass(
        &mut model,
        &x,
        Targets::Values(&y),
        (None, false),
        None,
        Some(Stop {
            asked: &stop,
            every: 1,
        }),
    );
    assert!(!stopped.unwrap());
    assert_eq!(model.clone().state(), before);
    let mut bad_values = values.clone();
    bad_values[35 * N_FEATURES] = f64::NAN;
    let bad = Matrix::Dense {
        values: &bad_values,
        n_rows: 40,
        n_cols: N_FEATURES,
    };
    assert!(fit
        .pass(
            &mut model,
            &bad,
            Targets::Values(&y),
            (None, false),
            None,
            None
        )
        .is_err());
    let order: Vec<usize> = (0..40).rev().collect();
    let refused = fit.pass(
        &mut model,
        &bad,
        Targets::Values(&y),
        (None, false),
        Some(&order),
        None,
    );
    assert!(refused.is_err());
    assert_eq!(model.clone().state(), before);
    // The next pass starts from the model again, not from what the refused shards learned.
    let mut expected = model.clone();
    let stored: Vec<usize> = (0..40).collect();
    expected = by_definition(&expected, &x, &y, &stored, 2);
    fit.pass(
        &mut model,
        &x,
        Targets::Values(&y),
        (None, false),
        None,
        None,
    )
    .unwrap();
    assert_eq!(model.state(), expected.state());
}

#[test]
fn shards_left_idle_by_a_short_batch_are_refreshed_before_the_next() {
    let (values, y) = data(30);
    let mut model = binary("AROW", "diag");
    let mut expected = model.clone();
    let mut fit = ShardedFit::new(&model, 4).unwrap();
    for n_rows in [2, 30] {
        let x = Matrix::Dense {
            values: &values[..n_rows * N_FEATURES],
            n_rows,
            n_cols: N_FEATURES,
        };
        let stored: Vec<usize> = (0..n_rows).collect();
        expected = by_definition(&expected, &x, &y[..n_rows], &stored, 4);
        let targets = Targets::Values(&y[..n_rows]);
        assert!(fit
            .pass(&mut model, &x, targets, (None, false), None, None)
            .unwrap());
        assert_eq!(model.clone().state(), expected.clone().state());
    }
}

/// A model wide enough for the merge to run on several threads, and shards long enough to be
/// validated and learned in several chunks: still the state merge's result, bit for bit.
#[test]
fn wide_models_merged_by_ranges_equal_the_state_merge_bit_for_bit() {
    let (n_rows, per_row, n_features) = (600, 100, PARALLEL_MERGE_COORDINATES + 7);
    let mut uniform = crate::test_rng::uniform(7);
    let (mut values, mut indices, mut indptr, mut y) = (vec![], vec![], vec![0i64], vec![]);
    for _ in 0..n_rows {
        let mut row = (0..per_row)
            .map(|_| ((uniform() + 1.0) / 2.0 * n_features as f64) as i64)
            .collect::<Vec<_>>();
        row.sort_unstable();
        row.dedup();
        values.extend(row.iter().map(|_| uniform()));
        indices.extend(row);
        indptr.push(indices.len() as i64);
        y.push(if uniform() > 0.0 { 1.0 } else { -1.0 });
    }
    let x = Matrix::Csr64 {
        values: &values,
        indices: &indices,
        indptr: &indptr,
        n_cols: n_features,
    };
    let shuffled: Vec<usize> = (0..n_rows).map(|i| (i * 37) % n_rows).collect();
    for (rule, covariance) in [("AROW", "diag"), ("PA", "identity")] {
        let mut model = binary_of_width(rule, covariance, n_features);
        let mut expected = model.clone();
        let mut fit = ShardedFit::new(&model, 2).unwrap();
        for order in [None, Some(&shuffled[..]), None] {
            let stored: Vec<usize> = (0..n_rows).collect();
            expected = by_definition(&expected, &x, &y, order.unwrap_or(&stored), 2);
            assert!(fit
                .pass(
                    &mut model,
                    &x,
                    Targets::Values(&y),
                    (None, false),
                    order,
                    None
                )
                .unwrap());
            assert_eq!(model.clone().state(), expected.clone().state(), "{rule}");
        }
    }
}
