"""Contextual bandits: progressive loss and rounds per second of `cwrs.bandit.ContextualBandit`
(Thompson sampling and UCB over `AROWRegressor` with the diagonal and the full covariance)
against Vowpal Wabbit's `--cb_explore_adf` and river's `bandit.LinUCBDisjoint`, all in the same
run. Prints markdown tables for benchmarks/RESULTS.md.

Protocol (the multiclass-to-bandit reduction of Bietti, Agarwal & Langford, "A contextual
bandit bake-off", JMLR 2021): each class is an action, each row a round; the policy picks an
action from the row's context, and only the reward of that action is revealed: 1 when it is
the row's label (loss 0), else 0 (loss 1). One pass over the rows in a random order (shuffle
seeds 0 to `--shuffles` − 1, 10 by default as in the bake-off; `--quick`: 0 alone; the same
orders for every method). Every method runs on one
core: the BLAS threads of NumPy are limited to one (`OPENBLAS_NUM_THREADS=1` and its kin, set
before NumPy loads), as Vowpal Wabbit and river use one. The figure is the
progressive loss (the mean loss over every round, learning as it goes), the mean over the
shuffles (± their standard deviation), and rounds per second (choose + learn, the mean over
the shuffles).

Methods, each over a small grid of its exploration or learning-rate parameter (the best point
of each method's grid is chosen on the same data, as the bake-off's optimistic tuning, which
favours every method alike):

- cwrs: `ContextualBandit(AROWRegressor(covariance=form), policy, alpha=α, random_state=seed)`
  for policy "thompson" and "ucb", form "diag" and "full", α in ALPHAS[policy] (`--quick`: one
  point; the grids were chosen from a first look at shuffle 0 of the data sets, the diagonal
  form: Thompson sampling is best at α 0.03–0.1, UCB at 0.1–1). The
  actions are `cwrs.bandit.action_rows(x, K)`: the context with a constant 1 crossed with a
  one-hot of the action, a linear model per action; the reward learned is 0/1 (regression).
- Vowpal Wabbit (`vowpalwabbit` package): `--cb_explore_adf -q sa` with `--epsilon 0.05`,
  `--squarecb`, `--bag 5`, `--cover 5` and `--regcb` (`--quiet --random_seed seed`), learning
  rate `-l` in LEARNING_RATES; shared features `shared |s f0:v0 ...`, one line `|a aK` per
  action (its identifier crossed with the context by `-q sa`); the action is drawn from the
  returned pmf with a NumPy generator seeded by the shuffle seed, and learned with label
  `0:loss:probability`.
- river: `bandit.LinUCBDisjoint(alpha, seed)`, one Bayesian linear regression per arm, on the
  context as a dict; `pull` then `update(arm, context, reward)`.

Data: iris (150 rows × 4, 3 classes), wine (178 × 13, 3), digits (1,797 × 64, 10), all from
scikit-learn, and river's bundled ImageSegments (2,310 × 18, 7; when river is installed),
standardized with the whole set's mean and standard deviation; a synthetic stream
of 2,000 rounds (`--quick`: 1,000), context x ~ N(0, I₁₀), label argmax_k (W x)_k + 0.5·ε_k with
W ~ N(0, 1) of shape 5 × 10 and ε ~ N(0, 1) (seed 0).

    python benchmarks/bandit.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one core per method, set before NumPy loads

import numpy as np  # noqa: E402

import cwrs  # noqa: E402
from cwrs.bandit import ContextualBandit, action_rows  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _peers import cpu_model  # noqa: E402

try:
    import vowpalwabbit
except ImportError:  # pragma: no cover
    vowpalwabbit = None
try:
    import river
    from river import bandit as river_bandit
except ImportError:  # pragma: no cover
    river = None

ALPHAS = {"thompson": (0.03, 0.1), "ucb": (0.1, 0.3, 1.0)}
QUICK_ALPHAS = {"thompson": (0.1,), "ucb": (0.3,)}
LEARNING_RATES = (0.1, 0.5, 2.0)
QUICK_LEARNING_RATES = (0.5,)
VW_ALGORITHMS = {
    "epsilon": ["--epsilon", "0.05"],
    "squarecb": ["--squarecb"],
    "bag": ["--bag", "5"],
    "cover": ["--cover", "5"],
    "regcb": ["--regcb"],
}


def datasets(quick):
    from sklearn.datasets import load_digits, load_iris, load_wine

    out = {}
    sets = [(name, loader(return_X_y=True)) for name, loader in
            (("iris", load_iris), ("wine", load_wine), ("digits", load_digits))]
    if river is not None:
        from river import datasets as river_datasets

        rows = list(river_datasets.ImageSegments())
        names = sorted(rows[0][0])
        sets.append(("ImageSegments", (np.array([[x[k] for k in names] for x, _ in rows]),
                                       np.unique([label for _, label in rows],
                                                 return_inverse=True)[1])))
    for name, (X, y) in sets:
        out[name] = ((X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0), y)
    rng = np.random.default_rng(0)
    n = 1000 if quick else 2000
    X = rng.normal(size=(n, 10))
    W = rng.normal(size=(5, 10))
    out["synthetic"] = (X, np.argmax(X @ W.T + 0.5 * rng.normal(size=(n, 5)), axis=1))
    return out


def run_cwrs(X, y, order, seed, form, policy, alpha):
    _, codes = np.unique(y, return_inverse=True)
    k = int(codes.max()) + 1
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance=form), policy, alpha=alpha,
                              random_state=seed)
    losses = 0.0
    start = time.perf_counter()
    for i in order:
        actions = action_rows(X[i], k)
        index, _ = bandit.choose(actions)
        reward = float(index == codes[i])
        bandit.update(actions, index, reward)
        losses += 1.0 - reward
    return losses / len(order), len(order) / (time.perf_counter() - start)


def run_vw(X, y, order, seed, algorithm, rate):
    _, codes = np.unique(y, return_inverse=True)
    k = int(codes.max()) + 1
    workspace = vowpalwabbit.Workspace(arg_list=[
        "--cb_explore_adf", "-q", "sa", *VW_ALGORITHMS[algorithm], "-l", str(rate),
        "--quiet", "--random_seed", str(seed),
    ])
    rng = np.random.default_rng(seed)
    action_lines = [f"|a a{a}" for a in range(k)]
    losses = 0.0
    start = time.perf_counter()
    for i in order:
        shared = "shared |s " + " ".join(f"f{j}:{v:.9g}" for j, v in enumerate(X[i]) if v)
        example = [shared, *action_lines]
        pmf = np.asarray(workspace.predict(example), dtype=np.float64)
        pmf /= pmf.sum()
        action = int(rng.choice(k, p=pmf))
        loss = float(action != codes[i])
        example[1 + action] = f"0:{loss}:{pmf[action]:.9g} {action_lines[action]}"
        workspace.learn(example)
        losses += loss
    elapsed = time.perf_counter() - start
    workspace.finish()
    return losses / len(order), len(order) / elapsed


def run_river(X, y, order, seed, alpha):
    _, codes = np.unique(y, return_inverse=True)
    arms = list(range(int(codes.max()) + 1))
    policy = river_bandit.LinUCBDisjoint(alpha=alpha, seed=seed)
    losses = 0.0
    start = time.perf_counter()
    for i in order:
        context = {f"f{j}": float(v) for j, v in enumerate(X[i])}
        arm = policy.pull(arms, context=context)
        reward = float(arm == codes[i])
        policy.update(arm, context, reward)
        losses += 1.0 - reward
    return losses / len(order), len(order) / (time.perf_counter() - start)


def methods(quick):
    """(family, parameter label, runner) of every method point."""
    alphas = QUICK_ALPHAS if quick else ALPHAS
    rates = QUICK_LEARNING_RATES if quick else LEARNING_RATES
    out = []
    for form in ("diag", "full"):
        for policy in ("thompson", "ucb"):
            for alpha in alphas[policy]:
                out.append((f"cwrs {policy} {form}", f"α={alpha:g}",
                            lambda X, y, o, s, f=form, p=policy, a=alpha:
                            run_cwrs(X, y, o, s, f, p, a)))
    if vowpalwabbit is not None:
        for algorithm in VW_ALGORITHMS:
            for rate in rates:
                out.append((f"VW {algorithm}", f"-l {rate:g}",
                            lambda X, y, o, s, g=algorithm, r=rate: run_vw(X, y, o, s, g, r)))
    if river is not None:
        out.append(("river LinUCBDisjoint", "alpha=1",
                    lambda X, y, o, s: run_river(X, y, o, s, 1.0)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one shuffle, one parameter each")
    parser.add_argument("--shuffles", type=int, default=10, help="orders of each data set")
    args = parser.parse_args()
    seeds = [0] if args.quick else list(range(args.shuffles))
    began = time.perf_counter()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · {cpu_model()} · cwrs "
          f"{cwrs.__version__} · vowpalwabbit "
          f"{getattr(vowpalwabbit, '__version__', 'not installed')} · river "
          f"{getattr(river, '__version__', 'not installed')} · shuffles {seeds}"
          + (" · --quick" if args.quick else ""))
    best: dict[str, dict[str, tuple[float, float, str, float]]] = {}
    for name, (X, y) in datasets(args.quick).items():
        print(f"\n### {name} ({X.shape[0]} rounds, {X.shape[1]} features, "
              f"{np.unique(y).size} actions)\n")
        print("| method | parameter | progressive loss | rounds/s |")
        print("|---|---|---:|---:|")
        orders = [np.random.default_rng(seed).permutation(X.shape[0]) for seed in seeds]
        for family, label, runner in methods(args.quick):
            results = [runner(X, y, order, seed) for seed, order in zip(seeds, orders)]
            losses = np.array([loss for loss, _ in results])
            speed = float(np.mean([rate for _, rate in results]))
            print(f"| {family} | {label} | {losses.mean():.4f} ± {losses.std():.4f} | "
                  f"{speed:,.0f} |", flush=True)
            kept = best.setdefault(name, {}).get(family)
            if kept is None or losses.mean() < kept[0]:
                best[name][family] = (float(losses.mean()), float(losses.std()), label, speed)
    print("\n### Summary: each method at the best point of its grid\n")
    names = list(best)
    families = list(best[names[0]])
    print("| method | " + " | ".join(names) + " | mean rank | wins |")
    print("|---|" + "---:|" * len(names) + "---:|---:|")
    ranks = {family: [] for family in families}
    wins = dict.fromkeys(families, 0)
    for name in names:
        ordered = sorted(families, key=lambda f: best[name][f][0])
        for position, family in enumerate(ordered, 1):
            ranks[family].append(position)
        wins[ordered[0]] += 1
    for family in families:
        cells = [f"{best[name][family][0]:.4f} ({best[name][family][3]:,.0f}/s)"
                 for name in names]
        print(f"| {family} | " + " | ".join(cells)
              + f" | {np.mean(ranks[family]):.2f} | {wins[family]} |")
    print(f"\nTotal time: {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
