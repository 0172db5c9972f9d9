"""Every example of a public docstring of cwrs runs as written (doctest): the Examples sections of
the estimators, generated with their docstrings, and any other docstring that shows a session."""

import doctest
import inspect

import pytest

import cwrs
import cwrs.bandit
import cwrs.dask
import cwrs.river

PUBLIC = [
    (f"{module.__name__}.{name}", getattr(module, name))
    for module in (cwrs, cwrs.bandit, cwrs.dask, cwrs.river)
    for name in module.__all__
]
WITH_EXAMPLES = [(name, obj) for name, obj in PUBLIC if ">>>" in (inspect.getdoc(obj) or "")]


def test_every_estimator_has_examples_and_references():
    for cls in (*cwrs.CLASSIFIERS, *cwrs.REGRESSORS):
        doc = inspect.getdoc(cls) or ""
        assert "Examples\n--------\n>>>" in doc and "References\n----------\n.. [1]" in doc, cls


@pytest.mark.parametrize("name, obj", WITH_EXAMPLES, ids=[name for name, _ in WITH_EXAMPLES])
def test_docstring_examples_run(name, obj):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, name, globs={})
    assert tests and any(test.examples for test in tests), name
    for test in tests:
        runner.run(test)
    failed, attempted = runner.summarize(verbose=False)
    assert attempted > 0 and failed == 0, name
