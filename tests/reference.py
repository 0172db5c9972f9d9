"""An independent, slow, obviously-correct reference for cwrs, written from docs/design.md §2.

Nothing here is derived from the Rust code.  Every rule of the docs/design.md §2 table is a pure scalar
function ``(m, v, norm2, **hyper_params) -> None | (alpha, c)`` written with the textbook formula
exactly as printed in the table, and ``RefLearner`` applies them with the one template

    mu    <- mu + alpha * y * Sigma x          (Sigma before the update)
    Sigma <- Sigma - beta (Sigma x)(Sigma x)^T,  beta = c / (1 + c v)        (covariance="full")
    Sigma_j <- Sigma_j / (1 + c Sigma_j x_j^2)                               (covariance="diag")
    Sigma = I fixed, v = ||x||^2                                             (first-order rules)

Numerics.  The scalar formulas are evaluated in decimal arithmetic on the (exact) float inputs and
rounded once to float64, at 60 digits and then at doubling precision until two successive
precisions agree, so the reference (alpha, c) is the correctly rounded value of the printed formula
even where it cancels catastrophically in float64 (ExactCW's u when α²vφ² ≫ 4, CW's γ near the
boundary).  The vector algebra is plain float64 NumPy (``math.fsum`` for the dot products).

Boundary rounds.  A rule fires on a strict/non-strict comparison of the float margin with a
threshold.  When the exact value is within the test tolerance (1e-9, relative to the natural error
scale of the quantities involved) of a threshold, two correct implementations may legitimately
decide differently (e.g. PA/CW/ExactCW place a repeated row exactly on the boundary; SOP fed
``x, x`` with opposite labels ends with mu == 0 up to rounding).  ``RefLearner.learn`` therefore
accepts an optional ``hint=(mistake, updated)`` from the implementation under test and follows it
*only* in such ambiguous rounds (counted in ``n_ambiguous``); everywhere else the reference decides
on its own and a disagreement is a failure.  At the boundary the continuous rules' update is ~0,
and the discontinuous ones (SOP, AROW, NHERD, NAROW) take the coefficients at the actual (m, v).

Ill-conditioned rounds.  Each update records its ``amplification``: how much a 1e-12 perturbation
of m and v (on their error scales) moves the new state, per unit.  It is O(1) for ordinary rounds;
it explodes when Σ has collapsed (ExactCW/SCW with diagonal covariance on non-separable data: c
grows like 1/v², Σ shrinks doubly exponentially, α ≈ |m|/v).  Past such a round (``ill_conditioned``,
amplification > COND_LIMIT) no float64 implementation is determined to 1e-9, and the tests stop
comparing there.

Importance weights.  ``rule_update(..., h=)``, ``RefLearner.learn(..., h=)`` and
``regression_update``/``RefRegressor`` take the row's importance h >= 0 and apply the weighted
step of each rule exactly as docs/design.md §2.10 states it (h = 1 is the table's
step, h = 0 skips the row: nothing moves, no counter advances).  The regression rules, which
docs/design.md §2.6 tables separately, are plain float64 functions (no decimal machinery: their
formulas do not cancel).

Beyond docs/design.md §2 (its limits, not its formulas): a non-zero row with Σx = 0 (Σ collapsed to 0 on
the support of x) is a no-op like x = 0; a c that overflows float64 is applied as its limit
(full β = 1/v, diag Σ_j = 0 where x_j ≠ 0); a mean step that overflows raises FloatingPointError.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from statistics import NormalDist

import numpy as np

PREC = 60
TOL = 1e-9  # ambiguity band, same as the comparison tolerance of the tests
# Conditioning: a round whose update amplifies a COND_DELTA-sized perturbation of (m, v) by more
# than COND_LIMIT is ill-conditioned: float64 cannot determine its result to the tests' 1e-9.
COND_DELTA = 1e-12
COND_LIMIT = 100.0

FIRST_ORDER = ("Perceptron", "PA", "PA1", "PA2")
SECOND_ORDER = ("SOP", "CW", "ExactCW", "AROW", "NAROW", "SCW1", "SCW2", "NHERD")
ALL_RULES = FIRST_ORDER + SECOND_ORDER

# docs/design.md §1 defaults.
DEFAULTS = {
    "Perceptron": {},
    "PA": {},
    "PA1": {"C": 1.0},
    "PA2": {"C": 1.0},
    "SOP": {},
    "CW": {"eta": 0.7},
    "ExactCW": {"eta": 0.7},
    "AROW": {"r": 1.0},
    "NAROW": {"b": 1.0},
    "SCW1": {"C": 1.0, "eta": 0.75},
    "SCW2": {"C": 1.0, "eta": 0.9},
    "NHERD": {"C": 1.0},
}


def phi_of(eta: float) -> float:
    """φ = Φ⁻¹(eta), the standard normal quantile."""
    return NormalDist().inv_cdf(eta)


def _D(x) -> Decimal:
    return Decimal(float(x))  # exact conversion of a double


_ZERO = Decimal(0)
_ONE = Decimal(1)
_TWO = Decimal(2)
_FOUR = Decimal(4)
_HALF = Decimal("0.5")
_QUARTER = Decimal("0.25")


def _sqrt(z: Decimal) -> Decimal:
    # Only reached with z >= 0 mathematically; guard the rounding of exact zeros.
    return z.sqrt() if z > 0 else _ZERO


# --------------------------------------------------------------------------------------------
# The rules: each is (fires(m, v, n2, p) -> bool, coef(m, v, n2, p, h) -> (alpha, c)), all
# Decimal.  coef() is only evaluated where the rule fires, or (for a boundary round that follows
# the implementation under test) just beyond it; alpha is clipped at 0 there for rules whose alpha
# is positive whenever they fire (all but NAROW), which changes nothing inside the firing region.
#
# h > 0 is the row's importance weight, and coef() is the rule's weighted step of
# docs/design.md §2.10; h = 1 is the table's step.  Whether a rule fires does
# not depend on h.  "Invariant" rules take the continuous limit of presenting the row again and
# again (AROW: r -> r/h; PA-I: alpha = min(hC, l/n); PA-II: l/n (1 - (1 + 2Cn)^-h); PA, CW and
# ExactCW, whose step lands on their constraint: unchanged); "objective" rules scale their loss
# term by h (SCW-I/II, NHERD: C -> hC; SOP and NAROW: the row counts h times in their sums;
# Perceptron: alpha = h).
# --------------------------------------------------------------------------------------------


def _perceptron_fires(m, v, n2, p):
    return m <= 0


def _perceptron_coef(m, v, n2, p, h):
    return h, _ZERO


def _pa_fires(m, v, n2, p):
    return m < 1


def _pa_coef(m, v, n2, p, h):
    # the projection onto l = 0: repeating it adds nothing, so every h > 0 takes it once
    loss = max(_ZERO, _ONE - m)
    return loss / n2, _ZERO


def _pa1_coef(m, v, n2, p, h):
    # repeated: steps of C until the loss is used up
    loss = max(_ZERO, _ONE - m)
    return min(h * p["C"], loss / n2), _ZERO


def _pa2_coef(m, v, n2, p, h):
    loss = max(_ZERO, _ONE - m)
    if h == _ONE:  # the table's form
        return loss / (n2 + _ONE / (_TWO * p["C"])), _ZERO
    # each presentation multiplies the loss by rho = 1/(1 + 2Cn): after "h presentations" it is
    # l rho^h, so alpha n = l (1 - rho^h)
    rho_h = (-h * (_ONE + _TWO * p["C"] * n2).ln()).exp()
    return loss / n2 * (_ONE - rho_h), _ZERO


def _sop_fires(m, v, n2, p):
    return m <= 0


def _sop_coef(m, v, n2, p, h):
    # the row counts h times in SOP's sums: A += h x x^T, theta += h y x
    return max(_ZERO, _ONE - m) / (_ONE / h + v), h


def _cw_fires(m, v, n2, p):
    return m < p["phi"] * v


def _cw_coef(m, v, n2, p, h):  # lands on m' = phi v': h > 0 is the step
    phi = p["phi"]
    b = _ONE + _TWO * phi * m
    gamma = (-b + _sqrt(b * b - 8 * phi * (m - phi * v))) / (_FOUR * phi * v)
    gamma = max(_ZERO, gamma)
    return gamma, _TWO * gamma * phi


def _stdev_fires(m, v, n2, p):  # ExactCW, SCW1, SCW2
    return m < p["phi"] * _sqrt(v)


def _stdev_c(alpha, v, phi):
    """c = αφ/√u,  u = ¼(−αvφ + √(α²v²φ² + 4v))²  (ExactCW / SCW)."""
    u = _QUARTER * (-alpha * v * phi + _sqrt(alpha * alpha * v * v * phi * phi + _FOUR * v)) ** 2
    return alpha * phi / _sqrt(u)


def _exactcw_alpha(m, v, phi):
    psi = _ONE + phi * phi / _TWO
    zeta = _ONE + phi * phi
    num = -m * psi + _sqrt(m * m * phi**4 / _FOUR + v * phi * phi * zeta)
    return max(_ZERO, num / (v * zeta))


def _exactcw_coef(m, v, n2, p, h):  # lands on m' = phi sqrt(v'): h > 0 is the step
    alpha = _exactcw_alpha(m, v, p["phi"])
    return alpha, _stdev_c(alpha, v, p["phi"])


def _scw1_coef(m, v, n2, p, h):
    alpha = min(h * p["C"], _exactcw_alpha(m, v, p["phi"]))
    return alpha, _stdev_c(alpha, v, p["phi"])


def _scw2_coef(m, v, n2, p, h):
    phi, C = p["phi"], h * p["C"]
    n = v + _ONE / (_TWO * C)
    gamma = phi * _sqrt(phi * phi * m * m * v * v + _FOUR * n * v * (n + v * phi * phi))
    alpha = (-(_TWO * m * n + phi * phi * m * v) + gamma) / (_TWO * (n * n + n * v * phi * phi))
    alpha = max(_ZERO, alpha)
    return alpha, _stdev_c(alpha, v, phi)


def _arow_fires(m, v, n2, p):
    return m < 1


def _arow_coef(m, v, n2, p, h):
    # recursive least squares on the target y while the hinge is active: r -> r/h
    r = p["r"] / h
    return max(_ZERO, _ONE - m) / (v + r), _ONE / r


def _narow_rt(v, p):
    """r_t = v/(b·v − 1) if b·v > 1, else None meaning r_t = ∞."""
    bv = p["b"] * v
    return v / (bv - _ONE) if bv > 1 else None


def _narow_fires(m, v, n2, p):
    rt = _narow_rt(v, p)
    if rt is None:
        return m < 1
    return m * rt / (rt + v) < 1


def _narow_coef(m, v, n2, p, h):
    rt = _narow_rt(v, p)
    if rt is None:
        return h, _ZERO
    # alpha may be <= 0 here: it is the paper's update; the weighted step counts the row h times
    # in NAROW's sums (A += h xx^T / r_t)
    return h * (rt - m) / (rt + h * v), h / rt


def _nherd_fires(m, v, n2, p):
    return m < 1


def _nherd_coef(m, v, n2, p, h):
    C = h * p["C"]
    return max(_ZERO, _ONE - m) / (v + _ONE / C), _TWO * C + C * C * v


_RULE_TABLE = {
    "Perceptron": (_perceptron_fires, _perceptron_coef),
    "PA": (_pa_fires, _pa_coef),
    "PA1": (_pa_fires, _pa1_coef),
    "PA2": (_pa_fires, _pa2_coef),
    "SOP": (_sop_fires, _sop_coef),
    "CW": (_cw_fires, _cw_coef),
    "ExactCW": (_stdev_fires, _exactcw_coef),
    "AROW": (_arow_fires, _arow_coef),
    "NAROW": (_narow_fires, _narow_coef),
    "SCW1": (_stdev_fires, _scw1_coef),
    "SCW2": (_stdev_fires, _scw2_coef),
    "NHERD": (_nherd_fires, _nherd_coef),
}

# Rules whose alpha carries a max(0, ·): alpha <= 0 means "no update".
_MAX_ZERO_RULES = ("ExactCW", "SCW1", "SCW2")


_PARAMS_CACHE = {}


def _params_dec(rule, params):
    key = (rule, tuple(sorted((params or {}).items())))
    hit = _PARAMS_CACHE.get(key)
    if hit is None:
        hit = _PARAMS_CACHE[key] = _params_dec_uncached(rule, params)
    return hit


def _params_dec_uncached(rule, params):
    p = dict(DEFAULTS[rule])
    p.update(params or {})
    unknown = set(p) - set(DEFAULTS[rule])
    if unknown:
        raise TypeError(f"{rule}: unknown hyper-parameters {sorted(unknown)}")
    out = {k: _D(val) for k, val in p.items()}
    if "eta" in p:
        out["phi"] = _D(phi_of(p["eta"]))
    return out


def _evaluate_at(prec, rule, m, v, norm2, params, force, h):
    fires, coef = _RULE_TABLE[rule]
    with localcontext() as ctx:
        ctx.prec = prec
        p = _params_dec(rule, params)
        md, vd, nd, hd = _D(m), _D(v), _D(norm2), _D(h)
        if force is None:
            if not fires(md, vd, nd, p):
                return None
            alpha, c = coef(md, vd, nd, p, hd)
            if rule in _MAX_ZERO_RULES and alpha <= 0:
                return None
        else:
            alpha, c = coef(md, vd, nd, p, hd)
        return float(alpha), float(c)


def check_weight(h):
    """The row importance h as a float: finite and >= 0, else ValueError."""
    h = float(h)
    if not (math.isfinite(h) and h >= 0):
        raise ValueError(f"importance weight must be finite and >= 0, got {h!r}")
    return h


def _evaluate(rule, m, v, norm2, params, force=None, h=1.0):
    """Returns None or (alpha, c) as floats.

    force=None: the rule as tabled.  force=True: the coefficients even if the rule would not fire
    (boundary round where the implementation under test fired).  h > 0: the row's importance
    weight (the rule's weighted step; h = 1 is the table's).

    The printed formulas can cancel catastrophically (ExactCW's u when α²vφ² ≫ 4, CW's γ near the
    boundary), so they are evaluated at increasing decimal precision until two successive
    precisions give the same float64 result.
    """
    prec = PREC
    prev = _UNSET = object()
    while prec <= 20000:
        try:
            cur = _evaluate_at(prec, rule, m, v, norm2, params, force, h)
        except ArithmeticError:  # e.g. u == 0 from complete cancellation: not enough digits
            cur = ArithmeticError
        if prev is not _UNSET and cur is not ArithmeticError and cur == prev:
            return cur
        prev = cur
        prec *= 2
    raise ArithmeticError(f"{rule}: formula did not converge at m={m!r}, v={v!r}")


def rule_update(rule, m, v, norm2, h=1.0, **params):
    """(alpha, c) or None for ``rule`` at margin m, variance v, squared norm norm2, for a row of
    importance h (h = 0: None, the row is skipped)."""
    h = check_weight(h)
    if h == 0:
        return None
    return _evaluate(rule, m, v, norm2, params, h=h)


def _make_rule_fn(name):
    def fn(m, v, norm2, h=1.0, **params):
        return rule_update(name, m, v, norm2, h, **params)

    fn.__name__ = name.lower()
    fn.__doc__ = (f"docs/design.md §2 rule {name}: (m, v, ‖x‖², h, hyper-parameters) -> "
                  f"None | (α, c).")
    return fn


perceptron = _make_rule_fn("Perceptron")
pa = _make_rule_fn("PA")
pa1 = _make_rule_fn("PA1")
pa2 = _make_rule_fn("PA2")
sop = _make_rule_fn("SOP")
cw = _make_rule_fn("CW")
exact_cw = _make_rule_fn("ExactCW")
arow = _make_rule_fn("AROW")
narow = _make_rule_fn("NAROW")
scw1 = _make_rule_fn("SCW1")
scw2 = _make_rule_fn("SCW2")
nherd = _make_rule_fn("NHERD")

RULES = {
    "Perceptron": perceptron,
    "PA": pa,
    "PA1": pa1,
    "PA2": pa2,
    "SOP": sop,
    "CW": cw,
    "ExactCW": exact_cw,
    "AROW": arow,
    "NAROW": narow,
    "SCW1": scw1,
    "SCW2": scw2,
    "NHERD": nherd,
}


# --------------------------------------------------------------------------------------------
# The learner
# --------------------------------------------------------------------------------------------


def prior_covariance(covariance, d, a):
    """Σ₀ = a·I as the form keeps it: the d×d matrix ("full"), its diagonal ("diag"), or None
    for Σ = I fixed ("identity")."""
    if covariance == "full":
        return a * np.eye(d)
    if covariance == "diag":
        return np.full(d, a)
    return None


class RefLearner:
    """rule × covariance, homogeneous model (no intercept), labels y in {-1, +1}.

    Attributes: mu (d,), Sigma ((d, d) full, (d,) diag, None for identity), n_updates,
    n_mistakes, n_ambiguous, rounds (a list of per-round dicts: x, y, m, v, mistake, updated,
    alpha, c, ambiguous).
    """

    def __init__(self, rule, params=None, covariance=None, d=1, a=1.0):
        if rule not in _RULE_TABLE:
            raise ValueError(f"unknown rule {rule!r}")
        if rule in FIRST_ORDER:
            if covariance not in (None, "identity"):
                raise ValueError(f"{rule} is first-order: covariance must be 'identity'")
            covariance = "identity"
        else:
            if covariance not in ("diag", "full"):
                raise ValueError(f"{rule}: covariance must be 'diag' or 'full'")
        self.rule = rule
        self.params = dict(params or {})
        _params_dec(rule, self.params)  # validate names
        self.covariance = covariance
        self.d = int(d)
        self.a = float(a) if covariance != "identity" else 1.0
        self.mu = np.zeros(self.d)
        self.Sigma = prior_covariance(covariance, self.d, self.a)
        self.n_updates = 0
        self.n_mistakes = 0
        self.n_ambiguous = 0
        self.ill_conditioned_at = None  # index of the first ill-conditioned round
        self.rounds = []
        # Accumulated |Δμ| per coordinate: the scale of the rounding error in mu.
        self._moved = np.zeros(self.d)

    # ---- queries -----------------------------------------------------------------------
    def decision(self, x):
        x = np.asarray(x, dtype=float)
        return math.fsum((self.mu * x).tolist())

    def sigma_x(self, x):
        x = np.asarray(x, dtype=float)
        if self.covariance == "full":
            return self.Sigma @ x
        if self.covariance == "diag":
            return self.Sigma * x
        return x.copy()

    def variance(self, x):
        x = np.asarray(x, dtype=float)
        if self.covariance == "full":
            return math.fsum((np.outer(x, x) * self.Sigma).ravel().tolist())
        if self.covariance == "diag":
            return math.fsum((self.Sigma * x * x).tolist())
        return math.fsum((x * x).tolist())

    def precision(self):
        """The accumulated precision I/a + Σ c_t x_t x_tᵀ (full: (d,d); diag: its diagonal
        increments, i.e. 1/a + Σ c_t x_tj²), from the per-round record, in float64."""
        if self.covariance == "identity":
            raise ValueError("first-order rules have no precision")
        if self.covariance == "full":
            P = np.eye(self.d) / self.a
            for r in self.rounds:
                if r["updated"]:
                    P = P + r["c"] * np.outer(r["x"], r["x"])
            return P
        P = np.full(self.d, 1.0 / self.a)
        for r in self.rounds:
            if r["updated"]:
                P = P + r["c"] * r["x"] * r["x"]
        return P

    def exact_precision(self):
        """Same as precision() but accumulated exactly, as a list of lists of Fractions (full)
        or a list of Fractions (diag)."""
        d = self.d
        if self.covariance == "full":
            P = [[Fraction(1) / Fraction(self.a) if i == j else Fraction(0) for j in range(d)]
                 for i in range(d)]
            for r in self.rounds:
                if r["updated"] and r["c"] != 0.0:
                    c = Fraction(r["c"])
                    xs = [Fraction(float(v)) for v in r["x"]]
                    for i in range(d):
                        if xs[i]:
                            for j in range(d):
                                if xs[j]:
                                    P[i][j] += c * xs[i] * xs[j]
            return P
        if self.covariance == "diag":
            P = [Fraction(1) / Fraction(self.a) for _ in range(d)]
            for r in self.rounds:
                if r["updated"] and r["c"] != 0.0:
                    c = Fraction(r["c"])
                    for j, v in enumerate(r["x"]):
                        if v:
                            P[j] += c * Fraction(float(v)) ** 2
            return P
        raise ValueError("first-order rules have no precision")

    # ---- conditioning ------------------------------------------------------------------
    def _amplification(self, x, m, v, n2, alpha, c, sx, h=1.0):
        """How much a perturbation of the round's inputs m and v of relative size COND_DELTA
        (on their natural error scales, as for the ambiguity band) moves the new state, relative
        to COND_DELTA.  About 1 for an ordinary round; huge when the update is ill-conditioned,
        e.g. ExactCW/diag once Σ has collapsed (α ≈ |m|/v with v ~ 1e-26, c ~ α²)."""
        ax = np.abs(x)
        dm = COND_DELTA * math.fsum(((np.abs(self.mu) + self._moved) * ax).tolist())
        # v relative: for diag/identity a sum of non-negative terms; for full the rank-one
        # downdates keep xᵀΣx accurate relative to itself in practice (the Sherman–Morrison
        # self-check in test_reference.py holds to ~1e-14·a even at cond(P) ~ 1e7).
        dv = COND_DELTA * v
        smax = float(np.abs(sx).max())
        mu_scale = max(1.0, float(np.abs(self.mu).max()), float(self._moved.max()))
        worst = 0.0
        for mm in (m - dm, m + dm):
            for vv in (max(v - dv, 0.5 * v), v + dv):
                try:
                    a2, c2 = _evaluate(self.rule, mm, vv, n2, self.params, force=True, h=h)
                except ArithmeticError:
                    return math.inf
                eff = abs(a2 - alpha) * smax / mu_scale
                if self.covariance == "full":
                    b1 = c / (1.0 + c * v) if math.isfinite(c) else 1.0 / v
                    b2 = c2 / (1.0 + c2 * vv) if math.isfinite(c2) else 1.0 / vv
                    eff = max(eff, abs(b2 - b1) * smax * smax / self.a)
                elif self.covariance == "diag":
                    r = self.Sigma * x * x
                    with np.errstate(all="ignore"):
                        ratio = (1.0 + c * r) / (1.0 + c2 * r)
                    ratio = ratio[np.isfinite(ratio)]
                    if ratio.size:
                        eff = max(eff, float(np.abs(ratio - 1.0).max()))
                if not math.isfinite(eff):
                    return math.inf
                worst = max(worst, eff)
        return worst / COND_DELTA

    # ---- learning ----------------------------------------------------------------------
    def _would_update(self, m, v, n2):
        # the firing condition alone: where a max(0, ·) rule fires its α is > 0 mathematically
        fires, _ = _RULE_TABLE[self.rule]
        with localcontext() as ctx:
            ctx.prec = PREC
            return bool(fires(_D(m), _D(v), _D(n2), _params_dec(self.rule, self.params)))

    def learn(self, x, y, hint=None, h=1.0):
        """One round on (x, y), y in {-1, +1}, of importance h >= 0 (h = 0: the row is skipped,
        no counter moves and nothing is recorded).  hint=(mistake, updated) from the
        implementation under test is followed only in rounds whose decision lies within the
        tolerance band."""
        x = np.array(x, dtype=float).ravel()
        if x.shape != (self.d,):
            raise ValueError("wrong number of features")
        h = check_weight(h)
        y = 1.0 if float(y) > 0 else -1.0
        m = y * self.decision(x)
        rec = {"x": x, "y": y, "h": h, "m": m, "v": None, "mistake": m <= 0, "updated": False,
               "alpha": 0.0, "c": 0.0, "ambiguous": False, "collapsed": False,
               "ill_conditioned": False, "amplification": 0.0, "skipped": h == 0}
        if h == 0:
            rec["mistake"] = False
            return rec

        if not np.any(x):  # all-zero row: a clean no-op, still a mistake (m = 0)
            self.n_mistakes += 1
            self.rounds.append(rec)
            return rec

        v = self.variance(x)
        n2 = math.fsum((x * x).tolist())
        rec["v"] = v
        if not np.any(self.sigma_x(x)):
            # Σx = 0: the covariance has collapsed to 0 on the support of x (reachable with
            # ExactCW/diag, whose c grows like 1/v²).  Nothing can change: a no-op, as for x = 0.
            # (docs/design.md §2 is silent here; this is the limit of the update as Σx -> 0.)
            self.n_mistakes += int(rec["mistake"])
            rec["collapsed"] = True
            self.rounds.append(rec)
            return rec
        if not v > 0:
            raise FloatingPointError(f"reference: non-positive variance {v} for a non-zero row")
        ax = np.abs(x)
        m_err = TOL * math.fsum(((np.abs(self.mu) + self._moved) * ax).tolist())
        # v's error scale: relative for diag/identity (a sum of non-negative terms); for full,
        # absolute on the scale of a·(Σ|x_j|)² (Σ's entries are built by subtracting terms ≤ a).
        if self.covariance == "full":
            v_err = TOL * self.a * math.fsum(ax.tolist()) ** 2
        else:
            v_err = TOL * v

        ambiguous = False
        mistake = m <= 0
        if m_err > 0 and abs(m) <= m_err:
            ambiguous = True
            if hint is not None:
                mistake = bool(hint[0])

        upd = _evaluate(self.rule, m, v, n2, self.params, h=h)
        fired = upd is not None
        corners = {fired}
        for dm in (-m_err, m_err):
            for vv in (max(v - v_err, 0.5 * v), v + v_err):
                corners.add(self._would_update(m + dm, vv, n2))
        if len(corners) > 1:
            ambiguous = True
            if hint is not None and bool(hint[1]) != fired:
                fired = bool(hint[1])
                upd = (_evaluate(self.rule, m, v, n2, self.params, force=True, h=h)
                       if fired else None)

        if mistake:
            self.n_mistakes += 1
        rec["mistake"] = mistake
        rec["ambiguous"] = ambiguous
        if ambiguous:
            self.n_ambiguous += 1

        if fired:
            alpha, c = upd
            sx = self.sigma_x(x)
            rec["amplification"] = self._amplification(x, m, v, n2, alpha, c, sx, h)
            if rec["amplification"] > COND_LIMIT:
                rec["ill_conditioned"] = True
                self.ill_conditioned_at = (
                    len(self.rounds) if self.ill_conditioned_at is None
                    else self.ill_conditioned_at)
            step = (alpha * y) * sx
            if not (np.all(np.isfinite(step)) and math.isfinite(alpha)):
                raise FloatingPointError(f"reference: overflow in the mean step (alpha={alpha})")
            self.mu = self.mu + step
            self._moved = self._moved + np.abs(step)
            if self.covariance == "full":
                # β = c/(1+cv); its limit 1/v if c overflowed to inf
                beta = c / (1.0 + c * v) if math.isfinite(c) else 1.0 / v
                self.Sigma = self.Sigma - beta * np.outer(sx, sx)
            elif self.covariance == "diag":
                # Σ_j/(1 + cΣ_j x_j²) on the coordinates it can change (x_j ≠ 0, Σ_j ≠ 0);
                # identical elsewhere, and free of inf·0 if c overflowed to inf.
                S = self.Sigma.copy()
                k = (x != 0) & (S != 0)
                S[k] = S[k] / (1.0 + c * S[k] * x[k] * x[k])
                self.Sigma = S
            self.n_updates += 1
            rec.update(updated=True, alpha=alpha, c=c)
        self.rounds.append(rec)
        return rec

    def fit_stream(self, X, y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
        for xi, yi, hi in zip(X, np.asarray(y), w):
            self.learn(xi, yi, h=hi)
        return self


# --------------------------------------------------------------------------------------------
# Regression (docs/design.md §2.6), weighted: plain float64 scalar functions
# --------------------------------------------------------------------------------------------

REGRESSION_RULES = ("AROWRegressor", "PARegressor", "PA1Regressor", "PA2Regressor")
REGRESSION_DEFAULTS = {
    "AROWRegressor": {"r": 1.0},
    "PARegressor": {"epsilon": 0.1},
    "PA1Regressor": {"C": 1.0, "epsilon": 0.1},
    "PA2Regressor": {"C": 1.0, "epsilon": 0.1},
}


def regression_update(rule, e, v, norm2, h=1.0, **params):
    """The weighted step (alpha, c) of a regression rule on residual e = y - mu.x (mu += alpha Sigma x,
    Sigma^-1 += c x x^T), or None (no update; h = 0 skips the row).

    AROW regression is recursive least squares with noise variance r: weight h is r/h (every row
    updates).  PA's step projects onto the epsilon-tube, so h > 0 takes it once; PA-I steps by at
    most hC; PA-II leaves the loss l (1 + 2Cn)^-h, alpha = sign(e) (l/n) (1 - (1 + 2Cn)^-h).
    """
    h = check_weight(h)
    p = dict(REGRESSION_DEFAULTS[rule])
    unknown = set(params) - set(p)
    if unknown:
        raise TypeError(f"{rule}: unknown hyper-parameters {sorted(unknown)}")
    p.update(params)
    if h == 0:
        return None
    if rule == "AROWRegressor":
        r = p["r"] / h
        return e / (v + r), 1.0 / r
    loss = abs(e) - p["epsilon"]
    if not loss > 0:
        return None
    if rule == "PARegressor":
        tau = loss / norm2
    elif rule == "PA1Regressor":
        tau = min(h * p["C"], loss / norm2)
    elif h == 1.0:
        tau = loss / (norm2 + 1.0 / (2.0 * p["C"]))
    else:
        tau = -(loss / norm2) * math.expm1(-h * math.log1p(2.0 * p["C"] * norm2))
    return math.copysign(tau, e), 0.0


class RefRegressor:
    """A regression rule x covariance ("diag"/"full" for AROWRegressor, identity for the PA
    regressors), homogeneous, learning rows of importance h.  Attributes mu, Sigma, n_updates,
    n_ambiguous; ``moved`` is the path length of mu (its rounding-error scale)."""

    def __init__(self, rule, params=None, covariance=None, d=1, a=1.0):
        if rule not in REGRESSION_RULES:
            raise ValueError(f"unknown regression rule {rule!r}")
        if rule == "AROWRegressor":
            if covariance not in ("diag", "full"):
                raise ValueError("AROWRegressor: covariance must be 'diag' or 'full'")
        else:
            covariance = "identity"
        self.rule, self.params, self.covariance = rule, dict(params or {}), covariance
        self.d, self.a = int(d), float(a) if covariance != "identity" else 1.0
        self.mu = np.zeros(self.d)
        self.moved = np.zeros(self.d)
        self.Sigma = prior_covariance(covariance, self.d, self.a)
        self.n_updates = 0
        self.n_ambiguous = 0

    def predict(self, x):
        return math.fsum((self.mu * np.asarray(x, dtype=float)).tolist())

    def learn(self, x, y, h=1.0, hint=None):
        """One row; ``hint`` (did the implementation under test update?) is followed only when
        |e| is within rounding distance (TOL on its error scale) of epsilon.  Returns whether it
        updated."""
        x = np.asarray(x, dtype=float).ravel()
        h = check_weight(h)
        if h == 0 or not np.any(x):
            return False
        e = float(y) - self.predict(x)
        n2 = math.fsum((x * x).tolist())
        if self.covariance == "full":
            sx = self.Sigma @ x
        elif self.covariance == "diag":
            sx = self.Sigma * x
        else:
            sx = x
        v = math.fsum((x * sx).tolist())
        upd = regression_update(self.rule, e, v, n2, h, **self.params)
        if self.rule != "AROWRegressor":
            eps = self.params.get("epsilon", REGRESSION_DEFAULTS[self.rule]["epsilon"])
            e_err = TOL * (abs(float(y)) + float((np.abs(self.mu) + self.moved) @ np.abs(x)))
            if abs(abs(e) - eps) <= e_err:
                self.n_ambiguous += 1
                if hint is not None and bool(hint) != (upd is not None):
                    if not hint:
                        upd = None
                    else:  # the implementation fired at the edge: a ~0 step of the right sign
                        upd = (0.0, 0.0)
        if upd is None:
            return False
        alpha, c = upd
        step = alpha * sx
        self.mu = self.mu + step
        self.moved = self.moved + np.abs(step)
        if self.covariance == "full":
            self.Sigma = self.Sigma - (c / (1.0 + c * v)) * np.outer(sx, sx)
        elif self.covariance == "diag":
            k = x != 0
            self.Sigma[k] = self.Sigma[k] / (1.0 + c * self.Sigma[k] * x[k] * x[k])
        self.n_updates += 1
        return True


# --------------------------------------------------------------------------------------------
# Exact linear algebra helpers (for Sherman–Morrison checks)
# --------------------------------------------------------------------------------------------


def exact_inverse(A):
    """Exact inverse of a square matrix given as floats or Fractions (Gauss–Jordan over Q)."""
    n = len(A)
    M = [[Fraction(A[i][j]) if not isinstance(A[i][j], Fraction) else A[i][j] for j in range(n)]
         + [Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    for col in range(n):
        piv = next((r for r in range(col, n) if M[r][col] != 0), None)
        if piv is None:
            raise ZeroDivisionError("singular matrix")
        M[col], M[piv] = M[piv], M[col]
        pv = M[col][col]
        M[col] = [e / pv for e in M[col]]
        for r in range(n):
            if r != col and M[r][col] != 0:
                f = M[r][col]
                M[r] = [a - f * b for a, b in zip(M[r], M[col])]
    return [row[n:] for row in M]


def to_float_matrix(F):
    return np.array([[float(e) for e in row] for row in F], dtype=float)
