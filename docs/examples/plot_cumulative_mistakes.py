"""
Cumulative mistakes on a real data set
======================================

Progressive validation on svmguide3 (bundled with cwrs; LIBOL's demo data set): each learner
predicts every row before it learns it, and the figure counts its mistakes as the stream goes.
The file stores its rows sorted by label, so the stream is a seeded random order of them, as in
LIBOL's experiments and `cwrs compare`. The second-order learners (AROW, SCW-I, CW) make fewer
mistakes than the first-order ones (the Perceptron, PA-I); the legend gives each count.
"""

import matplotlib.pyplot as plt
import numpy as np

import cwrs
from cwrs.datasets import load_svmguide3

X, y = load_svmguide3()
order = np.random.default_rng(0).permutation(len(y))
X, y = X[order], y[order]
fig, ax = plt.subplots(figsize=(7, 4))
for name in ["Perceptron", "PA1", "CW", "AROW", "SCW1"]:
    model = getattr(cwrs, name)()
    mistakes = np.zeros(len(y))
    model.partial_fit(X[:1], y[:1], classes=np.unique(y))
    for t in range(1, len(y)):
        mistakes[t] = mistakes[t - 1] + (model.predict(X[t : t + 1])[0] != y[t])
        model.partial_fit(X[t : t + 1], y[t : t + 1])
    ax.plot(mistakes, label=f"{name} ({int(mistakes[-1])})")
ax.set_xlabel("rows seen")
ax.set_ylabel("cumulative mistakes")
ax.set_title("svmguide3, one pass in a random order (seed 0)")
ax.legend()
plt.show()
