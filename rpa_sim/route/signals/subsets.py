"""The cheapest set of signals whose fused score certifies the error rate at a target automation.

Every non-empty subset of the signals is scored (a single signal by itself, two
or more by their cross-fitted fused signal, :mod:`rpa_sim.route.signals.fusion`),
certified exactly as ``rpa-sim certify`` certifies a confidence, and priced at
the sum of its signals' costs per value. The search is exhaustive, so the
answer is the cheapest, not a greedy guess; ``2^k - 1`` subsets bound it to
:data:`MOST_SIGNALS` signals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rpa_sim.common.progress import stage
from rpa_sim.route.signals.analysis import Certification, automation_of, certified_automation
from rpa_sim.route.signals.columns import signal_columns
from rpa_sim.route.signals.discrimination import discrimination
from rpa_sim.route.signals.fusion import FOLDS, cross_fitted

__all__ = ["MOST_SIGNALS", "SubsetResult", "SubsetSearch", "search_subsets", "check_costs"]

#: The subset search visits ``2^k - 1`` subsets: at most this many signals.
MOST_SIGNALS = 10


@dataclass(frozen=True)
class SubsetResult:
    """One subset of signals, scored and certified.

    Attributes
    ----------
    signals : tuple of str
    cost : float
        The sum of its signals' costs per value.
    auroc : float
        Of its score (the signal itself, or the fused signal), on the values that have one.
    threshold : float or None
        The certified threshold of its score; None when nothing is certified.
    automation : float
        The certified automation (:func:`~rpa_sim.route.signals.analysis.automation_of`).
    meets : bool or None
        Whether the automation reaches the target; None without a target.
    """

    signals: tuple[str, ...]
    cost: float
    auroc: float
    threshold: float | None
    automation: float
    meets: bool | None

    def to_dict(self) -> dict[str, Any]:
        """The row of ``rpa-sim signals``'s subset table."""
        return {"signals": "+".join(self.signals), "size": len(self.signals), "cost": self.cost,
                "auroc": None if math.isnan(self.auroc) else self.auroc, "threshold": self.threshold,
                "certified_automation": self.automation, "meets_target": self.meets}


@dataclass(frozen=True)
class SubsetSearch:
    """Every subset, cheapest first (then the higher automation, then the fewer signals), and the answer.

    Attributes
    ----------
    rows : tuple of SubsetResult
    target_auto_rate : float or None
    cheapest : SubsetResult or None
        The first row that meets the target; None when none does, or without a target.
    """

    rows: tuple[SubsetResult, ...]
    target_auto_rate: float | None
    cheapest: SubsetResult | None


def check_costs(costs: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, float]:
    """Costs per value, one for each named signal that has one; every name must be a signal and every cost a
    finite number of at least 0.

    >>> check_costs({"agreement": 0.02}, ("logprob", "agreement"))
    {'agreement': 0.02}
    >>> check_costs({"grounding": 0.01}, ("logprob", "agreement"))
    Traceback (most recent call last):
    ...
    ValueError: costs name signal 'grounding', which no value carries (signals: 'logprob', 'agreement')
    """
    checked = {}
    for name, cost in costs.items():
        if name not in names:
            known = ", ".join(repr(known) for known in names) or "none"
            raise ValueError(f"costs name signal {name!r}, which no value carries (signals: {known})")
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
            raise ValueError(f"the cost of signal {name!r} must be a number of at least 0 per value, got {cost!r}")
        checked[name] = float(cost)
    return checked


def search_subsets(signals: Mapping[str, ArrayLike], error: ArrayLike, certification: Certification, *,
                   costs: Mapping[str, float] | None = None, target_auto_rate: float | None = None,
                   groups: ArrayLike | None = None, folds: int = FOLDS) -> SubsetSearch:
    """Score, certify and price every non-empty subset of ``signals``; the cheapest that reaches the target.

    Parameters
    ----------
    signals : mapping of str to array-like of float
        At most :data:`MOST_SIGNALS`, each in ``[0, 1]`` with NaN where missing.
    error : array-like of bool
        Whether each value is an error (``docs/errors.md``).
    certification : Certification
        ``rpa-sim certify``'s settings; the cross-fitting uses its seed too.
    costs : mapping of str to float, optional
        Cost per value of each signal (:func:`check_costs`); a signal not named costs 0.
    target_auto_rate : float, optional
        The certified automation a subset must reach; without it no subset is chosen.
    groups : array-like of int, optional
        The document of each value (folds and the calibration split keep documents whole).
    folds : int, default=5

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> wrong = rng.random(3000) < 0.1
    >>> free = np.clip(np.where(wrong, 0.7, 0.75) + rng.normal(0, 0.15, 3000), 0, 1)
    >>> paid = np.clip(np.where(wrong, 0.2, 0.9) + rng.normal(0, 0.1, 3000), 0, 1)
    >>> found = search_subsets({"free": free, "paid": paid}, wrong, Certification(max_error=0.05, delta=0.1),
    ...                        costs={"paid": 0.03}, target_auto_rate=0.5, groups=np.arange(3000) // 5)
    >>> [(row.signals, row.cost, row.meets) for row in found.rows]
    [(('free',), 0.0, False), (('free', 'paid'), 0.03, True), (('paid',), 0.03, True)]
    >>> found.cheapest.signals
    ('free', 'paid')
    """
    columns = signal_columns(signals)
    names = tuple(columns)
    if len(names) > MOST_SIGNALS:
        raise ValueError(f"the cheapest set is searched over every subset of at most {MOST_SIGNALS} signals, got "
                         f"{len(names)} ({', '.join(names)}): name fewer signals in the costs")
    priced = check_costs(costs or {}, names)
    wrong = np.asarray(error, dtype=bool)
    subsets = [chosen for size in range(1, len(names) + 1) for chosen in combinations(names, size)]
    rows = []
    with stage("searching subsets of signals", total=len(subsets)) as advance:
        for chosen in subsets:
            if len(chosen) == 1:
                score = columns[chosen[0]]
            else:
                score = cross_fitted({name: columns[name] for name in chosen}, wrong, groups=groups, folds=folds,
                                     seed=certification.seed)
            rows.append(_scored(chosen, score, wrong, certification, groups, priced, target_auto_rate))
            advance(1)
    rows.sort(key=lambda row: (row.cost, -row.automation, len(row.signals)))
    cheapest = next((row for row in rows if row.meets), None)
    return SubsetSearch(rows=tuple(rows), target_auto_rate=target_auto_rate, cheapest=cheapest)


def _scored(chosen: tuple[str, ...], score: np.ndarray, wrong: np.ndarray, certification: Certification,
            groups: ArrayLike | None, costs: Mapping[str, float], target: float | None) -> SubsetResult:
    carried = ~np.isnan(score)
    if not carried.any():  # too few documents to cross-fit: nothing is certified
        return SubsetResult(signals=chosen, cost=sum(costs.get(name, 0.0) for name in chosen), auroc=math.nan,
                            threshold=None, automation=0.0, meets=None if target is None else False)
    certified = certified_automation(score, wrong, certification, groups=groups)
    automation = automation_of(certified)
    return SubsetResult(signals=chosen, cost=sum(costs.get(name, 0.0) for name in chosen),
                        auroc=discrimination(score[carried], wrong[carried]).auroc, threshold=certified.threshold,
                        automation=automation, meets=None if target is None else automation >= target)
