"""cwrs.river: the growing feature map is exact, the adapter learns what cwrs learns on the
equivalent dense rows, and it is a working river estimator (skipped parts need river)."""

import pickle
import subprocess
import sys

import numpy as np
import pytest
from _cwtest_util import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import cwrs
from cwrs.river import RiverClassifier, RiverRegressor

LEARNERS = [
    cwrs.AROW(r=0.5),
    cwrs.AROW(r=0.5, covariance="full"),
    cwrs.AROW(r=0.5, process_noise=0.01),
    cwrs.AROW(r=0.5, covariance="full", process_noise=0.01),
    cwrs.AROW(r=0.5, process_noise="auto"),
    cwrs.AROW(r=0.5, covariance="full", process_noise="auto"),
    cwrs.SCW2(covariance="full", fit_intercept=False),
    cwrs.NAROW(b=0.5, a=2.0),
    cwrs.CW(a=0.5, penalty="l1", alpha=0.01),
    cwrs.NHERD(covariance="full", a=3.0),
    cwrs.PA1(C=0.3),
    cwrs.Perceptron(fit_intercept=False),
    # The forms with per-feature state beside a mean and a covariance: the low-rank sketch (a
    # new feature has no sketch entry) and averaging (a new weight has no change to average).
    cwrs.AROW(r=0.5, covariance="lowrank", rank=2),
    cwrs.AROW(r=0.5, covariance="lowrank", rank=3, fit_intercept=False),
    cwrs.SCW1(covariance="lowrank", rank=4),
    cwrs.AROW(r=0.5, average=True),
    cwrs.AROW(r=0.5, covariance="full", average=7),
    cwrs.AROW(r=0.5, covariance="lowrank", rank=2, average=True),
    cwrs.PA1(C=0.3, average=True),
]
MULTICLASS = [
    cwrs.AROW(covariance="full", a=2.0),
    cwrs.SCW1(penalty="l1-uniform", alpha=0.01),
    cwrs.PA2(multi_class="ovr"),
    cwrs.AROW(covariance="lowrank", rank=2, a=2.0),
    cwrs.PA2(average=True),
]
REGRESSORS = [
    cwrs.AROWRegressor(r=0.3, a=2.0),
    cwrs.AROWRegressor(covariance="full", a=0.5),
    cwrs.AROWRegressor(r=0.3, a=2.0, process_noise=0.02),
    cwrs.AROWRegressor(r=0.3, a=2.0, process_noise="auto"),
    cwrs.AROWRegressor(r=0.3, covariance="full", process_noise="auto"),
    cwrs.AROWRegressor(penalty="l1", alpha=0.01),
    cwrs.PA1Regressor(C=0.5),
    cwrs.AROWRegressor(r=0.3, average=True),
]


def _stream(n_rows, n_features, labels, seed=0, regression=False):
    """Dict rows whose features appear over time (a few new ones now and then), string keys and
    a categorical feature among them, with a linear target."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=n_features + 3)
    rows = []
    for t in range(n_rows):
        reach = min(n_features, 2 + t * n_features // (n_rows // 2))
        active = rng.choice(reach, size=min(reach, 4), replace=False)
        x = {f"f{j}": float(rng.normal()) for j in active}
        x["colour"] = ["red", "green", "blue"][t % 3]
        score = sum(w[j] * x[f"f{j}"] for j in active) + w[n_features + t % 3]
        if regression:
            y = score + 0.1 * rng.normal()
        elif len(labels) == 2:
            y = labels[int(score + 0.3 * rng.normal() > 0)]
        else:
            y = labels[int(np.digitize(score, [-0.7, 0.7]))]
        rows.append((x, y))
    return rows


def _probe(rows):
    """Prediction rows: the training rows, with an unseen feature in some of them."""
    probe = [dict(x) for x, _ in rows[::7]]
    for i, x in enumerate(probe[::2]):
        x[f"unseen{i}"] = 1.5
    return probe


def _same_model(grown, wide, grown_rows):
    n = len(grown.features_)
    assert grown.features_ == wide.features_
    a, b = grown.estimator_, wide.estimator_
    np.testing.assert_allclose(a.coef_[..., :n], b.coef_[..., :n], rtol=1e-11, atol=1e-12)
    np.testing.assert_array_equal(a.coef_[..., n:], 0.0)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-11, atol=1e-12)
    assert a.n_updates_ == b.n_updates_
    if hasattr(a, "covariance_"):
        cov_a, cov_b = a.covariance_, b.covariance_
        if a.covariance == "diag":
            np.testing.assert_allclose(cov_a[..., :n], cov_b[..., :n], rtol=1e-11, atol=1e-12)
            # The columns no feature has reached yet: as in the wide model, the prior variance
            # a grown by the process noise of every round so far (docs/design.md §10.4).
            width = cov_a.shape[-1]
            np.testing.assert_allclose(cov_a[..., n:], cov_b[..., n:width], rtol=1e-11)
            np.testing.assert_allclose(cov_a[..., n:], _unseen(a, grown_rows), rtol=1e-11)
        else:
            # Every column of the grown Σ, the unreached ones at the unseen variance.
            width = cov_a.shape[-1]
            np.testing.assert_allclose(
                cov_a, cov_b[..., :width, :width], rtol=1e-11, atol=1e-12
            )


def _unseen(estimator, rows):
    """A never-seen column's variance, from the learner's rule (docs/design.md §10.4): a + q·t
    for a constant q; with "auto", a plus the noise the regressor added since the last reset,
    summed here from the covariance's own record (0 for the classifiers, which add none)."""
    q = estimator.process_noise
    if q != "auto":
        return estimator.a + q * rows
    _, entries = estimator.__getstate__()["_model"]
    return estimator.a + entries["drift_statistics"][9]


@pytest.mark.parametrize("learner", LEARNERS, ids=repr)
def test_growing_is_exact_binary(learner):
    rows = _stream(300, 40, labels=["spam", "ham"])
    grown, wide = RiverClassifier(learner, capacity=1), RiverClassifier(learner, capacity=200)
    widths = set()
    for x, y in rows:
        grown.learn_one(x, y)
        wide.learn_one(x, y)
        widths.add(grown.estimator_.n_features_in_)
    assert len(widths) > 4  # it grew several times
    assert wide.estimator_.n_features_in_ == 200
    _same_model(grown, wide, len(rows))
    for x in _probe(rows):
        assert grown.predict_one(x) == wide.predict_one(x)
        p, q = grown.predict_proba_one(x), wide.predict_proba_one(x)
        assert p.keys() == q.keys() == {"spam", "ham"}
        np.testing.assert_allclose(list(p.values()), list(q.values()), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("learner", MULTICLASS, ids=repr)
def test_growing_is_exact_multiclass(learner):
    labels = ["low", "mid", "high"]
    rows = _stream(300, 30, labels=labels, seed=1)
    grown = RiverClassifier(learner, capacity=2, classes=labels)
    wide = RiverClassifier(learner, capacity=100, classes=labels)
    for x, y in rows:
        grown.learn_one(x, y)
        wide.learn_one(x, y)
    _same_model(grown, wide, len(rows))
    for x in _probe(rows):
        assert grown.predict_one(x) == wide.predict_one(x)
        p, q = grown.predict_proba_one(x), wide.predict_proba_one(x)
        assert list(p) == labels
        np.testing.assert_allclose(list(p.values()), list(q.values()), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("learner", REGRESSORS, ids=repr)
def test_growing_is_exact_regression(learner):
    rows = _stream(300, 40, labels=None, seed=2, regression=True)
    grown, wide = RiverRegressor(learner, capacity=3), RiverRegressor(learner, capacity=64)
    for x, y in rows:
        grown.learn_one(x, y)
        wide.learn_one(x, y)
    _same_model(grown, wide, len(rows))
    for x in _probe(rows):
        assert grown.predict_one(x) == pytest.approx(wide.predict_one(x), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize(
    "adapter",
    [
        RiverClassifier(cwrs.AROW(), capacity=2),
        RiverClassifier(cwrs.PA1(), capacity=2, classes=["a", "b", "c"]),
        RiverRegressor(cwrs.AROWRegressor(), capacity=2),
    ],
    ids=repr,
)
def test_estimator_answers_from_the_grown_model(adapter):
    """`estimator_` after a growth: rows of the old width are refused (its one-row path must not
    answer from, or learn into, the model the adapter replaced), rows of the new width reach
    the model the adapter uses."""
    target = 1.5 if isinstance(adapter, RiverRegressor) else "a"
    adapter.learn_one({"f0": 1.0, "f1": -1.0}, target)
    estimator = adapter.estimator_
    old_row = np.array([[0.5, 1.0]])
    y = estimator.predict(old_row)  # the one-row paths, on the model two columns wide
    estimator.partial_fit(old_row, y)
    adapter.learn_one({"f2": 1.0, "f3": 2.0}, target)  # past the capacity: a new model
    assert adapter.estimator_ is estimator and estimator.n_features_in_ == 4
    for method in ("predict", "decision_function", "predict_proba"):
        if hasattr(estimator, method):
            with pytest.raises(ValueError, match="features"):
                getattr(estimator, method)(old_row)
    before = estimator.coef_.copy()
    with pytest.raises(ValueError, match="features"):
        estimator.partial_fit(old_row, y)
    np.testing.assert_array_equal(estimator.coef_, before)
    new_row = np.array([[0.5, 1.0, 0.0, 0.0]])
    estimator.partial_fit(new_row, y)  # learned into the adapter's model
    assert not np.array_equal(estimator.coef_, before)
    x = {"f0": 0.5, "f1": 1.0}
    if isinstance(adapter, RiverRegressor):
        assert adapter.predict_one(x) == pytest.approx(estimator.predict(new_row)[0], rel=1e-12)
    else:
        assert adapter.predict_one(x) == adapter.classes_[int(estimator.predict(new_row)[0])]
    assert estimator._lean.model is estimator._model  # noqa: SLF001 - the one-row path again


# Learners for growing to one-vs-rest: forms, L1, averaging, constant process noise, first order.
OVR_LEARNERS = [
    cwrs.AROW(r=0.5),
    cwrs.AROW(r=0.5, covariance="full", process_noise=0.01),
    cwrs.AROW(r=0.5, covariance="lowrank", rank=2),
    cwrs.CW(a=0.5, penalty="l1", alpha=0.01),
    cwrs.SCW1(average=True),
    cwrs.NHERD(covariance="full", a=3.0),
    cwrs.PA1(C=0.3),
    cwrs.Perceptron(fit_intercept=False),
]


def _labelled(rows, first, seed):
    """The rows with labels arriving over time: only `first` (two labels) for the first third,
    then a third label, then a fourth from two thirds on."""
    rng = np.random.default_rng(seed)
    n = len(rows)
    out = []
    for t, (x, _) in enumerate(rows):
        known = first + ["c"] * (t >= n // 3) + ["d"] * (t >= 2 * n // 3)
        label = known[-1] if t in (n // 3, 2 * n // 3) else known[rng.integers(len(known))]
        out.append((x, label))
    return out


def _check_grown_one_vs_rest(learner, rows, capacity):
    """With classes=None new labels grow the model to one-vs-rest: the first two classes are
    exactly those of a one-vs-rest model given every class from the start (class 1 the binary
    model, class 0 its mirror image), and each later class is exactly a model started at its
    first row from the prior of a never-seen weight, (a + q·t)·I after t rows (its average over
    every row counts its mean as 0 before)."""
    order = list(dict.fromkeys(y for _, y in rows))  # the labels in order of arrival
    adapter = RiverClassifier(learner, capacity=capacity)
    params = {**learner.get_params(), "multi_class": "ovr"}
    fixed = RiverClassifier(type(learner)(**params), capacity=capacity, classes=order)
    for x, y in rows:
        adapter.learn_one(x, y)
        fixed.learn_one(x, y)
    model = adapter.estimator_
    assert adapter.classes_ == order and model.multi_class == "ovr"
    assert learner.multi_class == "max-score"  # the template is never changed
    assert adapter.features_ == fixed.features_
    n = model.n_features_in_
    close = {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(model.coef_[:2], fixed.estimator_.coef_[:2, :n], **close)
    np.testing.assert_allclose(model.intercept_[:2], fixed.estimator_.intercept_[:2], **close)
    X = _dense(adapter, [x for x, _ in rows])
    q = getattr(learner, "process_noise", 0.0)
    for k, label in enumerate(order[2:], start=2):
        start = next(t for t, (_, y) in enumerate(rows) if y == label)
        a = getattr(learner, "a", 1.0) + q * start
        alone = type(learner)(**{**params, "a": a} if hasattr(learner, "a") else params)
        for t in range(start, len(rows)):
            alone.partial_fit(X[t : t + 1], [rows[t][1] == label], classes=[False, True])
        share = (len(rows) - start) / len(rows) if learner.average else 1.0
        np.testing.assert_allclose(model.coef_[k], share * alone.coef_[0], **close)
        np.testing.assert_allclose(model.intercept_[k], share * alone.intercept_[0], **close)
        if hasattr(model, "covariance_"):
            np.testing.assert_allclose(model.covariance_[k], alone.covariance_, **close)
    for x in _probe(rows):
        p = adapter.predict_proba_one(x)
        assert list(p) == order and sum(p.values()) == pytest.approx(1.0)
        assert adapter.predict_one(x) == max(p, key=p.get)


@pytest.mark.parametrize("learner", OVR_LEARNERS, ids=repr)
def test_new_labels_grow_one_vs_rest(learner):
    rows = _labelled(_stream(240, 20, labels=["x", "y"], seed=9), ["a", "b"], seed=9)
    assert list(dict.fromkeys(y for _, y in rows))[2:] == ["c", "d"]
    _check_grown_one_vs_rest(learner, rows, capacity=4)


@settings(max_examples=examples(25), deadline=None)
@given(
    learner=st.sampled_from(OVR_LEARNERS),
    capacity=st.integers(1, 12),
    arrivals=st.lists(st.integers(1, 59), min_size=1, max_size=4),
    seed=st.integers(0, 2**16),
)
def test_new_labels_grow_one_vs_rest_whenever_they_arrive(learner, capacity, arrivals, seed):
    """The same at random arrival rows of up to six labels."""
    rng = np.random.default_rng(seed)
    rows = []
    for t, (x, _) in enumerate(_stream(60, 10, labels=["x", "y"], seed=seed)):
        known = 2 + sum(t >= arrival for arrival in arrivals)
        label = known - 1 if t in arrivals else int(rng.integers(known))
        rows.append((x, f"class{label}"))
    _check_grown_one_vs_rest(learner, rows, capacity)


# Their steps read counters the classes of one model share (ALMA's k, IELLIP's rounds, ROMMA's
# first update), so a one-vs-rest model's first two classes depend on the classes beside them.
SHARED_COUNTERS = (cwrs.ALMA, cwrs.ROMMA, cwrs.IELLIP)


@pytest.mark.parametrize("cls", cwrs.CLASSIFIERS, ids=lambda cls: cls.__name__)
def test_every_rule_grows_to_one_vs_rest(cls):
    rows = _labelled(_stream(150, 12, labels=["x", "y"], seed=10), ["a", "b"], seed=10)
    order = list(dict.fromkeys(y for _, y in rows))  # the labels in order of arrival
    adapter = RiverClassifier(cls(), capacity=2)
    fixed = RiverClassifier(cls(multi_class="ovr"), capacity=2, classes=order)
    for x, y in rows:
        adapter.learn_one(x, y)
        fixed.learn_one(x, y)
    assert adapter.classes_ == order
    assert all(adapter.predict_one(x) in adapter.classes_ for x in _probe(rows))
    if cls not in SHARED_COUNTERS:
        n = adapter.estimator_.n_features_in_
        np.testing.assert_allclose(
            adapter.estimator_.coef_[:2], fixed.estimator_.coef_[:2, :n], rtol=1e-11, atol=1e-12
        )


def test_new_label_after_bool_labels_and_fixed_classes():
    adapter = RiverClassifier(cwrs.AROW(), capacity=1)
    adapter.learn_one({"a": 1.0}, True)
    adapter.learn_one({"a": -1.0}, False)
    adapter.learn_one({"b": 1.0}, "other")
    assert adapter.classes_ == [False, True, "other"]
    assert adapter.predict_one({"b": 3.0}) == "other"
    # A fixed set keeps the template's multiclass rule (max-score here) and refuses new labels.
    fixed = RiverClassifier(cwrs.AROW(), classes=["a", "b", "c"])
    fixed.learn_one({"a": 1.0}, "c")
    assert fixed.estimator_.multi_class == "max-score"
    with pytest.raises(ValueError, match="not one of classes"):
        fixed.learn_one({"a": 1.0}, "d")
    # A row that fails leaves the adapter as it was, a new label included.
    before = adapter.estimator_.coef_.copy()
    with pytest.raises(TypeError, match="value of type"):
        adapter.learn_one({"a": [1.0]}, "fourth")
    assert adapter.classes_ == [False, True, "other"] and adapter.estimator_.coef_.shape[0] == 3
    np.testing.assert_array_equal(adapter.estimator_.coef_, before)
    with pytest.raises(ValueError, match="finite"):
        adapter.learn_one({"z": float("inf")}, "fourth")
    np.testing.assert_array_equal(adapter.estimator_.coef_, before)


@pytest.mark.parametrize(
    "row", [{"a": 2.0}, {"b": 1.0, "c": 1.0}], ids=["new class", "new columns and class"]
)
def test_a_row_failing_after_growing_leaves_the_adapter_as_it_was(monkeypatch, row):
    """A failure after a grown model was installed (a new class, new columns) puts back the
    estimator as it was: model, width, classes and multi_class."""
    adapter = RiverClassifier(cwrs.AROW(), capacity=1)
    adapter.learn_one({"a": 1.0}, "x")
    adapter.learn_one({"a": -1.0}, "y")
    estimator = adapter.estimator_
    before = (estimator.coef_.copy(), estimator.n_features_in_, list(estimator.classes_))
    pickled = pickle.dumps(adapter)
    install = RiverClassifier._install

    def install_then_fail(*args, **kwargs):
        install(*args, **kwargs)
        raise RuntimeError("after installing")

    monkeypatch.setattr(RiverClassifier, "_install", install_then_fail)
    with pytest.raises(RuntimeError, match="after installing"):
        adapter.learn_one(row, "z")
    monkeypatch.undo()
    assert pickle.dumps(adapter) == pickled
    assert adapter.estimator_ is estimator and estimator.multi_class == "max-score"
    np.testing.assert_array_equal(estimator.coef_, before[0])
    assert (estimator.n_features_in_, list(estimator.classes_)) == before[1:]
    assert adapter.classes_ == ["x", "y"] and adapter.features_ == ["a"]
    assert estimator.predict(np.array([[1.0]]))[0] == 0  # the binary model, one column wide
    adapter.learn_one(row, "z")
    assert adapter.classes_ == ["x", "y", "z"] and estimator.multi_class == "ovr"


@pytest.mark.parametrize("nan", [float("nan"), np.nan, np.float32("nan"), complex("nan")])
def test_nan_labels_are_refused(nan):
    adapter = RiverClassifier(cwrs.AROW())
    with pytest.raises(ValueError, match="nan"):
        adapter.learn_one({"a": 1.0}, nan)
    assert adapter.classes_ == [] and adapter.estimator_ is None
    adapter.learn_one({"a": 1.0}, 1.0)
    with pytest.raises(ValueError, match="nan"):
        adapter.learn_one({"a": 1.0}, nan)
    assert adapter.classes_ == [1.0]
    with pytest.raises(ValueError, match="nan"):
        RiverClassifier(cwrs.AROW(), classes=[0.0, float("nan"), float("nan")])


@pytest.mark.parametrize("bad", [float("nan"), np.inf, -np.inf, np.float64("nan")], ids=repr)
@pytest.mark.parametrize(
    "adapter",
    [
        RiverClassifier(cwrs.AROW(a=2.0)),
        RiverClassifier(cwrs.PA1(), classes=["a", "b", "c"]),
        RiverRegressor(cwrs.AROWRegressor()),
    ],
    ids=repr,
)
def test_non_finite_values_are_refused_seen_or_not(adapter, bad):
    """A NaN or infinite value is refused as for a seen feature, also when the feature is
    unseen (it left the score alone and turned the binary probability into 1/2)."""
    regression = isinstance(adapter, RiverRegressor)
    labels = [0.5, -1.0] if regression else (adapter.classes or [False, True])
    for t in range(20):
        adapter.learn_one({"seen": float(t % 5 - 2), "other": 1.0}, labels[t % 2])
    coef = adapter.estimator_.coef_.copy()
    for row in ({"seen": bad}, {"seen": 1.0, "unseen": bad}):
        methods = [adapter.predict_one, lambda r: adapter.learn_one(r, labels[0])]
        if not regression:
            methods.append(adapter.predict_proba_one)
        for method in methods:
            with pytest.raises(ValueError, match=r"feature '(un)?seen' .* must be finite"):
                method(row)
    np.testing.assert_array_equal(adapter.estimator_.coef_, coef)
    assert adapter.features_ == ["seen", "other"]


@pytest.mark.parametrize("covariance", ["diag", "full", "lowrank"])
@pytest.mark.parametrize("scale", [2.0**530, 1e160, 2.0**-560])
def test_probabilities_of_a_rescaled_row_follow_its_spread(covariance, scale):
    """A confident row scaled far up gets the estimator's posterior probability (its spread
    xᵀΣx overwhelms the label noise, and its margin over its spread does not change with a
    positive scale), not 1/2 from an overflowed spread; scaled far down, the label noise
    overwhelms its spread and its probability is 1/2 on its side."""
    adapter = RiverClassifier(cwrs.AROW(covariance=covariance, fit_intercept=False))
    rng = np.random.default_rng(3)
    for x in rng.normal(size=(200, 3)):
        adapter.learn_one(dict(enumerate(x)), bool(x[0] - x[1] + 0.3 * rng.normal() > 0))
    row = {0: 1.5, 1: -0.5, 2: 0.25}
    posterior = adapter.estimator_.predict_posterior_proba(_dense(adapter, [row]))[0]
    scaled = adapter.predict_proba_one({k: v * scale for k, v in row.items()})
    assert posterior[1] > 0.6
    if scale > 1:
        assert scaled[True] == pytest.approx(posterior[1], rel=1e-12, abs=1e-300)
        assert scaled[False] == pytest.approx(posterior[0], rel=1e-12, abs=1e-300)
    else:
        assert scaled[True] == np.nextafter(0.5, 1.0)  # the float next to 1/2, on its side


def _dense(adapter, rows):
    """The rows as a dense matrix over the adapter's columns."""
    columns = adapter.feature_columns_
    X = np.zeros((len(rows), adapter.estimator_.n_features_in_))
    for i, x in enumerate(rows):
        for name, value in x.items():
            key = (name, value) if isinstance(value, str) else name
            if key in columns:
                X[i, columns[key]] += 1.0 if isinstance(value, str) else value
    return X


@pytest.mark.parametrize("learner", LEARNERS[:4] + LEARNERS[6:], ids=repr)
def test_same_as_partial_fit_on_dense_rows(learner):
    rows = _stream(200, 25, labels=[True, False], seed=3)
    adapter = RiverClassifier(learner, capacity=4)
    for x, y in rows:
        adapter.learn_one(x, y)
    # Bool labels: river's binary classes, False negative and True positive.
    first, second = adapter.classes_
    assert adapter.classes_ == [False, True]
    X = _dense(adapter, [x for x, _ in rows])
    y = np.array([0 if label == first else 1 for _, label in rows])
    reference = type(learner)(**learner.get_params())
    for i in range(len(rows)):
        reference.partial_fit(X[i : i + 1], y[i : i + 1], classes=[0, 1])
    np.testing.assert_allclose(adapter.estimator_.coef_, reference.coef_, rtol=1e-11, atol=1e-12)
    assert adapter.estimator_.n_mistakes_ == reference.n_mistakes_
    scores = reference.decision_function(X)
    expected = [first if s <= 0 else second for s in scores]
    assert [adapter.predict_one(x) for x, _ in rows] == expected
    if hasattr(reference, "predict_proba"):
        proba = reference.predict_proba(X[:20])[:, 1]
        got = [adapter.predict_proba_one(x)[second] for x, _ in rows[:20]]
        np.testing.assert_allclose(got, proba, rtol=1e-10)


def test_regressor_same_as_partial_fit_on_dense_rows():
    rows = _stream(200, 25, labels=None, seed=4, regression=True)
    learner = cwrs.AROWRegressor(covariance="full", r=0.2)
    adapter = RiverRegressor(learner, capacity=1)
    for x, y in rows:
        adapter.learn_one(x, y)
    X = _dense(adapter, [x for x, _ in rows])
    reference = cwrs.AROWRegressor(covariance="full", r=0.2)
    for i, (_, y) in enumerate(rows):
        reference.partial_fit(X[i : i + 1], [y])
    np.testing.assert_allclose(adapter.estimator_.coef_, reference.coef_, rtol=1e-10, atol=1e-12)
    got = [adapter.predict_one(x) for x, _ in rows]
    np.testing.assert_allclose(got, reference.predict(X), rtol=1e-10, atol=1e-12)


def test_unseen_features_count_their_prior_variance():
    adapter = RiverClassifier(cwrs.AROW(a=2.0), capacity=1)
    for t in range(30):
        adapter.learn_one({"a": 1.0, "b": (-1.0) ** t}, t % 3 == 0)
    known = {"a": 1.0}
    with_unseen = {"a": 1.0, "zzz": 3.0}
    assert adapter.predict_one(known) == adapter.predict_one(with_unseen)
    model = adapter.estimator_
    row = np.zeros((1, model.n_features_in_))
    row[0, 0] = 1.0
    score = model.decision_function(row)[0]
    variance = model._model.variance(row)[0]  # noqa: SLF001
    from math import erf, sqrt

    expected = 0.5 * (1 + erf(score / sqrt(2 * (variance + 2.0 * 9.0))))
    positive = adapter.classes_[1]  # True: bool labels take river's binary classes
    assert adapter.predict_proba_one(with_unseen)[positive] == pytest.approx(expected, rel=1e-12)
    assert len(adapter.features_) == 2  # prediction never adds features


def test_labels_discovered_on_the_fly():
    adapter = RiverClassifier(cwrs.AROW())
    # Before any row: river's binary convention (the prior of μ = 0 over False and True).
    assert adapter.predict_one({"a": 1.0}) is False
    assert adapter.predict_proba_one({"a": 1.0}) == {False: 0.5, True: 0.5}
    adapter.learn_one({"a": 1.0}, "cat")
    assert adapter.predict_one({"a": -5.0}) == "cat"
    assert adapter.predict_proba_one({"a": 1.0}) == {"cat": 1.0}
    adapter.learn_one({"a": -1.0}, "dog")
    assert adapter.classes_ == ["cat", "dog"]
    assert adapter.predict_one({"a": 1.0}) == "cat"
    assert adapter.predict_one({"a": -1.0}) == "dog"
    assert sum(adapter.predict_proba_one({"a": 0.3}).values()) == pytest.approx(1.0)
    adapter.learn_one({"b": 1.0}, "bird")  # a third label: one-vs-rest from here on
    assert adapter.classes_ == ["cat", "dog", "bird"]
    assert list(adapter.predict_proba_one({"b": 1.0})) == ["cat", "dog", "bird"]
    with pytest.raises(ValueError, match="not one of classes"):
        RiverClassifier(cwrs.AROW(), classes=[1, 2, 3]).learn_one({"a": 1.0}, 4)


@pytest.mark.parametrize("first_label", [True, False, np.True_, np.False_], ids=repr)
def test_bool_labels_take_rivers_binary_classes(first_label):
    """The default (classes=None) with bool labels, as river's binary classifiers take them:
    classes [False, True] from the first row, whichever comes first, so predict_proba_one has
    both keys from the first prediction on (river's check_predict_proba_one_binary)."""
    adapter = RiverClassifier(cwrs.AROW())
    assert set(adapter.predict_proba_one({"a": 1.0})) == {False, True}
    adapter.learn_one({"a": 1.0, "b": 0.5}, first_label)
    assert adapter.classes_ == [False, True]
    p = adapter.predict_proba_one({"a": 1.0})
    assert set(p) == {False, True} and (p[True] > 0.5) == bool(first_label)
    assert adapter.predict_one({"a": 1.0}) is bool(first_label)
    margin = adapter.estimator_.decision_function([[1.0] + [0.0] * 15])[0]
    assert (margin > 0) == bool(first_label)  # True is the positive class
    # The same stream as classes=[False, True]: the same model.
    explicit = RiverClassifier(cwrs.AROW(), classes=[False, True])
    explicit.learn_one({"a": 1.0, "b": 0.5}, first_label)
    np.testing.assert_array_equal(explicit.estimator_.coef_, adapter.estimator_.coef_)


def test_classes_given_predicts_the_prior_before_any_row():
    adapter = RiverClassifier(cwrs.PA(), classes=[False, True])
    assert adapter.predict_proba_one({"a": 1.0}) == {False: 0.5, True: 0.5}
    assert adapter.predict_one({"a": 1.0}) is False
    adapter.learn_one({"a": 1.0}, True)
    p = adapter.predict_proba_one({"a": 1.0})
    margin = adapter.estimator_.decision_function([[1.0] + [0.0] * 15])[0]
    assert p[True] > 0.5 and p[True] == pytest.approx(1 / (1 + np.exp(-margin)))  # logistic


def test_bad_input():
    with pytest.raises(TypeError, match="Classifier"):
        RiverClassifier(cwrs.AROWRegressor())
    with pytest.raises(TypeError, match="Regressor"):
        RiverRegressor(cwrs.AROW())
    with pytest.raises(ValueError, match="kernel"):
        RiverClassifier(cwrs.AROW(kernel="rbf"))
    with pytest.raises(ValueError, match="capacity"):
        RiverClassifier(cwrs.AROW(), capacity=0)
    with pytest.raises(ValueError, match="distinct"):
        RiverClassifier(cwrs.AROW(), classes=[1, 1])
    adapter = RiverRegressor(cwrs.AROWRegressor())
    with pytest.raises(TypeError, match="real number"):
        adapter.learn_one({"a": 1.0}, "high")
    with pytest.raises(TypeError, match="value of type"):
        adapter.learn_one({"a": [1.0]}, 1.0)
    adapter.learn_one({"a": 1.0}, 1.0)
    before = adapter.estimator_.coef_.copy()
    with pytest.raises(ValueError):
        adapter.learn_one({"a": float("nan")}, 1.0)
    np.testing.assert_array_equal(adapter.estimator_.coef_, before)


def test_template_estimator_is_never_changed():
    template = cwrs.SCW1(C=0.5)
    adapter = RiverClassifier(template, capacity=1)
    for x, y in _stream(50, 10, labels=[0, 1]):
        adapter.learn_one(x, y)
    assert not hasattr(template, "coef_") and template.get_params()["C"] == 0.5
    assert adapter.estimator_ is not template


@pytest.mark.parametrize(
    "adapter",
    [
        RiverClassifier(cwrs.AROW(covariance="full"), capacity=2),
        RiverClassifier(cwrs.CW(penalty="l1"), classes=["a", "b", "c"]),
        RiverRegressor(cwrs.AROWRegressor(), capacity=1),
    ],
    ids=repr,
)
def test_pickle_round_trips(adapter):
    labels = ["a", "b", "c"] if getattr(adapter, "classes", None) else ["a", "b"]
    regression = isinstance(adapter, RiverRegressor)
    rows = _stream(120, 12, labels=labels, regression=regression)
    for x, y in rows[:60]:
        adapter.learn_one(x, y)
    copy = pickle.loads(pickle.dumps(adapter))
    for x, y in rows[60:]:  # both go on learning, growing alike
        adapter.learn_one(x, y)
        copy.learn_one(x, y)
    assert copy.features_ == adapter.features_
    for x in _probe(rows):
        assert copy.predict_one(x) == adapter.predict_one(x)
        if not regression:
            assert copy.predict_proba_one(x) == adapter.predict_proba_one(x)
    np.testing.assert_array_equal(copy.estimator_.coef_, adapter.estimator_.coef_)


def test_imports_without_river():
    code = (
        "import sys; sys.modules['river'] = None\n"
        "import cwrs, cwrs.river\n"
        "m = cwrs.river.RiverClassifier(cwrs.AROW())\n"
        "m.learn_one({'a': 1.0}, True); m.learn_one({'a': -1.0}, False)\n"
        "assert m.predict_one({'a': 2.0}) is True\n"
        "assert cwrs.river.RiverClassifier.__mro__[-1] is object\n"
        "assert 'river.base' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------- with river installed
river = pytest.importorskip("river", reason="river is optional (pip install cwrs[river])")


def test_is_a_river_estimator():
    from river import base, metrics

    clf = RiverClassifier(cwrs.AROW())
    assert isinstance(clf, base.Classifier) and metrics.Accuracy().works_with(clf)
    reg = RiverRegressor(cwrs.AROWRegressor())
    assert isinstance(reg, base.Regressor) and metrics.MAE().works_with(reg)
    clone = clf.clone()
    assert isinstance(clone, RiverClassifier) and clone.estimator_ is None
    assert clone.estimator.get_params() == clf.estimator.get_params()


# What docs/guide/river.md says passes river's check_estimator: every primal classifier with the
# default classes=None (either covariance, with or without L1) or classes=[False, True], every regressor.
@pytest.mark.parametrize(
    "adapter",
    [
        *(RiverClassifier(cls()) for cls in cwrs.CLASSIFIERS),
        RiverClassifier(cwrs.AROW(covariance="full")),
        RiverClassifier(cwrs.SCW1(penalty="l1"), capacity=1),
        RiverClassifier(cwrs.AROW(), classes=[False, True]),
        RiverClassifier(cwrs.PA1(), capacity=1, classes=[False, True]),
        *(RiverRegressor(cls()) for cls in cwrs.REGRESSORS),
        RiverRegressor(cwrs.AROWRegressor(covariance="full"), capacity=1),
    ],
    ids=lambda adapter: f"{type(adapter).__name__}({adapter.estimator!r})",
)
def test_river_check_estimator(adapter):
    from river import checks

    checks.check_estimator(adapter)


def test_progressive_val_score_classification():
    from river import datasets, evaluate, metrics, preprocessing

    model = preprocessing.StandardScaler() | RiverClassifier(cwrs.AROW(r=0.1))
    accuracy = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert accuracy.get() > 0.85  # river's LogisticRegression: 0.89 with the same scaler


def test_progressive_val_score_regression_generated_stream():
    from river import evaluate, metrics

    stream = _stream(500, 20, labels=None, seed=5, regression=True)
    model = RiverRegressor(cwrs.AROWRegressor(r=0.05, covariance="full"))
    mae = evaluate.progressive_val_score(stream, model, metrics.MAE())
    spread = np.mean(np.abs(np.array([y for _, y in stream]) - np.mean([y for _, y in stream])))
    assert mae.get() < 0.5 * spread


def _weighted_stream(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    labels = np.where(X[:, 0] > 1.0, "rare", "common")
    weights = rng.uniform(0.0, 2.0, size=n)
    weights[::11] = 0.0
    return [({"f": a, "g": b, "h": c}, label, w) for (a, b, c), label, w in zip(X, labels, weights)]


@pytest.mark.parametrize("class_weight", [None, {"rare": 4.0}, "balanced"])
def test_learn_one_weights_are_sample_weights_times_class_weights(class_weight):
    """learn_one(x, y, w) (river's convention) learns what partial_fit learns with sample_weight
    w and the estimator's class_weight: a dict keyed by the labels y takes, or "balanced"."""
    stream = _weighted_stream()
    adapter = RiverClassifier(cwrs.AROW(class_weight=class_weight), classes=["common", "rare"])
    for x, label, w in stream:
        adapter.learn_one(x, label, w=w)
    reference = cwrs.AROW(class_weight=class_weight)
    for x, label, w in stream:
        reference.partial_fit(np.array([[x["f"], x["g"], x["h"]]]), [label],
                              classes=["common", "rare"], sample_weight=[w])
    np.testing.assert_allclose(adapter.estimator_.coef_.ravel()[:3], reference.coef_.ravel(),
                               rtol=1e-12, atol=1e-15)
    if class_weight == "balanced":
        np.testing.assert_array_equal(adapter.estimator_.class_counts_, reference.class_counts_)


def test_learn_one_weight_zero_changes_nothing_and_a_bad_weight_is_refused():
    adapter = RiverRegressor(cwrs.AROWRegressor())
    adapter.learn_one({"a": 1.0}, 2.0)
    before = pickle.dumps(adapter)
    adapter.learn_one({"a": 1.0}, 5.0, w=0.0)
    assert pickle.dumps(adapter) == before
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="sample_weight"):
            adapter.learn_one({"a": 1.0}, 5.0, w=bad)
        assert pickle.dumps(adapter) == before
