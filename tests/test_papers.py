"""The papers' synthetic experiments, reproduced as tests of shape.

Two experiments, both on the synthetic data of Crammer, Dredze & Pereira, "Exact Convex
Confidence-Weighted Learning" (NIPS 2008, §5):

    1,000 points in R^20; the first two coordinates drawn from a 45°-rotated Gaussian, the other
    18 from independent N(0, 2); each label depends on the first two coordinates through a
    separator parallel to the long axis of the ellipsoid (a linearly separable set).

The stored text of that paper says "standard deviation 1" for the informative pair, but a long axis
needs two different deviations; the NAROW paper (`narow-nips2010.txt`, §6), which repeats the same
construction "for completeness", gives "standard deviation 1 and 10". We follow that: the pair is
(u, v) rotated by 45° with u ~ N(0, 10²) along the long axis and v ~ N(0, 1) across it, and the
label is sign(v), so the true separator is w* ∝ (−1, 1, 0, …, 0). N(0, 2) is read as variance 2 (the usual
N(mean, variance)); the main assertions are also checked with the other reading (standard deviation
2), and hold with the same margins.

(a) CW-Stdev paper, Fig. 2(a): one online pass, cumulative mistakes; second-order learners make far
    fewer mistakes than first-order ones. Plus two statements of the same paper: the number of
    mistakes of CW-Stdev (`ExactCW`) does not depend on the initial variance a (Lemma 3), and the
    shape of the weight distribution after 50 rounds (Fig. 3, bottom).
(b) AROW paper (`arow-nips2009.md`, §5, Fig. 2(a)): the same data, 5k training and 10k test
    examples, 10% of the training labels flipped, test error against the true labels, 100 runs;
    AROW's test error stays far below CW's (the variance form, `cwrs.CW`, as in the AROW paper).

Everything runs with fit_intercept=False (the papers' homogeneous w·x) and fixed seeds; averages are
over 100 repetitions, as in the papers' figures. The whole file runs in a few seconds.
"""

import numpy as np
import pytest

import cwrs

# Full-covariance second-order learners, with the hyper-parameters used in (a). The CW-Stdev paper
# tuned every algorithm's parameters ("All algorithm parameters were tuned over 1,000 runs"). The
# defaults already show the paper's gap with a wide margin for all but NHERD, so we keep them
# (tuning only widens the gap: e.g. ExactCW makes 48 mistakes at eta=0.95 vs 82 at the default 0.7).
# NHERD's aggressiveness C multiplies v = xᵀΣx in its precision step c = 2C + C²v, and with ‖x‖² ≈ 137 here
# the default C = 1 collapses Σ far too fast. Grid (mean mistakes, tuning seeds 100..119, disjoint
# from the test seeds 0..99): C=1e-3: 141, 3e-3: 112, 0.01: 94, 0.02: 88, 0.03: 87, 0.05: 88,
# 0.1: 94, 0.3: 112, 1: 145, 10: 224. We use the grid's best, C = 0.03.
SECOND_ORDER_FULL = {
    "SOP": {},
    "CW": {},
    "ExactCW": {},
    "AROW": {},
    "NAROW": {},
    "SCW1": {},
    "SCW2": {},
    "NHERD": {"C": 0.03},
}
FIRST_ORDER = ("Perceptron", "PA")

N_REPS = 100
NOISE_VAR2 = np.sqrt(2.0)  # N(0, 2) read as variance 2 (the main reading)
NOISE_SD2 = 2.0  # N(0, 2) read as standard deviation 2


def rotated_gaussian(n, rng, noise_sd=NOISE_VAR2):
    """The synthetic data of CW-Stdev §5 (see the module docstring): X of shape (n, 20), y in ±1."""
    u = rng.normal(0.0, 10.0, n)  # along the long axis (uninformative)
    v = rng.normal(0.0, 1.0, n)  # across it (decides the label)
    c = np.sqrt(0.5)
    X = np.empty((n, 20))
    X[:, 0] = c * (u - v)
    X[:, 1] = c * (u + v)
    X[:, 2:] = rng.normal(0.0, noise_sd, (n, 18))
    y = np.where(v >= 0.0, 1.0, -1.0)
    return X, y


TRUE_DIRECTION = np.array([-1.0, 1.0]) / np.sqrt(2.0)  # w* on the informative pair


def one_pass(name, X, y, **params):
    cls = getattr(cwrs, name)
    if cls._second_order:
        params.setdefault("covariance", "full")
    return cls(fit_intercept=False, **params).partial_fit(X, y, classes=[-1, 1])


# ------------------------------------------------------------------------------------------------
# (a) CW-Stdev, Fig. 2(a): cumulative online mistakes after one pass over 1,000 points.
#
# Measured (mean ± sd over seeds 0..99, one pass, fit_intercept=False):
#
#   learner (full Σ)      noise variance 2     noise sd 2
#   Perceptron            224.6 ± 12.3         248.7 ± 13.2
#   PA                    169.1 ± 11.5         194.3 ± 11.9
#   SOP                    77.2 ±  7.8  0.46    79.0 ±  7.4  0.41    (ratio to min(PA, Perceptron))
#   CW (variance)          53.6 ±  5.8  0.32    58.2 ±  6.2  0.30
#   ExactCW (CW-Stdev)     81.2 ±  6.6  0.48    94.1 ±  6.8  0.48
#   AROW                   60.2 ±  7.3  0.36    62.6 ±  7.4  0.32
#   NAROW                  90.4 ± 11.1  0.53    92.0 ± 11.8  0.47
#   SCW1                   70.5 ±  5.5  0.42    79.8 ±  5.6  0.41
#   SCW2                   50.3 ±  4.8  0.30    55.5 ±  4.8  0.29
#   NHERD (C=0.03)         86.1 ±  9.9  0.51    95.8 ± 10.9  0.49
#   NHERD (default C=1)   140.2 ± 28.8  0.83   165.3 ± 33.2  0.85
#
# Worst ratio of a mean over any block of 10 seeds: 0.56; worst single-seed ratio: 0.70 (NAROW).
# The paper reports < 80 mistakes for every second-order learner and >= 129 for the first-order ones
# (with tuned parameters); the shape — a gap of 2x or more — is the same here.
#
# For the record, the diagonal forms (defaults, variance-2 noise, 20 seeds) are *not* better than
# the first-order learners on this rotated problem (SOP 254, CW 136, ExactCW 150, AROW 381,
# NAROW 419, SCW1 126, SCW2 373, NHERD 445): a diagonal Σ cannot represent the correlation of the
# two informative coordinates, and its per-feature rates are set by the large uninformative spread
# along the long axis. Nothing below asserts on them.

MEAN_RATIO_MAX = 0.65  # measured worst 0.53 (NAROW, variance-2 noise)
SEED_RATIO_MAX = 0.90  # measured worst single seed 0.70


@pytest.fixture(scope="module", params=[NOISE_VAR2, NOISE_SD2], ids=["noise-var2", "noise-sd2"])
def cw_stdev_mistakes(request):
    """Mistakes per learner per seed: {name: array of N_REPS counts}."""
    names = list(FIRST_ORDER) + list(SECOND_ORDER_FULL) + ["NHERD-default"]
    counts = {name: [] for name in names}
    for seed in range(N_REPS):
        X, y = rotated_gaussian(1000, np.random.default_rng(seed), request.param)
        for name in FIRST_ORDER:
            counts[name].append(one_pass(name, X, y).n_mistakes_)
        for name, params in SECOND_ORDER_FULL.items():
            counts[name].append(one_pass(name, X, y, **params).n_mistakes_)
        counts["NHERD-default"].append(one_pass("NHERD", X, y).n_mistakes_)
    return {name: np.array(c) for name, c in counts.items()}


@pytest.mark.parametrize("name", list(SECOND_ORDER_FULL))
def test_cw_stdev_second_order_full_makes_far_fewer_mistakes(cw_stdev_mistakes, name):
    mistakes = cw_stdev_mistakes
    per_seed_baseline = np.minimum(mistakes["Perceptron"], mistakes["PA"])
    baseline = min(mistakes["Perceptron"].mean(), mistakes["PA"].mean())
    mean = mistakes[name].mean()
    assert mean <= MEAN_RATIO_MAX * baseline, (
        f"{name}: {mean:.1f} mistakes on average, first-order best {baseline:.1f}"
    )
    worst = (mistakes[name] / per_seed_baseline).max()
    assert worst <= SEED_RATIO_MAX, f"{name}: worst per-seed ratio to first order {worst:.2f}"


def test_cw_stdev_first_order_shape(cw_stdev_mistakes):
    # PA's margin-driven updates beat the Perceptron's (paper: both >= 129 mistakes).
    assert cw_stdev_mistakes["PA"].mean() < 0.9 * cw_stdev_mistakes["Perceptron"].mean()
    # Every learner is far from chance (500 mistakes) on this separable sequence.
    for name, counts in cw_stdev_mistakes.items():
        assert counts.mean() < 300, name


def test_cw_stdev_nherd_default_still_beats_the_perceptron(cw_stdev_mistakes):
    # With its default C=1 NHERD is only ~15% better than PA (see the table), but it stays clearly
    # ahead of the Perceptron: measured ratio 0.62 (variance-2 noise) and 0.66 (sd-2 noise).
    ratio = cw_stdev_mistakes["NHERD-default"].mean() / cw_stdev_mistakes["Perceptron"].mean()
    assert ratio < 0.8


# The paper's "CW-Var makes more mistakes than CW-Stdev: 8% more in the diagonal case and 17% more
# in the full" holds here only with tuned confidences: at the common default eta=0.7 CW-Stdev is the
# weaker one (81 vs 54 mistakes), plausibly because its constraint φ·√v is looser than CW-Var's φ·v
# when v > 1.
# Grid on the tuning seeds 100..119 (full): CW-Var is best at eta=0.7 (50.8; 0.6: 56.2, 0.8: 53.6,
# 0.9: 57.4), CW-Stdev at eta=0.95 (47.7; 0.9: 50.5, 0.97: 49.1, 0.99: 52.2). On the test seeds
# 0..99 with those values: CW-Var 53.6, CW-Stdev 48.9 (ratio 1.095; paired difference
# 4.7 ± 0.5); sd-2 noise: 58.2 vs 53.6 (1.086); every block of 10 seeds has ratio >= 1.019.
# Diagonal: both best at eta=0.7 and level (148.3 vs 151.5), so nothing is asserted there.
@pytest.mark.parametrize("noise_sd", [NOISE_VAR2, NOISE_SD2], ids=["noise-var2", "noise-sd2"])
def test_cw_stdev_tuned_beats_cw_var_full(noise_sd):
    var, stdev = [], []
    for seed in range(N_REPS):
        X, y = rotated_gaussian(1000, np.random.default_rng(seed), noise_sd)
        var.append(one_pass("CW", X, y, eta=0.7).n_mistakes_)
        stdev.append(one_pass("ExactCW", X, y, eta=0.95).n_mistakes_)
    assert np.mean(var) > 1.03 * np.mean(stdev), (np.mean(var), np.mean(stdev))


@pytest.mark.parametrize("covariance", ["full", "diag"])
def test_cw_stdev_mistakes_do_not_depend_on_a(covariance):
    # CW-Stdev, Lemma 3: initialised with Σ1 = aI instead of I, every quantity scales as
    # m~ = √a·m, v~ = a·v, µ~ = √a·µ, Σ~ = a·Σ, so the updates and the mistakes are the same.
    # The proof goes through the diagonal update (15) as well. Measured: identical counts and
    # relative deviations below 4e-15 from the predicted scaling.
    for seed in range(5):
        X, y = rotated_gaussian(1000, np.random.default_rng(seed))
        base = one_pass("ExactCW", X, y, covariance=covariance)
        for a in (1e-3, 0.25, 4.0, 1e3):
            model = one_pass("ExactCW", X, y, covariance=covariance, a=a)
            assert model.n_mistakes_ == base.n_mistakes_
            assert model.n_updates_ == base.n_updates_
            np.testing.assert_allclose(model.coef_, np.sqrt(a) * base.coef_, rtol=1e-9, atol=0)
            np.testing.assert_allclose(model.covariance_, a * base.covariance_, rtol=1e-9, atol=0)


def test_cw_stdev_weight_distribution_after_50_rounds():
    # CW-Stdev, Fig. 3 (bottom), CW-Stdev-full after 50 rounds: the ellipsoid of the two informative
    # weights has its long axis parallel to the set of true weight vectors (the ray of w*) and is
    # very narrow across it; the nine ellipsoids of pairs of noise weights are close to circular.
    # Measured over seeds 0..9: |cos(long axis, w*)| >= 0.9997, axis ratio 10.2..21.0, noise-pair
    # axis ratios <= 1.40, |cos(µ[:2], w*)| >= 0.997.
    for seed in range(10):
        X, y = rotated_gaussian(1000, np.random.default_rng(seed))
        model = one_pass("ExactCW", X[:50], y[:50])
        sigma = model.covariance_
        values, vectors = np.linalg.eigh(sigma[:2, :2])
        assert abs(vectors[:, 1] @ TRUE_DIRECTION) > 0.99
        assert values[1] / values[0] > 5.0
        for k in range(2, 20, 2):
            pair = np.linalg.eigvalsh(sigma[k : k + 2, k : k + 2])
            assert pair[1] / pair[0] < 2.0, (seed, k, pair)
        mu = model.coef_[0, :2]
        assert mu @ TRUE_DIRECTION / np.linalg.norm(mu) > 0.98


# ------------------------------------------------------------------------------------------------
# (b) AROW, Fig. 2(a): 5,000 training examples with 10% of the labels flipped, test error on 10,000
# clean test examples, learning curves over one pass, 100 runs, default hyper-parameters.
#
# Measured test error (%) after n training examples, mean over the 100 runs [min..max at n=5000]:
#
#   n             250    500   1000   2000   3000   5000
#   AROW full    11.0    7.6    5.2    3.6    3.0    2.3   [1.4 .. 3.1]
#   CW full      23.8   22.7   21.9   22.0   21.4   22.3   [10.3 .. 42.5]
#   CW diag      25.4   19.4   18.4   18.2   17.9   18.1   [8.9 .. 69.0]
#   AROW diag    43.5   39.8   34.6   28.6   24.7   19.8   [6.4 .. 73.7]
#
# As in the paper, AROW-full improves steadily while CW-full stalls around 20% (each flipped label
# forces CW to satisfy its hard constraint on a wrong example), AROW-full beats AROW-diag, and
# CW-full is worse than CW-diag ("as has been observed previously for noisy data"). Unlike the paper's
# figure, AROW-diag is not better than CW-diag here: cwrs's diagonal form is the diagonal of the
# *precision* update (docs/design.md §2, CW-Stdev eq. 15), which shrinks each variance as if its feature were
# alone; projecting the *covariance* update onto its diagonal instead, Σ_jj ← Σ_jj − β·(Σ_jj·x_j)²
# with AROW's β = 1/(v + r) (the other common reading of "projecting onto the set of diagonal
# matrices", AROW footnote 2), gives 8.6% (vs 19.3% for the precision form and 16.7% for CW-diag)
# in a 20-run pilot. Nothing below asserts on AROW-diag vs CW-diag.

CHECKPOINTS = (250, 500, 1000, 2000, 3000, 5000)


@pytest.fixture(scope="module")
def arow_noise_curves():
    """Test-error learning curves {config: array (N_REPS, len(CHECKPOINTS))}."""
    configs = {
        "AROW-full": ("AROW", "full"),
        "CW-full": ("CW", "full"),
        "AROW-diag": ("AROW", "diag"),
        "CW-diag": ("CW", "diag"),
    }
    curves = {key: [] for key in configs}
    for run in range(N_REPS):
        rng = np.random.default_rng(10_000 + run)
        X, y = rotated_gaussian(5000, rng)
        X_test, y_test = rotated_gaussian(10_000, rng)
        noisy = np.where(rng.random(5000) < 0.1, -y, y)
        for key, (name, covariance) in configs.items():
            model = getattr(cwrs, name)(covariance=covariance, fit_intercept=False)
            curve, start = [], 0
            for stop in CHECKPOINTS:
                model.partial_fit(X[start:stop], noisy[start:stop], classes=[-1, 1])
                curve.append(1.0 - model.score(X_test, y_test))
                start = stop
            curves[key].append(curve)
    return {key: np.array(c) for key, c in curves.items()}


def test_arow_noise_final_error_far_below_cw(arow_noise_curves):
    arow, cw = arow_noise_curves["AROW-full"][:, -1], arow_noise_curves["CW-full"][:, -1]
    # Measured means 2.3% vs 22.3% (ratio 0.10).
    assert arow.mean() <= 0.25 * cw.mean(), (arow.mean(), cw.mean())
    # And in every single run (measured: AROW's worst 3.1%, CW's best 10.3%).
    assert (arow < cw).all()
    assert arow.mean() < 0.05


def test_arow_noise_learning_curves(arow_noise_curves):
    arow = arow_noise_curves["AROW-full"].mean(axis=0)
    cw = arow_noise_curves["CW-full"].mean(axis=0)
    # AROW stays far below CW along the whole curve from 500 examples on (measured ratios
    # 0.33, 0.24, 0.16, 0.14, 0.10) ...
    assert (arow[1:] < 0.5 * cw[1:]).all(), (arow, cw)
    # ... and keeps learning through the noise (2.3% at 5000 vs 7.6% at 500), which CW does not
    # (22.3% vs 22.7%).
    assert arow[-1] < 0.5 * arow[1]
    assert cw[-1] > 0.6 * cw[1]


def test_arow_noise_full_vs_diag(arow_noise_curves):
    final = {key: c[:, -1].mean() for key, c in arow_noise_curves.items()}
    # "the full version outperforms the diagonal version" (measured 2.3% vs 19.8%)
    assert final["AROW-full"] < 0.5 * final["AROW-diag"]
    # "CW-full performs worse than CW-diagonal" (measured 22.3% vs 18.1%; standard errors of the
    # two means ~0.7% and ~0.6%)
    assert final["CW-full"] > final["CW-diag"]
