"""cwrs.HashingVectorizer: the same matrices as scikit-learn's HashingVectorizer, the tokenizer
of Python's `str.lower` and `re` code point for code point, the GIL released, the estimator
protocol, refusals; and cwrs.FeatureHasher as an estimator."""

import re
import sys
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cwrs
from _gil import runs_during
from cwrs import _cwrs

text = pytest.importorskip("sklearn.feature_extraction.text")
sklearn_base = pytest.importorskip("sklearn.base")

DEFAULT_PATTERN = r"(?u)\b\w\w+\b"
SAME_UNICODE = unicodedata.unidata_version == _cwrs.TEXT_UNICODE_VERSION
needs_same_unicode = pytest.mark.skipif(
    not SAME_UNICODE,
    reason=f"the core's tables are of Unicode {_cwrs.TEXT_UNICODE_VERSION}, this Python's of "
    f"{unicodedata.unidata_version} (cwrs tokenizes with Python then)",
)
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]

# Characters of every kind the tokenizer tells apart: ASCII letters, digits and the underscore,
# accented letters (precomposed and combining), letters whose lowercase is special (the capital
# sigma, final or not; dotted I, which lowercases to two characters; a titlecase digraph),
# case-ignorable characters (apostrophe, period, modifier letter, combining mark), CJK and
# kana, other scripts' digits, combining marks that Rust calls alphabetic and Python's \w does
# not (a Devanagari vowel sign, the Greek ypogegrammeni), punctuation, and whitespace of several
# kinds.
ALPHABET = (
    "aZz09_ ÉéèñÅøß" + "e\u0301" + "ΣσςΟΔİıǅ" + "'.ʰ\u0301\u0307" + "日本語のテキスト漢"
    + "٣१" + "क\u093e\u0345" + ",;!?-()\"" + " \t\n\u00a0\u3000\u2028\x1f"
)
documents = st.lists(st.text(alphabet=ALPHABET, max_size=40), min_size=1, max_size=8)


def assert_same(ours, theirs):
    """Identical matrices: shape, values to the bit, and the stored entries."""
    assert ours.shape == theirs.shape
    assert ours.nnz == theirs.nnz
    if ours.nnz:
        assert abs(ours - theirs).max() == 0
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)


def both(docs, **params):
    ours = cwrs.HashingVectorizer(**params).transform(docs)
    theirs = text.HashingVectorizer(**params).transform(docs)
    return ours, theirs


@settings(max_examples=150, deadline=None)
@given(
    docs=documents,
    analyzer=st.sampled_from(["word", "char", "char_wb"]),
    ngram_range=st.sampled_from([(1, 1), (1, 2), (2, 2), (1, 3), (2, 4)]),
    lowercase=st.booleans(),
    alternate_sign=st.booleans(),
    binary=st.booleans(),
    norm=st.sampled_from(["l1", "l2", None]),
    n_features=st.sampled_from([1, 7, 2**10, 2**20]),
)
def test_same_matrices_as_scikit_learn(docs, **params):
    # Exactly equal, also after the norm: the sums are of integers, and the norm divides each
    # value by the same correctly rounded square root (or sum) as scikit-learn does.
    assert_same(*both(docs, **params))


def test_default_settings_on_varied_text():
    docs = [
        "The quick brown fox; ΟΔΟΣ and ΟΔΟΣ. İstanbul naïve cafe\u0301 a_b 42 x",
        "",
        "日本語のテキスト 漢字 and  more\t\tspaces",
        b"caf\xc3\xa9 as bytes",
        "O'Neil's ǅemal Σ ΣΑΣ",
    ]
    ours, theirs = both(docs)
    assert_same(ours, theirs)
    assert ours.has_canonical_format and ours.dtype == np.float64
    assert isinstance(ours, type(theirs))


@needs_same_unicode
def test_word_characters_are_pythons_for_every_code_point():
    # One token "a" + c per code point c of \w; a c outside \w leaves the single "a", no token.
    doc = " ".join("a" + chr(c) for c in CODE_POINTS)
    tokens = cwrs.HashingVectorizer(lowercase=False).build_analyzer()(doc)
    word = re.compile(r"\w")
    assert tokens == ["a" + chr(c) for c in CODE_POINTS if word.fullmatch(chr(c))]


@needs_same_unicode
def test_lowercase_is_pythons_for_every_code_point():
    # Each character between two NULs (neither cased, case-ignorable nor whitespace): its
    # lowercase alone, as str.lower gives it (several characters for some).
    doc = "\0" + "\0".join(chr(c) for c in CODE_POINTS) + "\0"
    chars = cwrs.HashingVectorizer(analyzer="char").build_analyzer()(doc)
    assert chars == list("\0" + "\0".join(chr(c).lower() for c in CODE_POINTS) + "\0")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ΣσAaΩ1 'ʰ.\u0301\u0345İ", max_size=12))
def test_lowercase_of_the_capital_sigma_in_context(doc):
    # The final sigma depends on the characters around it (cased ones, skipping case-ignorable
    # ones such as the apostrophe, a modifier letter, combining marks).
    chars = cwrs.HashingVectorizer(analyzer="char").build_analyzer()(doc)
    assert chars == list(re.sub(r"\s\s+", " ", doc.lower()))


def test_capital_sigma_and_dotted_capital_i():
    # "İ" lowercases to "i" and a combining dot, which is outside \w: "i" alone is no word.
    analyze = cwrs.HashingVectorizer().build_analyzer()
    assert analyze("ΟΔΟΣ ΟΔΟΣ. ΣΑΣ Σ İstanbul") == ["οδος", "οδος", "σας", "stanbul"]
    assert_same(*both(["ΟΔΟΣ ΟΔΟΣ. ΣΑΣ Σ İstanbul"], analyzer="char", ngram_range=(1, 2)))


@pytest.mark.parametrize(
    "params",
    [
        {"token_pattern": r"\w+"},
        {"token_pattern": r"(?u)\b(\w)\w*\b", "ngram_range": (1, 2)},  # one group: the token
        {"token_pattern": r"[a-z]+", "lowercase": False},
        {"analyzer": str.split, "binary": True},
    ],
)
def test_python_tokenizers_as_scikit_learn(params):
    docs = ["Hello wörld, a b ΟΔΟΣ 42_x", b"bytes doc", "", "x"]
    assert_same(*both(docs, **params))


def test_any_iterable_of_documents_and_pretokenized_input():
    docs = ["Some text here", b"more TEXT", "x y z"]
    expected = cwrs.HashingVectorizer().transform(docs)
    assert_same(cwrs.HashingVectorizer().transform(iter(docs)), expected)
    assert_same(cwrs.HashingVectorizer().fit_transform(d for d in docs), expected)
    strings = np.array(["Some text here", "more TEXT", "x y z"])  # numpy.str_ items
    assert_same(cwrs.HashingVectorizer().transform(strings), expected)
    # A callable analyzer gets anything but bytes as it is: token lists hash as they are.
    tokens = [["some", "text", "here"], ["more", "text"], ["x"]]
    assert_same(*both(tokens, analyzer=lambda doc: doc))


def test_pickles_and_copies():
    import copy
    import pickle

    vectorizer = cwrs.HashingVectorizer(n_features=64, analyzer="char_wb", ngram_range=(2, 3))
    for twin in (pickle.loads(pickle.dumps(vectorizer)), copy.deepcopy(vectorizer)):
        assert twin.get_params() == vectorizer.get_params()
        assert_same(twin.transform(["abc de"]), vectorizer.transform(["abc de"]))


@pytest.mark.parametrize("analyzer", ["word", "char_wb"])
def test_another_unicode_version_tokenizes_with_python(monkeypatch, analyzer):
    # Under a Python whose Unicode version is not the tables', Python lowercases and tokenizes.
    monkeypatch.setattr(_cwrs, "TEXT_UNICODE_VERSION", "0.0.0")
    docs = ["ΟΔΟΣ İstanbul naïve", b"A b CD"]
    assert_same(*both(docs, analyzer=analyzer, ngram_range=(1, 2)))


def test_lone_surrogates_separate_words_as_in_scikit_learn():
    docs = ["ab\ud800cd ef", "\udfff"]
    assert_same(*both(docs))
    with pytest.raises(UnicodeEncodeError):
        cwrs.HashingVectorizer(analyzer="char").transform(docs)


def test_hashing_releases_the_gil():
    docs = [" ".join(f"w{i % 977}x{j}" for j in range(200)) for i in range(2000)]
    hashing = (2**20, True, "word", (1, 2), True, False, "l2")
    assert runs_during(lambda: _cwrs.hash_documents(docs, *hashing), attempts=20)


def test_parameters_clone_and_pipeline():
    vectorizer = cwrs.HashingVectorizer(n_features=2**10, ngram_range=(1, 2), norm=None)
    params = vectorizer.get_params()
    theirs = text.HashingVectorizer().get_params()
    assert params == {**{k: theirs[k] for k in params}, "n_features": 2**10,
                      "ngram_range": (1, 2), "norm": None}
    twin = sklearn_base.clone(vectorizer)
    assert twin is not vectorizer and twin.get_params() == params
    assert vectorizer.set_params(binary=True) is vectorizer and vectorizer.binary
    assert repr(vectorizer) == (
        "HashingVectorizer(binary=True, n_features=1024, ngram_range=(1, 2), norm=None)"
    )
    with pytest.raises(ValueError, match="Invalid parameter 'stop_words'"):
        vectorizer.set_params(stop_words="english")
    hasher = cwrs.FeatureHasher(16, input_type="string")
    assert sklearn_base.clone(hasher).get_params() == {
        "n_features": 16, "input_type": "string", "alternate_sign": True
    }
    pipeline = pytest.importorskip("sklearn.pipeline")
    model = pipeline.make_pipeline(cwrs.HashingVectorizer(n_features=2**12), cwrs.AROW())
    model.fit(["good fine", "bad awful", "fine good good", "awful bad"], [1, 0, 1, 0])
    assert list(sklearn_base.clone(model).fit(["good", "bad"], [1, 0]).predict(["good"])) == [1]
    assert vectorizer.fit(["a"]) is vectorizer and vectorizer.partial_fit(["a"]) is vectorizer
    tags = pytest.importorskip("sklearn.utils").get_tags
    assert tags(vectorizer).input_tags.string and not tags(vectorizer).requires_fit
    assert tags(cwrs.FeatureHasher()).input_tags.dict


@pytest.mark.parametrize(
    "name, value",
    [
        ("n_features", 0),
        ("n_features", 2**31),
        ("n_features", 2.0),
        ("ngram_range", (2, 1)),
        ("ngram_range", (0, 1)),
        ("ngram_range", [1, 2]),
        ("ngram_range", (1, 2**70)),
        ("analyzer", "words"),
        ("norm", "max"),
        ("input", "filename"),
        ("lowercase", "yes"),
        ("binary", None),
        ("alternate_sign", 1),
        ("token_pattern", None),
        ("token_pattern", r"(a)(b)"),
        ("token_pattern", r"(unclosed"),
    ],
)
def test_bad_parameters_are_refused_at_fit_and_transform(name, value):
    vectorizer = cwrs.HashingVectorizer(**{name: value})  # accepted until used
    for call in (vectorizer.fit, vectorizer.transform, vectorizer.fit_transform):
        with pytest.raises(cwrs.InvalidParameterError, match=name):
            call(["some text here"])


def test_bad_documents_are_refused():
    vectorizer = cwrs.HashingVectorizer()
    for call in (vectorizer.fit, vectorizer.transform):
        with pytest.raises(ValueError, match="Iterable over raw text documents expected"):
            call("one string")
    with pytest.raises(TypeError, match="document 1 is of type int"):
        vectorizer.transform(["ok", 3])
    with pytest.raises(UnicodeDecodeError):
        vectorizer.transform([b"\xff\xfe"])
    with pytest.raises(ValueError, match="empty"):
        vectorizer.transform([])
    with pytest.raises(TypeError, match="not iterable"):
        vectorizer.transform(5)


def test_without_scipy_the_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    with pytest.raises(ImportError, match=r'needs SciPy: pip install "\.\[sklearn\]"'):
        cwrs.HashingVectorizer().transform(["text"])
    with pytest.raises(ImportError, match="FeatureHasher needs SciPy"):
        cwrs.FeatureHasher().transform([{"a": 1}])


def test_a_text_stream_trains_a_learner():
    # Each document: three words of its class's topic among twenty common ones.
    rng = np.random.default_rng(3)
    common = [f"word{i}" for i in range(2000)]
    topics = {1: [f"good{i}" for i in range(50)], -1: [f"bad{i}" for i in range(50)]}

    def batch(n):
        y = rng.choice([-1, 1], n)
        docs = [" ".join([*rng.choice(common, 20), *rng.choice(topics[c], 3)]) for c in y]
        return docs, y

    vectorizer = cwrs.HashingVectorizer(n_features=2**18, ngram_range=(1, 2))
    model = cwrs.AROW()
    for _ in range(5):
        docs, y = batch(200)
        model.partial_fit(vectorizer.transform(docs), y, classes=[-1, 1])
    docs, y = batch(1000)
    assert model.score(vectorizer.transform(docs), y) > 0.9


# ------------------------------------------------------------------------------- FeatureHasher
def test_feature_hasher_takes_any_mapping_and_pairs():
    from collections import OrderedDict

    sklearn_hasher = pytest.importorskip("sklearn.feature_extraction").FeatureHasher
    data = [OrderedDict(a=1.5, b="x"), {"c": np.float32(2.0), "d": np.int64(3), "e": True}]
    assert_same(cwrs.FeatureHasher(64).transform(data), sklearn_hasher(64).transform(data))
    # Pairs as lists, samples as iterators: unpacked as Python unpacks them.
    pairs = [[["a", 1.0], ("b", 2)], iter([("c", -1.0)])]
    ours = cwrs.FeatureHasher(64, input_type="pair").transform(pairs)
    tuples = [[("a", 1.0), ("b", 2)], [("c", -1.0)]]
    assert_same(ours, sklearn_hasher(64, input_type="pair").transform(tuples))
    with pytest.raises(ValueError, match="not enough values to unpack"):
        cwrs.FeatureHasher(8, input_type="pair").transform([[("a",)]])
    with pytest.raises(ValueError, match="too many values to unpack"):
        cwrs.FeatureHasher(8, input_type="pair").transform([[("a", 1, 2)]])
    with pytest.raises(TypeError, match="cannot unpack non-iterable int"):
        cwrs.FeatureHasher(8, input_type="pair").transform([[3]])
    with pytest.raises(cwrs.InvalidParameterError, match="alternate_sign"):
        cwrs.FeatureHasher(8, alternate_sign="no").fit()


@pytest.mark.parametrize("n_features", [1, 2, 7, 2**20])
def test_feature_hasher_token_lists_keep_scikit_learns_entries(n_features):
    # Collisions of opposite signs leave stored zeros in both (SciPy's sum_duplicates keeps
    # them; the core sums token lists itself).
    sklearn_hasher = pytest.importorskip("sklearn.feature_extraction").FeatureHasher
    rng = np.random.default_rng(4)
    words = [f"t{i}" for i in range(50)] + ["é", "日本", b"raw"]
    lists = [[words[i] for i in rng.integers(0, len(words), 12)] for _ in range(30)] + [[]]
    ours = cwrs.FeatureHasher(n_features, input_type="string").transform(lists)
    theirs = sklearn_hasher(n_features, input_type="string").transform(lists)
    assert_same(ours, theirs)
    assert ours.has_canonical_format
