"""CalibratedClassifier: each online map against a slow reference written from the math, the
progressive property, fit == partial_fit in chunks, persistence, refused inputs."""

import io
import math
import pickle

import numpy as np
import pytest

import cwrs

METHODS = ("platt", "temperature", "isotonic")


def stream(n_classes, n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    noisy = X[:, 0] + 0.6 * X[:, 1] + 0.8 * rng.normal(size=n)
    if n_classes == 2:
        y = (noisy > 0).astype(int)
    else:
        y = np.digitize(noisy, np.quantile(noisy, np.linspace(0, 1, n_classes + 1)[1:-1]))
    weights = rng.choice([0.0, 0.5, 1.0, 2.0, 3.5], size=n)
    return X, y, weights


# ======================================================================= reference (slow)
def sigma(m):
    return 1.0 / (1.0 + math.exp(-m)) if m >= 0 else math.exp(m) / (1.0 + math.exp(m))


def reference_inputs(scores, variances):
    if variances is None:
        return scores
    return scores / np.sqrt(1.0 + variances)


def reference_platt(z, y, w, n_classes, prior=1.0):
    """Per map: p = σ(A z + B); H += w p(1 − p) [z, 1][z, 1]ᵀ; (A, B) −= H⁻¹ w (p − t) [z, 1]."""
    maps = 1 if n_classes == 2 else n_classes
    out = []
    for k in range(maps):
        A, B = 1.0, 0.0
        H = [[prior, 0.0], [0.0, prior]]
        for i in range(len(y)):
            if w[i] == 0:
                continue
            zi = float(z[i]) if n_classes == 2 else float(z[i][k])
            t = 1.0 if (y[i] == 1 if n_classes == 2 else y[i] == k) else 0.0
            p = sigma(A * zi + B)
            c = w[i] * p * (1 - p)
            H = [[H[0][0] + c * zi * zi, H[0][1] + c * zi], [H[1][0] + c * zi, H[1][1] + c]]
            ga, gb = w[i] * (p - t) * zi, w[i] * (p - t)
            det = H[0][0] * H[1][1] - H[0][1] * H[1][0]
            A -= (H[1][1] * ga - H[0][1] * gb) / det
            B -= (H[0][0] * gb - H[1][0] * ga) / det
        out.append((A, B))
    return out


def reference_platt_proba(coef, z, n_classes):
    if n_classes == 2:
        A, B = coef[0]
        return [[1 - sigma(A * zi + B), sigma(A * zi + B)] for zi in z]
    rows = []
    for zi in z:
        p = [sigma(A * zk + B) for (A, B), zk in zip(coef, zi)]
        rows.append([q / sum(p) for q in p])
    return rows


def softmax(values):
    top = max(values)
    e = [math.exp(v - top) for v in values]
    return [x / sum(e) for x in e]


def reference_temperature(z, y, w, n_classes, prior=1.0):
    """u = log T; β = e^−u; p = softmax(β s) over the class scores s ((0, z) for two classes);
    gradient of −log p_y in u: −β (E_p[s] − s_y); curvature h += w β² Var_p(s)."""
    u, h = 0.0, prior
    for i in range(len(y)):
        if w[i] == 0:
            continue
        s = [0.0, float(z[i])] if n_classes == 2 else [float(v) for v in z[i]]
        beta = math.exp(-u)
        p = softmax([beta * v for v in s])
        mean = sum(pk * sk for pk, sk in zip(p, s))
        var = sum(pk * sk * sk for pk, sk in zip(p, s)) - mean * mean
        g = -w[i] * beta * (mean - s[int(y[i])])
        h += w[i] * beta * beta * max(var, 0.0)
        u -= g / h
    return u, h


def reference_temperature_proba(u, z, n_classes):
    beta = math.exp(-u)
    return [softmax([0.0, beta * zi] if n_classes == 2 else [beta * v for v in zi]) for zi in z]


def reference_isotonic_counts(z, y, w, n_classes, n_bins):
    maps = 1 if n_classes == 2 else n_classes
    weight = [[0.0] * n_bins for _ in range(maps)]
    positive = [[0.0] * n_bins for _ in range(maps)]
    for i in range(len(y)):
        for k in range(maps):
            zi = float(z[i]) if n_classes == 2 else float(z[i][k])
            u = zi / (1 + abs(zi))
            b = min(int((u + 1) / 2 * n_bins), n_bins - 1)
            t = (y[i] == 1) if n_classes == 2 else (y[i] == k)
            weight[k][b] += w[i]
            positive[k][b] += w[i] * t
    return weight, positive


def naive_pav(values, weights):
    """Pools the first adjacent violating pair until none is left (quadratic, obviously right)."""
    blocks = [[v, wt, 1] for v, wt in zip(values, weights)]
    changed = True
    while changed:
        changed = False
        for j in range(len(blocks) - 1):
            if blocks[j][0] > blocks[j + 1][0]:
                (v1, w1, n1), (v2, w2, n2) = blocks[j], blocks[j + 1]
                blocks[j:j + 2] = [[(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2]]
                changed = True
                break
    return [v for v, _, n in blocks for _ in range(n)]


def reference_isotonic_proba(weight, positive, z, n_classes, n_bins, prior=1.0):
    centres = [-1 + (b + 0.5) * 2 / n_bins for b in range(n_bins)]
    curves = []
    for W, P in zip(weight, positive):
        values = [(P[b] + prior * sigma(min(max(c / (1 - abs(c)), -30.0), 30.0))) / (W[b] + prior)
                  for b, c in enumerate(centres)]
        curves.append(naive_pav(values, [W[b] + prior for b in range(n_bins)]))

    def interpolate(u, curve):
        if u <= centres[0]:
            return curve[0]
        if u >= centres[-1]:
            return curve[-1]
        b = int((u - centres[0]) / (centres[1] - centres[0]))
        b = min(b, n_bins - 2)
        while centres[b + 1] < u:
            b += 1
        while centres[b] > u:
            b -= 1
        f = (u - centres[b]) / (centres[b + 1] - centres[b])
        return curve[b] + f * (curve[b + 1] - curve[b])

    rows = []
    for zi in z:
        if n_classes == 2:
            p = interpolate(zi / (1 + abs(zi)), curves[0])
            rows.append([1 - p, p])
        else:
            p = [interpolate(v / (1 + abs(v)), c) for v, c in zip(zi, curves)]
            rows.append([q / sum(p) for q in p])
    return rows


# ======================================================================= the maps
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("learner", [cwrs.AROW, cwrs.PA1])
@pytest.mark.parametrize("method", METHODS)
def test_online_map_equals_the_reference(method, learner, weighted, n_classes):
    X, y, w = stream(n_classes)
    weights = w if weighted else None
    cal = cwrs.CalibratedClassifier(learner(), method=method, n_bins=20)
    cal.partial_fit(X, y, classes=np.unique(y), sample_weight=weights)
    # The map's inputs: the progressive scores of the same learner on the same rows.
    _, scores, variances = learner().partial_fit(
        X, y, classes=np.unique(y), sample_weight=weights, return_scores=True
    )
    z = reference_inputs(scores, variances)
    rw = np.ones(len(y)) if weights is None else weights
    X_new = np.random.default_rng(5).normal(size=(40, X.shape[1])) * 2
    scores_new = cal.estimator_.decision_function(X_new)
    variances_new = None
    if learner._second_order:
        model = cal.estimator_._fitted_model()
        variances_new = model.variance(cal.estimator_._check_X_for(X_new))
    z_new = reference_inputs(scores_new, variances_new)
    state = cal.calibration_
    if method == "platt":
        coef = reference_platt(z, y, rw, n_classes)
        np.testing.assert_allclose(state["coef"], coef, rtol=1e-12, atol=1e-12)
        expected = reference_platt_proba(coef, z_new, n_classes)
    elif method == "temperature":
        u, h = reference_temperature(z, y, rw, n_classes)
        np.testing.assert_allclose(state["log_temperature"], [u], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(state["curvature"], [h], rtol=1e-12)
        expected = reference_temperature_proba(u, z_new, n_classes)
    else:
        weight, positive = reference_isotonic_counts(z, y, rw, n_classes, 20)
        np.testing.assert_allclose(state["weight"], weight, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(state["positive"], positive, rtol=1e-12, atol=1e-12)
        expected = reference_isotonic_proba(weight, positive, z_new, n_classes, 20)
    np.testing.assert_allclose(cal.predict_proba(X_new), expected, rtol=1e-10, atol=1e-12)


def test_pool_adjacent_violators_matches_the_naive_one():
    from cwrs._calibration import pool_adjacent_violators

    rng = np.random.default_rng(1)
    for _ in range(50):
        values, weights = rng.random(30), rng.random(30) + 0.01
        fitted = pool_adjacent_violators(values, weights)
        np.testing.assert_allclose(fitted, naive_pav(values.tolist(), weights.tolist()),
                                   rtol=1e-12)
        assert np.all(np.diff(fitted) >= -1e-15)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_the_map_sees_the_scores_from_before_each_row_was_learned(n_classes):
    X, y, _ = stream(n_classes)
    seen = []

    class Recording(cwrs.CalibratedClassifier):
        @staticmethod
        def _map_input(scores, variances):
            seen.append((scores.copy(), None if variances is None else variances.copy()))
            return cwrs.CalibratedClassifier._map_input(scores, variances)

    Recording(cwrs.AROW()).partial_fit(X, y, classes=np.unique(y))
    # The scores of a row-by-row loop: decision_function of the model just before the row.
    model = cwrs.AROW()
    model.partial_fit(X[:1], y[:1], classes=np.unique(y))
    for i in range(1, 30):
        np.testing.assert_array_equal(seen[0][0][i], model.decision_function(X[i:i + 1])[0])
        model.partial_fit(X[i:i + 1], y[i:i + 1])
    assert np.all(seen[0][0][0] == 0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_fit_equals_one_partial_fit_and_chunks(method, n_classes):
    X, y, w = stream(n_classes, n=200)
    classes = np.unique(y)
    fitted = cwrs.CalibratedClassifier(cwrs.SCW1(), method=method).fit(X, y, sample_weight=w)
    once = cwrs.CalibratedClassifier(cwrs.SCW1(), method=method)
    once.partial_fit(X, y, classes=classes, sample_weight=w)
    chunks = cwrs.CalibratedClassifier(cwrs.SCW1(), method=method)
    for start in range(0, 200, 37):
        chunks.partial_fit(X[start:start + 37], y[start:start + 37], classes=classes,
                           sample_weight=w[start:start + 37])
    for other in (once, chunks):
        assert other.calibration_.keys() == fitted.calibration_.keys()
        for key, value in fitted.calibration_.items():
            np.testing.assert_array_equal(other.calibration_[key], value)
        np.testing.assert_array_equal(other.predict_proba(X), fitted.predict_proba(X))


def test_fit_starts_over_and_never_modifies_the_estimator():
    X, y, _ = stream(2)
    inner = cwrs.AROW(r=0.5)
    cal = cwrs.CalibratedClassifier(inner).fit(X, y)
    first = cal.predict_proba(X)
    assert not hasattr(inner, "classes_") and inner.r == 0.5
    assert cal.estimator_ is not inner
    cal.fit(X[::-1], y[::-1])
    cal.fit(X, y)
    np.testing.assert_array_equal(cal.predict_proba(X), first)


def test_zero_weight_rows_leave_the_map_alone():
    X, y, w = stream(2)
    cal = cwrs.CalibratedClassifier(cwrs.AROW()).fit(X, y)
    before = {k: np.copy(v) for k, v in cal.calibration_.items()}
    cal.partial_fit(X[:20], y[:20], sample_weight=np.zeros(20))
    for key, value in before.items():
        np.testing.assert_array_equal(cal.calibration_[key], value)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_classes", [2, 5])
def test_probabilities_sum_to_one_in_the_unit_interval(method, n_classes):
    X, y, _ = stream(n_classes)
    cal = cwrs.CalibratedClassifier(cwrs.AROW(), method=method).fit(X, y)
    for scale in (1e-3, 1.0, 1e3, 1e200):
        P = cal.predict_proba(X * scale)
        assert P.shape == (len(X), n_classes)
        assert np.all((P >= 0) & (P <= 1))
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_array_equal(cal.predict(X * scale),
                                      cal.classes_[P.argmax(axis=1)])
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(cal.predict_log_proba(X * scale), np.log(P))


def test_labels_and_features_follow_the_estimator():
    X, y, _ = stream(3)
    labels = np.array(["a", "b", "c"])[y]
    cal = cwrs.CalibratedClassifier(cwrs.NAROW()).fit(X, labels)
    np.testing.assert_array_equal(cal.classes_, ["a", "b", "c"])
    assert cal.n_features_in_ == 4
    assert set(cal.predict(X)) <= {"a", "b", "c"}
    assert not hasattr(cwrs.CalibratedClassifier(cwrs.AROW()), "classes_")


# ======================================================================= persistence
def snapshot(cal):
    """Everything a refused call must leave as it was: the map and the estimator's state, as
    plain values (compare with `same`)."""
    if "estimator_" not in cal.__dict__:
        return None
    return copy_of(cal.calibration_), copy_of(cal.estimator_.__getstate__())


def copy_of(value):
    return pickle.loads(pickle.dumps(value))


def same(a, b):
    """Recursive equality, arrays compared by type, shape and values (NaN equal to NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_pickle_and_cwrs_files_round_trip(method, n_classes, tmp_path):
    X, y, w = stream(n_classes)
    cal = cwrs.CalibratedClassifier(cwrs.AROW(r=0.3), method=method, n_bins=17,
                                    prior_strength=2.0).fit(X, y, sample_weight=w)
    cal.predict_proba(X[:3])  # a cached isotonic curve is not part of the state
    expected = cal.predict_proba(X)
    copy = pickle.loads(pickle.dumps(cal))
    np.testing.assert_array_equal(copy.predict_proba(X), expected)
    path = tmp_path / "model.cwrs"
    cal.save(path)
    loaded = cwrs.load(path)
    assert type(loaded) is cwrs.CalibratedClassifier
    assert loaded.get_params(deep=False).keys() == cal.get_params(deep=False).keys()
    assert (loaded.method, loaded.n_bins, loaded.prior_strength) == (method, 17, 2.0)
    assert type(loaded.estimator) is cwrs.AROW and loaded.estimator.r == 0.3
    np.testing.assert_array_equal(loaded.predict_proba(X), expected)
    assert same(snapshot(loaded), snapshot(cal))
    # Both continue the same way.
    for model in (cal, copy, loaded):
        model.partial_fit(X[:50], y[:50])
    np.testing.assert_array_equal(copy.predict_proba(X), cal.predict_proba(X))
    np.testing.assert_array_equal(loaded.predict_proba(X), cal.predict_proba(X))


def test_an_unfitted_calibrated_classifier_round_trips(tmp_path):
    cal = cwrs.CalibratedClassifier(cwrs.SCW1(C=0.5), method="temperature")
    buffer = io.BytesIO()
    cal.save(buffer)
    loaded = cwrs.load(io.BytesIO(buffer.getvalue()))
    assert repr(loaded) == repr(cal)
    assert "estimator_" not in loaded.__dict__
    X, y, _ = stream(2)
    np.testing.assert_array_equal(loaded.fit(X, y).predict_proba(X), cal.fit(X, y).predict_proba(X))


def _header_edit(data, edit):
    """The file `data` with its JSON header changed by `edit` (and its checksum fixed)."""
    import json
    import struct
    import zlib

    from cwrs._persist import PREFIX

    magic, version, length = PREFIX.unpack(data[:PREFIX.size])
    header = json.loads(data[PREFIX.size:PREFIX.size + length])
    edit(header)
    text = json.dumps(header).encode()
    body = PREFIX.pack(magic, version, len(text)) + text + data[PREFIX.size + length:-4]
    return body + struct.pack("<I", zlib.crc32(body))


@pytest.mark.parametrize("edit", [
    lambda h: h["state"].pop("calibration_"),
    lambda h: h["state"].pop("method"),
    lambda h: h["state"].update(method="sigmoid"),
    lambda h: h["state"].update(unexpected=1),
    lambda h: h["estimators"].pop("estimator_"),
    lambda h: h["estimators"].update(estimator_={"estimator": "CalibratedClassifier"}),
    lambda h: h["estimators"]["estimator"].update(estimator="AROWRegressor"),
    lambda h: h.pop("estimators"),
    lambda h: h["state"]["calibration_"]["$dict"][2][1].update({"$array": 99}),
])
def test_a_malformed_file_is_refused(edit):
    X, y, _ = stream(2)
    buffer = io.BytesIO()
    cwrs.CalibratedClassifier(cwrs.AROW()).fit(X, y).save(buffer)
    with pytest.raises(cwrs.ModelFormatError):
        cwrs.load(io.BytesIO(_header_edit(buffer.getvalue(), edit)))


@pytest.mark.parametrize("method", METHODS)
def test_a_map_that_does_not_fit_its_estimator_is_refused(method):
    import cwrs._persist as persist

    X, y, _ = stream(3)
    cal = cwrs.CalibratedClassifier(cwrs.AROW(), method=method).fit(X, y)
    good = cal.calibration_
    key = {"platt": "coef", "temperature": "log_temperature", "isotonic": "weight"}[method]
    bad_maps = [
        {**good, key: good[key][..., :0]},  # the wrong shape
        {**good, key: np.full_like(good[key], np.nan)},
        {**good, "curvature": -good["curvature"]} if method != "isotonic"
        else {**good, "positive": good["weight"] + 1.0},
        {**good, "prior_strength": 0.0},
        {**good, "extra": np.zeros(1)},
    ]
    if method != "temperature":  # one temperature whatever the classes
        bad_maps.append(
            cwrs.CalibratedClassifier(cwrs.AROW(), method=method).fit(X, y % 2).calibration_
        )
    for bad in bad_maps:
        cal.calibration_ = bad
        with pytest.raises(ValueError):
            persist.dumps(cal)
    cal.calibration_ = good
    persist.dumps(cal)


def test_plain_estimators_still_load(tmp_path):
    X, y, _ = stream(2)
    model = cwrs.AROW().fit(X, y)
    model.save(tmp_path / "plain.cwrs")
    np.testing.assert_array_equal(cwrs.load(tmp_path / "plain.cwrs").predict_proba(X),
                                  model.predict_proba(X))
    with pytest.raises(cwrs.ModelFormatError):
        buffer = io.BytesIO()
        cwrs.CalibratedClassifier(cwrs.AROW()).fit(X, y).save(buffer)
        buffer.seek(0)
        cwrs.load(buffer, cwrs.AROW)


# ======================================================================= refused inputs
BAD_CALLS = {
    "NaN in X": lambda X, y: ((np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), y),
                              {}),
    "too few features": lambda X, y: ((X[:, :2], y), {}),
    "an unknown label": lambda X, y: ((X, np.where(np.arange(len(y)) == 5, 9, y)), {}),
    "y too short": lambda X, y: ((X, y[:-1]), {}),
    "other classes": lambda X, y: ((X, y), {"classes": [0, 1, 2, 3, 4]}),
    "a negative weight": lambda X, y: ((X, y), {"sample_weight": -np.ones(len(y))}),
    "weights of the wrong length": lambda X, y: ((X, y), {"sample_weight": np.ones(3)}),
    "a NaN weight": lambda X, y: ((X, y), {"sample_weight": np.full(len(y), np.nan)}),
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("bad", sorted(BAD_CALLS))
def test_a_refused_call_changes_nothing(bad, method):
    X, y, _ = stream(3, n=80)
    cal = cwrs.CalibratedClassifier(cwrs.AROW(), method=method).fit(X, y)
    before, proba = snapshot(cal), cal.predict_proba(X)
    args, kwargs = BAD_CALLS[bad](X[:30], y[:30])
    with pytest.raises(ValueError):
        cal.partial_fit(*args, **kwargs)
    assert same(snapshot(cal), before)
    np.testing.assert_array_equal(cal.predict_proba(X), proba)


def test_a_refused_first_call_leaves_it_unfitted():
    X, y, _ = stream(2)
    cal = cwrs.CalibratedClassifier(cwrs.AROW())
    with pytest.raises(ValueError):
        cal.partial_fit(X, y)  # no classes on the first call
    with pytest.raises(ValueError):
        cal.partial_fit(X, y, classes=[0, 1], sample_weight=-np.ones(len(y)))
    assert "estimator_" not in cal.__dict__ and "calibration_" not in cal.__dict__
    with pytest.raises(cwrs.NotFittedError):
        cal.predict_proba(X)


@pytest.mark.parametrize("estimator", [
    None, "AROW", cwrs.AROWRegressor(), pytest.importorskip("sklearn.linear_model").SGDClassifier(),
])
def test_only_cwrs_classifiers_are_calibrated(estimator):
    X, y, _ = stream(2)
    cal = cwrs.CalibratedClassifier(estimator)
    with pytest.raises(TypeError, match="cwrs classifier"):
        cal.fit(X, y)
    with pytest.raises(TypeError, match="cwrs classifier"):
        cal.partial_fit(X, y, classes=[0, 1])
    assert "estimator_" not in cal.__dict__


@pytest.mark.parametrize("params", [
    {"method": "sigmoid"}, {"method": None}, {"n_bins": 1}, {"n_bins": 2.5}, {"n_bins": True},
    {"prior_strength": 0.0}, {"prior_strength": -1.0}, {"prior_strength": float("inf")},
    {"prior_strength": "1"},
])
def test_bad_hyper_parameters_are_refused(params):
    X, y, _ = stream(2)
    cal = cwrs.CalibratedClassifier(cwrs.AROW(), **params)
    with pytest.raises(cwrs.InvalidParameterError):
        cal.fit(X, y)
    fitted = cwrs.CalibratedClassifier(cwrs.AROW()).fit(X, y)
    before = snapshot(fitted)
    fitted.set_params(**params)
    with pytest.raises(cwrs.InvalidParameterError):
        fitted.partial_fit(X, y)
    assert same(snapshot(fitted), before)


def test_nested_parameters():
    cal = cwrs.CalibratedClassifier(cwrs.AROW(), method="isotonic")
    params = cal.get_params()
    assert params["method"] == "isotonic" and params["estimator__r"] == cal.estimator.r
    cal.set_params(estimator__r=0.25, n_bins=10)
    assert cal.estimator.r == 0.25 and cal.n_bins == 10
    with pytest.raises(cwrs.InvalidParameterError):
        cal.set_params(bins=3)
    assert repr(cal) == "CalibratedClassifier(AROW(r=0.25), method='isotonic', n_bins=10)"


def test_fit_refuses_all_zero_weights():
    X, y, _ = stream(2)
    with pytest.raises(ValueError, match="all zero"):
        cwrs.CalibratedClassifier(cwrs.AROW()).fit(X, y, sample_weight=np.zeros(len(y)))


def test_concurrent_partial_fits_lose_no_row_of_the_map():
    import threading

    X, y, _ = stream(2, n=800)
    cal = cwrs.CalibratedClassifier(cwrs.AROW(), method="isotonic")
    cal.partial_fit(X[:1], y[:1], classes=[0, 1])
    chunks = [(X[i:i + 10], y[i:i + 10]) for i in range(1, 800, 10)]

    def learn(part):
        for X_chunk, y_chunk in part:
            cal.partial_fit(X_chunk, y_chunk)
            cal.predict_proba(X_chunk)

    threads = [threading.Thread(target=learn, args=(chunks[k::4],)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Every row counted once in the bins (a sum, whatever the order the calls took).
    assert cal.calibration_["weight"].sum() == 800
    assert cal.calibration_["positive"].sum() == y.sum()


@pytest.mark.parametrize("method", METHODS)
def test_huge_weights_and_scores_keep_a_valid_map(method, tmp_path):
    X, y, _ = stream(3)
    weights = np.full(len(y), 2.0**64)
    cal = cwrs.CalibratedClassifier(cwrs.PA1(), method=method).fit(X * 1e12, y,
                                                                   sample_weight=weights)
    P = cal.predict_proba(X)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
    cal.save(tmp_path / "huge.cwrs")  # the map passes the file's checks
