"""How DATA is evaluated: one value that the whole DATA path takes, from the command line to each shard.

:class:`EvaluationSettings` holds what decides the rows of an outcome table:
the task, how KIE values are compared, SMuDGE's alpha, where the routing
grounding comes from, and whether a null confidence is read. The command line
(:mod:`rpa_sim.cli.data`), a scenario and the dashboard make one;
:func:`rpa_sim.evaluate.load.load_data`, :mod:`rpa_sim.evaluate.sources`,
:mod:`rpa_sim.evaluate.local` and :mod:`rpa_sim.evaluate.cluster` pass it on as
it is (it pickles, for worker processes and Dask tasks).

Examples
--------
>>> settings = EvaluationSettings(alpha=0.5)
>>> settings.of_task("vqa").table_settings()
{'task': 'vqa', 'value_match': 'exact', 'alpha': 0.5}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from rpa_sim.evaluate.metrics.kieval_counts import ValueMatch
    from rpa_sim.evaluate.outcomes import GroundingMode

__all__ = ["Task", "EvaluationSettings", "reads_missing_confidence"]

Task = Literal["kie", "vqa"]


@dataclass(frozen=True, kw_only=True)
class EvaluationSettings:
    """What decides the rows of DATA's outcome table.

    Attributes
    ----------
    task : {"kie", "vqa"}, optional
        Inferred from the records, or read from a table, when None.
    value_match : {"exact", "normalized"}, default="exact"
        How KIE values are compared (:func:`rpa_sim.evaluate.outcomes.evaluate_kie`).
    alpha : float, default=0.25
        SMuDGE's weight of the match score, for VQA.
    grounding : {"auto", "given", "compute"}, default="auto"
        The routing grounding's source (:func:`~rpa_sim.evaluate.outcomes.evaluate_kie`):
        ``"given"`` locates nothing, for a caller whose figures do not depend on it.
    missing_confidence : bool, default=False
        Read a null confidence as unknown (NaN), for policies that all say what
        to do with one (:func:`reads_missing_confidence`); else it is a bad record.
    """

    task: Task | None = None
    value_match: ValueMatch = "exact"
    alpha: float = 0.25
    grounding: GroundingMode = "auto"
    missing_confidence: bool = False

    def of_task(self, task: Task) -> EvaluationSettings:
        """These settings for DATA of ``task`` (once it is known)."""
        return replace(self, task=task)

    def table_settings(self) -> dict[str, str | float]:
        """What an outcome table file must have been evaluated with to give these settings' rows (its task known)."""
        return {"task": str(self.task), "value_match": self.value_match, "alpha": self.alpha}


class _RoutingPolicy(Protocol):
    """What the DATA path asks of a policy: what it does with a prediction without a confidence."""

    @property
    def missing_confidence(self) -> object: ...


def reads_missing_confidence(policies: Sequence[_RoutingPolicy]) -> bool:
    """Whether DATA for ``policies`` may hold a null confidence: only when there are some and every one says
    what to do with it (``missing_confidence``)."""
    return bool(policies) and all(policy.missing_confidence is not None for policy in policies)
