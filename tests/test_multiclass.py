"""Multiclass cwrs (docs/design.md §4) against an independent slow NumPy reference, plus the properties of
the multiclass estimators (batch = rows, dense = CSR, pickle, labels) and online accuracy on
scikit-learn's digits.

The reference in this file is written from docs/design.md §2 (the rules' (α, c), textbook formulas) and
§4 (the max-score single-constraint update and one-vs-rest); nothing is taken from the Rust code.

Max-score, on (x, y):  s = highest-scoring wrong class (first on ties), m = μ_y·x − μ_s·x,
V = xᵀΣ_y x + xᵀΣ_s x, ‖x‖² seen by the rule = 2‖x‖²; if the rule fires with (α, c):
μ_y += α Σ_y x, μ_s −= α Σ_s x, and each of Σ_y, Σ_s gains precision c·x xᵀ (full: Sherman–Morrison
with its own v_k = xᵀΣ_k x; diag: Σ_kj /= 1 + c Σ_kj x_j²).
One-vs-rest: class k runs the binary rule on y_k = ±1 with its own Gaussian.
n_mistakes counts rounds with μ_y·x − max_{k≠y} μ_k·x ≤ 0; n_updates rounds where any class changed.

Numerics.  The rule formulas are evaluated in decimal arithmetic (precision doubled until the
float64 result is stable), so the reference (α, c) is the correctly rounded value of the printed
formula.  Rounds whose outcome is decided within rounding distance of a threshold (a margin ≈ 0,
a rule's firing boundary, two wrong classes tied for the rival) are *ambiguous*: there the
reference follows what cwrs observably did (its counters and which classes' state changed) and
everywhere else it decides on its own, so a disagreement is a failure.  A round whose update
amplifies a 1e-12 perturbation of (m, V) (relative to their rounding-error scales) by more than
1e4 in the learned state is ill-conditioned (float64 cannot fix its result to 1e-9); a stream is
compared up to its first such round (in a 200-examples-per-form stress run, 1 stream of 8000).
"""

from __future__ import annotations

import math
import os
import pickle
from decimal import Decimal, localcontext
from statistics import NormalDist

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import cwrs
from _cwtest_util import assert_states_identical, model_state
from _shared_data import shared_data
from reference import DEFAULTS, FIRST_ORDER, SECOND_ORDER

RTOL = 1e-9

FORMS = [(r, None) for r in FIRST_ORDER] + [(r, c) for r in SECOND_ORDER for c in ("diag", "full")]
FORM_IDS = [f"{r}-{c or 'identity'}" for r, c in FORMS]
STRATEGIES = ("max-score", "ovr")


# =============================================================================================
# The rules of docs/design.md §2: (m, v, ‖x‖², hyper-parameters) -> None | (α, c)
# =============================================================================================


def _fires(rule, m, v, p):
    """Whether the rule updates at margin m, variance v (plain float comparison)."""
    if rule in ("Perceptron", "SOP"):
        return m <= 0
    if rule in ("PA", "PA1", "PA2", "AROW", "NHERD"):
        return m < 1
    if rule == "CW":
        return m < p["phi"] * v
    if rule in ("ExactCW", "SCW1", "SCW2"):
        return m < p["phi"] * math.sqrt(v)
    if rule == "NAROW":
        bv = p["b"] * v
        if bv > 1:
            rt = v / (bv - 1)
            return m * rt / (rt + v) < 1
        return m < 1
    raise ValueError(rule)


def _coef_decimal(rule, m, v, n2, p):
    """(α, c) by the docs/design.md §2 table, as Decimals, in the current decimal context."""
    D = Decimal
    m, v, n2 = D(m), D(v), D(n2)
    one, two, four, zero = D(1), D(2), D(4), D(0)

    def sqrt(z):
        return z.sqrt() if z > 0 else zero

    loss = max(zero, one - m)
    if rule == "Perceptron":
        return one, zero
    if rule == "PA":
        return loss / n2, zero
    if rule == "PA1":
        return min(D(p["C"]), loss / n2), zero
    if rule == "PA2":
        return loss / (n2 + one / (two * D(p["C"]))), zero
    if rule == "SOP":
        return loss / (one + v), one
    if rule == "AROW":
        r = D(p["r"])
        return loss / (v + r), one / r
    if rule == "NHERD":
        C = D(p["C"])
        return loss / (v + one / C), two * C + C * C * v
    if rule == "NAROW":
        b = D(p["b"])
        if b * v > 1:
            rt = v / (b * v - one)
            return (rt - m) / (rt + v), one / rt
        return one, zero
    phi = D(p["phi"])
    if rule == "CW":
        b = one + two * phi * m
        gamma = (-b + sqrt(b * b - 8 * phi * (m - phi * v))) / (four * phi * v)
        gamma = max(zero, gamma)
        return gamma, two * gamma * phi
    psi = one + phi * phi / two
    zeta = one + phi * phi
    root = sqrt(m * m * phi**4 / four + v * phi * phi * zeta)
    alpha_cw = max(zero, (-m * psi + root) / (v * zeta))
    if rule == "ExactCW":
        alpha = alpha_cw
    elif rule == "SCW1":
        alpha = min(D(p["C"]), alpha_cw)
    elif rule == "SCW2":
        n = v + one / (two * D(p["C"]))
        gamma = phi * sqrt(phi * phi * m * m * v * v + four * n * v * (n + v * phi * phi))
        alpha = (-(two * m * n + phi * phi * m * v) + gamma) / (two * (n * n + n * v * phi * phi))
        alpha = max(zero, alpha)
    else:
        raise ValueError(rule)
    u = (-alpha * v * phi + sqrt(alpha * alpha * v * v * phi * phi + four * v)) ** 2 / four
    c = alpha * phi / sqrt(u) if u > 0 else D("Infinity")
    return alpha, c


def rule_coef(rule, m, v, n2, p):
    """(α, c) as floats, correctly rounded: precision doubled until the result is stable."""
    prec, prev = 40, None
    while prec <= 5000:
        with localcontext() as ctx:
            ctx.prec = prec
            a, c = _coef_decimal(rule, m, v, n2, p)
            cur = (float(a), float(c))
        if cur == prev:
            return cur
        prev, prec = cur, prec * 2
    return prev


def rule_step(rule, m, v, n2, p, force=None):
    """None or (α, c).  force=True/False overrides the firing decision (ambiguous rounds)."""
    if n2 <= 0 or v <= 0:
        return None
    fires = _fires(rule, m, v, p) if force is None else force
    if not fires:
        return None
    alpha, c = rule_coef(rule, m, v, n2, p)
    if force is None and rule in ("ExactCW", "SCW1", "SCW2") and alpha <= 0:
        return None
    return alpha, c


def rule_params(rule, params):
    p = dict(DEFAULTS[rule])
    p.update(params or {})
    if "eta" in p:
        p["phi"] = NormalDist().inv_cdf(p["eta"])
    return p


# =============================================================================================
# The multiclass reference learner
# =============================================================================================

AMBIG = 1e-9  # width (relative to the natural error scale) of the ambiguity band
COND_DELTA, COND_LIMIT = 1e-12, 1e4


class Indeterminate(Exception):
    """float64 cannot decide this round to the test tolerance (ill-conditioned update)."""


class RefMulticlass:
    """K Gaussians (μ_k, Σ_k), homogeneous (no intercept), labels 0..K-1."""

    def __init__(self, rule, params, covariance, strategy, K, d, a=1.0):
        self.rule, self.strategy = rule, strategy
        self.p = rule_params(rule, params)
        self.cov = "identity" if rule in FIRST_ORDER else covariance
        self.a = a if self.cov != "identity" else 1.0
        self.K, self.d = K, d
        self.mu = np.zeros((K, d))
        self.moved = np.zeros((K, d))  # accumulated |Δμ|: the rounding-error scale of μ
        if self.cov == "full":
            self.S = np.array([self.a * np.eye(d) for _ in range(K)])
        elif self.cov == "diag":
            self.S = np.full((K, d), self.a)
        else:
            self.S = None
        self.n_updates = 0
        self.n_mistakes = 0
        self.n_ambiguous = 0

    # ---- per-class queries ------------------------------------------------------------------
    def scores(self, x):
        return np.array([math.fsum((self.mu[k] * x).tolist()) for k in range(self.K)])

    def score_err(self, x):
        """Per-class rounding-error scale of μ_k·x."""
        ax = np.abs(x)
        return AMBIG * ((np.abs(self.mu) + self.moved) @ ax)

    def sigma_x(self, k, x):
        if self.cov == "full":
            return self.S[k] @ x
        if self.cov == "diag":
            return self.S[k] * x
        return x.copy()

    def variance(self, k, x):
        if self.cov == "full":
            return math.fsum((np.outer(x, x) * self.S[k]).ravel().tolist())
        if self.cov == "diag":
            return math.fsum((self.S[k] * x * x).tolist())
        return math.fsum((x * x).tolist())

    def variance_err(self, v, x):
        if self.cov == "full":  # entries built by subtracting terms ≤ a
            return AMBIG * self.a * float(np.abs(x).sum()) ** 2
        return AMBIG * v

    # ---- updates ----------------------------------------------------------------------------
    def _apply(self, k, x, step, c, v):
        """μ_k += step·Σ_k x; Σ_k⁻¹ += c x xᵀ (Σ_k, v = xᵀΣ_k x before the update)."""
        sx = self.sigma_x(k, x)
        delta = step * sx
        self.mu[k] = self.mu[k] + delta
        self.moved[k] = self.moved[k] + np.abs(delta)
        if c == 0 or self.cov == "identity":
            return
        if self.cov == "full":
            beta = c / (1.0 + c * v) if math.isfinite(c) else 1.0 / v
            self.S[k] = self.S[k] - beta * np.outer(sx, sx)
        else:
            S = self.S[k]
            nz = x != 0
            S[nz] = S[nz] / (1.0 + c * S[nz] * x[nz] * x[nz])

    def _decide(self, m, m_err, v, v_err, n2, hint, x, ks):
        """The rule's step at (m, v), following `hint` (did cwrs fire?) only if the decision is
        within the ambiguity band.  Raises Indeterminate for an ill-conditioned update of the
        classes `ks`."""
        step = rule_step(self.rule, m, v, n2, self.p)
        fired = step is not None
        corners = {fired}
        for dm in (-m_err, m_err):
            for vv in (max(v - v_err, 0.5 * v), v + v_err):
                corners.add(rule_step(self.rule, m + dm, vv, n2, self.p) is not None)
        ambiguous = len(corners) > 1
        if ambiguous and hint is not None and hint != fired:
            fired = hint
            step = rule_step(self.rule, m, v, n2, self.p, force=True) if fired else None
        if step is not None and not ambiguous:
            self._check_conditioning(m, m_err / AMBIG, v, v_err / AMBIG, n2, step, x, ks)
        return step, ambiguous

    def _check_conditioning(self, m, m_scale, v, v_scale, n2, step, x, ks):
        """Effect on the learned state (in units of the comparison tolerance) of a COND_DELTA
        relative perturbation of m and v, divided by COND_DELTA."""
        alpha, c = step
        mu_scale = max(1.0, float(np.abs(self.mu).max()))
        sxs = [self.sigma_x(k, x) for k in ks]
        worst = 0.0
        dm, dv = COND_DELTA * max(abs(m), m_scale), COND_DELTA * max(v, v_scale)
        for pm, pv in ((dm, 0.0), (-dm, 0.0), (0.0, dv), (0.0, -dv)):
            a2, c2 = rule_step(self.rule, m + pm, v + pv, n2, self.p, force=True)
            for k, sx in zip(ks, sxs):
                worst = max(worst, abs(a2 - alpha) * float(np.abs(sx).max()) / mu_scale)
                if self.cov == "identity" or c == c2:
                    continue
                if not (math.isfinite(c) and math.isfinite(c2)):
                    raise Indeterminate(f"c overflows at m={m!r}, v={v!r}")
                vk = float(x @ sx)
                if self.cov == "full":
                    dbeta = abs(c2 / (1 + c2 * vk) - c / (1 + c * vk))
                    worst = max(worst, dbeta * float(np.abs(sx).max()) ** 2 / self.a)
                else:
                    r = self.S[k] * x * x
                    worst = max(worst, float(np.abs((1 + c * r) / (1 + c2 * r) - 1).max()))
        if worst / COND_DELTA > COND_LIMIT:
            raise Indeterminate(f"ill-conditioned update at m={m!r}, v={v!r}: "
                                f"amplification {worst / COND_DELTA:.3g}")

    def learn(self, x, y, hints=None):
        """One round.  hints = (mistake, updated, changed_classes) observed from cwrs, used
        only in ambiguous rounds.  Returns the set of classes whose state changed."""
        x = np.asarray(x, dtype=float)
        s = self.scores(x)
        err = self.score_err(x)
        others = [k for k in range(self.K) if k != y]
        rival = others[int(np.argmax(s[others]))]  # first of the highest on ties
        m = s[y] - s[rival]
        m_err = err[y] + err[rival]
        mistake = m <= 0
        ambiguous = False
        if m_err > 0 and abs(m) <= m_err:
            ambiguous = True
            if hints is not None:
                mistake = hints[0]
        self.n_mistakes += int(mistake)
        changed = set()
        if not np.any(x):
            self.n_ambiguous += int(ambiguous)
            return changed
        n2 = math.fsum((x * x).tolist())
        if self.strategy == "max-score":
            # Near-tied wrong classes (not both exactly zero on x's support): whichever cwrs
            # moved is its rival.
            tied = [k for k in others
                    if k != rival and abs(s[k] - s[rival]) <= err[k] + err[rival]
                    and (err[k] + err[rival] > 0)]
            if tied:
                ambiguous = True
                if hints is not None:
                    moved = [k for k in hints[2] if k != y]
                    if len(moved) == 1 and moved[0] in tied + [rival]:
                        rival = moved[0]
                        m = s[y] - s[rival]
                        m_err = err[y] + err[rival]
                    elif hints[1] and not moved:
                        raise Indeterminate("rival tie with no observable move")
            vy, vs = self.variance(y, x), self.variance(rival, x)
            V = vy + vs
            V_err = self.variance_err(vy, x) + self.variance_err(vs, x)
            step, amb = self._decide(m, m_err, V, V_err, 2.0 * n2,
                                     None if hints is None else hints[1], x, (y, rival))
            ambiguous |= amb
            if step is not None:
                alpha, c = step
                self._apply(y, x, alpha, c, vy)
                self._apply(rival, x, -alpha, c, vs)
                changed = {y, rival}
        else:
            for k in range(self.K):
                yk = 1.0 if k == y else -1.0
                vk = self.variance(k, x)
                hint = None if hints is None else (k in hints[2])
                step, amb = self._decide(yk * s[k], err[k], vk, self.variance_err(vk, x), n2,
                                         hint, x, (k,))
                ambiguous |= amb
                if step is not None:
                    alpha, c = step
                    self._apply(k, x, alpha * yk, c, vk)
                    changed.add(k)
            if ambiguous and hints is not None:
                # An ambiguous class may have fired with a step below rounding (no visible
                # change): the round's count follows cwrs there.
                self.n_updates += int(hints[1])
                self.n_ambiguous += 1
                return changed
        self.n_updates += int(bool(changed))
        self.n_ambiguous += int(ambiguous)
        return changed


# =============================================================================================
# Helpers
# =============================================================================================


def make(rule, cov, params=None, a=1.0, strategy="max-score", fit_intercept=False, **extra):
    kw = dict(params or {})
    kw.update(fit_intercept=fit_intercept, multi_class=strategy, **extra)
    if rule in SECOND_ORDER:
        kw.update(a=a, covariance=cov)
    return getattr(cwrs, rule)(**kw)


def close(got, ref, atol, what):
    got, ref = np.asarray(got, float), np.asarray(ref, float)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} vs {ref.shape}"
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=atol, err_msg=what)


def covariance_close(got, ref, cov, a, what):
    if cov == "diag":  # multiplicative evolution: compare elementwise-relative
        close(got, ref, 1e-300, what)
    else:
        close(got, ref, RTOL * a, what)


# =============================================================================================
# Hypothesis strategies
# =============================================================================================

_log10 = st.floats(min_value=-1.0, max_value=1.0).map(lambda e: float(10.0**e))


def hyper_params(rule):
    keys = sorted(DEFAULTS[rule])
    draws = {k: st.one_of(st.just(None), st.floats(0.55, 0.95) if k == "eta" else _log10)
             for k in keys}
    return st.fixed_dictionaries(draws).map(lambda p: {k: v for k, v in p.items() if v is not None})


@st.composite
def mc_streams(draw, max_n=30, max_d=5):
    """(X, y, K): gaussian rows with exact zeros, all-zero rows and repeated rows (same or a
    different label); labels in 0..K-1, K in 3..5."""
    K = draw(st.integers(3, 5))
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**32 - 1))
    p_zero = draw(st.sampled_from([0.0, 0.2, 0.5]))
    p_zero_row = draw(st.sampled_from([0.0, 0.1, 0.3]))
    p_repeat = draw(st.sampled_from([0.0, 0.2, 0.5]))
    scale = draw(st.sampled_from([1.0, 1.0, 0.1, 10.0]))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    X[rng.random((n, d)) < p_zero] = 0.0
    X[rng.random(n) < p_zero_row] = 0.0
    y = rng.integers(0, K, size=n)
    for t in range(1, n):
        if rng.random() < p_repeat:
            src = int(rng.integers(0, t))
            X[t] = X[src]
            y[t] = y[src] if rng.random() < 0.5 else rng.integers(0, K)
    return X, y, K


# =============================================================================================
# 1. cwrs = the reference, round by round
# =============================================================================================

N_EXAMPLES = int(os.environ.get("CWRS_TEST_EXAMPLES", "20"))
SETTINGS = settings(max_examples=N_EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
COMPARED = {"rounds": 0, "streams": 0, "truncated": 0, "ambiguous": 0}


def run_against_reference(rule, cov, strategy, params, a, X, y, K):
    n, d = X.shape
    classes = np.arange(K)
    est = make(rule, cov, params, a, strategy)
    # Creates the (unlearned) model: weight 0 skips the row.
    est.partial_fit(X[:1], y[:1], classes=classes, sample_weight=[0])
    ref = RefMulticlass(rule, params, cov, strategy, K, d, a)
    prev = model_state(est)
    note(f"K={K} n={n} d={d} params={params} a={a}")
    for t in range(n):
        x = X[t]
        dec = est.decision_function(x[None, :])[0]
        ref_dec = ref.scores(x)
        atol = RTOL * max(1.0, float(((np.abs(ref.mu) + ref.moved) @ np.abs(x)).max()))
        close(dec, ref_dec, atol, f"round {t}: decision_function before learning")
        est.partial_fit(x[None, :], y[t : t + 1])
        cur = model_state(est)
        changed = {k for k in range(K)
                   if not np.array_equal(cur["coef_"][k], prev["coef_"][k])
                   or ("covariance_" in cur
                       and not np.array_equal(cur["covariance_"][k], prev["covariance_"][k]))}
        hints = (cur["n_mistakes_"] > prev["n_mistakes_"], cur["n_updates_"] > prev["n_updates_"],
                 changed)
        snapshot = (ref.mu.copy(), ref.moved.copy(), None if ref.S is None else ref.S.copy(),
                    ref.n_updates, ref.n_mistakes)
        try:
            ref.learn(x, int(y[t]), hints)
        except Indeterminate as e:
            note(f"round {t}: {e}; compared {t} rounds")
            COMPARED["truncated"] += 1
            # Compare the state before this round (below) and stop.
            ref.mu, ref.moved, ref.S, ref.n_updates, ref.n_mistakes = snapshot
            break
        what = f"round {t} (y={y[t]}, x={x.tolist()})"
        assert cur["n_mistakes_"] == ref.n_mistakes, f"{what}: n_mistakes_"
        assert cur["n_updates_"] == ref.n_updates, f"{what}: n_updates_"
        mu_atol = RTOL * max(1.0, float(np.abs(ref.mu).max()))
        close(cur["coef_"], ref.mu, mu_atol, f"{what}: coef_")
        if ref.S is not None:
            covariance_close(cur["covariance_"], ref.S, cov, a, f"{what}: covariance_")
        COMPARED["rounds"] += 1
        prev = cur
    COMPARED["streams"] += 1
    COMPARED["ambiguous"] += ref.n_ambiguous
    # Final state (the last compared round).
    assert prev["n_mistakes_"] == ref.n_mistakes and prev["n_updates_"] == ref.n_updates
    close(prev["coef_"], ref.mu, RTOL * max(1.0, float(np.abs(ref.mu).max())), "final coef_")
    assert np.array_equal(prev["intercept_"], np.zeros(K))
    if ref.S is not None:
        covariance_close(prev["covariance_"], ref.S, cov, a, "final covariance_")
        shape = (K, d, d) if cov == "full" else (K, d)
        assert prev["covariance_"].shape == shape


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("rule,cov", FORMS, ids=FORM_IDS)
def test_matches_reference(rule, cov, strategy):
    @SETTINGS
    @given(data=mc_streams(), params=hyper_params(rule),
           a=st.one_of(st.just(1.0), _log10))
    def check(data, params, a):
        X, y, K = data
        run_against_reference(rule, cov, strategy, params, a, X, y, K)

    check()


# =============================================================================================
# 2. Batch = rows, dense = CSR, pickle: bit-identical
# =============================================================================================


def fixed_stream(seed=0, n=60, d=6, K=4):
    """Gaussian rows with exact zeros, all-zero rows and repeated rows, labels 0..K-1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    X[rng.random(n) < 0.1] = 0.0
    y = rng.integers(0, K, size=n)
    for t in range(1, n):
        if rng.random() < 0.2:
            src = int(rng.integers(0, t))
            X[t] = X[src]
            y[t] = rng.integers(0, K)
    y[:K] = np.arange(K)  # every class present, so fit() sees all of them
    return X, y


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("rule,cov", FORMS, ids=FORM_IDS)
def test_batch_equals_rows_dense_equals_csr(rule, cov, strategy):
    X, y = fixed_stream(seed=FORMS.index((rule, cov)) + 100 * STRATEGIES.index(strategy))
    classes = np.arange(4)
    batch = make(rule, cov, strategy=strategy, fit_intercept=True)
    batch.partial_fit(X, y, classes=classes)
    reference_state = model_state(batch)
    assert reference_state["coef_"].shape == (4, X.shape[1])
    assert reference_state["intercept_"].shape == (4,)

    rows = make(rule, cov, strategy=strategy, fit_intercept=True)
    for t in range(X.shape[0]):
        rows.partial_fit(X[t : t + 1], y[t : t + 1], classes=classes)
    assert_states_identical(model_state(rows), reference_state, "row by row")

    chunks = make(rule, cov, strategy=strategy, fit_intercept=True)
    for part in np.array_split(np.arange(X.shape[0]), 7):
        chunks.partial_fit(X[part], y[part], classes=classes)
    assert_states_identical(model_state(chunks), reference_state, "uneven chunks")

    fitted = make(rule, cov, strategy=strategy, fit_intercept=True, shuffle=False).fit(X, y)
    assert_states_identical(model_state(fitted), reference_state, "fit")

    # A weighted batch is its rows learned one at a time with their weights.
    w = np.random.default_rng(1).integers(0, 3, size=X.shape[0]) * 0.75
    weighted = make(rule, cov, strategy=strategy).partial_fit(X, y, classes, sample_weight=w)
    one_by_one = make(rule, cov, strategy=strategy)
    for t in range(X.shape[0]):
        one_by_one.partial_fit(X[t : t + 1], y[t : t + 1], classes, sample_weight=w[t : t + 1])
    assert_states_identical(model_state(weighted), model_state(one_by_one), "weighted rows")

    for index_dtype in (np.int32, np.int64):
        Xs = sp.csr_matrix(X)
        Xs.indices = Xs.indices.astype(index_dtype)
        Xs.indptr = Xs.indptr.astype(index_dtype)
        sparse = make(rule, cov, strategy=strategy, fit_intercept=True)
        sparse.partial_fit(Xs, y, classes=classes)
        assert_states_identical(model_state(sparse), reference_state, f"CSR ({index_dtype.__name__})")
        assert np.array_equal(sparse.decision_function(Xs), batch.decision_function(X))
    assert np.array_equal(batch.decision_function(sp.csc_matrix(X)), batch.decision_function(X))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("rule,cov", FORMS, ids=FORM_IDS)
def test_pickle_round_trip(rule, cov, strategy):
    X, y = fixed_stream(seed=7, n=80, K=5)
    first, second = slice(0, 50), slice(50, None)
    est = make(rule, cov, strategy=strategy, fit_intercept=True)
    est.partial_fit(X[first], y[first], classes=np.arange(5))
    clone = pickle.loads(pickle.dumps(est))
    assert_states_identical(model_state(clone), model_state(est), "after unpickling")
    assert clone.get_params() == est.get_params()
    assert np.array_equal(clone.classes_, est.classes_)
    assert np.array_equal(clone.decision_function(X), est.decision_function(X))
    # Continued training is identical, and the original is unaffected by the clone.
    clone.partial_fit(X[second], y[second])
    est.partial_fit(X[second], y[second])
    assert_states_identical(model_state(clone), model_state(est), "continued training")
    if rule in SECOND_ORDER:
        assert np.array_equal(clone.predict_proba(X), est.predict_proba(X))


# =============================================================================================
# 3. Predictions and fitted attributes
# =============================================================================================


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("rule,cov", FORMS, ids=FORM_IDS)
def test_fitted_attributes_and_predictions(rule, cov, strategy):
    X, y = fixed_stream(seed=3, n=80, d=5, K=5)
    labels = np.array([10, 20, 30, 40, 50])[y]
    est = make(rule, cov, strategy=strategy, fit_intercept=True, random_state=0).fit(X, labels)
    K, d = 5, X.shape[1]
    assert np.array_equal(est.classes_, [10, 20, 30, 40, 50])
    assert est.coef_.shape == (K, d) and est.intercept_.shape == (K,)
    scores = est.decision_function(X)
    assert scores.shape == (X.shape[0], K)
    np.testing.assert_allclose(scores, X @ est.coef_.T + est.intercept_, rtol=1e-12, atol=1e-12)
    assert np.array_equal(est.predict(X), est.classes_[scores.argmax(axis=1)])
    if rule in SECOND_ORDER:
        shape = (K, d, d) if cov == "full" else (K, d)
        assert est.covariance_.shape == shape
        if cov == "full":
            for S in est.covariance_:
                assert np.array_equal(S, S.T)
                assert np.linalg.eigvalsh(S).min() > 0
        else:
            assert (est.covariance_ > 0).all()
        proba = est.predict_proba(X)
        assert proba.shape == (X.shape[0], K)
        assert (proba >= 0).all()
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        # argmax of the probabilities is the prediction (rows without a tie among the scores)
        top2 = np.sort(scores, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-9
        assert clear.mean() > 0.9
        assert np.array_equal(est.classes_[proba.argmax(axis=1)][clear], est.predict(X)[clear])
    else:
        assert not hasattr(est, "predict_proba")


@pytest.mark.parametrize("rule,cov", [("PA", None), ("AROW", "full"), ("SCW1", "diag")])
def test_two_classes_use_the_binary_learner(rule, cov):
    X, y = fixed_stream(seed=4, K=2)
    for strategy in STRATEGIES:
        est = make(rule, cov, strategy=strategy).fit(X, y)
        assert est.coef_.shape == (1, X.shape[1])
        assert est.decision_function(X).shape == (X.shape[0],)
        if rule in SECOND_ORDER:
            assert est.covariance_.shape == ((X.shape[1],) * 2 if cov == "full" else (X.shape[1],))
    # The same model whatever multi_class says.
    a = make(rule, cov, strategy="max-score", random_state=0).fit(X, y)
    b = make(rule, cov, strategy="ovr", random_state=0).fit(X, y)
    assert_states_identical(model_state(a), model_state(b), "binary: multi_class is irrelevant")


# =============================================================================================
# 4. Labels: strings, and a label set declared up front
# =============================================================================================


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("rule,cov", [("Perceptron", None), ("PA2", None), ("AROW", "diag"),
                                      ("SCW2", "full"), ("NAROW", "diag"), ("CW", "full")])
def test_string_labels(rule, cov, strategy):
    X, codes = fixed_stream(seed=5, K=4)
    names = np.array(["ant", "bee", "cat", "dog"])
    words = names[codes]
    est = make(rule, cov, strategy=strategy, shuffle=False).fit(X, words)
    coded = make(rule, cov, strategy=strategy, shuffle=False).fit(X, codes)
    assert np.array_equal(est.classes_, names)
    assert_states_identical(model_state(est), model_state(coded), "string labels = their sorted codes")
    assert np.array_equal(est.predict(X), names[coded.predict(X)])
    assert est.predict(X).dtype.kind == "U"
    assert est.score(X, words) == coded.score(X, codes)
    # A list of Python strings works too, and so does partial_fit in chunks.
    chunked = make(rule, cov, strategy=strategy)
    chunked.partial_fit(X[:20], list(words[:20]), classes=["dog", "cat", "bee", "ant"])
    chunked.partial_fit(X[20:], list(words[20:]))
    assert_states_identical(model_state(chunked), model_state(est), "chunked string labels")
    # An unknown label raises and leaves the model unchanged.
    before = model_state(chunked)
    with pytest.raises(ValueError, match="emu"):
        chunked.partial_fit(X[:3], ["ant", "emu", "bee"])
    assert_states_identical(model_state(chunked), before, "after a rejected label")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("rule,cov", [("PA", None), ("AROW", "full"), ("SCW1", "diag"),
                                      ("NHERD", "diag"), ("ExactCW", "full")])
def test_classes_declared_up_front(rule, cov, strategy):
    """partial_fit(classes=...) with five labels where the first batch holds only two: the model
    is a five-class model from the start (not the binary learner), and equals the reference."""
    rng = np.random.default_rng(11)
    d = 4
    X = rng.normal(size=(40, d))
    labels = np.array(["a", "b", "c", "d", "e"])
    y = rng.integers(0, 5, size=40)
    y[:12] = rng.integers(3, 5, size=12)  # first batch: only "d" and "e"
    est = make(rule, cov, strategy=strategy)
    est.partial_fit(X[:12], labels[y[:12]], classes=labels[::-1])
    assert np.array_equal(est.classes_, labels)
    assert est.decision_function(X[:3]).shape == (3, 5)
    assert est.coef_.shape == (5, d)
    est.partial_fit(X[12:], labels[y[12:]])
    with pytest.raises(ValueError):
        est.partial_fit(X[:2], labels[y[:2]], classes=labels[:4])
    ref = RefMulticlass(rule, {}, cov, strategy, 5, d)
    for t in range(40):
        ref.learn(X[t], int(y[t]))
    close(est.coef_, ref.mu, RTOL * max(1.0, float(np.abs(ref.mu).max())), "coef_")
    if ref.S is not None:
        covariance_close(est.covariance_, ref.S, cov, 1.0, "covariance_")
    assert (est.n_mistakes_, est.n_updates_) == (ref.n_mistakes, ref.n_updates)
    # Predictions may name any declared class.
    assert set(est.predict(X)) <= set(labels)


# =============================================================================================
# 5. Online accuracy: scikit-learn's digits, and a multiclass problem built from a1a
# =============================================================================================

DIGIT_SEEDS = (0, 1, 2)
SECOND_ORDER_FORMS = [(r, c) for r, c in FORMS if r in SECOND_ORDER]
# Measured (mean online accuracy over the three permutations, defaults, fit_intercept=True):
# these second-order forms do *not* beat PA by the margin and are only required to beat the
# Perceptron (numbers in the comments, PA's in brackets):
#   max-score: SOP-diag 0.844 [PA 0.855], ExactCW-diag 0.865, SCW1-diag 0.869
#   ovr:       SOP-diag 0.857 [PA 0.856]
NOT_CLEARLY_BETTER_THAN_PA = {
    "max-score": {("SOP", "diag"), ("ExactCW", "diag"), ("SCW1", "diag")},
    "ovr": {("SOP", "diag")},
}
MARGIN = 0.015  # 27 of 1797 rounds


def online_accuracy(rule, cov, strategy, X, y, classes):
    est = make(rule, cov, strategy=strategy, fit_intercept=True)
    est.partial_fit(X, y, classes=classes)
    return 1.0 - est.n_mistakes_ / X.shape[0]


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


@pytest.fixture(scope="module")
def digits_accuracy(digits):
    X, y = digits
    perms = [np.random.RandomState(seed).permutation(X.shape[0]) for seed in DIGIT_SEEDS]
    acc = {}
    for strategy in STRATEGIES:
        for rule, cov in FORMS:
            acc[strategy, rule, cov] = float(np.mean(
                [online_accuracy(rule, cov, strategy, X[p], y[p], np.arange(10)) for p in perms]))
    print("\ndigits: online accuracy (progressive validation), mean of "
          f"{len(DIGIT_SEEDS)} permutations")
    for rule, cov in FORMS:
        print(f"  {rule:10s} {cov or 'identity':8s} " +
              "  ".join(f"{s}: {acc[s, rule, cov]:.4f}" for s in STRATEGIES))
    return acc


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_digits_second_order_beats_perceptron_and_pa(digits_accuracy, strategy):
    acc = digits_accuracy
    perceptron, pa = acc[strategy, "Perceptron", None], acc[strategy, "PA", None]
    assert perceptron > 0.75 and pa > 0.8, (perceptron, pa)  # the baselines do learn
    losers = []
    for rule, cov in SECOND_ORDER_FORMS:
        a = acc[strategy, rule, cov]
        assert a >= perceptron + 2 * MARGIN, f"{rule}-{cov}: {a:.4f} vs Perceptron {perceptron:.4f}"
        if (rule, cov) not in NOT_CLEARLY_BETTER_THAN_PA[strategy]:
            if a < max(perceptron, pa) + MARGIN:
                losers.append(f"{rule}-{cov}: {a:.4f} vs PA {pa:.4f}")
    assert not losers, losers
    # Full covariance beats the diagonal approximation on digits, for every second-order rule.
    for rule in SECOND_ORDER:
        assert acc[strategy, rule, "full"] > acc[strategy, rule, "diag"], rule


def test_digits_n_mistakes_is_progressive_validation(digits):
    X, y = digits
    p = np.random.RandomState(0).permutation(X.shape[0])[:600]
    X, y = X[p], y[p]
    for strategy in STRATEGIES:
        batch = make("AROW", "full", strategy=strategy, fit_intercept=True)
        batch.partial_fit(X, y, classes=np.arange(10))
        est = make("AROW", "full", strategy=strategy, fit_intercept=True)
        est.partial_fit(X[:1], y[:1], classes=np.arange(10), sample_weight=[0])
        mistakes = 0
        for t in range(X.shape[0]):
            s = est.decision_function(X[t : t + 1])[0]
            mistakes += int(s[y[t]] <= np.delete(s, y[t]).max())
            est.partial_fit(X[t : t + 1], y[t : t + 1])
        assert est.n_mistakes_ == mistakes == batch.n_mistakes_
        assert_states_identical(model_state(est), model_state(batch), "digits row by row")


# a1a (UCI Adult, a shared data set) holds one-hot blocks of categorical attributes; features
# 61-66 (1-based) are "relationship" (every row has exactly one).  Predict it from the other
# 117 features: a 6-class problem on real data, learned in the stored order.
A1A_RELATIONSHIP = (61, 66)
A1A_WINNERS = [("AROW", "diag"), ("AROW", "full"), ("NAROW", "diag"), ("NAROW", "full"),
               ("SCW2", "diag"), ("SCW2", "full")]


@pytest.fixture(scope="module")
def a1a_relationship():
    X = np.load(shared_data("a1a.X.npy"))
    lo, hi = A1A_RELATIONSHIP
    block = X[:, lo - 1 : hi]
    assert (block.sum(axis=1) == 1).all()  # a one-hot block: the label is well defined
    return np.delete(X, np.arange(lo - 1, hi), axis=1), block.argmax(axis=1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a1a_relationship_second_order_beats_perceptron_and_pa(a1a_relationship, strategy):
    X, y = a1a_relationship
    classes = np.arange(6)
    perceptron = online_accuracy("Perceptron", None, strategy, X, y, classes)
    pa = online_accuracy("PA", None, strategy, X, y, classes)
    majority = np.bincount(y).max() / y.shape[0]
    assert pa > majority + 0.2
    results = {f"{r}-{c}": online_accuracy(r, c, strategy, X, y, classes) for r, c in A1A_WINNERS}
    print(f"\na1a relationship ({strategy}): Perceptron {perceptron:.4f} PA {pa:.4f} " +
          " ".join(f"{k} {v:.4f}" for k, v in results.items()))
    losers = {k: v for k, v in results.items() if v < max(perceptron, pa) + MARGIN}
    assert not losers, (losers, perceptron, pa)
