"""One validation of the hyper-parameters, whatever the path: `fit`, a `partial_fit` after
`set_params` (and `cwrs.load`) accept and refuse the same values with the same error, and every
value `fit` accepts can be saved, loaded and pickled."""

import io
import math
import pickle
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cwrs
from cwrs._classifiers import CLASSIFIERS
from cwrs._regressors import REGRESSORS

RNG = np.random.default_rng(20)
X = RNG.normal(size=(30, 3))
Y = (X[:, 0] + X[:, 1] > 0).astype(int)
T = X @ np.array([1.0, -2.0, 0.5]) + 0.1


def dot_kernel(A, B):
    return A @ B.T


# Values of every kind a user may pass. Large integers only where they cost nothing (an n_iter
# of 2**31 is a valid request for a very long fit).
PLAIN = [
    None, True, False, 0, 1, 2, 3, -1, 0.0, 0.5, 1e-4, 2.0, -0.5, math.inf, -math.inf, math.nan,
    np.float64("nan"), np.float64("inf"), np.float64(0.25), np.float32(0.5), np.int64(2),
    np.int64(-1), np.bool_(True), np.bool_(False), complex(100), 1 + 1j, np.complex128(2),
    Fraction(1, 2), "rbf", "poly", "linear", "auto", "l1", "l1-uniform", "full", "lowrank",
    "diag", "ovr", "max-score", "rff", "fobos", "rda", "hinge", "", [1], (1, 2), {"a": 1},
]
LARGE = {
    "average": [2**63 - 1, 2**63, 2**64],
    "random_state": [2**32 - 1, 2**32, 2**63, -(2**31)],
    "rank": [2**31, 2**63],
    "budget": [2**30 + 1, 2**63],
}
RANDOM_STATES = [
    lambda: np.random.RandomState(1),
    lambda: np.random.RandomState(np.random.PCG64(2)),
    lambda: np.random.default_rng(3),
    lambda: np.random.Generator(np.random.MT19937(4)),
    lambda: np.random.Generator(np.random.Philox(5)),
    lambda: np.random.Generator(np.random.SFC64(6)),
    lambda: np.random.Generator(np.random.PCG64DXSM(7)),
]
CHEAP_ONLY = {"n_iter", "n_jobs", "n_components", "budget", "degree"}


def value_for(name):
    values = st.sampled_from(PLAIN)
    if name not in CHEAP_ONLY:
        values = values | st.sampled_from(LARGE.get(name, [2**31]))
    if name == "random_state":
        values = values | st.sampled_from(RANDOM_STATES).map(lambda make: make())
    if name == "kernel":
        values = values | st.just(dot_kernel)
    return values


@st.composite
def settings_of(draw):
    cls = draw(st.sampled_from(CLASSIFIERS + REGRESSORS))
    names = draw(st.lists(st.sampled_from(cls._get_param_names()), max_size=3, unique=True))
    params = {name: draw(value_for(name)) for name in names}
    # Where a parameter needs another to act, set that too now and then.
    extra = draw(st.sampled_from([{}, {"kernel": "rbf"}, {"kernel_approximation": "rff"},
                                  {"penalty": "l1"}, {"covariance": "lowrank"}]))
    valid = set(cls._get_param_names())
    params = {**{k: v for k, v in extra.items() if k in valid and k not in params}, **params}
    return cls, params


def target_of(cls):
    return T if issubclass(cls, cwrs.Regressor) else Y


def outcome(call):
    """None if `call()` succeeds, else the type and message of its error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except Exception as error:  # noqa: BLE001 (the outcome is compared, whatever it is)
            return type(error), str(error)
    return None


def fitted_with(cls, params):
    est = cls(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, target_of(cls))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settings_of())
def test_fit_and_a_partial_fit_after_set_params_accept_and_refuse_alike(case):
    cls, params = case
    by_fit = outcome(lambda: fitted_with(cls, params))
    continued = fitted_with(cls, {})

    def set_and_continue():
        continued.set_params(**params)
        continued.partial_fit(X, target_of(cls))

    assert outcome(set_and_continue) == by_fit, (cls.__name__, params)


@pytest.mark.parametrize(
    "cls, params, message",
    [
        (cwrs.ROMMA, {"average": True}, "average"),
        (cwrs.ROMMA, {"kernel": "rbf"}, "kernel"),
        (cwrs.AROW, {"average": 2**63}, "average"),
        (cwrs.PA, {"random_state": -1}, "random_state"),
        (cwrs.AROW, {"random_state": 2**32}, "random_state"),
    ],
)
def test_values_fit_refuses_are_refused_after_set_params(cls, params, message):
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(X, Y)
    est = cls().fit(X, Y)
    before = pickle.dumps(est)
    est.set_params(**params)
    with pytest.raises(ValueError, match=message):
        est.partial_fit(X, Y)
    est.set_params(**{name: cls().get_params()[name] for name in params})
    assert pickle.dumps(est) == before  # refused before learning anything


def same_value(a, b):
    if isinstance(a, np.random.RandomState):
        return type(b) is np.random.RandomState and repr(a.get_state(legacy=False)) == repr(
            b.get_state(legacy=False)
        )
    if isinstance(a, np.random.Generator):
        return type(b) is np.random.Generator and repr(a.bit_generator.state) == repr(
            b.bit_generator.state
        )
    if isinstance(a, float):  # np.float64 too: a saved model holds the Python float
        return isinstance(b, float) and (float(a) == float(b) or math.isnan(a) and math.isnan(b))
    return repr(a) == repr(b) or (type(a) is type(b) and bool(np.all(a == b)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(settings_of())
def test_every_value_fit_accepts_saves_loads_and_pickles(case):
    cls, params = case
    try:
        est = fitted_with(cls, params)
    except Exception:  # noqa: BLE001 (refused up front: nothing to keep)
        return
    copies = [pickle.loads(pickle.dumps(est))]
    if not callable(est.kernel if hasattr(est, "kernel") else None):
        buffer = io.BytesIO()
        est.save(buffer)
        buffer.seek(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            copies.append(cwrs.load(buffer))
    for copy in copies:
        for name, value in est.get_params().items():
            assert same_value(value, copy.get_params()[name]), (name, value)
        np.testing.assert_array_equal(copy.predict(X), est.predict(X))


@pytest.mark.parametrize(
    "params",
    [
        {"alpha": np.float64("nan")},
        {"alpha": np.float64("inf")},
        {"a": np.float64(2.0), "alpha": np.float64("-inf")},
        {"random_state": np.random.RandomState(np.random.PCG64(1))},
        {"random_state": np.random.Generator(np.random.Philox(1))},
    ],
    ids=["alpha nan", "alpha inf", "alpha -inf", "RandomState(PCG64)", "Generator(Philox)"],
)
def test_numpy_values_round_trip_through_a_file(params):
    est = fitted_with(cwrs.AROW, params)
    buffer = io.BytesIO()
    est.save(buffer)
    buffer.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = cwrs.load(buffer)
    for name, value in params.items():
        assert same_value(value, getattr(loaded, name))


@pytest.mark.parametrize(
    "name, value",
    [
        ("n_components", complex(100)),
        ("n_components", np.complex128(100)),
        ("alpha", 1 + 1j),
        ("r", Fraction(1, 2)),
        ("alpha", object()),
        ("alpha", np.zeros((1,) * 40)),  # more axes than a file's array may have
    ],
)
def test_values_that_cannot_be_saved_are_refused_at_fit(name, value):
    with pytest.raises(ValueError, match=name):
        cwrs.AROW(**{name: value}).fit(X, Y)


# Values only the core's rules refuse: the message is the core's own (ModelConfig::check), word
# for word, whichever call meets them first.
CORE_REFUSALS = [
    (cwrs.AROW, {"a": 0.0}, "a must be a positive finite number, got 0"),
    (cwrs.AROW, {"r": -1.0}, "r must be a positive finite number, got -1"),
    (cwrs.PARegressor, {"epsilon": -0.5}, "epsilon must be a non-negative finite number, got -0.5"),
    (cwrs.AROW, {"covariance": "dense"},
     'covariance must be "diag" or "full" (or "lowrank", with rank), got "dense"'),
    (cwrs.AROW, {"covariance": "lowrank", "rank": 5000},
     "rank must be an integer in [1, 1024], got 5000"),
    (cwrs.AROW, {"penalty": "l1", "alpha": -1.0},
     "alpha must be a non-negative finite number, got -1"),
    (cwrs.AROW, {"penalty": "l1", "covariance": "full"},
     'an L1 penalty needs the diagonal covariance, not "full"'),
    (cwrs.AROW, {"penalty": "l1", "average": True},
     "average cannot be combined with an L1 penalty"),
    (cwrs.AROW, {"penalty": "l1", "process_noise": 0.1},
     "process_noise cannot be combined with an L1 penalty"),
    (cwrs.AROW, {"penalty": "l1", "kernel": "rbf"},
     "an L1 penalty applies to the primal learners, not with a kernel"),
    (cwrs.AROW, {"process_noise": -1.0},
     'process_noise must be a non-negative finite number or "auto", got -1'),
    (cwrs.AROW, {"process_noise": "often"},
     'process_noise must be a non-negative finite number or "auto", got "often"'),
    (cwrs.AROW, {"kernel": "poly", "coef0": -1.0},
     "poly kernel needs a degree in [1, 2147483647] and a finite coef0 >= 0, got degree 3, "
     "coef0 -1"),
    (cwrs.AROW, {"kernel": "rbf", "budget": 5, "average": True},
     "average cannot be combined with a kernel budget"),
    (cwrs.AROW, {"kernel": "rbf", "a": math.inf}, "a must be a positive finite number, got inf"),
]


@pytest.mark.parametrize("cls, params, message", CORE_REFUSALS)
def test_the_core_refuses_with_its_own_message_on_every_path(cls, params, message):
    y = target_of(cls)
    fit_args = {} if issubclass(cls, cwrs.Regressor) else {"classes": [0, 1]}
    calls = {
        "fit": lambda: cls(**params).fit(X, y),
        "partial_fit": lambda: cls(**params).partial_fit(X, y, **fit_args),
    }
    for call in calls.values():
        assert outcome(call) == (cwrs.InvalidParameterError, message)
    est = fitted_with(cls, {})
    before = pickle.dumps(est)
    est.set_params(**params)
    assert outcome(lambda: est.partial_fit(X, y)) == (cwrs.InvalidParameterError, message)
    est.set_params(**{name: cls().get_params()[name] for name in params})
    assert pickle.dumps(est) == before  # refused before learning anything
