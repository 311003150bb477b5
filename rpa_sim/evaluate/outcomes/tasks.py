"""The tasks: the outcome-table type of each, the one place that lists them, and what works on any table.

A new task is a new class satisfying :class:`~rpa_sim.evaluate.outcomes.protocol.OutcomeTable`,
listed in :data:`OUTCOME_TABLES`; code that knows only a task's name (a
curve, a table file's metadata, a command's ``--task``) asks
:func:`table_type` for its class.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from importlib import import_module
from typing import TypeVar, cast

from rpa_sim.evaluate.outcomes.protocol import OutcomeTable

__all__ = ["OUTCOME_TABLES", "table_type", "task_of_option", "concat_tables"]

Table = TypeVar("Table", bound=OutcomeTable)


class _TablesByTask(Mapping[str, type[OutcomeTable]]):
    """Each task's outcome-table class, imported when first looked up: a command on KIE data never imports the
    VQA table (2 ms of a command's start); the tasks are listed, and looked for, without importing any."""

    def __init__(self, homes: Mapping[str, tuple[str, str]]) -> None:
        self._homes = dict(homes)

    def __getitem__(self, task: str) -> type[OutcomeTable]:
        module, name = self._homes[task]
        table: type[OutcomeTable] = getattr(import_module(module), name)
        return table

    def __contains__(self, task: object) -> bool:
        return task in self._homes

    def __iter__(self) -> Iterator[str]:
        return iter(self._homes)

    def __len__(self) -> int:
        return len(self._homes)


OUTCOME_TABLES: Mapping[str, type[OutcomeTable]] = _TablesByTask({
    "kie": ("rpa_sim.evaluate.outcomes.kie", "KIEOutcomes"),
    "vqa": ("rpa_sim.evaluate.outcomes.vqa", "VQAOutcomes")})
"""The outcome-table class of each task: the one place that lists the tasks (each class's ``task`` is its key,
tested)."""


def table_type(task: str) -> type[OutcomeTable]:
    """The outcome-table class of ``task``, for what a task's class knows without a table (e.g. its columns).

    Examples
    --------
    >>> table_type("vqa").metric_name, table_type("kie").metric_label
    ('anls', 'KIEval_Aligned^τ')
    """
    if task not in OUTCOME_TABLES:
        raise ValueError(f"task must be one of {tuple(OUTCOME_TABLES)}, got {task!r}")
    return OUTCOME_TABLES[task]


def task_of_option(option: str) -> str:
    """The task whose evaluation takes the setting ``option`` (one of its table type's ``options``).

    Examples
    --------
    >>> task_of_option("value_match"), task_of_option("alpha")
    ('kie', 'vqa')
    """
    for task, table in OUTCOME_TABLES.items():
        if option in table.options:
            return task
    raise ValueError(f"option must be one of {[name for table in OUTCOME_TABLES.values() for name in table.options]}, "
                     f"got {option!r}")


def concat_tables(tables: Iterable[Table]) -> Table:
    """One outcome table of several, in order: exactly the table of their records evaluated one after the other.

    Rows and documents keep their order; KIE document indices are re-based;
    keys (question types) are merged in order of first appearance, as
    evaluation numbers them; the corpus counts add. This is how the tables of
    the parts of a data set (files, shards) make the table of the whole.

    Parameters
    ----------
    tables : iterable of KIEOutcomes, or of VQAOutcomes
        At least one table, all of one task and evaluated with the same settings.

    Raises
    ------
    ValueError
        When there is no table, when the tables are of several tasks, or
        when their settings (``value_match``; ``alpha``, ``weight``, ``threshold``) differ.

    Examples
    --------
    >>> from rpa_sim.evaluate.outcomes.vqa import evaluate_vqa
    >>> from rpa_sim.records.models import VQARecord
    >>> records = [VQARecord.model_validate({"id": f"q{i}", "answers": ["12"], "question_type": kind,
    ...            "prediction": {"answer": "12", "confidence": 0.5}}) for i, kind in enumerate("aba")]
    >>> whole = concat_tables([evaluate_vqa(records[:1]), evaluate_vqa(records[1:])])
    >>> whole.question_types, whole.question_type.tolist(), whole.question_ids.tolist()
    (('a', 'b'), [0, 1, 0], ['q0', 'q1', 'q2'])
    """
    parts = list(tables)
    if not parts:
        raise ValueError("concat_tables needs at least one table, got none")
    if len({type(table) for table in parts}) > 1:
        raise ValueError(f"tables must be of one task, got {[table.task for table in parts]}")
    return cast(Table, type(parts[0]).concat(parts))
