"""ANLS* against the anls_star package, its test suite, the paper's examples and random trees (METRICS.md §2)."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import warnings
from contextlib import contextmanager

import pytest
from anls_star import anls_score
from hypothesis import given, settings
from hypothesis import strategies as st

from rpa_sim.metrics.anls_star import anls_star
from tests.conftest import load_vectors

# Where the README's rule (a hallucinated None-like key is ignored) and the
# package's arithmetic (skipped in the score, counted in the length) part.
README_VALUES = {
    "dict_hallucinated_none_key_ignored": 1.0,
    "dict_hallucinated_empty_str_key_ignored": 1.0,
}

# The package leaves list ties to munkres; munkres 3.0.0 breaks them one way in
# Python and another way in its optional C kernel (used from 16 cells up).
# rpa_sim reproduces the Python solver, so exact comparisons switch the kernel off.
MUNKRES_3 = importlib.metadata.version("munkres") == "3.0.0"


@contextmanager
def munkres_in_python():
    """Run the package with munkres' pure-Python solver (the documented PALDITA_NO_NATIVE switch)."""
    import munkres

    previous = os.environ.get("PALDITA_NO_NATIVE")
    os.environ["PALDITA_NO_NATIVE"] = "1"
    munkres.reset_native()
    try:
        yield
    finally:
        if previous is None:
            del os.environ["PALDITA_NO_NATIVE"]
        else:
            os.environ["PALDITA_NO_NATIVE"] = previous
        munkres.reset_native()


def literal(text):
    # One vector holds float("nan"), which has no Python literal.
    return float("nan") if text == "nan" else ast.literal_eval(text)


def vector_cases():
    vectors = load_vectors("vectors_anls_star.json")
    return vectors["from_test_suite"] + vectors["extra_computed_here"]


def score_quietly(gt, pred, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return anls_star(gt, pred, **options)


def test_every_vector_with_the_package_arithmetic():
    for case in vector_cases():
        gt, pred = literal(case["gt_py"]), literal(case["pred_py"])
        assert score_quietly(gt, pred, none_hallucinations="count") == pytest.approx(case["score"], abs=1e-9), \
            case["name"]
        if case.get("expected_in_test_suite") is not None:
            # The package's own tests round some expectations to two decimals.
            assert case["score"] == pytest.approx(case["expected_in_test_suite"], abs=0.005), case["name"]


def test_every_vector_with_the_readme_rule():
    for case in vector_cases():
        gt, pred = literal(case["gt_py"]), literal(case["pred_py"])
        expected = README_VALUES.get(case["name"], case["score"])
        assert score_quietly(gt, pred) == pytest.approx(expected, abs=1e-9), case["name"]


def test_hallucinated_none_keys():
    # README: "if a model generates e.g. a None key in a dictionary that is not in
    # the ground truth, ANLS* ignores it". The package counts it in the length.
    assert anls_star({"a": "x"}, {"a": "x", "b": None}) == 1.0
    assert anls_star({"a": "x"}, {"a": "x", "b": None}, none_hallucinations="count") == 0.5
    assert anls_score({"a": "x"}, {"a": "x", "b": None}) == 0.5
    # [] and {} are None-like too; a ground-truth None key is not a hallucination.
    assert anls_star({"a": "x"}, {"a": "x", "b": [], "c": {}}) == 1.0
    assert anls_star({"a": "x", "b": None}, {"a": "x", "b": None}, none_hallucinations="count") == 1.0
    # False is a value, not None-like: it is a hallucination in both modes.
    assert anls_star({}, {"b": False}) == anls_star({}, {"b": False}, none_hallucinations="count") == 0.0


def test_compatibility_mode_warns_like_the_package():
    for case in vector_cases():
        gt, pred = literal(case["gt_py"]), literal(case["pred_py"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            anls_star(gt, pred)
        assert bool(caught) == bool(case["warnings"]), case["name"]


def test_paper_complex_object():
    # Every leaf weighs the same: a = 1 plus b's list w, r, d matched out of w, r, l, d
    # is (1 + 3) / (1 + 4) = 0.8, not the mean of the per-key scores (1 + 0.75) / 2.
    gt = {"a": "Hello", "b": ["w", "r", "l", "d"]}
    assert anls_star(gt, {"a": "Hello", "b": ["w", "r", "d"]}) == pytest.approx(0.8, abs=1e-15)


def test_paper_line_items():
    gt = {"k1": 1, "k2": "mock", "line_items": [{"a": "b", "c": "d"}, {"e": "f"}]}
    pred = {"k1": 1, "k2": "kcom", "line_items": [{"e": "f"}, {"a": "y", "c": "d"}]}
    # k1 1, k2 0 ("kcom" is 4 edits from "mock"), the reordered items matched: e 1, a 0, c 1.
    assert anls_star(gt, pred) == pytest.approx(3 / 5, abs=1e-15)


def test_key_scores_hierarchy_total():
    case = next(c for c in vector_cases() if c["name"] == "key_scores_complex_hierarchy")
    # a 5/6; b: (aa, b) against (a, q) 0.5 + 0, (c, d) 1 + 1, (e, f) unmatched; c missing;
    # second_order: name 1, age 0.5, items (1, 12.3) against (1, 12.1) 1 + 0.75, (2, 13.4)
    # against (3, 13.4) 0 + 1. That is 91/12 over 14 leaves.
    assert anls_star(literal(case["gt_py"]), literal(case["pred_py"])) == pytest.approx(13 / 24, abs=1e-12)


def test_tuple_ties_take_the_first_best_option():
    # [] against [] and None against [] both score 1; their lengths differ (0 and 1),
    # so which one wins changes the total. The package keeps the first.
    assert anls_star({"x": ([], None), "y": "a"}, {"x": [], "y": "b"}) == 0.0
    assert anls_star({"x": (None, []), "y": "a"}, {"x": [], "y": "b"}) == 0.5
    for gt in ({"x": ([], None), "y": "a"}, {"x": (None, []), "y": "a"}):
        assert anls_star(gt, {"x": [], "y": "b"}) == anls_score(gt, {"x": [], "y": "b"})


def test_list_ties_follow_the_package():
    # The prediction is equally good (1/2) against either item, but matching the
    # two-key item leaves one leaf unmatched (1 / (2 + 1)) and matching the one-key
    # item leaves two (1 / (2 + 2)). munkres takes the first item.
    gt = [{"a": "x", "b": "y"}, {"a": "x"}]
    pred = [{"a": "x", "b": "q"}]
    assert anls_star(gt, pred) == anls_score(gt, pred) == pytest.approx(1 / 3, abs=1e-15)
    assert anls_star(gt[::-1], pred) == anls_score(gt[::-1], pred) == pytest.approx(1 / 4, abs=1e-15)


@pytest.mark.skipif(not MUNKRES_3, reason="the C-kernel tie difference is specific to munkres 3.0.0")
def test_tie_broken_as_munkres_does_in_python():
    gt = [{"x": "ab"}, {"y": "", "x": "ba"}, {"z": "bb", "x": "b"}, {}, {"z": "b", "x": ""}]
    pred = [{"x": ""}, {"z": "a"}, {"z": "b", "x": ""}, {}, {"z": "ab", "x": "aa", "y": "bb"}]
    with munkres_in_python():
        assert anls_score(gt, pred) == pytest.approx(5 / 18, abs=1e-15)
    assert anls_star(gt, pred, none_hallucinations="count") == pytest.approx(5 / 18, abs=1e-15)
    import munkres

    if munkres.native_status()["available"]:
        # 5 x 5 cells: the package hands this matrix to the C kernel, which picks
        # another optimal matching and so another score.
        assert anls_score(gt, pred) == pytest.approx(0.25, abs=1e-15)


@pytest.mark.parametrize(
    ("gt", "pred", "message"),
    [
        ((), "a", r"at least one option, got the empty tuple \(\)"),
        ("a", ("a",), r"cannot hold a tuple .*: \('a',\)"),
        ({"a"}, "a", r"got set: \{'a'\}"),
        ("a", [object()], r"got object: <object object at"),
        ({"k": [1, {"x": b"raw"}]}, {}, r"got bytes: b'raw'"),
    ],
)
def test_unsupported_input_is_refused_like_the_package(gt, pred, message):
    with pytest.raises(ValueError, match=message):
        anls_star(gt, pred)
    with pytest.raises(ValueError):
        anls_score(gt, pred)


def test_the_vector_errors_are_covered():
    names = {e["name"] for e in load_vectors("vectors_anls_star.json")["errors"]}
    assert names == {"empty_tuple_gt", "tuple_in_pred", "unsupported_type_set", "unsupported_type_in_pred"}


def test_unknown_option_is_refused():
    with pytest.raises(ValueError, match="none_hallucinations must be \"ignore\" or \"count\", got 'skip'"):
        anls_star("a", "a", none_hallucinations="skip")


def test_threshold_is_a_distance_kept_at_equality():
    assert anls_star("ab", "ac") == 0.5
    assert anls_star("ab", "ac", threshold=0.4) == 0.0
    assert anls_star(["abcd", "efgh"], ["abcx", "xxxh"], threshold=0.75) == pytest.approx((0.75 + 0.25) / 2)


# --- random trees -------------------------------------------------------------------------------

# Two letters and short strings, so that partial matches, the 0.5 boundary and
# ties between matchings are common; a few numbers and booleans for the text rules.
strings = st.text(alphabet="ab", max_size=3)
leaves = st.one_of(strings, strings, strings, st.none(), st.sampled_from([0, 1, 1.0, True, False, -0.0, 0.0]))
keys = st.sampled_from("xyz")


def containers(children):
    return st.one_of(st.lists(children, max_size=5), st.dictionaries(keys, children, max_size=3))


predictions = st.recursive(leaves, containers, max_leaves=12)
ground_truths = st.recursive(
    leaves, lambda children: containers(children) | st.lists(children, min_size=1, max_size=3).map(tuple),
    max_leaves=12,
)
line_items = st.lists(st.dictionaries(keys, st.one_of(st.text(alphabet="ab", max_size=2), st.none()), max_size=3),
                      max_size=7)


def assert_matches_package(gt, pred):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            with munkres_in_python():
                in_python = anls_score(gt, pred)
        except ValueError:
            with pytest.raises(ValueError):
                anls_star(gt, pred)
            return
        ours = anls_star(gt, pred, none_hallucinations="count")
    assert ours == pytest.approx(in_python, abs=1e-9)
    assert 0.0 <= ours <= 1.0


@pytest.mark.skipif(not MUNKRES_3, reason="ties are compared with munkres 3.0.0's Python solver")
@given(ground_truths, predictions)
@settings(max_examples=400, deadline=None)
def test_random_trees_match_the_package(gt, pred):
    assert_matches_package(gt, pred)


@pytest.mark.skipif(not MUNKRES_3, reason="ties are compared with munkres 3.0.0's Python solver")
@given(line_items, line_items)
@settings(max_examples=300, deadline=None)
def test_random_line_items_match_the_package(gt, pred):
    assert_matches_package(gt, pred)


def has_none_like_key(tree):
    if isinstance(tree, dict):
        return any(v in (None, "", [], {}) or has_none_like_key(v) for v in tree.values())
    return isinstance(tree, list) and any(has_none_like_key(v) for v in tree)


@given(ground_truths, predictions)
@settings(max_examples=300, deadline=None)
def test_readme_rule_changes_only_none_like_keys(gt, pred):
    try:
        ignored = score_quietly(gt, pred)
    except ValueError:
        return
    assert 0.0 <= ignored <= 1.0
    if not has_none_like_key(pred):
        assert ignored == score_quietly(gt, pred, none_hallucinations="count")


@given(predictions)
@settings(max_examples=200, deadline=None)
def test_a_prediction_equal_to_its_ground_truth_scores_one(tree):
    assert score_quietly(tree, tree) == 1.0
    assert score_quietly(tree, tree, none_hallucinations="count") == 1.0
