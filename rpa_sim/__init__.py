"""rpa-sim: replay document-AI predictions through human-review policies.

The public API, one name per concept, by stage (``docs/architecture.md``)::

    records   read_records, write_records, KIERecord, VQARecord
    evaluate  evaluate_kie, evaluate_vqa, OutcomeTable, KIEOutcomes, VQAOutcomes, read_table, write_table
    route     Policy, load_policy, Reviewer, CostModel, CostBreakdown, Sweeper, Curve, certify_threshold
    study     Scenario, load_scenario, run_scenario, run_study, ScenarioResult, StudySummary, Decision
    report    write_report

Each name is imported from its module on first use, so that ``import rpa_sim`` loads no heavy library. The
root is for users: nothing inside the package imports it (``__version__`` lives in :mod:`rpa_sim.version`).

>>> import rpa_sim
>>> rpa_sim.Reviewer(miss_rate=0.02).miss_rate
0.02
>>> rpa_sim.load_policy("confidence").name
'confidence'
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from rpa_sim.version import __version__

_HOMES = {
    "read_records": "rpa_sim.records.readers", "write_records": "rpa_sim.records.readers",
    "KIERecord": "rpa_sim.records.models", "VQARecord": "rpa_sim.records.models",
    "evaluate_kie": "rpa_sim.evaluate.outcomes", "evaluate_vqa": "rpa_sim.evaluate.outcomes",
    "OutcomeTable": "rpa_sim.evaluate.outcomes", "KIEOutcomes": "rpa_sim.evaluate.outcomes",
    "VQAOutcomes": "rpa_sim.evaluate.outcomes",
    "read_table": "rpa_sim.evaluate.tablefile", "write_table": "rpa_sim.evaluate.tablefile",
    "Policy": "rpa_sim.route.policies", "load_policy": "rpa_sim.route.policies",
    "Reviewer": "rpa_sim.route.reviewer",
    "CostModel": "rpa_sim.route.costs", "CostBreakdown": "rpa_sim.route.costs",
    "Sweeper": "rpa_sim.route.sweep", "Curve": "rpa_sim.route.sweep",
    "certify_threshold": "rpa_sim.route.certify",
    "Scenario": "rpa_sim.study.scenario", "load_scenario": "rpa_sim.study.scenario",
    "run_scenario": "rpa_sim.study.run", "run_study": "rpa_sim.study.run", "ScenarioResult": "rpa_sim.study.run",
    "StudySummary": "rpa_sim.study.result", "Decision": "rpa_sim.study.decision",
    "write_report": "rpa_sim.report.page",
}

__all__ = [
    "__version__",
    "read_records", "write_records", "KIERecord", "VQARecord",
    "evaluate_kie", "evaluate_vqa", "OutcomeTable", "KIEOutcomes", "VQAOutcomes", "read_table", "write_table",
    "Policy", "load_policy", "Reviewer", "CostModel", "CostBreakdown", "Sweeper", "Curve", "certify_threshold",
    "Scenario", "load_scenario", "run_scenario", "run_study", "ScenarioResult", "StudySummary", "Decision",
    "write_report",
]

if TYPE_CHECKING:
    from rpa_sim.evaluate.outcomes import KIEOutcomes, OutcomeTable, VQAOutcomes, evaluate_kie, evaluate_vqa
    from rpa_sim.evaluate.tablefile import read_table, write_table
    from rpa_sim.records.models import KIERecord, VQARecord
    from rpa_sim.records.readers import read_records, write_records
    from rpa_sim.report.page import write_report
    from rpa_sim.route.certify import certify_threshold
    from rpa_sim.route.costs import CostBreakdown, CostModel
    from rpa_sim.route.policies import Policy, load_policy
    from rpa_sim.route.reviewer import Reviewer
    from rpa_sim.route.sweep import Curve, Sweeper
    from rpa_sim.study.decision import Decision
    from rpa_sim.study.result import StudySummary
    from rpa_sim.study.run import ScenarioResult, run_scenario, run_study
    from rpa_sim.study.scenario import Scenario, load_scenario


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'rpa_sim' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
