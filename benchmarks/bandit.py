"""Contextual bandits: progressive loss and rounds per second of `cwrs.bandit.ContextualBandit`
(Thompson sampling and UCB over `AROWRegressor` with the diagonal and the full covariance)
against Vowpal Wabbit's `--cb_explore_adf` and river's `bandit.LinUCBDisjoint`, all in the same
run. Prints the "Contextual bandits" section of benchmarks/RESULTS.md (markdown on stdout,
progress on stderr), so that a rerun is pasted as it is.

Loss (the multiclass-to-bandit reduction of Bietti, Agarwal & Langford, "A contextual bandit
bake-off", JMLR 2021): each class is an action, each row a round; the policy picks an action
from the row's context, and only the reward of that action is revealed: 1 when it is the row's
label (loss 0), else 0 (loss 1). One pass over the rows in a random order (shuffle seeds 0 to
`--shuffles` − 1, 10 by default as in the bake-off; `--quick`: 0 alone), the same orders for
every method: `cwrs.bandit.simulate(bandit, X, y, random_state=seed)` draws its order as
`numpy.random.default_rng(seed).permutation(n)`, which the other methods are given. The figure
is the progressive loss (the mean loss over every round, learning as it goes), the mean over
the shuffles (± their standard deviation), and rounds per second (choose + learn, the mean
over the shuffles). Every method runs on one core: the BLAS threads of NumPy are limited to one
(`OPENBLAS_NUM_THREADS=1` and its kin, set before NumPy loads), as Vowpal Wabbit and river use
one.

Grids, fixed before any result was seen (`--quick`: one point of each):

- cwrs: `ContextualBandit(AROWRegressor(covariance=form), policy, alpha=α, random_state=seed)`
  for policy "thompson" and "ucb", form "diag" and "full", α in ALPHAS (the same five for all
  four). The actions are `cwrs.bandit.action_rows(x, K)`: the context with a constant 1 crossed
  with a one-hot of the action, a linear model per action; the reward learned is 0/1.
- Vowpal Wabbit (`vowpalwabbit` package, in process): `--cb_explore_adf -q sa --quiet
  --random_seed seed` with each configuration of VW_ALGORITHMS (the bake-off's values of each
  algorithm's parameter, trimmed to fit the time: see VW_TRIMMED) and learning rate `-l` in
  LEARNING_RATES (the bake-off's BAKEOFF_LEARNING_RATES without its two smallest). Shared
  features `shared |s f0:v0 ...`, one line `|a aK` per action (its identifier crossed with the
  context by `-q sa`); the action is drawn from the returned pmf (normalized: `--regcbopt`
  reports 1 for each action tied at the best optimistic score) with a NumPy generator seeded
  by the shuffle seed, and learned with label `0:loss:probability`.
- river: `bandit.LinUCBDisjoint(alpha=α, seed=seed)` for α in ALPHAS, one Bayesian linear
  regression per arm, on the context as a dict; `pull` then `update(arm, context, reward)`.

The summary takes each method's best grid point on each data set (the bake-off's optimistic
tuning, alike for all) and, separately, each method at one setting chosen without the data set
(leave one data set out: the grid point of the best mean rank, within the method's grid, on
the other data sets).

Data: iris (150 rows × 4, 3 classes), wine (178 × 13, 3), digits (1,797 × 64, 10), all from
scikit-learn, and river's bundled ImageSegments (2,310 × 18, 7; when river is installed),
standardized with the whole set's mean and standard deviation; a synthetic stream of 2,000
rounds (`--quick`: 1,000), context x ~ N(0, I₁₀), label argmax_k (W x)_k + 0.5·ε_k with
W ~ N(0, 1) of shape 5 × 10 and ε ~ N(0, 1) (seed 0).

Throughput: rounds per second on a longer stream of the same kind (context x ~ N(0, I_d),
K = 10 actions, label argmax_k (W x)_k + 0.5·ε_k, seed 0), in its stored order, for
d = 20 (K·(d + 1) = 210 coordinates) and d = 100 (1,010), the median of THROUGHPUT_REPEATS
repeats; the rounds of each method are in THROUGHPUT_STREAMS. cwrs is timed twice: `simulate`
(the round loop inside the library) and a Python loop of `choose` + `update` per round (what a
live service calls). VW runs each algorithm at its first configuration and `-l 0.5` (VW's
default rate), river at α = 1.

    python benchmarks/bandit.py [--quick] [--part loss|throughput|all]
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
from cwrs.bandit import ContextualBandit, action_rows, simulate  # noqa: E402

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

ALPHAS = (0.01, 0.03, 0.1, 0.3, 1.0)
QUICK_ALPHAS = (0.1,)
BAKEOFF_LEARNING_RATES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
LEARNING_RATES = BAKEOFF_LEARNING_RATES[2:]
QUICK_LEARNING_RATES = (1.0,)
VW_DEFAULT_LEARNING_RATE = 0.5
# family: [(label, flags), ...]; the first configuration is the one of --quick and throughput.
VW_ALGORITHMS = {
    "epsilon": [("ε 0.05, mtr", ["--epsilon", "0.05", "--cb_type", "mtr"]),
                ("ε 0.05, dr", ["--epsilon", "0.05", "--cb_type", "dr"])],
    "bag": [("bag 4, mtr", ["--bag", "4", "--cb_type", "mtr"]),
            ("bag 4, dr", ["--bag", "4", "--cb_type", "dr"])],
    "cover": [("cover 4, mtr", ["--cover", "4", "--cb_type", "mtr"]),
              ("cover 4, dr", ["--cover", "4", "--cb_type", "dr"])],
    "squarecb": [("gamma_scale 10", ["--squarecb", "--gamma_scale", "10"]),
                 ("gamma_scale 1", ["--squarecb", "--gamma_scale", "1"]),
                 ("gamma_scale 100", ["--squarecb", "--gamma_scale", "100"])],
    "regcb": [("mellowness 0.1", ["--regcb", "--mellowness", "0.1"])],
    "regcbopt": [("mellowness 0.1", ["--regcbopt", "--mellowness", "0.1"])],
}
VW_TRIMMED = (
    "the two smallest learning rates, 0.001 and 0.003; `--cb_type ips`; ε 0, 0.02 and 0.1 and "
    "the active ε-greedy (`--nounifagree`); bag 2, 8 and 16 and `--greedify`; cover 1, 8 and "
    "16, its ψ other than VW's default (1) and `--nounif`; RegCB's mellowness 0.01 and 0.001"
)
THROUGHPUT_REPEATS = 3
# (d, K, rounds of the fast methods, {method group: fewer rounds}); groups: "full" (cwrs
# with the full covariance) and "river".
THROUGHPUT_STREAMS = (
    (20, 10, 20_000, {"river": 2_000}),
    (100, 10, 10_000, {"full": 500, "river": 1_000}),
)
QUICK_THROUGHPUT_DIVISOR = 10


def log(message):
    print(message, file=sys.stderr, flush=True)


def linear_stream(n, d, k, seed=0):
    """Contexts x ~ N(0, I_d), labels argmax_k (W x)_k + 0.5·ε_k, W ~ N(0, 1) of shape k × d."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(k, d))
    return X, np.argmax(X @ W.T + 0.5 * rng.normal(size=(n, k)), axis=1)


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
    out["synthetic"] = linear_stream(1000 if quick else 2000, 10, 5)
    return out


# ----------------------------------------------------------------------------- the runners
# Each runs one pass and returns (progressive loss, rounds per second); `seed` is the shuffle
# seed (None: the rows in their stored order).
def order_of(n, seed):
    return np.arange(n) if seed is None else np.random.default_rng(seed).permutation(n)


def run_cwrs(X, y, seed, form, policy, alpha):
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance=form), policy, alpha=alpha,
                              random_state=0 if seed is None else seed)
    start = time.perf_counter()
    result = simulate(bandit, X, y, random_state=seed)
    elapsed = time.perf_counter() - start
    return 1.0 - float(result.progressive_reward[-1]), len(y) / elapsed


def run_cwrs_loop(X, y, seed, form, policy, alpha):
    """The rounds as a live service plays them: `choose`, then `update` with the reward."""
    _, codes = np.unique(y, return_inverse=True)
    k = int(codes.max()) + 1
    bandit = ContextualBandit(cwrs.AROWRegressor(covariance=form), policy, alpha=alpha,
                              random_state=0 if seed is None else seed)
    losses = 0.0
    start = time.perf_counter()
    for i in order_of(len(y), seed):
        actions = action_rows(X[i], k)
        index, _ = bandit.choose(actions)
        reward = float(index == codes[i])
        bandit.update(actions, index, reward)
        losses += 1.0 - reward
    return losses / len(y), len(y) / (time.perf_counter() - start)


def run_vw(X, y, seed, flags, rate):
    _, codes = np.unique(y, return_inverse=True)
    k = int(codes.max()) + 1
    workspace = vowpalwabbit.Workspace(arg_list=[
        "--cb_explore_adf", "-q", "sa", *flags, "-l", str(rate),
        "--quiet", "--random_seed", str(0 if seed is None else seed),
    ])
    rng = np.random.default_rng(0 if seed is None else seed)
    action_lines = [f"|a a{a}" for a in range(k)]
    losses = 0.0
    start = time.perf_counter()
    for i in order_of(len(y), seed):
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
    return losses / len(y), len(y) / elapsed


def run_river(X, y, seed, alpha):
    _, codes = np.unique(y, return_inverse=True)
    arms = list(range(int(codes.max()) + 1))
    policy = river_bandit.LinUCBDisjoint(alpha=alpha, seed=0 if seed is None else seed)
    losses = 0.0
    start = time.perf_counter()
    for i in order_of(len(y), seed):
        context = {f"f{j}": float(v) for j, v in enumerate(X[i])}
        arm = policy.pull(arms, context=context)
        reward = float(arm == codes[i])
        policy.update(arm, context, reward)
        losses += 1.0 - reward
    return losses / len(y), len(y) / (time.perf_counter() - start)


CWRS_FAMILIES = [(f"cwrs {policy} {form}", form, policy)
                 for form in ("diag", "full") for policy in ("thompson", "ucb")]


def methods(quick):
    """(family, parameter label, runner(X, y, seed)) of every grid point."""
    alphas = QUICK_ALPHAS if quick else ALPHAS
    rates = QUICK_LEARNING_RATES if quick else LEARNING_RATES
    out = []
    for family, form, policy in CWRS_FAMILIES:
        for alpha in alphas:
            out.append((family, f"α={alpha:g}",
                        lambda X, y, s, f=form, p=policy, a=alpha: run_cwrs(X, y, s, f, p, a)))
    if vowpalwabbit is not None:
        for algorithm, configurations in VW_ALGORITHMS.items():
            for label, flags in configurations[:1] if quick else configurations:
                for rate in rates:
                    out.append((f"VW {algorithm}", f"{label}, -l {rate:g}",
                                lambda X, y, s, g=flags, r=rate: run_vw(X, y, s, g, r)))
    if river is not None:
        for alpha in alphas:
            out.append(("river LinUCBDisjoint", f"α={alpha:g}",
                        lambda X, y, s, a=alpha: run_river(X, y, s, a)))
    return out


# ----------------------------------------------------------------------------- summaries
def average_ranks(values):
    """Ranks 1..n of the values, smallest first, ties sharing their mean rank."""
    values = np.asarray(values, dtype=np.float64)
    ranks = np.empty(len(values))
    for position, index in enumerate(np.argsort(values, kind="stable")):
        ranks[index] = position + 1
    for value in np.unique(values):
        tied = values == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def leave_one_out_choice(points, names, held_out):
    """The grid label of a family with the best mean rank (within the family's grid) over the
    data sets other than `held_out`; `points[name][label]` is the mean loss. Ties go to the
    first label of the grid."""
    labels = list(points[names[0]])
    others = [name for name in names if name != held_out]
    ranks = np.array([average_ranks([points[name][label] for label in labels])
                      for name in others])
    return labels[int(np.argmin(ranks.mean(axis=0)))]


def ranking(chosen, names, families):
    """Mean rank over the data sets and wins (the lowest loss, ties all win) of each family,
    `chosen[name][family]` being its loss there."""
    ranks = {family: [] for family in families}
    wins = dict.fromkeys(families, 0)
    for name in names:
        losses = [chosen[name][family] for family in families]
        for family, rank in zip(families, average_ranks(losses)):
            ranks[family].append(rank)
        for family, loss in zip(families, losses):
            wins[family] += loss == min(losses)
    return {family: float(np.mean(ranks[family])) for family in families}, wins


def summary_table(title, chosen, labels, speeds, names, families):
    mean_ranks, wins = ranking(chosen, names, families)
    print(f"\n### {title}\n")
    print("| method | " + " | ".join(names) + " | mean rank | wins |")
    print("|---|" + "---:|" * len(names) + "---:|---:|")
    for family in families:
        cells = [f"{chosen[name][family]:.4f} ({labels[name][family]}; "
                 f"{speeds[name][family]:,.0f}/s)" for name in names]
        print(f"| {family} | " + " | ".join(cells)
              + f" | {mean_ranks[family]:.2f} | {wins[family]} |")
    return mean_ranks, wins


def describe_ranking(what, chosen, names, families, mean_ranks, wins):
    """One generated sentence: who wins where, and the mean ranks in order."""
    winners = []
    for name in names:
        best = min(chosen[name].values())
        who = " and ".join(f for f in families if chosen[name][f] == best)
        winners.append(f"{name}: {who} {best:.4f}")
    cwrs_wins = sum(any(chosen[name][f] == min(chosen[name].values())
                        for f in families if f.startswith("cwrs"))
                    for name in names)
    order = sorted(families, key=lambda f: mean_ranks[f])
    ranks = ", ".join(f"{family} {mean_ranks[family]:.1f}" for family in order)
    return (f"- **{what}**: a cwrs policy has the lowest progressive loss on {cwrs_wins} of "
            f"the {len(names)} data sets ({'; '.join(winners)}). Mean rank over the "
            f"{len(names)}: {ranks}.")


def grids_text(quick):
    alphas = QUICK_ALPHAS if quick else ALPHAS
    rates = QUICK_LEARNING_RATES if quick else LEARNING_RATES
    configurations = "; ".join(
        f"{algorithm}: " + ", ".join(f"`{' '.join(flags)}`"
                                     for _, flags in (c[:1] if quick else c))
        for algorithm, c in VW_ALGORITHMS.items())
    text = (
        f"Grids, fixed before any result was seen: every cwrs method (Thompson sampling and UCB, "
        f"diagonal and full) α ∈ {{{', '.join(f'{a:g}' for a in alphas)}}}; river's "
        f"LinUCBDisjoint the same α; VW every configuration ({configurations}) × learning rate "
        f"`-l` ∈ {{{', '.join(f'{r:g}' for r in rates)}}}."
    )
    if not quick:
        text += (
            " The bake-off's grid was learning rates {"
            + ", ".join(f"{r:g}" for r in BAKEOFF_LEARNING_RATES)
            + "} × `--cb_type` {ips, dr, mtr} (RegCB with mtr only) × each algorithm's "
            "parameters; trimmed to fit about 15 minutes: " + VW_TRIMMED + ". SquareCB, "
            "newer than the bake-off, has VW's default `--gamma_scale` 10 and 1 and 100; "
            "SquareCB and RegCB take `--cb_type mtr` only in VW."
        )
    return text


def loss_part(args, seeds):
    results: dict[str, dict[str, dict[str, tuple[float, float, float]]]] = {}
    tables = []
    for name, (X, y) in datasets(args.quick).items():
        lines = [f"\n### {name} ({X.shape[0]:,} rounds, {X.shape[1]} features, "
                 f"{np.unique(y).size} actions)\n",
                 "| method | parameter | progressive loss | rounds/s |",
                 "|---|---|---:|---:|"]
        for family, label, runner in methods(args.quick):
            runs = [runner(X, y, seed) for seed in seeds]
            losses = np.array([loss for loss, _ in runs])
            speed = float(np.mean([rate for _, rate in runs]))
            results.setdefault(name, {}).setdefault(family, {})[label] = (
                float(losses.mean()), float(losses.std()), speed)
            lines.append(f"| {family} | {label} | {losses.mean():.4f} ± {losses.std():.4f} | "
                         f"{speed:,.0f} |")
            log(f"{name} {lines[-1]}")
        tables.append("\n".join(lines))

    names = list(results)
    families = list(results[names[0]])
    points = {family: {name: {label: value[0] for label, value in results[name][family].items()}
                       for name in names} for family in families}
    best_loss, best_label, best_speed = {}, {}, {}
    fixed_loss, fixed_label, fixed_speed = {}, {}, {}
    for name in names:
        for store in (best_loss, best_label, best_speed, fixed_loss, fixed_label, fixed_speed):
            store[name] = {}
        for family in families:
            grid = results[name][family]
            label = min(grid, key=lambda key: grid[key][0])
            best_loss[name][family], best_label[name][family] = grid[label][0], label
            best_speed[name][family] = grid[label][2]
            label = leave_one_out_choice(points[family], names, name)
            fixed_loss[name][family], fixed_label[name][family] = grid[label][0], label
            fixed_speed[name][family] = grid[label][2]

    print("\n" + grids_text(args.quick))
    print("\nThe summaries below (generated by the script from the numbers):\n")
    best_ranks = ranking(best_loss, names, families)
    fixed_ranks = ranking(fixed_loss, names, families)
    print(describe_ranking("Best grid point per data set (optimistic tuning)", best_loss,
                           names, families, *best_ranks))
    print(describe_ranking("One setting per data set chosen on the other data sets", fixed_loss,
                           names, families, *fixed_ranks))
    summary_table("Summary: each method at the best point of its grid",
                  best_loss, best_label, best_speed, names, families)
    summary_table("Summary: each method at the setting chosen on the other data sets "
                  "(leave one data set out)", fixed_loss, fixed_label, fixed_speed, names,
                  families)
    for table in tables:
        print(table)


# ----------------------------------------------------------------------------- throughput
def median_rate(runner, X, y):
    return float(np.median([runner(X, y, None)[1] for _ in range(THROUGHPUT_REPEATS)]))


def throughput_part(args):
    divisor = QUICK_THROUGHPUT_DIVISOR if args.quick else 1
    print("\n### Bandit throughput\n")
    print(f"Rounds per second on a synthetic stream (context x ~ N(0, I_d), K = 10 actions, "
          f"label argmax_k (W x)_k + 0.5·ε_k; seed 0), in its stored order, the median of "
          f"{THROUGHPUT_REPEATS} repeats, every method on one core. cwrs is timed through "
          f"`simulate` (the round loop inside the library) and through a Python loop of "
          f"`choose` + `update` (what a live service calls), α = 0.1; VW at `-l "
          f"{VW_DEFAULT_LEARNING_RATE:g}` with each algorithm's first configuration above; "
          f"river at α = 1. The ratios are to river's LinUCBDisjoint and to VW's fastest "
          f"algorithm on the same stream.")
    for d, k, rounds, fewer in THROUGHPUT_STREAMS:
        rounds //= divisor
        fewer = {group: n // divisor for group, n in fewer.items()}
        n = max([rounds, *fewer.values()])
        X, y = linear_stream(n, d, k)
        rows = []  # (method, rounds, rate)
        for family, form, policy in CWRS_FAMILIES:
            m = fewer.get(form, rounds)
            for how, runner in (("simulate", run_cwrs), ("choose + update", run_cwrs_loop)):
                rate = median_rate(lambda X_, y_, s, r=runner, f=form, p=policy:
                                   r(X_, y_, s, f, p, 0.1), X[:m], y[:m])
                rows.append((f"{family}, {how}", m, rate))
                log(f"d={d} {rows[-1]}")
        vw_rates = {}
        if vowpalwabbit is not None:
            m = fewer.get("vw", rounds)
            for algorithm, configurations in VW_ALGORITHMS.items():
                label, flags = configurations[0]
                rate = median_rate(lambda X_, y_, s, g=flags:
                                   run_vw(X_, y_, s, g, VW_DEFAULT_LEARNING_RATE), X[:m], y[:m])
                vw_rates[algorithm] = rate
                rows.append((f"VW {algorithm} ({label})", m, rate))
                log(f"d={d} {rows[-1]}")
        river_rate = None
        if river is not None:
            m = fewer.get("river", rounds)
            river_rate = median_rate(lambda X_, y_, s: run_river(X_, y_, s, 1.0), X[:m], y[:m])
            rows.append(("river LinUCBDisjoint", m, river_rate))
            log(f"d={d} {rows[-1]}")
        fastest = max(vw_rates, key=vw_rates.get) if vw_rates else None
        print(f"\n#### d = {d}, K = {k} ({k * (d + 1):,} coordinates)\n")
        print("| method | rounds | rounds/s | × river | × VW's fastest |")
        print("|---|---:|---:|---:|---:|")
        for method, m, rate in rows:
            to_river = f"{rate / river_rate:.2f}" if river_rate else "–"
            to_vw = f"{rate / vw_rates[fastest]:.2f}" if fastest else "–"
            print(f"| {method} | {m:,} | {rate:,.0f} | {to_river} | {to_vw} |")
        cwrs_rows = [row for row in rows if row[0].startswith("cwrs")]
        if fastest and river_rate:
            rates = {method: rate for method, _, rate in cwrs_rows}
            low, high = min(rates, key=rates.get), max(rates, key=rates.get)
            print(f"\nVW's fastest algorithm here is {fastest} ({vw_rates[fastest]:,.0f} "
                  f"rounds/s), river {river_rate:,.0f} rounds/s (on its first "
                  f"{fewer.get('river', rounds):,} rounds). cwrs ranges from {low} "
                  f"({rates[low]:,.0f} rounds/s, {rates[low] / vw_rates[fastest]:.2f}× VW's "
                  f"fastest, {rates[low] / river_rate:.2f}× river) to {high} "
                  f"({rates[high]:,.0f} rounds/s, {rates[high] / vw_rates[fastest]:.2f}× VW's "
                  f"fastest, {rates[high] / river_rate:.2f}× river)."
                  + "".join(f" cwrs with the full covariance runs its first {m:,} rounds "
                            f"only." for group, m in fewer.items() if group == "full"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one shuffle, one grid point each, a tenth of the throughput rounds")
    parser.add_argument("--shuffles", type=int, default=10, help="orders of each data set")
    parser.add_argument("--part", choices=("loss", "throughput", "all"), default="all",
                        help="which part to run (default: both)")
    args = parser.parse_args()
    seeds = [0] if args.quick else list(range(args.shuffles))
    began = time.perf_counter()
    load = os.getloadavg()[0]
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · {cpu_model()} · cwrs "
          f"{cwrs.__version__} · vowpalwabbit "
          f"{getattr(vowpalwabbit, '__version__', 'not installed')} · river "
          f"{getattr(river, '__version__', 'not installed')} · shuffles {seeds[0]}–{seeds[-1]}"
          f" · load average {load:.2f} at the start"
          + (" · --quick" if args.quick else "")
          + ("" if args.part == "all" else f" · --part {args.part}"))
    if args.part in ("loss", "all"):
        loss_part(args, seeds)
    if args.part in ("throughput", "all"):
        throughput_part(args)
    print(f"\nTotal time: {time.perf_counter() - began:.0f} s (load average "
          f"{os.getloadavg()[0]:.2f} at the end).")


if __name__ == "__main__":
    main()
