"""Every public name is documented, and the estimators' docstrings stay complete: the paper year
(DESIGN §1), the update rule, every `__init__` parameter in the numpydoc "Parameters" section
and the fitted attributes."""

import inspect
import re

import pytest

import cwrs
from cwrs._docs import documented_parameters

# The paper of each learner and its year (DESIGN §1), written here independently of the code.
PAPER_YEARS = {
    "Perceptron": 1958,
    "PA": 2006,
    "PA1": 2006,
    "PA2": 2006,
    "SOP": 2005,
    "CW": 2008,
    "ExactCW": 2008,
    "AROW": 2009,
    "NAROW": 2010,
    "SCW1": 2012,
    "SCW2": 2012,
    "NHERD": 2010,
    "AROWRegressor": 2009,
    "PARegressor": 2006,
    "PA1Regressor": 2006,
    "PA2Regressor": 2006,
    "FeatureHasher": 2009,
}
ESTIMATORS = [*cwrs.CLASSIFIERS, *cwrs.REGRESSORS]
PUBLIC_CALLABLES = [
    getattr(cwrs, name) for name in cwrs.__all__ if callable(getattr(cwrs, name))
]


def _init_parameters(obj):
    target = obj if not inspect.isclass(obj) else obj.__init__
    return [
        name
        for name, p in inspect.signature(target).parameters.items()
        if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def test_every_estimator_has_a_paper_year():
    assert {cls.__name__ for cls in ESTIMATORS} | {"FeatureHasher"} == set(PAPER_YEARS)


@pytest.mark.parametrize("obj", PUBLIC_CALLABLES, ids=lambda o: o.__name__)
def test_public_name_has_a_docstring(obj):
    assert obj.__doc__ and len(inspect.cleandoc(obj.__doc__)) > 40, obj


@pytest.mark.parametrize(
    "cls", [*ESTIMATORS, cwrs.FeatureHasher], ids=lambda c: c.__name__
)
def test_class_docstring_names_paper_year_and_every_parameter(cls):
    doc = inspect.cleandoc(cls.__doc__)
    summary = doc.split("\n\n")[0]
    assert str(PAPER_YEARS[cls.__name__]) in summary, summary
    missing = set(_init_parameters(cls)) - documented_parameters(doc)
    assert not missing, f"{cls.__name__} does not document {sorted(missing)}"
    # Each entry says its default, as the signature has it.
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name == "self":
            continue
        entry = re.search(rf"^{name} : .*$", doc, re.MULTILINE)
        assert entry, (cls.__name__, name)
        assert "default=" in entry.group(0), entry.group(0)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_estimator_docstring_states_the_rule_and_fitted_attributes(cls):
    doc = inspect.cleandoc(cls.__doc__)
    rule = doc.split("\n\n")[1]  # the paragraph after the summary: when it fires, α and c
    assert "α =" in rule and ("Update when" in rule or "Every row" in rule), rule
    attributes = doc.split("\nAttributes\n----------\n", 1)[1]
    names = re.findall(r"^(\w+) :", attributes, re.MULTILINE)
    assert {"coef_", "intercept_", "n_features_in_", "n_updates_"} <= set(names)
    for name in names:  # every documented attribute exists on a fitted estimator's class
        assert hasattr(cls, name) or name in ("classes_", "n_features_in_"), name
    if issubclass(cls, cwrs.Classifier):
        assert {"classes_", "n_mistakes_"} <= set(names)


@pytest.mark.parametrize(
    "function", [cwrs.load_svmlight, cwrs.iter_svmlight], ids=lambda f: f.__name__
)
def test_functions_document_every_parameter(function):
    missing = set(_init_parameters(function)) - documented_parameters(function.__doc__)
    assert not missing, missing


def test_help_renders_and_parameters_stay_in_signature_order():
    doc = inspect.cleandoc(cwrs.AROW.__doc__)
    section = doc.split("\nParameters\n----------\n", 1)[1].split("\nAttributes\n")[0]
    names = re.findall(r"^(\w+) :", section, re.MULTILINE)
    assert names == _init_parameters(cwrs.AROW)
