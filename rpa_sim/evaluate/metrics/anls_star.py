"""ANLS* for nested predictions: strings, None, one-of tuples, matched lists, dicts (METRICS.md §2; seed 001).

The score agrees with the authors' package ``anls_star`` 1.0.1 (``anls_score``)
but in two documented places (``docs/metrics/anls.md``):

- A key the prediction adds with a None-like value is ignored entirely, as the
  package's README says, instead of being skipped in the score but counted in
  the length. ``none_hallucinations="count"`` restores the package's figure.
- Ties in list matching. Lists are matched one to one, with
  ``scipy.optimize.linear_sum_assignment``, to maximise what the package's
  Hungarian matching maximises: the sum of the pairs' ANLS*. Several matchings
  can be optimal and give the list different scores, say when a predicted
  item is as close to a short ground-truth item as to a long one. The package
  then keeps whichever optimum ``munkres`` returns (after a one-ulp nudge for
  exact pairs that float rounding can erase), which depends on the order of
  the elements and even on whether munkres runs its C kernel or its Python
  code. rpa_sim takes, among those optima, the one with the highest score of
  the list (sum of its leaf similarities over its length, paper eq. 5), then
  the shortest one, then the one with the most exact pairs; what is then left
  to choose from gives the same result. No step depends on the order of the
  elements, so shuffling a list never changes the score, and each list scores
  the most that the package's objective allows.

The rule is applied in exact arithmetic: a similarity is the rational
``(n - d) / n``, and every criterion is solved on integer weights (see
``_best_matching``). Float means settle the usual tie-free case first.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction
from typing import Any, Literal, NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import bellman_ford

from rpa_sim.evaluate.metrics.text import nls_bounded, nls_matrix, normalize

__all__ = ["anls_star"]

NoneHallucinations = Literal["ignore", "count"]

_LEAF, _NONE, _TUPLE, _LIST, _DICT = range(5)
_LEAF_TYPES = (str, float, int, bool)
# Matchings whose sums of means differ by less are compared exactly. Float sums
# of means in [0, 1] err by less than (number of pairs) * 2**-52: far less.
_MARGIN = 2.0**-30
# Similarities are recovered as exact fractions (n - d) / n for texts of up to this many characters.
_LONGEST_TEXT = 2**20


class _Node:
    """One value of a ground truth or prediction, prepared once for scoring.

    ``size`` is the number of leaves it stands for (the paper's ``l_t``),
    ``empty`` says whether the package treats it as absent (None, "", [] or {}),
    ``strings_only`` says whether Python equality implies an identical score
    (numbers do not qualify: ``1 == 1.0 == True`` and ``0.0 == -0.0``, but their
    texts differ). ``text``, the normalised text of a leaf, is filled in when
    first needed: leaves inside unchanged subtrees are never compared.
    """

    __slots__ = ("empty", "items", "kind", "obj", "size", "strings_only", "text")

    def __init__(self, kind: int, obj: Any, items: Any, size: int, strings_only: bool, empty: bool) -> None:
        self.kind = kind
        self.obj = obj
        self.items = items
        self.size = size
        self.strings_only = strings_only
        self.empty = empty
        self.text: str | None = None


_ABSENT = _Node(_NONE, None, None, 1, True, True)


def _text(leaf: _Node) -> str:
    if leaf.text is None:
        leaf.text = normalize(str(leaf.obj))
    return leaf.text


def _build(obj: Any, is_gt: bool) -> _Node:
    """Validate ``obj`` and turn it into nodes; tuples are allowed in the ground truth only."""
    if type(obj) is str:  # the common case first; subclasses take the general path below
        return _Node(_LEAF, obj, None, 1, True, not obj)
    if isinstance(obj, tuple):
        return _tuple_node(obj, is_gt)
    if isinstance(obj, list):
        children = [_build(x, is_gt) for x in obj]
        return _Node(_LIST, obj, children, _size(children), _strings_only(children), not obj)
    if isinstance(obj, dict):
        members = {k: _build(v, is_gt) for k, v in obj.items()}
        values = list(members.values())
        return _Node(_DICT, obj, members, _size(values), _strings_only(values), not obj)
    if obj is None:
        return _ABSENT
    if isinstance(obj, _LEAF_TYPES):
        return _Node(_LEAF, obj, None, 1, isinstance(obj, str), obj == "")
    raise ValueError(
        f"anls_star scores str, int, float, bool, None, tuple, list and dict values; "
        f"got {type(obj).__name__}: {obj!r}"
    )


def _tuple_node(obj: tuple, is_gt: bool) -> _Node:
    if not is_gt:
        raise ValueError(
            f"a prediction cannot hold a tuple (tuples mark one-of ground truths; use a list): {obj!r}"
        )
    if not obj:
        raise ValueError(f"a one-of ground truth needs at least one option, got the empty tuple {obj!r}")
    options = [_build(x, True) for x in obj]
    return _Node(_TUPLE, obj, options, max(o.size for o in options), False, False)


# Plain loops rather than sum()/all() over generators: these run once per node
# of every input, and reading the input is most of the cost on real documents.
def _size(children: list[_Node]) -> int:
    size = 0
    for child in children:
        size += child.size
    return size


def _strings_only(children: list[_Node]) -> bool:
    # a plain loop: it runs for every container built, and all() over a generator takes twice as long
    for child in children:  # noqa: SIM110
        if not child.strings_only:
            return False
    return True


# A pair's result: the leaf similarities in the package's order (kept as a list
# so that sums round exactly as the package's do), the length they are divided
# by, and whether the closest ground truth equals the prediction (the package's
# tie-breaker between tuple options, and the last criterion of list ties).
_Result = tuple[list[float], int, bool]


class _Scorer:
    """ANLS* of node pairs for one threshold and one None-hallucination rule."""

    def __init__(self, threshold: float, none_hallucinations: NoneHallucinations) -> None:
        self.threshold = threshold
        self.none_key_length = 1 if none_hallucinations == "count" else 0
        self.fractions: dict[float, Fraction] = {}

    def pair(self, g: _Node, p: _Node) -> _Result:
        """Ground truth ``g`` against prediction ``p``."""
        # Equal string-only subtrees score 1 per leaf whatever their shape; skipping
        # the recursion (and its list matchings) makes unchanged parts cheap.
        if g.strings_only and g.obj == p.obj:
            return [1.0] * g.size, g.size, True
        kind = g.kind
        if kind == _LEAF:
            if p.kind == _LEAF:
                return [self.similarity(_text(g), _text(p))], 1, g.obj == p.obj
            return [0.0], max(1, p.size), False
        if kind == _NONE:
            return [1.0 if p.empty else 0.0], max(1, p.size), p.empty
        if kind == _TUPLE:
            return self.best_option(g, p)[1]
        if kind == _LIST:
            return self.lists(g, p) if p.kind == _LIST else ([0.0], max(g.size, p.size), False)
        return self.dicts(g, p) if p.kind == _DICT else ([0.0], max(g.size, p.size), False)

    def similarity(self, gt_text: str, pred_text: str) -> float:
        return nls_bounded(gt_text, pred_text, threshold=self.threshold)

    def best_option(self, g: _Node, p: _Node) -> tuple[_Node, _Result]:
        """The first option with the best mean, preferring on a tie one equal to the prediction."""
        options = iter(g.items)
        best = next(options)
        best_result = self.pair(best, p)
        best_key = (_mean(best_result), best_result[2])
        for option in options:
            result = self.pair(option, p)
            key = (_mean(result), result[2])
            if key > best_key:
                best, best_result, best_key = option, result, key
        return best, best_result

    def dicts(self, g: _Node, p: _Node) -> _Result:
        """Key by key, ground-truth keys first; a missing key stands for None."""
        values: list[float] = []
        length = 0
        equal = True
        pred_items = p.items
        for key, g_value in g.items.items():
            present = key in pred_items
            part, part_length, part_equal = self.pair(g_value, pred_items[key] if present else _ABSENT)
            values += part
            length += part_length
            if equal:
                equal = part_equal if present else self.closest_is_empty(g_value)
        for key, p_value in pred_items.items():
            if key in g.items:
                continue
            equal = False
            if p_value.empty:
                # The package skips such a key's score but still counts its length;
                # its README (and rpa_sim by default) ignores the key entirely.
                length += self.none_key_length
                continue
            part, part_length, _ = self.pair(_ABSENT, p_value)
            values += part
            length += part_length
        return values, length, equal

    def closest_is_empty(self, g: _Node) -> bool:
        """Whether the ground truth closest to an absent prediction is None-like (then its key is dropped)."""
        while g.kind == _TUPLE:
            g = self.best_option(g, _ABSENT)[0]
        return g.empty

    def lists(self, g: _Node, p: _Node) -> _Result:
        """Matched elements, plus the size of every element left unmatched on either side."""
        n, m = len(g.items), len(p.items)
        if n == 0 or m == 0:
            return [], g.size + p.size, n == m
        cells = self.cells(g.items, p.items)
        pairs = self.matching(g, p, cells)
        values: list[float] = []
        # Every element counts its size; a matched pair counts its own length instead of its two sizes.
        length = g.size + p.size
        for i, j in pairs:
            part, part_length, _ = cells[i][j]
            values += part
            length += part_length - g.items[i].size - p.items[j].size
        return values, length, n == m and all(cells[i][j][2] for i, j in pairs)

    def matching(self, g: _Node, p: _Node, cells: list[list[_Result]]) -> list[tuple[int, int]]:
        """The pairs of the tie rule's matching (ground-truth index, predicted index), sorted.

        Exact arithmetic is only needed near a tie; the float means settle
        every other case, most of them without a solver.
        """
        m = len(p.items)
        if len(g.items) == 1 or m == 1:
            # Each matching is a single pair: the best mean wins, the tie rule ranks near-equals.
            flat = [_mean(cell) for row in cells for cell in row]
            top = max(flat)
            near_best = [k for k, mean in enumerate(flat) if mean >= top - _MARGIN]
            if len(near_best) > 1:
                base = g.size + p.size
                near_best = [max(near_best, key=lambda k: _rank(self.terms(k // m, k % m, g, p, cells), base))]
            return [divmod(near_best[0], m)]
        # The best matching usually beats every other by far more than float
        # noise; it does when it survives a penalty of _MARGIN on each of its
        # pairs, since any other matching has at least one pair less to pay for.
        means = np.array([[_mean(cell) for cell in row] for row in cells])
        rows, cols = linear_sum_assignment(means, maximize=True)
        pairs = list(zip(rows.tolist(), cols.tolist()))
        means[rows, cols] -= _MARGIN
        if list(zip(*(index.tolist() for index in linear_sum_assignment(means, maximize=True)))) == pairs:
            return pairs
        terms = [[self.terms(i, j, g, p, cells) for j in range(m)] for i in range(len(g.items))]
        return _best_matching(terms, g.size + p.size)

    def terms(self, i: int, j: int, g: _Node, p: _Node, cells: list[list[_Result]]) -> _Terms:
        """Element ``i`` of ``g`` against element ``j`` of ``p`` as exact rationals."""
        values, length, equal = cells[i][j]
        total = Fraction(0)
        for value in values:
            if value == 1.0:
                total += 1
            elif value:
                total += self.exact(value)
        mean = total / length if length else Fraction(1)
        return _Terms(mean, total, length - g.items[i].size - p.items[j].size, equal)

    def exact(self, similarity: float) -> Fraction:
        """The fraction 1 - d / n that a leaf similarity was rounded from.

        Exact for texts of up to ``_LONGEST_TEXT`` (2**20) characters: two
        fractions with such denominators are at least 2**-40 apart, and the
        float is within 2**-52 of its own.
        """
        fraction = self.fractions.get(similarity)
        if fraction is None:
            fraction = self.fractions[similarity] = Fraction(similarity).limit_denominator(_LONGEST_TEXT)
        return fraction

    def cells(self, gs: list[_Node], ps: list[_Node]) -> list[list[_Result]]:
        """Every ground-truth element against every predicted one; string pairs in one rapidfuzz call."""
        g_leaves = [i for i, c in enumerate(gs) if c.kind == _LEAF]
        p_leaves = [j for j, c in enumerate(ps) if c.kind == _LEAF]
        leaf_scores: dict[tuple[int, int], float] = {}
        if g_leaves and p_leaves:
            scores = nls_matrix([_text(gs[i]) for i in g_leaves], [_text(ps[j]) for j in p_leaves],
                                threshold=self.threshold).tolist()
            leaf_scores = {(i, j): scores[a][b] for a, i in enumerate(g_leaves) for b, j in enumerate(p_leaves)}
        rows = []
        for i, gi in enumerate(gs):
            row = []
            for j, pj in enumerate(ps):
                score = leaf_scores.get((i, j))
                row.append(self.pair(gi, pj) if score is None else ([score], 1, gi.obj == pj.obj))
            rows.append(row)
        return rows


def _mean(result: _Result) -> float:
    values, length, _ = result
    return sum(values) / length if length > 0 else 1.0


class _Terms(NamedTuple):
    """What the tie rule needs to know of one pair of list elements (ground truth, prediction), exactly."""

    mean: Fraction  # the pair's ANLS*, whose sum over the matched pairs the package maximises
    total: Fraction  # the pair's sum of leaf similarities: its share of the list's numerator
    delta: int  # l(g, p) - l_t(g) - l_t(p): how matching the pair changes the list's length
    equal: bool  # whether the pair's closest ground truth equals the prediction


def _list_score(total: Fraction, length: int) -> Fraction:
    return total / length if length else Fraction(1)


def _rank(terms: _Terms, base: int) -> tuple[Fraction, Fraction, int, bool]:
    """The tie rule as a sort key, for a matching of a single pair; ``base`` is the list's length unmatched."""
    length = base + terms.delta
    return terms.mean, _list_score(terms.total, length), -length, terms.equal


def _best_matching(terms: list[list[_Terms]], base: int) -> list[tuple[int, int]]:
    """The tie rule's matching, as sorted (ground-truth index, predicted index) pairs.

    ``terms`` holds every pair of elements, at least two a side; ``base`` is
    the list's length with nothing matched. Each criterion of the rule is
    maximised by ``linear_sum_assignment`` over the matchings optimal for the
    ones before it (``_tight``), on exact integer weights.

    Examples
    --------
    ``[{"a": "x", "b": "y"}, {"a": "x"}]`` against ``[{"a": "x", "b": "q"}, "z"]``:
    both dicts score 1/2 against the predicted dict, nothing scores against
    "z". Matching the two-key dict leaves the list 3 leaves long (1/3), the
    other dict 4 (1/4); the order of the elements does not matter.

    >>> half, one, zero = Fraction(1, 2), Fraction(1), Fraction(0)
    >>> terms = [[_Terms(half, one, -2, False), _Terms(zero, zero, -1, False)],
    ...          [_Terms(half, one, -1, False), _Terms(zero, zero, -1, False)]]
    >>> _best_matching(terms, 6), _best_matching(terms[::-1], 6)
    ([(0, 0), (1, 1)], [(0, 1), (1, 0)])
    """
    # The shorter side plays the rows, so that every row is matched.
    transposed = len(terms) > len(terms[0])
    if transposed:
        terms = [list(column) for column in zip(*terms)]
    n = len(terms)

    def outcome(cols: np.ndarray) -> tuple[Fraction, int]:
        """The list's sum of similarities and its length under a matching."""
        pairs = [terms[i][cols[i]] for i in range(n)]
        return sum((t.total for t in pairs), Fraction(0)), base + sum(t.delta for t in pairs)

    # 1. The package's objective: the largest sum of means.
    cols, cost = _solve(_common_denominator([[t.mean for t in row] for row in terms])[0], None)
    optimal = _tight(cost, cols)
    if (optimal[:n].sum(axis=1) > 1).any():
        # 2. The highest score of the list, total / length: a ratio, maximised by
        # Dinkelbach's method. With s the current matching's score, a matching
        # that has more total - s * length than it (0) scores higher. Per pair
        # that is total - s * delta up to a constant, here times the common
        # denominator and the current length (s = 1 for an empty list). Each
        # round raises s, and there are finitely many matchings.
        totals, denominator = _common_denominator([[t.total for t in row] for row in terms])
        best = cols
        while True:
            total, length = outcome(best)
            numerator, divisor = (sum(totals[i][best[i]] for i in range(n)), length) if length else (denominator, 1)
            cols, cost = _solve([[divisor * s - numerator * t.delta for s, t in zip(row_totals, row)]
                                 for row_totals, row in zip(totals, terms)], optimal)
            if _list_score(*outcome(cols)) <= _list_score(total, length):
                break
            best = cols
        # 3. The shortest list, then the most exact pairs, which only decide the
        # list's "closest ground truth" (a tuple ranks its options by it). At
        # most n pairs are exact: they never outweigh one leaf of length.
        cols, _ = _solve([[-(n + 1) * t.delta + t.equal for t in row] for row in terms], _tight(cost, cols))
    pairs = [(i, int(cols[i])) for i in range(n)]
    return sorted((j, i) for i, j in pairs) if transposed else pairs


def _common_denominator(fractions: list[list[Fraction]]) -> tuple[list[list[int]], int]:
    """The numerators of ``fractions`` over their least common denominator, and that denominator."""
    denominator = math.lcm(*(x.denominator for row in fractions for x in row))
    return [[x.numerator * (denominator // x.denominator) for x in row] for row in fractions], denominator


def _solve(weights: list[list[int]], allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A matching of maximum total weight using allowed cells only, and the costs it minimised.

    ``weights`` has at most as many rows as columns; zero-weight rows pad it to
    a square (a column matched to one is left unmatched), so that ``_tight``
    can reason on perfect matchings. Returns each row's column.
    """
    n, m = len(weights), len(weights[0])
    largest = max(max(map(abs, row)) for row in weights)
    # Integers below 2**53 are exact in float64. The solver's potentials and
    # _tight's path lengths and reduced costs are sums of at most 4m + 1 costs.
    # Rationals with huge denominators (long texts of many different lengths)
    # can need more bits: the weights are then rounded to the bits that fit, and
    # matchings closer than the rounding can be taken for ties or the reverse.
    excess = (largest * 8 * m).bit_length() - 53
    if excess > 0:
        weights = [[(w + (1 << (excess - 1))) >> excess for w in row] for row in weights]
    cost = np.zeros((m, m))
    cost[:n] = weights
    np.negative(cost, out=cost)
    if allowed is not None:
        cost[~allowed] = np.inf
    return linear_sum_assignment(cost)[1], cost


def _tight(cost: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """The cells a minimum-cost perfect matching may use, given one (``cols``); forbidden cells cost inf.

    They are the cells of zero reduced cost under an optimal dual solution:
    every perfect matching made of them has the minimum cost, and every
    minimum-cost matching is made of them (complementary slackness). The dual
    comes from shortest paths in the residual graph of ``cols`` (rows to
    columns along free cells, columns back to rows along matched ones, a source
    at distance 0 from every column), which has no negative cycle because
    ``cols`` is optimal; every row is then reached through its own column only,
    so the matched cells come out tight.
    """
    m = len(cost)
    rows = np.arange(m)
    graph = np.full((2 * m + 1, 2 * m + 1), np.inf)  # inf: no arc
    graph[:m, m:2 * m] = cost
    graph[rows, m + cols] = np.inf
    graph[m + cols, rows] = -cost[rows, cols]
    graph[2 * m, m:2 * m] = 0.0
    # Built as CSR by hand: csgraph reads a dense 0 as "no arc", and its
    # dense-to-sparse conversion costs more than the shortest paths.
    arcs = np.isfinite(graph)
    starts = np.zeros(len(graph) + 1, dtype=np.int32)
    np.cumsum(arcs.sum(axis=1), out=starts[1:])
    sparse = csr_matrix((graph[arcs], np.nonzero(arcs)[1].astype(np.int32), starts), shape=graph.shape)
    distance = bellman_ford(sparse, indices=2 * m)
    return cost + distance[:m, None] - distance[None, m:2 * m] == 0


def anls_star(
    ground_truth: Any,
    prediction: Any,
    *,
    threshold: float = 0.5,
    none_hallucinations: NoneHallucinations = "ignore",
) -> float:
    """ANLS* of a prediction against its ground truth, in [0, 1].

    Values may nest: a string (or int, float, bool, compared by their text) is
    scored by normalised Levenshtein similarity (0 past ``threshold``), None
    matches None, "", [] or {}; a tuple in the ground truth lists accepted
    alternatives (the best one counts); lists are matched element to element
    (Hungarian matching; among equally good matchings, the one that gives the
    list the highest score), unmatched elements on either side count as
    misses; dicts are compared key by key, missing and extra keys count as
    misses.
    Every leaf weighs the same. As in the package, a ground-truth list of
    strings scored against a string is read as a tuple of alternatives (with
    a warning).

    Parameters
    ----------
    ground_truth : str, int, float, bool, None, tuple, list or dict
        The expected value; tuples mark one-of alternatives.
    prediction : str, int, float, bool, None, list or dict
        The predicted value (no tuples).
    threshold : float, default=0.5
        The largest normalised distance that still scores (kept at equality,
        as in the package). Leaves are compared as ANLS compares answers,
        within a bounded amount of work (``docs/metrics/long-values.md``).
    none_hallucinations : {"ignore", "count"}, default="ignore"
        A key the prediction adds with a value of None, "", [] or {}:
        ``"ignore"`` leaves it out entirely (the package's README);
        ``"count"`` counts it in the length but not in the score, as the
        package 1.0.1 computes.

    Returns
    -------
    float
        1.0 for a perfect prediction (and for two empty structures).

    Raises
    ------
    ValueError
        On an empty tuple, a tuple in the prediction, a value of another type,
        a ``threshold`` outside [0, 1] or an unknown ``none_hallucinations``.

    Examples
    --------
    >>> anls_star({"a": ("hello", "world"), "b": ["this", "is", "a", "test"]},
    ...           {"a": "hello!", "b": ["a", "test", "this", "be"]})
    0.7666666666666667
    >>> anls_star({"a": "x"}, {"a": "x", "b": None})
    1.0
    >>> anls_star({"a": "x"}, {"a": "x", "b": None}, none_hallucinations="count")
    0.5

    The predicted item is as close to either ground-truth item (1/2); pairing
    it with the two-key one leaves one leaf unmatched, with the other two:

    >>> anls_star([{"a": "x", "b": "y"}, {"a": "x"}], [{"a": "x", "b": "q"}])
    0.3333333333333333
    >>> anls_star([{"a": "x"}, {"a": "x", "b": "y"}], [{"a": "x", "b": "q"}])
    0.3333333333333333
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be a normalised distance in [0, 1], got {threshold!r}")
    if none_hallucinations not in ("ignore", "count"):
        raise ValueError(f'none_hallucinations must be "ignore" or "count", got {none_hallucinations!r}')
    if isinstance(prediction, str) and isinstance(ground_truth, list) and all(isinstance(x, str) for x in ground_truth):
        warnings.warn(f"reading the ground-truth list {ground_truth!r} as one-of alternatives for a string prediction",
                      UserWarning, stacklevel=2)
        ground_truth = tuple(ground_truth)
    g = _build(ground_truth, True)
    p = _build(prediction, False)
    return _mean(_Scorer(threshold, none_hallucinations).pair(g, p))
