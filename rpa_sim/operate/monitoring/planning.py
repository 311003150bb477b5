"""How many auto-accepted items to audit, and in which confidence bands (Neyman allocation).

The auto-accepted items of a policy at a threshold are cut into confidence
bands of equal size; each band's error rate is unknown, and the model's
confidences give its prior: the band's mean ``1 - confidence``, floored at
:data:`PRIOR_FLOOR` (a model's confidence is never taken to promise fewer
errors than that). Neyman allocation gives band ``h`` audits in proportion
to ``N_h sqrt(p_h (1 - p_h))``: the allocation that makes the stratified
estimate's variance smallest for a number of audits. The number of audits is
given (a budget), or the fewest whose normal-theory interval width at the
prior error rates (:func:`expected_width`) is at most a target. The plan also
gives the width a uniform audit of as many items would have, and the width
of the exact ``stratified`` interval (:func:`exact_width`), which its
Bonferroni split makes wider. The plan is an
:class:`~rpa_sim.operate.monitoring.audit_plan.AuditPlan` that ``rpa-sim replay
--audit-plan`` reads.

Examples
--------
>>> neyman_allocation(np.array([100, 100]), np.array([0.1, 0.3]), 40).tolist()
[10, 30]
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np

from rpa_sim.common.errors import InputError
from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.operate.monitoring.audit_plan import AuditPlan, AuditStratum, ConfidenceBand
from rpa_sim.operate.monitoring.replay import reviewed_items
from rpa_sim.route.policies import Policy

__all__ = ["PRIOR_FLOOR", "PlannedBand", "PlannedAudit", "confidence_bands", "neyman_allocation",
           "expected_width", "exact_width", "plan_audit"]

#: The smallest prior error rate of a band.
PRIOR_FLOOR = 0.01


@dataclass(frozen=True)
class PlannedBand:
    """A confidence band of the plan: its auto-accepted items, prior error rate and audits."""

    band: ConfidenceBand
    auto_accepted: int
    prior_error: float
    audits: int

    @property
    def rate(self) -> float:
        """The audit rate that gives the band its audits in expectation."""
        return self.audits / self.auto_accepted


@dataclass(frozen=True)
class PlannedAudit:
    """An audit plan and what it is expected to give.

    Attributes
    ----------
    policy : str
    threshold, confidence_level : float
    auto_accepted : int
        The auto-accepted items the plan spreads its audits over.
    bands : tuple of PlannedBand
    expected_width : float
        The normal-theory width of the stratified estimate if each band's error
        rate were its prior (:func:`expected_width`).
    uniform_width : float
        The same for a uniform audit of as many items: what the bands gain.
    exact_width : float
        The width of the exact ``stratified`` interval, likewise (:func:`exact_width`).
    cost_per_audit : float or None
    """

    policy: str
    threshold: float
    confidence_level: float
    auto_accepted: int
    bands: tuple[PlannedBand, ...]
    expected_width: float
    uniform_width: float
    exact_width: float
    cost_per_audit: float | None = None

    @property
    def audits(self) -> int:
        return sum(band.audits for band in self.bands)

    @property
    def cost(self) -> float | None:
        return None if self.cost_per_audit is None else self.audits * self.cost_per_audit

    def audit_plan(self) -> AuditPlan:
        """The plan as the model ``replay --audit-plan`` reads, with what was planned per band."""
        return AuditPlan(strata=[AuditStratum(confidence=band.band, rate=band.rate, planned={
            "auto_accepted": band.auto_accepted, "prior_error": band.prior_error, "audits": band.audits})
            for band in self.bands], planned=self.summary())

    def summary(self) -> dict:
        """The plan's figures (``plan-audit --json`` without the bands)."""
        return {"policy": self.policy, "threshold": self.threshold, "confidence_level": self.confidence_level,
                "auto_accepted": self.auto_accepted, "audits": self.audits, "expected_width": self.expected_width,
                "uniform_width": self.uniform_width, "exact_width": self.exact_width,
                "cost_per_audit": self.cost_per_audit, "cost": self.cost}

    def to_dict(self) -> dict:
        """``plan-audit --json``: the figures, and per band its bounds, size, prior, audits and rate."""
        return {**self.summary(), "bands": [
            {"band": str(band.band), "at_least": band.band.at_least, "below": band.band.below,
             "auto_accepted": band.auto_accepted,
             "prior_error": band.prior_error, "audits": band.audits, "rate": band.rate} for band in self.bands]}

    def to_yaml(self) -> str:
        """The plan file: YAML that :func:`~rpa_sim.operate.monitoring.audit_plan.load_audit_plan` reads back."""
        import yaml  # noqa: PLC0415

        body = yaml.safe_dump(self.audit_plan().model_dump(mode="json", exclude_defaults=True), sort_keys=False,
                              allow_unicode=True)
        return f"# audit plan written by rpa-sim plan-audit; rpa-sim replay --audit-plan reads it\n{body}"


def confidence_bands(confidence: np.ndarray, bands: int) -> list[ConfidenceBand]:
    """At most ``bands`` confidence bands with about as many items each, covering [0, 1].

    Edges are observed confidences (``higher`` quantiles: a band starts at its first item); tied
    confidences stay in one band, so heavy ties give fewer bands. The first
    band starts at 0 and the last takes everything up to 1.

    Examples
    --------
    >>> [str(band) for band in confidence_bands(np.array([0.2, 0.4, 0.6, 0.8]), 2)]
    ['[0, 0.6)', '[0.6, 1]']
    >>> [str(band) for band in confidence_bands(np.array([0.9, 1.0, 1.0, 1.0]), 4)]
    ['[0, 1)', '[1, 1]']
    """
    if bands < 1:
        raise ValueError(f"bands must be at least 1, got {bands!r}")
    if not len(confidence):
        return [ConfidenceBand()]
    edges = np.unique(np.quantile(confidence, np.arange(1, bands) / bands, method="higher"))
    # an edge at the smallest confidence would open an empty band below it
    edges = edges[edges > confidence.min()].tolist()
    lower = [0.0, *edges]
    return [ConfidenceBand(at_least=low, below=high) for low, high in zip(lower, [*edges, None])]


def neyman_allocation(sizes: np.ndarray, deviations: np.ndarray, total: int) -> np.ndarray:
    """``total`` audits over strata in proportion to ``size * deviation``, at most a stratum's size each.

    A stratum that would get more than its size gets its size, and the rest
    is shared again among the others. Whole audits: the largest remainders
    round up (ties: the earlier stratum). When ``total`` allows, every stratum
    gets at least one, taken from the one with the most: a stratum without
    audits would leave its error rate unbounded.

    Examples
    --------
    >>> neyman_allocation(np.array([10, 1000]), np.array([0.5, 0.01]), 50).tolist()
    [10, 40]
    >>> neyman_allocation(np.array([1000, 1000]), np.array([0.0, 0.5]), 50).tolist()
    [1, 49]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    total = min(int(total), int(sizes.sum()))
    weight = sizes * np.asarray(deviations, dtype=np.float64)
    if weight.sum() == 0:
        weight = sizes.astype(np.float64)
    share = np.zeros(len(sizes))
    full = np.zeros(len(sizes), dtype=bool)
    while True:
        free = ~full & (weight > 0)
        left = total - sizes[full].sum()
        share[free] = left * weight[free] / weight[free].sum() if free.any() else 0.0
        over = free & (share > sizes)
        if not over.any():
            break
        full |= over
        share[over] = sizes[over]
    audits = np.minimum(np.floor(share + 1e-9).astype(np.int64), sizes)
    remainder = share - audits
    for stratum in sorted(range(len(sizes)), key=lambda h: (-remainder[h], h)):
        if audits.sum() >= total:
            break
        if audits[stratum] < sizes[stratum]:
            audits[stratum] += 1
    if total >= len(sizes):
        for stratum in np.flatnonzero((audits == 0) & (sizes > 0)).tolist():
            audits[np.argmax(audits)] -= 1
            audits[stratum] = 1
    return audits


def expected_width(sizes: np.ndarray, priors: np.ndarray, audits: np.ndarray, *, confidence_level: float) -> float:
    """The normal-theory width of the stratified estimate if every band's error rate were its prior.

    ``2 z sqrt(Σ W_h² p_h (1 - p_h) / n_h (1 - n_h / N_h))`` with ``W_h = N_h / N``
    (Cochran's stratified variance, finite-population correction included):
    the variance Neyman allocation makes smallest. Infinite when a band has
    no audit; 0 when every item is audited. ``z`` is the upper ``α / 2``
    quantile, taken from the tail so that a level a hair below 1 (0.9999999999999999)
    still gives a finite ``z``.

    Examples
    --------
    One band of 100 items, 25 audits, prior 0.2: ``2 * 1.959964 * sqrt(0.16 / 25 * 0.75)``.

    >>> round(expected_width(np.array([100]), np.array([0.2]), np.array([25]), confidence_level=0.95), 6)
    0.271581
    """
    from scipy.stats import norm  # noqa: PLC0415

    sizes = np.asarray(sizes, dtype=np.float64)
    audits = np.asarray(audits, dtype=np.float64)
    priors = np.asarray(priors, dtype=np.float64)
    if np.any(audits[sizes > 0] == 0):
        return math.inf
    share = sizes / sizes.sum()
    mine = sizes > 0
    variance = np.sum(share[mine] ** 2 * priors[mine] * (1 - priors[mine]) / audits[mine]
                      * (1 - audits[mine] / sizes[mine]))
    return float(2 * norm.isf((1.0 - confidence_level) / 2) * math.sqrt(variance))


def exact_width(sizes: np.ndarray, priors: np.ndarray, audits: np.ndarray, *, confidence_level: float) -> float:
    """The width of the ``stratified`` interval (exact, Bonferroni) if every band's error rate were its prior.

    Each band's Clopper-Pearson interval at ``1 - α / H`` is taken at the
    expected error count ``audits * prior`` (beta quantiles take a
    fractional count); the widths are weighted by the bands' sizes.

    Examples
    --------
    One band, 10 audits and no error expected: the exact upper bound ``1 - (α/2)^(1/10)``.

    >>> round(exact_width(np.array([50]), np.array([0.0]), np.array([10]), confidence_level=0.95), 6)
    0.308497
    """
    from scipy.stats import beta  # noqa: PLC0415

    sizes = np.asarray(sizes, dtype=np.float64)
    audits = np.asarray(audits, dtype=np.float64)
    errors = audits * np.asarray(priors, dtype=np.float64)
    alpha = (1.0 - confidence_level) / len(sizes)
    tiny = 1e-12  # beta's shape parameters must be positive where np.where evaluates the branch not taken
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(errors > 0, beta.ppf(alpha / 2, np.maximum(errors, tiny), audits - errors + 1), 0.0)
        high = np.where(audits > errors, beta.isf(alpha / 2, errors + 1, np.maximum(audits - errors, tiny)), 1.0)
    width = np.where(audits > 0, high - low, 1.0)
    return float(np.dot(sizes / sizes.sum(), width))


def plan_audit(table: OutcomeTable, policy: Policy, *, threshold: float, target_width: float | None = None,
               budget: int | None = None, bands: int = 4, confidence_level: float = 0.95,
               cost_per_audit: float | None = None) -> PlannedAudit:
    """Plan the audit of the items ``policy`` auto-accepts at ``threshold``.

    Parameters
    ----------
    table : OutcomeTable
    policy : Policy
    threshold : float
    target_width : float, optional
        The widest interval wanted, as :func:`expected_width` computes it: the
        plan has the fewest audits that reach it. Exactly one of this and ``budget``.
    budget : int, optional
        The audits to spread, at least 1 (at most every auto-accepted item is audited).
    bands : int, default=4
        The most confidence bands: fewer with tied confidences, and at most
        ``budget``, since a band without an audit would leave the error rate
        unbounded (the expected width infinite).
    confidence_level : float, default=0.95
    cost_per_audit : float, optional
        Gives the plan a cost: a number >= 0.

    Raises
    ------
    InputError
        When the policy auto-accepts nothing at ``threshold``.
    ValueError
        For a setting out of its range, and a cost per audit that makes the
        plan's cost overflow.
    """
    if (target_width is None) == (budget is None):
        raise ValueError("give exactly one of target_width and budget")
    if target_width is not None and not 0.0 < target_width <= 1.0:
        raise ValueError(f"target_width must be in (0, 1], got {target_width!r}")
    if budget is not None and budget < 1:
        raise ValueError(f"budget must be at least 1, got {budget!r}")
    if cost_per_audit is not None and not (math.isfinite(cost_per_audit) and cost_per_audit >= 0):
        raise ValueError(f"cost_per_audit must be a finite number >= 0, got {cost_per_audit!r}")
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(f"confidence_level must be in (0, 1), got {confidence_level!r}")
    accepted = ~reviewed_items(table, policy, threshold=threshold)
    confidence = table.confidence[accepted]
    if not len(confidence):
        raise InputError(f"policy {policy.name!r} auto-accepts nothing at threshold {threshold!r}: there is nothing "
                         f"to audit")
    cut = confidence_bands(confidence, bands if budget is None else min(bands, budget))
    member = np.searchsorted([band.at_least for band in cut[1:]], confidence, side="right")
    sizes = np.bincount(member, minlength=len(cut))
    priors = np.maximum(np.bincount(member, weights=1.0 - confidence, minlength=len(cut)) / sizes, PRIOR_FLOOR)
    deviations = np.sqrt(priors * (1.0 - priors))

    def width(total: int) -> float:
        return expected_width(sizes, priors, neyman_allocation(sizes, deviations, total),
                              confidence_level=confidence_level)

    total = len(confidence)
    if budget is not None:
        total = min(budget, total)
    elif target_width is not None:  # given when budget is not (checked above)
        fewest = 0  # the width at `fewest` audits is above the target, at `total` (everything: 0) within it
        while total - fewest > 1:
            middle = (fewest + total) // 2
            fewest, total = (fewest, middle) if width(middle) <= target_width else (middle, total)
    audits = neyman_allocation(sizes, deviations, total)
    if cost_per_audit is not None and not math.isfinite(total * cost_per_audit):
        raise ValueError(f"a cost per audit of {cost_per_audit:g} makes {total:,} audits cost more than the largest "
                         f"number (about {sys.float_info.max:.2g})")
    overall = np.array([float(np.dot(sizes, priors) / sizes.sum())])
    everything = np.array([len(confidence)])
    return PlannedAudit(
        policy=policy.name, threshold=threshold, confidence_level=confidence_level, auto_accepted=len(confidence),
        bands=tuple(PlannedBand(band, int(size), float(prior), int(count))
                    for band, size, prior, count in zip(cut, sizes, priors, audits)),
        expected_width=width(total),
        uniform_width=expected_width(everything, overall, np.array([total]), confidence_level=confidence_level),
        exact_width=exact_width(sizes, priors, audits, confidence_level=confidence_level),
        cost_per_audit=cost_per_audit)
