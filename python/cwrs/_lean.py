"""The lean paths of a fitted estimator: `partial_fit` of a few rows and the predictions of
float64 rows, straight into the native model's `*_lean` methods, skipping the batch machinery.

An estimator holds them as one `LeanPaths` object under `LEAN` in its `__dict__`, read at once,
so that a path never pairs a model with another fit's labels. They are built by `enable` after a
validated fit, and dropped by `forget` whenever what they were built from may have changed:
assigning one of `SOURCES` (the river adapter installs a grown model so), `set_params`,
unpickling, a restored snapshot. The next checked `partial_fit` enables them again.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

# The estimator attribute holding the lean paths; only in memory, never pickled.
LEAN = "_lean"

# The fitted attributes the lean paths are built from.
SOURCES = frozenset(("_model", "_feature_map", "n_features_in_", "classes_", "feature_names_in_"))

# The native model kinds that have lean methods (primal models).
KINDS = ("binary", "multiclass", "regressor")


class LeanPaths:
    """The bound lean methods of one fitted native model, with what they need to answer.

    The lean methods return None (`learn` False) for what they do not take; the caller then
    takes the general path. Callers load a method from its slot before calling it
    (`(decide := lean.decision)(X)`): `lean.decision(X)` compiles to a method lookup, which
    CPython does not specialise for a slot (about 100 instructions more per call).
    """

    __slots__ = (
        "model", "targets", "n_features", "learn", "decision", "predict", "proba", "classes",
        "class_rows", "class_list",
    )

    def __init__(self, model: Any, targets: Optional[dict], n_features: int, classes: Any,
                 plain_predict: bool, learns: bool = True) -> None:
        self.model = model
        # label -> native target (classifiers), None for regressors.
        self.targets = targets
        self.n_features = n_features
        # A model weighting its classes learns on the general path, which applies the weights.
        self.learn: Callable[..., bool] = model.learn_lean if learns else _general_path
        self.decision: Callable[[Any], Any] = model.decision_lean
        # None where `predict` must go through a subclass's `decision_function`.
        self.predict: Optional[Callable[..., Any]] = model.predict_lean if plain_predict else None
        self.proba: Callable[[Any], Any] = model.proba_lean
        # classes_, its one-element slices (the labels `predict` returns) and its Python values
        # (what `classes=` is compared with); None for regressors.
        self.classes = classes
        self.class_rows = (
            () if classes is None else tuple(classes[k : k + 1] for k in range(len(classes)))
        )
        self.class_list = None if classes is None else classes.tolist()


def enable(estimator: Any, targets: Callable[[Any], Optional[dict]], plain_predict: bool) -> None:
    """Builds the lean paths of `estimator`'s fitted model if they apply: a primal model
    without feature map, fitted without feature names (a bare row must warn about the missing
    names). Called holding the estimator's lock, after validation."""
    state = estimator.__dict__
    model = state["_model"]
    if model.kind in KINDS and state.get("_feature_map") is None and (
        "feature_names_in_" not in state
    ):
        classes = state.get("classes_")
        state[LEAN] = LeanPaths(
            model, targets(model), state["n_features_in_"], classes,
            plain_predict and classes is not None, state.get("class_weight") is None,
        )


def _general_path(*args: Any) -> bool:
    """A lean `learn` that never applies: the caller takes the general path."""
    return False


def forget(estimator: Any) -> None:
    """Drops the lean paths: the general path answers until `enable` builds them again."""
    estimator.__dict__.pop(LEAN, None)
