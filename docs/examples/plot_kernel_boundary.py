"""
A kernel decision boundary
==========================

Two interleaved half-moons, which no line separates. AROW in the dual (kernel) form with an RBF
kernel learns a curved boundary in one pass; the linear AROW beside it cannot. The colour is
each model's score μ·x; the black line is the boundary (score 0).
"""

import matplotlib.pyplot as plt
import numpy as np

import cwrs

rng = np.random.default_rng(0)
n = 600
angle = rng.uniform(0, np.pi, size=n)
upper = rng.uniform(size=n) < 0.5
X = np.where(
    upper[:, None],
    np.c_[np.cos(angle), np.sin(angle)],
    np.c_[1 - np.cos(angle), 0.5 - np.sin(angle)],
) + 0.1 * rng.normal(size=(n, 2))
y = upper.astype(int)

grid = np.stack(np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 150)), -1)
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, (name, model) in zip(axes, [("AROW, linear", cwrs.AROW(random_state=0)),
                                    ("AROW, RBF kernel", cwrs.AROW(kernel="rbf", gamma=2.0,
                                                                   random_state=0))]):
    model.fit(X, y)
    scores = model.decision_function(grid.reshape(-1, 2)).reshape(grid.shape[:2])
    ax.contourf(grid[..., 0], grid[..., 1], scores, levels=20, cmap="RdBu_r", alpha=0.6)
    ax.contour(grid[..., 0], grid[..., 1], scores, levels=[0.0], colors="black")
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu_r", s=8, edgecolors="none")
    ax.set_title(f"{name}: training accuracy {model.score(X, y):.2f}")
plt.show()
