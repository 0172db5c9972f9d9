"""What the `cwrs` command tells: diagnostics and progress on stderr, results as text or JSON,
and the cumulative-mistakes figure of `compare --plot`."""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from .._classifiers import CLASSIFIERS
from .._extras import install_hint
from .io import UsageError

# Labels named in one message at most.
LABELS_SHOWN = 10


class Reporter:
    """Diagnostics and the progress bar, on stderr; silent with --quiet."""

    def __init__(self, quiet):
        self.quiet = quiet

    def say(self, message):
        if not self.quiet:
            print(f"cwrs: {message}", file=sys.stderr)

    def warn(self, message):
        """A warning about the results: shown even with --quiet."""
        print(f"cwrs: warning: {message}", file=sys.stderr)

    def progress(self, total, unit, description):
        """A tqdm bar when tqdm is installed and stderr is a terminal; otherwise a stand-in."""
        if not self.quiet and sys.stderr.isatty():
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                return tqdm(total=total, unit=unit, desc=description, file=sys.stderr, leave=False)
        return NoProgress()


class NoProgress:
    def update(self, n=1):
        pass

    def close(self):
        pass


def emit(result, as_json, text, reporter):
    """Prints the result: `text`, or `result` as standard JSON, where a non-finite number
    (which JSON cannot hold) becomes null and is listed, with its value, under "non_finite"."""
    if not as_json:
        print(text)
        return
    non_finite = {}

    def finite(value, where):
        if isinstance(value, dict):
            return {k: finite(v, f"{where}.{k}" if where else k) for k, v in value.items()}
        if isinstance(value, list):
            return [finite(item, f"{where}[{index}]") for index, item in enumerate(value)]
        if isinstance(value, float) and not math.isfinite(value):
            non_finite[where] = repr(value)
            return None
        return value

    result = finite(result, "")
    if non_finite:
        result["non_finite"] = non_finite
        reporter.warn(f"not finite, written as null in the JSON: {', '.join(non_finite)}")
    print(json.dumps(result, indent=2, allow_nan=False))


def label_list(labels):
    """Up to LABELS_SHOWN of `labels`, for a message."""
    shown = ", ".join(label_text(label) for label in labels[:LABELS_SHOWN])
    return shown + (f", ... ({len(labels)} in all)" if len(labels) > LABELS_SHOWN else "")


def format_comparison(rows, n_rows, n_runs):
    lines = [
        f"{'learner':<20} {'mistake rate':>18} {'updates':>9} {'seconds':>9}",
        "-" * 59,
    ]
    for r in sorted(rows, key=lambda r: r["mistake_rate"]):
        rate = f"{r['mistake_rate']:.4f} ± {r['mistake_rate_std']:.4f}"
        lines.append(f"{r['learner']:<20} {rate:>18} {r['updates']:>9.1f} {r['seconds']:>9.4f}")
    lines.append(f"({n_rows} rows, {n_runs} run(s), one online pass each)")
    return "\n".join(lines)


def pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError(f"--plot needs matplotlib: {install_hint('plot')}") from None
    return plt


def plot_curves(plt, file, bounds, curves, title):
    """Cumulative mistakes against examples seen, one line per learner, as in the papers, as a
    PNG written to the binary file object `file`."""
    figure, axes = plt.subplots(figsize=(8, 5.5), dpi=120)
    ranked = sorted(curves.items(), key=lambda item: -item[1][-1])
    palette = plt.get_cmap("tab20").colors
    order = [cls.__name__ for cls in CLASSIFIERS]
    for label, curve in ranked:
        # One colour per rule (dark shades first), dashed for the diagonal covariance.
        rank = order.index(label.split(" ")[0])
        color = palette[(2 * rank) % 20 + (2 * rank) // 20]
        style = "--" if label.endswith("(diag)") else "-"
        axes.plot(bounds, curve, style, color=color, label=label, linewidth=1.4)
    axes.set_xlabel("examples")
    axes.set_ylabel("cumulative mistakes")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, ncol=2, loc="upper left")
    figure.tight_layout()
    figure.savefig(file, format="png")
    plt.close(figure)


def label_text(value):
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def metrics_text(metrics):
    if "accuracy" in metrics:
        return f"accuracy {metrics['accuracy']:.4f} (error rate {metrics['error_rate']:.4f})"
    return f"mse {metrics['mse']:.6g}, mae {metrics['mae']:.6g}, r2 {metrics['r2']:.4f}"


def one_line(error):
    if isinstance(error, OSError) and error.strerror and error.filename:
        return f"{error.filename}: {error.strerror}"
    text = str(error).strip()
    if isinstance(error, MemoryError) and not text.startswith("not enough memory"):
        return f"not enough memory{': ' + text if text else ''}"
    return text.splitlines()[0] if text else type(error).__name__
