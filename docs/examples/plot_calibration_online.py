"""
Calibrating a stream online
===========================

`cwrs.CalibratedClassifier` wraps a cwrs classifier and learns, as the rows arrive, a map from
the classifier's scores to probabilities. Each row's score is taken just before the classifier
learns the row (`partial_fit(..., return_scores=True)`), so the map is fitted to the scores the
model gives rows it has not seen, which are the rows it will be asked about. No held-out set and
no second pass are needed.

AROW's own `predict_proba`, Φ(μ·x / √(xᵀΣx)), measures how sure the model is of its weights,
not how noisy the labels are: on svmguide3 (bundled with cwrs, far from separable) it saturates
near 0 and 1. The reliability diagram below sorts held-out rows into ten equal-width bins of
predicted probability and plots the share of positives in each bin against the mean prediction
there (a marker's area is its bin's share of the rows): the calibrated learners lie close to the
diagonal. The printed expected calibration error (ECE), Brier score and log loss say the same.
"""

import matplotlib.pyplot as plt
import numpy as np

import cwrs
from cwrs.datasets import load_svmguide3

X, y = load_svmguide3()
order = np.random.default_rng(0).permutation(len(y))  # the file is sorted by label
train, test = order[:800], order[800:]
mean, std = X[train].mean(axis=0), X[train].std(axis=0)
std[std == 0] = 1.0
X = (X - mean) / std  # standardised with the training rows' statistics

models = {
    "AROW predict_proba": cwrs.AROW(),
    "calibrated, Platt": cwrs.CalibratedClassifier(cwrs.AROW(), method="platt"),
    "calibrated, isotonic": cwrs.CalibratedClassifier(cwrs.AROW(), method="isotonic"),
}

# %%
# Each model learns the 800 training rows once, in the same order, as a stream (one
# `partial_fit` call here; chunk by chunk gives the same model and map), then predicts the 443
# held-out rows. The three share the same AROW model: only the probabilities differ.

n_bins = 10
edges = np.linspace(0.0, 1.0, n_bins + 1)
fig, (ax_reliability, ax_counts) = plt.subplots(
    2, 1, figsize=(6, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
)
ax_reliability.plot([0, 1], [0, 1], color="grey", linestyle=":", label="calibrated")
for name, model in models.items():
    model.partial_fit(X[train], y[train], classes=np.unique(y))
    probability = model.predict_proba(X[test])[:, 1]
    positive = (y[test] == model.classes_[1]).astype(float)
    bins = np.clip(np.digitize(probability, edges) - 1, 0, n_bins - 1)
    occupied = [b for b in range(n_bins) if np.any(bins == b)]
    mean_predicted = np.array([probability[bins == b].mean() for b in occupied])
    observed = np.array([positive[bins == b].mean() for b in occupied])
    share = np.array([np.mean(bins == b) for b in occupied])
    ece = np.sum(share * np.abs(mean_predicted - observed))
    brier = np.mean((probability - positive) ** 2)
    clipped = np.clip(probability, 1e-15, 1 - 1e-15)
    log_loss = -np.mean(positive * np.log(clipped) + (1 - positive) * np.log(1 - clipped))
    print(f"{name:22s} accuracy {model.score(X[test], y[test]):.3f}  ECE {ece:.3f}  "
          f"Brier {brier:.3f}  log loss {log_loss:.3f}")
    (line,) = ax_reliability.plot(mean_predicted, observed, linewidth=1,
                                  label=f"{name} (ECE {ece:.3f})")
    ax_reliability.scatter(mean_predicted, observed, s=600 * share, color=line.get_color(),
                           alpha=0.7)
    ax_counts.hist(probability, bins=edges, histtype="step", linewidth=1.5)
ax_reliability.set_ylabel("observed share of positives")
ax_reliability.legend()
ax_counts.set_yscale("log")
ax_counts.set_xlabel("predicted probability of the positive class (above: mean of each bin)")
ax_counts.set_ylabel("held-out rows")
fig.tight_layout()

# %%
# The map itself is small and readable: Platt's σ(A·z + B) on AROW's variance-normalized
# margin z = μ·x / √(1 + xᵀΣx).

A, B = models["calibrated, Platt"].calibration_["coef"][0]
print(f"Platt map: A = {A:.3f}, B = {B:.3f}")
plt.show()
