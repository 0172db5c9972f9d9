"""An independent, slow reference for the learners of docs/design.md §2.9: ALMA, ROMMA,
AggressiveROMMA, OGD and IELLIP transliterated from LIBOL's own definitions (LIBOL/LIBOL commit d7e11b5: algorithms/ALMA.m, ROMMA.m, aROMMA.m,
OGD.m, IELLIP.m, with the defaults of init_options.m and init_model.m, driven as ol_train.m
drives them), AdaGrad and FTRL written from their papers (LIBOL has neither). Nothing here
is derived from the Rust code: each function is one LIBOL file's
update on one row, in plain float64 NumPy on dense vectors, with LIBOL's own prediction
(ŷ = +1 when f = w·x ≥ 0) and mistake count (ŷ ≠ y).

`run(name, X, y, **params)` makes one pass in the given order and returns (w, mistakes,
updates); `sample_weight=` gives each row an importance h ≥ 0, applied as docs/design.md §2.10
states (each function's `h`: ALMA's and OGD's step, IELLIP's mean step and AdaGrad's and FTRL's
gradient times h; ROMMA's step, which puts the margin at 1, unchanged; h = 0 skips the row,
which then counts as no round); `w` has no bias (fit_intercept=False is the setting LIBOL learns in). For OGD the
squared hinge, which LIBOL lacks, follows the same file with the loss max(0, 1 − y·f)².
IELLIP's `covariance="diag"` keeps the diagonal of the same update (Σ_j ← Σ_j/(1 + c·x_j²·Σ_j)
with c = c_t/(v(1 − c_t)), then scaled by 1/(1 − c_t)), cwrs's diagonal form of the method.
"""

from __future__ import annotations

import math

import numpy as np


def _predict(f):
    return 1.0 if f >= 0 else -1.0


def alma(state, x, y, alpha=0.9, p=2.0, C=math.sqrt(2.0), h=1.0):
    w = state["w"]
    k = state.setdefault("k", 1)
    f = w @ x
    B = 1.0 / alpha
    gamma_k = B * math.sqrt(p - 1) / math.sqrt(k)
    if (1 - alpha) * gamma_k - y * f > 0:
        eta_k = h * (C / (math.sqrt(p - 1) * math.sqrt(k)))
        w = w + eta_k * y * x
        w = w / max(1.0, np.linalg.norm(w))
        state["w"], state["k"] = w, k + 1
        return f, True
    return f, False


def _romma(state, x, y, fires):
    w = state["w"]
    f = w @ x
    if not fires(y, f):
        return f, False
    if np.linalg.norm(w) == 0:
        state["w"] = w + y * x
        return f, True
    deno = (np.linalg.norm(x) * np.linalg.norm(w)) ** 2 - f**2
    if deno == 0:
        return f, False
    coe_1 = ((np.linalg.norm(x) * np.linalg.norm(w)) ** 2 - y * f) / deno
    coe_2 = (np.linalg.norm(w) ** 2 * (y - f)) / deno
    state["w"] = coe_1 * w + coe_2 * x
    return f, True


def romma(state, x, y, h=1.0):
    return _romma(state, x, y, lambda y, f: _predict(f) != y)


def aromma(state, x, y, h=1.0):
    return _romma(state, x, y, lambda y, f: 1 - y * f > 0)


def ogd(state, x, y, eta=1.0, loss="hinge", h=1.0):
    w = state["w"]
    t = state.setdefault("t", 1)
    f = w @ x
    eta_t = h * (eta / math.sqrt(t))
    updated = False
    if loss == "hinge":
        if max(0.0, 1 - y * f) > 0:
            w, updated = w + eta_t * y * x, True
    elif loss == "logistic":
        if math.log(1 + math.exp(-y * f)) > 0:
            w, updated = w + eta_t * y * x * (1 / (1 + math.exp(y * f))), True
    elif loss == "squared_hinge":
        if max(0.0, 1 - y * f) > 0:
            w, updated = w + eta_t * 2 * (1 - y * f) * y * x, True
    state["w"], state["t"] = w, t + 1
    return f, updated


def iellip(state, x, y, b=0.3, c=0.1, a=1.0, covariance="full", h=1.0):
    w = state["w"]
    d = w.shape[0]
    if "Sigma" not in state:
        state["Sigma"] = a * np.eye(d) if covariance == "full" else a * np.ones(d)
        state["c_t"] = c
    Sigma, c_t = state["Sigma"], state["c_t"]
    f = w @ x
    updated = False
    if _predict(f) != y:
        if covariance == "full":
            v = x @ Sigma @ x
            if v != 0:
                alpha_t = (1 - y * f) / math.sqrt(v)  # lands on m = 1: the same for every h > 0
                g = y * x / math.sqrt(v)
                S_x = g @ Sigma.T
                w = w + alpha_t * S_x
                Sigma = (Sigma - c_t * np.outer(S_x, S_x)) / (1 - c_t)
                updated = True
        else:
            v = float(np.sum(Sigma * x * x))
            if v != 0:
                w = w + ((1 - y * f) / v) * y * Sigma * x
                c_step = c_t / (v * (1 - c_t))
                Sigma = Sigma / (1 + c_step * x * x * Sigma) / (1 - c_t)
                updated = True
    state["w"], state["Sigma"], state["c_t"] = w, Sigma, c_t * b
    return f, updated


def adagrad(state, x, y, eta=1.0, delta=1.0, h=1.0):
    """Duchi, Hazan & Singer, JMLR 2011, §1 and Fig. 1 (diagonal, composite mirror descent with
    φ = 0, ψ_t(w) = ⟨w, H_t w⟩/2, H_t = δI + diag(G_t)^½) on the hinge loss: LIBOL has no
    AdaGrad, so this follows the paper (as LIBSOL's ada-fobos does without L1)."""
    w = state["w"]
    G = state.setdefault("G", np.zeros_like(w))
    f = w @ x
    if 1 - y * f > 0:
        g = -h * y * x  # the hinge's subgradient, times the row's importance
        G = G + g * g
        H = delta + np.sqrt(G)
        state["w"], state["G"] = w - eta * g / H, G
        return f, True
    return f, False


def _ftrl_weights(z, n, alpha, beta, l1, l2):
    """Algorithm 1's w_i: 0 where |z_i| ≤ λ₁, else −(z_i − sgn(z_i)·λ₁)/((β + √n_i)/α + λ₂)."""
    shrunk = -(z - np.sign(z) * l1) / ((beta + np.sqrt(n)) / alpha + l2)
    return np.where(np.abs(z) <= l1, 0.0, shrunk)


def ftrl(state, x, y, alpha=0.1, beta=1.0, l1=0.0, l2=0.0, loss="logistic", h=1.0):
    """McMahan et al., KDD 2013, Algorithm 1 (per-coordinate FTRL-Proximal), with labels ±1:
    the logistic loss's gradient (p − y₀₁)·x = −y·σ(−y·f)·x; or the hinge's, −y·x when
    y·f < 1. Every coordinate of the row, including the ones whose x_i = 0, is left alone."""
    d = x.shape[0]
    z = state.setdefault("z", np.zeros(d))
    n = state.setdefault("n", np.zeros(d))
    w = _ftrl_weights(z, n, alpha, beta, l1, l2)
    state["w"] = w
    f = w @ x
    m = y * f
    if loss == "logistic":
        scale = 1.0 / (1.0 + math.exp(m))
    else:
        scale = 1.0 if m < 1 else 0.0
    if scale == 0.0:
        return f, False
    z, n = z.copy(), n.copy()
    for i in np.flatnonzero(x):
        g = -h * y * scale * x[i]
        sigma = (math.sqrt(n[i] + g * g) - math.sqrt(n[i])) / alpha
        z[i] += g - sigma * w[i]
        n[i] += g * g
    state["z"], state["n"] = z, n
    state["w"] = _ftrl_weights(z, n, alpha, beta, l1, l2)
    return f, True


def _rival(F, label):
    """LIBOL's s_t: the first class of highest score other than the label."""
    Fs = F.copy()
    Fs[label] = -np.inf
    return int(np.argmax(Fs))


def _m_romma(state, x, label, fires):
    """M_ROMMA.m and M_aROMMA.m: W ← c_t·W, then ±d_t·x on rows y_t and s_t, with the joint
    (Frobenius) norm of W and 2‖x‖² for the pair."""
    W = state["W"]
    F = W @ x
    s = _rival(F, label)
    m = F[label] - F[s]
    if not fires(F, label, m):
        return F, False
    norm_W = np.linalg.norm(W, "fro")
    W = W.copy()
    if norm_W == 0:
        W[label] += x
        W[s] -= x
    else:
        deno = 2 * np.linalg.norm(x) ** 2 * norm_W**2 - m**2
        c_t = (2 * np.linalg.norm(x) ** 2 * norm_W**2 - m) / deno
        d_t = (norm_W**2 * (1 - m)) / deno
        W = W * c_t
        W[label] += d_t * x
        W[s] -= d_t * x
    state["W"] = W
    return F, True


def m_romma(state, x, label):
    return _m_romma(state, x, label, lambda F, label, m: int(np.argmax(F)) != label)


def m_aromma(state, x, label):
    return _m_romma(state, x, label, lambda F, label, m: max(0.0, 1 - m) > 0)


def m_ogd(state, x, label, eta=1.0):
    """M_OGD.m: the hinge loss of the pair, step eta/√t, t counting every row."""
    W = state["W"]
    t = state.setdefault("t", 1)
    F = W @ x
    s = _rival(F, label)
    updated = max(0.0, 1 - (F[label] - F[s])) > 0
    if updated:
        W = W.copy()
        eta_t = eta / math.sqrt(t)
        W[label] += eta_t * x
        W[s] -= eta_t * x
    state["W"], state["t"] = W, t + 1
    return F, updated


MULTICLASS = {"ROMMA": m_romma, "AggressiveROMMA": m_aromma, "OGD": m_ogd}


def run_multiclass(name, X, labels, n_classes, **params):
    """One pass of LIBOL's multiclass learner `name` (its M_*.m file) over the rows of dense `X`
    with class indices `labels` in order: (W, LIBOL's mistake count, updates). LIBOL predicts
    the first class of highest score (MATLAB's max) and counts ŷ ≠ y. No row may be all-zero
    (ROMMA's c_t is 0/0 there in LIBOL; cwrs never learns from one)."""
    state = {"W": np.zeros((n_classes, X.shape[1]))}
    mistakes = updates = 0
    for x, label in zip(X, labels):
        F, updated = MULTICLASS[name](state, x, int(label), **params)
        mistakes += int(np.argmax(F)) != label
        updates += updated
    return state["W"], mistakes, updates


LEARNERS = {
    "ALMA": alma,
    "ROMMA": romma,
    "AggressiveROMMA": aromma,
    "OGD": ogd,
    "IELLIP": iellip,
    "AdaGrad": adagrad,
    "FTRL": ftrl,
}


def run(name, X, y, zero_rows_learn=True, sample_weight=None, **params):
    """One pass of learner `name` over the rows of dense `X` with labels ±1 in order:
    (w, LIBOL's mistake count, updates).

    LIBOL "updates" on an all-zero row where the rule's condition holds: w does not move, but
    the update is counted (and ALMA's k advances). cwrs counts such a null update only for
    ALMA, whose k is the count of updates (docs/design.md §2.9); `zero_rows_learn=False`
    follows that for the others: an all-zero row still counts as a round (OGD's t, IELLIP's
    c_t) and a mistake, not as an update.  A row of weight 0 (`sample_weight`) is no round."""
    state = {"w": np.zeros(X.shape[1])}
    mistakes = updates = 0
    weights = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    for x, label, h in zip(X, y, weights):
        if h == 0:
            continue
        f, updated = LEARNERS[name](state, x, float(label), h=float(h), **params)
        if not zero_rows_learn and not np.any(x) and name != "ALMA":
            updated = False
        mistakes += _predict(f) != label
        updates += updated
    return state["w"], mistakes, updates
