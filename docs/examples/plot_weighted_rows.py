"""
Class weights on an imbalanced stream
=====================================

A stream with about 2% positives, learned in chunks by AROW without weights, with
``class_weight="balanced"`` (the running class counts), and from a tenth of the negatives
weighted 10. The figure shows each model's scores on new rows: without weights the positives
fall on the negative side of 0; the balanced models move the threshold.
"""

import matplotlib.pyplot as plt
import numpy as np

import cwrs

rng = np.random.default_rng(0)
X = rng.normal(size=(40_000, 10))
y = (X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=40_000) > 2.9).astype(int)
X_train, y_train, X_test, y_test = X[:30_000], y[:30_000], X[30_000:], y[30_000:]

plain = cwrs.AROW().fit(X_train, y_train)
balanced = cwrs.AROW(class_weight="balanced")
for chunk in np.array_split(np.arange(30_000), 30):
    balanced.partial_fit(X_train[chunk], y_train[chunk], classes=[0, 1])
kept = (y_train == 1) | (rng.uniform(size=30_000) < 0.1)
subsampled = cwrs.AROW(class_weight="balanced").fit(
    X_train[kept], y_train[kept], sample_weight=np.where(y_train[kept] == 1, 1.0, 10.0)
)

fig, axes = plt.subplots(1, 3, figsize=(10, 3.5), sharey=True)
for ax, (name, model) in zip(axes, [("no weights", plain), ("balanced", balanced),
                                    ("subsampled, balanced", subsampled)]):
    scores = model.decision_function(X_test)
    ax.hist(scores[y_test == 0], bins=50, alpha=0.6, density=True, label="negatives")
    ax.hist(scores[y_test == 1], bins=50, alpha=0.6, density=True, label="positives")
    ax.axvline(0.0, color="black", linewidth=1)
    recall = np.mean(scores[y_test == 1] > 0)
    ax.set_title(f"{name}\nrecall of positives {recall:.2f}")
    ax.set_xlabel("μ·x")
axes[0].legend()
plt.show()
