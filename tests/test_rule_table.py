"""The estimators agree with the rule table of the Rust core (`cwrs._cwrs.rule_table()`):
every `__init__` signature is pinned to the table (the rule's own parameters and their defaults,
first) and to one shared list (the parameters the learners have in common, in order), every
table entry has a class, and the hyper-parameter checks follow the table's ranges."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import cwrs
from cwrs import _cwrs, _typing
from cwrs._classifier import ConfidenceWeightedClassifier
from cwrs._regressor import ConfidenceWeightedRegressor
from cwrs._params import (
    CLASSIFIER_PARAMETERS,
    REGRESSOR_PARAMETERS,
    RULES,
    SECOND_ORDER_PARAMETERS,
    shared_parameters,
)

ESTIMATORS = [*cwrs.CLASSIFIERS, *cwrs.REGRESSORS]
TABLE = _cwrs.rule_table()


def _kind(cls):
    return "classification" if issubclass(cls, cwrs.Classifier) else "regression"


def _signature(cls):
    return {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self"
    }


def test_every_table_entry_has_one_class_and_every_class_an_entry():
    classes = {(_kind(cls), cls._rule): cls for cls in ESTIMATORS}
    assert len(classes) == len(ESTIMATORS)
    assert set(classes) == {(entry["kind"], entry["name"]) for entry in TABLE}
    assert [e["name"] for e in TABLE if e["kind"] == "classification"] == _cwrs.RULE_NAMES


def test_the_table_is_complete():
    for entry in TABLE:
        assert entry["title"] and entry["reference"] and "α =" in entry["summary"], entry
        for param in entry["params"]:
            assert param["low"] < param["high"] and param["doc"], param
            default = param["default"]
            assert param["low"] < default < param["high"] or (
                default == param["low"] and not param["low_open"]
            ), param


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_signature_is_the_rule_parameters_then_the_shared_ones(cls):
    entry = RULES[_kind(cls), cls._rule]
    signature = _signature(cls)
    assert all(
        p.kind is p.KEYWORD_ONLY
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name != "self"
    )
    rule_params = {param["name"]: param["default"] for param in entry["params"]}
    names = list(signature)
    # The rule's own parameters first (in any order), with the table's defaults.
    assert set(names[: len(rule_params)]) == set(rule_params), names
    assert {name: signature[name] for name in rule_params} == rule_params
    for name, default in rule_params.items():
        assert type(signature[name]) is float, (name, default)
    # Then the class's own non-numeric ones (OGD's loss), in order, with their defaults.
    own = getattr(cls, "_own_params", {})
    after = names[len(rule_params) : len(rule_params) + len(own)]
    assert {name: signature[name] for name in after} == own
    # Then the shared ones, in their order, with their defaults.
    shared = dict(CLASSIFIER_PARAMETERS if _kind(cls) == "classification" else REGRESSOR_PARAMETERS)
    if entry["second_order"]:
        shared = {**SECOND_ORDER_PARAMETERS, **shared}
    rest = {name: signature[name] for name in names[len(rule_params) + len(own) :]}
    assert list(rest) == list(shared)
    for name, default in shared.items():
        assert rest[name] == default and type(rest[name]) is type(default), name


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_the_typed_shared_parameters_are_the_signatures(cls):
    """What mypy and IDEs see (`**params: Unpack[<TypedDict>]`) is what the signature and
    `__init__` take, with defaults of the declared types."""
    annotation = cls.__init__.__annotations__["params"]
    typed = getattr(_typing, re.fullmatch(r"Unpack\[(\w+)\]", annotation).group(1))
    assert set(typed.__annotations__) == set(shared_parameters(cls))
    estimator = cls(**shared_parameters(cls))
    assert estimator.get_params() == cls().get_params()
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        cls(bogus=1)
    if not entry_is_second_order(cls):
        with pytest.raises(TypeError, match="unexpected keyword argument 'covariance'"):
            cls(covariance="full")


def entry_is_second_order(cls):
    return RULES[_kind(cls), cls._rule]["second_order"]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_order_and_rule_parameters_come_from_the_table(cls):
    entry = RULES[_kind(cls), cls._rule]
    assert cls._second_order == entry["second_order"]
    assert cls._rule_params == tuple(param["name"] for param in entry["params"])
    confidence_weighted = (ConfidenceWeightedClassifier, ConfidenceWeightedRegressor)
    assert issubclass(cls, confidence_weighted) == entry["second_order"]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_docstring_states_the_table_entry(cls):
    entry = RULES[_kind(cls), cls._rule]
    doc = " ".join(inspect.cleandoc(cls.__doc__).split())
    assert entry["reference"] in doc and " ".join(entry["summary"].split()) in doc
    for param in entry["params"]:
        # A parameter the estimator also takes as "auto" (AROWRegressor's r) says so.
        declared = rf"^{param['name']} : float( or \"auto\")?, default={param['default']!r}$"
        assert re.search(declared, cls.__doc__, re.MULTILINE), param["name"]
        assert " ".join(param["doc"].rstrip(".").split()) in doc


def _fit(estimator):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
    if isinstance(estimator, cwrs.Classifier):
        return estimator.fit(X, [0, 1, 1, 0])
    return estimator.fit(X, [0.5, -1.0, 0.2, 1.0])


def _outside(param):
    """Values just outside a parameter's range, and NaN."""
    low, high = param["low"], param["high"]
    values = [np.nan, low if param["low_open"] else np.nextafter(low, -np.inf)]
    values.append(np.inf if high == np.inf else high if param["high_open"] else high + 1)
    return values


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_rule_parameter_is_checked_against_its_range(cls):
    entry = RULES[_kind(cls), cls._rule]
    for param in entry["params"]:
        name = param["name"]
        for value in _outside(param):
            message = f"{name} must {param['requirement']}, got"
            with pytest.raises(ValueError, match=message.replace("(", r"\(")):
                _fit(cls(**{name: value}))
        with pytest.raises(ValueError, match=f"{name} must be a real number"):
            _fit(cls(**{name: "1"}))
        # The default and values just inside pass.
        _fit(cls(**{name: param["default"]}))


def test_checks_need_no_model():
    """A `partial_fit` after `set_params` refuses a bad value without building a model."""
    model = _fit(cwrs.AROWRegressor())
    model.set_params(r=0.0)
    with pytest.raises(ValueError, match="r must be a positive finite number"):
        model.partial_fit(np.ones((1, 2)), [1.0])
    assert model._model.config["params"] == {"r": 1.0}
