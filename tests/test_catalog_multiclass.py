"""Multiclass learners against LIBOL's multiclass algorithms (tests/libol_reference.py,
transliterated from its algorithms/M_*.m). LIBOL has M_ROMMA, M_aROMMA and M_OGD among the
learners of docs/design.md §2.9 (and no multiclass ALMA, IELLIP, AdaGrad or FTRL): each is the
max-score strategy (docs/design.md §4.1) with the rival the first other class of highest score,
the joint weight vector of the classes, 2‖x‖² for the pair and LIBOL's prediction, the first
class of highest score. One pass in the stored order of scikit-learn's bundled digits (1,797
rows, 64 features, 10 classes; ../shared/datasets holds no multiclass set) with
fit_intercept=False: LIBOL's mistake count exactly (from cwrs's decisions, LIBOL's way), its
update count, and its weights to 1e-8."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cwrs
from libol_reference import run_multiclass

CASES = [("ROMMA", {}), ("AggressiveROMMA", {}), ("OGD", {}), ("OGD", {"eta": 0.1})]
IDS = [f"{name}-{params}" for name, params in CASES]


def libol_mistakes(name, params, X, labels):
    """cwrs's online mistakes counted LIBOL's way (the first class of highest score is not the
    label) from the model's decisions before each row, learning row by row; and the model."""
    model = getattr(cwrs, name)(fit_intercept=False, multi_class="max-score", **params)
    classes, mistakes = np.unique(labels), 0
    for i in range(len(labels)):
        if i:
            mistakes += int(np.argmax(model.decision_function(X[i : i + 1])[0])) != labels[i]
        else:
            mistakes += labels[0] != 0  # every score is 0: LIBOL predicts the first class
        model.partial_fit(X[i : i + 1], labels[i : i + 1], classes=classes)
    return mistakes, model


def check(name, params, X, labels, n_classes):
    assert np.all(np.any(X != 0, axis=1))
    W, mistakes, updates = run_multiclass(name, X, labels, n_classes, **params)
    model = getattr(cwrs, name)(fit_intercept=False, shuffle=False, **params).fit(X, labels)
    assert model.n_updates_ == updates
    replayed, one_by_one = libol_mistakes(name, params, X, labels)
    assert replayed == mistakes
    np.testing.assert_array_equal(one_by_one.coef_, model.coef_)
    scale = max(1.0, float(np.max(np.abs(W))))
    np.testing.assert_allclose(model.coef_, W, rtol=0, atol=1e-8 * scale)


@pytest.mark.parametrize(("name", "params"), CASES, ids=IDS)
def test_libol_multiclass_agreement_on_digits(name, params):
    from sklearn.datasets import load_digits

    X, labels = load_digits(return_X_y=True)
    check(name, params, X.astype(np.float64), labels, 10)


STREAMS = st.tuples(st.integers(0, 2**32 - 1), st.integers(5, 60), st.integers(4, 8))


@settings(max_examples=30, deadline=None)
@given(stream=STREAMS, n_classes=st.integers(3, 5), case=st.sampled_from(CASES))
def test_libol_multiclass_agreement_on_random_streams(stream, n_classes, case):
    """Random streams (seed, rows, d) with every class present. d ≥ 4: in fewer dimensions
    the joint W comes near the pair's direction (x in row y, −x in row s), where ROMMA's D
    vanishes and its 1/D amplifies rounding (as in the binary case, tests/test_catalog.py)."""
    (seed, n, d), (name, params) = stream, case
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n)
    labels[:n_classes] = rng.permutation(n_classes)
    check(name, params, rng.normal(size=(n, d)), labels, n_classes)
