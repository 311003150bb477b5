"""Stage 2, route and sweep: exact trade-off curves over every threshold from one sort.

Every quantity a curve reports is a sum over items (or documents) of one value
when the item is reviewed and another when it is not. Writing ``x_i`` and
``y_i`` for the two, a total at threshold ``τ`` is ``Σ y_i + Σ_{reviewed} (x_i - y_i)``.
A compiled policy routes item ``i`` exactly when ``τ > entry_i``, so sorting
the entries once turns every total at every threshold into one cumulative sum
and one binary search. Audits, the reviewer's miss and false-correction rates
enter as expectations in ``x_i``, ``y_i``; a Monte Carlo replay draws them
instead, through the same sums.
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rpa_sim.common import limits
from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import OutcomeTable, table_type
from rpa_sim.route.costs import CostBasis, CostBreakdown, CostModel
from rpa_sim.route.policies import FUSED, CompiledPolicy, Policy, compile_policy
from rpa_sim.route.reviewer import Reviewer

__all__ = ["Sweeper", "compiled_on", "Curve", "Spread", "parse_thresholds", "stable_order", "aligned_curves",
           "COMMON_COLUMNS", "REJECTED"]

#: The columns of every sweep; a task's table class adds its ``sweep_columns`` (docs/formats.md).
COMMON_COLUMNS = ("policy", "threshold", "auto_rate", "reviewed", "documents_straight_through")
#: The column of the items a policy's ``reject_if`` takes out of the flow (after ``reviewed``; only when one does).
REJECTED = "rejected"


def stable_order(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")``, the same indices in about 60% of the time.

    NumPy's stable sort of floats is a merge sort; its default sort is a
    vectorised quicksort, several times faster but free to order equal values
    any way. So: sort with it, give each value the rank of its run of equal
    values (NaNs are one run, as the stable sort puts them last in index
    order), and sort the ``rank << 32 | index`` keys, which puts equal values
    in index order. Tested against ``np.argsort(kind="stable")`` (hypothesis).

    >>> stable_order(np.array([0.5, 0.1, 0.5, np.inf, 0.1])).tolist()
    [1, 4, 0, 2, 3]
    """
    if len(values) >= 1 << 32:
        return np.argsort(values, kind="stable")
    order = np.argsort(values)
    ordered = values[order]
    starts = np.empty(len(values), dtype=bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    starts[1:] &= ~(np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
    keys = ((np.cumsum(starts, dtype=np.uint64) - np.uint64(1)) << np.uint64(32)) | order.astype(np.uint64)
    keys.sort()
    return (keys & np.uint64(0xFFFFFFFF)).astype(np.intp)


def parse_thresholds(spec: str, *, max_points: int = limits.MOST_THRESHOLDS) -> str | np.ndarray:
    """A threshold grid from its command-line form.

    ``exact`` (every distinct entry threshold, never capped),
    ``linspace:START:STOP:NUM`` or a comma-separated list, of finite numbers
    at least 0 and at most ``max_points`` points. A swept score (a confidence,
    a grounding score, a document's aggregate confidence) is in [0, 1]: a
    threshold routes the items whose score is below it, so any threshold
    above 1 reviews everything, and none below 0 would differ from 0.

    Examples
    --------
    >>> parse_thresholds("linspace:0:1:5").tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> parse_thresholds("0.5, 0.9").tolist()
    [0.5, 0.9]
    >>> parse_thresholds("exact")
    'exact'
    >>> parse_thresholds("linspace:nan:1:3")
    Traceback (most recent call last):
    ...
    rpa_sim.common.errors.InputError: thresholds must be finite numbers, got 'linspace:nan:1:3'
    >>> parse_thresholds("0.5,-1e308")
    Traceback (most recent call last):
    ...
    rpa_sim.common.errors.InputError: thresholds must be at least 0 (every ...), got '-1e308' in '0.5,-1e308'
    """
    spec = spec.strip()
    if spec == "exact":
        return spec
    linspace = spec.startswith("linspace:")
    parts = spec.removeprefix("linspace:").split(":") if linspace else spec.split(",")
    try:
        count = int(parts[2]) if linspace and len(parts) == 3 else len(parts)
        if linspace and (len(parts) != 3 or count < 1):
            raise ValueError
        # checked before parsing the numbers: a list of millions would be parsed for nothing
        if count <= max_points:
            numbers = np.array([float(part) for part in (parts[:2] if linspace else parts)], dtype=np.float64)
    except ValueError:
        raise InputError("thresholds must be 'exact', 'linspace:START:STOP:NUM' or a comma list, "
                         f"got {spec!r}") from None
    if count > max_points:
        shown = spec if len(spec) <= 40 else spec[:40] + "..."
        raise limits.SizeError(f"a threshold grid has at most {max_points:,} points (a fixed ceiling; 'exact' has "
                               f"every distinct threshold), got {count:,} in {shown!r}")
    if not np.all(np.isfinite(numbers)):
        raise InputError(f"thresholds must be finite numbers, got {spec!r}")
    if np.any(numbers < 0):
        # no threshold reviews less than 0 does, and a linspace between huge numbers of both signs overflows
        given = (parts[:2] if linspace else parts)[int(np.argmax(numbers < 0))].strip()
        shown = spec if len(spec) <= 40 else spec[:40] + "..."
        raise InputError(f"thresholds must be at least 0 (every swept score is in [0, 1]; above 1 reviews "
                         f"everything), got {given!r} in {shown!r}")
    return np.linspace(numbers[0], numbers[1], count) if linspace else np.sort(numbers)


@dataclass(frozen=True)
class Curve:
    """A policy's trade-off curve: one value per threshold in each column.

    ``columns`` holds the docs/formats.md sweep columns (without ``policy``) and
    ``cost`` when a cost model was given. Ratios that are undefined at a
    threshold are NaN here and ``null`` in exports.

    ``basis`` holds what a cost prices at each threshold and ``breakdown``
    the ``cost`` column split by kind (None without a cost model); neither
    is a column, so exports are unchanged.
    """

    policy: str
    task: str
    columns: dict[str, np.ndarray]
    basis: CostBasis | None = field(default=None, compare=False)
    breakdown: CostBreakdown | None = field(default=None, compare=False)

    @property
    def threshold(self) -> np.ndarray:
        return self.columns["threshold"]

    @property
    def metric_name(self) -> str:
        """The post-correction quality metric of the curve's task."""
        return table_type(self.task).metric_name

    @property
    def metric(self) -> np.ndarray:
        return self.columns[self.metric_name]

    @property
    def auto_rate(self) -> np.ndarray:
        return self.columns["auto_rate"]

    def __len__(self) -> int:
        return len(self.threshold)

    def column_names(self) -> tuple[str, ...]:
        names = COMMON_COLUMNS + table_type(self.task).sweep_columns
        if REJECTED in self.columns:  # a policy with reject_if: the rejected count beside the reviewed one
            at = names.index("reviewed") + 1
            names = names[:at] + (REJECTED,) + names[at:]
        extra = tuple(name for name in self.columns if name not in names and name != "threshold")
        return names + tuple(sorted(extra, key=lambda name: (name != "cost", name)))

    def with_spread(self, spread: Spread) -> Curve:
        """The curve with Monte Carlo columns for its metric and auto-rate: ``*_mc_mean``, ``_std``, ``_low``,
        ``_high``.

        ``spread`` must come from :meth:`Sweeper.replicate` on the same thresholds.
        """
        if not np.array_equal(spread.threshold, self.threshold):
            raise ValueError("the spread was computed on other thresholds than the curve")
        extra = {f"{name}_mc_{stat}": getattr(spread, stat)[name]
                 for name in (self.metric_name, "auto_rate") for stat in ("mean", "std", "low", "high")}
        return Curve(self.policy, self.task, {**self.columns, **extra}, self.basis, self.breakdown)

    def with_rejected(self) -> Curve:
        """The curve with a ``rejected`` column (zeros when its policy rejects nothing), to sit beside one that has
        it."""
        if REJECTED in self.columns:
            return self
        return Curve(self.policy, self.task, {**self.columns, REJECTED: np.zeros(len(self))}, self.basis,
                     self.breakdown)

    def rows(self) -> list[dict[str, str | float | None]]:
        """One dict per threshold, in the docs/formats.md column order."""
        names = self.column_names()[1:]
        data = [self.columns[name].tolist() for name in names]
        return [{"policy": self.policy, **{n: (None if isinstance(v, float) and not math.isfinite(v) else v)
                                           for n, v in zip(names, values)}}
                for values in zip(*data)]

    def to_dataframe(self):
        """The curve as a pandas DataFrame (pandas is optional)."""
        import pandas as pd  # noqa: PLC0415 (optional dependency)

        return pd.DataFrame({"policy": self.policy, **{n: self.columns[n] for n in self.column_names()[1:]}})


def curves_to_csv(curves: Sequence[Curve]) -> str:
    """Curves as CSV text: a header line, then a line per policy and threshold.

    Written by the :mod:`csv` module (quotes where needed, ``\\n`` line ends),
    so any policy name reads back the same.

    >>> rows = {"threshold": np.array([0.5]), "auto_rate": np.array([1.0]), "reviewed": np.array([0.0]),
    ...         "documents_straight_through": np.array([1.0]), "anls": np.array([1.0]),
    ...         "accuracy": np.array([1.0]), "smudge": np.array([np.nan])}
    >>> print(curves_to_csv([Curve('say "hi", ok', "vqa", rows)]), end="")
    policy,threshold,auto_rate,reviewed,documents_straight_through,anls,accuracy,smudge
    "say ""hi"", ok",0.5,1.0,0.0,1.0,1.0,1.0,
    """
    import csv  # noqa: PLC0415
    import io  # noqa: PLC0415

    if not curves:
        return ""
    curves = aligned_curves(curves)
    names = curves[0].column_names()
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(names)
    for curve in curves:
        if curve.column_names() != names:
            raise ValueError("curves of different tasks or cost settings cannot share one CSV")
        writer.writerows(zip(itertools.repeat(curve.policy), *(_csv_cells(curve.columns[name]) for name in names[1:])))
    return text.getvalue()


def curves_to_json(curves: Sequence[Curve]) -> str:
    """Curves as one JSON array of row objects."""
    return json.dumps([row for curve in aligned_curves(curves) for row in curve.rows()], allow_nan=False)


def aligned_curves(curves: Sequence[Curve]) -> list[Curve]:
    """The curves, each with a ``rejected`` column when any has one (a policy that rejects nothing: zeros)."""
    if any(REJECTED in curve.columns for curve in curves):
        return [curve.with_rejected() for curve in curves]
    return list(curves)


def _csv_cells(values: np.ndarray) -> list[float | None]:
    """A column's cells for :mod:`csv`, which writes a float exactly (its ``repr``) and None (a value that is not
    finite) as an empty cell."""
    numbers = values.astype(np.float64, copy=False)
    cells = numbers.tolist()
    if not np.isfinite(numbers).all():
        return [None if not math.isfinite(cell) else cell for cell in cells]
    return cells


@dataclass(frozen=True)
class Spread:
    """Monte Carlo spread of a replay: per threshold, the mean, standard deviation and 5-95% range."""

    threshold: np.ndarray
    replicates: int
    seed: int
    mean: dict[str, np.ndarray]
    std: dict[str, np.ndarray]
    low: dict[str, np.ndarray]
    high: dict[str, np.ndarray]


@dataclass
class _Quantities:
    """What review changes: per quantity (rows) and item (columns), ``x - y``; and the totals of ``y``.

    ``audit`` is the share audited (a number) for expectations, or the drawn
    0/1 audit of each item for a Monte Carlo replay. Quantities are rows so
    that gathers and cumulative sums run along contiguous memory.
    """

    unreviewed: np.ndarray
    difference: np.ndarray
    audit: float | np.ndarray
    doc_base: np.ndarray = field(default_factory=lambda: np.zeros(0))
    doc_gain: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def base(self) -> np.ndarray:
        """The totals with no item routed: audited items are reviewed all the same."""
        if np.ndim(self.audit) == 0:
            return self.unreviewed + self.audit * self.difference.sum(axis=1)
        return self.unreviewed + self.difference @ self.audit

    def gain(self) -> np.ndarray:
        """What routing each item adds to the totals (nothing for an item audited anyway)."""
        if np.ndim(self.audit) == 0:
            return self.difference * (1.0 - self.audit) if self.audit else self.difference
        return self.difference * (1.0 - self.audit)


def compiled_on(policy: Policy, table: OutcomeTable, *, confidence: np.ndarray | None = None) -> CompiledPolicy:
    """``policy`` compiled on the table's rows (each row's entry threshold, and the rows it rejects); ``confidence``
    stands in for the table's (a stream whose model's confidences moved, :mod:`rpa_sim.operate.stream`)."""
    return compile_policy(policy, confidence=table.confidence if confidence is None else confidence,
                          grounding=table.grounding, fields=table.field_codes, field_names=table.field_names,
                          units=table.review_units, document_types=table.document_type_codes,
                          document_type_names=table.document_types, signals=_signals(table, policy))


class Sweeper:
    """A policy applied to an outcome table, ready to answer at any threshold.

    Construction sorts the items once by entry threshold and builds the
    cumulative sums; :meth:`curve` and :meth:`at` are then binary searches.

    What review does to each item, and which figures the sums give, is the
    table's (:class:`~rpa_sim.evaluate.outcomes.OutcomeTable`: ``replay_terms``,
    ``replay_figures``); this class only routes and sums. Review units
    (documents) are tracked when the table has them.

    Parameters
    ----------
    table : OutcomeTable
    policy : Policy
    reviewer : Reviewer, default=Reviewer()
        Perfect unless told otherwise; curves use its rates in expectation.
    costs : CostModel, optional
        Adds a ``cost`` column.

    Items the policy rejects (``reject_if``) are never reviewed nor audited;
    they hold the policy's ``rejected_quality`` (a perfect re-keying, or the
    prediction) and a ``rejected`` column counts them. The auto-rate is the
    share neither reviewed nor rejected; a document with a rejected item does
    not go straight through.

    Examples
    --------
    >>> from rpa_sim.evaluate.outcomes import evaluate_kie
    >>> from rpa_sim.route.policies import load_policy
    >>> from rpa_sim.records.synthetic import generate_receipts
    >>> table = evaluate_kie(generate_receipts(20, seed=1))
    >>> sweeper = Sweeper(table, load_policy("confidence"))
    >>> point = sweeper.at(0.0)
    >>> point["auto_rate"], point["kieval_aligned"] == table.counts.kieval_aligned
    (1.0, True)
    >>> sweeper.at(2.0)["kieval_aligned"] == 1 - table.counts.additions / (
    ...     table.counts.entities_pred - table.counts.deletions + table.counts.additions)
    True
    """

    def __init__(self, table: OutcomeTable, policy: Policy, *, reviewer: Reviewer | None = None,
                 costs: CostModel | None = None) -> None:
        self.table = table
        self.policy = policy
        self.reviewer = reviewer or Reviewer()
        self.costs = costs
        self.task = table.task
        self.compiled = compiled_on(policy, table)
        if costs is not None:
            costs.check_signals(tuple(table.signals))
        # the named signals computed for every value to route by it (fused: all of them), which costs may price
        self._computed_signals = tuple(dict.fromkeys(signal for name in policy.signal_names()
                                                     for signal in (table.signals if name == FUSED else (name,))))
        self.n = len(table)
        self._rejected = self.compiled.rejected
        self._rejected_units = _rejected_units(table, self._rejected)
        # fixed whatever τ: counted once, not at every point query
        self._rejected_count = float(np.count_nonzero(self._rejected))
        self._rejected_unit_count = float(np.count_nonzero(self._rejected_units))
        self._order = stable_order(self.compiled.entry)
        self._sorted_entry = self.compiled.entry[self._order]
        self._budget = None if policy.budget is None else policy.budget.limit(self.n)
        self._selection = _selection(self)
        self._base, self._prefix, self._doc_base, self._doc_prefix = self._sums(self._expected())

    # -- the quantities ---------------------------------------------------------------------------

    def _expected(self) -> _Quantities:
        r = self.reviewer
        return self._quantities(self.policy.audit, r.miss_rate, r.false_correction_rate, unit_audit=None,
                                addition_miss=None)

    def _quantities(self, audit, miss, false, *, unit_audit, addition_miss) -> _Quantities:
        """The items' quantities (row 0: reviewed; then the table's replay terms) and, with review
        units, the units' (row 0: opened; row 1: missed values added by a whole-unit review).

        ``unit_audit`` and ``addition_miss`` are the drawn ones of a Monte Carlo replay (None: in expectation).
        """
        accepted, reviewed = self.table.replay_terms(miss=miss, false_correction=false)
        rejected = self._rejected
        if rejected.any():
            # a rejected item's value is fixed whatever τ: what the policy says rejection yields
            kept = (self.table.replay_terms(miss=0.0, false_correction=0.0)[1]
                    if self.policy.rejected_quality == "correct" else accepted)
            accepted = np.where(rejected, kept, accepted)
            reviewed = np.where(rejected, kept, reviewed)
        unreviewed = np.concatenate([[0.0], accepted.sum(axis=1)])
        difference = np.vstack([(~rejected).astype(np.float64), reviewed - accepted])
        units = self.table.review_units
        if units is None:
            return _Quantities(unreviewed, difference, audit)
        # A unit is opened when routed or when it holds an audited item (a rejected item is never audited).
        if unit_audit is None:
            auditable = np.bincount(units[~rejected], minlength=self.table.unit_count)
            unit_audit = 1.0 - (1.0 - self.policy.audit) ** auditable
        if not self.policy.fix_additions:
            added = np.zeros(self.table.unit_count)
        elif addition_miss is None:
            added = self.table.missed_per_unit() * (1.0 - self.reviewer.miss_rate)
        else:
            added = self.table.missed_per_unit() - addition_miss
        # a whole document rejected and re-keyed correctly holds what the model missed, too
        rekeyed = (float(self.table.missed_per_unit()[self._rejected_units].sum())
                   if self.policy.rejects_documents and self.policy.rejected_quality == "correct" else 0.0)
        # row 2: opened, counted only for documents without a rejected item (the others are touched anyway)
        clean = ~self._rejected_units
        return _Quantities(unreviewed, difference, audit,
                           np.array([unit_audit.sum(), rekeyed, unit_audit[clean].sum()]),
                           np.vstack([1.0 - unit_audit, added, np.where(clean, 1.0 - unit_audit, 0.0)]))

    def _sums(self, q: _Quantities) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Totals with nothing reviewed, and their changes after each step of the selection."""
        selection = self._selection
        prefix = selection.prefix(q.gain(), selection.added, selection.removed)
        doc_prefix = selection.prefix(q.doc_gain, selection.doc_added, selection.doc_removed)
        return q.base(), prefix, q.doc_base, doc_prefix

    # -- answers ----------------------------------------------------------------------------------

    def thresholds(self, grid: str | Sequence[float] | np.ndarray = "exact") -> np.ndarray:
        """The thresholds of a grid; ``"exact"`` gives 0, every distinct finite entry and one above the last."""
        if isinstance(grid, str):
            if grid != "exact":
                return np.asarray(parse_thresholds(grid))
            finite = self._sorted_entry[np.isfinite(self._sorted_entry)]
            top = np.nextafter(finite[-1], np.inf) if len(finite) else 1.0
            # the entries are sorted already: a stable sort only places 0, and runs of equal values collapse
            candidates = np.sort(np.concatenate([[0.0], finite, [top]]), kind="stable")
            return candidates[np.r_[True, candidates[1:] != candidates[:-1]]]
        return np.sort(np.asarray(grid, dtype=np.float64))

    def _state(self, thresholds: np.ndarray) -> np.ndarray:
        # the number of items routed at each threshold: those with entry < threshold
        return np.searchsorted(self._sorted_entry, thresholds, side="left")

    def curve(self, grid: str | Sequence[float] | np.ndarray = "exact") -> Curve:
        """The trade-off curve at every threshold of ``grid``."""
        thresholds = self.thresholds(grid)
        state = self._state(thresholds)
        columns, basis = self._metrics(self._base + self._prefix[:, state].T,
                                       self._doc_base + self._doc_prefix[:, state].T)
        breakdown = None if self.costs is None else self.costs.breakdown(self.reviewer, basis)
        if breakdown is not None:
            columns["cost"] = breakdown.total
        return Curve(self.policy.name, self.task, {"threshold": thresholds, **columns}, basis, breakdown)

    def at(self, threshold: float) -> dict[str, float]:
        """Every figure of the curve at one threshold (a point query)."""
        curve = self.curve(np.array([threshold], dtype=np.float64))
        return {name: float(values[0]) for name, values in curve.columns.items()}

    def routed_per_group(self, groups: np.ndarray, n_groups: int, threshold: float) -> np.ndarray:
        """The items sent to review at τ (within the budget; audits aside), counted per group.

        ``groups`` gives each item's group in ``range(n_groups)``. In expectation the reviewed
        items of a group are ``audit * size + (1 - audit) * routed``, which sum to ``at(τ)["reviewed"]``.

        Examples
        --------
        >>> from rpa_sim.evaluate.outcomes import evaluate_kie
        >>> from rpa_sim.route.policies import load_policy
        >>> from rpa_sim.records.synthetic import generate_receipts
        >>> table = evaluate_kie(generate_receipts(20, seed=1))
        >>> sweeper = Sweeper(table, load_policy("audited-budget"))
        >>> routed = sweeper.routed_per_group(table.key, len(table.keys), 0.9)
        >>> audit = sweeper.policy.audit
        >>> bool(np.isclose(audit * len(table) + (1 - audit) * routed.sum(), sweeper.at(0.9)["reviewed"]))
        True
        """
        steps = int(self._state(np.array([threshold], dtype=np.float64))[0])
        added = self._selection.added[:steps]
        routed = np.bincount(groups[added[added >= 0]], minlength=n_groups)
        removed = self._selection.removed
        if removed is not None:
            removed = removed[:steps]
            routed -= np.bincount(groups[removed[removed >= 0]], minlength=n_groups)
        return routed

    def reviewed_at(self, threshold: float) -> np.ndarray:
        """Whether each item is sent to review at τ (within the budget; audits aside): one bool per item.

        Document escalation opens whole documents, so every item of an escalated
        document is in the mask. Without audits the mask counts the curve's
        reviews: ``reviewed_at(τ).sum() == at(τ)["reviewed"]``.

        Examples
        --------
        >>> from rpa_sim.evaluate.outcomes import evaluate_kie
        >>> from rpa_sim.route.policies import load_policy
        >>> from rpa_sim.records.synthetic import generate_receipts
        >>> sweeper = Sweeper(evaluate_kie(generate_receipts(20, seed=1)), load_policy("document-escalation"))
        >>> int(sweeper.reviewed_at(0.9).sum()) == sweeper.at(0.9)["reviewed"]
        True
        """
        return self.routed_per_group(np.arange(self.n), self.n, threshold) > 0

    def replicate(self, replicates: int, *, seed: int, grid: str | Sequence[float] | np.ndarray = "exact") -> Spread:
        """Monte Carlo replays: audits, misses and false corrections drawn, ``replicates`` times.

        Draws use ``numpy.random.default_rng(seed)``; the same seed gives the same spread.
        """
        if replicates < 1:
            raise ValueError(f"replicates must be at least 1, got {replicates!r}")
        thresholds = self.thresholds(grid)
        _check_replicates(replicates, items=self.n, thresholds=len(thresholds))
        state = self._state(thresholds)
        rng = np.random.default_rng(seed)
        runs: dict[str, list[np.ndarray]] = {}
        for _ in range(replicates):
            base, prefix, doc_base, doc_prefix = self._sums(self._drawn(rng))
            columns, basis = self._metrics(base + prefix[:, state].T, doc_base + doc_prefix[:, state].T)
            if self.costs is not None:
                columns["cost"] = self.costs.breakdown(self.reviewer, basis).total
            for name, values in columns.items():
                runs.setdefault(name, []).append(values)
        stacked = {name: np.vstack(values) for name, values in runs.items()}
        return Spread(thresholds, replicates, seed,
                      mean={k: v.mean(axis=0) for k, v in stacked.items()},
                      std={k: v.std(axis=0, ddof=1) if replicates > 1 else np.zeros(v.shape[1])
                           for k, v in stacked.items()},
                      low={k: np.quantile(v, 0.05, axis=0) for k, v in stacked.items()},
                      high={k: np.quantile(v, 0.95, axis=0) for k, v in stacked.items()})

    def _drawn(self, rng: np.random.Generator) -> _Quantities:
        r = self.reviewer
        n = self.n
        audit = (rng.random(n) < self.policy.audit).astype(np.float64)
        miss = (rng.random(n) < r.miss_rate).astype(np.float64)
        false = (rng.random(n) < r.false_correction_rate).astype(np.float64)
        units = self.table.review_units
        if units is None:
            return self._quantities(audit, miss, false, unit_audit=None, addition_miss=None)
        unit_audit = np.zeros(self.table.unit_count)
        np.maximum.at(unit_audit, units, np.where(self._rejected, 0.0, audit))
        addition_miss = rng.binomial(self.table.missed_per_unit(), r.miss_rate).astype(np.float64)
        return self._quantities(audit, miss, false, unit_audit=unit_audit, addition_miss=addition_miss)

    def _metrics(self, sums: np.ndarray, unit_sums: np.ndarray) -> tuple[dict[str, np.ndarray], CostBasis]:
        """The curve's columns (``cost`` aside) and what a cost would price, from the summed quantities."""
        n = self.n
        reviewed = sums[:, 0]
        rejected, rejected_units = self._rejected_count, self._rejected_unit_count
        if self.table.review_units is None:  # every item is its own unit
            opened, added, touched = reviewed, np.zeros(len(sums)), reviewed + rejected
        else:
            opened, added, touched = unit_sums[:, 0], unit_sums[:, 1], unit_sums[:, 2] + rejected_units
        auto_rate = 1.0 - (reviewed + rejected) / n if n else np.full(len(sums), np.nan)
        figures, residual_errors = self.table.replay_figures(sums[:, 1:], added)
        columns = {"auto_rate": auto_rate, "reviewed": reviewed,
                   "documents_straight_through": self.table.unit_count - touched, **figures}
        if self.policy.reject_if is not None:
            columns[REJECTED] = np.full(len(sums), rejected)
        points = len(sums)
        return columns, CostBasis(reviewed=reviewed, opened=opened, residual_errors=residual_errors,
                                  rejected=np.full(points, rejected),
                                  rejected_documents=np.full(points, rejected_units),
                                  values=np.full(points, float(n)), signals=self._computed_signals)


def _check_replicates(replicates: int, *, items: int, thresholds: int) -> None:
    """Refuse Monte Carlo replays that would run for hours or hold more than the memory available.

    >>> _check_replicates(100, items=1_000, thresholds=50)
    >>> _check_replicates(100_000, items=1_000_000, thresholds=50)
    Traceback (most recent call last):
    ...
    rpa_sim.common.limits.SizeError: 100,000 replicates x 1,000,000 items = 100,000,000,000 item draws, more than ...
    """
    draws = replicates * items
    if draws > limits.MOST_REPLAYED_ITEMS:
        raise limits.SizeError(f"{replicates:,} replicates x {items:,} items = {draws:,} item draws, more than the "
                               f"{limits.MOST_REPLAYED_ITEMS:,} allowed (a fixed ceiling for time: some 450 ns a draw)")
    limits.require_memory(replicates * thresholds * limits.REPLICATE_BYTES_PER_THRESHOLD,
                          what=f"{replicates:,} replicates x {thresholds:,} thresholds")


def _rejected_units(table: OutcomeTable, rejected: np.ndarray) -> np.ndarray:
    """Per review unit, whether it holds a rejected item (without units: per item, whether it is rejected)."""
    units = table.review_units
    if units is None:
        return rejected
    return np.bincount(units[rejected], minlength=table.unit_count) > 0


@dataclass(frozen=True)
class _Selection:
    """How the reviewed set changes as items enter in entry order.

    Step ``k`` (the k-th item routed) adds item ``added[k]`` to the reviewed
    set and removes ``removed[k]`` (-1: none); likewise a document gets its
    first reviewed item (``doc_added``) or loses its last one (``doc_removed``).
    Without removals the reviewed set is a prefix of the entry order and
    ``removed`` / ``doc_removed`` are None.
    """

    steps: int
    added: np.ndarray
    removed: np.ndarray | None
    doc_added: np.ndarray
    doc_removed: np.ndarray | None

    def prefix(self, gain: np.ndarray, added: np.ndarray, removed: np.ndarray | None) -> np.ndarray:
        """Column k: the summed gain (one row per quantity) of the reviewed set after k steps."""
        prefix = np.zeros((gain.shape[0], self.steps + 1))
        if removed is None and (not len(added) or added.min() >= 0):
            # every step adds an item: a plain cumulative sum in entry order, a row at a time in place
            for quantity, sums in zip(gain, prefix):
                np.take(quantity, added, out=sums[1:])
                np.cumsum(sums[1:], out=sums[1:])
            return prefix
        steps = np.zeros((gain.shape[0], self.steps))
        joins = added >= 0
        steps[:, joins] = gain[:, added[joins]]
        if removed is not None:
            leaves = removed >= 0
            steps[:, leaves] -= gain[:, removed[leaves]]
        np.cumsum(steps, axis=1, out=prefix[:, 1:])
        return prefix


def _selection(sweeper: Sweeper) -> _Selection:
    """The selection of :class:`_Selection` for this policy and table."""
    order = sweeper._order
    n = len(order)
    units = sweeper.table.review_units
    limit = sweeper._budget
    # within a budget the least confident go first; an unknown confidence (missing_confidence) before any
    confidence = np.nan_to_num(sweeper.table.confidence, nan=-np.inf)
    if limit is None or limit >= n or bool(np.all(np.diff(confidence[order]) >= 0)):
        # Routed items come least confident first: the reviewed set grows as a
        # prefix of the entry order, frozen once the budget is used up.
        reviewed = n if limit is None else min(n, limit)
        added = order if reviewed == n else np.where(np.arange(n) < reviewed, order, -1)
        doc_added = np.full(n, -1)
        if units is not None and n:
            # A document joins at the step of its earliest item; its rows are contiguous.
            step_of = np.empty(n, dtype=np.int64)
            step_of[order] = np.arange(n)
            starts = np.flatnonzero(np.r_[True, units[1:] != units[:-1]])
            first = np.minimum.reduceat(step_of, starts)
            joined = first < reviewed
            doc_added[first[joined]] = units[starts[joined]]
        return _Selection(n, added, None, doc_added, None)
    return _budget_selection(order, sweeper.compiled.entry, confidence, units, limit)


def _signals(table: OutcomeTable, policy: Policy) -> dict[str, np.ndarray]:
    """The named signals the policy routes on (the fused one fitted only when it is named)."""
    names = policy.signal_names()
    if not names:
        return dict(table.signals)
    from rpa_sim.route.signals.columns import routing_signals  # noqa: PLC0415  (the fusion's scipy.optimize)

    return routing_signals(table, names)


def _budget_selection(order: np.ndarray, entry: np.ndarray, confidence: np.ndarray, units: np.ndarray | None,
                      limit: int) -> _Selection:
    n = len(order)
    added = np.full(n, -1)
    removed = np.full(n, -1)
    doc_added = np.full(n, -1)
    doc_removed = np.full(n, -1)
    heap: list[tuple[float, float, int]] = []  # the reviewed items, most confident on top
    per_document: dict[int, int] = {}
    conf = confidence.tolist()
    ent = entry.tolist()
    unit_list = units.tolist() if units is not None else None
    for step, item in enumerate(order.tolist()):
        key = (-conf[item], -ent[item], -item)
        if limit == 0:
            continue
        if len(heap) < limit:
            heapq.heappush(heap, key)
            leaving = -1
        elif key > heap[0]:
            leaving = -heapq.heapreplace(heap, key)[2]
        else:
            continue
        added[step] = item
        removed[step] = leaving
        if unit_list is not None:
            document = unit_list[item]
            per_document[document] = per_document.get(document, 0) + 1
            if per_document[document] == 1:
                doc_added[step] = document
            if leaving >= 0:
                gone = unit_list[leaving]
                per_document[gone] -= 1
                if per_document[gone] == 0:
                    doc_removed[step] = gone
    return _Selection(n, added, removed, doc_added, doc_removed)
