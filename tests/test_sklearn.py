"""scikit-learn's estimator checks on every learner, in each covariance form, with both
multiclass strategies for the classifiers."""

import warnings

import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import cwrs  # noqa: E402


def forms(cls):
    """Keyword arguments of each covariance form of a learner class."""
    return [{"covariance": f} for f in ("diag", "full")] if cls._second_order else [{}]


ESTIMATORS = [
    cls(**form, multi_class=multi_class)
    for cls in cwrs.CLASSIFIERS
    for form in forms(cls)
    for multi_class in ("max-score", "ovr")
] + [cls(**form) for cls in cwrs.REGRESSORS for form in forms(cls)]
# The kernel forms: the dual learner with each built-in kernel, a budget, and the RFF primal.
ESTIMATORS += [
    cwrs.AROW(kernel="rbf"),
    cwrs.SCW1(kernel="poly", degree=2, multi_class="ovr"),
    cwrs.PA1(kernel="linear", budget=10),
    cwrs.AROW(kernel="rbf", budget=50, multi_class="ovr"),
    cwrs.CW(kernel_approximation="rff", n_components=50, random_state=0),
]
# Active learning around a second-order learner.
ESTIMATORS += [cwrs.SelectiveSampler(cwrs.AROW())]

# The calibrated meta-estimator, around a second-order and a first-order learner.
CALIBRATED = [
    cwrs.CalibratedClassifier(cwrs.AROW()),
    cwrs.CalibratedClassifier(cwrs.PA1(), method="isotonic"),
]
ESTIMATORS += CALIBRATED

# Checks that an online learner cannot pass by design, each with the reason.
_ORDER = (
    "online learners are order-dependent: the check compares weight k against the row repeated "
    "k times in another (shuffled) order; and for the rules whose weighted step is their "
    "objective's (docs/design.md §2.10) weight k is not k presentations even in place"
)
EXPECTED_FAILURES = {
    "check_sample_weight_equivalence_on_dense_data": _ORDER,
    "check_sample_weight_equivalence_on_sparse_data": _ORDER,
}
# The rules a weight cannot move (docs/design.md §2.10): their step projects onto a hard
# constraint, which a repetition of the row already meets; only weight 0 (skip) acts.
CONSTRAINT_RULES = (
    cwrs.PA, cwrs.CW, cwrs.ExactCW, cwrs.ROMMA, cwrs.AggressiveROMMA, cwrs.IELLIP
)


def _weights_fall_short(estimator):
    """The configurations whose weighted steps (docs/design.md §2.10), measured, do not make one
    pass predict class 0 as well as the check asks with class weights {0: 1000, 1: 0.0001, 2:
    0.0001}: ALMA (its projection onto the unit ball caps the step of any weight), NHERD with a
    diagonal covariance, and PA-I in the dual form with a budget of 10 (which drops support
    rows of any weight)."""
    return (
        isinstance(estimator, cwrs.ALMA)
        or isinstance(estimator, cwrs.NHERD) and estimator.covariance != "full"
        or isinstance(estimator, cwrs.PA1) and estimator.budget is not None
    )
# Only the second-order learners have predict_proba (on some data sets the ranks happen to agree).
EXPECTED_FAILURES_SECOND_ORDER = {
    **EXPECTED_FAILURES,
    "check_decision_proba_consistency": (
        "predict_proba is Φ(μ·x/√(xᵀΣx + s²)) (docs/design.md §3.14): the per-row variance "
        "makes it a non-monotone function of decision_function by design (where the label "
        "noise s² outweighs xᵀΣx on the check's rows, it passes)"
    ),
}


# The active learner: the second-order learner's reasons, and a stream's rows are decided one
# by one.
_ACTIVE_WEIGHTS = (
    f"{_ORDER}; and a row repeated k times is k rows of the stream, each decided (asked or not, "
    "and counted in bbq's t) from the model of its moment, while a weight acts only on a row "
    "that is asked"
)
EXPECTED_FAILURES_ACTIVE = {
    **EXPECTED_FAILURES_SECOND_ORDER,
    "check_sample_weight_equivalence_on_dense_data": _ACTIVE_WEIGHTS,
    "check_sample_weight_equivalence_on_sparse_data": _ACTIVE_WEIGHTS,
}


def expected_failed_checks(estimator):
    if isinstance(estimator, cwrs.SelectiveSampler):
        return EXPECTED_FAILURES_ACTIVE
    if isinstance(estimator, cwrs.CalibratedClassifier):
        return {
            name: (
                "the estimator it calibrates fails this check (" + reason + "), and the online "
                "Newton maps (Platt, temperature) are order-dependent too: one step of weight k "
                "is not k steps of weight 1 (only the isotonic bins' counts are)"
            )
            for name, reason in EXPECTED_FAILURES.items()
        }
    if isinstance(estimator, cwrs.AROWRegressor) and estimator.covariance == "full":
        return {}  # recursive least squares is exact, so row order does not matter
    if isinstance(estimator, cwrs.Regressor):
        return EXPECTED_FAILURES
    failures = dict(EXPECTED_FAILURES_SECOND_ORDER if estimator._second_order else EXPECTED_FAILURES)
    if isinstance(estimator, CONSTRAINT_RULES):
        failures["check_class_weight_classifiers"] = (
            "the rule's step projects onto a hard constraint that a repeated row already meets, "
            "so a positive weight cannot change it (docs/design.md §2.10)"
        )
    if _weights_fall_short(estimator):
        failures["check_class_weight_classifiers"] = (
            "measured: the weighted steps (docs/design.md §2.10) of one pass do not reach the "
            "check's accuracy on class 0 (see _weights_fall_short)"
        )
    if type(estimator) is cwrs.PA and estimator.multi_class == "max-score":
        failures["check_classifiers_train"] = (
            "one pass of max-score PA in the order random_state=0 draws reaches 0.827 training "
            "accuracy on the check's three blobs (threshold 0.83; 0.877 on average over 20 "
            "seeds, 0.833 in the stored order): PA's unbounded steps make one pass order-bound"
        )
    if type(estimator) is cwrs.IELLIP and estimator.multi_class == "max-score":
        failures["check_classifiers_train"] = (
            "one pass of max-score IELLIP (full) in the order random_state=0 draws reaches 0.830 "
            "training accuracy on the check's three blobs (threshold 0.83; 0.856 on average over "
            "20 seeds): it updates on mistakes only, and its covariance step c·b^(t−1) vanishes "
            "within ~30 rounds (docs/design.md §2.9); the diagonal form falls just below too "
            "since a tie at μ = 0 is a mistake only when the rival class comes first (LIBOL's "
            "prediction), so the first rounds update less"
        )
    return failures


with warnings.catch_warnings():
    # cwrs is duck-typed on purpose: scikit-learn is not a runtime dependency.
    warnings.filterwarnings("ignore", message=".*does not inherit from `sklearn.base.BaseEstimator`")
    checks = parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)


@checks
def test_sklearn_compatible(estimator, check):
    check(estimator)
