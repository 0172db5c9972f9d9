"""Text hashing: cwrs.HashingVectorizer and cwrs.FeatureHasher against scikit-learn's, one core.

Deterministic text: words drawn from a Zipf distribution (exponent 1.1) over a vocabulary of
50,000 made-up words (one in twenty with an accented letter; one in ten occurrences capitalized,
one in eight followed by a comma or period), in two shapes: 5,000 documents of 200 words and
50,000 documents of 20 words. For each shape, the default `HashingVectorizer` of both libraries
on the documents, `FeatureHasher(input_type="string")` of both on the same documents' token
lists (scikit-learn's analyzer's output), and `FeatureHasher()` on each list's counts as a
dict {token: count}; best of `--repeat` runs each, interleaved in one
process, pinned to one core. The outputs are checked identical (values to the bit, indices,
indptr) before anything is timed.

    python benchmarks/text_hashing.py [--repeat 5] [--core 0]
"""

import argparse
import os
import time
from collections import Counter

import numpy as np
from sklearn.feature_extraction import FeatureHasher as SkFeatureHasher
from sklearn.feature_extraction.text import HashingVectorizer as SkHashingVectorizer

import cwrs

SHAPES = [(5_000, 200), (50_000, 20)]
VOCABULARY = 50_000


def vocabulary(rng):
    letters = np.array(list("etaoinshrdlcumwfgypbvkjxqz"))
    accented = np.array(list("éèàüöçñø"))
    words = set()
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(letters, rng.integers(2, 10)))
        if rng.random() < 0.05:
            i = rng.integers(len(word))
            word = word[:i] + rng.choice(accented) + word[i + 1 :]
        words.add(word)
    return sorted(words)


def documents(n_docs, n_words, seed=0):
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    ranks = np.arange(1, VOCABULARY + 1)
    p = ranks**-1.1 / np.sum(ranks**-1.1)
    docs = []
    for _ in range(n_docs):
        chosen = [words[i] for i in rng.choice(VOCABULARY, n_words, p=p)]
        capital = rng.random(n_words) < 0.1
        stop = rng.random(n_words)
        docs.append(
            " ".join(
                (w.capitalize() if c else w) + ("," if s < 0.06 else "." if s < 0.125 else "")
                for w, c, s in zip(chosen, capital, stop)
            )
        )
    return docs


def best(call, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def assert_identical(ours, theirs, what):
    assert ours.shape == theirs.shape, what
    assert abs(ours - theirs).max() == 0, what
    assert np.array_equal(ours.indices, theirs.indices), what
    assert np.array_equal(ours.indptr, theirs.indptr), what


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--core", type=int, default=0)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})
    print("| shape | task | cwrs s | scikit-learn s | cwrs docs/s | cwrs MB/s | "
          "sklearn docs/s | sklearn MB/s | speed-up |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for n_docs, n_words in SHAPES:
        docs = documents(n_docs, n_words)
        tokens = [SkHashingVectorizer().build_analyzer()(d) for d in docs]
        counts = [{t: float(c) for t, c in Counter(ts).items()} for ts in tokens]
        text_mb = sum(len(d.encode()) for d in docs) / 1e6
        token_mb = sum(len(t.encode()) for ts in tokens for t in ts) / 1e6
        tasks = {
            "HashingVectorizer (documents)": (
                lambda: cwrs.HashingVectorizer().transform(docs),
                lambda: SkHashingVectorizer().transform(docs),
                text_mb,
            ),
            "FeatureHasher (token lists)": (
                lambda: cwrs.FeatureHasher(input_type="string").transform(tokens),
                lambda: SkFeatureHasher(input_type="string").transform(tokens),
                token_mb,
            ),
            "FeatureHasher (dicts of counts)": (
                lambda: cwrs.FeatureHasher().transform(counts),
                lambda: SkFeatureHasher().transform(counts),
                token_mb,
            ),
        }
        for task, (ours, theirs, mb) in tasks.items():
            assert_identical(ours(), theirs(), task)
            t_ours, t_theirs = best(ours, args.repeat), best(theirs, args.repeat)
            print(
                f"| {n_docs:,} × {n_words} words | {task} | {t_ours:.3f} | {t_theirs:.3f} | "
                f"{n_docs / t_ours:,.0f} | {mb / t_ours:.1f} | {n_docs / t_theirs:,.0f} | "
                f"{mb / t_theirs:.1f} | {t_theirs / t_ours:.1f}× |"
            )


if __name__ == "__main__":
    main()
