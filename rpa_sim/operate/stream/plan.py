"""A stream's plan: who is drawn (documents, their types and sources), and what each change does to whom, when.

The documents of a day are the data's **units** (KIE documents, VQA questions)
that have a prediction, drawn with replacement. Each drawn document has a
**cell**: its ``document_type`` and its ``source``. A type is drawn with the
type shares of the day, then a document of that type (any document when the
types are the stream's labels); a source with the source shares of the day.

A change acts on the cells of its segment from its day on, in one of two ways
or both, which the plan keeps per cell (:class:`CellState`):

- the confidences move (``degraded_scans``: times a factor; ``model_update``: a
  shift on the logit scale), and with them the routing and the audit strata:
  the policy routes the moved confidences (:meth:`Replayer.with_confidence`);
- right values turn wrong, each with a probability ``q`` drawn per row and day
  (``new_template``, ``degraded_scans``): ``q`` is chosen so that the segment's
  expected auto-accepted error rate becomes the change's ``auto_error``.

Expected figures are exact expectations over the draws: per cell, the mean over
its type's documents of their auto-accepted rows, errors among them, rows and
confidences, weighted by the cell's share of the day. The error rate of a
segment is the ratio of expected errors to expected auto-accepted rows, which
is what its days' rows add up to over many days.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit, logit

from rpa_sim.common.errors import InputError
from rpa_sim.common.typedjson import FrozenMap
from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.operate.monitoring.replay import Replayer
from rpa_sim.operate.stream.spec import (
    AnyChange,
    DegradedScans,
    Mix,
    ModelUpdate,
    NewTemplate,
    StreamSpec,
    shares_text,
)

__all__ = ["Population", "CellState", "SegmentFigures", "SharesMoved", "Planted", "Plan", "moved_confidence",
           "change_text"]

def moved_confidence(confidence: np.ndarray, changes: Sequence[AnyChange]) -> np.ndarray:
    """The confidences once ``changes`` have moved them, in order (NaN stays NaN, 0 and 1 stay).

    >>> moved_confidence(np.array([0.5, 0.9, 1.0]), [DegradedScans(kind="degraded_scans", from_day=1,
    ...     segment={"source": "scan"}, auto_error=0.1, confidence_factor=0.5)]).tolist()
    [0.25, 0.45, 0.5]
    >>> moved_confidence(np.array([0.5, 0.0, 1.0]), [ModelUpdate(kind="model_update", from_day=1,
    ...     segment={"source": "scan"}, confidence_shift=float(np.log(3)))]).round(12).tolist()
    [0.75, 0.0, 1.0]
    """
    moved = confidence
    for change in changes:
        if isinstance(change, DegradedScans):
            moved = moved * change.confidence_factor
        elif isinstance(change, ModelUpdate):
            with np.errstate(divide="ignore"):
                moved = expit(logit(moved) + change.confidence_shift)
    return moved


class Population:
    """The units a day draws from, and the values of the two columns each drawn document gets.

    Attributes
    ----------
    rows, first, count : ndarray of int
        ``rows[first[u]:first[u] + count[u]]`` are unit ``u``'s rows of the table, in table order.
    unit_ids : ndarray of object
        Each unit's id (a document's, a question's).
    types, sources : tuple of (str or None)
        The values of ``document_type`` and ``source`` (``(None,)``: the stream has no such column).
    pools : list of ndarray of int
        Per type, the units a document of that type is drawn from.
    records_typed : bool
        Whether the types are the records' own (else the stream's labels, or none).
    """

    def __init__(self, table: OutcomeTable, spec: StreamSpec) -> None:
        units = table.review_units
        unit_of_row = np.arange(len(table)) if units is None else np.asarray(units)
        present, unit_index = np.unique(unit_of_row, return_inverse=True)
        if not len(present):
            raise InputError("the data has no prediction to route: there is nothing to draw a day from", field="stream")
        self.rows = np.argsort(unit_index, kind="stable")
        self.count = np.bincount(unit_index, minlength=len(present))
        self.first = np.concatenate([[0], np.cumsum(self.count)[:-1]])
        self.unit_ids = table.review_values().ids[self.rows[self.first]]
        type_names = np.asarray([name or None for name in table.document_types], dtype=object)
        unit_types = type_names[table.document_type_codes[self.rows[self.first]]] if len(type_names) else \
            np.full(len(present), None, dtype=object)
        self.records_typed = any(name is not None for name in unit_types.tolist())
        if self.records_typed:
            self._records_types(unit_types, spec)
        else:
            self.types = tuple(spec.document_types) or (None,)
            self.type_shares = np.array(list(spec.document_types.values()) or [1.0])
            self.pools = [np.arange(len(present))] * len(self.types)
        self.sources: tuple[str | None, ...] = tuple(spec.sources) or (None,)
        self.source_shares = np.array(list(spec.sources.values()) or [1.0])
        self._check_named(spec)

    def _records_types(self, unit_types: np.ndarray, spec: StreamSpec) -> None:
        """The records' own types: drawn with the section's shares, else as often as the data has them."""
        names = sorted({name for name in unit_types.tolist() if name is not None})
        has_untyped = any(name is None for name in unit_types.tolist())
        if spec.document_types:
            unknown = [name for name in spec.document_types if name not in names]
            if unknown:
                raise InputError(f"{', '.join(map(repr, unknown))} is no document type of the records "
                                 f"({', '.join(names)})", field="stream.document_types")
            self.types = tuple(spec.document_types)
            self.type_shares = np.array(list(spec.document_types.values()))
        else:
            self.types = ((None,) if has_untyped else ()) + tuple(names)
            counts = np.array([np.count_nonzero(unit_types == name) if name is not None
                               else sum(value is None for value in unit_types.tolist()) for name in self.types])
            self.type_shares = counts / counts.sum()
        self.pools = [np.flatnonzero(np.array([value == name for value in unit_types.tolist()])) for name in self.types]

    def _check_named(self, spec: StreamSpec) -> None:
        """Every type a change or a mix names is one the stream draws (the records' types are known only now)."""
        for position, change in enumerate(spec.changes):
            named = change.document_types or {} if isinstance(change, Mix) else \
                {change.segment["document_type"]: 1.0} if "document_type" in change.segment else {}
            unknown = [name for name in named if name not in self.types]
            if unknown:
                known = ", ".join(name for name in self.types if name is not None) or "none"
                where = "document_types" if isinstance(change, Mix) else "segment.document_type"
                raise InputError(f"{', '.join(map(repr, unknown))} is not among the stream's document types ({known})",
                                 field=f"stream.changes[{position}].{where}")

    @property
    def cells(self) -> Iterator[tuple[int, str | None, str | None]]:
        """Each cell's index, type and source: cell ``t * len(sources) + s``."""
        for t, type_name in enumerate(self.types):
            for s, source in enumerate(self.sources):
                yield t * len(self.sources) + s, type_name, source

    def in_segment(self, segment: Mapping[str, str]) -> np.ndarray:
        """Which cells a change's segment takes: those whose values are the segment's."""
        return np.array([segment.get("document_type", type_name) == type_name
                         and segment.get("source", source) == source for _, type_name, source in self.cells])


@dataclass(frozen=True)
class CellState:
    """What the changes so far do to one cell: the changes that moved its confidences (positions in the
    section, in the order they apply) and the chance that a right value of it turns wrong."""

    moved_by: tuple[int, ...] = ()
    turned_wrong: float = 0.0


@dataclass(frozen=True)
class SegmentFigures:
    """A segment's expected figures on a day: its share of the documents, its rows' review share, the error
    rate of its auto-accepted rows (None when it auto-accepts nothing) and its mean confidence (None without
    confidences)."""

    share: float
    review_share: float
    auto_error: float | None
    mean_confidence: float | None


@dataclass(frozen=True)
class SharesMoved:
    """A mix's shares of one column's values, before it and from its day on."""

    before: FrozenMap[float]
    after: FrozenMap[float]


@dataclass(frozen=True)
class Planted:
    """What one change plants: its segment's figures the day before and from its day on.

    ``position`` is its place in the section; ``day`` its date (empty when it comes after the stream's
    last day). ``turned_wrong`` is the chance that a right value of the segment turns wrong
    (``new_template``, ``degraded_scans``); ``shares`` a mix's shares before and after, per column. The
    figures hold from the change's day until the next change that touches the segment; ``text`` says
    them in a sentence.
    """

    position: int
    kind: str
    from_day: int
    day: str
    segment: FrozenMap[str]
    before: SegmentFigures | None
    after: SegmentFigures | None
    turned_wrong: float | None
    shares: FrozenMap[SharesMoved] | None
    text: str


class _Epoch:
    """The cells' states and the shares from one day on, until the next change."""

    def __init__(self, from_day: int, states: list[CellState], type_shares: np.ndarray,
                 source_shares: np.ndarray) -> None:
        self.from_day, self.states = from_day, states
        self.type_shares, self.source_shares = type_shares, source_shares

    def weights(self, population: Population) -> np.ndarray:
        """Each cell's share of the day's documents."""
        return np.outer(self.type_shares, self.source_shares).reshape(-1)


class Plan:
    """The population, the routing at each set of moved confidences, and the states of the cells per epoch.

    Parameters
    ----------
    population : Population
    replayer : Replayer
        The policy at its threshold with the stream's audit, on the data as it is.
    spec : StreamSpec
    dates : sequence of str
        The stream's days (a change after the last has no date).
    """

    def __init__(self, population: Population, replayer: Replayer, spec: StreamSpec, dates: Sequence[str]) -> None:
        self.population, self.spec = population, spec
        self._replayers: dict[tuple[int, ...], Replayer] = {(): replayer}
        self._stats: dict[tuple[int, ...], np.ndarray] = {}
        cells = len(population.types) * len(population.sources)
        epoch = _Epoch(1, [CellState()] * cells, population.type_shares, population.source_shares)
        self.epochs = [epoch]
        planted = []
        for position, change in spec.ordered_changes:
            day = dates[change.from_day - 1] if change.from_day <= len(dates) else None
            epoch, entry = self._apply(epoch, position, change, day)
            if self.epochs[-1].from_day == change.from_day:
                self.epochs[-1] = epoch
            else:
                self.epochs.append(epoch)
            planted.append(entry)
        self.planted = tuple(planted)

    # -- routing at moved confidences -----------------------------------------------------------------

    def replayer(self, moved_by: tuple[int, ...]) -> Replayer:
        """The policy's routing and audit where the changes ``moved_by`` have moved the confidences."""
        if moved_by not in self._replayers:
            base = self._replayers[()]
            changes = [self.spec.changes[position] for position in moved_by]
            self._replayers[moved_by] = base.with_confidence(moved_confidence(base.table.confidence, changes))
        return self._replayers[moved_by]

    def _unit_stats(self, moved_by: tuple[int, ...]) -> np.ndarray:
        """Per type (rows) the mean over its pool of each unit's rows, auto-accepted rows, errors among them,
        sum of known confidences and known confidences (columns)."""
        if moved_by not in self._stats:
            replayer, population = self.replayer(moved_by), self.population
            rows = population.rows
            unit = np.repeat(np.arange(len(population.count)), population.count)
            auto = ~replayer.reviewed[rows]
            confidence = replayer.confidence[rows]
            known = ~np.isnan(confidence)
            per_unit = np.stack([np.bincount(unit, weights=weights, minlength=len(population.count)) for weights in (
                np.ones(len(rows)), auto, auto & replayer.errors[rows], np.where(known, confidence, 0.0), known)])
            self._stats[moved_by] = np.stack([per_unit[:, pool].mean(axis=1) for pool in population.pools])
        return self._stats[moved_by]

    # -- figures ----------------------------------------------------------------------------------------

    def figures(self, epoch: _Epoch, cells: np.ndarray) -> SegmentFigures:
        """A segment's expected figures (the cells ``cells``) in ``epoch``."""
        weights = epoch.weights(self.population)
        sums = np.zeros(5)
        n_sources = len(self.population.sources)
        for cell in np.flatnonzero(cells):
            state = epoch.states[cell]
            rows, auto, errors, confidence, known = self._unit_stats(state.moved_by)[cell // n_sources]
            errors = errors + state.turned_wrong * (auto - errors)
            sums += weights[cell] * np.array([rows, auto, errors, confidence, known])
        rows, auto, errors, confidence, known = sums.tolist()
        share = float(weights[cells].sum())
        return SegmentFigures(share=share, review_share=1.0 - auto / rows if rows else 0.0,
                              auto_error=errors / auto if auto else None,
                              mean_confidence=confidence / known if known else None)

    def epoch_of(self, day: int) -> _Epoch:
        """The epoch day ``day`` (1 is the first) is in."""
        return next(epoch for epoch in reversed(self.epochs) if epoch.from_day <= day)

    # -- the changes ------------------------------------------------------------------------------------

    def _apply(self, epoch: _Epoch, position: int, change: AnyChange, day: str | None) -> tuple[_Epoch, Planted]:
        """The epoch once ``change`` applies, and what it plants."""
        population = self.population
        if isinstance(change, Mix):
            type_shares, source_shares = epoch.type_shares, epoch.source_shares
            shares = {}
            if change.sources is not None:
                source_shares = _reweighted(population.sources, change.sources)
                shares["source"] = SharesMoved(_named(population.sources, epoch.source_shares),
                                               FrozenMap(change.sources))
            if change.document_types is not None:
                type_shares = _reweighted(population.types, change.document_types)
                shares["document_type"] = SharesMoved(_named(population.types, epoch.type_shares),
                                                      FrozenMap(change.document_types))
            moved = _Epoch(change.from_day, epoch.states, type_shares, source_shares)
            entry = Planted(position, change.kind, change.from_day, day or "", FrozenMap(), None, None, None,
                            FrozenMap(shares), "")
            return moved, _with_text(entry)
        segment = {str(column): value for column, value in change.segment.items()}
        cells = population.in_segment(segment)
        before = self.figures(epoch, cells)
        states = [CellState(state.moved_by + (position,), state.turned_wrong)
                  if inside and not isinstance(change, NewTemplate) else state
                  for state, inside in zip(epoch.states, cells.tolist())]
        moved = _Epoch(change.from_day, states, epoch.type_shares, epoch.source_shares)
        turned_wrong = None
        if isinstance(change, (NewTemplate, DegradedScans)):
            rate = self.figures(moved, cells).auto_error
            where = f"stream.changes[{position}].auto_error"
            if rate is None:
                raise InputError(f"segment {_segment_text(segment)} auto-accepts nothing at the threshold on day "
                                 f"{change.from_day}: there is no error rate to raise", field=where)
            if change.auto_error < rate:
                raise InputError(f"{change.auto_error:g} is below the {rate:.4g} the auto-accepted units of segment "
                                 f"{_segment_text(segment)} err at on day {change.from_day}: a {change.kind} raises it",
                                 field=where)
            turned_wrong = (change.auto_error - rate) / (1.0 - rate)
            states = [CellState(state.moved_by, 1.0 - (1.0 - state.turned_wrong) * (1.0 - turned_wrong))
                      if inside else state for state, inside in zip(states, cells.tolist())]
            moved = _Epoch(change.from_day, states, epoch.type_shares, epoch.source_shares)
        entry = Planted(position, change.kind, change.from_day, day or "", FrozenMap(segment), before,
                        self.figures(moved, cells), turned_wrong, None, "")
        return moved, _with_text(entry)


def _named(values: tuple[str | None, ...], shares: np.ndarray) -> FrozenMap[float]:
    return FrozenMap({value: float(share) for value, share in zip(values, shares.tolist()) if value is not None})


def _reweighted(values: tuple[str | None, ...], shares: dict[str, float]) -> np.ndarray:
    """A mix's shares over the stream's values (a value it does not name: share 0)."""
    return np.array([shares.get(value, 0.0) if value is not None else 0.0 for value in values])


def _segment_text(segment: Mapping[str, str]) -> str:
    return " / ".join(segment[column] for column in ("document_type", "source") if column in segment)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def change_text(entry: Planted) -> str:
    """What a change plants, in one sentence: the figures before and from its day on."""
    when = f"from day {entry.from_day}" + (f" ({entry.day})" if entry.day else "")
    if entry.shares is not None:
        moved = "; ".join(f"{column} shares {shares_text(shares.before)} -> {shares_text(shares.after)}"
                          for column, shares in entry.shares.items())
        return f"mix {when}: {moved}"
    before, after = entry.before, entry.after
    assert before is not None and after is not None, "a segment change has figures"
    parts = []
    if entry.kind != "new_template" and before.mean_confidence is not None:
        parts.append(f"mean confidence {_rate(before.mean_confidence)} -> {_rate(after.mean_confidence)}")
    if entry.kind != "new_template":
        parts.append(f"review share {_rate(before.review_share)} -> {_rate(after.review_share)}")
    parts.append(f"auto-accepted error rate {_rate(before.auto_error)} -> {_rate(after.auto_error)}")
    if entry.turned_wrong is not None:
        parts.append(f"{entry.turned_wrong:.1%} of its right values turn wrong")
    if entry.kind == "new_template":
        parts.append("its confidences stay")
    if entry.kind == "model_update":
        parts.append("what it gets wrong stays")
    return f"{entry.kind} {when} on {_segment_text(entry.segment)}: {', '.join(parts)}"


def _with_text(entry: Planted) -> Planted:
    return replace(entry, text=change_text(entry))

