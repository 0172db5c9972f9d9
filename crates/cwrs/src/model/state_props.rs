//! Property tests of restoring a model from its saved state (`from_state`, `with_state`): a
//! model trained on random rows and rebuilt from its state predicts and goes on learning
//! exactly as the original; a corrupted state (wrong lengths, NaN or infinity, non-positive
//! variances, an asymmetric Σ, Π or Gram matrix, a broken support set) is refused with an error,
//! and huge counters are accepted and saturate.

use proptest::prelude::*;

use crate::covariance::dual::{DualGaussian, DualState};
use crate::covariance::kernel::Kernel;
use crate::covariance::CovarianceKind;
use crate::data::{Matrix, Presentation, Shape};
use crate::learn::learner::DualLearner;
use crate::learn::learner::Learner;
use crate::learn::multiclass::{Multiclass, MulticlassLearner, Strategy as MulticlassStrategy};
use crate::learn::regression::Regressor;
use crate::learn::sparse_l1::{Penalty, L1};
use crate::rules::{RegressionRule, Rule, StepRule, REGRESSION_RULE_NAMES, RULE_NAMES};

/// Rows of `d` features (n × d, row-major) with small exact values, some of them zero.
#[derive(Clone, Debug)]
struct Data {
    d: usize,
    x: Vec<f64>,
    /// One draw per row, mapped to a label of each kind of model.
    draws: Vec<u8>,
}

impl Data {
    fn n(&self) -> usize {
        self.draws.len()
    }

    fn matrix(&self) -> Matrix<'_> {
        Matrix::Dense {
            values: &self.x,
            n_rows: self.n(),
            n_cols: self.d,
        }
    }

    fn signs(&self) -> Vec<f64> {
        self.draws
            .iter()
            .map(|&k| if k % 2 == 0 { 1.0 } else { -1.0 })
            .collect()
    }

    fn classes(&self, n_classes: usize) -> Vec<usize> {
        self.draws
            .iter()
            .map(|&k| usize::from(k) % n_classes)
            .collect()
    }

    fn targets(&self) -> Vec<f64> {
        self.draws
            .iter()
            .map(|&k| f64::from(k) / 8.0 - 10.0)
            .collect()
    }
}

fn data() -> impl Strategy<Value = Data> {
    (1usize..5, 1usize..16).prop_flat_map(|(d, n)| {
        let value = prop_oneof![Just(0.0), (-24i8..24).prop_map(|k| f64::from(k) / 8.0)];
        (
            proptest::collection::vec(value, n * d),
            proptest::collection::vec(any::<u8>(), n),
        )
            .prop_map(move |(x, draws)| Data { d, x, draws })
    })
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|x| x.to_bits()).collect()
}

/// A primal model's saved state.
#[derive(Clone, Debug)]
struct Primal {
    kind: CovarianceKind,
    n_features: usize,
    fit_intercept: bool,
    mean: Vec<f64>,
    covariance: Vec<f64>,
    counters: (u64, u64),
    /// Rows learned (kept by the rules that read them: docs/design.md §2.9).
    rounds: u64,
}

/// What a corruption does to a state.
#[derive(Clone, Copy, Debug)]
enum Corruption {
    /// One value more or fewer in the mean (false) or the covariance (true).
    Longer(bool),
    Shorter(bool),
    /// A NaN, +inf or −inf at position `at` (modulo the length).
    NonFinite(bool, usize, u8),
    /// A variance set to 0, −0 or a negative value (diagonal form).
    Variance(usize, u8),
    /// An off-diagonal entry of Σ changed on one side only (full form, two coordinates or more).
    Asymmetric(usize),
    /// Counters at u64::MAX: accepted, and learning saturates them.
    HugeCounters,
}

fn corruption() -> impl Strategy<Value = Corruption> {
    prop_oneof![
        any::<bool>().prop_map(Corruption::Longer),
        any::<bool>().prop_map(Corruption::Shorter),
        (any::<bool>(), any::<usize>(), 0u8..3)
            .prop_map(|(c, at, k)| Corruption::NonFinite(c, at, k)),
        (any::<usize>(), 0u8..3).prop_map(|(at, k)| Corruption::Variance(at, k)),
        any::<usize>().prop_map(Corruption::Asymmetric),
        Just(Corruption::HugeCounters),
    ]
}

impl Primal {
    /// The state corrupted, and whether the corruption must be refused (`None`: it does not
    /// apply to this state).
    fn corrupt(&self, how: Corruption) -> Option<(Primal, bool)> {
        let mut state = self.clone();
        let dim = state.mean.len();
        fn vector(state: &mut Primal, covariance: bool) -> &mut Vec<f64> {
            if covariance {
                &mut state.covariance
            } else {
                &mut state.mean
            }
        }
        match how {
            // One more covariance value is a whole pending rank-one term of a one-coordinate
            // full form, which a state may hold any number of.
            Corruption::Longer(true) if state.kind == CovarianceKind::Full && dim == 1 => {
                return None
            }
            Corruption::Longer(c) => vector(&mut state, c).push(0.5),
            Corruption::Shorter(c) => {
                vector(&mut state, c).pop()?;
            }
            Corruption::NonFinite(c, at, k) => {
                let v = vector(&mut state, c);
                let n = v.len();
                if n == 0 {
                    return None;
                }
                v[at % n] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][usize::from(k)];
            }
            Corruption::Variance(at, k) => {
                if state.kind != CovarianceKind::Diagonal {
                    return None;
                }
                state.covariance[at % dim] = [0.0, -0.0, -0.25][usize::from(k)];
            }
            Corruption::Asymmetric(at) => {
                if state.kind != CovarianceKind::Full || dim < 2 {
                    return None;
                }
                let (i, j) = (at % dim, (at / dim) % dim);
                let (i, j) = if i == j { (i, (i + 1) % dim) } else { (i, j) };
                state.covariance[i * dim + j] += 1.0;
            }
            Corruption::HugeCounters => {
                state.counters = (u64::MAX, u64::MAX);
                return Some((state, false));
            }
        }
        Some((state, true))
    }
}

/// A second-order rule with one of its covariance forms, or a first-order rule (identity).
fn rule_and_kind() -> impl Strategy<Value = (Rule, CovarianceKind)> {
    (0..RULE_NAMES.len(), any::<bool>()).prop_map(|(k, full)| {
        let rule = Rule::from_name(RULE_NAMES[k], &[]).unwrap();
        let kind = match (rule.is_second_order(), full) {
            // AdaGrad and FTRL keep their own state (docs/design.md §2.9).
            _ if rule.has_own_state() => {
                CovarianceKind::from_name(&RULE_NAMES[k].to_lowercase()).unwrap()
            }
            (false, _) => CovarianceKind::Identity,
            (true, false) => CovarianceKind::Diagonal,
            (true, true) => CovarianceKind::Full,
        };
        (rule, kind)
    })
}

fn binary_state(model: &Learner) -> Primal {
    Primal {
        kind: model.covariance_kind(),
        n_features: model.shape().n_features,
        fit_intercept: model.shape().fit_intercept,
        mean: model.mean().into_owned(),
        covariance: model.covariance_state().into_owned(),
        counters: (model.n_updates(), model.n_mistakes()),
        rounds: model.n_rounds(),
    }
}

fn binary_from(rule: Rule, s: &Primal) -> Result<Learner, crate::CwError> {
    Learner::from_state(
        rule,
        s.kind,
        s.n_features,
        s.fit_intercept,
        &s.mean,
        &s.covariance,
        s.counters.0,
        s.counters.1,
    )
    .map(|learner| learner.with_rounds(s.rounds))
}

/// μ·x of every row, as bits.
fn binary_scores(model: &Learner, data: &Data) -> Vec<u64> {
    let mut out = vec![0.0; data.n()];
    model.decision_function(&data.matrix(), &mut out).unwrap();
    bits(&out)
}

fn trained_binary(rule: Rule, kind: CovarianceKind, intercept: bool, data: &Data) -> Learner {
    let mut model = Learner::new(rule, kind, data.d, intercept, 1.0).unwrap();
    model
        .partial_fit(&data.matrix(), &data.signs(), Presentation::default())
        .unwrap();
    model
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Binary learners of every rule and covariance form (with an L1 penalty, sometimes, on the
    /// diagonal form): restored, they predict the same and go on learning the same.
    #[test]
    fn binary_round_trip((rule, kind) in rule_and_kind(), intercept: bool, l1: bool, data in data()) {
        let mut model = trained_binary(rule, kind, intercept, &data);
        let penalty = |model: &Learner| {
            L1::for_shape(Penalty::CoordinateDependent, 0.01, false, model.shape()).unwrap()
        };
        let l1 = l1 && kind == CovarianceKind::Diagonal;
        if l1 {
            let l1 = penalty(&model);
            model = model.with_l1(l1).unwrap();
            model.partial_fit(&data.matrix(), &data.signs(), Presentation::default()).unwrap();
        }
        let mut restored = binary_from(rule, &binary_state(&model)).unwrap();
        if let Some(state) = model.l1() {
            let fresh = penalty(&restored).with_state(state.total(), state.last()).unwrap();
            restored = restored.with_l1(fresh).unwrap();
        }
        prop_assert_eq!(binary_scores(&restored, &data), binary_scores(&model, &data));
        // Learning on: the same states (the full form's pending terms are part of its state).
        let y = data.signs();
        for model in [&mut model, &mut restored] {
            model.partial_fit(&data.matrix(), &y, Presentation::default()).unwrap();
        }
        let (a, b) = (binary_state(&model), binary_state(&restored));
        prop_assert_eq!(bits(&a.mean), bits(&b.mean));
        prop_assert_eq!(bits(&a.covariance), bits(&b.covariance));
        prop_assert_eq!(a.counters, b.counters);
        prop_assert_eq!(model.l1(), restored.l1());
    }

    #[test]
    fn corrupted_binary_states_are_refused(
        (rule, kind) in rule_and_kind(),
        intercept: bool,
        data in data(),
        how in corruption(),
    ) {
        let model = trained_binary(rule, kind, intercept, &data);
        let Some((state, refused)) = binary_state(&model).corrupt(how) else {
            return Ok(());
        };
        match binary_from(rule, &state) {
            Err(_) => prop_assert!(refused, "{:?} refused", how),
            Ok(mut restored) => {
                prop_assert!(!refused, "{:?} accepted", how);
                restored.partial_fit(&data.matrix(), &data.signs(), Presentation::default()).unwrap();
                prop_assert_eq!((restored.n_updates(), restored.n_mistakes()), state.counters);
            }
        }
    }

    /// Multiclass learners: means and covariances out, the same scores back; corrupted class
    /// states refused.
    #[test]
    fn multiclass_round_trip_and_corruption(
        (rule, kind) in rule_and_kind(),
        n_classes in 2usize..5,
        ovr: bool,
        intercept: bool,
        data in data(),
        how in corruption(),
    ) {
        let strategy = if ovr { MulticlassStrategy::OneVsRest } else { MulticlassStrategy::MaxScore };
        let mut model =
            MulticlassLearner::new(
                Multiclass { rule, strategy },
                kind,
                n_classes,
                Shape::new(data.d, intercept).unwrap(),
                1.0,
            )
            .unwrap();
        let labels = data.classes(n_classes);
        model.partial_fit(&data.matrix(), &labels, Presentation::default()).unwrap();
        let state = Primal {
            kind,
            n_features: data.d,
            fit_intercept: intercept,
            mean: model.means(),
            covariance: model.covariances(),
            counters: (model.n_updates(), model.n_mistakes()),
            rounds: model.n_rounds(),
        };
        let restore = |s: &Primal| {
            let shape = Shape::new(s.n_features, s.fit_intercept)?;
            MulticlassLearner::from_state(
                Multiclass { rule, strategy },
                s.kind,
                n_classes,
                shape,
                &s.mean,
                &s.covariance,
                s.counters.0,
                s.counters.1,
            )
        };
        let restored = restore(&state).unwrap();
        let scores = |m: &MulticlassLearner| {
            let mut out = vec![0.0; data.n() * n_classes];
            m.decision_function(&data.matrix(), &mut out).unwrap();
            bits(&out)
        };
        prop_assert_eq!(scores(&restored), scores(&model));
        // Corruptions of the whole (all classes') vectors: the lengths no longer divide, or a
        // class gets a bad value.
        let Some((corrupted, refused)) = corrupt_classes(&state, how, n_classes) else {
            return Ok(());
        };
        match restore(&corrupted) {
            Err(_) => prop_assert!(refused, "{:?} refused", how),
            Ok(mut restored) => {
                prop_assert!(!refused, "{:?} accepted", how);
                restored.partial_fit(&data.matrix(), &labels, Presentation::default()).unwrap();
            }
        }
    }

    #[test]
    fn regression_round_trip_and_corruption(
        rule in 0..REGRESSION_RULE_NAMES.len(),
        full: bool,
        intercept: bool,
        data in data(),
        how in corruption(),
    ) {
        let rule = RegressionRule::from_name(REGRESSION_RULE_NAMES[rule], &[]).unwrap();
        let kind = match (rule.is_second_order(), full) {
            (false, _) => CovarianceKind::Identity,
            (true, false) => CovarianceKind::Diagonal,
            (true, true) => CovarianceKind::Full,
        };
        let mut model = Regressor::new(rule, kind, data.d, intercept, 1.0).unwrap();
        model.partial_fit(&data.matrix(), &data.targets(), Presentation::default()).unwrap();
        let state = Primal {
            kind,
            n_features: data.d,
            fit_intercept: intercept,
            mean: model.mean().into_owned(),
            covariance: model.covariance_state().into_owned(),
            counters: (model.n_updates(), 0),
            rounds: 0,
        };
        let restore = |s: &Primal| {
            Regressor::from_state(
                rule, s.kind, s.n_features, s.fit_intercept, &s.mean, &s.covariance, s.counters.0, 0,
            )
        };
        let predictions = |m: &Regressor| {
            let mut out = vec![0.0; data.n()];
            m.predict(&data.matrix(), &mut out).unwrap();
            bits(&out)
        };
        prop_assert_eq!(predictions(&restore(&state).unwrap()), predictions(&model));
        let Some((corrupted, refused)) = state.corrupt(how) else {
            return Ok(());
        };
        match restore(&corrupted) {
            Err(_) => prop_assert!(refused, "{:?} refused", how),
            Ok(mut restored) => {
                prop_assert!(!refused, "{:?} accepted", how);
                restored.partial_fit(&data.matrix(), &data.targets(), Presentation::default()).unwrap();
                prop_assert_eq!(restored.n_updates(), u64::MAX);
            }
        }
    }

    /// Kernel learners (with a budget, sometimes): the support set and coefficients out, the
    /// same scores back and the same learning after; broken support sets and asymmetric Π or
    /// Gram matrices refused.
    #[test]
    fn kernel_round_trip_and_corruption(
        rule in 0..RULE_NAMES.len(),
        kernel in 0usize..3,
        budget in prop::option::of(1usize..6),
        intercept: bool,
        data in data(),
        how in 0u8..7,
        at: usize,
    ) {
        let rule = Rule::from_name(RULE_NAMES[rule], &[]).unwrap();
        // Rules with a kernel form; those that read a context also restore their rounds and a
        // (the estimator's state: tests/test_catalog_kernel.py).
        prop_assume!(rule.has_kernel_form() && !rule.needs_context());
        let kernel = [Kernel::Linear, Kernel::Rbf { gamma: 0.5 }, Kernel::Poly { gamma: 0.5, degree: 2, coef0: 1.0 }][kernel].clone();
        let mut model = DualLearner::new(rule, kernel.clone(), data.d, intercept, 1.0, budget).unwrap();
        model.partial_fit(&data.matrix(), &data.signs(), Presentation::default()).unwrap();
        let g = model.model();
        let (values, indices, indptr) = g.support_vectors();
        let (nu, pi, gram) = (g.dual_coef().to_vec(), g.dual_covariance(), g.gram());
        let fresh = |budget| {
            DualGaussian::new(kernel.clone(), rule.is_second_order(), data.d, intercept, 1.0, budget).unwrap()
        };
        let restore = |budget, values: &[f64], indices: &[u32], indptr: &[u64], nu: &[f64], pi: &[f64], gram: &[f64]| {
            fresh(budget).with_state(DualState { values, indices, indptr, nu, pi, gram })
        };
        let mut restored = DualLearner::from_gaussian(
            rule,
            restore(budget, &values, &indices, &indptr, &nu, &pi, &gram).unwrap(),
        );
        let scores = |m: &DualLearner| {
            let mut out = vec![0.0; data.n()];
            m.decision_function(&data.matrix(), &mut out).unwrap();
            bits(&out)
        };
        prop_assert_eq!(scores(&restored), scores(&model));
        for m in [&mut model, &mut restored] {
            m.partial_fit(&data.matrix(), &data.signs(), Presentation::default()).unwrap();
        }
        prop_assert_eq!(scores(&restored), scores(&model));
        prop_assert_eq!(restored.model().support_vectors(), model.model().support_vectors());

        let n = nu.len();
        let (mut values, mut indices, mut indptr) = (values, indices, indptr);
        let (mut nu, mut pi, mut gram, mut budget) = (nu, pi, gram, budget);
        match how {
            0 => nu.push(0.0),
            1 if n > 0 => nu[at % n] = f64::NAN,
            2 if n >= 2 => gram[1] += 1.0, // (0, 1) but not (1, 0)
            3 if n >= 2 && !pi.is_empty() => pi[1] += 1.0,
            4 if n >= 2 => budget = Some(n - 1),
            5 if !indices.is_empty() => {
                let k = at % indices.len();
                indices[k] = data.d as u32;
            }
            6 if n > 0 => {
                indptr[n] += 1; // beyond the data
                values.push(1.0);
                indices.push(u32::MAX);
            }
            _ => return Ok(()),
        }
        prop_assert!(restore(budget, &values, &indices, &indptr, &nu, &pi, &gram).is_err(), "corruption {}", how);
    }
}

/// A corruption of a multiclass state (all classes' vectors concatenated), applied to its last
/// class; `None` when it does not apply.
fn corrupt_classes(state: &Primal, how: Corruption, n_classes: usize) -> Option<(Primal, bool)> {
    let per_class = |v: &[f64]| v.len() / n_classes;
    let (m, c) = (per_class(&state.mean), per_class(&state.covariance));
    let last = Primal {
        mean: state.mean[(n_classes - 1) * m..].to_vec(),
        covariance: state.covariance[(n_classes - 1) * c..].to_vec(),
        ..state.clone()
    };
    let (corrupted, refused) = last.corrupt(how)?;
    let mut whole = state.clone();
    whole.mean.truncate((n_classes - 1) * m);
    whole.mean.extend(corrupted.mean);
    whole.covariance.truncate((n_classes - 1) * c);
    whole.covariance.extend(corrupted.covariance);
    whole.counters = corrupted.counters;
    // One value more or fewer in all: no longer n_classes equal parts.
    Some((whole, refused))
}
