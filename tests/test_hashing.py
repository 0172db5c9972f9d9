"""cwrs.FeatureHasher: the same columns and signs as scikit-learn's FeatureHasher, and usable
with every learner."""

import numpy as np
import pytest

import cwrs

sklearn_hasher = pytest.importorskip("sklearn.feature_extraction").FeatureHasher

WORDS = [f"w{i}" for i in range(300)] + ["héllo", "naïve", "日本語", "", "a b"]


def samples(n=100, seed=0):
    rng = np.random.default_rng(seed)
    return [{str(w): float(rng.normal()) for w in rng.choice(WORDS, 15)} for _ in range(n)]


@pytest.mark.parametrize("alternate_sign", [True, False])
@pytest.mark.parametrize("n_features", [1, 7, 2**10, 2**20])
def test_dicts_hash_as_in_scikit_learn(n_features, alternate_sign):
    data = samples()
    data[0]["color"] = "red"  # a string value becomes the feature "color=red"
    ours = cwrs.FeatureHasher(n_features, alternate_sign=alternate_sign).transform(data)
    theirs = sklearn_hasher(n_features, alternate_sign=alternate_sign).transform(data)
    assert ours.shape == theirs.shape
    assert abs(ours - theirs).max() == 0


@pytest.mark.parametrize("input_type", ["pair", "string"])
def test_pairs_and_strings_hash_as_in_scikit_learn(input_type):
    rng = np.random.default_rng(1)
    if input_type == "pair":
        data = [[(w, float(rng.normal())) for w in rng.choice(WORDS, 8)] for _ in range(40)]
    else:
        data = [list(rng.choice(WORDS, 8)) for _ in range(40)]
    ours = cwrs.FeatureHasher(2**12, input_type=input_type).transform(data)
    theirs = sklearn_hasher(2**12, input_type=input_type).transform(data)
    assert abs(ours - theirs).max() == 0


def test_hashed_text_stream_trains_any_learner():
    rng = np.random.default_rng(2)
    vocabulary = [f"t{i}" for i in range(2000)]
    good = set(vocabulary[:100])
    docs = [list(rng.choice(vocabulary, 30)) for _ in range(3000)]
    y = np.array([1 if sum(w in good for w in d) >= 2 else -1 for d in docs])
    X = cwrs.FeatureHasher(2**18, input_type="string").transform(docs)
    assert X.has_canonical_format and X.shape == (3000, 2**18)
    model = cwrs.AROW(penalty="l1", alpha=1e-3)
    for start in range(0, 3000, 500):
        model.partial_fit(X[start : start + 500], y[start : start + 500], classes=[-1, 1])
    late = cwrs.AROW(shuffle=False).fit(X[:2000], y[:2000]).score(X[2000:], y[2000:])
    majority = max(np.mean(y[2000:] == 1), np.mean(y[2000:] == -1))
    assert late > majority + 0.1  # measured 0.734 against a majority rate of about 0.55
    assert model.sparsity_ > 0.99


def test_bad_hasher_input():
    with pytest.raises(ValueError, match="n_features"):
        cwrs.FeatureHasher(0).transform([{"a": 1}])
    # A single string as a sample: ValueError, as scikit-learn raises.
    with pytest.raises(ValueError, match="single string"):
        cwrs.FeatureHasher(8, input_type="string").transform(["not a list of tokens"])
    with pytest.raises(TypeError):
        cwrs.FeatureHasher(8).transform([{"a": [1, 2]}])
    with pytest.raises(ValueError, match="input_type"):
        cwrs.FeatureHasher(8, input_type="json").transform([{"a": 1}])


def test_bytes_names_hash_as_in_scikit_learn():
    # Bytes names were hashed as their repr ("b'caf\\xc3\\xa9'"); scikit-learn
    # hashes their bytes, so b"caf\xc3\xa9" and "café" are the same feature.
    data = [
        {b"caf\xc3\xa9": 1.5, b"\xff\xfe": -2.0, "café": 0.5},
        {b"color": "red", "n": 0.0, b"x": 3},
    ]
    for n_features in [7, 2**20]:
        ours = cwrs.FeatureHasher(n_features).transform(data)
        theirs = sklearn_hasher(n_features).transform(data)
        assert abs(ours - theirs).max() == 0
        np.testing.assert_array_equal(ours.indices, theirs.indices)
        np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    pairs = [[(b"a", 1.0), ("a", 2.0)]]
    ours = cwrs.FeatureHasher(16, input_type="pair").transform(pairs)
    assert abs(ours - sklearn_hasher(16, input_type="pair").transform(pairs)).max() == 0
    assert ours.nnz == 1  # the same feature twice


@pytest.mark.parametrize("sample", [{1: 1.0}, {(1, 2): 1.0}, {None: 2.0}, {1.5: 1.0}])
def test_hasher_refuses_names_scikit_learn_refuses(sample):
    with pytest.raises(TypeError, match="feature names must be strings"):
        sklearn_hasher(8).transform([sample])
    with pytest.raises(TypeError, match="feature names must be strings"):
        cwrs.FeatureHasher(8).transform([sample])


def test_hasher_takes_what_scikit_learn_takes():
    # A zero value is skipped before its name is looked at; a string value makes the name
    # "%s=%s"; an empty input is refused.
    data = [{1: 0.0, "a": 1.0}, {3: "x", b"b": "y"}]
    ours = cwrs.FeatureHasher(32).transform(data)
    assert abs(ours - sklearn_hasher(32).transform(data)).max() == 0
    with pytest.raises(ValueError, match="empty"):
        cwrs.FeatureHasher(8).transform([])
