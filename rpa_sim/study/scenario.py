"""Scenarios: the data, the policies, the reviewer, the costs and the targets of one study.

A scenario YAML file names everything ``rpa-sim run`` needs; this module
validates and loads it (running it is :mod:`rpa_sim.study.run`). Paths inside a
scenario are relative to the scenario file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from rpa_sim.bundled import bundled_files, resolve
from rpa_sim.common import limits
from rpa_sim.common.errors import UsageError
from rpa_sim.common.validation import StrictModel
from rpa_sim.common.yamlfile import field_line, read_yaml, validated
from rpa_sim.operate.monitoring.summary import MonitoringSpec
from rpa_sim.operate.queue.spec import OperationsSpec
from rpa_sim.operate.stream.spec import StreamSpec
from rpa_sim.route.costs import CostModel
from rpa_sim.route.reviewer import Reviewer
from rpa_sim.route.sweep import parse_thresholds

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["Scenario", "DataSpec", "CertifySpec", "DecisionSpec", "TeamRange", "load_scenario", "bundled_scenarios"]

_Open = Annotated[float, Field(gt=0.0, lt=1.0)]


class DataSpec(StrictModel):
    """Records from a file (``file``, optionally ``predictions``) or from a generator (``generate``).

    ``file`` may be a folder or a glob of shards (:mod:`rpa_sim.evaluate.sources`);
    ``scheduler`` evaluates them on Dask (``rpa-sim run --scheduler`` overrides it).

    ``settings`` are the generator's (:class:`~rpa_sim.records.synthetic.ReceiptSettings`
    or :class:`~rpa_sim.records.synthetic.DocVQASettings`), naming only what they change.
    """

    file: Path | None = None
    predictions: Path | None = None
    generate: Literal["receipts", "docvqa"] | None = None
    n: Annotated[int, BeforeValidator(limits.size_check("documents", most=limits.MOST_GENERATED_RECORDS,
                                                        limited_by="a fixed ceiling for time",
                                                        bytes_each=limits.RUN_BYTES_PER_DOCUMENT)),
                 Field(ge=1)] = 500
    seed: Annotated[int, Field(ge=0)] = 0
    settings: dict[str, Any] = {}
    #: a Dask scheduler whose workers evaluate the file's shards (rpa_sim.evaluate.cluster; docs/scale.md)
    scheduler: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> DataSpec:
        if (self.file is None) == (self.generate is None):
            raise ValueError("data needs exactly one of file or generate")
        if self.scheduler is not None:
            from rpa_sim.evaluate.cluster import parse_scheduler  # noqa: PLC0415

            if self.file is None:
                raise ValueError("scheduler goes with file")
            parse_scheduler(self.scheduler)
        if self.predictions is not None and self.file is None:
            raise ValueError("predictions go with file")
        if self.settings and self.generate is None:
            raise ValueError("settings go with generate")
        return self


class CertifySpec(StrictModel):
    """Settings of the certified threshold (METRICS.md §7)."""

    max_error: _Open
    delta: _Open
    calibration_fraction: Annotated[float, Field(gt=0.0, le=1.0)] = 0.5
    seed: Annotated[int, Field(ge=0)] = 0


#: The most team sizes a decision weighs: each may need a simulation at each threshold.
MOST_TEAM_SIZES = 101


class TeamRange(StrictModel):
    """Reviewers added to every shift of the ``operations`` team (``count``: to the count), from ``min`` to
    ``max``; negative takes some away (a shift keeps at least one)."""

    min: Annotated[int, Field(ge=-1000, le=1000)] = 0
    max: Annotated[int, Field(ge=-1000, le=1000)] = 0

    @model_validator(mode="after")
    def _ordered(self) -> TeamRange:
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        if self.max - self.min + 1 > MOST_TEAM_SIZES:
            raise ValueError(f"a decision weighs at most {MOST_TEAM_SIZES} team sizes (a fixed ceiling for time: "
                             f"each may be simulated at each threshold), got {self.max - self.min + 1}")
        return self


class DecisionTeam(StrictModel):
    """The teams a decision may choose from: ``extra_per_shift`` reviewers on every shift."""

    extra_per_shift: TeamRange


class DecisionSpec(StrictModel):
    """A scenario's ``decision:`` section: which teams the decision may choose, and the budget (docs/decision.md).

    Without ``team`` the ``operations`` team is fixed, and its service level a
    constraint on τ. ``max_reviewers`` caps the reviewers the roster
    schedules in a day (each shift's, summed); ``max_cost_per_day`` the
    total cost a day.
    """

    team: DecisionTeam | None = None
    max_reviewers: Annotated[int, Field(ge=1)] | None = None
    max_cost_per_day: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = None


class Scenario(StrictModel):
    """One study: ``rpa-sim run SCENARIO.yaml``."""

    name: str = Field(min_length=1)
    description: str = ""
    data: DataSpec
    task: Literal["kie", "vqa"] | None = None
    policies: list[str | dict[str, Any]] = Field(min_length=1)
    reviewer: Reviewer = Reviewer()
    costs: CostModel | None = None
    thresholds: str = "exact"
    targets: list[Annotated[float, Field(gt=0.0, le=1.0)]] = []
    certify: CertifySpec | None = None
    replicates: Annotated[int, BeforeValidator(limits.size_check(
        "replicates", most=limits.MOST_REPLICATES, limited_by="a fixed ceiling: each replicate draws every item")),
        Field(ge=0)] = 0
    seed: Annotated[int, Field(ge=0)] = 0
    alpha: Annotated[float, Field(ge=0.0, le=1.0)] = 0.25
    #: what rejected items hold in the output, for the policies that do not say (docs/replay.md)
    rejected_quality: Literal["correct", "as_predicted"] | None = None
    #: production monitoring: replayed days, audits and the estimators' coverage (docs/monitoring.md)
    monitoring: MonitoringSpec | None = None
    #: the review operation: arrivals, reviewers, service level (docs/operations.md)
    operations: OperationsSpec | None = None
    #: the teams the decision may choose from, and the budget (docs/decision.md)
    decision: DecisionSpec | None = None
    #: days of production logs drawn from the data under named changes, and watched (docs/live.md)
    stream: StreamSpec | None = None

    @model_validator(mode="after")
    def _watchable(self) -> Scenario:
        if self.stream is not None and self.stream.watch.max_error is None and self.certify is None:
            raise ValueError("stream.watch.max_error is needed: the scenario has no certify: max_error to take it "
                             "from")
        return self

    @model_validator(mode="after")
    def _decidable(self) -> Scenario:
        decision = self.decision
        if decision is None:
            return self
        if self.operations is None and (decision.team is not None or decision.max_reviewers is not None):
            raise ValueError("decision.team and decision.max_reviewers need an operations section (the team)")
        if decision.max_cost_per_day is not None and (self.costs is None or (
                self.operations is None and self.costs.volume_per_day is None)):
            raise ValueError("decision.max_cost_per_day needs costs and a daily volume (an operations section or "
                             "costs.volume_per_day)")
        return self


def bundled_scenarios() -> dict[str, Traversable]:
    """The scenario files bundled with rpa-sim (``scenarios/``), by name."""
    return bundled_files("scenario")


def load_scenario(name_or_path: str | os.PathLike[str]) -> tuple[Scenario, Path]:
    """A scenario and the folder its relative paths start from (a bundled one by name).

    Names and paths resolve as :func:`rpa_sim.bundled.resolve` says. A bundled
    scenario's relative paths start from the folder it is installed in.

    Examples
    --------
    >>> scenario, base = load_scenario("receipts-demo")
    >>> scenario.name, base.name
    ('receipts-demo', 'scenarios')
    """
    file = resolve("scenario", name_or_path)
    scenario = validated(Scenario, read_yaml(file), source=str(file))
    try:
        parse_thresholds(scenario.thresholds)
    except limits.SizeError as error:
        raise UsageError(str(error), path=str(file), line=field_line(str(file), ["thresholds"]),
                         field="thresholds") from None
    # a Traversable has no parent; pip installs a package as plain files, where a bundled file's text is its path
    return scenario, Path(str(file)).parent
