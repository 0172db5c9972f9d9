"""
Contextual bandits: progressive loss on digits
==============================================

`cwrs.bandit.ContextualBandit` chooses among actions from the uncertainty of a cwrs model. Here
the digits data set is turned into a bandit problem as in the contextual bandit bake-off: each
of the ten classes is an action, each image a round, and the reward is 1 only when the action
chosen is the image's label (the other classes' rewards are never revealed). The model is
`AROWRegressor(covariance="diag")` on the context crossed with a one-hot of the action (a
linear model per action). The curves are the progressive loss (the share of wrong actions so
far, learning as it goes) of Thompson sampling, UCB, ε-greedy and greedy, over one random order
of the images: exploring from the posterior (Thompson sampling, UCB) ends below playing the
best guess (greedy) and exploring at a fixed rate (ε-greedy).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits

import cwrs
from cwrs.bandit import ContextualBandit, simulate

X, y = load_digits(return_X_y=True)
X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)

policies = {
    "Thompson sampling (α = 0.1)": dict(policy="thompson", alpha=0.1),
    "UCB (α = 0.3)": dict(policy="ucb", alpha=0.3),
    "ε-greedy (ε = 0.05)": dict(policy="epsilon", epsilon=0.05),
    "greedy": dict(policy="greedy"),
}
fig, ax = plt.subplots(figsize=(7, 4))
for label, params in policies.items():
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance="diag"), random_state=0, **params)
    result = simulate(bandit, X, y, random_state=0)
    loss = 1 - result.progressive_reward
    ax.plot(np.arange(1, len(loss) + 1), loss, label=f"{label}: {loss[-1]:.3f}")
ax.set_xlabel("round")
ax.set_ylabel("progressive loss")
ax.set_ylim(0, 1)
ax.set_title("digits as a 10-action bandit (one order)")
ax.legend()
fig.tight_layout()
plt.show()
