"""Shared helpers for test_reference.py and test_invariants.py: data strategies, estimator
construction and scale-aware comparisons."""

from __future__ import annotations

import os
import re

import numpy as np
from hypothesis import strategies as st

from reference import DEFAULTS, FIRST_ORDER, SECOND_ORDER

# Every (rule, covariance) pair: first-order rules have their single (identity) form.
RULE_FORMS = [(r, None) for r in FIRST_ORDER] + [
    (r, cov) for r in SECOND_ORDER for cov in ("diag", "full")
]
RULE_FORM_IDS = [f"{r}-{cov or 'identity'}" for r, cov in RULE_FORMS]
SECOND_ORDER_FULL = [(r, "full") for r in SECOND_ORDER]

CLASSES = np.array([-1, 1])

# CWRS_TEST_EXAMPLES_SCALE=10 runs ten times as many hypothesis examples (a longer soak).
_EXAMPLES_SCALE = float(os.environ.get("CWRS_TEST_EXAMPLES_SCALE", "1"))


def stable_id(value):
    """A test id for `value`: its name, or its text without any object's address (ids must be
    the same in every process, or pytest-xdist's workers disagree on the tests)."""
    name = getattr(value, "__name__", None)
    return name if isinstance(name, str) else re.sub(r" at 0x[0-9a-fA-F]+", "", str(value))


def examples(n):
    return max(1, int(round(n * _EXAMPLES_SCALE)))


def make_estimator(rule, covariance=None, params=None, a=1.0, fit_intercept=False, **extra):
    import cwrs

    cls = getattr(cwrs, rule)
    kw = dict(params or {})
    kw["fit_intercept"] = fit_intercept
    if rule in SECOND_ORDER:
        kw["a"] = a
        kw["covariance"] = covariance or "diag"
    kw.update(extra)
    return cls(**kw)


# ---- strategies ----------------------------------------------------------------------------

_log_range = st.floats(min_value=-1.0, max_value=1.0).map(lambda e: float(10.0**e))


def hyper_param(name):
    """A hyper-parameter value: the default or a value in the brief's range
    (eta in [0.55, 0.95]; C, r, b log-uniform in [0.1, 10])."""
    if name == "eta":
        return st.one_of(st.just(None), st.floats(min_value=0.55, max_value=0.95))
    return st.one_of(st.just(None), _log_range)


def hyper_params(rule):
    keys = sorted(DEFAULTS[rule])
    if not keys:
        return st.just({})
    return st.fixed_dictionaries({k: hyper_param(k) for k in keys}).map(
        lambda p: {k: v for k, v in p.items() if v is not None}
    )


def prior_variance():
    """`a` (the initial variance): the default 1.0 or log-uniform in [0.1, 10]."""
    return st.one_of(st.just(1.0), _log_range)


@st.composite
def streams(draw, max_n=40, max_d=6, min_n=1, repeats=True, zero_rows=True, min_d=1):
    """(X, y): gaussian rows with a mix of exact zeros, all-zero rows and (optionally)
    repeated rows (with the same or the flipped label); labels in {-1, +1}."""
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(min_d, max_d))
    seed = draw(st.integers(0, 2**32 - 1))
    p_zero = draw(st.sampled_from([0.0, 0.2, 0.5, 0.8]))
    p_zero_row = draw(st.sampled_from([0.0, 0.1, 0.3])) if zero_rows else 0.0
    p_repeat = draw(st.sampled_from([0.0, 0.2, 0.5])) if repeats else 0.0
    scale = draw(st.sampled_from([1.0, 1.0, 0.1, 10.0]))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    X[rng.random((n, d)) < p_zero] = 0.0
    X[rng.random(n) < p_zero_row] = 0.0
    y = rng.choice(np.array([-1, 1]), size=n)
    for t in range(1, n):
        if rng.random() < p_repeat:
            s = int(rng.integers(0, t))
            X[t] = X[s]
            y[t] = y[s] if rng.random() < 0.5 else -y[s]
    return X, y


@st.composite
def one_hot_streams(draw, max_n=40, max_d=6):
    """Rows with exactly one non-zero (arbitrary continuous value, random feature)."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([1.0, 0.1, 10.0]))
    rng = np.random.default_rng(seed)
    X = np.zeros((n, d))
    cols = rng.integers(0, d, size=n)
    vals = rng.normal(size=n) * scale
    vals[vals == 0.0] = scale  # (a normal draw of exactly 0 is impossible in practice; be safe)
    X[np.arange(n), cols] = vals
    y = rng.choice(np.array([-1, 1]), size=n)
    return X, y


# ---- comparisons ---------------------------------------------------------------------------


def assert_close(got, ref, rtol=1e-9, floor=1.0, what="", err_msg="", atol=None):
    """assert_allclose with atol = rtol * max(floor, max|ref|) (scale-aware), unless atol is
    given explicitly."""
    got = np.asarray(got, dtype=float)
    ref = np.asarray(ref, dtype=float)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    if atol is None:
        scale = max(floor, float(np.abs(ref).max()) if ref.size else 0.0)
        atol = rtol * scale
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, err_msg=f"{what} {err_msg}")


# Diagonal covariances evolve multiplicatively (Σ_j <- Σ_j / (1 + c Σ_j x_j²)), so every entry
# carries a small *relative* error even when it has collapsed by hundreds of orders of magnitude
# (ExactCW/diag does): compare them elementwise-relative; the tiny atol only absorbs underflow.
DIAG_ATOL = 1e-300


def assert_covariance_close(got, ref, cov, a, rtol=1e-9, what="covariance_", err_msg=""):
    if cov == "diag":
        assert_close(got, ref, rtol, what=what, err_msg=err_msg, atol=DIAG_ATOL)
    else:
        assert_close(got, ref, rtol, a, what=what, err_msg=err_msg)


def model_state(est):
    """The fitted state of an estimator as a dict of numpy arrays / ints (regressors count no
    mistakes)."""
    s = {
        "coef_": np.array(est.coef_, copy=True),
        "intercept_": np.array(est.intercept_, copy=True),
        "n_updates_": int(est.n_updates_),
    }
    if hasattr(est, "n_mistakes_"):
        s["n_mistakes_"] = int(est.n_mistakes_)
    if hasattr(est, "covariance_"):
        s["covariance_"] = np.array(est.covariance_, copy=True)
    return s


def assert_states_identical(s1, s2, what=""):
    assert s1.keys() == s2.keys(), f"{what}: {sorted(s1)} != {sorted(s2)}"
    for k in s1:
        a, b = s1[k], s2[k]
        if isinstance(a, np.ndarray):
            assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {k} {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
            assert np.array_equal(a, b), f"{what}: {k} differs:\n{a}\n{b}\nmax |diff| {np.abs(a - b).max()}"
        else:
            assert a == b, f"{what}: {k} {a} != {b}"


def well_conditioned_prefix(rule, cov, params, a, X, y):
    """The number of leading rows the reference learns without an ill-conditioned round (one
    whose update float64 cannot determine to ~1e-9, see reference.py) and without overflow.
    Tests comparing two differently-rounded computations truncate streams there."""
    from reference import RefLearner

    ref = RefLearner(rule, params, cov, X.shape[1], a)
    for t in range(X.shape[0]):
        try:
            rec = ref.learn(X[t], y[t])
        except (FloatingPointError, ArithmeticError):
            return t
        if rec["ill_conditioned"]:
            return t
    return X.shape[0]
