"""Input checks and conversions shared by every estimator.

The Rust core re-checks everything it relies on (shapes, indices, finiteness) before it touches a
model; this module turns Python inputs into the zero-copy layouts the core borrows and gives the
errors scikit-learn users expect.
"""

from __future__ import annotations

import functools
import numbers
import os
import sys
import warnings
from types import FrameType
from typing import Optional

import numpy as np

from . import _cwrs


class NotFittedError(ValueError, AttributeError):
    """Raised when a method that needs a fitted model is called before `fit`/`partial_fit`."""


@functools.cache
def _not_fitted_error_class():
    """`NotFittedError`, also a subclass of scikit-learn's when scikit-learn is in use, so that
    code catching either catches it (without importing scikit-learn ourselves)."""
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return NotFittedError
    return type("NotFittedError", (NotFittedError, sklearn_exceptions.NotFittedError), {})


def not_fitted_error(message: str) -> NotFittedError:
    return _not_fitted_error_class()(message)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_user(message: str, category: type[Warning]) -> None:
    """`warnings.warn` attributed to the user's line: the first caller outside this package
    (the public methods reach a check through several internal calls)."""
    frame: Optional[FrameType] = sys._getframe(0)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


class DataConversionWarning(UserWarning):
    """Raised when the input had to be reshaped (e.g. a column-vector y)."""


class IneffectiveParameterWarning(UserWarning):
    """Raised when a hyper-parameter is set but the configuration makes no use of it (e.g.
    `random_state` with `shuffle=False`)."""


class RegressionTargetWarning(UserWarning):
    """Raised when a classifier is given labels that look like a regression target (many
    distinct integers, each on a row or two): each value becomes a class of its own. A
    regressor (`cwrs.AROWRegressor`) learns such targets."""


# Labels look like a regression target when they are integer-valued numbers with at least
# REGRESSION_MIN_VALUES distinct values and fewer than REGRESSION_ROWS_PER_VALUE rows per value
# on average (most values unique: diabetes, 214 values on 442 rows). A class needs more rows
# than that to be learned, so real class labels rarely look like this.
REGRESSION_MIN_VALUES = 20
REGRESSION_ROWS_PER_VALUE = 2.5


def regression_like(values, n_rows: int) -> Optional[str]:
    """What makes class labels look like a regression target (see REGRESSION_MIN_VALUES), or
    None when they do not; `values` are their distinct values, over `n_rows` rows."""
    values = np.asarray(values)
    if (
        values.dtype.kind not in "iuf"
        or len(values) < REGRESSION_MIN_VALUES
        or n_rows >= REGRESSION_ROWS_PER_VALUE * len(values)
    ):
        return None
    if values.dtype.kind == "f" and not (
        np.isfinite(values).all() and (values == np.round(values)).all()
    ):
        return None  # not integers (continuous targets are refused on their own)
    examples = ", ".join(f"{v:g}" for v in values[:: max(1, len(values) // 3)][:3])
    return (
        f"the labels look like a regression target: {len(values)} distinct integers on "
        f"{n_rows} rows (e.g. {examples}), so each value would be a class of its own; for "
        "regression use AROWRegressor"
    )


def warn_if_regression_like(y, classes, exact: bool = False) -> None:
    """RegressionTargetWarning when the labels y look like a regression target. `classes`
    holds every distinct label of y and maybe more (exactly those with `exact`), so that most
    calls need no sort of y."""
    if len(classes) < REGRESSION_MIN_VALUES:
        return
    values = classes if exact else np.unique(y)
    reason = regression_like(values, len(y))
    if reason is not None:
        warn_user(reason, RegressionTargetWarning)


def is_sparse(X) -> bool:
    """True for SciPy sparse matrices and arrays (without importing SciPy if it is not in use)."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(X)


def _check_shape(shape, min_samples=1) -> None:
    if len(shape) != 2:
        raise ValueError(
            f"Expected 2D array, got {len(shape)}D array instead. Reshape your data either using "
            "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) if "
            "it contains a single sample."
        )
    if shape[0] < min_samples:
        raise ValueError(
            f"Found array with {shape[0]} sample(s) (shape={shape}) while a minimum of "
            f"{min_samples} is required."
        )
    if shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required."
        )


def _as_float64(array, name="X") -> np.ndarray:
    """`array` as a NumPy array of numbers (bool, int or float; converted to float64 only if it
    is something else): complex values, strings and objects that are not numbers are refused
    with a message naming `name`."""
    array = np.asarray(array)
    kind = array.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: {name} must hold real numbers")
    if kind in "USV":
        raise ValueError(
            f"{name} holds strings or bytes (dtype {array.dtype}); convert it to numbers first"
        )
    if kind not in "biuf":
        # Object arrays of numbers convert; anything else cannot be learned from (the error
        # keeps NumPy's type: TypeError for objects that are no numbers, ValueError for text).
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{name} must hold numbers: {error}") from None
    return array


def _check_sparse_structure(X) -> None:
    """Raises ValueError if the arrays of a CSR, CSC or COO matrix are inconsistent, before SciPy
    converts or canonicalises it: SciPy's compiled routines trust these arrays and would read or
    write out of bounds (or fail with an obscure C++ error) on them. Column indices of a CSR
    matrix are checked by the core, which never trusts them."""
    fmt = X.format
    if fmt in ("csr", "csc"):
        n_major, n_minor = X.shape if fmt == "csr" else X.shape[::-1]
        major, minor = ("row", "column") if fmt == "csr" else ("column", "row")
        what = f"{fmt.upper()} indptr"
        indptr, nnz = X.indptr, X.data.shape[0]
        if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
            raise ValueError(
                f"{what} has {indptr.size} entries, but a matrix with {n_major} {major}s needs "
                f"{n_major + 1} (one per {major}, plus one)"
            )
        if X.indices.shape != (nnz,):
            raise ValueError(
                f"{fmt.upper()} indices hold {X.indices.size} values but data holds {nnz}"
            )
        if indptr[0] != 0 or indptr[-1] != nnz:
            raise ValueError(
                f"{what} must start at 0 and end at the number of stored values ({nnz}), got "
                f"{indptr[0]} and {indptr[-1]}"
            )
        if n_major > 1 and (indptr[1:] < indptr[:-1]).any():
            raise ValueError(f"{what} must never decrease")
        if fmt == "csc":
            _check_index_range(X.indices, n_minor, minor)
    elif fmt == "coo":
        row, col = X.row, X.col
        if row.shape != X.data.shape or col.shape != X.data.shape:
            raise ValueError("COO row, col and data arrays differ in length")
        _check_index_range(row, X.shape[0], "row")
        _check_index_range(col, X.shape[1], "column")


def _check_index_range(indices, n, what) -> None:
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        bad = indices.min() if indices.min() < 0 else indices.max()
        raise ValueError(f"sparse {what} index {bad} is out of range for {n} {what}s")


def _native(array, dtype) -> np.ndarray:
    """`array` as the native module takes it: C-contiguous and aligned `dtype` (copied only when
    it is not; a buffer read at an odd offset, as by `np.frombuffer(buf, offset=1)`, is
    misaligned)."""
    return np.require(array, dtype=dtype, requirements=("C", "A"))


def check_X(X, scan_format=True):
    """Returns `(matrix, n_rows, n_cols)` where `matrix` is what the native `Model` takes: a
    C-contiguous float64 array, or a CSR tuple `(data, indices, indptr, n_cols)` in canonical form
    (sorted, duplicates summed) with one integer type for indices and indptr.

    Without `scan_format`, the CSR arrays are passed as they are, without SciPy's scan for the
    canonical form (an O(nnz) pass on a matrix's first use): the core's validation refuses any
    row whose indices are not strictly increasing, which is exactly a non-canonical one, and
    `fit` then learns `canonical_csr` (`cwrs._estimator.learned_in_canonical_form`).
    """
    if is_sparse(X):
        _check_shape(X.shape)
        _check_sparse_structure(X)
        X = X.tocsr()  # no copy for CSR; CSC, COO, ... are converted
        if scan_format and not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        data = _native(_as_float64(X.data), np.float64)
        index_type = (
            np.int32 if X.indices.dtype == np.int32 and X.indptr.dtype == np.int32 else np.int64
        )
        indices = _native(X.indices, index_type)
        indptr = _native(X.indptr, index_type)
        return (data, indices, indptr, X.shape[1]), X.shape[0], X.shape[1]
    if X is None:
        raise ValueError("Expected 2D array, got None")
    if isinstance(X, (str, bytes)):
        raise ValueError(f"Expected 2D array of numbers, got a {type(X).__name__}")
    X = _as_float64(X)
    _check_shape(X.shape)
    X = _native(X, np.float64)
    return X, X.shape[0], X.shape[1]


def canonical_csr(matrix, n_rows):
    """The CSR tuple `matrix` of `check_X(X, scan_format=False)` in canonical form, or None when
    it is canonical already (or dense)."""
    if not isinstance(matrix, tuple):
        return None
    data, indices, indptr, n_cols = matrix
    X = sys.modules["scipy.sparse"].csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))
    if X.has_canonical_format:
        return None
    return check_X(X)[0]


def mapped_rows(matrix, n_rows, feature_map, scanned):
    """The rows as the model sees them: through the feature map, if any. `scanned`: `matrix` is
    from `check_X` with its scan, so a CSR matrix is canonical already; else (`fit`'s) it is
    mapped from its canonical form, which a fresh SciPy matrix of its arrays tells (an O(nnz)
    scan, as it never has the cached flag)."""
    if feature_map is None:
        return matrix
    if not scanned:
        matrix = canonical_csr(matrix, n_rows) or matrix
    return feature_map.transform(matrix, n_rows)


def column_or_1d(y, name="y") -> np.ndarray:
    """`y` as a 1-D array; a column vector is accepted with a warning, as in scikit-learn."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change the "
            "shape of y to (n_samples,), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        return y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} should be a 1d array, got an array of shape {y.shape} instead.")
    return y


def _label_kind(value) -> str | None:
    """"number", "string" or "bytes": the kinds of class labels; None for anything else."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, (numbers.Real, np.bool_)) and not isinstance(value, np.datetime64):
        return "number"
    return None


LABEL_RULE = (
    "class labels must be all numbers (bool, int, or float with an integer value), all strings "
    "or all bytes"
)


def _check_label_values(values, name: str) -> None:
    """Raises TypeError unless the Python values are labels of one kind (see LABEL_RULE)."""
    kinds = set()
    for value in values:
        kind = _label_kind(value)
        if kind is None:
            raise TypeError(f"{name} holds {value!r:.60} of type {type(value).__name__}: {LABEL_RULE}")
        kinds.add(kind)
        if len(kinds) > 1:
            raise TypeError(f"{name} mixes {' and '.join(sorted(kinds))}: {LABEL_RULE}")


def check_class_labels(labels: np.ndarray, name: str = "y") -> np.ndarray:
    """`labels` (a 1-D array) if it holds supported class labels (LABEL_RULE: one kind, finite
    whole numbers); an object array of numbers becomes a numeric array."""
    kind = labels.dtype.kind
    if kind == "O":
        values = labels.tolist()
        _check_label_values(values, name)
        if values and _label_kind(values[0]) == "number":
            labels = np.array(values)
            kind = labels.dtype.kind
    elif kind not in "biufUS":
        raise TypeError(f"{name} has dtype {labels.dtype}: {LABEL_RULE}")
    if kind == "f":
        if not np.isfinite(labels).all():
            what = "NaN" if np.isnan(labels).any() else "infinity"
            raise ValueError(f"Input {name} contains {what}.")
        if np.any(labels != np.round(labels)):
            raise ValueError(
                f"Unknown label type: continuous ({name}). Classifiers need discrete labels."
            )
    return labels


def check_labels(y, n_rows: int | None, name: str = "y") -> np.ndarray:
    """Class labels as a 1-D array (of length `n_rows` unless None): see LABEL_RULE. Python
    sequences are checked value by value first, as NumPy would turn tuples into rows and mixed
    numbers and strings into strings."""
    if y is None:
        raise ValueError(f"requires {name} to be passed, but the target {name} is None")
    if isinstance(y, (list, tuple)):
        _check_label_values(y, name)
    y = column_or_1d(y, name)
    if n_rows is not None and y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but {name} has {y.shape[0]} labels")
    if y.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} must hold class labels")
    return check_class_labels(y, name)


def check_targets(y, n_rows: int) -> np.ndarray:
    """Regression targets as a finite 1-D float64 array of length `n_rows`."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    y = column_or_1d(y)
    if y.shape[0] != n_rows:
        raise ValueError(f"X has {n_rows} rows but y has {y.shape[0]} values")
    y = _native(_as_float64(y, "y"), np.float64)
    if not np.isfinite(y).all():
        kind = "NaN" if np.isnan(y).any() else "infinity"
        raise ValueError(f"Input y contains {kind}.")
    return y


#: The largest importance weight a row takes (the core's `cwrs::data::MAX_WEIGHT`, 2**64).
MAX_WEIGHT = _cwrs.MAX_WEIGHT


def check_sample_weight(sample_weight, n_rows: int):
    """Sample weights as a float64 array of importance weights, or None for all ones.

    Any real from 0 to 2**64 (`MAX_WEIGHT`): a row of weight h is learned with each rule's weighted step
    (docs/design.md §2.10), a row of weight 0 is skipped.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight)
    if w.ndim == 0:
        w = np.full(n_rows, w)
    if w.shape != (n_rows,):
        raise ValueError(
            f"sample_weight.shape == {w.shape}, expected {(n_rows,)} (one weight per row)"
        )
    # Aligned as well as contiguous: an array from a network buffer may not be.
    w = np.require(_as_float64(w, "sample_weight"), dtype=np.float64, requirements=["C", "A"])
    if not np.isfinite(w).all():
        kind = "NaN" if np.isnan(w).any() else "infinity"
        raise ValueError(f"sample_weight contains {kind}: weights must be finite")
    if (w < 0).any():
        raise ValueError(
            f"sample_weight must be ≥ 0, got {float(w[w < 0][0])} at row {int(np.argmax(w < 0))}"
        )
    if (w > MAX_WEIGHT).any():
        # The core's bound: the totals a model keeps stay finite.
        raise ValueError(
            f"sample_weight must be at most 2**64, got {float(w[w > MAX_WEIGHT][0])} at row "
            f"{int(np.argmax(w > MAX_WEIGHT))}"
        )
    return w


def feature_names(X):
    """The column names of a data frame X (pandas, or any frame with the interchange protocol)
    as an object array when they are all strings, else None: scikit-learn's rule, so that
    `feature_names_in_` means the same in a pipeline of either."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(X, pandas.DataFrame):
        names = np.asarray(X.columns, dtype=object)
    elif hasattr(X, "__dataframe__") and not isinstance(X, np.ndarray):
        names = np.asarray(list(X.__dataframe__().column_names()), dtype=object)
    else:
        return None
    if names.shape[0] == 0:
        return None
    types = sorted({type(name).__qualname__ for name in names})
    if len(types) > 1 and "str" in types:
        raise TypeError(
            "Feature names are only supported if all input features have string names, but "
            f"your input has {types} as feature name / column name types. If you want feature "
            "names to be stored and validated, convert them all to strings (for example with "
            "X.columns = X.columns.astype(str)); otherwise remove the names or make them all "
            "non-strings."
        )
    return names if types == ["str"] else None


def check_feature_names(estimator_name, fitted_names, X) -> None:
    """Compares the column names of X with the `feature_names_in_` of a fitted estimator
    (None if it was fitted without names), as scikit-learn does: a warning when only one side
    has names, a ValueError when the names differ (by name or by order)."""
    names = feature_names(X)
    if names is None and fitted_names is None:
        return
    if fitted_names is None:
        warn_user(
            f"X has feature names, but {estimator_name} was fitted without feature names",
            UserWarning,
        )
        return
    if names is None:
        warn_user(
            f"X does not have valid feature names, but {estimator_name} was fitted with feature "
            "names",
            UserWarning,
        )
        return
    if len(names) == len(fitted_names) and np.array_equal(names, fitted_names):
        return
    unseen = sorted(set(names) - set(fitted_names))
    missing = sorted(set(fitted_names) - set(names))
    message = "The feature names should match those that were passed during fit.\n"
    for title, listed in (
        ("Feature names unseen at fit time:", unseen),
        ("Feature names seen at fit time, yet now missing:", missing),
    ):
        if listed:
            shown = [f"- {name}\n" for name in listed[:5]]
            message += title + "\n" + "".join(shown) + ("- ...\n" if len(listed) > 5 else "")
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    raise ValueError(message)


def refuse_overflow(values, method):
    """`values`, unless one is NaN: on finite input that is a score whose terms overflowed
    float64 with both signs (inf − inf), which has no sign to report."""
    if values.size == 1:  # one row: a Python comparison costs less than a ufunc call
        value = values.item()
        if value == value:
            return values
    nan = np.isnan(values)
    if nan.any():
        row = int(np.argwhere(nan)[0][0])
        raise ValueError(
            f"{method} overflows on row {row}: its terms exceed the float64 range with both "
            "signs, so the score has no value; rescale X (or use a smaller kernel degree)"
        )
    return values


def lists_classes(classes, known):
    """Whether `classes` is a list, tuple or 1-d array of exactly the fitted classes `known` (a
    list), in their sorted order: the form a stream passes on every `partial_fit` call, checked
    without NumPy's sorting. False means "not shown so", and the caller compares the general
    way."""
    try:
        if type(classes) is list:
            return bool(classes == known)
        if type(classes) is np.ndarray:
            return classes.ndim == 1 and bool(classes.tolist() == known)
        return type(classes) is tuple and bool(list(classes) == known)
    except (TypeError, ValueError):  # elements whose comparison is not a truth value
        return False


def classes_of(y):
    """The sorted distinct labels of y, at least two of them."""
    classes = _two_numbers(y)
    if classes is None:
        classes = np.unique(y)
    if classes.shape[0] < 2:
        raise ValueError(
            f"Classifier can't train when only one class is present (got one class: "
            f"{classes.tolist()}); it needs two classes."
        )
    return classes


def _two_numbers(y):
    """`np.unique(y)` when y holds exactly two distinct numbers (the binary case), found in a
    few linear passes instead of a sort (a sort of 200,000 labels costs 3% of a sparse `fit`);
    None otherwise. Not with ±0 among float labels, where the sort decides which zero is kept."""
    if y.dtype.kind not in "biuf" or y.size == 0:
        return None
    low, high = y.min(), y.max()
    if low == high or (y.dtype.kind == "f" and (low == 0 or high == 0)):
        return None
    if not ((y == low) | (y == high)).all():
        return None
    return np.array([low, high], dtype=y.dtype)
