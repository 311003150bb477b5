"""The one base of every settings model a user writes: policies, scenarios, generators, costs, the review team.

A setting a user misspells must not be silently dropped, and settings read once
must not change under the code that reads them: :class:`StrictModel` refuses
unknown keys and freezes its instances. Records are not settings: their models
(:mod:`rpa_sim.records.models`) ignore unknown fields, as the record formats
allow documented additions.

Examples
--------
>>> class Rates(StrictModel):
...     miss_rate: float = 0.0
>>> Rates(miss_rate=0.1).miss_rate
0.1
>>> Rates(miss_rat=0.1)
Traceback (most recent call last):
...
pydantic_core._pydantic_core.ValidationError: 1 validation error for Rates
miss_rat
  Extra inputs are not permitted ...
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["StrictModel"]


class StrictModel(BaseModel):
    """A pydantic model that refuses unknown keys and cannot be changed once built."""

    model_config = ConfigDict(extra="forbid", frozen=True)
