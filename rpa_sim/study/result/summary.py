"""The whole result of a study, :class:`StudySummary`: what ``summary.json`` holds (``docs/summary.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rpa_sim.common import jsontext
from rpa_sim.common.errors import InputError
from rpa_sim.common.typedjson import FrozenMap, decoded, encoded, joined, json_object, left_out
from rpa_sim.operate.monitoring.results import Monitoring
from rpa_sim.operate.queue.results import Operations
from rpa_sim.operate.stream.watched import StreamResult
from rpa_sim.route.costs import CostModel
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.signals.results import SignalsResult
from rpa_sim.study.decision import Decision
from rpa_sim.study.result.data import Baselines, Calibration, KieData, VqaData
from rpa_sim.study.result.policies import OptimizedThresholds, PolicyResult

__all__ = ["SCHEMA_VERSION", "StudySummary"]

#: The version of ``summary.json`` this rpa-sim writes; it reads this one and every earlier one (a summary
#: without the key is version 1; version 3 adds the decided policy's rules, ``decision.rules``; version 4 the
#: named signals' figures, ``signals``; the scenario's stream watched, ``stream``; the points the pages offer,
#: ``decision.offers``, the documents straight through at the decided point; a monitored policy's ``narrower``).
SCHEMA_VERSION = 4


@dataclass(frozen=True)
class StudySummary:
    """Everything a study found: what ``summary.json`` holds, field for field (``docs/summary.md``).

    ``schema_version`` is None for a summary written before the key existed
    (version 1); ``calibration`` None when no prediction has a confidence
    (written ``{}``).
    """

    scenario: str
    description: str
    task: str
    metric: str
    data: KieData | VqaData
    reviewer: Reviewer
    costs: CostModel | None
    thresholds: str
    targets: tuple[float, ...]
    calibration: Calibration | None
    baselines: Baselines
    policies: tuple[PolicyResult, ...]
    optimized_per_field: FrozenMap[OptimizedThresholds]
    schema_version: int | None = left_out()
    optimized_per_document_type: FrozenMap[OptimizedThresholds] | None = left_out()
    operations: Operations | None = left_out()
    monitoring: Monitoring | None = left_out()
    decision: Decision | None = left_out()
    signals: SignalsResult | None = left_out()
    stream: StreamResult | None = left_out()

    @classmethod
    def from_json(cls, source: str | bytes | Mapping[str, Any]) -> StudySummary:
        """Read a summary: the text of ``summary.json`` or its parsed object.

        Raises
        ------
        InputError
            When the text is not JSON, the summary is of a newer schema
            version, or a key is unknown, missing or of the wrong type (the
            message names its key path, e.g. ``policies[1].cost_optimum.threshold``).
        """
        value = json_object(source, name="summary.json")
        version = value.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
            raise InputError(f"summary.json schema_version {version} is newer than this rpa-sim reads "
                             f"({SCHEMA_VERSION})")
        summary = decoded(cls, value, "")
        if summary.schema_version is not None and summary.schema_version < 2:
            raise InputError(f"{summary.schema_version} is not a schema version: a summary without the key is "
                             f"version 1, and versions with the key start at 2", field="schema_version")
        return summary

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON values, keys in the order ``summary.json`` has them."""
        return encoded(self)

    def to_json(self) -> str:
        """The text of ``summary.json``, as ``rpa-sim run --out-dir`` writes it."""
        return jsontext.dumps(self.to_dict(), indent=2) + "\n"

    @classmethod
    def _json_in(cls, value: dict[str, Any], path: str) -> dict[str, Any]:
        if value.get("calibration") == {}:
            return {**value, "calibration": None}
        if "calibration" in value and value["calibration"] is None:
            raise InputError("expected an object ({} when no prediction has a confidence), got null",
                             field=joined(path, "calibration"))
        return value

    def _json_out(self, value: dict[str, Any]) -> dict[str, Any]:
        # the version first, where a reader looks before anything else
        version = {} if self.schema_version is None else {"schema_version": value.pop("schema_version")}
        return {**version, **value, "calibration": {} if self.calibration is None else value["calibration"]}
