"""Phrases several parts of the page share, so that they say a thing the same way: the currency and the basis
of cost totals, and why a policy's quality can end above reviewing everything.

Each reads the typed summary (:class:`rpa_sim.study.result.StudySummary`) and computes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rpa_sim.common.formatting import number
from rpa_sim.study.recommend import TOLERANCE
from rpa_sim.study.result import VqaData

if TYPE_CHECKING:
    from rpa_sim.route.policies import Policy
    from rpa_sim.route.reviewer import Reviewer
    from rpa_sim.study.result import CostOptimum, PolicyResult, StudySummary

__all__ = ["currency_of", "cost_optimum", "unit_suffix", "cost_basis", "basis_text",
           "why_above_review_all", "shown_above"]


def currency_of(summary: StudySummary) -> str | None:
    """The scenario's currency; None without costs or without a named currency."""
    return None if summary.costs is None else summary.costs.currency


def cost_optimum(policy: PolicyResult) -> CostOptimum:
    """The policy's cheapest threshold swept; a summary has one for every policy exactly when it has costs.

    Raises
    ------
    ValueError
        When the policy has none (the summary has no costs).
    """
    if policy.cost_optimum is None:
        raise ValueError(f"policy {policy.policy!r} has no cost optimum: the study set no costs")
    return policy.cost_optimum


def unit_suffix(currency: str | None) -> str:
    """A column or axis label's unit suffix: `` (EUR)``, nothing without a currency.

    >>> unit_suffix("EUR"), unit_suffix(None)
    (' (EUR)', '')
    """
    return "" if currency is None else f" ({currency})"


def cost_basis(summary: StudySummary) -> tuple[str, int, float | None]:
    """What cost totals are for: the data's unit, how many of them, and the volume per day when known."""
    data = summary.data
    unit, size = ("questions", data.questions) if isinstance(data, VqaData) else ("documents", data.documents)
    return unit, size, None if summary.costs is None else summary.costs.volume_per_day


def basis_text(summary: StudySummary) -> str:
    """The basis of a cost total in words, e.g. ``for the 2,000 documents of the data``."""
    unit, size, _ = cost_basis(summary)
    return f"for the {size:,} {unit} of the data"


def why_above_review_all(policy: Policy, reviewer: Reviewer) -> str:
    """Why a policy's quality can exceed reviewing every prediction: the two mechanisms the replay models
    (empty when neither applies, and then it cannot)."""
    reasons = []
    if policy.fix_additions:
        reasons.append("it reviews whole documents and adds the fields the model missed, which checking each "
                       "prediction cannot")
    broken = reviewer.false_correction_rate
    if broken > 0:
        reasons.append(f"it leaves confident predictions alone, which the reviewer would break at rate "
                       f"{number(broken)}")
    return ", and because ".join(reasons)


def shown_above(value: float, other: float) -> bool:
    """Whether ``value`` is above ``other`` as the report prints them (a gap below the last decimal is not
    worth a note that would read "0.9593 against 0.9593").

    >>> shown_above(0.95931, 0.95929), shown_above(0.9594, 0.9593)
    (False, True)
    """
    return value > other + TOLERANCE and number(value) != number(other)
