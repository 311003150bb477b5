"""ANLS* for nested predictions: strings, None, one-of tuples, matched lists, dicts (METRICS.md §2; seed 001).

The score agrees with the authors' package ``anls_star`` 1.0.1 (``anls_score``),
with one documented departure by default: a key the prediction adds with a
None-like value is ignored entirely, as the package's README says, instead of
being skipped in the score but counted in the length (``none_hallucinations="count"``
restores the package's figure). See ``docs/metrics/anls.md``.

Lists are matched like the package's matching library (``munkres`` 3.0.0 in
its pure-Python form) matches them, including which optimum wins a tie: when
two matchings have the same summed similarity but cover elements of different
sizes, the choice changes the score, so "some optimal matching" is not enough.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from rpa_sim.text import normalize

__all__ = ["anls_star"]

NoneHallucinations = Literal["ignore", "count"]

_LEAF, _NONE, _TUPLE, _LIST, _DICT = range(5)
_LEAF_TYPES = (str, float, int, bool)


class _Node:
    """One value of a ground truth or prediction, prepared once for scoring.

    ``size`` is the number of leaves it stands for (the paper's ``l_t``),
    ``empty`` says whether the package treats it as absent (None, "", [] or {}),
    ``strings_only`` says whether Python equality implies an identical score
    (numbers do not qualify: ``1 == 1.0 == True`` and ``0.0 == -0.0``, but their
    texts differ). ``text``, the normalised text of a leaf, is filled in when
    first needed: leaves inside unchanged subtrees are never compared.
    """

    __slots__ = ("kind", "obj", "items", "size", "strings_only", "empty", "text")

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
        children = {k: _build(v, is_gt) for k, v in obj.items()}
        values = list(children.values())
        return _Node(_DICT, obj, children, _size(values), _strings_only(values), not obj)
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
    for child in children:
        if not child.strings_only:
            return False
    return True


# A pair's result: the leaf similarities in the package's order (kept as a list
# so that sums round exactly as the package's do), the length they are divided
# by, and whether the closest ground truth equals the prediction (the package's
# tie-breaker for tuples and list matching).
_Result = tuple[list[float], int, bool]


class _Scorer:
    """ANLS* of node pairs for one threshold and one None-hallucination rule."""

    def __init__(self, threshold: float, none_hallucinations: NoneHallucinations) -> None:
        self.threshold = threshold
        self.none_key_length = 1 if none_hallucinations == "count" else 0

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
        distance = Levenshtein.normalized_distance(gt_text, pred_text)
        return 1.0 - distance if distance <= self.threshold else 0.0

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
        pairs = _assignment([[_tie_bumped_mean(cell) for cell in row] for row in cells])
        values: list[float] = []
        length = 0
        for i, j in pairs:
            part, part_length, _ = cells[i][j]
            values += part
            length += part_length
        matched_rows = {i for i, _ in pairs}
        matched_cols = {j for _, j in pairs}
        length += sum(c.size for i, c in enumerate(g.items) if i not in matched_rows)
        length += sum(c.size for j, c in enumerate(p.items) if j not in matched_cols)
        return values, length, n == m and all(cells[i][j][2] for i, j in pairs)

    def cells(self, gs: list[_Node], ps: list[_Node]) -> list[list[_Result]]:
        """Every ground-truth element against every predicted one; string pairs in one rapidfuzz call."""
        g_leaves = [i for i, c in enumerate(gs) if c.kind == _LEAF]
        p_leaves = [j for j, c in enumerate(ps) if c.kind == _LEAF]
        leaf_scores: dict[tuple[int, int], float] = {}
        if g_leaves and p_leaves:
            distance = cdist([_text(gs[i]) for i in g_leaves], [_text(ps[j]) for j in p_leaves],
                             scorer=Levenshtein.normalized_distance, dtype=np.float64)
            scores = np.where(distance <= self.threshold, 1.0 - distance, 0.0).tolist()
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


def _tie_bumped_mean(result: _Result) -> float:
    """The pair's mean, one ulp higher when the pair is an exact match (the package's tie-breaker)."""
    mean = _mean(result)
    return math.nextafter(mean, math.inf) if result[2] else mean


def _assignment(profit: list[list[float]]) -> list[tuple[int, int]]:
    """Rows and columns paired to maximise the total profit, sorted by row, ``min(n, m)`` pairs.

    Reproduces the optimum that ``munkres`` 3.0.0 (pure Python) returns, ties
    included: profits become costs ``max - profit``; the shorter side plays the
    rows; each row first takes the leftmost free column at its minimum cost,
    then the rows left over are inserted one by one along shortest augmenting
    paths (Hungarian method with potentials, leftmost column on ties).
    """
    top = max(max(row) for row in profit)
    cost = [[top - x for x in row] for row in profit]
    transposed = len(cost) > len(cost[0])
    if transposed:
        cost = [list(col) for col in zip(*cost)]
    owner = _assign_rows(cost)
    pairs = [(i, j) for j, i in enumerate(owner) if i >= 0]
    return sorted((j, i) for i, j in pairs) if transposed else sorted(pairs)


def _assign_rows(cost: list[list[float]]) -> list[int]:
    """The row owning each column (-1 if none) of a minimum-cost assignment of every row; rows <= columns."""
    n, m = len(cost), len(cost[0])
    row_potential = [0.0] * n
    col_potential = [0.0] * m
    owner = [-1] * m
    waiting = []
    for i, row in enumerate(cost):
        low = min(row)
        row_potential[i] = low
        free = next((j for j, c in enumerate(row) if c == low and owner[j] < 0), None)
        if free is None:
            waiting.append(i)
        else:
            owner[free] = i
    for i in waiting:
        _augment(i, cost, row_potential, col_potential, owner)
    return owner


def _augment(start: int, cost: list[list[float]], row_potential: list[float], col_potential: list[float],
             owner: list[int]) -> None:
    """Give row ``start`` a column along a shortest augmenting path, updating the potentials (Dijkstra)."""
    m = len(owner)
    reach = [math.inf] * m  # cheapest reduced cost to reach each column so far
    came_from = [-1] * m  # previous column on that path (-1: straight from ``start``)
    done = [False] * m
    row, via = start, -1
    while True:
        potential = row_potential[row]
        for j in range(m):
            if not done[j]:
                # The reproduced solver's arithmetic, in its order: near-ties are decided by these floats.
                reduced = cost[row][j] - potential - col_potential[j]
                if reduced < reach[j]:
                    reach[j], came_from[j] = reduced, via
        col = min((j for j in range(m) if not done[j]), key=reach.__getitem__)
        delta = reach[col]
        row_potential[start] += delta
        for j in range(m):
            if done[j]:
                row_potential[owner[j]] += delta
                col_potential[j] -= delta
            else:
                reach[j] -= delta
        done[col] = True
        if owner[col] < 0:
            break
        row, via = owner[col], col
    while col >= 0:
        previous = came_from[col]
        owner[col] = owner[previous] if previous >= 0 else start
        col = previous


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
    (Hungarian matching), unmatched elements on either side count as misses;
    dicts are compared key by key, missing and extra keys count as misses.
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
        as in the package).
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
        or an unknown ``none_hallucinations``.

    Examples
    --------
    >>> anls_star({"a": ("hello", "world"), "b": ["this", "is", "a", "test"]},
    ...           {"a": "hello!", "b": ["a", "test", "this", "be"]})
    0.7666666666666667
    >>> anls_star({"a": "x"}, {"a": "x", "b": None})
    1.0
    >>> anls_star({"a": "x"}, {"a": "x", "b": None}, none_hallucinations="count")
    0.5
    """
    if none_hallucinations not in ("ignore", "count"):
        raise ValueError(f'none_hallucinations must be "ignore" or "count", got {none_hallucinations!r}')
    if isinstance(prediction, str) and isinstance(ground_truth, list) and all(isinstance(x, str) for x in ground_truth):
        warnings.warn(f"reading the ground-truth list {ground_truth!r} as one-of alternatives for a string prediction",
                      UserWarning, stacklevel=2)
        ground_truth = tuple(ground_truth)
    g = _build(ground_truth, True)
    p = _build(prediction, False)
    return _mean(_Scorer(threshold, none_hallucinations).pair(g, p))
