"""What to do about a segment: the threshold its recent rows support, the reviews it costs, or the audits to settle it.

:func:`propose` scans the candidate thresholds (:data:`~rpa_sim.operate.live.tally.THRESHOLDS`)
from the strictest to the most permissive, as Learn-then-Test's fixed sequence
does (:mod:`rpa_sim.route.certify`), on a window's reviewed and audited rows.
At a candidate ``t`` the units at or above it are the reviewed rows there
(whose errors the reviewers reported: known exactly) and the auto-accepted
rows there, of which each audit stratum's share wrong is bounded by its
one-sided Clopper-Pearson bound at level ``delta / H`` (Bonferroni over the
``H`` strata; one stratum, one exact bound). Their weighted sum over the units
is an upper bound of the error rate at ``t`` at level ``delta``; the walk
starts at the strictest candidate with enough audits to pass at all, stops at
the first candidate whose bound exceeds ``max_error``, and proposes the last
one that passed. The window is chosen by the data (the rows since the change
point), so the level is nominal: a proposal is advice, not a certificate.

When no candidate has enough audits, the proposal is an audit: the rate of
the segment's auto-accepted rows that gives, within :data:`SETTLE_DAYS` days,
the audits with which the bound can reach ``max_error`` at the error rate seen
(:func:`audits_to_settle`); when the first testable candidate fails while its
rows' error rate is below ``max_error``, the same for the auto-accepted rows
at or above it. When the rate seen is already at or above ``max_error``,
nothing supports a threshold: review the segment.

Examples
--------
>>> from rpa_sim.operate.live.tally import Tally
>>> confidence = np.repeat([0.999, 0.95, 0.8], 400)
>>> wrong = np.zeros(1200, dtype=np.int8) + 1
>>> wrong[800:880] = 0  # 20% errors below 0.9, none above
>>> window = Tally.of(route=np.ones(1200, dtype=np.int8), inclusion=np.ones(1200), correct=wrong,
...                   confidence=confidence)
>>> proposal = propose(window, days=4, max_error=0.03, delta=0.05)
>>> proposal.threshold, proposal.reviews_per_day, proposal.change_in_reviews_per_day
(0.85, 100.0, -200.0)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rpa_sim.operate.live.tally import THRESHOLDS, Tally

if TYPE_CHECKING:
    from rpa_sim.operate.queue.summary import OperationModel

__all__ = ["SETTLE_DAYS", "DayVolume", "Proposal", "propose", "audits_to_settle", "with_reviewers"]

#: The days an audit proposal plans to settle the question in.
SETTLE_DAYS = 14
# the most audits an audit proposal counts up to: beyond, the rate seen is too close to max_error to settle it
_MOST_AUDITS = 10_000_000


@dataclass(frozen=True)
class DayVolume:
    """What a day of the whole log sends to review: the review team's workload (``--scenario``'s operations).

    ``documents`` are the distinct ids of the day (each row its own when the log has no ``id``) and
    ``opened`` those with a reviewed row; ``units`` and ``reviewed`` count rows.
    """

    units: int
    reviewed: int
    documents: int
    opened: int


@dataclass(frozen=True)
class Proposal:
    """A threshold for a segment (``threshold``), or why there is none and the audit that would settle it.

    Attributes
    ----------
    threshold : float or None
        Auto-accept iff confidence >= threshold; None when the window supports none.
    upper_bound : float or None
        The error rate's upper bound at the threshold (level ``delta``).
    checked : int
        Reviewed and audited rows of the window at or above the threshold (all of them without one).
    reviews_per_day : float or None
        Reviews a day at the threshold: the window's rows below it, over its days.
    change_in_reviews_per_day : float or None
        ``reviews_per_day`` minus the reviews a day now: above 0 more, below 0 saved.
    reviewers_now, reviewers_needed : int or None
        With a scenario's ``operations:``, the reviewers to schedule at the busiest hour for the
        whole log's reviews now and with the change (None without).
    audit_rate : float or None
        The share of the segment's auto-accepted rows to audit, when the data cannot settle it.
    audit_days : int or None
        The days that audit takes.
    reason : str
        The proposal in plain words.
    """

    threshold: float | None
    upper_bound: float | None
    checked: int
    reviews_per_day: float | None
    change_in_reviews_per_day: float | None
    reviewers_now: int | None
    reviewers_needed: int | None
    audit_rate: float | None
    audit_days: int | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def short(self) -> str:
        """The proposal in at most 14 characters, as a table's cell: ``>=0.97 +85/d`` (a threshold and the
        reviews a day it adds), ``audit 12% 14d`` or ``review all``.

        >>> Proposal(0.97, 0.03, 400, 120.0, 85.2, None, None, None, None, "").short
        '>=0.97 +85/d'
        """
        if self.threshold is not None:
            return f">={self.threshold:g} {self.change_in_reviews_per_day or 0.0:+,.0f}/d"
        if self.audit_rate is not None:
            return f"audit {self.audit_rate:.0%} {self.audit_days}d"
        return "review all"


def audits_to_settle(error_rate: float, *, max_error: float, delta: float) -> int | None:
    """The fewest audits whose one-sided ``1 - delta`` bound reaches ``max_error`` when ``error_rate`` of them err.

    The bound is Clopper-Pearson's at the expected count of errors, ``n error_rate`` (the beta quantile
    takes a count that is not whole, and falls as ``n`` grows). None when ``error_rate >= max_error`` (or so
    close that no count up to ten million does).

    >>> from rpa_sim.route.certify import minimum_accepted
    >>> audits_to_settle(0.0, max_error=0.03, delta=0.05) == minimum_accepted(0.03, 0.05)
    True
    >>> audits_to_settle(0.01, max_error=0.03, delta=0.05)
    216
    """
    from scipy.stats import beta  # noqa: PLC0415

    from rpa_sim.route.certify import minimum_accepted  # noqa: PLC0415

    if error_rate >= max_error:
        return None

    def settles(n: int) -> bool:
        wrong = n * error_rate
        return float(beta.isf(delta, wrong + 1, n - wrong)) <= max_error

    low = minimum_accepted(max_error, delta)  # even without an error, fewer audits cannot do
    if settles(low):
        return low
    high = low
    while not settles(high):
        if high >= _MOST_AUDITS:
            return None
        high = min(high * 2, _MOST_AUDITS)
    while high - low > 1:  # settles(high), not settles(low)
        middle = (low + high) // 2
        low, high = (low, middle) if settles(middle) else (middle, high)
    return high


def _bounds(errors: np.ndarray, audited: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """One-sided Clopper-Pearson upper bounds, element-wise (1 without an audit or when all erred)."""
    from scipy.stats import beta  # noqa: PLC0415

    known = errors < audited
    bound = np.ones(np.broadcast(errors, audited, delta).shape)
    if known.any():
        k, n, d = np.broadcast_arrays(errors, audited, delta)
        bound[known] = beta.isf(d[known], k[known] + 1, n[known] - k[known])
    return bound


def propose(window: Tally, *, days: int, max_error: float, delta: float,
            estimate: float | None = None) -> Proposal:
    """The threshold the window's checked rows support at ``max_error`` (module docstring), or an audit.

    Parameters
    ----------
    window : Tally
        The segment's rows since the change point (or over the calm run, for ``room_to_automate``).
    days : int
        The run days the window covers: reviews a day are its rows over ``days``.
    max_error, delta : float
    estimate : float, optional
        The window's error rate of auto-accepted rows, for an audit proposal (default: as if none erred).
    """
    if window.without_confidence:
        return _none(f"{window.without_confidence:,} rows have no confidence, so no threshold can route them")
    bands = len(THRESHOLDS)
    # everything at or above each candidate: sums from the strictest band down
    def above(counts: np.ndarray) -> np.ndarray:
        return np.cumsum(counts[..., :bands][..., ::-1], axis=-1)[..., ::-1]

    reviewed, reviewed_errors = above(window.reviewed), above(window.reviewed_errors)
    auto, audited, errors = above(window.auto), above(window.audited), above(window.audit_errors)
    units = reviewed + auto.sum(axis=0)
    strata = np.maximum((auto > 0).sum(axis=0), 1)  # Bonferroni over the strata present at each candidate
    share = np.broadcast_to(delta / strata, auto.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = (reviewed_errors + (auto * _bounds(errors, audited, share)).sum(axis=0)) / units
        best_case = (auto * _bounds(np.zeros_like(audited), audited, share)).sum(axis=0) / units
    testable = (units > 0) & (best_case <= max_error)
    reviews_now = window.reviewed_rows / days
    if not testable.any():
        return _audit(window, days, max_error, delta, estimate, "too few audits above any threshold to support one")
    start = int(np.flatnonzero(testable)[-1])
    passed = None
    for candidate in range(start, -1, -1):
        if not bound[candidate] <= max_error:
            break
        passed = candidate
    if passed is None:
        seen = (reviewed_errors[start] + _ht_errors(window, start)) / units[start]
        if seen >= max_error:
            return _none(f"even at {THRESHOLDS[start]:g} the rows err {seen:.1%} of the time: review every row of "
                         f"this segment until it improves")
        return _audit(window, days, max_error, delta, seen,
                      f"too few audits at or above {THRESHOLDS[start]:g} to show it stays under {max_error:g}",
                      band=start)
    below = window.reviewed[:passed].sum() + window.auto[:, :passed].sum()
    per_day = float(below) / days
    checked = int(reviewed[passed] + audited[:, passed].sum())
    threshold = float(THRESHOLDS[passed])
    change = per_day - reviews_now
    return Proposal(threshold=threshold, upper_bound=float(bound[passed]), checked=checked, reviews_per_day=per_day,
                    change_in_reviews_per_day=change, reviewers_now=None, reviewers_needed=None, audit_rate=None,
                    audit_days=None, reason=f"auto-accept only at confidence {threshold:g} or more: "
                                        f"{abs(change):,.0f} {'more' if change >= 0 else 'fewer'} reviews a day")


def _ht_errors(window: Tally, band: int) -> float:
    """The auto-accepted rows at or above ``band`` that are wrong, estimated by Horvitz-Thompson."""
    seen = window.rates > 0
    return float(np.sum(window.audit_errors[seen, band:-1].sum(axis=1) / window.rates[seen]))


def _none(reason: str) -> Proposal:
    return Proposal(threshold=None, upper_bound=None, checked=0, reviews_per_day=None, change_in_reviews_per_day=None,
                    reviewers_now=None, reviewers_needed=None, audit_rate=None, audit_days=None, reason=reason)


def _audit(window: Tally, days: int, max_error: float, delta: float, estimate: float | None, why: str, *,
           band: int = 0) -> Proposal:
    """An audit of the auto-accepted rows at or above ``band`` that would settle it, at the error rate seen there:
    its rate over :data:`SETTLE_DAYS` days (longer at rate 1 if need be)."""
    needed = audits_to_settle(estimate or 0.0, max_error=max_error, delta=delta)
    per_day = float(window.auto[:, band:-1].sum() if band else window.auto_accepted) / days
    which = f" at confidence {THRESHOLDS[band]:g} or more" if band else ""
    if needed is None:
        seen = estimate or 0.0
        where = "not under" if seen >= max_error else "so close to"
        return _none(f"{why}; its error rate so far, {seen:.1%}, is {where} {max_error:g}: review every row of this "
                     f"segment until it improves")
    if per_day <= 0:
        return _none(f"{why}; it auto-accepts nothing, so there is nothing to audit")
    rate = min(needed / (SETTLE_DAYS * per_day), 1.0)
    audit_days = SETTLE_DAYS if rate < 1.0 else math.ceil(needed / per_day)
    checked = int(window.reviewed.sum() + window.audited.sum())
    return Proposal(threshold=None, upper_bound=None, checked=checked, reviews_per_day=None,
                    change_in_reviews_per_day=None, reviewers_now=None, reviewers_needed=None, audit_rate=rate,
                    audit_days=audit_days, reason=f"{why}: audit {rate:.1%} of its auto-accepted rows{which} for "
                                                  f"{audit_days} days (about {needed:,} audits) to settle it")


def with_reviewers(proposal: Proposal, model: OperationModel, volume: DayVolume) -> Proposal:
    """The proposal with the reviewers its extra reviews take at the busiest hour (the scenario's queue model).

    Each extra review is counted as opening a document of its own (an upper bound: some fall in documents
    opened anyway); the queue model (:class:`~rpa_sim.operate.queue.summary.OperationModel`) sizes the team
    for the scenario's arrivals, handling times and service level.
    """
    from dataclasses import replace  # noqa: PLC0415

    from rpa_sim.operate.queue.summary import Workload  # noqa: PLC0415

    change = proposal.change_in_reviews_per_day
    if change is None or change <= 0 or volume.documents == 0:
        return proposal
    now = Workload(opened=float(volume.opened), reviewed=float(volume.reviewed), documents=volume.documents)
    later = Workload(opened=min(float(volume.documents), volume.opened + change), reviewed=volume.reviewed + change,
                     documents=volume.documents)
    return replace(proposal, reviewers_now=max(model.scheduled_needed(now), default=0),
                   reviewers_needed=max(model.scheduled_needed(later), default=0))
