"""Optimised per-field policies: one threshold per field, automating most while meeting a target.

A target on the post-correction metric is a linear budget on per-item costs
(derivation in ``docs/optimize.md``); :func:`rpa_sim.optimize.optimise_thresholds`
picks the thresholds, and the result is returned as an ordinary per-field
policy, so that the sweep engine measures it like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rpa_sim.optimize import PerFieldThresholds, optimise_thresholds
from rpa_sim.outcomes import KIEOutcomes, VQAOutcomes
from rpa_sim.policies import Policy
from rpa_sim.reviewer import Reviewer

__all__ = ["OptimisedPolicy", "target_costs", "optimised_policy"]


def target_costs(table: KIEOutcomes | VQAOutcomes, target: float, reviewer: Reviewer
                 ) -> tuple[np.ndarray, np.ndarray, float]:
    """Per-item costs when accepted and when reviewed, and the budget that meeting ``target`` allows.

    KIE: KIEval_Aligned^τ >= target; VQA: post-correction mean ANLS >= target
    (both in expectation over the reviewer's misses and false corrections).
    """
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target must be in (0, 1], got {target!r}")
    m, f = reviewer.miss_rate, reviewer.false_correction_rate
    if isinstance(table, KIEOutcomes):
        outcome = table.outcome
        accepted = np.where(outcome == 0, 0.0, 1.0)
        reviewed = np.select([outcome == 0, outcome == 1], [f, m], default=m + (1 - target) * (1 - m))
        additions = table.counts.additions
        return accepted, reviewed, (1 - target) * (len(table) + additions) - additions
    score = table.anls
    accepted = 1.0 - score
    reviewed = np.where(score == 1.0, f, m * (1.0 - score))
    return accepted, reviewed, len(table) * (1 - target)


@dataclass(frozen=True)
class OptimisedPolicy:
    """The optimiser's answer for one target, and the same thresholds as a policy."""

    target: float
    policy: Policy
    result: PerFieldThresholds

    def thresholds(self) -> dict[str, float | None]:
        """Per field, the threshold below which it is reviewed (None: the whole field is reviewed)."""
        return {key: None if np.isinf(value) else float(value) for key, value in self.result.thresholds.items()}


def optimised_policy(table: KIEOutcomes | VQAOutcomes, target: float, *,
                     reviewer: Reviewer | None = None) -> OptimisedPolicy:
    """Per-field thresholds maximising auto-rate subject to the post-correction metric reaching ``target``.

    Fields are KIE keys or VQA question types. Entity review never adds what the
    model missed, so a KIE target above what reviewing everything reaches is
    infeasible (``result.feasible`` False).
    """
    reviewer = reviewer or Reviewer()
    if isinstance(table, KIEOutcomes):
        names, codes = table.keys, table.key
    else:
        names, codes = table.question_types, table.question_type
    keys = np.array(names, dtype=object)[codes] if len(names) else np.array([], dtype=object)
    accepted, reviewed, budget = target_costs(table, target, reviewer)
    result = optimise_thresholds(keys, table.confidence, accepted, reviewed, budget=budget)
    policy = Policy.model_validate({
        "name": f"per-field-optimised@{target:g}",
        "description": f"Per-field thresholds fitted to reach {target:g} with the most automation.",
        "review_if": {"confidence": {"below": "sweep", "fields": dict(result.thresholds)}},
    })
    return OptimisedPolicy(target, policy, result)
