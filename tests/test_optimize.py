"""Per-field threshold optimization against brute force, exact DP and hand-worked numbers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rpa_sim.route.per_field.curves import field_curves
from rpa_sim.route.per_field.solver import frontier, optimize_thresholds

TOL = 1e-12

# --- oracles ---------------------------------------------------------------------------------


def naive_cost(confidence, accept, review, threshold):
    """Accepted count and cost of one group of items under one threshold, summed item by item."""
    take = [c >= threshold for c in confidence]
    cost = sum(a if t else r for t, a, r in zip(take, accept, review))
    return sum(take), cost


def brute_force(curves, budget):
    """Every combination of per-field points: the optimum and the optimal combinations."""
    best, optimal = None, []
    for combo in itertools.product(*(range(len(c.accepted)) for c in curves)):
        if sum(float(c.cost[j]) for c, j in zip(curves, combo)) <= budget + TOL:
            accepted = sum(int(c.accepted[j]) for c, j in zip(curves, combo))
            if best is None or accepted > best:
                best, optimal = accepted, [combo]
            elif accepted == best:
                optimal.append(combo)
    return best, optimal


def exact_dp(curves, budget):
    """The optimum by a full dynamic programme over the accepted count (independent of the hull)."""
    n = sum(c.items for c in curves)
    least = np.full(n + 1, np.inf)
    least[0] = 0.0
    for curve in curves:
        new = np.full(n + 1, np.inf)
        for accepted, cost in zip(curve.accepted.tolist(), curve.cost.tolist()):
            new[accepted:] = np.minimum(new[accepted:], least[: n + 1 - accepted] + cost)
        least = new
    fits = np.flatnonzero(least <= budget + TOL)
    return int(fits.max()) if len(fits) else None


def best_common_threshold(keys, confidence, accept, review, budget):
    """The most items any single threshold shared by all fields accepts within the budget."""
    best = None
    for t in [np.inf, *np.unique(confidence)]:
        accepted, cost = naive_cost(confidence, accept, review, t)
        if cost <= budget + TOL and (best is None or accepted > best):
            best = accepted
    return best


def recomputed(result, keys, confidence, accept, review):
    """Accepted count and cost of a result's thresholds, applied item by item."""
    reviewed = result.reviewed(keys, confidence)
    return int((~reviewed).sum()), float(np.where(reviewed, review, accept).sum())


def critical_size(front, budget):
    """Items in the first merged hull segment that does not fit (0 when all fit)."""
    k = int(np.searchsorted(front.cost, budget + TOL, side="right")) - 1
    return int(front.accepted[k + 1] - front.accepted[k]) if k + 1 < len(front) else 0


# --- strategies ------------------------------------------------------------------------------

COSTS = st.sampled_from([0.0, 0.0, 0.25, 0.5, 1.0, 1.0, 1.5, 2.0, 3.7])
CONFIDENCES = st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])  # few values: many ties


@st.composite
def cases(draw, *, review=True, convex=False, distinct=False):
    """2-3 fields of 1-6 items, with a budget: anywhere, or exactly some combination's cost."""
    keys, confidence, accept, cost_review = [], [], [], []
    for f in range(draw(st.integers(2, 3))):
        m = draw(st.integers(1, 6))
        if distinct:
            conf = draw(st.lists(CONFIDENCES, min_size=m, max_size=m, unique=True)) if m <= 5 else None
            assume(conf is not None)
        else:
            conf = draw(st.lists(CONFIDENCES, min_size=m, max_size=m))
        a = draw(st.lists(COSTS, min_size=m, max_size=m))
        r = draw(st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.1, 0.6]), min_size=m, max_size=m)) if review else [0.0] * m
        if convex:  # less confident items cost more: every field's curve is convex
            order = np.argsort(conf, kind="stable")[::-1]
            conf = [conf[i] for i in order]
            a = sorted(a)
        keys += [f"f{f}"] * m
        confidence += conf
        accept += a
        cost_review += r
    curves = field_curves(keys, confidence, accept, cost_review)
    if draw(st.booleans()):
        combo = [draw(st.integers(0, len(c.accepted) - 1)) for c in curves]
        budget = sum(float(c.cost[j]) for c, j in zip(curves, combo))
    else:
        budget = draw(st.floats(-0.5, sum(float(c.cost.max()) for c in curves) + 0.5))
    return keys, np.array(confidence), np.array(accept), np.array(cost_review), budget


# --- field curves ----------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(cases())
def test_field_curves_equal_naive_recomputation(case):
    keys, confidence, accept, review, _ = case
    keys = np.array(keys)
    curves = field_curves(keys, confidence, accept, review)
    assert [c.key for c in curves] == sorted(set(keys.tolist()))
    for curve in curves:
        mine = keys == curve.key
        conf, a, r = confidence[mine], accept[mine], review[mine]
        levels = [np.inf, *sorted(set(conf.tolist()), reverse=True)]
        assert curve.thresholds.tolist() == levels
        for j, t in enumerate(levels):
            accepted, cost = naive_cost(conf, a, r, t)
            assert curve.accepted[j] == accepted
            assert curve.cost[j] == pytest.approx(cost, abs=1e-12)
        assert curve.items == len(conf)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_hull_is_the_lower_convex_hull(case):
    keys, confidence, accept, review, _ = case
    for curve in field_curves(keys, confidence, accept, review):
        hull = curve.hull()
        x, y = curve.accepted.astype(float), curve.cost
        assert hull[-1] == len(x) - 1
        assert y[hull[0]] == y.min() and (y[hull[0] + 1:] > y.min()).all()
        slopes = np.diff(y[hull]) / np.diff(x[hull])
        assert (slopes > 0).all()
        assert (np.diff(slopes) >= -1e-12).all()
        # every point from the start on lies on or above the hull
        right = np.arange(hull[0], len(x))
        assert (y[right] >= np.interp(x[right], x[hull], y[hull]) - 1e-12).all()


def test_field_curves_worked_example():
    curves = field_curves(["menu.price", "menu.nm", "menu.price", "menu.price"], [0.8, 0.6, 0.8, 0.3],
                          accept_cost=[1.0, 0.9, 0.0, 1.0], review_cost=[0.0, 0.0, 0.5, 0.0])
    nm, price = curves
    assert nm.key == "menu.nm" and price.key == "menu.price"
    assert price.thresholds.tolist() == [np.inf, 0.8, 0.3]
    assert price.accepted.tolist() == [0, 2, 3]
    assert price.cost.tolist() == [0.5, 1.0, 2.0]
    assert nm.cost.tolist() == [0.0, 0.9]


# --- the optimizer against brute force -------------------------------------------------------


def check_against_brute_force(case):
    keys, confidence, accept, review, budget = case
    front = frontier(keys, confidence, accept, review)
    result = front.at_budget(budget)
    hull = front.at_budget(budget, refine=False)
    best, _ = brute_force(front.curves, budget)

    assert result.feasible == hull.feasible == (best is not None)
    if best is None:
        assert result.upper_bound is None and not result.optimal
        cheapest = min(sum(float(c.cost[j]) for c, j in zip(front.curves, combo))
                       for combo in itertools.product(*(range(len(c.accepted)) for c in front.curves)))
        assert result.cost == pytest.approx(cheapest, abs=1e-12) and result.cost > budget
        return None
    for answer in (result, hull):
        assert answer.cost <= budget + 1e-12
        accepted, cost = recomputed(answer, keys, confidence, accept, review)
        assert (accepted, cost) == (answer.accepted, pytest.approx(answer.cost, abs=1e-9))
        assert answer.accepted <= best <= answer.upper_bound
    # the refined answer is the optimum, and proved so
    assert result.accepted == best
    assert result.optimal and result.upper_bound == best
    # the plain hull solution: below the optimum by less than the critical segment's size
    m = critical_size(front, budget)
    assert best - hull.accepted <= max(m - 1, 0)
    assert hull.upper_bound - hull.accepted <= max(m - 1, 0)
    if m <= 1:
        assert hull.accepted == best
    # an optimum on a frontier breakpoint within the budget is found by the hull solution itself
    if any(a == best and c <= budget + TOL for a, c in zip(front.accepted, front.cost)):
        assert hull.accepted == best
    # the hull solution falls short only behind a critical segment of several items
    if hull.accepted < best:
        assert m >= 2
    return best, hull.accepted


@settings(max_examples=500, deadline=None)
@given(cases())
def test_optimum_equals_brute_force(case):
    check_against_brute_force(case)


@settings(max_examples=200, deadline=None)
@given(cases(review=False))
def test_optimum_equals_brute_force_perfect_reviewer(case):
    check_against_brute_force(case)


@settings(max_examples=200, deadline=None)
@given(cases(convex=True, distinct=True, review=False))
def test_convex_curves_without_ties_hull_solution_is_optimal(case):
    keys, confidence, accept, review, budget = case
    for curve in field_curves(keys, confidence, accept, review):
        hull = curve.hull()  # convex: every point from the cheapest on is a vertex
        assert hull.tolist() == list(range(hull[0], len(curve.accepted)))
    best, _ = brute_force(field_curves(keys, confidence, accept, review), budget)
    hull = optimize_thresholds(keys, confidence, accept, review, budget=budget, refine=False)
    assert hull.feasible == (best is not None)
    if best is not None:
        assert hull.accepted == best


def test_convex_curve_with_ties_is_not_enough_for_the_hull_solution():
    # a: one item of cost 1; b: two items of equal confidence, 1.1 each. Both curves are convex,
    # the hull takes a first (slope 1 < 1.1) and then cannot afford b's pair; the optimum is b alone.
    keys, confidence, accept = ["a", "b", "b"], [0.9, 0.5, 0.5], [1.0, 1.1, 1.1]
    hull = optimize_thresholds(keys, confidence, accept, 0.0, budget=2.2, refine=False)
    assert (hull.thresholds, hull.accepted, hull.cost, hull.upper_bound) == ({"a": 0.9, "b": np.inf}, 1, 1.0, 2)
    best = optimize_thresholds(keys, confidence, accept, 0.0, budget=2.2)
    assert (best.thresholds, best.accepted, best.cost, best.upper_bound) == ({"a": np.inf, "b": 0.5}, 2, 2.2, 2)
    assert best.optimal and not hull.optimal


def test_non_hull_point_spends_the_leftover():
    # b's curve (0, 0), (1, 1.5), (2, 2.7) is concave: its hull skips the point (1, 1.5)
    keys, confidence, accept = ["a", "a", "b", "b"], [0.9, 0.85, 0.8, 0.7], [1.0, 3.0, 1.5, 1.2]
    front = frontier(keys, confidence, accept, 0.0)
    assert front.cost.tolist() == pytest.approx([0.0, 1.0, 3.7, 6.7])
    assert front.accepted.tolist() == [0, 1, 3, 4]
    assert front.slope.tolist() == pytest.approx([1.0, 1.35, 3.0])
    hull = front.at_budget(2.5, refine=False)
    assert (hull.accepted, hull.upper_bound) == (1, 2)
    best = front.at_budget(2.5)
    assert (best.thresholds, best.accepted, best.cost) == ({"a": 0.9, "b": 0.8}, 2, 2.5)


@pytest.mark.parametrize("seed", range(4))
def test_optimum_equals_exact_dp_on_larger_cases(seed):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        n = int(rng.integers(1, 300))
        keys = rng.integers(0, int(rng.integers(1, 8)), n)
        confidence = rng.integers(0, [5, 50, 1000][int(rng.integers(0, 3))], n) / 1000
        accept = rng.choice([0.0, 0.0, 0.9, 1.0], n) if rng.random() < 0.5 else rng.random(n) * 2
        review = np.where(rng.random(n) < 0.3, rng.random(n) * 0.5, 0.0)
        front = frontier(keys, confidence, accept, review)
        budget = float(rng.uniform(front.cost[0] - 0.3, front.cost[-1] + 0.3))
        best = exact_dp(front.curves, budget)
        result = front.at_budget(budget)
        assert result.feasible == (best is not None)
        if best is not None:
            assert result.accepted == best and result.optimal
            assert result.cost <= budget + 1e-12
            assert front.at_budget(budget, refine=False).accepted <= best <= front.at_budget(
                budget, refine=False).upper_bound


@settings(max_examples=150, deadline=None)
@given(cases())
def test_work_cap_fallback_keeps_its_weaker_guarantees(case):
    keys, confidence, accept, review, budget = case
    front = frontier(keys, confidence, accept, review)
    best, _ = brute_force(front.curves, budget)
    assume(best is not None)
    hull = front.at_budget(budget, refine=False)
    capped = front.at_budget(budget, max_cells=3)
    assert capped.cost <= budget + 1e-12
    assert hull.accepted <= capped.accepted <= best <= capped.upper_bound <= hull.upper_bound
    assert capped.accepted >= (best_common_threshold(keys, confidence, accept, review, budget) or 0)
    assert capped.optimal == (capped.accepted == best == capped.upper_bound)


# --- against the best common threshold -------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(cases())
def test_never_worse_than_the_best_common_threshold(case):
    keys, confidence, accept, review, budget = case
    common = best_common_threshold(keys, confidence, accept, review, budget)
    result = optimize_thresholds(keys, confidence, accept, review, budget=budget)
    if common is None:
        return  # no common threshold fits; the cheapest per-field choice may still
    assert result.feasible and result.accepted >= common


def test_per_field_thresholds_beat_a_common_threshold():
    # the confident field is wrong, the unconfident one right: one threshold cannot separate them
    keys = ["total"] * 3 + ["date"] * 3
    confidence = [0.95, 0.9, 0.85, 0.6, 0.5, 0.4]
    accept = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    assert best_common_threshold(keys, np.array(confidence), np.array(accept), np.zeros(6), 1.0) == 1
    result = optimize_thresholds(keys, confidence, accept, 0.0, budget=1.0)
    assert result.thresholds == {"date": 0.4, "total": 0.95}
    assert (result.accepted, result.cost, result.auto_rate) == (4, 1.0, 4 / 6)


# --- feasibility, budget, determinism, order ------------------------------------------------


def test_infeasible_returns_the_cheapest_choice():
    # reviewing costs 1 per item, accepting the correct item costs nothing
    keys, confidence, accept, review = ["a", "a"], [0.9, 0.2], [0.0, 3.0], [1.0, 1.0]
    result = optimize_thresholds(keys, confidence, accept, review, budget=0.5)
    assert not result.feasible and not result.optimal and result.upper_bound is None
    assert (result.thresholds, result.accepted, result.cost) == ({"a": 0.9}, 1, 1.0)
    # accepting nothing costs 2 > 1.5, yet accepting the confident item fits
    result = optimize_thresholds(keys, confidence, accept, review, budget=1.5)
    assert result.feasible and (result.thresholds, result.accepted, result.cost) == ({"a": 0.9}, 1, 1.0)


def test_budget_edges():
    keys, confidence, accept = ["a", "a", "b"], [0.9, 0.2, 0.7], [0.5, 2.0, 1.0]
    assert optimize_thresholds(keys, confidence, accept, 0.0, budget=np.inf).accepted == 3
    everything = optimize_thresholds(keys, confidence, accept, 0.0, budget=3.5)
    assert (everything.accepted, everything.thresholds) == (3, {"a": 0.2, "b": 0.7})
    # the tolerance: 1e-13 short of a cost still buys it, 1e-11 short does not
    assert optimize_thresholds(keys, confidence, accept, 0.0, budget=1.5 - 1e-13).accepted == 2
    assert optimize_thresholds(keys, confidence, accept, 0.0, budget=1.5 - 1e-11).accepted == 1
    assert optimize_thresholds(keys, confidence, accept, 0.0, budget=1.5 - 1e-11, tolerance=1e-9).accepted == 2
    nothing = optimize_thresholds(keys, confidence, accept, 0.0, budget=0.0)
    assert (nothing.accepted, nothing.thresholds, nothing.feasible) == (0, {"a": np.inf, "b": np.inf}, True)
    assert not optimize_thresholds(keys, confidence, accept, 0.0, budget=-1e-9).feasible


def test_default_tolerance_absorbs_rounding_of_the_target():
    # KIE at t = 0.9: 10 predictions, one substitution; budget (1 - t) * 10 = 1 in exact arithmetic
    keys, confidence = ["k"] * 10, np.linspace(1.0, 0.1, 10)
    accept = [0.0] * 9 + [1.0]
    budget = (1 - 0.9) * 10
    assert budget < 1.0  # 0.9999999999999998 in floating point
    assert optimize_thresholds(keys, confidence, accept, 0.0, budget=budget).accepted == 10
    assert optimize_thresholds(keys, confidence, accept, 0.0, budget=budget, tolerance=0.0).accepted == 9


@settings(max_examples=150, deadline=None)
@given(cases(), st.randoms(use_true_random=False))
def test_invariant_to_item_order_and_deterministic(case, rnd):
    keys, confidence, accept, review, budget = case
    first = optimize_thresholds(keys, confidence, accept, review, budget=budget)
    assert optimize_thresholds(keys, confidence, accept, review, budget=budget) == first
    order = list(range(len(keys)))
    rnd.shuffle(order)
    shuffled = optimize_thresholds([keys[i] for i in order], confidence[order], accept[order], review[order],
                                   budget=budget)
    assert shuffled == first  # thresholds, counts and the cost to the last bit
    a, b = frontier(keys, confidence, accept, review), frontier([keys[i] for i in order], confidence[order],
                                                                accept[order], review[order])
    for name in ("cost", "accepted", "field", "to_point", "threshold", "slope", "start"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


def test_keys_of_any_sortable_type_and_scalar_costs():
    result = optimize_thresholds(np.array([3, 1, 3]), [0.5, 0.5, 0.2], 1.0, 0.0, budget=2.0)
    assert result.thresholds == {1: 0.5, 3: 0.5} and result.accepted == 2
    strings = np.array(["x", "y"], dtype=np.dtypes.StringDType())
    assert optimize_thresholds(strings, [0.5, 0.6], 0.0, 0.0, budget=0.0).thresholds == {"x": 0.5, "y": 0.6}


def test_empty_input():
    front = frontier([], [], [], [])
    assert (front.cost.tolist(), front.accepted.tolist(), len(front.slope)) == ([0.0], [0], 0)
    result = front.at_budget(0.0)
    assert (result.thresholds, result.accepted, result.feasible, result.auto_rate) == ({}, 0, True, None)
    assert not front.at_budget(-1.0).feasible


@pytest.mark.parametrize("bad, message", [
    ({"confidence": [0.5, np.nan]}, "confidence must be finite"),
    ({"accept_cost": [1.0, np.inf]}, "accept_cost must be finite"),
    ({"review_cost": [1.0, 2.0, 3.0]}, "review_cost must be a scalar or have 2 entries"),
    ({"keys": ["a"]}, "keys must be one-dimensional with 2 entries"),
    ({"confidence": [[0.5, 0.5]]}, "confidence must be one-dimensional"),
])
def test_bad_input(bad, message):
    args = {"keys": ["a", "b"], "confidence": [0.5, 0.6], "accept_cost": [1.0, 1.0], "review_cost": 0.0} | bad
    with pytest.raises(ValueError, match=message):
        optimize_thresholds(**args, budget=1.0)


def test_bad_budget_and_tolerance():
    with pytest.raises(ValueError, match="NaN"):
        optimize_thresholds(["a"], [0.5], 1.0, 0.0, budget=np.nan)
    with pytest.raises(ValueError, match="tolerance"):
        optimize_thresholds(["a"], [0.5], 1.0, 0.0, budget=1.0, tolerance=-1.0)
    with pytest.raises(ValueError, match=r"max_cells must be a non-negative integer, got -1"):
        optimize_thresholds(["a"], [0.5], 1.0, 0.0, budget=1.0, max_cells=-1)


# --- the frontier ----------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(cases())
def test_frontier_breakpoints(case):
    keys, confidence, accept, review, _ = case
    front = frontier(keys, confidence, accept, review)
    assert front.budget_breakpoints is front.cost
    assert (np.diff(front.accepted) > 0).all() and (np.diff(front.cost) > 0).all()
    assert (np.diff(front.slope) >= 0).all() and (front.slope > 0).all()
    assert front.accepted[-1] == len(keys) == front.items
    assert np.allclose(np.diff(front.cost), front.slope * np.diff(front.accepted))
    cheapest = min(sum(float(c.cost[j]) for c, j in zip(front.curves, combo))
                   for combo in itertools.product(*(range(len(c.accepted)) for c in front.curves)))
    assert front.cost[0] == pytest.approx(cheapest, abs=1e-12)
    for k in range(len(front)):
        thresholds = front.thresholds(k)
        # the breakpoint's thresholds, applied item by item, reproduce its counts
        reviewed = np.array([c < thresholds[key] for key, c in zip(keys, confidence)])
        assert (~reviewed).sum() == front.accepted[k]
        assert np.where(reviewed, review, accept).sum() == pytest.approx(front.cost[k], abs=1e-9)
        hull = front.at_budget(front.cost[k], refine=False)
        assert (hull.thresholds, hull.accepted) == (thresholds, front.accepted[k])
        if k + 1 < len(front):  # just below the next breakpoint: still breakpoint k
            between = front.at_budget((front.cost[k] + front.cost[k + 1]) / 2, refine=False)
            assert between.accepted == front.accepted[k]
        # every breakpoint is optimal for its own budget (ties in slope aside, a hull point)
        best, _ = brute_force(front.curves, front.cost[k])
        assert front.at_budget(front.cost[k]).accepted == best


def test_frontier_worked_example():
    front = frontier(["a", "a", "b"], [0.9, 0.2, 0.7], [0.5, 2.0, 1.0], 0.0)
    assert front.keys == ("a", "b")
    assert front.budget_breakpoints.tolist() == [0.0, 0.5, 1.5, 3.5]
    assert front.accepted.tolist() == [0, 1, 2, 3]
    assert front.auto_rate.tolist() == pytest.approx([0, 1 / 3, 2 / 3, 1])
    assert front.field.tolist() == [0, 1, 0] and front.threshold.tolist() == [0.9, 0.7, 0.2]
    assert front.slope.tolist() == [0.5, 1.0, 2.0]
    assert [front.thresholds(k) for k in range(4)] == [
        {"a": np.inf, "b": np.inf}, {"a": 0.9, "b": np.inf}, {"a": 0.9, "b": 0.7}, {"a": 0.2, "b": 0.7}]
    result = front.at_budget(2.0)
    assert (result.thresholds, result.accepted, result.cost, result.budget) == ({"a": 0.9, "b": 0.7}, 2, 1.5, 2.0)
    with pytest.raises(IndexError):
        front.thresholds(4)


# --- the KIE budget of docs/optimize.md -------------------------------------------------------

CORRECT, SUBSTITUTION, DELETION = 0, 1, 2


def kieval_aligned_tau(outcome, reviewed, additions):
    """KIEval_Aligned^tau with a perfect reviewer (METRICS.md §3), straight from the definition."""
    subs_auto = int(((outcome == SUBSTITUTION) & ~reviewed).sum())
    del_auto = int(((outcome == DELETION) & ~reviewed).sum())
    n_pr_star = len(outcome) - int(((outcome == DELETION) & reviewed).sum())
    if n_pr_star + additions == 0:
        return None  # undefined (METRICS.md §3.5)
    return 1 - (subs_auto + del_auto + additions) / (n_pr_star + additions)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["k.a", "k.b"]), CONFIDENCES, st.sampled_from([0, 0, 1, 2])),
                min_size=1, max_size=9),
       st.integers(0, 3), st.sampled_from([0.5, 0.75, 0.8, 0.9]))
def test_kie_target_is_the_linear_budget(rows, additions, t):
    keys = [k for k, _, _ in rows]
    confidence = np.array([c for _, c, _ in rows])
    outcome = np.array([o for _, _, o in rows])
    deletions = int((outcome == DELETION).sum())
    accept = np.select([outcome == SUBSTITUTION, outcome == DELETION], [1.0, t], 0.0)
    budget = (1 - t) * (len(rows) - deletions + additions) - additions
    # every per-field choice: target met <=> linear cost within budget
    curves = field_curves(keys, confidence, accept, 0.0)
    for combo in itertools.product(*(range(len(c.accepted)) for c in curves)):
        thresholds = {c.key: c.thresholds[j] for c, j in zip(curves, combo)}
        reviewed = np.array([c < thresholds[k] for k, c in zip(keys, confidence)])
        cost = float(np.where(reviewed, 0.0, accept).sum())
        metric = kieval_aligned_tau(outcome, reviewed, additions)
        if metric is not None:
            assert (metric >= t - 1e-9) == (cost <= budget + 1e-9)
    # and the optimizer's answer meets the target with the most items auto-accepted
    result = optimize_thresholds(keys, confidence, accept, 0.0, budget=budget, tolerance=1e-9)
    if result.feasible:
        metric = kieval_aligned_tau(outcome, result.reviewed(keys, confidence), additions)
        assert metric is None or metric >= t - 1e-9
        assert result.accepted == brute_force(curves, budget + 1e-9)[0]


def test_vqa_target_is_the_linear_budget():
    # mean ANLS >= t after review  <=>  sum over accepted of (1 - score) <= n (1 - t)
    scores = np.array([1.0, 0.8, 0.0, 1.0, 0.6])
    confidence = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    keys = ["what", "what", "what", "how", "how"]
    result = optimize_thresholds(keys, confidence, 1 - scores, 0.0, budget=len(scores) * (1 - 0.9), tolerance=1e-9)
    reviewed = result.reviewed(keys, confidence)
    assert np.where(reviewed, 1.0, scores).mean() >= 0.9 - 1e-12
    # two optima accept 3: "what" >= 0.9 with all of "how" (cost 0.4), or "what" >= 0.8 with "how" >= 0.6 (0.2)
    assert result.accepted == 3 and result.optimal
    assert result.thresholds in ({"how": 0.5, "what": 0.9}, {"how": 0.6, "what": 0.8})
