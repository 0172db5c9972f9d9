"""Bad input, table-driven: every bad call raises the right exception with a message that says
what to fix, and leaves a fitted model bit-identical (its fitted attributes, its pickled state and
`__getstate__`, array by array). Also: corrupted states and impossible sizes give errors, never a
panic or an aborted process.

Each row of a table is (id, builder, exception, message pattern); builders take the good (X, y)
of the model's task and return the bad call's arguments.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs
from cwrs import _cwrs

N, D = 24, 5
RNG = np.random.default_rng(11)
X_GOOD = RNG.integers(-3, 4, size=(N, D)).astype(np.float64)
TARGETS = {
    "binary": np.where(X_GOOD @ RNG.normal(size=D) > 0, "spam", "ham"),
    "multiclass": np.array([3, 5, 8])[np.arange(N) % 3],
    "regression": X_GOOD @ RNG.normal(size=D),
}

# id: (estimator factory, task)
MODELS = {
    "AROW-diag-binary": (lambda: cwrs.AROW(), "binary"),
    "AROW-full-binary": (lambda: cwrs.AROW(covariance="full"), "binary"),
    "SCW1-full-multiclass": (lambda: cwrs.SCW1(covariance="full"), "multiclass"),
    "CW-diag-multiclass-ovr": (lambda: cwrs.CW(multi_class="ovr"), "multiclass"),
    "PA1-binary": (lambda: cwrs.PA1(), "binary"),
    "Perceptron-multiclass": (lambda: cwrs.Perceptron(), "multiclass"),
    "NAROW-l1-binary": (lambda: cwrs.NAROW(penalty="l1"), "binary"),
    "AROW-rbf-kernel-binary": (lambda: cwrs.AROW(kernel="rbf", budget=10), "binary"),
    "PA1-poly-kernel-multiclass": (lambda: cwrs.PA1(kernel="poly"), "multiclass"),
    "AROW-rff-binary": (lambda: cwrs.AROW(kernel_approximation="rff", random_state=0), "binary"),
    "AROWRegressor-full": (lambda: cwrs.AROWRegressor(covariance="full"), "regression"),
    "PA1Regressor": (lambda: cwrs.PA1Regressor(), "regression"),
}
CLASSIFICATION = {"binary", "multiclass"}
ALL_TASKS = CLASSIFICATION | {"regression"}


def fitted(model_id, rows=slice(None)):
    make, task = MODELS[model_id]
    return make().fit(X_GOOD[rows], TARGETS[task][rows])


# ------------------------------------------------------------------------------------ the state
FITTED_ATTRIBUTES = (
    "coef_", "intercept_", "covariance_", "n_updates_", "n_mistakes_", "classes_",
    "n_features_in_", "dual_coef_", "n_support_",
)


def canonical(value):
    """A comparable, bit-exact form of nested containers of arrays and plain values."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return ("dict", tuple((k, canonical(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    if isinstance(value, float):
        return ("float", value.hex())
    return (type(value).__name__, repr(value))


def snapshot(model):
    """Everything that defines the model: fitted attributes, `__getstate__` (with the native
    state's arrays) and the pickled bytes."""
    out = {}
    for name in FITTED_ATTRIBUTES:
        try:
            out[name] = canonical(np.array(getattr(model, name), copy=True))
        except AttributeError:
            pass
    out["__getstate__"] = canonical(model.__getstate__())
    out["pickle"] = pickle.dumps(model)
    return out


def assert_untouched(model, before):
    after = snapshot(model)
    assert after.keys() == before.keys()
    for name in before:
        assert after[name] == before[name], f"{name} changed"


# ------------------------------------------------------------------------------- bad data calls
def with_value(X, value, row=3, col=2):
    X = np.array(X, dtype=np.float64)
    X[row, col] = value
    return X


def mutated(matrix, **arrays):
    """`matrix` with some of its arrays replaced after construction (as a user might)."""
    for name, array in arrays.items():
        setattr(matrix, name, np.asarray(array))
    return matrix


def csr(X, **arrays):
    return mutated(sp.csr_matrix(X), **arrays)


def csr_index(X, position, value):
    matrix = sp.csr_matrix(X)
    indices = matrix.indices.copy()
    indices[position] = value
    return mutated(matrix, indices=indices)


def csr_indptr(X, edit):
    matrix = sp.csr_matrix(X)
    return mutated(matrix, indptr=edit(matrix.indptr.copy()))


def decreasing(indptr):
    indptr[3], indptr[4] = indptr[4], indptr[3] - 1
    return indptr


def last_off(indptr):
    indptr[-1] -= 1
    return indptr


def object_X(X, value):
    X = X.astype(object)
    X[0, 0] = value
    return X


def csc_row_index(X, value):
    matrix = sp.csc_matrix(X)
    indices = matrix.indices.copy()
    indices[-1] = value
    return mutated(matrix, indices=indices)


def coo_row(X, value):
    matrix = sp.coo_matrix(X)
    row = matrix.row.copy()
    row[0] = value
    return mutated(matrix, row=row)


def sparse_value(X, value, kind=sp.csr_matrix):
    matrix = kind(X)
    matrix.data[-1] = value
    return matrix


@dataclass
class Bad:
    """A bad learning call: `build(X, y) -> (X, y, keyword arguments)`."""

    id: str
    build: Callable
    error: type
    match: str
    tasks: set = field(default_factory=lambda: ALL_TASKS)
    fit: bool = True  # also a bad `fit` call (fit starts a new model: any width, any labels)
    partial_fit: bool = True  # also a bad call continuing a model


def x_only(transform):
    return lambda X, y: (transform(X), y, {})


BAD_CALLS = [
    # Non-finite values, dense and sparse.
    Bad("nan-dense", x_only(lambda X: with_value(X, np.nan)), ValueError, "Input X contains NaN"),
    Bad("inf-dense", x_only(lambda X: with_value(X, np.inf)), ValueError, "NaN or infinity"),
    Bad("minus-inf-dense", x_only(lambda X: with_value(X, -np.inf)), ValueError, "infinity"),
    Bad("nan-float32", x_only(lambda X: with_value(X, np.nan).astype(np.float32)), ValueError,
        "NaN"),
    Bad("nan-csr", x_only(lambda X: sparse_value(X, np.nan)), ValueError, "NaN"),
    Bad("inf-csc", x_only(lambda X: sparse_value(X, np.inf, sp.csc_matrix)), ValueError,
        "infinity"),
    Bad("nan-csr-array", x_only(lambda X: sparse_value(X, np.nan, sp.csr_array)), ValueError,
        "NaN"),
    # Shapes.
    Bad("too-many-features", x_only(lambda X: np.hstack([X, X[:, :2]])), ValueError,
        r"X has 7 features, but \w+ is expecting 5 features", fit=False),
    Bad("too-few-features", x_only(lambda X: X[:, :-1]), ValueError,
        r"X has 4 features, but \w+ is expecting 5 features", fit=False),
    Bad("too-many-features-csr", x_only(lambda X: sp.csr_matrix(np.hstack([X, X]))), ValueError,
        r"X has 10 features, but \w+ is expecting 5", fit=False),
    Bad("X-1d", lambda X, y: (X[0], y[:1], {}), ValueError, "Expected 2D array, got 1D array"),
    Bad("X-3d", lambda X, y: (X[None], y, {}), ValueError, "Expected 2D array, got 3D array"),
    Bad("X-0-rows", lambda X, y: (X[:0], y[:0], {}), ValueError, r"0 sample\(s\)"),
    Bad("X-0-features", x_only(lambda X: X[:, :0]), ValueError, r"0 feature\(s\)"),
    Bad("X-0-rows-csr", lambda X, y: (sp.csr_matrix(X[:0]), y[:0], {}), ValueError,
        r"0 sample\(s\)"),
    Bad("X-None", x_only(lambda X: None), ValueError, "Expected 2D array, got None"),
    Bad("y-shorter", lambda X, y: (X, y[:-1], {}), ValueError, f"X has {N} rows but y has"),
    Bad("y-longer", lambda X, y: (X, np.r_[y, y[:1]], {}), ValueError, f"X has {N} rows but y"),
    Bad("y-2d", lambda X, y: (X, np.c_[y, y], {}), ValueError, "y should be a 1d array"),
    Bad("y-None", lambda X, y: (X, None, {}), ValueError, "requires y to be passed"),
    # Types.
    Bad("complex-X", x_only(lambda X: X + 1j), ValueError, "Complex data not supported"),
    Bad("string-dtype-X", x_only(lambda X: X.astype(str)), ValueError,
        "X holds strings or bytes"),
    Bad("object-X-with-a-string", x_only(lambda X: object_X(X, "seven")), ValueError,
        "X must hold numbers: could not convert string to float"),
    Bad("object-X-with-a-dict", x_only(lambda X: object_X(X, {"a": 1})), TypeError,
        "X must hold numbers"),
    Bad("X-a-string", x_only(lambda X: "data.csv"), ValueError, "Expected 2D array of numbers"),
    # Malformed sparse matrices (SciPy trusts these arrays: they are checked before it runs).
    Bad("csr-index-out-of-range", x_only(lambda X: csr_index(X, -1, D + 2)), ValueError,
        "sparse column index 7 is out of range for 5 features", fit=False),
    Bad("csr-negative-index", x_only(lambda X: csr_index(X, 0, -1)), ValueError,
        "sparse column index -1 is out of range for 5 features"),
    Bad("csr-indptr-decreasing", x_only(lambda X: csr_indptr(X, decreasing)), ValueError,
        "CSR indptr must never decrease"),
    Bad("csr-indptr-too-short", x_only(lambda X: csr_indptr(X, lambda p: p[:-1])), ValueError,
        r"CSR indptr has 24 entries, but a matrix with 24 rows needs 25"),
    Bad("csr-indptr-last-is-not-nnz", x_only(lambda X: csr_indptr(X, last_off)), ValueError,
        "CSR indptr must start at 0 and end at the number of stored values"),
    Bad("csr-indices-shorter-than-data",
        x_only(lambda X: csr(X, indices=sp.csr_matrix(X).indices[:-1])), ValueError,
        "CSR indices hold"),
    Bad("csc-row-index-out-of-range", x_only(lambda X: csc_row_index(X, N + 5)), ValueError,
        "sparse row index 29 is out of range for 24 rows"),
    Bad("csc-negative-row-index", x_only(lambda X: csc_row_index(X, -3)), ValueError,
        "sparse row index -3 is out of range"),
    Bad("coo-row-out-of-range", x_only(lambda X: coo_row(X, 10**6)), ValueError,
        "sparse row index 1000000 is out of range"),
    # Sample weights (repetition counts).
    Bad("sample-weight-nan", lambda X, y: (X, y, {"sample_weight": with_value(
        np.ones((1, N)), np.nan, 0, 4)[0]}), ValueError, "sample_weight contains NaN"),
    Bad("sample-weight-infinite", lambda X, y: (X, y, {"sample_weight": with_value(
        np.ones((1, N)), np.inf, 0, 4)[0]}), ValueError, "sample_weight contains infinity"),
    Bad("sample-weight-negative", lambda X, y: (X, y, {"sample_weight": -np.ones(N)}),
        ValueError, "sample_weight must be ≥ 0, got -1.0 at row 0"),
    Bad("sample-weight-too-short", lambda X, y: (X, y, {"sample_weight": np.ones(N - 1)}),
        ValueError, r"sample_weight.shape == \(23,\), expected \(24,\)"),
    Bad("sample-weight-strings", lambda X, y: (X, y, {"sample_weight": ["1"] * N}), ValueError,
        "sample_weight holds strings"),
    # Labels.
    Bad("unknown-label", lambda X, y: (X, np.r_[y[:-1], [new_label(y)]], {}), ValueError,
        r"y contains labels \[('eggs'|99)\] that are not in classes", tasks=CLASSIFICATION,
        fit=False),
    Bad("continuous-targets-to-a-classifier", lambda X, y: (X, np.full(N, 0.37), {}),
        ValueError, "Unknown label type: continuous", tasks=CLASSIFICATION),
    Bad("nan-label", lambda X, y: (X, np.r_[np.zeros(N - 1), np.nan], {}), ValueError,
        "Input y contains NaN", tasks=CLASSIFICATION),
    Bad("classes-changed", lambda X, y: (X, y, {"classes": np.r_[np.unique(y), [new_label(y)]]}),
        ValueError, "is not the same as on the first call to partial_fit",
        tasks=CLASSIFICATION, fit=False),
    Bad("one-class", lambda X, y: (X, np.repeat(y[:1], N), {}), ValueError,
        "only one class is present", tasks=CLASSIFICATION, partial_fit=False),
    # Regression targets.
    Bad("nan-target", lambda X, y: (X, with_value(y[None], np.nan, 0, 5)[0], {}), ValueError,
        "Input y contains NaN", tasks={"regression"}),
    Bad("inf-target", lambda X, y: (X, with_value(y[None], -np.inf, 0, 5)[0], {}), ValueError,
        "Input y contains infinity", tasks={"regression"}),
    Bad("string-targets", lambda X, y: (X, y.astype(str), {}), ValueError, "y holds strings",
        tasks={"regression"}),
]


def new_label(y):
    """A label of y's type that is not among y's classes."""
    return "eggs" if y.dtype.kind in "UO" else 99


def bad_cases(method):
    return [
        pytest.param(model_id, bad, id=f"{model_id}-{bad.id}")
        for model_id, (_, task) in MODELS.items()
        for bad in BAD_CALLS
        if task in bad.tasks and getattr(bad, method)
    ]


@pytest.mark.parametrize("model_id, bad", bad_cases("partial_fit"))
def test_bad_partial_fit_raises_and_leaves_the_model_untouched(model_id, bad):
    model = fitted(model_id, slice(0, N // 2))
    before = snapshot(model)
    X, y, kwargs = bad.build(X_GOOD.copy(), TARGETS[MODELS[model_id][1]])
    with pytest.raises(bad.error, match=bad.match):
        model.partial_fit(X, y, **kwargs)
    assert_untouched(model, before)


@pytest.mark.parametrize("model_id, bad", bad_cases("fit"))
def test_bad_fit_raises_and_keeps_the_fitted_model(model_id, bad):
    model = fitted(model_id)
    before = snapshot(model)
    X, y, kwargs = bad.build(X_GOOD.copy(), TARGETS[MODELS[model_id][1]])
    with pytest.raises(bad.error, match=bad.match):
        model.fit(X, y, **kwargs)
    assert_untouched(model, before)


@pytest.mark.parametrize("model_id", MODELS)
def test_bad_first_partial_fit_leaves_the_estimator_unfitted(model_id):
    make, task = MODELS[model_id]
    y = TARGETS[task]
    classes = {} if task == "regression" else {"classes": np.unique(y)}
    estimator = make()
    for X in (with_value(X_GOOD, np.nan), X_GOOD[None], csr_indptr(X_GOOD, decreasing)):
        with pytest.raises(ValueError):
            estimator.partial_fit(X, y, **classes)
        assert not hasattr(estimator, "n_features_in_")
    if task != "regression":
        with pytest.raises(ValueError, match="classes must be passed on the first call"):
            estimator.partial_fit(X_GOOD, y)
    assert not hasattr(estimator, "n_features_in_")
    estimator.partial_fit(X_GOOD, y, **classes)  # and it still learns
    assert estimator.n_features_in_ == D


# ---------------------------------------------------------------------------- bad predictions
BAD_PREDICTION_X = [
    ("nan-dense", lambda X: with_value(X, np.nan), ValueError, "Input X contains NaN"),
    ("inf-csr", lambda X: sparse_value(X, np.inf), ValueError, "NaN or infinity"),
    ("nan-csc", lambda X: sparse_value(X, np.nan, sp.csc_matrix), ValueError, "NaN"),
    ("too-few-features", lambda X: X[:, :-1], ValueError,
     r"X has 4 features, but \w+ is expecting 5 features"),
    ("too-many-features-csr", lambda X: sp.csr_matrix(np.hstack([X, X])), ValueError,
     r"X has 10 features, but \w+ is expecting 5 features"),
    ("X-1d", lambda X: X[0], ValueError, "Expected 2D array, got 1D array"),
    ("X-3d", lambda X: X[None], ValueError, "Expected 2D array, got 3D array"),
    ("X-0-rows", lambda X: X[:0], ValueError, r"0 sample\(s\)"),
    ("X-None", lambda X: None, ValueError, "Expected 2D array, got None"),
    ("complex-X", lambda X: X * 1j, ValueError, "Complex data not supported"),
    ("string-dtype-X", lambda X: X.astype(str), ValueError, "X holds strings or bytes"),
    ("object-X-with-a-dict", lambda X: object_X(X, {}), TypeError, "X must hold numbers"),
    ("csr-index-out-of-range", lambda X: csr_index(X, -1, 9), ValueError,
     "sparse column index 9 is out of range for 5 features"),
    ("csr-indptr-decreasing", lambda X: csr_indptr(X, decreasing), ValueError,
     "CSR indptr must never decrease"),
    ("csc-row-index-out-of-range", lambda X: csc_row_index(X, 99), ValueError,
     "sparse row index 99 is out of range"),
]


def prediction_methods(model):
    names = ["predict", "decision_function", "predict_proba", "predict_log_proba"]
    if isinstance(model, cwrs.AROWRegressor):
        return [model.predict, lambda X: model.predict(X, return_std=True)]
    return [getattr(model, n) for n in names if hasattr(model, n)]


@pytest.mark.parametrize(
    "case", BAD_PREDICTION_X, ids=[case[0] for case in BAD_PREDICTION_X]
)
@pytest.mark.parametrize("model_id", MODELS)
def test_bad_prediction_input_raises(model_id, case):
    _, build, error, match = case
    model = fitted(model_id)
    before = snapshot(model)
    for method in prediction_methods(model):
        with pytest.raises(error, match=match):
            method(build(X_GOOD.copy()))
    assert_untouched(model, before)


def test_bool_X_is_accepted_as_numbers():
    # As in scikit-learn, a boolean X is data (0 and 1), not an error.
    X = X_GOOD > 0
    y = TARGETS["binary"]
    model = cwrs.AROW(random_state=0).fit(X, y)
    same = cwrs.AROW(random_state=0).fit(X.astype(float), y)
    np.testing.assert_array_equal(model.coef_, same.coef_)
    np.testing.assert_array_equal(model.predict(X), model.predict(X.astype(float)))


# ---------------------------------------------------------------------- bad hyper-parameters
BAD_HYPER_PARAMETERS = [
    # (estimator, task, parameter, value, message)
    ("AROW", "binary", "r", 0.0, "r must be a positive finite number"),
    ("AROW", "binary", "r", -1.0, "r must be a positive finite number"),
    ("AROW", "binary", "r", np.nan, "r must be a positive finite number"),
    ("AROW", "multiclass", "r", np.inf, "r must be a positive finite number"),
    ("AROW", "binary", "r", "1", "r must be a real number"),
    ("PA1", "binary", "C", 0.0, "C must be a positive finite number"),
    ("SCW1", "multiclass", "C", -2.0, "C must be a positive finite number"),
    ("NHERD", "binary", "C", np.nan, "C must be a positive finite number"),
    ("CW", "binary", "eta", 0.5, r"eta must lie strictly between 0.5 and 1"),
    ("CW", "multiclass", "eta", 1.0, r"eta must lie strictly between 0.5 and 1"),
    ("ExactCW", "binary", "eta", 0.2, r"eta must lie strictly between 0.5 and 1"),
    ("SCW2", "binary", "eta", np.nan, r"eta must lie strictly between 0.5 and 1"),
    ("AROW", "binary", "a", 0.0, "a must be a positive finite number"),
    ("SOP", "multiclass", "a", -1.0, "a must be a positive finite number"),
    ("NAROW", "binary", "b", 0.0, "b must be a positive finite number"),
    ("NAROW", "binary", "b", -0.5, "b must be a positive finite number"),
    ("NAROW", "multiclass", "b", np.nan, "b must be a positive finite number"),
    ("AROW", "binary", "covariance", "dense", 'covariance must be "diag" or "full"'),
    ("AROW", "binary", "covariance", None, 'covariance must be "diag" or "full"'),
    ("AROW", "binary", "kernel", "sigmoid", "kernel must be None, a callable or one of"),
    ("AROW", "multiclass", "multi_class", "ova", 'multi_class must be "max-score" or "ovr"'),
    ("AROW", "binary", "multi_class", "ova", 'multi_class must be "max-score" or "ovr"'),
    ("AROW", "binary", "penalty", "l2", 'penalty must be None, "l1" or "l1-uniform"'),
    ("AROW", "binary", "n_iter", 0, "n_iter must be a positive integer"),
    ("AROW", "binary", "fit_intercept", "yes", "fit_intercept must be True or False"),
    ("AROW", "binary", "shuffle", "yes", "shuffle must be True or False"),
    ("AROW", "binary", "random_state", "seed", "random_state must be None, an int"),
    ("AROWRegressor", "regression", "r", 0.0, "r must be a positive finite number"),
    ("AROWRegressor", "regression", "covariance", "dense", 'covariance must be "diag" or'),
    ("PARegressor", "regression", "epsilon", -0.1, "epsilon must be a non-negative finite"),
    ("PA2Regressor", "regression", "C", np.nan, "C must be a positive finite number"),
]
# Hyper-parameters that only matter with a kernel or random features: (extra setting, ...).
KERNEL_HYPER_PARAMETERS = [
    ({"kernel": "rbf"}, "budget", 0, "budget must be a positive integer"),
    ({"kernel": "poly"}, "degree", 0, "degree must be a positive integer"),
    ({"kernel": "rbf"}, "gamma", np.nan, "gamma must be a positive number"),
    ({"kernel_approximation": "rff"}, "n_components", 0, "n_components must be a positive"),
    ({"kernel_approximation": "rff"}, "gamma", 0.0, "gamma must be a positive number"),
]


def hyper_cases():
    cases = [
        pytest.param(name, task, {}, parameter, value, message,
                     id=f"{name}-{task}-{parameter}={value!r}")
        for name, task, parameter, value, message in BAD_HYPER_PARAMETERS
    ]
    cases += [
        pytest.param("AROW", "binary", extra, parameter, value, message,
                     id=f"AROW-{next(iter(extra.values()))}-{parameter}={value!r}")
        for extra, parameter, value, message in KERNEL_HYPER_PARAMETERS
    ]
    return cases


@pytest.mark.parametrize("name, task, extra, parameter, value, message", hyper_cases())
def test_bad_hyper_parameter_raises_at_fit_time_and_keeps_the_model(
    name, task, extra, parameter, value, message
):
    cls = getattr(cwrs, name)
    X, y = X_GOOD, TARGETS[task]
    classes = {} if task == "regression" else {"classes": np.unique(y)}
    # __init__ only stores; fit and the first partial_fit refuse, leaving the estimator unfitted.
    estimator = cls(**extra, **{parameter: value})
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y)
    with pytest.raises(ValueError, match=message):
        estimator.partial_fit(X, y, **classes)
    assert not hasattr(estimator, "n_features_in_")
    # A fitted model given the bad value by set_params: fit, a batch partial_fit and a one-row
    # partial_fit all refuse, and the model stays as it was.
    good = {parameter: getattr(cls(**extra), parameter)}
    model = cls(**extra).fit(X, y)
    model.partial_fit(X[:1], y[:1])  # the one-row path is on
    before = snapshot(model)
    model.set_params(**{parameter: value})
    for call in (lambda: model.fit(X, y), lambda: model.partial_fit(X, y),
                 lambda: model.partial_fit(X[:1], y[:1])):
        with pytest.raises(ValueError, match=message):
            call()
    model.set_params(**good)  # the snapshot holds the hyper-parameters too
    assert_untouched(model, before)
    # By plain assignment: fit and a batch partial_fit refuse (the one-row path trusts the
    # values checked last; set_params is what turns it off until the next check).
    model.partial_fit(X, y)
    before = snapshot(model)
    setattr(model, parameter, value)
    for call in (lambda: model.fit(X, y), lambda: model.partial_fit(X, y)):
        with pytest.raises(ValueError, match=message):
            call()
    setattr(model, parameter, good[parameter])
    assert_untouched(model, before)


# --------------------------------------------------------------- no panic, no aborted process
def test_a_model_too_large_for_memory_is_a_memory_error():
    # 10⁷ sparse features with a full covariance would need 800 TB: the process used to abort.
    X = sp.csr_matrix(([1.0, 1.0], ([0, 1], [5, 9])), shape=(2, 10**7))
    model = cwrs.AROW(covariance="full")
    with pytest.raises(MemoryError, match='covariance="diag" needs memory linear'):
        model.partial_fit(X, [0, 1], classes=[0, 1])
    assert not hasattr(model, "n_features_in_")
    assert cwrs.AROW(covariance="diag").partial_fit(X, [0, 1], classes=[0, 1]).coef_.shape == (
        1, 10**7)
    # Regression targets given to a classifier as integer labels: a million classes.
    with pytest.raises(MemoryError, match="not enough memory: 1000000 classes of a full"), \
            pytest.warns(cwrs.RegressionTargetWarning):
        cwrs.AROW(covariance="full").fit(np.ones((10**6, 100)), np.arange(10**6))


def test_more_features_than_any_model_can_hold():
    # Used to panic with "capacity overflow" (a PanicException, which escapes `except Exception`).
    X = sp.csr_matrix((2, 2**62))
    with pytest.raises(ValueError, match="a model cannot hold 4611686018427387904 features"):
        cwrs.AROW().partial_fit(X, [0, 1], classes=[0, 1])


def native_state(model_id):
    return fitted(model_id).__getstate__()["_model"][1]


def corrupted_states():
    """(id, corrupted named state, exception, message)."""
    cases = []
    state = native_state("AROW-diag-binary")
    empty = {"mean": np.zeros(0), "covariance_values": np.zeros(0)}
    s = dict(state, n_features=2**64 - 1, **empty)  # beyond any integer the state holds
    cases.append(("features-overflow", s, cwrs.InvalidModelStateError, "n_features"))
    s = dict(state, n_features=2**63 - 1, **empty)
    cases.append(("features-too-many", s, ValueError, "a model cannot hold"))
    s = dict(state, covariance_values=-np.abs(state["covariance_values"]))
    cases.append(("negative-variances", s, ValueError, "must hold positive variances"))
    s = dict(state, mean=state["mean"][:-1])
    cases.append(("short-mean", s, ValueError, "a mean must hold 6 values, got 5$"))
    s = dict(state, mean=np.full_like(state["mean"], np.nan))
    cases.append(("nan-mean", s, ValueError, "mean contains NaN or infinity"))
    for a in (-1.0, 0.0, np.nan, np.inf):
        s = dict(state, a=a, process_noise="auto")
        cases.append((f"prior-variance-{a}", s, ValueError, "a must be a positive finite number"))
    s = dict(state, covariance="dense")
    cases.append(("unknown-covariance", s, ValueError, "covariance"))
    state = native_state("SCW1-full-multiclass")
    s = dict(state, n_classes=2**63 - 1, n_features=1, means=np.zeros(0))
    s["covariance_values"] = np.zeros(0)  # classes × dim overflowed
    cases.append(("classes-overflow", s, ValueError, "does not divide into classes"))
    s = dict(state, covariance_values=state["covariance_values"][:-1])
    cases.append(("ragged-covariances", s, ValueError, "does not divide into classes"))
    state = native_state("AROW-rbf-kernel-binary")
    s = dict(state, budget=2)
    cases.append(("over-budget", s, ValueError, "more support rows than the budget"))
    s = dict(state, support_indices=state["support_indices"] + 100)
    cases.append(("support-index-out-of-range", s, ValueError, "out of range"))
    return cases


@pytest.mark.parametrize(
    "state, error, message",
    [case[1:] for case in corrupted_states()],
    ids=[case[0] for case in corrupted_states()],
)
def test_corrupted_native_state_is_a_value_error(state, error, message):
    with pytest.raises(error, match=message) as raised:
        _cwrs.Model.from_state(state)
    assert isinstance(raised.value, cwrs.InvalidModelStateError)


def test_corrupted_pickle_is_a_value_error():
    model = fitted("AROW-full-binary")
    state = model.__getstate__()
    kind, native = state["_model"]
    native = dict(native, covariance_values=native["covariance_values"][:-3])
    state["_model"] = (kind, native)
    with pytest.raises(ValueError, match="covariance over 6 coordinates needs"):
        cwrs.AROW().__setstate__(state)
