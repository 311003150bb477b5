"""The audit plan file: per-stratum audit rates of auto-accepted items (YAML, ``docs/monitoring.md``).

A stratum is a confidence band, a set of fields (KIE keys, VQA question
types), or both; an auto-accepted item belongs to the first stratum it fits,
and items that fit none are audited at ``rest_rate``. ``rpa-sim plan-audit``
writes plans (:mod:`rpa_sim.operate.monitoring.planning`); ``rpa-sim replay
--audit-plan`` reads them.

Examples
--------
>>> plan = AuditPlan.model_validate({"strata": [
...     {"confidence": {"below": 0.9}, "rate": 0.2},
...     {"fields": ["total"], "rate": 0.1}], "rest_rate": 0.01})
>>> rates, strata = plan.assign(confidence=np.array([0.5, 0.95, 0.95]), fields=np.array([1, 1, 0]),
...                             field_names=("date", "total"))
>>> rates.tolist(), strata.tolist()
([0.2, 0.1, 0.01], ['confidence [0, 0.9)', 'fields total', 'rest'])
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field, model_validator

from rpa_sim.common.errors import InputError
from rpa_sim.common.validation import StrictModel
from rpa_sim.common.yamlfile import read_yaml, validated

__all__ = ["ConfidenceBand", "AuditStratum", "AuditPlan", "REST", "load_audit_plan", "uniform_audit"]

#: The name of the stratum of the items no stratum of a plan takes.
REST = "rest"
_Rate = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class ConfidenceBand(StrictModel):
    """Confidences ``at_least <= c < below``; no ``below`` takes everything from ``at_least`` up (1 included)."""

    at_least: _Rate = 0.0
    below: Annotated[float, Field(gt=0.0, allow_inf_nan=False)] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> ConfidenceBand:
        if self.below is not None and self.below <= self.at_least:
            raise ValueError(f"a band's below ({self.below!r}) must be above its at_least ({self.at_least!r})")
        return self

    def contains(self, confidence: np.ndarray) -> np.ndarray:
        inside = confidence >= self.at_least
        return inside if self.below is None else inside & (confidence < self.below)

    def __str__(self) -> str:
        return f"[{_short(self.at_least)}, {_short(self.below)})" if self.below is not None else \
            f"[{_short(self.at_least)}, 1]"


def _short(number: float) -> str:
    """A bound as short as it reads (``0`` for 0.0), yet exact, so that distinct bounds read differently."""
    short = f"{number:g}"
    return short if float(short) == number else repr(number)


class AuditStratum(StrictModel):
    """One stratum: the items in its band and fields (each optional), audited at ``rate``.

    ``planned`` holds what ``plan-audit`` computed for it (sizes, prior
    error, audits); it is information for people and changes nothing.
    """

    name: str | None = Field(default=None, min_length=1)
    confidence: ConfidenceBand | None = None
    fields: list[str] | None = Field(default=None, min_length=1)
    rate: _Rate
    planned: dict[str, Any] | None = None

    def label(self, position: int) -> str:
        """The stratum's name: as given, else from its definition."""
        if self.name is not None:
            return self.name
        parts = []
        if self.confidence is not None:
            parts.append(f"confidence {self.confidence}")
        if self.fields is not None:
            parts.append(f"fields {', '.join(self.fields)}")
        return "; ".join(parts) or f"stratum {position + 1}"


class AuditPlan(StrictModel):
    """Per-stratum audit rates of auto-accepted items (one YAML file)."""

    strata: list[AuditStratum] = Field(min_length=1)
    rest_rate: _Rate = 0.0
    planned: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _distinct_names(self) -> AuditPlan:
        labels = [stratum.label(i) for i, stratum in enumerate(self.strata)]
        repeated = sorted({label for label in labels if labels.count(label) > 1} | ({REST} & set(labels)))
        if repeated:
            raise ValueError(f"strata need distinct names other than {REST!r}, got {', '.join(map(repr, repeated))} "
                             f"more than once or reserved")
        return self

    def assign(self, *, confidence: np.ndarray, fields: np.ndarray,
               field_names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Each item's audit rate and stratum name (the first stratum it fits, else :data:`REST`).

        Raises
        ------
        InputError
            When a stratum names a field that no item has.
        """
        rates = np.full(len(confidence), self.rest_rate)
        strata = np.full(len(confidence), REST, dtype=object)
        free = np.ones(len(confidence), dtype=bool)
        for position, stratum in enumerate(self.strata):
            mine = free.copy()
            if stratum.confidence is not None:
                mine &= stratum.confidence.contains(confidence)
            if stratum.fields is not None:
                unknown = [name for name in stratum.fields if name not in field_names]
                if unknown:
                    raise InputError(f"audit plan stratum {stratum.label(position)!r} names "
                                     f"{', '.join(map(repr, unknown))}, which no item has (fields: "
                                     f"{', '.join(field_names) or 'none'})")
                mine &= np.isin(fields, [field_names.index(name) for name in stratum.fields])
            rates[mine] = stratum.rate
            strata[mine] = stratum.label(position)
            free &= ~mine
        return rates, strata


def uniform_audit(rate: float) -> AuditPlan:
    """The plan that audits every auto-accepted item at ``rate``: one stratum, ``all``.

    >>> uniform_audit(0.05).strata[0].label(0)
    'all'
    """
    return AuditPlan(strata=[AuditStratum(name="all", rate=rate)])


def load_audit_plan(path: str | os.PathLike[str]) -> AuditPlan:
    """An audit plan from its YAML file; problems name the file, the line and the setting."""
    path = Path(path)
    return validated(AuditPlan, read_yaml(path), source=str(path))
