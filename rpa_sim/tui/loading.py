"""Opening what the dashboard shows: a scenario (bundled name or YAML path), records or an outcome table.

:func:`open_source` reads and evaluates the data (an :class:`Opened`), :meth:`Opened.model` sweeps it
(then the dashboard is interactive) and :meth:`Opened.summary` runs the study; each stage is reported
as :class:`~rpa_sim.tui.stages.Progress`. No Textual here.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rpa_sim.common.errors import InputError
from rpa_sim.common.progress import StageEvent, listening
from rpa_sim.evaluate.outcomes import OUTCOME_TABLES, OutcomeTable
from rpa_sim.route.policies import Policy
from rpa_sim.tui.model import DashboardModel
from rpa_sim.tui.stages import Progress, Reporter, ignore_progress, stage

if TYPE_CHECKING:
    from rpa_sim.study.result import StudySummary
    from rpa_sim.study.scenario import Scenario

__all__ = ["DATA_POLICIES", "DATA_TARGETS", "Opened", "count_lines", "load_model", "open_source"]

#: targets and bundled policies used when the dashboard opens a records file instead of a scenario
DATA_TARGETS = [0.9, 0.95]
DATA_POLICIES = {task: ("confidence", "document-escalation", "grounding-gate") if table.has_review_units
                 else ("confidence", "grounding-gate") for task, table in OUTCOME_TABLES.items()}


def _library_stages(report: Reporter, total: int | None) -> contextlib.AbstractContextManager[None]:
    """Pass the stages the library reports (records read, records evaluated) to the loader's reporter; stages
    without a total get ``total``: the lines of the records file, one per record."""
    def relay(event: StageEvent) -> None:
        report(Progress(event.description, event.done, total if event.total is None else event.total, "records",
                        finished=event.finished))

    return listening(relay)


def count_lines(path: Path) -> int | None:
    """The lines of a records file (one record each), or None for a compressed file, which would have
    to be decompressed twice to be counted.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "r.jsonl"
    ...     _ = path.write_text('{"id": 1}\\n{"id": 2}\\n{"id": 3}')
    ...     count_lines(path)
    3
    """
    if path.suffix.lower() == ".gz":
        return None
    lines, last = 0, b"\n"
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


@dataclass(frozen=True)
class Opened:
    """A source opened and its data evaluated: what loading does before sweeping (:func:`open_source`)."""

    scenario: Scenario
    table: OutcomeTable
    policies: list[Policy]
    #: what the header names: the file opened, or the bundled scenario
    source: str
    #: the records or outcome table file's name when that is what was opened (no scenario around it)
    data_file: str | None = None

    def model(self, *, report: Reporter = ignore_progress) -> DashboardModel:
        """Sweep every policy (stage ``sweeping``): the model without its summary, enough to be interactive."""
        scenario = self.scenario
        return DashboardModel.from_table(scenario.name, self.table, self.policies, reviewer=scenario.reviewer,
                                         costs=scenario.costs, targets=list(scenario.targets), source=self.source,
                                         data_file=self.data_file, report=report)

    def summary(self, model: DashboardModel, *, report: Reporter = ignore_progress) -> StudySummary:
        """The study's typed result (stage ``comparing policies``): what ``rpa-sim run`` writes as
        ``summary.json``.

        ``model`` is :meth:`model`'s result, whose sweepers the summary reuses.
        """
        from rpa_sim.study.run import run_study  # noqa: PLC0415

        with stage(report, "comparing policies, optimising per field"):
            return run_study(self.scenario, self.table, self.policies, sweepers=model.sweepers).summary


def _evaluated(scenario: Scenario, base: Path, report: Reporter, policies: list[Policy]) -> OutcomeTable:
    """The scenario's data as an outcome table for ``policies``, its reading reported (records: as they are read
    and evaluated)."""
    from rpa_sim.evaluate.tablefile import is_table_file  # noqa: PLC0415
    from rpa_sim.study.run import evaluate_scenario_data  # noqa: PLC0415

    data, source = scenario.data, f"scenario {scenario.name!r}"
    if data.file is None:
        with stage(report, f"generating and evaluating {data.n:,} {data.generate} records"):
            return evaluate_scenario_data(scenario, base, source, policies=policies)
    path = base / data.file
    if is_table_file(path):
        with stage(report, f"reading {path.name}"):
            return evaluate_scenario_data(scenario, base, source, policies=policies)
    with _library_stages(report, count_lines(path) if path.is_file() else None):
        return evaluate_scenario_data(scenario, base, source, policies=policies)


def _header_name(source: str, scenario: Scenario) -> str:
    """A scenario's name or file, with its data file's: what the header shows.

    >>> from rpa_sim.study.scenario import DataSpec, Scenario
    >>> _header_name("studies/s.yaml", Scenario(name="s", data=DataSpec(file="r.jsonl"), policies=["confidence"]))
    's.yaml (r.jsonl)'
    """
    name = Path(source).name if Path(source).suffix.lower() in (".yaml", ".yml") else source
    return name if scenario.data.file is None else f"{name} ({Path(scenario.data.file).name})"


def load_model(source: str | None, *, report: Reporter = ignore_progress) -> DashboardModel:
    """Load a scenario (bundled name or YAML path), records or an outcome table, and run it. Raises InputError.

    All of :func:`open_source`, :meth:`Opened.model` and :meth:`Opened.summary`, each stage reported.
    """
    opened = open_source(source, report=report)
    model = opened.model(report=report)
    model.summary = opened.summary(model, report=report)
    return model


def open_source(source: str | None, *, report: Reporter = ignore_progress) -> Opened:
    """Open a scenario (bundled name or YAML path), records or an outcome table, and evaluate its data
    (stages ``reading`` and ``evaluating``, counted in records). Raises InputError."""
    from rpa_sim.evaluate.sources import data_task, names_data, resolve_shards, shard_kinds  # noqa: PLC0415
    from rpa_sim.evaluate.tablefile import is_table_file  # noqa: PLC0415
    from rpa_sim.study.run import scenario_policies  # noqa: PLC0415
    from rpa_sim.study.scenario import DataSpec, Scenario, load_scenario  # noqa: PLC0415

    source = source or "receipts-demo"
    if names_data(source):
        path = Path(source).absolute()  # a glob stays a pattern
        shards = resolve_shards(path)
        if not shards[0].is_file():
            raise InputError(f"no {'outcome table' if is_table_file(path) else 'records'} file {source!r}")
        task = data_task(shard_kinds(shards), task=None)
        scenario = Scenario(name=path.name, data=DataSpec(file=path), task=task, policies=list(DATA_POLICIES[task]),
                            targets=DATA_TARGETS)
        base, header, data_file = path.parent, path.name, path.name
    else:
        scenario, base = load_scenario(source)
        header, data_file = _header_name(source, scenario), None
    policies = scenario_policies(scenario, base)  # before the data: a misnamed policy fails at once
    return Opened(scenario, _evaluated(scenario, base, report, policies), policies, header, data_file)
