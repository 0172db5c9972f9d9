"""
Reliability of predict_proba
============================

A reliability diagram sorts held-out rows into ten equal-width bins of predicted probability
and plots the share of positives in each bin against the mean prediction there: a calibrated
model lies on the diagonal (here each marker's area is its bin's share of the rows). A
second-order learner has two probabilities. `predict_posterior_proba` is Φ(μ·x / √(xᵀΣx)), the
chance that a weight vector drawn from the model's posterior N(μ, Σ) puts the row on the
positive side: it measures how sure the model is of its weights, not how noisy the labels are,
so as rows accumulate Σ shrinks and it saturates near 0 or 1, although svmguide3 (bundled with
cwrs) is far from separable. `predict_proba` is the predictive Φ(μ·x / √(xᵀΣx + s²)), which adds
the label noise s² the model learned from its own margins (`noise_variance_`). The figure shows
AROW's two on svmguide3, with scikit-learn's logistic regression for contrast when
scikit-learn is installed. The printed expected calibration error (ECE, the bins' gap weighted
by their share of rows), Brier score and log loss say the same in numbers.
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

arow = cwrs.AROW(random_state=0)
models = {
    "AROW predict_proba": (arow, arow.predict_proba),
    "AROW predict_posterior_proba": (arow, arow.predict_posterior_proba),
}
try:
    from sklearn.linear_model import LogisticRegression
except ImportError:
    pass
else:
    logistic = LogisticRegression()
    models["logistic regression"] = (logistic, logistic.predict_proba)

# %%
# Each model learns the 800 training rows (AROW in one seeded random order) and predicts the
# 443 held-out rows.

n_bins = 10
edges = np.linspace(0.0, 1.0, n_bins + 1)
fig, (ax_reliability, ax_counts) = plt.subplots(
    2, 1, figsize=(6, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1]}
)
ax_reliability.plot([0, 1], [0, 1], color="grey", linestyle=":", label="calibrated")
for name, (model, predict_proba) in models.items():
    model.fit(X[train], y[train])
    probability = predict_proba(X[test])[:, 1]
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
    print(f"{name:29s} accuracy {model.score(X[test], y[test]):.3f}  ECE {ece:.3f}  "
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
