"""Each concept of the Python package lives in the module named after it, and the module paths
that pickles name keep importing.

- `cwrs._estimator`: the estimator machinery (`Estimator`), the covariance it reports and the
  fit-retry policy of its fitting passes;
- `cwrs._classifier` / `cwrs._regressor`: the classifier and regressor bases;
- `cwrs._classifiers`, `cwrs._catalog`, `cwrs._regressors`: the learner classes (pickles name
  them by these modules);
- `cwrs._validation`: input validation only;
- `cwrs.cli`: the command line, a package with `io` (data and output files) and `report`.
"""

import importlib
import importlib.metadata
import pickle
import subprocess
import sys
from pathlib import Path

import cwrs


def test_the_bases_live_in_the_modules_named_after_them():
    from cwrs import _classifier, _estimator, _regressor

    assert _estimator.Estimator.__module__ == "cwrs._estimator"
    assert cwrs.Classifier is _classifier.Classifier
    assert _classifier.ConfidenceWeightedClassifier.__module__ == "cwrs._classifier"
    assert cwrs.Regressor is _regressor.Regressor
    assert _regressor.ConfidenceWeightedRegressor.__module__ == "cwrs._regressor"
    for base in (cwrs.Classifier, cwrs.Regressor):
        assert issubclass(base, _estimator.Estimator)


def test_the_estimator_module_holds_the_reported_covariance_and_the_fit_retry_policy():
    from cwrs import _estimator, _validation

    for name in ("feature_block", "dense_covariances", "learned_in_canonical_form"):
        assert callable(getattr(_estimator, name))
    assert not hasattr(_validation, "learned_in_canonical_form")


def test_the_learner_modules_hold_the_learners_pickles_name():
    """Pickles name each learner by its module (`cwrs._classifiers.AROW`, ...)."""
    for cls in cwrs.CLASSIFIERS + cwrs.REGRESSORS:
        assert cls.__module__ in ("cwrs._classifiers", "cwrs._catalog", "cwrs._regressors")
        assert getattr(importlib.import_module(cls.__module__), cls.__name__) is cls
    from cwrs._regressors import REGRESSORS

    assert all(not cls.__name__.startswith("ConfidenceWeighted") for cls in REGRESSORS)
    model = cwrs.AROWRegressor().fit([[0.0, 1.0], [1.0, 0.0]], [1.0, 2.0])
    assert b"cwrs._regressors" in pickle.dumps(model)


def test_the_command_line_is_a_package_with_its_io_and_report():
    from cwrs import cli
    from cwrs.cli import io, report

    assert Path(cli.__file__).name == "__init__.py"
    assert callable(cli.main)
    assert io.UsageError is cli.UsageError and report.UsageError is io.UsageError
    assert all(path.is_file() for path in io.BUNDLED.values())
    scripts = importlib.metadata.entry_points(group="console_scripts")
    assert [entry.value for entry in scripts if entry.name == "cwrs"] == ["cwrs.cli:main"]
    done = subprocess.run([sys.executable, "-m", "cwrs", "--version"], capture_output=True,
                          text=True, timeout=60, check=True)
    assert cwrs.__version__ in done.stdout + done.stderr
