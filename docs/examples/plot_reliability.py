"""
Reliability of predict_proba
============================

A reliability diagram sorts held-out rows into ten equal-width bins of predicted probability
and plots the share of positives in each bin against the mean prediction there: a calibrated
model lies on the diagonal (here each marker's area is its bin's share of the rows). For the
second-order learners, `predict_proba` is the Gaussian-margin probability Φ(μ·x / √(xᵀΣx)), the
chance that a weight vector drawn from the model's posterior N(μ, Σ) puts the row on the
positive side. It measures how sure the model is of its weights, not how noisy the labels are:
as rows accumulate, Σ shrinks, xᵀΣx becomes small against the margin and the probability
saturates near 0 or 1, although svmguide3 (bundled with cwrs) is far from separable. The figure
shows AROW and SCW-I (diagonal covariance) on it, with scikit-learn's logistic regression for
contrast when scikit-learn is installed: the second-order learners put most rows in the
extreme bins, where the observed frequency is well away from 0 and 1. The printed expected
calibration error (ECE, the bins' gap weighted by their share of rows), Brier score and log
loss say the same in numbers.
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

models = {"AROW": cwrs.AROW(random_state=0), "SCW-I": cwrs.SCW1(random_state=0)}
try:
    from sklearn.linear_model import LogisticRegression
except ImportError:
    pass
else:
    models["logistic regression"] = LogisticRegression()

# %%
# Each model learns the 800 training rows (the cwrs learners in one seeded random order) and
# predicts the 443 held-out rows.

n_bins = 10
edges = np.linspace(0.0, 1.0, n_bins + 1)
fig, (ax_reliability, ax_counts) = plt.subplots(
    2, 1, figsize=(6, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
)
ax_reliability.plot([0, 1], [0, 1], color="grey", linestyle=":", label="calibrated")
for name, model in models.items():
    model.fit(X[train], y[train])
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
    extreme = np.mean((probability < 0.05) | (probability > 0.95))
    print(f"{name:20s} accuracy {model.score(X[test], y[test]):.3f}  ECE {ece:.3f}  "
          f"Brier {brier:.3f}  log loss {log_loss:.3f}  "
          f"share below 0.05 or above 0.95 {extreme:.2f}")
    (line,) = ax_reliability.plot(mean_predicted, observed, linewidth=1,
                                  label=f"{name} (ECE {ece:.3f})")
    # A marker's area is its bin's share of the rows: the few rows of the middle bins are noisy.
    ax_reliability.scatter(mean_predicted, observed, s=600 * share, color=line.get_color(),
                           alpha=0.7)
    ax_counts.hist(probability, bins=edges, histtype="step", linewidth=1.5)
ax_reliability.set_ylabel("observed share of positives")
ax_reliability.legend()
ax_counts.set_yscale("log")
ax_counts.set_xlabel("predicted probability of the positive class (above: mean of each bin)")
ax_counts.set_ylabel("held-out rows")
fig.tight_layout()
plt.show()
