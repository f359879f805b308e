"""shapiq's own explainers (TabularExplainer, Explainer, AgnosticExplainer)
running fastcredit's approximators: passed as instances, and chosen by shapiq
itself under fastcredit.shapiq.use(). Skipped without shapiq or scikit-learn."""
import warnings

import numpy as np
import pytest

shapiq = pytest.importorskip("shapiq")
sklearn_neighbors = pytest.importorskip("sklearn.neighbors")

import fastcredit.shapiq as fs  # noqa: E402
from shapiq.explainer import configuration  # noqa: E402

N_FEATURES = 6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, N_FEATURES))
    y = x[:, 0] * x[:, 1] + x[:, 2] - 0.5 * x[:, 3]
    model = sklearn_neighbors.KNeighborsRegressor(n_neighbors=5).fit(x, y)
    return model, x


class CountingModel:
    """model.predict, counting calls and rows."""

    def __init__(self, model):
        self.model, self.calls, self.rows = model, 0, 0

    def __call__(self, x):
        self.calls += 1
        self.rows += len(x)
        return self.model.predict(x)


def ours(obj) -> bool:
    """Whether a class (or an instance's class) is fastcredit's."""
    cls = obj if isinstance(obj, type) else type(obj)
    return cls.__module__.startswith("fastcredit.shapiq")


def tabular(model, x, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # shapiq's note on the background's size
        return shapiq.TabularExplainer(model, x[:20], imputer="marginal", random_state=0,
                                       **kwargs)


#: (fastcredit's class, its constructor arguments, index, max_order, budget):
#: odd budgets (shapiq's marginal samplers spend 1 + 2k of one), and for
#: STII one that buys shapiq's sampler a permutation (at 41 it spends 8 on
#: the lower orders and stops)
INSTANCES = [(fs.KernelSHAP, {}, "SV", 1, 41), (fs.SVARM, {}, "SV", 1, 41),
             (fs.StratifiedSamplingSV, {}, "SV", 1, 41), (fs.OwenSamplingSV, {}, "SV", 1, 41),
             (fs.PermutationSamplingSV, {}, "SV", 1, 41),
             (fs.PermutationSamplingSII, {"max_order": 2, "index": "k-SII"}, "k-SII", 2, 41),
             (fs.PermutationSamplingSTII, {"max_order": 2}, "STII", 2, 201)]


@pytest.mark.parametrize("cls,kwargs,index,max_order,budget", INSTANCES,
                         ids=[c[0].__name__ for c in INSTANCES])
def test_tabular_explainer_runs_an_instance_of_ours(data, cls, kwargs, index, max_order,
                                                    budget):
    """An instance passed as approximator= is used as it is; the model sees
    no more calls and rows than with shapiq's class of the same name at that
    budget."""
    model, x = data
    counts = {}
    for side, make in (("ours", cls), ("shapiq", getattr(shapiq, cls.__name__))):
        counting = CountingModel(model)
        explainer = tabular(counting, x, index=index, max_order=max_order,
                            approximator=make(N_FEATURES, random_state=0, **kwargs))
        assert ours(explainer.approximator) == (side == "ours")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = explainer.explain(x[0], budget=budget)
        assert isinstance(result, shapiq.InteractionValues)
        assert np.all(np.isfinite(result.values))
        counts[side] = (counting.calls, counting.rows)
    assert counts["ours"][1] <= counts["shapiq"][1]
    assert counts["ours"][0] <= counts["shapiq"][0]


@pytest.mark.parametrize("cls", [fs.KernelSHAP, fs.SVARM, fs.StratifiedSamplingSV])
def test_an_instance_of_ours_is_exact_at_the_full_budget(data, cls):
    model, x = data
    explainer = tabular(model.predict, x, index="SV", max_order=1,
                        approximator=cls(N_FEATURES, random_state=1))
    got = explainer.explain(x[3], budget=2**N_FEATURES)
    want = fs.ExactComputer(explainer.imputer, N_FEATURES)("SV", 1)
    for i in range(N_FEATURES):
        assert got[(i,)] == pytest.approx(want[(i,)], abs=1e-9)


def test_agnostic_explainer_runs_an_instance_of_ours():
    game = fs.TableGame(np.random.default_rng(2).normal(size=1 << 5))
    explainer = shapiq.AgnosticExplainer(game, index="SV", max_order=1,
                                         approximator=fs.SVARM(5, random_state=0))
    got = explainer.explain(budget=2**5)
    want = fs.ExactComputer(game)("SV", 1)
    np.testing.assert_allclose([got[(i,)] for i in range(5)], [want[(i,)] for i in range(5)],
                               atol=1e-12)


def test_use_makes_shapiq_choose_ours_and_restore_gives_shapiq_s_back(data):
    model, x = data
    with fs.use():
        assert shapiq.ExactComputer is fs.ExactComputer
        auto = tabular(model.predict, x, index="SV", max_order=1)      # shapiq picks KernelSHAP
        named = tabular(model.predict, x, index="SV", max_order=1, approximator="svarm")
        generic = shapiq.Explainer(model, x[:20], index="SV", max_order=1,
                                   imputer="marginal")
        agnostic = shapiq.AgnosticExplainer(lambda rows: rows.sum(axis=1) ** 2.0,
                                            n_players=4, index="SV", max_order=1)
        for explainer, cls in ((auto, fs.KernelSHAP), (named, fs.SVARM),
                               (generic, fs.KernelSHAP), (agnostic, fs.KernelSHAP)):
            assert type(explainer.approximator) is cls
        assert isinstance(generic, shapiq.TabularExplainer)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = generic.explain(x[1], budget=30)
        assert result.estimation_budget <= 30
    assert shapiq.ExactComputer is fs.ExactComputer.__mro__[1]
    assert not ours(tabular(model.predict, x, index="SV", max_order=1).approximator)


def test_use_replaces_every_class_of_ours_in_every_configuration(data):
    """Every class of shapiq's explainer configurations that fastcredit
    replaces is built as fastcredit's under use(); the others stay shapiq's."""
    replaced = {theirs.__name__ for _, theirs in fs.explainers._replacements()}
    assert {"ExactComputer", "KernelSHAP", "SVARM", "PermutationSamplingSII"} <= replaced
    with fs.use() as swap:
        for kind, classes in configuration.APPROXIMATOR_CONFIGURATIONS.items():
            for index, cls in classes.items():
                assert ours(cls) == (cls.__name__ in replaced), (kind, index, cls)
        for name in ("SVARM", "KernelSHAP", "PermutationSamplingSV", "ExactComputer"):
            assert getattr(shapiq, name) is getattr(fs, name)
            assert getattr(configuration, name, getattr(fs, name)) is getattr(fs, name)
        swap.restore()
        swap.restore()                      # a second restore does nothing
        assert not ours(shapiq.SVARM)
    for classes in configuration.APPROXIMATOR_CONFIGURATIONS.values():
        assert not any(ours(cls) for cls in classes.values())


def test_use_nests_and_the_inner_restore_keeps_the_outer_swap():
    with fs.use():
        with fs.use():
            assert shapiq.KernelSHAP is fs.KernelSHAP
        assert shapiq.KernelSHAP is fs.KernelSHAP
    assert shapiq.KernelSHAP is not fs.KernelSHAP
