"""Optimized per-field policies: one threshold per field, automating most while meeting a target.

A target on the post-correction metric is a linear budget on per-item costs
(derivation in ``docs/optimize.md``); :func:`rpa_sim.optimize.optimize_thresholds`
picks the thresholds, and the result is returned as an ordinary per-field
policy, so that the sweep engine measures it like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpa_sim.optimize import PerFieldThresholds, optimize_thresholds
from rpa_sim.outcomes import OutcomeTable
from rpa_sim.policies import Policy
from rpa_sim.reviewer import Reviewer

__all__ = ["OptimizedPolicy", "target_costs", "optimized_policy"]


def target_costs(table: OutcomeTable, target: float, reviewer: Reviewer) -> tuple[np.ndarray, np.ndarray, float]:
    """Per-item costs when accepted and when reviewed, and the budget that meeting ``target`` allows.

    The table's :meth:`~rpa_sim.outcomes.OutcomeTable.target_costs`: KIE,
    KIEval_Aligned^τ >= target; VQA, post-correction mean ANLS >= target, a
    budget on the ANLS shortfall ``1 - ANLS`` (both in expectation over the
    reviewer's misses and false corrections).
    """
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target must be in (0, 1], got {target!r}")
    return table.target_costs(target, miss_rate=reviewer.miss_rate,
                              false_correction_rate=reviewer.false_correction_rate)


@dataclass(frozen=True)
class OptimizedPolicy:
    """The optimizer's answer for one target, and the same thresholds as a policy."""

    target: float
    policy: Policy
    result: PerFieldThresholds

    def thresholds(self) -> dict[str, float | None]:
        """Per field, the threshold below which it is reviewed (None: the whole field is reviewed)."""
        return {key: None if np.isinf(value) else float(value) for key, value in self.result.thresholds.items()}


def optimized_policy(table: OutcomeTable, target: float, *, reviewer: Reviewer | None = None) -> OptimizedPolicy:
    """Per-field thresholds maximising auto-rate subject to the post-correction metric reaching ``target``.

    Fields are KIE keys or VQA question types. Entity review never adds what the
    model missed, so a KIE target above what reviewing everything reaches is
    infeasible (``result.feasible`` False).
    """
    reviewer = reviewer or Reviewer()
    names = table.field_names
    keys = np.array(names, dtype=object)[table.field_codes] if len(names) else np.array([], dtype=object)
    accepted, reviewed, budget = target_costs(table, target, reviewer)
    result = optimize_thresholds(keys, table.confidence, accepted, reviewed, budget=budget)
    policy = Policy.model_validate({
        "name": f"per-field-optimized@{target:g}",
        "description": f"Per-field thresholds fitted to reach {target:g} with the most automation.",
        "review_if": {"confidence": {"below": "sweep", "fields": dict(result.thresholds)}},
    })
    return OptimizedPolicy(target, policy, result)
