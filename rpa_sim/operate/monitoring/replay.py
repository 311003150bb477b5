"""One production day of a policy: who reviews what, which accepted items are audited, what people find.

A curve (:mod:`rpa_sim.route.sweep`) gives expectations; a day is one concrete run
at a threshold, drawn with a seed: the audit of each auto-accepted item
(Bernoulli, at its stratum's rate), and the reviewer's misses and false
corrections on routed items. Its log (:class:`~rpa_sim.operate.monitoring.log.ProductionLog`)
holds what a team would see; the day also keeps the truth the team cannot
see, so that estimates from the log can be checked.

Routing is :meth:`Sweeper.reviewed_at <rpa_sim.route.sweep.Sweeper.reviewed_at>`
(budget and document escalation included), and what review writes is
:meth:`OutcomeTable.review_values <rpa_sim.evaluate.outcomes.OutcomeTable.review_values>`,
so replay serves any task the protocol serves; the policy's own ``audit`` share is the
audit rate unless a rate or a plan is given. Reviewed rows are labelled by
the imperfect reviewer (a missed error is recorded as correct: the reviewer
did not see it; a false correction as an error); audits are a second,
careful check and label exactly (``docs/monitoring.md``).

Examples
--------
>>> from rpa_sim.evaluate.outcomes import evaluate_kie
>>> from rpa_sim.route.policies import load_policy
>>> from rpa_sim.records.synthetic import generate_receipts
>>> table = evaluate_kie(generate_receipts(20, seed=1))
>>> replayer = Replayer(table, load_policy("confidence"), threshold=0.9, audit=0.1)
>>> day = replayer.day(seed=7)
>>> day.log.counts()["reviewed"] == int((table.confidence < 0.9).sum())
True
>>> day.auto_error == float(table.errors()[table.confidence >= 0.9].mean())
True
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from rpa_sim.evaluate.outcomes import OutcomeTable
from rpa_sim.operate.monitoring.audit_plan import AuditPlan, uniform_audit
from rpa_sim.operate.monitoring.log import AUDIT, AUTO, REVIEW, UNCHECKED, ProductionLog, object_column
from rpa_sim.route.policies import Policy
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import Sweeper, compiled_on

__all__ = ["Replayer", "ReplayedDay", "Checks", "draw_checks", "reviewed_items"]


def reviewed_items(table: OutcomeTable, policy: Policy, *, threshold: float) -> np.ndarray:
    """Whether the policy sends each row to review at ``threshold`` (budget and escalation included, audits aside).

    Examples
    --------
    >>> from rpa_sim.evaluate.outcomes import evaluate_vqa
    >>> from rpa_sim.route.policies import load_policy
    >>> from rpa_sim.records.models import VQARecord
    >>> records = [VQARecord.model_validate({"id": f"q{i}", "answers": ["1"],
    ...            "prediction": {"answer": "1", "confidence": c}}) for i, c in enumerate([0.2, 0.9, 0.5])]
    >>> reviewed_items(evaluate_vqa(records), load_policy("confidence"), threshold=0.6).tolist()
    [True, False, True]
    """
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    return Sweeper(table, policy).reviewed_at(threshold)


@dataclass(frozen=True, eq=False)
class Checks:
    """What one day's draws decide, per row: its route, what the person who looked found, and why.

    Attributes
    ----------
    route : ndarray of int8
        :data:`~rpa_sim.operate.monitoring.log.AUTO`, ``REVIEW`` or ``AUDIT``.
    correct : ndarray of int8
        1 or 0 as the reviewer reported it or the audit found it, ``UNCHECKED`` where nobody looked.
    missed, broken : ndarray of bool
        Reviewed rows whose error the reviewer missed, and right ones the reviewer broke.
    """

    route: np.ndarray
    correct: np.ndarray
    missed: np.ndarray
    broken: np.ndarray


def draw_checks(rng: np.random.Generator, *, reviewed: np.ndarray, inclusion_probability: np.ndarray,
                errors: np.ndarray, changed: np.ndarray, breakable: np.ndarray, reviewer: Reviewer) -> Checks:
    """One day's audits and reviewers' slips: three uniform draws per row, in this order: the audit, the
    reviewer's miss, the reviewer's false correction (as :meth:`Sweeper.replicate` draws them).

    Audits are a second, careful check and label exactly; a reviewer reports a missed error as
    correct and a value they broke as wrong.

    Examples
    --------
    >>> checks = draw_checks(np.random.default_rng(0), reviewed=np.array([True, False, False]),
    ...                      inclusion_probability=np.array([1.0, 1.0, 0.0]), errors=np.array([True, True, False]),
    ...                      changed=np.array([True, True, False]), breakable=np.array([False, False, True]),
    ...                      reviewer=Reviewer())
    >>> checks.route.tolist(), checks.correct.tolist()
    ([1, 2, 0], [0, 0, -1])
    """
    n = len(reviewed)
    audit_draw, miss_draw, false_draw = rng.random(n), rng.random(n), rng.random(n)
    audited = ~reviewed & (audit_draw < inclusion_probability)
    missed = reviewed & changed & (miss_draw < reviewer.miss_rate)
    broken = reviewed & breakable & (false_draw < reviewer.false_correction_rate)
    # what the reviewer reports: a missed error looks correct, a value they broke looked wrong to them
    reported = np.where(errors, missed, ~broken)
    correct = np.where(reviewed, reported, np.where(audited, ~errors, UNCHECKED)).astype(np.int8)
    route = np.where(reviewed, REVIEW, np.where(audited, AUDIT, AUTO)).astype(np.int8)
    return Checks(route, correct, missed, broken)


@dataclass(frozen=True, eq=False)
class ReplayedDay:
    """One replayed day: the log a team sees, and the truth it does not.

    Attributes
    ----------
    log : ProductionLog
    errors : ndarray of bool
        Whether each row is an error as the model gave it (``OutcomeTable.errors``).
    errors_after : ndarray of bool
        Whether each row is an error in the output: as the model gave it
        when accepted (an audit checks, it does not change the output), as
        the reviewer left it when reviewed.
    """

    log: ProductionLog
    errors: np.ndarray
    errors_after: np.ndarray

    @property
    def auto_error(self) -> float:
        """The true error rate among auto-accepted rows (NaN when none): what the estimators estimate."""
        accepted = self.log.auto_accepted
        return float(self.errors[accepted].mean()) if accepted.any() else math.nan

    @property
    def quality(self) -> float:
        """The true share of rows that are right in the output (NaN for an empty log)."""
        return float(1.0 - self.errors_after.mean()) if len(self.errors_after) else math.nan


class Replayer:
    """A policy at one threshold on an outcome table, with its audit: ready to replay production days.

    Parameters
    ----------
    table : OutcomeTable
    policy : Policy
    threshold : float
        The policy's ``τ``: an item is routed when ``τ`` is above its entry threshold.
    audit : float or AuditPlan, optional
        The audit rate of every auto-accepted item, or a plan of per-stratum
        rates; by default the policy's ``audit`` share.
    """

    def __init__(self, table: OutcomeTable, policy: Policy, *, threshold: float,
                 audit: float | AuditPlan | None = None) -> None:
        self.table, self.policy, self.threshold = table, policy, threshold
        self.plan = audit if isinstance(audit, AuditPlan) else uniform_audit(policy.audit if audit is None else audit)
        self._route(reviewed_items(table, policy, threshold=threshold), table.confidence)
        self.keys = object_column(np.asarray(table.field_names, dtype=object)[table.field_codes].tolist())
        # the records' document types ("" where a record has none), left out when no record has one
        types = np.asarray([name or None for name in table.document_types], dtype=object)
        self.document_type = (object_column(types[table.document_type_codes].tolist())
                              if any(name for name in table.document_types) else None)
        self.errors = table.errors()
        review = table.review_values()
        self.ids, self._values = object_column(review.ids.tolist()), object_column(review.values.tolist())
        self._corrections = object_column(review.corrections.tolist())
        self.changed, self.breakable = review.changed, review.breakable

    def _route(self, reviewed: np.ndarray, confidence: np.ndarray) -> None:
        """Who reviews what, each row's audit rate and stratum, at these confidences."""
        self.reviewed = reviewed
        rates, strata = self.plan.assign(confidence=confidence, fields=self.table.field_codes,
                                         field_names=self.table.field_names)
        self.inclusion_probability = np.where(reviewed, 1.0, rates)
        strata[reviewed] = None
        self.stratum = strata
        self.confidence = confidence

    def with_confidence(self, confidence: np.ndarray) -> Replayer:
        """The same replayer where the model's confidences are ``confidence``: routed and audited anew.

        A stream's changes move confidences (:mod:`rpa_sim.operate.stream`); everything else (the
        rows, their errors, what review writes) is shared. The routing is the policy's entry
        threshold against ``τ``, which is the sweep's routing for a policy without a budget.

        Raises
        ------
        ValueError
            For a policy with a review budget (it caps reviews over the whole table at once).
        """
        if self.policy.budget is not None:
            raise ValueError(f"policy {self.policy.name!r} has a review budget, which routes the table as a whole")
        moved = copy.copy(self)
        moved._route(compiled_on(self.policy, self.table, confidence=confidence).routed(self.threshold), confidence)
        return moved

    def __len__(self) -> int:
        return len(self.reviewed)

    def day(self, *, seed: int, reviewer: Reviewer | None = None, date: str | None = None) -> ReplayedDay:
        """One day drawn with ``numpy.random.default_rng(seed)``: the same seed gives the same day.

        Three uniform draws per row, in this order: the audit, the reviewer's
        miss, the reviewer's false correction (as :meth:`Sweeper.replicate` draws them).
        With ``date`` (``YYYY-MM-DD``) every row carries it as its ``day``.
        """
        checks = draw_checks(np.random.default_rng(seed), reviewed=self.reviewed,
                             inclusion_probability=self.inclusion_probability, errors=self.errors,
                             changed=self.changed, breakable=self.breakable, reviewer=reviewer or Reviewer())
        n = len(self)
        reviewed, errors = self.reviewed, self.errors
        fixed = reviewed & self.changed & ~checks.missed
        corrected = np.full(n, None, dtype=object)
        corrected[fixed] = self._corrections[fixed]
        log = ProductionLog(route=checks.route, inclusion_probability=self.inclusion_probability,
                            correct=checks.correct, confidence=self.confidence, stratum=self.stratum, id=self.ids,
                            key=self.keys, value=self._values, corrected_value=corrected,
                            document_type=self.document_type, day=None if date is None else object_column([date] * n))
        errors_after = np.where(reviewed, (errors & checks.missed) | checks.broken, errors)
        return ReplayedDay(log, errors, errors_after)
