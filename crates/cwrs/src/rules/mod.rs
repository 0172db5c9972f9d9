//! The scalar update rules of the confidence-weighted family (docs/design.md §2).
//!
//! Every rule is a pure function of the signed margin `m = y·μ·x`, the variance `v = xᵀΣx` and
//! `‖x‖²`, returning the step `(α, c)` of the shared template
//!
//! ```text
//! μ ← μ + α·y·Σx          Σ⁻¹ ← Σ⁻¹ + c·x xᵀ
//! ```
//!
//! or `None` when the rule does not update. Rules own no storage and no loops.
//!
//! # Numerical safeguards
//!
//! The closed forms are written so that float64 evaluates them without catastrophic
//! cancellation, overflow of intermediate squares or division by ~0. None of this changes the
//! results on ordinary data: the test `stable_forms_agree_with_exact_textbook_values` checks each
//! form against the textbook form of docs/design.md §2 evaluated exactly (800-digit decimals, tables from
//! `tests/rule_reference_table.py`) to 1e-14 relative (they agree to 4e-16), on ordinary and on
//! extreme inputs, and that the textbook form in float64 does fail (overflow, cancellation) on
//! the extreme ones; `normalisation_changes_no_bits_on_ordinary_values` checks that the rescaling
//! of item 3 changes no bit.
//!
//! 1. **One gate for every step** ([`Step::checked`], used by [`StepRule::step`] of [`Rule`] and
//!    of [`RegressionRule`], hence by the primal, multiclass and kernel learners). A row is not
//!    learned when m (or the residual), v or ‖x‖² is not finite (‖x‖² overflows past |x| ≈ 1e154)
//!    or when v or ‖x‖² is below the smallest normal float64, 2.2e-308 (there 1/v overflows and
//!    v has lost its relative precision). A step whose α is not finite, or whose c is NaN or
//!    negative, is dropped (no update). A c that overflowed to +∞ (ExactCW/SCW once a variance
//!    has collapsed) passes and is applied as its limit: β = 1/(1/c + v) = 1/v (then capped by
//!    the full form's safeguards), and Σ_j → 0 where x_j ≠ 0 in the diagonal form (which keeps
//!    it at its floor).
//! 2. **Square roots of sums of squares** (`scaling::sqrt_sq_plus`): √(a² + w) is evaluated
//!    directly where a² can neither overflow nor underflow, and otherwise after an exact
//!    power-of-two rescaling (hypot-style), so CW's √((1+2φm)² + 8φ(φv − m)), ExactCW's √(m²φ⁴/4 + vφ²ζ),
//!    SCW-II's γ and the ExactCW/SCW √(α²v²φ² + 4v) never overflow at |m|, v ~ 1e154+.
//! 3. **Exact normalisation** of the homogeneous rules: ExactCW's α(m, v), the ExactCW/SCW
//!    covariance step c(α, v) and SCW-II's α(m, v, n) (n = v + 1/(2C)) are homogeneous under
//!    m → λm, v → λ²v (and n → λ²n), so they are evaluated at λ = 2^k with λ²v (λ²n) in
//!    [1, 4) and scaled back. Power-of-two scaling commutes with rounding, so this is bit for
//!    bit the unscaled evaluation wherever that one neither overflows nor underflows; elsewhere
//!    (v ~ 1e300 from features ~1e150, v ~ 1e-300 from features ~1e-150) it keeps full
//!    precision where the unscaled products (v², m²v², n²v) over- or underflow.
//! 4. **Rationalised numerators** (cancellation-free): CW γ for 1 + 2φm ≥ 0, ExactCW α and
//!    SCW-II α for m > 0, and √u = 2v/(αvφ + √(α²v²φ² + 4v)) instead of ½(−αvφ + √(…)).
//! 5. **CW division order**: γ = 2(φv − m)/(v(b + root)) is taken as 2((φv − m)/v)/(b + root)
//!    when v(b + root) overflows (v ~ 1e300), instead of collapsing to 0.
//! 6. **NAROW without r_t**: r_t = v/(bv − 1) cancels in bv − 1 and overflows as bv → 1⁺;
//!    with e = bv − 1 rounded once (a fused multiply-add), c = 1/r_t = e/v and
//!    α = (r_t − m)/(r_t + v) = (1 − m·c)/(b·v), firing when m < b·v (⇔ m·r_t/(r_t + v) < 1).
//!    This tends continuously to the r_t = ∞ case (α = 1, c = 0) as bv → 1⁺.
//! 7. **Sherman–Morrison factor** β = c/(1 + cv) as 1/(1/c + v) ([`sherman_morrison_factor`]):
//!    1/v for c = +∞, 0 for c = 0, and at most 1/v ≤ 4.5e307 since v is normal.
//!
//! The covariance forms add their own safeguards (see `crate::covariance`).
//!
//! # The rule table
//!
//! Each rule (or small family) lives in its own file, which declares its [`Entry`] (name, kind,
//! order, hyper-parameters with defaults, valid ranges and meanings, paper, update in words)
//! next to its step. [`TABLE`] lists the entries; [`Rule::from_name`] and
//! [`RegressionRule::from_name`] look a name up there and check the parameters against it, and
//! Python reads the same table (`cwrs._cwrs.rule_table()`) for its validation and docstrings.
//! The steps themselves stay a plain `match` on [`Rule`], so the learners' hot loops are
//! monomorphised and never consult the table.
//!
//! A new rule takes one file (its entry and step, about 25 lines) and six lines here: its `mod`
//! line, its line in [`TABLE`] and in [`RULE_NAMES`], its variant in the enum and one arm in
//! each of `entry` and `raw_step` (and one in `l1_rate` when its L1 step scale is not α).

use crate::error::CwError;

mod adagrad;
mod alma;
mod arow;
mod context;
mod cw;
mod export;
mod ftrl;
mod iellip;
mod narow;
mod nherd;
mod normal;
mod ogd;
mod pa;
mod perceptron;
mod regression;
mod romma;
mod scaling;
mod scw;
mod sop;

pub use context::{Context, ScaledStep};
pub use export::table_states;
pub use normal::{margin_probabilities, margin_probability, normal_cdf, normal_quantile};
pub use ogd::Loss;

/// One update of the template: the mean step `alpha` and the precision increment `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The mean step α of μ ← μ + α·y·Σx (of μ ← μ + α·Σx for regression).
    pub alpha: f64,
    /// The precision increment c ≥ 0 of Σ⁻¹ ← Σ⁻¹ + c·x xᵀ (+∞ is applied as its limit).
    pub c: f64,
}

impl Step {
    /// The one check every step passes before it reaches a model (safeguard 1 of the module
    /// doc): `None` if α is not finite or c is NaN or negative. A c of +∞ passes: the forms
    /// apply it as its limit.
    pub fn checked(self) -> Option<Step> {
        (self.alpha.is_finite() && self.c >= 0.0).then_some(self)
    }
}

/// Whether a row's moments can be learned from (safeguard 1 of the module doc): the margin (or
/// residual) `m`, `v` and `norm2` finite, `v`, `norm2` at least the smallest normal float64
/// (which also rules out an all-zero row), and the weight `h` positive and finite (a row of
/// weight 0 never reaches a rule: the loop skips it).
#[inline]
fn learnable(m: f64, v: f64, norm2: f64, h: f64) -> bool {
    m.is_finite() && is_learnable_variance(v) && is_learnable_variance(norm2) && is_weight(h)
}

/// Whether `h` is a weight a row is learned with: positive and finite.
#[inline]
fn is_weight(h: f64) -> bool {
    h > 0.0 && h.is_finite()
}

/// The one gate of every rule's step (safeguard 1 of the module doc): the rule's formulas
/// (`raw`) run only on learnable moments, and their step is checked.
#[inline]
fn gated(m: f64, v: f64, norm2: f64, h: f64, raw: impl FnOnce() -> Option<Step>) -> Option<Step> {
    if !learnable(m, v, norm2, h) {
        return None;
    }
    raw().and_then(Step::checked)
}

/// A step with its mean step α times `h`: the rules whose weighted step is the step of the
/// loss h·ℓ (docs/design.md §2.10).
#[inline]
fn times(step: Option<Step>, h: f64) -> Option<Step> {
    step.map(|s| Step {
        alpha: s.alpha * h,
        ..s
    })
}

/// Whether a variance (or squared norm) can be learned from: finite and at least the smallest
/// normal float64 (safeguard 1 of the module doc).
#[inline]
pub fn is_learnable_variance(v: f64) -> bool {
    v.is_finite() && v >= f64::MIN_POSITIVE
}

/// The Sherman–Morrison factor β = c / (1 + c·v) of Σ ← Σ − β·(Σx)(Σx)ᵀ, written as
/// 1 / (1/c + v) so that it stays finite when c overflows to ∞ (ExactCW/SCW on long noisy
/// streams: β → 1/v) and is 0 when c = 0.
pub fn sherman_morrison_factor(c: f64, v: f64) -> f64 {
    1.0 / (1.0 / c + v)
}

/// The valid values of a hyper-parameter: finite, between `low` and `high` (each end open or
/// closed; `high` may be +∞, always open).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// The lower end.
    pub low: f64,
    /// The upper end (may be +∞, then always open).
    pub high: f64,
    /// Whether `low` itself is excluded.
    pub low_open: bool,
    /// Whether `high` itself is excluded.
    pub high_open: bool,
}

impl Range {
    /// (0, ∞): a positive finite number.
    pub const POSITIVE: Range = Range {
        low: 0.0,
        high: f64::INFINITY,
        low_open: true,
        high_open: true,
    };
    /// [0, ∞): a non-negative finite number.
    pub const NON_NEGATIVE: Range = Range {
        low: 0.0,
        high: f64::INFINITY,
        low_open: false,
        high_open: true,
    };
    /// (0.5, 1): a confidence η, so that φ = Φ⁻¹(η) is positive and finite.
    pub const CONFIDENCE: Range = Range {
        low: 0.5,
        high: 1.0,
        low_open: true,
        high_open: true,
    };

    /// Whether `value` is finite and within the range, each end open or closed as set.
    pub fn contains(&self, value: f64) -> bool {
        let above = if self.low_open {
            value > self.low
        } else {
            value >= self.low
        };
        let below = if self.high_open {
            value < self.high
        } else {
            value <= self.high
        };
        value.is_finite() && above && below
    }

    /// What a valid value is, completing "{name} must …" (Python words its errors with it).
    pub fn requirement(&self) -> String {
        let (low, high) = (self.low, self.high);
        if high == f64::INFINITY {
            return match (low == 0.0, self.low_open) {
                (true, true) => "be a positive finite number".into(),
                (true, false) => "be a non-negative finite number".into(),
                (false, true) => format!("be a finite number above {low}"),
                (false, false) => format!("be a finite number of at least {low}"),
            };
        }
        if self.low_open && self.high_open {
            return format!("lie strictly between {low} and {high}");
        }
        let open = if self.low_open { '(' } else { '[' };
        let close = if self.high_open { ')' } else { ']' };
        format!("lie in {open}{low}, {high}{close}")
    }
}

/// A hyper-parameter of a rule: its name (as the Python estimators spell it), default, valid
/// range and meaning in one line.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The name, as the Python estimators spell it (`"r"`, `"C"`, `"eta"`).
    pub name: &'static str,
    /// The value when the user leaves the parameter out.
    pub default: f64,
    /// The values the parameter may take.
    pub range: Range,
    /// The meaning of the parameter in one line.
    pub doc: &'static str,
}

impl Param {
    /// A parameter of the table (`const`, so that the entries can be constants).
    pub const fn new(name: &'static str, default: f64, range: Range, doc: &'static str) -> Param {
        Param {
            name,
            default,
            range,
            doc,
        }
    }
}

/// Classification or regression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A classification rule, learning labels ±1 or classes.
    Classification,
    /// A regression rule, learning real targets.
    Regression,
}

impl Kind {
    /// The kind's name in messages and in the table Python reads.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Classification => "classification",
            Kind::Regression => "regression",
        }
    }
}

/// How an entry builds its rule from parameter values (in the order of `params`, checked).
#[derive(Clone, Copy, Debug)]
pub enum Build {
    /// A classification rule ([`Rule`]).
    Classification(fn(&[f64]) -> Rule),
    /// A regression rule ([`RegressionRule`]).
    Regression(fn(&[f64]) -> RegressionRule),
}

/// One row of the rule table.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The name [`Rule::from_name`] and [`RegressionRule::from_name`] look up (`"AROW"`).
    pub name: &'static str,
    /// The method's name in full, as the paper titles it.
    pub title: &'static str,
    /// The paper: authors, venue, year.
    pub reference: &'static str,
    /// First-order rules keep Σ = I fixed; second-order rules learn a covariance.
    pub second_order: bool,
    /// The hyper-parameters, in the order the rule's builder takes their values.
    pub params: &'static [Param],
    /// The update in words: when it fires, α and c (docs/design.md §2).
    pub summary: &'static str,
    /// The step of a row of importance weight h (docs/design.md §2.10).
    pub weighted: Weighted,
    /// How the entry builds its rule from the checked parameter values.
    pub build: Build,
}

/// How a rule learns a row of importance weight h > 0 (docs/design.md §2.10).
#[derive(Clone, Copy, Debug)]
pub struct Weighted {
    /// Whether the weighted step is the continuous limit of presenting the row repeatedly, so
    /// that weight h then h′ is weight h + h′ once and an integer k is k presentations
    /// (`true`; in the full and identity forms: a diagonal form's second step moves along its
    /// new Σx, so there the step of weight k only approximates k presentations); else
    /// (`false`) the rule's objective with its loss term times h, or the step of the loss h·ℓ
    /// for a rule defined by its step.
    pub exact: bool,
    /// The weighted step in words.
    pub summary: &'static str,
}

impl Weighted {
    /// A weighted step that is the limit of repeated presentations (`exact` true).
    pub const fn exact(summary: &'static str) -> Weighted {
        Weighted {
            exact: true,
            summary,
        }
    }

    /// A weighted step that is the rule's objective with its loss term times h (`exact` false).
    pub const fn objective(summary: &'static str) -> Weighted {
        Weighted {
            exact: false,
            summary,
        }
    }
}

impl Entry {
    /// Whether the entry builds a classification or a regression rule.
    pub fn kind(&self) -> Kind {
        match self.build {
            Build::Classification(_) => Kind::Classification,
            Build::Regression(_) => Kind::Regression,
        }
    }

    /// The build of rule `name` of `kind` and the values of `params` over its defaults, checked.
    fn lookup(
        kind: Kind,
        name: &str,
        params: &[(&str, f64)],
    ) -> Result<(Build, Vec<f64>), CwError> {
        let Some(entry) = entry(kind, name) else {
            let (what, names): (&str, &[&str]) = match kind {
                Kind::Classification => ("rule", &RULE_NAMES),
                Kind::Regression => ("regression rule", &REGRESSION_RULE_NAMES),
            };
            return Err(CwError::InvalidParameter(format!(
                "unknown {what} {name:?}; expected one of {names:?}"
            )));
        };
        Ok((entry.build, entry.values(params)?))
    }

    /// The parameter values for `params` (name, value) over the defaults, each checked against
    /// its range. A name the rule does not take is refused, so that a typo cannot pass.
    fn values(&self, params: &[(&str, f64)]) -> Result<Vec<f64>, CwError> {
        let mut values: Vec<f64> = self.params.iter().map(|p| p.default).collect();
        for &(key, value) in params {
            match self.params.iter().position(|p| p.name == key) {
                Some(i) => values[i] = value,
                None => {
                    let takes: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                    let kind = match self.kind() {
                        Kind::Classification => "",
                        Kind::Regression => " regression",
                    };
                    return Err(CwError::InvalidParameter(format!(
                        "{}{kind} has no hyper-parameter {key:?}; it takes {takes:?}",
                        self.name
                    )));
                }
            }
        }
        for (param, &value) in self.params.iter().zip(&values) {
            if !param.range.contains(value) {
                return Err(CwError::InvalidParameter(format!(
                    "{} must {}, got {value}",
                    param.name,
                    param.range.requirement()
                )));
            }
        }
        Ok(values)
    }
}

/// Every rule, classification rules in the order of docs/design.md §1, then regression rules.
pub const TABLE: &[&Entry] = &[
    &perceptron::PERCEPTRON,
    &pa::PA,
    &pa::PA1,
    &pa::PA2,
    &sop::SOP,
    &cw::CW,
    &cw::EXACT_CW,
    &arow::AROW,
    &narow::NAROW,
    &scw::SCW1,
    &scw::SCW2,
    &nherd::NHERD,
    &alma::ALMA,
    &romma::ROMMA,
    &romma::AGGRESSIVE_ROMMA,
    &ogd::OGD,
    &iellip::IELLIP,
    &adagrad::ADAGRAD,
    &ftrl::FTRL,
    &regression::AROW,
    &regression::PA,
    &regression::PA1,
    &regression::PA2,
];

/// The table entry of a rule `name` of `kind`.
pub fn entry(kind: Kind, name: &str) -> Option<&'static Entry> {
    TABLE
        .iter()
        .copied()
        .find(|entry| entry.kind() == kind && entry.name == name)
}

/// All rule names, in the order of docs/design.md §1.
pub const RULE_NAMES: [&str; 19] = [
    "Perceptron",
    "PA",
    "PA1",
    "PA2",
    "SOP",
    "CW",
    "ExactCW",
    "AROW",
    "NAROW",
    "SCW1",
    "SCW2",
    "NHERD",
    "ALMA",
    "ROMMA",
    "AggressiveROMMA",
    "OGD",
    "IELLIP",
    "AdaGrad",
    "FTRL",
];

/// Regression rule names.
pub const REGRESSION_RULE_NAMES: [&str; 4] = ["AROW", "PA", "PA1", "PA2"];

/// An update rule with its hyper-parameters.
///
/// `phi` is the standard normal quantile Φ⁻¹(η) of the confidence parameter η.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// The Perceptron, first order: on a mistake (m ≤ 0), α = 1, c = 0, i.e. μ ← μ + y·x.
    Perceptron,
    /// Passive-Aggressive (Crammer et al. 2006), first order: on m < 1, α = (1 − m)/‖x‖², c = 0,
    /// the smallest step that reaches margin 1.
    PA,
    /// PA-I: on m < 1, α = min(C, (1 − m)/‖x‖²), c = 0.
    PA1 {
        /// The aggressiveness C > 0, the cap on α.
        c: f64,
    },
    /// PA-II: on m < 1, α = (1 − m)/(‖x‖² + 1/(2C)), c = 0.
    PA2 {
        /// The aggressiveness C > 0.
        c: f64,
    },
    /// The Second-Order Perceptron (Cesa-Bianchi, Conconi, Gentile 2005): on a mistake,
    /// α = (1 − m)/(1 + v), c = 1.
    SOP,
    /// Confidence-Weighted learning, variance form (Dredze, Crammer, Pereira 2008): on
    /// m < φ·v, α = γ, the root of the linearised constraint, c = 2γφ.
    CW {
        /// φ = Φ⁻¹(η) > 0, the quantile of the confidence η ∈ (0.5, 1).
        phi: f64,
    },
    /// Exact convex Confidence-Weighted learning, "CW-Stdev" (Crammer, Dredze, Pereira 2008):
    /// on m < φ·√v, the step that puts (μ, Σ) on the constraint m′ = φ·√v′.
    ExactCW {
        /// φ = Φ⁻¹(η) > 0.
        phi: f64,
    },
    /// Adaptive Regularization of Weight vectors (Crammer, Kulesza, Dredze 2009): on m < 1,
    /// α = (1 − m)/(v + r), c = 1/r.
    AROW {
        /// The regularisation r > 0: a larger r takes smaller, more noise-tolerant steps.
        r: f64,
    },
    /// Narrow AROW (Orabona, Crammer 2010): AROW with a per-row r_t = v/(b·v − 1) where
    /// b·v > 1 (no precision step elsewhere).
    NAROW {
        /// The threshold b > 0 on the variance: the precision grows only on rows with v > 1/b.
        b: f64,
    },
    /// Soft Confidence-Weighted learning, SCW-I (Wang, Zhao, Hoi 2012): on m < φ·√v,
    /// α = min(C, α_ExactCW), c as in ExactCW with this α.
    SCW1 {
        /// The aggressiveness C > 0, the cap on α.
        c: f64,
        /// φ = Φ⁻¹(η) > 0.
        phi: f64,
    },
    /// Soft Confidence-Weighted learning, SCW-II (Wang, Zhao, Hoi 2012): ExactCW's constraint
    /// with a squared slack penalty of weight C.
    SCW2 {
        /// The aggressiveness C > 0.
        c: f64,
        /// φ = Φ⁻¹(η) > 0.
        phi: f64,
    },
    /// Normal Herding (Crammer, Lee 2010), with the exact covariance update: on m < 1,
    /// α = (1 − m)/(v + 1/C), c = 2C + C²v.
    NHERD {
        /// The aggressiveness C > 0.
        c: f64,
    },
    /// ALMA (Gentile 2001), first order: an approximate maximal margin classifier whose target
    /// margin γ_k and step η_k shrink with the number k of updates; c = 0.
    ALMA {
        /// The margin's approximation α ∈ (0, 1]: the target margin is (1 − α)·γ_k.
        alpha: f64,
        /// The norm's order p ≥ 2, used only through √(p − 1) (the norms stay Euclidean).
        p: f64,
        /// The step scale C > 0: η_k = C/(√(p − 1)·√k).
        c: f64,
    },
    /// The Relaxed Online Maximum Margin Algorithm (Li, Long 2002), first order: on a mistake,
    /// μ ← c₁·μ + c₂·y·x, the smallest μ in the relaxed constraints.
    ROMMA,
    /// ROMMA's step on every row with m < 1, not only on mistakes.
    AggressiveROMMA,
    /// Online gradient descent (Zinkevich 2003), first order: α = η/√t times the gradient of
    /// `loss` at round t, c = 0.
    OGD {
        /// The learning rate η > 0: round t steps η/√t.
        eta: f64,
        /// The loss descended.
        loss: Loss,
    },
    /// The improved ellipsoid method (Yang, Jin, Ye 2009): on a mistake, α = (1 − m)/v and
    /// Σ ← (Σ − (c_t/v)·ΣxxᵀΣ)/(1 − c_t).
    IELLIP {
        /// The decay b ∈ (0, 1) of the covariance step: c_t = c·b^(t−1).
        b: f64,
        /// The covariance step c ∈ (0, 1) of the first round.
        c: f64,
    },
    /// AdaGrad with diagonal steps (Duchi, Hazan, Singer 2011), in a form of its own
    /// ([`crate::covariance::AdaGrad`]): on m < 1, μ_j ← μ_j + η·y·x_j/(δ + √G_j) after
    /// G_j ← G_j + x_j²; c = 0.
    AdaGrad {
        /// The learning rate η > 0.
        eta: f64,
        /// The regulariser δ > 0 of H_j = δ + √G_j.
        delta: f64,
    },
    /// FTRL-Proximal (McMahan et al. 2013): per-coordinate follow-the-regularised-leader with L1
    /// and L2 terms, in a form of its own ([`crate::covariance::Ftrl`]); c = 0.
    FTRL {
        /// The learning rate α > 0 of the per-coordinate rate α/(β + √n_j).
        alpha: f64,
        /// The smoothing β ≥ 0 of the per-coordinate rate.
        beta: f64,
        /// The L1 strength λ₁ ≥ 0 (weights with |z_j| ≤ λ₁ are exactly zero).
        l1: f64,
        /// The L2 strength λ₂ ≥ 0.
        l2: f64,
        /// The loss descended, [`Loss::Logistic`] or [`Loss::Hinge`].
        loss: Loss,
    },
}

impl Rule {
    /// Builds a rule from its name and hyper-parameters, validating them against its table
    /// entry. Parameters a rule does not use are rejected so that a typo cannot pass silently.
    pub fn from_name(name: &str, params: &[(&str, f64)]) -> Result<Rule, CwError> {
        match Entry::lookup(Kind::Classification, name, params)? {
            (Build::Classification(build), values) => Ok(build(&values)),
            _ => unreachable!("a classification entry builds a Rule"),
        }
    }

    /// The rule's table entry.
    pub fn entry(&self) -> &'static Entry {
        match self {
            Rule::Perceptron => &perceptron::PERCEPTRON,
            Rule::PA => &pa::PA,
            Rule::PA1 { .. } => &pa::PA1,
            Rule::PA2 { .. } => &pa::PA2,
            Rule::SOP => &sop::SOP,
            Rule::CW { .. } => &cw::CW,
            Rule::ExactCW { .. } => &cw::EXACT_CW,
            Rule::AROW { .. } => &arow::AROW,
            Rule::NAROW { .. } => &narow::NAROW,
            Rule::SCW1 { .. } => &scw::SCW1,
            Rule::SCW2 { .. } => &scw::SCW2,
            Rule::NHERD { .. } => &nherd::NHERD,
            Rule::ALMA { .. } => &alma::ALMA,
            Rule::ROMMA => &romma::ROMMA,
            Rule::AggressiveROMMA => &romma::AGGRESSIVE_ROMMA,
            Rule::OGD { .. } => &ogd::OGD,
            Rule::IELLIP { .. } => &iellip::IELLIP,
            Rule::AdaGrad { .. } => &adagrad::ADAGRAD,
            Rule::FTRL { .. } => &ftrl::FTRL,
        }
    }

    /// First-order rules keep Σ = I fixed; all others learn a covariance.
    pub fn is_second_order(&self) -> bool {
        self.entry().second_order
    }

    /// The rule with OGD's or FTRL's `loss` (a configuration entry of its own); other rules
    /// take none.
    pub fn with_loss(self, name: &str) -> Result<Rule, CwError> {
        let loss = Loss::from_name(name)?;
        match self {
            Rule::OGD { eta, .. } => Ok(Rule::OGD { eta, loss }),
            Rule::FTRL {
                alpha,
                beta,
                l1,
                l2,
                ..
            } if loss != Loss::SquaredHinge => Ok(Rule::FTRL {
                alpha,
                beta,
                l1,
                l2,
                loss,
            }),
            Rule::FTRL { .. } => Err(CwError::InvalidParameter(
                "FTRL's loss must be \"logistic\" or \"hinge\", got \"squared_hinge\"".into(),
            )),
            _ => Err(CwError::InvalidParameter(format!(
                "{:?} takes no loss",
                self.entry().name
            ))),
        }
    }

    /// The loss of OGD or FTRL, `None` for other rules.
    pub fn loss(&self) -> Option<Loss> {
        match self {
            Rule::OGD { loss, .. } | Rule::FTRL { loss, .. } => Some(*loss),
            _ => None,
        }
    }

    /// Whether the rule keeps its own per-coordinate state, a form of its own beside the
    /// covariance forms (AdaGrad, FTRL: docs/design.md §2.9).
    pub fn has_own_state(&self) -> bool {
        matches!(self, Rule::AdaGrad { .. } | Rule::FTRL { .. })
    }

    /// Whether the rule runs in the dual (kernel) form (docs/design.md §2.9): every rule but
    /// those that read ‖μ‖² (ALMA and the ROMMAs, whose O(nnz) scalar state has no dual
    /// counterpart here) and those with per-coordinate state (AdaGrad, FTRL: coordinates of
    /// the input space, which a kernel's feature space does not have).
    pub fn has_kernel_form(&self) -> bool {
        !self.needs_mean_norm() && !self.has_own_state()
    }
}

/// A rule as the loop calls it: the step for (m, v, ‖x‖²) and the L1 step scale; a rule
/// outside the (α, c) template (docs/design.md §2.9) also reads a [`Context`].
pub trait StepRule: Copy + std::fmt::Debug + PartialEq + Send + Sync {
    /// The rule's formulas for (m, v, ‖x‖²) at importance weight `h` (docs/design.md §2.10):
    /// m the margin y·μ·x (or the residual e = y − μ·x of a regression rule), v = xᵀΣx (equal
    /// to ‖x‖² for first-order rules). At h = 1 every rule's step is its unweighted step, bit
    /// for bit. Callers take [`StepRule::step`], which guards their domain and checks the step
    /// they give.
    fn raw_step(&self, m: f64, v: f64, norm2: f64, h: f64) -> Option<Step>;

    /// The step for one example of weight `h` (1 for an unweighted row), or `None` when the
    /// rule leaves the model unchanged: the formulas behind the one gate of every step (see
    /// the module's notes); an all-zero row (‖x‖² = 0) never updates.
    #[inline]
    fn step(&self, m: f64, v: f64, norm2: f64, h: f64) -> Option<Step> {
        gated(m, v, norm2, h, || self.raw_step(m, v, norm2, h))
    }

    /// The step scale η_t of the L1 (FOBOS) threshold after an update with `step` on a row of
    /// variance `v` and weight `h`.
    fn l1_rate(&self, step: &Step, v: f64, h: f64) -> f64;

    /// Whether the rule reads a [`Context`]: the loop then runs it row by row through
    /// [`StepRule::step_in`].
    fn needs_context(&self) -> bool {
        false
    }

    /// Whether the rule reads ‖μ‖² (computed only then).
    fn needs_mean_norm(&self) -> bool {
        false
    }

    /// The step of a row of weight `h` with its scales in `context`.
    fn step_in(
        &self,
        m: f64,
        v: f64,
        norm2: f64,
        h: f64,
        _context: &Context,
    ) -> Option<ScaledStep> {
        self.step(m, v, norm2, h).map(ScaledStep::plain)
    }
}

impl StepRule for Rule {
    #[inline]
    fn raw_step(&self, m: f64, v: f64, norm2: f64, h: f64) -> Option<Step> {
        // The weighted steps of docs/design.md §2.10; each is the unweighted step at h = 1
        // (x/1 and x·1 are exact).
        match *self {
            Rule::Perceptron => perceptron::step(m, h),
            Rule::PA => pa::pa_step(m, norm2),
            Rule::PA1 { c } => pa::pa1_step(m, norm2, c * h),
            Rule::PA2 { c } => pa::pa2_step(m, norm2, c, h),
            Rule::SOP => sop::step(m, v, h),
            Rule::CW { phi } => cw::variance_step(m, v, phi),
            Rule::ExactCW { phi } => cw::exact_step(m, v, phi),
            Rule::AROW { r } => arow::step(m, v, r / h),
            Rule::NAROW { b } => narow::step(m, v, b, h),
            Rule::SCW1 { c, phi } => scw::scw1_step(m, v, c * h, phi),
            Rule::SCW2 { c, phi } => scw::scw2_step(m, v, c * h, phi),
            Rule::NHERD { c } => nherd::step(m, v, c * h),
            Rule::AdaGrad { .. } => times(adagrad::step(m), h),
            Rule::FTRL { loss, .. } => times(ftrl::step(m, loss), h),
            // These step through `step_in`, with their context; the loop never calls `step`.
            Rule::ALMA { .. }
            | Rule::ROMMA
            | Rule::AggressiveROMMA
            | Rule::OGD { .. }
            | Rule::IELLIP { .. } => None,
        }
    }

    /// The step scale η_t of the L1 (FOBOS) threshold after an update with `step` on a row of
    /// variance `v`: the rule's gradient step per unit of loss gradient. AROW and NHERD take
    /// the squared hinge, so η_t = β_t/2 = 1/(2(v + r)) (the note's derivation; 1/C plays r for
    /// NHERD); the hinge-loss rules move α_t per unit gradient, so η_t = α_t.
    #[inline]
    fn l1_rate(&self, step: &Step, v: f64, h: f64) -> f64 {
        match *self {
            Rule::AROW { r } => arow::l1_rate(v, r / h),
            Rule::NHERD { c } => nherd::l1_rate(v, c * h),
            _ => step.alpha,
        }
    }

    /// Whether the rule reads a [`Context`] (docs/design.md §2.9): the learning loop then
    /// runs it through [`StepRule::step_in`].
    fn needs_context(&self) -> bool {
        matches!(
            self,
            Rule::ALMA { .. }
                | Rule::ROMMA
                | Rule::AggressiveROMMA
                | Rule::OGD { .. }
                | Rule::IELLIP { .. }
        )
    }

    /// Whether the rule reads ‖μ‖² (the loop computes it only then).
    fn needs_mean_norm(&self) -> bool {
        matches!(
            self,
            Rule::ALMA { .. } | Rule::ROMMA | Rule::AggressiveROMMA
        )
    }

    /// The step with its scales in `context`, behind the one gate of every step; the rules
    /// of the plain template ignore the context.
    #[inline]
    fn step_in(&self, m: f64, v: f64, norm2: f64, h: f64, context: &Context) -> Option<ScaledStep> {
        if !learnable(m, v, norm2, h) {
            // ALMA's condition reads only m and k, so it holds on an all-zero row too: the
            // round counts (k advances), and nothing moves.
            return match *self {
                Rule::ALMA { alpha, p, .. } if m == 0.0 && norm2 == 0.0 && is_weight(h) => {
                    alma::null_step((alpha, p), context)
                }
                _ => None,
            };
        }
        let scaled = match *self {
            // ALMA's η_k = C/(√(p − 1)·√k): C·h is η_k·h.
            Rule::ALMA { alpha, p, c } => alma::step(m, norm2, (alpha, p, c * h), context),
            Rule::ROMMA => romma::step(m, norm2, context.is_mistake(m), context),
            Rule::AggressiveROMMA => romma::step(m, norm2, m < 1.0, context),
            Rule::OGD { eta, loss } => ogd::step(m, eta * h, loss, context).map(ScaledStep::plain),
            Rule::IELLIP { b, c } => iellip::step(m, v, b, c, context),
            _ => self.raw_step(m, v, norm2, h).map(ScaledStep::plain),
        }?;
        let step = scaled.step.checked()?;
        ScaledStep { step, ..scaled }.checked()
    }
}

/// A regression rule: the same template with a signed step, μ ← μ + α·Σx, on the residual
/// e = y − μ·x.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RegressionRule {
    /// AROW with the squared loss = recursive least squares (AROW paper §3): always
    /// α = e/(v + r), c = 1/r. With Σ₀ = a·I this is exact Bayesian linear regression with
    /// prior N(0, a·I) and noise variance r.
    AROW {
        /// The noise variance r > 0.
        r: f64,
    },
    /// ε-insensitive Passive-Aggressive regression (Crammer et al. 2006), ℓ = max(0, |e| − ε):
    /// α = sign(e)·ℓ/‖x‖².
    PA {
        /// The insensitivity ε ≥ 0: residuals with |e| ≤ ε make no update.
        epsilon: f64,
    },
    /// PA-I: α = sign(e)·min(C, ℓ/‖x‖²).
    PA1 {
        /// The insensitivity ε ≥ 0.
        epsilon: f64,
        /// The aggressiveness C > 0, the cap on |α|.
        c: f64,
    },
    /// PA-II: α = sign(e)·ℓ/(‖x‖² + 1/(2C)).
    PA2 {
        /// The insensitivity ε ≥ 0.
        epsilon: f64,
        /// The aggressiveness C > 0.
        c: f64,
    },
}

impl RegressionRule {
    /// Builds a regression rule from its name and hyper-parameters (`r`; `epsilon`, `C`),
    /// validating them against its table entry.
    pub fn from_name(name: &str, params: &[(&str, f64)]) -> Result<RegressionRule, CwError> {
        match Entry::lookup(Kind::Regression, name, params)? {
            (Build::Regression(build), values) => Ok(build(&values)),
            _ => unreachable!("a regression entry builds a RegressionRule"),
        }
    }

    /// Whether the rule learns a covariance (AROW) rather than keeping Σ = I (the PA rules).
    pub fn is_second_order(&self) -> bool {
        self.entry().second_order
    }

    /// The rule's table entry.
    pub fn entry(&self) -> &'static Entry {
        match self {
            RegressionRule::AROW { .. } => &regression::AROW,
            RegressionRule::PA { .. } => &regression::PA,
            RegressionRule::PA1 { .. } => &regression::PA1,
            RegressionRule::PA2 { .. } => &regression::PA2,
        }
    }
}

impl StepRule for RegressionRule {
    #[inline]
    fn raw_step(&self, e: f64, v: f64, norm2: f64, h: f64) -> Option<Step> {
        // The weighted steps of docs/design.md §2.10, the unweighted ones at h = 1.
        match *self {
            RegressionRule::AROW { r } => regression::arow_step(e, v, r / h),
            RegressionRule::PA { epsilon } => regression::pa_step(e, norm2, epsilon),
            RegressionRule::PA1 { epsilon, c } => regression::pa1_step(e, norm2, epsilon, c * h),
            RegressionRule::PA2 { epsilon, c } => regression::pa2_step(e, norm2, epsilon, c, h),
        }
    }

    /// The step scale η_t of the L1 threshold: AROW regression takes the squared loss, so
    /// η_t = 1/(2(v + r)); the PA rules move |α_t| per unit gradient.
    #[inline]
    fn l1_rate(&self, step: &Step, v: f64, h: f64) -> f64 {
        match *self {
            RegressionRule::AROW { r } => arow::l1_rate(v, r / h),
            _ => step.alpha.abs(),
        }
    }
}

#[cfg(test)]
mod tests;
