"""
Tracking a drifting stream with process noise
=============================================

A regression target whose true weights change abruptly at row 1,500 and then drift slowly.
Recursive least squares (AROWRegressor) without process noise averages the whole past and is
slow to follow; a constant process noise q, or `process_noise="auto"` (a change detector that
resets the covariance), keeps the model's uncertainty open and tracks the change. The figure
shows the error of each model's first weight against the truth as the stream goes (a moving
average over 50 rows). The constant q also follows the slow drift, at the price of noisier
weights on a stationary stretch; "auto" resets on the change and otherwise stays put.
"""

import matplotlib.pyplot as plt
import numpy as np

import cwrs

rng = np.random.default_rng(1)
n, d = 3000, 5
truth = np.empty((n, d))
w = rng.normal(size=d)
for t in range(n):
    if t == 1500:
        w = rng.normal(size=d)  # an abrupt change
    w = w + 0.002 * rng.normal(size=d)  # and a slow drift
    truth[t] = w
X = rng.normal(size=(n, d))
y = np.einsum("ij,ij->i", X, truth) + 0.1 * rng.normal(size=n)

fig, ax = plt.subplots(figsize=(7, 4))
for label, params in [("no process noise", {}), ("q = 1e-3", {"process_noise": 1e-3}),
                      ('"auto"', {"process_noise": "auto"})]:
    model = cwrs.AROWRegressor(fit_intercept=False, **params)
    error = np.empty(n)
    for t in range(n):
        model.partial_fit(X[t : t + 1], y[t : t + 1])
        error[t] = abs(model.coef_[0] - truth[t, 0])
    smooth = np.convolve(error, np.ones(50) / 50, mode="valid")
    ax.plot(np.arange(49, n), smooth, label=label)
ax.axvline(1500, color="grey", linestyle=":")
ax.set_yscale("log")
ax.set_xlabel("rows seen")
ax.set_ylabel("|w₀ − true w₀|")
ax.legend()
plt.show()
