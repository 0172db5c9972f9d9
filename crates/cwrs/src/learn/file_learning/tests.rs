//! `learn_chunk` against `Model::partial_fit` on the same rows, and its refusals.

use super::*;
use crate::data::libsvm::{IndexBase, Reader};
use crate::data::Matrix;
use crate::model::state::State;

const TEXT: &str = "2 1:0.5 3:-1\n1 2:2\n3 1:1 2:1 3:1\n2 3:0.25\n";

fn chunk(text: &str) -> Chunk {
    let mut chunk = Chunk::default();
    Reader::new(text.as_bytes(), IndexBase::One, usize::MAX)
        .next_chunk(&mut chunk)
        .unwrap();
    chunk
}

fn model(kind: &str, n_classes: usize) -> Model {
    let config = State::default()
        .with("kind", kind)
        .with("rule", "AROW")
        .with("params", vec![("r".to_string(), 0.5)])
        .with("n_features", 4usize)
        .with("fit_intercept", true)
        .with("a", 1.0)
        .with("covariance", "diag")
        .with("penalty", None::<String>)
        .with("strategy", "max-score")
        .with("n_classes", n_classes);
    Model::new(config, None).unwrap()
}

/// The same rows as a CSR matrix 4 wide through `partial_fit`.
fn by_hand(mut estimator: Model, targets: Targets) -> Model {
    let c = chunk(TEXT);
    let x = Matrix::Csr64 {
        values: c.values(),
        indices: c.indices(),
        indptr: c.indptr(),
        n_cols: 4,
    };
    let presentation = Presentation {
        weights: None,
        order: None,
        stop: None,
        balanced: false,
    };
    estimator.partial_fit(&x, targets, presentation).unwrap();
    estimator
}

fn learned(mut estimator: Model, labels: &FileLabels) -> Result<Model, CwError> {
    learn_chunk(
        &mut estimator,
        &chunk(TEXT),
        4,
        labels,
        &mut Scratch::default(),
    )?;
    Ok(estimator)
}

#[test]
fn a_chunk_learns_as_partial_fit_does() {
    let three = FileLabels::new(&model("multiclass", 3), Some(vec![1.0, 2.0, 3.0])).unwrap();
    let a = learned(model("multiclass", 3), &three).unwrap();
    let b = by_hand(model("multiclass", 3), Targets::Classes(&[1, 0, 2, 1]));
    assert_eq!(a.state(), b.state());
    let values = FileLabels::new(&model("regressor", 3), None).unwrap();
    let a = learned(model("regressor", 3), &values).unwrap();
    let b = by_hand(
        model("regressor", 3),
        Targets::Values(&[2.0, 1.0, 3.0, 2.0]),
    );
    assert_eq!(a.state(), b.state());
}

#[test]
fn binary_labels_are_minus_one_and_plus_one_and_others_are_refused() {
    let two = FileLabels::new(&model("binary", 2), Some(vec![2.0, 3.0])).unwrap();
    let text = "2 1:0.5\n3 2:1\n2 3:1\n";
    let (mut a, mut b) = (model("binary", 2), model("binary", 2));
    learn_chunk(&mut a, &chunk(text), 4, &two, &mut Scratch::default()).unwrap();
    let c = chunk(text);
    let x = c.matrix(4);
    let presentation = Presentation {
        weights: None,
        order: None,
        stop: None,
        balanced: false,
    };
    b.partial_fit(&x, Targets::Values(&[-1.0, 1.0, -1.0]), presentation)
        .unwrap();
    assert_eq!(a.state(), b.state());
    let error = learned(model("binary", 2), &two).unwrap_err().to_string();
    assert!(
        error.contains("line 2: the label 1 is not in classes"),
        "{error}"
    );
}

#[test]
fn refusals_name_the_line() {
    let values = FileLabels::new(&model("regressor", 3), None).unwrap();
    let mut estimator = model("regressor", 3);
    let wide = chunk("1 1:1\n1 9:1\n");
    let error = learn_chunk(&mut estimator, &wide, 4, &values, &mut Scratch::default());
    let error = error.unwrap_err().to_string();
    assert!(error.contains("line 2: n_features was set to 4"), "{error}");
    let three = model("multiclass", 3);
    assert!(FileLabels::new(&three, Some(vec![2.0, 1.0, 3.0])).is_err());
    assert!(FileLabels::new(&three, Some(vec![1.0, 2.0])).is_err());
    assert!(FileLabels::new(&model("binary", 2), None).is_err());
    assert!(FileLabels::new(&estimator, Some(vec![1.0, 2.0])).is_err());
}

/// The row checks `learn_chunk` skips are the reader's: a line with a value or label that is
/// not finite, or an index written twice, never becomes a chunk; an unsorted line is learned
/// sorted, as `partial_fit` learns the sorted row; a chunk wider than n_features is refused
/// before any of its rows is learned.
#[test]
fn rows_the_reader_refuses_never_reach_the_learner() {
    for bad in [
        "1 1:nan\n",
        "1 1:-inf\n",
        "1 2:1e999\n",
        "1 2:1 2:3\n",
        "inf 1:1\n",
        "1 3:1 1:2 3:4\n",
    ] {
        let mut chunk = Chunk::default();
        let read = Reader::new(bad.as_bytes(), IndexBase::One, usize::MAX).next_chunk(&mut chunk);
        assert!(read.is_err(), "{bad:?} was read");
    }
    let values = FileLabels::new(&model("regressor", 3), None).unwrap();
    let unsorted = chunk("1 3:1 1:2\n2 2:0.5 1:1 4:3\n");
    let mut a = model("regressor", 3);
    learn_chunk(&mut a, &unsorted, 4, &values, &mut Scratch::default()).unwrap();
    let x = Matrix::Csr64 {
        values: &[2.0, 1.0, 1.0, 0.5, 3.0],
        indices: &[0, 2, 0, 1, 3],
        indptr: &[0, 2, 5],
        n_cols: 4,
    };
    let mut b = model("regressor", 3);
    b.partial_fit(&x, Targets::Values(&[1.0, 2.0]), Presentation::default())
        .unwrap();
    assert_eq!(a.state(), b.state());
    let mut c = model("regressor", 3);
    let before = c.state();
    assert!(learn_chunk(&mut c, &unsorted, 3, &values, &mut Scratch::default()).is_err());
    assert_eq!(c.state(), before);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            12 => (-400i32..400).prop_map(|k| (f64::from(k) / 8.0).to_string()),
            1 => Just("nan".to_string()),
            1 => Just("inf".to_string()),
            1 => Just("-1e999".to_string()),
            1 => Just("1e-400".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Whatever the text, a chunk the reader returns passes every check of a row's
        /// contents that `learn_chunk` skips (at the chunk's own width).
        #[test]
        fn a_chunk_read_holds_only_valid_rows(
            lines in prop::collection::vec(
                (value(), prop::collection::vec((1u64..12, value()), 0..6)), 1..8)
        ) {
            let text: String = lines
                .iter()
                .map(|(label, entries)| {
                    let entries = entries.iter().map(|(j, x)| format!(" {j}:{x}"));
                    format!("{label}{}\n", entries.collect::<String>())
                })
                .collect();
            let mut chunk = Chunk::default();
            let mut reader = Reader::new(text.as_bytes(), IndexBase::One, usize::MAX);
            if reader.next_chunk(&mut chunk).is_ok() {
                let width = chunk.n_features();
                prop_assert!(chunk.matrix(width).validate(width).is_ok(), "{text:?}");
                prop_assert!(chunk.labels().iter().all(|y| y.is_finite()));
            }
        }
    }
}
