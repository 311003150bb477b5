"""ANLS* against the anls_star package, its tests, the paper, random trees and a brute-force oracle (METRICS.md §2)."""

from __future__ import annotations

import ast
import warnings
from fractions import Fraction
from itertools import permutations, product
from typing import Any, NamedTuple

import pytest
from anls_star import anls_score
from hypothesis import event, given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from rpa_sim.evaluate.metrics.anls_star import anls_star
from tests.conftest import load_vectors

# Where the README's rule (a hallucinated None-like key is ignored) and the
# package's arithmetic (skipped in the score, counted in the length) part.
README_VALUES = {
    "dict_hallucinated_none_key_ignored": 1.0,
    "dict_hallucinated_empty_str_key_ignored": 1.0,
}


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


def test_the_vectors_are_tie_free():
    # Every matching that maximises the package's objective gives the vector's
    # score, so the tie rule cannot part from the package on any of them.
    for case in vector_cases():
        gt, pred = literal(case["gt_py"]), literal(case["pred_py"])
        _, reachable = oracle(gt, pred)
        assert all(float(score(o)) == pytest.approx(case["score"], abs=1e-9) for o in reachable), case["name"]


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


def test_list_ties_take_the_most_favourable_optimum():
    # The prediction is equally good (mean 1/2) against either item, so both
    # matchings maximise the package's objective. Matching the two-key item
    # leaves the other one unmatched: 1 / (2 + 1). Matching the one-key item
    # leaves two leaves unmatched: 1 / (2 + 2). rpa_sim takes 1/3 in either
    # order; the package follows munkres, which takes the first item.
    gt = [{"a": "x", "b": "y"}, {"a": "x"}]
    pred = [{"a": "x", "b": "q"}]
    assert anls_star(gt, pred) == anls_star(gt[::-1], pred) == pytest.approx(1 / 3, abs=1e-15)
    assert anls_score(gt, pred) == pytest.approx(1 / 3, abs=1e-15)
    assert anls_score(gt[::-1], pred) == pytest.approx(1 / 4, abs=1e-15)
    # The same with a predicted element that matches nothing (a 2 x 2 matrix):
    # "z" takes the one-key item's place, 1 / (2 + 1), not the other's, 1 / (2 + 2).
    assert anls_star(gt, pred + ["z"]) == anls_star(gt[::-1], ["z", *pred]) == pytest.approx(1 / 3, abs=1e-15)


def test_list_ties_go_to_the_best_score_not_the_shortest_list():
    # Either matching sums to 1/2: {"y": "a"} scores 1/2 against both items,
    # {"x": "a"} 0 against both. Pairing {"y": "a"} with the two-key item (where
    # its key is exact) gives 1 / (2 + 2); with the one-key item, 1/2 / (1 + 2):
    # the shorter list, but the lower score.
    gt = [{"y": "aa"}, {"x": "b", "y": "a"}]
    pred = [{"x": "a"}, {"y": "a"}]
    for g, p in ((gt, pred), (gt[::-1], pred), (gt, pred[::-1]), (gt[::-1], pred[::-1])):
        assert anls_star(g, p) == pytest.approx(1 / 4, abs=1e-15)
    assert anls_score(gt, pred) == pytest.approx(1 / 6, abs=1e-15)
    assert anls_score(gt[::-1], pred) == pytest.approx(1 / 4, abs=1e-15)


def test_list_ties_ignore_the_package_nudge_for_exact_pairs():
    # {"a": "x"} scores 1 against both items ("X" is lower-cased, the missing
    # key "b" matches None). The package nudges the exact pair up by one ulp and
    # takes it in both orders: 1 / (1 + 2). The other optimum covers two leaves:
    # 2 / (2 + 1), which rpa_sim takes.
    gt = [{"a": "X", "b": None}, {"a": "x"}]
    pred = [{"a": "x"}]
    assert anls_star(gt, pred) == anls_star(gt[::-1], pred) == pytest.approx(2 / 3, abs=1e-15)
    assert anls_score(gt, pred) == anls_score(gt[::-1], pred) == pytest.approx(1 / 3, abs=1e-15)
    # For a pair of mean 0 the nudge (to 5e-324) vanishes in the package's costs:
    # {"z": ""} is exact against {} (its None-like key is dropped from the closest
    # ground truth) but scores 0 there, as against the two-key item; the package
    # pairs it with the latter, 2 / (2 + 2), as rpa_sim does.
    gt = [{"x": None, "z": None}, {"z": ""}]
    pred = [{"x": "bb", "z": "b"}, {}, {}]
    assert anls_star(gt, pred, none_hallucinations="count") == anls_score(gt, pred) == pytest.approx(0.5, abs=1e-15)


def test_ties_with_huge_denominators_use_rounded_weights():
    # Duplicated items are the usual tie in real documents. Texts of twelve
    # prime lengths push the common denominator of the similarities past 2**53:
    # the weights are rounded (the documented fallback), the ties still found.
    primes = [37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83]
    texts = [chr(ord("a") + i) * p for i, p in enumerate(primes)]
    gt = [{"k": t} for t in texts] * 2
    pred = [{"k": t[1:]} for t in texts] * 2
    expected = sum(2 * (p - 1) / p for p in primes) / len(gt)
    assert anls_star(gt, pred) == pytest.approx(expected, abs=1e-12)
    assert anls_star(gt[::-1], pred) == pytest.approx(expected, abs=1e-12)


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
    return st.one_of(st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=3))


predictions = st.recursive(leaves, containers, max_leaves=12)
ground_truths = st.recursive(
    leaves, lambda children: containers(children) | st.lists(children, min_size=1, max_size=3).map(tuple),
    max_leaves=12,
)
line_item = st.dictionaries(keys, st.one_of(st.text(alphabet="ab", max_size=2), st.none()), max_size=3)
line_items = st.lists(line_item, max_size=7)
# The oracle enumerates every matching: at most 4 elements a side.
few_line_items = st.lists(line_item, max_size=4)


# --- an independent oracle --------------------------------------------------------------------
# ANLS* restated from the paper and the package's semantics, in exact fractions,
# with lists matched by enumerating every matching. For each list it yields both
# the outcome of rpa_sim's documented tie rule and every outcome the package can
# reach, i.e. that some matching maximising the sum of pair means produces.


class Outcome(NamedTuple):
    total: Fraction  # sum of leaf similarities
    length: int
    closest: Any  # the package's "closest ground truth" object

    @property
    def mean(self):
        return self.total / self.length if self.length else Fraction(1)


def none_like(x):
    return x is None or (isinstance(x, (str, list, dict)) and not x)


def size(x):
    if isinstance(x, tuple):
        return max(size(o) for o in x)
    if isinstance(x, list):
        return sum(size(v) for v in x)
    if isinstance(x, dict):
        return sum(size(v) for v in x.values())
    return 1


def text(x):
    return " ".join(str(x).strip().lower().split())


def distinct(outcomes):
    return list({(o.total, o.length, repr(o.closest)): o for o in outcomes}.values())


class Oracle:
    """``evaluate(g, p)`` gives (the tie rule's outcome, every reachable outcome or None when too many)."""

    LIMIT = 64  # combinations of element outcomes enumerated per list, beyond which reachability is not decided

    def __init__(self, none_key_length=1):
        self.none_key_length = none_key_length

    def evaluate(self, g, p):
        if isinstance(g, tuple):
            return self.one_of(g, p)
        if g is None:
            hit = none_like(p)
            o = Outcome(Fraction(int(hit)), max(1, size(p)), p if hit else None)
            return o, [o]
        if isinstance(g, list) and isinstance(p, list):
            return self.lists(g, p)
        if isinstance(g, dict) and isinstance(p, dict):
            return self.dicts(g, p)
        if isinstance(g, (list, dict)) or isinstance(p, (list, dict)) or p is None:
            o = Outcome(Fraction(0), max(size(g), size(p)), g)
            return o, [o]
        a, b = text(g), text(p)
        longest = max(len(a), len(b))
        distance = Levenshtein.distance(a, b)
        o = Outcome(Fraction(longest - distance, longest) if 2 * distance <= longest else Fraction(0), 1, g) \
            if longest else Outcome(Fraction(1), 1, g)
        return o, [o]

    def one_of(self, options, p):
        """The first option with the best mean, an option equal to the prediction first on equal means."""
        def choose(outcomes):
            return max(enumerate(outcomes), key=lambda io: (io[1].mean, io[1].closest == p, -io[0]))[1]
        evaluated = [self.evaluate(o, p) for o in options]
        rule = choose([e[0] for e in evaluated])
        if any(e[1] is None for e in evaluated):
            return rule, None
        return rule, distinct(choose(c) for c in product(*(e[1] for e in evaluated)))

    def dicts(self, g, p):
        keys = list(g) + [k for k in p if k not in g]
        fixed_length = sum(self.none_key_length for k in p if k not in g and none_like(p[k]))
        keys = [k for k in keys if k in g or not none_like(p[k])]
        evaluated = [self.evaluate(g.get(k), p.get(k)) for k in keys]

        def combine(outcomes):
            closest = {k: o.closest for k, o in zip(keys, outcomes) if k in p or not none_like(o.closest)}
            return Outcome(sum((o.total for o in outcomes), Fraction(0)),
                           fixed_length + sum(o.length for o in outcomes), closest)

        rule = combine([e[0] for e in evaluated])
        if any(e[1] is None for e in evaluated) or prod_size(e[1] for e in evaluated) > self.LIMIT:
            return rule, None
        return rule, distinct(combine(c) for c in product(*(e[1] for e in evaluated)))

    def lists(self, g, p):
        if not g or not p:
            o = Outcome(Fraction(0), size(g) + size(p), list(g))
            return o, [o]
        cells = [[self.evaluate(gi, pj) for pj in p] for gi in g]
        rule = self.match(g, p, [[c[0] for c in row] for row in cells], favourable=True)[0]
        options = [c[1] for row in cells for c in row]
        if any(o is None for o in options) or prod_size(options) > self.LIMIT:
            return rule, None
        reachable = []
        for choice in product(*options):
            grid = [list(choice[i * len(p):(i + 1) * len(p)]) for i in range(len(g))]
            reachable += self.match(g, p, grid, favourable=False)
        return rule, distinct(reachable)

    @staticmethod
    def match(g, p, grid, favourable):
        """Outcomes of the matchings with the largest sum of means: all of them, or the rule's one.

        The rule, among those: the highest score, then the shortest length, then
        the most exact pairs (closest ground truth equal to the prediction).
        """
        n, m = len(g), len(p)
        if n <= m:
            matchings = [list(zip(range(n), cols)) for cols in permutations(range(m), n)]
        else:
            matchings = [sorted(zip(rows, range(m))) for rows in permutations(range(n), m)]
        scored = []
        for pairs in matchings:
            rows = {i for i, _ in pairs}
            cols = {j for _, j in pairs}
            total = sum((grid[i][j].total for i, j in pairs), Fraction(0))
            length = sum(grid[i][j].length for i, j in pairs) + sum(size(g[i]) for i in range(n) if i not in rows) \
                + sum(size(p[j]) for j in range(m) if j not in cols)
            closest = [grid[i][j].closest for i, j in sorted(pairs, key=lambda ij: ij[1])]
            closest += [g[i] for i in range(n) if i not in rows]
            score = total / length if length else Fraction(1)
            exact = sum(grid[i][j].closest == p[j] for i, j in pairs)
            mean_sum = sum(grid[i][j].mean for i, j in pairs)
            scored.append((mean_sum, score, -length, exact, Outcome(total, length, closest)))
        best = max(s[0] for s in scored)
        optimal = [s for s in scored if s[0] == best]
        if not favourable:
            return [s[-1] for s in optimal]
        top = max(s[:4] for s in optimal)
        return [s[-1] for s in optimal if s[:4] == top]


def prod_size(lists):
    count = 1
    for x in lists:
        count *= len(x)
    return count


def score(outcome):
    return outcome.total / outcome.length if outcome.length else Fraction(1)


def oracle(gt, pred, **options):
    if isinstance(pred, str) and isinstance(gt, list) and all(isinstance(x, str) for x in gt):
        gt = tuple(gt)  # the package's compatibility mode, as anls_star does
    return Oracle(**options).evaluate(gt, pred)


def test_the_oracle_on_the_tie_examples():
    rule, reachable = oracle([{"a": "x", "b": "y"}, {"a": "x"}], [{"a": "x", "b": "q"}])
    assert score(rule) == Fraction(1, 3)
    assert sorted(score(o) for o in reachable) == [Fraction(1, 4), Fraction(1, 3)]
    rule, reachable = oracle([{"y": "aa"}, {"x": "b", "y": "a"}], [{"x": "a"}, {"y": "a"}])
    assert score(rule) == Fraction(1, 4)
    assert sorted(score(o) for o in reachable) == [Fraction(1, 6), Fraction(1, 4)]


def check_against_package_and_oracle(gt, pred):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            package = anls_score(gt, pred)
        except ValueError:
            with pytest.raises(ValueError):
                anls_star(gt, pred)
            return
        ours = anls_star(gt, pred, none_hallucinations="count")
        readme = anls_star(gt, pred)
    rule, reachable = oracle(gt, pred)
    assert ours == pytest.approx(float(score(rule)), abs=1e-12)
    assert readme == pytest.approx(float(score(oracle(gt, pred, none_key_length=0)[0])), abs=1e-12)
    if reachable is None:
        event("too many element outcomes to enumerate what the package can reach")
        return
    scores = {score(o) for o in reachable}
    # What the package returns is what some optimal matching gives.
    assert any(package == pytest.approx(float(s), abs=1e-9) for s in scores), (package, scores)
    if len(scores) == 1:
        # Ties, if any, do not change the score: the package must agree.
        assert ours == pytest.approx(package, abs=1e-9)
        event("the optimal matchings all give one score")
    elif ours == pytest.approx(package, abs=1e-9):
        event("ties change the score; the package took the rule's optimum")
    else:
        event("ties change the score; the package took another optimum")


@pytest.mark.slow
@given(ground_truths, predictions)
@settings(max_examples=1000, deadline=None)
def test_random_trees_against_the_package_and_the_oracle(gt, pred):
    check_against_package_and_oracle(gt, pred)


@pytest.mark.slow
@given(few_line_items, few_line_items)
@settings(max_examples=1000, deadline=None)
def test_random_line_items_against_the_package_and_the_oracle(gt, pred):
    check_against_package_and_oracle(gt, pred)
    # One flat list: its matching is the only choice, and the rule takes the best optimum.
    best = max(score(o) for o in oracle(gt, pred)[1])
    assert anls_star(gt, pred, none_hallucinations="count") == pytest.approx(float(best), abs=1e-12)


def shuffled(tree, rng):
    """``tree`` with the elements of every list shuffled (tuples are ordered: the first best option wins)."""
    if isinstance(tree, list):
        items = [shuffled(x, rng) for x in tree]
        rng.shuffle(items)
        return items
    if isinstance(tree, tuple):
        return tuple(shuffled(x, rng) for x in tree)
    if isinstance(tree, dict):
        return {k: shuffled(v, rng) for k, v in tree.items()}
    return tree


@given(ground_truths, predictions, st.randoms(use_true_random=False))
@settings(max_examples=500, deadline=None)
def test_shuffling_list_elements_never_changes_the_score(gt, pred, rng):
    try:
        before = [score_quietly(gt, pred, none_hallucinations=mode) for mode in ("ignore", "count")]
    except ValueError:
        return
    after = [score_quietly(shuffled(gt, rng), shuffled(pred, rng), none_hallucinations=mode)
             for mode in ("ignore", "count")]
    assert after == pytest.approx(before, abs=1e-12)


@given(line_items, line_items, st.randoms(use_true_random=False))
@settings(max_examples=300, deadline=None)
def test_shuffling_line_items_never_changes_the_score(gt, pred, rng):
    assert anls_star(shuffled(gt, rng), shuffled(pred, rng)) == pytest.approx(anls_star(gt, pred), abs=1e-12)


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
