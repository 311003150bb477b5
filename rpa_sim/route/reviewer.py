"""The model of the people who review routed predictions (METRICS.md §3, §6)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from rpa_sim.common.validation import StrictModel

__all__ = ["Reviewer"]

_Rate = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
_Seconds = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


class Reviewer(StrictModel):
    """A reviewer: perfect by default.

    Parameters
    ----------
    miss_rate : float, default=0
        Probability that a reviewed error stays as it was (a missed substitution
        or deletion, a wrong answer left, an addition not made).
    false_correction_rate : float, default=0
        Probability that a reviewed correct value is changed into a wrong one
        (a KIE substitution; a VQA answer whose scores become 0).
    seconds_per_item : float, default=0
        Time to review one routed prediction.
    seconds_per_document : float, default=0
        Extra time to open a document that has at least one reviewed prediction.

    Examples
    --------
    >>> Reviewer().perfect
    True
    >>> Reviewer(miss_rate=0.05, seconds_per_item=6).perfect
    False
    """

    miss_rate: _Rate = 0.0
    false_correction_rate: _Rate = 0.0
    seconds_per_item: _Seconds = 0.0
    seconds_per_document: _Seconds = 0.0

    @property
    def perfect(self) -> bool:
        """Whether the reviewer never misses an error nor breaks a correct value."""
        return self.miss_rate == 0.0 and self.false_correction_rate == 0.0
