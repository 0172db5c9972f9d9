//! `learn_chunk` against `Estimator::partial_fit` on the same rows, and its refusals.

use super::*;
use crate::data::libsvm::{IndexBase, Reader};
use crate::data::Matrix;
use crate::state::State;

const TEXT: &str = "2 1:0.5 3:-1\n1 2:2\n3 1:1 2:1 3:1\n2 3:0.25\n";

fn chunk(text: &str) -> Chunk {
    let mut chunk = Chunk::default();
    Reader::new(text.as_bytes(), IndexBase::One, usize::MAX)
        .next_chunk(&mut chunk)
        .unwrap();
    chunk
}

fn model(kind: &str, n_classes: usize) -> Estimator {
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
    Estimator::new(config, None).unwrap()
}

/// The same rows as a CSR matrix 4 wide through `partial_fit`.
fn by_hand(mut estimator: Estimator, targets: Targets) -> Estimator {
    let c = chunk(TEXT);
    let x = Matrix::Csr64 {
        values: c.values(),
        indices: c.indices(),
        indptr: c.indptr(),
        n_cols: 4,
    };
    let presentation = Presentation {
        repeats: None,
        order: None,
        stop: None,
    };
    estimator.partial_fit(&x, targets, presentation).unwrap();
    estimator
}

fn learned(mut estimator: Estimator, labels: &FileLabels) -> Result<Estimator, CwError> {
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
    let mut a = learned(model("multiclass", 3), &three).unwrap();
    let mut b = by_hand(model("multiclass", 3), Targets::Classes(&[1, 0, 2, 1]));
    assert_eq!(a.state(), b.state());
    let values = FileLabels::new(&model("regressor", 3), None).unwrap();
    let mut a = learned(model("regressor", 3), &values).unwrap();
    let mut b = by_hand(
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
        repeats: None,
        order: None,
        stop: None,
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
