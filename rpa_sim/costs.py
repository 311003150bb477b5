"""What reviews and residual errors cost."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rpa_sim.reviewer import Reviewer

__all__ = ["CostModel"]

_Money = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


class CostModel(BaseModel):
    """Costs in one currency: per review, per reviewed document, per rejected item and document, per error left.

    An error left in the output is a residual error as ``docs/errors.md`` defines it (KIE:
    substitutions, deletions and additions; VQA: questions whose ANLS is below 0.5).

    A review's price is ``per_review`` when given, else the reviewer's
    ``seconds_per_item`` at ``hourly_rate``; likewise a document's price is
    ``per_document`` or ``seconds_per_document`` at ``hourly_rate``. An item a
    policy rejects (``reject_if``) costs ``per_rejected``, and each document with a
    rejected item ``per_rejected_document`` (for VQA each question is its own
    document); both are 0 unless given, as re-keying is often priced elsewhere.

    ``currency`` names the unit of every amount (``EUR``, ``USD``, ``€``) for
    display only: nothing is converted, and without it amounts are plain
    numbers. Totals are for the scenario's data (its documents; for VQA its
    questions); ``volume_per_day``, when given, is how many documents (VQA:
    questions) a day the pipeline handles, so that totals can also be shown
    per day (a total times ``volume_per_day`` over the data's size).

    Examples
    --------
    >>> costs = CostModel(hourly_rate=36.0, per_residual_error=5.0)
    >>> costs.review_price(Reviewer(seconds_per_item=10))
    0.1
    >>> CostModel(hourly_rate=28.0, currency="EUR").currency
    'EUR'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    per_review: _Money | None = None
    per_document: _Money | None = None
    hourly_rate: _Money | None = None
    per_residual_error: _Money = 0.0
    per_rejected: _Money = 0.0
    per_rejected_document: _Money = 0.0
    currency: Annotated[str, Field(min_length=1, max_length=12, pattern=r"^\S+$")] | None = None
    volume_per_day: Annotated[float, Field(gt=0.0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _something_to_price(self) -> CostModel:
        if self.per_review is None and self.hourly_rate is None and self.per_document is None \
                and self.per_residual_error == 0.0 and self.per_rejected == 0.0 and self.per_rejected_document == 0.0:
            raise ValueError("a cost model needs per_review, per_document, hourly_rate, per_residual_error, "
                             "per_rejected or per_rejected_document")
        return self

    def review_price(self, reviewer: Reviewer) -> float:
        """The price of reviewing one prediction."""
        if self.per_review is not None:
            return self.per_review
        return (self.hourly_rate or 0.0) * reviewer.seconds_per_item / 3600.0

    def document_price(self, reviewer: Reviewer) -> float:
        """The price of opening one document for review."""
        if self.per_document is not None:
            return self.per_document
        return (self.hourly_rate or 0.0) * reviewer.seconds_per_document / 3600.0
