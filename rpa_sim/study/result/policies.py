"""The result's policies: per policy its curve figures, operating points, cost optimum, certification and spread;
per target the optimized per-field thresholds.

The points are the sweep's own :class:`~rpa_sim.route.compare.OperatingPoint`,
the cost splits :class:`~rpa_sim.route.costs.CostSplit`, the certifications
:class:`~rpa_sim.route.certify.CertifiedThreshold` (or
:class:`~rpa_sim.route.certify.NotCertifiable`): what this module adds is what
the study composes of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.typedjson import FrozenMap, joined, left_out, present_when
from rpa_sim.route.certify import CertifiedThreshold, NotCertifiable
from rpa_sim.route.compare import OperatingPoint
from rpa_sim.route.costs import CostSplit

__all__ = ["CostOptimum", "MonteCarlo", "PolicyResult", "OptimizedThresholds"]


@dataclass(frozen=True)
class CostOptimum(OperatingPoint):
    """A policy's cheapest threshold on the swept grid, and what it saves against the baselines: in all, in
    reviews and by kind of cost (a split without total).

    ``edge_of_range`` says that it lies at the lowest or highest τ swept: a wider range might hold a cheaper one.
    """

    savings_vs_review_all: float | None
    savings_vs_review_none: float | None
    breakdown: CostSplit | None = left_out()
    reviews_saved: float | None = left_out()
    savings_by_kind: CostSplit | None = left_out()
    edge_of_range: bool | None = left_out()


#: The statistics of a Monte Carlo spread, in the order of its keys.
_STATISTICS = ("mean", "std", "low", "high")


@dataclass(frozen=True)
class MonteCarlo:
    """Seeded replays at a policy's chosen thresholds: per threshold, the mean, standard deviation and
    5% and 95% quantiles of the metric and of the auto-rate.

    In JSON the metric's keys carry its name (``mean_kieval_aligned``); ``metric`` is that name.
    """

    replicates: int
    seed: int
    thresholds: tuple[float, ...]
    metric: str
    mean_metric: tuple[float | None, ...]
    mean_auto_rate: tuple[float | None, ...]
    std_metric: tuple[float | None, ...]
    std_auto_rate: tuple[float | None, ...]
    low_metric: tuple[float | None, ...]
    low_auto_rate: tuple[float | None, ...]
    high_metric: tuple[float | None, ...]
    high_auto_rate: tuple[float | None, ...]

    @classmethod
    def _json_in(cls, value: dict[str, Any], path: str) -> dict[str, Any]:
        if "metric" in value:
            raise InputError("unknown key", field=joined(path, "metric"))
        names = [key[len("mean_"):] for key in value if key.startswith("mean_") and key != "mean_auto_rate"]
        if len(names) != 1:
            raise InputError(f"expected one mean_<metric> key besides mean_auto_rate, got {shown(names)}",
                             field=path)
        (metric,) = names
        renamed = {f"{statistic}_{metric}": f"{statistic}_metric" for statistic in _STATISTICS}
        return {**{renamed.get(key, key): item for key, item in value.items()}, "metric": metric}

    def _json_out(self, value: dict[str, Any]) -> dict[str, Any]:
        renamed = {f"{statistic}_metric": f"{statistic}_{self.metric}" for statistic in _STATISTICS}
        return {renamed.get(key, key): item for key, item in value.items() if key != "metric"}


@dataclass(frozen=True)
class PolicyResult:
    """One policy of the study: its curve's summary figures and operating points.

    ``operating_points`` maps each target (written ``f"{target:g}"``) to the
    threshold that automates most while reaching it, None when none does.
    """

    policy: str
    description: str
    knob: str
    auc: float | None
    auto_rate_range: tuple[float | None, float | None]
    operating_points: FrozenMap[OperatingPoint | None]
    cost_optimum: CostOptimum | None
    certified: CertifiedThreshold | NotCertifiable | None
    dominated_by: tuple[str, ...]
    rejected: int | None = left_out()
    monte_carlo: MonteCarlo | None = left_out()


@dataclass(frozen=True)
class OptimizedThresholds:
    """Per-field thresholds (or per document type and field) that automate most while reaching one target.

    ``thresholds`` maps a field (or a document type, to its fields) to the
    confidence below which it is reviewed, None when it is always reviewed.
    It, ``auto_rate``, ``metric`` and ``cost`` are present when ``feasible``.
    """

    feasible: bool
    optimal: bool
    best_single_threshold: OperatingPoint | None
    thresholds: FrozenMap[float | FrozenMap[float | None] | None] | None = present_when("feasible")
    auto_rate: float | None = present_when("feasible")
    metric: float | None = present_when("feasible")
    cost: float | None = present_when("feasible")
