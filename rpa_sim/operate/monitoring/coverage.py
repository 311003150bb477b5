"""Whether the intervals keep their promise: many replayed production days, measured against the truth.

Day ``i`` of a measurement is exactly ``rpa-sim replay ... --seed SEED+i``: the
items and their routes stay, the audits and the reviewer's misses and false
corrections are drawn again. The truth (the error rate of the auto-accepted
items) is known, so per method the share of days whose interval covers it is
the actual coverage of the nominal level, beside the intervals' mean width
and the estimates' bias; the naive figure (the error share of reviewed items)
shows its bias, with each reviewer given. The intervals are design-based:
the day's items are fixed, the draws are what varies.

Examples
--------
>>> from rpa_sim.evaluate.outcomes import evaluate_kie
>>> from rpa_sim.route.policies import load_policy
>>> from rpa_sim.records.synthetic import generate_receipts
>>> from rpa_sim.operate.monitoring.replay import Replayer
>>> replayer = Replayer(evaluate_kie(generate_receipts(30, seed=2)), load_policy("confidence"), threshold=0.9,
...                     audit=0.2)
>>> rows = measure_coverage(replayer, days=20, seed=0, methods=("classical",))
>>> rows[0].method, rows[0].days, 0.0 <= rows[0].coverage <= 1.0
('classical', 20, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rpa_sim.operate.monitoring.estimators import METHODS, estimate
from rpa_sim.operate.monitoring.replay import Replayer
from rpa_sim.route.reviewer import Reviewer

__all__ = ["CoverageRow", "DailyEstimates", "replay_days", "measure_coverage", "coverage_markdown"]


@dataclass(frozen=True)
class CoverageRow:
    """One method with one reviewer over ``days`` replayed days.

    Attributes
    ----------
    reviewer, method : str
    days : int
    confidence_level : float
        The intervals' nominal coverage.
    truth : float
        The error rate of the auto-accepted items (the same every day).
    coverage : float
        The share of days whose interval holds ``truth``.
    coverage_error : float
        The Monte Carlo standard error of ``coverage``: ``sqrt(c (1 - c) / days)``.
    mean_width : float
        The intervals' mean width.
    bias : float
        The estimates' mean less ``truth``, over the days with an estimate (NaN when none has).
    quality_coverage : float
        The share of days whose post-correction quality interval holds the
        day's true share of right rows in the output; the log counts reviewed
        rows right, so reviewer errors show here.
    naive_bias : float
        The naive figure's mean less ``truth``, over the days with reviews.
    """

    reviewer: str
    method: str
    days: int
    confidence_level: float
    truth: float
    coverage: float
    coverage_error: float
    mean_width: float
    bias: float
    quality_coverage: float
    naive_bias: float


def _mean(values: np.ndarray) -> float:
    """The mean of the defined (not NaN) values; NaN when none is."""
    defined = values[~np.isnan(values)]
    return float(np.mean(defined)) if len(defined) else math.nan


@dataclass(frozen=True, eq=False)
class DailyEstimates:
    """What each of ``days`` replayed days gave, per method: the interval of the auto-accepted error rate.

    Attributes
    ----------
    seeds : ndarray of int
        Day ``i`` was drawn with ``seeds[i]``.
    truth : float
        The error rate of the auto-accepted items (the same every day).
    confidence_level : float
    estimate, low, high : dict of str to ndarray of float
        Per method, each day's estimate (NaN when undefined) and interval.
    quality_covered : dict of str to ndarray of bool
        Per method, whether the day's post-correction quality interval holds the day's true quality.
    naive : ndarray of float
        Each day's naive figure (the error share of reviewed rows; NaN without reviews).
    """

    seeds: np.ndarray
    truth: float
    confidence_level: float
    estimate: dict[str, np.ndarray]
    low: dict[str, np.ndarray]
    high: dict[str, np.ndarray]
    quality_covered: dict[str, np.ndarray]
    naive: np.ndarray

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(self.estimate)

    def covered(self, method: str) -> np.ndarray:
        """Whether each day's interval holds the truth."""
        return (self.low[method] <= self.truth) & (self.truth <= self.high[method])

    def row(self, method: str, *, reviewer: str = "perfect") -> CoverageRow:
        """The days summed up for one method: coverage, mean width, biases."""
        days = len(self.seeds)
        share = float(np.mean(self.covered(method)))
        return CoverageRow(reviewer, method, days, self.confidence_level, self.truth, share,
                           math.sqrt(share * (1 - share) / days), float(np.mean(self.high[method] - self.low[method])),
                           _mean(self.estimate[method] - self.truth), float(np.mean(self.quality_covered[method])),
                           _mean(self.naive - self.truth))


def _number(value: float | None) -> float:
    return math.nan if value is None else value


def replay_days(replayer: Replayer, *, days: int, seed: int, reviewer: Reviewer | None = None,
                methods: Sequence[str] = METHODS, confidence_level: float = 0.95) -> DailyEstimates:
    """Replay ``days`` days (day ``i`` with seed ``seed + i``) and estimate each with every method.

    Raises
    ------
    ValueError
        When ``days`` is below 1, ``methods`` is empty, or the policy reviews
        every item (no auto-accepted item to estimate the error rate of).
    """
    if days < 1:
        raise ValueError(f"days must be at least 1, got {days!r}")
    if not methods:
        raise ValueError("methods must name at least one method, got none")
    if replayer.reviewed.all():
        raise ValueError("the policy reviews every item: no auto-accepted item to estimate the error rate of")
    reviewer = reviewer or Reviewer()
    # the routes do not depend on the draws: every day has the same accepted items, hence the same truth
    truth = float(replayer.errors[~replayer.reviewed].mean())
    shape = {method: np.empty(days) for method in methods}
    point, low, high = ({m: v.copy() for m, v in shape.items()} for _ in range(3))
    quality = {method: np.zeros(days, dtype=bool) for method in methods}
    naive = np.empty(days)
    for day_index in range(days):
        day = replayer.day(seed=seed + day_index, reviewer=reviewer)
        for method in methods:
            result = estimate(day.log, method=method, confidence_level=confidence_level)
            interval, output = result.auto_error, result.post_correction_quality
            point[method][day_index] = _number(interval.estimate)
            low[method][day_index], high[method][day_index] = interval.low, interval.high
            quality[method][day_index] = (output.low is not None and output.high is not None
                                          and output.low <= day.quality <= output.high)
        naive[day_index] = _number(result.naive)  # the same figure whatever the method
    return DailyEstimates(seed + np.arange(days), truth, confidence_level, point, low, high, quality, naive)


def measure_coverage(replayer: Replayer, *, days: int, seed: int, reviewers: Mapping[str, Reviewer] | None = None,
                     methods: Sequence[str] = METHODS, confidence_level: float = 0.95) -> list[CoverageRow]:
    """Replay ``days`` days per reviewer and measure each method's intervals against the truth.

    Parameters
    ----------
    replayer : Replayer
        The policy at its threshold, with its audit.
    days : int
        Days per reviewer; day ``i`` is drawn with seed ``seed + i``.
    seed : int
    reviewers : mapping of str to Reviewer, optional
        Named reviewers (default: ``{"perfect": Reviewer()}``).
    methods : sequence of str, default: all
    confidence_level : float, default=0.95

    Returns
    -------
    list of CoverageRow
        One per reviewer and method, in the order given.
    """
    reviewers = {"perfect": Reviewer()} if reviewers is None else reviewers
    rows = []
    for name, reviewer in reviewers.items():
        daily = replay_days(replayer, days=days, seed=seed, reviewer=reviewer, methods=methods,
                            confidence_level=confidence_level)
        rows += [daily.row(method, reviewer=name) for method in methods]
    return rows


def coverage_markdown(rows: Sequence[CoverageRow]) -> str:
    """The rows as a Markdown table (what ``docs/monitoring.md`` shows)."""
    lines = ["| reviewer | method | coverage (nominal) | mean width | bias | quality coverage | naive bias |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row.reviewer} | {row.method} | {row.coverage:.3f} ± {row.coverage_error:.3f} "
                     f"({row.confidence_level:g}) | {row.mean_width:.4f} | {row.bias:+.4f} | "
                     f"{row.quality_coverage:.3f} | {row.naive_bias:+.4f} |")
    return "\n".join(lines)
