//! Arbitrary saved state through every constructor that rebuilds a model from it: the binary
//! learner (every primal form: identity, diagonal, full, low-rank, AdaGrad's and FTRL's state;
//! with or without an L1 penalty and its lazy state), the multiclass learner, the regressor, and the kernel (dual) learner, binary and
//! multiclass. An inconsistent state must give `Err`, never a panic. A state that is accepted
//! must give a model that predicts and learns rows without panicking, and whose own state,
//! saved again after learning, is accepted back and rebuilds the same model.
#![no_main]

use arbitrary::Arbitrary;
use cwrs::covariance::dual::{DualGaussian, DualState};
use cwrs::covariance::Covariance;
use cwrs::covariance::CovarianceKind;
use cwrs::data::{Matrix, Presentation, Row, Shape};
use cwrs::covariance::kernel::Kernel;
use cwrs::learn::learner::DualLearner;
use cwrs::learn::learner::Learner;
use cwrs::learn::multiclass::{Multiclass, MulticlassLearner, Strategy};
use cwrs::learn::regression::Regressor;
use cwrs::rules::{RegressionRule, Rule, REGRESSION_RULE_NAMES, RULE_NAMES};
use cwrs::learn::sparse_l1::{Penalty, L1};
use cwrs::CwError;
use libfuzzer_sys::fuzz_target;

/// The most values any one vector of a state gets, so that a run never allocates much.
const MAX_LEN: usize = 1 << 12;

/// A float: mostly small exact values, sometimes special ones, sometimes any bit pattern.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Value {
    Small(i8),
    Special(u8),
    Raw(f64),
}

const SPECIALS: [f64; 16] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    f64::MAX,
    f64::MIN,
    1e-300,
    1e300,
    1e154,
    0.5,
];

impl Value {
    fn get(self) -> f64 {
        match self {
            Value::Small(k) => f64::from(k) / 8.0,
            Value::Special(k) => SPECIALS[usize::from(k) % SPECIALS.len()],
            Value::Raw(x) => x,
        }
    }
}

/// How long a vector is next to the length the state needs.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Len {
    Exact,
    Longer(u8),
    Shorter(u8),
    Any(u16),
}

/// A state vector: its length relative to the expected one, and values cycled to fill it.
#[derive(Arbitrary, Clone, Debug)]
struct Vector {
    len: Len,
    values: Vec<Value>,
    /// Whether a square matrix is mirrored to be exactly symmetric (as saved states are).
    symmetric: bool,
}

impl Vector {
    /// The vector for a state that expects `expected` values; `fill` when no value is given.
    fn build(&self, expected: usize, fill: f64) -> Vec<f64> {
        let n = match self.len {
            Len::Exact => expected,
            Len::Longer(k) => expected.saturating_add(1 + usize::from(k % 4)),
            Len::Shorter(k) => expected.saturating_sub(1 + usize::from(k % 4)),
            Len::Any(n) => usize::from(n),
        }
        .min(MAX_LEN);
        if self.values.is_empty() {
            return vec![fill; n];
        }
        (0..n)
            .map(|i| self.values[i % self.values.len()].get())
            .collect()
    }

    /// A `side`×`side` matrix (row-major), then `extra` more values; mirrored when asked.
    fn matrix(&self, side: usize, extra: usize, fill: f64) -> Vec<f64> {
        let mut m = self.build(side.saturating_mul(side).saturating_add(extra), fill);
        if self.symmetric && m.len() >= side.saturating_mul(side) {
            for i in 0..side {
                for j in 0..i {
                    m[i * side + j] = m[j * side + i];
                }
            }
        }
        m
    }
}

/// A count: mostly small, sometimes any value (to reach overflows).
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Count {
    Small(u8),
    Raw(u64),
}

impl Count {
    fn get(self) -> usize {
        match self {
            Count::Small(k) => usize::from(k % 12),
            Count::Raw(k) => k as usize,
        }
    }
}

/// A row to predict or learn, over a model of `n_features` features.
#[derive(Arbitrary, Clone, Debug)]
enum RowSpec {
    Dense(Vec<Value>),
    /// Indices taken modulo n_features (+1, so that some are out of range), sorted and
    /// deduplicated unless `raw`.
    Sparse {
        entries: Vec<(u16, Value)>,
        raw: bool,
    },
}

/// Rows as one CSR matrix, with i64 indices.
struct Rows {
    values: Vec<f64>,
    indices: Vec<i64>,
    indptr: Vec<i64>,
    dense: Vec<Vec<f64>>,
}

impl Rows {
    fn new(specs: &[RowSpec], n_features: usize) -> Rows {
        let width = n_features.min(MAX_LEN);
        let mut rows = Rows {
            values: vec![],
            indices: vec![],
            indptr: vec![0],
            dense: vec![],
        };
        for spec in specs.iter().take(8) {
            let mut entries: Vec<(i64, f64)> = match spec {
                RowSpec::Dense(values) => {
                    let row: Vec<f64> = (0..width)
                        .map(|j| values.get(j).map_or(0.0, |v| v.get()))
                        .collect();
                    rows.dense.push(row.clone());
                    row.into_iter()
                        .enumerate()
                        .filter(|&(_, x)| x != 0.0)
                        .map(|(j, x)| (j as i64, x))
                        .collect()
                }
                RowSpec::Sparse { entries, .. } => entries
                    .iter()
                    .take(64)
                    .map(|&(j, x)| ((usize::from(j) % (width + 1)) as i64, x.get()))
                    .collect(),
            };
            if !matches!(spec, RowSpec::Sparse { raw: true, .. }) {
                entries.sort_by_key(|e| e.0);
                entries.dedup_by_key(|e| e.0);
            }
            for (j, x) in entries {
                rows.indices.push(j);
                rows.values.push(x);
            }
            rows.indptr.push(rows.indices.len() as i64);
        }
        rows
    }

    fn matrix(&self, n_features: usize) -> Matrix<'_> {
        Matrix::Csr64 {
            values: &self.values,
            indices: &self.indices,
            indptr: &self.indptr,
            n_cols: n_features,
        }
    }

    fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    fn row(&self, i: usize) -> Row<'_> {
        let (start, end) = (self.indptr[i] as usize, self.indptr[i + 1] as usize);
        Row::Sparse64(&self.indices[start..end], &self.values[start..end])
    }
}

/// The L1 penalty and its lazy state.
#[derive(Arbitrary, Clone, Debug)]
struct L1Spec {
    uniform: bool,
    lambda: Value,
    penalize_intercept: bool,
    total: Value,
    last: Vector,
}

impl L1Spec {
    fn build(&self, n_features: usize, fit_intercept: bool, dim: usize) -> Option<L1> {
        let penalty = if self.uniform {
            Penalty::Uniform
        } else {
            Penalty::CoordinateDependent
        };
        let exempt = (fit_intercept && !self.penalize_intercept).then_some(n_features);
        let l1 = L1::new(penalty, self.lambda.get(), exempt, dim).ok()?;
        l1.with_state(self.total.get(), &self.last.build(dim, 0.0))
            .ok()
    }
}

/// The common part of a primal (linear) model's state.
#[derive(Arbitrary, Clone, Debug)]
struct Primal {
    rule: u8,
    kind: u8,
    n_features: Count,
    fit_intercept: bool,
    mean: Vector,
    covariance: Vector,
    /// Pending rank-one terms of a full covariance.
    pending: u8,
    n_updates: u64,
    n_mistakes: u64,
    l1: Option<L1Spec>,
    rows: Vec<RowSpec>,
    labels: Vec<u8>,
}

impl Primal {
    /// Every primal form (AdaGrad's and FTRL's with default parameters: the rule's own
    /// replace them).
    fn kind(&self) -> CovarianceKind {
        match self.kind % 6 {
            0 => CovarianceKind::Identity,
            1 => CovarianceKind::Diagonal,
            2 => CovarianceKind::Full,
            3 => CovarianceKind::LowRank {
                rank: 1 + usize::from(self.kind / 6 % 3),
            },
            4 => CovarianceKind::from_name("adagrad").unwrap(),
            _ => CovarianceKind::from_name("ftrl").unwrap(),
        }
    }

    /// The rule: AdaGrad's and FTRL's forms take their own (any other is refused).
    fn rule(&self) -> Rule {
        let name = match self.kind() {
            CovarianceKind::AdaGrad { .. } => "AdaGrad",
            CovarianceKind::Ftrl { .. } => "FTRL",
            _ => RULE_NAMES[usize::from(self.rule) % RULE_NAMES.len()],
        };
        Rule::from_name(name, &[]).unwrap()
    }

    fn dim(&self) -> usize {
        self.n_features
            .get()
            .saturating_add(usize::from(self.fit_intercept))
    }

    fn covariance(&self, dim: usize) -> Vec<f64> {
        match self.kind() {
            CovarianceKind::Identity => self.covariance.build(0, 1.0),
            CovarianceKind::Diagonal => self.covariance.build(dim, 1.0),
            CovarianceKind::Full => {
                let pending = usize::from(self.pending % 3);
                self.covariance
                    .matrix(dim, pending.saturating_mul(dim), 1.0)
            }
            // S, then 2k sketch rows.
            CovarianceKind::LowRank { rank } => {
                let rows = 1 + 2 * rank;
                self.covariance.build(rows.saturating_mul(dim), 1.0)
            }
            CovarianceKind::AdaGrad { .. } | CovarianceKind::Ftrl { .. } => {
                self.covariance.build(dim, 0.0)
            }
        }
    }

    fn label(&self, i: usize) -> u8 {
        self.labels.get(i).copied().unwrap_or(0)
    }
}

#[derive(Arbitrary, Debug)]
enum Case {
    Binary(Primal),
    Multiclass {
        primal: Primal,
        n_classes: Count,
        ovr: bool,
    },
    Regression(Primal),
    Kernel(KernelSpec),
}

#[derive(Arbitrary, Clone, Debug)]
struct KernelSpec {
    rule: u8,
    kernel: u8,
    gamma: Value,
    degree: u8,
    coef0: Value,
    n_features: Count,
    fit_intercept: bool,
    a: Value,
    budget: Option<u8>,
    /// One support set per class (one class: the binary learner).
    classes: Vec<SupportSpec>,
    ovr: bool,
    n_updates: u64,
    n_mistakes: u64,
    rows: Vec<RowSpec>,
    labels: Vec<u8>,
}

#[derive(Arbitrary, Clone, Debug)]
struct SupportSpec {
    rows: Vec<RowSpec>,
    /// Replaces the row offsets (u64, so possibly beyond i64).
    indptr: Option<Vec<u64>>,
    nu: Vector,
    pi: Vector,
    gram: Vector,
}

/// Predicts on every row, then learns each row alone and all of them as a batch.
fn exercise_binary(model: &mut Learner, rows: &Rows, n_features: usize, p: &Primal) {
    let x = rows.matrix(n_features);
    let mut out = vec![0.0; rows.n_rows()];
    let _ = model.decision_function(&x, &mut out);
    let _ = model.variances(&x, &mut out);
    let _ = model.positive_probability(&x, &mut out);
    let y: Vec<f64> = (0..rows.n_rows())
        .map(|i| {
            if p.label(i).is_multiple_of(2) {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    for (i, &label) in y.iter().enumerate() {
        let _ = model.decision(rows.row(i));
        let _ = model.learn(rows.row(i), label);
    }
    for dense in &rows.dense {
        let _ = model.learn(Row::Dense(dense), 1.0);
    }
    let _ = model.partial_fit(&x, &y, Presentation::default());
}

/// What the binary learner and the regressor share: one Gaussian, perhaps with an L1 penalty.
trait Linear: Sized {
    fn mean(&self) -> Vec<f64>;
    fn covariance_state(&self) -> Vec<f64>;
    fn l1(&self) -> Option<&L1>;
    fn with_l1(self, l1: L1) -> Result<Self, CwError>;
}

macro_rules! linear {
    ($t:ty) => {
        impl Linear for $t {
            fn mean(&self) -> Vec<f64> {
                <$t>::mean(self).into_owned()
            }
            fn covariance_state(&self) -> Vec<f64> {
                <$t>::covariance_state(self).into_owned()
            }
            fn l1(&self) -> Option<&L1> {
                <$t>::l1(self)
            }
            fn with_l1(self, l1: L1) -> Result<Self, CwError> {
                <$t>::with_l1(self, l1)
            }
        }
    };
}
linear!(Learner);
linear!(Regressor);

/// A model restored from `p`'s state (with `covariance`), checked and with the state's L1
/// penalty, if any; `None` if anything is refused.
fn admitted<T: Linear>(restored: Result<T, CwError>, p: &Primal, covariance: &[f64]) -> Option<T> {
    let model = restored.ok()?;
    check_accepted(p.kind(), p.dim(), covariance);
    match &p.l1 {
        None => Some(model),
        Some(spec) => model
            .with_l1(spec.build(p.n_features.get(), p.fit_intercept, p.dim())?)
            .ok(),
    }
}

/// `restored`, rebuilt from `model`'s own state, is accepted exactly when that state is finite,
/// and then holds the same state.
fn check_round_trip<T: Linear>(model: &T, restored: Result<T, CwError>, p: &Primal) {
    let is_finite = finite(&model.mean())
        && finite(&model.covariance_state())
        && model
            .l1()
            .is_none_or(|l1| l1.total().is_finite() && finite(l1.last()));
    let Some(mut restored) = accepted(restored, is_finite) else {
        return;
    };
    if let Some(l1) = model.l1() {
        let fresh =
            p.l1.as_ref()
                .unwrap()
                .build(p.n_features.get(), p.fit_intercept, p.dim());
        restored = restored
            .with_l1(fresh.unwrap().with_state(l1.total(), l1.last()).unwrap())
            .unwrap();
    }
    assert_eq!(bits(&restored.mean()), bits(&model.mean()));
    assert_eq!(
        bits(&restored.covariance_state()),
        bits(&model.covariance_state())
    );
    assert_eq!(restored.l1(), model.l1());
}

fn binary(p: &Primal) {
    let n_features = p.n_features.get();
    let dim = p.dim();
    let rule = p.rule();
    let covariance = p.covariance(dim);
    let restored = Learner::from_state(
        rule,
        p.kind(),
        n_features,
        p.fit_intercept,
        &p.mean.build(dim, 0.0),
        &covariance,
        p.n_updates,
        p.n_mistakes,
    );
    let Some(mut model) = admitted(restored, p, &covariance) else {
        return;
    };
    let rows = Rows::new(&p.rows, n_features);
    exercise_binary(&mut model, &rows, n_features, p);
    // What the model saves, it takes back.
    let restored = Learner::from_state(
        model.rule(),
        model.covariance_kind(),
        n_features,
        p.fit_intercept,
        &model.mean(),
        &model.covariance_state(),
        model.n_updates(),
        model.n_mistakes(),
    );
    check_round_trip(&model, restored, p);
}

/// What an accepted primal state must be: positive variances, or a symmetric Σ₀ (whose
/// variances' signs are not checked: rounding can leave a learned one just below 0).
fn check_accepted(kind: CovarianceKind, dim: usize, covariance: &[f64]) {
    match kind {
        CovarianceKind::Identity => assert!(covariance.is_empty()),
        CovarianceKind::Diagonal => assert!(covariance.iter().all(|&v| v > 0.0)),
        CovarianceKind::Full => {
            let m = |i: usize, j: usize| covariance[i * dim + j];
            assert!((0..dim).all(|i| (0..i).all(|j| m(i, j) == m(j, i))));
        }
        CovarianceKind::LowRank { .. } => assert!(covariance[..dim].iter().all(|&v| v > 0.0)),
        CovarianceKind::AdaGrad { .. } | CovarianceKind::Ftrl { .. } => {
            assert!(covariance.iter().all(|&g| g >= 0.0));
        }
    }
}

/// Whether every value is finite.
fn finite(values: &[f64]) -> bool {
    values.iter().all(|x| x.is_finite())
}

/// Whether a learned state that is not finite fails the run (`CWRS_FUZZ_STRICT=1`): learning
/// finite rows with huge values can overflow a model to inf or NaN, which numerical safeguards
/// may or may not rule out. Without it such a state only has to be refused by `from_state`.
fn strict() -> bool {
    static STRICT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *STRICT.get_or_init(|| std::env::var_os("CWRS_FUZZ_STRICT").is_some_and(|v| v == "1"))
}

/// The model rebuilt from its own learned state: a finite state must be accepted, a state
/// with inf or NaN refused.
fn accepted<T>(restored: Result<T, CwError>, finite: bool) -> Option<T> {
    assert!(finite || !strict(), "learning made the state non-finite");
    match restored {
        Ok(model) if finite => Some(model),
        Err(e) if finite => panic!("the learned state is refused: {e}"),
        Ok(_) => panic!("a non-finite state is accepted"),
        Err(_) => None,
    }
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|x| x.to_bits()).collect()
}

fn multiclass(p: &Primal, n_classes: usize, ovr: bool) {
    let n_features = p.n_features.get();
    let dim = p.dim();
    let rule = p.rule();
    let strategy = if ovr {
        Strategy::OneVsRest
    } else {
        Strategy::MaxScore
    };
    let means = p.mean.build(n_classes.saturating_mul(dim), 0.0);
    // Each class's covariance, for as many classes as 2^16 values allow.
    let covariance = p.covariance(dim);
    let classes = n_classes.min((1 << 16) / covariance.len().max(1));
    let covariances = covariance.repeat(classes);
    let Ok(shape) = Shape::new(n_features, p.fit_intercept) else {
        return;
    };
    let Ok(mut model) = MulticlassLearner::from_state(
        Multiclass { rule, strategy },
        p.kind(),
        n_classes,
        shape,
        &means,
        &covariances,
        p.n_updates,
        p.n_mistakes,
    ) else {
        return;
    };
    for class in covariances.chunks(covariance.len().max(1)) {
        check_accepted(p.kind(), dim, class);
    }
    if let Some(spec) = &p.l1 {
        let Some(l1) = spec.build(n_features, p.fit_intercept, dim) else {
            return;
        };
        let states: Vec<(f64, Vec<f64>)> = (0..model.n_classes())
            .map(|_| (l1.total(), l1.last().to_vec()))
            .collect();
        let Ok(penalised) = model.with_l1(l1).and_then(|m| m.with_l1_states(&states)) else {
            return;
        };
        model = penalised;
    }
    let rows = Rows::new(&p.rows, n_features);
    let x = rows.matrix(n_features);
    let k = model.n_classes();
    let mut out = vec![0.0; rows.n_rows() * k];
    let _ = model.decision_function(&x, &mut out);
    let _ = model.variances(&x, &mut out);
    let _ = model.probabilities(&x, &mut out);
    let labels: Vec<usize> = (0..rows.n_rows())
        .map(|i| usize::from(p.label(i)) % (k + 1))
        .collect();
    for (i, &label) in labels.iter().enumerate() {
        let _ = model.learn(rows.row(i), label);
    }
    let _ = model.partial_fit(&x, &labels, Presentation::default());
    let restored = MulticlassLearner::from_state(
        *model.objective(),
        model.covariance_kind(),
        k,
        model.shape(),
        &model.means(),
        &model.covariances(),
        model.n_updates(),
        model.n_mistakes(),
    );
    let is_finite = finite(&model.means())
        && finite(&model.covariances())
        && model.l1_states().is_none_or(|states| {
            states
                .iter()
                .all(|(total, last)| total.is_finite() && finite(last))
        });
    let Some(mut restored) = accepted(restored, is_finite) else {
        return;
    };
    if let Some(states) = model.l1_states() {
        let fresh =
            p.l1.as_ref()
                .unwrap()
                .build(n_features, p.fit_intercept, dim);
        restored = restored
            .with_l1(fresh.unwrap())
            .and_then(|m| m.with_l1_states(&states))
            .unwrap();
    }
    // The full form's pending terms are folded in `covariances`, so compare predictions.
    let (mut a, mut b) = (vec![0.0; out.len()], vec![0.0; out.len()]);
    if model.decision_function(&x, &mut a).is_ok() {
        restored.decision_function(&x, &mut b).unwrap();
        assert_eq!(bits(&a), bits(&b));
    }
}

fn regression(p: &Primal) {
    let n_features = p.n_features.get();
    let dim = p.dim();
    let name = REGRESSION_RULE_NAMES[usize::from(p.rule) % REGRESSION_RULE_NAMES.len()];
    let rule = RegressionRule::from_name(name, &[]).unwrap();
    let covariance = p.covariance(dim);
    let restored = Regressor::from_state(
        rule,
        p.kind(),
        n_features,
        p.fit_intercept,
        &p.mean.build(dim, 0.0),
        &covariance,
        p.n_updates,
        0,
    );
    let Some(mut model) = admitted(restored, p, &covariance) else {
        return;
    };
    let rows = Rows::new(&p.rows, n_features);
    let x = rows.matrix(n_features);
    let mut out = vec![0.0; rows.n_rows()];
    let _ = model.predict(&x, &mut out);
    let _ = model.variances(&x, &mut out);
    let y: Vec<f64> = (0..rows.n_rows())
        .map(|i| f64::from(p.label(i)) - 100.0)
        .collect();
    for (i, &target) in y.iter().enumerate() {
        let _ = model.learn(rows.row(i), target);
    }
    let _ = model.partial_fit(&x, &y, Presentation::default());
    let restored = Regressor::from_state(
        model.rule(),
        model.covariance_kind(),
        n_features,
        p.fit_intercept,
        &model.mean(),
        &model.covariance_state(),
        model.n_updates(),
        0,
    );
    check_round_trip(&model, restored, p);
}

impl KernelSpec {
    fn kernel(&self) -> Option<Kernel> {
        let name = match self.kernel % 3 {
            0 => "linear",
            1 => "rbf",
            _ => "poly",
        };
        Kernel::from_name(
            name,
            self.gamma.get(),
            u32::from(self.degree % 5),
            self.coef0.get(),
        )
        .ok()
    }

    /// A fresh Gaussian with these settings, restored from `support`'s state.
    fn gaussian(&self, rule: Rule, support: &SupportSpec) -> Result<DualGaussian, ()> {
        let n_features = self.n_features.get();
        let fresh = DualGaussian::new(
            self.kernel().ok_or(())?,
            rule.is_second_order(),
            n_features,
            self.fit_intercept,
            self.a.get(),
            self.budget.map(usize::from),
        )
        .map_err(|_| ())?;
        let rows = Rows::new(&support.rows, n_features);
        let values = rows.values.clone();
        // Indices as the state stores them (u32); negative ones cannot be stored.
        let indices: Vec<u32> = rows.indices.iter().map(|&j| j as u32).collect();
        let indptr: Vec<u64> = match &support.indptr {
            Some(raw) => raw.iter().take(16).copied().collect(),
            None => rows.indptr.iter().map(|&p| p as u64).collect(),
        };
        let n = indptr.len().saturating_sub(1);
        let nu = support.nu.build(n, 0.0);
        let pi = if rule.is_second_order() {
            support.pi.matrix(n, 0, 0.0)
        } else {
            support.pi.build(0, 0.0)
        };
        let gram = support.gram.matrix(n, 0, 1.0);
        let restored = fresh
            .with_state(DualState {
                values: &values,
                indices: &indices,
                indptr: &indptr,
                nu: &nu,
                pi: &pi,
                gram: &gram,
            })
            .map_err(|_| ())?;
        // An accepted support set fits the budget, with symmetric Π and Gram matrices.
        assert!(self.budget.is_none_or(|b| n <= usize::from(b)));
        let symmetric = |m: &[f64]| (0..n).all(|p| (0..p).all(|q| m[p * n + q] == m[q * n + p]));
        assert!(symmetric(&gram) && (pi.is_empty() || symmetric(&pi)));
        Ok(restored)
    }
}

/// A dual Gaussian's saved state: the support rows (values, indices, offsets), ν, Π and Gram.
type SavedDual = (Vec<f64>, Vec<u32>, Vec<u64>, Vec<f64>, Vec<f64>, Vec<f64>);

fn state_of(g: &DualGaussian) -> SavedDual {
    let (values, indices, indptr) = g.support_vectors();
    (
        values,
        indices,
        indptr,
        g.dual_coef().to_vec(),
        g.dual_covariance(),
        g.gram(),
    )
}

fn assert_same(a: &DualGaussian, b: &DualGaussian) {
    let (a, b) = (state_of(a), state_of(b));
    assert_eq!((bits(&a.0), &a.1, &a.2), (bits(&b.0), &b.1, &b.2));
    assert_eq!(
        (bits(&a.3), bits(&a.4), bits(&a.5)),
        (bits(&b.3), bits(&b.4), bits(&b.5))
    );
}

/// `g`'s state restored into a fresh Gaussian of the same settings, and checked to be the same.
fn check_restore(g: &DualGaussian, second_order: bool) {
    let (values, indices, indptr, nu, pi, gram) = state_of(g);
    let is_finite = finite(&values) && finite(&nu) && finite(&pi) && finite(&gram);
    let restored = DualGaussian::new(
        g.kernel().clone(),
        second_order,
        g.n_features(),
        g.fit_intercept(),
        g.a(),
        g.budget(),
    )
    .unwrap()
    .with_state(DualState {
        values: &values,
        indices: &indices,
        indptr: &indptr,
        nu: &nu,
        pi: &pi,
        gram: &gram,
    });
    if let Some(restored) = accepted(restored, is_finite) {
        assert_same(&restored, g);
    }
}

fn kernel(spec: &KernelSpec) {
    let rule = Rule::from_name(RULE_NAMES[usize::from(spec.rule) % RULE_NAMES.len()], &[]).unwrap();
    // The rules without a kernel form are refused before a dual learner is built (as
    // `Model` does through `check_kernel_form`); `from_gaussian` and `with_classes` trust it.
    if !rule.has_kernel_form() {
        return;
    }
    let n_features = spec.n_features.get();
    let rows = Rows::new(&spec.rows, n_features);
    let x = rows.matrix(n_features);
    let n = rows.n_rows();
    let Ok(classes) = spec
        .classes
        .iter()
        .take(4)
        .map(|support| spec.gaussian(rule, support))
        .collect::<Result<Vec<_>, _>>()
    else {
        return;
    };
    if classes.len() == 1 {
        let mut model = DualLearner::from_gaussian(rule, classes.into_iter().next().unwrap())
            .with_counters(spec.n_updates, spec.n_mistakes);
        let mut out = vec![0.0; n];
        let _ = model.decision_function(&x, &mut out);
        let _ = model.variances(&x, &mut out);
        let _ = model.positive_probability(&x, &mut out);
        let y: Vec<f64> = (0..n)
            .map(|i| {
                if spec.labels.get(i).copied().unwrap_or(0).is_multiple_of(2) {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        for (i, &label) in y.iter().enumerate() {
            let _ = model.learn(rows.row(i), label);
        }
        let _ = model.partial_fit(&x, &y, Presentation::default());
        check_restore(model.model(), rule.is_second_order());
    } else if classes.len() >= 2 {
        let strategy = if spec.ovr {
            Strategy::OneVsRest
        } else {
            Strategy::MaxScore
        };
        let mut model = MulticlassLearner::with_classes(rule, strategy, n_features, classes)
            .with_counters(spec.n_updates, spec.n_mistakes);
        let k = model.n_classes();
        let mut out = vec![0.0; n * k];
        let _ = model.decision_function(&x, &mut out);
        let _ = model.probabilities(&x, &mut out);
        let labels: Vec<usize> = (0..n)
            .map(|i| usize::from(spec.labels.get(i).copied().unwrap_or(0)) % (k + 1))
            .collect();
        for (i, &label) in labels.iter().enumerate() {
            let _ = model.learn(rows.row(i), label);
        }
        let _ = model.partial_fit(&x, &labels, Presentation::default());
        for g in model.classes() {
            check_restore(g, rule.is_second_order());
        }
    }
}

fuzz_target!(|case: Case| {
    match &case {
        Case::Binary(p) => binary(p),
        Case::Multiclass {
            primal,
            n_classes,
            ovr,
        } => multiclass(primal, n_classes.get(), *ovr),
        Case::Regression(p) => regression(p),
        Case::Kernel(spec) => kernel(spec),
    }
});
