//! The values a model shows by name (Python: the read-only attributes of `_cwrs.Model`), so
//! that the bindings read every one of them the same way.

use cwrs::model::state::{State, Value};
use cwrs::model::{AnyLearner, Model};

/// The value named `name` of `model`, `None` where the model has no such value (the dual form
/// has no mean). A multiclass model's mean and covariance hold one row per class, one after the
/// other.
///
/// - `kind`, `n_classes` (`None` for one output per row), `n_updates`, `n_mistakes` (`None`
///   for a regressor), `mean`, `covariance`, `dense_covariance`, `dual_coef`,
///   `noise_since_reset`, `class_counts`: the methods of the same names;
/// - `covariance_kind`: the form's name ("identity", "diag", "full", ...; `None` for a kernel
///   model);
/// - `n_support`: a binary kernel model's support rows, or one count per class;
/// - `support_vectors`: a binary kernel model's support rows as CSR arrays `values`,
///   `indices` and `indptr`;
/// - `config`: the configuration entries the model was built from.
pub fn attribute(model: &Model, name: &str) -> Option<Value<'static>> {
    Some(match name {
        "kind" => model.kind().into(),
        "n_classes" => model.n_classes().into(),
        "covariance_kind" => model.covariance_kind().map(|kind| kind.name()).into(),
        "mean" => model.mean()?.into(),
        "covariance" => model.covariance()?.into(),
        "dense_covariance" => model.dense_covariance()?.into(),
        "n_updates" => model.n_updates().into(),
        "n_mistakes" => model.n_mistakes().into(),
        "n_support" => {
            let counts = model.n_support()?;
            match model.model() {
                AnyLearner::Kernel(_) => counts[0].into(),
                _ => counts
                    .into_iter()
                    .map(|n| n as u64)
                    .collect::<Vec<_>>()
                    .into(),
            }
        }
        "dual_coef" => model.dual_coef()?.into(),
        "support_vectors" => {
            let (values, indices, indptr) = model.support_vectors()?;
            let rows = State::default().with("values", values);
            rows.with("indices", indices).with("indptr", indptr).into()
        }
        "config" => model.config().into(),
        "noise_since_reset" => model.noise_since_reset().into(),
        "noise_variance" => model.noise_variance().into(),
        "prior_variance" => model.prior_variance().into(),
        "class_counts" => model.class_counts().to_vec().into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cwrs::data::{Matrix, Presentation};
    use cwrs::model::Targets;

    fn fitted(config: State<'static>) -> Model {
        let mut model = Model::new(config, None).unwrap();
        let x = [1.0, 0.5, -1.0, 0.2, 0.8, -0.1, -0.3, -0.9];
        let x = Matrix::Dense {
            values: &x,
            n_rows: 4,
            n_cols: 2,
        };
        let y = Targets::Values(&[1.0, -1.0, 1.0, -1.0]);
        model.partial_fit(&x, y, Presentation::default()).unwrap();
        model
    }

    fn config(kind: &str) -> State<'static> {
        let config = State::default().with("kind", kind).with("rule", "AROW");
        let config = config.with("params", vec![("r".to_string(), 1.0)]);
        let config = config
            .with("n_features", 2usize)
            .with("fit_intercept", true);
        let config = config.with("a", 1.0).with("covariance", "full");
        let config = config.with("kernel", "rbf").with("gamma", 0.5);
        config.with("degree", 3usize).with("coef0", 0.0)
    }

    #[test]
    fn names_give_the_values_of_the_methods_of_the_same_names() {
        let linear = fitted(config("binary"));
        let get = |name| attribute(&linear, name);
        assert_eq!(get("kind"), Some(Value::from(linear.kind())));
        assert_eq!(get("n_updates"), Some(Value::from(linear.n_updates())));
        assert_eq!(get("n_mistakes"), Some(Value::from(linear.n_mistakes())));
        assert_eq!(get("n_classes"), Some(Value::from(linear.n_classes())));
        assert_eq!(get("mean"), linear.mean().map(Value::from));
        assert_eq!(get("covariance"), linear.covariance().map(Value::from));
        assert_eq!(
            get("dense_covariance"),
            linear.dense_covariance().map(Value::from)
        );
        assert_eq!(get("covariance_kind"), Some(Value::from("full")));
        assert_eq!(get("config"), Some(Value::from(linear.config().clone())));
        assert_eq!((get("n_support"), get("dual_coef")), (None, None));
        assert_eq!(get("no such attribute"), None);

        let kernel = fitted(config("kernel"));
        let get = |name| attribute(&kernel, name);
        let n = kernel.n_support().unwrap()[0];
        assert!(n > 0);
        assert_eq!(get("n_support"), Some(Value::from(n)));
        assert_eq!(get("dual_coef"), kernel.dual_coef().map(Value::from));
        assert_eq!(
            (get("mean"), get("covariance_kind")),
            (None, Some(Value::None))
        );
        let Some(Value::State(rows)) = get("support_vectors") else {
            panic!("a kernel model shows its support rows");
        };
        let (values, _, indptr) = kernel.support_vectors().unwrap();
        assert_eq!(rows.entries.get("values"), Some(&Value::from(values)));
        assert_eq!(rows.entries.get("indptr"), Some(&Value::from(indptr)));
    }
}
