"""The PyPI peers of cwrs used by the benchmark scripts (compare.py, imbalanced.py), each
imported optionally, and the machine they run on (`cpu_model`).

Every peer is wrapped in a few small functions so that compare.py reads the same for all of
them. A peer that is not installed leaves its module attribute at None; `versions()` then
reports it as "not installed" and compare.py marks its rows so.
"""

from __future__ import annotations

import platform
import warnings
from pathlib import Path

import numpy as np

try:
    import sklearn
    from sklearn.datasets import load_svmlight_file
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier
except ImportError:  # pragma: no cover - depends on the environment
    sklearn = None

try:
    import vowpalwabbit
except ImportError:  # pragma: no cover
    vowpalwabbit = None

try:
    import river
    import river.linear_model
except ImportError:  # pragma: no cover
    river = None


def cpu_model():
    """The CPU's model name, as the results files record it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def versions():
    """{name: version or "not installed"} of the peers."""
    peers = {"sklearn": sklearn, "vowpalwabbit": vowpalwabbit, "river": river}
    return {name: module.__version__ if module is not None else "not installed"
            for name, module in peers.items()}


# --------------------------------------------------------------------------------- scikit-learn
def _sgd_has_pa1():
    """scikit-learn >= 1.8 offers PA-I as an SGDClassifier learning rate and deprecates
    PassiveAggressiveClassifier (removed in 1.10)."""
    constraints = getattr(SGDClassifier, "_parameter_constraints", {}).get("learning_rate", [])
    return any("pa1" in getattr(constraint, "options", ()) for constraint in constraints)


def sklearn_pa1_api():
    """The scikit-learn spelling of PA-I used here, for the report."""
    if sklearn is None:
        return "not installed"
    if _sgd_has_pa1():
        return "SGDClassifier(loss='hinge', penalty=None, learning_rate='pa1', eta0=C)"
    return "PassiveAggressiveClassifier(C=C, loss='hinge')"


def sklearn_pa1(C=1.0, **overrides):
    """PA-I with the hinge loss, one pass in order, no averaging: scikit-learn's online PA.
    `overrides` replace those settings or add others (e.g. max_iter, class_weight)."""
    common = dict(fit_intercept=True, max_iter=1, tol=None, shuffle=False, average=False)
    common.update(overrides)
    if _sgd_has_pa1():
        return SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=C, **common)
    from sklearn.linear_model import PassiveAggressiveClassifier

    return PassiveAggressiveClassifier(C=C, loss="hinge", **common)


def sklearn_fit(estimator, X, y):
    """`fit` without the ConvergenceWarning that max_iter=1 always raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y)


def load_svmlight(path, n_features):
    """`load_svmlight_file` with the CSR index arrays narrowed to int32: scikit-learn 1.9
    loads int64 indices, which its own SGDClassifier then refuses ("Only sparse matrices
    with 32-bit integer indices are accepted")."""
    X, y = load_svmlight_file(path, n_features=n_features)
    if X.indices.dtype != np.int32:
        X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X, y


# --------------------------------------------------------------------------------- Vowpal Wabbit
# Hinge loss (the loss of PA and AROW), 2^20 weights, with the constant feature, one pass, no
# cache unless asked; --binary makes VW's progressive loss the 0/1 (mistake) rate.
VW_ARGS = ["--loss_function", "hinge", "-b", "20", "--binary", "--quiet"]


def vw_train_file(path, cache_file=None):
    """One VW pass over a VW-format text file (or over `cache_file` if it exists already).

    Returns the workspace, still open (the caller predicts with it, then calls `finish()`)."""
    args = [*VW_ARGS, "--data", str(path)]
    if cache_file is not None:
        args += ["--cache_file", str(cache_file)]
    return vowpalwabbit.Workspace(arg_list=args)


def vw_make_cache(path, cache_file):
    """Writes VW's binary cache of a text file (the first run with --cache_file, -k to
    overwrite a stale one)."""
    vowpalwabbit.Workspace(arg_list=[*VW_ARGS, "-k", "--data", str(path), "--cache_file",
                                     str(cache_file)]).finish()


def vw_online_error(workspace):
    """VW's progressive-validation loss: with --binary, the fraction of mistakes."""
    return workspace.get_sum_loss() / max(workspace.get_weighted_examples(), 1.0)


def vw_new():
    """An empty VW learner (for example-at-a-time `learn`)."""
    return vowpalwabbit.Workspace(arg_list=VW_ARGS)


# --------------------------------------------------------------------------------- river
def river_pa1(C=1.0):
    """river's PA-I (mode=1) with an intercept; learns one dict {feature: value} at a time."""
    return river.linear_model.PAClassifier(C=C, mode=1, learn_intercept=True)
