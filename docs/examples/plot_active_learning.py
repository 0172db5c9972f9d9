"""
Active learning: accuracy against the labels used
=================================================

`cwrs.SelectiveSampler` asks for the label of a row only when the model is unsure of it, and
learns only the rows it asked for. Here each strategy sweeps its parameter on the bundled
svmguide3 (standardized, 900 training rows, 343 held out), and the held-out accuracy of AROW is
drawn against the fraction of the training labels it asked for, the mean over ten orders of the
stream. The dashed curve is passive learning with the same number of labels: AROW on the first
rows of the stream. "margin" (ask when the row's normalized margin is small) reaches the
accuracy of every label (the gray line) with a fifth of them. Here "bbq", which asks for rows in directions the
model has seen little of whatever their margin, and "random", which learns its asked rows with
weights 1/p (unbiased, at the price of noisier steps), do no better than the passive curve.
"""

import matplotlib.pyplot as plt
import numpy as np

import cwrs

X, y = cwrs.datasets.load_svmguide3()
n_train, n_orders = 900, 10
sweeps = {
    "margin": ("threshold", [0.1, 0.25, 0.5, 1.0, 2.0]),
    "bbq": ("kappa", [0.2, 0.3, 0.4, 0.5]),
    "random": ("b", [0.1, 0.3, 1.0, 3.0]),
}
orders = [np.random.default_rng(seed).permutation(len(y)) for seed in range(n_orders)]


def split(order):
    train, test = order[:n_train], order[n_train:]
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    return (X[train] - mean) / std, y[train], (X[test] - mean) / std, y[test]


curves = {}
for strategy, (param, values) in sweeps.items():
    points = []
    for value in values:
        used, accuracy = [], []
        for seed, order in enumerate(orders):
            X_train, y_train, X_test, y_test = split(order)
            sampler = cwrs.SelectiveSampler(
                cwrs.AROW(), strategy, random_state=seed, **{param: value}
            ).fit(X_train, y_train)
            used.append(sampler.n_queried_ / n_train)
            accuracy.append(sampler.score(X_test, y_test))
        points.append((np.mean(used), np.mean(accuracy)))
    curves[strategy] = sorted(points)

fractions = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0]
passive = []
for fraction in fractions:
    n = int(fraction * n_train)
    accuracy = []
    for order in orders:
        X_train, y_train, X_test, y_test = split(order)
        model = cwrs.AROW(shuffle=False).fit(X_train[:n], y_train[:n])
        accuracy.append(model.score(X_test, y_test))
    passive.append(np.mean(accuracy))

fig, ax = plt.subplots(figsize=(7, 4))
for strategy, points in curves.items():
    ax.plot(*zip(*points), marker="o", label=strategy)
ax.plot(fractions, passive, "k--", label="first rows (passive)")
ax.axhline(passive[-1], color="gray", linewidth=0.8)
ax.set_xlabel("fraction of the training labels used")
ax.set_ylabel("held-out accuracy (AROW)")
ax.legend()
plt.show()
