"""A stream's days, drawn: each day's documents, what the changes do to them, their routes, audits and reviews.

Day ``d`` (1 is the first) is drawn with ``numpy.random.default_rng([seed, d])``,
so a day is the same whatever the number of days around it. Its draws, in this
order (``docs/live.md``):

1. each document's type (with the day's type shares), then the document among
   those of its type (uniformly, with replacement), then its source (with the
   day's source shares): ``documents_per_day`` of each;
2. per row of the drawn documents, one uniform draw: a right value of a cell a
   change has reached turns wrong when it is below the cell's chance;
3. the audit, the reviewer's miss and the reviewer's false correction, three
   uniform draws per row (:func:`~rpa_sim.operate.monitoring.replay.draw_checks`,
   as ``replay`` draws a day), at the routes and audit rates of the row's
   confidences, moved by the changes that reached its cell.

The log of a day has the format of ``docs/monitoring.md``: ``day``, ``id`` (the
day, the document's number that day and its id in the data), ``document_type``
and ``source`` (when the stream has them), ``key``, ``confidence``, ``route``,
``stratum``, ``inclusion_probability`` and ``correct``. It has no ``value`` nor
``corrected_value``: a value a change turned wrong has no text.

Examples
--------
>>> from rpa_sim.evaluate.outcomes import evaluate_kie
>>> from rpa_sim.records.synthetic import generate_receipts
>>> from rpa_sim.route.policies import load_policy
>>> from rpa_sim.operate.stream.spec import StreamSpec
>>> spec = StreamSpec.model_validate({"days": 3, "documents_per_day": 20, "sources": {"email": 1.0}})
>>> stream = Stream(evaluate_kie(generate_receipts(30, seed=1)), load_policy("confidence"), threshold=0.9,
...                 spec=spec, audit=0.1)
>>> [day.date for day in stream]
['2024-01-01', '2024-01-02', '2024-01-03']
>>> day = stream.day(2)
>>> sorted(set(day.log.source.tolist())), len(set(day.log.id.tolist()))
(['email'], 20)
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.operate.monitoring.audit_plan import AuditPlan
from rpa_sim.operate.monitoring.log import ProductionLog, object_column
from rpa_sim.operate.monitoring.replay import Replayer, draw_checks
from rpa_sim.operate.stream.plan import Plan, Population
from rpa_sim.operate.stream.spec import StreamSpec
from rpa_sim.route.policies import Policy
from rpa_sim.route.reviewer import Reviewer

__all__ = ["Stream", "StreamDay", "stream_dates"]


def stream_dates(start: datetime.date, days: int) -> tuple[str, ...]:
    """The stream's days, ``YYYY-MM-DD``, from ``start``.

    >>> stream_dates(datetime.date(2024, 2, 28), 3)
    ('2024-02-28', '2024-02-29', '2024-03-01')
    """
    return tuple((start + datetime.timedelta(days=offset)).isoformat() for offset in range(days))


@dataclass(frozen=True, eq=False)
class StreamDay:
    """One day of a stream: its log, and the truth the team does not see: the data's row behind each log row,
    and whether it is wrong (a change may have turned it)."""

    number: int
    date: str
    log: ProductionLog
    rows: np.ndarray
    errors: np.ndarray


class Stream:
    """A scenario's data as days of production logs, under the section's changes (module docstring).

    Parameters
    ----------
    table : OutcomeTable
    policy : Policy
        The policy run in production; one with a review budget is refused (a budget caps the reviews of
        the whole data at once, and a day is a draw of it).
    threshold : float
    spec : StreamSpec
    audit : float or AuditPlan
    reviewer : Reviewer, optional
    days : int, optional
        The days to draw; ``spec.days`` by default.

    Raises
    ------
    InputError
        For a policy with a budget, a change naming a document type the stream does not draw, or an
        ``auto_error`` below the segment's error rate on its day.
    """

    def __init__(self, table: OutcomeTable, policy: Policy, *, threshold: float, spec: StreamSpec,
                 audit: float | AuditPlan, reviewer: Reviewer | None = None, days: int | None = None) -> None:
        if policy.budget is not None:
            raise InputError(f"{policy.name!r} has a review budget, which caps the reviews of the whole data at "
                             f"once, while a stream draws days of it: choose a policy without one",
                             field="stream.policy")
        self.spec, self.policy, self.threshold = spec, policy, threshold
        self.audit = audit
        self.reviewer = reviewer or Reviewer()
        self.dates = stream_dates(spec.start, spec.days if days is None else days)
        self.population = Population(table, spec)
        self.plan = Plan(self.population, Replayer(table, policy, threshold=threshold, audit=audit), spec, self.dates)
        self._pooled = np.concatenate(self.population.pools)
        self._pool_sizes = np.array([len(pool) for pool in self.population.pools])
        self._pool_starts = np.concatenate([[0], np.cumsum(self._pool_sizes)[:-1]]).astype(np.int64)

    @property
    def segments_by(self) -> tuple[str, ...]:
        """The columns the stream draws (``document_type`` with types, ``source`` with sources), which
        ``run`` watches unless the section's ``watch: segments`` says."""
        columns = tuple(name for name, values in (("document_type", self.population.types),
                                                  ("source", self.population.sources)) if values != (None,))
        return columns or ("document_type",)

    def __len__(self) -> int:
        return len(self.dates)

    def __iter__(self) -> Iterator[StreamDay]:
        for number in range(1, len(self.dates) + 1):
            yield self.day(number)

    def day(self, number: int) -> StreamDay:
        """Day ``number`` (1 is the first), drawn as the module docstring says."""
        if not 1 <= number <= len(self.dates):
            raise ValueError(f"number must be a day of the stream, 1 to {len(self.dates)}, got {number!r}")
        population, plan, date = self.population, self.plan, self.dates[number - 1]
        epoch = plan.epoch_of(number)
        rng = np.random.default_rng([self.spec.seed, number])
        n = self.spec.documents_per_day
        types = rng.choice(len(population.types), size=n, p=epoch.type_shares)
        picks = (rng.random(n) * self._pool_sizes[types]).astype(np.int64)
        units = self._pooled[self._pool_starts[types] + picks]
        sources = rng.choice(len(population.sources), size=n, p=epoch.source_shares)
        counts = population.count[units]
        total = int(counts.sum())
        document = np.repeat(np.arange(n), counts)
        ends = np.cumsum(counts)
        rows = population.rows[np.repeat(population.first[units], counts) + np.arange(total)
                               - np.repeat(ends - counts, counts)]
        cell = (types * len(population.sources) + sources)[document]
        base = plan.replayer(())
        errors = base.errors[rows]
        turned = np.array([state.turned_wrong for state in epoch.states])[cell]
        flipped = ~errors & (rng.random(total) < turned)
        reviewed = np.empty(total, dtype=bool)
        inclusion = np.empty(total)
        confidence = np.empty(total)
        stratum = np.empty(total, dtype=object)
        for moved_by in sorted({state.moved_by for state in epoch.states}):
            mine = np.isin(cell, [index for index, state in enumerate(epoch.states) if state.moved_by == moved_by])
            replayer = plan.replayer(moved_by)
            reviewed[mine] = replayer.reviewed[rows[mine]]
            inclusion[mine] = replayer.inclusion_probability[rows[mine]]
            confidence[mine] = replayer.confidence[rows[mine]]
            stratum[mine] = replayer.stratum[rows[mine]]
        wrong = errors | flipped
        checks = draw_checks(rng, reviewed=reviewed, inclusion_probability=inclusion, errors=wrong,
                             changed=base.changed[rows] | flipped, breakable=base.breakable[rows] & ~flipped,
                             reviewer=self.reviewer)
        ids = [f"{date}-{k + 1:05d}-{unit_id}" for k, unit_id in enumerate(population.unit_ids[units].tolist())]
        log = ProductionLog(
            route=checks.route, inclusion_probability=inclusion, correct=checks.correct, confidence=confidence,
            stratum=stratum, id=object_column(ids)[document], key=base.keys[rows],
            day=object_column([date] * total), document_type=_column(population.types, types, document),
            source=_column(population.sources, sources, document))
        return StreamDay(number, date, log, rows, wrong)


def _column(values: tuple[str | None, ...], drawn: np.ndarray, document: np.ndarray) -> np.ndarray | None:
    """A drawn column per row (None when the stream has no such column)."""
    if values == (None,):
        return None
    return object_column(list(values))[drawn][document]
