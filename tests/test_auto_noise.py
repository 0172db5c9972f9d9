"""`process_noise="auto"` for the regressor (docs/design.md §10.2 and §10.5): the change
detector's reset plus process noise estimated from the innovations by covariance matching,
against a slow NumPy reference written from the math, diagonal and full; then what it is for:
an abrupt change and a gradual rotation tracked like PA, a stationary stream within 10% of
q = 0, and states saved before the estimate existed still load."""

from __future__ import annotations

import numpy as np
import pytest

import cwrs
from test_process_noise import R, _moments, _prior, _stream, _with_bias, abrupt_stream
from test_process_noise import kalman_regression, progressive_errors
from test_regression import HALF, drift_streams

FAST, SLOW, WARM_UP, THRESHOLD, SCALE_WARM_UP = 32, 1024, 100, 6.0, 10


class Detector:
    """Fast and slow averages of the loss; a change when the fast mean, this loss included, is
    6 of its stationary standard deviations above the slow mean of the rows before it."""

    def __init__(self):
        self.rows, self.fast, self.slow, self.slow_square = 0, 0.0, 0.0, 0.0

    def observe(self, loss):
        self.rows += 1
        self.fast += (loss - self.fast) / min(self.rows, FAST)
        alpha = 1 / FAST
        spread = np.sqrt(max(self.slow_square - self.slow**2, 0.0) * alpha / (2 - alpha))
        alarm = self.rows > WARM_UP and self.fast - self.slow > THRESHOLD * spread
        rate = 1 / min(self.rows, SLOW)
        self.slow += rate * (loss - self.slow)
        self.slow_square += rate * (loss * loss - self.slow_square)
        if alarm:
            self.__init__()
        return alarm


class Matching:
    """E[e²] = s²·(v + r + q‖x‖²): s² the slow mean of e²/(v + r); each row's estimate
    d = (e²/s² − v − r)/‖x‖² averaged over the fast window; q = mean − one standard error,
    clipped to [0, a]."""

    def __init__(self):
        self.scale_rows, self.scale = 0, 0.0
        self.restart()

    def restart(self):
        self.rows, self.mean, self.square = 0, 0.0, 0.0

    def noise(self, e, v, norm, a):
        q = 0.0
        if self.scale_rows > SCALE_WARM_UP and self.scale > 0 and norm > 0:
            d = (e * e / self.scale - v - R) / norm
            self.rows += 1
            window = min(self.rows, FAST)
            self.mean += (d - self.mean) / window
            self.square += (d * d - self.square) / window
            error = np.sqrt(max(self.square - self.mean**2, 0.0) / (2 * window - 1))
            q = min(max(self.mean - error, 0.0), a)
        self.scale_rows += 1
        self.scale += (e * e / (v + q * norm + R) - self.scale) / min(self.scale_rows, SLOW)
        return q


def auto_regression(X, y, full, a=1.0):
    """AROW regression with "auto": before each row, the detector sees |e|/√(v + r) and an
    alarm resets Σ to a·I (the mean kept, the fast window forgotten); then Σ ← Σ + q·I with the
    matched q; then the Kalman update (the diagonal form keeps the diagonal of the covariance
    update). Returns μ, Σ, the alarm rows and the q of every row."""
    X = _with_bias(X)
    mu, sigma = np.zeros(X.shape[1]), _prior(X.shape[1], full, a)
    detector, matching = Detector(), Matching()
    alarms, noises = [], []
    for t, (x, target) in enumerate(zip(X, y)):
        sx, v = _moments(sigma, x)
        e = target - mu @ x
        if detector.observe(abs(e) / np.sqrt(v + R)):
            alarms.append(t)
            sigma, matching.rows = _prior(len(x), full, a), 0
            matching.mean = matching.square = 0.0
            sx, v = _moments(sigma, x)
        q = matching.noise(e, v, x @ x, a)
        noises.append(q)
        sigma = sigma + q if sigma.ndim == 1 else sigma + q * np.eye(len(x))
        sx, v = _moments(sigma, x)
        mu = mu + e / (v + R) * sx
        k = (1 / R) / (1 + v / R)
        sigma = sigma - k * sx * sx if sigma.ndim == 1 else sigma - k * np.outer(sx, sx)
    return mu, sigma, alarms, np.array(noises)


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_auto_regressor_is_the_reference(covariance):
    """A stream with zeros in its rows (the diagonal clock catches up lazily), a change of the
    weights at row 300 and the scale of y changed at the same time: the reference resets at
    the change and adds process noise on some rows; the model follows it to 1e-9."""
    X, y, _ = _stream(11, n_rows=600, n_features=5, sparse_rate=0.3)
    rng = np.random.default_rng(3)
    y[300:] = X[300:] @ (3.0 * rng.normal(size=5)) + 0.1 * rng.normal(size=300)
    full = covariance == "full"
    mu, sigma, alarms, noises = auto_regression(X, y, full)
    assert alarms and 300 <= alarms[0] <= 305  # the reference exercises both parts
    assert (noises > 0).sum() >= 5
    model = cwrs.AROWRegressor(r=R, covariance=covariance, process_noise="auto")
    for start in range(0, 600, 97):  # in batches: "auto" learns row by row whatever the batch
        model.partial_fit(X[start : start + 97], y[start : start + 97])
    np.testing.assert_allclose(model.coef_, mu[:-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, mu[-1], rtol=1e-9, atol=1e-12)
    expected = sigma[:-1] if not full else sigma[:-1, :-1]
    np.testing.assert_allclose(model.covariance_, expected, rtol=1e-9, atol=1e-12)


def test_auto_diagonal_keeps_the_covariance_update_and_no_noise_once_settled():
    """With "auto" the diagonal form keeps the diagonal of the covariance update (§10.3); on a
    stationary stream no change is signalled and, once the scale has settled, no q passes its
    test (here a few rows of the first 30 do, while the scale rests on 10–30 rows), so it is
    that filter with q = 0, which differs from the learner without the option."""
    X, y, _ = _stream(4, n_rows=300, sparse_rate=0.2)
    mu, sigma, alarms, noises = auto_regression(X, y, full=False)
    assert not alarms and not noises[30:].any()
    model = cwrs.AROWRegressor(r=R, process_noise="auto").partial_fit(X, y)
    np.testing.assert_allclose(model.coef_, mu[:-1], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.covariance_, sigma[:-1], rtol=1e-9, atol=1e-12)
    plain = kalman_regression(X, y, 0.0, full=False)[1]
    assert np.abs(plain - sigma).max() > 1e-3 * sigma.max()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_auto_diagonal_relearns_an_abrupt_change_like_pa(seed):
    """The d = 10 stream of test_process_noise (change at row 750): with the matched noise the
    diagonal "auto" is below PA over rows 100–500 after the change (last session, with the
    reset alone, 1.3–1.7× PA on three seeds of six) and within 10% of it over the first 100;
    its stationary error stays within 10% of q = 0's."""
    X, y = abrupt_stream(seed)
    errors = {
        name: progressive_errors(model, X, y)
        for name, model in [
            ("auto", cwrs.AROWRegressor(process_noise="auto")),
            ("plain", cwrs.AROWRegressor()),
            ("PA", cwrs.PARegressor()),
        ]
    }
    assert errors["auto"][850:1250].mean() <= errors["PA"][850:1250].mean()
    assert errors["auto"][750:850].mean() <= 1.1 * errors["PA"][750:850].mean()
    stationary = slice(300, 750)
    assert errors["auto"][stationary].mean() <= 1.1 * errors["plain"][stationary].mean()


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_auto_tracks_a_gradual_rotation(covariance):
    """The test suite's rotating stream (2,000 stationary rows, then w turns by π over 2,000):
    the detector stays silent, and the matched process noise keeps the learner tracking: over
    the rotation its error is within 1.5× PA's and a tenth of q = 0's."""
    X, y = drift_streams(0)["rotating"]
    errors = {
        name: progressive_errors(model, X, y)[HALF:].mean()
        for name, model in [
            ("auto", cwrs.AROWRegressor(covariance=covariance, process_noise="auto")),
            ("plain", cwrs.AROWRegressor(covariance=covariance)),
            ("PA", cwrs.PARegressor()),
        ]
    }
    assert errors["auto"] <= 1.5 * errors["PA"]
    assert errors["auto"] <= 0.1 * errors["plain"]


def test_a_state_saved_before_the_noise_estimate_loads_with_a_fresh_one():
    """States of last session hold the detector's 4 statistics; they load, with the estimate
    fresh (a cold start of its scale), and a state with a wrong count is refused."""
    X, y, _ = _stream(8, n_rows=200)
    model = cwrs.AROWRegressor(process_noise="auto").partial_fit(X, y)
    state = model.__getstate__()
    kind, entries = state["_model"]
    statistics = entries["drift_statistics"]
    assert len(statistics) == 10

    def with_statistics(values):
        copy = cwrs.AROWRegressor.__new__(cwrs.AROWRegressor)
        copy.__setstate__({**state, "_model": (kind, {**entries, "drift_statistics": values})})
        return copy

    old = with_statistics(statistics[:4])
    assert np.array_equal(old.coef_, model.coef_)
    old.partial_fit(X[:50], y[:50])  # learns, with a fresh estimate
    # A state saved before the added noise was kept: 9 values, which imply none was added.
    before = with_statistics(statistics[:9])
    assert before.__getstate__()["_model"][1]["drift_statistics"][9] == 0.0
    kept = with_statistics(statistics).__getstate__()["_model"][1]["drift_statistics"]
    assert kept[9] == statistics[9]
    with pytest.raises(Exception, match="drift_statistics"):
        with_statistics(statistics[:6])
