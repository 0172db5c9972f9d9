"""
AROW against CW under label noise
=================================

The AROW paper's synthetic experiment (Crammer, Kulesza & Dredze, NIPS 2009, §6): rows of a
linear separator with a share of their labels flipped. CW satisfies a hard confidence
constraint on every row, noisy ones included, and its updates chase the noise; AROW's
regularised step degrades gracefully. The figure shows the test accuracy after one pass against
the noise level, mean over five seeds.
"""

import matplotlib.pyplot as plt
import numpy as np

import cwrs

noise_levels = [0.0, 0.05, 0.1, 0.2, 0.3]
results = {name: [] for name in ["CW", "AROW", "PA1"]}
for noise in noise_levels:
    scores = {name: [] for name in results}
    for seed in range(5):
        rng = np.random.default_rng(seed)
        w = rng.normal(size=20)
        X = rng.normal(size=(4000, 20))
        y = np.where(X @ w > 0, 1, -1)
        flip = rng.uniform(size=3000) < noise
        y_train = np.where(flip, -y[:3000], y[:3000])
        for name in results:
            model = getattr(cwrs, name)(shuffle=False).fit(X[:3000], y_train)
            scores[name].append(model.score(X[3000:], y[3000:]))
    for name in results:
        results[name].append(np.mean(scores[name]))

fig, ax = plt.subplots(figsize=(7, 4))
for name, accuracy in results.items():
    ax.plot(noise_levels, accuracy, marker="o", label=name)
ax.set_xlabel("share of training labels flipped")
ax.set_ylabel("test accuracy")
ax.legend()
plt.show()
