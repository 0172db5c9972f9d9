"""The scikit-learn plumbing shared by the estimators that hold a cwrs estimator
(`SelectiveSampler`, `CalibratedClassifier`, `cwrs.bandit.ContextualBandit`), and their `save`:
the parameters are those of `__init__`, the held one is `estimator`, and `fit` learns a clone
of it."""

from __future__ import annotations

import copy
import inspect
from typing import TYPE_CHECKING, Any, cast

from ._params import InvalidParameterError

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._persist import ModelFile


def clone(estimator: Any) -> Any:
    """A new unfitted estimator with the same hyper-parameters (scikit-learn's `clone`, without
    needing scikit-learn: parameters are deep-copied, nested estimators cloned)."""
    params = estimator.get_params(deep=False)
    return type(estimator)(**{
        name: clone(value) if hasattr(value, "get_params") and not isinstance(value, type)
        else copy.deepcopy(value)
        for name, value in params.items()
    })


class MetaEstimator:
    """`get_params`, `set_params`, `__repr__` and `save` of an estimator holding `estimator`,
    from the parameters of its `__init__` and their defaults, and its state for pickles, files
    and merges (its `__dict__`; a subclass drops its caches from it)."""

    estimator: Any

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__.copy()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The names of `__init__`'s parameters, in order."""
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
        return [p.name for p in parameters]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters, as passed to `__init__` (with `deep`, also the estimator's, as
        `estimator__name`)."""
        params = {name: getattr(self, name) for name in self._get_param_names()}
        if deep and hasattr(self.estimator, "get_params"):
            for name, value in self.estimator.get_params(deep=True).items():
                params[f"estimator__{name}"] = value
        return params

    def set_params(self, **params: Any) -> Self:
        """Sets parameters (`estimator__name` sets one of the estimator's); they take effect
        at the next `fit`: a fitted `estimator_` keeps its own."""
        nested: dict[str, Any] = {}
        valid = self._get_param_names()
        for name, value in params.items():
            outer, _, inner = name.partition("__")
            if outer not in valid or (inner and outer != "estimator"):
                raise InvalidParameterError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {valid!r}."
                )
            if inner:
                nested[inner] = value
            else:
                setattr(self, name, value)
        if nested:
            self.estimator.set_params(**nested)
        return self

    def __repr__(self) -> str:
        """The estimator's repr, then every parameter that is not at its default."""
        shown = [f"{self.estimator!r}"]
        parameters = inspect.signature(type(self).__init__).parameters
        for name in self._get_param_names()[1:]:
            value, default = getattr(self, name), parameters[name].default
            if not (type(value) is type(default) and value == default):
                shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def save(self, file: ModelFile) -> None:
        """Writes this estimator (the estimator it holds, and, once fitted, its fitted one and
        the rest of its state) to `file` in the .cwrs format; `cwrs.load(file)` reads it back
        (docs/model-format.md)."""
        from ._persist import save

        save(cast(Any, self), file)  # one of the estimators holding estimators it saves
