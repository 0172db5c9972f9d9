//! Tests of the data views, the row checks and validation in turn.

use super::*;

#[test]
fn validate_catches_malformed_csr() {
    let csr =
        |values: &'static [f64], indices: &'static [i32], indptr: &'static [i32]| Matrix::Csr32 {
            values,
            indices,
            indptr,
            n_cols: 3,
        };
    let values = &[1.0, 2.0];
    // (what, matrix, n_features, whether it is valid)
    let cases = [
        ("good", csr(values, &[0, 2], &[0, 1, 2]), 3, true),
        (
            "too many features",
            csr(values, &[0, 2], &[0, 1, 2]),
            4,
            false,
        ),
        ("out of range", csr(values, &[0, 3], &[0, 1, 2]), 3, false),
        ("negative", csr(values, &[-1, 0], &[0, 1, 2]), 3, false),
        ("decreasing", csr(values, &[0, 1], &[0, 2, 1]), 3, false),
        ("unsorted", csr(values, &[2, 0], &[0, 2, 2]), 3, false),
        ("repeated", csr(values, &[1, 1], &[0, 2, 2]), 3, false),
        ("across rows", csr(values, &[2, 0], &[0, 1, 2]), 3, true),
        ("short", csr(values, &[0, 1], &[0, 1]), 3, false),
        (
            "with nan",
            csr(&[1.0, f64::NAN], &[0, 1], &[0, 1, 2]),
            3,
            false,
        ),
    ];
    for (what, matrix, n_features, valid) in cases {
        assert_eq!(matrix.validate(n_features).is_ok(), valid, "{what}");
    }
}

/// Every row of up to four indices from -2..=3 (n_features 3), i32 and i64: accepted
/// exactly when each index is in range and they strictly increase (a negative index in the
/// middle of an increasing row included).
#[test]
fn check_indices_matches_its_definition() {
    let n_features = 3;
    let mut rows: Vec<Vec<i64>> = vec![vec![]];
    for _ in 0..4 {
        let longer: Vec<Vec<i64>> = rows
            .iter()
            .filter(|row| row.len() == rows.last().map_or(0, Vec::len))
            .flat_map(|row| (-2..=3).map(move |j| [row.clone(), vec![j]].concat()))
            .collect();
        rows.extend(longer);
    }
    for row in rows {
        let expected = row.iter().all(|&j| (0..n_features as i64).contains(&j))
            && row.windows(2).all(|pair| pair[0] < pair[1]);
        let narrow: Vec<i32> = row.iter().map(|&j| j as i32).collect();
        assert_eq!(check_indices(&row, n_features).is_ok(), expected, "{row:?}");
        assert_eq!(
            check_indices(&narrow, n_features).is_ok(),
            expected,
            "{row:?}"
        );
    }
}

#[test]
fn dense_and_sparse_rows_agree() {
    let dense = [0.0, 1.5, 0.0, -2.0];
    let mut a = vec![0.0; 4];
    Row::Dense(&dense).for_each(|j, x| a[j] += x);
    let mut b = vec![0.0; 4];
    Row::Sparse64(&[1, 3], &[1.5, -2.0]).for_each(|j, x| b[j] += x);
    assert_eq!(a, b);
}

/// Rows of two entries over 4 features, row i at features (i % 3, 3), value i + 1.
fn csr_of(n_rows: usize) -> (Vec<f64>, Vec<i32>, Vec<i32>) {
    let values = (0..2 * n_rows).map(|k| (k / 2 + 1) as f64).collect();
    let indices = (0..n_rows).flat_map(|i| [(i % 3) as i32, 3]).collect();
    let indptr = (0..=n_rows as i32).map(|i| 2 * i).collect();
    (values, indices, indptr)
}

#[test]
fn learning_in_turn_gives_the_chunks_in_order_and_the_whole_batchs_error() {
    let (mut values, mut indices, indptr) = csr_of(20);
    let learned = |values: &[f64], indices: &[i32], stop: Option<Stop>| {
        let x = Matrix::Csr32 {
            values,
            indices,
            indptr: &indptr,
            n_cols: 4,
        };
        let mut chunks = vec![];
        let result = learn_validated_in_turn(&x, 0..20, 4, 7, stop, |rows| {
            chunks.push(rows);
            Ok(())
        });
        let whole = x.validate(4);
        (chunks, result, whole)
    };
    let (chunks, result, _) = learned(&values, &indices, None);
    assert_eq!(chunks, [0..7, 7..14, 14..20]);
    assert_eq!(result, Ok(()));
    // A NaN in row 2 (first chunk), a repeated index in row 15 (third chunk): the whole
    // batch's validation reports the index, and so does the first chunk refused.
    values[5] = f64::NAN;
    indices[30] = 3;
    let (chunks, result, whole) = learned(&values, &indices, None);
    assert!(chunks.is_empty());
    assert!(whole.is_err());
    assert_eq!(result, whole);
    // A bad row in the second chunk: the first is learned, nothing after it.
    let (values, mut indices, _) = csr_of(20);
    indices[20] = 5;
    let (chunks, result, whole) = learned(&values, &indices, None);
    assert_eq!(chunks, vec![Range { start: 0, end: 7 }]);
    assert_eq!(result, whole);
    // Stopped after two chunks: the rest is not learned, and not validated either.
    let asked = std::sync::atomic::AtomicUsize::new(0);
    let stop = || asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 2;
    let (chunks, result, _) = learned(
        &values,
        &csr_of(20).1,
        Some(Stop {
            asked: &stop,
            every: 1,
        }),
    );
    assert_eq!(chunks, [0..7, 7..14]);
    assert_eq!(result, Ok(()));
}

#[test]
fn the_unit_scale_is_an_exact_power_of_two_that_brings_a_value_to_one_or_two() {
    for x in [
        1.0,
        1.5,
        2.0,
        0.75,
        1e160,
        1e-170,
        f64::MIN_POSITIVE,
        2f64.powi(1022),
    ] {
        let s = unit_scale(x);
        assert_eq!(s.to_bits() & ((1 << 52) - 1), 0, "{x}: not a power of two");
        assert!((1.0..2.0).contains(&(x * s)), "{x}");
    }
    // Past the normal exponents the factor stays a normal float: part of the way only.
    assert_eq!(unit_scale(f64::MAX), 2f64.powi(-1022));
    assert_eq!(unit_scale(1e-320), 2f64.powi(1022));
}

#[test]
fn a_row_at_its_unit_scale_scales_its_bias_feature_too() {
    let shape = Shape::new(2, true).unwrap();
    let (values, indices) = ([3e160, -1e160], [0i32, 1]);
    let squared = |x: &Features| x.squared_norm();
    for row in [Row::Dense(&values), Row::Sparse32(&indices, &values)] {
        let (s, norm2) = shape.at_unit_scale(row, squared);
        assert_eq!(s, unit_scale(3e160));
        let scaled = [3e160 * s, -1e160 * s, s];
        assert_eq!(norm2, scaled.iter().map(|x| x * x).sum::<f64>());
    }
    // An all-zero row without a bias feature stays as it is.
    let shape = Shape::new(2, false).unwrap();
    assert_eq!(
        shape.at_unit_scale(Row::Dense(&[0.0, 0.0]), squared),
        (1.0, 0.0)
    );
}
