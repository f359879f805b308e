"""fastcredit.replay: record/replay, the do() operators, the game over steps,
budgets, concurrency and errors."""
import asyncio
import math

import numpy as np
import pytest

import fastcredit as fc
from fastcredit import replay as rp
from fastcredit.replay import examples


# --- agents --------------------------------------------------------------------

def counting_agent(max_steps=4, policy=None):
    """A deterministic agent whose trajectory is computed by hand: a_t = t +
    the sum of the observations so far, o_t = 2 a_t."""
    def count(history, rng):
        return history.step + sum(history.observations)
    return rp.Agent(policy or count, lambda a, h, rng: 2 * a,
                    outcome=lambda traj: float(traj.actions[-1]), max_steps=max_steps)


def noisy_agent(is_async=False, max_steps=5, counter=None):
    """Random actions from the step's stream; tools add their own noise."""
    def choose(history, rng):
        if counter is not None:
            counter.append(history.step)
        return rp.Decision(int(rng.integers(3)), logprob=math.log(1 / 3))

    def tools(action, history, rng):
        return (action, float(rng.random()))

    async def achoose(history, rng):
        await asyncio.sleep(0)
        return choose(history, rng)

    def outcome(traj):
        return float(sum(a for a in traj.actions) >= 5)
    return rp.Agent(achoose if is_async else choose, tools, outcome, max_steps=max_steps)


# --- record and replay -----------------------------------------------------------

@pytest.mark.parametrize("is_async", [False, True])
def test_record_then_replay_reproduces_it(is_async):
    rec = rp.record(noisy_agent(is_async), seed=7)
    assert rec.n_steps == 5 and rec.seed == 7
    assert all(s.source == "policy" and s.logprob == pytest.approx(math.log(1 / 3))
               for s in rec.steps)
    again = rp.record(noisy_agent(is_async), seed=7)
    assert again.trajectory == rec.trajectory
    rep = rp.replay(rec)
    assert rep.action_match == 1.0 and rep.n_compared == 5 and rep.first_divergence is None
    assert rep.trajectory.actions == rec.actions
    assert rep.trajectory.observations == rec.trajectory.observations
    assert rep.trajectory.outcome == rec.outcome
    # another seed is another run
    assert rp.record(noisy_agent(is_async), seed=8).trajectory != rec.trajectory


def test_sync_and_async_agents_draw_the_same_streams():
    assert rp.record(noisy_agent(False), seed=3).trajectory == \
        rp.record(noisy_agent(True), seed=3).trajectory


def test_action_match_rate_of_a_policy_that_ignores_its_stream():
    """A policy that is not a function of (history, stream) (a hosted model)
    does not reproduce: the rate counts the steps that matched."""
    calls = []

    def drifting(history, rng):
        calls.append(1)
        return len(calls) % 2          # 1, 0, 1, 0 at record; 1, 0, ... shifted at replay
    agent = rp.Agent(drifting, lambda a, h, rng: None, lambda t: 0.0, max_steps=4)
    rec = rp.record(agent)
    assert rec.actions == (1, 0, 1, 0)
    calls.append(1)                    # the replay starts one call later: every action flips
    rep = rp.replay(rec)
    assert rep.action_match == 0.0 and rep.first_divergence == 0
    calls.clear()
    assert rp.replay(rec).action_match == 1.0


def test_a_shorter_replay_counts_unreached_steps_as_mismatches():
    ends = iter([3, 1])

    def tools(action, history, rng):
        return rp.Transition(None, terminated=history.step == stop)
    stop = next(ends)
    rec = rp.record(rp.Agent(lambda h, rng: "a", tools, lambda t: 0.0, max_steps=8))
    assert rec.n_steps == 4 and rec.trajectory.terminated
    stop = next(ends)
    rep = rp.replay(rec)
    assert len(rep.trajectory) == 2 and rep.action_match == 0.5 and rep.first_divergence == 2


def test_environment_with_reset_and_step_methods():
    class Env:
        def reset(self, rng):
            return int(rng.integers(100))

        def step(self, action, history, rng):
            return rp.Transition(history.initial + action, terminated=action == 2)
    rec = rp.record(rp.Agent(lambda h, rng: h.step, Env(), lambda t: 1.0), seed=4)
    assert rec.actions == (0, 1, 2) and rec.trajectory.terminated
    assert rec.trajectory.observations == tuple(rec.trajectory.initial + a for a in (0, 1, 2))
    assert rp.replay(rec).trajectory == rec.trajectory


def test_a_run_is_cut_off_at_max_steps():
    rec = rp.record(counting_agent(max_steps=3))
    assert rec.n_steps == 3 and not rec.trajectory.terminated


# --- the do() operators against hand-computed trajectories ------------------------

def test_counting_agent_record():
    rec = rp.record(counting_agent())
    assert rec.actions == (0, 1, 4, 13)
    assert rec.trajectory.observations == (0, 2, 8, 26)
    assert rec.outcome == 13.0


@pytest.mark.parametrize("intervention, actions, observations, sources", [
    (rp.Resample(2), (0, 1, 4, 13), (0, 2, 8, 26),
     ("recorded", "recorded", "policy", "policy")),
    (rp.ForceAction(1, 5), (0, 5, 12, 37), (0, 10, 24, 74),
     ("recorded", "forced", "policy", "policy")),
    (rp.ReplaceObservation(1, 100), (0, 1, 102, 307), (0, 100, 204, 614),
     ("recorded", "held", "policy", "policy")),
    # the context at 2 shows observations (0, 50): a_2 = 2 + 50; the run goes on from it
    (rp.EditContext(2, lambda h: rp.History(h.initial, h.actions, (0, 50))),
     (0, 1, 52, 157), (0, 2, 104, 314), ("recorded", "recorded", "policy", "policy")),
    (rp.SwapPolicy(2, lambda h, rng: -1), (0, 1, -1, -1), (0, 2, -2, -2),
     ("recorded", "recorded", "policy", "policy")),
    # step 2 held at its recorded 4 while a constant policy decides the others
    (rp.Hold({2}) & rp.SwapPolicy(0, lambda h, rng: 7), (7, 7, 4, 7), (14, 14, 8, 14),
     ("policy", "policy", "held", "policy")),
    (rp.Hold({0, 1, 2, 3}), (0, 1, 4, 13), (0, 2, 8, 26), ("recorded",) * 4),
    (rp.ForceAction(1, 5) & rp.ReplaceObservation(1, 0), (0, 5, 2, 7), (0, 0, 4, 14),
     ("recorded", "forced", "policy", "policy")),
])
def test_each_operator_gives_the_hand_computed_trajectory(intervention, actions, observations,
                                                          sources):
    rec = rp.record(counting_agent())
    run = rp.replay(rec, intervention, index=1).trajectory
    assert run.actions == actions
    assert run.observations == observations
    assert tuple(s.source for s in run.steps) == sources
    assert run.outcome == float(actions[-1])


def test_an_edited_context_is_what_the_step_records():
    edit = rp.EditContext(1, lambda h: rp.History("edited", h.actions, h.observations))
    run = rp.replay(rp.record(counting_agent()), edit).trajectory
    assert run.steps[0].history.initial is None
    assert [s.history.initial for s in run.steps[1:]] == ["edited"] * 3


def test_resample_redraws_a_random_step_and_keeps_the_prefix():
    rec = rp.record(noisy_agent(), seed=2)
    draws = {rp.replay(rec, rp.Resample(3), index=i).trajectory.actions for i in range(40)}
    assert all(d[:3] == rec.actions[:3] for d in draws)
    assert len({d[3] for d in draws}) == 3            # step 3 re-drawn
    # one index, one draw: the same replay twice
    assert rp.replay(rec, rp.Resample(3), index=5) == rp.replay(rec, rp.Resample(3), index=5)


def test_refund_scenario_interventions():
    sc = examples.refund(0.5)
    rec = sc.record
    assert [a.name for a in rec.actions] == ["lookup_order", "decide", "issue_refund", "reply"]
    assert rec.outcome == 1.0
    # without the injection the decision never approves
    clean = rp.replay(rec, rp.EditContext(1, examples.without_injection), index=2).trajectory
    assert clean.actions[1] == examples.DECLINE and clean.outcome == 0.0
    declined = rp.replay(rec, rp.ForceAction(1, examples.DECLINE)).trajectory
    assert declined.actions[2] == examples.ESCALATE and declined.outcome == 0.0
    # resampling the mechanical refund step keeps the approval: still refunded
    assert all(rp.replay(rec, rp.Resample(2), index=i).trajectory.outcome == 1.0
               for i in range(10))


def test_compositions_that_conflict_are_refused():
    rec = rp.record(counting_agent())
    with pytest.raises(ValueError, match="two forced actions at step 1"):
        rp.replay(rec, rp.ForceAction(1, 0) & rp.ForceAction(1, 2))
    with pytest.raises(ValueError, match="two policy swaps at step 0"):
        rp.replay(rec, rp.SwapPolicy(0, len) & rp.SwapPolicy(0, len))
    both = rp.Resample(0) & rp.Resample(1) & rp.Hold({3})
    assert isinstance(both, rp.Compose) and len(both.parts) == 3


# --- the game over steps -----------------------------------------------------------

def _bernstein_halfwidth(p, n, delta):
    """|mean - p| of n Bernoulli(p) draws exceeds this with probability at
    most delta (Bernstein's inequality)."""
    L = math.log(2.0 / delta)
    return ((2 * L / 3) + math.sqrt((2 * L / 3) ** 2 + 8 * n * L * p * (1 - p))) / (2 * n)


@pytest.fixture(scope="module")
def scenarios():
    return [examples.refund(0.5), examples.and_failure(0.3), examples.pivotal_chain(5, 2)]


def test_scenarios_match_the_synthetic_scms(scenarios):
    refund, and_fail, chain = scenarios
    np.testing.assert_allclose(and_fail.table, fc.synthetic.and_failure(0.3).table())
    np.testing.assert_allclose(and_fail.shapley, [0.455, 0.455, 0.0], atol=1e-12)
    np.testing.assert_allclose(refund.shapley, [0.0, 0.25, 0.25, 0.0], atol=1e-12)
    np.testing.assert_allclose(chain.table, fc.synthetic.pivotal_chain(5, 2).table())
    assert chain.record.actions == ("stay", "stay", "derail", "stay", "stay")


def test_the_game_equals_the_scm_table_in_expectation(scenarios):
    """500 rollouts per coalition. False-failure rate: each cell's mean
    leaves its Bernstein interval with probability <= 1e-5, so all 64 cells
    of the three scenarios pass but for a chance of <= 6.4e-4."""
    n = 500
    for sc in scenarios:
        m = sc.record.n_steps
        game = rp.StepGame(sc.record, seed=11)
        means = game(np.repeat(np.arange(1 << m, dtype=np.uint64), n)).reshape(-1, n).mean(1)
        assert game.n_rollouts == n << m
        for mask, (got, want) in enumerate(zip(means, sc.table)):
            assert abs(got - want) <= _bernstein_halfwidth(want, n, 1e-5) + 1e-12, \
                (sc.name, mask, got, want)
        # bool rows give the same draws as masks
        rows = fc.games.masks_to_bool(np.arange(1 << m, dtype=np.uint64), m)
        np.testing.assert_array_equal(rp.StepGame(sc.record, seed=4)(rows),
                                      rp.StepGame(sc.record, seed=4)(np.arange(1 << m)))


def test_shapley_intervals_cover_the_planted_values(scenarios):
    """False-failure rate: 13 players' 99.99 % t intervals (400 walks, 200
    antithetic pairs) all cover but for a chance of <= 13e-4."""
    for sc in scenarios:
        est = rp.shapley(sc.record, permutations=400, seed=2)
        assert est.n_evals == 400 * (sc.record.n_steps + 1) and not est.truncated
        low, high = est.ci(0.9999)
        assert np.all((low <= sc.shapley) & (sc.shapley <= high)), (sc.name, est.values)


def test_contrastive_finds_the_commitment_point_of_the_refund():
    sc = examples.refund(0.5)
    ce = rp.contrastive(sc.record, samples=100, seed=1)
    assert ce.n_rollouts == 400 and not ce.truncated
    np.testing.assert_array_equal(np.diff(ce.offsets), [100] * 4)
    e = ce.effects
    assert e.effect[2] == e.effect[3] == 0.0        # the refund call is mechanical
    assert e.commitment_point == 1                  # the decision
    assert np.all(e.high[:2] < 0)


def test_nothing_is_cached():
    """Every evaluation of v(S) is a new rollout: the outcome is scored once
    per evaluation, the policy re-decides every step a coalition leaves to
    it, and one coalition evaluated many times gives many draws."""
    scored = []
    base = rp.record(noisy_agent(max_steps=3))
    agent = rp.Agent(base.agent.policy, base.agent.env,
                     lambda traj: scored.append(1) or base.agent.outcome(traj), max_steps=3)
    rec = rp.Record(agent, base.trajectory, base.seed)
    est = rp.shapley(rec, permutations=40, seed=1)
    assert est.n_evals == len(scored) == 40 * 4
    calls = []
    counted = rp.Record(noisy_agent(max_steps=3, counter=calls), rec.trajectory, rec.seed)
    game = rp.StepGame(counted, seed=0)
    draws = game(np.zeros(200, dtype=np.uint64))   # nothing held: 3 policy calls a rollout
    assert len(calls) == 600 and game.n_rollouts == 200
    assert 0 < draws.mean() < 1
    game(np.full(5, 0b111, dtype=np.uint64))       # everything held: no policy call
    assert len(calls) == 600


# --- budget ---------------------------------------------------------------------------

def test_the_budget_stops_shapley_exactly():
    scored = []
    sc = examples.and_failure(0.3)
    agent = rp.Agent(sc.agent.policy, sc.agent.env,
                     lambda traj: scored.append(1) or sc.agent.outcome(traj), max_steps=3)
    rec = rp.Record(agent, sc.record.trajectory, sc.record.seed)
    est = rp.shapley(rec, budget=50, seed=0)      # a pair costs 2 (m + 1) = 8 rollouts
    assert est.truncated is False and est.n_evals == len(scored) == 48
    scored.clear()
    cut = rp.shapley(rec, permutations=100, budget=50, seed=0)
    assert cut.truncated and cut.n_evals == len(scored) == 48 and cut.n_permutations == 12
    np.testing.assert_array_equal(cut.values, est.values)
    with pytest.raises(ValueError, match="budget must cover an antithetic pair"):
        rp.shapley(rec, budget=7)


def test_the_budget_stops_contrastive_exactly():
    sc = examples.and_failure(0.3)
    ce = rp.contrastive(sc.record, samples=10, budget=10, seed=0)
    assert ce.truncated and ce.n_rollouts == 10
    np.testing.assert_array_equal(np.diff(ce.offsets), [4, 3, 3])
    full = rp.contrastive(sc.record, samples=10, budget=30, seed=0)
    assert not full.truncated and full.n_rollouts == 30
    with pytest.raises(ValueError, match="budget must cover one rollout per step"):
        rp.contrastive(sc.record, budget=2)


# --- concurrency ----------------------------------------------------------------------

@pytest.mark.parametrize("is_async", [False, True])
def test_results_do_not_depend_on_the_concurrency(is_async):
    rec = rp.record(noisy_agent(is_async), seed=5)
    one = rp.shapley(rec, permutations=40, seed=3, max_concurrency=1)
    eight = rp.shapley(rec, permutations=40, seed=3, max_concurrency=8)
    np.testing.assert_array_equal(one.values, eight.values)
    np.testing.assert_array_equal(one.stderr, eight.stderr)
    c1 = rp.contrastive(rec, samples=8, seed=3, max_concurrency=1)
    c8 = rp.contrastive(rec, samples=8, seed=3, max_concurrency=8)
    np.testing.assert_array_equal(c1.outcomes, c8.outcomes)
    np.testing.assert_array_equal(c1.effects.low, c8.effects.low)


def test_sync_and_async_agents_give_the_same_estimate():
    a = rp.shapley(rp.record(noisy_agent(False), seed=5), permutations=20, seed=3,
                   max_concurrency=4)
    b = rp.shapley(rp.record(noisy_agent(True), seed=5), permutations=20, seed=3,
                   max_concurrency=4)
    np.testing.assert_array_equal(a.values, b.values)


def test_an_async_agent_runs_inside_a_running_event_loop():
    async def main():
        return rp.record(noisy_agent(True), seed=5)
    assert asyncio.run(main()).trajectory == rp.record(noisy_agent(False), seed=5).trajectory


# --- errors ---------------------------------------------------------------------------

def _failing(role, at, is_async=False):
    def policy(history, rng):
        if role == "policy" and history.step == at:
            raise KeyError("no such tool")
        return history.step

    def tools(action, history, rng):
        if role == "env" and history.step == at:
            raise ConnectionError("tool down")
        return action

    async def apolicy(history, rng):
        return policy(history, rng)
    return rp.Agent(apolicy if is_async else policy, tools, lambda t: 0.0, max_steps=5)


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("role, cause", [("policy", KeyError), ("env", ConnectionError)])
def test_an_agent_that_raises_names_the_step(role, cause, is_async):
    with pytest.raises(rp.AgentError, match=f"{role} raised at step 3 of the record") as info:
        rp.record(_failing(role, 3, is_async))
    err = info.value
    assert (err.role, err.step, err.rollout) == (role, 3, 0)
    assert isinstance(err.__cause__, cause)
    assert len(err.steps) == 3 and isinstance(err.steps, tuple)   # the partial run, no Trajectory


@pytest.mark.parametrize("max_concurrency", [1, 4])
def test_an_agent_that_raises_during_attribution_returns_nothing(max_concurrency):
    rec = rp.record(counting_agent())
    calls = []

    def sometimes(history, rng):
        calls.append(1)
        if len(calls) == 30:
            raise RuntimeError("rate limited")
        return history.step
    broken = rp.Record(counting_agent(policy=sometimes), rec.trajectory, rec.seed)
    with pytest.raises(rp.AgentError, match="policy raised at step .* of a coalition rollout"):
        rp.shapley(broken, permutations=40, max_concurrency=max_concurrency)
    calls.clear()
    with pytest.raises(rp.AgentError, match="of a resampling"):
        rp.contrastive(broken, samples=20, max_concurrency=max_concurrency)


def test_bad_outputs_of_the_agent_are_named():
    with pytest.raises(TypeError, match="outcome must return a real number"):
        rp.record(rp.Agent(lambda h, r: 0, lambda a, h, r: 0, lambda t: "bad", max_steps=1))
    with pytest.raises(ValueError, match="outcome returned nan"):
        rp.record(rp.Agent(lambda h, r: 0, lambda a, h, r: 0, lambda t: math.nan, max_steps=1))
    with pytest.raises(TypeError, match="Decision.logprob = 'x' at step 0"):
        rp.record(rp.Agent(lambda h, r: rp.Decision(0, "x"), lambda a, h, r: 0, len,
                           max_steps=1))
    with pytest.raises(ValueError, match="a log-probability is <= 0"):
        rp.record(rp.Agent(lambda h, r: rp.Decision(0, 0.5), lambda a, h, r: 0, len,
                           max_steps=1))
    with pytest.raises(TypeError, match="EditContext.edit must return a History"):
        rp.replay(rp.record(counting_agent()), rp.EditContext(1, lambda h: None))
    # in a rollout of the game: the harness's own error, not the sampler's wrapping
    rec = rp.record(counting_agent())
    scores = iter([1.0] * 5 + ["bad"])
    broken = rp.Record(rp.Agent(rec.agent.policy, rec.agent.env, lambda t: next(scores),
                                max_steps=4), rec.trajectory, rec.seed)
    with pytest.raises(TypeError, match=r"outcome must return a real number, got str \(rollout 5"):
        rp.shapley(broken, permutations=2)


def test_bad_arguments_name_the_argument():
    rec = rp.record(counting_agent())
    agent = rec.agent
    cases = [
        (lambda: rp.Agent(3, len, len), TypeError, "policy must be callable"),
        (lambda: rp.Agent(len, 3, len), TypeError, "env must be callable"),
        (lambda: rp.Agent(len, len, None), TypeError, "outcome must be callable"),
        (lambda: rp.Agent(len, len, len, max_steps=0), ValueError, "max_steps"),
        (lambda: rp.record(3), TypeError, "agent must be a fastcredit.replay.Agent"),
        (lambda: rp.record(agent, seed=-1), ValueError, "seed"),
        (lambda: rp.record(agent, seed=1.5), TypeError, "seed"),
        (lambda: rp.replay("rec"), TypeError, "record must be a fastcredit.replay.Record"),
        (lambda: rp.replay(rec, "do"), TypeError, "intervention must be"),
        (lambda: rp.replay(rec, rp.ForceAction(4, 0)), ValueError, "ForceAction.step"),
        (lambda: rp.replay(rec, rp.Resample(-1)), ValueError, "Resample.step"),
        (lambda: rp.replay(rec, rp.Hold({9})), ValueError, "Hold.steps"),
        (lambda: rp.Hold(3), TypeError, "Hold.steps"),
        (lambda: rp.replay(rec, rp.SwapPolicy(0, 3)), TypeError, "SwapPolicy.policy"),
        (lambda: rp.replay(rec, rp.EditContext(0, 3)), TypeError, "EditContext.edit"),
        (lambda: rp.Compose(()), ValueError, "Compose.parts"),
        (lambda: rp.Compose((3,)), TypeError, "Compose.parts"),
        (lambda: rp.replay(rec, index=-1), ValueError, "index"),
        (lambda: rp.replay(rec, seed="0"), TypeError, "seed"),
        (lambda: rp.shapley(rec, max_concurrency=0), ValueError, "max_concurrency"),
        (lambda: rp.shapley(rec, permutations=3), ValueError, "permutations"),
        (lambda: rp.shapley(rec, chunk=0), ValueError, "chunk"),
        (lambda: rp.shapley(rec, budget=0), ValueError, "budget"),
        (lambda: rp.shapley(3), TypeError, "record"),
        (lambda: rp.contrastive(rec, samples=0), ValueError, "samples"),
        (lambda: rp.contrastive(rec, level=1.0), ValueError, "level"),
        (lambda: rp.contrastive(rec, kind="x"), ValueError, "kind"),
        (lambda: rp.StepGame(rec)(np.array([16], dtype=np.uint64)), ValueError, "coalitions"),
        (lambda: rp.StepGame(rec)(np.zeros(3)), TypeError, "coalitions"),
        (lambda: examples.refund(1.0), ValueError, "p_absorb"),
        (lambda: examples.and_failure(q=0.0), ValueError, "q"),
        (lambda: examples.pivotal_chain(pivot=9), ValueError, "pivot"),
    ]
    for call, error, word in cases:
        with pytest.raises(error, match=word):
            call()


@pytest.mark.parametrize("call,error,pattern", [
    # the step of an intervention was checked first at a replay: 1.5, "1", NaN and
    # 1+1j were accepted by the constructor, True and np.array(1) kept as they came
    (lambda: rp.Resample(1.5), TypeError, "Resample.step"),
    (lambda: rp.ForceAction("1", "escalate"), TypeError, "ForceAction.step"),
    (lambda: rp.ReplaceObservation(float("nan"), "x"), TypeError, "ReplaceObservation.step"),
    (lambda: rp.EditContext(1 + 1j, len), TypeError, "EditContext.step"),
    (lambda: rp.SwapPolicy(True, len), TypeError, "SwapPolicy.step"),
    (lambda: rp.Resample(-1), ValueError, "Resample.step"),
    # a callable that is not one, accepted until a replay
    (lambda: rp.EditContext(0, 3), TypeError, "EditContext.edit"),
    (lambda: rp.SwapPolicy(0, "policy"), TypeError, "SwapPolicy.policy"),
    # steps that are not step indices, accepted until a replay
    (lambda: rp.Hold((0.5,)), TypeError, "Hold.steps"),
    (lambda: rp.Hold(("0",)), TypeError, "Hold.steps"),
    (lambda: rp.Hold("01"), TypeError, "Hold.steps"),
    # parts that are not a sequence: "'Resample' object is not iterable"
    (lambda: rp.Compose(rp.Resample(0)), TypeError, "Compose.parts"),
    (lambda: rp.Compose(None), TypeError, "Compose.parts"),
])
def test_interventions_are_checked_when_built(call, error, pattern):
    """Defects the fuzz harness (tests/test_fuzz.py) found."""
    with pytest.raises(error, match=pattern):
        call()


def test_intervention_steps_are_plain_ints():
    assert rp.Resample(np.int64(2)) == rp.Resample(2)
    assert type(rp.ForceAction(np.array(1), "a").step) is int
    assert rp.Hold([np.int64(0), 2]).steps == frozenset({0, 2})
    rec = rp.record(counting_agent())
    assert rp.replay(rec, rp.Resample(np.int64(1))).trajectory.steps[0].source == "recorded"


def test_the_game_has_no_private_options_in_its_signature():
    """StepGame(record, _domain=...) was public by signature; contrastive's
    streams stay apart from the game's."""
    import inspect
    assert "_domain" not in inspect.signature(rp.StepGame).parameters
    assert not hasattr(rp.StepGame, "run")
    rec = rp.record(noisy_agent(), seed=2)
    y = rp.contrastive(rec, samples=2, resamples=50, seed=0).outcomes
    assert y.size == 2 * rec.n_steps


def test_the_language_model_example_says_what_it_needs():
    """fastcredit.replay.lm imports without torch; calling it without torch
    and transformers names them (tests/test_replay_lm.py runs it with them)."""
    from fastcredit.replay import lm
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        pytest.skip("torch and transformers are installed")
    except ImportError:
        pass
    with pytest.raises(ImportError, match="needs torch and transformers"):
        lm.tiny_agent()


def test_no_zero_width_interval_from_marginals_that_happen_not_to_vary():
    """The stderr is the sampler's for stochastic games (pseudo-samples at the
    ends of the outcome range): of 200 estimates at 10 antithetic pairs on
    the AND-failure agent, 8 had a player whose marginals never varied (a
    plain stderr of 0); none has a zero-width interval now."""
    sc = examples.and_failure(0.3)
    plain_zero = 0
    for seed in range(200):
        est = rp.shapley(sc.record, permutations=20, seed=seed)
        assert np.all(est.stderr > 0) and est.bounds == (0.0, 1.0)
        game = rp.StepGame(sc.record, seed=seed)
        raw = fc.permutation_shapley(game, 3, permutations=20, seed=seed, cache=False)
        np.testing.assert_array_equal(raw.values, est.values)
        plain_zero += int(np.any(raw.stderr == 0))
        # the formula of fc.ShapleyEstimate with w = 1, c = 2
        n, x = 10, raw.values
        ss = raw.stderr ** 2 * n * (n - 1)
        want = np.sqrt((ss + 2 * ((1 - x) ** 2 + (1 + x) ** 2)) / (n - 1 + 4) / n)
        np.testing.assert_allclose(est.stderr, want, rtol=1e-12)
    assert plain_zero > 0


def test_declared_bounds():
    sc = examples.and_failure(0.3)
    est = rp.shapley(sc.record, permutations=20, bounds=(0.0, 2.0))
    assert est.bounds == (0.0, 2.0)
    with pytest.raises(ValueError, match=r"outside the declared bounds \(0.0, 0.5\)"):
        rp.shapley(sc.record, permutations=20, bounds=(0.0, 0.5))
    with pytest.raises(TypeError, match="bounds must be a pair"):
        rp.shapley(sc.record, bounds=1.0)
    with pytest.raises(ValueError, match=r"bounds\[1\]"):
        rp.shapley(sc.record, bounds=(1.0, 0.0))
    # outcomes that never differ and no declared range: nothing bounds the error
    flat = rp.record(rp.Agent(lambda h, r: int(r.integers(2)), lambda a, h, r: a,
                              lambda t: 0.0, max_steps=3))
    assert np.all(rp.shapley(flat, permutations=8).stderr == np.inf)
    assert np.all(rp.shapley(flat, permutations=8, bounds=(0, 1)).stderr > 0)
