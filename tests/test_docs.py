"""Every public name is documented, and the estimators' docstrings stay complete: the paper year
(docs/design.md §1), the update rule, every `__init__` parameter in the numpydoc "Parameters" section
and the fitted attributes."""

import ast
import inspect
import re
import sys
from pathlib import Path

import pytest

import cwrs
import cwrs._params
from cwrs._docs import _fill, documented_parameters

# The paper of each learner and its year (docs/design.md §1), written here independently of the code.
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
    "ALMA": 2001,
    "ROMMA": 2002,
    "AggressiveROMMA": 2002,
    "OGD": 2003,
    "IELLIP": 2009,
    "AdaGrad": 2011,
    "FTRL": 2013,
    "AROWRegressor": 2009,
    "PARegressor": 2006,
    "PA1Regressor": 2006,
    "PA2Regressor": 2006,
    "FeatureHasher": 2009,
    "HashingVectorizer": 2009,
}
ESTIMATORS = [*cwrs.CLASSIFIERS, *cwrs.REGRESSORS]
# Fitted attributes that `fit` sets on the instance (the others are properties of the class).
FIT_SET_ATTRIBUTES = ("classes_", "n_features_in_", "feature_names_in_")
ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
# The design document lives in the repository, in sections §1–§8.
DESIGN_CITATION = re.compile(r"docs/design\.md §(\d+)")
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
    assert {cls.__name__ for cls in ESTIMATORS} | {"FeatureHasher", "HashingVectorizer"} == set(
        PAPER_YEARS
    )


@pytest.mark.parametrize("obj", PUBLIC_CALLABLES, ids=lambda o: o.__name__)
def test_public_name_has_a_docstring(obj):
    assert obj.__doc__ and len(inspect.cleandoc(obj.__doc__)) > 40, obj


@pytest.mark.parametrize(
    "cls", [*ESTIMATORS, cwrs.FeatureHasher, cwrs.HashingVectorizer], ids=lambda c: c.__name__
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
    # The paragraph after the summary (when it fires, α and c), its lines joined.
    rule = " ".join(doc.split("\n\n")[1].split())
    assert "α =" in rule and ("Update when" in rule or "Every row" in rule), rule
    attributes = doc.split("\nAttributes\n----------\n", 1)[1]
    names = re.findall(r"^(\w+) :", attributes, re.MULTILINE)
    assert {"coef_", "intercept_", "n_features_in_", "n_updates_"} <= set(names)
    for name in names:  # every documented attribute exists on a fitted estimator's class
        assert hasattr(cls, name) or name in FIT_SET_ATTRIBUTES, name
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


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_documented_defaults_are_the_signature_defaults(cls):
    doc = inspect.cleandoc(cls.__doc__)
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name == "self":
            continue
        entry = re.search(rf"^{name} : .*default=(.+)$", doc, re.MULTILINE)
        assert entry, (cls.__name__, name)
        assert ast.literal_eval(entry.group(1)) == p.default, (cls.__name__, entry.group(0))


def _user_visible_docs():
    """(where, text) of the README, the user guide and every docstring `help()` shows for the
    package."""
    for page in PAGES:
        yield page.name, page.read_text(encoding="utf-8")
    for name, module in sorted(sys.modules.items()):
        if name == "cwrs" or name.startswith("cwrs."):
            yield name, module.__doc__ or ""
            for attribute in vars(module).values():
                if getattr(attribute, "__module__", None) == name and attribute.__doc__:
                    yield f"{name}.{attribute.__name__}", attribute.__doc__
                    for member in vars(attribute).values() if inspect.isclass(attribute) else ():
                        doc = getattr(member, "__doc__", None)
                        if doc and (inspect.isfunction(member) or isinstance(member, property)):
                            yield f"{name}.{attribute.__name__}", doc


def test_design_citations_point_into_the_repository():
    """The design is cited as docs/design.md §N (N a section of it), never as the DESIGN file
    or the `shared` folder outside the repository."""
    import cwrs.cli  # noqa: F401 - every module of the package, for its docstrings
    import cwrs.river  # noqa: F401

    cited = set()
    for where, text in _user_visible_docs():
        assert "DESIGN" not in text and "shared/" not in text, where
        cited.update(int(n) for n in DESIGN_CITATION.findall(text))
    design = (Path(__file__).resolve().parents[1] / "docs" / "design.md").read_text("utf-8")
    sections = {int(n) for n in re.findall(r"^## (\d+)\. ", design, re.MULTILINE)}
    assert cited and cited <= sections, (cited, sections)


_OPERATORS = ("=", "+", "−", "-", "·", "<", ">", "≤", "≥", "←", "/")


def _rule_paragraph_lines(cls):
    """The lines of the table-generated paragraphs of a docstring: title and update rule (the
    two paragraphs before "Parameters") and the rule parameters' descriptions."""
    doc = cls.__doc__
    head, parameters = doc.split("\nParameters\n----------\n")
    lines = [line for line in head.splitlines() if line.strip()][1:]
    params = cwrs._params.rule_entry(cls._rule_kind, cls._rule)["params"]
    for param in params:
        entry = parameters.split(f"{param['name']} : float")[1].split("\n")
        lines += [entry[1]] + [line for line in entry[2:] if line.startswith("    ")][:3]
    return [line for line in lines if line.strip()]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_table_docstrings_never_split_a_formula(cls):
    # A break inside a formula leaves an operator at a line's end or start, or a bracket open.
    for line in _rule_paragraph_lines(cls):
        words = line.split()
        assert words[0] not in _OPERATORS and words[-1] not in _OPERATORS, (cls, line)
        opened = sum(map(line.count, "([{")) - sum(map(line.count, ")]}"))
        assert opened == 0, (cls, line)


@pytest.mark.parametrize("shift", range(0, 60, 3))
def test_fill_keeps_a_formula_whole_wherever_the_line_ends(shift):
    formula = "α = max(0, [−mψ + √(m²φ⁴/4 + vφ²ζ)]/(vζ))"
    text = "word " * shift + f"Update when {formula} with ψ = 1 + φ²/2, then more prose follows."
    lines = _fill(text).splitlines()
    assert all(len(line) <= 96 for line in lines)
    assert any(formula in line for line in lines)
    assert any("ψ = 1 + φ²/2," in line for line in lines)
    assert " ".join(lines) == text
