"""Reliability tables, ECE, AURC and AUROC (METRICS.md §7; DUDE vectors)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.evaluate.metrics.calibration import aurc, auroc, ece, is_correct, reliability_table
from rpa_sim.evaluate.outcomes import evaluate_kie, evaluate_vqa
from rpa_sim.records.models import KIERecord, VQARecord
from tests.conftest import load_vectors

# -- equal width ---------------------------------------------------------------------------------


def test_equal_width_by_hand():
    # Five bins [0, .2), [.2, .4), [.4, .6), [.6, .8), [.8, 1]; each edge value opens its bin,
    # and 1.0 falls in the last, closed bin.
    conf = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    right = [0, 1, 0, 1, 1, 1]
    table = reliability_table(conf, right, n_bins=5)
    np.testing.assert_allclose(table.lower, [0.0, 0.2, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(table.upper, [0.2, 0.4, 0.6, 0.8, 1.0])
    assert table.count.tolist() == [1, 1, 1, 1, 2]
    np.testing.assert_allclose(table.mean_confidence, [0.0, 0.2, 0.4, 0.6, 0.9])
    np.testing.assert_allclose(table.accuracy, [0.0, 1.0, 0.0, 1.0, 1.0])
    # gaps 0, .8, .4, .4 (one item each) and .1 (two items): (0 + .8 + .4 + .4 + 2 * .1) / 6 = .3
    assert table.ece == pytest.approx(0.3, abs=1e-12)
    assert ece(conf, right, n_bins=5) == pytest.approx(0.3, abs=1e-12)
    assert table.scheme == "equal_width" and table.n == 6


def test_equal_width_default_has_15_bins_and_nan_for_empty_bins():
    table = reliability_table([0.5], [True])
    assert len(table) == 15 and table.count.sum() == 1
    assert table.count[7] == 1  # 0.5 is in [7/15, 8/15)
    assert np.isnan(table.mean_confidence[0]) and np.isnan(table.accuracy[0])
    assert table.ece == pytest.approx(0.5)


def test_equal_width_uses_the_reported_edges_not_a_product():
    # floor(c * n_bins) and "lower <= c < upper" disagree next to some edges, both ways:
    # 0.8999999999999999 * 10 rounds up to 9.0 although it is below the edge 0.9, and 15/22 * 22 rounds
    # down to 14.999999999999998 although 15/22 is the edge itself. The table follows its edges.
    just_below = np.nextafter(0.9, 0)
    assert just_below < 0.9 and np.floor(just_below * 10) == 9 and np.floor(15 / 22 * 22) == 14
    # ten bins; by hand: .05 -> [0, .1); .35 -> [.3, .4); .8999999999999999 -> [.8, .9); .9 and 1 -> [.9, 1]
    conf = [just_below, 0.9, 0.05, 1.0, 0.35]
    right = [1, 0, 1, 1, 0]
    table = reliability_table(conf, right, n_bins=10)
    assert table.count.tolist() == [1, 0, 0, 1, 0, 0, 0, 0, 1, 2]
    filled = table.count > 0
    np.testing.assert_allclose(table.mean_confidence[filled], [0.05, 0.35, just_below, 0.95], rtol=0, atol=1e-15)
    assert table.accuracy[filled].tolist() == [1.0, 0.0, 1.0, 0.5]
    # gaps .95, .35, .1 (one item each) and .45 (two): 2.3 / 5
    assert table.ece == pytest.approx(0.46, abs=1e-12)
    edge = reliability_table([15 / 22, np.nextafter(15 / 22, 0)], [1, 1], n_bins=22)
    assert edge.count[14] == edge.count[15] == 1 and edge.lower[15] == 15 / 22


@st.composite
def near_edges(draw):
    """A bin count, confidences of which many sit on an edge or one float away, and labels."""
    n_bins = draw(st.integers(1, 30))
    edge = st.tuples(st.integers(0, n_bins), st.sampled_from([-np.inf, None, np.inf])).map(
        lambda pair: float(np.clip(pair[0] / n_bins if pair[1] is None else np.nextafter(pair[0] / n_bins, pair[1]),
                                   0.0, 1.0)))
    conf = draw(st.lists(st.one_of(confidences, edge), min_size=1, max_size=40))
    right = draw(st.lists(st.booleans(), min_size=len(conf), max_size=len(conf)))
    return n_bins, conf, right


def assert_rows_hold_their_members(table, conf, right, member):
    """Each row's count, mean confidence and accuracy are those of the confidences ``member`` puts in it."""
    for row in range(len(table)):
        inside = [i for i, c in enumerate(conf) if member(row, c)]
        assert table.count[row] == len(inside), (row, table.lower[row], table.upper[row])
        if inside:
            assert table.mean_confidence[row] == pytest.approx(sum(conf[i] for i in inside) / len(inside), abs=1e-12)
            assert table.accuracy[row] == pytest.approx(sum(right[i] for i in inside) / len(inside), abs=1e-12)
        else:
            assert np.isnan(table.mean_confidence[row]) and np.isnan(table.accuracy[row])
    assert table.count.sum() == len(conf)


@settings(max_examples=300, deadline=None)
@given(near_edges())
def test_equal_width_rows_hold_the_confidences_between_their_edges(sample):
    n_bins, conf, right = sample
    table = reliability_table(conf, right, n_bins=n_bins)
    assert table.lower.tolist() == [i / n_bins for i in range(n_bins)]
    assert table.upper.tolist() == [(i + 1) / n_bins for i in range(n_bins)]
    last = n_bins - 1
    assert_rows_hold_their_members(table, conf, right, lambda row, c: (
        table.lower[row] <= c < table.upper[row] or (row == last and c == 1.0)))


def test_proxies_by_hand():
    table = reliability_table([0.625, 0.875, 0.25], [True, True, False], n_bins=2)
    # bins [0, .5): {.25, wrong}; [.5, 1]: {.625, .875, both right}
    assert table.calibration_error() == pytest.approx((0.25 + 2 * 0.25) / 3)
    assert table.calibration_error(proxy="upper_edge") == pytest.approx((0.5 + 0.0) / 3)
    assert table.calibration_error(proxy="center") == pytest.approx((0.25 + 2 * 0.25) / 3)
    assert ece([0.625, 0.875, 0.25], [1, 1, 0], n_bins=2, proxy="upper_edge") == pytest.approx(0.5 / 3)


# -- equal mass ----------------------------------------------------------------------------------


def test_equal_mass_by_hand_without_ties():
    # 7 items into 3 groups of 3, 2, 2 (array_split): maxima .3 and .5 are upper edges; last edge 1.
    conf = [0.7, 0.1, 0.5, 0.2, 0.9, 0.3, 0.4]
    right = [1, 0, 1, 0, 1, 1, 0]
    table = reliability_table(conf, right, n_bins=3, scheme="equal_mass")
    np.testing.assert_allclose(table.lower, [0.0, 0.3, 0.5])
    np.testing.assert_allclose(table.upper, [0.3, 0.5, 1.0])
    assert table.count.tolist() == [3, 2, 2]
    # [0, .3]: .1 .2 .3 -> right 0 0 1;  (.3, .5]: .4 .5 -> 0 1;  (.5, 1]: .7 .9 -> 1 1
    np.testing.assert_allclose(table.mean_confidence, [0.2, 0.45, 0.8])
    np.testing.assert_allclose(table.accuracy, [1 / 3, 0.5, 1.0])
    expected = (3 * abs(1 / 3 - 0.2) + 2 * abs(0.5 - 0.45) + 2 * abs(1.0 - 0.8)) / 7
    assert table.ece == pytest.approx(expected, abs=1e-12)
    upper_edge = (3 * abs(1 / 3 - 0.3) + 2 * abs(0.5 - 0.5) + 2 * abs(1.0 - 1.0)) / 7
    assert table.calibration_error(proxy="upper_edge") == pytest.approx(upper_edge, abs=1e-12)


def test_equal_mass_ties_at_a_cut_go_to_the_lower_bin_and_equal_edges_merge():
    # sorted: .2 .4 | .4 .4 | .4 .8  -> maxima .4, .4 (equal: merged) -> bins [0, .4], (.4, 1]
    conf = [0.4, 0.2, 0.4, 0.8, 0.4, 0.4]
    table = reliability_table(conf, [1, 1, 0, 1, 0, 1], n_bins=3, scheme="equal_mass")
    np.testing.assert_allclose(table.upper, [0.4, 1.0])
    assert table.count.tolist() == [5, 1]
    np.testing.assert_allclose(table.accuracy, [3 / 5, 1.0])


def test_equal_mass_all_equal_falls_back_to_equal_width():
    table = reliability_table([0.7, 0.7, 0.7], [1, 0, 1], n_bins=4, scheme="equal_mass")
    assert table.scheme == "equal_width" and len(table) == 4
    assert table.count.tolist() == [0, 0, 3, 0]
    assert table.ece == pytest.approx(abs(2 / 3 - 0.7))
    # DUDE's upper-edge proxy then uses the equal-width edge 0.75
    assert table.calibration_error(proxy="upper_edge") == pytest.approx(abs(2 / 3 - 0.75))


def test_equal_mass_with_fewer_items_than_bins():
    table = reliability_table([0.9, 0.1, 0.5], [1, 0, 1], n_bins=10, scheme="equal_mass")
    np.testing.assert_allclose(table.upper, [0.1, 0.5, 1.0])
    assert table.count.tolist() == [1, 1, 1]


def test_equal_mass_a_top_group_of_ones():
    # maxima .5 and 1.0; 1.0 equals the closing edge and is merged with it
    table = reliability_table([0.5, 0.5, 1.0, 1.0, 1.0, 1.0], [1] * 6, n_bins=3, scheme="equal_mass")
    np.testing.assert_allclose(table.upper, [0.5, 1.0])
    assert table.count.tolist() == [2, 4]


def test_dude_ece_inputs_with_the_recorded_kwargs():
    vectors = load_vectors("vectors_dude.json")["ece_inputs_imperfect"]
    kwargs = vectors["ece_kwargs"]
    conf = vectors["confidences"]
    right = vectors["y_correct_anls_ge_threshold"]
    # DUDE passes the references inverted (0 = right) with one probability column, so its
    # "argmax == reference" is exactly "right"; inverting back gives our input.
    assert right == [1 - r for r in vectors["references_passed_to_ece (inverted: 0=correct)"]]
    assert kwargs["n_bins"] == 10 and kwargs["p"] == 1 and kwargs["proxy"] == "upper-edge"
    assert kwargs["scheme"].startswith("equal-mass") and len(set(conf)) != 1
    table = reliability_table(conf, right, n_bins=kwargs["n_bins"], scheme="equal_mass")
    # sorted (right?): .3 (1) .3 (1) | .4 (0) | .4 (1) | .6 | .7 | .75 | .8 (0) | .89 | .95 | .99
    # 11 items into 10 groups: the first group has 2. Group maxima .3 .4 .4 .6 .7 .75 .8 .89 .95,
    # then 1; the repeated .4 merges, so 9 bins.
    np.testing.assert_allclose(table.upper, [0.3, 0.4, 0.6, 0.7, 0.75, 0.8, 0.89, 0.95, 1.0])
    np.testing.assert_allclose(table.lower, [0.0, 0.3, 0.4, 0.6, 0.7, 0.75, 0.8, 0.89, 0.95])
    assert table.count.tolist() == [2, 2, 1, 1, 1, 1, 1, 1, 1]
    np.testing.assert_allclose(table.accuracy, [1, 0.5, 1, 1, 1, 0, 1, 1, 1])
    # mean-confidence gaps: .7 (x2), .1 (x2), .4, .3, .25, .8, .11, .05, .01 -> 3.52 / 11
    assert table.ece == pytest.approx(3.52 / 11, abs=1e-12)
    # upper-edge proxy (DUDE's): the same except the last bin, |1 - 1.0| = 0 -> 3.51 / 11
    upper_edge = ece(conf, right, n_bins=10, scheme="equal_mass", proxy="upper_edge")
    assert upper_edge == pytest.approx(3.51 / 11, abs=1e-12)


# -- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("conf", "right", "kwargs", "message"), [
    ([0.5, 1.7], [1, 0], {}, r"confidence\[1\] must be in \[0, 1\], got 1.7"),
    ([0.5, float("nan")], [1, 0], {}, r"confidence\[1\] must be in \[0, 1\], got nan"),
    ([[0.5]], [1], {}, r"confidence must be one-dimensional, got shape \(1, 1\)"),
    (["a"], [1], {}, r"confidence must hold numbers"),
    ([0.5, 0.6], [1, 2], {}, r"correct\[1\] must be a boolean \(or 0/1\), got 2"),
    ([0.5, 0.6], [1], {}, r"one value per confidence \(2\), got 1"),
    ([], [], {}, r"confidence is empty"),
    ([0.5], [1], {"n_bins": 0}, r"n_bins must be a positive integer, got 0"),
    ([0.5], [1], {"n_bins": True}, r"n_bins must be a positive integer, got True"),
    ([0.5], [1], {"n_bins": 2.5}, r"n_bins must be a positive integer, got 2.5"),
    ([0.5], [1], {"scheme": "equal-mass"}, r"scheme must be one of .*, got 'equal-mass'"),
    ([0.5], [1], {"proxy": "lower"}, r"proxy must be one of .*, got 'lower'"),
])
def test_bad_input_is_refused_with_the_value(conf, right, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ece(conf, right, **kwargs)


def test_tables_are_read_only():
    table = reliability_table([0.2, 0.9], [0, 1], n_bins=2)
    with pytest.raises(ValueError):
        table.count[0] = 5
    with pytest.raises(AttributeError):
        table.scheme = "equal_mass"


# -- properties ----------------------------------------------------------------------------------

confidences = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
samples = st.lists(st.tuples(confidences, st.booleans()), min_size=1, max_size=60)
schemes = st.sampled_from(["equal_width", "equal_mass"])
proxies = st.sampled_from(["mean", "upper_edge", "center"])


@settings(max_examples=200, deadline=None)
@given(samples, st.integers(1, 25), schemes, proxies)
def test_ece_is_in_unit_interval_and_counts_add_up(sample, n_bins, scheme, proxy):
    conf, right = map(list, zip(*sample))
    table = reliability_table(conf, right, n_bins=n_bins, scheme=scheme)
    assert table.count.sum() == len(conf)
    assert 0.0 <= table.calibration_error(proxy=proxy) <= 1.0
    filled = table.count > 0
    assert (table.lower[filled] <= table.mean_confidence[filled] + 1e-12).all()
    assert (table.mean_confidence[filled] <= table.upper[filled] + 1e-12).all()


@settings(max_examples=200, deadline=None)
@given(samples, st.integers(1, 25), schemes, st.randoms(use_true_random=False))
def test_invariant_to_input_order(sample, n_bins, scheme, random):
    conf, right = map(list, zip(*sample))
    shuffled = list(sample)
    random.shuffle(shuffled)
    conf2, right2 = map(list, zip(*shuffled))
    first = reliability_table(conf, right, n_bins=n_bins, scheme=scheme)
    second = reliability_table(conf2, right2, n_bins=n_bins, scheme=scheme)
    assert first.count.tolist() == second.count.tolist()
    np.testing.assert_array_equal(first.upper, second.upper)
    np.testing.assert_allclose(first.accuracy, second.accuracy, atol=1e-12)
    assert abs(first.ece - second.ece) < 1e-12
    assert auroc(conf, right) == pytest.approx(auroc(conf2, right2), nan_ok=True, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 8)), min_size=1, max_size=10),
       st.integers(1, 20), schemes)
def test_a_perfectly_calibrated_construction_has_ece_zero(levels, n_bins, scheme):
    # For each (m, j) put m items at confidence j/m (j clipped to m), j of them right: every
    # distinct confidence is matched by its accuracy, and both schemes keep equal values together.
    conf, right = [], []
    for m, j in levels:
        j = min(j, m)
        conf += [j / m] * m
        right += [True] * j + [False] * (m - j)
    assert ece(conf, right, n_bins=n_bins, scheme=scheme) < 1e-12


@settings(max_examples=200, deadline=None)
@given(st.lists(confidences, min_size=1, max_size=60, unique=True), st.integers(1, 25), st.data())
def test_equal_mass_without_ties_cuts_like_array_split(conf, n_bins, data):
    right = data.draw(st.lists(st.booleans(), min_size=len(conf), max_size=len(conf)))
    table = reliability_table(conf, right, n_bins=n_bins, scheme="equal_mass")
    if table.scheme == "equal_mass":
        sizes = [len(group) for group in np.array_split(np.sort(conf), min(n_bins, len(conf)))]
        assert table.count.tolist() == sizes


def test_equal_mass_membership_follows_the_edges():
    # sorted: .1 .2 .2 | .2 .5 .5 | .7 .9 | .9 1 (4 groups of 3, 3, 2, 2); maxima .2 .5 .9, closing edge 1.
    # The run of .2s straddling the first cut and the .9s straddling the third go to the lower bin:
    # [0, .2]: .1 .2 .2 .2;  (.2, .5]: .5 .5;  (.5, .9]: .7 .9 .9;  (.9, 1]: 1
    conf = [0.9, 0.2, 0.5, 0.1, 1.0, 0.2, 0.7, 0.5, 0.9, 0.2]
    right = [1, 1, 1, 0, 1, 0, 1, 0, 1, 1]
    table = reliability_table(conf, right, n_bins=4, scheme="equal_mass")
    assert table.lower.tolist() == [0.0, 0.2, 0.5, 0.9] and table.upper.tolist() == [0.2, 0.5, 0.9, 1.0]
    assert table.count.tolist() == [4, 2, 3, 1]
    np.testing.assert_allclose(table.mean_confidence, [0.7 / 4, 0.5, 2.5 / 3, 1.0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(table.accuracy, [0.5, 0.5, 1.0, 1.0], rtol=0, atol=1e-15)
    # gaps .325 (x4), 0 (x2), 1/6 (x3), 0: (1.3 + .5) / 10; upper edges: .3 (x4), 0, .1 (x3), 0: 1.5 / 10
    assert table.ece == pytest.approx(0.18, abs=1e-12)
    assert table.calibration_error(proxy="upper_edge") == pytest.approx(0.15, abs=1e-12)


def documented_equal_mass_edges(conf, n_bins):
    """docs/calibration.md, equal mass, steps 1, 2 and 4: the group maxima but the last's, then 1, merged."""
    ordered = sorted(conf)
    groups = min(n_bins, len(ordered))
    size, larger = divmod(len(ordered), groups)
    ends, end = [], 0
    for group in range(groups - 1):
        end += size + (group < larger)
        ends.append(ordered[end - 1])
    return sorted(set(ends) | {1.0})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12).map(lambda v: v / 12), st.booleans()), min_size=2, max_size=50),
       st.integers(1, 20))
def test_equal_mass_rows_hold_the_confidences_between_their_edges(sample, n_bins):
    # few distinct values: ties at the cuts are the rule, not the exception
    conf, right = map(list, zip(*sample))
    table = reliability_table(conf, right, n_bins=n_bins, scheme="equal_mass")
    if len(set(conf)) == 1:
        assert table.scheme == "equal_width"
        return
    assert table.upper.tolist() == documented_equal_mass_edges(conf, n_bins)
    assert table.lower.tolist() == [0.0] + table.upper.tolist()[:-1]
    assert_rows_hold_their_members(table, conf, right, lambda row, c: (
        table.lower[row] < c <= table.upper[row] or (row == 0 and c == 0.0)))


# -- AURC and AUROC (DUDE vectors, computed with failure_detection.py) -----------------------------


def _aurc_cases():
    return [case for case in load_vectors("vectors_dude.json")["aurc_auroc_cases"] if "aurc" in case]


def test_aurc_matches_every_dude_case():
    cases = _aurc_cases()
    assert len(cases) == 3
    for case in cases:
        assert abs(aurc(case["confidences"], case["correct"]) - case["aurc"]) <= 1e-12, case["name"]


def test_aurc_matches_dude_on_the_imperfect_demo():
    vectors = load_vectors("vectors_dude.json")["ece_inputs_imperfect"]
    value = aurc(vectors["confidences"], vectors["y_correct_anls_ge_threshold"])
    assert abs(value - vectors["aurc_phase2_on_imperfect"]["aurc"]) <= 1e-12


def test_aurc_by_hand_and_the_tie_rule():
    # DUDE's separable case: sorted .1 .1 .3 .9 1.0, wrong wrong wrong right right.
    # Risks: 3/5 at the start; after the first drop 2/4 (a point); the second .1 is a tie (no
    # point, its width joins the next trapezoid); after .3, 0/2 (a point, width 2/5); after .9, 0.
    # Area: (3/5 + 2/4) / 2 * 1/5 + (2/4 + 0) / 2 * 2/5 + 0 = 0.11 + 0.1
    assert aurc([0.9, 0.1, 0.3, 1.0, 0.1], [1, 0, 0, 1, 0]) == pytest.approx(0.21, abs=1e-15)
    # A tie run that ends the curve gets a final point repeating the last recorded risk:
    # sorted .2 (wrong), .5 .5 .5 (right, right, wrong; only three drops, the last item stays).
    # Risk 2/4 at the start; drop .2 -> 1/3 (point, width 1/4); drop the first .5 -> 1/2 (point,
    # width 1/4); drop the second .5 -> 1/1, a tie: no point, and the final point repeats 1/2
    # (not 1) with width 1/4.
    value = aurc([0.5, 0.2, 0.5, 0.5], [1, 0, 1, 0])
    expected = ((2 / 4 + 1 / 3) / 2 + (1 / 3 + 1 / 2) / 2 + (1 / 2 + 1 / 2) / 2) * 1 / 4
    assert value == pytest.approx(expected, abs=1e-15)


def test_aurc_depends_on_the_order_of_tied_items_as_dude_does():
    # DUDE's unseparable_lowcorrect: the two .1s are one right, one wrong. Input order (a
    # stable sort) drops the right one first, which is what gives DUDE's 0.19.
    assert aurc([0.9, 0.1, 0.3, 1.0, 0.1], [1, 1, 0, 1, 0]) == pytest.approx(0.19, abs=1e-15)
    assert aurc([0.9, 0.1, 0.3, 1.0, 0.1], [1, 0, 0, 1, 1]) == pytest.approx(0.115, abs=1e-15)


def test_aurc_edge_cases():
    assert aurc([0.4], [False]) == 0.0
    assert aurc([0.1, 0.2, 0.3], [1, 1, 1]) == 0.0
    assert aurc([0.1, 0.2, 0.3], [0, 0, 0]) == pytest.approx(2 / 3)  # risk 1 over width 2/3
    with pytest.raises(ValueError, match="empty"):
        aurc([], [])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(confidences, st.booleans()), min_size=2, max_size=50, unique_by=lambda t: t[0]),
       st.randoms(use_true_random=False))
def test_aurc_bounds_and_order_invariance_without_ties(sample, random):
    conf, right = map(list, zip(*sample))
    value = aurc(conf, right)
    assert 0.0 <= value <= 1.0
    random.shuffle(sample)
    conf2, right2 = map(list, zip(*sample))
    assert aurc(conf2, right2) == pytest.approx(value, abs=1e-12)


def test_auroc_matches_every_dude_case():
    cases = load_vectors("vectors_dude.json")["aurc_auroc_cases"]
    assert len(cases) == 6
    for case in cases:
        if "AUROC_f" in case:
            value, expected = auroc(case["confidences"], case["correct"]), case["AUROC_f"]
        else:
            value, expected = auroc(case["confidences"], case["is_iid"]), case["AUROC"]
        assert abs(value - expected) <= 1e-12, case["name"]


def test_auroc_by_hand():
    # right at .9, .1, 1.0; wrong at .3, .1. Pairs (right > wrong): .9>.3 .9>.1 1>.3 1>.1 -> 4,
    # .1 vs .3 -> 0, .1 vs .1 -> 1/2; 4.5 / 6
    assert auroc([0.9, 0.1, 0.3, 1.0, 0.1], [1, 1, 0, 1, 0]) == pytest.approx(0.75)
    assert np.isnan(auroc([0.2, 0.3], [0, 0]))


@settings(max_examples=100, deadline=None)
@given(samples)
def test_auroc_complements_when_labels_flip(sample):
    conf, right = map(list, zip(*sample))
    value = auroc(conf, right)
    if np.isnan(value):
        assert len(set(right)) == 1
    else:
        assert 0.0 <= value <= 1.0
        assert value + auroc(conf, [not r for r in right]) == pytest.approx(1.0)


# -- outcome tables ------------------------------------------------------------------------------


def test_is_correct_reads_outcome_tables():
    record = KIERecord.model_validate({"id": "r1",
        "ground_truth": {"entities": [{"key": "total", "value": "10.00"}, {"key": "date", "value": "1.1"}]},
        "prediction": {"entities": [{"key": "total", "value": "10.0", "confidence": 0.4},
                                    {"key": "date", "value": "1.1", "confidence": 0.9}]}})
    kie = evaluate_kie([record])
    assert is_correct(kie).tolist() == (kie.outcome == 0).tolist()
    assert sorted(zip(kie.confidence.tolist(), is_correct(kie).tolist())) == [(0.4, False), (0.9, True)]
    questions = [VQARecord.model_validate({"id": f"q{i}", "answers": [answer],
                                           "prediction": {"answer": "abcd", "confidence": 0.5}})
                 for i, answer in enumerate(["abcd", "abxy", "wxyz"])]
    vqa = evaluate_vqa(questions)
    assert vqa.anls.tolist() == [1.0, 0.5, 0.0]
    assert is_correct(vqa).tolist() == [True, True, False]  # ANLS >= 0.5
    with pytest.raises(TypeError, match="KIEOutcomes or VQAOutcomes"):
        is_correct([0.5])
