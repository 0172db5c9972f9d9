"""Input forms: every accepted way of passing X, y and sample_weight gives the same model, and bad
inputs raise a clear ValueError without touching the model.

The reference in every comparison is the same data as a float64, C-ordered NumPy array with labels
±1. Conversions that only copy values (dtype widening, re-ordering, CSC → CSR, sorting sparse
indices) must give a bit-identical model; only where the sum of duplicate sparse entries is formed
in a different order than in the dense reference do we allow 1e-12.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import cwrs

CONFIGS = tuple(
    (cls.__name__, covariance)
    for cls in cwrs.CLASSIFIERS
    for covariance in (("diag", "full") if cls._second_order else (None,))
)
CONFIG_IDS = [name if cov is None else f"{name}/{cov}" for name, cov in CONFIGS]
SECOND_ORDER = [cls.__name__ for cls in cwrs.CLASSIFIERS if cls._second_order]

N, D = 60, 7


def make(name, covariance, **params):
    if covariance is not None:
        params["covariance"] = covariance
    return getattr(cwrs, name)(**params)


def integer_data(seed=0, density=0.6):
    """Integer-valued X in [-3, 3] (exact in every dtype) with about 40% zeros, and ±1 labels from
    a noisy linear rule, so that every learner updates many times."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(N, D)).astype(np.float64)
    X[rng.random((N, D)) > density] = 0.0
    X[5] = 0.0  # one all-zero row
    w = rng.normal(size=D)
    y = np.where(X @ w + 0.5 * rng.normal(size=N) > 0, 1, -1)
    y[:2] = [1, -1]  # both classes for sure
    return X, y


def state(model):
    """Everything that defines a fitted binary model, as comparable values."""
    out = {
        "coef_": model.coef_.copy(),
        "intercept_": model.intercept_.copy(),
        "n_updates_": model.n_updates_,
        "n_mistakes_": model.n_mistakes_,
        "n_features_in_": model.n_features_in_,
        "classes_": model.classes_.copy(),
    }
    if hasattr(type(model), "covariance_"):
        out["covariance_"] = model.covariance_.copy()
    return out


def assert_same_state(got, expected, rtol=0.0, compare_classes=True):
    assert got.keys() == expected.keys()
    for name in got:
        if name == "classes_" and not compare_classes:
            continue
        a, b = got[name], expected[name]
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            assert a.shape == b.shape, name
            if rtol == 0.0:
                assert a.tobytes() == b.tobytes(), f"{name} differs:\n{a}\n{b}"
            else:
                np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)


def fitted(name, covariance, X, y, classes=(-1, 1), **params):
    return make(name, covariance, **params).partial_fit(X, y, classes=list(classes))


# ------------------------------------------------------------------------------------ dense forms
def dense_forms(X):
    """(id, array-like holding the same values as X) for the dense input forms."""
    read_only = X.copy()
    read_only.setflags(write=False)
    read_only_f = np.asfortranarray(X)
    read_only_f.setflags(write=False)
    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    return [
        ("float64-C", np.ascontiguousarray(X)),
        ("float64-F", np.asfortranarray(X)),
        ("float32-C", X.astype(np.float32)),
        ("float32-F", np.asfortranarray(X.astype(np.float32))),
        ("int32-C", X.astype(np.int32)),
        ("int32-F", np.asfortranarray(X.astype(np.int32))),
        ("int64-C", X.astype(np.int64)),
        ("int64-F", np.asfortranarray(X.astype(np.int64))),
        ("read-only-C", read_only),
        ("read-only-F", read_only_f),
        ("strided-view", wide[:, ::2]),
        ("float16", X.astype(np.float16)),
        ("big-endian-float64", X.astype(">f8")),
        ("int8", X.astype(np.int8)),
        ("list", X.tolist()),
        ("list-of-int", X.astype(int).tolist()),
    ]


DENSE_FORM_IDS = [form_id for form_id, _ in dense_forms(integer_data()[0])]


def assert_form_fits_alike(name, covariance, X, form, y):
    """Fitting and predicting `form`, another form of the array `X`, gives the same bits."""
    expected = fitted(name, covariance, X, y)
    model = fitted(name, covariance, form, y)
    assert_same_state(state(model), state(expected))
    np.testing.assert_array_equal(model.decision_function(form), expected.decision_function(X))
    np.testing.assert_array_equal(model.predict(form), expected.predict(X))


@pytest.mark.parametrize("form_id", DENSE_FORM_IDS)
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_dense_forms_give_the_same_model(name, covariance, form_id):
    X, y = integer_data()
    assert_form_fits_alike(name, covariance, X, dict(dense_forms(X))[form_id], y)


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_bool_X(name, covariance):
    X, y = integer_data(seed=1)
    binary = X != 0
    expected = fitted(name, covariance, binary.astype(np.float64), y)
    for form in (binary, np.asfortranarray(binary), binary.tolist()):
        model = fitted(name, covariance, form, y)
        assert_same_state(state(model), state(expected))


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_float32_non_integer_values(name, covariance):
    rng = np.random.default_rng(2)
    X32 = rng.normal(size=(N, D)).astype(np.float32)
    y = np.where(X32 @ rng.normal(size=D) > 0, 1, -1)
    expected = fitted(name, covariance, X32.astype(np.float64), y)
    model = fitted(name, covariance, X32, y)
    assert_same_state(state(model), state(expected))


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_read_only_memmap(tmp_path, name, covariance, dtype, layout):
    X, y = integer_data()
    path = tmp_path / "X.bin"
    np.asarray(X, dtype=dtype).ravel(order=layout).tofile(path)
    X_map = np.memmap(path, dtype=dtype, mode="r", shape=X.shape, order=layout)
    assert not X_map.flags.writeable
    y_map_path = tmp_path / "y.npy"
    np.save(y_map_path, y)
    y_map = np.load(y_map_path, mmap_mode="r")
    expected = fitted(name, covariance, X, y)
    model = fitted(name, covariance, X_map, y_map)
    assert_same_state(state(model), state(expected))
    np.testing.assert_array_equal(model.decision_function(X_map), expected.decision_function(X))
    del X_map, y_map


# ----------------------------------------------------------------------------------- sparse forms
SPARSE_KINDS = {
    "csr_matrix": sp.csr_matrix,
    "csc_matrix": sp.csc_matrix,
    "csr_array": sp.csr_array,
    "csc_array": sp.csc_array,
}
SPARSE_AXIS = {"csr_matrix": 0, "csc_matrix": 1, "csr_array": 0, "csc_array": 1}  # compressed axis


def compressed(kind, data, indices, indptr, shape, index_dtype):
    """A CSR/CSC matrix or array from raw arrays, with the index dtype forced (SciPy would
    otherwise downcast small int64 indices to int32)."""
    matrix = SPARSE_KINDS[kind]((data, indices, indptr), shape=shape)
    matrix.indices = np.asarray(indices, dtype=index_dtype)
    matrix.indptr = np.asarray(indptr, dtype=index_dtype)
    assert matrix.indices.dtype == index_dtype and matrix.indptr.dtype == index_dtype
    return matrix


def sparse_form(X, kind, index_dtype, variant):
    """X as `kind` with `index_dtype` indices; `variant` is "canonical", "unsorted" (indices
    reversed within each row/column), "duplicates" (every entry stored as two halves, which sum
    back exactly), "unsorted-duplicates" or "explicit-zeros" (one stored 0.0 per row/column)."""
    base = SPARSE_KINDS[kind](X)
    data, indices, indptr = [], [], [0]
    for k in range(len(base.indptr) - 1):
        lo, hi = base.indptr[k], base.indptr[k + 1]
        idx, val = list(base.indices[lo:hi]), list(base.data[lo:hi])
        if "duplicates" in variant:
            idx = [j for j in idx for _ in range(2)]
            val = [v / 2 for v in val for _ in range(2)]
        if variant == "explicit-zeros":
            inner = X.shape[1 - SPARSE_AXIS[kind]]  # length of a row (CSR) or column (CSC)
            free = [j for j in range(inner) if j not in idx][:1]
            idx, val = idx + free, val + [0.0] * len(free)
            order = np.argsort(idx, kind="stable")
            idx, val = [idx[o] for o in order], [val[o] for o in order]
        if "unsorted" in variant:
            idx, val = idx[::-1], val[::-1]
        indices += idx
        data += val
        indptr.append(len(indices))
    matrix = compressed(kind, np.array(data), indices, indptr, X.shape, index_dtype)
    if variant not in ("canonical", "explicit-zeros"):
        assert not matrix.has_canonical_format
    if variant == "explicit-zeros":
        assert (matrix.data == 0).any()
    return matrix


SPARSE_CASES = [
    (kind, index_dtype, variant)
    for kind in SPARSE_KINDS
    for index_dtype in (np.int32, np.int64)
    for variant in ("canonical", "unsorted", "duplicates", "unsorted-duplicates", "explicit-zeros")
]
SPARSE_IDS = [f"{k}-{np.dtype(d).name}-{v}" for k, d, v in SPARSE_CASES]


@pytest.mark.parametrize("kind, index_dtype, variant", SPARSE_CASES, ids=SPARSE_IDS)
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_sparse_forms_give_the_same_model(name, covariance, kind, index_dtype, variant):
    X, y = integer_data()
    assert_form_fits_alike(name, covariance, X, sparse_form(X, kind, index_dtype, variant), y)


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_sparse_mixed_index_dtypes(name, covariance):
    # indices and indptr of different integer types (SciPy allows it).
    X, y = integer_data()
    base = sp.csr_matrix(X)
    expected = fitted(name, covariance, X, y)
    for indices_dtype, indptr_dtype in ((np.int32, np.int64), (np.int64, np.int32)):
        X_sparse = sp.csr_matrix(X)
        X_sparse.indices = base.indices.astype(indices_dtype)
        X_sparse.indptr = base.indptr.astype(indptr_dtype)
        model = fitted(name, covariance, X_sparse, y)
        assert_same_state(state(model), state(expected))


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_forms_can_change_between_calls(name, covariance):
    X, y = integer_data()
    expected = fitted(name, covariance, X, y)
    model = make(name, covariance)
    model.partial_fit(X[:15].astype(np.float32), y[:15], classes=[-1, 1])
    model.partial_fit(sp.csc_matrix(X[15:30]), y[15:30].tolist())
    model.partial_fit(X[30:45].tolist(), y[30:45])
    model.partial_fit(sparse_form(X[45:], "csr_array", np.int64, "unsorted-duplicates"), y[45:])
    assert_same_state(state(model), state(expected))


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_sparse_duplicates_in_any_split(name, covariance):
    # Entries stored as three arbitrary parts: SciPy sums duplicates in its own order, so the
    # model may differ from the dense sum (toarray) in the last bits only.
    rng = np.random.default_rng(3)
    X, y = integer_data()
    base = sp.csr_matrix(X)
    data, indices, indptr = [], [], [0]
    for i in range(N):
        lo, hi = base.indptr[i], base.indptr[i + 1]
        for j, v in zip(base.indices[lo:hi], base.data[lo:hi]):
            parts = rng.normal(size=3)
            parts[2] = v - parts[0] - parts[1]
            indices += [j, j, j]
            data += list(parts)
        order = rng.permutation(len(indices) - indptr[-1]) + indptr[-1]
        indices[indptr[-1] :] = [indices[k] for k in order]
        data[indptr[-1] :] = [data[k] for k in order]
        indptr.append(len(indices))
    for index_dtype in (np.int32, np.int64):
        X_sparse = compressed("csr_matrix", np.array(data), indices, indptr, X.shape, index_dtype)
        dense = X_sparse.toarray()
        expected = fitted(name, covariance, dense, y)
        model = fitted(name, covariance, X_sparse, y)
        assert_same_state(state(model), state(expected), rtol=1e-12)


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_sparse_read_only_buffers(name, covariance):
    X, y = integer_data()
    for index_dtype in (np.int32, np.int64):
        X_sparse = sparse_form(X, "csr_array", index_dtype, "canonical")
        for array in (X_sparse.data, X_sparse.indices, X_sparse.indptr):
            array.setflags(write=False)
        model = fitted(name, covariance, X_sparse, y)
        assert_same_state(state(model), state(fitted(name, covariance, X, y)))


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_fit_accepts_every_form(name, covariance, fit_intercept):
    # fit (not only partial_fit) goes through the same conversions (and the same seeded orders).
    X, y = integer_data(seed=4)
    params = dict(fit_intercept=fit_intercept, n_iter=2, random_state=0)
    expected = make(name, covariance, **params).fit(X, y)
    forms = [
        X.astype(np.float32),
        np.asfortranarray(X.astype(np.int64)),
        X.tolist(),
        sp.csc_array(X),
        sparse_form(X, "csr_matrix", np.int64, "unsorted-duplicates"),
    ]
    for form in forms:
        model = make(name, covariance, **params).fit(form, y)
        assert_same_state(state(model), state(expected))


# ----------------------------------------------------------------------------------------- labels
LABEL_KINDS = {
    # id: (negative, positive) with negative < positive, so classes_ = [negative, positive]
    "minus-plus-int": (-1, 1),
    "minus-plus-float": (-1.0, 1.0),
    "zero-one": (0, 1),
    "strings": ("ham", "spam"),
    "booleans": (False, True),
    "other-ints": (3, 7),
}


@pytest.mark.parametrize("as_list", [False, True], ids=["array", "list"])
@pytest.mark.parametrize("label_kind", LABEL_KINDS)
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_binary_labels_of_any_type(name, covariance, label_kind, as_list):
    X, y_pm = integer_data()
    negative, positive = LABEL_KINDS[label_kind]
    y = np.where(y_pm > 0, positive, negative)
    if isinstance(negative, bool):
        y = y.astype(bool)
    if as_list:
        y = y.tolist()
    reference = fitted(name, covariance, X, y_pm)
    for classes in ([negative, positive], [positive, negative]):
        model = make(name, covariance).partial_fit(X, y, classes=classes)
        assert list(model.classes_) == [negative, positive]  # sorted; classes_[1] is positive
        assert_same_state(state(model), state(reference), compare_classes=False)
        predicted = model.predict(X)
        expected = np.where(reference.predict(X) > 0, positive, negative)
        assert list(predicted) == list(expected)
        assert list(predicted[model.decision_function(X) > 0]) == [positive] * int(
            (model.decision_function(X) > 0).sum()
        )
        assert model.score(X, y) == reference.score(X, y_pm)
    model = make(name, covariance, shuffle=False).fit(X, y)
    assert list(model.classes_) == [negative, positive]
    assert_same_state(state(model), state(reference), compare_classes=False)


def test_unknown_string_label_raises():
    X, y_pm = integer_data()
    y = np.where(y_pm > 0, "spam", "ham")
    model = cwrs.AROW(covariance="full").fit(X, y)
    before = state(model)
    bad = y.copy().astype(object)
    bad[-1] = "eggs"
    with pytest.raises(ValueError, match="eggs"):
        model.partial_fit(X, bad)
    assert_same_state(state(model), before)


def test_string_labels_example():
    # A user's example: "spam"/"ham" are sorted, so "spam" (classes_[1]) is the positive class.
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]])
    y = ["spam", "ham", "spam", "ham"]
    model = cwrs.AROW().fit(X, y)
    assert list(model.classes_) == ["ham", "spam"]
    assert model.decision_function([[3.0, 0.0]])[0] > 0
    assert model.predict([[3.0, 0.0]])[0] == "spam"
    assert model.predict([[0.0, 3.0]])[0] == "ham"
    proba = model.predict_proba([[3.0, 0.0]])
    assert proba[0, 1] > 0.5


# --------------------------------------------------------------------------------- sample weights
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_sample_weight_forms_agree_and_a_batch_is_its_rows(name, covariance):
    """Every form of the same weights gives the same model, which is the rows learned one at a
    time with their weights; weight 0 skips a row, weight 1 is no weight."""
    X, y = integer_data()
    weights = np.random.default_rng(5).integers(0, 4, size=N) * 0.75
    weights[:3] = [2, 0, 3]
    one_by_one = make(name, covariance)
    for t in range(N):
        one_by_one.partial_fit(X[t : t + 1], y[t : t + 1], classes=[-1, 1],
                               sample_weight=weights[t : t + 1])
    for w in (weights, weights.tolist(), weights.astype(np.float32)):
        model = make(name, covariance).partial_fit(X, y, classes=[-1, 1], sample_weight=w)
        assert_same_state(state(model), state(one_by_one))
    sparse = make(name, covariance).partial_fit(
        sp.csr_matrix(X), y, classes=[-1, 1], sample_weight=weights
    )
    assert_same_state(state(sparse), state(one_by_one))
    by_fit = make(name, covariance, shuffle=False).fit(X, y, sample_weight=weights)
    assert_same_state(state(by_fit), state(one_by_one))
    kept = weights != 0
    skipped = make(name, covariance).partial_fit(X[kept], y[kept], classes=[-1, 1],
                                                 sample_weight=weights[kept])
    assert_same_state(state(skipped), state(one_by_one))
    ones = make(name, covariance).partial_fit(X, y, classes=[-1, 1], sample_weight=np.ones(N))
    assert_same_state(state(ones), state(fitted(name, covariance, X, y)))
    # Weight 0 everywhere learns nothing.
    nothing = make(name, covariance).partial_fit(X, y, classes=[-1, 1], sample_weight=np.zeros(N))
    assert nothing.n_updates_ == 0 and nothing.n_mistakes_ == 0
    assert not nothing.coef_.any()


@pytest.mark.parametrize("bad", [[-1.0], [-0.5], [np.nan], [np.inf], [-np.inf]])
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_negative_or_non_finite_sample_weight_raises(name, covariance, bad):
    X, y = integer_data()
    model = fitted(name, covariance, X[:30], y[:30])
    before = state(model)
    weights = np.ones(N - 30)
    weights[-1] = bad[0]
    with pytest.raises(ValueError, match="sample_weight"):
        model.partial_fit(X[30:], y[30:], sample_weight=weights)
    assert_same_state(state(model), before)
    with pytest.raises(ValueError, match="sample_weight"):
        model.fit(X, y, sample_weight=np.r_[np.ones(30), weights])
    assert_same_state(state(model), before)


def test_sample_weight_wrong_length_raises():
    X, y = integer_data()
    model = fitted("AROW", "full", X, y)
    before = state(model)
    for weights in (np.ones(N - 1), np.ones(N + 1), np.ones((N, 1))):
        with pytest.raises(ValueError, match="sample_weight"):
            model.partial_fit(X, y, sample_weight=weights)
        assert_same_state(state(model), before)


# --------------------------------------------------------------------------- fit, passes, shuffle
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_n_iter_is_that_many_passes(name, covariance):
    X, y = integer_data()
    two_passes = make(name, covariance).partial_fit(X, y, classes=[-1, 1]).partial_fit(X, y)
    by_fit = make(name, covariance, n_iter=2, shuffle=False).fit(X, y)
    assert_same_state(state(by_fit), state(two_passes))
    stacked = make(name, covariance, shuffle=False).fit(np.vstack([X, X]), np.r_[y, y])
    assert_same_state(state(stacked), state(two_passes))
    # fit forgets the previous state.
    refit = make(name, covariance, n_iter=2, shuffle=False).fit(-X[::-1], y).fit(X, y)
    assert_same_state(state(refit), state(two_passes))


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_shuffle_is_reproducible(name, covariance):
    X, y = integer_data()
    params = dict(shuffle=True, n_iter=3)
    first = make(name, covariance, random_state=7, **params).fit(X, y)
    second = make(name, covariance, random_state=7, **params).fit(X, y)
    assert_same_state(state(second), state(first))
    again = first.fit(X, y)  # refitting the same estimator with an int seed repeats it too
    assert_same_state(state(again), state(second))
    generator = [
        make(name, covariance, random_state=np.random.default_rng(3), **params).fit(X, y)
        for _ in range(2)
    ]
    assert_same_state(state(generator[1]), state(generator[0]))
    # The seed matters: some seed gives another model than seed 7 (and than no shuffling).
    others = [make(name, covariance, random_state=s, **params).fit(X, y) for s in range(5)]
    unshuffled = make(name, covariance, n_iter=3, shuffle=False).fit(X, y)
    assert any(not np.array_equal(m.coef_, first.coef_) for m in others)
    assert not np.array_equal(first.coef_, unshuffled.coef_)


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_shuffled_passes_are_permutations(name, covariance):
    # With shuffle=True each of the n_iter passes presents the rows in a fresh permutation drawn
    # from np.random.RandomState(random_state), the scikit-learn convention; so n_iter=2 is two
    # passes, each a permutation of the rows. (This pins the current seeding scheme.)
    X, y = integer_data()
    model = make(name, covariance, shuffle=True, random_state=11, n_iter=2).fit(X, y)
    rng = np.random.RandomState(11)
    manual = make(name, covariance)
    for _ in range(2):
        order = rng.permutation(N)
        manual.partial_fit(X[order], y[order], classes=[-1, 1])
    assert_same_state(state(model), state(manual))


# ------------------------------------------------------------------------------------ bad inputs
def with_value(X, value, row=-1, col=2):
    X = X.copy()
    X[row, col] = value
    return X


def sparse_with_value(X, value):
    X_sparse = sp.csr_matrix(X)
    X_sparse.data[-1] = value
    return X_sparse


BAD_CALLS = {
    # id: (X, y) builder from good (X, y), and the message the error must contain
    "nan-dense": (lambda X, y: (with_value(X, np.nan), y), "NaN"),
    "inf-dense": (lambda X, y: (with_value(X, np.inf), y), "infinity"),
    "minus-inf-dense": (lambda X, y: (with_value(X, -np.inf), y), "infinity"),
    "nan-first-row": (lambda X, y: (with_value(X, np.nan, row=0), y), "NaN"),
    "nan-sparse": (lambda X, y: (sparse_with_value(X, np.nan), y), "NaN"),
    "inf-sparse": (lambda X, y: (sparse_with_value(X, np.inf), y), "infinity"),
    "nan-float32": (lambda X, y: (with_value(X, np.nan).astype(np.float32), y), "NaN"),
    "too-many-features": (lambda X, y: (np.hstack([X, X[:, :1]]), y), "features"),
    "too-few-features": (lambda X, y: (X[:, :-1], y), "features"),
    "too-many-features-sparse": (
        lambda X, y: (sp.csr_matrix(np.hstack([X, X[:, :1]])), y),
        "features",
    ),
    "unknown-label": (lambda X, y: (X, np.where(np.arange(len(y)) == len(y) - 1, 2, y)), "label"),
    "third-class": (lambda X, y: (X, np.r_[y[:-2], 0, 0]), "label"),
    "y-too-short": (lambda X, y: (X, y[:-1]), "rows"),
    "y-too-long": (lambda X, y: (X, np.r_[y, 1]), "rows"),
    "nan-label": (lambda X, y: (X, np.r_[y[:-1].astype(float), np.nan]), "NaN"),
    "X-1d": (lambda X, y: (X[0], y[:1]), "2D"),
}


@pytest.mark.parametrize("case", BAD_CALLS)
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_bad_partial_fit_raises_and_leaves_model_untouched(name, covariance, case):
    X, y = integer_data()
    model = fitted(name, covariance, X[:30], y[:30])
    before = state(model)
    pickled = pickle.dumps(model)
    build, message = BAD_CALLS[case]
    bad_X, bad_y = build(X[30:], y[30:])
    with pytest.raises(ValueError, match=message):
        model.partial_fit(bad_X, bad_y)
    assert_same_state(state(model), before)
    assert pickle.dumps(model) == pickled
    # The model still learns normally afterwards, exactly as if the bad call never happened.
    model.partial_fit(X[30:], y[30:])
    assert_same_state(state(model), state(fitted(name, covariance, X, y)))


# fit starts a new model, so any number of features is fine there, and a third label value
# makes y a (valid) multiclass problem.
BAD_FIT_CALLS = {
    case: (build, message)
    for case, (build, message) in BAD_CALLS.items()
    if "features" not in case and case not in ("unknown-label", "third-class")
}


@pytest.mark.parametrize("case", BAD_FIT_CALLS)
@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_bad_fit_raises_and_keeps_the_previous_model(name, covariance, case):
    X, y = integer_data()
    model = make(name, covariance).fit(X, y)
    before = state(model)
    build, message = BAD_FIT_CALLS[case]
    bad_X, bad_y = build(X, y)
    with pytest.raises(ValueError, match=message):
        model.fit(bad_X, bad_y)
    assert_same_state(state(model), before)


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_bad_prediction_inputs_raise(name, covariance):
    X, y = integer_data()
    model = fitted(name, covariance, X, y)
    before = state(model)
    methods = [model.predict, model.decision_function]
    if covariance is not None:
        methods.append(model.predict_proba)
    for method in methods:
        with pytest.raises(ValueError, match="NaN"):
            method(with_value(X, np.nan))
        with pytest.raises(ValueError, match="NaN|infinity"):
            method(sparse_with_value(X, np.inf))
        with pytest.raises(ValueError, match="features"):
            method(X[:, :-1])
        with pytest.raises(ValueError, match="features"):
            method(sp.csr_matrix(np.hstack([X, X])))
    assert_same_state(state(model), before)


@pytest.mark.parametrize("name, covariance", CONFIGS, ids=CONFIG_IDS)
def test_classes_are_declared_and_kept(name, covariance):
    X, y = integer_data()
    y3 = np.where(np.arange(N) % 3 == 0, 0, y)
    estimator = make(name, covariance)
    with pytest.raises(ValueError, match="classes"):
        estimator.partial_fit(X, y)  # classes are required on the first call
    with pytest.raises(ValueError, match="one class"):
        estimator.partial_fit(X, y, classes=[1])
    assert not hasattr(estimator, "classes_")  # still unfitted
    # A binary model refuses a different set of classes and labels outside its classes.
    model = fitted(name, covariance, X, y)
    before = state(model)
    with pytest.raises(ValueError, match="classes"):
        model.partial_fit(X, y, classes=[-1, 0, 1])
    with pytest.raises(ValueError, match="label"):
        model.partial_fit(X, y3)
    assert_same_state(state(model), before)
    # Three classes declared up front give a multiclass model that accepts them all.
    multiclass = make(name, covariance).partial_fit(X, y, classes=[-1, 0, 1])
    assert multiclass.coef_.shape == (3, X.shape[1])
    multiclass.partial_fit(X, y3)
    assert set(multiclass.predict(X)) <= {-1, 0, 1}


# ------------------------------------------------------------------------- hyper-parameter ranges
def bad_hyper_parameters():
    cases = []
    for name in ("PA1", "PA2", "SCW1", "SCW2", "NHERD"):
        cases += [(name, "C", v) for v in (0.0, -1.0, np.nan, np.inf)]
    cases += [("AROW", "r", v) for v in (0.0, -0.5, np.nan, np.inf, "1")]
    cases += [("NAROW", "b", v) for v in (0.0, -2.0, np.nan)]
    for name in ("CW", "ExactCW", "SCW1", "SCW2"):
        cases += [(name, "eta", v) for v in (0.5, 1.0, 0.3, 1.5, -0.7, np.nan)]
    for name in SECOND_ORDER:
        cases += [(name, "a", v) for v in (0.0, -1.0, np.nan, np.inf)]
        cases += [(name, "covariance", v) for v in ("dense", "identity", "", None)]
    return cases


BAD_HYPER = bad_hyper_parameters()


@pytest.mark.parametrize(
    "name, parameter, value", BAD_HYPER, ids=[f"{n}-{p}={v!r}" for n, p, v in BAD_HYPER]
)
def test_hyper_parameters_out_of_range_raise(name, parameter, value):
    X, y = integer_data()
    covariance = "full" if name in SECOND_ORDER and parameter != "covariance" else None
    params = {parameter: value}
    if covariance is not None:
        params["covariance"] = covariance
    message = "covariance" if parameter == "covariance" else rf"\b{parameter}\b"
    # A fresh estimator: fit and the first partial_fit raise, and it stays unfitted.
    estimator = getattr(cwrs, name)(**params)
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y)
    assert not hasattr(estimator, "coef_")
    with pytest.raises(ValueError, match=message):
        estimator.partial_fit(X, y, classes=[-1, 1])
    assert not hasattr(estimator, "coef_")
    # A fitted estimator given a bad value: refitting raises and keeps the previous model.
    good = {"covariance": covariance} if covariance is not None else {}
    model = getattr(cwrs, name)(**good).fit(X, y)
    before = state(model)
    model.set_params(**{parameter: value})
    with pytest.raises(ValueError, match=message):
        model.fit(X, y)
    assert_same_state(state(model), before)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_in_range_hyper_parameters_are_accepted(name):
    # The boundaries are strict only where they must be: eta close to 0.5 and to 1, tiny and huge
    # a, r, b, C all work and give finite models.
    X, y = integer_data()
    cls = getattr(cwrs, name)
    values = {"eta": (0.5001, 0.9999), "C": (1e-6, 1e6), "r": (1e-6, 1e6), "b": (1e-6, 1e6)}
    if name == "IELLIP":  # its b and c are decay factors, in (0, 1)
        values.update(b=(1e-6, 1 - 1e-6), c=(1e-6, 1 - 1e-6))
    accepted = [p for p in values if p in cls().get_params()]
    for a in (1e-6, 1e6):
        for covariance in ("diag", "full"):
            for parameter in accepted or [None]:
                for value in values.get(parameter, (None,)):
                    params = {} if parameter is None else {parameter: value}
                    model = cls(a=a, covariance=covariance, **params).fit(X, y)
                    assert np.isfinite(model.coef_).all()
                    assert np.isfinite(model.covariance_).all()


@pytest.mark.parametrize(
    "y",
    [
        np.array([1, -1, 1, 1]),
        np.array([1.0, -1.0, -1.0]),
        np.array([True, False]),
        np.array([3, 1, 3], dtype=np.uint8),
        np.array([7, 2, 7], dtype=">i4"),
        np.array([-0.0, 0.0, 1.0]),
        np.array([0.0, 1.0, 1.0]),
        np.array([1, 2, 3, 2]),
        np.array(["b", "a", "b"]),
    ],
)
def test_the_classes_of_labels_are_their_sorted_distinct_values(y):
    """`classes_of` skips the sort for two numbers: the same values and dtype as np.unique."""
    from cwrs._validation import classes_of

    classes, expected = classes_of(y), np.unique(y)
    assert classes.dtype == expected.dtype
    assert np.array_equal(classes, expected)
    assert [np.signbit(c) for c in classes.tolist() if c == 0] == [
        np.signbit(c) for c in expected.tolist() if c == 0
    ]
