"""What reviews and residual errors cost."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, model_validator

from rpa_sim.common.errors import InputError
from rpa_sim.common.typedjson import left_out, present_when
from rpa_sim.common.validation import StrictModel
from rpa_sim.records.signal_names import check_signal_names
from rpa_sim.route.reviewer import Reviewer

__all__ = ["CostModel", "CostBasis", "CostBreakdown", "CostSplit"]

_Money = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


@dataclass(frozen=True)
class CostBasis:
    """What a point's cost prices: counts at one threshold (floats) or at each of several (arrays).

    ``reviewed`` items and ``opened`` documents (VQA: questions) in review,
    ``residual_errors`` left in the output, ``rejected`` items and
    ``rejected_documents`` (those holding a rejected item), and the ``values``
    for which the named ``signals`` a policy routes on are computed (every
    value, whatever the threshold). Expectations, hence floats.
    """

    reviewed: Any
    opened: Any
    residual_errors: Any
    rejected: Any = 0.0
    rejected_documents: Any = 0.0
    values: Any = 0.0
    signals: tuple[str, ...] = ()

    def at(self, index: int) -> CostBasis:
        """The counts at one threshold of an array basis."""
        shape = np.shape(self.reviewed)
        counts: dict[str, Any] = {name: float(np.broadcast_to(getattr(self, name), shape)[index])
                                  for name in self._counts()}
        return replace(self, **counts)

    def scaled(self, factor: float) -> CostBasis:
        """Every count times ``factor`` (e.g. the data's counts as counts per day)."""
        counts: dict[str, Any] = {name: getattr(self, name) * factor for name in self._counts()}
        return replace(self, **counts)

    def _counts(self) -> list[str]:
        return [f.name for f in fields(self) if f.name != "signals"]


@dataclass(frozen=True)
class CostBreakdown:
    """A cost split by kind: floats for one point, arrays for a curve; :meth:`CostModel.breakdown` makes it.

    ``review_items`` and ``review_documents`` are review labour (each
    reviewed item, each opened document); ``staffing`` the rostered
    reviewers that replace review time priced by the hour (0 without an
    operation); ``errors`` the residual errors; ``rejected_items`` and
    ``rejected_documents`` what rejection costs; ``signals`` what computing
    the named signals the policy routes on costs (0 unless the cost model
    prices them); ``total`` their sum (to rounding: it is computed as
    earlier versions did, so totals keep their last digits); ``currency``
    the unit, for display.
    """

    review_items: Any
    review_documents: Any
    staffing: Any
    errors: Any
    rejected_items: Any
    rejected_documents: Any
    total: Any
    currency: str | None = None
    signals: Any = 0.0

    @property
    def review(self) -> Any:
        """Review labour: items and documents."""
        return self.review_items + self.review_documents

    @property
    def rejected(self) -> Any:
        """What rejection costs: items and documents."""
        return self.rejected_items + self.rejected_documents

    def at(self, index: int) -> CostBreakdown:
        """The breakdown at one threshold of a curve's breakdown."""
        shape = np.shape(self.total)
        amounts: dict[str, Any] = {f.name: float(np.broadcast_to(getattr(self, f.name), shape)[index])
                                   for f in fields(self) if f.name != "currency"}
        return replace(self, **amounts)

    def by_kind(self) -> dict[str, Any]:
        """``{review, staffing, errors, rejected, signals, total, currency}``: the split by kind, of floats or
        arrays (``signals`` only when the cost model prices a signal the policy routes on)."""
        priced = {"signals": self.signals} if np.any(self.signals) else {}  # only where signals are priced
        return {"review": self.review, "staffing": self.staffing, "errors": self.errors, "rejected": self.rejected,
                **priced, "total": self.total, "currency": self.currency}

    def split(self, per: Literal["day", "data"] | None = None) -> CostSplit:
        """The split by kind at one point (a breakdown of floats) as a summary reports it, ``per`` the volume
        priced when it is said."""
        return CostSplit(review=float(self.review), staffing=float(self.staffing), errors=float(self.errors),
                         rejected=float(self.rejected), total=float(self.total), currency=self.currency, per=per,
                         signals=float(self.signals) if np.any(self.signals) else None)

    def minus(self, other: CostBreakdown) -> CostBreakdown:
        """Part by part, ``self - other`` (e.g. what a point saves against a baseline, with the signs swapped)."""
        return replace(self, **{f.name: getattr(self, f.name) - getattr(other, f.name)
                                for f in fields(self) if f.name != "currency"})


@dataclass(frozen=True)
class CostSplit:
    """A point's cost split by kind, in the scenario's currency: review labour, rostered staffing, residual
    errors and rejected items, their ``total`` and the ``per`` volume priced (``"day"`` or the scenario's
    ``"data"``) where it is said. :meth:`CostBreakdown.split` makes it.

    A part is None where only the total is known (the recommended point of a summary written before
    decisions existed). A saving by kind (a policy's cost optimum against reviewing everything) has no total
    of its own, nor a currency: the cost optimum's ``savings_vs_review_all`` is its total.
    """

    review: float | None
    staffing: float | None
    errors: float | None
    rejected: float | None
    total: float | None = left_out()
    currency: str | None = present_when("total")
    per: Literal["day", "data"] | None = left_out()
    #: what computing the signals a policy routes on costs; left out when nothing prices them
    signals: float | None = left_out()


class CostModel(StrictModel):
    """Costs in one currency: per review, per reviewed document, per rejected item and document, per error left.

    An error left in the output is a residual error as ``docs/errors.md`` defines it (KIE:
    substitutions, deletions and additions; VQA: questions whose ANLS is below 0.5).

    A review's price is ``per_review`` when given, else the reviewer's
    ``seconds_per_item`` at ``hourly_rate``; likewise a document's price is
    ``per_document`` or ``seconds_per_document`` at ``hourly_rate``. An item a
    policy rejects (``reject_if``) costs ``per_rejected``, and each document with a
    rejected item ``per_rejected_document`` (for VQA each question is its own
    document); both are 0 unless given, as re-keying is often priced elsewhere.

    ``per_value_signals`` prices the named signals (docs/signals.md): what
    computing each costs per value (five more LLM calls for a k-sample
    agreement, a second OCR engine). A policy that routes on a signal pays its
    price for every value, whatever ``τ``; one on ``fused`` pays for every
    signal the fusion combines. The confidence comes with the extraction and
    is not priced.

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
    >>> parts = costs.breakdown(Reviewer(seconds_per_item=10), CostBasis(reviewed=100.0, opened=0.0,
    ...                                                                  residual_errors=3.0))
    >>> parts.review_items, parts.errors, parts.total
    (10.0, 15.0, 25.0)
    """

    per_review: _Money | None = None
    per_document: _Money | None = None
    hourly_rate: _Money | None = None
    per_residual_error: _Money = 0.0
    per_rejected: _Money = 0.0
    per_rejected_document: _Money = 0.0
    per_value_signals: dict[str, _Money] = {}
    currency: Annotated[str, Field(min_length=1, max_length=12, pattern=r"^\S+$")] | None = None
    volume_per_day: Annotated[float, Field(gt=0.0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _something_to_price(self) -> CostModel:
        if self.per_review is None and self.hourly_rate is None and self.per_document is None \
                and self.per_residual_error == 0.0 and self.per_rejected == 0.0 and self.per_rejected_document == 0.0 \
                and not any(self.per_value_signals.values()):
            raise ValueError("a cost model needs per_review, per_document, hourly_rate, per_residual_error, "
                             "per_rejected, per_rejected_document or per_value_signals")
        check_signal_names(self.per_value_signals)
        return self

    def check_signals(self, carried: Sequence[str]) -> None:
        """Refuse a price for a signal that no value carries (``carried``: the data's named signals).

        >>> CostModel(per_value_signals={"second_call": 0.01}).check_signals(("agreement",))
        Traceback (most recent call last):
        ...
        rpa_sim.common.errors.InputError: the costs price signal 'second_call' (per_value_signals), which no value \
carries (signals: 'agreement')
        """
        unknown = [name for name in self.per_value_signals if name not in carried]
        if unknown:
            known = ", ".join(repr(name) for name in carried) or "none"
            raise InputError(f"the costs price signal {unknown[0]!r} (per_value_signals), which no value carries "
                             f"(signals: {known})")

    def signal_price(self, names: Iterable[str]) -> float:
        """What computing the named signals costs per value (0 for a signal not priced).

        >>> CostModel(per_value_signals={"agreement": 0.004, "ocr": 0.001}).signal_price(["agreement", "logprob"])
        0.004
        """
        return float(sum(self.per_value_signals.get(name, 0.0) for name in names))

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

    def breakdown(self, reviewer: Reviewer, basis: CostBasis, *, staffing: Any = None) -> CostBreakdown:
        """What ``basis`` costs, part by part: the one place where a point (or a curve) is priced.

        Parameters
        ----------
        reviewer : Reviewer
            Prices review time (``seconds_per_item``, ``seconds_per_document``) at ``hourly_rate``.
        basis : CostBasis
            The counts, floats or arrays (then every part is an array).
        staffing : float or numpy.ndarray, optional
            What the rostered reviewers cost for the same volume. People on a
            roster are paid for their hours, busy or not, so review time priced
            at ``hourly_rate`` is replaced by it; fixed prices (``per_review``,
            ``per_document``) stay.

        Examples
        --------
        >>> model = CostModel(hourly_rate=36.0, per_document=1.0, per_residual_error=2.0)
        >>> basis = CostBasis(reviewed=np.array([0.0, 360.0]), opened=np.array([0.0, 10.0]),
        ...                   residual_errors=np.array([50.0, 5.0]))
        >>> model.breakdown(Reviewer(seconds_per_item=10), basis).total.tolist()
        [100.0, 56.0]
        >>> staffed = model.breakdown(Reviewer(seconds_per_item=10), basis, staffing=np.array([0.0, 40.0]))
        >>> staffed.review_items.tolist(), staffed.review_documents.tolist(), staffed.total.tolist()
        ([0.0, 0.0], [0.0, 10.0], [100.0, 60.0])
        """
        item, document = self.review_price(reviewer), self.document_price(reviewer)
        review_items = basis.reviewed * item
        review_documents = basis.opened * document
        errors = basis.residual_errors * self.per_residual_error
        rejected_items = basis.rejected * self.per_rejected
        rejected_documents = basis.rejected_documents * self.per_rejected_document
        signals = basis.values * self.signal_price(basis.signals)
        # summed in this order, as the cost column always was: totals keep their last digits (signals last)
        total = review_items + review_documents + errors + rejected_items + rejected_documents + signals
        if staffing is None:
            zero = np.zeros_like(total) if isinstance(total, np.ndarray) else 0.0
            return CostBreakdown(review_items, review_documents, zero, errors, rejected_items, rejected_documents,
                                 total, self.currency, signals)
        timed_item = 0.0 if self.per_review is not None else item
        timed_document = 0.0 if self.per_document is not None else document
        timed = timed_item * basis.reviewed + timed_document * basis.opened
        return CostBreakdown(review_items - timed_item * basis.reviewed,
                             review_documents - timed_document * basis.opened, staffing, errors, rejected_items,
                             rejected_documents, total - timed + staffing, self.currency, signals)
