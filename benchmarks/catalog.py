"""The learners of docs/design.md §2.9 beside the template's and scikit-learn's, in one run:
one pass in file order over a1a (1,605 rows, 123 binary features, LIBSVM CSR), then the test
error on a1a.t (30,956 rows), and the learning speed on a1a.t itself (one pass, the 30,956 rows
as CSR, the median of --repeats). Defaults everywhere, fit_intercept=True, shuffle=False.

scikit-learn peers: `SGDClassifier(loss=..., learning_rate="invscaling", eta0=1, power_t=0.5,
penalty=None, alpha=0)`, OGD's step η/√t, and `Perceptron`, with max_iter=1, tol=None,
shuffle=False.

    python benchmarks/catalog.py [--repeats 5] [--data ../shared/datasets]
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path

import numpy as np

import cwrs

# (name, class, parameters); every cwrs learner with shuffle=False (the stored order).
LEARNERS = [
    ("cwrs ALMA", "ALMA", {}),
    ("cwrs ROMMA", "ROMMA", {}),
    ("cwrs AggressiveROMMA", "AggressiveROMMA", {}),
    ("cwrs OGD (hinge)", "OGD", {}),
    ("cwrs OGD (logistic)", "OGD", {"loss": "logistic"}),
    ("cwrs IELLIP diag", "IELLIP", {}),
    ("cwrs AdaGrad", "AdaGrad", {}),
    ("cwrs FTRL", "FTRL", {}),
    ("cwrs Perceptron", "Perceptron", {}),
    ("cwrs PA1", "PA1", {}),
    ("cwrs AROW diag", "AROW", {}),
]


def cwrs_learners():
    return {
        name: (lambda cls=cls, params=params: getattr(cwrs, cls)(shuffle=False, **params))
        for name, cls, params in LEARNERS
    }


def sklearn_learners():
    from sklearn.linear_model import Perceptron, SGDClassifier

    once = {"max_iter": 1, "tol": None, "shuffle": False}
    sgd = {"learning_rate": "invscaling", "eta0": 1.0, "power_t": 0.5, "penalty": None,
           "alpha": 0.0, **once}
    return {
        "sklearn SGD hinge, η/√t": lambda: SGDClassifier(loss="hinge", **sgd),
        "sklearn SGD log, η/√t": lambda: SGDClassifier(loss="log_loss", **sgd),
        "sklearn Perceptron": lambda: Perceptron(**once),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    default = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    parser.add_argument("--data", type=Path, default=default)
    args = parser.parse_args()
    X, y = cwrs.load_svmlight(args.data / "a1a.libsvm", n_features=123)
    Xt, yt = cwrs.load_svmlight(args.data / "a1a.t.libsvm", n_features=123)
    print(f"{platform.processor() or platform.machine()} · Python {platform.python_version()} · "
          f"cwrs {cwrs.__version__} · median of {args.repeats}\n")
    print("| learner | online error, a1a | test error, a1a.t | rows/s, one pass over a1a.t |")
    print("|---|--:|--:|--:|")
    for name, make in {**cwrs_learners(), **sklearn_learners()}.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's max_iter=1 convergence warning
            model = make().fit(X, y)
            online = f"{model.n_mistakes_ / len(y):.2%}" if name.startswith("cwrs") else "—"
            test = 1.0 - model.score(Xt, yt)
            times = []
            for _ in range(args.repeats):
                fresh = make()
                start = time.perf_counter()
                fresh.fit(Xt, yt)
                times.append(time.perf_counter() - start)
        speed = len(yt) / float(np.median(times))
        print(f"| {name} | {online} | {test:.2%} | {speed / 1e3:,.0f}k |")


if __name__ == "__main__":
    main()
