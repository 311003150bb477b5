"""Stage 1, evaluate: records -> per-document metrics -> an outcome table of numpy columns.

The outcome table has one row per prediction unit (a predicted KIE entity, or
a VQA question) with everything routing and sweeping need: document, key or
type, confidence, grounding, outcome label and scores. Stage 2 (policies,
reviewers, sweeps) works on these columns alone, never on the records.

Every table satisfies :class:`OutcomeTable`: what differs between tasks (the
metric, the fields, the review units and their ids, what an error is, what
review does to a row, the columns a sweep reports, the file's columns, the
evaluation itself) is a member of the table, so nothing outside
:mod:`rpa_sim.evaluate` asks which task it serves. A new task is a new class
satisfying the protocol, listed in :data:`OUTCOME_TABLES`.

One module per concept: :mod:`~rpa_sim.evaluate.outcomes.protocol` (the
protocol), :mod:`~rpa_sim.evaluate.outcomes.kie` and
:mod:`~rpa_sim.evaluate.outcomes.vqa` (a task each: its table and its
evaluation), :mod:`~rpa_sim.evaluate.outcomes.tasks` (the list of tasks),
:mod:`~rpa_sim.evaluate.outcomes.columns` (numpy columns) and
:mod:`~rpa_sim.evaluate.outcomes.arrow` (their Arrow form in a file).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from rpa_sim.evaluate.outcomes.columns import DeferredColumn
from rpa_sim.evaluate.outcomes.kie import KIEOutcomes, evaluate_kie
from rpa_sim.evaluate.outcomes.protocol import FieldGrouping, GroundingMode, OutcomeTable, ReviewValues
from rpa_sim.evaluate.outcomes.tasks import OUTCOME_TABLES, concat_tables, table_type, task_of_option

if TYPE_CHECKING:
    from rpa_sim.evaluate.outcomes.vqa import ANSWER_TYPES, RIGHT_ANLS, VQAOutcomes, evaluate_vqa

__all__ = ["OutcomeTable", "FieldGrouping", "ReviewValues", "KIEOutcomes", "VQAOutcomes", "OUTCOME_TABLES",
           "table_type", "task_of_option", "concat_tables", "evaluate_kie", "evaluate_vqa", "GroundingMode",
           "RIGHT_ANLS", "ANSWER_TYPES", "DeferredColumn"]

# the VQA task's names, imported when first used (as OUTCOME_TABLES imports its table): KIE data never needs them
_VQA_NAMES = frozenset({"VQAOutcomes", "evaluate_vqa", "RIGHT_ANLS", "ANSWER_TYPES"})


def __getattr__(name: str) -> Any:
    if name not in _VQA_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module("rpa_sim.evaluate.outcomes.vqa"), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
