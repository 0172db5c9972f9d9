"""The binary learners of the confidence-weighted family.

Every learner applies the same template on each example (x, y ∈ {−1, +1}), with
m = y·μ·x and v = xᵀΣx:

    μ ← μ + α·y·Σx,        Σ⁻¹ ← Σ⁻¹ + c·x xᵀ

and differs only in the scalars (α, c) and when it fires. First-order learners keep Σ = I.
Second-order learners start from Σ = a·I and keep either the full covariance
(`covariance="full"`, Sherman–Morrison rank-one updates, O(d²) per update) or its diagonal
(`covariance="diag"`, the diagonal of the precision update, O(nnz) per example).

Common parameters
-----------------
fit_intercept : bool, default=True
    Learn a bias as a constant feature 1 with its own mean and variance. With False the model is
    the papers' homogeneous w·x.
n_iter : int, default=1
    Passes over the data made by `fit` (`partial_fit` always makes one).
shuffle : bool, default=False
    Present the rows of each `fit` pass in a fresh random order.
random_state : int, RandomState, Generator or None
    Seed of the shuffling.
multi_class : {"max-score", "ovr"}, default="max-score"
    With more than two classes: "max-score" keeps one Gaussian per class and, on each example,
    applies the binary rule to the margin between the true class and the highest-scoring wrong
    class s, with m = μ_y·x − μ_s·x and v = xᵀΣ_y x + xᵀΣ_s x (DESIGN §4); "ovr" learns one
    binary problem per class. Two classes always use the binary learner.
kernel : {None, "linear", "rbf", "poly"} or callable, default=None
    Learn in the dual form in a reproducing-kernel Hilbert space (the representer theorem of the
    AROW and CW-Stdev papers): μ = Σ_p ν_p φ(x_p) and Σ = a·I + Σ_pq Π_pq φ(x_p)φ(x_q)ᵀ over the
    support rows x_p, the rows on which the rule fired. Kernels follow scikit-learn: linear x·z,
    rbf exp(−γ‖x − z‖²), poly (γ·x·z + coef0)^degree; a callable k(X, Z) returns the matrix of
    kernel values. The dual covariance is always full (`covariance` is ignored), and with
    `fit_intercept` the kernel gains a constant 1 (the bias feature). With more than two classes
    every class keeps its own dual Gaussian (built-in kernels only).
gamma : float or None, default=None
    Kernel scale for "rbf", "poly" and the RFF approximation; None means 1 / n_features.
degree, coef0 : int, float, default=3, 1.0
    Parameters of the "poly" kernel.
budget : int or None, default=None
    Cap on the number of support rows. When an update would exceed it, the support row whose
    mean term ν_p·φ(x_p) has the smallest norm |ν_p|·√k(x_p, x_p) is removed. Its precision term
    c_p·φ(x_p)φ(x_p)ᵀ is removed exactly (a Schur complement of Π), so the covariance stays
    positive definite, and its mean term is projected onto the remaining support rows (a ridge
    projection weighted by their precision terms), so the mean moves as little as the remaining
    rows allow. Memory O(budget²), time per example O(budget·nnz + budget²).
kernel_approximation : {None, "rff"}, default=None
    "rff" maps rows to `n_components` random Fourier features of the RBF kernel (seeded by
    `random_state`) and learns the primal (diag or full) model on them: constant cost per example
    on streams of any length. `coef_` is then over the random features.
n_components : int, default=100
    Number of random Fourier features.
penalty : {None, "l1", "l1-uniform"}, default=None
    Sparse training (second-order learners, `covariance="diag"`): after every update each weight
    is soft-thresholded by η_t·α·Σ_jj ("l1", the coordinate-dependent FOBOS step: confident
    weights shrink less) or by η_t·α ("l1-uniform", the classic truncated gradient), applied
    lazily so a row costs O(nnz). η_t is the rule's step per unit of loss gradient: α_t, or
    1/(2(v + r)) for AROW (1/(2(v + 1/C)) for NHERD). `sparsity_` and `sparse_coef_` report the
    result.
alpha : float, default=1e-4
    The L1 strength λ.
penalize_intercept : bool, default=False
    Whether the bias is thresholded too.
"""

from __future__ import annotations

from ._base import Classifier, ConfidenceWeightedClassifier, store_params


class Perceptron(Classifier):
    """The Perceptron (Rosenblatt, 1958).

    Update on a mistake (m ≤ 0): μ ← μ + y·x.
    """

    _rule = "Perceptron"

    def __init__(
        self,
        *,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class PA(Classifier):
    """Passive-Aggressive (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer, JMLR 2006).

    When m < 1: μ ← μ + α·y·x with α = (1 − m)/‖x‖² (the smallest step reaching margin 1).
    """

    _rule = "PA"

    def __init__(
        self,
        *,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class PA1(Classifier):
    """PA-I (Crammer et al., JMLR 2006): PA with the step capped at C.

    When m < 1: α = min(C, (1 − m)/‖x‖²).

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness (> 0).
    """

    _rule = "PA1"
    _rule_params = ("C",)

    def __init__(
        self,
        *,
        C=1.0,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class PA2(Classifier):
    """PA-II (Crammer et al., JMLR 2006): PA with a squared slack penalty.

    When m < 1: α = (1 − m)/(‖x‖² + 1/(2C)).

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness (> 0).
    """

    _rule = "PA2"
    _rule_params = ("C",)

    def __init__(
        self,
        *,
        C=1.0,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class SOP(ConfidenceWeightedClassifier):
    """Second-Order Perceptron (Cesa-Bianchi, Conconi, Gentile, SIAM J. Comput. 2005).

    On a mistake (m ≤ 0) x xᵀ joins the correlation matrix: α = (1 − m)/(1 + v), c = 1.

    Parameters
    ----------
    a : float, default=1.0
        Initial variance, Σ₀ = a·I. This is the inverse of the paper"s regulariser: the paper"s
        A₀ = a"·I corresponds to a = 1/a".
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "SOP"

    def __init__(
        self,
        *,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class CW(ConfidenceWeightedClassifier):
    """Confidence-Weighted learning, variance form (Dredze, Crammer, Pereira, ICML 2008).

    When m < φ·v: α = γ = [−(1+2φm) + √((1+2φm)² − 8φ(m − φv))]/(4φv), c = 2γφ, φ = Φ⁻¹(eta).

    Parameters
    ----------
    eta : float, default=0.7
        Confidence, in (0.5, 1).
    a : float, default=1.0
        Initial variance, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "CW"
    _rule_params = ("eta",)

    def __init__(
        self,
        *,
        eta=0.7,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class ExactCW(ConfidenceWeightedClassifier):
    """Exact convex CW, "CW-Stdev" (Crammer, Dredze, Pereira, NIPS 2008).

    When m < φ·√v: α = max(0, [−mψ + √(m²φ⁴/4 + vφ²ζ)]/(vζ)), ψ = 1 + φ²/2, ζ = 1 + φ²;
    c = αφ/√u with u = ¼(−αvφ + √(α²v²φ² + 4v))².

    Parameters
    ----------
    eta : float, default=0.7
        Confidence, in (0.5, 1).
    a : float, default=1.0
        Initial variance, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "ExactCW"
    _rule_params = ("eta",)

    def __init__(
        self,
        *,
        eta=0.7,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class AROW(ConfidenceWeightedClassifier):
    """Adaptive Regularization of Weight vectors (Crammer, Kulesza, Dredze, NIPS 2009).

    When m < 1: α = (1 − m)/(v + r), c = 1/r.

    Parameters
    ----------
    r : float, default=1.0
        Regularisation (> 0); larger r means smaller, more noise-tolerant steps.
    a : float, default=1.0
        Initial variance, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "AROW"
    _rule_params = ("r",)

    def __init__(
        self,
        *,
        r=1.0,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class NAROW(ConfidenceWeightedClassifier):
    """Narrow Adaptive Regularization Of Weights (Orabona, Crammer, NIPS 2010), as the paper
    states it.

    With r_t = v/(b·v − 1) when b·v > 1 (else r_t = ∞): update when m·r_t/(r_t + v) < 1 with
    α = (r_t − m)/(r_t + v), c = 1/r_t (α = 1, c = 0 when r_t = ∞). This is the paper"s
    look-ahead prediction rewritten in μ; it is not AROW"s step with a variable r.

    Parameters
    ----------
    b : float, default=1.0
        Threshold on the variance (> 0): the precision only grows on rows with v > 1/b.
    a : float, default=1.0
        Initial variance, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "NAROW"
    _rule_params = ("b",)

    def __init__(
        self,
        *,
        b=1.0,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class SCW1(ConfidenceWeightedClassifier):
    """Soft Confidence-Weighted learning, SCW-I (Wang, Zhao, Hoi, ICML 2012).

    When m < φ·√v: α = min(C, α_ExactCW); c as in ExactCW with this α.

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness (> 0), the cap on α.
    eta : float, default=0.75
        Confidence, in (0.5, 1).
    a : float, default=1.0
        Initial variance, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "SCW1"
    _rule_params = ("C", "eta",)

    def __init__(
        self,
        *,
        C=1.0,
        eta=0.75,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class SCW2(ConfidenceWeightedClassifier):
    """Soft Confidence-Weighted learning, SCW-II (Wang, Zhao, Hoi, ICML 2012).

    α = max(0, [−(2mn + φ²mv) + γ]/(2(n² + nvφ²))) with n = v + 1/(2C) and
    γ = φ√(φ²m²v² + 4nv(n + vφ²)); c as in ExactCW with this α.

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness (> 0).
    eta : float, default=0.9
        Confidence, in (0.5, 1).
    a : float, default=1.0
        Initial variance, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "SCW2"
    _rule_params = ("C", "eta",)

    def __init__(
        self,
        *,
        C=1.0,
        eta=0.9,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


class NHERD(ConfidenceWeightedClassifier):
    """Normal Herding (Crammer, Lee, NIPS 2010), full (exact) covariance update.

    When m < 1: α = (1 − m)/(v + 1/C), c = 2C + C²v, i.e. Σ ← Σ − ΣxxᵀΣ·(2C + C²v)/(1 + Cv)².

    Parameters
    ----------
    C : float, default=1.0
        Aggressiveness (> 0).
    a : float, default=1.0
        Initial variance, Σ₀ = a·I.
    covariance : {"diag", "full"}, default="diag"
    """

    _rule = "NHERD"
    _rule_params = ("C",)

    def __init__(
        self,
        *,
        C=1.0,
        a=1.0,
        covariance="diag",
        penalty=None,
        alpha=1e-4,
        penalize_intercept=False,
        fit_intercept=True,
        n_iter=1,
        shuffle=False,
        random_state=None,
        multi_class="max-score",
        kernel=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        budget=None,
        kernel_approximation=None,
        n_components=100,
    ):
        store_params(self, locals())


CLASSIFIERS = (Perceptron, PA, PA1, PA2, SOP, CW, ExactCW, AROW, NAROW, SCW1, SCW2, NHERD)
