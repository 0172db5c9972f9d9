"""
L1 sparsity against accuracy
============================

A wide sparse stream: 2^14 binary features, of which 64 carry the label. Each row holds 40
features drawn at random from all of them (noise) and 5 drawn from the relevant ones; the label
is the sign of a sparse linear separator over the relevant ones, and 10% of the training labels
are flipped. AROW (diagonal covariance) learns a weight for every feature it sees, noise
included. With `penalty="l1"` every weight is soft-thresholded after each update by η_t·α·Σ_jj
(the coordinate-dependent FOBOS step: confident weights shrink less), with `"l1-uniform"` by
η_t·α (the truncated gradient of Langford, Li & Zhang, JMLR 2009). The figure sweeps the
strength α over a log grid and shows the held-out accuracy against the share of non-zero
weights at the end of one pass. A moderate penalty removes most of the noise weights and is
more accurate than no penalty; too strong a penalty shrinks the relevant weights to almost
nothing as well, and the model falls back on its bias (the majority class).
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp

import cwrs

n_features, n_relevant, n_train, n_test = 2**14, 64, 20_000, 5000
rng = np.random.default_rng(0)
relevant = rng.choice(n_features, size=n_relevant, replace=False)
w = np.zeros(n_features)
w[relevant] = rng.normal(size=n_relevant)

n = n_train + n_test
columns = np.concatenate([rng.integers(0, n_features, size=(n, 40)),
                          relevant[rng.integers(0, n_relevant, size=(n, 5))]], axis=1)
X = sp.csr_matrix((np.ones(columns.size), columns.ravel(), np.arange(0, columns.size + 1, 45)),
                  shape=(n, n_features))
X.sum_duplicates()
X.data[:] = 1.0  # binary features, each row scaled to unit norm
X = sp.diags(1.0 / np.sqrt(np.diff(X.indptr))) @ X
clean = np.where(X @ w > 0, 1, -1)
y = np.where(rng.uniform(size=n) < 0.1, -clean, clean)
X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], clean[n_train:]


# %%
# One pass in the stream's order per (penalty, α); the accuracy is on held-out rows with clean
# labels.

def one_pass(**params):
    model = cwrs.AROW(covariance="diag", shuffle=False, **params).fit(X_train, y_train)
    relevant_kept = np.count_nonzero(model.coef_[0, relevant])
    return 1.0 - model.sparsity_, model.score(X_test, y_test), relevant_kept


def report(name, nonzero, accuracy, relevant_kept):
    print(f"{name:21s} non-zero {nonzero:.4f}  relevant kept {relevant_kept:2d}/{n_relevant}  "
          f"accuracy {accuracy:.3f}")


alphas = 10.0 ** np.arange(-5.0, -0.75, 0.25)
unpenalized = one_pass()
report("no penalty", *unpenalized)
curves = {}
for penalty in ["l1", "l1-uniform"]:
    curves[penalty] = [one_pass(penalty=penalty, alpha=alpha) for alpha in alphas]
    for alpha, result in zip(alphas, curves[penalty]):
        report(f"{penalty} α={alpha:.1e}", *result)

# %%
# The noise weights still non-zero after the pass are mostly those of features seen in its
# last few hundred rows: an update has made them non-zero and the penalty of the rows since has
# not yet brought them back to 0. Under a strong penalty many relevant weights are non-zero too,
# but tiny: the penalty takes back most of each step. (A model left with no non-zero weight
# would have no place on the logarithmic axis and is left out of the figure.)

fig, ax = plt.subplots(figsize=(7, 4))
for penalty, points in curves.items():
    nonzero, accuracy, _ = np.array([p for p in points if p[0] > 0]).T
    ax.plot(nonzero, accuracy, marker="o", label=f'penalty="{penalty}"')
ax.plot(*unpenalized[:2], marker="*", markersize=14, color="black", linestyle="none",
        label="no penalty")
ax.axvline(n_relevant / n_features, color="grey", linestyle=":", label="share of relevant features")
ax.axhline(max(np.mean(y_test == 1), np.mean(y_test == -1)), color="grey", linestyle="--",
           label="majority class")
ax.set_xscale("log")
ax.set_xlabel("share of non-zero weights after one pass")
ax.set_ylabel("held-out accuracy")
ax.legend()
fig.tight_layout()
plt.show()
