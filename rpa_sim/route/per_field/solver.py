"""Per-field thresholds that maximise the auto-accepted items under a linear cost budget.

The solver is the Lagrangian one: the lower convex hull of each field's
(accepted, cost) curve (:mod:`rpa_sim.route.per_field.curves` states the
problem), all fields' hull segments merged by marginal cost per accepted item,
segments taken in that order while they fit (:func:`frontier` does it for every
budget at once); then the leftover budget is spent exactly, by reduced-cost
fixing and a small dynamic programme (:meth:`Frontier.at_budget`). What the
answer guarantees is stated in :func:`optimize_thresholds`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rpa_sim.route.per_field.curves import FieldCurve, field_curves, read_only
from rpa_sim.route.per_field.thresholds import PerFieldThresholds

__all__ = ["DEFAULT_TOLERANCE", "MAX_CELLS", "Frontier", "frontier", "optimize_thresholds"]

DEFAULT_TOLERANCE = 1e-12
"""A choice fits the budget when its cost is at most ``budget + tolerance``."""

MAX_CELLS = 200_000_000
"""The most work (table cells swept) the exact refinement spends on one dynamic programme, about a second;
past it the refinement stops with its best answer so far."""

# Slack for floor() of the Lagrangian bound, so that a bound that is an integer
# in exact arithmetic is not lost to rounding (the bound only gets looser).
_BOUND_SLACK = 1e-9

# A field's candidate moves in the refinement: the field, its points, and per point the change in accepted
# items, in cost and the reduced cost.
_Option = tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True, eq=False)
class Frontier:
    """The merged-hull solution for every budget, as breakpoints.

    Breakpoint 0 is the cheapest choice (each field at the first vertex of its
    :meth:`FieldCurve.hull`); breakpoint ``k + 1`` takes hull segment ``k``,
    which moves field ``field[k]`` to its point ``to_point[k]`` (threshold
    ``threshold[k]``) at ``slope[k]`` extra cost per extra accepted item.
    Segments are ordered by slope (ties: field order, then the field's own
    order), so ``accepted`` and ``cost`` increase along the breakpoints. For a
    budget ``b``, the hull solution is the last breakpoint with ``cost <= b``;
    ``accepted`` against ``budget_breakpoints`` is the optimized curve
    (auto-rate against cost) without re-solving.

    Attributes
    ----------
    curves : tuple of FieldCurve
        The fields, in sorted key order (``field`` indexes them).
    start : ndarray of int, shape (F,)
        Each field's point at breakpoint 0.
    field, to_point, threshold, slope : ndarray, shape (S,)
        The merged hull segments, in the order taken.
    accepted : ndarray of int, shape (S + 1,)
        Accepted items at each breakpoint.
    cost : ndarray of float, shape (S + 1,)
        Cost at each breakpoint; also the smallest budget that reaches it
        (:attr:`budget_breakpoints`).
    """

    curves: tuple[FieldCurve, ...]
    start: np.ndarray
    field: np.ndarray
    to_point: np.ndarray
    threshold: np.ndarray
    slope: np.ndarray
    accepted: np.ndarray
    cost: np.ndarray
    # the best single common threshold, per budget: levels from "accept none" down
    _common_threshold: np.ndarray
    _common_accepted: np.ndarray
    _common_cost: np.ndarray

    @property
    def budget_breakpoints(self) -> np.ndarray:
        """The smallest budget at which each breakpoint is the hull solution (equals ``cost``)."""
        return self.cost

    @property
    def keys(self) -> tuple[Hashable, ...]:
        """The field keys, in the order ``field`` and ``start`` index them."""
        return tuple(c.key for c in self.curves)

    @property
    def items(self) -> int:
        """All items."""
        return sum(c.items for c in self.curves)

    @property
    def auto_rate(self) -> np.ndarray:
        """``accepted / items`` at each breakpoint (NaN when there are no items)."""
        return self.accepted / self.items if self.items else np.full(len(self.accepted), np.nan)

    def __len__(self) -> int:
        """The number of breakpoints."""
        return len(self.accepted)

    def points(self, k: int) -> np.ndarray:
        """Each field's point index (into its curve) at breakpoint ``k``."""
        if not 0 <= k < len(self.accepted):
            raise IndexError(f"breakpoint {k} out of range [0, {len(self.accepted)})")
        points = self.start.copy()
        np.maximum.at(points, self.field[:k], self.to_point[:k])
        return points

    def thresholds(self, k: int) -> dict[Any, float]:
        """The per-field thresholds at breakpoint ``k``."""
        return self._thresholds(self.points(k))

    def _thresholds(self, points: Sequence[int] | np.ndarray) -> dict[Any, float]:
        return {c.key: float(c.thresholds[j]) for c, j in zip(self.curves, points)}

    def _cost(self, points: Sequence[int] | np.ndarray) -> float:
        # always summed the same way (field order), so equal choices get equal costs
        return sum(float(c.cost[j]) for c, j in zip(self.curves, points))

    def _accepted(self, points: Sequence[int] | np.ndarray) -> int:
        return sum(int(c.accepted[j]) for c, j in zip(self.curves, points))

    def at_budget(self, budget: float, *, refine: bool = True, tolerance: float = DEFAULT_TOLERANCE,
                  max_cells: int = MAX_CELLS) -> PerFieldThresholds:
        """The thresholds for one budget; :func:`optimize_thresholds` documents the result.

        Parameters
        ----------
        budget : float
            The largest allowed total cost (``inf`` allows everything).
        refine : bool, default=True
            Spend the leftover budget of the hull solution exactly (step 3 of
            :func:`optimize_thresholds`). False returns the plain hull solution,
            the breakpoint this frontier lists for ``budget``.
        tolerance : float, default=1e-12
            A choice fits when its cost is at most ``budget + tolerance``.
        max_cells : int, default=MAX_CELLS
            The most table cells one dynamic programme of the refinement may
            sweep (:func:`optimize_thresholds` says what a smaller one gives up).

        Examples
        --------
        >>> f = frontier(["a", "a", "b", "b"], [0.9, 0.85, 0.8, 0.7], [1.0, 3.0, 1.5, 0.5], 0.0)
        >>> f.cost.tolist(), f.accepted.tolist()
        ([0.0, 1.0, 3.0, 6.0], [0, 1, 3, 4])
        >>> f.at_budget(2.5, refine=False).accepted, f.at_budget(2.5).accepted
        (1, 2)
        """
        budget = float(budget)
        if math.isnan(budget):
            raise ValueError("budget must be a number, got NaN")
        if not tolerance >= 0:
            raise ValueError(f"tolerance must be >= 0, got {tolerance}")
        if not isinstance(max_cells, int) or isinstance(max_cells, bool) or max_cells < 0:
            raise ValueError(f"max_cells must be a non-negative integer, got {max_cells!r}")
        limit = budget + tolerance
        items = self.items

        def answer(points: np.ndarray, feasible: bool, upper: int | None) -> PerFieldThresholds:
            return PerFieldThresholds(self._thresholds(points), self._accepted(points), self._cost(points), budget,
                                      feasible, upper, items)

        if self._cost(self.start) > limit:
            return answer(self.start, False, None)
        k = int(np.searchsorted(self.cost, limit, side="right")) - 1
        points = self.points(k)
        while k > 0 and self._cost(points) > limit:  # cumulative sums may round past the budget
            k -= 1
            points = self.points(k)
        upper = self._upper_bound(k, limit - self._cost(points))
        if not refine or upper <= self._accepted(points):
            return answer(points, True, upper)
        best, upper = self._refine(points, k, limit, upper, max_cells)
        return answer(best, True, upper)

    def _upper_bound(self, k: int, room: float) -> int:
        """The LP-relaxation bound: breakpoint ``k`` plus a fraction of the segment that does not fit."""
        if k == len(self.slope):
            return int(self.accepted[k])
        extra = math.floor(room / self.slope[k] + _BOUND_SLACK) if room < math.inf else self.items
        return int(min(self.accepted[k] + max(extra, 0), self.items))

    def _best_common(self, limit: float) -> np.ndarray | None:
        """Per-field points of the best single threshold shared by all fields, if one fits."""
        fits = np.flatnonzero(self._common_cost <= limit)
        for level in fits[::-1]:  # most accepted first; re-checked with the exact per-field sum
            t = self._common_threshold[level]
            points = np.array([np.searchsorted(-c.thresholds[1:], -t, side="right") for c in self.curves],
                              dtype=np.intp)
            if self._cost(points) <= limit:
                return points
        return None

    def _better(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether choice ``a`` accepts more than ``b``, or as many for less."""
        return (self._accepted(a), -self._cost(a)) > (self._accepted(b), -self._cost(b))

    def _greedy(self, k: int, points: np.ndarray, limit: float) -> np.ndarray:
        """The hull solution continued past the critical segment: later segments that still fit.

        A segment that does not fit blocks its field (its later segments need it).
        """
        points = points.copy()
        room = limit - self._cost(points)
        blocked = set()
        for f, j in zip(self.field[k:].tolist(), self.to_point[k:].tolist()):
            if f in blocked:
                continue
            curve = self.curves[f]
            extra = float(curve.cost[j] - curve.cost[points[f]])
            if extra <= room:
                room -= extra
                points[f] = j
            else:
                blocked.add(f)
        return points

    def _refine(self, points: np.ndarray, k: int, limit: float, upper: int,
                max_cells: int) -> tuple[np.ndarray, int]:
        """The best choice within ``limit``, and an upper bound on its accepted count.

        ``points`` is the hull solution, ``k`` its breakpoint, ``upper`` the LP
        bound. A first answer is the best of the hull solution continued
        greedily past the critical segment and the best common threshold.
        Then, with ``s`` the critical slope and ``L`` the hull solution's
        leftover: every field of the hull solution minimises
        ``cost - s * accepted`` over its points, so a choice accepting ``g``
        more items costs ``s * g`` plus the sum of its fields' reduced costs
        (excesses over those minima) more, and fits only if that sum is at
        most ``L - s * g``. For a target ``g*``, the points with reduced cost
        at most ``L - s * g*`` are thus the only candidates for any choice
        with ``g >= g*``; a dynamic programme over the change in accepted items
        (:meth:`_search`) finds the best choice made of them. If it reaches
        ``g*`` it is the optimum; otherwise nothing reaches ``g*`` and the bound
        drops to ``g* - 1``. Targets go down from the bound (1, 2, 4, ... below
        it) until the optimum is found or proved. A programme larger than
        ``max_cells`` cells ends the search: it is run once more on the moves of
        least reduced cost that fit the table (a heuristic), and the best
        answer so far is returned with the bound as it stands.
        """
        slope = float(self.slope[k])
        hull_accepted = self._accepted(points)
        room = limit - self._cost(points)
        best = self._greedy(k, points, limit)
        if self._cost(best) > limit:  # its running leftover may round differently from the exact sum
            best = points
        common = self._best_common(limit)
        if common is not None and self._better(common, best):
            best = common
        lower, top = self._accepted(best) - hull_accepted, upper - hull_accepted
        scale = 1.0 + abs(room) + slope * self.items + max(float(np.abs(c.cost).max()) for c in self.curves)
        slack = _BOUND_SLACK * scale  # rounding may only add candidates, never lose one
        reduced = [(c.cost - c.cost[j]) - slope * (c.accepted - c.accepted[j]) for c, j in zip(self.curves, points)]
        step = 1
        while lower < top:
            target = max(lower + 1, top - step + 1)
            step *= 2
            options = []
            for f, (curve, j) in enumerate(zip(self.curves, points)):
                moves = np.flatnonzero(reduced[f] <= room - slope * target + slack)
                moves = moves[moves != j]
                if len(moves):
                    options.append((f, moves, (curve.accepted[moves] - curve.accepted[j]).astype(np.intp),
                                    curve.cost[moves] - curve.cost[j], reduced[f][moves]))
            proof = _cells(options, lower, top) <= max_cells
            if not proof:  # too big to prove anything: a last try with the moves of least reduced cost
                every = np.sort(np.concatenate([rc for *_, rc in options]))
                keep = len(every)
                while keep > 1:
                    keep //= 2
                    masks = [rc <= every[keep - 1] for *_, rc in options]
                    cut = [(f, m[w], dg[w], dc[w], rc[w]) for (f, m, dg, dc, rc), w in zip(options, masks) if w.any()]
                    if _cells(cut, lower, top) <= max_cells:
                        options = cut
                        break
                else:
                    break
            found = self._search(points, options, lower, top, room, limit)
            gain = self._accepted(found) - hull_accepted
            if gain > lower:
                best, lower = found, gain
            if not proof:
                break
            # reaching the target makes it the optimum: every better choice was among the candidates
            top = gain if gain >= target else target - 1
        return best, hull_accepted + max(top, lower)

    def _search(self, points: np.ndarray, options: list[_Option], lower: int, top: int, room: float,
                limit: float) -> np.ndarray:
        """The best choice that moves each field of ``points`` to one of its options or leaves it.

        A dynamic programme over the change ``g`` in accepted items, field by
        field, keeping the least extra cost of each ``g``; only changes that can
        still end in ``lower + 1 .. top`` are kept (:func:`_windows`). The
        largest final ``g`` whose cost fits ``room`` wins, re-checked with the
        exact sum. Returns ``points`` when nothing better than ``lower`` fits.
        """
        options = _by_span(options)
        windows = _windows(options, lower, top)
        if windows is None:
            return points
        lo = hi = 0
        best = np.zeros(1)
        chosen = []
        for (f, moves, dg, dc, _), (new_lo, new_hi) in zip(options, windows):
            new = np.full(new_hi - new_lo + 1, np.inf)
            arg = np.full(len(new), -1, dtype=np.intp)
            for j, g, c in zip([-1] + moves.tolist(), [0] + dg.tolist(), [0.0] + dc.tolist()):
                t_lo, t_hi = max(lo + g, new_lo), min(hi + g, new_hi)
                if t_lo > t_hi:
                    continue
                candidate = best[t_lo - g - lo: t_hi - g - lo + 1] + c
                target = new[t_lo - new_lo: t_hi - new_lo + 1]
                better = candidate < target
                target[better] = candidate[better]
                arg[t_lo - new_lo: t_hi - new_lo + 1][better] = j
            chosen.append((f, arg, new_lo))
            lo, hi, best = new_lo, new_hi, new
        first = max(lower + 1, lo)
        fits = np.flatnonzero(best[first - lo: min(top, hi) - lo + 1] <= room) + first
        for g in fits[::-1].tolist():  # most accepted first
            found = points.copy()
            at = g
            for f, arg, arg_lo in reversed(chosen):
                j = arg[at - arg_lo]
                if j >= 0:
                    at -= int(self.curves[f].accepted[j] - self.curves[f].accepted[points[f]])
                    found[f] = j
            if self._cost(found) <= limit:
                return found
        return points


def _by_span(options: list[_Option]) -> list[_Option]:
    """Fields with the widest range of moves first: it keeps the windows of :func:`_windows` narrow."""
    return sorted(options, key=lambda o: (-(max(0, int(o[2].max())) - min(0, int(o[2].min()))), o[0]))


def _windows(options: list[_Option], lower: int, top: int) -> list[tuple[int, int]] | None:
    """After each field, the changes ``g`` from which ``lower + 1 .. top`` is still reachable.

    ``None`` when no window is left. The other fields can still add at most
    the sum of their largest moves up and remove at most that of their largest
    moves down, which bounds the useful range after each field.
    """
    up = [max(0, int(dg.max())) for _, _, dg, _, _ in options]
    down = [max(0, -int(dg.min())) for _, _, dg, _, _ in options]
    rest_up, rest_down = sum(up), sum(down)
    lo = hi = 0
    windows = []
    for u, d in zip(up, down):
        rest_up -= u
        rest_down -= d
        lo, hi = max(lo - d, lower + 1 - rest_up), min(hi + u, top + rest_down)
        if lo > hi:
            return None
        windows.append((lo, hi))
    return windows


def _cells(options: list[_Option], lower: int, top: int) -> int:
    """The work of :meth:`Frontier._search`: moves (and staying) times the width they sweep."""
    options = _by_span(options)
    windows = _windows(options, lower, top)
    if windows is None:
        return 0
    widths = [1] + [hi - lo + 1 for lo, hi in windows[:-1]]
    return sum((len(o[1]) + 1) * w for o, w in zip(options, widths))


def frontier(keys: ArrayLike, confidence: ArrayLike, accept_cost: ArrayLike, review_cost: ArrayLike) -> Frontier:
    """The hull merge for every budget at once.

    Each field's lower convex hull (:meth:`FieldCurve.hull`) is cut into
    segments; all segments are merged by slope (extra cost per extra accepted
    item). Taking them in that order traces the optimized curve: breakpoint
    ``k`` is optimal for the budget ``cost[k]`` (it meets the LP bound), and
    :meth:`Frontier.at_budget` reads any budget off it.

    Parameters
    ----------
    keys, confidence, accept_cost, review_cost
        As for :func:`field_curves`.

    Returns
    -------
    Frontier

    Examples
    --------
    >>> f = frontier(["a", "a", "b"], [0.9, 0.2, 0.7], [0.5, 2.0, 1.0], 0.0)
    >>> f.budget_breakpoints.tolist(), f.accepted.tolist(), f.field.tolist(), f.threshold.tolist()
    ([0.0, 0.5, 1.5, 3.5], [0, 1, 2, 3], [0, 1, 0], [0.9, 0.7, 0.2])
    >>> f.thresholds(2)
    {'a': 0.9, 'b': 0.7}
    """
    curves = tuple(field_curves(keys, confidence, accept_cost, review_cost))
    start = np.zeros(len(curves), dtype=np.intp)
    parts = []
    for f, curve in enumerate(curves):
        hull = curve.hull()
        start[f] = hull[0]
        d_accepted = np.diff(curve.accepted[hull])
        d_cost = np.diff(curve.cost[hull])
        # convex in exact arithmetic; rounding must not reorder a field's own segments
        slope = np.maximum.accumulate(d_cost / d_accepted) if len(hull) > 1 else np.zeros(0)
        parts.append((np.full(len(slope), f), hull[1:], np.arange(len(slope)), slope, d_accepted, d_cost))
    if parts:
        field, to_point, rank, slope, d_accepted, d_cost = (np.concatenate(p) for p in zip(*parts))
    else:
        field = to_point = rank = d_accepted = np.zeros(0, dtype=np.intp)
        slope = d_cost = np.zeros(0)
    order = np.lexsort((rank, field, slope))
    field, to_point, slope = field[order].astype(np.intp), to_point[order].astype(np.intp), slope[order]
    threshold = np.array([curves[f].thresholds[j] for f, j in zip(field.tolist(), to_point.tolist())],
                         dtype=np.float64)
    base_accepted = sum(int(c.accepted[j]) for c, j in zip(curves, start))
    base_cost = sum(float(c.cost[j]) for c, j in zip(curves, start))
    accepted = base_accepted + np.concatenate(([0], np.cumsum(d_accepted[order]))).astype(np.int64)
    cost = base_cost + np.concatenate(([0.0], np.cumsum(d_cost[order])))

    # the common-threshold curve: every field's steps, merged by threshold
    steps = [(c.thresholds[1:], np.diff(c.accepted), np.diff(c.cost)) for c in curves]
    if steps:
        level, d_acc, d_c = (np.concatenate(s) for s in zip(*steps))
    else:
        level, d_acc, d_c = np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0)
    by_level = np.argsort(-level, kind="stable")
    level, d_acc, d_c = level[by_level], d_acc[by_level], d_c[by_level]
    ends = np.append(np.flatnonzero(level[1:] != level[:-1]), len(level) - 1) if len(level) else np.zeros(0, np.intp)
    none_cost = sum(float(c.cost[0]) for c in curves)
    common_threshold = np.concatenate(([np.inf], level[ends]))
    common_accepted = np.concatenate(([0], np.cumsum(d_acc)[ends])).astype(np.int64)
    common_cost = none_cost + np.concatenate(([0.0], np.cumsum(d_c)[ends]))

    return Frontier(curves, read_only(start), read_only(field), read_only(to_point), read_only(threshold),
                    read_only(slope), read_only(accepted), read_only(cost), read_only(common_threshold),
                    read_only(common_accepted), read_only(common_cost))


def optimize_thresholds(keys: ArrayLike, confidence: ArrayLike, accept_cost: ArrayLike, review_cost: ArrayLike, *,
                        budget: float, refine: bool = True,
                        tolerance: float = DEFAULT_TOLERANCE, max_cells: int = MAX_CELLS) -> PerFieldThresholds:
    """One threshold per field maximising the auto-accepted items within a cost budget.

    Algorithm (Lagrangian / convex-hull merge, then an exact use of what is left):

    1. Per field, the curve of (accepted, cost) over its thresholds
       (:func:`field_curves`) and its lower convex hull, from the cheapest point
       to "accept all" (:meth:`FieldCurve.hull`).
    2. All hull segments merged by marginal cost per accepted item and taken in
       that order while the next one fits: the *hull solution* (the breakpoint
       of :func:`frontier` for this budget). The first segment that does not
       fit is the *critical segment*, of slope ``s``; adding the fraction of it
       that the leftover ``L`` pays for is the LP relaxation's optimum, so
       ``upper_bound = accepted + floor(L / s)`` bounds every choice.
    3. With ``refine`` (the default), the leftover is spent exactly, trades
       included (tightening one field to afford a block of another): at price
       ``s`` every field of the hull solution minimises ``cost - s * accepted``,
       so a choice accepting ``g`` more items costs ``s * g`` plus the sum of
       its fields' excesses over those minima (their *reduced costs*) more and
       fits only if that sum is at most ``L - s * g``. Only points of reduced
       cost at most ``L - s * g*`` can be part of a choice reaching ``g*``
       (reduced-cost fixing); a dynamic programme over the change in accepted
       items, keeping the least cost of each change, finds the best choice made
       of them. Targets ``g*`` go down from the bound until one is reached (the
       optimum) or the bound has come down to the best choice found. The best
       of the hull solution continued greedily past the critical segment and
       the best single common threshold (all fields the same threshold) is
       the starting answer.

    Guarantees, with ``OPT`` the largest ``accepted`` of any choice costing at
    most ``budget + tolerance``:

    - ``feasible`` is False exactly when no choice fits, i.e. when the cheapest
      choice (accepting nothing, whenever every ``accept_cost >= review_cost``)
      costs more; the thresholds are then that cheapest choice.
    - Otherwise ``cost <= budget + tolerance`` and
      ``hull solution <= accepted <= OPT <= upper_bound``.
    - With ``refine``: ``accepted == OPT == upper_bound`` (``optimal``),
      unless a dynamic programme would sweep more than ``max_cells`` (default 2e8)
      table cells, about a second of work; it is the number of candidate
      points times the range of changes in accepted items they span, tiny when
      the hull solution is close to the bound and growing with the size of the
      critical segment, ``O(P * n)`` at worst for ``P`` points and ``n`` items.
      Then the search stops after one last programme on the candidates of
      least reduced cost, ``optimal`` is False, and ``upper_bound`` (the
      bound as tightened so far) says how far from optimal the answer can be.
      Even then ``accepted`` is at least the best single common threshold's
      and the greedy continuation's. Every random case of the tests (up to
      300 items) is solved and proved optimal; see ``docs/optimize.md`` for
      larger corpora.
    - Without ``refine`` (the plain hull solution): ``OPT - accepted <=
      upper_bound - accepted <= m - 1``, ``m`` the number of items of the
      critical segment. It is optimal whenever that segment is a single item,
      e.g. whenever every field's curve is convex (cost per extra item
      non-decreasing as the threshold falls) with distinct confidences, and
      whenever the optimum is a breakpoint of :func:`frontier`. It can fall
      short only when the critical segment spans several items (a run of equal
      confidences, or a hull edge across a non-convex stretch of a curve): the
      optimum then skips it for later segments of other fields, uses non-hull
      points, or gives up hull items of one field to afford another's block.
      Convex curves with ties in confidence can fall short.
    - Among equally good choices the cost is not minimised.

    Parameters
    ----------
    keys, confidence, accept_cost, review_cost
        As for :func:`field_curves`.
    budget : float
        The largest allowed total cost.
    refine : bool, default=True
        Step 3; False returns the plain hull solution.
    tolerance : float, default=1e-12
        A choice fits when its cost is at most ``budget + tolerance``. Sums of
        many costs carry rounding of about ``n * 1e-16`` times their size;
        raise it when a target met with equality must count as met.
    max_cells : int, default=MAX_CELLS
        The most table cells one dynamic programme of step 3 may sweep; past
        it the search stops with the weaker guarantees above.

    Returns
    -------
    PerFieldThresholds

    Examples
    --------
    Field ``b``'s curve is concave (its first item is the dearer one), so its
    hull jumps straight to accepting both; the hull solution takes ``a``'s
    cheap item and cannot afford that jump, the refinement spends the leftover
    on ``b``'s first item:

    >>> keys, confidence = ["a", "a", "b", "b"], [0.9, 0.85, 0.8, 0.7]
    >>> cost = [1.0, 3.0, 1.5, 1.2]
    >>> optimize_thresholds(keys, confidence, cost, 0.0, budget=2.5, refine=False).accepted
    1
    >>> best = optimize_thresholds(keys, confidence, cost, 0.0, budget=2.5)
    >>> best.thresholds, best.accepted, best.cost, best.upper_bound, best.optimal
    ({'a': 0.9, 'b': 0.8}, 2, 2.5, 2, True)

    A trade: the optimum gives up ``a``'s item to afford ``b``'s pair of equal
    confidence, which the hull solution cannot reach:

    >>> keys, confidence, cost = ["a", "b", "b"], [0.9, 0.5, 0.5], [1.0, 1.1, 1.1]
    >>> optimize_thresholds(keys, confidence, cost, 0.0, budget=2.2, refine=False).thresholds
    {'a': 0.9, 'b': inf}
    >>> optimize_thresholds(keys, confidence, cost, 0.0, budget=2.2).thresholds
    {'a': inf, 'b': 0.5}

    Nothing fits when reviewing itself costs more than the budget:

    >>> optimize_thresholds(keys, confidence, cost, 1.0, budget=1.0).feasible
    False
    """
    return frontier(keys, confidence, accept_cost, review_cost).at_budget(budget, refine=refine, tolerance=tolerance,
                                                                          max_cells=max_cells)
